"""The real selftest, as CI runs it: `simplex-conformance selftest` over the vectors, the
reference bot and client on the seeded simulated network, and every mutant; and 50 seeded
reruns of the live part with identical verdicts.

Timing, measured on a 2-core machine: the whole selftest takes 1.5 minutes on its own with one
mutant at a time (the 74 mutants take most of it: the mutant clients are separate processes),
about a minute with two at a time (``--jobs 2``, as here); the 50 reruns of the live part take
30 to 45 seconds. The caller part's reruns are in its
own tests (``test_caller_selftest.py``), so they are not repeated here.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from simplex_protocols.conformance._model import FAILING_LEVELS, Verdict, requirement_levels
from simplex_protocols.conformance._report import report_schema
from simplex_protocols.conformance._selftest import SelftestOptions, run_selftest
from simplex_protocols.conformance.cli import main

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = pytest.mark.slow

#: How many seeded reruns of the live part must agree.
RERUNS = 50


@pytest.fixture(scope="module")
def selftest(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], str]:
    folder = tmp_path_factory.mktemp("selftest")
    out = io.StringIO()
    code = main(
        ["selftest", "-o", str(folder), "--no-progress", "--jobs", "2"],
        stdout=out,
        stderr=io.StringIO(),
    )
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return code, data, out.getvalue()


@pytest.mark.timeout(900)
def test_the_selftest_passes(selftest: tuple[int, dict[str, Any], str]) -> None:
    code, data, text = selftest
    assert data["failed_parts"] == [], text
    assert code == 0, text
    jsonschema.Draft202012Validator(report_schema()).validate(data)
    kinds = {run["kind"] for run in data["runs"]}
    assert kinds == {"vector", "live", "caller"}
    ok = {Verdict.PASS.value, Verdict.ACCEPTABLE.value, Verdict.NA.value}
    assert {run["verdict"] for run in data["runs"]} <= ok


@pytest.mark.timeout(900)
def test_every_mutant_is_killed_and_every_must_check_kills_one(
    selftest: tuple[int, dict[str, Any], str],
) -> None:
    _, data, text = selftest
    matrix = data["extra"]["kill_matrix"]
    survivors = [m["mutant"] for m in matrix["mutants"] if not m["killed"]]
    assert survivors == []
    sides = {m["side"] for m in matrix["mutants"]}
    assert sides == {"live", "caller"}
    levels = requirement_levels()
    for row in matrix["checks"]:
        if any(levels.get(r) in FAILING_LEVELS for r in row["must"]):
            assert row["kills"] or row.get("exempt"), row
    assert "kill matrix (mutant: the checks that caught it):" in text
    assert f"mutants killed {len(matrix['mutants'])}/{len(matrix['mutants'])}" in text


@pytest.mark.timeout(900)
def test_the_selftest_report_has_its_provenance(selftest: tuple[int, dict[str, Any], str]) -> None:
    _, data, _ = selftest
    prov = data["provenance"]
    assert prov["seed"] == 0 and prov["clock"] == "manual" and prov["core"] == "sim"
    assert prov["vectors_sha256"] and prov["requirements"]["sha256"]
    assert set(data["extra"]["durations_s"]) == {"vectors", "live", "caller", "mutants"}


@pytest.mark.timeout(900)
def test_fifty_seeded_reruns_of_the_live_part_give_identical_verdicts(tmp_path: Path) -> None:
    report = run_selftest(SelftestOptions(parts=("live",), repeat=RERUNS, seed=7))
    determinism = report.extra["determinism"]["live"]
    assert determinism["repetitions"] == RERUNS
    assert determinism["differences"] == []
    assert determinism["identical"] is True
    assert report.failed_parts == []
