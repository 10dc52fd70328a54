"""Reports: the roll-up of runs into requirement verdicts, the exit code, and the outputs.

One :class:`Report` per command run. It holds the runs (one per check and transport), the
provenance, and what the baseline made of them, and it renders as a terminal table, as
``report.json`` (schema: ``conformance/schemas/report.schema.json``), as JUnit XML (one test
case per check and transport) and as Markdown for CI summaries; :func:`write_outputs` also
writes one transcript per run (``transcripts/<check>@<transport>.jsonl``).

Roll-up rules:

- a ``FAIL`` of a check whose requirements are all weaker than MUST is reported ``WARN``;
- a check run twice under the same key collapses to its worst verdict;
- a requirement's verdict is the worst verdict of every run naming it, across checks and
  transports (``SEVERITY`` order), a ``FAIL`` counting as ``WARN`` for a SHOULD-level
  requirement;
- measured counts and totals are always printed as ``measured/total``, never as a percentage.
"""

from __future__ import annotations

import json
import re
import secrets
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import IntEnum
from pathlib import Path
from typing import Any, Final, TextIO
from xml.etree import ElementTree as ET

from ._baseline import BaselineResult, is_green
from ._model import (
    FAILING_LEVELS,
    SEVERITY,
    CheckRun,
    Verdict,
    failure_verdict,
    requirement_levels,
    requirement_summaries,
    worst,
)

__all__ = [
    "FORMATS",
    "REPORT_SCHEMA",
    "ExitCode",
    "ProgressLine",
    "Report",
    "RequirementVerdict",
    "render_junit",
    "render_markdown",
    "render_text",
    "report_schema",
    "write_outputs",
]

#: The ``schema`` value of ``report.json``.
REPORT_SCHEMA: Final = "simplex-conformance/report/1"

#: The report formats, with the file each one is written to under ``-o DIR``.
FORMATS: Final = {
    "text": "report.txt",
    "json": "report.json",
    "junit": "junit.xml",
    "markdown": "report.md",
}


class ExitCode(IntEnum):
    """The exit status of every ``simplex-conformance`` command."""

    #: Conformant given the baseline: every measured check is green or an expected failure.
    OK = 0
    #: At least one unexpected failure (``FAIL`` or ``ERROR``, ``WARN`` with ``--strict``).
    FAILED = 1
    #: The baseline is out of date: a stale entry (the check passes now) or an expired waiver.
    BASELINE = 2
    #: Nothing was measured, or the target (core, driver, client) could not be reached.
    NOTHING_MEASURED = 3
    #: Bad command line, options, baseline file or vector folder.
    USAGE = 64


EXIT_MEANING: Final = {
    ExitCode.OK: "conformant given the baseline",
    ExitCode.FAILED: "unexpected failure",
    ExitCode.BASELINE: "stale baseline entry or expired waiver",
    ExitCode.NOTHING_MEASURED: "nothing measured or target unreachable",
    ExitCode.USAGE: "usage error",
}


@dataclass(frozen=True, slots=True)
class RequirementVerdict:
    """The roll-up of one requirement.

    Attributes:
        id: the requirement ID.
        level: its level (``MUST``, ``SHOULD``...; ``?`` for an ID the index does not know).
        verdict: the worst verdict of its runs.
        runs: the keys of the runs that name it.
        counts: how many of its runs got each verdict.
        expected: whether every run of it that is not green is an expected failure.
    """

    id: str
    level: str
    verdict: Verdict
    runs: tuple[str, ...]
    counts: Mapping[str, int]
    expected: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "level": self.level,
            "verdict": self.verdict.value,
            "checks": list(self.runs),
            "counts": dict(self.counts),
            "expected_failure": self.expected,
        }


def _downgrade(run: CheckRun) -> None:
    """A FAIL of a check with only SHOULD-level (or weaker) requirements is a WARN."""
    if (
        run.outcome.verdict is Verdict.FAIL
        and failure_verdict(run.spec.requirements) is Verdict.WARN
    ):
        run.outcome.verdict = Verdict.WARN
        run.outcome.evidence.setdefault("downgraded", "FAIL of SHOULD-level requirements is WARN")


