"""simplex-call piped into `head`: when the reader closes standard output, the command ends
quietly with status 141 (128 + SIGPIPE), never with a traceback or an "unexpected failure"."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from cli_kit import WAIT_S, shop

from simplex_protocols.cli._call_args import ExitCode
from simplex_protocols.cli.call import main, run

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = pytest.mark.slow


class ClosedAfter(io.StringIO):
    """An output whose reader goes away after ``keep`` characters."""

    def __init__(self, keep: int) -> None:
        super().__init__()
        self.keep = keep

    def write(self, text: str) -> int:
        if self.tell() + len(text) > self.keep:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["--help"], id="help"),
        pytest.param(["demo", "--help"], id="demo-help"),
        pytest.param(["demo"], id="demo"),
        pytest.param(["plan", "--json", "--no-such-option"], id="json-usage-error"),
    ],
)
@pytest.mark.parametrize("keep", [0, 60])
def test_a_closed_output_ends_the_command_quietly(argv: list[str], keep: int) -> None:
    out, err = ClosedAfter(keep), io.StringIO()
    status = main(argv, stdout=out, stderr=err, environ={})
    assert status == ExitCode.OUTPUT_CLOSED == 141
    assert err.getvalue() == ""


@pytest.mark.anyio
@pytest.mark.parametrize("mode", [["--json"], []], ids=["json", "readable"])
async def test_a_call_whose_output_is_closed_ends_quietly(tmp_path: Path, mode: list[str]) -> None:
    async with shop(tmp_path) as s:
        out, err = ClosedAfter(0), io.StringIO()
        with anyio.fail_after(WAIT_S):
            status = await run(
                [s.address, "tools/list", *mode, "--core", "sim:you"],
                network=s.network,
                stdout=out,
                stderr=err,
                environ=s.env,
            )
    assert status == ExitCode.OUTPUT_CLOSED
    assert err.getvalue() == ""


def test_the_console_script_piped_into_a_closed_reader_exits_141_without_a_traceback() -> None:
    script = shutil.which("simplex-call", path=str(Path(sys.executable).parent))
    assert script is not None
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written
    try:
        done = subprocess.run(
            [script, "demo"],
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
