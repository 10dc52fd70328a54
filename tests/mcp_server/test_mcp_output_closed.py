"""simplex-mcp piped into `head`: when the reader closes standard output, the command ends
quietly with status 141 (128 + SIGPIPE), with no traceback, in --help, register and serve."""

from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from simplex_protocols.mcp_server.cli import main

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


@pytest.mark.parametrize("keep", [0, 30])
def test_help_to_a_closed_output_exits_141(keep: int, monkeypatch: pytest.MonkeyPatch) -> None:
    out = ClosedAfter(keep)
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["--help"]) == 141
    assert sys.stdout is out  # the guard is taken off again


def test_register_to_a_closed_output_exits_141(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdout", ClosedAfter(0))
    # The agent never started, so register prints how to start it: to a closed output.
    assert main(["register", "my-agent", "--data", str(tmp_path / "agent")]) == 141


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _run_closed(argv: list[str]) -> subprocess.CompletedProcess[str]:
    script = shutil.which("simplex-mcp", path=str(Path(sys.executable).parent))
    assert script is not None
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written
    try:
        return subprocess.run(
            [script, *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=120,
        )
    finally:
        os.close(write_end)


def test_help_piped_into_a_closed_reader_exits_141_without_a_traceback() -> None:
    done = _run_closed(["--help"])
    assert done.stderr == ""
    assert done.returncode == 141


def test_serve_piped_into_a_closed_reader_exits_141_without_a_traceback(tmp_path: Path) -> None:
    data = tmp_path / "agent"
    port = str(_free_port())
    done = _run_closed(
        ["serve", "my-agent", "--data", str(data), "--core", "sim:agent", "--port", port]
    )
    assert "Traceback" not in done.stderr
    assert done.stderr == ""
    assert done.returncode == 141
    assert not (data / "lock").exists()  # the server still let go of its data folder
