"""MCP lists that fit: page sizes per transport, and listing 200 tools as a ratio to one small list.

Run: ``python bench/mcp_pages.py`` (``--runs N`` repetitions of each timed measure; the median
is shown). Everything runs in this process on the simulated network (real clock).

Figures:

- **one page**: the first ``tools/list`` page of a server of 200 tools (about 300 bytes each,
  about 60 kB listed whole) as the binding cuts it for each transport: how many tools, its
  size as that transport counts it (the response envelope's JSON over Service RPC, the reply
  quoting its command in a conversation) against the limit (10,000 and 15,602 bytes);
- **200 tools**: the time to read the whole list from a ``ResponderBot``, following
  ``nextCursor``, over Service RPC and in a conversation, each as a ratio to the baseline:
  one ``tools/list`` of a small server (3 tools) through the same bot kind over the same
  transport. The binding keeps the server's list between the pages of one listing, so the
  server builds it once; the ratio's floor is the number of pages (one round trip each).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

# Run as a script, bench/ is on the path: the connection step is the one bench/rpc.py makes.
from rpc import connect

from simplex_protocols import _wire
from simplex_protocols.bindings import Caller, TransportKind
from simplex_protocols.bindings.mcp import MCPBinding, build_request, is_final
from simplex_protocols.bot import ResponderBot
from simplex_protocols.chat_call.advanced import message_size
from simplex_protocols.core import ChatCore
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES, MAX_SERVICE_JSON_BYTES
from simplex_protocols.rpc import check_service_size, success_response
from simplex_protocols.sim import SimNetwork
from simplex_protocols.transports import ChatCaller, ServiceRPCRequester

REVISION = "2026-07-28"


def tools_server(count: int) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("bench")
    for i in range(count):

        def echo(text: str) -> str:
            return text

        server.add_tool(echo, name=f"tool_{i:03d}", description=f"tool {i} " + "d" * 250)
    return server


def list_request(rid: int, cursor: str | None = None) -> dict[str, Any]:
    params = {"cursor": cursor} if cursor is not None else None
    return build_request("tools/list", params, request_id=rid, revision=REVISION)


async def first_pages() -> list[str]:
    """The first page of 200 tools as cut for each transport."""
    lines = []
    async with MCPBinding(tools_server(200)) as binding:
        rpc = await binding.handle_rpc(
            list_request(1), Caller("rpc-anonymous:b", TransportKind.RPC), budget_s=30
        )
        assert isinstance(rpc, dict)
        size = check_service_size(success_response(rpc), kind="response").json_bytes
        lines.append(
            f"one page over Service RPC   {len(rpc['result']['tools']):4} tools  "
            f"{size:6} bytes of {MAX_SERVICE_JSON_BYTES} ({size / MAX_SERVICE_JSON_BYTES:.1%})"
        )
        replies: list[dict[str, Any]] = []

        async def emit(message: dict[str, Any]) -> None:
            replies.append(message)

        request = list_request(1)
        await binding.handle_chat(request, Caller("chat:@1", TransportKind.CHAT), emit)
        [chat] = replies
        command = "/_call mcp " + _wire.dumps(request)
        size = message_size(_wire.dumps(chat), quoted_text=command)
        lines.append(
            f"one page in a conversation  {len(chat['result']['tools']):4} tools  "
            f"{size:6} bytes of {MAX_CHAT_MESSAGE_BYTES} ({size / MAX_CHAT_MESSAGE_BYTES:.1%})"
        )
    return lines


async def median_s(runs: int, once: Callable[[], Awaitable[int]]) -> tuple[float, int]:
    await once()  # warm up
    times = []
    pages = 0
    for _ in range(runs):
        start = time.perf_counter()
        pages = await once()
        times.append(time.perf_counter() - start)
    return statistics.median(times), pages


async def list_times(count: int, runs: int, data: Path) -> dict[str, tuple[float, int]]:
    """Seconds to read every page of a ``count``-tool server, per transport."""
    network = SimNetwork(seed=8)
    alice = network.add_user("alice")
    bot = ResponderBot(display_name="Bench", mcp=tools_server(count), data_dir=data / str(count))
    async with ChatCore(network.backend("alice")) as core, bot.serving(network.backend("bench")):
        requester = ServiceRPCRequester(core, user_id=alice.user_id)

        async def over_rpc() -> int:
            cursor, pages = None, 0
            while True:
                pages += 1
                answer = await requester.request(bot.address, "mcp", list_request(pages, cursor))
                cursor = answer["result"].get("nextCursor")
                if cursor is None:
                    return pages

        contact = await connect(core, alice.user_id, bot.address)
        caller = ChatCaller(core)

        async def over_chat() -> int:
            cursor, pages = None, 0
            while True:
                pages += 1
                request = list_request(pages, cursor)
                result = await caller.call(
                    contact, "mcp", request, final=lambda m, r=request: is_final(r, m)
                )
                assert result.completed and result.answer is not None
                final = result.answer.final
                assert final is not None
                cursor = final["result"].get("nextCursor")
                if cursor is None:
                    return pages

        return {"rpc": await median_s(runs, over_rpc), "chat": await median_s(runs, over_chat)}


async def main(runs: int) -> None:
    logging.disable(logging.INFO)
    for line in await first_pages():
        print(line)
    with tempfile.TemporaryDirectory() as tmp:
        small = await list_times(3, runs, Path(tmp))
        many = await list_times(200, runs, Path(tmp))
    for transport, name in (("rpc", "Service RPC"), ("chat", "a conversation")):
        base_s, _ = small[transport]
        took_s, pages = many[transport]
        print(
            f"200 tools over {name:15} {pages:3} pages  {took_s * 1e3:8.1f} ms  "
            f"{took_s / base_s:6.1f}x one tools/list of 3 tools ({base_s * 1e3:.1f} ms)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    anyio.run(main, parser.parse_args().runs)
