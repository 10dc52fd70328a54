"""Start-up time of the console scripts, as ratios to ``python -c pass`` in the same run.

Run: ``python bench/startup.py``. Each console script's ``--help`` and ``--version`` (and the
help of the subcommands a newcomer types first) runs in a fresh interpreter, the way a shell
starts it: ``python -c "from MODULE import main; ..."`` with the script's arguments. The
baseline is the same interpreter running ``pass``. Each figure is the best of several runs, so
a cold file cache or a busy neighbour costs one run, not the result. Goal: every command at
most 5x the baseline.

The interpreter is this one (``sys.executable``), so run it with the project's virtualenv.
"""

from __future__ import annotations

import subprocess
import sys
import time

RUNS = 5
GOAL = 5.0

#: (console script, its entry module, the arguments), the commands a newcomer types first.
COMMANDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("simplex-call", "simplex_protocols.cli.call", ("--help",)),
    ("simplex-call", "simplex_protocols.cli.call", ("--version",)),
    ("simplex-call", "simplex_protocols.cli.call", ("doctor", "--help")),
    ("simplex-sim", "simplex_protocols.cli.sim", ("--help",)),
    ("simplex-sim", "simplex_protocols.cli.sim", ("--version",)),
    ("simplex-bridge", "simplex_protocols.cli.bridge", ("--help",)),
    ("simplex-bridge", "simplex_protocols.cli.bridge", ("--version",)),
    ("simplex-mcp", "simplex_protocols.mcp_server.cli", ("--help",)),
    ("simplex-mcp", "simplex_protocols.mcp_server.cli", ("--version",)),
    ("simplex-mcp", "simplex_protocols.mcp_server.cli", ("serve", "--help")),
    ("simplex-conformance", "simplex_protocols.conformance.cli", ("--help",)),
    ("simplex-conformance", "simplex_protocols.conformance.cli", ("--version",)),
)


def entry_code(module: str, script: str, args: tuple[str, ...]) -> str:
    """The ``-c`` program that runs a console script's ``main`` as its generated wrapper does."""
    return (
        f"import sys; from {module} import main; sys.argv = {[script, *args]!r}; sys.exit(main())"
    )


def best_of(argv: list[str], runs: int = RUNS) -> float:
    """Best wall time in seconds of ``runs`` runs of ``argv``, output discarded."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    """Print one line per command: its best time and its ratio to the baseline."""
    baseline = best_of([sys.executable, "-c", "pass"])
    print(f"baseline  python -c pass: {baseline * 1000:7.1f} ms")
    worst = 0.0
    for script, module, args in COMMANDS:
        seconds = best_of([sys.executable, "-c", entry_code(module, script, args)])
        ratio = seconds / baseline
        worst = max(worst, ratio)
        label = " ".join((script, *args))
        print(f"{label:36s} {seconds * 1000:7.1f} ms  {ratio:5.1f}x")
    print(f"worst ratio {worst:.1f}x (goal <= {GOAL:.0f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
