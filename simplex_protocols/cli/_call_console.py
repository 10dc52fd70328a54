"""Where simplex-call writes: results on standard output, notes and progress on standard error.

The progress line appears during long waits (reading a website, connecting, waiting for an
answer). On a terminal it is one line redrawn in place with the elapsed time, and erased when
the wait ends; with ``--progress`` on something that is not a terminal, each step is one plain
line; with ``--json`` or ``--no-progress`` there is none.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any, Final, TextIO

import anyio

from simplex_protocols._wire import dumps

__all__ = ["Console"]

_SPINNER: Final = "|/-\\"
_REDRAW_S: Final = 0.2


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Console:
    """simplex-call's output streams and its progress line.

    Args:
        stdout: where results go.
        stderr: where notes, errors and progress go.
        json_mode: results are one JSON object; notes are collected for it, not printed.
        progress: ``True`` forces the progress line, ``False`` turns it off, ``None`` shows it
            on a terminal when not in JSON mode.
    """

    def __init__(
        self, stdout: TextIO, stderr: TextIO, *, json_mode: bool, progress: bool | None
    ) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.json_mode = json_mode
        self.live = _isatty(stderr)
        self.progress = progress if progress is not None else (self.live and not json_mode)
        self.notes: list[str] = []
        self._drawn = False

    # ------------------------------------------------------------------ results

    def line(self, text: str = "") -> None:
        """One line of readable output (nothing in JSON mode)."""
        if not self.json_mode:
            self._clear()
            self.stdout.write(text + "\n")
            self.stdout.flush()

    def json(self, value: Any) -> None:
        """The JSON result: one object on one line, UTF-8 unescaped."""
        self.stdout.write(dumps(value) + "\n")
        self.stdout.flush()

    def note(self, text: str) -> None:
        """Something the user should know (a fallback, a disagreement): collected for the JSON
        output, and printed on standard error in readable mode."""
        self.notes.append(text)
        if not self.json_mode:
            self._clear()
            self.stderr.write(f"simplex-call: note: {text}\n")
            self.stderr.flush()

    def record(self, text: str) -> None:
        """A note for the JSON output only."""
        self.notes.append(text)

    def error(self, text: str, hint: str | None = None) -> None:
        """An error on standard error (readable mode)."""
        self._clear()
        self.stderr.write(f"simplex-call: error: {text}\n")
        if hint:
            self.stderr.write(f"simplex-call: {hint}\n")
        self.stderr.flush()

    @staticmethod
    def compact(value: Any) -> str:
        """A JSON value on one line, as sent on the wire."""
        return dumps(value)

    # ------------------------------------------------------------------ progress

    def _clear(self) -> None:
        if self._drawn:
            self.stderr.write("\r\x1b[2K")
            self.stderr.flush()
            self._drawn = False

    @contextlib.asynccontextmanager
    async def step(self, text: str) -> AsyncIterator[None]:
        """Show ``text`` as the progress line while the block runs."""
        if not self.progress:
            yield
            return
        if not self.live:
            self.stderr.write(f"simplex-call: {text}...\n")
            self.stderr.flush()
            yield
            return
        started = time.monotonic()
        async with anyio.create_task_group() as tg:

            async def redraw() -> None:
                turn = 0
                while True:
                    elapsed = time.monotonic() - started
                    spin = _SPINNER[turn % len(_SPINNER)]
                    self.stderr.write(f"\r\x1b[2K{spin} {text} ({elapsed:.0f} s)")
                    self.stderr.flush()
                    self._drawn = True
                    turn += 1
                    await anyio.sleep(_REDRAW_S)

            tg.start_soon(redraw)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
        self._clear()
