"""simplex-conformance on the command line: help, usage errors (64), formats and outputs,
baselines end to end on the vectors, and the delegation of `bot` and `caller` to their runners
(options passed, OptionsError → 64, TargetUnreachableError → 3, dry run, flaky retries)."""

from __future__ import annotations

import datetime as dt
import io
import json
import shutil
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from simplex_protocols._spec import spec_path
from simplex_protocols.conformance._model import (
    CallerOptions,
    CheckRun,
    CheckSpec,
    ClockMode,
    LiveOptions,
    OptionsError,
    Outcome,
    Profile,
    TargetUnreachableError,
    Verdict,
)
from simplex_protocols.conformance._report import report_schema
from simplex_protocols.conformance.cli import main

TODAY = dt.date(2026, 11, 1)


def _cli(*argv: str, today: dt.date = TODAY) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err, today=today, progress=False)
    return code, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------------------- help and usage


@pytest.mark.parametrize("command", ["vectors", "bot", "caller", "coverage", "selftest"])
def test_every_command_has_help(command: str) -> None:
    code, out, _ = _cli(command, "--help")
    assert code == 0
    assert out.startswith(f"usage: simplex-conformance {command}")
    if command != "coverage":
        assert "64  usage error" in out


def test_top_level_help_lists_the_commands_and_exit_codes() -> None:
    code, out, _ = _cli("--help")
    assert code == 0
    for word in ("vectors", "bot", "caller", "coverage", "selftest", "3   nothing measured"):
        assert word in out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ([], "usage: simplex-conformance"),
        (["nonsense"], "invalid choice"),
        (["vectors", "--no-such-option"], "unrecognized arguments"),
        (["vectors", "--format", "pdf"], "unknown format(s) pdf"),
        (["vectors", "--format", "json,junit"], "without -o DIR, name exactly one format"),
        (["vectors", "--timeout", "0"], "--timeout must be more than 0"),
        (["vectors", "--timeout", "soon"], "invalid float value"),
        (["vectors", "--vectors", "/nonexistent/vectors"], "not a folder of vector files"),
        (["vectors", "--baseline", "/nonexistent/baseline.json"], "cannot read the baseline"),
        (["vectors", "--impl", ""], "--impl: the driver command is empty"),
        (["bot"], "give either TARGET or --builtin NAME"),
        (["bot", "simplex:/x", "--builtin", "reference"], "give either TARGET or --builtin"),
        (["bot", "--builtin", "reference", "--transport", "smtp"], "--transport: unknown value"),
        (["bot", "--builtin", "reference", "--protocol", "grpc"], "--protocol: unknown value"),
        (["bot", "--builtin", "reference", "--profile", "gold"], "invalid choice"),
        (["bot", "--builtin", "reference", "--budget", "-1"], "--budget must be 0 or more"),
        (["bot", "x", "--core", "carrier-pigeon"], "not a chat core"),
        (["caller"], "give either --command CMD or --builtin NAME"),
        (["caller", "--builtin", "reference", "--transport", ","], "--transport: name chat"),
        (["selftest", "--repeat", "0"], "--repeat must be 1 or more"),
        (["selftest", "--jobs", "0"], "--jobs must be 1 or more"),
        (["selftest", "--parts", "everything"], "--parts: unknown value"),
        (["coverage", "--format", "junit"], "invalid choice"),
    ],
)
def test_usage_errors_exit_64(argv: list[str], words: str) -> None:
    code, out, err = _cli(*argv)
    assert code == 64
    assert words in out + err


