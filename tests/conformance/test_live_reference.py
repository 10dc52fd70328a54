"""The live suite against our reference bot on the simulated network: everything applicable
passes, on both transports, in both profiles, the same way on every run."""

from __future__ import annotations

from collections import Counter

import pytest

from simplex_protocols.conformance._model import CheckRun, LiveOptions, Profile, Verdict
from simplex_protocols.conformance.live import all_checks, run_bot_async

pytestmark = pytest.mark.anyio

#: Checks that do not apply to the reference bot, and why: it is not a business address, and
#: the suite's test group declares no protocols.
EXPECTED_NA = {
    "decl.business-chat@chat": "not a business address",
    "decl.business-chat-answers@chat": "not a business address",
    "decl.group-preferences@chat": "no group preferences with protocols",
}


def _not_green(runs: list[CheckRun]) -> list[str]:
    return [
        f"{r.key} {r.outcome.verdict.value}: {r.outcome.detail}"
        for r in runs
        if r.outcome.verdict not in (Verdict.PASS, Verdict.NA)
    ]


async def test_the_reference_bot_passes_every_applicable_fixture_check() -> None:
    runs = await run_bot_async(LiveOptions(builtin="reference", seed=3))
    assert _not_green(runs) == []
    na = {r.key for r in runs if r.outcome.verdict is Verdict.NA}
    assert na == set(EXPECTED_NA)
    transports = Counter(r.transport for r in runs if r.outcome.verdict is Verdict.PASS)
    assert transports["chat"] >= 25 and transports["rpc"] >= 25
    # Every check of the catalogue ran, on each of its transports.
    expected = {f"{spec.id}@{t}" for spec in all_checks() for t in spec.transports}
    assert {r.key for r in runs} == expected


async def test_the_reference_bot_passes_the_black_box_profile() -> None:
    runs = await run_bot_async(LiveOptions(builtin="reference", seed=3, profile=Profile.BLACKBOX))
    assert _not_green(runs) == []
    assert all(Profile.BLACKBOX in r.spec.profiles for r in runs)
    assert sum(1 for r in runs if r.outcome.verdict is Verdict.PASS) >= 40


async def test_seeded_reruns_give_identical_verdicts() -> None:
    first = await run_bot_async(LiveOptions(builtin="reference", seed=5))
    again = await run_bot_async(LiveOptions(builtin="reference", seed=5))
    other_seed = await run_bot_async(LiveOptions(builtin="reference", seed=6))
    fingerprint = [(r.key, r.outcome.verdict, r.outcome.detail) for r in first]
    assert fingerprint == [(r.key, r.outcome.verdict, r.outcome.detail) for r in again]
    assert [(r.key, r.outcome.verdict) for r in first] == [
        (r.key, r.outcome.verdict) for r in other_seed
    ]


async def test_passing_runs_keep_their_transcripts() -> None:
    runs = await run_bot_async(LiveOptions(builtin="reference", seed=3, checks=("mcp.discover",)))
    assert [r.key for r in runs] == ["mcp.discover@chat", "mcp.discover@rpc"]
    for run in runs:
        directions = [e["dir"] for e in run.outcome.transcript]
        assert "out" in directions and "in" in directions
        assert all(isinstance(e["t"], float) for e in run.outcome.transcript)
