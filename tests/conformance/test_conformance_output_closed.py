"""simplex-conformance piped into `head`: when the reader closes standard output, every command
ends quietly with status 141 (128 + SIGPIPE), with no traceback and nothing on stderr."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simplex_protocols._stdio import OUTPUT_CLOSED_EXIT
from simplex_protocols.conformance.cli import main

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = pytest.mark.slow


class ClosedAfter(io.StringIO):
    """An output whose reader goes away after ``keep`` characters: later writes fail as a
    closed pipe does."""

    def __init__(self, keep: int) -> None:
        super().__init__()
        self.keep = keep

    def write(self, text: str) -> int:
        if self.tell() + len(text) > self.keep:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


COMMANDS = [
    pytest.param(["--help"], id="help"),
    pytest.param([], id="no-command"),
    pytest.param(["bot", "--help"], id="bot-help"),
    pytest.param(["coverage"], id="coverage"),
    pytest.param(["coverage", "--format", "json"], id="coverage-json"),
    pytest.param(["vectors", "--filter", "rpc.response"], id="vectors"),
    pytest.param(["vectors", "--filter", "rpc.response", "--format", "junit"], id="vectors-junit"),
    pytest.param(["caller", "--builtin", "reference", "--dry-run"], id="caller-dry-run"),
    pytest.param(["bot", "--builtin", "reference", "--dry-run"], id="bot-dry-run"),
    pytest.param(
        ["selftest", "--parts", "vectors", "--filter", "rpc.response", "--no-progress"],
        id="selftest",
    ),
]


@pytest.mark.parametrize("argv", COMMANDS)
@pytest.mark.parametrize("keep", [0, 40])
def test_a_closed_output_ends_every_command_quietly_with_141(argv: list[str], keep: int) -> None:
    out, err = ClosedAfter(keep), io.StringIO()
    code = main(argv, stdout=out, stderr=err, progress=False)
    assert code == OUTPUT_CLOSED_EXIT == 141
    assert out.getvalue() == out.getvalue()[:keep]
    assert err.getvalue() == ""


def test_an_open_output_still_gets_the_whole_dry_run() -> None:
    out = io.StringIO()
    code = main(["caller", "--builtin", "reference", "--dry-run"], stdout=out, progress=False)
    assert code == 0
    assert "nothing was sent" in out.getvalue().splitlines()[-1]


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["bot", "--builtin", "reference", "--dry-run"], id="bot-dry-run"),
        pytest.param(["coverage"], id="coverage"),
    ],
)
def test_the_console_script_piped_into_a_closed_reader_exits_141_without_a_traceback(
    argv: list[str],
) -> None:
    script = shutil.which("simplex-conformance", path=str(Path(sys.executable).parent))
    assert script is not None
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written, as after `head -0`
    try:
        done = subprocess.run(
            [script, *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == 141
