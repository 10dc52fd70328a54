"""The selftest: the suite proves itself, offline and deterministically.

Parts (``simplex-conformance selftest --parts``):

- ``vectors``: every vector case against this library, in process: each must be ``PASS`` or
  ``ACCEPTABLE``;
- ``live``: the live suite against the reference bot on a fresh, seeded simulated network with
  a manual clock (``simplex_protocols.conformance.live.run_bot`` with ``builtin="reference"``): every run must be
  ``PASS``, ``ACCEPTABLE`` or ``NA``;
- ``caller``: the caller harness against the reference client, with the same rule;
- ``mutants``: every mutant of ``simplex_protocols.conformance.live.mutants()`` and ``simplex_protocols.conformance.caller.mutants()``
  is run against the checks of the requirements it switches off; at least one of them must
  give ``FAIL`` or ``WARN`` (the mutant is *killed*). A surviving mutant fails the selftest, and
  so does a check of a MUST-level requirement that kills no mutant, unless the check records
  ``mutation_exempt`` or ``conformance/exclusions.json`` lists it under ``unkilled_checks``.

With ``repeat`` above 1, the live and caller parts run that many times with the same seed and
every run must give the same verdicts (the determinism gate).
"""

from __future__ import annotations

import concurrent.futures
import importlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TextIO

from ._model import (
    FAILING_LEVELS,
    CallerOptions,
    CheckRun,
    CheckSpec,
    ClockMode,
    LiveOptions,
    Mutant,
    Verdict,
    matches_filter,
    requirement_levels,
)
from ._provenance import provenance, utc_now
from ._report import Report

__all__ = ["PARTS", "SelftestOptions", "kill_matrix_text", "run_selftest"]

PARTS: Final = ("vectors", "live", "caller", "mutants")

#: Verdicts a reference implementation may get.
REFERENCE_OK: Final = frozenset({Verdict.PASS, Verdict.ACCEPTABLE, Verdict.NA})

#: Verdicts that kill a mutant.
KILLS: Final = frozenset({Verdict.FAIL, Verdict.WARN})


@dataclass(slots=True)
class SelftestOptions:
    """What the selftest runs.

    Attributes:
        parts: a subset of :data:`PARTS`.
        seed: the seed of the simulated networks.
        repeat: how many times the live and caller parts run (identical verdicts required).
        strict: whether ``WARN`` fails (for the report; the reference parts never allow WARN).
        checks: a filter (:func:`simplex_protocols.conformance._model.matches_filter`) over every part.
        argv: the command line, for the provenance.
        progress: called with each run of the reference parts.
        log: where to write one line per part (``None``: nowhere).
        registries: the modules that provide ``run_bot``/``run_caller``, ``mutants`` and
            ``all_checks`` (tests replace them).
        exclusions: the recorded exclusions (default: ``conformance/exclusions.json``).
        jobs: how many mutants run at the same time (each on its own simulated network).
    """

    parts: Sequence[str] = PARTS
    seed: int = 0
    repeat: int = 1
    strict: bool = False
    checks: tuple[str, ...] = ()
    argv: list[str] | None = None
    progress: Callable[[CheckRun], None] | None = None
    log: TextIO | None = None
    registries: dict[str, Any] = field(default_factory=dict)
    exclusions: dict[str, Any] | None = None
    jobs: int = 1


@dataclass(slots=True)
class _Side:
    """One runner module: the live suite or the caller harness."""

    name: str  # "live" or "caller"
    module_name: str
    entry: str
    module: Any

    def run(
        self, options: SelftestOptions, builtin: str, checks: tuple[str, ...]
    ) -> list[CheckRun]:
        runner: Callable[[Any], list[CheckRun]] = getattr(self.module, self.entry)
        common: dict[str, Any] = {
            "builtin": builtin,
            "checks": checks,
            "seed": options.seed,
            "clock": ClockMode.MANUAL,
        }
        opts = LiveOptions(**common) if self.name == "live" else CallerOptions(**common)
        return list(runner(opts))

    def mutants(self) -> list[Mutant]:
        return list(self.module.mutants())

    def all_checks(self) -> list[CheckSpec]:
        return list(self.module.all_checks())


