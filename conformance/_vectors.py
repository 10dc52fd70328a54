"""The vector runner: every case of ``spec/vectors/`` against an implementation.

Each case is one check (``kind="vector"``, transport ``-``) whose ID is the case ID. A valid case
whose file names a ``format_operation`` (and whose case is canonical) adds a second check,
``<case ID>+format``: formatting the case's ``expected`` must give back its ``input``.

Verdict rules (``conformance/README.md`` has the table):

- ``valid``: the operation must succeed; with ``expected``, its value must equal it exactly
  (JSON equality: ``true`` is not ``1``, key order does not matter).
- ``invalid``: the operation must fail with the case's ``error`` code.
- ``acceptable``: either outcome conforms (verdict ``ACCEPTABLE``, naming the case's flags);
  a success that contradicts ``expected``, when the case gives one, is still a failure.
- A breach is ``FAIL`` when the case names a MUST-level requirement, else ``WARN``.
- Numbers compare by value; a number beyond a double's precision (a 30-digit integer) also
  equals the double nearest to it, since many runtimes read JSON numbers as doubles.
- The strict profile (``--strict``): a case with a ``strict`` member is judged by that result
  instead (this library's hardening where the spec leaves a choice), numbers compare exactly,
  and a breach of the strict reading is a ``WARN`` (never a MUST failure).
- An operation the implementation does not support, or a ``skip`` answer: ``UNTESTABLE``.
- No answer in time, a crash, garbage or an ``exception`` answer: ``ERROR`` (the driver is
  restarted and the run goes on).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

from ._driver import DEFAULT_LINE_TIMEOUT_S, DriverFailure, Hello, Implementation, monotonic
from ._model import (
    CheckRun,
    CheckSpec,
    Outcome,
    Verdict,
    failure_verdict,
    matches_filter,
)

__all__ = [
    "FORMAT_SUFFIX",
    "VectorCase",
    "VectorFileError",
    "VectorSet",
    "expected_outcome",
    "json_equal",
    "judge_answer",
    "load_vectors",
    "run_vectors",
]

#: The suffix of a round-trip check's ID.
FORMAT_SUFFIX: Final = "+format"

_ABSENT: Final = object()


class VectorFileError(ValueError):
    """A vector folder or file is unreadable or does not follow ``vectors.schema.json``."""


@dataclass(frozen=True, slots=True)
class VectorCase:
    """One case of a vector file, with what its file says about it.

    Attributes:
        raw: the case object as written in the file.
        file: the file's path relative to the vector folder (``rpc/request.json``).
        family: the file's family.
        operation: the file's operation.
        format_operation: the file's format operation, or ``None``.
        notes: the file's flag notes.
    """

    raw: Mapping[str, Any]
    file: str
    family: str
    operation: str
    format_operation: str | None
    notes: Mapping[str, Mapping[str, str]]

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def requirements(self) -> tuple[str, ...]:
        return tuple(self.raw.get("requirements", ()))

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(self.raw.get("flags", ()))

    @property
    def result(self) -> str:
        return str(self.raw["result"])

    @property
    def has_round_trip(self) -> bool:
        """Whether the case also checks ``format(expected) == input``."""
        return (
            self.format_operation is not None
            and self.result == "valid"
            and "expected" in self.raw
            and "input" in self.raw
            and bool(self.raw.get("canonical", True))
        )

    def request(self) -> dict[str, Any]:
        """The driver request line of the case."""
        out: dict[str, Any] = {"op": self.operation, "id": self.id}
        if "input_b64" in self.raw:
            out["input_b64"] = self.raw["input_b64"]
        else:
            out["input"] = self.raw.get("input")
        out["args"] = dict(self.raw.get("args", {}))
        return out

    def format_request(self) -> dict[str, Any]:
        """The driver request line of the round trip."""
        assert self.format_operation is not None
        return {
            "op": self.format_operation,
            "id": self.id + FORMAT_SUFFIX,
            "input": self.raw["expected"],
            "args": dict(self.raw.get("args", {})),
        }

    def spec(self) -> CheckSpec:
        """The case as a check."""
        comment = str(self.raw.get("comment", "")).strip()
        title = f"{self.operation}: {self.result}" + (f" ({comment})" if comment else "")
        return CheckSpec(
            id=self.id,
            title=title,
            requirements=self.requirements,
            transports=("-",),
            kind="vector",
            profiles=(),
            messages=0,
        )

    def format_spec(self) -> CheckSpec:
        """The round trip as a check."""
        return CheckSpec(
            id=self.id + FORMAT_SUFFIX,
            title=f"{self.format_operation}: formatting the expected value gives the input back",
            requirements=self.requirements,
            transports=("-",),
            kind="vector",
            profiles=(),
            messages=0,
        )

    def specs(self) -> list[CheckSpec]:
        """Every check of the case (one, or two with a round trip)."""
        return [self.spec(), self.format_spec()] if self.has_round_trip else [self.spec()]

    def strict_view(self) -> VectorCase | None:
        """The case as the strict profile judges it, when its ``strict`` member says otherwise."""
        strict = self.raw.get("strict")
        if not isinstance(strict, Mapping):
            return None
        raw = {k: v for k, v in self.raw.items() if k not in ("error", "expected", "strict")}
        raw.update(strict)
        return VectorCase(
            raw=raw,
            file=self.file,
            family=self.family,
            operation=self.operation,
            format_operation=self.format_operation,
            notes=self.notes,
        )


@dataclass(frozen=True, slots=True)
class VectorSet:
    """Every vector file of a folder.

    Attributes:
        root: the folder.
        files: relative path → the file's object.
        cases: every case, in file order.
        sha256: a hash over every file's relative path and bytes (the provenance's vector hash).
    """

    root: Path
    files: Mapping[str, Mapping[str, Any]]
    cases: tuple[VectorCase, ...]
    sha256: str

    def operations(self) -> list[str]:
        """Every operation and format operation the files name."""
        names: set[str] = set()
        for data in self.files.values():
            names.add(str(data["operation"]))
            if "format_operation" in data:
                names.add(str(data["format_operation"]))
        return sorted(names)

    def select(self, patterns: Sequence[str]) -> list[VectorCase]:
        """The cases whose ID, family, operation, file or requirements match one of ``patterns``."""
        if not patterns:
            return list(self.cases)
        chosen = []
        for case in self.cases:
            if matches_filter(case.spec(), patterns) or any(
                p in (case.family, case.operation, case.file, case.file.removesuffix(".json"))
                for p in patterns
            ):
                chosen.append(case)
        return chosen

    def specs(self) -> list[CheckSpec]:
        """Every check of every case."""
        return [spec for case in self.cases for spec in case.specs()]


def _schema() -> Any:
    from simplex_protocols._spec import load_json

    return load_json("vectors", "vectors.schema.json")


def load_vectors(root: Path | None = None) -> VectorSet:
    """Read every ``*.json`` vector file under ``root`` (default: the shipped ``spec/vectors``).

    Raises:
        VectorFileError: the folder is missing, a file is not JSON, does not follow the vector
            schema, or repeats a case ID.
    """
    import jsonschema

    from simplex_protocols._spec import spec_path

    folder = root if root is not None else spec_path("vectors")
    if not folder.is_dir():
        raise VectorFileError(f"{folder}: not a folder of vector files")
    validator = jsonschema.Draft202012Validator(_schema())
    digest = hashlib.sha256()
    files: dict[str, Mapping[str, Any]] = {}
    cases: list[VectorCase] = []
    seen: set[str] = set()
    paths = sorted(p for p in folder.rglob("*.json") if not p.name.endswith(".schema.json"))
    for path in paths:
        rel = path.relative_to(folder).as_posix()
        raw = path.read_bytes()
        digest.update(rel.encode("utf-8") + b"\0" + raw + b"\0")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise VectorFileError(f"{rel}: not a JSON file ({exc})") from exc
        problems = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        if problems:
            where = "/".join(str(p) for p in problems[0].absolute_path)
            raise VectorFileError(f"{rel}: {where or '(top)'}: {problems[0].message}")
        files[rel] = data
        for raw_case in data["tests"]:
            case = VectorCase(
                raw=raw_case,
                file=rel,
                family=str(data["family"]),
                operation=str(data["operation"]),
                format_operation=data.get("format_operation"),
                notes=data.get("notes", {}),
            )
            if case.id in seen:
                raise VectorFileError(f"{rel}: case ID {case.id} is used twice")
            seen.add(case.id)
            cases.append(case)
    if not files:
        raise VectorFileError(f"{folder}: no vector files")
    return VectorSet(root=folder, files=files, cases=tuple(cases), sha256=digest.hexdigest())


# ---------------------------------------------------------------------------- judging


#: The largest integer every double holds exactly (2**53).
_EXACT_IN_DOUBLE: Final[int] = 2**53


def _same_double(a: int | float | Decimal, b: int | float | Decimal) -> bool:
    """Whether a number beyond a double's precision and another are the same double."""
    if all(isinstance(n, float) or -_EXACT_IN_DOUBLE <= n <= _EXACT_IN_DOUBLE for n in (a, b)):
        return False
    try:
        return float(a) == float(b)
    except OverflowError:
        return False


