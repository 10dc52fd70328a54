"""The server's log lines as MCP log notifications: per request at 2026-07-28, by
``logging/setLevel`` in the 2025 era; never a message's text, the token or the join link."""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp_chats import agent_with_directory, another_client
from mcp_fakes import scripted_api
from mcp_sim import World, structured, world
from test_mcp_http import ScriptedCore, scripted_agent

from simplex_protocols._clock import ManualClock
from simplex_protocols.mcp_server.http import build_mcp_server
from simplex_protocols.mcp_server.log import Log
from simplex_protocols.mcp_server.mcp_logging import (
    LOGGER_NAME,
    NotificationRelay,
    RelayLog,
    levels_from,
    relayable,
)
from simplex_protocols.mcp_server.qr import qr_lines
from simplex_protocols.mcp_server.resources import RESOURCE_NOT_FOUND

pytestmark = pytest.mark.anyio


class Notes:
    """Every notification a client received."""

    def __init__(self) -> None:
        self.all: list[types.ServerNotification] = []

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            self.all.append(message)

    def logged(self) -> list[tuple[str, str | None, Any]]:
        return [
            (n.params.level, n.params.logger, n.params.data)
            for n in self.all
            if isinstance(n, types.LoggingMessageNotification)
        ]


async def send(mcp: Any, chat: str, text: str) -> None:
    result = await mcp.call_tool("send", {"chat": chat, "text": text, "wait": 0})
    assert structured(result)["status"] == "done"


def action_lines(w: World, n: int) -> list[str]:
    return [line for line in w.server.log.lines if line.startswith(f"Action {n}")]


async def test_a_request_that_asks_gets_the_log_lines_logged_while_it_runs(tmp_path: Path) -> None:
    notes, silent = Notes(), Notes()
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, chat):
            async with (
                another_client(w, log_level="info", message_handler=notes.on_message) as asking,
                another_client(w, message_handler=silent.on_message) as other,
            ):
                await send(asking, chat, "The secret text of a message.")
                # the lines of action 2 (the send), as the log has them
                lines = action_lines(w, 2)
                assert lines == [
                    f"Action 2: send to bot SimpleX Directory ({chat})",
                    "Action 2: performed without approval (mode host).",
                ]
                assert notes.logged() == [("info", LOGGER_NAME, line) for line in lines]
                # a request without the level in its _meta gets none (the spec's opt-in)
                await send(other, chat, "Another message.")
                assert silent.logged() == []
                assert action_lines(w, 3)
            everything = " ".join(str(data) for _, _, data in notes.logged())
            assert "secret text" not in everything
            assert w.server.info.token not in everything


async def test_the_level_of_a_request_filters_its_lines(tmp_path: Path) -> None:
    notes = Notes()
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, chat):
            async with another_client(
                w, log_level="error", message_handler=notes.on_message
            ) as mcp:
                await send(mcp, chat, "Hello.")
            assert action_lines(w, 2)
            assert notes.logged() == []


async def test_a_2025_client_sets_the_level_for_the_requests_that_follow(tmp_path: Path) -> None:
    notes = Notes()
    with anyio.fail_after(30):
        async with (
            agent_with_directory(tmp_path) as (w, chat),
            another_client(w, mode="legacy", message_handler=notes.on_message) as mcp,
        ):
            await send(mcp, chat, "Before any level.")
            assert notes.logged() == []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert (await mcp.set_logging_level("info")).model_dump(exclude_none=True) == {}
            await send(mcp, chat, "After info.")
            assert [data for _, _, data in notes.logged()] == action_lines(w, 3)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await mcp.set_logging_level("warning")
            await send(mcp, chat, "After warning.")
            assert action_lines(w, 4)
            assert [data for _, _, data in notes.logged()] == action_lines(w, 3)


async def test_log_lines_of_an_approval_reach_the_call_that_waits_for_it(tmp_path: Path) -> None:
    """Mode requests: the call waits while the owner approves, and gets the lines meanwhile."""
    notes = Notes()
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            async with (
                another_client(w, log_level="info", message_handler=notes.on_message) as mcp,
                anyio.create_task_group() as tg,
            ):

                async def call() -> None:
                    await mcp.call_tool("connect", {"target": "@directory.simplex", "idle": 1})

                tg.start_soon(call)
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                await w.owner.say("/approve 1")
                await w.server.seen.until(
                    lambda: any(e["type"] == "contactConnected" for e in w.server.seen.events)
                )
                await w.clock.advance(1)
            assert [data for _, _, data in notes.logged()] == action_lines(w, 1)
            assert any("approved by Alice" in line for line in action_lines(w, 1))


def test_lines_with_a_link_or_a_qr_code_are_never_relayed() -> None:
    link = "https://simplex.chat/contact#/?v=2-7&smp=smp%3A%2F%2Fabc%40host"
    for line in qr_lines(link, "small", colour=False):
        assert not relayable(line), line
    for line in qr_lines(link, "small", colour=True):
        assert not relayable(line), line
    assert not relayable(link)
    assert not relayable("simplex:/contact#/?v=2")
    assert not relayable("   ")
    assert relayable("Action 1: connect to bot SimpleX Directory (@directory.simplex), incognito")


def test_the_relay_log_writes_every_line_and_relays_what_may_go() -> None:
    out, err = io.StringIO(), io.StringIO()
    relay = NotificationRelay()
    log = RelayLog(Log(out, err), relay)
    log.line("Join the agent control chat in the SimpleX app. The link works once:")
    log.line("https://simplex.chat/g#abc")
    log.error("Chat core: gone")
    assert out.getvalue().splitlines() == [
        "Join the agent control chat in the SimpleX app. The link works once:",
        "https://simplex.chat/g#abc",
    ]
    assert err.getvalue() == "Chat core: gone\n"
    assert levels_from(None) == frozenset()
    assert levels_from("error") == {"error", "critical", "alert", "emergency"}


async def test_a_request_whose_stream_relays_keeps_its_own_error(tmp_path: Path) -> None:
    """With a level set, every 2025-era request relays; its error still has its code."""
    with anyio.fail_after(30):
        async with (
            agent_with_directory(tmp_path) as (w, _),
            another_client(w, mode="legacy") as mcp,
        ):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await mcp.set_logging_level("debug")
            with pytest.raises(MCPError) as caught:
                await mcp.read_resource("simplex://chat/@999")
            assert caught.value.error.code == RESOURCE_NOT_FOUND
            with pytest.raises(MCPError) as caught:
                await mcp.list_prompts()
            assert caught.value.error.code == types.METHOD_NOT_FOUND


async def test_two_servers_of_one_agent_share_one_relay() -> None:
    """A second server built for the same agent relays through the first one's relay, so no
    line reaches a client twice (the log may be wrapped again in between)."""
    async with scripted_api(ScriptedCore()) as (api, _):
        agent = scripted_agent(api, "A", ManualClock())
        build_mcp_server(agent, name="a", display="A", host_mode=False)
        build_mcp_server(agent, name="a", display="A", host_mode=False)
        relays = []
        log: object = agent.state.log
        while isinstance(log, Log):
            if isinstance(log, RelayLog):
                relays.append(log)
            log = getattr(log, "inner", None)
        assert len(relays) == 1
