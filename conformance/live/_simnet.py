"""The simulated network as a live run uses it.

:class:`QuietNetwork` is a :class:`SimNetwork` whose idle backends stay idle. In simulators
where every backend waiting for frames pumps the network when it wakes, and every pump wakes
every waiting backend, two or more backends wake each other for ever, even when nothing moves.
That costs CPU with the system clock, and with the run's manual clock it keeps the event loop
busy, so the clock driver would never see it idle. Here a backend pumps only when its deadline
passed (a delivery or a timeout fell due); a wake-up from another backend's pump needs no pump
of its own, since that pump already moved everything that could move. A simulator that waits
this way already is used as it is.
"""

from __future__ import annotations

import anyio

from simplex_protocols.sim import SimNetwork

__all__ = ["QuietNetwork"]


class QuietNetwork(SimNetwork):
    """A :class:`SimNetwork` without the wake-up loop between idle backends."""

    async def wait_changed(self) -> None:
        waiters = getattr(self, "_waiters", None)
        if not isinstance(waiters, list):
            # A simulator whose waiting backends do not wake each other: nothing to change.
            await super().wait_changed()
            return
        event = anyio.Event()
        waiters.append(event)
        deadline = self.next_deadline()
        if deadline is None:
            await event.wait()
            return
        delay = max(0.0, deadline - self.clock.now())
        fell_due = False
        async with anyio.create_task_group() as tg:

            async def sleeper() -> None:
                nonlocal fell_due
                await self.clock.sleep(delay)
                fell_due = True
                event.set()

            tg.start_soon(sleeper)
            await event.wait()
            tg.cancel_scope.cancel()
        if fell_due:
            self.pump()
