"""The framework: verdict rules for vector answers, roll-ups, exit codes, baselines (expected
failures, stale entries, expired waivers, flaky retries, --write-baseline), reports validated
against their schemas, JUnit parsed back, Markdown, provenance and the progress line."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from simplex_protocols.conformance._baseline import (
    Baseline,
    BaselineEntry,
    BaselineError,
    FlakyEntry,
    apply_baseline,
    baseline_from_runs,
    baseline_schema,
    load_baseline,
    parse_baseline,
    retry_flaky,
)
from simplex_protocols.conformance._model import (
    SEVERITY,
    CheckRun,
    CheckSpec,
    Outcome,
    Verdict,
    failure_verdict,
    matches_filter,
    worst,
)
from simplex_protocols.conformance._provenance import provenance, redact, utc_now
from simplex_protocols.conformance._report import (
    ExitCode,
    ProgressLine,
    Report,
    render_junit,
    render_markdown,
    render_text,
    report_schema,
    write_outputs,
)
from simplex_protocols.conformance._vectors import VectorCase, json_equal, judge_answer

TODAY = dt.date(2026, 11, 1)


def _case(result: str, **raw: Any) -> VectorCase:
    data = {"id": "fam.x/case", "requirements": ["RPC-ENV-1"], "result": result, **raw}
    notes = {"Loose": {"description": "d", "acceptable": "either is fine"}}
    return VectorCase(
        raw=data,
        file="fam/x.json",
        family="fam.x",
        operation="fam.parse",
        format_operation="fam.format",
        notes=notes,
    )


def _run(
    check: str,
    verdict: Verdict,
    *,
    reqs: tuple[str, ...] = ("RPC-ENV-1",),
    transport: str = "chat",
    kind: str = "live",
    detail: str = "",
) -> CheckRun:
    spec = CheckSpec(id=check, title=f"title of {check}", requirements=reqs, kind=kind)
    return CheckRun(
        spec=spec, transport=transport, outcome=Outcome(verdict, detail or verdict.value)
    )


def _prov() -> dict[str, Any]:
    now = utc_now()
    return provenance(command="bot", started=now, ended=now, seed=7, clock="manual", core="sim")


def _report(runs: list[CheckRun], **kw: Any) -> Report:
    return Report(command="bot", runs=runs, provenance=_prov(), **kw)


def _validate(report: Report) -> dict[str, Any]:
    data = json.loads(json.dumps(report.to_json(), default=str))
    jsonschema.Draft202012Validator(report_schema()).validate(data)
    return data


# ---------------------------------------------------------------------------- vector verdicts


@pytest.mark.parametrize(
    ("case", "answer", "verdict"),
    [
        (_case("valid"), {"ok": True, "value": 1}, Verdict.PASS),
        (_case("valid", expected={"a": 1}), {"ok": True, "value": {"a": 1}}, Verdict.PASS),
        (_case("valid", expected={"a": 1}), {"ok": True, "value": {"a": 1.0}}, Verdict.PASS),
        (_case("valid", expected={"a": 1}), {"ok": True, "value": {"a": True}}, Verdict.FAIL),
        (_case("valid", expected={"a": 1}), {"ok": True, "value": {"a": 1, "b": 2}}, Verdict.FAIL),
        (_case("valid"), {"ok": False, "error": {"code": "x"}}, Verdict.FAIL),
        (_case("invalid", error="bad"), {"ok": False, "error": {"code": "bad"}}, Verdict.PASS),
        (_case("invalid", error="bad"), {"ok": False, "error": {"code": "other"}}, Verdict.FAIL),
        (_case("invalid", error="bad"), {"ok": True, "value": None}, Verdict.FAIL),
        (_case("acceptable", flags=["Loose"]), {"ok": True, "value": 3}, Verdict.ACCEPTABLE),
        (
            _case("acceptable", flags=["Loose"]),
            {"ok": False, "error": {"code": "z"}},
            Verdict.ACCEPTABLE,
        ),
        (
            _case("acceptable", flags=["Loose"], expected=[1]),
            {"ok": True, "value": [2]},
            Verdict.FAIL,
        ),
        (_case("valid"), {"skip": "no"}, Verdict.UNTESTABLE),
        (_case("valid"), {"exception": "KeyError"}, Verdict.ERROR),
        (_case("valid"), {"ok": "yes"}, Verdict.ERROR),
        (_case("valid"), {"ok": True}, Verdict.ERROR),
        (_case("invalid", error="e"), {"ok": False, "error": "e"}, Verdict.ERROR),
    ],
)
def test_vector_answer_verdicts(case: VectorCase, answer: dict[str, Any], verdict: Verdict) -> None:
    assert judge_answer(case, answer).verdict is verdict


def test_acceptable_outcome_names_its_flags_and_note() -> None:
    outcome = judge_answer(_case("acceptable", flags=["Loose"]), {"ok": True, "value": 0})
    assert outcome.ambiguity == "Loose"
    assert "either is fine" in outcome.detail


def test_a_breach_of_a_should_level_vector_is_warn() -> None:
    case = _case("invalid", error="bad", requirements=["RPC-LIM-3"])
    assert judge_answer(case, {"ok": True, "value": 1}).verdict is Verdict.WARN
    mixed = _case("invalid", error="bad", requirements=["RPC-LIM-3", "RPC-ENV-1"])
    assert judge_answer(mixed, {"ok": True, "value": 1}).verdict is Verdict.FAIL


def test_round_trip_compares_the_formatted_text_with_the_input() -> None:
    case = _case("valid", input="{}", expected={})
    assert case.has_round_trip
    assert judge_answer(case, {"ok": True, "value": "{}"}, round_trip=True).verdict is Verdict.PASS
    assert judge_answer(case, {"ok": True, "value": "{ }"}, round_trip=True).verdict is Verdict.FAIL
    assert not _case("valid", input="{}", expected={}, canonical=False).has_round_trip
    assert not _case("valid", input_b64="e30=", expected={}).has_round_trip


def test_json_equality_is_json_not_python() -> None:
    assert json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not json_equal(True, 1)
    assert not json_equal(0, False)
    assert not json_equal(None, 0)
    assert not json_equal([1], [1, 1])
    assert not json_equal("1", 1)


# ---------------------------------------------------------------------------- model helpers


def test_worst_follows_severity_and_is_na_for_nothing() -> None:
    assert worst([]) is Verdict.NA
    assert worst([Verdict.PASS, Verdict.WARN, Verdict.NA]) is Verdict.WARN
    assert worst([Verdict.UNTESTABLE, Verdict.FAIL]) is Verdict.FAIL
    assert worst(list(Verdict)) is SEVERITY[0] is Verdict.ERROR


def test_failure_verdict_follows_the_levels() -> None:
    assert failure_verdict(["RPC-SIG-3"]) is Verdict.FAIL  # MUST, bcp14
    assert failure_verdict(["CALL-GRP-1"]) is Verdict.FAIL  # declarative must
    assert failure_verdict(["A2A-AUTHZ-4"]) is Verdict.FAIL  # MUST NOT
    assert failure_verdict(["RPC-SIG-5"]) is Verdict.WARN  # SHOULD
    assert failure_verdict(["RPC-LIM-3"]) is Verdict.WARN  # SHOULD NOT
    assert failure_verdict(["MCP-MSG-3"]) is Verdict.WARN  # MAY


def test_filters_select_by_id_prefix_glob_and_requirement() -> None:
    spec = CheckSpec(id="rpc.request/minimal-mcp", title="", requirements=("RPC-REQ-1",))
    for pattern in ("rpc", "rpc.request", "rpc.request/minimal-mcp", "rpc.*mcp", "RPC-REQ-1"):
        assert matches_filter(spec, [pattern]), pattern
    for pattern in ("rp", "rpc.req", "RPC-REQ-2", "mcp"):
        assert not matches_filter(spec, [pattern]), pattern
    assert matches_filter(spec, [])


# ---------------------------------------------------------------------------- roll-up, exit codes


def test_requirement_rollup_is_the_worst_across_checks_and_transports() -> None:
    runs = [
        _run("a", Verdict.PASS, transport="chat"),
        _run("a", Verdict.UNTESTABLE, transport="rpc"),
        _run("b", Verdict.ACCEPTABLE, transport="chat"),
        _run("c", Verdict.NA, reqs=("RPC-ENV-2",)),
    ]
    report = _report(runs)
    rolled = {r.id: r for r in report.requirement_verdicts()}
    assert rolled["RPC-ENV-1"].verdict is Verdict.UNTESTABLE
    assert rolled["RPC-ENV-1"].counts == {"PASS": 1, "UNTESTABLE": 1, "ACCEPTABLE": 1}
    assert rolled["RPC-ENV-2"].verdict is Verdict.NA
    assert report.exit_code is ExitCode.OK


def test_a_fail_counts_as_warn_for_a_should_requirement_it_also_names() -> None:
    report = _report([_run("a", Verdict.FAIL, reqs=("RPC-ENV-1", "RPC-LIM-3"))])
    rolled = {r.id: r.verdict for r in report.requirement_verdicts()}
    assert rolled == {"RPC-ENV-1": Verdict.FAIL, "RPC-LIM-3": Verdict.WARN}


def test_a_fail_of_a_should_only_check_is_reported_warn() -> None:
    report = _report([_run("a", Verdict.FAIL, reqs=("RPC-LIM-3",)), _run("b", Verdict.PASS)])
    assert report.runs[0].outcome.verdict is Verdict.WARN
    assert report.exit_code is ExitCode.OK
    strict = _report([_run("a", Verdict.FAIL, reqs=("RPC-LIM-3",))], strict=True)
    assert strict.exit_code is ExitCode.FAILED


def test_duplicate_check_keys_collapse_to_the_most_severe() -> None:
    report = _report([_run("a", Verdict.PASS), _run("a", Verdict.ERROR), _run("a", Verdict.FAIL)])
    assert [(r.key, r.outcome.verdict) for r in report.runs] == [("a@chat", Verdict.ERROR)]


@pytest.mark.parametrize(
    ("verdicts", "strict", "code"),
    [
        ([Verdict.PASS], False, ExitCode.OK),
        ([Verdict.PASS, Verdict.ACCEPTABLE, Verdict.FLAKY, Verdict.NA], False, ExitCode.OK),
        ([Verdict.PASS, Verdict.WARN], False, ExitCode.OK),
        ([Verdict.PASS, Verdict.WARN], True, ExitCode.FAILED),
        ([Verdict.PASS, Verdict.UNTESTABLE], True, ExitCode.OK),
        ([Verdict.PASS, Verdict.FAIL], False, ExitCode.FAILED),
        ([Verdict.PASS, Verdict.ERROR], False, ExitCode.FAILED),
        ([], False, ExitCode.NOTHING_MEASURED),
        ([Verdict.NA, Verdict.UNTESTABLE], False, ExitCode.NOTHING_MEASURED),
        ([Verdict.ERROR, Verdict.ERROR], False, ExitCode.NOTHING_MEASURED),
    ],
)
def test_exit_codes(verdicts: list[Verdict], strict: bool, code: ExitCode) -> None:
    runs = [_run(f"c{i}", v) for i, v in enumerate(verdicts)]
    report = _report(runs, strict=strict)
    assert report.exit_code is code
    _validate(report)


def test_unreachable_target_is_exit_3_even_with_runs() -> None:
    report = _report([_run("a", Verdict.PASS)], unreachable="the core refused")
    assert report.exit_code is ExitCode.NOTHING_MEASURED
    assert "the core refused" in report.result_line()


def test_a_failed_selftest_gate_is_exit_1() -> None:
    report = _report([_run("a", Verdict.PASS)], failed_parts=["mutant x survived"])
    assert report.exit_code is ExitCode.FAILED
    assert "mutant x survived" in report.result_line()


def test_summary_prints_measured_over_total_and_never_a_percentage() -> None:
    empty = _report([])
    assert "checks measured 0/0" in empty.summary_line()
    assert "%" not in render_text(empty)
    report = _report([_run("a", Verdict.PASS), _run("b", Verdict.NA)])
    assert report.summary_line().startswith("checks measured 1/2 · requirements measured 1/1")
    assert "%" not in render_text(report) + render_markdown(report)


# ---------------------------------------------------------------------------- baseline


def _baseline(*entries: BaselineEntry, flaky: tuple[FlakyEntry, ...] = ()) -> Baseline:
    return Baseline(expected_failures=entries, flaky=flaky)


@pytest.mark.parametrize(
    "entry_id", ["RPC-ENV-1", "RPC-ENV-1@chat", "rpc.both-fields", "rpc.both-fields@chat"]
)
def test_an_expected_failure_at_every_granularity_excuses_the_failure(entry_id: str) -> None:
    runs = [_run("rpc.both-fields", Verdict.FAIL), _run("other", Verdict.PASS, reqs=("RPC-ENV-2",))]
    result = apply_baseline(runs, _baseline(BaselineEntry(entry_id, "known")), TODAY)
    report = _report(runs, baseline=result)
    assert result.expected == {"rpc.both-fields@chat": entry_id}
    assert report.exit_code is ExitCode.OK
    rolled = {r.id: r for r in report.requirement_verdicts()}
    assert rolled["RPC-ENV-1"].expected and not rolled["RPC-ENV-2"].expected
    assert "1 expected failure(s)" in report.result_line()
    _validate(report)


def test_an_entry_for_another_transport_does_not_excuse() -> None:
    runs = [_run("x", Verdict.FAIL, transport="rpc")]
    result = apply_baseline(runs, _baseline(BaselineEntry("x@chat", "only chat")), TODAY)
    assert _report(runs, baseline=result).exit_code is ExitCode.FAILED
    assert [e.id for e in result.unused] == ["x@chat"]


def test_a_stale_entry_exits_2() -> None:
    runs = [_run("x", Verdict.PASS), _run("y", Verdict.NA)]
    result = apply_baseline(
        runs, _baseline(BaselineEntry("x", "was broken"), BaselineEntry("y", "n/a")), TODAY
    )
    report = _report(runs, baseline=result)
    assert [e.id for e in result.stale] == ["x"]
    assert report.exit_code is ExitCode.BASELINE
    assert "stale baseline entries" in report.result_line()


def test_an_entry_covering_an_untestable_run_is_not_stale() -> None:
    runs = [_run("x", Verdict.UNTESTABLE), _run("z", Verdict.PASS, reqs=("RPC-ENV-2",))]
    result = apply_baseline(runs, _baseline(BaselineEntry("x", "no fixture")), TODAY)
    assert result.stale == []
    assert _report(runs, baseline=result).exit_code is ExitCode.OK


def test_a_requirement_entry_is_stale_only_when_all_its_runs_pass() -> None:
    runs = [_run("a", Verdict.FAIL), _run("b", Verdict.PASS)]
    result = apply_baseline(runs, _baseline(BaselineEntry("RPC-ENV-1", "r")), TODAY)
    assert result.stale == [] and result.expected == {"a@chat": "RPC-ENV-1"}


def test_an_expired_waiver_exits_2() -> None:
    runs = [_run("x", Verdict.FAIL), _run("ok", Verdict.PASS, reqs=("RPC-ENV-2",))]
    entry = BaselineEntry("x", "until the fix", until=dt.date(2026, 10, 31))
    result = apply_baseline(runs, _baseline(entry), TODAY)
    assert result.expired == [entry]
    report = _report(runs, baseline=result)
    assert report.exit_code is ExitCode.BASELINE  # the waiver ran out; nothing new broke
    assert "expired waivers: x (until 2026-10-31)" in report.result_line()
    # another failure that no entry covers still exits 1
    more = [*runs, _run("y", Verdict.FAIL)]
    assert (
        _report(more, baseline=apply_baseline(more, _baseline(entry), TODAY)).exit_code
        is ExitCode.FAILED
    )
    # an expired entry over passing checks exits 2 too
    passing = [_run("ok", Verdict.PASS)]
    result = apply_baseline(passing, _baseline(entry), TODAY)
    assert _report(passing, baseline=result).exit_code is ExitCode.BASELINE
    # the last day of a waiver still counts
    still = BaselineEntry("x", "r", until=TODAY)
    held = apply_baseline(runs, _baseline(still), TODAY)
    assert held.expected == {"x@chat": "x"} and held.expired == []
    assert _report(runs, baseline=held).exit_code is ExitCode.OK


def test_an_expired_flaky_entry_exits_2() -> None:
    runs = [_run("x", Verdict.PASS)]
    flaky = FlakyEntry("x", 2, "ci", until=dt.date(2020, 1, 1))
    result = apply_baseline(runs, _baseline(flaky=(flaky,)), TODAY)
    assert _report(runs, baseline=result).exit_code is ExitCode.BASELINE


def test_flaky_retries_are_bounded_and_a_green_retry_is_flaky() -> None:
    attempts: list[str] = []

    def retry_then_pass(run: CheckRun) -> CheckRun:
        attempts.append(run.key)
        verdict = Verdict.PASS if len(attempts) == 2 else Verdict.FAIL
        return _run(run.spec.id, verdict, transport=run.transport)

    runs = [_run("slow", Verdict.FAIL), _run("solid", Verdict.FAIL), _run("fine", Verdict.PASS)]
    baseline = _baseline(flaky=(FlakyEntry("slow", 3, "shared runner"),))
    retry_flaky(runs, baseline, TODAY, retry_then_pass)
    assert attempts == ["slow@chat", "slow@chat"]
    assert runs[0].outcome.verdict is Verdict.FLAKY and runs[0].attempts == 3
    assert "passed on attempt 3" in runs[0].outcome.detail
    assert runs[1].outcome.verdict is Verdict.FAIL and runs[1].attempts == 1

    attempts.clear()

    def always_fail(run: CheckRun) -> CheckRun:
        attempts.append(run.key)
        return _run(run.spec.id, Verdict.FAIL, transport=run.transport, detail="again")

    runs = [_run("slow", Verdict.FAIL)]
    retry_flaky(runs, _baseline(flaky=(FlakyEntry("slow", 2, "r"),)), TODAY, always_fail)
    assert len(attempts) == 2
    assert runs[0].outcome.verdict is Verdict.FAIL and runs[0].attempts == 3
    assert _report(runs).exit_code is ExitCode.FAILED
    assert _report([_run("x", Verdict.FLAKY)]).exit_code is ExitCode.OK


def test_write_baseline_expects_every_failure_and_keeps_matching_old_entries(
    tmp_path: Path,
) -> None:
    runs = [
        _run("a", Verdict.FAIL, transport="chat"),
        _run("a", Verdict.PASS, transport="rpc"),
        _run("b", Verdict.UNTESTABLE, reqs=("RPC-ENV-2",)),
        _run("v/case", Verdict.WARN, transport="-", kind="vector", reqs=("RPC-LIM-3",)),
        _run("c", Verdict.PASS),
    ]
    old = _baseline(
        BaselineEntry("RPC-ENV-2", "fixture missing", issue="https://example.org/1"),
        BaselineEntry("c", "fixed since"),
    )
    new = baseline_from_runs(runs, today=TODAY, previous=old)
    ids = [e.id for e in new.expected_failures]
    assert ids == ["RPC-ENV-2", "a@chat", "v/case"]
    assert new.expected_failures[0].issue == "https://example.org/1"
    assert "FAIL when the baseline was written on 2026-11-01" in new.expected_failures[1].reason
    path = tmp_path / "baseline.json"
    new.write(path)
    jsonschema.Draft202012Validator(baseline_schema()).validate(json.loads(path.read_text()))
    again = load_baseline(path)
    result = apply_baseline(runs, again, TODAY)
    assert _report(runs, baseline=result).exit_code is ExitCode.OK
    assert result.stale == []


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"schema": "other"}, "schema"),
        (
            {"schema": "simplex-conformance/baseline/1", "expected_failures": [{"id": "x"}]},
            "reason",
        ),
        (
            {
                "schema": "simplex-conformance/baseline/1",
                "flaky": [{"id": "x", "retries": 9, "reason": "r"}],
            },
            "retries",
        ),
        (
            {
                "schema": "simplex-conformance/baseline/1",
                "expected_failures": [{"id": "x", "reason": "r", "until": "2026-13-45"}],
            },
            "until",
        ),
        (
            {
                "schema": "simplex-conformance/baseline/1",
                "expected_failures": [{"id": "x", "reason": "r"}, {"id": "x", "reason": "s"}],
            },
            "twice",
        ),
    ],
)
def test_malformed_baselines_are_refused(data: dict[str, Any], words: str) -> None:
    with pytest.raises(BaselineError, match=words):
        parse_baseline(data)


def test_a_missing_or_non_json_baseline_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="cannot read"):
        load_baseline(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(BaselineError, match="not JSON"):
        load_baseline(bad)


# ---------------------------------------------------------------------------- outputs


def _mixed_report() -> Report:
    runs = [
        _run("mcp.echo", Verdict.PASS, transport="chat"),
        _run("mcp.echo", Verdict.FAIL, transport="rpc", detail="no response"),
        _run("mcp.slow", Verdict.ERROR, reqs=("MCP-MSG-2",), detail="router down"),
        _run("mcp.group", Verdict.UNTESTABLE, reqs=("CALL-GRP-1",), detail="no group"),
        _run("a2a.x", Verdict.NA, reqs=("A2A-STR-1",)),
        _run("limits", Verdict.WARN, reqs=("RPC-LIM-3",)),
        _run("v/1", Verdict.ACCEPTABLE, transport="-", kind="vector", reqs=("CALL-CMD-3",)),
        _run("flaky", Verdict.FLAKY, reqs=("MCP-MSG-4",)),
    ]
    runs[1].outcome.reproduce = "simplex-call 'https://x.example/a#KEY' tools/list"
    runs[1].outcome.transcript = [{"t": 0.0, "dir": "out", "text": "/_call mcp {}"}]
    runs[6].outcome.ambiguity = "ExtraSpaces"
    runs[7].attempts = 2
    result = apply_baseline(runs, _baseline(BaselineEntry("MCP-MSG-2", "router")), TODAY)
    return _report(runs, baseline=result)


def test_report_json_validates_and_carries_provenance() -> None:
    report = _mixed_report()
    data = _validate(report)
    assert data["exit_code"] == 1
    assert data["summary"]["checks"] == {
        "total": 8,
        "measured": 5,
        "by_verdict": {
            "NA": 1,
            "PASS": 1,
            "ACCEPTABLE": 1,
            "FLAKY": 1,
            "WARN": 1,
            "UNTESTABLE": 1,
            "FAIL": 1,
            "ERROR": 1,
        },
    }
    prov = data["provenance"]
    assert prov["suite"]["name"] == "simplex-conformance"
    assert len(prov["requirements"]["sha256"]) == 64
    assert prov["requirements"]["revision"] == "2026-10-21"
    assert set(prov["sdks"]) >= {"mcp", "a2a-sdk", "simplex-chat", "python"}
    assert prov["seed"] == 7 and prov["clock"] == "manual"
    slow = next(r for r in data["runs"] if r["check"] == "mcp.slow")
    assert slow["expected_failure"] == "MCP-MSG-2"


def test_the_report_schema_rejects_a_broken_report() -> None:
    data = json.loads(json.dumps(_mixed_report().to_json(), default=str))
    data["runs"][0]["verdict"] = "GREEN"
    assert not jsonschema.Draft202012Validator(report_schema()).is_valid(data)
    jsonschema.Draft202012Validator.check_schema(report_schema())
    jsonschema.Draft202012Validator.check_schema(baseline_schema())


def test_junit_has_one_case_per_check_and_transport_with_requirements() -> None:
    report = _mixed_report()
    root = ET.fromstring(render_junit(report))
    cases = root.findall(".//testcase")
    assert len(cases) == 8
    names = [c.get("name") for c in cases]
    assert "mcp.echo@rpc [RPC-ENV-1]" in names
    echo_rpc = cases[names.index("mcp.echo@rpc [RPC-ENV-1]")]
    failure = echo_rpc.find("failure")
    assert failure is not None and failure.get("message") == "FAIL: no response"
    assert failure.text == "simplex-call 'https://x.example/a#KEY' tools/list"
    props = {(p.get("name"), p.get("value")) for p in echo_rpc.iter("property")}
    assert ("requirement", "RPC-ENV-1") in props and ("transport", "rpc") in props
    slow = cases[names.index("mcp.slow@chat [MCP-MSG-2]")]
    assert slow.find("skipped") is not None and slow.find("error") is None  # expected
    group = cases[names.index("mcp.group@chat [CALL-GRP-1]")]
    assert group.find("skipped") is not None
    warn = cases[names.index("limits@chat [RPC-LIM-3]")]
    assert warn.find("failure") is None
    assert root.get("tests") == "8" and root.get("failures") == "1" and root.get("errors") == "0"
    suites = {s.get("name") for s in root.findall("testsuite")}
    assert suites == {"simplex-conformance.live", "simplex-conformance.vector"}
    strict = ET.fromstring(render_junit(_report(report.runs, strict=True)))
    assert strict.get("failures") == "2" and strict.get("errors") == "1"


def test_markdown_lists_what_is_not_green_with_reproducers() -> None:
    text = render_markdown(_mixed_report())
    assert text.startswith("## ❌ simplex-conformance bot")
    assert "| CALL-GRP-1 | MUST | UNTESTABLE |" in text
    assert "simplex-call 'https://x.example/a#KEY' tools/list" in text
    assert "_(expected: MCP-MSG-2)_" in text
    assert "`mcp.echo@chat`" not in text


def test_text_report_has_the_table_the_failures_and_the_result() -> None:
    text = render_text(_mixed_report())
    assert "RPC-ENV-1" in text and "FAIL" in text
    assert "reproduce: simplex-call" in text
    assert text.rstrip().endswith("1 expected failure(s) per the baseline")
    assert "result: exit 1 (unexpected failure)" in text


def test_write_outputs_writes_every_format_and_the_transcripts(tmp_path: Path) -> None:
    report = _mixed_report()
    written = write_outputs(report, tmp_path, ["text", "json", "junit", "markdown"])
    assert sorted(p.name for p in written) == [
        "junit.xml",
        "report.json",
        "report.md",
        "report.txt",
    ]
    transcript = tmp_path / "transcripts" / "mcp.echo@rpc.jsonl"
    lines = transcript.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x) for x in lines] == [{"t": 0.0, "dir": "out", "text": "/_call mcp {}"}]
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(report_schema()).validate(data)
    echo = next(r for r in data["runs"] if r["key"] == "mcp.echo@rpc")
    assert echo["transcript"] == "transcripts/mcp.echo@rpc.jsonl"


def test_links_in_targets_and_command_lines_are_redacted() -> None:
    link = "https://smp12.simplex.im/a#1GmEcoFCRQ2p8fNJqJGC"
    out = redact(f"simplex-call {link} tools/list")
    assert out is not None and "1GmEco" not in out
    assert out.startswith("simplex-call https://smp12.simplex.im/…#sha256:")
    assert redact(link) == redact(link) != redact(link + "x")
    assert redact(None) is None
    prov = provenance(
        command="bot",
        started=utc_now(),
        ended=utc_now(),
        seed=1,
        clock="system",
        core="ws://127.0.0.1:5225",
        target=link,
        argv=["bot", link],
    )
    assert "1GmEco" not in json.dumps(prov)


def test_progress_line_only_on_a_terminal() -> None:
    class TTY(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = TTY()
    line = ProgressLine(tty, total=2)
    line(_run("a", Verdict.PASS))
    line(_run("b", Verdict.FAIL))
    line.done()
    assert "[1/2] 0 not green · PASS a@chat" in tty.getvalue()
    assert "[2/2] 1 not green · FAIL b@chat" in tty.getvalue()
    assert tty.getvalue().endswith("\r")
    plain = io.StringIO()
    quiet = ProgressLine(plain, total=2)
    quiet(_run("a", Verdict.PASS))
    quiet.done()
    assert plain.getvalue() == "" and quiet.count == 1
