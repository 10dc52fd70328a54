"""Expose an existing MCP server, started as a stdio command, over SimpleX, without changing it.

The installed command ``simplex-bridge`` does this (``docs/simplex-bridge.md``); this example
shows the library under it. :func:`simplex_protocols.cli.bridge.open_bridge` starts the
server, learns what it offers, and gives a ``ResponderBot`` that forwards every call to it
(restarting the server if it exits); the bot is then run as any other::

    python examples/mcp_stdio_bridge.py --core ws://127.0.0.1:5225 \\
        -- npx -y @modelcontextprotocol/server-filesystem /srv/share

or in this process alone, calling itself once over each transport::

    python examples/mcp_stdio_bridge.py --core sim:notes --demo \\
        -- python tests/examples/stdio_server.py

Stop it with Ctrl-C (the stdio server is stopped with the bridge).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from simplex_protocols.bot import ResponderBot, configure_bot_logging
from simplex_protocols.cli import bridge
from simplex_protocols.cli.bridge import StdioServer
from simplex_protocols.core import add_core_argument


async def demo(bot: ResponderBot) -> None:
    """Ask the bridge what it serves over Service RPC from a simulated user, print, stop."""
    from simplex_protocols.bindings.mcp import build_request
    from simplex_protocols.core import ChatCore
    from simplex_protocols.sim import default_network
    from simplex_protocols.transports import ServiceRPCRequester

    network = default_network()
    user = network.add_user("demo-caller")
    try:
        async with ChatCore(network.backend("demo-caller")) as core:
            requester = ServiceRPCRequester(core, user_id=user.user_id)
            for n, method in enumerate(["server/discover", "tools/list"], start=1):
                answer = await requester.request(
                    bot.address, "mcp", build_request(method, request_id=n)
                )
                print(f"{method}: {json.dumps(answer, ensure_ascii=False)}", flush=True)
    finally:
        await bot.shutdown()


@asynccontextmanager
async def open_bridge(command: Sequence[str], **bot_options: Any) -> AsyncIterator[ResponderBot]:
    """Start the stdio MCP server ``command``; the bot that serves it, for the block."""
    async with bridge.open_bridge(StdioServer(command), **bot_options) as opened:
        yield opened.bot


async def amain(args: argparse.Namespace) -> None:
    async with open_bridge(args.command, data_dir=args.data_dir) as bot:
        await bot.run_async(args.core, on_ready=demo if args.demo else None)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    add_core_argument(p)
    p.add_argument("--data-dir", type=Path, default=None, help="the bot's data folder")
    p.add_argument("--demo", action="store_true", help="with --core sim:NAME: ask, print, stop")
    p.add_argument("command", nargs="+", help="the stdio MCP server's command, after --")
    return p.parse_args(argv)


def main() -> None:
    args = parse_args()
    configure_bot_logging()
    try:
        anyio.run(amain, args)
    except OSError as exc:
        sys.exit(f"the MCP server could not be started: {exc}")


if __name__ == "__main__":
    main()
