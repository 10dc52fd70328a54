"""A lost chat core stops a bot with one typed error, never an exception group (issue 13,
item 2): the WebSocket to ``simplex-sim serve`` is dropped under a running bot."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from simplex_protocols._groups import first_error, interrupted
from simplex_protocols.bot import ResponderBot
from simplex_protocols.errors import CoreConnectionError, CoreError
from simplex_protocols.sim import SimNetwork
from simplex_protocols.sim._server import SimServer

from .botkit import WAIT_S, Gates, make_tools

ROOT = Path(__file__).resolve().parents[2]
SIM_MAIN = "import sys; from simplex_protocols.cli.sim import main; sys.exit(main())"


def test_first_error_finds_the_typed_error_in_nested_groups_of_any_size() -> None:
    lost = CoreConnectionError("the connection to the chat core was lost")
    group = BaseExceptionGroup(
        "outer",
        [
            ExceptionGroup("inner", [RuntimeError("cancel scope"), lost]),
            CoreConnectionError("the writer lost it too"),
        ],
    )
    assert first_error(group) is lost
    # Ctrl-C outranks what it broke; a bare error is its own answer.
    ctrl_c = KeyboardInterrupt()
    assert first_error(BaseExceptionGroup("g", [lost, ctrl_c])) is ctrl_c
    assert interrupted(BaseExceptionGroup("g", [ExceptionGroup("h", [lost]), ctrl_c]))
    assert not interrupted(group)
    assert first_error(lost) is lost
    # No typed error: the first ordinary error, not the cancellation it caused elsewhere.
    bug = ValueError("bug")
    assert first_error(BaseExceptionGroup("g", [asyncio.CancelledError(), bug])) is bug


@pytest.mark.anyio
async def test_a_dropped_core_websocket_stops_run_async_with_one_core_connection_error(
    tmp_path: Path,
) -> None:
    network = SimNetwork(seed=7)
    async with SimServer(network, port=0, default_core="acme") as server:
        bot = ResponderBot(display_name="Acme", mcp=make_tools(Gates()), data_dir=tmp_path / "acme")
        dropped: list[int] = []

        def drop(_: ResponderBot) -> None:
            dropped.append(server.drop_connections("acme"))

        with anyio.fail_after(WAIT_S), pytest.raises(CoreConnectionError) as caught:
            await bot.run_async(server.url("acme"), handle_signals=False, on_ready=drop)
    assert dropped == [1]
    # The error itself, not a group that `except SimplexError` would miss.
    assert type(caught.value) is CoreConnectionError
    assert not isinstance(caught.value, CoreError)


@pytest.mark.slow
def test_the_example_bot_logs_one_line_and_exits_1_when_the_core_is_lost(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    sim = subprocess.Popen(
        [sys.executable, "-c", SIM_MAIN, "serve", "--port", "0", "--user", "acme"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert sim.stdout is not None
        first = sim.stdout.readline()
        port = re.search(r"ws://127\.0\.0\.1:(\d+)", first)
        assert port, first
        bot = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "examples" / "mcp_tool_bot.py"),
                "--core",
                f"ws://127.0.0.1:{port.group(1)}/acme",
                "--data-dir",
                str(tmp_path / "acme"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert bot.stderr is not None
        deadline = time.monotonic() + 60
        seen: list[str] = []
        while time.monotonic() < deadline:
            line = bot.stderr.readline()
            assert line, "".join(seen)
            seen.append(line)
            if " serves " in line:
                break
        sim.send_signal(signal.SIGKILL)  # the core goes away without a goodbye
        _, rest = bot.communicate(timeout=60)
    finally:
        for proc in (sim,):
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
    assert bot.returncode == 1, rest
    # One error record, the typed one; no traceback (before the fix: 96 lines of
    # ExceptionGroup). The core's own warning and "Acme stopped" are records of their own.
    assert "Traceback" not in rest and "ExceptionGroup" not in rest, rest
    assert rest.count("ERROR") == 1, rest
    error = rest[rest.index("ERROR") :]
    assert "Acme: ws://127.0.0.1:" in error and "connection was closed" in " ".join(error.split())
