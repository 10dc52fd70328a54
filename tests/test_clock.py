"""The injectable clocks."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from simplex_protocols._clock import Clock, ManualClock, SystemClock


def test_both_clocks_satisfy_the_protocol() -> None:
    assert isinstance(SystemClock(), Clock)
    assert isinstance(ManualClock(), Clock)


@pytest.mark.anyio
async def test_manual_clock_wakes_sleepers_in_deadline_order() -> None:
    clock = ManualClock()
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append((name, clock.now()))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(sleeper, "late", 30)
            tg.start_soon(sleeper, "early", 10)
            while clock.pending_sleepers < 2:
                await anyio.lowlevel.checkpoint()
            await clock.advance(9)
            assert woke == []
            await clock.advance(21)
    assert woke == [("early", 10), ("late", 30)]
    assert clock.now() == 30


@pytest.mark.anyio
async def test_manual_clock_fail_after_style_timeout() -> None:
    clock = ManualClock()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            timed_out = anyio.Event()

            async def waiter() -> None:
                await clock.sleep(30)
                timed_out.set()

            tg.start_soon(waiter)
            await anyio.lowlevel.checkpoint()
            await clock.advance(31)
            await timed_out.wait()


def test_wall_moves_with_now() -> None:
    clock = ManualClock(wall_start=1000.0)
    assert clock.wall() == 1000.0


@pytest.mark.anyio
async def test_time_cannot_go_backwards() -> None:
    with pytest.raises(ValueError, match="backwards"):
        await ManualClock().advance(-1)


@pytest.mark.anyio
async def test_cancelled_sleeps_are_not_pending() -> None:
    clock = ManualClock()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(clock.sleep, 10)
            while clock.pending_sleepers < 1:
                await anyio.lowlevel.checkpoint()
            tg.cancel_scope.cancel()
    assert clock.pending_sleepers == 0
    await clock.advance(20)
    assert clock.now() == 20
