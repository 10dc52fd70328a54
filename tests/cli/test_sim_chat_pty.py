"""``simplex-sim chat`` in a pseudo-terminal: a person plays the owner of an agent.

``simplex-sim serve``'s WebSocket server and ``simplex-mcp serve`` run in this process on the
simulated network; the chat client runs as its own process in a pseudo-terminal, as a person
would start it, and the test types into it: ``/join`` the printed link, read the greeting and
the agent's card, ``/approve 1``, see the card edited, ``/chats``, ``/quit``.
"""

from __future__ import annotations

import io
import os
import pty
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from simplex_protocols._clock import ManualClock
from simplex_protocols.core import ChatCore
from simplex_protocols.mcp_server.config import ServeOptions
from simplex_protocols.mcp_server.log import Log
from simplex_protocols.mcp_server.serve import ServerInfo, serve
from simplex_protocols.sim import SimNetwork, SimServer

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = pytest.mark.slow

CHAT = "import sys; from simplex_protocols.cli.sim import main; sys.exit(main())"


class Terminal:
    """The master side of a pseudo-terminal: what the program printed, and typing into it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.text = ""
        self.changed = anyio.Event()
        self.closed = False

    async def pump(self) -> None:
        while True:
            await anyio.wait_readable(self.fd)
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:  # the program ended (EIO on Linux)
                chunk = b""
            if not chunk:
                self.closed = True
                self.changed.set()
                return
            self.text += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
            self.changed.set()
            self.changed = anyio.Event()

    async def wait_for(self, needle: str, *, after: int = 0) -> int:
        """Wait until ``needle`` is printed (after position ``after``); its end position."""
        while True:
            index = self.text.find(needle, after)
            if index >= 0:
                return index + len(needle)
            if self.closed:
                raise AssertionError(f"{needle!r} never printed:\n{self.text}")
            await self.changed.wait()

    def type(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode())


class Lines(Log):
    def __init__(self) -> None:
        super().__init__(io.StringIO(), io.StringIO())
        self.lines: list[str] = []
        self.changed = anyio.Event()

    def line(self, text: str) -> None:
        self.lines.extend(text.split("\n"))
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_line(self, check: Any) -> str:
        while True:
            found = next((line for line in self.lines if check(line)), None)
            if found is not None:
                return found
            await self.changed.wait()


@pytest.mark.anyio
async def test_the_owner_joins_sees_the_card_and_approves_it_in_a_terminal(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    network = SimNetwork(seed=11, clock=clock)
    directory = network.add_user(
        "directory",
        display_name="SimpleX Directory",
        peer_type="bot",
        short_descr="Find groups, channels, businesses and bots.",
    )
    directory.create_address(welcome="Welcome to the directory! Send a search.")
    network.register_name("@directory.simplex", directory, "contact")
    log = Lines()
    stop = anyio.Event()
    started: list[ServerInfo] = []
    ready = anyio.Event()
    options = ServeOptions(
        name="my-agent", data=tmp_path / "agent", display_name="My Agent", port=0
    )
    with anyio.fail_after(60):
        async with SimServer(network) as sim, anyio.create_task_group() as tg:

            async def agent() -> None:
                await serve(
                    options,
                    core=ChatCore(network.backend("my-agent")),
                    clock=clock,
                    log=log,
                    started=lambda info: (started.append(info), ready.set()),
                    stop=stop,
                )

            tg.start_soon(agent)
            await ready.wait()
            link = next(line for line in log.lines if line.startswith("https://"))

            master, slave = pty.openpty()
            process = await anyio.open_process(
                [
                    sys.executable,
                    "-c",
                    CHAT,
                    "chat",
                    "alice",
                    "--port",
                    str(sim.port),
                    "--display-name",
                    "Alice",
                ],
                stdin=slave,
                stdout=slave,
                stderr=slave,
            )
            os.close(slave)
            term = Terminal(master)
            tg.start_soon(term.pump)
            try:
                at = await term.wait_for("You are Alice. Commands: /join LINK, /address, /chats,")
                term.type(f"/join {link}")
                at = await term.wait_for("* joined #1 My Agent", after=at)
                at = await term.wait_for(
                    "My Agent: I'm your agent. I ask here before I connect or send.", after=at
                )
                await log.wait_line(lambda line: line.startswith("Alice joined (member "))

                info = started[0]
                result: dict[str, Any] = {}
                hc = create_mcp_http_client(headers={"Authorization": f"Bearer {info.token}"})

                async def connect() -> None:
                    async with hc, Client(streamable_http_client(info.url, http_client=hc)) as mcp:
                        called = await mcp.call_tool(
                            "connect", {"target": "@directory.simplex", "idle": 1}
                        )
                        result.update(called.structured_content or {})

                tg.start_soon(connect)
                # the card, as the app shows it: the quoted commands are plain commands
                at = await term.wait_for(
                    "My Agent: I want to connect to bot SimpleX Directory (@directory.simplex), "
                    "as myself.\n"
                    "    `Find groups, channels, businesses and bots.`\n"
                    "    `Welcome to the directory! Send a search.`\n"
                    "    /approve 1 or /reject 1\n",
                    after=at,
                )
                term.type("/approve 1")
                await log.wait_line(lambda line: line == "Action 1 approved by Alice: connected.")
                at = await term.wait_for(
                    "My Agent (edited): I connected to bot SimpleX Directory "
                    "(@directory.simplex), as myself.",
                    after=at,
                )
                at = await term.wait_for("    Approved by Alice.\n", after=at)
                while not result:
                    await clock.advance(1)
                    await anyio.lowlevel.checkpoint()
                assert (result["action"], result["status"], result["connected"]) == (
                    1,
                    "done",
                    True,
                )

                term.type("/chats")
                at = await term.wait_for("#1  My Agent", after=at)
                term.type("/quit")
                assert await process.wait() == 0
            finally:
                if process.returncode is None:
                    process.kill()
                    await process.wait()
                stop.set()
                tg.cancel_scope.cancel()
            os.close(master)
