"""The baseline: failures a target is known to have, flaky checks, and waivers that expire.

A baseline is a JSON file (schema: ``conformance/schemas/baseline.schema.json``)::

    {
      "schema": "simplex-conformance/baseline/1",
      "expected_failures": [
        {"id": "RPC-SIG-3", "reason": "signing lands in 2.1", "issue": "https://…", "until": "2026-12-31"},
        {"id": "RPC-SIG-3@rpc", "reason": "…"},
        {"id": "rpc.request-key-mismatch", "reason": "…"},
        {"id": "rpc.request-key-mismatch@chat", "reason": "…"}
      ],
      "flaky": [
        {"id": "mcp.slow-tool@chat", "retries": 2, "reason": "a shared CI runner"}
      ]
    }

An entry's ``id`` is a requirement ID, ``requirement@transport``, a check ID, or
``check@transport``; it covers every run it names. Rules:

- a covered run that is not green (``FAIL``, ``WARN``, ``ERROR``, ``UNTESTABLE``) is an
  *expected* failure: reported, but it does not fail the run;
- an expected-failure entry whose covered runs were measured and are all green is *stale*
  (exit 2): the target got better, so the baseline must shrink;
- an entry whose ``until`` date has passed is an *expired waiver* (exit 2), whatever it covers:
  the failures it covers stay listed as expected, so the run says "the waiver ran out" rather
  than "something new broke" (an unexpected failure elsewhere still exits 1);
- a ``FAIL`` or ``ERROR`` covered by a ``flaky`` entry is retried up to ``retries`` times (at
  most :data:`MAX_RETRIES`); a green retry makes the run ``FLAKY``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ._model import CheckRun, Verdict

__all__ = [
    "BASELINE_SCHEMA",
    "MAX_RETRIES",
    "Baseline",
    "BaselineEntry",
    "BaselineError",
    "BaselineResult",
    "FlakyEntry",
    "apply_baseline",
    "baseline_from_runs",
    "is_green",
    "load_baseline",
    "retry_flaky",
]

#: The ``schema`` value of a baseline file.
BASELINE_SCHEMA: Final = "simplex-conformance/baseline/1"

#: The most retries a flaky entry may ask for.
MAX_RETRIES: Final = 5

_GREEN = frozenset({Verdict.PASS, Verdict.ACCEPTABLE, Verdict.FLAKY})
_NOT_GREEN = frozenset({Verdict.FAIL, Verdict.WARN, Verdict.ERROR, Verdict.UNTESTABLE})


def is_green(verdict: Verdict) -> bool:
    """``PASS``, ``ACCEPTABLE`` or ``FLAKY``."""
    return verdict in _GREEN


class BaselineError(ValueError):
    """A baseline file is unreadable or malformed (the command line exits 64)."""


class _Entry:
    """What the two kinds of entry share: an ID that names runs, an issue, a last day."""

    __slots__ = ()

    id: str
    issue: str | None
    until: dt.date | None

    def covers(self, run: CheckRun) -> bool:
        """Whether this entry names ``run``."""
        return _covers(self.id, run)

    def expired(self, today: dt.date) -> bool:
        """Whether the waiver's last day is before ``today``."""
        return self.until is not None and self.until < today

    def _with_issue_and_until(self, out: dict[str, Any]) -> dict[str, Any]:
        if self.issue:
            out["issue"] = self.issue
        if self.until:
            out["until"] = self.until.isoformat()
        return out


@dataclass(frozen=True, slots=True)
class BaselineEntry(_Entry):
    """An expected failure.

    Attributes:
        id: ``REQ``, ``REQ@transport``, ``check`` or ``check@transport``.
        reason: why the failure is expected.
        issue: a link to the tracking issue, when there is one.
        until: the last day the waiver holds, when it expires.
    """

    id: str
    reason: str
    issue: str | None = None
    until: dt.date | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "reason": self.reason}
        return self._with_issue_and_until(out)


@dataclass(frozen=True, slots=True)
class FlakyEntry(_Entry):
    """A check that may fail now and then; retried up to ``retries`` times."""

    id: str
    retries: int
    reason: str
    issue: str | None = None
    until: dt.date | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "retries": self.retries, "reason": self.reason}
        return self._with_issue_and_until(out)


