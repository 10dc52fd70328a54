"""What a conformance run measures: checks, their outcomes, and the verdicts they roll up to.

Every part of the suite speaks these types: the vector runner, the live checks of a bot, the
caller-side harness, the reports, the baseline and the coverage listing.

A *check* is one observable test with a stable ID (``rpc.request-key-mismatch``); it names the
requirements it measures and the transports it runs on. A *run* of a check on one transport
gives an :class:`Outcome` with a :class:`Verdict`. The verdicts of all runs that name a
requirement roll up to that requirement's verdict (the worst one, see :data:`SEVERITY`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "SEVERITY",
    "CheckRun",
    "CheckSpec",
    "Outcome",
    "Profile",
    "Verdict",
    "worst",
]


class Verdict(StrEnum):
    """The outcome of one check on one transport, or the roll-up of a requirement.

    - ``PASS``: measured, conforms.
    - ``FAIL``: measured, breaks a MUST-level requirement (or a declarative must).
    - ``WARN``: measured, breaks a SHOULD-level requirement or a derived consistency check.
    - ``ACCEPTABLE``: measured; the behaviour is inside the allowed set of a recorded ambiguity or
      of an ``acceptable`` vector; the outcome names the ambiguity or flag.
    - ``NA``: does not apply: the target does not declare what the check needs.
    - ``UNTESTABLE``: would apply, but a prerequisite is missing (a fixture tool, a group, a
      second identity, the message budget); never green, never blamed on the protocol.
    - ``FLAKY``: failed, then passed on an allowed retry (only with a baseline ``flaky`` entry).
    - ``ERROR``: the harness or the infrastructure failed (router unreachable, core refused).
    """

    PASS = "PASS"
    FAIL = "FAIL"
    WARN = "WARN"
    ACCEPTABLE = "ACCEPTABLE"
    NA = "NA"
    UNTESTABLE = "UNTESTABLE"
    FLAKY = "FLAKY"
    ERROR = "ERROR"

    @property
    def measured(self) -> bool:
        """Whether this verdict is a measurement of the target (PASS, FAIL, WARN, ACCEPTABLE, FLAKY)."""
        return self in (
            Verdict.PASS,
            Verdict.FAIL,
            Verdict.WARN,
            Verdict.ACCEPTABLE,
            Verdict.FLAKY,
        )


#: Worst first: the roll-up of several verdicts is the one with the lowest index here.
SEVERITY: tuple[Verdict, ...] = (
    Verdict.ERROR,
    Verdict.FAIL,
    Verdict.UNTESTABLE,
    Verdict.WARN,
    Verdict.FLAKY,
    Verdict.ACCEPTABLE,
    Verdict.PASS,
    Verdict.NA,
)


def worst(verdicts: Sequence[Verdict]) -> Verdict:
    """The roll-up of several verdicts; ``NA`` for none."""
    if not verdicts:
        return Verdict.NA
    return min(verdicts, key=SEVERITY.index)


class Profile(StrEnum):
    """Which targets a live check is for.

    ``FIXTURE``: the target implements the suite's documented fixture tools and behaviours.
    ``BLACKBOX``: read-only probes that any production bot can answer.
    """

    FIXTURE = "fixture"
    BLACKBOX = "blackbox"


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
