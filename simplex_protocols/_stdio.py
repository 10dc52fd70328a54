"""Standard output that its reader may close: ``simplex-call ... | head`` ends quietly.

A program whose output goes to ``head`` sees the pipe close after a few lines. A C program is
killed by ``SIGPIPE`` and the shell reports status 141 (128 + 13); Python ignores the signal,
so the next write raises :class:`BrokenPipeError` and, unless something catches it, the
program ends in a traceback, and the interpreter's last flush of ``sys.stdout`` prints one
more complaint. The console scripts wrap their output stream with :func:`guard_output`: a
write or flush on a closed pipe points the stream's file descriptor at the null device (so no
later flush fails) and raises :class:`OutputClosedError`, which each command's entry point turns
into the quiet exit status :data:`OUTPUT_CLOSED_EXIT`.

Only the wrapped stream is judged this way: a broken pipe to a child process (a conformance
driver, a client under test) stays what it is and is handled where it happens.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, Final, TextIO, cast

__all__ = [
    "OUTPUT_CLOSED_EXIT",
    "OutputClosedError",
    "guard_output",
    "guarded_stdout",
    "is_output_closed",
]

#: The exit status after the reader closed standard output: 128 + SIGPIPE, what a shell reports
#: for ``yes | head``, as if the signal had ended the program (the CLIs give 130 for Ctrl-C the
#: same way).
OUTPUT_CLOSED_EXIT: Final = 141


class OutputClosedError(Exception):
    """The reader of a guarded output stream closed it (``EPIPE``); nothing more can be shown.

    Attributes:
        stream: the stream that was closed (the one given to :func:`guard_output`).
    """

    def __init__(self, stream: TextIO) -> None:
        super().__init__("the reader closed the output")
        self.stream = stream


def _discard(stream: TextIO) -> None:
    """Point ``stream``'s file descriptor at the null device, so buffered text still waiting
    in it (and the interpreter's flush at exit) goes nowhere instead of failing again."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file (a StringIO in a test): nothing is left to flush
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:  # pragma: no cover - a system without a null device
        return
    try:
        os.dup2(devnull, fd)
    except OSError:  # pragma: no cover - the descriptor vanished meanwhile
        pass
    finally:
        os.close(devnull)


class _GuardedOutput:
    """A text stream whose ``write``, ``writelines`` and ``flush`` turn a broken pipe into
    :class:`OutputClosedError`; every other attribute is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def _closed(self) -> OutputClosedError:
        _discard(self._stream)
        return OutputClosedError(self._stream)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError as exc:
            raise self._closed() from exc

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError as exc:
            raise self._closed() from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_output(stream: TextIO) -> TextIO:
    """``stream``, with a closed pipe reported as :class:`OutputClosedError`.

    A stream that is already guarded is returned as it is.
    """
    if isinstance(stream, _GuardedOutput):
        return stream
    return cast(TextIO, _GuardedOutput(stream))


@contextlib.contextmanager
def guarded_stdout() -> Iterator[TextIO]:
    """``sys.stdout`` guarded for the duration of the block, for code that writes to
    ``sys.stdout`` itself (``print``); the previous stream is put back afterwards."""
    previous = sys.stdout
    guarded = guard_output(previous)
    sys.stdout = guarded
    try:
        yield guarded
    finally:
        if sys.stdout is guarded:
            sys.stdout = previous


def is_output_closed(exc: BaseException) -> bool:
    """Whether ``exc`` is an :class:`OutputClosedError`, alone or as the only kind of error in
    an exception group (a task group re-raises a child's error inside one)."""
    if isinstance(exc, OutputClosedError):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(is_output_closed(inner) for inner in exc.exceptions)
    return False
