"""The vector driver protocol: our example driver through --impl, and drivers that misbehave
(crash, garbage, silence, unsupported operations, a bad hello, a wrong id, a missing program)."""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from simplex_protocols.conformance._driver import (
    PROTOCOL,
    DriverFailure,
    DriverProcess,
    InProcessImplementation,
    encode_line,
)
from simplex_protocols.conformance._model import Verdict
from simplex_protocols.conformance._vectors import load_vectors, run_vectors
from simplex_protocols.conformance.cli import main

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "conformance" / "examples" / "python_driver.py"
PY = shlex.quote(sys.executable)

#: A driver that answers from our library, with a misbehaviour switched on by its first argument.
BROKEN = textwrap.dedent(
    f"""
    import base64, json, sys, time
    sys.path.insert(0, {str(ROOT)!r})
    from simplex_protocols.conformance.ops import load_all, run_op

    mode = sys.argv[1]
    victim = sys.argv[2] if len(sys.argv) > 2 else ""
    ops = sorted(load_all())

    def out(obj):
        sys.stdout.write(json.dumps(obj, ensure_ascii=True) + "\\n")
        sys.stdout.flush()

    hello = json.loads(sys.stdin.readline())
    if mode == "bad-hello":
        out({{"hello": "something-else/9"}})
    elif mode == "die-at-hello":
        sys.exit(5)
    elif mode == "subset":
        out({{"hello": {PROTOCOL!r}, "operations": [o for o in ops if o.startswith("rpc.")]}})
    else:
        out({{"hello": {PROTOCOL!r}, "implementation": {{"name": "broken-" + mode}}, "operations": ops}})
    for line in sys.stdin:
        req = json.loads(line)
        if req["id"] == victim:
            if mode == "crash":
                sys.stderr.write("driver: segfault simulated\\n")
                sys.exit(3)
            if mode == "garbage":
                sys.stdout.write("this is not json\\n")
                sys.stdout.flush()
                continue
            if mode == "silent":
                continue
            if mode == "wrong-id":
                out({{"id": "someone-else", "ok": True, "value": None}})
                continue
            if mode == "bad-shape":
                out({{"id": req["id"], "value": 1}})
                continue
            if mode == "exception":
                out({{"id": req["id"], "exception": "ZeroDivisionError: division by zero"}})
                continue
            if mode == "skip":
                out({{"id": req["id"], "skip": "not implemented here"}})
                continue
        value = base64.b64decode(req["input_b64"]) if "input_b64" in req else req.get("input")
        out({{"id": req["id"], **run_op(req["op"], value, req.get("args") or {{}})}})
    """
)

#: A driver that says hello and then answers every request with the same wrong answer.
ALWAYS_OK = textwrap.dedent(
    f"""
    import json, sys
    sys.stdin.readline()
    print(json.dumps({{"hello": {PROTOCOL!r}}}), flush=True)
    for line in sys.stdin:
        print(json.dumps({{"ok": True, "value": None}}), flush=True)
    """
)


@pytest.fixture(scope="module")
def vectors() -> Any:
    return load_vectors()


@pytest.fixture
def broken(tmp_path: Path) -> str:
    path = tmp_path / "broken_driver.py"
    path.write_text(BROKEN, encoding="utf-8")
    return f"{PY} {shlex.quote(str(path))}"


