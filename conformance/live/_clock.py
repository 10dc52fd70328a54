"""Time for a live run on the simulated network: a manual clock that a driver moves only when
nothing else can.

A run against the simulator uses a :class:`SteppedClock` (a
:class:`~simplex_protocols._clock.ManualClock` that knows its next deadline) shared by the
simulated network, the bot under test and the suite. :func:`drive_clock` runs beside the
checks: whenever the event loop has nothing ready to run (every task waits, on the clock or on
another task), it moves the clock to the earliest pending deadline. A 30 s wait, the 180 s
response window or a slow fixture tool then cost no real time, and the order of events is the
same on every run: the event loop is first in, first out, the simulator does no I/O, and time
moves only at points where the whole system is waiting.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import anyio
import anyio.lowlevel

from simplex_protocols._clock import ManualClock

__all__ = ["SteppedClock", "drive_clock", "settle"]

#: How many consecutive idle observations make the loop idle (a task woken by the last
#: checkpoint may schedule more work only on its next step).
_IDLE_ROUNDS = 3

#: Rounds after which :func:`settle` stops waiting for an idle loop: a task that polls (wakes
#: itself with checkpoints) would otherwise hold the clock still for ever.
_MAX_ROUNDS = 20_000

#: Real seconds to wait when the loop is idle and nothing waits on the clock either (only
#: something outside the loop, a thread or a socket, can move then).
_OUTSIDE_POLL_S = 0.0005


class SteppedClock(ManualClock):
    """A :class:`ManualClock` that knows the earliest deadline of its pending sleeps."""

    def __init__(self, start: float = 0.0, wall_start: float = 1_792_227_600.0) -> None:
        super().__init__(start, wall_start)
        self._waiting: Counter[float] = Counter()

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await super().sleep(seconds)
            return
        deadline = self.now() + seconds
        self._waiting[deadline] += 1
        try:
            await super().sleep(seconds)
        finally:
            self._waiting[deadline] -= 1
            if self._waiting[deadline] <= 0:
                del self._waiting[deadline]

    def next_deadline(self) -> float | None:
        """The earliest deadline a sleep waits for, or ``None`` when nothing waits."""
        return min(self._waiting) if self._waiting else None


def _loop_has_ready_work() -> bool:
    # asyncio's loop keeps the callbacks ready to run in ``_ready``; another loop
    # implementation is assumed busy, and the round limit decides.
    loop = asyncio.get_running_loop()
    ready = getattr(loop, "_ready", None)
    return ready is None or len(ready) > 0


async def settle() -> None:
    """Return once the event loop has had nothing else to run for a few rounds (or after
    :data:`_MAX_ROUNDS` rounds, when something keeps it busy).

    Only one task may settle at a time: two would each see the other ready to run.
    """
    idle = 0
    for _ in range(_MAX_ROUNDS):
        if idle >= _IDLE_ROUNDS:
            return
        await anyio.lowlevel.checkpoint()
        idle = 0 if _loop_has_ready_work() else idle + 1


async def drive_clock(clock: SteppedClock) -> None:
    """Move ``clock`` to each pending deadline whenever the event loop is idle; runs until
    cancelled."""
    while True:
        await settle()
        deadline = clock.next_deadline()
        if deadline is None:
            await anyio.sleep(_OUTSIDE_POLL_S)
            continue
        await clock.advance(max(0.0, deadline - clock.now()))
