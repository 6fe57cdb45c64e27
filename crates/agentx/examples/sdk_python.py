"""Drives agentx through the official Python Claude Agent SDK (README "Use agentx from the
Claude Agent SDK", PROFILE §15).

    cargo build --release
    pip install claude-agent-sdk==0.2.189
    python examples/sdk_python.py

Without an auth.json in the AgentX home agentx runs its built-in deterministic model
(agentx-echo), so this works offline; with one, the same code runs on your provider.
"""

import os
import sys

try:
    import anyio
    from claude_agent_sdk import (
        ClaudeAgentOptions,
        ClaudeSDKClient,
        PermissionResultAllow,
        PermissionResultDeny,
    )
except ImportError:
    sys.exit("install the Python SDK first: pip install claude-agent-sdk==0.2.189")

AGENTX = os.environ.get(
    "AGENTX_BIN",
    os.path.join(os.path.dirname(__file__), "..", "target", "release", "agentx"),
)


async def can_use_tool(tool, tool_input, _context):
    # Allow file writes, deny everything else.
    print(f"  permission asked: {tool} {tool_input}")
    if tool == "Write":
        return PermissionResultAllow()
    return PermissionResultDeny(message="only writes are allowed here")


async def main():
    options = ClaudeAgentOptions(
        cli_path=AGENTX,
        system_prompt="You are a careful assistant.",
        can_use_tool=can_use_tool,
    )
    async with ClaudeSDKClient(options=options) as client:
        for prompt in [
            "hello from the Python SDK",
            "!system",
            '!tool Write {"file_path":"/tmp/agentx-sdk-example.txt","content":"hi"}\n'
            '!tool Bash {"command":"rm -rf /"}\n!say done',
        ]:
            print(f"> {prompt!r}")
            await client.query(prompt)
            async for message in client.receive_response():
                print(f"  {type(message).__name__}: {getattr(message, 'result', None) or getattr(message, 'content', '')}")


anyio.run(main)
