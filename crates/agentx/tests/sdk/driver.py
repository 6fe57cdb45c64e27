"""Runs one named flow of the Python Claude Agent SDK against agentx (PROFILE §15).

Usage: python driver.py FLOW. Environment: AGENTX_BIN (the built agentx), AGENTX_HOME (a
temporary AgentX home), FLOW_CWD (the session's working directory). Prints what the SDK
handed to its caller as JSON lines: {"event":"message",...} per message (normalized to the
fields the Rust tests assert), {"event":"callback",...} per can_use_tool call,
{"event":"raised",...} per expected exception, {"event":"done"} at the end.

One flow is one function `flow_<name>` below; tests/sdk_python.rs runs it by name.
"""

import json
import os
import sys

import anyio
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    create_sdk_mcp_server,
    query,
    tool,
)


def emit(**event):
    print(json.dumps(event, sort_keys=True), flush=True)


def options(**kw):
    return ClaudeAgentOptions(
        cli_path=os.environ["AGENTX_BIN"],
        cwd=os.environ["FLOW_CWD"],
        env={"AGENTX_HOME": os.environ["AGENTX_HOME"]},
        stderr=lambda line: emit(event="stderr", line=line),
        **kw,
    )


def blocks(content):
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out = []
    for b in content:
        name = type(b).__name__
        if name == "TextBlock":
            out.append({"type": "text", "text": b.text})
        elif name == "ToolUseBlock":
            out.append({"type": "tool_use", "name": b.name, "input": b.input})
        elif name == "ToolResultBlock":
            out.append(
                {"type": "tool_result", "content": b.content, "is_error": b.is_error}
            )
        else:
            out.append({"type": name})
    return out


def record(m):
    name = type(m).__name__
    if name == "AssistantMessage":
        emit(event="message", type="assistant", blocks=blocks(m.content))
    elif name == "UserMessage":
        emit(event="message", type="user", blocks=blocks(m.content))
    elif name == "ResultMessage":
        emit(
            event="message",
            type="result",
            subtype=m.subtype,
            is_error=m.is_error,
            num_turns=m.num_turns,
            result=m.result,
            errors=m.errors,
            denials=[d.get("tool_name") for d in (m.permission_denials or [])],
            session_id=m.session_id,
        )
    elif name == "StreamEvent":
        emit(event="message", type="stream_event", kind=m.event.get("type"))
    elif hasattr(m, "subtype") and hasattr(m, "data"):
        emit(event="message", type="system", subtype=m.subtype, data=m.data)
    else:
        emit(event="message", type=name)


async def turn(client, prompt):
    """Runs one turn and returns its ResultMessage."""
    await client.query(prompt)
    last = None
    async for m in client.receive_response():
        record(m)
        last = m
    return last


async def flow_prompt():
    async for m in query(prompt="hello agentx", options=options()):
        record(m)


TOOLS = (
    '!tool Write {"file_path":"a.txt","content":"x"}\n'
    '!tool Bash {"command":"echo hi"}\n'
    "!say done"
)


async def flow_can_use_tool():
    async def decide(tool, tool_input, _context):
        emit(event="callback", tool=tool, input=tool_input)
        if tool == "Write":
            return PermissionResultAllow()
        return PermissionResultDeny(message="no shell")

    async with ClaudeSDKClient(options=options(can_use_tool=decide)) as c:
        await turn(c, TOOLS)


async def flow_no_callback():
    async with ClaudeSDKClient(options=options()) as c:
        await turn(c, '!tool Bash {"command":"echo hi"}\n!say done')


async def flow_bypass():
    async def decide(tool, tool_input, _context):
        emit(event="callback", tool=tool, input=tool_input)
        return PermissionResultDeny(message="never asked")

    opts = options(permission_mode="bypassPermissions", can_use_tool=decide)
    async with ClaudeSDKClient(options=opts) as c:
        await turn(c, '!tool Bash {"command":"echo bypassed"}\n!say done')


async def flow_interrupt():
    async with ClaudeSDKClient(options=options()) as c:
        await c.query("!sleep 600000")
        async for m in c.receive_response():
            record(m)
            if type(m).__name__ == "SystemMessage" and m.subtype == "init":
                await c.interrupt()
                emit(event="interrupted")
        await turn(c, "after the interrupt")


