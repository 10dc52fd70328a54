"""``simplex-conformance bot``: run the live checks against a bot and return one
:class:`CheckRun` per check and transport."""

from __future__ import annotations

import contextlib
import dataclasses
import shlex
import tempfile
import time
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import anyio

from simplex_protocols.conformance._model import (
    CheckRun,
    CheckSpec,
    ClockMode,
    LiveOptions,
    OptionsError,
    Outcome,
    Verdict,
    matches_filter,
)
from simplex_protocols.errors import CoreConnectionError

from ._context import CheckContext, FixtureMissing, LiveCheck, RunState, TargetFacts, Untestable
from ._environment import BotFactory, CoreEnvironment, SimEnvironment, known_builtins
from ._registry import CHECKS
from ._session import BudgetExceeded, Recorder, Session

__all__ = [
    "all_checks",
    "applicability",
    "missing_fixture",
    "run_bot",
    "run_bot_async",
    "run_on_simulator",
]

_TRANSPORTS = ("chat", "rpc")
_SPOKEN = ("mcp", "a2a")

#: How long a call goes on collecting after it is done: on the simulated network this costs
#: no real time; against a real bot it is real waiting.
_AFTER_FINAL_SIM_S = 2.0
_AFTER_FINAL_REAL_S = 1.0


def _catalogue() -> list[LiveCheck]:
    # Importing the check modules registers their checks, in this order.
    from . import (  # noqa: F401
        _checks_a2a,
        _checks_decl,
        _checks_group,
        _checks_mcp,
        _checks_transport,
    )

    order = ("decl.", "mcp.declared", "a2a.declared", "chat.", "rpc.", "mcp.", "a2a.", "group.")
    return sorted(
        CHECKS, key=lambda c: next(i for i, p in enumerate(order) if c.spec.id.startswith(p))
    )


def all_checks() -> list[CheckSpec]:
    """Every live check, in the order a run runs them."""
    return [c.spec for c in _catalogue()]


def applicability(
    check: LiveCheck, transport: str, facts: TargetFacts, options: LiveOptions
) -> tuple[str | None, str | None]:
    """``(protocol, None)`` when the check applies on ``transport`` (``protocol`` is the one it
    uses, ``None`` for checks that need none), or ``(None, reason)`` when it does not."""
    spec = check.spec
    declared = [
        name
        for name in facts.declarations
        if name in _SPOKEN and (not options.protocols or name in options.protocols)
    ]
    if transport == "-" and not spec.protocols and not check.needs:
        return None, None
    wanted = list(spec.protocols) if spec.protocols else list(_SPOKEN)
    candidates = [p for p in wanted if p in declared]
    if not candidates:
        what = " or ".join(wanted)
        return None, f"the bot does not declare {what}"
    for needed in ((transport,) if transport in _TRANSPORTS else ()) + check.needs:
        candidates = [p for p in candidates if facts.serves(p, needed)]
        if not candidates:
            return None, f"the bot does not declare {' or '.join(wanted)} over {needed}"
    return candidates[0], None


def _validate(options: LiveOptions) -> None:
    from ._command import CommandOptions, validate_command_options

    if isinstance(options, CommandOptions):
        if options.builtin is not None or options.target:
            raise OptionsError("bot: give one of a target, a built-in bot and a command")
        validate_command_options(options)
    elif options.builtin is None and not options.target:
        raise OptionsError("give a target (a contact address link or a SimpleX name)")
    if options.builtin is not None and options.builtin not in known_builtins():
        raise OptionsError(f"unknown built-in bot {options.builtin!r}")
    unknown = set(options.transports) - set(_TRANSPORTS)
    if unknown or not options.transports:
        raise OptionsError("transports are chat and/or rpc")
    if options.budget is not None and options.budget < 0:
        raise OptionsError("the message budget cannot be negative")
    if options.timeout_s <= 0:
        raise OptionsError("the timeout must be positive")


def _selected(options: LiveOptions) -> list[LiveCheck]:
    return [
        c
        for c in _catalogue()
        if options.profile in c.spec.profiles and matches_filter(c.spec, options.checks)
    ]


