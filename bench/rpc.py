"""MCP ``tools/call`` through ResponderBot, as ratios to baselines measured in the same run.

Run: ``python bench/rpc.py`` (``--calls N`` round trips per measure, ``--concurrent N`` for the
load test). Everything runs in this process on the simulated network (real clock).

Measures, each N sequential ``tools/call`` of one small tool (``availability``):

- **bot over Service RPC**: a second simulated user calls the bot with
  ``ServiceRPCRequester.request`` (one ``/_service_request`` per call);
- **bot over /_call**: the same user calls it in a conversation with ``ChatCaller.call``
  (one command, one quoting reply);
- baseline **bare service request**: the simulator's own round trip, a ``/_service_request``
  answered by a minimal responder that sends a fixed ``/_service_response`` (no envelope
  checks, no binding, no SDK);
- baseline **bare chat reply**: a text message answered by a minimal responder with a quoting
  reply (no ``/_call`` parsing, no binding);
- baseline **SDK in process**: the same ``MCPServer`` called with the SDK's in-process
  ``Client`` (no SimpleX at all).

For each: calls per second, p50 and p99 latency, and the ratios of the p50 to the baselines.
Then ``--concurrent`` (1,000) Service RPC calls to one bot at once, whose tool waits until every
call has reached it: whether all complete, how long they took, and the memory held per
pending call (tracemalloc, the whole process: the caller's requests, the simulated cores and
the bot).
"""

from __future__ import annotations

import argparse
import gc
import logging
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client
from mcp.server.mcpserver import MCPServer

from simplex_protocols.bindings.mcp import is_final
from simplex_protocols.bot import ResponderBot
from simplex_protocols.core import ChatAPI, ChatCore, ContactRef
from simplex_protocols.core import commands as cmds
from simplex_protocols.sim import SimNetwork
from simplex_protocols.transports import ChatCaller, ServiceRPCRequester

REVISION = "2026-07-28"
WARMUP = 20


def build_tools(gate: dict[str, Any] | None = None) -> MCPServer[Any]:
    tools: MCPServer[Any] = MCPServer("bench", subscriptions=False)

    @tools.tool(structured_output=False)
    def availability(item: str) -> str:
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
    def __init__(self, name: str, latencies: list[float], elapsed: float) -> None:
        self.name = name
        self.latencies = sorted(latencies)
        self.elapsed = elapsed

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
    for i in range(WARMUP):
        await once(-1 - i)
    latencies: list[float] = []
    start = time.perf_counter()
    for i in range(calls):
        t0 = time.perf_counter()
        await once(i)
        latencies.append(time.perf_counter() - t0)
    return Figures(name, latencies, time.perf_counter() - start)


async def connect(core: ChatCore, user_id: int, address: str) -> ContactRef:
    with anyio.fail_after(30):
        async with core.events() as events:
            await core.command(cmds.connect(user_id, address))
            async for event in events:
                if event.get("type") == "contactConnected":
                    return ContactRef(int(event["contact"]["contactId"]))
    raise RuntimeError("no contactConnected event")


async def bare_responder(core: ChatCore, user_id: int, *, task_status: Any) -> None:
    """Answers every service request with a fixed response, and every text with a reply."""
    response = {"response": {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}}
    async with core.events(buffer=100_000) as events:
        task_status.started()
        async for event in events:
            kind = event.get("type")
            if kind == "serviceRequest":
                await core.command(
                    cmds.send_service_response(user_id, event["requestId"], response)
                )
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
                    await core.command(cmds.send_messages(chat, reply))


async def sdk_in_process(calls: int) -> Figures:
    async with Client(build_tools(), cache=None) as client:

        async def once(_: int) -> None:
            await client.call_tool("availability", {"item": "anvil"})

        return await measure("SDK in process", calls, once)


async def bare_round_trips(calls: int) -> tuple[Figures, Figures]:
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

        rpc = await measure("bare service request", calls, service)
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

        chat = await measure("bare chat reply", calls, message)
        tg.cancel_scope.cancel()
    return rpc, chat


