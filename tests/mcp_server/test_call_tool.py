"""The ``call`` tool (``serve NAME --call-tool``, docs/mcp_server.md "Beyond the plan"), end to
end over the simulated network: the agent's calls come from the ``mcp`` SDK's client, the owner
decides in the control chat, and the bots are ``ResponderBot`` instances serving MCP or A2A.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentSkill
from mcp.server.mcpserver import Context, MCPServer
from mcp_sim import World, result_text, structured, text_of_item, world

from simplex_protocols.bot import CALLS_LOGGER, ResponderBot
from simplex_protocols.mcp_server.tools import TOOLS

pytestmark = pytest.mark.anyio

WAIT_S = 20
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
#: A peer's text that would be a link, a command and a bold word, were it not data.
HOSTILE = "See [the deal](https://evil.example) and /'approve 9' *now*"


def acme_tools() -> MCPServer[Any]:
    """The MCP bot: a tool that answers, one that reports progress, one with hostile text."""
    tools: MCPServer[Any] = MCPServer("acme", subscriptions=False)

    @tools.tool(structured_output=False)
    def availability(item: str) -> str:
        """Items in stock."""
        return f"12 {item}s are in stock."

    @tools.tool(structured_output=False)
    async def pack(item: str, ctx: Context) -> str:
        """Pack an item, reporting progress."""
        await ctx.report_progress(1, 2, f"packing {item}")
        await ctx.report_progress(2, 2, "packed")
        return f"{item} packed"

    @tools.tool(structured_output=False)
    def offer() -> str:
        """An offer with markdown and a link."""
        return HOSTILE

    return tools


def echo_card() -> AgentCard:
    return AgentCard(
        name="Acme echo",
        description="Echoes what you send.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes text", tags=["demo"])],
    )


@asynccontextmanager
async def calling_world(tmp_path: Path, **bot: Any) -> AsyncIterator[tuple[World, ResponderBot]]:
    """The world with ``--call-tool``, its owner joined, and an MCP bot (or ``bot`` options)."""
    options: dict[str, Any] = {"display_name": "Acme", "mcp": acme_tools(), **bot}
    async with world(tmp_path, call_tool=True) as w:
        await w.setup_owner()
        responder = ResponderBot(data_dir=tmp_path / "acme", clock=w.clock, **options)
        async with responder.serving(w.network.backend("acme")) as running:
            yield w, running


def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


async def card_of(w: World, n_before: int) -> tuple[int, str]:
    """The next call card the owner sees: its action number and text."""
    message = await w.owner.wait_message(lambda t: t.startswith("I want to call"))
    text = text_of_item(message)
    commands = text.splitlines()[-1]
    n = int(commands.split("'approve ")[1].split("'")[0])
    assert n > n_before
    return n, text


# ----------------------------------------------------------------------------- the tool's presence


async def test_the_call_tool_is_listed_and_in_the_instructions_only_with_the_option(
    tmp_path: Path,
) -> None:
    async with world(tmp_path / "off", mode="legacy") as w:
        names = [t.name for t in (await w.server.mcp.list_tools()).tools]
        assert names == [t.name for t in TOOLS]
        assert w.server.mcp.instructions is not None
        assert "\ncall " not in w.server.mcp.instructions
        assert (await w.server.call("call", {"target": "x", "protocol": "mcp"})).is_error
    async with world(tmp_path / "on", mode="legacy", call_tool=True) as w:
        names = [t.name for t in (await w.server.mcp.list_tools()).tools]
        assert names == [*(t.name for t in TOOLS), "call"]
        assert w.server.mcp.instructions is not None
        assert "\ncall calls another bot" in w.server.mcp.instructions


# ----------------------------------------------------------------------------- an action


async def test_first_call_waits_for_the_card_then_the_answer_comes_back_signed(
    tmp_path: Path,
) -> None:
    async with calling_world(tmp_path) as (w, bot):
        results: list[Any] = []

        async def agent() -> None:
            results.append(
                await w.server.call(
                    "call",
                    {
                        "target": bot.address,
                        "protocol": "mcp",
                        "method": "tools/call",
                        "params": {"name": "availability", "arguments": {"item": "kite"}},
                    },
                )
            )

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent)
                n, card = await card_of(w, 0)
                assert card.splitlines()[0] == f"I want to call bot Acme over MCP: `tools/call`."
                assert f"Address: `{bot.address}`" in card
                assert "Not verified: the address came as a link or from a website." in card
                assert "By Service RPC, signed with my key for this bot." in card
                assert '`{"name":"availability","arguments":{"item":"kite"}}`' in card
                assert card.splitlines()[-1] == f"/'approve {n}', /'approve {n} calls' or /'reject {n}'"
                await w.owner.say(f"/approve {n}")
        out = structured(results[0])
        assert out["status"] == "done" and out["action"] == n
        assert out["transport"] == "rpc" and out["signed"] is True
        assert out["answer"]["result"]["content"][0]["text"] == "12 kites are in stock."
        assert out["bot"]["name"] == "Acme" and out["bot"]["verified"] is False
        await w.owner.wait_message(lambda t: t.startswith("I called bot Acme"))
        # one key for this bot, private, kept in the data folder
        keys = [p for p in (tmp_path / "agent" / "keys").iterdir() if p.suffix != ".salt"]
        key_files = [p for p in keys if p.is_file() and "salt" not in p.name]
        assert len(key_files) == 1
        assert stat.S_IMODE(os.stat(key_files[0]).st_mode) == 0o600