def _dedupe(runs: Sequence[CheckRun]) -> list[CheckRun]:
    """One run per key: the worst one (first seen on a tie), in first-seen order."""
    best: dict[str, CheckRun] = {}
    order: list[str] = []
    for run in runs:
        prev = best.get(run.key)
        if prev is None:
            best[run.key] = run
            order.append(run.key)
        elif SEVERITY.index(run.outcome.verdict) < SEVERITY.index(prev.outcome.verdict):
            best[run.key] = run
    return [best[k] for k in order]


@dataclass(slots=True)
class Report:
    """The result of one command run.

    Attributes:
        command: ``vectors``, ``bot``, ``caller`` or ``selftest``.
        runs: one per check and transport (duplicates collapse to the worst).
        provenance: see :func:`simplex_protocols.conformance._provenance.provenance`.
        strict: whether ``WARN`` fails the run.
        baseline: what the baseline made of the runs, when one was given.
        unreachable: why the target could not be reached, when it could not.
        notes: remarks for the reader (driver restarts, unused baseline entries...).
        extra: command-specific sections of ``report.json`` (the selftest's kill matrix).
        failed_parts: reasons the command failed beyond its runs (the selftest's gates).
        appendix: extra text printed before the summary (the selftest's kill matrix).
        measured_elsewhere: measurements that are not among ``runs`` (the selftest's mutant
            runs), so that a run of them alone is not "nothing measured".
        selected: how many check runs were selected, when that is more than ``runs`` (none
            could be made: an unreachable driver); the summary's total counts them.
    """

    command: str
    runs: list[CheckRun]
    provenance: dict[str, Any]
    strict: bool = False
    baseline: BaselineResult | None = None
    unreachable: str | None = None
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    failed_parts: list[str] = field(default_factory=list)
    appendix: str = ""
    measured_elsewhere: int = 0
    selected: int = 0

    def __post_init__(self) -> None:
        for run in self.runs:
            _downgrade(run)
        self.runs = _dedupe(self.runs)

    # ------------------------------------------------------------------ verdict logic

    def expected_entry(self, run: CheckRun) -> str | None:
        """The baseline entry that expects this run's failure, if any."""
        if self.baseline is None:
            return None
        return self.baseline.expected.get(run.key)

    def is_failing(self, run: CheckRun) -> bool:
        """Whether the run's verdict fails the run by itself (before the baseline)."""
        verdict = run.outcome.verdict
        return verdict in (Verdict.FAIL, Verdict.ERROR) or (self.strict and verdict is Verdict.WARN)

    def unexpected_failures(self) -> list[CheckRun]:
        """Failing runs that no baseline entry expects."""
        return [r for r in self.runs if self.is_failing(r) and self.expected_entry(r) is None]

    def expected_failures(self) -> list[CheckRun]:
        """Runs that are not green and that the baseline expects."""
        return [r for r in self.runs if self.expected_entry(r) is not None]

    @property
    def measured(self) -> list[CheckRun]:
        """Runs whose verdict measures the target."""
        return [r for r in self.runs if r.outcome.verdict.measured]

    def requirement_verdicts(self) -> list[RequirementVerdict]:
        """Every requirement some run names, in index order (unknown IDs last)."""
        levels = requirement_levels()
        by_req: dict[str, list[CheckRun]] = {}
        for run in self.runs:
            for rid in run.spec.requirements:
                by_req.setdefault(rid, []).append(run)
        order = {rid: i for i, rid in enumerate(levels)}
        out = []
        for rid in sorted(by_req, key=lambda r: (order.get(r, len(order)), r)):
            level = levels.get(rid, "?")
            verdicts = []
            for run in by_req[rid]:
                v = run.outcome.verdict
                if v is Verdict.FAIL and level not in FAILING_LEVELS and level != "?":
                    v = Verdict.WARN
                verdicts.append(v)
            not_green = [
                r
                for r in by_req[rid]
                if not is_green(r.outcome.verdict) and r.outcome.verdict is not Verdict.NA
            ]
            out.append(
                RequirementVerdict(
                    id=rid,
                    level=level,
                    verdict=worst(verdicts),
                    runs=tuple(r.key for r in by_req[rid]),
                    counts=dict(Counter(v.value for v in verdicts)),
                    expected=bool(not_green)
                    and all(self.expected_entry(r) is not None for r in not_green),
                )
            )
        return out

    @property
    def exit_code(self) -> ExitCode:
        """See :class:`ExitCode`; the first rule that applies wins: unreachable (3), a failed
        selftest gate (1), nothing measured (3), an unexpected failure (1), a stale or expired
        baseline entry (2), else 0."""
        if self.unreachable is not None:
            return ExitCode.NOTHING_MEASURED
        if self.failed_parts:
            return ExitCode.FAILED
        if not self.measured and not self.measured_elsewhere:
            return ExitCode.NOTHING_MEASURED
        if self.unexpected_failures():
            return ExitCode.FAILED
        if self.baseline is not None and self.baseline.broken:
            return ExitCode.BASELINE
        return ExitCode.OK

    def summary(self) -> dict[str, Any]:
        """Counts for every output: totals, measured, per verdict."""
        reqs = self.requirement_verdicts()
        req_measured = sum(1 for r in reqs if any(Verdict(v).measured for v in r.counts))
        return {
            "checks": {
                "total": max(len(self.runs), self.selected),
                "measured": len(self.measured),
                "by_verdict": _by_verdict(r.outcome.verdict for r in self.runs),
            },
            "requirements": {
                "total": len(reqs),
                "measured": req_measured,
                "by_verdict": _by_verdict(r.verdict for r in reqs),
            },
            "unexpected_failures": len(self.unexpected_failures()),
            "expected_failures": len(self.expected_failures()),
        }

    def summary_line(self) -> str:
        """``checks measured M/T · requirements measured m/t · PASS n · ...`` (no percentages)."""
        s = self.summary()
        counts = " · ".join(f"{v} {n}" for v, n in s["checks"]["by_verdict"].items() if n)
        return (
            f"checks measured {s['checks']['measured']}/{s['checks']['total']} · "
            f"requirements measured {s['requirements']['measured']}/{s['requirements']['total']}"
            + (f" · {counts}" if counts else "")
        )

    def result_line(self) -> str:
        """``result: exit N (meaning)`` with the reasons."""
        code = self.exit_code
        reasons: list[str] = []
        if self.unreachable:
            reasons.append(self.unreachable)
        elif not self.measured and not self.measured_elsewhere:
            reasons.append("no check measured the target")
        unexpected = len(self.unexpected_failures())
        if unexpected:
            reasons.append(f"{unexpected} unexpected failure(s)")
        reasons.extend(self.failed_parts)
        if self.baseline is not None:
            if self.baseline.stale:
                reasons.append(
                    "stale baseline entries (they pass now; remove them): "
                    + ", ".join(e.id for e in self.baseline.stale)
                )
            if self.baseline.expired:
                reasons.append(
                    "expired waivers: "
                    + ", ".join(f"{e.id} (until {e.until})" for e in self.baseline.expired)
                )
        expected = len(self.expected_failures())
        if expected:
            reasons.append(f"{expected} expected failure(s) per the baseline")
        tail = f": {'; '.join(reasons)}" if reasons else ""
        return f"result: exit {int(code)} ({EXIT_MEANING[code]}){tail}"

    def to_json(self) -> dict[str, Any]:
        """The ``report.json`` object (schema: ``conformance/schemas/report.schema.json``)."""
        runs = []
        for run in self.runs:
            item = dict(run.to_json())
            item["key"] = run.key
            item["expected_failure"] = self.expected_entry(run)
            item["transcript"] = transcript_path(run) if run.outcome.transcript else None
            runs.append(item)
        code = self.exit_code
        out: dict[str, Any] = {
            "schema": REPORT_SCHEMA,
            "command": self.command,
            "exit_code": int(code),
            "exit_meaning": EXIT_MEANING[code],
            "strict": self.strict,
            "summary": self.summary(),
            "provenance": self.provenance,
            "requirements": [r.to_json() for r in self.requirement_verdicts()],
            "runs": runs,
            "baseline": self.baseline.to_json() if self.baseline is not None else None,
            "unreachable": self.unreachable,
            "failed_parts": list(self.failed_parts),
            "notes": list(self.notes),
        }
        if self.extra:
            out["extra"] = self.extra
        return out


