"""Spec traceability: the coverage listing, its gate (every MUST has a vector, a check or a
recorded exclusion; no vector or check names an unknown requirement), the vector bar (every
vector-testable requirement has a valid and an invalid case), and `simplex-conformance
coverage`."""

from __future__ import annotations

import io
import json
import sys
import types
from typing import Any

import pytest

from simplex_protocols._spec import load_json
from simplex_protocols.conformance._coverage import (
    REGISTRIES,
    discover_checks,
    exclusions,
    measure_coverage,
    render_coverage_markdown,
    render_coverage_text,
)
from simplex_protocols.conformance._model import CheckSpec
from simplex_protocols.conformance._vectors import load_vectors
from simplex_protocols.conformance.cli import main


class _Case:
    def __init__(self, cid: str, reqs: tuple[str, ...], result: str = "valid") -> None:
        self.id, self.requirements, self.result = cid, reqs, result


def _spec(cid: str, *reqs: str, kind: str = "live") -> CheckSpec:
    return CheckSpec(id=cid, title=cid, requirements=reqs, kind=kind)


#: An ID-shaped name the index does not have (built so that the citation scan does not see it).
UNKNOWN = "RPC-SIG-" + "99"

NO_EXCLUSIONS: dict[str, Any] = {"requirements": {}, "vectors_one_sided": {}, "unkilled_checks": {}}


def _measure(
    cases: list[_Case], checks: dict[str, list[CheckSpec]], recorded: dict[str, Any] | None = None
) -> Any:
    return measure_coverage(vector_cases=cases, checks=checks, recorded=recorded or NO_EXCLUSIONS)


def test_a_must_with_nothing_is_a_problem_and_a_check_or_an_exclusion_clears_it() -> None:
    coverage = _measure([], {})
    assert (
        "CALL-GRP-1 (MUST) has no vector, no check and no recorded exclusion" in coverage.problems()
    )
    assert (
        "A2A-AUTHZ-4 (MUST NOT) has no vector, no check and no recorded exclusion"
        in coverage.problems()
    )
    # SHOULD, MAY and informative requirements are listed but not gated
    assert not any(
        p.startswith(("RPC-SIG-5 ", "MCP-MSG-3 ", "CALL-VIS-1 ")) for p in coverage.problems()
    )
    checked = _measure(
        [], {"simplex_protocols.conformance.live": [_spec("group.mention-routing", "CALL-GRP-1")]}
    )
    assert not any(p.startswith("CALL-GRP-1 ") for p in checked.problems())
    assert checked.by_id()["CALL-GRP-1"].checks == ["group.mention-routing"]
    excluded = _measure([], {}, {**NO_EXCLUSIONS, "requirements": {"CALL-GRP-1": "needs a group"}})
    assert not any(p.startswith("CALL-GRP-1 ") for p in excluded.problems())
    assert excluded.by_id()["CALL-GRP-1"].excluded == "exclusions.json: needs a group"
    assert excluded.by_id()["CALL-GRP-1"].status == "excluded"


def test_the_index_own_exclusions_count_as_recorded() -> None:
    coverage = _measure([], {})
    entry = coverage.by_id()["CALL-VIS-1"]
    assert entry.status == "excluded" and entry.excluded and entry.excluded.startswith("index: ")


def test_unknown_requirements_and_checks_without_requirements_are_problems() -> None:
    coverage = _measure(
        [_case := _Case("fam/x", (UNKNOWN,))],
        {
            "simplex_protocols.conformance.caller": [
                _spec("caller.x", "NOPE-1", kind="caller"),
                _spec("caller.y", kind="caller"),
            ]
        },
    )
    problems = coverage.problems()
    assert f"vector fam/x names unknown requirement(s): {UNKNOWN}" in problems
    assert (
        "caller check caller.x (simplex_protocols.conformance.caller) names unknown requirement(s): NOPE-1"
        in problems
    )
    assert (
        "caller check caller.y (simplex_protocols.conformance.caller) names no requirement"
        in problems
    )
    assert _case.id == "fam/x"


def test_stale_exclusions_are_problems() -> None:
    recorded = {
        "requirements": {"CALL-GRP-1": "x", UNKNOWN: "y"},
        "vectors_one_sided": {"RPC-ENV-1": "z"},
        "unkilled_checks": {},
    }
    coverage = _measure(
        [_Case("a/1", ("RPC-ENV-1",), "valid"), _Case("a/2", ("RPC-ENV-1",), "invalid")],
        {"simplex_protocols.conformance.live": [_spec("g", "CALL-GRP-1")]},
        recorded,
    )
    problems = coverage.problems()
    assert "exclusions.json excludes CALL-GRP-1, which is checked: remove the exclusion" in problems
    assert f"exclusions.json names unknown requirement {UNKNOWN}" in problems
    assert any(p.startswith("exclusions.json records RPC-ENV-1 as one-sided") for p in problems)


