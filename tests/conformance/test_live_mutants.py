"""The live checks catch every mutant bot, and every MUST check catches one.

Mirrors the selftest's rule: each mutant runs with the checks of its own requirements, and a
``FAIL`` or ``WARN`` of a check naming one of them kills it.
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from simplex_protocols.conformance._model import (
    FAILING_LEVELS,
    CheckRun,
    LiveOptions,
    Mutant,
    Verdict,
    requirement_levels,
)
from simplex_protocols.conformance.live import all_checks, mutants, run_bot_async

KILLS = (Verdict.FAIL, Verdict.WARN)


def _killers(mutant: Mutant, runs: list[CheckRun]) -> list[CheckRun]:
    return [
        r
        for r in runs
        if r.outcome.verdict in KILLS and set(r.spec.requirements) & set(mutant.requirements)
    ]


@pytest.fixture(scope="module")
def kill_matrix() -> Iterator[dict[str, list[CheckRun]]]:
    """Every mutant run once with its own requirements' checks (about 15 s in all)."""

    async def run_all() -> dict[str, list[CheckRun]]:
        out: dict[str, list[CheckRun]] = {}
        for mutant in mutants():
            out[mutant.name] = await run_bot_async(
                LiveOptions(builtin=mutant.name, seed=1, checks=mutant.requirements)
            )
        return out

    yield anyio.run(run_all, backend="asyncio")


@pytest.mark.parametrize("mutant", mutants(), ids=lambda m: m.name)
def test_each_mutant_is_killed_by_a_check_of_its_requirements(
    mutant: Mutant, kill_matrix: dict[str, list[CheckRun]]
) -> None:
    runs = kill_matrix[mutant.name]
    killers = _killers(mutant, runs)
    seen = [(r.key, r.outcome.verdict.value, r.outcome.detail) for r in runs]
    assert killers, f"{mutant.name} survived: {seen}"
    assert not [r for r in runs if r.outcome.verdict is Verdict.ERROR], seen


def test_every_must_check_kills_a_mutant_or_records_why_not(
    kill_matrix: dict[str, list[CheckRun]],
) -> None:
    levels = requirement_levels()
    killed: set[str] = set()
    for mutant in mutants():
        killed |= {r.spec.id for r in _killers(mutant, kill_matrix[mutant.name])}
    unkilled = [
        spec.id
        for spec in all_checks()
        if any(levels.get(r) in FAILING_LEVELS for r in spec.requirements)
        and spec.id not in killed
        and not spec.mutation_exempt
    ]
    assert unkilled == []


def test_failures_carry_a_transcript_and_a_reproducer(
    kill_matrix: dict[str, list[CheckRun]],
) -> None:
    [run] = [
        r
        for r in kill_matrix["bot.reply-without-quote"]
        if r.key == "chat.reply-quotes-command@chat"
    ]
    assert run.outcome.verdict is Verdict.FAIL
    assert run.outcome.reproduce is not None
    assert run.outcome.reproduce.startswith("simplex-call ")
    assert "--transport chat" in run.outcome.reproduce
    entries = run.outcome.transcript
    assert [e["dir"] for e in entries if e["dir"] != "note"][:2] == ["out", "in"]
    replies = [e for e in entries if e["dir"] == "in"]
    assert replies and all(e.get("quotes") is None for e in replies)


def test_envelope_failures_reproduce_with_the_raw_request(
    kill_matrix: dict[str, list[CheckRun]],
) -> None:
    [run] = [
        r
        for r in kill_matrix["bot.accepts-mismatched-request-key"]
        if r.key == "rpc.request-key-mismatch@rpc"
    ]
    assert run.outcome.verdict is Verdict.FAIL
    assert run.outcome.reproduce is not None and "requestKey" in run.outcome.reproduce
    sent = [e for e in run.outcome.transcript if e["dir"] == "out"]
    assert sent[0]["signed"] is True
    assert sent[0]["request"]["requestKey"] != sent[0]["signer"]


def test_the_catalogue_names_known_requirements_once_each() -> None:
    levels = requirement_levels()
    names = [m.name for m in mutants()]
    assert len(names) == len(set(names))
    for mutant in mutants():
        assert mutant.name.startswith("bot.")
        assert mutant.requirements and all(r in levels for r in mutant.requirements)
        assert mutant.description