def _by_verdict(verdicts: Any) -> dict[str, int]:
    counts = Counter(v.value for v in verdicts)
    return {v.value: counts.get(v.value, 0) for v in reversed(SEVERITY)}


def report_schema() -> Any:
    """The JSON Schema of ``report.json``."""
    path = Path(__file__).with_name("schemas") / "report.schema.json"
    return json.loads(path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------- text


def _family(check_id: str) -> str:
    return check_id.split("/", 1)[0] if "/" in check_id else check_id.rsplit(".", 1)[0]


def render_text(report: Report, *, verbose: bool = False, title: str | None = None) -> str:
    """The terminal report: a requirement table, the runs that are not green, the summary."""
    lines: list[str] = []
    prov = report.provenance
    head = title or f"simplex-conformance {report.command}"
    target = prov.get("target") or (prov.get("implementation") or {}).get("name")
    lines.append(head + (f" · {target}" if target else ""))
    lines.append("")
    reqs = report.requirement_verdicts()
    if reqs:
        width = max(len(r.id) for r in reqs)
        lines.append(f"{'requirement'.ljust(width)}  {'level':<10}  {'verdict':<10}  checks")
        for r in reqs:
            parts = ", ".join(
                f"{n} {v}"
                for v, n in sorted(r.counts.items(), key=lambda kv: SEVERITY.index(Verdict(kv[0])))
            )
            mark = "  (expected per baseline)" if r.expected else ""
            lines.append(
                f"{r.id.ljust(width)}  {r.level:<10}  {r.verdict.value:<10}  {parts}{mark}"
            )
        lines.append("")
    shown = [
        r
        for r in report.runs
        if verbose or not (is_green(r.outcome.verdict) or r.outcome.verdict is Verdict.NA)
    ]
    if shown:
        lines.append("checks:" if verbose else "checks that are not green:")
        for run in sorted(shown, key=lambda r: SEVERITY.index(r.outcome.verdict)):
            entry = report.expected_entry(run)
            tag = f" [expected: {entry}]" if entry else ""
            reqs_text = ",".join(run.spec.requirements)
            lines.append(f"  {run.outcome.verdict.value:<10} {run.key}  [{reqs_text}]{tag}")
            if run.outcome.detail:
                lines.append(f"             {run.outcome.detail}")
            if run.outcome.reproduce and not is_green(run.outcome.verdict):
                lines.append(f"             reproduce: {run.outcome.reproduce}")
        lines.append("")
    if report.appendix:
        lines.append(report.appendix.rstrip("\n"))
        lines.append("")
    for note in report.notes:
        lines.append(f"note: {note}")
    if report.baseline is not None and report.baseline.unused:
        lines.append(
            "note: baseline entries that matched no check of this run: "
            + ", ".join(e.id for e in report.baseline.unused)
        )
    lines.append(report.summary_line())
    lines.append(report.result_line())
    return safe_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------- JUnit


def render_junit(report: Report) -> str:
    """JUnit XML: one ``testsuite`` per kind of check, one ``testcase`` per check and transport.

    The test case's name is ``<check>@<transport> [REQ-1 REQ-2]``; its properties repeat the
    requirement IDs (``requirement``), the verdict and the transport. ``FAIL`` (and ``WARN``
    with ``--strict``) is a ``failure``, ``ERROR`` an ``error``; ``NA``, ``UNTESTABLE`` and
    expected failures are ``skipped`` with the reason.
    """
    root = ET.Element("testsuites", name="simplex-conformance")
    kinds: dict[str, list[CheckRun]] = {}
    for run in report.runs:
        kinds.setdefault(run.spec.kind, []).append(run)
    totals = Counter[str]()
    for kind, runs in kinds.items():
        suite = ET.SubElement(root, "testsuite", name=f"simplex-conformance.{kind}")
        counts = Counter[str]()
        time_total = 0.0
        for run in runs:
            name = f"{run.key} [{' '.join(run.spec.requirements)}]"
            case = ET.SubElement(
                suite,
                "testcase",
                name=name,
                classname=f"simplex-conformance.{kind}.{_family(run.spec.id)}",
                time=f"{run.duration_s:.6f}",
            )
            time_total += run.duration_s
            props = ET.SubElement(case, "properties")
            for rid in run.spec.requirements:
                ET.SubElement(props, "property", name="requirement", value=rid)
            ET.SubElement(props, "property", name="verdict", value=run.outcome.verdict.value)
            ET.SubElement(props, "property", name="transport", value=run.transport)
            if run.outcome.ambiguity:
                ET.SubElement(props, "property", name="ambiguity", value=run.outcome.ambiguity)
            if run.attempts > 1:
                ET.SubElement(props, "property", name="attempts", value=str(run.attempts))
            verdict = run.outcome.verdict
            entry = report.expected_entry(run)
            message = f"{verdict.value}: {run.outcome.detail}"
            body = run.outcome.reproduce or ""
            counts["tests"] += 1
            if entry is not None:
                ET.SubElement(case, "skipped", message=f"expected failure ({entry}): {message}")
                counts["skipped"] += 1
            elif verdict is Verdict.ERROR:
                el = ET.SubElement(case, "error", message=message, type="ERROR")
                el.text = body
                counts["errors"] += 1
            elif verdict is Verdict.FAIL or (verdict is Verdict.WARN and report.strict):
                el = ET.SubElement(case, "failure", message=message, type=verdict.value)
                el.text = body
                counts["failures"] += 1
            elif verdict in (Verdict.NA, Verdict.UNTESTABLE):
                ET.SubElement(case, "skipped", message=message)
                counts["skipped"] += 1
            elif verdict is not Verdict.PASS:
                out = ET.SubElement(case, "system-out")
                out.text = message
        suite.set("tests", str(counts["tests"]))
        suite.set("failures", str(counts["failures"]))
        suite.set("errors", str(counts["errors"]))
        suite.set("skipped", str(counts["skipped"]))
        suite.set("time", f"{time_total:.6f}")
        totals.update(counts)
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(totals[key]))
    for element in root.iter():
        # A driver's answer may hold characters XML 1.0 cannot carry at all (NUL, ESC, lone
        # surrogates): they are written as escapes, so every JUnit reader can parse the file.
        element.attrib = {k: xml_text(v) for k, v in element.attrib.items()}
        if element.text:
            element.text = xml_text(element.text)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------------------- Markdown


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _expectation(runs: Sequence[CheckRun], verdict: Verdict) -> str:
    """What the first run with the requirement's verdict expected, when it says."""
    for run in runs:
        if run.outcome.verdict is verdict:
            wanted = run.outcome.evidence.get("expected_outcome")
            if isinstance(wanted, str):
                return f"{run.key}: {wanted}"
    return ""


