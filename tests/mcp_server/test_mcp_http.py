"""HTTP: token, path, Origin and Host, both protocol eras, validation errors, progress, cancellation.

The chat core here is a small scripted double that answers the few commands these tests
reach; the end-to-end tests run the same server over the simulated network.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_fakes import scripted_api

from simplex_protocols._clock import ManualClock
from simplex_protocols.core import ChatAPI, ContactRef
from simplex_protocols.mcp_server.agent import Agent
from simplex_protocols.mcp_server.config import AgentConfig
from simplex_protocols.mcp_server.http import (
    HttpServer,
    PortInUseError,
    bind_port,
    build_mcp_server,
)
from simplex_protocols.mcp_server.log import Log
from simplex_protocols.mcp_server.state import AgentState

TOKEN = "t" * 43

CONTACT = {
    "type": "direct",
    "contact": {
        "contactId": 4,
        "localDisplayName": "Bob",
        "profile": {"displayName": "Bob", "fullName": ""},
        "activeConn": {"connId": 1, "connStatus": {"type": "ready"}},
    },
}


class ScriptedCore:
    """Answers the commands of list and receive for one contact chat, @4."""

    def __init__(self) -> None:
        self.commands: list[str] = []

    def __call__(self, command: str) -> dict[str, Any]:
        self.commands.append(command)
        if command.startswith("/_get chats"):
            return {
                "type": "apiChats",
                "chats": [{"chatInfo": CONTACT, "chatItems": [], "chatStats": {"unreadCount": 0}}],
            }
        if command.startswith("/_get chat @4"):
            return {
                "type": "apiChat",
                "chat": {"chatInfo": CONTACT, "chatItems": [], "chatStats": {"unreadCount": 0}},
            }
        raise AssertionError(f"unexpected command {command}")


def scripted_agent(api: ChatAPI, display: str, clock: ManualClock) -> Agent:
    """The agent of user 1 with the display name ``display``, without a control chat."""
    state = AgentState(
        api,
        AgentConfig(name="a", display=display),
        clock=clock,
        log=Log(),
        user_id=1,
        profile_name=display,
        control=None,
        next_action=1,
    )
    return Agent(state)


@asynccontextmanager
async def server(
    clock: ManualClock | None = None,
) -> AsyncIterator[tuple[HttpServer, Agent, ScriptedCore]]:
    core = ScriptedCore()
    async with scripted_api(core) as (api, _):
        agent = scripted_agent(api, "My Agent", clock or ManualClock())
        http = HttpServer(
            build_mcp_server(agent, name="a", display="My Agent", host_mode=False),
            bind_port(0),
            TOKEN,
        )
        async with anyio.create_task_group() as tg:
            await tg.start(agent.run)
            async with http.running():
                yield http, agent, core
            tg.cancel_scope.cancel()


def text_of(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


@asynccontextmanager
async def client(url: str, mode: str = "auto", token: str = TOKEN) -> AsyncIterator[Client]:
    hc = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with hc, Client(streamable_http_client(url, http_client=hc), mode=mode) as mcp:
        yield mcp


@pytest.mark.anyio
async def test_401_without_the_token_404_for_other_paths_403_for_other_origins() -> None:
    with anyio.fail_after(10):
        async with server() as (http, _, _), httpx.AsyncClient() as hc:
            auth = {"Authorization": f"Bearer {TOKEN}"}
            assert (await hc.post(http.url, json={})).status_code == 401
            assert (
                await hc.post(http.url, headers={"Authorization": f"Bearer {TOKEN}x"}, json={})
            ).status_code == 401
            assert (
                await hc.post(http.url, headers={"Authorization": TOKEN}, json={})
            ).status_code == 401
            assert (
                await hc.post(http.url.replace("/mcp", "/other"), headers=auth, json={})
            ).status_code == 404
            assert (await hc.post(http.url + "/", headers=auth, json={})).status_code == 404
            assert (
                await hc.post(http.url, headers={**auth, "Origin": "https://evil.example"}, json={})
            ).status_code == 403
            assert (
                await hc.post(
                    http.url, headers={**auth, "Origin": "http://localhost.evil.example"}, json={}
                )
            ).status_code == 403
            assert (
                await hc.post(http.url, headers={**auth, "Host": "evil.example"}, json={})
            ).status_code == 403
            ok = await hc.post(
                http.url, headers={**auth, "Origin": "http://localhost:3000"}, json={}
            )
            assert ok.status_code not in (401, 403, 404)


@pytest.mark.anyio
async def test_a_request_target_that_is_not_a_url_is_404_and_the_server_serves_on() -> None:
    with anyio.fail_after(10):
        async with server() as (http, _, _):
            for target in (b"mcp", b"*", b"http://127.0.0.1/mcp"):
                stream = await anyio.connect_tcp("127.0.0.1", http.port)
                async with stream:
                    await stream.send(
                        b"POST "
                        + target
                        + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                        + TOKEN.encode()
                        + b"\r\nContent-Length: 0\r\n\r\n"
                    )
                    answer = await stream.receive()
                assert answer.startswith(b"HTTP/1.1 404"), answer
            async with client(http.url) as mcp:
                assert len((await mcp.list_tools()).tools) == 5


def test_a_port_in_use_is_refused() -> None:
    sock = bind_port(0)
    try:
        with pytest.raises(PortInUseError) as info:
            bind_port(sock.getsockname()[1])
        assert str(info.value) == f"Port {sock.getsockname()[1]} is in use. Start with --port N."
    finally:
        sock.close()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["2026-07-28", "legacy", "auto"])
async def test_both_eras_list_tools_with_schemas_and_call_them(mode: str) -> None:
    with anyio.fail_after(10):
        async with server() as (http, _, _), client(http.url, mode) as mcp:
            tools = (await mcp.list_tools()).tools
            assert [t.name for t in tools] == ["connect", "send", "receive", "list", "leave"]
            assert all(t.output_schema is not None for t in tools)
            assert all(t.meta is None for t in tools)
            result = await mcp.call_tool("list", {})
            assert not result.is_error
            assert result.structured_content == {
                "chats": [
                    {
                        "chat": "@4",
                        "type": "contact",
                        "name": "Bob",
                        "incognito": False,
                        "connected": True,
                        "unread": 0,
                    }
                ],
                "actions": [],
            }
            assert (
                text_of(result)
                == '{"chats":[{"chat":"@4","type":"contact","name":"Bob","incognito":false,"connected":true,"unread":0}],"actions":[]}'
            )


@pytest.mark.anyio
async def test_schema_violations_are_errors_the_model_can_correct() -> None:
    with anyio.fail_after(10):
        async with server() as (http, _, _), client(http.url) as mcp:
            result = await mcp.call_tool("send", {"chat": "@4", "text": ""})
            assert result.is_error
            assert text_of(result) == "data/text must NOT have fewer than 1 characters"
            result = await mcp.call_tool("receive", {})
            assert text_of(result) == "data must have required property 'chat'"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_server_instructions_name_the_display_name(mode: str) -> None:
    with anyio.fail_after(10):
        async with server() as (http, _, _), client(http.url, mode) as mcp:
            assert mcp.instructions is not None
            assert mcp.instructions.startswith(
                "You act in SimpleX chats through these tools, as the agent My Agent.\n"
            )


class ProgressLog:
    """Progress messages as they arrive, with an event to wait for the next one."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.arrived = anyio.Event()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.messages.append(message or "")
        self.arrived.set()
        self.arrived = anyio.Event()

    async def wait_for(self, count: int) -> None:
        while len(self.messages) < count:
            await self.arrived.wait()


