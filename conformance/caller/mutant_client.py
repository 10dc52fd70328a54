"""A mutant client of the selftest: ``python -m simplex_protocols.conformance.caller.mutant_client NAME``.

``NAME`` is one of ``simplex_protocols.conformance.caller.mutants()`` (``client.third-party-reply`` ...): the
reference client with one requirement switched off. Each exists to prove that a check of the
caller-side harness fails when a client breaks the requirement it measures.
"""

from __future__ import annotations

import sys

from ._mutant_clients import MUTANT_CLIENTS
from .reference_client import main


def run(argv: list[str]) -> None:
    if len(argv) != 1 or argv[0] not in MUTANT_CLIENTS:
        known = ", ".join(sorted(MUTANT_CLIENTS))
        print(
            f"usage: python -m simplex_protocols.conformance.caller.mutant_client NAME ({known})",
            file=sys.stderr,
        )
        raise SystemExit(64)
    main(MUTANT_CLIENTS[argv[0]])


if __name__ == "__main__":
    run(sys.argv[1:])
