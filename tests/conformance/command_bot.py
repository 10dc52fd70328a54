"""A bot for the tests of ``simplex-conformance bot --command``, run as its own process.

It is a ``ResponderBot`` with one of the fixture's tools (``conformance_echo``), served on the
chat core whose WebSocket URL the suite gives in ``SIMPLEX_CONFORMANCE_CORE``, so the checks
that need the other fixture tools are UNTESTABLE. ``--ignore-sigterm`` makes it ignore SIGTERM
(the suite must then kill it); ``--print-core`` writes the URL it was given on stderr.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from simplex_protocols.bot import ResponderBot


def main() -> None:
    url = os.environ["SIMPLEX_CONFORMANCE_CORE"]
    if "--print-core" in sys.argv:
        print(f"core: {url}", file=sys.stderr, flush=True)
    if "--ignore-sigterm" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    tools: MCPServer[Any] = MCPServer("echo-only", subscriptions=False)

    @tools.tool(structured_output=False)
    def conformance_echo(text: str) -> str:
        """Returns the text it is given."""
        return text

    async def serve() -> None:
        with tempfile.TemporaryDirectory() as data_dir:
            bot = ResponderBot(display_name="echo-only", mcp=tools, data_dir=data_dir)
            await bot.serve(url)

    anyio.run(serve)


if __name__ == "__main__":
    main()
