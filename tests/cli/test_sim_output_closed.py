"""simplex-sim piped into `head`: when the reader closes standard output, the command ends
quietly with status 141 (128 + SIGPIPE), never with a traceback."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simplex_protocols.cli.sim import main

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


@pytest.mark.parametrize("argv", [["--help"], ["serve", "--help"]], ids=["help", "serve-help"])
def test_help_to_a_closed_output_exits_141(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = ClosedAfter(20)
    monkeypatch.setattr(sys, "stdout", out)
    assert main(argv) == 141
    assert sys.stdout is out


def test_serve_piped_into_a_closed_reader_saves_its_state_and_exits_141(tmp_path: Path) -> None:
    script = shutil.which("simplex-sim", path=str(Path(sys.executable).parent))
    assert script is not None
    state = tmp_path / "net.json"
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written
    try:
        done = subprocess.run(
            [script, "serve", "--port", "0", "--user", "alice", "--state", str(state)],
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
    assert state.exists()
