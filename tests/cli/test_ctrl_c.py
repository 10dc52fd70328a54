"""Ctrl-C in every console script: one line, exit 130, no traceback (issue 13, item 11).

Each script runs as a process and gets SIGINT in the middle of its work: waiting for a chat
core that accepted the connection and never answers (a listening socket of the test), serving
the simulated network, or running the conformance self-test.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60.0
# A job a non-interactive shell starts in the background inherits SIGINT ignored, and Python
# then leaves it ignored; a person's terminal never does that. Each program starts with
# SIGINT as a terminal gives it, so the test does not depend on how its own runner was started.
_TERMINAL_SIGINT = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)"

SCRIPTS = {
    "simplex-call": "from simplex_protocols.cli.call import main",
    "simplex-sim": "from simplex_protocols.cli.sim import main",
    "simplex-mcp": "from simplex_protocols.mcp_server.cli import main",
    "simplex-conformance": "from simplex_protocols.conformance.cli import main",
}


def start(script: str, *args: str, cwd: Path) -> subprocess.Popen[str]:
    """The console script as a process (its main, as the installed entry point calls it)."""
    code = f"{_TERMINAL_SIGINT}; import sys; {SCRIPTS[script]}; sys.exit(main())"
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
    )


@contextmanager
def silent_core() -> Iterator[tuple[socket.socket, int]]:
    """A listening socket that accepts a connection and never answers: a core that hangs."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(WAIT_S)
        yield listener, listener.getsockname()[1]


def interrupt(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def wait_for_line(stream: object, text: str) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        line = stream.readline()  # type: ignore[attr-defined]
        assert line, "the program ended: " + "".join(seen)
        seen.append(line)
        if text in line:
            return seen
    raise AssertionError(f"no {text!r} within {WAIT_S} s: " + "".join(seen))


def assert_one_line_130(proc: subprocess.Popen[str], out: str, err: str, program: str) -> None:
    assert proc.returncode == 130, (proc.returncode, out, err)
    assert "Traceback" not in err, err
    assert err.splitlines() == [f"{program}: interrupted"], err


def test_ctrl_c_while_simplex_call_waits_for_its_core(tmp_path: Path) -> None:
    with silent_core() as (listener, port):
        proc = start(
            "simplex-call",
            "--core",
            f"ws://127.0.0.1:{port}/me",
            "@acme.simplex",
            "tools/list",
            cwd=tmp_path,
        )
        conn, _ = listener.accept()  # the program is now waiting for the core's handshake
        with conn:
            out, err = interrupt(proc)
    assert_one_line_130(proc, out, err, "simplex-call")


def test_ctrl_c_while_simplex_sim_chat_waits_for_its_server(tmp_path: Path) -> None:
    with silent_core() as (listener, port):
        proc = start("simplex-sim", "chat", "alice", "--port", str(port), cwd=tmp_path)
        conn, _ = listener.accept()
        with conn:
            out, err = interrupt(proc)
    assert_one_line_130(proc, out, err, "simplex-sim")


def test_ctrl_c_stops_simplex_sim_serve_with_its_stopped_line_and_130(tmp_path: Path) -> None:
    proc = start("simplex-sim", "serve", "--port", "0", "--user", "alice", cwd=tmp_path)
    assert proc.stdout is not None
    wait_for_line(proc.stdout, "listening on")
    out, err = interrupt(proc)
    assert proc.returncode == 130, (out, err)
    assert err == "", err
    # The one line is the server's own "stopped" (its state saved, as on SIGTERM).
    assert out.splitlines()[-1:] == ["simplex-sim: stopped"], out


def test_ctrl_c_while_simplex_mcp_register_waits_for_claude(tmp_path: Path) -> None:
    # `simplex-mcp serve` stops on SIGINT itself, as the MCP server plan says ("Stopped.",
    # exit 0: tests/mcp_server/test_mcp_signals.py); `register` waits on the host's CLI.
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / "server.json").write_text('{"port": 5226, "expireHours": 24}')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    started = tmp_path / "claude-started"
    claude = bin_dir / "claude"
    claude.write_text(f"#!/bin/sh\ntouch {started}\nexec sleep 60\n")
    claude.chmod(0o755)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"{_TERMINAL_SIGINT}; import sys; {SCRIPTS['simplex-mcp']}; sys.exit(main())",
            "register",
            "acme",
            "--data",
            str(data),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{bin_dir}:{os.environ['PATH']}"},
    )
    deadline = time.monotonic() + WAIT_S
    while not started.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "claude was never run"
        time.sleep(0.05)
    out, err = interrupt(proc)
    assert_one_line_130(proc, out, err, "simplex-mcp")


def test_ctrl_c_in_simplex_conformance_selftest(tmp_path: Path) -> None:
    proc = start("simplex-conformance", "selftest", cwd=tmp_path)
    assert proc.stderr is not None
    # The vectors are done: the live part (an event loop and a simulated network) is running.
    wait_for_line(proc.stderr, "selftest: vectors:")
    time.sleep(0.5)
    out, err = interrupt(proc)
    assert_one_line_130(proc, out, err, "simplex-conformance")
