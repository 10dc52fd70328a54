"""The guard the console scripts put on standard output: a reader that closes the pipe ends a
command quietly (OutputClosedError), and no later flush fails."""

from __future__ import annotations

import io
import os
import sys

import pytest

from simplex_protocols._stdio import (
    OUTPUT_CLOSED_EXIT,
    OutputClosedError,
    guard_output,
    guarded_stdout,
    is_output_closed,
)


class Closed(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_the_status_is_the_one_a_shell_gives_for_sigpipe() -> None:
    assert OUTPUT_CLOSED_EXIT == 128 + 13


def test_an_open_stream_is_written_through() -> None:
    stream = io.StringIO()
    guarded = guard_output(stream)
    guarded.write("a")
    guarded.writelines(["b", "c"])
    guarded.flush()
    assert stream.getvalue() == "abc"
    assert guarded.isatty() is False  # other attributes are the stream's
    assert guard_output(guarded) is guarded


@pytest.mark.parametrize("action", ["write", "writelines", "flush"])
def test_a_closed_stream_raises_output_closed(action: str) -> None:
    stream = Closed()
    guarded = guard_output(stream)
    with pytest.raises(OutputClosedError) as info:
        if action == "write":
            guarded.write("x")
        elif action == "writelines":
            guarded.writelines(["x"])
        else:
            guarded.flush()
    assert info.value.stream is stream
    assert isinstance(info.value.__cause__, BrokenPipeError)


def test_other_errors_are_not_taken_for_a_closed_output() -> None:
    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space") as info:
        guard_output(Full()).write("x")
    assert not isinstance(info.value, OutputClosedError)


def test_a_real_pipe_closed_by_its_reader_goes_to_the_null_device_afterwards() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    stream = os.fdopen(write_end, "w", encoding="utf-8")
    guarded = guard_output(stream)
    with pytest.raises(OutputClosedError):
        guarded.write("x" * 10)
        guarded.flush()
    # The text still buffered now goes nowhere: closing (and the interpreter's flush) is quiet.
    guarded.write("more")
    stream.close()


def test_guarded_stdout_is_put_back() -> None:
    before = sys.stdout
    with guarded_stdout() as guarded:
        assert sys.stdout is guarded
    assert sys.stdout is before


def test_is_output_closed_looks_into_exception_groups() -> None:
    closed = OutputClosedError(io.StringIO())
    assert is_output_closed(closed)
    assert is_output_closed(ExceptionGroup("g", [closed, ExceptionGroup("h", [closed])]))
    assert not is_output_closed(ExceptionGroup("g", [closed, ValueError("x")]))
    assert not is_output_closed(BrokenPipeError(32, "a child's pipe"))