async def flow_tasks():
    async with ClaudeSDKClient(options=options()) as c:
        await turn(c, "!task t1 2 1\n!say started")


async def flow_partial():
    async with ClaudeSDKClient(options=options(include_partial_messages=True)) as c:
        await turn(c, "stream me")


async def flow_system_prompt():
    async with ClaudeSDKClient(options=options(system_prompt="You are terse.")) as c:
        await turn(c, "!system")
    async with ClaudeSDKClient(options=options()) as c:
        await turn(c, "!system")


async def flow_controls():
    async with ClaudeSDKClient(options=options()) as c:
        await turn(c, "hi")
        emit(event="mcp_status", value=await c.get_mcp_status())
        usage = await c.get_context_usage()
        emit(event="context_usage", keys=sorted(usage.keys()), model=usage.get("model"))
        for call in (lambda: c.set_model("other"), lambda: c.set_permission_mode("plan")):
            try:
                await call()
                emit(event="returned")
            except Exception as e:  # noqa: BLE001 - the documented error is the point
                emit(event="raised", error=str(e))


async def flow_close_persists():
    c = ClaudeSDKClient(options=options())
    await c.connect()
    await turn(c, "remember me")
    await c.disconnect()
    emit(event="disconnected")


async def flow_resume():
    async with ClaudeSDKClient(options=options()) as c:
        for i in range(1, 5):
            sid = (await turn(c, f"turn {i}")).session_id
    emit(event="first", session_id=sid)
    for opts in (
        options(resume=sid),
        options(continue_conversation=True),
        options(resume=sid, fork_session=True),
        options(resume=sid),
    ):
        async with ClaudeSDKClient(options=opts) as c:
            await turn(c, "!history")


def write_note():
    with open(os.path.join(os.environ["FLOW_CWD"], "note.txt"), "w") as f:
        f.write("note")


async def flow_max_turns():
    write_note()
    async with ClaudeSDKClient(options=options(max_turns=1)) as c:
        await turn(c, '!tool Read {"file_path":"note.txt"}\n!say never')
        await turn(c, "next turn")


async def flow_budget():
    async with ClaudeSDKClient(options=options(max_budget_usd=0.01)) as c:
        await turn(c, "!cost 0.004\n!say cheap")
        await turn(c, "!cost 0.007\n!say reaches it")
        await turn(c, "after the budget")


async def flow_tool_rules():
    async def decide(tool, tool_input, _context):
        emit(event="callback", tool=tool, input=tool_input)
        return PermissionResultDeny(message="asked and denied")

    opts = options(
        allowed_tools=["Bash(echo:*)"], disallowed_tools=["Write"], can_use_tool=decide
    )
    async with ClaudeSDKClient(options=opts) as c:
        await turn(
            c,
            '!tool Bash {"command":"echo allowed"}\n'
            '!tool Bash {"command":"ls"}\n'
            '!tool Write {"file_path":"w.txt","content":"x"}\n'
            "!say done",
        )


async def flow_stop_task():
    async with ClaudeSDKClient(options=options()) as c:
        await c.query("!task t1 1000 50\n!say started")
        async for m in c.receive_response():
            record(m)
            if type(m).__name__ == "TaskStartedMessage" or (
                getattr(m, "subtype", None) == "task_started"
            ):
                await c.stop_task("t1")
                emit(event="stopped")
                try:
                    await c.stop_task("nope")
                    emit(event="returned")
                except Exception as e:  # noqa: BLE001 - the documented error is the point
                    emit(event="raised", error=str(e))
        await turn(c, "after the task")


# --- SDK hooks (PROFILE §16) ---

from claude_agent_sdk import HookMatcher  # noqa: E402 - kept beside the hook flows


def write_outside():
    """A file outside the session's cwd (in AgentX home), so §10 would ask to Read it."""
    path = os.path.join(os.environ["AGENTX_HOME"], "outside.txt")
    with open(path, "w") as f:
        f.write("outside")
    return path


async def host_says_no(tool, tool_input, _context):
    emit(event="callback", tool=tool, input=tool_input)
    return PermissionResultDeny(message="host says no")


