"""The one error an app reports when a task group fails: exception groups unwrapped.

A task group re-raises its children's errors in an :class:`ExceptionGroup`, and when several
tasks fail together (the reader and the writer of a lost WebSocket both raise
:class:`~simplex_protocols.errors.CoreConnectionError`), the group holds more than one,
possibly nested in further groups. ``except SimplexError`` matches none of them, so every
app's top level (``ResponderBot``, the console scripts, the examples) asks this module which
error explains the failure, and reports that one in one line.

:func:`run_interruptible` is the other half of a console script's top level: Ctrl-C ends it
with one line and exit status 130, whether the interrupt surfaced bare or inside an
exception group.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from typing import Final, TextIO

from simplex_protocols.errors import SimplexError

__all__ = ["INTERRUPTED_EXIT", "first_error", "interrupted", "leaf_errors", "run_interruptible"]

#: The exit status of a program stopped by Ctrl-C: 128 + SIGINT, as a shell reports it.
INTERRUPTED_EXIT: Final = 128 + signal.SIGINT


def leaf_errors(exc: BaseException) -> Iterator[BaseException]:
    """The errors inside ``exc``, depth first in the group's order (``exc`` itself if it is
    not a group)."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from leaf_errors(inner)
    else:
        yield exc


def first_error(exc: BaseException) -> BaseException:
    """The error that explains ``exc``: ``exc`` itself unless it is an exception group.

    From a group of any size and depth, in this order: the first :class:`KeyboardInterrupt`
    (the user's Ctrl-C outranks what it broke on its way out), else the first
    :class:`~simplex_protocols.errors.SimplexError` (the typed error the documentation
    promises), else the first other :class:`Exception` (a cancellation, which is only a
    :class:`BaseException`, is what the failure did to the other tasks, not its cause), else
    the first error of all.
    """
    leaves = list(leaf_errors(exc))
    if not leaves:  # an empty group cannot be built, but a subclass might fake one
        return exc
    for wanted in (KeyboardInterrupt, SimplexError, Exception):
        for leaf in leaves:
            if isinstance(leaf, wanted):
                return leaf
    return leaves[0]


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is, or a group holds, a :class:`KeyboardInterrupt` (Ctrl-C)."""
    return any(isinstance(leaf, KeyboardInterrupt) for leaf in leaf_errors(exc))


def run_interruptible(main: Callable[[], int], *, program: str, stderr: TextIO) -> int:
    """``main()``, with Ctrl-C turned into the line ``PROGRAM: interrupted`` and status 130.

    SIGINT keeps Python's own handling, which is what makes an interrupted event loop stop
    cleanly: ``asyncio.run`` (and ``anyio.run``) install their handler only when SIGINT has
    Python's default one, and theirs cancels the main task, lets every cancel scope unwind,
    then raises :class:`KeyboardInterrupt`. A handler of this function's own would take that
    away: the interrupt would be raised inside whatever callback the loop was running (a
    WebSocket half made in ``connection_made``), whose later callbacks then fail with
    tracebacks of their own. A :class:`KeyboardInterrupt` is reported however it surfaced:
    bare, or inside an exception group. A ``main`` that handles SIGINT itself (a server that
    stops gracefully) returns its own status. A SIGINT that the parent process ignores (a job
    started with ``&`` by a non-interactive shell) stays ignored.
    """
    try:
        return main()
    except BaseException as exc:
        if isinstance(exc, SystemExit) or not interrupted(exc):
            raise
        stderr.write(f"{program}: interrupted\n")
        stderr.flush()
        return INTERRUPTED_EXIT