#: A JSON number token (in a text that is compared token by token).
_NUMBER: Final = re.compile(r"(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)")


def _same_text_but_doubles(got: Any, wanted: Any) -> bool:
    """Whether two texts differ only in numbers beyond a double's precision written as the
    same double (``123456789012345678901234567890`` and ``1.2345678901234568e+29``): a
    runtime that reads JSON numbers as doubles writes such a number back so."""
    if not isinstance(got, str) or not isinstance(wanted, str):
        return False
    a, b = _NUMBER.split(got), _NUMBER.split(wanted)
    if len(a) != len(b):
        return False
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x == y:
            continue
        if i % 2 == 0 or not _same_double(_number(x), _number(y)):
            return False
    return True


def _number(token: str) -> int | float | Decimal:
    if re.fullmatch(r"-?\d+", token) and len(token) < 4000:
        return int(token)
    value = Decimal(token)
    return float(value) if abs(value) < Decimal("1e308") else value


def json_equal(a: Any, b: Any, *, exact: bool = True) -> bool:
    """JSON equality: objects compare by keys and values, arrays in order, ``true`` is not
    ``1``, and numbers compare by value (``1`` equals ``1.0``; a driver's numbers beyond a
    double's range arrive as :class:`~decimal.Decimal`). Unless ``exact``, a number beyond a
    double's precision also equals the double nearest to it."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float | Decimal) and isinstance(b, int | float | Decimal):
        return bool(a == b) or (not exact and _same_double(a, b))
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(
            json_equal(x, y, exact=exact) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k], exact=exact) for k in a)
    return False


def _short(value: Any, limit: int = 200) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)  # noqa: TID251 - a report excerpt
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _acceptable_note(case: VectorCase) -> str:
    for flag in case.flags:
        note = case.notes.get(flag, {})
        if "acceptable" in note:
            return str(note["acceptable"])
    return ""


def _answer_shape(answer: Mapping[str, Any]) -> str | None:
    """What is wrong with an answer's shape, or ``None``."""
    if "exception" in answer or "skip" in answer:
        return None
    ok = answer.get("ok")
    if ok is True:
        return None if "value" in answer else "an ok answer has no value"
    if ok is False:
        error = answer.get("error")
        if not isinstance(error, dict) or not isinstance(error.get("code"), str):
            return "a failed answer needs error.code, a string"
        return None
    return 'an answer needs "ok": true or false (or "skip", or "exception")'


