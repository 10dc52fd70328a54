"""Start-up time of the console scripts, as ratios to ``python -c pass`` in the same run.

Run: ``python bench/startup.py``. Each console script's ``--help`` and ``--version`` (and the
help of the subcommands a newcomer types first) runs in a fresh interpreter, the way a shell
starts it: ``python -c "from MODULE import main; ..."`` with the script's arguments. The
baseline is the same interpreter running ``pass``, run once before each run of a command, so
that a busy moment of the machine falls on both; each command's ratio is to the baseline's
best over the same runs.
Each figure is the best of several runs, so a cold file cache or a busy neighbour costs one
run, not the result. Goal: every command at most 5x the baseline.

The interpreter is this one (``sys.executable``), so run it with the project's virtualenv.
The commands may write and read Python's bytecode cache even where ``PYTHONDONTWRITEBYTECODE``
is set: an installed package has its bytecode compiled by pip, and without the cache every
start would compile the project's modules again (about 8 ms for ``errors.py`` alone).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

RUNS = 7
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


#: The commands' environment: this one, with the bytecode cache allowed (the module's text).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str]) -> float:
    """Wall time in seconds of one run of ``argv``, output discarded."""
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV)
    return time.perf_counter() - start


def main() -> int:
    """Print one line per command: its best time and its ratio to the baseline."""
    baseline_argv = [sys.executable, "-c", "pass"]
    worst = 0.0
    print(f"{'command':36s} {'best':>7s}     {'python -c pass':>14s}  ratio")
    for script, module, args in COMMANDS:
        argv = [sys.executable, "-c", entry_code(module, script, args)]
        timed(argv)  # not timed: writes the bytecode cache
        best = baseline = float("inf")
        for _ in range(RUNS):
            baseline = min(baseline, timed(baseline_argv))
            best = min(best, timed(argv))
        ratio = best / baseline
        worst = max(worst, ratio)
        label = " ".join((script, *args))
        print(f"{label:36s} {best * 1000:7.1f} ms  {baseline * 1000:11.1f} ms  {ratio:5.1f}x")
    print(f"worst ratio {worst:.1f}x (goal <= {GOAL:.0f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