def _load(options: SelftestOptions, name: str, entry: str) -> Any:
    if name in options.registries:
        return options.registries[name]
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (exc.name == name or name.startswith(exc.name + ".")):
            return None
        raise
    needed = (entry, "mutants", "all_checks")
    return module if all(callable(getattr(module, n, None)) for n in needed) else None


def _say(options: SelftestOptions, text: str) -> None:
    if options.log is not None:
        options.log.write(f"selftest: {text}\n")
        options.log.flush()


def _not_ok(runs: Sequence[CheckRun]) -> list[str]:
    return [
        f"{r.key} {r.outcome.verdict.value}" for r in runs if r.outcome.verdict not in REFERENCE_OK
    ]


def _fingerprint(runs: Sequence[CheckRun]) -> list[tuple[str, str]]:
    return [(r.key, r.outcome.verdict.value) for r in runs]


def _diff(first: Sequence[CheckRun], other: Sequence[CheckRun]) -> list[str]:
    a, b = dict(_fingerprint(first)), dict(_fingerprint(other))
    keys = sorted(set(a) | set(b))
    return [
        f"{k}: {a.get(k, 'absent')} then {b.get(k, 'absent')}" for k in keys if a.get(k) != b.get(k)
    ]


def _short_list(items: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" … (+{len(items) - limit})" if len(items) > limit else "")