@pytest.mark.slow
def test_the_console_script_exits_64_on_a_usage_error() -> None:
    script = shutil.which("simplex-conformance", path=str(Path(sys.executable).parent))
    assert script is not None
    done = subprocess.run(
        [script, "vectors", "--format", "pdf"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 64
    assert "unknown format" in done.stderr


# ---------------------------------------------------------------------------- vectors


def test_vectors_in_process_are_green_and_print_measured_over_total() -> None:
    code, out, _ = _cli("vectors", "--filter", "rpc.response")
    assert code == 0
    assert "checks measured " in out and "requirements measured " in out
    assert out.rstrip().endswith("result: exit 0 (conformant given the baseline)")


def test_a_filter_that_selects_nothing_is_a_usage_error() -> None:
    """A pattern that names no case is a mistyped command line (exit 64, saying so), not a
    target that could not be measured."""
    code, out, err = _cli("vectors", "--filter", "no.such.family")
    assert code == 64
    assert out == ""
    assert "--filter no.such.family: no vector case matches" in err


@pytest.mark.parametrize("fmt", ["json", "junit", "markdown", "text"])
def test_one_format_is_printed_without_an_output_folder(fmt: str) -> None:
    code, out, _ = _cli("vectors", "--filter", "rpc.keys", "--format", fmt)
    assert code == 0
    if fmt == "json":
        jsonschema.Draft202012Validator(report_schema()).validate(json.loads(out))
    elif fmt == "junit":
        assert ET.fromstring(out).tag == "testsuites"
    elif fmt == "markdown":
        assert out.startswith("## ✅ simplex-conformance vectors")
    else:
        assert out.startswith("simplex-conformance vectors")


def test_verbose_lists_every_check() -> None:
    _, quiet, _ = _cli("vectors", "--filter", "rpc.keys")
    _, loud, _ = _cli("vectors", "--filter", "rpc.keys", "-v")
    assert "rpc.keys/unpadded@-" in loud and "rpc.keys/unpadded@-" not in quiet


@pytest.fixture
def broken_vectors(tmp_path: Path) -> Path:
    """A copy of one vector file in which two cases expect the wrong thing."""
    folder = tmp_path / "vectors"
    folder.mkdir()
    data = json.loads(spec_path("vectors", "rpc", "response.json").read_text(encoding="utf-8"))
    invalid = [t for t in data["tests"] if t["result"] == "invalid"]
    invalid[0]["error"] = "not_the_real_code"
    invalid[1]["error"] = "another_wrong_code"
    (folder / "response.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def _ids(folder: Path) -> list[str]:
    data = json.loads((folder / "response.json").read_text(encoding="utf-8"))
    return [
        t["id"]
        for t in data["tests"]
        if t.get("error") in ("not_the_real_code", "another_wrong_code")
    ]


def test_baseline_end_to_end_expected_stale_and_expired(
    tmp_path: Path, broken_vectors: Path
) -> None:
    first, second = _ids(broken_vectors)
    code, out, _ = _cli("vectors", "--vectors", str(broken_vectors))
    assert code == 1
    assert f"FAIL       {first}@-" in out

    baseline = tmp_path / "baseline.json"
    code, out, _ = _cli(
        "vectors", "--vectors", str(broken_vectors), "--write-baseline", str(baseline)
    )
    assert code == 0
    written = json.loads(baseline.read_text(encoding="utf-8"))
    assert [e["id"] for e in written["expected_failures"]] == sorted([first, second])
    assert "baseline written to" in out

    code, out, _ = _cli("vectors", "--vectors", str(broken_vectors), "--baseline", str(baseline))
    assert code == 0
    assert "2 expected failure(s) per the baseline" in out

    # the real vectors pass those cases: both entries are stale now
    real = tmp_path / "real"
    real.mkdir()
    shutil.copy(spec_path("vectors", "rpc", "response.json"), real / "response.json")
    code, out, _ = _cli("vectors", "--vectors", str(real), "--baseline", str(baseline))
    assert code == 2
    assert "stale baseline entries" in out

    # a waiver past its date exits 2 and says so
    written["expected_failures"][0]["until"] = "2026-10-31"
    written["expected_failures"][1]["until"] = "2026-11-01"
    baseline.write_text(json.dumps(written), encoding="utf-8")
    code, out, _ = _cli("vectors", "--vectors", str(broken_vectors), "--baseline", str(baseline))
    assert code == 2
    assert "expired waivers: " in out and "(until 2026-10-31)" in out
    code, _, _ = _cli(
        "vectors",
        "--vectors",
        str(broken_vectors),
        "--baseline",
        str(baseline),
        today=dt.date(2026, 10, 1),
    )
    assert code == 0


def test_write_baseline_keeps_entries_that_still_apply(
    tmp_path: Path, broken_vectors: Path
) -> None:
    first, second = _ids(broken_vectors)
    old = tmp_path / "old.json"
    old.write_text(
        json.dumps(
            {
                "schema": "simplex-conformance/baseline/1",
                "expected_failures": [
                    {"id": first, "reason": "tracked upstream", "issue": "https://example.org/7"},
                    {"id": "rpc.response/gone", "reason": "no longer there"},
                ],
                "flaky": [{"id": "rpc.response/x", "retries": 1, "reason": "kept"}],
            }
        ),
        encoding="utf-8",
    )
    new = tmp_path / "new.json"
    code, _, _ = _cli(
        "vectors",
        "--vectors",
        str(broken_vectors),
        "--baseline",
        str(old),
        "--write-baseline",
        str(new),
    )
    assert code == 0
    data = json.loads(new.read_text(encoding="utf-8"))
    entries = {e["id"]: e for e in data["expected_failures"]}
    assert set(entries) == {first, second}
    assert entries[first]["issue"] == "https://example.org/7"
    assert data["flaky"] == [{"id": "rpc.response/x", "retries": 1, "reason": "kept"}]


def test_outputs_folder_gets_every_report_and_transcripts(
    tmp_path: Path, broken_vectors: Path
) -> None:
    out_dir = tmp_path / "out"
    code, out, _ = _cli("vectors", "--vectors", str(broken_vectors), "-o", str(out_dir))
    assert code == 1
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "junit.xml",
        "report.json",
        "report.md",
        "report.txt",
        "transcripts",
    ]
    data = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(report_schema()).validate(data)
    failing = [r for r in data["runs"] if r["verdict"] == "FAIL"]
    assert len(failing) == 2
    for run in failing:
        transcript = out_dir / run["transcript"]
        first, second = (json.loads(x) for x in transcript.read_text().splitlines())
        assert first["dir"] == "out" and first["line"]["id"] == run["check"]
        assert second["dir"] == "in" and second["line"]["ok"] is False
        assert "python conformance/examples/python_driver.py" in run["reproduce"]
    junit = ET.parse(out_dir / "junit.xml").getroot()
    assert junit.get("failures") == "2"
    assert "reports: " in out


def test_strict_makes_a_should_level_warn_fail(tmp_path: Path) -> None:
    folder = tmp_path / "vectors"
    folder.mkdir()
    data = json.loads(spec_path("vectors", "rpc", "sizes.json").read_text(encoding="utf-8"))
    should_only = [
        t for t in data["tests"] if t["requirements"] == ["RPC-LIM-3"] and "expected" in t
    ]
    assert should_only, "sizes.json has a case that names RPC-LIM-3 alone"
    should_only[0]["expected"] = {"json_bytes": -1}
    (folder / "sizes.json").write_text(json.dumps(data), encoding="utf-8")
    code, out, _ = _cli("vectors", "--vectors", str(folder))
    assert code == 0 and "WARN" in out
    code, _, _ = _cli("vectors", "--vectors", str(folder), "--strict")
    assert code == 1


# ---------------------------------------------------------------------------- bot and caller


class _FakeRunner:
    """A stand-in for simplex_protocols.conformance.live / simplex_protocols.conformance.caller: records options, returns runs."""

    def __init__(self, script: list[Verdict] | Exception) -> None:
        self.script = script
        self.calls: list[Any] = []
        self.retry_verdict = Verdict.PASS

    def __call__(self, options: Any) -> list[CheckRun]:
        self.calls.append(options)
        if isinstance(self.script, Exception):
            raise self.script
        if options.checks and options.checks[0].startswith("check."):  # a retry of one check
            [check] = options.checks
            spec = CheckSpec(id=check, title="t", requirements=("RPC-SIG-3",))
            return [CheckRun(spec, options.transports[0], Outcome(self.retry_verdict, "again"))]
        runs = []
        for i, verdict in enumerate(self.script):
            spec = CheckSpec(
                id=f"check.{i}", title="t", requirements=("RPC-SIG-3",), transports=("chat", "rpc")
            )
            outcome = Outcome(verdict, f"{verdict.value} detail")
            if options.dry_run:
                outcome = Outcome(
                    Verdict.NA,
                    "dry run",
                    transcript=[{"t": 0, "dir": "out", "text": f"/_call mcp {i}"}],
                )
            run = CheckRun(spec, "rpc", outcome)
            if options.progress is not None:
                options.progress(run)
            runs.append(run)
        return runs


@pytest.fixture
def fake_live(monkeypatch: pytest.MonkeyPatch) -> Iterator[_FakeRunner]:
    runner = _FakeRunner([Verdict.PASS, Verdict.FAIL, Verdict.NA])
    module = types.ModuleType("simplex_protocols.conformance.live")
    module.run_bot = runner  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "simplex_protocols.conformance.live", module)
    yield runner


@pytest.fixture
def fake_caller(monkeypatch: pytest.MonkeyPatch) -> Iterator[_FakeRunner]:
    runner = _FakeRunner([Verdict.PASS, Verdict.PASS])
    module = types.ModuleType("simplex_protocols.conformance.caller")
    module.run_caller = runner  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "simplex_protocols.conformance.caller", module)
    yield runner


