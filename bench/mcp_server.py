"""The MCP server's tool calls: round trips against a bare SDK server, and reads at scale
against the core's own reads, each measured in the same run.

Run: ``python bench/mcp_server.py [--unread N,...] [--chats N,...] [--drain-max N] [--runs K]``.
Over HTTP on 127.0.0.1 with the ``mcp`` SDK's client, on the simulated network:

1. ``list`` and ``receive`` round trips through ``simplex-mcp``'s server (bearer token, path,
   Origin/Host checks, the agent's processing over the simulated network), each as a ratio to
   a bare SDK low-level server whose tool of the same name returns the same result at once,
   served by the same SDK handler and uvicorn;
2. ``receive`` with limit 100 at 1,000, 10,000 and 100,000 unread messages (stored at once
   with :func:`~simplex_protocols.sim.testing.seed_received`), draining them up to
   ``--drain-max``, and ``list`` over 100, 1,000 and 10,000 chats. Each figure is a ratio to
   the core's own reads of the same call: the commands the tool sends (the same count is
   printed), sent straight to the simulated core through ``ChatAPI``. Three ways of calling
   the tool are shown: over HTTP with the SDK client as a caller has it, the same with the
   client's check of the result against the tool's output schema turned off (that check is
   the caller's ``jsonschema`` work, and it grows with the result), and in process (the
   tool's handler alone). ``receive`` costs O(limit) and ``list`` O(page) per page when the
   ratios stay flat as the sizes grow, and the core's column with them.

Round trips are the best mean of several runs, reads the best of several calls. Printed,
never asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This script is named like the package it measures: keep its folder off the import path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))
sys.path.insert(0, str(_HERE.parent / "tests" / "mcp_server"))

import argparse  # noqa: E402
import functools  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence  # noqa: E402
from contextlib import asynccontextmanager, contextmanager  # noqa: E402
from typing import Any, Final  # noqa: E402

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.server.lowlevel.server import Server  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from mcp_sim import World, structured, world  # noqa: E402
from test_mcp_messages import connected_vendor  # noqa: E402

from simplex_protocols.core import ChatAPI, ChatRef, ChatView, parse_chat_ref  # noqa: E402
from simplex_protocols.core import commands as cmds  # noqa: E402
from simplex_protocols.mcp_server.http import HttpServer, bind_port  # noqa: E402
from simplex_protocols.mcp_server.state import NoProgress  # noqa: E402
from simplex_protocols.sim._records import MARKDOWN  # noqa: E402
from simplex_protocols.sim.testing import seed_received  # noqa: E402

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


#: Unread messages, chats, and the largest drain of the scaling runs (their defaults).
UNREAD_SIZES: Final = (1_000, 10_000, 100_000)
CHAT_SIZES: Final = (100, 1_000, 10_000)
DRAIN_MAX: Final = 10_000
#: ``receive``'s limit, and the calls timed at each size.
LIMIT: Final = 100
RECEIVES: Final = 5
#: Runs of each ``list`` measure at each size.
LISTS: Final = 3
#: ``/_get chats`` and ``/_get chat ... after=`` pages.
PAGE: Final = 100
#: Texts the simulated core's Markdown parser keeps parsed (``Markdown``'s ``cache_size``).
_MARKDOWN_CACHE: Final = 4_096


def settle_heap() -> None:
    """Collect, then leave every object made so far out of later collections.

    The simulated core's store lives in this process: without this, each full collection
    would walk every stored item, a cost that grows with the store (a real core's database
    is not in the caller's heap) and falls on whichever side happens to allocate then.
    """
    gc.collect()
    gc.freeze()


def forget_texts() -> None:
    """Push the texts stored so far out of the simulated core's Markdown cache.

    The simulated core parses a text when it stores it (for ``hasLink``) and keeps the last
    4,096 parses: with 1,000 unread messages every page would be read from that cache, with
    100,000 none would, and the core's reads would look slower as the chat grows. After this,
    every size reads texts that are not in it, on both sides alike.
    """
    for n in range(_MARKDOWN_CACHE):
        MARKDOWN.parse(f"filler {n} of the cache")


def shoe_texts(start: int, count: int) -> list[str]:
    return [
        f"item {n}: trail shoes in stock, size {36 + n % 12}" for n in range(start, start + count)
    ]


async def core_receive(api: ChatAPI, ref: ChatRef, limit: int) -> tuple[int, int]:
    """What ``receive`` reads and marks, sent to the core directly: the chat with its first
    unread item, the page around it, ``after=`` pages until ``limit`` + 1 new messages are
    in hand, and ``/_read chat items`` for ``limit`` of them. Returns (the commands sent, how
    many unread items are left)."""
    first = ChatView(await api.get_chat(ref, initial=1))
    pivot = first.min_unread_item_id
    if pivot is None:
        return 1, 0
    items = list(ChatView(await api.get_chat(ref, around=pivot, count=0)).items())
    sent = 2
    while sum(1 for i in items if i.unread) < limit + 1:
        last = items[-1].item_id
        assert last is not None
        page = list(ChatView(await api.get_chat(ref, after=last, count=PAGE)).items())
        items.extend(page)
        sent += 1
        if len(page) < PAGE:
            break
    read = [i.item_id for i in items if i.unread and i.item_id is not None][:limit]
    await api.read_chat_items(ref, read)
    return sent + 1, first.unread_count - len(read)


async def core_pages(api: ChatAPI, user_id: int) -> int:
    """The ``/_get chats`` pages that ``list`` reads, sent to the core directly; returns how
    many commands were sent."""
    sent = 0
    before: str | None = None
    while True:
        page = await api.get_chats(user_id, pending_connections=False, before=before, count=PAGE)
        sent += 1
        if len(page) < PAGE:
            return sent
        before = ChatView(page[-1]).info.chat_ts
        if before is None:
            return sent


async def _no_check(name: str, result: types.CallToolResult) -> None:
    return None


@contextmanager
def unchecked(client: Client) -> Iterator[None]:
    """The SDK client without its check of each result against the tool's output schema
    (``jsonschema`` over the whole result, a cost of the caller that grows with the result)."""
    session = client.session
    session.validate_tool_result = _no_check  # type: ignore[method-assign]
    try:
        yield
    finally:
        del session.validate_tool_result


class Timings:
    """The best time of each way of making a read, over interleaved runs."""

    def __init__(self) -> None:
        self.best: dict[str, float] = {}

    async def time(self, key: str, fn: Callable[[], Awaitable[Any]]) -> Any:
        start = time.perf_counter()
        result = await fn()
        elapsed = time.perf_counter() - start
        self.best[key] = min(self.best.get(key, math.inf), elapsed)
        return result

    def row(self, label: str, baseline: str, keys: tuple[str, ...], note: str = "") -> str:
        base = self.best[baseline]
        cells = "".join(
            f"{self.best[k] * 1000:>9.1f} ms {self.best[k] / base:>5.2f}x" for k in keys
        )
        return f"{label:<10}{cells}{base * 1000:>10.1f} ms  {note}"


HEADER: Final = (
    f"{'':<10}{'HTTP (SDK client)':>18}{'HTTP (no check)':>18}{'in process':>18}{'core':>13}"
)
WAYS: Final = ("http", "unchecked", "process")


async def receive_at_scale(
    w: World, chat: str, sizes: Sequence[int], drain_max: int, runs: int = RECEIVES
) -> None:
    """``receive`` with limit 100 at each number of unread messages, and draining them."""
    agent = w.server.info.agent
    api: ChatAPI = agent.api
    ref = parse_chat_ref(chat)
    assert ref is not None
    agent_user = w.network.user("my-agent")
    arguments = {"chat": chat, "limit": LIMIT}
    seeded = 0

    def seed(count: int) -> None:
        nonlocal seeded
        seed_received(agent_user, chat, shoe_texts(seeded, count))
        seeded += count
        forget_texts()
        settle_heap()

    async def tool_http() -> dict[str, Any]:
        return structured(await w.server.call("receive", arguments))

    async def tool_unchecked() -> dict[str, Any]:
        with unchecked(w.server.mcp):
            return await tool_http()

    print()
    print(f"receive, limit {LIMIT}: the best of {runs} calls, each as a ratio to the core's")
    print("reads of the same call (the commands receive sends, straight through ChatAPI)")
    print(f"{'unread':<10}" + HEADER[10:] + "  commands (tool/core)")
    first_core: float | None = None
    for size in sizes:
        await api.read_chat(ref)  # the last size's messages, read
        seed(size)
        timings = Timings()
        sent: dict[str, int] = {}
        for _ in range(runs):
            for key, fn in (
                ("http", tool_http),
                ("unchecked", tool_unchecked),
                ("process", lambda: agent.receive(arguments, NoProgress())),
                ("core", lambda: core_receive(api, ref, LIMIT)),
            ):
                before = len(w.server.commands)
                result = await timings.time(key, fn)
                sent[key] = result[0] if key == "core" else len(w.server.commands) - before
                seed(LIMIT)  # back to ``size`` unread
        core = timings.best["core"]
        first_core = first_core or core
        print(
            timings.row(f"{size:,}", "core", WAYS, f"{sent['http']}/{sent['core']}")
            + f"  core vs first size {core / first_core:.2f}x"
        )
    print()
    print("receive until drained (limit 100), each way on a batch of its own, as a ratio to")
    print("the core's reads of the same calls until none is unread")
    print(f"{'messages':<10}" + HEADER[10:] + "  calls")
    for size in sizes:
        if size > drain_max:
            continue
        timings = Timings()
        calls = 0
        ways: tuple[tuple[str, Callable[[], Awaitable[dict[str, Any]]]], ...] = (
            ("http", tool_http),
            ("unchecked", tool_unchecked),
            ("process", lambda: agent.receive(arguments, NoProgress())),
        )
        for key, receive in ways:
            await api.read_chat(ref)
            seed(size)
            calls = await timings.time(key, functools.partial(drain, receive))
        await api.read_chat(ref)
        seed(size)
        await timings.time("core", lambda: drain_core(api, ref))
        print(timings.row(f"{size:,}", "core", WAYS, f"{calls}"))


async def drain(receive: Callable[[], Awaitable[dict[str, Any]]]) -> int:
    """Call ``receive`` until it says no more is unread; returns the calls made."""
    calls = 1
    while (await receive())["more"]:
        calls += 1
    return calls


async def drain_core(api: ChatAPI, ref: ChatRef) -> None:
    """:func:`core_receive` until no unread item is left."""
    while (await core_receive(api, ref, LIMIT))[1] > 0:
        pass


async def list_at_scale(w: World, sizes: Sequence[int], runs: int = LISTS) -> None:
    """``list`` at each number of chats (groups the agent made, a millisecond apart)."""
    agent = w.server.info.agent
    api: ChatAPI = agent.api
    agent_user = w.network.user("my-agent")
    made = 0

    async def tool_http() -> dict[str, Any]:
        return structured(await w.server.call("list"))

    async def tool_unchecked() -> dict[str, Any]:
        with unchecked(w.server.mcp):
            return await tool_http()

    print()
    print(
        f"list: the best of {runs} calls, each as a ratio to the core's own pages of the chat list"
    )
    print(f"{'chats':<10}" + HEADER[10:] + "  commands (tool/core)")
    for size in sizes:
        while made < size:
            profile = {"displayName": f"Trail group {made}", "fullName": ""}
            agent_user.command(cmds.new_group(agent_user.user_id, profile))
            made += 1
            await w.clock.advance(0.001)  # chats differ in time, as in a real core (ms)
        settle_heap()
        timings = Timings()
        sent: dict[str, int] = {}
        listed = 0
        for _ in range(runs):
            for key, fn in (
                ("http", tool_http),
                ("unchecked", tool_unchecked),
                ("process", lambda: agent.list_chats({}, NoProgress())),
                ("core", lambda: core_pages(api, agent.user_id)),
            ):
                before = len(w.server.commands)
                result = await timings.time(key, fn)
                if key == "core":
                    sent[key] = result
                else:
                    sent[key] = len(w.server.commands) - before
                    listed = len(result["chats"])
        print(timings.row(f"{listed:,}", "core", WAYS, f"{sent['http']}/{sent['core']}"))


def sizes_of(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(",") if part)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--unread", type=sizes_of, default=UNREAD_SIZES, metavar="N,N,...")
    parser.add_argument("--chats", type=sizes_of, default=CHAT_SIZES, metavar="N,N,...")
    parser.add_argument("--drain-max", type=int, default=DRAIN_MAX, metavar="N")
    parser.add_argument(
        "--runs", type=int, default=1, metavar="K", help="K times the calls timed at each size"
    )
    return parser.parse_args()


async def main(options: argparse.Namespace) -> None:
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

            # 2. reads at scale, against the core's own reads
            await receive_at_scale(
                w, chat, options.unread, options.drain_max, RECEIVES * options.runs
            )
            await list_at_scale(w, options.chats, LISTS * options.runs)


if __name__ == "__main__":
    anyio.run(main, parse_args())
