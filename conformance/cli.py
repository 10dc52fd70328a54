"""simplex-conformance: is this implementation conformant to "Agent protocols over SimpleX"?

Commands::

    simplex-conformance vectors [--impl CMD]       every test vector, against a driver or our library
    simplex-conformance bot TARGET                 live checks of a bot (any --core)
    simplex-conformance caller --command CMD       a client against scripted peers (simulated network)
    simplex-conformance coverage                   which vectors and checks exercise each requirement
    simplex-conformance selftest                   everything, offline, against our own reference
                                                   implementations and the mutant catalogues

Exit status (every command): 0 conformant given the baseline, 1 unexpected failure, 2 stale
baseline entry or expired waiver, 3 nothing measured or target unreachable, 64 usage error;
141 (128 + SIGPIPE) when the reader of standard output closed it (``... | head``), quietly.
``conformance/README.md`` documents every option, the driver protocol and CI recipes.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import importlib
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, TypeAlias

from simplex_protocols import __version__
from simplex_protocols._docs_url import doc_url
from simplex_protocols._groups import run_interruptible
from simplex_protocols._stdio import OUTPUT_CLOSED_EXIT, OutputClosedError, guard_output

from ._model_kinds import ClockMode, OptionsError, Profile, TargetUnreachableError, Verdict

# Baselines, provenance and reports are imported by the functions that use them, so that
# ``--help`` and ``--version`` parse the arguments without them: provenance alone loads
# ``importlib.metadata`` and the reports ``decimal`` and ``xml``, more than the rest of the
# command line together.
if TYPE_CHECKING:
    from ._baseline import Baseline
    from ._model import CallerOptions, CheckRun, LiveOptions
    from ._report import ProgressLine, Report
    from .live import BotOutput

__all__ = ["main"]

EXIT_TABLE = """\
exit status:
  0   conformant given the baseline (every measured check green or expected)
  1   unexpected failure (FAIL or ERROR; WARN too with --strict)
  2   stale baseline entry (the check passes now) or expired waiver
  3   nothing measured, or the target (driver, core, bot, client) unreachable
  64  usage error (options, baseline file, vector folder)
  130 interrupted (Ctrl-C)
  141 the reader closed standard output (`... | head`): the rest is not printed
"""


class UsageError(Exception):
    """A bad command line: exit 64 with the message."""


#: Where ``--help`` is printed (set by :func:`main` for the duration of one call).
_HELP_STREAM: list[TextIO] = []


class _Parser(argparse.ArgumentParser):
    """An argument parser that raises :class:`UsageError` (exit 64) instead of exiting 2,
    and prints its help to the stream :func:`main` was given."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")

    def _print_message(self, message: str, file: Any = None) -> None:
        if message:
            (_HELP_STREAM[-1] if _HELP_STREAM else sys.stdout).write(message)


@dataclass(slots=True)
class _Context:
    stdout: TextIO
    stderr: TextIO
    today: dt.date | None
    argv: list[str]
    progress: bool | None