def test_bot_passes_every_option_to_the_live_runner(fake_live: _FakeRunner, tmp_path: Path) -> None:
    code, _, _ = _cli(
        "bot",
        "simplex:/a#xyz",
        "--core",
        "sim:tester",
        "--profile",
        "blackbox",
        "--transport",
        "rpc",
        "--protocol",
        "a2a,mcp",
        "--group",
        "https://simplex.chat/g#abc",
        "--budget",
        "40",
        "--seed",
        "9",
        "--timeout",
        "12.5",
        "--filter",
        "RPC-SIG-3,mcp.*",
        "-o",
        str(tmp_path),
    )
    assert code == 1
    [options] = fake_live.calls
    assert isinstance(options, LiveOptions)
    assert options.target == "simplex:/a#xyz" and options.builtin is None
    assert str(options.core) == "sim:tester"
    assert options.profile is Profile.BLACKBOX
    assert options.transports == ("rpc",) and options.protocols == ("a2a", "mcp")
    assert options.group_link == "https://simplex.chat/g#abc" and options.budget == 40
    assert options.seed == 9 and options.timeout_s == 12.5
    assert options.clock is ClockMode.MANUAL  # a simulated core
    assert options.checks == ("RPC-SIG-3", "mcp.*") and options.output_dir == tmp_path
    assert not options.dry_run
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(report_schema()).validate(data)
    assert data["provenance"]["core"] == "sim:tester"
    assert "xyz" not in json.dumps(data["provenance"])
    assert data["summary"]["checks"]["measured"] == 2 and data["summary"]["checks"]["total"] == 3