def render_markdown(report: Report, *, limit: int = 50) -> str:
    """Markdown for a CI step summary: result, counts, requirements that are not green,
    and up to ``limit`` failures with their reproducers."""
    code = report.exit_code
    icon = "✅" if code is ExitCode.OK else "❌"
    out = [f"## {icon} simplex-conformance {report.command}", ""]
    out.append(f"**{_md(report.result_line())}**")
    out.append("")
    out.append(_md(report.summary_line()))
    out.append("")
    s = report.summary()
    out.append("| verdict | check runs | requirements |")
    out.append("| --- | ---: | ---: |")
    for v in reversed(SEVERITY):
        a = s["checks"]["by_verdict"].get(v.value, 0)
        b = s["requirements"]["by_verdict"].get(v.value, 0)
        if a or b:
            out.append(f"| {v.value} | {a} | {b} |")
    out.append("")
    bad = [r for r in report.requirement_verdicts() if not is_green(r.verdict)]
    if bad:
        out.append("### Requirements that are not green")
        out.append("")
        out.append("| requirement | level | verdict | expected | baseline |")
        out.append("| --- | --- | --- | --- | --- |")
        runs = {run.key: run for run in report.runs}
        summaries = requirement_summaries()
        for r in bad:
            expected = _expectation([runs[k] for k in r.runs if k in runs], r.verdict)
            expected = expected or summaries.get(r.id, "")
            baseline = "expected failure" if r.expected else ""
            out.append(
                f"| {r.id} | {r.level} | {r.verdict.value} | {_md(_clip(expected))} | {baseline} |"
            )
        out.append("")
    failing = [
        r
        for r in report.runs
        if not is_green(r.outcome.verdict) and r.outcome.verdict is not Verdict.NA
    ]
    failing.sort(key=lambda r: SEVERITY.index(r.outcome.verdict))
    if failing:
        out.append("### Checks that are not green")
        out.append("")
        for run in failing[:limit]:
            entry = report.expected_entry(run)
            tag = f" _(expected: {entry})_" if entry else ""
            out.append(
                f"- **{run.outcome.verdict.value}** `{run.key}` "
                f"({', '.join(run.spec.requirements)}){tag}: {_md(run.outcome.detail)}"
            )
            if run.outcome.reproduce:
                out.append("")
                out.append("  ```sh")
                out.append(f"  {run.outcome.reproduce}")
                out.append("  ```")
        if len(failing) > limit:
            out.append(f"- … and {len(failing) - limit} more (see report.json)")
        out.append("")
    if report.appendix:
        out.append("```")
        out.append(report.appendix.rstrip("\n"))
        out.append("```")
        out.append("")
    prov = report.provenance
    out.append(
        "<sub>suite {v} · requirements {rev} ({sha}) · seed {seed} · clock {clock} · core {core}</sub>".format(
            v=prov.get("suite", {}).get("version"),
            rev=prov.get("requirements", {}).get("revision"),
            sha=str(prov.get("requirements", {}).get("sha256", ""))[:12],
            seed=prov.get("seed"),
            clock=prov.get("clock"),
            core=prov.get("core"),
        )
    )
    return safe_text("\n".join(out) + "\n")


