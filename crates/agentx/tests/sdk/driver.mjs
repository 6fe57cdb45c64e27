// Runs one named flow of the TypeScript Claude Agent SDK against agentx (PROFILE §15).
//
// Usage: node driver.mjs FLOW. Environment: AGENTX_BIN (the built agentx), AGENTX_HOME (a
// temporary AgentX home), FLOW_CWD (the session's working directory), SDK_TS_MODULE (the
// installed sdk.mjs). Prints what the SDK handed to its caller as JSON lines, in the same
// normalized shape as driver.py, so tests/sdk_typescript.rs asserts what tests/sdk_python.rs
// does. One flow is one function in FLOWS below.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const sdkUrl = pathToFileURL(process.env.SDK_TS_MODULE);
const { query, tool, createSdkMcpServer } = await import(sdkUrl.href);
// zod is the SDK's own dependency, installed beside it (the `tool()` input shapes).
const { z } = await import(new URL("../../zod/index.js", sdkUrl).href);

function emit(event) {
  const sorted = Object.fromEntries(Object.entries(event).sort(([a], [b]) => (a < b ? -1 : 1)));
  process.stdout.write(JSON.stringify(sorted) + "\n");
}

function options(extra = {}) {
  return {
    pathToClaudeCodeExecutable: process.env.AGENTX_BIN,
    cwd: process.env.FLOW_CWD,
    env: { ...process.env, AGENTX_HOME: process.env.AGENTX_HOME },
    stderr: (data) => {
      for (const line of String(data).split("\n")) if (line) emit({ event: "stderr", line });
    },
    ...extra,
  };
}

function blocks(content) {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((b) => {
    if (b.type === "text") return { type: "text", text: b.text };
    if (b.type === "tool_use") return { type: "tool_use", name: b.name, input: b.input };
    if (b.type === "tool_result") {
      const text = typeof b.content === "string" ? b.content : b.content;
      return { type: "tool_result", content: text, is_error: b.is_error ?? null };
    }
    return { type: b.type };
  });
}

function record(m) {
  if (m.type === "assistant") emit({ event: "message", type: "assistant", blocks: blocks(m.message.content) });
  else if (m.type === "user") emit({ event: "message", type: "user", blocks: blocks(m.message.content) });
  else if (m.type === "result")
    emit({
      event: "message",
      type: "result",
      subtype: m.subtype,
      is_error: m.is_error,
      num_turns: m.num_turns,
      result: m.result ?? null,
      errors: m.errors ?? null,
      denials: (m.permission_denials ?? []).map((d) => d.tool_name),
      session_id: m.session_id,
    });
  else if (m.type === "stream_event") emit({ event: "message", type: "stream_event", kind: m.event.type });
  else if (m.type === "system") emit({ event: "message", type: "system", subtype: m.subtype, data: m });
  else emit({ event: "message", type: m.type });
}