def test_bot_against_a_real_core_uses_the_system_clock(fake_live: _FakeRunner) -> None:
    _cli("bot", "simplex:/a#xyz", "--core", "ws://127.0.0.1:5225")
    assert fake_live.calls[0].clock is ClockMode.SYSTEM
    _cli("bot", "--builtin", "reference")
    assert fake_live.calls[1].clock is ClockMode.MANUAL


def test_bot_options_error_is_64_and_unreachable_is_3(fake_live: _FakeRunner) -> None:
    fake_live.script = OptionsError("group link is not a group link")
    code, _, err = _cli("bot", "simplex:/a#xyz")
    assert code == 64 and "group link is not a group link" in err
    fake_live.script = TargetUnreachableError("no link data at simplex:/a#xyz")
    code, out, _ = _cli("bot", "simplex:/a#xyz")
    assert code == 3 and "no link data" in out


def test_bot_dry_run_prints_the_plan_and_sends_nothing(fake_live: _FakeRunner) -> None:
    code, out, _ = _cli("bot", "simplex:/a#xyz", "--dry-run")
    assert code == 0
    assert fake_live.calls[0].dry_run
    assert "→ /_call mcp 1" in out
    assert "dry run: 3 check run(s), 3 message(s); nothing was sent" in out


def test_bot_flaky_entry_retries_one_check_on_one_transport(
    fake_live: _FakeRunner, tmp_path: Path
) -> None:
    baseline = tmp_path / "b.json"
    baseline.write_text(
        json.dumps(
            {
                "schema": "simplex-conformance/baseline/1",
                "flaky": [{"id": "check.1@rpc", "retries": 2, "reason": "slow CI"}],
            }
        ),
        encoding="utf-8",
    )
    code, out, _ = _cli("bot", "simplex:/a#xyz", "--baseline", str(baseline), "-v")
    assert code == 0
    retry = fake_live.calls[1]
    assert retry.checks == ("check.1",) and retry.transports == ("rpc",) and retry.progress is None
    assert "FLAKY      check.1@rpc" in out
    fake_live.calls.clear()
    fake_live.retry_verdict = Verdict.FAIL
    code, _, _ = _cli("bot", "simplex:/a#xyz", "--baseline", str(baseline))
    assert code == 1 and len(fake_live.calls) == 3


def test_bot_without_the_live_runner_measures_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        sys.modules,
        "simplex_protocols.conformance.live",
        types.ModuleType("simplex_protocols.conformance.live"),
    )
    code, out, _ = _cli("bot", "--builtin", "reference")
    assert code == 3
    assert "simplex_protocols.conformance.live is not installed" in out


def test_caller_passes_its_options(fake_caller: _FakeRunner) -> None:
    code, out, _ = _cli(
        "caller", "--command", "my-client --json {target}", "--protocol", "mcp", "--seed", "3"
    )
    assert code == 0
    [options] = fake_caller.calls
    assert isinstance(options, CallerOptions)
    assert options.command == "my-client --json {target}" and options.builtin is None
    assert options.protocols == ("mcp",) and options.transports == ("chat", "rpc")
    assert options.seed == 3 and options.clock is ClockMode.MANUAL
    assert "checks measured 2/2" in out