def expected_outcome(case: VectorCase, *, round_trip: bool = False) -> str:
    """What the case expects of an implementation, in words (for reports)."""
    if round_trip:
        return (
            f"formatting {_short(case.raw['expected'], 80)} gives {_short(case.raw['input'], 80)}"
        )
    expected = case.raw.get("expected", _ABSENT)
    value = "" if expected is _ABSENT else f" with the value {_short(expected, 80)}"
    if case.result == "invalid":
        return f"refused with error {case.raw.get('error', '')}"
    if case.result == "valid":
        return "accepted" + value
    return f"accepted{value} or refused ({', '.join(case.flags)})"


def judge_answer(
    case: VectorCase,
    answer: Mapping[str, Any],
    *,
    round_trip: bool = False,
    strict: bool = False,
    lenient_codes: bool = False,
) -> Outcome:
    """The outcome of one answer to a case (or, with ``round_trip``, to its format request).

    With ``strict``, the case's strict reading decides when it has one (a breach of it is a
    ``WARN``), and numbers compare exactly. An outcome that is not green names what was
    expected (``evidence.expected_outcome``). With ``lenient_codes`` (``--codes lenient``, for an
    implementation with its own error taxonomy), a refusal of an invalid input with another
    code is ``ACCEPTABLE``, and its evidence says so (``lenient_code``).
    """
    view = case.strict_view() if strict else None
    if view is not None:
        case = view
    outcome = _judge(case, answer, round_trip=round_trip, exact=strict)
    if (
        strict
        and outcome.verdict is Verdict.FAIL
        and _judge(case, answer, round_trip=round_trip, exact=False).verdict is not Verdict.FAIL
    ):
        # Only the exact comparison of a number beyond a double's precision failed: the
        # strict profile's own rule, so a WARN like any other breach of it.
        outcome.verdict = Verdict.WARN
        outcome.evidence["profile"] = "strict"
    if (
        lenient_codes
        and not round_trip
        and "error" in outcome.evidence
        and case.result == "invalid"
    ):
        got = outcome.evidence["error"].get("code")
        wanted = case.raw.get("error")
        return Outcome(
            Verdict.ACCEPTABLE,
            f"refused with {got}, not {wanted}; any refusal counts with --codes lenient",
            ambiguity="--codes lenient",
            evidence={**outcome.evidence, "lenient_code": {"expected": wanted, "got": got}},
        )
    if view is not None:
        outcome.evidence["profile"] = "strict"
        if outcome.verdict is Verdict.FAIL:
            outcome.verdict = Verdict.WARN
    if outcome.verdict in (Verdict.FAIL, Verdict.WARN, Verdict.ERROR, Verdict.UNTESTABLE):
        outcome.evidence.setdefault(
            "expected_outcome", expected_outcome(case, round_trip=round_trip)
        )
    return outcome