def _csv(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _add_common(p: argparse.ArgumentParser, *, seed: bool = True, baseline: bool = True) -> None:
    g = p.add_argument_group("reports")
    g.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        type=Path,
        help="write the reports (report.json, junit.xml, report.md, report.txt) and the "
        "transcripts (transcripts/<check>@<transport>.jsonl) to DIR",
    )
    g.add_argument(
        "--format",
        metavar="LIST",
        default=None,
        help="formats to write, comma-separated, of text, json, junit, markdown "
        "(default: all four with -o; without -o exactly one, printed, default text)",
    )
    g.add_argument(
        "--strict",
        action="store_true",
        help="WARN (SHOULD-level) fails the run too; vectors: judge by the strict profile "
        "(this library's hardening where the spec leaves a choice)",
    )
    g.add_argument("-v", "--verbose", action="store_true", help="list every check, green or not")
    g.add_argument(
        "--no-progress", action="store_true", help="no progress line on a terminal's stderr"
    )
    if baseline:
        # A group's description keeps its lines (the parsers' formatter is raw for descriptions),
        # where an option's help would be wrapped and split the address at its hyphens.
        b = p.add_argument_group(
            "baseline",
            "A baseline file's format:\n  " + doc_url("conformance/schemas/baseline.schema.json"),
        )
        b.add_argument(
            "--baseline",
            metavar="FILE",
            type=Path,
            help="expected failures, flaky checks and waivers",
        )
        b.add_argument(
            "--write-baseline",
            metavar="FILE",
            type=Path,
            help="write a baseline that expects every check that is not green now (entries of "
            "--baseline that still apply are kept), then judge the run against it",
        )
    if seed:
        p.add_argument(
            "--seed", type=int, default=0, help="seed of every random choice (default: 0)"
        )
    p.add_argument(
        "--filter",
        metavar="PATTERN",
        action="append",
        default=[],
        help="run only checks matching a check ID, an ID prefix (rpc, chat_call.parse), a glob "
        "(rpc.*-key-*) or a requirement ID (RPC-SIG-3); repeat or separate with commas",
    )


def _parser() -> _Parser:
    from simplex_protocols.core import add_core_argument

    top = _Parser(
        prog="simplex-conformance",
        description="Conformance suite for 'Agent protocols over SimpleX': test vectors for "
        "any language, live checks of a bot, a harness for callers, coverage and a selftest.",
        epilog=EXIT_TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # argparse prints the version through _print_message (the stream main() was given) and
    # exits 0, as it does for --help.
    top.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {__version__}",
        help="print the version and exit",
    )
    sub = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    v = sub.add_parser(
        "vectors",
        help="run every test vector against an implementation",
        description="Run the cases of spec/vectors/ against another implementation through the "
        "line-oriented JSON driver protocol, or against this library in process when --impl "
        "is not given. The driver protocol:\n  "
        + doc_url("conformance/README.md#the-driver-protocol"),
        epilog=EXIT_TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    v.add_argument(
        "--impl",
        metavar="COMMAND",
        help="the driver's command line (split like a shell would, run without a shell)",
    )
    v.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="longest wait for one answer line (default: 10)",
    )
    v.add_argument(
        "--vectors",
        type=Path,
        metavar="DIR",
        help="a folder of vector files (default: the shipped spec/vectors)",
    )
    v.add_argument(
        "--codes",
        choices=["exact", "lenient"],
        default="exact",
        help="exact: an invalid case must be refused with its error code (default); lenient: "
        "a refusal with another code is ACCEPTABLE and listed (an implementation with its own "
        "error codes)",
    )
    _add_common(v, seed=False)

    b = sub.add_parser(
        "bot",
        help="live checks of a bot at a SimpleX address",
        description="Check a bot over both transports: applicability from its declarations, "
        "fixture or black-box profile, signed and unsigned requests, opt-in group checks.",
        epilog=EXIT_TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    b.add_argument("target", nargs="?", help="contact address link, SimpleX name or group link")
    b.add_argument(
        "--builtin",
        metavar="NAME",
        help="check the suite's reference bot ('reference') or one of its mutants on a fresh "
        "simulated network instead of TARGET",
    )
    b.add_argument(
        "--command",
        dest="bot_command",
        metavar="CMD",
        help="start the bot under test with this command line (split like a shell would, run "
        "without a shell) against a simulated core whose WebSocket URL is in "
        "SIMPLEX_CONFORMANCE_CORE; checked on that network, then stopped",
    )
    b.add_argument(
        "--start-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="with --command: how long the bot has to make its contact address (default: 30)",
    )
    b.add_argument(
        "--allow-untestable",
        action="store_true",
        help="with the fixture profile, do not fail the run on checks that are UNTESTABLE "
        "because the bot lacks fixture tools",
    )
    b.add_argument("--profile", choices=[p.value for p in Profile], default=Profile.FIXTURE.value)
    b.add_argument("--transport", default="chat,rpc", help="chat, rpc or both (default: both)")
    b.add_argument("--protocol", default="", help="mcp, a2a or both (default: every declared)")
    b.add_argument("--group", metavar="LINK", help="a test group for the opt-in group checks")
    b.add_argument("--budget", type=int, metavar="N", help="send at most N messages")
    b.add_argument("--dry-run", action="store_true", help="list every message, send nothing")
    b.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS", help="longest wait for an answer"
    )
    b.add_argument(
        "--clock",
        choices=[c.value for c in ClockMode],
        help="manual (simulated time) or system (default: manual on the simulated network)",
    )
    add_core_argument(b)
    _add_common(b)

    c = sub.add_parser(
        "caller",
        help="run a client against scripted peers on the simulated network",
        description="Run an implementer's client against scripted peer behaviours and check "
        "what it sent and what it returned.",
        epilog=EXIT_TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("--command", dest="client", metavar="CMD", help="the client's command line")
    c.add_argument(
        "--builtin",
        metavar="NAME",
        help="run the suite's reference client ('reference') or one of its mutants instead",
    )
    c.add_argument("--transport", default="chat,rpc", help="chat, rpc or both (default: both)")
    c.add_argument("--protocol", default="", help="mcp, a2a or both (default: both)")
    c.add_argument("--dry-run", action="store_true", help="list the scenarios, run nothing")
    c.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS", help="longest wait for the client"
    )
    _add_common(c)

    cov = sub.add_parser(
        "coverage",
        help="which vectors and checks exercise each requirement",
        description="List, for every requirement, the vectors and checks that exercise it, and "
        "the requirements nothing checks with the recorded reason. Exit 1 when a MUST has "
        "neither a check nor a recorded exclusion, or a check names an unknown requirement.",
    )
    cov.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    cov.add_argument("-o", "--output", metavar="DIR", type=Path, help="write coverage.json to DIR")

    s = sub.add_parser(
        "selftest",
        help="prove the suite offline against the reference implementations and the mutants",
        description="Run the vectors against this library, the live suite against the reference "
        "bot and the caller harness against the reference client over the seeded simulated "
        "network, then every mutant: each must be caught, and every MUST check must catch one.",
        epilog=EXIT_TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run the live and caller parts N times with the same seed; verdicts must be identical",
    )
    s.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="run N mutants at the same time, each on its own simulated network (default: 1)",
    )
    s.add_argument(
        "--parts",
        default="vectors,live,caller,mutants",
        help="which parts to run (default: vectors,live,caller,mutants)",
    )
    _add_common(s, baseline=False)
    return top


