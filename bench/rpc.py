"""MCP ``tools/call`` through ResponderBot, as ratios to baselines measured in the same run.

Run: ``python bench/rpc.py`` (``--calls N`` round trips per measure and round, ``--rounds N``,
``--concurrent N`` for the load test). Everything runs in this process on the simulated
network (real clock).

Measures, each N sequential ``tools/call`` of one small tool (``availability``), in
``--rounds`` rounds that take turns (each set-up made anew each round), the best round of
each shown:

- **bot over Service RPC**: a second simulated user calls the bot with
  ``ServiceRPCRequester.request`` (one ``/_service_request`` per call);
- the same over Service RPC with the tool written as ``async def`` (the SDK runs a plain
  ``def`` tool in a worker thread, and awaits a coroutine on the event loop);
- **bot over /_call**: the same user calls it in a conversation with ``ChatCaller.call``
  (one command, one quoting reply); and the same with the ``async def`` tool;
- baseline **bare service request**: the simulator's own round trip, a ``/_service_request``
  answered by a minimal responder that sends a fixed ``/_service_response`` (no envelope
  checks, no binding, no SDK);
- baseline **bare chat reply**: a text message answered by a minimal responder with a quoting
  reply (no ``/_call`` parsing, no binding);
- baseline **SDK in process**: the same ``MCPServer`` called with the SDK's in-process
  ``Client`` (no SimpleX at all);
- **binding alone**: ``MCPBinding.handle_rpc`` and ``handle_chat`` called in process with the
  request the bot receives (the ``async def`` tool): the SDK's ``serve_one`` with the binding's
  own preparation, and nothing of the transports or the simulator.

For each: calls per second, p50 and p99 latency, and the ratios of the p50 to the baselines;
then where the ``async def`` tool's call goes: the bare round trip, the binding alone, and the
rest (both transports' envelope, size and deadline work, and what the simulator does more for
the bot's longer texts), with the floor the first two set for the ratio; then the CPU time of
the process per call (every thread: the SDK runs a plain tool function in a worker thread) and
its ratios, which a machine shared with other work disturbs less.
Then ``--concurrent`` (1,000) Service RPC calls to one bot, of a tool that waits until every
call has reached it: whether all complete and how long they took, against the same calls made
one after another in the same run (the load must cost no more than the calls themselves), by
a bot as it comes and by one with ``gc_freeze=True``; each the best of ``--rounds`` runs, the
four kinds taking turns. Then the same load once more under tracemalloc (the timed runs go
without it), for the memory held per pending call and its split between the caller's
requests, the simulated cores, the bot's own code and the MCP SDK inside the bot: with a real
core the first two live in other processes, so the bot's process holds the last two.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client
from mcp.server.mcpserver import MCPServer

from simplex_protocols.bindings.mcp import MCPBinding, is_final
from simplex_protocols.bot import ResponderBot
from simplex_protocols.core import ChatAPI, ChatCore, ContactRef
from simplex_protocols.sim import SimNetwork
from simplex_protocols.transports import Caller, ChatCaller, ServiceRPCRequester, TransportKind

REVISION = "2026-07-28"
WARMUP = 20

# The sequential measures, and the baselines each bot row is a ratio to.
SDK = "SDK in process"
BARE_RPC = "bare service request"
BARE_CHAT = "bare chat reply"
BOT_RPC = "bot over Service RPC"
BOT_RPC_ASYNC = "  async def tool, RPC"
BOT_CHAT = "bot over /_call"
BOT_CHAT_ASYNC = "  async def tool, chat"
# The binding alone, in process (no SimpleX): the SDK's serve_one and the binding's own work.
BINDING_RPC = "binding alone, RPC"
BINDING_CHAT = "binding alone, chat"
BOT_ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (BOT_RPC, (BARE_RPC, SDK)),
    (BOT_RPC_ASYNC, (BARE_RPC, SDK)),
    (BOT_CHAT, (BARE_CHAT, BARE_RPC, SDK)),
    (BOT_CHAT_ASYNC, (BARE_CHAT, BARE_RPC, SDK)),
)


def build_tools(gate: dict[str, Any] | None = None) -> MCPServer[Any]:
    tools: MCPServer[Any] = MCPServer("bench", subscriptions=False)

    @tools.tool(structured_output=False)
    def availability(item: str) -> str:
        return f"12 {item}s are in stock."

    # The same tool written as a coroutine: the SDK awaits it on the event loop, where it runs a
    # plain ``def`` tool in a worker thread (the bot passes the author's function through as it
    # is, so both rows are what a tool author gets).
    @tools.tool(structured_output=False)
    async def availability_async(item: str) -> str:
        return f"12 {item}s are in stock."

    @tools.tool(structured_output=False)
    async def held(n: int) -> str:
        assert gate is not None
        gate["arrived"] += 1
        if gate["arrived"] >= gate["expected"]:
            gate["all_arrived"].set()
        await gate["open"].wait()
        return f"released {n}"

    return tools


def tool_call(rid: int, name: str = "availability", **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments or {"item": "anvil"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": REVISION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }


class Figures:
    def __init__(self, name: str, latencies: list[float], elapsed: float, cpu: float) -> None:
        self.name = name
        self.latencies = sorted(latencies)
        self.elapsed = elapsed
        self.cpu = cpu

    @property
    def cpu_per_call(self) -> float:
        """CPU time of this process (every thread) per call: steadier than the latencies on
        a machine shared with other work."""
        return self.cpu / len(self.latencies)

    @property
    def per_second(self) -> float:
        return len(self.latencies) / self.elapsed

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies)

    @property
    def p99(self) -> float:
        index = min(len(self.latencies) - 1, round(0.99 * (len(self.latencies) - 1)))
        return self.latencies[index]


async def measure(name: str, calls: int, once: Callable[[int], Awaitable[None]]) -> Figures:
    latencies: list[float] = []
    start = time.perf_counter()
    cpu = time.process_time()
    for i in range(calls):
        t0 = time.perf_counter()
        await once(i)
        latencies.append(time.perf_counter() - t0)
    return Figures(name, latencies, time.perf_counter() - start, time.process_time() - cpu)


async def connect(core: ChatCore, user_id: int, address: str) -> ContactRef:
    with anyio.fail_after(30):
        async with core.events() as events:
            await ChatAPI(core).connect(user_id, address)
            async for event in events:
                if event.get("type") == "contactConnected":
                    return ContactRef(int(event["contact"]["contactId"]))
    raise RuntimeError("no contactConnected event")


async def bare_responder(core: ChatCore, user_id: int, *, task_status: Any) -> None:
    """Answers every service request with a fixed response, and every text with a reply."""
    response = {"response": {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}}
    api = ChatAPI(core)
    async with core.events(buffer=100_000) as events:
        task_status.started()
        async for event in events:
            kind = event.get("type")
            if kind == "serviceRequest":
                await api.send_service_response(user_id, event["requestId"], response)
            elif kind == "newChatItems":
                for aci in event["chatItems"]:
                    item = aci["chatItem"]
                    if item["content"]["type"] != "rcvMsgContent":
                        continue
                    chat = ContactRef(aci["chatInfo"]["contact"]["contactId"])
                    reply = [
                        {
                            "msgContent": {"type": "text", "text": "pong"},
                            "quotedItemId": item["meta"]["itemId"],
                        }
                    ]
                    await api.send_messages(chat, reply)


#: One call of a measure, given its number.
Once = Callable[[int], Awaitable[None]]


@asynccontextmanager
async def sdk_in_process() -> AsyncIterator[dict[str, Once]]:
    async with Client(build_tools(), cache=None) as client:

        async def once(_: int) -> None:
            await client.call_tool("availability", {"item": "anvil"})

        yield {SDK: once}


@asynccontextmanager
async def binding_alone() -> AsyncIterator[dict[str, Once]]:
    async with MCPBinding(build_tools()) as binding:
        rpc_caller = Caller(key="rpc-anonymous:bench", transport=TransportKind.RPC)
        chat_caller = Caller(key="chat:@3", transport=TransportKind.CHAT, contact_id=3)
        answers: list[dict[str, Any]] = []

        async def over_rpc(i: int) -> None:
            answer = await binding.handle_rpc(
                tool_call(i, "availability_async"), rpc_caller, budget_s=30
            )
            assert isinstance(answer, dict) and "result" in answer

        async def emit(message: dict[str, Any]) -> None:
            answers.append(message)

        async def over_chat(i: int) -> None:
            answers.clear()
            await binding.handle_chat(tool_call(i, "availability_async"), chat_caller, emit)
            assert len(answers) == 1 and "result" in answers[0]

        yield {BINDING_RPC: over_rpc, BINDING_CHAT: over_chat}


@asynccontextmanager
async def bare_round_trips() -> AsyncIterator[dict[str, Once]]:
    network = SimNetwork(seed=5)
    echo = network.add_user("echo", service_requests=True)
    address = echo.create_address(pq_ratchet=True)
    alice = network.add_user("alice")
    async with (
        ChatCore(network.backend("echo")) as echo_core,
        ChatCore(network.backend("alice")) as core,
        anyio.create_task_group() as tg,
    ):
        await tg.start(bare_responder, echo_core, echo.user_id)
        api = ChatAPI(core)
        request = {"protocol": "mcp", "request": tool_call(1)}

        async def service(_: int) -> None:
            await api.send_service_request(alice.user_id, address, request)

        contact = await connect(core, alice.user_id, address)

        async def message(i: int) -> None:
            async with core.events() as events:
                sent = await api.send_text(contact, f"ping {i}")
                sent_id = sent[0]["chatItem"]["meta"]["itemId"]
                async for event in events:
                    if event.get("type") != "newChatItems":
                        continue
                    for aci in event["chatItems"]:
                        quoted = aci["chatItem"].get("quotedItem") or {}
                        if quoted.get("itemId") == sent_id:
                            return

        yield {BARE_RPC: service, BARE_CHAT: message}
        tg.cancel_scope.cancel()


@asynccontextmanager
async def bot_round_trips(data: Path) -> AsyncIterator[dict[str, Once]]:
    network = SimNetwork(seed=6)
    alice = network.add_user("alice")
    bot = ResponderBot(display_name="Bench", mcp=build_tools(), data_dir=data / "bot")
    async with (
        ChatCore(network.backend("alice")) as core,
        bot.serving(network.backend("bench")),
    ):
        requester = ServiceRPCRequester(core, user_id=alice.user_id)

        def rpc_call(name: str) -> Once:
            async def once(i: int) -> None:
                await requester.request(bot.address, "mcp", tool_call(i, name))

            return once

        contact = await connect(core, alice.user_id, bot.address)
        caller = ChatCaller(core)

        def chat_call(name: str) -> Once:
            async def once(i: int) -> None:
                request = tool_call(i, name)
                result = await caller.call(
                    contact, "mcp", request, final=lambda m, r=request: is_final(r, m)
                )
                assert result.completed

            return once

        yield {
            BOT_RPC: rpc_call("availability"),
            BOT_RPC_ASYNC: rpc_call("availability_async"),
            BOT_CHAT: chat_call("availability"),
            BOT_CHAT_ASYNC: chat_call("availability_async"),
        }


async def measure_all(data: Path, calls: int, rounds: int) -> dict[str, tuple[Figures, Figures]]:
    """Every sequential measure, ``rounds`` times in turn: name -> (the round with the lowest
    p50, the round with the least CPU time per call).

    Each round opens each set-up in turn, on its own (a set-up left open beside another would
    make the other's garbage collections walk its objects too), warms it up and measures it;
    so a busy moment of the machine falls on one round, and the best round of each measure is
    the one least disturbed.
    """
    best: dict[str, tuple[Figures, Figures]] = {}
    for n in range(rounds):
        setups = (
            sdk_in_process(),
            binding_alone(),
            bare_round_trips(),
            bot_round_trips(data / f"r{n}"),
        )
        for setup in setups:
            async with setup as onces:
                for once in onces.values():
                    for i in range(WARMUP):
                        await once(-1 - i)
                for name, once in onces.items():
                    figures = await measure(name, calls, once)
                    kept = best.get(name, (figures, figures))
                    best[name] = (
                        figures if figures.p50 < kept[0].p50 else kept[0],
                        figures if figures.cpu_per_call < kept[1].cpu_per_call else kept[1],
                    )
    return best


def make_gate(expected: int) -> dict[str, Any]:
    """The state of the ``held`` tool: it holds every call until ``expected`` have reached it
    (``0``: it holds none)."""
    gate: dict[str, Any] = {
        "arrived": 0,
        "expected": expected,
        "all_arrived": anyio.Event(),
        "open": anyio.Event(),
    }
    if expected <= 0:
        gate["open"].set()
    return gate


async def load_run(
    count: int, data: Path, *, concurrent: bool, trace: bool = False, gc_freeze: bool = False
) -> dict[str, Any]:
    """``count`` calls of the ``held`` tool over Service RPC, all at once or one after another.

    At once, the tool holds every call until all have reached it (so all are pending at the
    same time), then lets them all go; one after another, it lets each go at once. With
    ``trace``, the memory held while all are pending is measured (tracemalloc, which slows
    everything down: the timed runs go without it).
    """
    gate = make_gate(count if concurrent else 0)
    network = SimNetwork(seed=7)
    alice = network.add_user("alice")
    bot = ResponderBot(
        display_name="Bench",
        mcp=build_tools(gate),
        data_dir=data / f"load-{'c' if concurrent else 's'}{'t' if trace else ''}",
        max_concurrent_calls=count,
        gc_freeze=gc_freeze,
    )
    answers: list[Any] = []
    figures: dict[str, Any] = {}
    async with (
        ChatCore(network.backend("alice"), event_buffer=10 * count) as core,
        bot.serving(network.backend("bench")),
    ):
        requester = ServiceRPCRequester(core, user_id=alice.user_id)
        await requester.request(bot.address, "mcp", tool_call(0))  # warm up

        async def one(n: int) -> None:
            answers.append(
                await requester.request(
                    bot.address, "mcp", tool_call(n, "held", n=n), timeout_s=120
                )
            )

        gc.collect()
        collector = CollectorTime()
        if trace:
            tracemalloc.start(_TRACE_FRAMES)
            before = tracemalloc.take_snapshot()
        start = time.perf_counter()
        cpu = time.process_time()
        if concurrent:
            async with anyio.create_task_group() as tg:
                for n in range(count):
                    tg.start_soon(one, n)
                with anyio.fail_after(120):
                    await gate["all_arrived"].wait()
                figures["reached_s"] = time.perf_counter() - start
                if trace:
                    figures["split"] = memory_split(before, tracemalloc.take_snapshot())
                    tracemalloc.stop()
                gate["open"].set()
        else:
            for n in range(count):
                await one(n)
        figures["finished_s"] = time.perf_counter() - start
        figures["cpu_s"] = time.process_time() - cpu
        figures["gc_s"], figures["full_collections"] = collector.stop()
    figures["completed"] = sum(
        1
        for a in answers
        if isinstance(a, dict) and a["result"]["content"][0]["text"].startswith("released")
    )
    return figures


class CollectorTime:
    """The time the garbage collector takes from now until :meth:`stop`, and its full
    collections (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.full = 0
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        self.seconds += time.perf_counter() - self._started
        self.full += info["generation"] == 2

    def stop(self) -> tuple[float, int]:
        gc.callbacks.remove(self._callback)
        return self.seconds, self.full


#: Frames kept per allocation: enough to see from the allocation up to the task that made it.
_TRACE_FRAMES = 64

#: Where an allocation belongs, by the code on its stack (see :func:`memory_split`).
_SIM = f"{os.sep}simplex_protocols{os.sep}sim{os.sep}"
_CALLER = (f"{os.sep}transports{os.sep}_rpc_requester.py", __file__)
_LOOP_STEP = os.path.join("asyncio", "events.py")
_ANYIO = f"{os.sep}anyio{os.sep}"
_SDK = (f"{os.sep}mcp{os.sep}", f"{os.sep}mcp_types{os.sep}", f"{os.sep}pydantic")


def memory_split(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot) -> dict[str, int]:
    """Bytes allocated between two snapshots and still held, by whose work they are.

    ``simulator``: the simulated cores' code was on the stack (it runs inside the command of
    whoever sent it). ``caller``: made in the caller's tasks (the requester's calls).
    ``SDK``: in the bot's tasks, with the MCP SDK's code on the stack. ``bot``: the rest of the
    bot's tasks (its transport, binding and chat core client).
    """
    split = {"caller": 0, "simulator": 0, "bot": 0, "SDK": 0}
    for stat in after.compare_to(before, "traceback"):
        files = [frame.filename for frame in stat.traceback]
        # The task's own frames start after the event loop's (the last asyncio/events.py)
        # and anyio's task wrapper.
        loop = [i for i, f in enumerate(files) if f.endswith(_LOOP_STEP)]
        task = [f for f in (files[loop[-1] + 1 :] if loop else files) if _ANYIO not in f]
        if any(_SIM in f for f in files):
            group = "simulator"
        elif task and any(task[0].endswith(c) for c in _CALLER):
            group = "caller"
        elif any(marker in f for f in files for marker in _SDK):
            group = "SDK"
        else:
            group = "bot"
        split[group] += stat.size_diff
    return split


def row(f: Figures, baselines: list[Figures]) -> str:
    ratios = "  ".join(f"{f.p50 / b.p50:7.1f}x {b.name}" for b in baselines)
    return (
        f"{f.name:24} {f.per_second:9.0f}/s  p50 {f.p50 * 1e3:7.3f} ms  "
        f"p99 {f.p99 * 1e3:7.3f} ms  {ratios}"
    )


def cpu_row(f: Figures, baselines: list[Figures]) -> str:
    ratios = "  ".join(f"{f.cpu_per_call / b.cpu_per_call:7.1f}x {b.name}" for b in baselines)
    return f"{f.name:24} {f.cpu_per_call * 1e3:7.3f} ms  {ratios}"


async def best_loads(count: int, data: Path, rounds: int) -> dict[tuple[bool, bool], Any]:
    """The best of ``rounds`` runs of each load: (``gc_freeze``, at once) -> its figures.

    The four kinds take turns, so a busy moment of the machine falls on all of them; the best
    run of each is the one least disturbed. Every run must complete every call.
    """
    best: dict[tuple[bool, bool], Any] = {}
    for _ in range(rounds):
        for freeze in (False, True):
            for concurrent in (True, False):
                run = await load_run(count, data, concurrent=concurrent, gc_freeze=freeze)
                if run["completed"] != count:
                    raise SystemExit(f"only {run['completed']} of {count} calls completed")
                kept = best.get((freeze, concurrent))
                if kept is None or run["finished_s"] < kept["finished_s"]:
                    best[(freeze, concurrent)] = run
    return best


def load_lines(label: str, count: int, at_once: dict[str, Any], in_turn: dict[str, Any]) -> str:
    indent = " " * (len(label) + 4)
    return (
        f"  {label}: all at once {at_once['finished_s']:.2f} s (all reached the tool in "
        f"{at_once['reached_s']:.2f} s), one after another {in_turn['finished_s']:.2f} s: "
        f"{at_once['finished_s'] / in_turn['finished_s']:.2f}x; CPU per call "
        f"{at_once['cpu_s'] / count * 1e3:.2f} / {in_turn['cpu_s'] / count * 1e3:.2f} ms "
        f"({at_once['cpu_s'] / in_turn['cpu_s']:.2f}x)\n"
        f"{indent}the garbage collector: {at_once['gc_s']:.2f} s in "
        f"{at_once['full_collections']} full collections at once, {in_turn['gc_s']:.2f} s in "
        f"{in_turn['full_collections']} one after another"
    )


def split_lines(fast: dict[str, Figures]) -> str:
    """Where the ``async def`` tool's call goes (p50s), and the ratio the bare round trip and
    the binding alone already come to: no work of the transports can bring the row below it."""
    lines = ["where the async def tool's call goes (p50):"]
    for bot, bare, binding in (
        (BOT_RPC_ASYNC, BARE_RPC, BINDING_RPC),
        (BOT_CHAT_ASYNC, BARE_CHAT, BINDING_CHAT),
    ):
        whole, base, inside = fast[bot].p50, fast[bare].p50, fast[binding].p50
        rest = whole - base - inside
        lines.append(
            f"  {bot.strip():22} {whole * 1e3:6.3f} ms: {bare} {base * 1e3:.3f}, binding "
            f"{inside * 1e3:.3f}, the rest {rest * 1e3:.3f} ({rest / whole:.0%}); the first two "
            f"alone {(base + inside) / base:.2f}x {bare}"
        )
    return "\n".join(lines)


async def main(calls: int, concurrent: int, rounds: int) -> None:
    # One log line per call would be measured too.
    logging.disable(logging.INFO)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        best = await measure_all(data, calls, rounds)
        fast = {name: kept[0] for name, kept in best.items()}
        lean = {name: kept[1] for name, kept in best.items()}
        print(
            f"MCP tools/call, {calls} sequential calls a round, the best of {rounds} rounds in "
            f"turn (after {WARMUP} to warm up)"
        )
        print(f"{'':24} {'calls':>11}  {'latency':>14}  {'':>15}  ratio of p50 to")
        for name in (SDK, BARE_RPC, BARE_CHAT):
            figures = fast[name]
            print(
                f"{figures.name:24} {figures.per_second:9.0f}/s  p50 {figures.p50 * 1e3:7.3f} ms  "
                f"p99 {figures.p99 * 1e3:7.3f} ms  (baseline)"
            )
        for name, baselines in BOT_ROWS:
            print(row(fast[name], [fast[b] for b in baselines]))
        for name in (BINDING_RPC, BINDING_CHAT):
            print(row(fast[name], [fast[SDK]]))
        print()
        print(split_lines(fast))
        print()
        print(f"{'CPU time per call':24} {'':>10} ratio to")
        for name in (SDK, BARE_RPC, BARE_CHAT):
            print(f"{name:24} {lean[name].cpu_per_call * 1e3:7.3f} ms  (baseline)")
        for name, baselines in BOT_ROWS:
            print(cpu_row(lean[name], [lean[b] for b in baselines]))
        loads = await best_loads(concurrent, data, rounds)
        traced = await load_run(concurrent, data, concurrent=True, trace=True)
        if traced["completed"] != concurrent:
            raise SystemExit(f"only {traced['completed']} of {concurrent} calls completed")
        print()
        print(f"{concurrent} Service RPC calls to one bot, every one completed (best of {rounds}):")
        print(load_lines("as it comes", concurrent, loads[(False, True)], loads[(False, False)]))
        print(load_lines("gc_freeze=True", concurrent, loads[(True, True)], loads[(True, False)]))
        split = traced["split"]
        total = sum(split.values())
        parts = ", ".join(
            f"{name} {size / concurrent / 1e3:.1f} kB" for name, size in split.items()
        )
        print(
            f"memory while pending: {total / 1e6:.1f} MB, {total / concurrent / 1e3:.1f} kB per "
            f"pending call ({parts}); in the bot's process (bot and SDK): "
            f"{(split['bot'] + split['SDK']) / concurrent / 1e3:.1f} kB"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--concurrent", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    anyio.run(main, options.calls, options.concurrent, options.rounds)