async def flow_hooks_pre_tool_use():
    outside = write_outside()

    async def pre(input_data, tool_use_id, _context):
        emit(
            event="hook",
            hook=input_data["hook_event_name"],
            tool=input_data["tool_name"],
            same_id=tool_use_id == input_data["tool_use_id"],
            keys=sorted(input_data.keys()),
        )
        decision = "deny" if input_data["tool_name"] == "Bash" else "allow"
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": "no shell from a hook",
            }
        }

    opts = options(
        can_use_tool=host_says_no,
        hooks={"PreToolUse": [HookMatcher(matcher="Bash|Read", hooks=[pre])]},
    )
    async with ClaudeSDKClient(options=opts) as c:
        await turn(
            c,
            "!tool Read {\"file_path\":%s}\n!tool Bash {\"command\":\"echo hi\"}\n!say done"
            % json.dumps(outside),
        )


async def flow_hooks_post_tool_use():
    write_note()

    async def post(input_data, _tool_use_id, _context):
        emit(event="hook", hook=input_data["hook_event_name"], response=input_data["tool_response"])
        return {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "checked by a hook",
            }
        }

    opts = options(hooks={"PostToolUse": [HookMatcher(matcher="Read", hooks=[post])]})
    async with ClaudeSDKClient(options=opts) as c:
        await turn(c, '!tool Read {"file_path":"note.txt"}\n!last_tool_result')


async def flow_hooks_user_prompt_submit():
    async def gate(input_data, _tool_use_id, _context):
        emit(event="hook", hook=input_data["hook_event_name"], prompt=input_data["prompt"])
        if "forbidden" in input_data["prompt"]:
            return {"decision": "block", "reason": "that topic is blocked"}
        return {}

    opts = options(hooks={"UserPromptSubmit": [HookMatcher(hooks=[gate])]})
    async with ClaudeSDKClient(options=opts) as c:
        await turn(c, "a forbidden topic")
        await turn(c, "an allowed topic")


async def flow_hooks_raise():
    async def boom(input_data, _tool_use_id, _context):
        emit(event="hook", tool=input_data["tool_name"])
        raise RuntimeError("hook exploded")

    for on_failure in (None, "block"):
        matcher = HookMatcher(matcher="Bash", hooks=[boom], on_failure=on_failure)
        opts = options(can_use_tool=host_says_no, hooks={"PreToolUse": [matcher]})
        async with ClaudeSDKClient(options=opts) as c:
            await turn(c, '!tool Bash {"command":"echo hi"}\n!say done')
            await turn(c, "still here")


async def flow_hooks_interrupt():
    started = anyio.Event()

    async def slow(input_data, _tool_use_id, _context):
        emit(event="hook", tool=input_data["tool_name"])
        started.set()
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            emit(event="hook_cancelled")
            raise
        return {}

    opts = options(
        can_use_tool=host_says_no,
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[slow])]},
    )
    async with ClaudeSDKClient(options=opts) as c:
        await c.query('!tool Bash {"command":"echo hi"}\n!say never')
        async for m in c.receive_response():
            record(m)
            if type(m).__name__ == "AssistantMessage" and any(
                type(b).__name__ == "ToolUseBlock" for b in m.content
            ):
                await started.wait()
                await c.interrupt()
                emit(event="interrupted")
        await turn(c, "after the interrupt")


SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
}


async def flow_structured_output():
    # PROFILE §16: `output_format` becomes `--json-schema`; a valid `!json` answer is the
    # result's `structured_output`, an invalid one ends after 3 attempts.
    opts = options(output_format={"type": "json_schema", "schema": SCHEMA})
    async with ClaudeSDKClient(options=opts) as c:
        for prompt in ('!json {"answer": 42}', '!json {"answer": "x"}'):
            await c.query(prompt)
            async for m in c.receive_response():
                record(m)
                if type(m).__name__ == "ResultMessage":
                    emit(event="structured", subtype=m.subtype, value=m.structured_output)


def calc_server(slow=None):
    """PROFILE §16: an in-process SDK MCP server `calc` with two tools, `add` and `fail`."""

    @tool("add", "Add two integers", {"a": int, "b": int})
    async def add(args):
        emit(event="mcp_call", tool="add", args=args)
        if slow is not None:
            slow.set()
            try:
                await anyio.sleep(3600)
            except anyio.get_cancelled_exc_class():
                emit(event="mcp_cancelled")
                raise
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    @tool("fail", "Always fails", {"why": str})
    async def fail(args):
        emit(event="mcp_call", tool="fail", args=args)
        return {"content": [{"type": "text", "text": "failed: " + args["why"]}], "is_error": True}

    return create_sdk_mcp_server(name="calc", version="1.0.0", tools=[add, fail])


