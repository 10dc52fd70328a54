"""Rate counters: the memory one keeps RateLimiter's behaviour; the PostgreSQL one shares it.

The PostgreSQL case needs a server (``SIMPLEX_TEST_POSTGRES_DSN``); without it, it skips.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from simplex_protocols._clock import ManualClock
from simplex_protocols.transports.service_rpc import MemoryRateCounter, RateCounter, RateLimit

if TYPE_CHECKING:
    from simplex_protocols.bot._shared_state import SharedState

pytestmark = pytest.mark.anyio

LIMIT = RateLimit(3, 10.0)
ALL = RateLimit(5, 10.0)


async def test_memory_counter_admits_up_to_the_limit_then_says_when() -> None:
    counter = MemoryRateCounter()
    assert isinstance(counter, RateCounter)
    for t in (0.0, 1.0, 2.0):
        assert await counter.admit([("k", LIMIT)], now=t, wall=0.0) is None
    assert await counter.admit([("k", LIMIT)], now=2.5, wall=0.0) == 8
    # Another key has its own window.
    assert await counter.admit([("j", LIMIT)], now=2.5, wall=0.0) is None
    assert await counter.admit([("k", LIMIT)], now=10.0, wall=0.0) is None


async def test_memory_counter_counts_a_refused_request_nowhere() -> None:
    counter = MemoryRateCounter()
    for t in (0.0, 1.0, 2.0):
        assert await counter.admit([("k", LIMIT), ("*", ALL)], now=t, wall=0.0) is None
    assert await counter.admit([("k", LIMIT), ("*", ALL)], now=3.0, wall=0.0) is not None
    # The refused request took nothing from the shared limit: two more keys still fit.
    assert await counter.admit([("a", LIMIT), ("*", ALL)], now=3.0, wall=0.0) is None
    assert await counter.admit([("b", LIMIT), ("*", ALL)], now=3.0, wall=0.0) is None
    assert await counter.admit([("c", LIMIT), ("*", ALL)], now=3.0, wall=0.0) == 7


@pytest.fixture
def database(postgres_url: str) -> str:
    return postgres_url


@pytest.fixture
async def acme(database: str) -> AsyncIterator[SharedState]:
    """The shared state of the service ``acme`` on a fresh database, open, on a manual clock."""
    from simplex_protocols.bot._shared_state import SharedState

    state = SharedState(database, "acme", clock=ManualClock())
    await state.open()
    try:
        yield state
    finally:
        await state.close()


async def test_postgresql_counter_is_shared_by_two_connections(database: str) -> None:
    from simplex_protocols.bot._shared_state import SharedState

    clock = ManualClock()
    one, two = (
        SharedState(database, "acme", clock=clock),
        SharedState(database, "acme", clock=clock),
    )
    other = SharedState(database, "other", clock=clock)
    for state in (one, two, other):
        await state.open()
    try:
        wall = clock.wall()
        a, b = one.rate_counter(), two.rate_counter()
        assert await a.admit([("k", LIMIT)], now=0.0, wall=wall) is None
        assert await a.admit([("k", LIMIT)], now=0.0, wall=wall + 1) is None
        assert await b.admit([("k", LIMIT)], now=0.0, wall=wall + 2) is None
        assert await b.admit([("k", LIMIT)], now=0.0, wall=wall + 2.5) == 8
        # Another service on the same database counts apart.
        assert await other.rate_counter().admit([("k", LIMIT)], now=0.0, wall=wall + 2.5) is None
        assert await a.admit([("k", LIMIT)], now=0.0, wall=wall + 10.0) is None
        # The requestState key is one per service, the same at every replica.
        key = await one.request_state_secret()
        assert await two.request_state_secret() == key
        assert await other.request_state_secret() != key
    finally:
        for state in (one, two, other):
            await state.close()


@pytest.mark.parametrize("one_key", [True, False])
@pytest.mark.parametrize("through", ["asyncpg", "sqlalchemy"])
async def test_postgresql_counter_admits_exactly_the_limit_of_requests_made_at_once(
    database: str, one_key: bool, through: str
) -> None:
    from simplex_protocols.bot._shared_state import SharedState

    clock = ManualClock()
    states = [SharedState(database, "acme", clock=clock) for _ in range(2)]
    for state in states:
        await state.open()
        if through == "sqlalchemy":
            # As with a PostgreSQL driver other than asyncpg: the statement goes through
            # SQLAlchemy (the engine stays asyncpg's, which is all this machine has).
            state.url = state.url.replace("+asyncpg", "+other", 1)
    try:
        counters = [state.rate_counter() for state in states]
        wall = clock.wall()
        outcomes: list[int | None] = []

        async def one(n: int) -> None:
            # Two replicas; a key's limit, and the limit of all keys together.
            checks = [("k" if one_key else f"k{n}", LIMIT), ("*", ALL)]
            outcomes.append(await counters[n % 2].admit(checks, now=0.0, wall=wall + n / 100))

        async with anyio.create_task_group() as tg:
            for n in range(20):
                tg.start_soon(one, n)
    finally:
        for state in states:
            await state.close()
    assert outcomes.count(None) == (LIMIT if one_key else ALL).requests
    assert all(isinstance(o, int) and 1 <= o <= LIMIT.per_s for o in outcomes if o is not None)


async def test_postgresql_counter_says_at_most_a_window_to_a_replica_whose_clock_is_behind(
    acme: SharedState,
) -> None:
    state, clock = acme, acme.clock
    counter, wall = state.rate_counter(), clock.wall()
    for t in (30.0, 31.0, 32.0):  # stamped by a replica 30 s ahead
        assert await counter.admit([("k", LIMIT)], now=0.0, wall=wall + t) is None
    assert await counter.admit([("k", LIMIT)], now=0.0, wall=wall) == LIMIT.per_s


async def test_postgresql_counter_sends_a_burst_in_batches_admitted_in_the_order_it_came(
    database: str,
) -> None:
    from simplex_protocols.bot._shared_state import SharedState

    clock = ManualClock()
    state = SharedState(database, "acme", clock=clock)
    await state.open()
    limit = RateLimit(20, 60.0)
    try:
        counter, wall = state.rate_counter(), clock.wall()
        run = counter._run
        batches: list[int] = []

        async def counted(batch: Any) -> list[float | None]:
            batches.append(len(batch))
            return await run(batch)

        counter._run = counted  # type: ignore[method-assign]
        outcomes: dict[int, int | None] = {}

        async def one(n: int) -> None:
            outcomes[n] = await counter.admit([("k", limit)], now=0.0, wall=wall + n / 1000)

        async with anyio.create_task_group() as tg:
            for n in range(50):
                tg.start_soon(one, n)
    finally:
        await state.close()
    # The first request went alone; the 49 that came while it was on its way went together.
    assert batches == [1, 49]
    # Admitted in the order they came: the first 20, and no other.
    assert sorted(n for n, o in outcomes.items() if o is None) == list(range(20))
    assert all(o is not None and 1 <= o <= limit.per_s for n, o in outcomes.items() if n >= 20)


async def test_postgresql_counter_answers_a_batch_whose_sender_was_cancelled(
    acme: SharedState,
) -> None:
    state, clock = acme, acme.clock
    counter, wall = state.rate_counter(), clock.wall()
    run = counter._run
    on_its_way, go_on = anyio.Event(), anyio.Event()

    async def held(batch: Any) -> list[float | None]:
        if not on_its_way.is_set():
            on_its_way.set()
            await go_on.wait()
        return await run(batch)

    counter._run = held  # type: ignore[method-assign]
    outcomes: dict[str, int | None] = {}

    async def one(name: str, scope: anyio.CancelScope) -> None:
        with scope:
            outcomes[name] = await counter.admit([("k", LIMIT)], now=0.0, wall=wall)

    first, waiting, last = anyio.CancelScope(), anyio.CancelScope(), anyio.CancelScope()
    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "first", first)
        await on_its_way.wait()
        tg.start_soon(one, "waiting", waiting)
        tg.start_soon(one, "last", last)
        await anyio.wait_all_tasks_blocked()
        # The sender of the statement on its way, and a request not yet sent.
        first.cancel()
        waiting.cancel()
        go_on.set()
    # The statement on its way came back and was counted (its sender took its answer
    # before the cancellation could land); the request cancelled before it was sent was
    # counted nowhere; the one after it was sent and admitted.
    assert outcomes == {"first": None, "last": None}
    assert await counter.admit([("k", LIMIT)], now=0.0, wall=wall) is None
    assert await counter.admit([("k", LIMIT)], now=0.0, wall=wall) == LIMIT.per_s
    assert not counter._warned


async def test_postgresql_counter_counts_in_the_process_when_the_database_goes_away(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    import asyncpg  # type: ignore[import-untyped]

    from simplex_protocols.bot._shared_state import SharedState

    clock = ManualClock()
    state = SharedState(postgres_url, "acme", clock=clock)
    await state.open()
    try:
        counter = state.rate_counter()
        assert await counter.admit([("k", LIMIT)], now=0.0, wall=clock.wall()) is None
        # The database is dropped under the replica: its connections end, and it is gone.
        admin_dsn, _, name = postgres_url.rpartition("/")
        admin = await asyncpg.connect(f"{admin_dsn}/postgres")
        try:
            await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        finally:
            await admin.close()
        outcomes: list[int | None] = []

        async def one() -> None:
            outcomes.append(await counter.admit([("k", LIMIT)], now=1.0, wall=clock.wall()))

        with caplog.at_level("WARNING", logger="simplex_protocols.bot"):
            async with anyio.create_task_group() as tg:
                for _ in range(10):
                    tg.start_soon(one)
    finally:
        await state.close()
    # Counted here instead, every request of every batch: the limit holds in this process.
    assert outcomes.count(None) == LIMIT.requests
    assert all(o == LIMIT.per_s for o in outcomes if o is not None)
    warnings = [r for r in caplog.records if "unavailable" in r.getMessage()]
    assert len(warnings) == 1
