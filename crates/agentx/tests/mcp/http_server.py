"""The demo server (demo_server.py, built with the official Python MCP SDK) over the SDK's own
network transports, for agentx's PROFILE §18 tests:

    http_server.py streamable-http|sse LOG

binds a free loopback port, prints `PORT <n>` on stdout, and serves until it is killed. Its
extra tools: `roots` (asks agentx for `roots/list` mid-call), `header` (the value of one
request header as the server received it), `wait` (sleeps until cancelled and appends
`cancelled` to LOG), `die` (the process exits mid-call), `changed` (adds the tool `late` and
sends `notifications/tools/list_changed`). Its extra
routes: `/moved` redirects (307) to the transport's own path on the same origin, `/away` to
the same server under another origin (`localhost` for `127.0.0.1`)."""

import os
import socket
import sys

import anyio
import uvicorn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from demo_server import server  # noqa: E402
from mcp.server.mcpserver import Context  # noqa: E402
from starlette.responses import RedirectResponse  # noqa: E402

LOG = sys.argv[2]


def log(line: str) -> None:
    with open(LOG, "a") as f:
        f.write(line + "\n")


@server.tool()
def header(name: str, ctx: Context) -> str:
    """One request header as the server received it"""
    request = ctx.request_context.request
    return "" if request is None else request.headers.get(name, "")


@server.tool()
async def wait() -> str:
    """Sleeps until cancelled"""
    log("waiting")
    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        log("cancelled")
        raise
    return "woke"


@server.tool()
def die() -> str:
    """Exits the server mid-call"""
    os._exit(3)


@server.tool()
async def roots(ctx: Context) -> str:
    """The roots agentx answers `roots/list` with (a request from the server mid-call)"""
    result = await ctx.request_context.session.list_roots()
    return " ".join(str(r.uri) for r in result.roots)


def late() -> str:
    """Added by `changed`"""
    return "late"


@server.tool()
async def changed(ctx: Context) -> str:
    """Adds the tool `late` and says the list changed"""
    server.add_tool(late)
    await ctx.request_context.session.send_tool_list_changed()
    return "changed"


def own_path() -> str:
    return "/sse" if sys.argv[1] == "sse" else "/mcp"


@server.custom_route("/moved", methods=["GET", "POST", "DELETE"])
async def moved(request):
    return RedirectResponse(own_path(), status_code=307)


@server.custom_route("/away", methods=["GET", "POST", "DELETE"])
async def away(request):
    return RedirectResponse(f"http://localhost:{request.url.port}{own_path()}", status_code=307)


def main() -> None:
    transport = sys.argv[1]
    # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose proto
    # says TCP, and an accepted socket inherits it; with Nagle on, an event written after the
    # answer's headers waits for the client's delayed ACK (40 ms a call).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Connections wait in the backlog until uvicorn accepts them.
    sock.listen(128)
    if transport == "sse":
        app = server.sse_app()
    else:
        app = server.streamable_http_app()
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
