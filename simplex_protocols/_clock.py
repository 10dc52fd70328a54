"""Injectable time: a clock is passed to everything that waits, expires or times out.

Production code uses :class:`SystemClock`. Tests use :class:`ManualClock`, whose time moves
only when the test calls :meth:`ManualClock.advance`, so a 30 s timeout or a 180 s response
window is tested without sleeping.
"""

from __future__ import annotations

import heapq
import itertools
import time
from typing import Protocol, runtime_checkable

import anyio

__all__ = ["Clock", "ManualClock", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """What the library needs of time."""

    def now(self) -> float:
        """Seconds on a monotonic scale (only differences matter)."""
        ...

    def wall(self) -> float:
        """Seconds since the Unix epoch, for timestamps shown to people and written to the core."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of this clock's time."""
        ...


class SystemClock:
    """The real clock: :func:`time.monotonic`, :func:`time.time` and :func:`anyio.sleep`."""

    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(max(0.0, seconds))


class ManualClock:
    """A clock that moves only when told to.

    ``sleep`` blocks until :meth:`advance` moves time past its deadline. ``wall`` starts at
    ``wall_start`` (2026-10-17 09:00:00 UTC by default) and moves with ``now``.

    Example::

        clock = ManualClock()
        async with anyio.create_task_group() as tg:
            tg.start_soon(something_that_times_out_after_30s, clock)
            await clock.advance(31)
    """

    def __init__(self, start: float = 0.0, wall_start: float = 1_792_227_600.0) -> None:
        self._now = start
        self._wall_offset = wall_start - start
        self._sleepers: list[tuple[float, int, anyio.Event]] = []
        self._abandoned: set[int] = set()
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    def wall(self) -> float:
        return self._now + self._wall_offset

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await anyio.lowlevel.checkpoint()
            return
        event = anyio.Event()
        seq = next(self._seq)
        heapq.heappush(self._sleepers, (self._now + seconds, seq, event))
        try:
            await event.wait()
        finally:
            if not event.is_set():  # cancelled while sleeping: no longer waiting
                self._abandoned.add(seq)

    @property
    def pending_sleepers(self) -> int:
        """How many sleeps are waiting (useful to wait until a task has started waiting)."""
        return sum(
            1 for _, seq, ev in self._sleepers if not ev.is_set() and seq not in self._abandoned
        )

    async def advance(self, seconds: float) -> None:
        """Move time forward, waking every sleeper whose deadline has passed, in order."""
        if seconds < 0:
            raise ValueError("time cannot go backwards")
        target = self._now + seconds
        while self._sleepers and self._sleepers[0][0] <= target:
            deadline, seq, event = heapq.heappop(self._sleepers)
            if seq in self._abandoned:
                self._abandoned.discard(seq)
                continue
            self._now = max(self._now, deadline)
            event.set()
            # Let the woken task run before waking later sleepers, so that chains of sleeps
            # inside the advanced span happen in order.
            for _ in range(5):
                await anyio.lowlevel.checkpoint()
        self._now = target
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
