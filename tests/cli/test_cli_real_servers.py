"""Real MCP servers answer real MCP callers over SimpleX, on the simulated network.

Three servers: a FastMCP server served in process by ``ResponderBot``, the third-party stdio
server ``@modelcontextprotocol/server-everything`` (npm, pinned in .ci/run, found through
SIMPLEX_TEST_MCP_EVERYTHING; skipped without it) through simplex-bridge, and a FastMCP server
over Streamable HTTP on 127.0.0.1 through simplex-bridge ``--url``. Two callers: simplex-call
(in process) and the ``mcp`` SDK's own ``mcp.Client(SimplexTransport(...))``. Each caller
reads ``tools/list`` to its end and calls a tool, over Service RPC and in a conversation, and
nothing on these paths shows a traceback.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest
from cli_kit import cli, environ, over_http
from fastmcp import FastMCP
from mcp.client.stdio import StdioServerParameters

from simplex_protocols.bindings.mcp import SimplexTransport
from simplex_protocols.bot import ResponderBot
from simplex_protocols.cli.bridge import HTTPServer, StdioServer, open_bridge
from simplex_protocols.core import ChatCore
from simplex_protocols.sim import SimNetwork

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

EVERYTHING = os.environ.get("SIMPLEX_TEST_MCP_EVERYTHING", "")
HAS_EVERYTHING = bool(EVERYTHING and Path(EVERYTHING).is_file())

TRANSPORTS = ["rpc", "chat"]
KINDS = [
    "fastmcp",
    pytest.param(
        "stdio",
        marks=pytest.mark.skipif(
            not HAS_EVERYTHING,
            reason="SIMPLEX_TEST_MCP_EVERYTHING does not name the entry script of "
            "@modelcontextprotocol/server-everything (.ci/run installs it with npm)",
        ),
    ),
    "http",
]

#: The catalogue's tools: with their descriptions, a list over both the Service RPC budget
#: (10,000 bytes) and a chat message (15,602 bytes), so it comes in pages on both.
NAMES = [f"item_{i:03d}" for i in range(120)]

#: Every wait is bounded by this many real seconds (a child process or a web server starts).
WAIT_S = 40.0


def catalogue() -> FastMCP:
    server = FastMCP("catalogue")

    @server.tool
    def quote(item: str, qty: int) -> str:
        """A price."""
        return f"{qty} x {item}: {qty * 3} EUR"

    for name in NAMES:

        def describe() -> str:
            return "an item"

        server.tool(describe, name=name, description=f"{name}: " + "a long description " * 14)
    return server


@dataclass
class Upstream:
    """A server on SimpleX, and what its own answers are (read without SimpleX)."""

    network: SimNetwork
    address: str
    tools: list[str]
    tool: str
    arguments: dict[str, Any]
    text: str
    #: At least this many pages (the catalogue is cut into pages; the npm server may fit one).
    min_pages: int


async def direct_answers(params: StdioServerParameters) -> tuple[list[str], str]:
    """The npm server's own tool names (every page) and its answer to echo, over stdio."""
    names: list[str] = []
    async with mcp.Client(params, cache=None) as client:
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [tool.name for tool in page.tools]
            cursor = page.next_cursor
            if cursor is None:
                break
        echoed = await client.call_tool("echo", {"message": "hi"})
    return names, texts_of(echoed.content)[0]


def texts_of(content: Any) -> list[str]:
    return [c.text for c in content if isinstance(c, mcp.types.TextContent)]