MCP_PROMPT = (
    '!mcp calc add {"a": 1, "b": 2}\n'
    '!mcp calc fail {"why": "on purpose"}\n'
    "!last_tool_result"
)


async def flow_mcp_tools():
    # PROFILE §16: `mcp_servers` with an SDK server becomes `--mcp-config`; agentx lists the
    # tools by `mcp_message`, `!mcp` calls them (through can_use_tool), their results are
    # the tool_results.
    async def decide(tool_name, tool_input, _context):
        emit(event="callback", tool=tool_name, input=tool_input)
        return PermissionResultAllow()

    opts = options(mcp_servers={"calc": calc_server()}, can_use_tool=decide)
    async with ClaudeSDKClient(options=opts) as c:
        await turn(c, MCP_PROMPT)


async def flow_mcp_status():
    opts = options(mcp_servers={"calc": calc_server()})
    async with ClaudeSDKClient(options=opts) as c:
        await turn(c, "hello")
        status = await c.get_mcp_status()
        emit(event="mcp_status", value={"mcpServers": [
            {"name": s["name"], "status": s["status"]} for s in status["mcpServers"]
        ]})


async def flow_interrupt_hook_mcp():
    # PROFILE §16 / WIRE-011: an interrupt while an MCP call and a PreToolUse callback are
    # pending; both uses get their `interrupted` tool_result, the session goes on.
    hook_started = anyio.Event()
    mcp_started = anyio.Event()

    async def slow_hook(input_data, _tool_use_id, _context):
        emit(event="hook", tool=input_data["tool_name"])
        hook_started.set()
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            emit(event="hook_cancelled")
            raise
        return {}

    opts = options(
        mcp_servers={"calc": calc_server(slow=mcp_started)},
        permission_mode="bypassPermissions",
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[slow_hook])]},
    )
    async with ClaudeSDKClient(options=opts) as c:
        await c.query(
            '!mcp calc add {"a": 1, "b": 2}\n!tool Bash {"command":"echo hi"}\n!say never'
        )
        interrupted = False
        async for m in c.receive_response():
            record(m)
            uses = type(m).__name__ == "AssistantMessage" and any(
                type(b).__name__ == "ToolUseBlock" and b.name == "Bash" for b in m.content
            )
            if uses and not interrupted:
                await hook_started.wait()
                await mcp_started.wait()
                await c.interrupt()
                interrupted = True
                emit(event="interrupted")
        await turn(c, "after the interrupt")

def demo_server(**env):
    """PROFILE §18: the stdio server built with the official Python MCP SDK (FastMCP) from
    the pinned venv the test installed (MCP_PYTHON, MCP_DEMO_SERVER)."""
    return {
        "type": "stdio",
        "command": os.environ["MCP_PYTHON"],
        "args": [os.environ["MCP_DEMO_SERVER"]],
        "env": env,
    }


def emit_status(status):
    emit(event="mcp_status", value=[
        {
            "name": s["name"],
            "status": s["status"],
            "server": (s.get("serverInfo") or {}).get("name"),
            "tools": [t["name"] for t in s.get("tools") or []],
        }
        for s in status["mcpServers"]
    ])


STDIO_PROMPT = (
    '!tool mcp__demo__add {"a": 1, "b": 2}\n'
    '!mcp demo echo_env {"name": "PLAIN"}\n'
    "!mcp demo boom {}\n"
    "!last_tool_result"
)


async def flow_mcp_stdio():
    # PROFILE §18: a stdio server in `mcp_servers` becomes `--mcp-config`; agentx starts it,
    # its tools go through can_use_tool, their results (structuredContent as
    # tool_use_result, isError) come back to the caller.
    async def decide(tool_name, tool_input, _context):
        emit(event="callback", tool=tool_name, input=tool_input)
        return PermissionResultAllow()

    opts = options(mcp_servers={"demo": demo_server(PLAIN="from the config")}, can_use_tool=decide)
    async with ClaudeSDKClient(options=opts) as c:
        await c.query(STDIO_PROMPT)
        async for m in c.receive_response():
            record(m)
            if type(m).__name__ == "UserMessage":
                emit(event="tool_use_result", value=getattr(m, "tool_use_result", None))
        emit_status(await c.get_mcp_status())


