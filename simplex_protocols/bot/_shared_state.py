"""State shared by the replicas of one service in PostgreSQL (docs/bot.md, "Running more than
one process").

Several :class:`~simplex_protocols.bot.ResponderBot` processes serve one service, each with its
own chat core, data folder and contact address. What a caller must find the same at every
replica lives in one database, in three tables keyed by the service's name:

- ``simplex_service_secrets``: the MCP ``requestState`` sealing key, made by whichever replica
  starts first (MCP-MSG-6: a state sealed at one replica is accepted at another);
- ``simplex_service_rate``: the Service RPC rate-limit windows (one row per admitted request),
  so a caller cannot multiply its limit by the number of replicas;
- ``simplex_service_replicas``: each replica's address, name and last heartbeat, from which
  the Agent Card and llms.txt list every live replica.

Times here are on the wall clock (``Clock.wall``): the monotonic clocks of two processes do not
compare.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import anyio

from simplex_protocols._clock import Clock
from simplex_protocols.errors import BotConfigError
from simplex_protocols.transports.service_rpc import MemoryRateCounter, RateLimit

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = [
    "HEARTBEAT_S",
    "STALE_AFTER_S",
    "Replica",
    "ReplicaPresence",
    "SharedRateCounter",
    "SharedState",
    "check_service_name",
]

logger = logging.getLogger("simplex_protocols.bot")

#: A service name: what tells the replicas of one service from other services on the database.
_SERVICE_NAME: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")
#: Seconds between two heartbeats of a replica.
HEARTBEAT_S: Final = 15.0
#: A replica not seen for this long drops out of the Agent Card and llms.txt.
STALE_AFTER_S: Final = 60.0
#: How long a stopping replica waits to take its row out of the registry.
LEAVE_S: Final = 5.0
#: The most requests the rate counter sends in one statement.
_BATCH_MAX: Final = 256
#: How long one statement of the rate counter may take before its requests are counted in the
#: process instead.
_BATCH_TIMEOUT_S: Final = 10.0
_SECRET_BYTES: Final = 32

_SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS simplex_service_secrets (
        service text PRIMARY KEY, secret bytea NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS simplex_service_rate (
        service text NOT NULL, window_name text NOT NULL, key text NOT NULL,
        at double precision NOT NULL)""",
    """CREATE INDEX IF NOT EXISTS simplex_service_rate_key
        ON simplex_service_rate (service, window_name, key, at)""",
    """CREATE TABLE IF NOT EXISTS simplex_service_replicas (
        service text NOT NULL, replica text NOT NULL, address text NOT NULL,
        display_name text NOT NULL, seen_at double precision NOT NULL,
        PRIMARY KEY (service, replica))""",
    # The admission of a batch of requests in one statement (one round trip, no BEGIN and
    # COMMIT), as if each were admitted in turn, in the batch's order. First the advisory lock of
    # every window the batch counts in, in the order given (each replica sorts them the same
    # way, so two batches never wait on each other in a cycle); the locks are held to the end of
    # the statement's transaction. Then, for each request, each of its windows (the
    # p_counts[r] next entries of p_windows ...) is pruned and counted, and only when every
    # window admits the request is it recorded in each. Returns, per request, the seconds until
    # the first full window admits one, or NULL when admitted. Each statement of a PL/pgSQL
    # function reads what was committed before it started, and what the function wrote before
    # it: a count after the locks sees every request admitted before, this batch's included.
    """CREATE OR REPLACE FUNCTION simplex_service_admit_batch(
        p_service text, p_lock_windows text[], p_lock_keys text[], p_counts integer[],
        p_nows double precision[], p_windows text[], p_keys text[], p_limits integer[],
        p_pers double precision[])
    RETURNS double precision[] LANGUAGE plpgsql AS $$
    DECLARE
        r integer;
        i integer;
        first integer := 1;
        last integer;
        n bigint;
        oldest double precision;
        wait double precision;
        waits double precision[] := '{}';
    BEGIN
        FOR i IN 1 .. cardinality(p_lock_keys) LOOP
            PERFORM pg_advisory_xact_lock(hashtextextended(
                p_service || '|' || p_lock_windows[i] || '|' || p_lock_keys[i], 0));
        END LOOP;
        FOR r IN 1 .. cardinality(p_counts) LOOP
            last := first + p_counts[r] - 1;
            wait := NULL;
            FOR i IN first .. last LOOP
                DELETE FROM simplex_service_rate
                    WHERE service = p_service AND window_name = p_windows[i]
                    AND key = p_keys[i] AND at <= p_nows[r] - p_pers[i];
                SELECT count(*), min(at) INTO n, oldest FROM simplex_service_rate
                    WHERE service = p_service AND window_name = p_windows[i]
                    AND key = p_keys[i];
                IF n >= p_limits[i] AND oldest IS NOT NULL THEN
                    wait := oldest + p_pers[i] - p_nows[r];
                    EXIT;
                END IF;
            END LOOP;
            IF wait IS NULL THEN
                INSERT INTO simplex_service_rate (service, window_name, key, at)
                    SELECT p_service, p_windows[j], p_keys[j], p_nows[r]
                    FROM generate_series(first, last) AS j;
            END IF;
            waits := array_append(waits, wait);
            first := last + 1;
        END LOOP;
        RETURN waits;
    END
    $$""",
)
#: The advisory lock that makes two replicas creating the tables at once take turns:
#: CREATE ... IF NOT EXISTS alone can still fail on a concurrent create in PostgreSQL.
_SCHEMA_LOCK: Final = 0x53494D504C4558