# ---------------------------------------------------------------------------- files


def transcript_path(run: CheckRun) -> str:
    """The transcript's path under the output folder: ``transcripts/<check>@<transport>.jsonl``."""
    return f"transcripts/{run.key}.jsonl"


def safe_text(text: str) -> str:
    """``text`` with every lone surrogate written as its ``\\uXXXX`` escape.

    A driver's strings may hold lone surrogates (JavaScript strings do); no UTF-8 file or
    terminal can take them. Inside a JSON string the escape is the same string again, so
    JSON output stays exact.
    """
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


#: Characters XML 1.0 does not allow in a document, in any form.
_NOT_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """``text`` with the characters XML cannot carry written as ``\\xNN`` or ``\\uXXXX``."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def json_text(value: Any, *, indent: int | None = None) -> str:
    """JSON for report files and transcripts (not wire JSON), for any value a driver returned.

    Numbers kept as :class:`~decimal.Decimal` (beyond a double's range, or longer than Python
    converts) are written as the numbers they are; lone surrogates as escapes; anything else
    that is not JSON as its text.
    """
    marker = secrets.token_hex(8)
    numbers: list[str] = []

    def number_mark(item: Any) -> Any:
        if isinstance(item, Decimal):
            numbers.append(str(item))
            return f"{marker}:{len(numbers) - 1}"
        return str(item)

    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(  # noqa: TID251 - a report file
        value,
        indent=indent,
        ensure_ascii=False,
        allow_nan=False,
        separators=separators,
        default=number_mark,
    )
    if numbers:
        text = re.sub(f'"{marker}:(\\d+)"', lambda m: numbers[int(m.group(1))], text)
    return safe_text(text)


def dump_json(value: Any) -> str:
    """Readable JSON for report files (not wire JSON)."""
    return json_text(value, indent=2) + "\n"


def write_outputs(report: Report, folder: Path, formats: Sequence[str]) -> list[Path]:
    """Write the chosen formats (see :data:`FORMATS`) and every transcript under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    renderers: dict[str, Callable[[Report], str]] = {
        "text": render_text,
        "json": lambda r: dump_json(r.to_json()),
        "junit": render_junit,
        "markdown": render_markdown,
    }
    for fmt in formats:
        path = folder / FORMATS[fmt]
        path.write_text(renderers[fmt](report), encoding="utf-8")
        written.append(path)
    for run in report.runs:
        if not run.outcome.transcript:
            continue
        path = folder / transcript_path(run)
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [json_text(item) for item in run.outcome.transcript]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return written


