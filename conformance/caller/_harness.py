"""``simplex-conformance caller``: run a client under test through the scenarios, then check.

:func:`run_caller_async` picks the checks the options select, the scenarios those checks read,
plays each scenario on its own simulated network (several at once: most of a scenario's time
is a client waiting), and evaluates every selected check on every selected transport.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
import time
import zlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

import anyio

from simplex_protocols import _wire
from simplex_protocols.conformance._model import (
    CallerOptions,
    CheckRun,
    CheckSpec,
    ClockMode,
    OptionsError,
    Outcome,
    TargetUnreachableError,
    Verdict,
    matches_filter,
)

from ._checks import CHECKS, CallerCheck
from ._contract import (
    ENV_CONTEXT,
    ENV_CORE,
    ENV_SCENARIO,
    ENV_TARGET,
    ContractError,
    parse_client_output,
)
from ._mutants import MUTANTS, mutant_argv
from ._process import run_process
from ._scenarios import SCENARIOS, Scenario
from ._stage import CREDENTIAL, ScenarioRun, Stage

__all__ = [
    "PROTOCOLS",
    "TRANSPORTS",
    "all_checks",
    "client_argv",
    "reference_client_command",
    "run_caller",
    "run_caller_async",
]

PROTOCOLS: Final = ("mcp", "a2a")
TRANSPORTS: Final = ("chat", "rpc")
#: Characters of a command or message kept in a transcript entry.
_TRANSCRIPT_TEXT: Final = 2_000
#: Characters of the client's stderr kept in a transcript.
_STDERR_TAIL: Final = 4_000


def all_checks() -> list[CheckSpec]:
    """Every check of the caller-side harness, in the order they run."""
    return [check.spec for check in CHECKS]


def reference_client_command() -> str:
    """The command line of the reference client (for ``--command``)."""
    return shlex.join(
        [sys.executable, "-m", "simplex_protocols.conformance.caller.reference_client"]
    )


def client_argv(options: CallerOptions) -> list[str]:
    """The client to run: the given command, the reference client, or a mutant.

    Raises:
        OptionsError: no command, a command that does not split, or an unknown builtin.
    """
    if options.builtin is None:
        if not options.command:
            raise OptionsError("caller: give the client's command (--command)")
        try:
            argv = shlex.split(options.command)
        except ValueError as exc:
            raise OptionsError(f"caller: the command does not parse: {exc}") from None
        if not argv:
            raise OptionsError("caller: the command is empty")
        return argv
    if options.builtin == "reference":
        return shlex.split(reference_client_command())
    if options.builtin in {m.name for m in MUTANTS}:
        return mutant_argv(options.builtin)
    raise OptionsError(f"caller: no reference client or mutant client named {options.builtin!r}")


def _selection(
    options: CallerOptions,
) -> tuple[list[CallerCheck], tuple[str, ...], tuple[str, ...]]:
    protocols = tuple(options.protocols) or PROTOCOLS
    transports = tuple(options.transports)
    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown:
        raise OptionsError(f"caller: unknown protocol {unknown[0]!r} (mcp, a2a)")
    if not transports or any(t not in TRANSPORTS for t in transports):
        raise OptionsError("caller: transports are chat and/or rpc")
    selected = [
        check
        for check in CHECKS
        if matches_filter(check.spec, options.checks)
        and (not check.spec.protocols or set(check.spec.protocols) & set(protocols))
        and set(check.spec.transports) & set(transports)
    ]
    if options.checks and not selected:
        raise OptionsError(f"caller: no check matches {', '.join(options.checks)}")
    return selected, protocols, transports


def _scenarios(
    checks: Sequence[CallerCheck], protocols: Sequence[str], transports: Sequence[str]
) -> list[tuple[Scenario, str]]:
    """The scenarios the checks read, each with its protocol and only the selected transports."""
    wanted = {sid for check in checks for sid in check.scenarios}
    out: list[tuple[Scenario, str]] = []
    for scenario in SCENARIOS:
        if scenario.id not in wanted:
            continue
        if scenario.protocol is not None and scenario.protocol not in protocols:
            continue
        calls = tuple(c for c in scenario.calls if c.transport in transports)
        if not calls:
            continue
        out.append((dataclasses.replace(scenario, calls=calls), scenario.protocol or protocols[0]))
    return out


def _planned_s(scenario: Scenario) -> float:
    """How long a conformant client takes in the scenario, its start aside."""
    total = 0.0
    for call in scenario.calls:
        if call.transport == "chat":
            total += call.wait_s * (2 if call.resume else 1)
        else:
            total += 1.0 + sum(float((a.error or {}).get("retryAfter", 0)) for a in call.answers)
    return total


def _busy_s(scenario: Scenario) -> float:
    """How long a conformant client waits in the scenario: the whole wait of a broadcast or of
    an answer that does not end in time, the last scripted reply otherwise, retries' waits."""
    total = 0.0
    for call in scenario.calls:
        if call.transport == "rpc":
            total += sum(float((a.error or {}).get("retryAfter", 0)) for a in call.answers)
        elif call.where == "group" or call.resume or any(s.late for s in call.steps):
            total += call.wait_s
        else:
            total += max((s.after_s for s in call.steps), default=0.0)
    return total


