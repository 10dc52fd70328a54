"""The selftest's orchestration, against stand-in runners: reference gates, the mutant kill
matrix (survivors, MUST checks that kill nothing, exemptions), determinism over reruns, missing
runners, and `simplex-conformance selftest` with its report."""

from __future__ import annotations

import io
import json
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from simplex_protocols.conformance._model import (
    CallerOptions,
    CheckRun,
    CheckSpec,
    ClockMode,
    LiveOptions,
    Mutant,
    Outcome,
    Verdict,
)
from simplex_protocols.conformance._report import ExitCode, report_schema
from simplex_protocols.conformance._selftest import SelftestOptions, run_selftest
from simplex_protocols.conformance.cli import main

CHECKS = [
    CheckSpec("grp.mention", "t", ("CALL-GRP-1",), transports=("chat",)),
    CheckSpec("rpc.key-mismatch", "t", ("RPC-SIG-3",), transports=("rpc",)),
    CheckSpec("rpc.key-per-responder", "t", ("RPC-SIG-5",), transports=("rpc",)),
]
NONE: dict[str, Any] = {"requirements": {}, "vectors_one_sided": {}, "unkilled_checks": {}}


class Runner:
    """A stand-in for simplex_protocols.conformance.live: a reference that passes, mutants that break one check."""

    def __init__(
        self, checks: list[CheckSpec], mutants: dict[str, tuple[str, ...]], breaks: dict[str, str]
    ) -> None:
        self.checks = checks
        self.catalogue = [
            Mutant(n, reqs, f"switches off {', '.join(reqs)}") for n, reqs in mutants.items()
        ]
        self.breaks = breaks  # mutant -> the check it makes fail
        self.calls: list[Any] = []
        self.flip = False  # makes the reference alternate (a nondeterministic target)

    def run(self, options: Any) -> list[CheckRun]:
        self.calls.append(options)
        from simplex_protocols.conformance._model import matches_filter

        out = []
        for spec in self.checks:
            if not matches_filter(spec, options.checks):
                continue
            verdict = Verdict.PASS
            if options.builtin != "reference" and self.breaks.get(options.builtin) == spec.id:
                verdict = Verdict.FAIL
            if options.builtin == "reference" and self.flip and spec.id == "grp.mention":
                verdict = Verdict.PASS if len(self.calls) % 2 else Verdict.NA
            out.extend(CheckRun(spec, t, Outcome(verdict, "x")) for t in spec.transports)
        return out

    def module(self, entry: str) -> types.ModuleType:
        module = types.ModuleType("stand-in")
        setattr(module, entry, self.run)
        module.mutants = lambda: list(self.catalogue)  # type: ignore[attr-defined]
        module.all_checks = lambda: list(self.checks)  # type: ignore[attr-defined]
        return module


def _live(**kw: Any) -> Runner:
    mutants = kw.pop(
        "mutants",
        {
            "bot.answers-others": ("CALL-GRP-1",),
            "bot.accepts-any-key": ("RPC-SIG-3",),
            "bot.one-key": ("RPC-SIG-5",),
        },
    )
    breaks = kw.pop(
        "breaks",
        {
            "bot.answers-others": "grp.mention",
            "bot.accepts-any-key": "rpc.key-mismatch",
            "bot.one-key": "rpc.key-per-responder",
        },
    )
    return Runner(kw.pop("checks", CHECKS), mutants, breaks)


def _caller() -> Runner:
    checks = [
        CheckSpec("caller.sender-only", "t", ("CALL-CLR-4",), transports=("chat",), kind="caller")
    ]
    return Runner(
        checks,
        {"client.third-party": ("CALL-CLR-4",)},
        {"client.third-party": "caller.sender-only"},
    )


def _selftest(live: Runner, caller: Runner | None = None, **kw: Any) -> Any:
    registries = {"simplex_protocols.conformance.live": live.module("run_bot")}
    registries["simplex_protocols.conformance.caller"] = (caller or _caller()).module("run_caller")
    kw.setdefault("parts", ("live", "caller", "mutants"))
    kw.setdefault("exclusions", NONE)
    return run_selftest(SelftestOptions(registries=registries, **kw))


def test_everything_caught_is_exit_0_with_a_kill_matrix() -> None:
    live = _live()
    report = _selftest(live, seed=11)
    assert report.failed_parts == []
    assert report.exit_code is ExitCode.OK
    matrix = report.extra["kill_matrix"]
    assert [m["mutant"] for m in matrix["mutants"]] == [
        "bot.answers-others",
        "bot.accepts-any-key",
        "bot.one-key",
        "client.third-party",
    ]
    assert matrix["mutants"][0]["killed_by"] == ["grp.mention@chat (FAIL)"]
    assert "mutants killed 4/4" in report.appendix
    # the runner got the reference, then each mutant narrowed to its requirements, seeded, on a manual clock
    first, *rest = live.calls
    assert isinstance(first, LiveOptions) and first.builtin == "reference" and first.checks == ()
    assert [(o.builtin, o.checks) for o in rest] == [
        ("bot.answers-others", ("CALL-GRP-1",)),
        ("bot.accepts-any-key", ("RPC-SIG-3",)),
        ("bot.one-key", ("RPC-SIG-5",)),
    ]
    assert {o.seed for o in live.calls} == {11} and {o.clock for o in live.calls} == {
        ClockMode.MANUAL
    }
    # the report's runs are the reference runs of both sides
    assert sorted(r.key for r in report.runs) == [
        "caller.sender-only@chat",
        "grp.mention@chat",
        "rpc.key-mismatch@rpc",
        "rpc.key-per-responder@rpc",
    ]