// A streaming-input session: prompts are pushed one at a time, each after the previous
// turn's result, as a multi-turn SDK host does.
// A prompt pushed before the SDK reads its input (it waits for in-process MCP servers first)
// is queued until it does.
function session(extra = {}) {
  const waiting = [];
  let wake = null;
  const push = (text) => {
    waiting.push(text);
    if (wake) {
      const w = wake;
      wake = null;
      w();
    }
  };
  async function* input() {
    while (true) {
      while (waiting.length === 0) await new Promise((resolve) => (wake = resolve));
      const text = waiting.shift();
      if (text === null) return;
      yield { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" };
    }
  }
  const q = query({ prompt: input(), options: options(extra) });
  const it = q[Symbol.asyncIterator]();
  return {
    q,
    // Runs one turn and returns its result message.
    async turn(text, onMessage = () => {}) {
      push(text);
      while (true) {
        const { value, done } = await it.next();
        if (done) return null;
        record(value);
        await onMessage(value);
        if (value.type === "result") return value;
      }
    },
    async close() {
      push(null);
      while (!(await it.next()).done) {}
    },
  };
}

function writeNote() {
  writeFileSync(join(process.env.FLOW_CWD, "note.txt"), "note");
}

const TOOLS =
  '!tool Write {"file_path":"a.txt","content":"x"}\n!tool Bash {"command":"echo hi"}\n!say done';

const FLOWS = {
  async prompt() {
    for await (const m of query({ prompt: "hello agentx", options: options() })) record(m);
  },
  async can_use_tool() {
    const s = session({
      canUseTool: async (tool, input) => {
        emit({ event: "callback", tool, input });
        return tool === "Write"
          ? { behavior: "allow", updatedInput: input }
          : { behavior: "deny", message: "no shell" };
      },
    });
    await s.turn(TOOLS);
    await s.close();
  },
  async no_callback() {
    const s = session();
    await s.turn('!tool Bash {"command":"echo hi"}\n!say done');
    await s.close();
  },
  async bypass() {
    const s = session({
      permissionMode: "bypassPermissions",
      allowDangerouslySkipPermissions: true,
      canUseTool: async (tool, input) => {
        emit({ event: "callback", tool, input });
        return { behavior: "deny", message: "never asked" };
      },
    });
    await s.turn('!tool Bash {"command":"echo bypassed"}\n!say done');
    await s.close();
  },
  async interrupt() {
    const s = session();
    await s.turn("!sleep 600000", async (m) => {
      if (m.type === "system" && m.subtype === "init") {
        await s.q.interrupt();
        emit({ event: "interrupted" });
      }
    });
    await s.turn("after the interrupt");
    await s.close();
  },
  async tasks() {
    const s = session();
    await s.turn("!task t1 2 1\n!say started");
    await s.close();
  },
  async partial() {
    const s = session({ includePartialMessages: true });
    await s.turn("stream me");
    await s.close();
  },
  async system_prompt() {
    let s = session({ systemPrompt: "You are terse." });
    await s.turn("!system");
    await s.close();
    s = session();
    await s.turn("!system");
    await s.close();
  },
  async controls() {
    const s = session();
    await s.turn("hi");
    emit({ event: "mcp_status", value: { mcpServers: await s.q.mcpServerStatus() } });
    const usage = await s.q.getContextUsage();
    emit({ event: "context_usage", keys: Object.keys(usage).sort(), model: usage.model ?? null });
    for (const call of [() => s.q.setModel("other"), () => s.q.setPermissionMode("plan")]) {
      try {
        await call();
        emit({ event: "returned" });
      } catch (e) {
        emit({ event: "raised", error: String(e.message ?? e) });
      }
    }
    await s.close();
  },
  async close_persists() {
    const s = session();
    await s.turn("remember me");
    await s.close();
    emit({ event: "disconnected" });
  },
  async resume() {
    let s = session();
    let sid;
    for (let i = 1; i <= 4; i++) sid = (await s.turn(`turn ${i}`)).session_id;
    await s.close();
    emit({ event: "first", session_id: sid });
    for (const extra of [
      { resume: sid },
      { continue: true },
      { resume: sid, forkSession: true },
      { resume: sid },
    ]) {
      s = session(extra);
      await s.turn("!history");
      await s.close();
    }
  },
  async max_turns() {
    writeNote();
    const s = session({ maxTurns: 1 });
    await s.turn('!tool Read {"file_path":"note.txt"}\n!say never');
    await s.turn("next turn");
    await s.close();
  },
  async budget() {
    const s = session({ maxBudgetUsd: 0.01 });
    await s.turn("!cost 0.004\n!say cheap");
    await s.turn("!cost 0.007\n!say reaches it");
    await s.turn("after the budget");
    await s.close();
  },
  // PROFILE §17: allowedTools runs a Read-then-Edit with no permission callback; a PreToolUse
  // hook matching Edit|Write sees the Edit; the user message carries tool_use_result.
  async coding() {
    writeFileSync(join(process.env.FLOW_CWD, "code.txt"), "a\nb\nc\n");
    const pre = async (input) => {
      emit({ event: "hook", hook: input.hook_event_name, tool: input.tool_name });
      return {};
    };
    const s = session({
      allowedTools: ["Read", "Edit", "Glob", "Grep"],
      hooks: { PreToolUse: [{ matcher: "Edit|Write", hooks: [pre] }] },
    });
    const onMessage = async (m) => {
      if (m.type === "user") emit({ event: "tool_use_result", value: m.tool_use_result ?? null });
    };
    await s.turn('!tool Read {"file_path":"code.txt"}', onMessage);
    await s.turn('!tool Edit {"file_path":"code.txt","old_string":"b","new_string":"B"}', onMessage);
    await s.close();
  },
  // PROFILE §19: `/compact` with instructions calls the PreCompact hook (trigger manual).
  async pre_compact() {
    const pre = async (input) => {
      emit({
        event: "hook",
        hook: input.hook_event_name,
        trigger: input.trigger ?? null,
        custom: input.custom_instructions ?? null,
      });
      return {};
    };
    const s = session({ hooks: { PreCompact: [{ matcher: "manual", hooks: [pre] }] } });
    await s.turn("!say first");
    await s.turn("!say second");
    await s.turn("/compact keep the names");
    await s.close();
  },
  // PROFILE §19: a priced local provider (auth.json prepared by the test) and maxBudgetUsd.
  async priced_budget() {
    const s = session({ maxBudgetUsd: 0.01 });
    await s.turn("one");
    await s.turn("two");
    await s.turn("three");
    await s.close();
  },
  async tool_rules() {
    const s = session({
      allowedTools: ["Bash(echo:*)"],
      disallowedTools: ["Write"],
      canUseTool: async (tool, input) => {
        emit({ event: "callback", tool, input });
        return { behavior: "deny", message: "asked and denied" };
      },
    });
    await s.turn(
      '!tool Bash {"command":"echo allowed"}\n!tool Bash {"command":"ls"}\n' +
        '!tool Write {"file_path":"w.txt","content":"x"}\n!say done',
    );
    await s.close();
  },
  async stop_task() {
    const s = session();
    await s.turn("!task t1 1000 50\n!say started", async (m) => {
      if (m.type === "system" && m.subtype === "task_started") {
        await s.q.stopTask("t1");
        emit({ event: "stopped" });
        try {
          await s.q.stopTask("nope");
          emit({ event: "returned" });
        } catch (e) {
          emit({ event: "raised", error: String(e.message ?? e) });
        }
      }
    });
    await s.turn("after the task");
    await s.close();
  },
  // --- SDK hooks (PROFILE §16) ---
  async hooks_pre_tool_use() {
    const outside = join(process.env.AGENTX_HOME, "outside.txt");
    writeFileSync(outside, "outside");
    const pre = async (input, toolUseID) => {
      emit({
        event: "hook",
        hook: input.hook_event_name,
        tool: input.tool_name,
        same_id: toolUseID === input.tool_use_id,
        keys: Object.keys(input).sort(),
      });
      return {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: input.tool_name === "Bash" ? "deny" : "allow",
          permissionDecisionReason: "no shell from a hook",
        },
      };
    };
    const s = session({
      canUseTool: hostSaysNo,
      hooks: { PreToolUse: [{ matcher: "Bash|Read", hooks: [pre] }] },
    });
    await s.turn(
      `!tool Read {"file_path":${JSON.stringify(outside)}}\n!tool Bash {"command":"echo hi"}\n!say done`,
    );
    await s.close();
  },
  async hooks_post_tool_use() {
    writeNote();
    const post = async (input) => {
      emit({ event: "hook", hook: input.hook_event_name, response: input.tool_response });
      return { hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "checked by a hook" } };
    };
    const s = session({ hooks: { PostToolUse: [{ matcher: "Read", hooks: [post] }] } });
    await s.turn('!tool Read {"file_path":"note.txt"}\n!last_tool_result');
    await s.close();
  },
  async hooks_user_prompt_submit() {
    const gate = async (input) => {
      emit({ event: "hook", hook: input.hook_event_name, prompt: input.prompt });
      return input.prompt.includes("forbidden") ? { decision: "block", reason: "that topic is blocked" } : {};
    };
    const s = session({ hooks: { UserPromptSubmit: [{ hooks: [gate] }] } });
    await s.turn("a forbidden topic");
    await s.turn("an allowed topic");
    await s.close();
  },
  async hooks_raise() {
    const boom = async (input) => {
      emit({ event: "hook", tool: input.tool_name });
      throw new Error("hook exploded");
    };
    for (const onFailure of [undefined, "block"]) {
      const s = session({
        canUseTool: hostSaysNo,
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [boom], onFailure }] },
      });
      await s.turn('!tool Bash {"command":"echo hi"}\n!say done');
      await s.turn("still here");
      await s.close();
    }
  },
  async hooks_interrupt() {
    let started;
    const hookStarted = new Promise((resolve) => (started = resolve));
    const slow = (input, _id, { signal }) =>
      new Promise((resolve) => {
        emit({ event: "hook", tool: input.tool_name });
        started();
        signal.addEventListener("abort", () => {
          emit({ event: "hook_cancelled" });
          resolve({});
        });
      });
    const s = session({
      canUseTool: hostSaysNo,
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [slow] }] },
    });
    await s.turn('!tool Bash {"command":"echo hi"}\n!say never', async (m) => {
      if (m.type === "assistant" && m.message.content.some((b) => b.type === "tool_use")) {
        await hookStarted;
        await s.q.interrupt();
        emit({ event: "interrupted" });
      }
    });
    await s.turn("after the interrupt");
    await s.close();
  },
  // PROFILE §16: `outputFormat` (sent as --json-schema and initialize jsonSchema); a valid
  // `!json` answer is the result's `structured_output`, an invalid one ends after 3 attempts.
  async structured_output() {
    const schema = { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"] };
    const s = session({ outputFormat: { type: "json_schema", schema } });
    const onMessage = (m) => {
      if (m.type === "result") emit({ event: "structured", subtype: m.subtype, value: m.structured_output ?? null });
    };
    await s.turn('!json {"answer": 42}', onMessage);
    await s.turn('!json {"answer": "x"}', onMessage);
    await s.close();
  },
  // PROFILE §16: an SDK MCP server (initialize `sdkMcpServers` + manifests), two `!mcp`
  // calls through canUseTool, their results the tool_results.
  async mcp_tools() {
    const s = session({
      mcpServers: { calc: calcServer() },
      canUseTool: async (tool, input) => {
        emit({ event: "callback", tool, input });
        return { behavior: "allow", updatedInput: input };
      },
    });
    await s.turn(MCP_PROMPT);
    await s.close();
  },
  async mcp_status() {
    const s = session({ mcpServers: { calc: calcServer() } });
    await s.turn("hello");
    const status = await s.q.mcpServerStatus();
    emit({ event: "mcp_status", value: { mcpServers: status.map((x) => ({ name: x.name, status: x.status })) } });
    await s.close();
  },
  async interrupt_hook_mcp() {
    let hookStarted, mcpStarted;
    const hookP = new Promise((resolve) => (hookStarted = resolve));
    const mcpP = new Promise((resolve) => (mcpStarted = resolve));
    const slow = (input, _id, { signal }) =>
      new Promise((resolve) => {
        emit({ event: "hook", tool: input.tool_name });
        hookStarted();
        signal.addEventListener("abort", () => {
          emit({ event: "hook_cancelled" });
          resolve({});
        });
      });
    const s = session({
      mcpServers: { calc: calcServer(mcpStarted) },
      permissionMode: "bypassPermissions",
      allowDangerouslySkipPermissions: true,
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [slow] }] },
    });
    let interrupted = false;
    await s.turn('!mcp calc add {"a": 1, "b": 2}\n!tool Bash {"command":"echo hi"}\n!say never', async (m) => {
      const bash = m.type === "assistant" && m.message.content.some((b) => b.type === "tool_use" && b.name === "Bash");
      if (bash && !interrupted) {
        interrupted = true;
        await hookP;
        await mcpP;
        await s.q.interrupt();
        emit({ event: "interrupted" });
      }
    });
    await s.turn("after the interrupt");
    await s.close();
  },
  // PROFILE §18: a stdio server in `mcpServers` becomes `--mcp-config`; agentx starts it, its
  // tools go through canUseTool, their results (structuredContent as tool_use_result,
  // isError) come back to the caller.
  async mcp_stdio() {
    const s = session({
      mcpServers: { demo: demoServer({ PLAIN: "from the config" }) },
      canUseTool: async (tool, input) => {
        emit({ event: "callback", tool, input });
        return { behavior: "allow", updatedInput: input };
      },
    });
    await s.turn(STDIO_PROMPT, (m) => {
      if (m.type === "user") emit({ event: "tool_use_result", value: m.tool_use_result ?? null });
    });
    emitStatus(await s.q.mcpServerStatus());
    await s.close();
  },
  // PROFILE §18: http and sse servers in `mcpServers` (the FastMCP server over its own
  // streamable-HTTP and SSE transports, started by the test: MCP_HTTP_URL, MCP_SSE_URL).
  async mcp_network() {
    const s = session({
      mcpServers: {
        web: { type: "http", url: process.env.MCP_HTTP_URL },
        old: { type: "sse", url: process.env.MCP_SSE_URL },
      },
      permissionMode: "bypassPermissions",
      allowDangerouslySkipPermissions: true,
    });
    await s.turn('!mcp web add {"a": 1, "b": 2}\n!mcp old add {"a": 3, "b": 4}\n!last_tool_result');
    emitStatus(await s.q.mcpServerStatus());
    await s.close();
  },
  // PROFILE §18 live changes: toggle off (no tools), on, reconnect, an unknown name; then
  // setMcpServers adds a dynamic server and an empty set removes it.
  async mcp_stdio_live() {
    const s = session({
      mcpServers: { demo: demoServer() },
      permissionMode: "bypassPermissions",
      allowDangerouslySkipPermissions: true,
    });
    await s.turn("hello");
    await s.q.toggleMcpServer("demo", false);
    emitStatus(await s.q.mcpServerStatus());
    await s.turn('!mcp demo add {"a": 2, "b": 2}');
    await s.q.toggleMcpServer("demo", true);
    await s.q.reconnectMcpServer("demo");
    emitStatus(await s.q.mcpServerStatus());
    await s.turn('!mcp demo add {"a": 3, "b": 4}');
    try {
      await s.q.reconnectMcpServer("nope");
      emit({ event: "returned" });
    } catch (e) {
      emit({ event: "raised", error: String(e.message ?? e) });
    }
    emit({ event: "set_servers", value: await s.q.setMcpServers({ more: demoServer() }) });
    await s.q.reconnectMcpServer("more");
    emitStatus(await s.q.mcpServerStatus());
    await s.turn('!mcp more add {"a": 5, "b": 6}');
    emit({ event: "set_servers", value: await s.q.setMcpServers({}) });
    emitStatus(await s.q.mcpServerStatus());
    await s.close();
  },
};

