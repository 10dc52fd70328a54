"""A burst of Service RPC calls larger than a responder's default event buffer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer

from simplex_protocols.bot import ResponderBot
from simplex_protocols.core import ChatCore
from simplex_protocols.sim import SimNetwork
from simplex_protocols.transports import ServiceRPCRequester

pytestmark = pytest.mark.anyio

#: More calls at once than the 1,000 events a responder's subscription holds by default.
BURST = 1200


def _call(n: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {
            "name": "square",
            "arguments": {"n": n},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }


@pytest.mark.slow
async def test_every_call_of_a_burst_within_max_concurrent_calls_is_answered(
    tmp_path: Path,
) -> None:
    tools: MCPServer[Any] = MCPServer("squares", subscriptions=False)

    @tools.tool(structured_output=False)
    async def square(n: int) -> str:
        return str(n * n)

    network = SimNetwork(seed=16)
    alice = network.add_user("alice")
    bot = ResponderBot(
        display_name="Squares", mcp=tools, data_dir=tmp_path, max_concurrent_calls=BURST
    )
    answers: dict[int, str] = {}
    with anyio.fail_after(120):
        async with (
            ChatCore(network.backend("alice"), event_buffer=2 * BURST) as core,
            bot.serving(network.backend("squares")),
        ):
            requester = ServiceRPCRequester(core, user_id=alice.user_id)

            async def one(n: int) -> None:
                response: Any = await requester.request(bot.address, "mcp", _call(n))
                answers[n] = response["result"]["content"][0]["text"]

            # Every request is sent before the bot's responder reads the first one.
            async with anyio.create_task_group() as tg:
                for n in range(BURST):
                    tg.start_soon(one, n)
    assert answers == {n: str(n * n) for n in range(BURST)}