async def bot_round_trips(calls: int, data: Path) -> tuple[Figures, Figures]:
    network = SimNetwork(seed=6)
    alice = network.add_user("alice")
    bot = ResponderBot(display_name="Bench", mcp=build_tools(), data_dir=data / "bot")
    async with (
        ChatCore(network.backend("alice")) as core,
        bot.serving(network.backend("bench")),
    ):
        requester = ServiceRPCRequester(core, user_id=alice.user_id)

        async def rpc_once(i: int) -> None:
            await requester.request(bot.address, "mcp", tool_call(i))

        rpc = await measure("bot over Service RPC", calls, rpc_once)
        contact = await connect(core, alice.user_id, bot.address)
        caller = ChatCaller(core)

        async def chat_once(i: int) -> None:
            request = tool_call(i)
            result = await caller.call(
                contact, "mcp", request, final=lambda m, r=request: is_final(r, m)
            )
            assert result.completed

        chat = await measure("bot over /_call", calls, chat_once)
    return rpc, chat


async def concurrent_calls(count: int, data: Path) -> dict[str, float]:
    gate: dict[str, Any] = {
        "arrived": 0,
        "expected": count,
        "all_arrived": anyio.Event(),
        "open": anyio.Event(),
    }
    network = SimNetwork(seed=7)
    alice = network.add_user("alice")
    bot = ResponderBot(
        display_name="Bench",
        mcp=build_tools(gate),
        data_dir=data / "load",
        max_concurrent_calls=count,
    )
    answers: list[Any] = []
    async with (
        ChatCore(network.backend("alice"), event_buffer=10 * count) as core,
        bot.serving(network.backend("bench")),
    ):
        requester = ServiceRPCRequester(core, user_id=alice.user_id)
        await requester.request(bot.address, "mcp", tool_call(0))  # warm up
        gc.collect()
        tracemalloc.start()
        baseline = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        async with anyio.create_task_group() as tg:

            async def one(n: int) -> None:
                answers.append(
                    await requester.request(
                        bot.address, "mcp", tool_call(n, "held", n=n), timeout_s=120
                    )
                )

            for n in range(count):
                tg.start_soon(one, n)
            with anyio.fail_after(120):
                await gate["all_arrived"].wait()
            pending = tracemalloc.get_traced_memory()[0] - baseline
            reached = time.perf_counter() - start
            gate["open"].set()
        tracemalloc.stop()
        finished = time.perf_counter() - start
    released = sum(
        1
        for a in answers
        if isinstance(a, dict) and a["result"]["content"][0]["text"].startswith("released")
    )
    return {
        "completed": released,
        "pending_bytes": pending,
        "reached_s": reached,
        "finished_s": finished,
    }


def row(f: Figures, baselines: list[Figures]) -> str:
    ratios = "  ".join(f"{f.p50 / b.p50:7.1f}x {b.name}" for b in baselines)
    return (
        f"{f.name:24} {f.per_second:9.0f}/s  p50 {f.p50 * 1e3:7.3f} ms  "
        f"p99 {f.p99 * 1e3:7.3f} ms  {ratios}"
    )


async def main(calls: int, concurrent: int) -> None:
    # One log line per call would be measured too.
    logging.disable(logging.INFO)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        sdk = await sdk_in_process(calls)
        bare_rpc, bare_chat = await bare_round_trips(calls)
        bot_rpc, bot_chat = await bot_round_trips(calls, data)
        print(f"MCP tools/call, {calls} sequential calls each (after {WARMUP} to warm up)")
        print(f"{'':24} {'calls':>11}  {'latency':>14}  {'':>15}  ratio of p50 to")
        for figures in (sdk, bare_rpc, bare_chat):
            print(
                f"{figures.name:24} {figures.per_second:9.0f}/s  p50 {figures.p50 * 1e3:7.3f} ms  "
                f"p99 {figures.p99 * 1e3:7.3f} ms  (baseline)"
            )
        print(row(bot_rpc, [bare_rpc, sdk]))
        print(row(bot_chat, [bare_chat, bare_rpc, sdk]))
        load = await concurrent_calls(concurrent, data)
        print()
        print(
            f"{concurrent} concurrent Service RPC calls to one bot: "
            f"{load['completed']:.0f} completed; all reached the tool in "
            f"{load['reached_s']:.2f} s, all answered after {load['finished_s']:.2f} s"
        )
        print(
            f"memory while pending: {load['pending_bytes'] / 1e6:.1f} MB, "
            f"{load['pending_bytes'] / concurrent / 1e3:.1f} kB per pending call "
            "(caller, simulator and bot together)"
        )
        if load["completed"] != concurrent:
            raise SystemExit(f"only {load['completed']:.0f} of {concurrent} calls completed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--concurrent", type=int, default=1000)
    options = parser.parse_args()
    anyio.run(main, options.calls, options.concurrent)