// PROFILE §16: an in-process SDK MCP server `calc` with two tools, `add` and `fail`.
function calcServer(onSlow = null) {
  const add = tool("add", "Add two integers", { a: z.number().int(), b: z.number().int() }, async (args, extra) => {
    emit({ event: "mcp_call", tool: "add", args });
    if (onSlow) {
      onSlow();
      await new Promise((resolve) => {
        extra?.signal?.addEventListener("abort", () => {
          emit({ event: "mcp_cancelled" });
          resolve();
        });
      });
    }
    return { content: [{ type: "text", text: String(args.a + args.b) }] };
  });
  const fail = tool("fail", "Always fails", { why: z.string() }, async (args) => {
    emit({ event: "mcp_call", tool: "fail", args });
    return { content: [{ type: "text", text: "failed: " + args.why }], isError: true };
  });
  return createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add, fail] });
}

// PROFILE §18: the stdio server built with the official Python MCP SDK (FastMCP) from the
// pinned venv the test installed (MCP_PYTHON, MCP_DEMO_SERVER).
function demoServer(env = {}) {
  return { type: "stdio", command: process.env.MCP_PYTHON, args: [process.env.MCP_DEMO_SERVER], env };
}

function emitStatus(status) {
  emit({
    event: "mcp_status",
    value: status.map((x) => ({
      name: x.name,
      status: x.status,
      server: x.serverInfo?.name ?? null,
      tools: (x.tools ?? []).map((t) => t.name),
    })),
  });
}

const STDIO_PROMPT =
  '!tool mcp__demo__add {"a": 1, "b": 2}\n!mcp demo echo_env {"name": "PLAIN"}\n!mcp demo boom {}\n!last_tool_result';

const MCP_PROMPT = '!mcp calc add {"a": 1, "b": 2}\n!mcp calc fail {"why": "on purpose"}\n!last_tool_result';

async function hostSaysNo(tool, input) {
  emit({ event: "callback", tool, input });
  return { behavior: "deny", message: "host says no" };
}

await FLOWS[process.argv[2]]();
emit({ event: "done" });
process.exit(0);