def run_selftest(options: SelftestOptions) -> Report:
    """Run the chosen parts and return one report (see the module docstring for the gates).

    The report's runs are those of the reference parts (first repetition); the kill matrix,
    the durations and the determinism results are in ``report.extra`` and in the appendix.
    """
    started = utc_now()
    runs: list[CheckRun] = []
    failed: list[str] = []
    notes: list[str] = []
    extra: dict[str, Any] = {
        "parts": list(options.parts),
        "durations_s": {},
        "repeat": options.repeat,
    }
    vectors_sha: str | None = None

    def timed(part: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        try:
            return fn()
        finally:
            extra["durations_s"][part] = round(time.perf_counter() - t0, 3)

    if "vectors" in options.parts:
        from ._driver import InProcessImplementation
        from ._vectors import load_vectors, run_vectors

        vectors = load_vectors()
        vectors_sha = vectors.sha256
        impl = InProcessImplementation()
        cases = vectors.select(options.checks)
        vruns, vnotes = timed(
            "vectors",
            # The strict profile is this library's own reading: the reference passes it.
            lambda: run_vectors(
                impl, cases, progress=options.progress, hello=impl.start(), strict=True
            ),
        )
        runs += vruns
        notes += vnotes
        bad = _not_ok(vruns)
        if bad:
            failed.append(
                f"vectors: our library is not green on {len(bad)} case(s): {_short_list(bad)}"
            )
        _say(options, f"vectors: {len(vruns)} runs, {len(bad)} not green")

    sides: list[_Side] = []
    for name, module_name, entry in (
        ("live", "simplex_protocols.conformance.live", "run_bot"),
        ("caller", "simplex_protocols.conformance.caller", "run_caller"),
    ):
        wanted = name in options.parts or "mutants" in options.parts
        if not wanted:
            continue
        module = _load(options, module_name, entry)
        if module is None:
            failed.append(
                f"{name}: {module_name} is not installed (or lacks {entry}, mutants, "
                "all_checks), so this part cannot run"
            )
            continue
        sides.append(_Side(name=name, module_name=module_name, entry=entry, module=module))

    determinism: dict[str, Any] = {}
    for side in sides:
        if side.name not in options.parts:
            continue
        t_part = time.perf_counter()
        first = side.run(options, "reference", options.checks)
        extra["durations_s"][side.name] = round(time.perf_counter() - t_part, 3)
        if options.progress is not None:
            for run in first:
                options.progress(run)
        runs += first
        bad = _not_ok(first)
        if bad:
            failed.append(
                f"{side.name}: the reference is not green on {len(bad)} run(s): {_short_list(bad)}"
            )
        if not first:
            failed.append(f"{side.name}: the reference run returned no check runs")
        _say(options, f"{side.name}: {len(first)} runs against the reference, {len(bad)} not green")
        diffs: list[str] = []
        t0 = time.perf_counter()
        for i in range(2, options.repeat + 1):
            again = side.run(options, "reference", options.checks)
            d = _diff(first, again)
            if d:
                diffs.append(f"repetition {i}: " + _short_list(d))
        if options.repeat > 1:
            determinism[side.name] = {
                "repetitions": options.repeat,
                "identical": not diffs,
                "differences": diffs,
                "duration_s": round(time.perf_counter() - t0, 3),
            }
            _say(
                options,
                f"{side.name}: {options.repeat} seeded runs, {'identical' if not diffs else 'DIFFERENT'}",
            )
        if diffs:
            failed.append(f"{side.name}: seeded reruns gave different verdicts: {'; '.join(diffs)}")
    if determinism:
        extra["determinism"] = determinism

    appendix = ""
    mutant_runs = 0
    if "mutants" in options.parts and sides:
        matrix, mfailed, appendix = timed("mutants", lambda: _mutants(options, sides))
        extra["kill_matrix"] = matrix
        mutant_runs = sum(len(m["verdicts"]) for m in matrix["mutants"])
        failed += mfailed
        _say(options, f"mutants: {len(matrix['mutants'])} run, {len(mfailed)} problem(s)")

    report = Report(
        command="selftest",
        runs=runs,
        provenance=provenance(
            command="selftest",
            started=started,
            ended=utc_now(),
            seed=options.seed,
            clock=ClockMode.MANUAL.value,
            core="sim",
            target="builtin:reference",
            vectors_sha256=vectors_sha,
            argv=options.argv,
        ),
        strict=options.strict,
        notes=notes,
        extra=extra,
        failed_parts=failed,
        appendix=appendix,
        measured_elsewhere=mutant_runs,
    )
    return report


def _mutants(
    options: SelftestOptions, sides: Sequence[_Side]
) -> tuple[dict[str, Any], list[str], str]:
    """Run every mutant; return the kill matrix, the problems and its text."""
    from ._coverage import exclusions

    levels = requirement_levels()
    recorded = (options.exclusions if options.exclusions is not None else exclusions()).get(
        "unkilled_checks", {}
    )
    mutants_out: list[dict[str, Any]] = []
    problems: list[str] = []
    kills_by_check: dict[str, list[str]] = {}
    names: set[str] = set()
    jobs: list[tuple[_Side, Mutant]] = []
    for side in sides:
        for mutant in side.mutants():
            if mutant.name in names:
                problems.append(f"mutant {mutant.name} is listed twice")
                continue
            names.add(mutant.name)
            if options.checks and not any(
                p == mutant.name or p in mutant.requirements for p in options.checks
            ):
                continue  # a filter narrows the selftest to some requirements or mutants
            unknown = [r for r in mutant.requirements if r not in levels]
            if unknown or not mutant.requirements:
                problems.append(
                    f"mutant {mutant.name} names unknown or no requirements: {', '.join(unknown) or '(none)'}"
                )
                continue
            jobs.append((side, mutant))

    def run_one(job: tuple[_Side, Mutant]) -> tuple[list[CheckRun] | Exception, float]:
        side, mutant = job
        t0 = time.perf_counter()
        try:
            return side.run(
                options, mutant.name, tuple(mutant.requirements)
            ), time.perf_counter() - t0
        except Exception as exc:  # a mutant that breaks the runner is a harness bug: report it
            return exc, time.perf_counter() - t0

    if options.jobs > 1 and len(jobs) > 1:
        # Each mutant runs on its own simulated network: they are independent, and the mutant
        # clients are processes, so a few run side by side; results keep the catalogue's order.
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=options.jobs)
        try:
            results = list(pool.map(run_one, jobs))
        finally:
            # On Ctrl-C the mutants not started yet are dropped, not run to the end first.
            pool.shutdown(wait=True, cancel_futures=True)
    else:
        results = [run_one(job) for job in jobs]
    for (side, mutant), (outcome, took) in zip(jobs, results, strict=True):
        if isinstance(outcome, Exception):
            problems.append(
                f"mutant {mutant.name}: the {side.name} runner raised {type(outcome).__name__}: {outcome}"
            )
            continue
        mruns = outcome
        relevant = [r for r in mruns if set(r.spec.requirements) & set(mutant.requirements)]
        killers = [r for r in relevant if r.outcome.verdict in KILLS]
        for r in killers:
            kills_by_check.setdefault(r.spec.id, []).append(mutant.name)
        entry = {
            "mutant": mutant.name,
            "side": side.name,
            "requirements": list(mutant.requirements),
            "description": mutant.description,
            "killed": bool(killers),
            "killed_by": [f"{r.key} ({r.outcome.verdict.value})" for r in killers],
            "verdicts": {r.key: r.outcome.verdict.value for r in relevant},
            "duration_s": round(took, 3),
        }
        mutants_out.append(entry)
        if not killers:
            seen = (
                ", ".join(f"{r.key} {r.outcome.verdict.value}" for r in relevant) or "no check ran"
            )
            problems.append(
                f"mutant {mutant.name} survived ({', '.join(mutant.requirements)}): {seen}"
            )
    # every MUST check must kill a mutant, unless recorded
    unkilled: list[dict[str, str]] = []
    check_rows: list[dict[str, Any]] = []
    for side in sides:
        for spec in side.all_checks():
            if options.checks and not matches_filter(spec, options.checks):
                continue
            must = [r for r in spec.requirements if levels.get(r) in FAILING_LEVELS]
            killed = sorted(set(kills_by_check.get(spec.id, [])))
            row = {"check": spec.id, "side": side.name, "must": must, "kills": killed}
            check_rows.append(row)
            if not must or killed:
                if spec.id in recorded and killed:
                    problems.append(
                        f"exclusions.json lists {spec.id} under unkilled_checks, but it kills "
                        f"{', '.join(killed)}: remove the entry"
                    )
                continue
            reason = spec.mutation_exempt or recorded.get(spec.id)
            if reason:
                row["exempt"] = reason
                unkilled.append({"check": spec.id, "reason": reason})
                continue
            problems.append(
                f"check {spec.id} ({', '.join(must)}) kills no mutant and records no reason"
            )
    if not options.checks:
        known = {row["check"] for row in check_rows}
        problems += [
            f"exclusions.json lists unknown check {check} under unkilled_checks"
            for check in sorted(set(recorded) - known)
        ]
    matrix = {"mutants": mutants_out, "checks": check_rows, "exempt": unkilled}
    return matrix, problems, kill_matrix_text(matrix)


