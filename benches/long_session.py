#!/usr/bin/env python3
"""PROFILE §19 long-session run (a script, not a CI test): 200 turns of `agentx` against a local
Chat Completions server with a 32k-token `context_window`. Reports the number of compactions,
the peak request size (estimated tokens of the largest request body, bytes / 4, which must stay
under the window) and agentx's RSS at turn 10 and turn 200.

    cargo build --release --bins && python3 benches/long_session.py [target/release/agentx]
"""
import json, os, subprocess, sys, tempfile, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WINDOW, TURNS, PROMPT_BYTES, REPLY_WORDS = 32_000, 200, 2_000, 300
sizes = []

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        sizes.append(len(body))
        req = json.loads(body)
        summary = "tools" not in req and req["messages"][-1]["content"].startswith("Summarize")
        text = "summary of the work so far" if summary else " ".join(["word"] * REPLY_WORDS)
        prompt = len(body) // 4
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        def ev(obj): self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
        ev({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]})
        ev({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        ev({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": len(text) // 4}})
        self.wfile.write(b"data: [DONE]\n\n")

def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

def main():
    agentx = sys.argv[1] if len(sys.argv) > 1 else "target/release/agentx"
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home = tempfile.mkdtemp(prefix="agentx-long-")
    os.makedirs(f"{home}/work")
    with open(f"{home}/auth.json", "w") as f:
        json.dump({"version": 2, "providers": [{"id": "local", "type": "openai", "model": "m",
                   "api_key": "sk-long-session-bench", "base_url": f"http://127.0.0.1:{server.server_port}/v1",
                   "context_window": WINDOW}]}, f)
    p = subprocess.Popen([agentx, "--input-format", "stream-json", "--output-format", "stream-json",
                          "--cwd", f"{home}/work"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env={**os.environ, "AGENTX_HOME": home, "HOME": home}, text=True)
    compactions, rss = 0, {}
    for turn in range(1, TURNS + 1):
        prompt = f"turn {turn}: " + ("x" * (PROMPT_BYTES - 12))
        p.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": prompt},
                                  "parent_tool_use_id": None}) + "\n")
        p.stdin.flush()
        while True:
            rec = json.loads(p.stdout.readline())
            if rec.get("subtype") == "compact_boundary":
                compactions += 1
            if rec["type"] == "result":
                assert rec["subtype"] == "success", rec
                break
        if turn in (10, TURNS):
            rss[turn] = rss_kib(p.pid)
    p.stdin.close()
    p.wait()
    peak = max(sizes)
    print(json.dumps({"turns": TURNS, "window_tokens": WINDOW, "requests": len(sizes),
                      "compactions": compactions, "peak_request_bytes": peak,
                      "peak_request_tokens_est": peak // 4, "under_window": peak // 4 < WINDOW,
                      "rss_kib_turn_10": rss[10], "rss_kib_turn_200": rss[TURNS]}))

main()