def test_mutants_run_side_by_side_keep_the_catalogue_order() -> None:
    one = _selftest(_live(), parts=("mutants",))
    two = _selftest(_live(), parts=("mutants",), jobs=3)
    assert two.extra["kill_matrix"]["mutants"] == [
        {**m, "duration_s": n["duration_s"]}
        for m, n in zip(
            one.extra["kill_matrix"]["mutants"], two.extra["kill_matrix"]["mutants"], strict=True
        )
    ]
    assert two.failed_parts == []


def test_the_caller_side_gets_caller_options() -> None:
    caller = _caller()
    _selftest(_live(), caller)
    assert all(isinstance(o, CallerOptions) for o in caller.calls)


def test_a_surviving_mutant_fails_the_selftest() -> None:
    live = _live(
        breaks={"bot.answers-others": "grp.mention", "bot.one-key": "rpc.key-per-responder"}
    )
    report = _selftest(live)
    assert report.exit_code is ExitCode.FAILED
    assert any(
        p.startswith("mutant bot.accepts-any-key survived (RPC-SIG-3): rpc.key-mismatch@rpc PASS")
        for p in report.failed_parts
    )
    # and the MUST check of that requirement now kills nothing
    assert (
        "check rpc.key-mismatch (RPC-SIG-3) kills no mutant and records no reason"
        in report.failed_parts
    )
    assert "SURVIVED bot.accepts-any-key" in report.appendix
    assert "KILLS NO MUTANT" in report.appendix


def test_a_kill_must_be_on_a_check_of_the_switched_off_requirement() -> None:
    # the mutant breaks a check that does not name its requirement: not a kill
    live = _live(
        mutants={"bot.accepts-any-key": ("RPC-SIG-3",)},
        breaks={"bot.accepts-any-key": "grp.mention"},
    )
    report = _selftest(live, parts=("mutants",))
    assert any(p.startswith("mutant bot.accepts-any-key survived") for p in report.failed_parts)


def test_a_should_check_that_kills_nothing_is_fine_and_a_must_check_can_be_exempt() -> None:
    checks = [
        CheckSpec("grp.mention", "t", ("CALL-GRP-1",), transports=("chat",)),
        CheckSpec("rpc.key-per-responder", "t", ("RPC-SIG-5",), transports=("rpc",)),
        CheckSpec(
            "decl.business", "t", ("DECL-PROTO-10",), mutation_exempt="the core makes the copy"
        ),
        CheckSpec("rpc.key-mismatch", "t", ("RPC-SIG-3",), transports=("rpc",)),
    ]
    live = _live(
        checks=checks,
        mutants={"bot.answers-others": ("CALL-GRP-1",)},
        breaks={"bot.answers-others": "grp.mention"},
    )
    report = _selftest(
        live,
        exclusions={
            **NONE,
            "unkilled_checks": {"rpc.key-mismatch": "recorded in the test: no mutant yet"},
        },
    )
    assert report.failed_parts == []
    exempt = {e["check"]: e["reason"] for e in report.extra["kill_matrix"]["exempt"]}
    assert exempt == {
        "decl.business": "the core makes the copy",
        "rpc.key-mismatch": "recorded in the test: no mutant yet",
    }
    assert "exempt with a reason 2" in report.appendix


def test_stale_and_unknown_unkilled_entries_are_problems() -> None:
    report = _selftest(
        _live(), exclusions={**NONE, "unkilled_checks": {"grp.mention": "old", "gone.check": "old"}}
    )
    assert (
        "exclusions.json lists grp.mention under unkilled_checks, but it kills bot.answers-others: remove the entry"
        in report.failed_parts
    )
    assert (
        "exclusions.json lists unknown check gone.check under unkilled_checks"
        in report.failed_parts
    )


def test_a_reference_that_is_not_green_fails_the_selftest() -> None:
    live = _live()
    original = live.run

    def run(options: Any) -> list[CheckRun]:
        runs = original(options)
        if options.builtin == "reference":
            runs[0].outcome = Outcome(Verdict.UNTESTABLE, "no group")
        return runs

    live.run = run  # type: ignore[method-assign]
    report = _selftest(live, parts=("live",))
    assert report.failed_parts == [
        "live: the reference is not green on 1 run(s): grp.mention@chat UNTESTABLE"
    ]
    assert report.exit_code is ExitCode.FAILED


