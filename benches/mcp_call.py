#!/usr/bin/env python3
"""PROFILE §18 `tools/call` round trip to a local stdio MCP server (a script, not a CI test):
the FastMCP server of crates/agentx/tests/mcp/demo_server.py (`add`), called N times

- through `agentx` (stream-json, `--mcp-config`, bypassPermissions): one `!mcp demo add` turn
  per call, timed from the host reading the `assistant` record with the model's tool_use to
  reading the `user` record with its tool_result (agentx's permission step, the JSON-RPC
  request and answer on the server's pipes, the record written and stored);
- by the official Python MCP client (`mcp` ClientSession over stdio, the same server file
  started by the same python): `await session.call_tool("add", ...)`, timed around the call.

Both sessions stay open; the two alternate in rounds (ROUNDS × CALLS each) so load hits both
alike. Prints p50 / p99 per side in µs and agentx's CPU (utime + stime of every thread, from
/proc/<pid>/task/*/schedstat, ns) per one-call turn and per plain echo turn (no tool) measured
the same way, so the difference is what the call adds. Run it with the pinned venv's python
(crates/agentx/tests/mcp_servers.rs installs it on first use):

    cargo build --bins && cargo test -p agentx --test mcp_servers a_stdio_server
    target/tmp/mcp-python-*/venv/bin/python benches/mcp_call.py [target/debug/agentx]

Knobs: AGENTX_BENCH_ROUNDS (default 10), AGENTX_BENCH_CALLS (per round, default 100),
AGENTX_BENCH_TRANSPORT (`stdio`, the default; `streamable-http` or `sse`: the same server run
once by crates/agentx/tests/mcp/http_server.py on a free loopback port, agentx configured with
`"type":"http"` or `"sse"`, the Python client with `streamable_http_client` or `sse_client`).
"""
import json, os, statistics, subprocess, sys, tempfile, time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = os.path.join(ROOT, "crates/agentx/tests/mcp/demo_server.py")
ROUNDS = int(os.environ.get("AGENTX_BENCH_ROUNDS", "10"))
CALLS = int(os.environ.get("AGENTX_BENCH_CALLS", "100"))
TRANSPORT = os.environ.get("AGENTX_BENCH_TRANSPORT", "stdio")


def cpu_ns(pid):
    """On-CPU time of every live thread of `pid` (schedstat's first field), in ns."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:
            pass
    return total


class Agentx:
    def __init__(self, binary, home, url=None):
        config = {"mcpServers": {"demo": {"command": sys.executable, "args": [SERVER]}}}
        if url is not None:
            kind = "sse" if TRANSPORT == "sse" else "http"
            config = {"mcpServers": {"demo": {"type": kind, "url": url}}}
        self.p = subprocess.Popen(
            [binary, "--input-format", "stream-json", "--output-format", "stream-json",
             "--verbose", "--permission-mode", "bypassPermissions",
             "--mcp-config", json.dumps(config), "--cwd", home],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "AGENTX_HOME": home}, text=True, bufsize=1)

    def send(self, prompt):
        self.p.stdin.write(json.dumps({"type": "user", "session_id": "", "parent_tool_use_id": None,
                                       "message": {"role": "user", "content": prompt}}) + "\n")
        self.p.stdin.flush()

    def record(self):
        line = self.p.stdout.readline()
        if not line:
            sys.exit("agentx closed its stdout")
        return json.loads(line)

    def turn(self):
        """Reads one turn; the seconds from the tool_use record to the tool_result record."""
        start = end = None
        while True:
            r = self.record()
            if r["type"] == "assistant" and start is None and any(
                    b["type"] == "tool_use" for b in r["message"]["content"]):
                start = time.perf_counter()
            elif r["type"] == "user" and start is not None and end is None:
                end = time.perf_counter()
                block = r["message"]["content"][0]
                if block.get("is_error") or block.get("content") != "3":
                    sys.exit(f"unexpected tool_result {block}")
            elif r["type"] == "result":
                return None if start is None else end - start

    def calls(self, n):
        out = []
        for _ in range(n):
            self.send('!mcp demo add {"a":1,"b":2}')
            out.append(self.turn())
        return out

    def echo_turns(self, n):
        for _ in range(n):
            self.send("hi")
            self.turn()


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


async def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/debug/agentx")
    home = tempfile.mkdtemp(prefix="agentx-mcp-bench-")
    url, server = None, None
    if TRANSPORT != "stdio":
        server = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "crates/agentx/tests/mcp/http_server.py"),
             TRANSPORT, os.path.join(home, "server.log")],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        port = server.stdout.readline().split()[1]
        url = f"http://127.0.0.1:{port}" + ("/sse" if TRANSPORT == "sse" else "/mcp")
    ax = Agentx(binary, home, url)
    ax.calls(20)  # warm-up; the first turn also waits for the server to connect
    ax.echo_turns(20)
    ours, peer, cpu_call, cpu_echo = [], [], 0, 0
    if url is None:
        client = stdio_client(StdioServerParameters(command=sys.executable, args=[SERVER]))
    elif TRANSPORT == "sse":
        client = sse_client(url)
    else:
        client = streamable_http_client(url)
    async with client as (read, write, *_):
        async with ClientSession(read, write) as s:
            await s.initialize()
            for _ in range(20):
                await s.call_tool("add", {"a": 1, "b": 2})
            for _ in range(ROUNDS):
                c0 = cpu_ns(ax.p.pid)
                ours += ax.calls(CALLS)
                c1 = cpu_ns(ax.p.pid)
                ax.echo_turns(CALLS)
                c2 = cpu_ns(ax.p.pid)
                cpu_call += c1 - c0
                cpu_echo += c2 - c1
                for _ in range(CALLS):
                    t0 = time.perf_counter()
                    r = await s.call_tool("add", {"a": 1, "b": 2})
                    peer.append(time.perf_counter() - t0)
                    if r.is_error or r.content[0].text != "3":
                        sys.exit(f"unexpected result {r}")
    ax.p.stdin.close()
    ax.p.wait(timeout=30)
    if server is not None:
        server.kill()
    n = ROUNDS * CALLS
    us = lambda s: round(s * 1e6)
    print(json.dumps({
        "transport": TRANSPORT,
        "calls_each": n,
        "load": os.getloadavg()[0],
        "agentx_p50_us": us(pct(ours, 0.50)), "agentx_p99_us": us(pct(ours, 0.99)),
        "python_client_p50_us": us(pct(peer, 0.50)), "python_client_p99_us": us(pct(peer, 0.99)),
        "agentx_mean_us": us(statistics.mean(ours)), "python_client_mean_us": us(statistics.mean(peer)),
        "agentx_cpu_per_call_turn_us": round(cpu_call / n / 1000, 1),
        "agentx_cpu_per_echo_turn_us": round(cpu_echo / n / 1000, 1),
        "agentx_cpu_per_call_us": round((cpu_call - cpu_echo) / n / 1000, 1),
    }))


anyio.run(main)