def _run(argv: list[str], tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    folder = tmp_path / "out"
    code = main([*argv, "-o", str(folder), "--format", "json,junit"], stdout=out, stderr=err)
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return code, report, out.getvalue() + err.getvalue()


def _verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {r["key"]: r["verdict"] for r in report["runs"]}


def test_example_driver_gives_the_same_verdicts_as_the_library_in_process(
    tmp_path: Path, vectors: Any
) -> None:
    impl = InProcessImplementation()
    in_process, _ = run_vectors(impl, vectors.cases, hello=impl.start())
    code, report, _ = _run(["vectors", "--impl", f"{PY} {shlex.quote(str(EXAMPLE))}"], tmp_path)
    assert code == 0
    assert _verdicts(report) == {r.key: r.outcome.verdict.value for r in in_process}
    assert report["summary"]["checks"]["measured"] == report["summary"]["checks"]["total"]
    assert report["provenance"]["implementation"]["name"] == "simplex-protocols"
    assert report["provenance"]["vectors_sha256"] == vectors.sha256
    counts = Counter(report["runs"][i]["verdict"] for i in range(len(report["runs"])))
    assert set(counts) <= {"PASS", "ACCEPTABLE"}


@pytest.mark.parametrize(
    ("mode", "verdict", "words"),
    [
        ("crash", "ERROR", "exited with status 3"),
        ("garbage", "ERROR", "not a JSON line"),
        ("silent", "ERROR", "no answer within"),
        ("wrong-id", "ERROR", "the answer is for"),
        ("bad-shape", "ERROR", "malformed answer"),
        ("exception", "ERROR", "ZeroDivisionError"),
        ("skip", "UNTESTABLE", "not implemented here"),
    ],
)
def test_a_misbehaving_driver_costs_one_case_and_the_run_goes_on(
    tmp_path: Path, broken: str, vectors: Any, mode: str, verdict: str, words: str
) -> None:
    cases = vectors.select(["rpc.parse_request"])
    victim = cases[3].id
    code, report, _ = _run(
        [
            "vectors",
            "--impl",
            f"{broken} {mode} {victim}",
            "--filter",
            "rpc.parse_request",
            "--timeout",
            "0.5",
        ],
        tmp_path,
    )
    runs = {r["key"]: r for r in report["runs"]}
    hit = runs.pop(f"{victim}@-")
    assert hit["verdict"] == verdict
    assert words in hit["detail"]
    # every other case of the family, before and after the victim, was still measured
    assert {r["verdict"] for r in runs.values()} <= {"PASS", "ACCEPTABLE"}
    assert len(runs) + 1 == sum(len(c.specs()) for c in cases)
    if mode in ("crash", "garbage", "silent"):
        assert "the driver was restarted 1 time(s)" in report["notes"]
    if verdict == "ERROR":
        assert code == 1
        assert hit["reproduce"].startswith("printf '%s\\n' ")
        assert json.loads(shlex.split(hit["reproduce"])[3])["id"] == victim
    else:
        assert code == 0


def test_stderr_of_a_crashing_driver_is_in_the_detail(tmp_path: Path, broken: str) -> None:
    victim = "rpc.request/minimal-mcp"
    code, report, _ = _run(
        ["vectors", "--impl", f"{broken} crash {victim}", "--filter", "rpc.request"], tmp_path
    )
    assert code == 1
    [run] = [r for r in report["runs"] if r["check"] == victim]
    assert "segfault simulated" in run["detail"]


def test_unsupported_operations_are_untestable_not_failures(tmp_path: Path, broken: str) -> None:
    code, report, text = _run(
        ["vectors", "--impl", f"{broken} subset", "--filter", "rpc.parse_request,chat_call.parse"],
        tmp_path,
    )
    by_family = Counter((r["check"].split("/")[0], r["verdict"]) for r in report["runs"])
    assert code == 0
    assert {v for (f, v) in by_family if f == "chat_call.parse"} == {"UNTESTABLE"}
    assert {v for (f, v) in by_family if f == "rpc.request"} <= {"PASS", "ACCEPTABLE"}
    assert report["summary"]["checks"]["measured"] < report["summary"]["checks"]["total"]
    assert f"checks measured {report['summary']['checks']['measured']}/" in text


@pytest.mark.parametrize("mode", ["bad-hello", "die-at-hello"])
def test_a_driver_that_never_says_hello_is_unreachable(
    tmp_path: Path, broken: str, mode: str
) -> None:
    code, report, text = _run(["vectors", "--impl", f"{broken} {mode}"], tmp_path)
    assert code == 3
    assert report["runs"] == []
    assert report["unreachable"].startswith("the driver could not be started")
    assert "exit 3" in text


def test_a_run_where_every_case_errs_measured_nothing(
    tmp_path: Path, broken: str, vectors: Any
) -> None:
    victim = next(
        c.id for c in vectors.cases if c.family == "rpc.request" and c.result == "invalid"
    )
    code, report, text = _run(
        ["vectors", "--impl", f"{broken} crash {victim}", "--filter", victim], tmp_path
    )
    assert code == 3
    assert report["summary"]["checks"]["measured"] == 0
    assert "checks measured 0/1" in text


def test_a_missing_program_is_unreachable(tmp_path: Path) -> None:
    code, report, _ = _run(["vectors", "--impl", "/nonexistent/driver --x"], tmp_path)
    assert code == 3
    assert "cannot start" in report["unreachable"]


def test_a_driver_that_accepts_everything_fails_every_invalid_case(tmp_path: Path) -> None:
    path = tmp_path / "yes.py"
    path.write_text(ALWAYS_OK, encoding="utf-8")
    code, report, _ = _run(
        ["vectors", "--impl", f"{PY} {shlex.quote(str(path))}", "--filter", "rpc.parse_response"],
        tmp_path,
    )
    assert code == 1
    failed = [r for r in report["runs"] if r["verdict"] == "FAIL"]
    invalid = [r for r in report["runs"] if r["detail"].startswith("an invalid input was accepted")]
    assert invalid and set(map(id, invalid)) <= set(map(id, failed))


def test_driver_process_round_trip_and_reproducer(vectors: Any) -> None:
    driver = DriverProcess(
        f"{PY} {shlex.quote(str(EXAMPLE))}", operations=vectors.operations(), suite_version="t"
    )
    try:
        hello = driver.start()
        assert hello.supports("rpc.parse_request")
        case = next(c for c in vectors.cases if c.id == "rpc.request/minimal-mcp")
        answer = driver.call(case.request(), 10.0)
        assert answer["ok"] is True
        assert answer["id"] == case.id
        line = driver.reproduce(case.request())
        assert line.endswith(f"| {PY} {shlex.quote(str(EXAMPLE))}")
    finally:
        driver.close()
        driver.close()


def test_a_reproducer_says_hello_with_only_the_operation_it_needs(vectors: Any) -> None:
    command = f"{PY} {shlex.quote(str(EXAMPLE))}"
    driver = DriverProcess(command, operations=vectors.operations(), suite_version="t")
    case = next(c for c in vectors.cases if c.id == "rpc.request/minimal-mcp")
    line = driver.reproduce(case.request())
    hello = json.loads(shlex.split(line)[2])
    assert hello["operations"] == ["rpc.parse_request"]
    assert len(shlex.split(line)[2]) < 200  # not the whole list of operations
    done = subprocess.run(line, shell=True, capture_output=True, text=True, check=True)
    answer = json.loads(done.stdout.splitlines()[1])
    assert (answer["id"], answer["ok"]) == (case.id, True)


def test_an_unreachable_driver_counts_what_was_selected(tmp_path: Path, vectors: Any) -> None:
    selected = sum(len(c.specs()) for c in vectors.select(["rpc.keys"]))
    code, report, text = _run(
        ["vectors", "--impl", "/nonexistent/driver", "--filter", "rpc.keys"], tmp_path
    )
    assert code == 3
    assert report["summary"]["checks"] == {
        "total": selected,
        "measured": 0,
        "by_verdict": report["summary"]["checks"]["by_verdict"],
    }
    assert f"checks measured 0/{selected}" in text


def test_lines_are_ascii_and_carry_lone_surrogates() -> None:
    line = encode_line({"input": "\ud800 é"})
    assert line.isascii()
    assert json.loads(line) == {"input": "\ud800 é"}


def test_a_driver_that_exits_between_requests_is_reported_then_restarted(
    tmp_path: Path,
) -> None:
    script = tmp_path / "one_shot.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, sys
            sys.stdin.readline()
            print(json.dumps({{"hello": {PROTOCOL!r}}}), flush=True)
            sys.stdin.readline()
            print(json.dumps({{"ok": False, "error": {{"code": "nope"}}}}), flush=True)
            """
        ),
        encoding="utf-8",
    )
    vectors = load_vectors()
    cases = [c for c in vectors.cases if c.family == "rpc.request" and c.result == "invalid"][:3]
    driver = DriverProcess(
        f"{PY} {shlex.quote(str(script))}", operations=vectors.operations(), suite_version="t"
    )
    try:
        runs, notes = run_vectors(driver, cases, timeout_s=5.0)
    finally:
        driver.close()
    # every other request finds the process gone: it is restarted for the next one
    assert [r.outcome.verdict for r in runs] == [Verdict.FAIL, Verdict.ERROR, Verdict.FAIL]
    assert driver.starts == 2
    assert any("restarted" in n for n in notes)


def test_a_start_failure_is_a_driver_failure() -> None:
    driver = DriverProcess("/nonexistent/x", operations=[], suite_version="t")
    with pytest.raises(DriverFailure) as info:
        driver.start()
    assert info.value.kind == "start"


# ---------------------------------------------------------------------------- the documentation


README = ROOT / "conformance" / "README.md"


def test_readme_shows_the_example_driver_as_it_is() -> None:
    text = README.read_text(encoding="utf-8")
    start = text.index("```python\n#!/usr/bin/env python3") + len("```python\n")
    end = text.index("```\n", start)
    assert text[start:end] == EXAMPLE.read_text(encoding="utf-8")


def test_readme_lists_every_operation_of_every_vector_file(vectors: Any) -> None:
    text = README.read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([a-z0-9_]+\.[a-z0-9_]+)` \|", text, flags=re.MULTILINE))
    assert set(vectors.operations()) <= listed
    assert listed - set(vectors.operations()) == set()