def _transports(check: LiveCheck, options: LiveOptions) -> list[str]:
    if check.spec.transports == ("-",):
        return ["-"]
    return [t for t in check.spec.transports if t in options.transports]


@contextlib.asynccontextmanager
async def _environment(
    options: LiveOptions, builtin: str | None, make_bot: BotFactory | None = None
) -> AsyncIterator[SimEnvironment | CoreEnvironment]:
    from ._command import CommandEnvironment, CommandOptions

    command = isinstance(options, CommandOptions) and builtin is None and make_bot is None
    if builtin is None and make_bot is None and not command:
        async with CoreEnvironment(options) as env:
            yield env
        return
    with contextlib.ExitStack() as files:
        if options.output_dir is not None:
            work = Path(options.output_dir) / "work"
            work.mkdir(parents=True, exist_ok=True)
            base = Path(files.enter_context(tempfile.TemporaryDirectory(dir=work)))
        else:
            base = Path(files.enter_context(tempfile.TemporaryDirectory()))
        if command:
            assert isinstance(options, CommandOptions)
            async with CommandEnvironment(options, base) as started:
                yield started
            return
        async with SimEnvironment(options, builtin or "reference", base, make_bot) as sim:
            yield sim


async def run_bot_async(options: LiveOptions) -> list[CheckRun]:
    """Run the live checks (see :func:`run_bot`)."""
    _validate(options)
    checks = _selected(options)
    if options.dry_run:
        return await _dry_run(options, checks)
    async with _environment(options, options.builtin) as env:
        return await _run_checks(options, checks, env)


async def run_on_simulator(options: LiveOptions, make_bot: BotFactory) -> list[CheckRun]:
    """Run the live checks against the bot ``make_bot(data_dir, clock)`` builds, served on a
    fresh simulated network (for a bot author's offline tests, and the suite's own)."""
    checks = _selected(options)
    async with _environment(options, None, make_bot) as env:
        return await _run_checks(options, checks, env)


def missing_fixture(runs: Iterable[CheckRun]) -> list[CheckRun]:
    """The runs that are ``UNTESTABLE`` because the bot lacks a fixture tool or behaviour
    (their ``evidence["missingFixture"]`` names it): with the fixture profile the command line
    fails on them unless ``--allow-untestable`` is given."""
    return [
        run
        for run in runs
        if run.outcome.verdict is Verdict.UNTESTABLE and "missingFixture" in run.outcome.evidence
    ]


def run_bot(options: LiveOptions) -> list[CheckRun]:
    """Run the live checks against ``options.target`` (or a built-in bot) and return one
    :class:`CheckRun` per check and transport, in order.

    Raises:
        OptionsError: the options cannot be run (nothing is sent).
        TargetUnreachableError: the core or the target cannot be reached: nothing measured.
    """
    result: list[CheckRun] = anyio.run(run_bot_async, options)
    return result


