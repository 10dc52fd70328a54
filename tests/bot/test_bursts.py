"""Bursts of Service RPC calls: more than a responder's default event buffer, and the heap
frozen for them (gc_freeze)."""

from __future__ import annotations

import gc
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


def _squares() -> MCPServer[Any]:
    tools: MCPServer[Any] = MCPServer("squares", subscriptions=False)

    @tools.tool(structured_output=False)
    async def square(n: int) -> str:
        return str(n * n)

    return tools


@pytest.mark.parametrize("freeze", [True, False])
async def test_gc_freeze_freezes_the_heap_while_the_bot_serves(
    tmp_path: Path, freeze: bool
) -> None:
    network = SimNetwork(seed=17)
    alice = network.add_user("alice")
    bot = ResponderBot(display_name="Squares", mcp=_squares(), data_dir=tmp_path, gc_freeze=freeze)
    assert gc.get_freeze_count() == 0
    with anyio.fail_after(30):
        async with (
            ChatCore(network.backend("alice")) as core,
            bot.serving(network.backend("squares")),
        ):
            frozen = gc.get_freeze_count()
            requester = ServiceRPCRequester(core, user_id=alice.user_id)
            answers = []
            async with anyio.create_task_group() as tg:
                for n in range(20):
                    tg.start_soon(_answer, requester, bot.address, n, answers)
    assert sorted(answers) == sorted(str(n * n) for n in range(20))
    # Frozen only when asked, and only while the bot served: the process is left as it was.
    assert (frozen > 0) is freeze
    assert gc.get_freeze_count() == 0


async def _answer(requester: ServiceRPCRequester, address: str, n: int, answers: list[str]) -> None:
    response: Any = await requester.request(address, "mcp", _call(n))
    answers.append(response["result"]["content"][0]["text"])


@pytest.mark.slow
async def test_every_call_of_a_burst_within_max_concurrent_calls_is_answered(
    tmp_path: Path,
) -> None:
    network = SimNetwork(seed=16)
    alice = network.add_user("alice")
    bot = ResponderBot(
        display_name="Squares", mcp=_squares(), data_dir=tmp_path, max_concurrent_calls=BURST
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