@pytest.mark.anyio
async def test_progress_at_once_then_every_60_s_and_cancellation_when_the_client_closes_the_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = ManualClock()
    progress = ProgressLog()
    with anyio.fail_after(10):
        async with server(clock) as (http, agent, core), client(http.url, "2026-07-28") as mcp:
            stopped = anyio.Event()
            uncollect = agent.collectors.remove

            def watch(collector: Any) -> None:
                uncollect(collector)
                stopped.set()

            monkeypatch.setattr(agent.collectors, "remove", watch)
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as tg:

                    async def call() -> None:
                        await mcp.call_tool(
                            "receive", {"chat": "@4", "wait": 3600}, progress_callback=progress
                        )

                    tg.start_soon(call)
                    await progress.wait_for(1)
                    assert progress.messages == [
                        "No new messages in @4; waiting until 2026-10-17 10:00 UTC."
                    ]
                    assert ContactRef(4) in agent.collectors
                    await clock.advance(59)
                    assert len(progress.messages) == 1
                    await clock.advance(1)
                    await progress.wait_for(2)
                    assert (
                        progress.messages[1]
                        == "No new messages in @4; waiting until 2026-10-17 10:00 UTC."
                    )
                    scope.cancel()
            # The handler is cancelled: its collection stops and nothing is marked read.
            await stopped.wait()
            assert ContactRef(4) not in agent.collectors
            assert not any(c.startswith("/_read") for c in core.commands)


@pytest.mark.anyio
async def test_mode_host_marks_the_action_tools_as_needing_the_users_interaction() -> None:
    core = ScriptedCore()
    with anyio.fail_after(10):
        async with scripted_api(core) as (api, _):
            agent = scripted_agent(api, "A", ManualClock())
            http = HttpServer(
                build_mcp_server(agent, name="a", display="A", host_mode=True), bind_port(0), TOKEN
            )
            async with http.running(), client(http.url) as mcp:
                metas = {t.name: t.meta for t in (await mcp.list_tools()).tools}
    assert metas == {
        "connect": {"anthropic/requiresUserInteraction": True},
        "send": {"anthropic/requiresUserInteraction": True},
        "receive": None,
        "list": None,
        "leave": {"anthropic/requiresUserInteraction": True},
    }


@pytest.mark.anyio
async def test_in_the_2025_era_a_closed_request_connection_cancels_the_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = ManualClock()
    with anyio.fail_after(10):
        async with server(clock) as (http, agent, core):
            stopped = anyio.Event()
            uncollect = agent.collectors.remove

            def watch(collector: Any) -> None:
                uncollect(collector)
                stopped.set()

            monkeypatch.setattr(agent.collectors, "remove", watch)
            request = {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {
                    "name": "receive",
                    "arguments": {"chat": "@4", "wait": 3600},
                    "_meta": {"progressToken": "p1"},
                },
            }
            headers = {
                "Authorization": f"Bearer {TOKEN}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
                "MCP-Protocol-Version": "2025-11-25",
            }
            async with (
                httpx.AsyncClient() as hc,
                hc.stream("POST", http.url, json=request, headers=headers) as response,
            ):
                assert response.headers["content-type"].startswith("text/event-stream")
                async for line in response.aiter_lines():
                    if line.startswith("data:") and "notifications/progress" in line:
                        assert "No new messages in @4; waiting until 2026-10-17 10:00 UTC." in line
                        break
            # the connection is closed without a result: the call ends, nothing is marked read
            await stopped.wait()
            assert ContactRef(4) not in agent.collectors
            assert not any(c.startswith("/_read") for c in core.commands)
