"""Two replicas of one service as two processes, on one simulated network served by a third
process (``simplex-sim serve``) and one PostgreSQL database (docs/bot.md, "Running more than
one process").

tests/bot/test_replicas.py checks the same behaviours with both bots in the test's own process
and time on a manual clock; here each replica is a program of its own (replica_bot.py, as a
bot's author runs one), so what they share can only pass through the database and the network:
a ``requestState`` sealed by one continues at the other (MCP-MSG-6), a signed key's rate limit
is the service's, an A2A task of a caller who proves a key is read at the other replica and by
no one else, the card lists both, and a replica that stops gracefully takes its row out of the
registry at once, where a killed one leaves it until it is stale.

Time is the real clock: a heartbeat comes every 15 s, which no test here waits for. What a
replica reads of the others at its heartbeats is tests/bot/test_replicas.py's part.
Needs ``SIMPLEX_TEST_POSTGRES_DSN`` (``.ci/run`` starts a server).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
import pytest
from bot.botkit import WAIT_S, Caller, confirmed_reserve, echo_card, tool_call, tool_text

from simplex_protocols._clock import SystemClock
from simplex_protocols._wire import loads
from simplex_protocols.bindings.a2a import (
    A2A_BINDING_URI,
    add_identity,
    build_a2a_request,
    build_send_message,
    is_final_message,
)
from simplex_protocols.core import CoreBackend, WebSocketBackend
from simplex_protocols.errors import RateLimitedError
from simplex_protocols.rpc import SigningKey
from simplex_protocols.sim import testing

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
SIM = os.path.join(os.path.dirname(sys.executable), "simplex-sim")
#: A program's start (imports, its core, its database) is bounded by this many real seconds.
START_S = 30.0
UNKNOWN_TASK = -32001
JSON = dict[str, Any]


class Program:
    """A process of the test, read a line of its standard output at a time.

    Args:
        process: the process (its standard output a pipe).
        log: the file its standard error goes to, shown when it ends early.
    """

    def __init__(self, process: anyio.abc.Process, log: Path | None = None) -> None:
        self.process = process
        self.log = log
        self._buffer = b""

    async def line(self) -> str:
        """The next line it prints (bounded by ``START_S``)."""
        assert self.process.stdout is not None
        with anyio.fail_after(START_S):
            while b"\n" not in self._buffer:
                try:
                    self._buffer += await self.process.stdout.receive()
                except anyio.EndOfStream:
                    log = self.log.read_text() if self.log is not None else ""
                    raise AssertionError(f"the program ended: {log}") from None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    async def stop(self, signum: signal.Signals) -> int:
        """Send ``signum`` and return the exit status once it has ended."""
        self.process.send_signal(signum)
        with anyio.fail_after(START_S):
            return await self.process.wait()


@asynccontextmanager
async def program(args: list[str], *, stderr: IO[Any] | None = None) -> AsyncIterator[Program]:
    """Run ``args`` for the block, killed at its end when still running."""
    # The replica's program imports the bot tests' kit from the tests folder.
    path = [str(HERE.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    process = await anyio.open_process(
        args, stdout=subprocess.PIPE, stderr=stderr or subprocess.DEVNULL, env=env
    )
    try:
        yield Program(process, Path(stderr.name) if stderr is not None else None)
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.move_on_after(START_S):
            await process.wait()
        await process.aclose()


class Replicas:
    """The simulated network and the replica processes of one test (``async with``)."""

    def __init__(self, tmp_path: Path, database: str) -> None:
        self.tmp_path = tmp_path
        self.database = database
        self.url = ""
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> Replicas:
        await self._stack.__aenter__()
        network = await self._stack.enter_async_context(
            program([SIM, "serve", "--port", "0", "--seed", "5"])
        )
        first = await network.line()
        self.url = first.rsplit(" ", 1)[-1]
        assert self.url.startswith("ws://127.0.0.1:"), first
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._stack.__aexit__(*exc)

    async def start(self, name: str) -> tuple[Program, JSON]:
        """The replica ``name`` (its data in ``tmp_path/name``, its log beside it) and what it
        printed once serving: its address and the replicas it found as it joined."""
        log = self._stack.enter_context((self.tmp_path / f"{name}.log").open("a"))
        args = [sys.executable, str(HERE / "replica_bot.py"), "--core", f"{self.url}/{name}"]
        args += ["--data", str(self.tmp_path / name), "--database", self.database]
        args += ["--name", name, "--rate-limit", "2/60"]
        replica = await self._stack.enter_async_context(program(args, stderr=log))
        ready = loads(await replica.line())
        assert isinstance(ready, dict)
        return replica, ready


class Network(testing.World):
    """The test's callers, whose cores are in the ``simplex-sim serve`` process at ``url``
    (the world's own network is not used)."""

    user_class = Caller

    def __init__(self, url: str) -> None:
        super().__init__(clock=SystemClock(), wait_s=WAIT_S)
        self.url = url

    def backend(self, name: str) -> CoreBackend:
        return WebSocketBackend(f"{self.url}/{name}", ping_interval=None)


async def registry(database: str) -> list[str]:
    """The addresses in the service's replica registry, however old their heartbeat."""
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(database)
    try:
        rows = await conn.fetch(
            "SELECT address FROM simplex_service_replicas WHERE service = 'acme' ORDER BY address"
        )
    finally:
        await conn.close()
    return sorted(str(row["address"]) for row in rows)


async def a2a_chat(caller: Caller, address: str, request: JSON) -> JSON:
    """The final answer of an A2A request in the caller's conversation with ``address``."""
    contact = await caller.connect(address)
    result = await caller.chat.call(
        contact, "a2a", request, final=lambda m: is_final_message(request, m)
    )
    answer = result.answers[0].final
    assert answer is not None, result
    return dict(answer)


def proved(request: JSON, key: SigningKey) -> JSON:
    """``request`` with a SimpleX-Identity credential of ``key`` for the service's card."""
    return add_identity(request, key, echo_card().name, int(time.time()))


async def test_two_replica_processes_share_state_and_a_stopped_one_leaves_the_registry(
    tmp_path: Path, postgres_url: str
) -> None:
    state_key, rate_key, identity = (SigningKey.generate() for _ in range(3))
    async with Replicas(tmp_path, postgres_url) as replicas:
        one, at_one = await replicas.start("one")
        two, at_two = await replicas.start("two")
        first, second = at_one["address"], at_two["address"]
        # The second found the first in the registry as it joined, and lists itself first.
        assert at_one["replicas"] == [first]
        assert at_two["replicas"] == [second, first]
        async with Network(replicas.url) as network:
            alice = await network.user("alice")
            assert isinstance(alice, Caller)

            # A requestState sealed by the first process continues at the second (MCP-MSG-6).
            asked = await alice.rpc.request(
                first, "mcp", tool_call("reserve", {"item": "anvil"}), signing_key=state_key
            )
            follow_up = confirmed_reserve(asked)
            reserved = await alice.rpc.request(second, "mcp", follow_up, signing_key=state_key)
            assert isinstance(reserved, dict) and tool_text(reserved) == "Reserved one anvil."

            # Two calls a minute per key, counted by the service: one at each, then neither.
            listing = tool_call("availability", {"item": "anvil"})
            for address in (first, second):
                await alice.rpc.request(address, "mcp", listing, signing_key=rate_key)
            for address in (second, first):
                with pytest.raises(RateLimitedError):
                    await alice.rpc.request(address, "mcp", listing, signing_key=rate_key)

            # A task made at the first with a proved key is the key's at the second, and only
            # the key's (A2A-AUTHZ-2).
            sent = await a2a_chat(
                alice, first, proved(build_send_message("anvils", request_id=1), identity)
            )
            task_id = sent["result"]["task"]["id"]
            get = build_a2a_request("GetTask", {"id": task_id}, request_id=2)
            found = await a2a_chat(alice, second, proved(get, identity))
            unproved = await a2a_chat(alice, second, get)
            assert found["result"]["artifacts"][0]["parts"][0]["text"] == "echo: anvils"
            assert unproved["error"]["code"] == UNKNOWN_TASK

            # The second's card, read over the wire, lists both replicas (A2A-ID-2).
            card = await a2a_chat(
                alice, second, build_a2a_request("GetExtendedAgentCard", {}, request_id=3)
            )
            interfaces = card["result"]["supportedInterfaces"]
            assert [i["url"] for i in interfaces if i["protocolBinding"] == A2A_BINDING_URI] == [
                second,
                first,
            ]

        assert await registry(postgres_url) == sorted([first, second])
        # Killed, the second says no goodbye: its row stays (until it is stale, 60 s on).
        await two.stop(signal.SIGKILL)
        assert await registry(postgres_url) == sorted([first, second])
        # Started again on its data folder, it takes its own row and address back...
        two, again = await replicas.start("two")
        assert again["replicas"] == [second, first]
        assert await registry(postgres_url) == sorted([first, second])
        # ... and stopped gracefully, it takes its row out before it exits.
        assert await two.stop(signal.SIGTERM) == 0
        assert await registry(postgres_url) == [first]
        assert await one.stop(signal.SIGINT) == 0
        assert await registry(postgres_url) == []
