"""The example programs as a user runs them: ``--demo`` on the in-process simulated network,
and a clean stop on SIGTERM."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .exkit import EXAMPLES, STDIO_SERVER

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = pytest.mark.slow

#: Every wait on a program is bounded by this many real seconds.
PROGRAM_WAIT_S = 60.0


def run_demo(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        timeout=PROGRAM_WAIT_S,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        check=False,
    )


def test_the_mcp_tool_bot_demo(tmp_path: Path) -> None:
    done = run_demo(
        str(EXAMPLES / "mcp_tool_bot.py"),
        "--core",
        "sim:acme",
        "--demo",
        "--data-dir",
        str(tmp_path / "acme"),
    )
    assert done.returncode == 0, done.stderr
    assert "12 anvils are in stock." in done.stdout
    assert '"message": "shipped"' in done.stdout
    assert "Order A-17 is out for delivery." in done.stdout


def test_the_a2a_agent_bot_demo_prints_its_card(tmp_path: Path) -> None:
    done = run_demo(
        str(EXAMPLES / "a2a_agent_bot.py"),
        "--core",
        "sim:quotes",
        "--demo",
        "--print-card",
        "--data-dir",
        str(tmp_path / "q"),
    )
    assert done.returncode == 0, done.stderr
    assert "total 265.00 EUR" in done.stdout
    assert '"protocolBinding": "https://simplex.chat/protocol/a2a/v1"' in done.stdout
    assert "TASK_STATE_COMPLETED" in done.stdout


def test_the_stdio_bridge_demo(tmp_path: Path) -> None:
    done = run_demo(
        str(EXAMPLES / "mcp_stdio_bridge.py"),
        "--core",
        "sim:notes",
        "--demo",
        "--data-dir",
        str(tmp_path / "n"),
        "--",
        sys.executable,
        str(STDIO_SERVER),
    )
    assert done.returncode == 0, done.stderr
    assert '"name": "shout"' in done.stdout
    assert "Notes kept by a stdio server." in done.stdout


def test_demo_without_the_simulator_is_refused(tmp_path: Path) -> None:
    done = run_demo(str(EXAMPLES / "mcp_tool_bot.py"), "--core", "ws://127.0.0.1:9", "--demo")
    assert done.returncode == 2
    assert "--demo needs --core sim:NAME" in done.stderr


def test_an_unreachable_core_exits_with_status_1(tmp_path: Path) -> None:
    done = run_demo(
        str(EXAMPLES / "mcp_tool_bot.py"),
        "--core",
        "ws://127.0.0.1:9",
        "--data-dir",
        str(tmp_path / "acme"),
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_bot_cleanly(tmp_path: Path, signum: signal.Signals) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            str(EXAMPLES / "mcp_tool_bot.py"),
            "--core",
            "sim:acme",
            "--data-dir",
            str(tmp_path / "acme"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    seen: list[str] = []
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + PROGRAM_WAIT_S
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stderr, selectors.EVENT_READ)
            while not any("serves mcp" in line for line in seen):
                remaining = deadline - time.monotonic()
                assert remaining > 0, "the bot did not start: " + "".join(seen)
                if selector.select(remaining):
                    line = proc.stderr.readline()
                    assert line, "the bot ended: " + "".join(seen)
                    seen.append(line)
        assert (tmp_path / "acme" / "lock").exists()
        proc.send_signal(signum)
        rest = proc.communicate(timeout=PROGRAM_WAIT_S)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=PROGRAM_WAIT_S)
    assert proc.returncode == 0, rest
    assert f"{signum.name} received, stopping" in rest
    assert "Acme stopped" in rest
    assert not (tmp_path / "acme" / "lock").exists()
