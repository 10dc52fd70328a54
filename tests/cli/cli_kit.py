"""Test kit for simplex-call: a simulated network with a reference bot, and a CLI runner.

``Shop`` starts the demo's bot (MCP tools ``availability``, ``quote``, plus ``whoami`` and
``track`` for these tests; the A2A quoting agent) on a seeded network, and runs simplex-call
in the same event loop with ``--core sim:you``, capturing what it writes.
"""

from __future__ import annotations

import contextlib
import io
import json
import socket
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context

from simplex_protocols._clock import Clock, ManualClock
from simplex_protocols.bindings.mcp import caller_of, needs_conversation
from simplex_protocols.bot import ResponderBot
from simplex_protocols.cli._call_demo import _agent_card, make_agent, make_tools
from simplex_protocols.cli.call import run
from simplex_protocols.sim import SimNetwork

#: Every CLI run in a test is bounded by this many real seconds.
WAIT_S = 20.0

PROTOCOLS = {
    "protocols": {
        "mcp": {"versions": ["2026-07-28"], "transports": {"chat": True, "rpc": True}},
        "a2a": {"versions": ["1.0"], "transports": {"chat": True, "rpc": True}},
    }
}


@dataclass
class Result:
    """What one simplex-call run did."""

    status: int
    out: str
    err: str

    def json(self) -> Any:
        lines = self.out.strip().splitlines()
        assert len(lines) == 1, self.out
        return json.loads(lines[0])


def environ(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment with private config and data folders under ``tmp_path``."""
    return {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        **extra,
    }


async def cli(
    network: SimNetwork | None,
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    core: str | None = "sim:you",
    stdin: str = "",
) -> Result:
    """Run simplex-call (``--core sim:you`` added unless ``core`` is ``None``)."""
    out, err = io.StringIO(), io.StringIO()
    args = [*argv, "--core", core] if core is not None else list(argv)
    with anyio.fail_after(WAIT_S):
        status = await run(
            args, network=network, stdout=out, stderr=err, stdin=io.StringIO(stdin), environ=env
        )
    return Result(status, out.getvalue(), err.getvalue())


def shop_tools() -> Any:
    tools = make_tools()

    @tools.tool(structured_output=False)
    def whoami(ctx: Context) -> str:
        """The caller key SimpleX gave this request."""
        caller = caller_of(ctx)
        return "nobody" if caller is None else caller.key

    @tools.tool(structured_output=False)
    @needs_conversation
    async def track(order: str) -> str:
        """Where an order is (needs a conversation)."""
        return f"order {order} is on its way"

    @tools.tool(structured_output=False)
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("the shelf fell over")

    return tools


@dataclass
class Shop:
    network: SimNetwork
    bot: ResponderBot
    env: dict[str, str]

    @property
    def address(self) -> str:
        return self.bot.address

    async def cli(self, *argv: str, core: str | None = "sim:you", stdin: str = "") -> Result:
        return await cli(self.network, argv, self.env, core=core, stdin=stdin)


@contextlib.asynccontextmanager
async def shop(
    tmp_path: Path,
    *,
    clock: Clock | None = None,
    mcp: bool = True,
    a2a: bool = True,
    transports: Sequence[str] = ("chat", "rpc"),
    seed: int = 5,
    core_profile: str | None = None,
) -> AsyncIterator[Shop]:
    """The reference bot serving on a seeded network, named ``@acme.simplex`` (every core
    behaving as the real core ``core_profile``, default the newest)."""
    network = SimNetwork(
        seed=seed,
        clock=clock if clock is not None else ManualClock(),
        core_profile=core_profile,
    )
    bot = ResponderBot(
        display_name="Acme Shop",
        mcp=shop_tools() if mcp else None,
        a2a=make_agent() if a2a else None,
        agent_card=_agent_card() if a2a else None,
        serves=["agent"],
        transports=transports,
        data_dir=tmp_path / "bot",
        shutdown_grace_s=0.5,
        clock=network.clock,
    )
    network.add_user("you", display_name="you", peer_type="agent")
    async with bot.serving(network.backend("acme")):
        network.register_name("acme.simplex", network.user("acme"))
        yield Shop(network, bot, environ(tmp_path))


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def over_http(server: Any, *, wait_s: float = WAIT_S) -> AsyncIterator[str]:
    """A FastMCP ``server`` over Streamable HTTP on 127.0.0.1 (uvicorn, in this process);
    its URL."""
    import uvicorn  # only the tests of HTTP upstreams need it

    port = free_port()
    web = uvicorn.Server(
        uvicorn.Config(
            server.http_app(path="/mcp"), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(web.serve)
        with anyio.fail_after(wait_s):
            while not web.started:  # uvicorn has no event to wait on  # noqa: ASYNC110
                await anyio.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            web.should_exit = True
