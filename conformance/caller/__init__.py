"""The caller-side harness of ``simplex-conformance``: tests other people's clients.

``simplex-conformance caller --command "CLIENT ..."`` runs a client (a caller of ``/_call``, a
Service RPC requester) against scripted peers on the simulated network and checks what it sent
and what it returned. ``docs/conformance-caller.md`` describes the scenarios, the checks and
the client contract.

Entry points for the suite's framework:

- :func:`all_checks`: every check (``kind="caller"``), with the requirements it measures.
- :func:`run_caller` (blocking) / :func:`run_caller_async`: run a
  :class:`~simplex_protocols.conformance._model.CallerOptions` and return one ``CheckRun`` per check and
  transport.
- :func:`mutants`: the mutant clients of the selftest; :func:`mutant_command` runs one.
- :func:`reference_client_command`: the reference client,
  ``python -m simplex_protocols.conformance.caller.reference_client``.

The harness is imported on first use: the reference and mutant clients live in this package
too, and a client process should not pay for the simulator it does not use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._contract import CONTEXT_SCHEMA as CONTEXT_SCHEMA
from ._contract import ENV_CONTEXT as ENV_CONTEXT
from ._contract import ENV_CORE as ENV_CORE
from ._contract import ENV_SCENARIO as ENV_SCENARIO
from ._contract import ENV_TARGET as ENV_TARGET

if TYPE_CHECKING:
    from simplex_protocols.conformance._model import CallerOptions, CheckRun, CheckSpec, Mutant

__all__ = [
    "CONTEXT_SCHEMA",
    "ENV_CONTEXT",
    "ENV_CORE",
    "ENV_SCENARIO",
    "ENV_TARGET",
    "all_checks",
    "mutant_command",
    "mutants",
    "reference_client_command",
    "run_caller",
    "run_caller_async",
    "scenario_ids",
]


def all_checks() -> list[CheckSpec]:
    """Every check of the caller-side harness, in the order they run."""
    from ._harness import all_checks as checks

    return checks()


def run_caller(options: CallerOptions) -> list[CheckRun]:
    """Run the client under test through the scenarios the selected checks need; check it.

    Blocking (it runs its own event loop); see :func:`run_caller_async` inside one. Returns
    one ``CheckRun`` per selected check and transport, in the order of :func:`all_checks`.

    Raises:
        OptionsError: the options cannot run (no command, an unknown protocol or builtin, no
            check matches).
        TargetUnreachableError: the client could not be started at all.
    """
    from ._harness import run_caller as run

    return run(options)


async def run_caller_async(options: CallerOptions) -> list[CheckRun]:
    """:func:`run_caller` in a running event loop (anyio)."""
    from ._harness import run_caller_async as run

    return await run(options)


def mutants() -> list[Mutant]:
    """The mutant clients: each the reference client with one requirement switched off."""
    from ._mutants import MUTANTS

    return list(MUTANTS)


def mutant_command(name: str) -> str:
    """The command line that runs the mutant client ``name``."""
    from ._mutants import mutant_command as command

    return command(name)


def reference_client_command() -> str:
    """The command line of the reference client (usable as ``--command``)."""
    from ._harness import reference_client_command as command

    return command()


def scenario_ids() -> list[str]:
    """The scenarios, in the order they are listed."""
    from ._scenarios import SCENARIOS

    return [s.id for s in SCENARIOS]
