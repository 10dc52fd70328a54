"""The MCP server's tool calls, as ratios to a bare SDK server measured in the same run.

Run: ``python bench/mcp_server.py``. Over HTTP on 127.0.0.1 with the ``mcp`` SDK's client:

1. ``list`` and ``receive`` round trips through ``simplex-mcp``'s server (bearer token, path,
   Origin/Host checks, the agent's processing over the simulated network), each as a ratio to
   a bare SDK low-level server whose tool of the same name returns the same result at once,
   served by the same SDK handler and uvicorn;
2. ``receive`` over 10,000 unread messages (one call with limit 100, then draining them all)
   and ``list`` over 1,000 chats: time and peak memory (``tracemalloc``, the whole process:
   client, server and the simulated core).

Each round-trip figure is the best mean of several runs. Printed, never asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This script is named like the package it measures: keep its folder off the import path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))
sys.path.insert(0, str(_HERE.parent / "tests" / "mcp_server"))

import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import AsyncIterator, Awaitable, Callable  # noqa: E402
from contextlib import asynccontextmanager  # noqa: E402
from typing import Any  # noqa: E402

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.server.lowlevel.server import Server  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from mcp_sim import World, structured, world  # noqa: E402

from simplex_protocols.core import ChatView, parse_chat_ref  # noqa: E402
from simplex_protocols.core import commands as cmds  # noqa: E402
from simplex_protocols.mcp_server.http import HttpServer, bind_port  # noqa: E402

ROUND_TRIPS = 40
RUNS = 7


async def best_of(
    fn: Callable[[], Awaitable[Any]], repeat: int = ROUND_TRIPS, runs: int = RUNS
) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(repeat):
            await fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


def bare_server(results: dict[str, dict[str, Any]]) -> Server[Any]:
    """An SDK server with the same tool names, answering each with a fixed result."""

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=name, description=name, input_schema={"type": "object"})
                for name in results
            ]
        )

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = results[params.name]
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result))],
            structured_content=result,
        )

    return Server("bare", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


@asynccontextmanager
async def bare_client(results: dict[str, dict[str, Any]]) -> AsyncIterator[Client]:
    http = HttpServer(bare_server(results), bind_port(0), "t" * 43)
    async with http.running():
        hc = create_mcp_http_client(headers={"Authorization": "Bearer " + "t" * 43})
        async with (
            hc,
            Client(streamable_http_client(http.url, http_client=hc), mode="2026-07-28") as client,
        ):
            yield client


async def connected_vendor(w: World) -> str:
    async with anyio.create_task_group() as tg:
        result: dict[str, Any] = {}

        async def connect() -> None:
            result.update(
                structured(await w.server.call("connect", {"target": w.vendor_link, "idle": 1}))
            )

        tg.start_soon(connect)
        await w.owner.wait_message(lambda t: "/'approve 1'" in t)
        await w.owner.say("/approve 1")
        await w.server.seen.until(
            lambda: any(e["type"] == "userJoinedGroup" for e in w.server.seen.events)
        )
        await w.clock.advance(1)
    return str(result["chat"])


async def core_pages(w: World) -> int:
    """The ``/_get chats`` pages that ``list`` reads, sent to the core directly."""
    agent = w.server.info.agent
    count = 0
    before: str | None = None
    while True:
        page = await agent.api.get_chats(
            agent.user_id, pending_connections=False, before=before, count=100
        )
        count += len(page)
        if len(page) < 100:
            return count
        before = ChatView(page[-1]).info.chat_ts
        if before is None:
            return count


def peak(label: str, seconds: float) -> str:
    _current, top = tracemalloc.get_traced_memory()
    return f"{label:<44}{seconds * 1000:>10.1f} ms   peak {top / 1e6:>7.1f} MB"


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with world(Path(tmp)) as w:
            await w.setup_owner()
            chat = await connected_vendor(w)

            # 1. round trips, against a bare SDK server with the same results
            list_result = structured(await w.server.call("list"))
            receive_result = structured(await w.server.call("receive", {"chat": chat}))
            async with bare_client({"list": list_result, "receive": receive_result}) as bare:
                # Interleaved runs, so that load on the machine falls on both sides alike.
                best: dict[str, float] = {}
                for _ in range(RUNS):
                    for key, fn in (
                        ("ours list", lambda: w.server.call("list")),
                        ("bare list", lambda: bare.call_tool("list", {})),
                        ("ours receive", lambda: w.server.call("receive", {"chat": chat})),
                        ("bare receive", lambda: bare.call_tool("receive", {"chat": chat})),
                    ):
                        best[key] = min(best.get(key, float("inf")), await best_of(fn, runs=1))
            ours_list, base_list = best["ours list"], best["bare list"]
            ours_receive, base_receive = best["ours receive"], best["bare receive"]
            print("round trips over HTTP (2026-07-28, JSON-or-SSE per call), best mean of runs:")
            print(f"{'tool':<10}{'ours (ms)':>11}{'bare SDK (ms)':>15}  {'ratio':>6}")
            for name, ours, base in (
                ("list", ours_list, base_list),
                ("receive", ours_receive, base_receive),
            ):
                print(f"{name:<10}{ours * 1000:>11.2f}{base * 1000:>15.2f}  {ours / base:>6.2f}")

            # 2a. list over 1,000 chats
            agent_user = w.network.user("my-agent")
            for n in range(1_000):
                profile = {"displayName": f"Trail group {n}", "fullName": ""}
                agent_user.command(cmds.new_group(agent_user.user_id, profile))
                await w.clock.advance(0.001)  # chats differ in time, as in a real core (ms)
            print()
            print("large chats (time of the call, peak traced memory of the whole process):")
            tracemalloc.start()
            start = time.perf_counter()
            listing = structured(await w.server.call("list"))
            print(peak(f"list, {len(listing['chats'])} chats", time.perf_counter() - start))
            tracemalloc.stop()
            ours = await best_of(lambda: w.server.call("list"), repeat=3, runs=3)
            core = await best_of(lambda: core_pages(w), repeat=3, runs=3)
            print(f"{'list, 1,000+ chats: the tool over HTTP':<44}{ours * 1000:>10.1f} ms")
            print(
                f"{'  its /_get chats pages alone (the core)':<44}{core * 1000:>10.1f} ms   tool / core {ours / core:.2f}"
            )

            # 2b. receive over 10,000 unread messages
            vendor_chat = next(
                f"#{info['groupInfo']['groupId']}" for info, _ in w.vendor.new_items("group")
            )
            for n in range(10_000):
                await w.vendor.send_text(
                    vendor_chat, f"item {n}: trail shoes in stock, size {36 + n % 12}"
                )
            await w.server.seen.until(
                lambda: (
                    "item 9999: trail shoes in stock, size 39" in w.server.seen.received_texts(chat)
                )
            )
            agent = w.server.info.agent
            start = time.perf_counter()
            ref = parse_chat_ref(chat)
            pivot = ChatView(await agent.api.get_chat(ref, initial=1)).min_unread_item_id
            await agent.api.get_chat(ref, around=pivot, count=0)
            await agent.api.get_chat(ref, after=pivot, count=100)
            core_reads = time.perf_counter() - start
            tracemalloc.start()
            start = time.perf_counter()
            first = structured(await w.server.call("receive", {"chat": chat, "limit": 100}))
            elapsed = time.perf_counter() - start
            print(peak("receive, 10,000 unread, limit 100", elapsed))
            print(f"{'  its page reads alone (the core)':<44}{core_reads * 1000:>10.1f} ms")
            assert len(first["messages"]) == 100 and first["more"] == 9_900
            tracemalloc.reset_peak()
            start = time.perf_counter()
            drained = 100
            while True:
                page = structured(await w.server.call("receive", {"chat": chat, "limit": 100}))
                drained += len(page["messages"])
                if not page["more"]:
                    break
            print(peak(f"receive until drained ({drained} messages)", time.perf_counter() - start))
            tracemalloc.stop()


if __name__ == "__main__":
    anyio.run(main)
