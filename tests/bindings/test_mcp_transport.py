"""``mcp.Client(SimplexTransport(...))``: the SDK's own client reaches a SimpleX bot, over
Service RPC and in a conversation, on the simulated network."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import fastmcp
import mcp
import pytest
from mcp.server.mcpserver import Context, MCPServer

from simplex_protocols._clock import ManualClock
from simplex_protocols.bindings.mcp import (
    SIMPLEX_ERROR_KEY,
    SimplexTransport,
    needs_conversation,
)
from simplex_protocols.bot import ResponderBot
from simplex_protocols.core import ChatAPI, ChatCore
from simplex_protocols.errors import CoreError, LinkError
from simplex_protocols.sim import SimNetwork

TRANSPORTS = ["rpc", "chat"]
NAMES = [f"tool_{i:03d}" for i in range(200)]


def shop_server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("shop")

    @server.tool(structured_output=False)
    def quote(item: str, qty: int = 1) -> str:
        """A price."""
        return f"{qty} x {item}: {qty * 3} EUR"

    @server.tool(structured_output=False)
    async def pack(boxes: int, ctx: Context) -> str:
        """Packs boxes, reporting progress."""
        for done in range(1, boxes + 1):
            await ctx.report_progress(done, boxes, f"box {done}")
        return f"{boxes} boxes packed"

    @server.tool(structured_output=False)
    @needs_conversation
    async def track(order: str) -> str:
        """Needs a conversation."""
        return f"order {order} is on its way"

    @server.tool(structured_output=False)
    async def slow() -> str:
        """Never finishes by itself."""
        await anyio.sleep_forever()
        return "never"

    @server.resource("shop://hours")
    def hours() -> str:
        return "9 to 5"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Say hello to {name}"

    return server


def many_tools() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("many")
    for name in NAMES:

        def echo(text: str) -> str:
            return text

        server.add_tool(echo, name=name, description=f"{name} " + "d" * 250)
    return server


async def connect_failure(client: mcp.Client) -> BaseException:
    """The one error that stopped ``client`` from connecting (the SDK's task groups may wrap
    it in an exception group)."""
    try:
        async with client:
            pass
    except BaseException as exc:
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        return exc
    raise AssertionError("the client connected")


@dataclass
class Setup:
    network: SimNetwork
    bot: ResponderBot
    core: ChatCore

    def transport(self, transport: str, **options: Any) -> SimplexTransport:
        return SimplexTransport(
            self.bot.address,
            core=self.core,
            transport=transport,  # type: ignore[arg-type]
            clock=self.network.clock,
            **options,
        )


@contextlib.asynccontextmanager
async def serving(tmp_path: Path, server: Any) -> AsyncIterator[Setup]:
    network = SimNetwork(seed=7, clock=ManualClock())
    bot = ResponderBot(
        display_name="Shop",
        mcp=server,
        serves=["agent"],
        transports=("chat", "rpc"),
        data_dir=tmp_path / "bot",
        shutdown_grace_s=0.5,
        clock=network.clock,
    )
    network.add_user("you", display_name="you", peer_type="agent")
    async with bot.serving(network.backend("shop")), ChatCore(network.backend("you")) as core:
        with anyio.fail_after(20):
            yield Setup(network, bot, core)


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_sdk_client_lists_every_page_of_200_tools(tmp_path: Path, transport: str) -> None:
    names: list[str] = []
    pages = 0
    async with serving(tmp_path, many_tools()) as s, mcp.Client(s.transport(transport)) as client:
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            names.extend(tool.name for tool in page.tools)
            pages += 1
            cursor = page.next_cursor
            if cursor is None:
                break
    assert names == NAMES
    assert pages > 1


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_sdk_client_calls_a_tool_reads_a_resource_and_gets_a_prompt(
    tmp_path: Path, transport: str
) -> None:
    async with serving(tmp_path, shop_server()) as s, mcp.Client(s.transport(transport)) as client:
        called = await client.call_tool("quote", {"item": "tea", "qty": 2})
        resource = await client.read_resource("shop://hours")
        prompt = await client.get_prompt("greet", {"name": "Ann"})
    assert [c.text for c in called.content if isinstance(c, mcp.types.TextContent)] == [
        "2 x tea: 6 EUR"
    ]
    assert [getattr(c, "text", None) for c in resource.contents] == ["9 to 5"]
    texts = [getattr(m.content, "text", None) for m in prompt.messages]
    assert texts == ["Say hello to Ann"]


@pytest.mark.anyio
async def test_progress_callback_is_called_for_each_box_in_a_conversation(
    tmp_path: Path,
) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with serving(tmp_path, shop_server()) as s, mcp.Client(s.transport("chat")) as client:
        result = await client.call_tool("pack", {"boxes": 3}, progress_callback=on_progress)
    assert [getattr(c, "text", None) for c in result.content] == ["3 boxes packed"]
    assert seen == [(1, 3, "box 1"), (2, 3, "box 2"), (3, 3, "box 3")]


@pytest.mark.anyio
async def test_progress_callback_over_service_rpc_gets_only_the_result(tmp_path: Path) -> None:
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with serving(tmp_path, shop_server()) as s, mcp.Client(s.transport("rpc")) as client:
        result = await client.call_tool("pack", {"boxes": 2}, progress_callback=on_progress)
    assert [getattr(c, "text", None) for c in result.content] == ["2 boxes packed"]
    assert seen == []


@pytest.mark.anyio
async def test_auto_moves_a_call_that_needs_a_conversation_there(tmp_path: Path) -> None:
    async with serving(tmp_path, shop_server()) as s, mcp.Client(s.transport("auto")) as client:
        result = await client.call_tool("track", {"order": "A7"})
    assert [getattr(c, "text", None) for c in result.content] == ["order A7 is on its way"]


@pytest.mark.anyio
async def test_rpc_only_reports_conversation_required_by_its_code(tmp_path: Path) -> None:
    async with serving(tmp_path, shop_server()) as s, mcp.Client(s.transport("rpc")) as client:
        with pytest.raises(mcp.MCPError) as raised:
            await client.call_tool("track", {"order": "A7"})
    assert raised.value.error.data[SIMPLEX_ERROR_KEY] == "conversation_required"


@pytest.mark.anyio
async def test_cancelling_a_call_in_a_conversation_stops_it_at_the_bot(tmp_path: Path) -> None:
    async with serving(tmp_path, shop_server()) as s, mcp.Client(s.transport("chat")) as client:
        with anyio.move_on_after(1) as scope:
            await client.call_tool("slow", {})
        assert scope.cancelled_caught
        # The connection stays usable after a cancelled call.
        again = await client.call_tool("quote", {"item": "jam"})
    assert [getattr(c, "text", None) for c in again.content] == ["1 x jam: 3 EUR"]


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_fastmcp_server_answers_the_sdk_client(tmp_path: Path, transport: str) -> None:
    server = fastmcp.FastMCP("fast")

    @server.tool
    def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    async with serving(tmp_path, server) as s, mcp.Client(s.transport(transport)) as client:
        tools = await client.list_tools()
        result = await client.call_tool("add", {"a": 2, "b": 3})
    assert [t.name for t in tools.tools] == ["add"]
    assert [getattr(c, "text", None) for c in result.content] == ["5"]


def test_a_bad_target_is_a_link_error_before_anything_opens() -> None:
    with pytest.raises(LinkError) as raised:
        SimplexTransport("not a link", core="ws://127.0.0.1:1")
    assert raised.value.code == "bad_character"


@pytest.mark.anyio
async def test_a_lost_core_fails_the_call_with_its_code(tmp_path: Path) -> None:
    async with serving(tmp_path, shop_server()) as s, mcp.Client(s.transport("rpc")) as client:
        # The core's connection ends under the client (a CLI that quit, a lost socket).
        await s.core.backend.aclose()
        with pytest.raises(mcp.MCPError) as raised:
            await client.call_tool("quote", {"item": "tea"})
    assert raised.value.error.data[SIMPLEX_ERROR_KEY] == "core_connection_lost"


@pytest.mark.anyio
async def test_a_legacy_initialize_is_refused_without_reaching_the_bot(tmp_path: Path) -> None:
    async with serving(tmp_path, shop_server()) as s:
        refused = await connect_failure(mcp.Client(s.transport("rpc"), mode="legacy"))
    assert isinstance(refused, mcp.MCPError)
    assert refused.code == -32022
    assert refused.error.data["supported"] == ["2026-07-28"]


@pytest.mark.anyio
async def test_a_given_core_without_a_user_is_refused_with_its_code(tmp_path: Path) -> None:
    network = SimNetwork(seed=3, clock=ManualClock())
    async with ChatCore(network.backend("empty")) as core:
        api = ChatAPI(core)
        assert await api.active_user() is None
        transport = SimplexTransport("@shop.testing", core=core, clock=network.clock)
        refused = await connect_failure(mcp.Client(transport))
    assert isinstance(refused, CoreError)
    assert refused.code == "core_error"


@pytest.mark.anyio
async def test_a_core_opened_from_a_string_gets_an_agent_user_when_it_has_none() -> None:
    transport = SimplexTransport("@nobody.testing", core="sim:fresh-caller-for-transport")
    with anyio.fail_after(20):
        async with transport:
            user = await transport.link.api.active_user()
    assert user is not None
    assert user["profile"]["displayName"] == "simplex-protocols"
    assert user["profile"].get("peerType") == "agent"
