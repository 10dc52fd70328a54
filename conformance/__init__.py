"""The conformance suite for "Agent protocols over SimpleX": ``simplex-conformance``.

- The result model every part speaks: :class:`Verdict`, :class:`CheckSpec`, :class:`Outcome`,
  :class:`CheckRun`, :func:`worst`; the options of the live runner and the caller harness
  (:class:`LiveOptions`, :class:`CallerOptions`) and the mutant record (:class:`Mutant`).
- Test vectors for any implementation: :func:`load_vectors`, :func:`run_vectors`, through a
  driver (:class:`DriverProcess`) or this library in process (:class:`InProcessImplementation`).
- Reports, baselines, coverage and the selftest: :class:`Report`, :class:`ExitCode`,
  :func:`load_baseline`, :func:`apply_baseline`, :func:`measure_coverage`,
  :func:`run_selftest`.

``conformance/README.md`` documents the command line, the driver protocol, the verdicts, the
reports, baselines and CI recipes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The enumerations and errors are cheap; the dataclasses of ``_model`` load on first use, so
# that the command line's ``--help`` (which imports this package) does not build them.
from ._model_kinds import SEVERITY as SEVERITY
from ._model_kinds import ClockMode as ClockMode
from ._model_kinds import OptionsError as OptionsError
from ._model_kinds import Profile as Profile
from ._model_kinds import TargetUnreachableError as TargetUnreachableError
from ._model_kinds import Verdict as Verdict
from ._model_kinds import worst as worst

if TYPE_CHECKING:
    from ._baseline import Baseline as Baseline
    from ._baseline import apply_baseline as apply_baseline
    from ._baseline import load_baseline as load_baseline
    from ._coverage import Coverage as Coverage
    from ._coverage import measure_coverage as measure_coverage
    from ._driver import DriverProcess as DriverProcess
    from ._driver import InProcessImplementation as InProcessImplementation
    from ._model import CallerOptions as CallerOptions
    from ._model import CheckRun as CheckRun
    from ._model import CheckSpec as CheckSpec
    from ._model import LiveOptions as LiveOptions
    from ._model import Mutant as Mutant
    from ._model import Outcome as Outcome
    from ._model import RunOptions as RunOptions
    from ._model import failure_verdict as failure_verdict
    from ._model import matches_filter as matches_filter
    from ._report import ExitCode as ExitCode
    from ._report import Report as Report
    from ._selftest import SelftestOptions as SelftestOptions
    from ._selftest import run_selftest as run_selftest
    from ._vectors import VectorSet as VectorSet
    from ._vectors import load_vectors as load_vectors
    from ._vectors import run_vectors as run_vectors

#: Names loaded on first use, so that importing ``conformance`` (which every runner and the
#: vector operations do) stays light.
_LAZY = {
    "CallerOptions": "_model",
    "CheckRun": "_model",
    "CheckSpec": "_model",
    "LiveOptions": "_model",
    "Mutant": "_model",
    "Outcome": "_model",
    "RunOptions": "_model",
    "failure_verdict": "_model",
    "matches_filter": "_model",
    "Baseline": "_baseline",
    "apply_baseline": "_baseline",
    "load_baseline": "_baseline",
    "Coverage": "_coverage",
    "measure_coverage": "_coverage",
    "DriverProcess": "_driver",
    "InProcessImplementation": "_driver",
    "ExitCode": "_report",
    "Report": "_report",
    "SelftestOptions": "_selftest",
    "run_selftest": "_selftest",
    "VectorSet": "_vectors",
    "load_vectors": "_vectors",
    "run_vectors": "_vectors",
}

__all__ = [
    "SEVERITY",
    "Baseline",
    "CallerOptions",
    "CheckRun",
    "CheckSpec",
    "ClockMode",
    "Coverage",
    "DriverProcess",
    "ExitCode",
    "InProcessImplementation",
    "LiveOptions",
    "Mutant",
    "OptionsError",
    "Outcome",
    "Profile",
    "Report",
    "RunOptions",
    "SelftestOptions",
    "TargetUnreachableError",
    "VectorSet",
    "Verdict",
    "apply_baseline",
    "failure_verdict",
    "load_baseline",
    "load_vectors",
    "matches_filter",
    "measure_coverage",
    "run_selftest",
    "run_vectors",
    "worst",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'conformance' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