def _scripts_s(scenario: Scenario) -> float:
    """The longest any script of the scenario takes to send its in-time messages, and a margin."""
    longest = max((s.after_s for c in scenario.calls for s in c.steps if not s.late), default=0.0)
    return longest + 2.0


def _seed(seed: int, scenario: str) -> int:
    return zlib.crc32(f"{seed}:{scenario}".encode())


def _substitute(argv: Sequence[str], values: Mapping[str, str]) -> list[str]:
    out = []
    for arg in argv:
        for name, value in values.items():
            arg = arg.replace("{" + name + "}", value)
        out.append(arg)
    return out


def _redact(text: str) -> str:
    return text.replace(CREDENTIAL, "<credential>")


def _cut(text: str) -> str:
    text = _redact(text)
    if len(text) <= _TRANSCRIPT_TEXT:
        return text
    return text[:_TRANSCRIPT_TEXT] + f"... ({len(text)} characters)"


def _transcript(run: ScenarioRun) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = list(run.transcript)
    for command in run.commands:
        entries.append({"t": round(command.t, 3), "dir": "out", "cmd": _cut(command.cmd)})
        if command.response is not None and command.t_response is not None:
            entries.append(
                {"t": round(command.t_response, 3), "dir": "in", "response": command.response}
            )
    for receipt in run.chat_receipts:
        entries.append(
            {
                "t": round(receipt.t, 3),
                "dir": "note",
                "text": f"{receipt.peer} received the client's message"
                + (f" (call {receipt.call})" if receipt.call else "")
                + (f", not a command: {receipt.problem}" if receipt.problem else ""),
            }
        )
    for rpc in run.rpc_receipts:
        entries.append(
            {
                "t": round(rpc.t, 3),
                "dir": "note",
                "text": f"{rpc.peer} received a service request (call {rpc.call}, attempt "
                f"{rpc.attempt + 1}, {'signed' if rpc.signer_key else 'unsigned'})",
                "envelope": _cut(_wire.dumps(rpc.request_data)),
            }
        )
        if rpc.answer is not None and rpc.t_answered is not None:
            entries.append(
                {
                    "t": round(rpc.t_answered, 3),
                    "dir": "in",
                    "from": rpc.peer,
                    "envelope": _cut(_wire.dumps(rpc.answer)),
                }
            )
    for sent in run.sent:
        entry: dict[str, Any] = {
            "t": round(sent.t, 3),
            "dir": "in",
            "from": sent.by,
            "text": _cut(sent.text),
        }
        for flag in ("forged", "late", "lost"):
            if getattr(sent.step, flag):
                entry[flag] = True
        entries.append(entry)
    entries.sort(key=lambda e: float(e["t"]))
    return entries


async def play_scenario(
    scenario: Scenario,
    protocol: str,
    argv: Sequence[str],
    *,
    seed: int,
    manual_clock: bool,
    grace_s: float,
) -> ScenarioRun:
    """Build the scenario's world, run the client once in it, and keep what was observed."""
    started = time.monotonic()
    run: ScenarioRun | None = None
    try:
        async with Stage(
            scenario, protocol, seed=_seed(seed, scenario.id), manual_clock=manual_clock
        ) as stage:
            run = stage.run
            assert run is not None
            target = stage.target_of_first_call()
            context_text = _wire.dumps(run.context)
            values = {"core": stage.core_url, "target": target, "scenario": scenario.id}
            env = dict(os.environ)
            env.update(
                {
                    ENV_SCENARIO: scenario.id,
                    ENV_CORE: stage.core_url,
                    ENV_TARGET: target,
                    ENV_CONTEXT: context_text,
                }
            )
            run.note(0.0, f"scenario {scenario.id} ({protocol}): {scenario.title}")
            run.note(0.0, "context", context=_redact(context_text))
            bound = _planned_s(scenario) + grace_s
            process = await run_process(_substitute(argv, values), env, bound)
            run.process = process
            # A client that returned early does not cut the scripts short.
            await stage.finish_scripts(_scripts_s(scenario))
            run.note(
                stage.now(),
                process.problem() or f"the client exited 0 after {process.duration_s:.2f} s",
                exit_code=process.exit_code,
            )
            if process.stderr.strip():
                run.note(stage.now(), "stderr", stderr=_redact(process.stderr[-_STDERR_TAIL:]))
            problem = process.problem()
            if process.started:
                try:
                    run.output = parse_client_output(process.stdout, len(run.calls))
                except ContractError as exc:
                    run.contract_problem = (f"{problem}; " if problem else "") + str(exc)
                else:
                    if problem is not None:
                        run.contract_problem = problem
                        run.output = None
            if run.contract_problem:
                run.note(stage.now(), f"the client broke the contract: {run.contract_problem}")
    except Exception as exc:  # the harness itself failed: every check of the scenario is ERROR
        if run is None:
            run = ScenarioRun(scenario, protocol, scenario.calls, (), {})
        run.harness_errors.append(f"{type(exc).__name__}: {exc}")
    run.duration_s = time.monotonic() - started
    return run


