"""The progress line and the output streams of simplex-call."""

from __future__ import annotations

import io

import anyio
import pytest

from simplex_protocols.cli._call_console import Console
from simplex_protocols.cli._call_render import clean


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.anyio
async def test_on_a_terminal_the_progress_line_is_redrawn_and_then_erased() -> None:
    out, err = io.StringIO(), Terminal()
    console = Console(out, err, json_mode=False, progress=None)
    assert console.progress and console.live
    async with console.step("waiting for Acme"):
        with anyio.fail_after(5):
            while "waiting for Acme" not in err.getvalue():
                await anyio.lowlevel.checkpoint()
        console.line("a result")
    text = err.getvalue()
    assert text.startswith("\r\x1b[2K| waiting for Acme (0 s)")
    assert text.endswith("\r\x1b[2K")
    assert out.getvalue() == "a result\n"


@pytest.mark.anyio
async def test_progress_is_off_in_json_mode_and_when_not_a_terminal() -> None:
    for json_mode, stream in ((True, Terminal()), (False, io.StringIO())):
        console = Console(io.StringIO(), stream, json_mode=json_mode, progress=None)
        async with console.step("waiting"):
            pass
        assert stream.getvalue() == "" and not console.progress
    forced = io.StringIO()
    console = Console(io.StringIO(), forced, json_mode=True, progress=True)
    async with console.step("waiting"):
        pass
    assert forced.getvalue() == "simplex-call: waiting...\n"
    off = Terminal()
    console = Console(io.StringIO(), off, json_mode=False, progress=False)
    async with console.step("waiting"):
        pass
    assert off.getvalue() == ""


def test_notes_go_to_stderr_or_into_the_json() -> None:
    out, err = io.StringIO(), io.StringIO()
    readable = Console(out, err, json_mode=False, progress=False)
    readable.note("a fallback")
    readable.record("only in JSON")
    assert err.getvalue() == "simplex-call: note: a fallback\n"
    assert readable.notes == ["a fallback", "only in JSON"]
    quiet_err = io.StringIO()
    machine = Console(io.StringIO(), quiet_err, json_mode=True, progress=False)
    machine.note("a fallback")
    machine.line("not shown")
    assert quiet_err.getvalue() == "" and machine.notes == ["a fallback"]


def test_a_peers_text_cannot_drive_the_terminal() -> None:
    assert clean("ok\x1b[2J\u202eevil\x07") == "ok\ufffd[2J\ufffdevil\ufffd"
    assert clean("x" * 10, 5) == "xxxx…"
    assert clean("two\nlines\ttab") == "two\nlines\ttab"
