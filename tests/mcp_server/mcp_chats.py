"""A world whose agent has chats, for the tests of what the server offers beyond the plan's
tools (resources, completion, logging): mode host, so connects and sends need no approval."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_sim import World, structured, world

from simplex_protocols.mcp_server.config import ApproveMode


async def connect(w: World, target: str) -> str:
    """Connect the agent to ``target`` (mode host: at once); the chat reference."""
    seen = len(w.server.seen.events)
    result: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:

        async def call() -> None:
            result.update(structured(await w.server.call("connect", {"target": target, "idle": 1})))

        tg.start_soon(call)
        await w.server.seen.until(
            lambda: any(
                e["type"] in ("contactConnected", "userJoinedGroup")
                for e in w.server.seen.events[seen:]
            )
        )
        await w.clock.advance(1)
    assert result["status"] == "done", result
    return str(result["chat"])


@asynccontextmanager
async def agent_with_directory(
    tmp_path: Path, *, mode: str = "2026-07-28"
) -> AsyncIterator[tuple[World, str]]:
    """The world in mode host, the owner set up, the agent connected to the directory bot."""
    async with world(tmp_path, approve=ApproveMode.HOST, mode=mode) as w:
        await w.setup_owner()
        yield w, await connect(w, "@directory.simplex")


async def peer_chat_of(w: World, display_name: str) -> str:
    """The directory's chat with the agent (the contact of that display name), as ``@N``."""
    contacts = await w.directory.cmd(f"/_contacts {w.directory.user_id}")
    contact = next(c for c in contacts["contacts"] if c["profile"]["displayName"] == display_name)
    return f"@{contact['contactId']}"


@asynccontextmanager
async def another_client(w: World, **options: Any) -> AsyncIterator[Client]:
    """A second MCP client of the running server (its own options: mode, handlers)."""
    info = w.server.info
    hc = create_mcp_http_client(headers={"Authorization": f"Bearer {info.token}"})
    async with hc, Client(streamable_http_client(info.url, http_client=hc), **options) as mcp:
        yield mcp
