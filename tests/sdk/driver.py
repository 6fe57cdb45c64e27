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
    query,
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
    await client.query(prompt)
    async for m in client.receive_response():
        record(m)


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


async def main():
    await globals()["flow_" + sys.argv[1]]()
    emit(event="done")


anyio.run(main)
