"""``simplex-mcp serve`` as a process: SIGINT starts the stop, a second SIGINT joins it, exit 0.

The server runs in its own process with ``--core ws://...`` against ``simplex-sim``'s WebSocket
server in this process; the owner is a simulated user here, and the agent's call comes from the
``mcp`` SDK's client with the token from ``headers.json``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import anyio.abc
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_sim import Owner

from simplex_protocols.sim import SimNetwork, SimServer

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = pytest.mark.slow

SERVE = "import sys; from simplex_protocols.mcp_server.cli import main; sys.exit(main())"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class Output:
    """A process's stdout, line by line, with a wait for a line."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self.lines: list[str] = []
        self.changed = anyio.Event()

    async def pump(self) -> None:
        assert self.process.stdout is not None
        buffer = b""
        async for chunk in self.process.stdout:
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            self.lines.extend(line.decode() for line in complete)
            self.changed.set()
            self.changed = anyio.Event()
        self.changed.set()

    async def wait_line(self, check: Callable[[str], bool]) -> str:
        while True:
            for line in self.lines:
                if check(line):
                    return line
            if self.process.returncode is not None:
                raise AssertionError(f"the server exited: {self.lines}")
            await self.changed.wait()


@pytest.mark.anyio
async def test_sigint_stops_the_server_and_a_second_sigint_joins_the_stop(tmp_path: Path) -> None:
    network = SimNetwork(seed=3)
    alice = network.add_user("alice", display_name="Alice", peer_type="human")
    directory = network.add_user("directory", display_name="SimpleX Directory", peer_type="bot")
    directory.create_address()
    network.register_name("@directory.simplex", directory, "contact")
    port = free_port()
    folder = tmp_path / "agent"
    errors_path = tmp_path / "stderr.txt"
    with anyio.fail_after(60), errors_path.open("wb") as errors:
        async with SimServer(network) as sim, anyio.create_task_group() as tg:
            owner = Owner(network, alice)
            stack = AsyncExitStack()
            await owner.start(stack, tg)
            process = await anyio.open_process(
                [
                    sys.executable,
                    "-c",
                    SERVE,
                    "serve",
                    "my-agent",
                    "--data",
                    str(folder),
                    "--core",
                    sim.url("my-agent"),
                    "--port",
                    str(port),
                    "--display-name",
                    "My Agent",
                ],
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                stderr=errors,
            )
            out = Output(process)
            tg.start_soon(out.pump)
            link = await out.wait_line(lambda line: line.startswith("https://"))
            await out.wait_line(lambda line: line == f"Listening on http://127.0.0.1:{port}/mcp")
            await owner.join(link)
            await out.wait_line(
                lambda line: line.endswith("and is now an owner. The link is deleted.")
            )

            headers = json.loads((folder / "headers.json").read_text())
            hc = create_mcp_http_client(headers=headers)
            url = f"http://127.0.0.1:{port}/mcp"
            failed: list[BaseException] = []

            async def connect() -> None:
                async with hc, Client(streamable_http_client(url, http_client=hc)) as mcp:
                    try:
                        await mcp.call_tool("connect", {"target": "@directory.simplex"})
                    except Exception as exc:
                        failed.append(exc)

            tg.start_soon(connect)
            await owner.wait_message(lambda t: "/'approve 1'" in t)
            # the agent is off the network: the cancelled card waits to be sent, so the stop waits
            network.faults.offline("my-agent")
            process.send_signal(signal.SIGINT)
            await out.wait_line(lambda line: line == "Cancelled 1 action.")
            assert process.returncode is None
            process.send_signal(signal.SIGINT)  # joins the stop in progress
            network.faults.offline("my-agent", False)
            await network.settle()
            code = await process.wait()
            await owner.wait_message(lambda t: t.endswith("\nCancelled: the server stopped."))
            tg.cancel_scope.cancel()
            await stack.aclose()
    assert code == 0
    assert out.lines[-2:] == ["Cancelled 1 action.", "Stopped."]
    assert out.lines.count("Stopped.") == 1
    assert not (folder / "lock").exists()
    assert errors_path.read_text() == ""