def _covers(entry_id: str, run: CheckRun) -> bool:
    name, sep, transport = entry_id.rpartition("@")
    if not sep:
        name, transport = entry_id, ""
    if transport and transport != run.transport:
        return False
    return name == run.spec.id or name in run.spec.requirements


@dataclass(frozen=True, slots=True)
class Baseline:
    """A parsed baseline file."""

    expected_failures: tuple[BaselineEntry, ...] = ()
    flaky: tuple[FlakyEntry, ...] = ()
    source: str | None = None

    def flaky_retries(self, run: CheckRun, today: dt.date) -> int:
        """How many retries the flaky section allows ``run`` (0: none)."""
        return max(
            (e.retries for e in self.flaky if e.covers(run) and not e.expired(today)), default=0
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": BASELINE_SCHEMA,
            "expected_failures": [e.to_json() for e in self.expected_failures],
            "flaky": [e.to_json() for e in self.flaky],
        }

    def write(self, path: Path) -> None:
        """Write the baseline as JSON (sorted by ID, so diffs stay small)."""
        data = self.to_json()
        data["expected_failures"].sort(key=lambda e: e["id"])
        data["flaky"].sort(key=lambda e: e["id"])
        text = json.dumps(data, indent=2, ensure_ascii=False)  # noqa: TID251 - a local file, not wire JSON
        path.write_text(text + "\n", encoding="utf-8")


def baseline_schema() -> Any:
    """The JSON Schema of baseline files."""
    path = Path(__file__).with_name("schemas") / "baseline.schema.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _date(value: Any, where: str) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise BaselineError(f"{where}: until must be a date YYYY-MM-DD, got {value!r}") from None


def parse_baseline(data: Any, source: str = "baseline") -> Baseline:
    """Check a baseline object against its schema and read it.

    Raises:
        BaselineError: it does not follow the schema.
    """
    import jsonschema

    validator = jsonschema.Draft202012Validator(baseline_schema())
    problems = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if problems:
        where = "/".join(str(p) for p in problems[0].absolute_path) or "(top)"
        raise BaselineError(f"{source}: {where}: {problems[0].message}")
    expected = tuple(
        BaselineEntry(
            id=e["id"],
            reason=e["reason"],
            issue=e.get("issue"),
            until=_date(e.get("until"), f"{source}: {e['id']}"),
        )
        for e in data.get("expected_failures", [])
    )
    flaky = tuple(
        FlakyEntry(
            id=e["id"],
            retries=int(e["retries"]),
            reason=e["reason"],
            issue=e.get("issue"),
            until=_date(e.get("until"), f"{source}: {e['id']}"),
        )
        for e in data.get("flaky", [])
    )
    ids = [e.id for e in expected]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise BaselineError(f"{source}: expected failure listed twice: {', '.join(twice)}")
    return Baseline(expected_failures=expected, flaky=flaky, source=source)


