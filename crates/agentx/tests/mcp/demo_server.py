"""A stdio MCP server built with the official Python MCP SDK (MCPServer, formerly FastMCP),
for agentx's PROFILE §18 tests: plain, structured and failing tools, and the environment it
was given."""

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("demo")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers"""
    return a + b


@server.tool()
def env_names() -> str:
    """The names of the variables this server was started with"""
    return " ".join(sorted(os.environ))


@server.tool()
def echo_env(name: str) -> str:
    """The value of one variable"""
    return os.environ.get(name, "")


@server.tool()
def boom() -> str:
    """Always fails"""
    raise ValueError("boom failed")


@server.tool()
def cwd() -> str:
    """The server's working directory"""
    return os.getcwd()


if __name__ == "__main__":
    server.run()