def _judge(
    case: VectorCase, answer: Mapping[str, Any], *, round_trip: bool, exact: bool
) -> Outcome:
    breach = failure_verdict(case.requirements)
    evidence: dict[str, Any] = {"result": case.result}
    if "skip" in answer:
        return Outcome(Verdict.UNTESTABLE, f"the driver skipped the case: {answer['skip']}")
    if "exception" in answer:
        return Outcome(
            Verdict.ERROR,
            f"the implementation raised instead of answering: {_short(answer['exception'])}",
        )
    shape = _answer_shape(answer)
    if shape is not None:
        return Outcome(Verdict.ERROR, f"malformed answer ({shape}): {_short(answer)}")
    ok = answer["ok"] is True
    if round_trip:
        wanted = case.raw["input"]
        if ok and (
            json_equal(answer["value"], wanted, exact=exact)
            or (not exact and _same_text_but_doubles(answer["value"], wanted))
        ):
            return Outcome(Verdict.PASS, "formatting the expected value gives the input back")
        got = _short(answer["value"]) if ok else f"error {answer['error']['code']}"
        return Outcome(
            breach,
            f"formatting the expected value should give {_short(wanted)}, got {got}",
            evidence={"expected": wanted, "answer": dict(answer)},
        )
    expected = case.raw.get("expected", _ABSENT)
    if case.result == "valid":
        if not ok:
            return Outcome(
                breach,
                f"a valid input was refused with {answer['error']['code']}",
                evidence={**evidence, "answer": dict(answer)},
            )
        if expected is not _ABSENT and not json_equal(answer["value"], expected, exact=exact):
            return Outcome(
                breach,
                f"expected {_short(expected)}, got {_short(answer['value'])}",
                evidence={**evidence, "expected": expected, "value": answer["value"]},
            )
        return Outcome(
            Verdict.PASS,
            "accepted" + (" with the expected value" if expected is not _ABSENT else ""),
        )
    if case.result == "invalid":
        wanted_code = str(case.raw.get("error", ""))
        if ok:
            return Outcome(
                breach,
                f"an invalid input was accepted (expected error {wanted_code}); value {_short(answer['value'])}",
                evidence={**evidence, "value": answer["value"]},
            )
        code = answer["error"]["code"]
        if code != wanted_code:
            return Outcome(
                breach,
                f"refused with error {code}, expected {wanted_code}",
                evidence={**evidence, "error": dict(answer["error"])},
            )
        return Outcome(Verdict.PASS, f"refused with {code}")
    # acceptable: either outcome conforms, but an acceptance must give the expected value
    flags = ", ".join(case.flags)
    note = _acceptable_note(case)
    if ok and expected is not _ABSENT and not json_equal(answer["value"], expected, exact=exact):
        return Outcome(
            breach,
            f"accepting is allowed ({flags}), but then the value must be {_short(expected)}, got {_short(answer['value'])}",
            evidence={**evidence, "expected": expected, "value": answer["value"]},
        )
    taken = "accepted" if ok else f"refused with {answer['error']['code']}"
    return Outcome(
        Verdict.ACCEPTABLE,
        f"{taken}; either outcome conforms ({flags}){': ' + note if note else ''}",
        ambiguity=flags or None,
        evidence={**evidence, "outcome": "accepted" if ok else "refused"},
    )


# ---------------------------------------------------------------------------- running