async def flow_mcp_stdio_live():
    # PROFILE §18 live changes: toggle off (no tools), on, reconnect, an unknown name.
    opts = options(mcp_servers={"demo": demo_server()}, permission_mode="bypassPermissions")
    async with ClaudeSDKClient(options=opts) as c:
        await turn(c, "hello")
        await c.toggle_mcp_server("demo", False)
        emit_status(await c.get_mcp_status())
        await turn(c, '!mcp demo add {"a": 2, "b": 2}')
        await c.toggle_mcp_server("demo", True)
        await c.reconnect_mcp_server("demo")
        emit_status(await c.get_mcp_status())
        await turn(c, '!mcp demo add {"a": 3, "b": 4}')
        try:
            await c.reconnect_mcp_server("nope")
            emit(event="returned")
        except Exception as e:  # noqa: BLE001 - the documented error is the point
            emit(event="raised", error=str(e))


async def flow_mcp_network():
    # PROFILE §18: http and sse servers in `mcp_servers` (the FastMCP server over its own
    # streamable-HTTP and SSE transports, started by the test: MCP_HTTP_URL, MCP_SSE_URL).
    servers = {
        "web": {"type": "http", "url": os.environ["MCP_HTTP_URL"]},
        "old": {"type": "sse", "url": os.environ["MCP_SSE_URL"]},
    }
    opts = options(mcp_servers=servers, permission_mode="bypassPermissions")
    async with ClaudeSDKClient(options=opts) as c:
        await turn(c, '!mcp web add {"a": 1, "b": 2}\n!mcp old add {"a": 3, "b": 4}\n!last_tool_result')
        emit_status(await c.get_mcp_status())


async def flow_coding():
    """PROFILE §17: allowed_tools runs a Read-then-Edit with no permission callback; a
    PreToolUse hook matching Edit|Write sees the Edit; the UserMessage carries
    tool_use_result with a structuredPatch."""
    with open(os.path.join(os.environ["FLOW_CWD"], "code.txt"), "w") as f:
        f.write("a\nb\nc\n")

    async def pre(input_data, _tool_use_id, _context):
        emit(event="hook", hook=input_data["hook_event_name"], tool=input_data["tool_name"])
        return {}

    opts = options(
        allowed_tools=["Read", "Edit", "Glob", "Grep"],
        hooks={"PreToolUse": [HookMatcher(matcher="Edit|Write", hooks=[pre])]},
    )
    async with ClaudeSDKClient(options=opts) as c:
        for prompt in (
            '!tool Read {"file_path":"code.txt"}',
            '!tool Edit {"file_path":"code.txt","old_string":"b","new_string":"B"}',
        ):
            await c.query(prompt)
            async for m in c.receive_response():
                record(m)
                if type(m).__name__ == "UserMessage":
                    emit(event="tool_use_result", value=getattr(m, "tool_use_result", None))


async def flow_pre_compact():
    """PROFILE §19: `/compact` with instructions calls the PreCompact hook (trigger manual,
    the instructions as custom_instructions) and ends with the compaction's result."""

    async def pre(input_data, _tool_use_id, _context):
        emit(
            event="hook",
            hook=input_data["hook_event_name"],
            trigger=input_data.get("trigger"),
            custom=input_data.get("custom_instructions"),
        )
        return {}

    opts = options(hooks={"PreCompact": [HookMatcher(matcher="manual", hooks=[pre])]})
    async with ClaudeSDKClient(options=opts) as c:
        await turn(c, "!say first")
        await turn(c, "!say second")
        await turn(c, "/compact keep the names")


async def flow_priced_budget():
    """PROFILE §19: a priced local provider (auth.json prepared by the test) and
    max_budget_usd: the second request reaches the budget, the third turn ends without one."""
    async with ClaudeSDKClient(options=options(max_budget_usd=0.01)) as c:
        await turn(c, "one")
        await turn(c, "two")
        await turn(c, "three")


async def main():
    await globals()["flow_" + sys.argv[1]]()
    emit(event="done")


anyio.run(main)

