// The SDK callbacks on agentx through the official TypeScript Claude Agent SDK (PROFILE §16):
// a hook, an in-process MCP tool and structured output (docs/sdk-features.md).
//
//     cargo build --release
//     npm install @anthropic-ai/claude-agent-sdk@0.3.333   # brings zod with it
//     node examples/sdk_callbacks.mjs
//
// Without an auth.json in the AgentX home agentx runs its built-in deterministic model
// (agentx-echo), whose `!tool`, `!mcp` and `!json` directives stand in for a model's choices,
// so this runs offline; tests/sdk_typescript.rs runs it (SDK_TS_MODULE pointing at the
// installed sdk.mjs) and checks what it prints.

import { fileURLToPath, pathToFileURL } from "node:url";

const sdkUrl = process.env.SDK_TS_MODULE
  ? pathToFileURL(process.env.SDK_TS_MODULE).href
  : "@anthropic-ai/claude-agent-sdk";
const { query, tool, createSdkMcpServer } = await import(sdkUrl);
const { z } = await import(process.env.SDK_TS_MODULE ? new URL("../../zod/index.js", sdkUrl).href : "zod");

const agentx =
  process.env.AGENTX_BIN ?? fileURLToPath(new URL("../target/release/agentx", import.meta.url));
const base = { pathToClaudeCodeExecutable: agentx, cwd: process.env.EXAMPLE_CWD };

// A custom tool, served in this process: the model sees it as `mcp__calc__add`.
const calc = createSdkMcpServer({
  name: "calc",
  version: "1.0.0",
  tools: [
    tool("add", "Add two integers", { a: z.number().int(), b: z.number().int() }, async ({ a, b }) => ({
      content: [{ type: "text", text: String(a + b) }],
    })),
  ],
});

// A PreToolUse hook: no shell, whatever the model asks.
async function noShell(input) {
  console.log(`  hook: ${input.hook_event_name} ${input.tool_name}`);
  if (input.tool_name !== "Bash") return {};
  return {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "no shell in this example",
    },
  };
}

function text(content) {
  if (typeof content === "string") return content;
  return content.map((b) => b.text ?? `[${b.type}]`).join(" ");
}

function show(m) {
  const content = m.type === "assistant" || m.type === "user" ? m.message.content : [];
  for (const b of typeof content === "string" ? [] : content) {
    if (b.type === "tool_use") console.log(`  ${m.type}: tool_use ${b.name} ${JSON.stringify(b.input)}`);
    if (b.type === "tool_result") console.log(`  ${m.type}: tool_result${b.is_error ? " (error)" : ""} ${text(b.content)}`);
  }
  if (m.type === "result") console.log(`  result: ${m.subtype} structured_output=${JSON.stringify(m.structured_output ?? null)}`);
}

// One streaming-input session: each prompt is sent after the previous turn's result.
async function session(options, prompts) {
  let next;
  async function* input() {
    for (const prompt of prompts) {
      console.log(`> ${JSON.stringify(prompt)}`);
      yield { type: "user", message: { role: "user", content: prompt }, parent_tool_use_id: null, session_id: "" };
      await new Promise((resolve) => (next = resolve));
    }
  }
  for await (const m of query({ prompt: input(), options })) {
    show(m);
    if (m.type === "result") next();
  }
}

await session(
  {
    ...base,
    mcpServers: { calc },
    allowedTools: ["mcp__calc__add"],
    hooks: { PreToolUse: [{ matcher: "Bash", hooks: [noShell] }] },
  },
  ['!mcp calc add {"a":2,"b":3}\n!say added', '!tool Bash {"command":"rm -rf /"}\n!say refused'],
);

const schema = { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"] };
await session({ ...base, outputFormat: { type: "json_schema", schema } }, ['!json {"answer": 42}']);
