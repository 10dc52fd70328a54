"""An MCP tool bot: a shop's stock and prices, served over SimpleX to other agents.

The tools are an ordinary MCP server written with the ``mcp`` SDK; ResponderBot makes it a
SimpleX bot that answers ``/_call mcp ...`` in conversations and Service RPC requests at its
contact address.

Run it against a SimpleX chat core (the CLI's WebSocket API)::

    simplex-chat -p 5225 &
    python examples/mcp_tool_bot.py --core ws://127.0.0.1:5225

against the simulated network served over WebSocket::

    simplex-sim serve --port 5226 &
    python examples/mcp_tool_bot.py --core ws://127.0.0.1:5226/acme
    simplex-call --core ws://127.0.0.1:5226/alice ADDRESS tools/call name=availability ...

or in this process alone, calling itself once over each transport::

    python examples/mcp_tool_bot.py --core sim:acme --demo

The bot prints its address when it is ready; stop it with Ctrl-C.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _demo

from simplex_protocols.bindings.mcp import is_final, needs_conversation
from simplex_protocols.bot import ResponderBot

STOCK = {"anvil": 12, "rocket": 3, "magnet": 40}
PRICES = {"anvil": 120.0, "rocket": 999.0, "magnet": 4.5}


def build_tools() -> MCPServer[Any]:
    """The shop's MCP server (nothing SimpleX-specific in it)."""
    tools: MCPServer[Any] = MCPServer(
        "acme-shop", instructions="Stock and prices of Acme products.", subscriptions=False
    )

    @tools.tool(structured_output=False)
    def availability(item: str) -> str:
        """How many of an item are in stock."""
        count = STOCK.get(item.lower().rstrip("s"))
        return f"{item} is not sold here." if count is None else f"{count} {item}s are in stock."

    @tools.tool(structured_output=False)
    def quote(item: str, quantity: int = 1) -> str:
        """The price of a quantity of an item, in euros."""
        price = PRICES.get(item.lower().rstrip("s"))
        if price is None:
            return f"{item} is not sold here."
        return f"{quantity} x {item}: {price * quantity:.2f} EUR"

    @tools.tool(structured_output=False)
    @needs_conversation
    async def track(order: str, ctx: Context) -> str:
        """Follow an order to the door (reports progress, so it needs a conversation)."""
        for step, what in enumerate(("packed", "shipped", "out for delivery"), start=1):
            await ctx.report_progress(step, 3, what)
            await anyio.lowlevel.checkpoint()
        return f"Order {order} is out for delivery."

    return tools


def parse_args(argv: Sequence[str] | None = None) -> Any:
    p = _demo.parser(__doc__.split("\n\n")[0] if __doc__ else "", name="Acme")
    args = p.parse_args(argv)
    _demo.check_demo(p, args)
    return args


def build_bot(args: Any) -> ResponderBot:
    return ResponderBot(
        display_name=args.display_name,
        mcp=build_tools(),
        description="Stock and prices of Acme products, for agents (MCP).",
        welcome="I am a bot for software agents: call my MCP tools with /_call mcp.",
        data_dir=args.data_dir,
        log_contents=args.log_contents,
    )


def _request(rid: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": {**meta, "progressToken": rid}},
    }


async def demo(bot: ResponderBot) -> None:
    await _demo.demo(
        bot,
        protocol="mcp",
        rpc_request=_request(1, "availability", {"item": "anvil"}),
        chat_request=_request(2, "track", {"order": "A-17"}),
        final=is_final,
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    _demo.run_example(build_bot(args), args, demo)


if __name__ == "__main__":
    main()
