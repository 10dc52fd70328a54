"""A small MCP server over stdio, written with the ``mcp`` SDK: what the bridge example exposes.

Run by the tests as ``python tests/examples/stdio_server.py``; it knows nothing of SimpleX.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer

server: MCPServer[Any] = MCPServer(
    "stdio-notes", instructions="Notes kept by a stdio server.", subscriptions=False
)


@server.tool(structured_output=False)
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper() + "!"


@server.tool(structured_output=False)
async def count(to: int, ctx: Context) -> str:
    """Count up to a number, reporting each step as progress."""
    for n in range(1, to + 1):
        await ctx.report_progress(n, to, f"counted {n}")
    return f"counted to {to}"


@server.resource("notes://today", mime_type="text/plain")
def today() -> str:
    """Today's note."""
    return "Buy more anvils."


@server.prompt()
def summarize(topic: str) -> str:
    """Ask for a summary of a topic."""
    return f"Summarize {topic} in one line."


if __name__ == "__main__":
    server.run("stdio")
