"""Chat core round trips over the simulated network, as ratios to baselines of the same run.

Run: ``python bench/core.py``. Prints:

- command round trips per second through :class:`~simplex_protocols.core.ChatCore` and the
  WebSocket backend to a ``simplex-sim serve`` server (in this process, on 127.0.0.1), and the
  ratio of its round-trip time to a bare ``websockets`` echo round trip of a frame of the
  same size;
- a Service RPC request round trip through the simulated network (requester command,
  ``serviceRequest`` event at a responder bot, ``/_service_response``, ``serviceResponse``),
  in process, and its ratio to a direct in-process call of the same handler.

- the simulator at scale, in process through :class:`~simplex_protocols.core.ChatCore`:
  reading a group chat with 10,000 unread messages the way the MCP server's ``receive`` does
  (stats, the first unread, then pages of 100 after it, each page marked read), listing 1,000
  chats in pages of 100 (``/_get chats … before=<ts>``), and a busy run (20 peers each sending
  50 messages to one bot at once, the bot reading its events) with the CPU the network uses
  while its clients sit idle afterwards.

Each round-trip figure is the best of several runs (``time.perf_counter``); the scale figures
are single runs (``time.perf_counter`` and ``time.process_time``).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import anyio
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from simplex_protocols._wire import dumps, loads
from simplex_protocols.core import ChatCore, ContactRef, GroupRef, WebSocketBackend
from simplex_protocols.core import commands as cmds
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
        command = cmds.show_active_user()
        async with ChatCore(backend) as core:
            size = len(dumps({"corrId": "1", "resp": await core.command(command)}))
            for _ in range(RUNS):
                start = time.perf_counter()
                for _ in range(ROUND_TRIPS):
                    await core.command(command)
                best = min(best, (time.perf_counter() - start) / ROUND_TRIPS)
    return best, size


async def _bot(core: ChatCore, ready: anyio.Event) -> None:
    async with core.events() as events:
        ready.set()
        async for event in events:
            if event.get("type") == "serviceRequest":
                answer = handler(event["requestData"])
                await core.command(cmds.send_service_response(1, event["requestId"], answer))


async def service_round_trip() -> float:
    """Best seconds per Service RPC round trip through the simulated network, in process."""
    network = SimNetwork(seed=2)
    bot_user = network.add_user("bot", peer_type="bot", service_requests=True)
    link = bot_user.create_address(pq_ratchet=True)
    network.add_user("alice")
    command = cmds.send_service_request(1, link, REQUEST)
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


# ---------------------------------------------------------------------------- scale

UNREAD = 10_000
CHATS = 1_000
PEERS = 20
PEER_MESSAGES = 50
PAGE = 100


def _group_with_unread(n: int) -> tuple[SimNetwork, int]:
    """alice owns a group that bob joined; bob has sent ``n`` messages alice has not read."""
    network = SimNetwork(seed=3)
    alice = network.add_user("alice")
    bob = network.add_user("bob")
    created = alice.command(cmds.new_group(alice.user_id, {"displayName": "shop", "fullName": ""}))
    gid = int(created["groupInfo"]["groupId"])
    link = alice.command(cmds.create_group_link(gid))["groupLink"]["connLinkContact"][
        "connShortLink"
    ]
    bob.command(cmds.connect(bob.user_id, link))
    bob_group = GroupRef(next(iter(bob.core.db.groups)))
    for i in range(n):
        bob.command(
            cmds.send_text(bob_group, f"item {i}: trail shoes in stock, size {36 + i % 12}")
        )
    # the join events are read; then only bob's messages are unread
    alice.command(cmds.chat_read(GroupRef(gid)))
    for i in range(n):
        bob.command(cmds.send_text(bob_group, f"again {i}"))
    alice.core.backlog.clear()
    bob.core.backlog.clear()
    return network, gid


async def drain_unread() -> tuple[float, float, int]:
    """Seconds (wall, CPU) to read every unread message of a 10,000-unread group in pages
    of 100."""
    network, gid = _group_with_unread(UNREAD)
    drained = 0
    group = GroupRef(gid)
    async with ChatCore(network.backend("alice")) as core:
        start, cpu = time.perf_counter(), time.process_time()
        stats = (await core.command(cmds.get_chat(group, initial=1)))["chat"]["chatStats"]
        pivot = int(stats["minUnreadItemId"])
        first = await core.command(cmds.get_chat(group, around=pivot, count=0))
        items = first["chat"]["chatItems"]
        while items:
            ids = [int(i["meta"]["itemId"]) for i in items]
            await core.command(cmds.chat_items_read(group, ids))
            drained += len(items)
            page = await core.command(cmds.get_chat(group, after=ids[-1], count=PAGE))
            items = page["chat"]["chatItems"]
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return elapsed, cpu, drained


async def list_chats() -> tuple[float, float, int]:
    """Seconds (wall, CPU) to list 1,000 group chats in pages of 100, newest first."""
    from simplex_protocols._clock import ManualClock

    clock = ManualClock()
    network = SimNetwork(seed=4, clock=clock)
    alice = network.add_user("alice")
    for n in range(CHATS):
        alice.command(cmds.new_group(alice.user_id, {"displayName": f"g{n}", "fullName": ""}))
        await clock.advance(0.001)  # chats differ in time, as in a real core (ms)
    alice.core.backlog.clear()
    listed = 0
    async with ChatCore(network.backend("alice")) as core:
        start, cpu = time.perf_counter(), time.process_time()
        command = cmds.get_chats(alice.user_id, pending_connections=False, count=PAGE)
        while True:
            chats = (await core.command(command))["chats"]
            listed += len(chats)
            if len(chats) < PAGE:
                break
            info = chats[-1]["chatInfo"]
            entity = info.get("groupInfo") or info.get("contact")
            command = cmds.get_chats(
                alice.user_id, pending_connections=False, before=entity["chatTs"], count=PAGE
            )
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return elapsed, cpu, listed


async def busy_run() -> tuple[float, float, float, float]:
    """20 peers send 50 messages each to a bot at once; seconds (wall, CPU) until the bot has
    read them all, then the CPU seconds the process uses in 0.5 s while every client sits idle
    (and the wall seconds of that wait)."""
    network = SimNetwork(seed=5)
    bot = network.add_user("bot", peer_type="bot")
    link = bot.create_address()
    peers = []
    for n in range(PEERS):
        peer = network.add_user(f"peer{n}")
        peer.command(cmds.connect(peer.user_id, link))
        contact = next(c for c in peer.core.db.contacts.values() if c.conn_id is not None)
        peers.append((peer.name, contact.contact_id))
    for name in network.core_names:
        network.core(name).backlog.clear()
    total = PEERS * PEER_MESSAGES
    async with contextlib.AsyncExitStack() as stack:
        bot_core = await stack.enter_async_context(ChatCore(network.backend("bot")))
        cores = [
            await stack.enter_async_context(ChatCore(network.backend(name))) for name, _ in peers
        ]
        done = anyio.Event()

        async def read_bot(ready: anyio.Event) -> None:
            seen = 0
            async with bot_core.events() as events:
                ready.set()
                async for event in events:
                    if event.get("type") == "newChatItems":
                        seen += len(event["chatItems"])
                        if seen >= total:
                            done.set()
                            return

        async def send_all(core: ChatCore, contact_id: int) -> None:
            for i in range(PEER_MESSAGES):
                await core.command(cmds.send_text(ContactRef(contact_id), f"message {i}"))

        async with anyio.create_task_group() as tg:
            ready = anyio.Event()
            tg.start_soon(read_bot, ready)
            await ready.wait()
            start, cpu = time.perf_counter(), time.process_time()
            async with anyio.create_task_group() as senders:
                for core, (_, contact_id) in zip(cores, peers, strict=True):
                    senders.start_soon(send_all, core, contact_id)
            await done.wait()
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        await anyio.sleep(0.5)
        idle_cpu = time.process_time() - cpu_start
        idle_wall = time.perf_counter() - wall_start
    return elapsed, cpu, idle_cpu, idle_wall


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
    print()
    seconds, cpu, drained = await drain_unread()
    print(
        f"read {drained:,} unread in pages of {PAGE}:             {seconds * 1000:8.0f} ms"
        f" (CPU {cpu * 1000:.0f} ms)"
    )
    seconds, cpu, listed = await list_chats()
    print(
        f"list {listed:,} chats in pages of {PAGE}:                {seconds * 1000:8.0f} ms"
        f" (CPU {cpu * 1000:.0f} ms)"
    )
    elapsed, cpu, idle_cpu, idle_wall = await busy_run()
    print(
        f"busy run, {PEERS} peers x {PEER_MESSAGES} messages to one bot:   {elapsed * 1000:8.0f} ms"
        f" (CPU {cpu * 1000:.0f} ms, {PEERS * PEER_MESSAGES / elapsed:,.0f} messages/s)"
    )
    print(
        f"CPU while {PEERS + 1} clients sit idle afterwards:     {idle_cpu / idle_wall * 100:8.0f} %"
    )


if __name__ == "__main__":
    anyio.run(main)