def check_service_name(service: str) -> str:
    """``service`` when it is a usable service name, else :class:`BotConfigError`.

    Lower-case letters, digits, ``.``, ``_`` and ``-``, 1 to 63 characters, starting with a
    letter or digit.
    """
    if not isinstance(service, str) or _SERVICE_NAME.fullmatch(service) is None:
        raise BotConfigError(
            "a service name is 1 to 63 lower-case letters, digits, '.', '_' or '-'",
            code="bad_setting",
            argument="service",
        )
    return service


@dataclass(frozen=True, slots=True)
class Replica:
    """One live replica of a service, as recorded in the shared database.

    Attributes:
        replica: the replica's own name (random, kept in its data folder).
        address: its contact address link.
        display_name: its profile's display name.
        seen_at: its last heartbeat, seconds since the Unix epoch.
    """

    replica: str
    address: str
    display_name: str
    seen_at: float


class SharedState:
    """The shared tables of one service on one PostgreSQL database.

    Args:
        url: the database URL (``postgresql://...``; see ``task_database_url``).
        service: the service's name (see :func:`check_service_name`).
        clock: the bot's clock; its wall time stamps rows.

    Raises:
        BotConfigError: ``bad_setting`` for a URL that is not PostgreSQL.
        BindingConfigError: the URL cannot be used (for example the driver is missing).
    """

    def __init__(self, url: str | os.PathLike[str], service: str, *, clock: Clock) -> None:
        from simplex_protocols.bindings._a2a_store import task_database_url

        self.service = check_service_name(service)
        self.url = task_database_url(url)
        if not self.url.startswith("postgresql+"):
            raise BotConfigError(
                "replicas of a service share a PostgreSQL database (postgresql://...)",
                code="bad_setting",
                argument="task_database",
            )
        self.clock = clock
        self._engine: AsyncEngine | None = None

    @property
    def engine(self) -> AsyncEngine:
        """The engine, once :meth:`open` has run."""
        if self._engine is None:
            raise RuntimeError("the shared state is not open")
        return self._engine

    async def open(self) -> None:
        """Connect and create the tables when missing (raises the driver's error when down)."""
        from sqlalchemy import text

        from simplex_protocols.bindings._a2a_store import _create_engine

        self._engine = _create_engine(self.url)
        async with self._engine.begin() as conn:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK})
            for statement in _SCHEMA:
                await conn.execute(text(statement))

    async def close(self) -> None:
        """Close the engine's connections."""
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None

    async def request_state_secret(
        self, random_bytes: Callable[[int], bytes] = os.urandom
    ) -> bytes:
        """The service's ``requestState`` key: the one stored, or ``random_bytes`` stored first.

        Race-free: INSERT ... ON CONFLICT DO NOTHING, then SELECT; whichever replica inserts
        first, every replica reads the same key (MCP-MSG-6).
        """
        from sqlalchemy import text

        async with self.engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO simplex_service_secrets (service, secret) VALUES (:s, :k) "
                    "ON CONFLICT (service) DO NOTHING"
                ),
                {"s": self.service, "k": random_bytes(_SECRET_BYTES)},
            )
            row = await conn.execute(
                text("SELECT secret FROM simplex_service_secrets WHERE service = :s"),
                {"s": self.service},
            )
            return bytes(row.scalar_one())

    async def heartbeat(self, replica: str, address: str, display_name: str) -> None:
        """Record that ``replica`` serves at ``address`` now (inserted or updated)."""
        from sqlalchemy import text

        async with self.engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO simplex_service_replicas "
                    "(service, replica, address, display_name, seen_at) "
                    "VALUES (:s, :r, :a, :n, :t) ON CONFLICT (service, replica) DO UPDATE SET "
                    "address = EXCLUDED.address, display_name = EXCLUDED.display_name, "
                    "seen_at = EXCLUDED.seen_at"
                ),
                {
                    "s": self.service,
                    "r": replica,
                    "a": address,
                    "n": display_name,
                    "t": self.clock.wall(),
                },
            )

    async def leave(self, replica: str) -> None:
        """Remove ``replica`` from the list (it stops)."""
        from sqlalchemy import text

        async with self.engine.begin() as conn:
            await conn.execute(
                text("DELETE FROM simplex_service_replicas WHERE service = :s AND replica = :r"),
                {"s": self.service, "r": replica},
            )

    async def replicas(self, stale_after_s: float = STALE_AFTER_S) -> list[Replica]:
        """The replicas seen within ``stale_after_s`` seconds, in the order of their names."""
        from sqlalchemy import text

        async with self.engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT replica, address, display_name, seen_at "
                    "FROM simplex_service_replicas WHERE service = :s AND seen_at > :t "
                    "ORDER BY replica"
                ),
                {"s": self.service, "t": self.clock.wall() - stale_after_s},
            )
            return [Replica(str(r[0]), str(r[1]), str(r[2]), float(r[3])) for r in rows]

    def rate_counter(self) -> SharedRateCounter:
        """A rate counter on this database for the service's Service RPC responder."""
        return SharedRateCounter(self)


