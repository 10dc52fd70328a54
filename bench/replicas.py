"""Replicas of one service (``ResponderBot(service=...)``) against one bot, in one run.

Run: ``python bench/replicas.py`` with ``SIMPLEX_TEST_POSTGRES_DSN`` set, or
``--database postgresql://USER@HOST:PORT/DB`` (the shared state's tables are made there when
missing; the run's rows, under service names of its own, are deleted at the end). ``make
bench`` starts a throwaway server for it (``scripts/with-postgres``); without one it says so and
exits 0, so that ``make bench`` runs on a machine without PostgreSQL. ``--calls N`` calls per
round, ``--callers N`` simulated callers, ``--rounds N`` rounds per measure.

Everything else runs in this process on the simulated network (real clock): the callers, the
bots and their chat cores share one event loop and one CPU. Two replicas therefore cannot
answer more calls per second than one here; what they can change is how long a call waits
behind others (for the database: each replica has its own connection pool) and whether the
shared rate counter makes the calls take turns: it sends the requests that come while its
statement is on its way together in the next one, so a burst costs a round trip per batch. The
measures, each ``--calls`` (400) Service RPC ``tools/call`` of a small ``async def`` tool, all
sent at once, split over ``--callers`` (8) callers with a signing key each:

- baseline **one bot**: a ResponderBot without ``service`` (rate windows in memory);
- **one replica**: the same bot with ``service`` and a PostgreSQL ``task_database`` (the
  ``requestState`` key, the replica registry and the rate windows in the database);
- **two replicas**: two such bots of one service, the calls split between their addresses;
- **one replica, one key**: every call signed by one key, so that every call's count waits
  for the key's advisory lock (the rate window of a key is counted in turn).

For each: calls per second (the median round), p50 and p99 latency, the CPU time of this
process per call, and the ratios two replicas / one replica and one replica / one bot. Then
the same bots called one call at a time (the latency a lone call pays for the shared state:
a statement of its own), and the shared rate counter alone: one ``admit`` after another, and
``--calls`` of them at once on distinct keys and on one key (in batches).

The counter keeps a row per admitted request for as long as the window lasts, and counts a
key's rows at each request: a caller whose calls fill much of a large limit makes each of its
calls count more rows. The limit here is never reached, so a key's window holds every call
of the run (a few hundred rows per key; every call of a measure for the one key).
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
from rpc import Figures, build_tools, tool_call

from simplex_protocols._clock import SystemClock
from simplex_protocols.bot import ResponderBot
from simplex_protocols.bot._shared_state import SharedState
from simplex_protocols.core import ChatCore
from simplex_protocols.rpc import SigningKey
from simplex_protocols.sim import SimNetwork
from simplex_protocols.transports import RateLimit, ServiceRPCRequester

DSN_VARIABLE = "SIMPLEX_TEST_POSTGRES_DSN"
#: A limit no run reaches: every call is counted, none refused.
UNLIMITED = RateLimit(10**9, 60.0)
WARMUP = 20
#: The prefix of this run's service names: its rows are told from any others and deleted.
RUN = f"bench-{secrets.token_hex(4)}"
SEQUENTIAL = 200
TOOL = "availability_async"
#: The shared state's tables (simplex_protocols/bot/_shared_state.py).
TABLES = ("simplex_service_secrets", "simplex_service_rate", "simplex_service_replicas")


@dataclass
class Caller:
    requester: ServiceRPCRequester
    key: SigningKey


async def timed(
    name: str, count: int, once: Callable[[int], Awaitable[None]], *, at_once: bool
) -> Figures:
    """``count`` calls of ``once``, all started together or one after another."""
    latencies: list[float] = []

    async def one(i: int) -> None:
        t0 = time.perf_counter()
        await once(i)
        latencies.append(time.perf_counter() - t0)

    start = time.perf_counter()
    cpu = time.process_time()
    if at_once:
        with anyio.fail_after(300):
            async with anyio.create_task_group() as tg:
                for i in range(count):
                    tg.start_soon(one, i)
    else:
        for i in range(count):
            await one(i)
    return Figures(name, latencies, time.perf_counter() - start, time.process_time() - cpu)


def median_round(rounds: Sequence[Figures]) -> Figures:
    """The round of the median throughput (rounds differ by what else the machine does)."""
    return sorted(rounds, key=lambda f: f.per_second)[len(rounds) // 2]


@asynccontextmanager
async def bots(
    network: SimNetwork, data: Path, label: str, count: int, database: str | None, calls: int
) -> AsyncIterator[list[str]]:
    """``count`` bots serving (replicas of one service with ``database``), their addresses."""
    async with AsyncExitStack() as stack:
        addresses = []
        for i in range(count):
            bot = ResponderBot(
                display_name=f"Bench {label} {i}",
                mcp=build_tools(),
                data_dir=data / f"{label}-{i}",
                service=f"{RUN}-{label}" if database is not None else None,
                task_database=database,
                rate_limit=UNLIMITED,
                anonymous_rate_limit=UNLIMITED,
                # Every call of a round is taken at once: the transport's own cap (64) would
                # make two replicas take twice as many as one.
                max_concurrent_calls=calls,
            )
            served = await stack.enter_async_context(
                bot.serving(network.backend(f"bench-{label}-{i}"))
            )
            addresses.append(served.address)
        yield addresses


async def load(
    name: str,
    callers: Sequence[Caller],
    addresses: Sequence[str],
    calls: int,
    rounds: int,
    *,
    one_key: bool = False,
) -> tuple[Figures, Figures]:
    """The median of ``rounds`` rounds of ``calls`` at once, and ``SEQUENTIAL`` calls one
    after another; call ``i`` from caller ``i % callers`` to address ``i % addresses``."""

    async def once(i: int) -> None:
        caller = callers[i % len(callers)]
        key = callers[0].key if one_key else caller.key
        await caller.requester.request(
            addresses[i % len(addresses)], "mcp", tool_call(i, TOOL), signing_key=key
        )

    await timed(name, WARMUP, once, at_once=False)
    at_once = [await timed(name, calls, once, at_once=True) for _ in range(rounds)]
    in_turn = await timed(name, SEQUENTIAL, once, at_once=False)
    return median_round(at_once), in_turn


async def counter_alone(database: str, calls: int) -> tuple[Figures, Figures, Figures]:
    """The shared rate counter without a bot: one admit after another, ``calls`` at once on
    distinct keys, and ``calls`` at once on one key."""
    clock = SystemClock()
    state = SharedState(database, f"{RUN}-counter", clock=clock)
    await state.open()
    try:
        counter = state.rate_counter()

        def admit(key: Callable[[int], str]) -> Callable[[int], Awaitable[None]]:
            async def once(i: int) -> None:
                retry = await counter.admit(
                    [(key(i), UNLIMITED)], now=clock.now(), wall=clock.wall()
                )
                assert retry is None

            return once

        await timed("warm-up", WARMUP, admit(str), at_once=False)
        in_turn = await timed("admit, in turn", SEQUENTIAL, admit(str), at_once=False)
        keys = await timed("admit, distinct keys", calls, admit(lambda i: f"k{i}"), at_once=True)
        one = await timed("admit, one key", calls, admit(lambda _: "k"), at_once=True)
    finally:
        await state.close()
    return in_turn, keys, one


@asynccontextmanager
async def cleaned(database: str, prefix: str) -> AsyncIterator[None]:
    """At the end, delete the rows of every service named ``prefix...`` from the shared
    tables (the tables stay: a replica creates them when missing)."""
    try:
        yield
    finally:
        from sqlalchemy import text

        state = SharedState(database, "bench", clock=SystemClock())
        await state.open()
        try:
            async with state.engine.begin() as conn:
                for table in TABLES:
                    await conn.execute(
                        text(f"DELETE FROM {table} WHERE service LIKE :p"), {"p": f"{prefix}%"}
                    )
        finally:
            await state.close()


def row(f: Figures) -> str:
    return (
        f"{f.name:24} {f.per_second:8.0f}/s  p50 {f.p50 * 1e3:8.2f} ms  "
        f"p99 {f.p99 * 1e3:8.2f} ms  CPU {f.cpu_per_call * 1e3:6.2f} ms/call"
    )


async def main(database: str, calls: int, callers_count: int, rounds: int) -> None:
    # One log line per call would be measured too.
    logging.disable(logging.INFO)
    network = SimNetwork(seed=8)
    users = [network.add_user(f"caller-{i}") for i in range(callers_count)]
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(cleaned(database, RUN))
        data = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        callers = []
        for user in users:
            core = ChatCore(network.backend(user.name), event_buffer=10 * calls)
            await stack.enter_async_context(core)
            callers.append(
                Caller(ServiceRPCRequester(core, user_id=user.user_id), SigningKey.generate())
            )
        measured: dict[str, tuple[Figures, Figures]] = {}
        async with bots(network, data, "solo", 1, None, calls) as addresses:
            measured["one bot"] = await load("one bot", callers, addresses, calls, rounds)
        async with bots(network, data, "one", 1, database, calls) as addresses:
            measured["one replica"] = await load("one replica", callers, addresses, calls, rounds)
            measured["one replica, one key"] = await load(
                "one replica, one key", callers, addresses, calls, rounds, one_key=True
            )
        async with bots(network, data, "two", 2, database, calls) as addresses:
            measured["two replicas"] = await load("two replicas", callers, addresses, calls, rounds)
        counter = await counter_alone(database, calls)

    solo, one, two = (measured[k][0] for k in ("one bot", "one replica", "two replicas"))
    one_key = measured["one replica, one key"][0]
    print(
        f"MCP tools/call over Service RPC, {calls} at once from {callers_count} callers "
        f"(median of {rounds} rounds, after {WARMUP} to warm up)"
    )
    print(
        "in one process on one event loop: two replicas share the CPU of one, so they cannot "
        "answer more calls per second than one here"
    )
    for name in ("one bot", "one replica", "two replicas", "one replica, one key"):
        print(row(measured[name][0]))
    print(
        f"two replicas / one replica: {two.per_second / one.per_second:.2f}x calls/s, "
        f"p50 {two.p50 / one.p50:.2f}x; one replica / one bot: "
        f"{one.per_second / solo.per_second:.2f}x calls/s, p50 {one.p50 / solo.p50:.2f}x; "
        f"one key / a key per caller: {one_key.per_second / one.per_second:.2f}x calls/s"
    )
    print(
        f"CPU time per call, steadier on a shared machine: two replicas / one replica "
        f"{two.cpu_per_call / one.cpu_per_call:.2f}x, one replica / one bot "
        f"{one.cpu_per_call / solo.cpu_per_call:.2f}x"
    )
    print(
        f"CPU of this process the shared state adds per call: "
        f"{(one.cpu_per_call - solo.cpu_per_call) * 1e3:.2f} ms "
        f"({one.cpu_per_call / solo.cpu_per_call:.2f}x one bot's)"
    )
    print()
    print(f"the same, {SEQUENTIAL} calls one after another")
    for name in ("one bot", "one replica", "two replicas"):
        print(row(measured[name][1]))
    lone_solo, lone_one = measured["one bot"][1], measured["one replica"][1]
    print(
        f"a lone call's latency the shared state adds: {(lone_one.p50 - lone_solo.p50) * 1e3:.2f} "
        f"ms at p50 ({lone_one.p50 / lone_solo.p50:.2f}x one bot's)"
    )
    print()
    _, keys, one_lock = counter
    print("the shared rate counter alone (in turn: a statement each; at once: in batches)")
    for figures in counter:
        print(row(figures))
    print(
        f"{calls} at once on one key / on distinct keys: "
        f"{one_lock.per_second / keys.per_second:.2f}x admits/s (one key's admits take turns)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--database", metavar="URL", default=os.environ.get(DSN_VARIABLE))
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--callers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    if not options.database:
        print(f"bench/replicas.py: no PostgreSQL server: set {DSN_VARIABLE} or give --database")
        sys.exit(0)
    anyio.run(main, options.database, options.calls, options.callers, options.rounds)
