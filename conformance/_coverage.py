"""Spec traceability: for every requirement, the vectors and checks that exercise it.

Sources:

- ``spec/requirements.json``: the requirements, their levels and ``testability`` (which may be
  ``{"excluded": reason}``);
- ``spec/vectors/``: every case names its requirements;
- the live checks (``simplex_protocols.conformance.live.all_checks()``) and the caller checks
  (``simplex_protocols.conformance.caller.all_checks()``), each a list of :class:`CheckSpec`; a registry module
  that is not installed counts as empty and is listed in :attr:`Coverage.missing_registries`;
- ``conformance/exclusions.json``: requirements nothing checks, each with the reason;
  vector-testable requirements that cannot have both a valid and an invalid case, each with
  the reason; and MUST checks no mutant can kill, each with the reason.

The gate (:meth:`Coverage.problems`) fails when a MUST or MUST NOT requirement (by keyword or
declarative) has neither a vector nor a check nor a recorded exclusion, when a vector or check
names an unknown requirement or none at all, when a requirement the index marks testable by
vectors lacks a ``valid`` or an ``invalid`` case without a recorded reason, and when a recorded
exclusion is stale (the requirement is checked after all, or is unknown).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ._model import FAILING_LEVELS, CheckSpec

__all__ = [
    "REGISTRIES",
    "Coverage",
    "RequirementCoverage",
    "discover_checks",
    "exclusions",
    "measure_coverage",
    "render_coverage_markdown",
    "render_coverage_text",
]

#: The modules whose ``all_checks()`` list the live and caller checks.
REGISTRIES: Final = ("simplex_protocols.conformance.live", "simplex_protocols.conformance.caller")

EXCLUSIONS_PATH: Final = Path(__file__).with_name("exclusions.json")


def exclusions(path: Path | None = None) -> dict[str, Any]:
    """The recorded exclusions: ``{"requirements": {ID: reason}, "vectors_one_sided": {ID:
    reason}, "unkilled_checks": {check: reason}}``."""
    data: dict[str, Any] = json.loads((path or EXCLUSIONS_PATH).read_text(encoding="utf-8"))
    data.setdefault("requirements", {})
    data.setdefault("vectors_one_sided", {})
    data.setdefault("unkilled_checks", {})
    return data


def _module_missing(exc: ModuleNotFoundError, module: str) -> bool:
    return exc.name is not None and (module == exc.name or module.startswith(exc.name + "."))


def discover_checks(
    registries: Sequence[str] = REGISTRIES,
    importer: Callable[[str], Any] = importlib.import_module,
) -> tuple[dict[str, list[CheckSpec]], list[str]]:
    """Every registry's checks, and the registries that are not installed.

    Only a missing registry module is tolerated; any other import error is raised, because it
    is a bug of the registry.
    """
    found: dict[str, list[CheckSpec]] = {}
    missing: list[str] = []
    for module_name in registries:
        try:
            module = importer(module_name)
        except ModuleNotFoundError as exc:
            if _module_missing(exc, module_name):
                missing.append(module_name)
                continue
            raise
        all_checks = getattr(module, "all_checks", None)
        if not callable(all_checks):
            missing.append(module_name)
            continue
        found[module_name] = list(all_checks())
    return found, missing


@dataclass(slots=True)
class RequirementCoverage:
    """What exercises one requirement.

    Attributes:
        id, level, keyword, summary: from the index.
        testability: the index's modes (``vector``, ``live``...), or empty when excluded there.
        vectors: IDs of the vector cases that name it.
        vector_results: how many of those are ``valid``, ``invalid`` and ``acceptable``.
        checks: IDs of the live and caller checks that name it.
        excluded: the recorded reason nothing checks it (index or ``exclusions.json``).
        one_sided: the recorded reason its vectors lack a valid or an invalid case.
    """

    id: str
    level: str
    keyword: str
    summary: str
    testability: tuple[str, ...]
    vectors: list[str] = field(default_factory=list)
    vector_results: dict[str, int] = field(default_factory=dict)
    checks: list[str] = field(default_factory=list)
    excluded: str | None = None
    one_sided: str | None = None

    @property
    def vector_gap(self) -> str | None:
        """What a vector-testable requirement lacks (``"valid"``, ``"invalid"``, both), or ``None``."""
        if "vector" not in self.testability:
            return None
        missing = [k for k in ("valid", "invalid") if not self.vector_results.get(k)]
        return " and ".join(missing) or None

    @property
    def gated(self) -> bool:
        """Whether the gate requires a check or an exclusion (MUST and MUST NOT)."""
        return self.level in FAILING_LEVELS

    @property
    def checked(self) -> bool:
        return bool(self.vectors or self.checks)

    @property
    def status(self) -> str:
        """``checked``, ``excluded`` or ``unchecked``."""
        if self.checked:
            return "checked"
        return "excluded" if self.excluded else "unchecked"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "level": self.level,
            "keyword": self.keyword,
            "testability": list(self.testability),
            "status": self.status,
            "vectors": list(self.vectors),
            "vector_results": dict(self.vector_results),
            "checks": list(self.checks),
            "excluded": self.excluded,
            "vector_gap": self.vector_gap,
            "one_sided": self.one_sided,
        }


@dataclass(slots=True)
class Coverage:
    """The traceability of the whole requirement set."""

    requirements: list[RequirementCoverage]
    unknown: dict[str, list[str]]
    without_requirements: list[str]
    stale_exclusions: list[str]
    missing_registries: list[str]
    checks: dict[str, list[CheckSpec]]

    def by_id(self) -> dict[str, RequirementCoverage]:
        return {r.id: r for r in self.requirements}

    def problems(self) -> list[str]:
        """Why the gate fails; empty when it passes."""
        out = [
            f"{r.id} ({r.level}) has no vector, no check and no recorded exclusion"
            for r in self.requirements
            if r.gated and r.status == "unchecked"
        ]
        out += [
            f"{source} names unknown requirement(s): {', '.join(ids)}"
            for source, ids in sorted(self.unknown.items())
        ]
        out += [f"{source} names no requirement" for source in self.without_requirements]
        out += [
            f"{r.id} is testable by vectors but has no {r.vector_gap} case and no recorded reason"
            for r in self.requirements
            if r.vector_gap and not r.one_sided
        ]
        out += self.stale_exclusions
        return out

    def to_json(self) -> dict[str, Any]:
        counts: dict[str, int] = {"checked": 0, "excluded": 0, "unchecked": 0}
        for r in self.requirements:
            counts[r.status] += 1
        return {
            "schema": "simplex-conformance/coverage/1",
            "summary": {"total": len(self.requirements), **counts},
            "missing_registries": list(self.missing_registries),
            "problems": self.problems(),
            "requirements": [r.to_json() for r in self.requirements],
            "checks": {
                module: [
                    {"id": c.id, "kind": c.kind, "requirements": list(c.requirements)}
                    for c in specs
                ]
                for module, specs in self.checks.items()
            },
        }


def measure_coverage(
    *,
    vector_cases: Iterable[Any] | None = None,
    checks: Mapping[str, Sequence[CheckSpec]] | None = None,
    missing_registries: Sequence[str] = (),
    recorded: Mapping[str, Any] | None = None,
) -> Coverage:
    """Trace every requirement to its vectors and checks.

    Args:
        vector_cases: the vector cases (default: every shipped case).
        checks: registry → checks (default: :func:`discover_checks`).
        missing_registries: registries known to be missing (with explicit ``checks``).
        recorded: the exclusions (default: ``conformance/exclusions.json``).
    """
    from simplex_protocols._spec import load_json

    from ._vectors import load_vectors

    index = load_json("requirements.json")
    if vector_cases is None:
        vector_cases = load_vectors().cases
    if checks is None:
        found, missing = discover_checks()
        checks, missing_registries = found, missing
    recorded = recorded if recorded is not None else exclusions()
    known = {r["id"] for r in index["requirements"]}
    out: dict[str, RequirementCoverage] = {}
    for entry in index["requirements"]:
        testability = entry["testability"]
        excluded = None
        modes: tuple[str, ...] = ()
        if isinstance(testability, dict):
            excluded = f"index: {testability.get('excluded', 'excluded')}"
        else:
            modes = tuple(testability)
        out[entry["id"]] = RequirementCoverage(
            id=entry["id"],
            level=entry["level"],
            keyword=entry["keyword"],
            summary=entry["summary"],
            testability=modes,
            excluded=excluded,
        )
    unknown: dict[str, list[str]] = {}
    without: list[str] = []
    for case in vector_cases:
        if not case.requirements:
            without.append(f"vector {case.id}")
        for rid in case.requirements:
            if rid not in known:
                unknown.setdefault(f"vector {case.id}", []).append(rid)
                continue
            cov = out[rid]
            cov.vectors.append(case.id)
            cov.vector_results[case.result] = cov.vector_results.get(case.result, 0) + 1
    for module, specs in checks.items():
        for spec in specs:
            label = f"{spec.kind} check {spec.id} ({module})"
            if not spec.requirements:
                without.append(label)
            for rid in spec.requirements:
                if rid not in known:
                    unknown.setdefault(label, []).append(rid)
                    continue
                if spec.id not in out[rid].checks:
                    out[rid].checks.append(spec.id)
    stale: list[str] = []
    for rid, reason in sorted(recorded.get("requirements", {}).items()):
        if rid not in out:
            stale.append(f"exclusions.json names unknown requirement {rid}")
            continue
        cov = out[rid]
        if cov.checked:
            stale.append(f"exclusions.json excludes {rid}, which is checked: remove the exclusion")
        elif cov.excluded is None:
            cov.excluded = f"exclusions.json: {reason}"
    for rid, reason in sorted(recorded.get("vectors_one_sided", {}).items()):
        if rid not in out:
            stale.append(f"exclusions.json names unknown requirement {rid}")
        elif out[rid].vector_gap is None:
            stale.append(
                f"exclusions.json records {rid} as one-sided, but it has valid and invalid cases "
                "(or is not testable by vectors): remove the entry"
            )
        else:
            out[rid].one_sided = reason
    return Coverage(
        requirements=list(out.values()),
        unknown=unknown,
        without_requirements=without,
        stale_exclusions=stale,
        missing_registries=list(missing_registries),
        checks={k: list(v) for k, v in checks.items()},
    )


def render_coverage_text(coverage: Coverage) -> str:
    """The terminal listing: one row per requirement, then what nothing checks, then problems."""
    lines = []
    width = max(len(r.id) for r in coverage.requirements)
    lines.append(
        f"{'requirement'.ljust(width)}  {'level':<10}  {'vectors':>7}  {'checks':>6}  status"
    )
    for r in coverage.requirements:
        v = r.vector_results
        vtext = f"{len(r.vectors)}"
        if r.vectors:
            vtext += f" ({v.get('valid', 0)}/{v.get('invalid', 0)}/{v.get('acceptable', 0)})"
        lines.append(
            f"{r.id.ljust(width)}  {r.level:<10}  {vtext:>7}  {len(r.checks):>6}  {r.status}"
            + (
                f": {', '.join(r.checks[:4])}{' …' if len(r.checks) > 4 else ''}"
                if r.checks
                else ""
            )
        )
    lines.append("")
    lines.append("vectors: count (valid/invalid/acceptable)")
    lines.append("")
    sided = [r for r in coverage.requirements if r.vector_gap]
    if sided:
        lines.append(
            f"vector-testable requirements without a valid or an invalid case ({len(sided)}):"
        )
        for r in sided:
            lines.append(f"  {r.id}: no {r.vector_gap} case: {r.one_sided or 'NO RECORDED REASON'}")
        lines.append("")
    nothing = [r for r in coverage.requirements if not r.checked]
    if nothing:
        lines.append(f"requirements nothing checks ({len(nothing)}):")
        for r in nothing:
            lines.append(f"  {r.id} ({r.level}): {r.excluded or 'NO RECORDED REASON'}")
        lines.append("")
    for module in coverage.missing_registries:
        lines.append(f"note: {module} is not installed; its checks count as none")
    problems = coverage.problems()
    counts = coverage.to_json()["summary"]
    lines.append(
        f"requirements: {counts['total']} · checked {counts['checked']}/{counts['total']} · "
        f"excluded {counts['excluded']} · unchecked {counts['unchecked']}"
    )
    if problems:
        lines.append(f"coverage gate: FAILED ({len(problems)} problem(s))")
        lines.extend(f"  - {p}" for p in problems)
    else:
        lines.append("coverage gate: passed")
    return "\n".join(lines) + "\n"


def render_coverage_markdown(coverage: Coverage) -> str:
    """The listing as a Markdown table (for CI summaries and docs)."""
    out = ["| requirement | level | vectors (valid/invalid/acceptable) | checks | status |"]
    out.append("| --- | --- | --- | --- | --- |")
    for r in coverage.requirements:
        v = r.vector_results
        vt = (
            f"{len(r.vectors)} ({v.get('valid', 0)}/{v.get('invalid', 0)}/{v.get('acceptable', 0)})"
            if r.vectors
            else "0"
        )
        checks = ", ".join(f"`{c}`" for c in r.checks) or "—"
        status = r.status if r.checked else f"{r.status}: {r.excluded or 'no reason recorded'}"
        out.append(f"| {r.id} | {r.level} | {vt} | {checks} | {status.replace('|', '/')} |")
    problems = coverage.problems()
    out.append("")
    out.append("Coverage gate: " + ("passed" if not problems else f"FAILED ({len(problems)})"))
    out.extend(f"- {p}" for p in problems)
    return "\n".join(out) + "\n"
