"""Chat core round trips over the simulated network, as ratios to baselines of the same run.

Run: ``python bench/core.py``. Prints:

- command round trips per second through :class:`~simplex_protocols.core.ChatCore` and the
  WebSocket backend to a ``simplex-sim serve`` server (in this process, on 127.0.0.1), and the
  ratio of its round-trip time to a bare ``websockets`` echo round trip of a frame of the
  same size;
- a Service RPC request round trip through the simulated network (requester command,
  ``serviceRequest`` event at a responder bot, ``/_service_response``, ``serviceResponse``),
  in process, and its ratio to a direct in-process call of the same handler.

Each figure is the best of several runs (``time.perf_counter``).
"""

from __future__ import annotations

import time
from typing import Any

import anyio
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from simplex_protocols._wire import dumps, loads
from simplex_protocols.core import ChatCore, WebSocketBackend
from simplex_protocols.sim import SimNetwork, SimServer

ROUND_TRIPS = 300
SERVICE_CALLS = 200
RUNS = 5

REQUEST = {"protocol": "mcp", "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}


def handler(request: dict[str, Any]) -> dict[str, Any]:
    """The bot's work for one request: the same in both measurements."""
    return {"response": {"jsonrpc": "2.0", "id": request["request"]["id"], "result": {"tools": []}}}


async def _echo(ws: ServerConnection) -> None:
    async for message in ws:
        await ws.send(message)


async def echo_round_trip(frame: str) -> float:
    """Best seconds per bare websockets round trip of ``frame``."""
    best = float("inf")
    async with serve(_echo, "127.0.0.1", 0, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", compression=None) as ws:
            for _ in range(RUNS):
                start = time.perf_counter()
                for _ in range(ROUND_TRIPS):
                    await ws.send(frame)
                    loads(await ws.recv())
                best = min(best, (time.perf_counter() - start) / ROUND_TRIPS)
    return best


async def sim_command_round_trip() -> tuple[float, int]:
    """Best seconds per ``/user`` round trip through ChatCore + WebSocketBackend; the size of
    the response frame."""
    network = SimNetwork(seed=1)
    network.add_user("alice")
    best = float("inf")
    async with SimServer(network, port=0) as server:
        backend = WebSocketBackend(server.url("alice"), ping_interval=None)
        async with ChatCore(backend) as core:
            size = len(dumps({"corrId": "1", "resp": await core.command("/user")}))
            for _ in range(RUNS):
                start = time.perf_counter()
                for _ in range(ROUND_TRIPS):
                    await core.command("/user")
                best = min(best, (time.perf_counter() - start) / ROUND_TRIPS)
    return best, size


async def _bot(core: ChatCore, ready: anyio.Event) -> None:
    async with core.events() as events:
        ready.set()
        async for event in events:
            if event.get("type") == "serviceRequest":
                answer = handler(event["requestData"])
                await core.command(f"/_service_response 1 {event['requestId']} {dumps(answer)}")


async def service_round_trip() -> float:
    """Best seconds per Service RPC round trip through the simulated network, in process."""
    network = SimNetwork(seed=2)
    bot_user = network.add_user("bot", peer_type="bot", service_requests=True)
    link = bot_user.create_address(pq_ratchet=True)
    network.add_user("alice")
    command = f"/_service_request 1 {link} {dumps(REQUEST)}"
    best = float("inf")
    async with (
        ChatCore(network.backend("bot")) as bot,
        ChatCore(network.backend("alice")) as alice,
        anyio.create_task_group() as tg,
    ):
        ready = anyio.Event()
        tg.start_soon(_bot, bot, ready)
        await ready.wait()
        await alice.command(command)
        for _ in range(RUNS):
            start = time.perf_counter()
            for _ in range(SERVICE_CALLS):
                await alice.command(command)
            best = min(best, (time.perf_counter() - start) / SERVICE_CALLS)
        tg.cancel_scope.cancel()
    return best


def direct_call() -> float:
    """Best seconds per direct in-process call of the handler (with the JSON both ways)."""
    text = dumps(REQUEST)
    best = float("inf")
    for _ in range(RUNS):
        start = time.perf_counter()
        for _ in range(SERVICE_CALLS * 10):
            dumps(handler(loads(text)))
        best = min(best, (time.perf_counter() - start) / (SERVICE_CALLS * 10))
    return best


async def main() -> None:
    sim_rtt, size = await sim_command_round_trip()
    echo_rtt = await echo_round_trip(
        dumps({"corrId": "1", "resp": {"pad": "x" * max(0, size - 30)}})
    )
    print(
        f"WebSocket command round trip to simplex-sim: {sim_rtt * 1e6:8.1f} us ({1 / sim_rtt:7.0f}/s)"
    )
    print(
        f"bare websockets echo round trip, same size:  {echo_rtt * 1e6:8.1f} us ({1 / echo_rtt:7.0f}/s)"
    )
    print(f"ratio (simulator / echo):                    {sim_rtt / echo_rtt:8.2f}x")
    svc = await service_round_trip()
    direct = direct_call()
    print(f"Service RPC round trip through the simulator: {svc * 1e6:8.1f} us ({1 / svc:7.0f}/s)")
    print(f"direct in-process call of the same handler:   {direct * 1e6:8.1f} us")
    print(f"ratio (simulator / direct call):              {svc / direct:8.1f}x")


if __name__ == "__main__":
    anyio.run(main)