def load_baseline(path: Path) -> Baseline:
    """Read a baseline file.

    Raises:
        BaselineError: the file cannot be read, is not JSON or does not follow the schema.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read the baseline ({exc.strerror or exc})") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BaselineError(f"{path}: not JSON ({exc})") from exc
    return parse_baseline(data, str(path))


@dataclass(slots=True)
class BaselineResult:
    """What a baseline made of a run.

    Attributes:
        expected: run key → the ID of the entry that expected its failure.
        stale: entries whose covered runs were measured and are all green.
        expired: entries (expected failures and flaky) past their ``until`` date.
        unused: expected-failure entries that covered no run of this run (kept, not an error:
            a filter or an unmet prerequisite may have left their checks out).
    """

    expected: dict[str, str] = field(default_factory=dict)
    stale: list[BaselineEntry] = field(default_factory=list)
    expired: list[BaselineEntry | FlakyEntry] = field(default_factory=list)
    unused: list[BaselineEntry] = field(default_factory=list)

    @property
    def broken(self) -> bool:
        """Whether the baseline itself fails the run (exit 2)."""
        return bool(self.stale or self.expired)

    def to_json(self) -> dict[str, Any]:
        return {
            "expected": dict(sorted(self.expected.items())),
            "stale": [e.to_json() for e in self.stale],
            "expired": [e.to_json() for e in self.expired],
            "unused": [e.to_json() for e in self.unused],
        }


def apply_baseline(runs: Sequence[CheckRun], baseline: Baseline, today: dt.date) -> BaselineResult:
    """Match a baseline against the runs (see the module docstring for the rules)."""
    result = BaselineResult()
    waivers: list[BaselineEntry | FlakyEntry] = [*baseline.expected_failures, *baseline.flaky]
    result.expired.extend(w for w in waivers if w.expired(today))
    # entries that still hold name the failures first; expired ones only those left over
    ordered = sorted(baseline.expected_failures, key=lambda e: e.expired(today))
    for entry in ordered:
        covered = [run for run in runs if entry.covers(run)]
        if not covered:
            result.unused.append(entry)
            continue
        if entry.expired(today):
            for run in covered:
                if run.outcome.verdict in _NOT_GREEN:
                    result.expected.setdefault(run.key, entry.id)
            continue
        for run in covered:
            if run.outcome.verdict in _NOT_GREEN:
                result.expected.setdefault(run.key, entry.id)
        measured = [run for run in covered if run.outcome.verdict.measured]
        if measured and all(
            is_green(run.outcome.verdict)
            for run in covered
            if run.outcome.verdict is not Verdict.NA
        ):
            result.stale.append(entry)
    return result


def baseline_from_runs(
    runs: Iterable[CheckRun],
    *,
    today: dt.date,
    previous: Baseline | None = None,
) -> Baseline:
    """A baseline that expects every run that is not green now.

    Entries of ``previous`` that still cover a failing run are kept as they are (with their
    reasons, issues and dates); its flaky section is kept; every other failing run gets an entry
    at ``check@transport`` granularity (the check ID alone for vectors).
    """
    runs = list(runs)
    failing = [r for r in runs if r.outcome.verdict in _NOT_GREEN]
    kept: list[BaselineEntry] = []
    covered: set[str] = set()
    if previous is not None:
        for entry in previous.expected_failures:
            if entry.expired(today):
                continue
            hits = [r for r in failing if entry.covers(r)]
            if hits:
                kept.append(entry)
                covered.update(r.key for r in hits)
    new: dict[str, BaselineEntry] = {}
    for run in failing:
        if run.key in covered:
            continue
        entry_id = run.spec.id if run.transport == "-" else run.key
        detail = run.outcome.detail.strip().replace("\n", " ")
        if len(detail) > 160:
            detail = detail[:159] + "…"
        reason = f"{run.outcome.verdict.value} when the baseline was written on {today.isoformat()}: {detail}"
        new.setdefault(entry_id, BaselineEntry(id=entry_id, reason=reason))
    flaky = previous.flaky if previous is not None else ()
    return Baseline(expected_failures=(*kept, *new.values()), flaky=tuple(flaky))


def retry_flaky(
    runs: list[CheckRun],
    baseline: Baseline,
    today: dt.date,
    retry: Callable[[CheckRun], CheckRun | None],
) -> None:
    """Retry every ``FAIL`` or ``ERROR`` run a flaky entry covers, in place.

    ``retry`` runs the same check on the same transport again (``None``: it cannot). A green
    retry turns the run into ``FLAKY`` (``attempts`` counts every try); otherwise the run keeps
    its last failing outcome.
    """
    for i, run in enumerate(runs):
        if run.outcome.verdict not in (Verdict.FAIL, Verdict.ERROR):
            continue
        allowed = baseline.flaky_retries(run, today)
        if not allowed:
            continue
        current, attempts = run, 1
        for _ in range(allowed):
            again = retry(run)
            if again is None:
                break
            attempts += 1
            current = again
            if is_green(again.outcome.verdict):
                break
        if is_green(current.outcome.verdict):
            current.outcome.detail = (
                f"passed on attempt {attempts} after {run.outcome.verdict.value}: "
                f"{run.outcome.detail}"
            )
            current.outcome.verdict = Verdict.FLAKY
        current.attempts = attempts
        runs[i] = current
