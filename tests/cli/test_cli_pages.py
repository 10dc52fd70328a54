"""simplex-call reads a paged MCP list to its end, over either transport, on the simulated
network; a too_large answer over Service RPC moves the call to a conversation in auto mode,
and is a clear error with --transport rpc."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from cli_kit import Shop, environ
from mcp.server.mcpserver import MCPServer

from simplex_protocols._clock import ManualClock
from simplex_protocols.bindings._mcp_pages import PageCursor, encode_cursor
from simplex_protocols.bot import ResponderBot
from simplex_protocols.sim import SimNetwork

NAMES = [f"tool_{i:03d}" for i in range(200)]


def two_hundred_tools(*, huge: bool = False) -> MCPServer[Any]:
    """200 tools of about 300 bytes each (about 60 kB of tools/list), and with ``huge`` a tool
    of 11,000 bytes: over a Service RPC response, under a chat message."""
    server: MCPServer[Any] = MCPServer("many")
    for name in NAMES:

        def echo(text: str) -> str:
            return text

        server.add_tool(echo, name=name, description=f"{name} " + "d" * 250)
    if huge:
        server.add_tool(lambda: "", name="huge", description="h" * 11_000)
    return server


@contextlib.asynccontextmanager
async def many_tools_bot(tmp_path: Path, *, huge: bool = False) -> AsyncIterator[Shop]:
    network = SimNetwork(seed=7, clock=ManualClock())
    bot = ResponderBot(
        display_name="Many Tools",
        mcp=two_hundred_tools(huge=huge),
        serves=["agent"],
        transports=("chat", "rpc"),
        data_dir=tmp_path / "bot",
        shutdown_grace_s=0.5,
        clock=network.clock,
    )
    network.add_user("you", display_name="you", peer_type="agent")
    async with bot.serving(network.backend("many")):
        yield Shop(network, bot, environ(tmp_path))


@pytest.mark.anyio
@pytest.mark.requirement("RPC-LIM-3", "CALL-SIZE-2")
@pytest.mark.parametrize("transport", ["rpc", "chat"])
async def test_tools_list_of_200_tools_shows_every_tool(tmp_path: Path, transport: str) -> None:
    async with many_tools_bot(tmp_path) as s:
        result = await s.cli(s.address, "tools/list", "--transport", transport)
    assert result.status == 0, result.err
    lines = result.out.splitlines()
    assert "← 200 tools:" in lines
    shown = [line.split("(")[0].strip() for line in lines if line.strip().startswith("tool_")]
    assert shown == NAMES


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["rpc", "chat"])
async def test_tools_list_in_json_is_one_response_with_every_page(
    tmp_path: Path, transport: str
) -> None:
    async with many_tools_bot(tmp_path) as s:
        result = await s.cli(s.address, "tools/list", "--transport", transport, "--json")
    assert result.status == 0, result.err
    out = result.json()
    assert out["ok"] is True and out["transport"] == transport
    assert out["pages"] > 1
    tools = out["response"]["result"]["tools"]
    assert [t["name"] for t in tools] == NAMES
    assert "nextCursor" not in out["response"]["result"]
    assert "cursor" not in out["request"]["params"]
    if transport == "chat":
        assert len(out["replies"]) == out["pages"]


@pytest.mark.anyio
async def test_a_cursor_given_asks_for_that_page_only(tmp_path: Path) -> None:
    cursor = encode_cursor(PageCursor("tools/list", None, 150))
    async with many_tools_bot(tmp_path) as s:
        result = await s.cli(
            s.address, "tools/list", f"cursor={cursor}", "--transport", "rpc", "--json"
        )
    assert result.status == 0, result.err
    out = result.json()
    assert "pages" not in out
    page = out["response"]["result"]
    assert [t["name"] for t in page["tools"]] == NAMES[150 : 150 + len(page["tools"])]
    assert len(page["tools"]) == 50 or "nextCursor" in page


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-7", "RPC-ERR-7")
async def test_auto_moves_a_too_large_page_to_a_conversation_and_says_so(tmp_path: Path) -> None:
    async with many_tools_bot(tmp_path, huge=True) as s:
        result = await s.cli(s.address, "tools/list", "--json")
    assert result.status == 0, result.err
    out = result.json()
    assert out["transport"] == "chat"
    assert [t["name"] for t in out["response"]["result"]["tools"]] == [*NAMES, "huge"]
    assert any("too_large over Service RPC" in note for note in out["notes"])
    readable = await _readable(tmp_path / "again")
    assert readable.status == 0
    assert "too_large over Service RPC; calling in a conversation" in readable.err
    assert "← 201 tools:" in readable.out.splitlines()


async def _readable(tmp_path: Path) -> Any:
    async with many_tools_bot(tmp_path, huge=True) as s:
        return await s.cli(s.address, "tools/list")


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-7", "RPC-ERR-7")
async def test_transport_rpc_refuses_a_too_large_page_and_names_transport_chat(
    tmp_path: Path,
) -> None:
    async with many_tools_bot(tmp_path, huge=True) as s:
        result = await s.cli(s.address, "tools/list", "--transport", "rpc", "--json")
        readable = await s.cli(s.address, "tools/list", "--transport", "rpc")
    assert result.status == 67
    out = result.json()
    assert out["status"] == "refused"
    assert out["error"]["code"] == "refused"
    assert out["error"]["envelopeError"]["code"] == "too_large"
    assert "--transport chat" in out["error"]["hint"]
    assert readable.status == 67
    assert "--transport chat" in readable.err