def test_a_vector_testable_requirement_needs_a_valid_and_an_invalid_case() -> None:
    only_valid = _measure([_Case("a/1", ("RPC-ENV-1",), "valid")], {})
    assert (
        "RPC-ENV-1 is testable by vectors but has no invalid case and no recorded reason"
        in only_valid.problems()
    )
    assert only_valid.by_id()["RPC-ENV-1"].vector_results == {"valid": 1}
    both = _measure(
        [_Case("a/1", ("RPC-ENV-1",), "valid"), _Case("a/2", ("RPC-ENV-1",), "invalid")], {}
    )
    assert both.by_id()["RPC-ENV-1"].vector_gap is None
    recorded = {**NO_EXCLUSIONS, "vectors_one_sided": {"RPC-ENV-1": "why"}}
    excused = _measure([_Case("a/1", ("RPC-ENV-1",), "valid")], {}, recorded)
    assert not any(p.startswith("RPC-ENV-1 ") for p in excused.problems())


def test_discovery_tolerates_only_a_missing_registry() -> None:
    def importer(name: str) -> Any:
        if name == "simplex_protocols.conformance.live":
            raise ModuleNotFoundError("no", name="simplex_protocols.conformance.live")
        if name == "simplex_protocols.conformance.caller":
            module = types.ModuleType(name)
            module.all_checks = lambda: [_spec("c", "CALL-CLR-1")]  # type: ignore[attr-defined]
            return module
        raise AssertionError(name)

    found, missing = discover_checks(REGISTRIES, importer)
    assert missing == ["simplex_protocols.conformance.live"]
    assert [c.id for c in found["simplex_protocols.conformance.caller"]] == ["c"]

    def broken(name: str) -> Any:
        raise ModuleNotFoundError("a dependency of the registry", name="some_dependency")

    with pytest.raises(ModuleNotFoundError):
        discover_checks(REGISTRIES, broken)


def test_renderings_list_what_nothing_checks_and_the_gate() -> None:
    coverage = _measure([], {}, {**NO_EXCLUSIONS, "requirements": {"CALL-GRP-1": "needs a group"}})
    text = render_coverage_text(coverage)
    assert "CALL-GRP-1 (MUST): exclusions.json: needs a group" in text
    assert "coverage gate: FAILED" in text
    markdown = render_coverage_markdown(coverage)
    assert "| CALL-GRP-1 | MUST | 0 | — | excluded: exclusions.json: needs a group |" in markdown
    data = coverage.to_json()
    assert data["summary"]["total"] == len(load_json("requirements.json")["requirements"])
    assert data["problems"] == coverage.problems()


# ---------------------------------------------------------------------------- the real data


def test_the_shipped_vectors_name_only_known_requirements_and_fill_every_vector_gap() -> None:
    coverage = measure_coverage(vector_cases=load_vectors().cases, checks={}, recorded=exclusions())
    vector_problems = [
        p for p in coverage.problems() if p.startswith("vector ") or "testable by vectors" in p
    ]
    assert vector_problems == []
    # every one-sided exclusion is still needed (stale ones are problems too)
    assert not [p for p in coverage.problems() if "one-sided" in p]


def test_exclusions_file_has_a_reason_for_every_entry() -> None:
    data = exclusions()
    for section in ("requirements", "vectors_one_sided", "unkilled_checks"):
        for key, reason in data[section].items():
            assert isinstance(reason, str) and len(reason) > 20, (section, key)


def test_coverage_command_prints_and_exits_by_the_gate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in REGISTRIES:
        module = types.ModuleType(name)
        module.all_checks = lambda: []  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, name, module)
    out = io.StringIO()
    code = main(
        ["coverage", "--format", "json", "-o", str(tmp_path)], stdout=out, stderr=io.StringIO()
    )
    data = json.loads(out.getvalue())
    assert code == (1 if data["problems"] else 0)
    assert json.loads((tmp_path / "coverage.json").read_text(encoding="utf-8")) == data
    assert data["missing_registries"] == []
    text = io.StringIO()
    main(["coverage"], stdout=text, stderr=io.StringIO())
    assert "requirements: " in text.getvalue() and "coverage gate: " in text.getvalue()


def test_every_must_has_a_check_or_a_recorded_exclusion_and_every_check_names_known_requirements() -> (
    None
):
    # The real gate, over the shipped vectors and the live and caller registries.
    coverage = measure_coverage()
    assert coverage.missing_registries == []
    assert coverage.problems() == []
    assert (
        coverage.checks["simplex_protocols.conformance.live"]
        and coverage.checks["simplex_protocols.conformance.caller"]
    )
    kinds = {spec.kind for specs in coverage.checks.values() for spec in specs}
    assert kinds == {"live", "caller"}
    # nothing is left without a vector, a check or a reason
    assert [r.id for r in coverage.requirements if r.status == "unchecked"] == []