def test_seeded_reruns_must_give_identical_verdicts() -> None:
    steady = _selftest(_live(), parts=("live",), repeat=4)
    assert steady.failed_parts == []
    assert steady.extra["determinism"]["live"]["identical"] is True
    assert steady.extra["determinism"]["live"]["repetitions"] == 4
    shaky = _live()
    shaky.flip = True
    report = _selftest(shaky, parts=("live",), repeat=3)
    assert report.extra["determinism"]["live"]["identical"] is False
    assert any(
        "seeded reruns gave different verdicts" in p and "grp.mention@chat: PASS then NA" in p
        for p in report.failed_parts
    )


def test_a_missing_runner_fails_its_part() -> None:
    report = run_selftest(
        SelftestOptions(
            parts=("caller",),
            registries={"simplex_protocols.conformance.caller": None},
            exclusions=NONE,
        )
    )
    assert report.failed_parts == [
        "caller: simplex_protocols.conformance.caller is not installed (or lacks run_caller, mutants, all_checks), so this part cannot run"
    ]
    assert report.exit_code is ExitCode.FAILED  # a part that cannot run fails the selftest


def test_a_runner_that_raises_on_a_mutant_is_reported() -> None:
    live = _live()
    original = live.run

    def run(options: Any) -> list[CheckRun]:
        if options.builtin == "bot.one-key":
            raise RuntimeError("the simulated network broke")
        return original(options)

    live.run = run  # type: ignore[method-assign]
    report = _selftest(live, parts=("mutants",))
    assert (
        "mutant bot.one-key: the live runner raised RuntimeError: the simulated network broke"
        in report.failed_parts
    )


def test_bad_catalogue_entries_are_reported() -> None:
    unknown = "CALL-GRP-" + "77"
    live = _live(mutants={"bot.x": (unknown,), "bot.y": ()}, breaks={})
    report = _selftest(live, parts=("mutants",), checks=())
    assert f"mutant bot.x names unknown or no requirements: {unknown}" in report.failed_parts
    assert "mutant bot.y names unknown or no requirements: (none)" in report.failed_parts
    twice = _live(
        mutants={"client.third-party": ("CALL-GRP-1",)},
        breaks={"client.third-party": "grp.mention"},
    )
    assert (
        "mutant client.third-party is listed twice"
        in _selftest(twice, parts=("mutants",)).failed_parts
    )


def test_a_filter_narrows_every_part() -> None:
    live = _live()
    report = _selftest(live, checks=("CALL-GRP-1",))
    assert [m["mutant"] for m in report.extra["kill_matrix"]["mutants"]] == ["bot.answers-others"]
    assert live.calls[0].checks == ("CALL-GRP-1",)
    assert [r.key for r in report.runs] == ["grp.mention@chat"]


def test_the_vectors_part_runs_our_library_in_process() -> None:
    report = run_selftest(
        SelftestOptions(parts=("vectors",), checks=("rpc.response",), exclusions=NONE)
    )
    assert report.failed_parts == []
    assert report.runs and {r.spec.kind for r in report.runs} == {"vector"}
    assert report.provenance["vectors_sha256"]
    assert report.exit_code is ExitCode.OK


# ---------------------------------------------------------------------------- the command


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> Callable[[Runner], None]:
    def install(live: Runner) -> None:
        monkeypatch.setitem(
            sys.modules, "simplex_protocols.conformance.live", live.module("run_bot")
        )
        monkeypatch.setitem(
            sys.modules, "simplex_protocols.conformance.caller", _caller().module("run_caller")
        )

    return install


def test_selftest_command_prints_the_kill_matrix_and_writes_reports(
    stand_ins: Callable[[Runner], None], tmp_path: Path
) -> None:
    stand_ins(_live())
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["selftest", "--parts", "live,caller,mutants", "--repeat", "2", "-o", str(tmp_path)],
        stdout=out,
        stderr=err,
        progress=False,
    )
    text = out.getvalue()
    assert "kill matrix (mutant: the checks that caught it):" in text
    assert "KILLED   bot.answers-others [CALL-GRP-1]: grp.mention@chat (FAIL)" in text
    assert "selftest: live: 2 seeded runs, identical" in err.getvalue()
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(report_schema()).validate(data)
    assert data["command"] == "selftest" and data["extra"]["kill_matrix"]["mutants"]
    # the exclusions file of the repository applies here: its unkilled entries name real checks
    assert code in (0, 1)
    assert "```" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_mutants_alone_are_a_measurement(stand_ins: Callable[[Runner], None]) -> None:
    stand_ins(_live())
    out = io.StringIO()
    code = main(
        ["selftest", "--parts", "mutants", "--no-progress", "--filter", "CALL-GRP-1,CALL-CLR-4"],
        stdout=out,
        stderr=io.StringIO(),
    )
    assert "mutants killed 2/2" in out.getvalue()
    assert code == 0, out.getvalue()


def test_selftest_command_fails_on_a_survivor(stand_ins: Callable[[Runner], None]) -> None:
    stand_ins(_live(breaks={}))
    out = io.StringIO()
    code = main(
        ["selftest", "--parts", "mutants", "--no-progress"], stdout=out, stderr=io.StringIO()
    )
    assert code == 1
    assert "SURVIVED bot.answers-others" in out.getvalue()
    assert "result: exit 1 (unexpected failure)" in out.getvalue()
