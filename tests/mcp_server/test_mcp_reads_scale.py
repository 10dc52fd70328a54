"""receive and list cost O(limit) and O(page) in core commands: the commands a call sends
do not grow with the chat's unread items or with chats beyond the pages read.

Timings are not asserted here (``bench/mcp_server.py`` measures them as ratios).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_sim import World, structured, world
from test_mcp_messages import connected_vendor

from simplex_protocols.core import commands as cmds
from simplex_protocols.core import parse_chat_ref
from simplex_protocols.sim.testing import seed_received


async def receive_commands(w: World, chat: str, limit: int) -> tuple[list[str], dict[str, Any]]:
    """The commands one receive sends to the core, and its result."""
    start = len(w.server.commands)
    result = structured(await w.server.call("receive", {"chat": chat, "limit": limit}))
    return w.server.commands[start:], result


def shape(commands: list[str]) -> list[str]:
    """Commands without their item IDs: the kind of each page and the read."""
    return [
        " ".join(part for part in c.split() if not any(ch.isdigit() for ch in part))
        for c in commands
    ]


@pytest.mark.anyio
async def test_receive_sends_the_same_commands_with_ten_times_the_unread_items(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with world(tmp_path) as w:
            await w.setup_owner()
            chat = await connected_vendor(w)
            agent = w.network.user("my-agent")
            seed_received(agent, chat, (f"small {n}" for n in range(300)))
            small, first = await receive_commands(w, chat, 100)
            assert [m["text"] for m in first["messages"]] == [f"small {n}" for n in range(100)]
            assert first["more"] == 200
            api = w.server.info.agent.api
            await api.read_chat(parse_chat_ref(chat))  # the other 200, read
            seed_received(agent, chat, (f"large {n}" for n in range(3_000)))
            large, second = await receive_commands(w, chat, 100)
            assert [m["text"] for m in second["messages"]] == [f"large {n}" for n in range(100)]
            assert second["more"] == 2_900
            # the chat with its first unread item, the page around it, one after= page of
            # 100, and the read of the 100 returned: at 300 unread as at 3,000
            assert shape(small) == shape(large)
            assert len(large) == 4
            assert large[-1].startswith(f"/_read chat items {chat} ")
            assert len(large[-1].split()[-1].split(",")) == 100


@pytest.mark.anyio
async def test_list_reads_one_page_of_100_chats_per_command(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with world(tmp_path) as w:
            await w.setup_owner()
            agent = w.network.user("my-agent")
            before = structured(await w.server.call("list"))["chats"]
            for n in range(250):
                agent.command(
                    cmds.new_group(agent.user_id, {"displayName": f"Group {n}", "fullName": ""})
                )
                await w.clock.advance(0.001)  # chats differ in time, as in a real core (ms)
            start = len(w.server.commands)
            listing = structured(await w.server.call("list"))
            sent = w.server.commands[start:]
            assert len(listing["chats"]) == len(before) + 250
            assert [c["name"] for c in listing["chats"][:3]] == [
                "Group 249",
                "Group 248",
                "Group 247",
            ]
            # every chat of the core (the control chat too) in pages of 100, until a page
            # holds fewer: nothing is sent per chat
            assert len(sent) == (len(listing["chats"]) + 1) // 100 + 1
            assert all(c.startswith(f"/_get chats {agent.user_id} ") for c in sent)
