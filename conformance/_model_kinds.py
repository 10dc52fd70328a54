"""The enumerations and errors of :mod:`._model` that the command line needs before it parses.

``simplex-conformance --help`` lists the values of :class:`Profile` and :class:`ClockMode`, and
the command line catches :class:`OptionsError` and :class:`TargetUnreachableError`; none of
them needs the dataclasses of :mod:`._model`, whose construction at import time costs more than
the rest of the parser. :mod:`._model` re-exports every name here, so either module may be
imported for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

__all__ = [
    "SEVERITY",
    "ClockMode",
    "OptionsError",
    "Profile",
    "TargetUnreachableError",
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


class ClockMode(StrEnum):
    """Which clock a run uses.

    ``MANUAL``: an injected :class:`simplex_protocols._clock.ManualClock` that moves only when
    the runner advances it (the simulated network: deterministic, timeouts without sleeping).
    ``SYSTEM``: the wall clock (a real core and a real target).
    """

    MANUAL = "manual"
    SYSTEM = "system"


class OptionsError(ValueError):
    """The options cannot be run as given (a malformed target, an unknown check or profile).

    A runner raises it before sending anything; the command line exits 64 with its message.
    """


class TargetUnreachableError(ConnectionError):
    """The target (or the core, or the client under test) could not be reached at all.

    A runner raises it when nothing can be measured; the command line exits 3. A failure that
    concerns one check only is that check's ``ERROR`` outcome instead.
    """