class SharedRateCounter:
    """A :class:`~simplex_protocols.transports.service_rpc.RateCounter` in PostgreSQL.

    A sliding window per key as rows of admitted requests, counted by the database's function
    ``simplex_service_admit_batch``: it takes an advisory lock per window (in a fixed order, so
    two statements never wait on each other in a cycle), and for each request prunes its
    windows' rows that left them, counts the rest and inserts one row per limit when every
    limit admits it. The locks end with the statement.

    Requests are sent in batches, one statement at a time per replica: a request that comes
    while a statement is on its way waits for it to come back, and goes with every other that
    came meanwhile in the next statement, admitted in the order they came. A lone request is
    one statement of its own, as soon as it comes; a burst costs a round trip per batch rather
    than per request.

    When the database cannot be reached during a run, the request is counted in this process
    instead (a warning is logged): the limit then holds per replica until the database is
    back, rather than every call failing.
    """

    def __init__(self, state: SharedState) -> None:
        self._state = state
        self._fallback = MemoryRateCounter()
        self._warned = False
        self._longest_s = 0.0
        #: Requests that came and are not yet sent, in the order they came.
        self._waiting: list[_Admission] = []
        #: Set when the statement on its way comes back; ``None`` when none is.
        self._sent: anyio.Event | None = None

    async def prune(self) -> None:
        """Delete the rows of keys no request has come for since their window ended."""
        from sqlalchemy import text

        async with self._state.engine.begin() as conn:
            await conn.execute(
                text("DELETE FROM simplex_service_rate WHERE service = :s AND at <= :start"),
                {"s": self._state.service, "start": self._state.clock.wall() - self._longest_s},
            )

    async def admit(
        self, checks: Sequence[tuple[str, RateLimit]], *, now: float, wall: float
    ) -> int | None:
        """See ``RateCounter.admit``; counted on ``wall``."""
        self._longest_s = max([self._longest_s, *(limit.per_s for _, limit in checks)])
        try:
            retry = await self._admit(checks, wall)
        except Exception as exc:  # the database is away: count here until it is back
            if not self._warned:
                logger.warning(
                    "the shared rate counter is unavailable (%s); counting in this process",
                    type(exc).__name__,
                )
                self._warned = True
            return self._fallback.admit_now(checks, now)
        self._warned = False
        return retry

    async def _admit(self, checks: Sequence[tuple[str, RateLimit]], wall: float) -> int | None:
        # Keys are stored as hex: the responder's own keys start with NUL, which text refuses.
        # Sorted, as the locks are.
        named = sorted(
            {
                (_window_name(limit), key.encode("utf-8", "surrogatepass").hex(), limit)
                for key, limit in checks
            }
        )
        if not named:
            return None
        admission = _Admission(named, wall)
        self._waiting.append(admission)
        try:
            while not admission.done:
                sent = self._sent
                if sent is None:
                    await self._send_waiting()
                else:
                    await sent.wait()
        except BaseException:
            # Cancelled before it was sent: it is counted nowhere.
            if admission in self._waiting:
                self._waiting.remove(admission)
            raise
        if admission.error is not None:
            raise admission.error
        seconds = admission.seconds
        if seconds is None:
            return None
        # The oldest request in the full window leaves it after this many seconds, at most a
        # window on: a replica whose clock runs ahead may have stamped requests "later" than
        # this one's time.
        longest = max(limit.per_s for _, _, limit in named)
        return max(1, math.ceil(min(seconds, longest)))

    async def _send_waiting(self) -> None:
        """Send the requests waiting, up to :data:`_BATCH_MAX`, in one statement; each gets its
        answer or the statement's error."""
        batch, self._waiting = self._waiting[:_BATCH_MAX], self._waiting[_BATCH_MAX:]
        sent = self._sent = anyio.Event()
        error: Exception = RuntimeError("the shared rate counter's statement was cut short")
        try:
            # Shielded: the batch holds other requests than this task's, which a cancellation
            # of this one must not leave without an answer. Bounded, so that a database that
            # stops answering neither holds a shutdown nor the requests for long.
            with anyio.CancelScope(shield=True), anyio.fail_after(_BATCH_TIMEOUT_S):
                answers = await self._run(batch)
            for admission, seconds in zip(batch, answers, strict=True):
                admission.seconds = seconds
                admission.done = True
        except Exception as exc:
            error = exc
        finally:
            # Whatever stopped the statement, no request of it goes on as if it was admitted.
            for admission in batch:
                if not admission.done:
                    admission.error = error
                    admission.done = True
            self._sent = None
            sent.set()

    async def _run(self, batch: Sequence[_Admission]) -> list[float | None]:
        locks = sorted({(name, key) for admission in batch for name, key, _ in admission.named})
        named = [entry for admission in batch for entry in admission.named]
        arguments = (
            self._state.service,
            [name for name, _ in locks],
            [key for _, key in locks],
            [len(admission.named) for admission in batch],
            [admission.wall for admission in batch],
            [name for name, _, _ in named],
            [key for _, key, _ in named],
            [limit.requests for _, _, limit in named],
            [float(limit.per_s) for _, _, limit in named],
        )
        async with self._state.engine.connect() as conn:
            raw = await conn.get_raw_connection()
            driver = raw.driver_connection
            if self._state.url.startswith("postgresql+asyncpg"):
                # asyncpg itself, for its cache of prepared statements; it runs one statement
                # outside a transaction block without BEGIN and COMMIT.
                seconds = await driver.fetchval(  # type: ignore[union-attr]
                    "SELECT simplex_service_admit_batch($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                    *arguments,
                )
            else:  # another PostgreSQL driver: the same statement through SQLAlchemy
                from sqlalchemy import text

                auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
                names = ("s", "lw", "lk", "c", "t", "w", "k", "n", "p")
                result = await auto.execute(
                    text(
                        "SELECT simplex_service_admit_batch(:s, CAST(:lw AS text[]), "
                        "CAST(:lk AS text[]), CAST(:c AS integer[]), "
                        "CAST(:t AS double precision[]), CAST(:w AS text[]), "
                        "CAST(:k AS text[]), CAST(:n AS integer[]), "
                        "CAST(:p AS double precision[]))"
                    ),
                    dict(zip(names, arguments, strict=True)),
                )
                seconds = result.scalar_one()
        if not isinstance(seconds, list) or len(seconds) != len(batch):
            raise RuntimeError("the shared rate counter's answer does not match its batch")
        return [None if s is None else float(s) for s in seconds]