async def _run_checks(
    options: LiveOptions,
    checks: Iterable[LiveCheck],
    env: SimEnvironment | CoreEnvironment,
    *,
    dry: bool = False,
    facts: TargetFacts | None = None,
) -> list[CheckRun]:
    run_facts = facts if facts is not None else env.facts
    assert run_facts is not None and env.facts is not None
    redactions = {env.target: "<target>"}
    for link in (env.facts.plan.link, env.facts.plan.full_link):
        if link:
            redactions[link] = "<target>"
    if options.group_link:
        redactions[options.group_link] = "<group>"
    recorder = Recorder(env.clock, redactions)
    is_sim = isinstance(env, SimEnvironment)
    stepped = is_sim and options.clock is ClockMode.MANUAL
    session = Session(
        clock=env.clock,
        identities=env.identities,
        target=env.target,
        recorder=recorder,
        budget=None if dry else options.budget,
        timeout_s=options.timeout_s,
        after_final_s=_AFTER_FINAL_SIM_S if stepped else _AFTER_FINAL_REAL_S,
    )
    state = RunState()
    state.cache["group-available"] = is_sim or options.group_link is not None
    runs: list[CheckRun] = []
    planned = 0
    for check in checks:
        for transport in _transports(check, options):
            started = time.perf_counter()
            recorder.restart()
            protocol, reason = applicability(check, transport, run_facts, options)
            ctx = CheckContext(
                check=check,
                transport=transport,
                protocol=protocol,
                session=session,
                facts=env.facts,
                options=options,
                state=state,
                environment=env,
                keys=env.new_key,
            )
            if reason is not None:
                outcome = Outcome(Verdict.NA, reason)
            elif check.spec.group and not state.cache["group-available"]:
                outcome = Outcome(Verdict.UNTESTABLE, "no test group was given (--group LINK)")
            elif transport == "chat" and "B" in check.identities and "B" not in session.identities:
                outcome = Outcome(
                    Verdict.UNTESTABLE, "a second caller identity is not available on this core"
                )
            elif (left := _left(options, session, planned, dry)) is not None and (
                left < check.spec.messages
            ):
                outcome = Outcome(
                    Verdict.UNTESTABLE,
                    f"over the message budget ({options.budget}): {left} messages left, the "
                    f"check sends up to {check.spec.messages}",
                )
            else:
                outcome = await _run_one(ctx)
                outcome.transcript = list(recorder.entries)
                if dry:
                    outbound = [
                        e for e in outcome.transcript if e.get("dir") == "out" and "from" not in e
                    ]
                    planned += len(outbound)
                    detail = "dry run"
                    owners = sorted({str(e["from"]) for e in outcome.transcript if "from" in e})
                    if outcome.verdict is Verdict.NA:
                        detail = f"dry run: {outcome.detail}"
                    elif not outbound and owners:
                        detail = (
                            "dry run: sends nothing more; judges what "
                            + ", ".join(owners)
                            + " sends"
                        )
                    outcome = Outcome(Verdict.NA, detail, transcript=outbound)
                elif outcome.verdict in (Verdict.FAIL, Verdict.WARN) and not outcome.reproduce:
                    outcome.reproduce = ctx.reproduce or _plan_reproducer(env.target)
            run = CheckRun(check.spec, transport, outcome, duration_s=time.perf_counter() - started)
            runs.append(run)
            if options.progress is not None:
                options.progress(run)
    return runs


def _plan_reproducer(target: str) -> str:
    """What shows the declarations a check read: ``simplex-call plan``."""
    return " ".join(shlex.quote(a) for a in ("simplex-call", "plan", target))


def _left(options: LiveOptions, session: Session, planned: int, dry: bool) -> int | None:
    """Messages left in the budget (``None``: no budget)."""
    if options.budget is None:
        return None
    return max(0, options.budget - (planned if dry else session.sent))


async def _run_one(ctx: CheckContext) -> Outcome:
    session = ctx.session
    budget_before = session.sent
    try:
        return await ctx.check.run(ctx)
    except FixtureMissing as exc:
        return Outcome(Verdict.UNTESTABLE, str(exc), evidence={"missingFixture": exc.fixture})
    except Untestable as exc:
        return Outcome(Verdict.UNTESTABLE, str(exc))
    except BudgetExceeded as exc:
        return Outcome(Verdict.UNTESTABLE, str(exc))
    except CoreConnectionError as exc:
        return Outcome(Verdict.ERROR, f"the chat core was lost: {exc}")
    except Exception as exc:  # a harness failure is this check's ERROR, never a crash
        return Outcome(
            Verdict.ERROR,
            f"the check failed to run: {type(exc).__name__}: {exc}",
            evidence={"sent": session.sent - budget_before},
        )


async def _dry_run(options: LiveOptions, checks: list[LiveCheck]) -> list[CheckRun]:
    """Decide applicability from the target's declarations, then rehearse the checks against
    the reference bot on a private simulated network: the messages a run would send are those
    it sends there. Nothing is sent to the target."""
    if options.builtin is not None:
        async with _environment(options, options.builtin) as target_env:
            facts = target_env.facts
    else:
        async with _environment(options, None) as target_env:
            facts = target_env.facts
    assert facts is not None
    from ._command import CommandOptions

    if isinstance(options, CommandOptions):
        # Only the started bot needs real time; the rehearsal is the reference bot's.
        options = dataclasses.replace(options, clock=ClockMode.MANUAL)
    async with _environment(options, "reference") as rehearsal:
        return await _run_checks(options, checks, rehearsal, dry=True, facts=facts)
