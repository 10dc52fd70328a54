"""The lost control chat: the agent removed, the group deleted, or the agent's role lowered.

Every pending action fails with "control chat lost" (its card unedited), the server logs "The
agent lost its control chat. Restart the server with --reset-owners.", new actions get the
plan's tool error, and a restart with --reset-owners makes a new agent control chat.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_sim import World, join_link, result_text, structured, text_of_item, world

LOST_LINE = "The agent lost its control chat. Restart the server with --reset-owners."
LOST_ERROR = (
    "The agent lost its control chat. The person who runs it has to restart it with --reset-owners."
)


async def lose(w: World, how: str) -> None:
    """The owner takes the control chat away from the agent in the app."""
    agent_member = await w.owner.member_id_of("My Agent")
    if how == "removed":
        await w.owner.cmd(f"/_remove {w.owner.control} {agent_member}")
    elif how == "deleted":
        await w.owner.cmd(f"/_delete {w.owner.control} full notify=on")
    else:
        await w.owner.cmd(f"/_member role {w.owner.control} {agent_member} admin")


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["removed", "deleted", "role"])
async def test_a_lost_control_chat_fails_pending_actions_and_refuses_new_ones(
    tmp_path: Path, how: str
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            result: dict[str, Any] = {}
            async with anyio.create_task_group() as tg:

                async def connect() -> None:
                    result.update(
                        structured(await w.server.call("connect", {"target": "@directory.simplex"}))
                    )

                tg.start_soon(connect)
                card = await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                await lose(w, how)
            assert result == {"action": 1, "status": "failed", "error": "control chat lost"}
            assert LOST_LINE in w.server.log.lines
            refused = await w.server.call("connect", {"target": "@directory.simplex"})
            assert result_text(refused) == LOST_ERROR
            refused = await w.server.call("send", {"chat": "@1", "text": "hi"})
            assert refused.is_error
            assert structured(await w.server.call("list"))["actions"] == []
            if how != "deleted":
                # the card is not edited
                latest = next(
                    m
                    for m in w.owner.agent_messages()
                    if m["meta"]["itemId"] == card["meta"]["itemId"]
                )
                assert text_of_item(latest).endswith("/'approve 1' or /'reject 1'")
            # at the stop no card is edited
            server = w.server
            fresh = await w.restart(reset_owners=True)
            assert server.log.lines[-1] == "Stopped."
            assert not any(line.startswith("Cancelled") for line in server.log.lines)
            # --reset-owners deletes what is left of the chat and makes a new one
            assert LOST_LINE not in fresh.log.lines
            assert 'Agent control chat "My Agent" created.' in fresh.log.lines
            assert any(line.startswith("https://") for line in fresh.log.lines)
            info = fresh.info.agent
            groups = (await info.api.core.command(f"/_groups {info.user_id}"))["groups"]
            assert [g["groupId"] for g in groups] == [info.control.group_id]  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_start_with_a_lost_control_chat_then_reset_owners(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            await lose(w, "role")
            await w.server.log.wait_line(lambda line: line == LOST_LINE)
            server = await w.restart()
            assert LOST_LINE in server.log.lines
            assert not any(line.startswith("https://") for line in server.log.lines)
            refused = await server.call("connect", {"target": "@directory.simplex"})
            assert result_text(refused) == LOST_ERROR

            # the agent is an admin: it leaves, then deletes the chat; the owner is told
            start = len(w.owner.events)
            old = w.owner.group_id
            server = await w.restart(reset_owners=True)
            assert LOST_LINE not in server.log.lines
            assert 'Agent control chat "My Agent" created.' in server.log.lines
            await w.owner.wait_event(
                lambda e: e["type"] == "leftMember" and e["groupInfo"]["groupId"] == old,
                start=start,
            )
            await w.owner.join(join_link(server.log))
            await server.log.wait_line(
                lambda line: line.endswith("and is now an owner. The link is deleted.")
            )
            async with anyio.create_task_group() as tg:

                async def connect() -> None:
                    await server.call("connect", {"target": "@directory.simplex"})

                tg.start_soon(connect)
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                tg.cancel_scope.cancel()