@asynccontextmanager
async def upstream(kind: str, tmp_path: Path) -> AsyncIterator[Upstream]:
    network = SimNetwork(seed=11)
    network.add_user("you", display_name="you", peer_type="agent")
    network.add_user("sdk", display_name="sdk", peer_type="agent")
    catalogue_answers = (["quote", *NAMES], "quote", {"item": "tea", "qty": 2})
    async with AsyncExitStack() as stack:
        # No deadline around these: a cancel scope may not end while the task groups the
        # bridge opens stay open. The SDK bounds a child's start itself.
        if kind == "fastmcp":
            bot = ResponderBot(
                display_name="Catalogue",
                mcp=catalogue(),
                serves=["agent"],
                transports=("chat", "rpc"),
                data_dir=tmp_path / "bot",
                shutdown_grace_s=0.5,
            )
            await stack.enter_async_context(bot.serving(network.backend("bot")))
            tools, tool, arguments = catalogue_answers
            yield Upstream(network, bot.address, tools, tool, arguments, "2 x tea: 6 EUR", 2)
            return
        if kind == "stdio":
            command = ["node", EVERYTHING, "stdio"]
            tools, echoed = await direct_answers(
                StdioServerParameters(command=command[0], args=command[1:])
            )
            bridge = await stack.enter_async_context(
                open_bridge(StdioServer(command), data_dir=tmp_path / "bridge")
            )
            await stack.enter_async_context(bridge.bot.serving(network.backend("bridge")))
            yield Upstream(network, bridge.bot.address, tools, "echo", {"message": "hi"}, echoed, 1)
            return
        url = await stack.enter_async_context(over_http(catalogue()))
        bridge = await stack.enter_async_context(
            open_bridge(HTTPServer(url, {}), data_dir=tmp_path / "bridge", display_name="Shop")
        )
        await stack.enter_async_context(bridge.bot.serving(network.backend("bridge")))
        tools, tool, arguments = catalogue_answers
        yield Upstream(network, bridge.bot.address, tools, tool, arguments, "2 x tea: 6 EUR", 2)


def no_traceback(err: str, caplog: pytest.LogCaptureFixture) -> None:
    assert "Traceback" not in err
    logged = [r for r in caplog.records if r.exc_info and r.levelno >= logging.WARNING]
    assert logged == [], [r.getMessage() for r in logged]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("kind", KINDS)
async def test_simplex_call_lists_every_tool_and_calls_one(
    kind: str,
    transport: str,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    env = environ(tmp_path)
    async with upstream(kind, tmp_path) as up:
        listed = await cli(
            up.network, [up.address, "tools/list", "--json", "--transport", transport], env
        )
        arguments = [f"{key}={value}" for key, value in up.arguments.items()]
        called = await cli(
            up.network,
            [up.address, "tool", up.tool, *arguments, "--json", "--transport", transport],
            env,
        )
        shown = await cli(up.network, [up.address, "tools/list", "--transport", transport], env)
    assert listed.status == 0, listed.err
    answer = listed.json()
    assert answer["transport"] == transport
    result = answer["response"]["result"]
    assert [tool["name"] for tool in result["tools"]] == up.tools
    assert "nextCursor" not in result
    assert answer.get("pages", 1) >= up.min_pages
    assert called.status == 0, called.err
    assert texts_of_json(called.json()["response"]["result"]) == [up.text]
    assert shown.status == 0, shown.err
    assert f"{len(up.tools)} tools:" in shown.out
    no_traceback(listed.err + called.err + shown.err + capfd.readouterr().err, caplog)


def texts_of_json(result: dict[str, Any]) -> list[str]:
    return [c["text"] for c in result["content"] if c.get("type") == "text"]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("kind", KINDS)
async def test_the_sdk_client_lists_every_tool_and_calls_one(
    kind: str,
    transport: str,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    names: list[str] = []
    pages = 0
    async with upstream(kind, tmp_path) as up, ChatCore(up.network.backend("sdk")) as core:
        sdk = SimplexTransport(up.address, core=core, transport=transport)  # type: ignore[arg-type]
        with anyio.fail_after(WAIT_S):
            async with mcp.Client(sdk) as client:
                cursor: str | None = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    names += [tool.name for tool in page.tools]
                    pages += 1
                    cursor = page.next_cursor
                    if cursor is None:
                        break
                called = await client.call_tool(up.tool, up.arguments)
    assert names == up.tools
    assert pages >= up.min_pages
    assert called.is_error is not True
    assert texts_of(called.content) == [up.text]
    no_traceback(capfd.readouterr().err, caplog)
