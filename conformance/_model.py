"""What a conformance run measures: checks, their outcomes, and the verdicts they roll up to.

Every part of the suite speaks these types: the vector runner, the live checks of a bot, the
caller-side harness, the reports, the baseline and the coverage listing.

A *check* is one observable test with a stable ID (``rpc.request-key-mismatch``); it names the
requirements it measures and the transports it runs on. A *run* of a check on one transport
gives an :class:`Outcome` with a :class:`Verdict`. The verdicts of all runs that name a
requirement roll up to that requirement's verdict (the worst one, see :data:`SEVERITY`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The enumerations and errors that the command line needs to build its parser live apart, so
# that ``--help`` does not build the dataclasses below; they are re-exported here unchanged.
from ._model_kinds import (
    SEVERITY,
    ClockMode,
    OptionsError,
    Profile,
    TargetUnreachableError,
    Verdict,
    worst,
)

if TYPE_CHECKING:
    from simplex_protocols.core import CoreOption

__all__ = [
    "FAILING_LEVELS",
    "SEVERITY",
    "CallerOptions",
    "CheckRun",
    "CheckSpec",
    "ClockMode",
    "LiveOptions",
    "Mutant",
    "OptionsError",
    "Outcome",
    "Profile",
    "RunOptions",
    "TargetUnreachableError",
    "Verdict",
    "failure_verdict",
    "matches_filter",
    "requirement_levels",
    "requirement_summaries",
    "worst",
]


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """A check's identity and what it measures.

    Attributes:
        id: stable slug, never reused (e.g. ``rpc.request-key-mismatch``).
        title: one line for reports.
        requirements: IDs from ``spec/requirements.json``.
        transports: ``("chat",)``, ``("rpc",)``, ``("chat", "rpc")``, or ``("-",)`` for checks that
            use no transport (vectors, declarations read from link data).
        kind: ``vector``, ``live`` (a bot under test) or ``caller`` (a client under test).
        profiles: the live profiles the check belongs to.
        protocols: the protocols it needs declared (``mcp``, ``a2a``), empty for any.
        group: whether it needs an opt-in test group.
        messages: an upper bound of the messages it sends per transport (for the budget and dry run).
    """

    id: str
    title: str
    requirements: tuple[str, ...]
    transports: tuple[str, ...] = ("-",)
    kind: str = "live"
    profiles: tuple[Profile, ...] = (Profile.FIXTURE, Profile.BLACKBOX)
    protocols: tuple[str, ...] = ()
    group: bool = False
    messages: int = 1
    #: Why no mutant can make this check fail, when that is so (a recorded exclusion from the
    #: selftest's rule that every MUST check kills at least one mutant); ``None`` otherwise.
    mutation_exempt: str | None = None


#: Requirement levels whose breach is a ``FAIL``; a breach of any other level is a ``WARN``.
FAILING_LEVELS = frozenset({"MUST", "MUST NOT"})


@cache
def requirement_levels() -> Mapping[str, str]:
    """Every requirement ID of ``spec/requirements.json`` with its level (``MUST``, ``SHOULD``...)."""
    from simplex_protocols._spec import load_json

    index = load_json("requirements.json")
    return {entry["id"]: entry["level"] for entry in index["requirements"]}


@cache
def requirement_summaries() -> Mapping[str, str]:
    """Every requirement ID of ``spec/requirements.json`` with its one-line summary."""
    from simplex_protocols._spec import load_json

    index = load_json("requirements.json")
    return {entry["id"]: entry["summary"] for entry in index["requirements"]}


def failure_verdict(requirements: Sequence[str]) -> Verdict:
    """The verdict of a breach of these requirements: ``FAIL`` when one of them is a MUST or
    MUST NOT (keyword or declarative), ``WARN`` when all are SHOULD, MAY, derived or
    informative; ``FAIL`` for an unknown ID (the coverage gate reports those)."""
    levels = requirement_levels()
    if any(levels.get(rid, "MUST") in FAILING_LEVELS for rid in requirements):
        return Verdict.FAIL
    return Verdict.WARN


def matches_filter(spec: CheckSpec, patterns: Sequence[str]) -> bool:
    """Whether a check is selected by ``--filter`` / ``RunOptions.checks`` patterns.

    A pattern selects a check when it is the check's ID, a requirement ID the check names, a
    leading part of the ID that ends at a ``.`` or ``/`` (``rpc`` and ``rpc.parse_request``
    select ``rpc.parse_request/both-fields``), or a shell-style pattern over the ID
    (``rpc.*-key-*``). No patterns select every check.
    """
    if not patterns:
        return True
    for pattern in patterns:
        if pattern in spec.requirements or spec.id == pattern:
            return True
        if spec.id.startswith((pattern + ".", pattern + "/")):
            return True
        if any(ch in pattern for ch in "*?[") and fnmatchcase(spec.id, pattern):
            return True
    return False


@dataclass(slots=True)
class Outcome:
    """The result of one check on one transport.

    Attributes:
        verdict: see :class:`Verdict`.
        detail: one or two sentences: what was expected and what was observed.
        ambiguity: the ambiguity ID (``AMB-6``) or vector flag behind an ``ACCEPTABLE`` verdict.
        evidence: small JSON-able facts (sizes, codes, counts) for the JSON report.
        transcript: every command sent, reply, event and response of the check, in order, each a
            JSON object with at least ``t`` (seconds from the check's start) and ``dir``
            (``out``/``in``/``note``); secrets redacted before they are stored.
        reproduce: the exact ``simplex-call`` command (or driver line) that reproduces a failure.
    """

    verdict: Verdict
    detail: str = ""
    ambiguity: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    reproduce: str | None = None


@dataclass(slots=True)
class CheckRun:
    """One check run on one transport, as reports and baselines see it."""

    spec: CheckSpec
    transport: str
    outcome: Outcome
    duration_s: float = 0.0
    attempts: int = 1

    @property
    def key(self) -> str:
        """``<check id>@<transport>``: the unit of JUnit test cases and baseline entries."""
        return f"{self.spec.id}@{self.transport}"

    def to_json(self) -> Mapping[str, Any]:
        """The run as it appears in ``report.json``."""
        out: dict[str, Any] = {
            "check": self.spec.id,
            "title": self.spec.title,
            "kind": self.spec.kind,
            "transport": self.transport,
            "requirements": list(self.spec.requirements),
            "verdict": self.outcome.verdict.value,
            "detail": self.outcome.detail,
            "duration_s": round(self.duration_s, 6),
            "attempts": self.attempts,
        }
        if self.outcome.ambiguity:
            out["ambiguity"] = self.outcome.ambiguity
        if self.outcome.evidence:
            out["evidence"] = self.outcome.evidence
        if self.outcome.reproduce:
            out["reproduce"] = self.outcome.reproduce
        return out


# --------------------------------------------------------------------------- run options
#
# The options the command line hands to the live runner (``simplex_protocols.conformance.live.run_bot``) and to
# the caller-side harness (``simplex_protocols.conformance.caller.run_caller``). Both return ``list[CheckRun]``,
# one per check and transport, in the order they ran.


@dataclass(frozen=True, slots=True)
class Mutant:
    """A deliberately broken variant of the reference bot or the reference client.

    ``simplex_protocols.conformance.live.mutants()`` and ``simplex_protocols.conformance.caller.mutants()`` return them; the
    selftest runs the suite against each (``RunOptions.builtin = mutant.name``) and requires
    at least one ``FAIL`` or ``WARN`` on a check naming one of ``requirements``.

    Attributes:
        name: a stable slug, unique across both catalogues (``bot.reply-without-quote``).
        requirements: the requirement IDs this mutant switches off.
        description: one line: what the mutant does wrong.
    """

    name: str
    requirements: tuple[str, ...]
    description: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """What every runner takes.

    Attributes:
        builtin: ``None`` to test the given target; ``"reference"`` to test the suite's own
            reference bot (or client) on a fresh simulated network; a :class:`Mutant` name to
            test that mutant the same way (the selftest).
        checks: run only the checks selected by these patterns (see :func:`matches_filter`:
            a check ID, an ID prefix, a glob such as ``rpc.*``, or a requirement ID). Empty: all.
        seed: the seed of every random choice of the run (the simulated network, IDs, keys).
        clock: see :class:`ClockMode`; the command line passes ``MANUAL`` for the simulated
            network and the builtins, ``SYSTEM`` otherwise.
        timeout_s: the longest wait for one answer, in seconds of the run's clock.
        output_dir: where the command line writes the reports (``None``: no files); a runner
            may keep scratch files (a simulated network's state) under ``output_dir/work``.
        progress: called with each :class:`CheckRun` as soon as it is finished (the terminal
            progress line); never called for runs a runner drops.
    """

    builtin: str | None = None
    checks: tuple[str, ...] = ()
    seed: int = 0
    clock: ClockMode = ClockMode.MANUAL
    timeout_s: float = 30.0
    output_dir: Path | None = None
    progress: Callable[[CheckRun], None] | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveOptions(RunOptions):
    """Options of ``simplex-conformance bot TARGET`` for ``simplex_protocols.conformance.live.run_bot``.

    Attributes:
        target: the bot's contact address link, SimpleX name, or channel/group link;
            ``None`` only with ``builtin``.
        core: the ``--core`` value (``simplex_protocols.core.add_core_argument``); ``None``:
            ``SIMPLEX_CORE``, else ``lib``. Ignored with ``builtin`` (always the simulator).
        profile: ``FIXTURE`` (the bot implements the fixture tools) or ``BLACKBOX`` (read-only
            probes only).
        transports: the transports to test, a subset of ``("chat", "rpc")``.
        protocols: the protocols to test (``mcp``, ``a2a``); empty: every declared one.
        group_link: a test group the suite may use for the opt-in group checks; ``None``:
            those checks are ``UNTESTABLE``.
        budget: the most messages the run may send (``None``: no limit); a check that would
            exceed it is ``UNTESTABLE``.
        dry_run: send nothing; return one :class:`CheckRun` per check and transport that would
            run, verdict ``NA``, detail ``"dry run"``, its transcript listing the messages it
            would send (``dir`` ``"out"``).
    """

    target: str | None = None
    core: CoreOption | None = None
    profile: Profile = Profile.FIXTURE
    transports: tuple[str, ...] = ("chat", "rpc")
    protocols: tuple[str, ...] = ()
    group_link: str | None = None
    budget: int | None = None
    dry_run: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CallerOptions(RunOptions):
    """Options of ``simplex-conformance caller --command CMD`` for ``simplex_protocols.conformance.caller.run_caller``.

    Attributes:
        command: the client under test, a shell-style command line (split with
            :func:`shlex.split`, never run through a shell); ``None`` only with ``builtin``.
        protocols: the protocols to script peers for (``mcp``, ``a2a``); empty: both.
        transports: the transports to test, a subset of ``("chat", "rpc")``.
        dry_run: run nothing; return one :class:`CheckRun` per check and transport that would
            run, verdict ``NA``, detail ``"dry run"``.
    """

    command: str | None = None
    protocols: tuple[str, ...] = ()
    transports: tuple[str, ...] = ("chat", "rpc")
    dry_run: bool = False