@dataclass(eq=False, slots=True)
class _Admission:
    """One request to count: its windows, sorted; its time; and, once its batch is back, its
    answer (seconds until a full window admits one, ``None`` when admitted) or the error."""

    named: list[tuple[str, str, RateLimit]]
    wall: float
    done: bool = False
    seconds: float | None = None
    error: Exception | None = None


def _window_name(limit: RateLimit) -> str:
    # Keys are counted under their own limit: two limits never share a window.
    return f"{limit.requests}/{limit.per_s!r}"


class ReplicaPresence:
    """This replica's row in the registry, kept fresh while the bot serves.

    :meth:`join` records the replica's address and reads the live replicas; :meth:`run`
    repeats that every :data:`HEARTBEAT_S` seconds (and prunes the rate windows) until it is
    cancelled; :meth:`leave` removes the row when the bot stops. ``on_change`` is called with
    the live replicas whenever they differ from the last ones read (this one first).

    The database being away during a run is a warning, not a stop: the bot keeps serving with
    the replicas it knew, and its row goes stale at the others until the database is back.
    """

    def __init__(
        self,
        state: SharedState,
        replica: str,
        display_name: str,
        on_change: Callable[[list[Replica]], None],
        *,
        counter: SharedRateCounter | None = None,
    ) -> None:
        self._state = state
        self.replica = replica
        self._display_name = display_name
        self._on_change = on_change
        self._counter = counter
        self._address: str | None = None
        self._last: list[tuple[str, str, str]] | None = None
        self._warned = False

    async def join(self, address: str) -> None:
        """Record this replica at ``address`` and read the live replicas, which ``on_change``
        gets (raises the driver's error when the database is away)."""
        self._address = address
        await self._beat()

    async def run(self) -> None:
        """Heartbeats until cancelled."""
        while True:
            await self._state.clock.sleep(HEARTBEAT_S)
            try:
                await self._beat()
                if self._counter is not None:
                    await self._counter.prune()
            except Exception as exc:  # the database is away: keep serving, say it once
                if not self._warned:
                    logger.warning(
                        "%s: the shared state of service %s is unavailable (%s); "
                        "the other replicas stop listing this one until it is back",
                        self._display_name,
                        self._state.service,
                        type(exc).__name__,
                    )
                    self._warned = True
            else:
                self._warned = False

    async def leave(self) -> None:
        """Remove this replica from the registry (a warning when the database is away).

        Shielded and bounded (:data:`LEAVE_S`): a second signal that cuts the stop short must
        not leave the row behind, live for a minute, nor wait on a database that hangs.
        """
        try:
            with anyio.move_on_after(LEAVE_S, shield=True) as scope:
                await self._state.leave(self.replica)
            if scope.cancelled_caught:
                raise TimeoutError(f"no answer within {LEAVE_S:.0f} s")
        except Exception as exc:
            logger.warning(
                "%s: could not remove this replica from service %s (%s); it drops out "
                "after %d s without a heartbeat",
                self._display_name,
                self._state.service,
                type(exc).__name__,
                int(STALE_AFTER_S),
            )

    async def _beat(self) -> None:
        assert self._address is not None
        await self._state.heartbeat(self.replica, self._address, self._display_name)
        live = await self._state.replicas()
        # This replica first, the others in the registry's order.
        live.sort(key=lambda r: r.replica != self.replica)
        seen = [(r.replica, r.address, r.display_name) for r in live]
        if seen != self._last:
            self._last = seen
            self._on_change(live)
