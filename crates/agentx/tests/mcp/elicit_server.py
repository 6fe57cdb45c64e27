"""A stdio MCP server built with the official Python MCP SDK (MCPServer, formerly FastMCP) whose
tools elicit (agentx's PROFILE §18 "Requests from a server"): `ask` sends a form-mode
`elicitation/create` and returns what came back; `ask_env` elicits with one of its variables in the
message; `visit` sends a URL-mode one, then `notifications/elicitation/complete`."""

import os

from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("elicit")


class Name(BaseModel):
    name: str


@server.tool()
async def ask(ctx: Context) -> str:
    """Asks the user for a name"""
    r = await ctx.elicit("What is your name?", Name)
    if r.action == "accept":
        return "accept " + r.data.name
    return r.action


@server.tool()
async def ask_env(ctx: Context, name: str) -> str:
    """Elicits with the value of one of its variables in the message"""
    r = await ctx.elicit("The value is " + os.environ.get(name, ""), Name)
    return r.action


@server.tool()
async def visit(ctx: Context) -> str:
    """Sends the user to a page"""
    r = await ctx.elicit_url("Sign in, please", "https://example.com/sign-in", "e-1")
    await ctx.request_context.session.send_elicit_complete("e-1")
    return r.action


if __name__ == "__main__":
    server.run()
