"""The simulator's table of Service RPC calls waiting for a response, and their deadlines."""

from __future__ import annotations

import random

from simplex_protocols.sim._delivery import ServiceCall, ServiceCalls


def _call(call_id: str, deadline: float) -> ServiceCall:
    return ServiceCall(
        call_id=call_id,
        core="alice",
        session=None,
        corr_id=call_id,
        user_id=1,
        deadline=deadline,
        router="smp1",
    )


def test_the_earliest_deadline_skips_answered_calls() -> None:
    calls = ServiceCalls()
    assert calls.earliest_deadline() is None
    for n, deadline in enumerate([30.0, 10.0, 20.0]):
        calls[f"c{n}"] = _call(f"c{n}", deadline)
    assert calls.earliest_deadline() == 10.0
    assert calls.pop("c1").deadline == 10.0  # answered: taken out as the simulator does
    assert calls.earliest_deadline() == 20.0
    del calls["c2"]
    assert calls.earliest_deadline() == 30.0
    calls.clear()
    assert calls.earliest_deadline() is None


def test_pop_due_takes_out_exactly_the_calls_past_their_deadline_earliest_first() -> None:
    calls = ServiceCalls()
    for n, deadline in enumerate([5.0, 1.0, 9.0, 1.0, 3.0]):
        calls[f"c{n}"] = _call(f"c{n}", deadline)
    assert [c.call_id for c in calls.pop_due(3.0)] == ["c1", "c3", "c4"]
    assert sorted(calls) == ["c0", "c2"]
    assert calls.pop_due(4.9) == []
    assert [c.call_id for c in calls.pop_due(100.0)] == ["c0", "c2"]
    assert not calls


def test_a_call_replaced_under_its_id_keeps_only_its_new_deadline() -> None:
    calls = ServiceCalls()
    calls["c"] = _call("c", 1.0)
    calls["c"] = _call("c", 50.0)
    assert calls.earliest_deadline() == 50.0
    assert calls.pop_due(10.0) == []
    calls.update({"d": _call("d", 2.0)})
    calls.setdefault("e", _call("e", 3.0))
    assert [c.call_id for c in calls.pop_due(60.0)] == ["d", "e", "c"]


def test_it_agrees_with_a_scan_of_every_call_under_random_traffic() -> None:
    rng = random.Random(16)
    calls = ServiceCalls()
    now = 0.0
    for step in range(5000):
        now += rng.random()
        if rng.random() < 0.55 or not calls:
            calls[f"c{step}"] = _call(f"c{step}", now + rng.uniform(0, 40))
        else:
            calls.pop(rng.choice(list(calls)))
        if step % 7 == 0:
            expected = sorted(c.call_id for c in calls.values() if c.deadline <= now)
            assert sorted(c.call_id for c in calls.pop_due(now)) == expected
        scanned = min((c.deadline for c in calls.values()), default=None)
        assert calls.earliest_deadline() == scanned
        # Answered calls do not pile up: the heap stays in proportion to the calls waiting.
        assert len(calls._heap) <= 2 * len(calls) + 65
