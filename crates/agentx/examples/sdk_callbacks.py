"""The SDK callbacks on agentx through the official Python Claude Agent SDK (PROFILE §16): a
hook, an in-process MCP tool and structured output (docs/sdk-features.md).

    cargo build --release
    pip install claude-agent-sdk==0.2.189
    python examples/sdk_callbacks.py

Without an auth.json in the AgentX home agentx runs its built-in deterministic model
(agentx-echo), whose `!tool`, `!mcp` and `!json` directives stand in for a model's choices, so
this runs offline; tests/sdk_python.rs runs it and checks what it prints.
"""

import os
import sys

try:
    import anyio
    from claude_agent_sdk import (
        ClaudeAgentOptions,
        ClaudeSDKClient,
        HookMatcher,
        create_sdk_mcp_server,
        tool,
    )
except ImportError:
    sys.exit("install the Python SDK first: pip install claude-agent-sdk==0.2.189")

AGENTX = os.environ.get(
    "AGENTX_BIN",
    os.path.join(os.path.dirname(__file__), "..", "target", "release", "agentx"),
)


# A custom tool, served in this process: the model sees it as `mcp__calc__add`.
@tool("add", "Add two integers", {"a": int, "b": int})
async def add(args):
    return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}


# A PreToolUse hook: no shell, whatever the model asks.
async def no_shell(input_data, _tool_use_id, _context):
    print(f"  hook: {input_data['hook_event_name']} {input_data['tool_name']}")
    if input_data["tool_name"] != "Bash":
        return {}
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no shell in this example",
        }
    }


def show(message):
    kind = type(message).__name__
    for block in getattr(message, "content", None) or []:
        if isinstance(block, str):
            continue
        name = type(block).__name__
        if name == "ToolUseBlock":
            print(f"  {kind}: tool_use {block.name} {block.input}")
        elif name == "ToolResultBlock":
            flag = " (error)" if block.is_error else ""
            print(f"  {kind}: tool_result{flag} {block.content}")
    if kind == "ResultMessage":
        print(f"  result: {message.subtype} structured_output={message.structured_output}")


async def main():
    options = ClaudeAgentOptions(
        cli_path=AGENTX,
        cwd=os.environ.get("EXAMPLE_CWD"),
        mcp_servers={"calc": create_sdk_mcp_server(name="calc", tools=[add])},
        allowed_tools=["mcp__calc__add"],
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[no_shell])]},
    )
    async with ClaudeSDKClient(options=options) as client:
        for prompt in [
            '!mcp calc add {"a":2,"b":3}\n!say added',
            '!tool Bash {"command":"rm -rf /"}\n!say refused',
        ]:
            print(f"> {prompt!r}")
            await client.query(prompt)
            async for message in client.receive_response():
                show(message)

    schema = {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
    }
    options = ClaudeAgentOptions(
        cli_path=AGENTX,
        cwd=os.environ.get("EXAMPLE_CWD"),
        output_format={"type": "json_schema", "schema": schema},
    )
    async with ClaudeSDKClient(options=options) as client:
        prompt = '!json {"answer": 42}'
        print(f"> {prompt!r}")
        await client.query(prompt)
        async for message in client.receive_response():
            show(message)


anyio.run(main)
