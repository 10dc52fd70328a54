"""``simplex-mcp serve NAME --stdio``: the MCP server on standard input and output.

Hosts that start MCP servers as child processes (Claude Desktop, Cursor, Codex) speak
newline-delimited JSON-RPC on the child's stdin and stdout. The server is the one
:func:`simplex_protocols.mcp_server.http.build_mcp_server` builds for HTTP, run by the SDK's
stdio transport; the host closing stdin is a stop, as SIGTERM is.

Standard output carries MCP only: the caller logs to standard error (``Log(out=sys.stderr)``),
and while the transport runs the SDK points file descriptor 1 at standard error, so that a
stray write of any library misses the wire.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

__all__ = ["STDIO_URL", "StdioServer"]

#: What the server tells its caller instead of an HTTP URL.
STDIO_URL = "stdio"


class StdioServer:
    """One MCP session on the process's stdin and stdout (or on the given text streams).

    ``closed`` is set when the session ends: the host closed stdin.
    """

    def __init__(
        self,
        mcp: Server[Any],
        *,
        stdin: anyio.AsyncFile[str] | None = None,
        stdout: anyio.AsyncFile[str] | None = None,
    ) -> None:
        self._mcp = mcp
        self._stdin = stdin
        self._stdout = stdout
        self.closed = anyio.Event()
        self.url = STDIO_URL
        self.port = 0

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[StdioServer]:
        """Serve while the block runs; at its end, end the session and open calls."""
        async with anyio.create_task_group() as tg:
            await tg.start(self._serve)
            try:
                yield self
            finally:
                # The transport's reader waits in a thread for a line of stdin that may never
                # come; cancelling its task group abandons that wait.
                tg.cancel_scope.cancel()

    async def _serve(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        try:
            async with stdio_server(self._stdin, self._stdout) as (read, write):
                task_status.started()
                await self._mcp.run(read, write, self._mcp.create_initialization_options())
                # Set inside the transport: leaving it waits for its writer, and the stop
                # this starts is what ends the session's last calls.
                self.closed.set()
        finally:
            self.closed.set()
