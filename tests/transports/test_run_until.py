"""``run_until``, the deadline every transport call runs under, on the real and a manual clock.

On the real clock it runs in the caller's task under a cancel scope (no timer task per call);
on any other clock a timer sleeps on that clock. Both give the same answers.
"""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from simplex_protocols._clock import ManualClock, SystemClock
from simplex_protocols.transports._common import run_until

pytestmark = pytest.mark.anyio


async def _tasks() -> int:
    return len(anyio.get_running_tasks())


async def test_on_the_real_clock_a_call_in_time_returns_its_result_in_the_same_task() -> None:
    clock = SystemClock()
    outside = await _tasks()
    seen: list[int] = []

    async def func() -> str:
        seen.append(await _tasks())
        return "done"

    assert await run_until(clock, clock.now() + 5, func) == (True, "done")
    assert seen == [outside]  # no timer task beside the call


async def test_on_the_real_clock_a_call_past_its_deadline_is_cancelled() -> None:
    clock = SystemClock()
    reached_the_end = False

    async def func() -> str:
        nonlocal reached_the_end
        await anyio.sleep(5)
        reached_the_end = True
        return "late"

    with anyio.fail_after(2):
        assert await run_until(clock, clock.now() + 0.01, func) == (False, None)
    assert not reached_the_end


async def test_on_the_real_clock_a_passed_deadline_cancels_at_the_first_wait() -> None:
    clock = SystemClock()

    async def func() -> str:
        await anyio.lowlevel.checkpoint()
        return "ran"

    assert await run_until(clock, clock.now() - 1, func) == (False, None)


@pytest.mark.parametrize("clock", [SystemClock(), ManualClock()], ids=["system", "manual"])
async def test_an_exception_comes_out_unchanged_not_in_a_group(
    clock: SystemClock | ManualClock,
) -> None:
    problem = LookupError("no such thing")

    async def func() -> str:
        await anyio.lowlevel.checkpoint()
        raise problem

    with pytest.raises(LookupError) as info:
        await run_until(clock, clock.now() + 5, func)
    assert info.value is problem


async def test_on_a_manual_clock_the_deadline_is_that_clocks() -> None:
    clock = ManualClock()
    outcome: list[tuple[bool, str | None]] = []
    release = anyio.Event()

    async def func() -> str:
        await release.wait()
        return "released"

    async def run() -> None:
        outcome.append(await run_until(clock, clock.now() + 30, func))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            while clock.pending_sleepers < 1:
                await anyio.lowlevel.checkpoint()
            await clock.advance(29)
            assert outcome == []
            await clock.advance(2)
    assert outcome == [(False, None)]