# ---------------------------------------------------------------------------- helpers


def _formats(args: argparse.Namespace) -> list[str]:
    from ._report import FORMATS

    raw = args.format
    if raw is None:
        return list(FORMATS) if args.output is not None else ["text"]
    chosen = _csv(raw)
    unknown = [f for f in chosen if f not in FORMATS]
    if unknown or not chosen:
        raise UsageError(
            f"--format: unknown format(s) {', '.join(unknown) or '(none)'}; use {', '.join(FORMATS)}"
        )
    if args.output is None and len(chosen) != 1:
        raise UsageError("--format: without -o DIR, name exactly one format (it is printed)")
    return chosen


def _filters(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(p for item in args.filter for p in _csv(item))


def _subset(value: str, allowed: Sequence[str], option: str) -> tuple[str, ...]:
    chosen = _csv(value)
    wrong = [v for v in chosen if v not in allowed]
    if wrong:
        raise UsageError(f"{option}: unknown value(s) {', '.join(wrong)}; use {', '.join(allowed)}")
    return tuple(dict.fromkeys(chosen))


def _load_baseline(args: argparse.Namespace) -> Baseline | None:
    path: Path | None = getattr(args, "baseline", None)
    if path is None:
        return None
    from ._baseline import BaselineError, load_baseline

    try:
        return load_baseline(path)
    except BaselineError as exc:
        raise UsageError(str(exc)) from exc


def _progress(ctx: _Context, args: argparse.Namespace, total: int | None) -> ProgressLine:
    from ._report import ProgressLine

    enabled = False if args.no_progress else ctx.progress
    return ProgressLine(ctx.stderr, total=total, enabled=enabled)


def _registry(name: str, entry: str) -> Any:
    """A runner module of the suite, or ``None`` when it is not installed (or has no ``entry``)."""
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (exc.name == name or name.startswith(exc.name + ".")):
            return None
        raise
    return module if callable(getattr(module, entry, None)) else None


def _finish(
    ctx: _Context,
    args: argparse.Namespace,
    *,
    command: str,
    runs: list[CheckRun],
    prov: dict[str, Any],
    retry: Callable[[CheckRun], CheckRun | None] | None,
    unreachable: str | None = None,
    notes: list[str] | None = None,
    selected: int = 0,
    failed_parts: list[str] | None = None,
) -> int:
    """Baseline, report, outputs, exit status: the same for every command that runs checks.

    ``selected`` is how many check runs were chosen, when no run could be made for them (an
    unreachable driver), so that the summary counts them as not measured. ``failed_parts``
    are reasons the command fails beyond its runs' verdicts (exit 1).
    """
    from ._baseline import apply_baseline, baseline_from_runs, retry_flaky
    from ._report import Report

    formats = _formats(args)
    baseline = _load_baseline(args)
    today = ctx.today or dt.datetime.now(dt.UTC).date()
    if baseline is not None and retry is not None:
        retry_flaky(runs, baseline, today, retry)
    report = Report(
        command=command,
        runs=runs,
        provenance=prov,
        strict=args.strict,
        unreachable=unreachable,
        notes=list(notes or []),
        selected=selected,
        failed_parts=list(failed_parts or []),
    )
    target_path: Path | None = getattr(args, "write_baseline", None)
    if target_path is not None and unreachable is None:
        baseline = baseline_from_runs(report.runs, today=today, previous=baseline)
        baseline.write(target_path)
        report.notes.append(
            f"baseline written to {target_path} ({len(baseline.expected_failures)} expected failure(s))"
        )
    if baseline is not None:
        report.baseline = apply_baseline(report.runs, baseline, today)
    _emit(ctx, args, report, formats)
    return int(report.exit_code)


def _emit(ctx: _Context, args: argparse.Namespace, report: Report, formats: list[str]) -> None:
    from ._report import render, write_outputs

    if args.output is not None:
        written = write_outputs(report, args.output, formats)
        ctx.stdout.write(render(report, "text") if not args.verbose else _verbose_text(report))
        ctx.stdout.write("reports: " + ", ".join(str(p) for p in written) + "\n")
    else:
        fmt = formats[0]
        ctx.stdout.write(
            _verbose_text(report) if fmt == "text" and args.verbose else render(report, fmt)
        )
    ctx.stdout.flush()


def _verbose_text(report: Report) -> str:
    from ._report import render_text

    return render_text(report, verbose=True)


# ---------------------------------------------------------------------------- vectors


def _cmd_vectors(ctx: _Context, args: argparse.Namespace) -> int:
    from ._driver import (
        DriverFailure,
        DriverProcess,
        Implementation,
        InProcessImplementation,
        default_env,
    )
    from ._provenance import provenance, suite_version, utc_now
    from ._vectors import VectorFileError, load_vectors, run_vectors

    _formats(args)
    _load_baseline(args)
    if args.timeout <= 0:
        raise UsageError("--timeout must be more than 0 seconds")
    try:
        vectors = load_vectors(args.vectors)
    except VectorFileError as exc:
        raise UsageError(str(exc)) from exc
    patterns = _filters(args)
    cases = vectors.select(patterns)
    if patterns and not cases:
        # A pattern that names nothing is a mistyped command line, not a target that could
        # not be measured: say so, as a usage error.
        raise UsageError(
            f"--filter {','.join(patterns)}: no vector case matches (a pattern is a case ID, "
            "a family, an operation, a file, a requirement ID or a glob over case IDs)"
        )
    started = utc_now()
    impl: Implementation
    if args.impl is not None:
        try:
            impl = DriverProcess(
                args.impl,
                operations=vectors.operations(),
                suite_version=suite_version(),
                env=default_env(),
            )
        except ValueError as exc:
            raise UsageError(f"--impl: {exc}") from exc
    else:
        impl = InProcessImplementation()

    def prov(info: dict[str, Any] | None) -> dict[str, Any]:
        return provenance(
            command="vectors",
            started=started,
            ended=utc_now(),
            seed=None,
            clock="none",
            core=None,
            target=args.impl,
            implementation=info,
            vectors_sha256=vectors.sha256,
            argv=ctx.argv,
            extra={"driver": impl.description, "cases": len(cases)},
        )

    try:
        hello = impl.start()
    except DriverFailure as exc:
        return _finish(
            ctx,
            args,
            command="vectors",
            runs=[],
            prov=prov(None),
            retry=None,
            unreachable=f"the driver could not be started ({exc.kind}: {exc.detail})",
            selected=sum(len(c.specs()) for c in cases),
        )
    by_id = {case.id: case for case in cases}
    progress = _progress(ctx, args, sum(len(c.specs()) for c in cases))
    try:
        runs, notes = run_vectors(
            impl,
            cases,
            timeout_s=args.timeout,
            progress=progress,
            hello=hello,
            strict=args.strict,
            lenient_codes=args.codes == "lenient",
        )
        progress.done()

        def retry(run: CheckRun) -> CheckRun | None:
            case = by_id.get(run.spec.id.removesuffix("+format"))
            if case is None:
                return None
            again, _ = run_vectors(
                impl,
                [case],
                timeout_s=args.timeout,
                strict=args.strict,
                lenient_codes=args.codes == "lenient",
            )
            return next((r for r in again if r.key == run.key), None)

        return _finish(
            ctx,
            args,
            command="vectors",
            runs=runs,
            prov=prov(dict(hello.implementation)),
            retry=retry,
            notes=notes,
        )
    finally:
        impl.close()


# ---------------------------------------------------------------------------- bot, caller

#: Called with a run's check runs (none when the target was unreachable); returns notes for
#: the report and reasons the run fails beyond its verdicts.
_AfterRun: TypeAlias = "Callable[[list[CheckRun]], tuple[list[str], list[str]]]"


def _clock_for(args: argparse.Namespace) -> ClockMode:
    if args.clock:
        return ClockMode(args.clock)
    from simplex_protocols.core import CoreKind

    if args.builtin or (args.core is not None and args.core.kind is CoreKind.SIMULATOR):
        return ClockMode.MANUAL
    return ClockMode.SYSTEM


def _print_plan(ctx: _Context, runs: list[CheckRun]) -> None:
    total = 0
    for run in runs:
        sent = [t for t in run.outcome.transcript if t.get("dir") == "out"]
        total += len(sent)
        ctx.stdout.write(
            f"{run.key}  [{','.join(run.spec.requirements)}]  {len(sent)} message(s)\n"
        )
        for item in sent:
            text = item.get("text") or item.get("cmd") or item.get("line") or item
            ctx.stdout.write(f"    → {text}\n")
    ctx.stdout.write(f"dry run: {len(runs)} check run(s), {total} message(s); nothing was sent\n")


def _run_delegated(
    ctx: _Context,
    args: argparse.Namespace,
    *,
    command: str,
    module_name: str,
    entry: str,
    options: LiveOptions | CallerOptions,
    target: str | None,
    core: str | None,
    after_run: _AfterRun | None = None,
) -> int:
    """Run ``module_name.entry(options)`` and finish as every command does; ``after_run``
    (given the runs, none when the target was unreachable) adds notes and failed parts."""
    from ._provenance import provenance, utc_now
    from ._report import ExitCode

    _formats(args)
    _load_baseline(args)
    started = utc_now()
    module = _registry(module_name, entry)

    def prov() -> dict[str, Any]:
        return provenance(
            command=command,
            started=started,
            ended=utc_now(),
            seed=options.seed,
            clock=options.clock.value,
            core=core,
            target=target,
            argv=ctx.argv,
            extra={"builtin": options.builtin},
        )

    if module is None:
        return _finish(
            ctx,
            args,
            command=command,
            runs=[],
            prov=prov(),
            retry=None,
            unreachable=f"{module_name} is not installed, so nothing can be checked",
        )
    runner: Callable[[Any], list[CheckRun]] = getattr(module, entry)
    progress = _progress(ctx, args, None)
    options = dataclasses.replace(options, progress=progress)
    try:
        runs = list(runner(options))
    except OptionsError as exc:
        progress.done()
        raise UsageError(str(exc)) from exc
    except TargetUnreachableError as exc:
        progress.done()
        notes, failed = after_run([]) if after_run is not None else ([], [])
        return _finish(
            ctx,
            args,
            command=command,
            runs=[],
            prov=prov(),
            retry=None,
            unreachable=str(exc),
            notes=notes,
            failed_parts=failed,
        )
    progress.done()
    if getattr(options, "dry_run", False):
        _print_plan(ctx, runs)
        return int(ExitCode.OK)

    def retry(run: CheckRun) -> CheckRun | None:
        transports = (run.transport,) if run.transport in ("chat", "rpc") else options.transports
        again = runner(
            dataclasses.replace(
                options, checks=(run.spec.id,), transports=transports, progress=None
            )
        )
        return next((r for r in again if r.key == run.key), None)

    notes, failed = after_run(runs) if after_run is not None else ([], [])
    return _finish(
        ctx,
        args,
        command=command,
        runs=runs,
        prov=prov(),
        retry=retry,
        notes=notes,
        failed_parts=failed,
    )


def _cmd_bot(ctx: _Context, args: argparse.Namespace) -> int:
    named = [name for name in (args.target, args.builtin, args.bot_command) if name is not None]
    if len(named) != 1:
        raise UsageError("bot: give either TARGET or --builtin NAME, or the bot's --command CMD")
    if args.budget is not None and args.budget < 0:
        raise UsageError("--budget must be 0 or more")
    if args.timeout <= 0:
        raise UsageError("--timeout must be more than 0 seconds")
    if args.bot_command is not None:
        if args.core is not None:
            raise UsageError("bot: --command runs the bot on a simulated core; no --core")
        if args.clock == ClockMode.MANUAL.value:
            raise UsageError("bot: a bot started with --command runs on real time")
        if args.start_timeout <= 0:
            raise UsageError("--start-timeout must be more than 0 seconds")
    transports = _subset(args.transport, ("chat", "rpc"), "--transport")
    if not transports:
        raise UsageError("--transport: name chat, rpc or both")
    fields: dict[str, Any] = {
        "target": args.target,
        "builtin": args.builtin,
        "core": args.core,
        "profile": Profile(args.profile),
        "transports": transports,
        "protocols": _subset(args.protocol, ("mcp", "a2a"), "--protocol"),
        "group_link": args.group,
        "budget": args.budget,
        "dry_run": args.dry_run,
        "seed": args.seed,
        "clock": _clock_for(args),
        "timeout_s": args.timeout,
        "output_dir": args.output,
        "checks": _filters(args),
    }
    output = None
    options: LiveOptions
    if args.bot_command is not None:
        from .live import BotOutput, CommandOptions

        output = BotOutput()
        options = CommandOptions(
            **fields,
            command=args.bot_command,
            start_timeout_s=args.start_timeout,
            output=output,
        )
        core = "sim (started by the suite)"
        target = f"command:{args.bot_command}"
    else:
        from . import _model

        options = _model.LiveOptions(**fields)
        core = "sim (builtin)" if args.builtin else (str(args.core) if args.core else "default")
        target = args.target or f"builtin:{args.builtin}"
    return _run_delegated(
        ctx,
        args,
        command="bot",
        module_name="simplex_protocols.conformance.live",
        entry="run_bot",
        options=options,
        target=target,
        core=core,
        after_run=_bot_after_run(args, output),
    )


def _bot_after_run(args: argparse.Namespace, output: BotOutput | None) -> _AfterRun:
    """The fixture profile's gate on missing fixture tools, and what a started bot left."""

    def after(runs: list[CheckRun]) -> tuple[list[str], list[str]]:
        # From the runner module itself, as run_bot is: a runner without it has no such gate.
        live = _registry("simplex_protocols.conformance.live", "missing_fixture")
        failed: list[str] = []
        missing: list[CheckRun] = live.missing_fixture(runs) if live is not None else []
        if args.profile == Profile.FIXTURE.value and missing and not args.allow_untestable:
            names = sorted({str(r.outcome.evidence["missingFixture"]) for r in missing})
            failed.append(
                f"{len(missing)} check run(s) UNTESTABLE because the bot lacks fixture tools or "
                f"behaviours ({', '.join(names)}): implement them, check with --profile "
                "blackbox, or accept them with --allow-untestable"
            )
        notes = _bot_output_notes(args, output, runs, failed) if output is not None else []
        return notes, failed

    return after


def _bot_output_notes(
    args: argparse.Namespace, output: BotOutput, runs: list[CheckRun], failed: list[str]
) -> list[str]:
    """Notes on the process ``--command`` started: how it ended and, when the run did not
    pass, the end of its standard error (all of it goes to ``-o DIR/bot-stderr.txt``)."""
    notes: list[str] = []
    if runs and output.exited_by_itself:
        notes.append(f"the bot exited by itself during the run, with status {output.exit_code}")
    if args.output is not None and output.argv:
        args.output.mkdir(parents=True, exist_ok=True)
        path = args.output / "bot-stderr.txt"
        path.write_text(output.stderr, encoding="utf-8", errors="replace")
        notes.append(f"the bot's standard error: {path}")
    failing = (Verdict.FAIL, Verdict.ERROR)
    did_not_pass = (
        not runs
        or bool(failed)
        or output.exited_by_itself
        or any(r.outcome.verdict in failing for r in runs)
    )
    tail = output.stderr_tail()
    if did_not_pass and tail:
        notes.append("the bot's standard error ends:\n" + "\n".join(f"    | {t}" for t in tail))
    return notes


def _cmd_caller(ctx: _Context, args: argparse.Namespace) -> int:
    if (args.client is None) == (args.builtin is None):
        raise UsageError("caller: give either --command CMD or --builtin NAME")
    if args.timeout <= 0:
        raise UsageError("--timeout must be more than 0 seconds")
    transports = _subset(args.transport, ("chat", "rpc"), "--transport")
    if not transports:
        raise UsageError("--transport: name chat, rpc or both")
    from . import _model

    options = _model.CallerOptions(
        command=args.client,
        builtin=args.builtin,
        protocols=_subset(args.protocol, ("mcp", "a2a"), "--protocol"),
        transports=transports,
        dry_run=args.dry_run,
        seed=args.seed,
        clock=ClockMode.MANUAL,
        timeout_s=args.timeout,
        output_dir=args.output,
        checks=_filters(args),
    )
    return _run_delegated(
        ctx,
        args,
        command="caller",
        module_name="simplex_protocols.conformance.caller",
        entry="run_caller",
        options=options,
        target=args.client or f"builtin:{args.builtin}",
        core="sim",
    )


# ---------------------------------------------------------------------------- coverage


def _cmd_coverage(ctx: _Context, args: argparse.Namespace) -> int:
    from ._coverage import measure_coverage, render_coverage_markdown, render_coverage_text
    from ._report import ExitCode, dump_json

    coverage = measure_coverage()
    if args.format == "json":
        text = dump_json(coverage.to_json())
    elif args.format == "markdown":
        text = render_coverage_markdown(coverage)
    else:
        text = render_coverage_text(coverage)
    ctx.stdout.write(text)
    if args.output is not None:
        args.output.mkdir(parents=True, exist_ok=True)
        (args.output / "coverage.json").write_text(dump_json(coverage.to_json()), encoding="utf-8")
    return int(ExitCode.FAILED if coverage.problems() else ExitCode.OK)


# ---------------------------------------------------------------------------- selftest


def _cmd_selftest(ctx: _Context, args: argparse.Namespace) -> int:
    from ._selftest import PARTS, SelftestOptions, run_selftest

    formats = _formats(args)
    if args.repeat < 1:
        raise UsageError("--repeat must be 1 or more")
    if args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    parts = _subset(args.parts, PARTS, "--parts")
    if not parts:
        raise UsageError("--parts: name at least one of " + ", ".join(PARTS))
    progress = _progress(ctx, args, None)
    report = run_selftest(
        SelftestOptions(
            parts=parts,
            seed=args.seed,
            repeat=args.repeat,
            jobs=args.jobs,
            strict=args.strict,
            checks=_filters(args),
            argv=ctx.argv,
            progress=progress,
            log=ctx.stderr if not args.no_progress else None,
        )
    )
    progress.done()
    _emit(ctx, args, report, formats)
    return int(report.exit_code)


# ---------------------------------------------------------------------------- main


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    today: dt.date | None = None,
    progress: bool | None = None,
) -> int:
    """Run ``simplex-conformance`` and return its exit status.

    Args:
        argv: the arguments without the program name (default: ``sys.argv[1:]``).
        stdout: where reports go (default: ``sys.stdout``). When its reader closes it (a
            broken pipe), the command stops there, quietly, and returns 141.
        stderr: where errors and the progress line go (default: ``sys.stderr``).
        today: the date waivers are checked against (default: today, UTC).
        progress: force the progress line on or off (default: only on a terminal).
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    ctx = _Context(
        stdout=guard_output(stdout if stdout is not None else sys.stdout),
        stderr=stderr if stderr is not None else sys.stderr,
        today=today,
        argv=args_list,
        progress=progress,
    )
    return run_interruptible(
        lambda: _main(ctx, args_list), program="simplex-conformance", stderr=ctx.stderr
    )


def _main(ctx: _Context, args_list: list[str]) -> int:
    parser = _parser()
    _HELP_STREAM.append(ctx.stdout)
    try:
        try:
            args = parser.parse_args(args_list)
        except SystemExit as exc:  # --help exits through argparse
            return int(exc.code or 0)
        if args.command is None:
            ctx.stdout.write(parser.format_help())
            from ._report import ExitCode

            return int(ExitCode.USAGE)
        handler = {
            "vectors": _cmd_vectors,
            "bot": _cmd_bot,
            "caller": _cmd_caller,
            "coverage": _cmd_coverage,
            "selftest": _cmd_selftest,
        }[args.command]
        return handler(ctx, args)
    except UsageError as exc:
        ctx.stderr.write(textwrap.fill(str(exc), width=100) + "\n")
        ctx.stderr.write("see simplex-conformance --help\n")
        from ._report import ExitCode

        return int(ExitCode.USAGE)
    except OutputClosedError:
        # `simplex-conformance ... | head`: the reader has what it wanted; end as a program
        # stopped by SIGPIPE would, without a traceback.
        return OUTPUT_CLOSED_EXIT
    finally:
        _HELP_STREAM.pop()
