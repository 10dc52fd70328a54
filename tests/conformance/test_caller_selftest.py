"""The harness proves itself: the reference client passes, every mutant client is killed."""

from __future__ import annotations

import pytest

from simplex_protocols.conformance._model import (
    FAILING_LEVELS,
    CallerOptions,
    CheckRun,
    Mutant,
    Verdict,
    requirement_levels,
)
from simplex_protocols.conformance.caller import all_checks, mutants, run_caller
from simplex_protocols.conformance.caller._mutant_clients import MUTANT_CLIENTS

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = pytest.mark.slow

OK = {Verdict.PASS, Verdict.ACCEPTABLE}
KILLS = {Verdict.FAIL, Verdict.WARN}


@pytest.fixture(scope="module")
def reference_runs() -> list[CheckRun]:
    return run_caller(CallerOptions(builtin="reference", seed=7, timeout_s=15))


def _explain(runs: list[CheckRun]) -> str:
    """The runs that are not green, with the end of their transcripts."""
    lines = []
    for run in runs:
        if run.outcome.verdict not in OK:
            lines.append(f"{run.key}: {run.outcome.verdict} {run.outcome.detail}")
            lines.extend(f"    {entry}" for entry in run.outcome.transcript[-12:])
    return "\n".join(lines)


def test_the_reference_client_passes_every_check(reference_runs: list[CheckRun]) -> None:
    bad = [r for r in reference_runs if r.outcome.verdict not in OK]
    assert not bad, _explain(reference_runs)
    expected = {f"{s.id}@{t}" for s in all_checks() for t in s.transports}
    assert {r.key for r in reference_runs} == expected


def test_the_one_ambiguity_the_reference_meets_is_named(reference_runs: list[CheckRun]) -> None:
    acceptable = [r for r in reference_runs if r.outcome.verdict is Verdict.ACCEPTABLE]
    assert [(r.spec.id, r.outcome.ambiguity) for r in acceptable] == [
        ("caller.rate-limited-without-retry-after", "AMB-10")
    ], _explain(reference_runs)


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
    ], _explain(again) + "\n" + _explain(reference_runs)


def test_the_catalogue_and_the_mutant_clients_agree() -> None:
    names = [m.name for m in mutants()]
    assert len(set(names)) == len(names)
    assert set(names) == set(MUTANT_CLIENTS)
    levels = requirement_levels()
    for mutant in mutants():
        assert mutant.name.startswith("client.") and mutant.description
        assert mutant.requirements and set(mutant.requirements) <= set(levels), mutant.name


#: Which checks kill each mutant client (FAIL, or WARN for SHOULD-level checks), run against
#: the checks of the requirements it switches off, as the selftest runs it.
EXPECTED_KILLS: dict[str, set[str]] = {
    "client.third-party-reply": {"caller.direct-sender-only"},
    "client.unmentioned-member-reply": {"caller.mention-sender-only"},
    "client.drop-text-replies": {"caller.text-replies-kept"},
    "client.match-by-id": {"caller.quote-matching", "caller.mcp-quote-not-id"},
    "client.dedupe-replies": {"caller.every-reply-kept"},
    "client.first-answer-only": {"caller.broadcast-kept-apart"},
    "client.early-return": {"caller.every-reply-kept", "caller.wait-respected"},
    "client.unknown-error-retry": {"caller.unknown-error-final"},
    "client.ignore-retry-after": {
        "caller.retry-after-respected",
        "caller.rate-limited-waits",
        "caller.rate-limited-without-retry-after",
    },
    "client.no-a2a-version": {"caller.a2a-version"},
    "client.credential-in-group": {"caller.no-credential-in-group"},
    "client.envelope-version": {
        "caller.mcp-envelope-without-version",
        "caller.a2a-envelope-without-version",
    },
    "client.envelope-member-in-request": {"caller.rpc-request-equals-call"},
    "client.one-key-for-all": {"caller.key-per-responder"},
    "client.request-key-mismatch": {"caller.request-key-signed"},
    "client.no-meta-revision": {"caller.mcp-revision"},
    "client.jsonrpc-missing": {"caller.mcp-request"},
    "client.params-service-parameters": {"caller.a2a-version", "caller.a2a-request"},
    "client.method-renamed": {"caller.a2a-request"},
    "client.credential-in-metadata": {"caller.credential-as-parameter"},
    "client.no-stream-resume": {"caller.stream-resumed"},
    "client.input-required-reused-id": {"caller.mcp-input-required"},
    "client.split-command": {"caller.command-fits-one-message"},
    "client.double-space": {"caller.command-format"},
    "client.mention-unquoted": {"caller.mention-form"},
    "client.drop-large-replies": {"caller.large-reply-kept", "caller.large-response-read"},
}


def test_every_must_check_has_a_mutant_it_kills() -> None:
    assert set(EXPECTED_KILLS) == {m.name for m in mutants()}
    levels = requirement_levels()
    killing = set().union(*EXPECTED_KILLS.values())
    idle = [
        spec.id
        for spec in all_checks()
        if any(levels[r] in FAILING_LEVELS for r in spec.requirements) and spec.id not in killing
    ]
    assert not idle, f"MUST checks that kill no mutant: {idle}"


@pytest.mark.slow
@pytest.mark.parametrize("mutant", mutants(), ids=lambda m: m.name)
def test_the_mutant_client_is_killed_by_the_checks_of_its_requirements(mutant: Mutant) -> None:
    runs = run_caller(
        CallerOptions(builtin=mutant.name, checks=mutant.requirements, seed=3, timeout_s=15)
    )
    errors = [f"{r.key}: {r.outcome.detail}" for r in runs if r.outcome.verdict is Verdict.ERROR]
    assert not errors, errors
    killers = {
        r.spec.id
        for r in runs
        if r.outcome.verdict in KILLS and set(r.spec.requirements) & set(mutant.requirements)
    }
    seen = ", ".join(f"{r.key}={r.outcome.verdict}: {r.outcome.detail}" for r in runs)
    assert killers == EXPECTED_KILLS[mutant.name], seen