def _concurrency() -> int:
    """How many scenarios run at once: their clients mostly wait, but each starts a process."""
    return max(4, min(8, 3 * (os.cpu_count() or 1)))


async def run_caller_async(options: CallerOptions) -> list[CheckRun]:
    """:func:`run_caller` in a running event loop."""
    selected, protocols, transports = _selection(options)
    if options.dry_run:
        # The harness sends nothing itself: the plan is the scenarios each check would read.
        planned = {s.id: (s, p) for s, p in _scenarios(selected, protocols, transports)}
        out = []
        for check in selected:
            would_read = [planned[sid] for sid in check.scenarios if sid in planned]
            notes = [
                {"t": 0.0, "dir": "note", "text": f"scenario {s.id} ({p}): {s.title}"}
                for s, p in would_read
            ]
            for transport in check.spec.transports:
                if transport in transports:
                    outcome = Outcome(
                        Verdict.NA,
                        "dry run",
                        evidence={"scenarios": [s.id for s, _ in would_read]},
                        transcript=list(notes),
                    )
                    out.append(CheckRun(check.spec, transport, outcome))
        return out
    argv = client_argv(options)
    # The longest first, so that the run ends soon after its longest scenario.
    plays = sorted(_scenarios(selected, protocols, transports), key=lambda p: -_busy_s(p[0]))
    runs: dict[str, ScenarioRun] = {}
    limiter = anyio.CapacityLimiter(_concurrency())

    async def play(scenario: Scenario, protocol: str) -> None:
        async with limiter:
            runs[scenario.id] = await play_scenario(
                scenario,
                protocol,
                argv,
                seed=options.seed,
                manual_clock=options.clock is ClockMode.MANUAL,
                grace_s=options.timeout_s,
            )

    async with anyio.create_task_group() as tg:
        for scenario, protocol in plays:
            tg.start_soon(play, scenario, protocol)
    processes = [r.process for r in runs.values() if r.process is not None]
    if processes and all(not p.started for p in processes):
        raise TargetUnreachableError(processes[0].problem() or "the client could not be started")
    command_text = options.command if options.builtin is None else shlex.join(argv)
    results: list[CheckRun] = []
    for check in selected:
        read = [runs[sid] for sid in check.scenarios if sid in runs]
        duration = max((r.duration_s for r in read), default=0.0)
        transcript = [entry for r in read for entry in _transcript(r)]
        for transport in check.spec.transports:
            if transport not in transports:
                continue
            outcome = check.evaluate(runs, transport)
            outcome.evidence.setdefault("scenarios", [r.scenario.id for r in read])
            outcome.transcript = list(transcript)
            if outcome.verdict in (Verdict.FAIL, Verdict.WARN) and command_text:
                outcome.reproduce = (
                    f"simplex-conformance caller --command {shlex.quote(command_text)} "
                    f"--filter {check.spec.id} --seed {options.seed}"
                )
            run = CheckRun(check.spec, transport, outcome, duration_s=duration)
            results.append(run)
            if options.progress is not None:
                options.progress(run)
    return results


def run_caller(options: CallerOptions) -> list[CheckRun]:
    """Run the client under test through the scenarios the selected checks need; check it.

    Returns one :class:`CheckRun` per selected check and transport, in the order of
    :func:`all_checks`.

    Raises:
        OptionsError: the options cannot run (no command, unknown protocol, no check matches).
        TargetUnreachableError: the client could not be started at all.
    """
    return anyio.run(run_caller_async, options)