@dataclass(slots=True)
class _Runner:
    impl: Implementation
    timeout_s: float
    hello: Hello | None = None
    dead: str | None = None
    restarts: int = 0
    max_restarts: int = 50
    notes: list[str] = field(default_factory=list)

    def ensure_started(self) -> None:
        if self.hello is not None or self.dead is not None:
            return
        try:
            self.hello = self.impl.start()
        except DriverFailure as exc:
            self.dead = f"the driver could not be restarted ({exc.kind}: {exc.detail})"
            self.notes.append(self.dead)

    def ask(self, request: Mapping[str, Any]) -> tuple[dict[str, Any] | None, Outcome | None]:
        """The answer, or the outcome that replaces it (ERROR or UNTESTABLE)."""
        self.ensure_started()
        if self.dead is not None:
            return None, Outcome(Verdict.ERROR, self.dead)
        assert self.hello is not None
        if not self.hello.supports(str(request["op"])):
            return None, Outcome(
                Verdict.UNTESTABLE, f"the implementation does not support {request['op']}"
            )
        try:
            answer = self.impl.call(request, self.timeout_s)
        except DriverFailure as exc:
            if exc.restart:
                self.hello = None
                self.restarts += 1
                if self.restarts > self.max_restarts:
                    self.dead = f"gave up after {self.max_restarts} driver restarts"
                    self.notes.append(self.dead)
            return None, Outcome(Verdict.ERROR, f"driver {exc.kind}: {exc.detail}")
        if "id" in answer and answer["id"] != request.get("id"):
            return None, Outcome(
                Verdict.ERROR,
                f"the answer is for {answer['id']!r}, the request was {request.get('id')!r}",
            )
        return answer, None


def _transcript(
    request: Mapping[str, Any], answer: Mapping[str, Any] | None, t: float
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"t": 0.0, "dir": "out", "line": dict(request)}]
    if answer is not None:
        out.append({"t": round(t, 6), "dir": "in", "line": dict(answer)})
    else:
        out.append({"t": round(t, 6), "dir": "note", "text": "no usable answer"})
    return out


def run_vectors(
    impl: Implementation,
    cases: Iterable[VectorCase],
    *,
    timeout_s: float = DEFAULT_LINE_TIMEOUT_S,
    progress: Callable[[CheckRun], None] | None = None,
    hello: Hello | None = None,
    strict: bool = False,
    lenient_codes: bool = False,
) -> tuple[list[CheckRun], list[str]]:
    """Run every case (and round trip) against ``impl``.

    Args:
        impl: the implementation; started here unless ``hello`` says it already is.
        cases: the cases, in order.
        timeout_s: the longest wait for one answer line.
        progress: called with each finished run.
        hello: the hello of an already started implementation.
        strict: judge by the strict profile (see the module docstring).
        lenient_codes: count a refusal with another code as ``ACCEPTABLE`` (listed in the
            notes).

    Returns:
        The runs, and notes about the driver (restarts given up, for example).
    """
    runner = _Runner(impl=impl, timeout_s=timeout_s, hello=hello)
    runs: list[CheckRun] = []

    def finish(run: CheckRun) -> None:
        runs.append(run)
        if progress is not None:
            progress(run)

    for case in cases:
        request = case.request()
        started = monotonic()
        answer, replaced = runner.ask(request)
        took = monotonic() - started
        outcome = (
            replaced
            if replaced is not None
            else judge_answer(case, answer or {}, strict=strict, lenient_codes=lenient_codes)
        )
        outcome.transcript = _transcript(request, answer, took)
        if outcome.verdict in (Verdict.FAIL, Verdict.WARN, Verdict.ERROR):
            outcome.reproduce = impl.reproduce(request)
            outcome.evidence.setdefault("request", request)
        finish(CheckRun(spec=case.spec(), transport="-", outcome=outcome, duration_s=took))
        if not case.has_round_trip:
            continue
        fmt_request = case.format_request()
        started = monotonic()
        answer, replaced = runner.ask(fmt_request)
        took = monotonic() - started
        outcome = (
            replaced
            if replaced is not None
            else judge_answer(case, answer or {}, round_trip=True, strict=strict)
        )
        outcome.transcript = _transcript(fmt_request, answer, took)
        if outcome.verdict in (Verdict.FAIL, Verdict.WARN, Verdict.ERROR):
            outcome.reproduce = impl.reproduce(fmt_request)
            outcome.evidence.setdefault("request", fmt_request)
        finish(CheckRun(spec=case.format_spec(), transport="-", outcome=outcome, duration_s=took))
    if runner.restarts:
        runner.notes.append(f"the driver was restarted {runner.restarts} time(s)")
    other = [
        (run.key, run.outcome.evidence["lenient_code"])
        for run in runs
        if "lenient_code" in run.outcome.evidence
    ]
    if other:
        shown = ", ".join(f"{key} (got {c['got']}, expected {c['expected']})" for key, c in other)
        runner.notes.append(f"--codes lenient: {len(other)} refusal(s) with another code: {shown}")
    return runs, runner.notes
