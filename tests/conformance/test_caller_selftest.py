"""The harness proves itself: the reference client passes, every mutant client is killed."""

from __future__ import annotations

from collections.abc import Mapping

import anyio
import pytest

from conformance._model import (
    FAILING_LEVELS,
    CallerOptions,
    CheckRun,
    Verdict,
    requirement_levels,
)
from conformance.caller import all_checks, mutants, run_caller, run_caller_async
from conformance.caller._mutant_clients import MUTANT_CLIENTS

OK = {Verdict.PASS, Verdict.ACCEPTABLE}
KILLS = {Verdict.FAIL, Verdict.WARN}


@pytest.fixture(scope="module")
def reference_runs() -> list[CheckRun]:
    return run_caller(CallerOptions(builtin="reference", seed=7, timeout_s=15))


def test_the_reference_client_passes_every_check(reference_runs: list[CheckRun]) -> None:
    bad = [
        f"{r.key}: {r.outcome.verdict} {r.outcome.detail}"
        for r in reference_runs
        if r.outcome.verdict not in OK
    ]
    assert not bad, "\n".join(bad)
    expected = {f"{s.id}@{t}" for s in all_checks() for t in s.transports}
    assert {r.key for r in reference_runs} == expected


def test_the_one_ambiguity_the_reference_meets_is_named(reference_runs: list[CheckRun]) -> None:
    acceptable = [r for r in reference_runs if r.outcome.verdict is Verdict.ACCEPTABLE]
    assert [(r.spec.id, r.outcome.ambiguity) for r in acceptable] == [
        ("caller.rate-limited-without-retry-after", "AMB-10")
    ]


def test_runs_carry_transcripts_and_the_scenarios_they_read(reference_runs: list[CheckRun]) -> None:
    for run in reference_runs:
        assert run.outcome.evidence["scenarios"]
        assert run.outcome.transcript and all(
            "t" in e and "dir" in e for e in run.outcome.transcript
        )
    # the credential given to the client never reaches a transcript
    assert not any("conformance-credential" in str(r.outcome.transcript) for r in reference_runs)


def test_verdicts_are_the_same_on_a_rerun_with_the_same_seed(
    reference_runs: list[CheckRun],
) -> None:
    again = run_caller(CallerOptions(builtin="reference", seed=7, timeout_s=15))
    assert [(r.key, r.outcome.verdict) for r in again] == [
        (r.key, r.outcome.verdict) for r in reference_runs
    ]


def test_the_catalogue_and_the_mutant_clients_agree() -> None:
    names = [m.name for m in mutants()]
    assert len(set(names)) == len(names)
    assert set(names) == set(MUTANT_CLIENTS)
    levels = requirement_levels()
    for mutant in mutants():
        assert mutant.name.startswith("client.") and mutant.description
        assert mutant.requirements and set(mutant.requirements) <= set(levels), mutant.name


@pytest.fixture(scope="module")
def mutant_runs() -> Mapping[str, list[CheckRun]]:
    """Every mutant against the checks of its requirements, two mutants at a time."""
    results: dict[str, list[CheckRun]] = {}

    async def main() -> None:
        limiter = anyio.CapacityLimiter(2)

        async def one(name: str, requirements: tuple[str, ...]) -> None:
            async with limiter:
                options = CallerOptions(builtin=name, checks=requirements, seed=3, timeout_s=15)
                results[name] = await run_caller_async(options)

        async with anyio.create_task_group() as tg:
            for mutant in mutants():
                tg.start_soon(one, mutant.name, mutant.requirements)

    anyio.run(main)
    return results


@pytest.mark.slow
def test_every_mutant_client_is_killed(mutant_runs: Mapping[str, list[CheckRun]]) -> None:
    survivors = []
    for mutant in mutants():
        runs = mutant_runs[mutant.name]
        killed = [
            r
            for r in runs
            if r.outcome.verdict in KILLS and set(r.spec.requirements) & set(mutant.requirements)
        ]
        errors = [
            f"{r.key}: {r.outcome.detail}" for r in runs if r.outcome.verdict is Verdict.ERROR
        ]
        assert not errors, f"{mutant.name}: {errors}"
        if not killed:
            seen = ", ".join(f"{r.key}={r.outcome.verdict}" for r in runs)
            survivors.append(f"{mutant.name} ({', '.join(mutant.requirements)}): {seen}")
    assert not survivors, "\n".join(survivors)


@pytest.mark.slow
def test_every_must_check_kills_a_mutant(mutant_runs: Mapping[str, list[CheckRun]]) -> None:
    levels = requirement_levels()
    killers: dict[str, set[str]] = {}
    for name, runs in mutant_runs.items():
        for run in runs:
            if run.outcome.verdict in KILLS:
                killers.setdefault(run.spec.id, set()).add(name)
    idle = [
        spec.id
        for spec in all_checks()
        if any(levels[r] in FAILING_LEVELS for r in spec.requirements) and spec.id not in killers
    ]
    assert not idle, f"MUST checks that kill no mutant: {idle}"