def render(report: Report, fmt: str) -> str:
    """One format as text."""
    if fmt == "text":
        return render_text(report)
    if fmt == "json":
        return dump_json(report.to_json())
    if fmt == "junit":
        return render_junit(report)
    if fmt == "markdown":
        return render_markdown(report)
    raise ValueError(f"unknown format {fmt}")


# ---------------------------------------------------------------------------- progress


class ProgressLine:
    """A one-line progress display on a terminal: ``[n/total] VERDICT check@transport``.

    It writes nothing unless ``enabled`` (by default: when the stream is a terminal), and
    :meth:`done` clears the line.
    """

    def __init__(
        self, stream: TextIO | None = None, *, total: int | None = None, enabled: bool | None = None
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.count = 0
        self.bad = 0
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = enabled if enabled is not None else bool(isatty and isatty())
        self._width = 0

    def __call__(self, run: CheckRun) -> None:
        self.count += 1
        if run.outcome.verdict in (Verdict.FAIL, Verdict.ERROR, Verdict.WARN):
            self.bad += 1
        if not self.enabled:
            return
        of = f"/{self.total}" if self.total else ""
        text = f"[{self.count}{of}] {self.bad} not green · {run.outcome.verdict.value} {run.key}"
        text = text[:100]
        pad = max(0, self._width - len(text))
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._width = len(text)

    def done(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
