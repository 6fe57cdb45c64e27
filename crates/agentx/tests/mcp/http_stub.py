"""A standard-library stand-in for what a real network MCP server does not do on demand, for
agentx's PROFILE §18 tests (`mcp_network.rs`):

    http_stub.py MODE LOG

binds a free loopback port, prints `PORT <n>` on stdout, and serves until killed, appending
one line per request to LOG. MODE:
- `401`: every request is answered 401;
- `record`: a minimal streamable-HTTP server (JSON answers, session `s-1`, no GET stream)
  that logs each POST's method with the session and protocol-version headers it carried, and
  each DELETE;
- `flood`: the answer to `initialize` is an event stream of one endless `data` line (100 MB);
- `noise`: the answer to `initialize` is an event stream of endless events that are not
  JSON-RPC;
- `hang`: no POST is ever answered, and a GET gets an event stream that stays silent;
- `expire`: as `record`, but `tools/call` is answered 404 (the session is gone);
- `sse-away`: a GET opens an HTTP+SSE stream whose `endpoint` event names another origin
  (`localhost` for `127.0.0.1`);
- `tls`: as `record`, over TLS with the certificate `LOG.crt` and key `LOG.key` (the test makes
  them, self-signed);
- `json:N`, `event:N`: as `record`, but the answer to `tools/call` is exactly N bytes, a JSON
  body or the data of one event."""

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
LOG = sys.argv[2]


def log(line: str) -> None:
    with open(LOG, "a") as f:
        f.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def reply(self, status: int, body: bytes = b"", ctype: str = "application/json", extra=()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        log(f"GET {self.path}")
        if MODE == "401":
            return self.reply(401, b"{}", extra=[("WWW-Authenticate", "Bearer")])
        if MODE == "sse-away":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            port = self.server.server_address[1]
            self.wfile.write(f"event: endpoint\ndata: http://localhost:{port}/messages\n\n".encode())
            self.wfile.flush()
            return time.sleep(3600)
        if MODE == "hang":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.flush()
            return time.sleep(3600)
        self.reply(405)

    def do_DELETE(self) -> None:
        log(f"DELETE session={self.headers.get('mcp-session-id')}")
        self.reply(200)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        msg = json.loads(body)
        method = msg.get("method")
        log(
            f"POST {method} session={self.headers.get('mcp-session-id')} "
            f"version={self.headers.get('mcp-protocol-version')}"
        )
        if MODE == "401":
            return self.reply(401, b"{}", extra=[("WWW-Authenticate", "Bearer")])
        if MODE == "hang":
            return time.sleep(3600)
        if MODE == "expire" and method == "tools/call":
            return self.reply(404, b"{}")
        if "id" not in msg:
            return self.reply(202)
        if method == "initialize" and MODE in ("flood", "noise"):
            return self.stream(MODE)
        result = {}
        if method == "initialize":
            result = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "stub", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [{"name": "hello", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "hi"}]}
        out = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
        if method == "tools/call" and ":" in MODE:
            return self.sized(msg["id"])
        self.reply(200, out, extra=[("Mcp-Session-Id", "s-1")])

    def sized(self, id_) -> None:
        kind, n = MODE.split(":")
        empty = json.dumps(
            {"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": ""}]}}
        ).encode()
        out = empty.replace(b'"text": ""', b'"text": "' + b"a" * (int(n) - len(empty)) + b'"')
        assert len(out) == int(n)
        if kind == "json":
            return self.reply(200, out)
        body = b"event: message\ndata: " + out + b"\n\n"
        self.reply(200, body, ctype="text/event-stream")

    def stream(self, mode: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"x" * (1 << 20) if mode == "flood" else b"data: not json-rpc\n\n" * 50000
        try:
            if mode == "flood":
                self.wfile.write(b"data: ")
            for _ in range(100):
                self.wfile.write(chunk)
        except OSError:
            pass
        log("stream ended")


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if MODE == "tls":
        import ssl

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(LOG + ".crt", LOG + ".key")
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