def kill_matrix_text(matrix: dict[str, Any]) -> str:
    """The kill matrix for the terminal: one row per mutant, then the MUST checks' kill counts."""
    lines = ["kill matrix (mutant: the checks that caught it):"]
    for m in matrix["mutants"]:
        status = "KILLED  " if m["killed"] else "SURVIVED"
        by = ", ".join(m["killed_by"]) if m["killed"] else "no check of these requirements failed"
        lines.append(f"  {status} {m['mutant']} [{', '.join(m['requirements'])}]: {by}")
    musts = [c for c in matrix["checks"] if c["must"]]
    if musts:
        killed = sum(1 for c in musts if c["kills"])
        exempt = sum(1 for c in musts if not c["kills"] and c.get("exempt"))
        lines.append(
            f"MUST checks: {len(musts)} · kill at least one mutant {killed} · "
            f"exempt with a reason {exempt} · neither {len(musts) - killed - exempt}"
        )
        for c in musts:
            if c["kills"]:
                continue
            tag = f"exempt: {c['exempt']}" if c.get("exempt") else "KILLS NO MUTANT"
            lines.append(f"  {c['check']} [{', '.join(c['must'])}]: {tag}")
    total = len(matrix["mutants"])
    killed_m = sum(1 for m in matrix["mutants"] if m["killed"])
    lines.append(f"mutants killed {killed_m}/{total}")
    return "\n".join(lines) + "\n"
