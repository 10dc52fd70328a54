"""--owners without a list (an observer joins; the restart line) and with a list (the owners
made, the link deleted, a missing member refused)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_sim import LogLines, Owner, join_link, result_text, structured, text_of_item, world

from simplex_protocols.core import ChatCore
from simplex_protocols.mcp_server.config import ApproveMode, OwnerEntry, ServeOptions
from simplex_protocols.mcp_server.serve import serve


async def join_as_observer(owner: Owner, link: str) -> None:
    await owner.cmd(f"/_connect plan {owner.user_id} {link}")
    await owner.cmd(f"/_connect {owner.user_id} incognito=off {link}")
    joined = await owner.wait_event(lambda e: e.get("type") == "userJoinedGroup")
    owner.group_id = int(joined["groupInfo"]["groupId"])


@pytest.mark.anyio
async def test_owners_without_a_list_then_with_the_printed_list(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path, owners=()) as w:
            log = w.server.log
            index = log.lines.index(
                "Join the agent control chat in the SimpleX app. The link works once:"
            )
            assert (
                "The link adds an observer. Its ID and name are printed when it joins."
                in log.lines[index:]
            )
            assert not any(line.startswith("Whoever joins") for line in log.lines)
            await join_as_observer(w.owner, join_link(log))
            await log.wait_line(
                lambda line: (
                    line == "Alice joined (member 2). Restart the server with --owners 2:Alice"
                )
            )
            await w.owner.wait_message(
                lambda t: t == "Alice joined (member 2). Restart the server with `--owners 2:Alice`"
            )
            refused = await w.server.call("connect", {"target": "@directory.simplex"})
            assert (
                result_text(refused)
                == "The agent has no approving owner. The person who runs it has to restart it with the --owners options it printed."
            )

            server = await w.restart(owners=(OwnerEntry(2, "Alice"),))
            assert server.log.lines[-4:] == [
                "Owners: 2:Alice.",
                "Add the agent to Claude Code:",
                "  simplex-mcp register my-agent",
                f"Listening on {server.info.url}",
            ]
            assert not any(line.startswith("https://") for line in server.log.lines)
            info = await w.owner.cmd(f"/_get chat {w.owner.control} count=0")
            assert info["chat"]["chatInfo"]["groupInfo"]["membership"]["memberRole"] == "owner"
            await w.owner.say("/pending")
            await w.owner.wait_message(lambda t: t == "No pending actions.")


@pytest.mark.anyio
async def test_an_owners_entry_that_is_not_a_member_exits_2(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path, owners=()) as w:
            await join_as_observer(w.owner, join_link(w.server.log))
            await w.server.log.wait_line(lambda line: line.startswith("Alice joined (member 2)."))
            await w.servers.aclose()  # type: ignore[union-attr]
            log = LogLines()
            options = ServeOptions(
                name="my-agent", data=tmp_path / "agent", port=0, owners=(OwnerEntry(2, "Bob"),)
            )
            code = await serve(
                options, core=ChatCore(w.network.backend("my-agent")), clock=w.clock, log=log
            )
            assert code == 2
            assert log.errors == [
                "--owners: member 2:Bob is not in the agent control chat. Start with --reset-owners --owners, or use the IDs of current members."
            ]
            assert not (tmp_path / "agent" / "lock").exists()


@pytest.mark.anyio
async def test_mode_host_performs_at_once_and_posts_outcome_cards(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path, approve=ApproveMode.HOST) as w:
            await w.setup_owner()
            assert w.server.log.lines[2] == "Approval mode: host"
            async with anyio.create_task_group() as tg:
                result: dict[str, Any] = {}

                async def connect() -> None:
                    result.update(
                        structured(
                            await w.server.call(
                                "connect", {"target": "@directory.simplex", "idle": 1}
                            )
                        )
                    )

                tg.start_soon(connect)
                await w.server.seen.until(
                    lambda: any(e["type"] == "contactConnected" for e in w.server.seen.events)
                )
                await w.clock.advance(1)
            assert (result["action"], result["status"], result["connected"]) == (1, "done", True)
            card = await w.owner.wait_message(
                lambda t: t.startswith("I connected to bot SimpleX Directory")
            )
            assert text_of_item(card).endswith("\nPerformed without approval (mode host).")
            assert not any("/'approve" in text_of_item(m) for m in w.owner.agent_messages())
            await w.server.log.wait_line(
                lambda line: line == "Action 1: performed without approval (mode host)."
            )
            await w.owner.say(f"/approve {result['chat']} all")
            await w.owner.wait_message(lambda t: t.startswith("Approved for bot SimpleX Directory"))
            listing = structured(await w.server.call("list"))
            assert "approved" not in next(
                c for c in listing["chats"] if c["chat"] == result["chat"]
            )
            # /list shows no approval in mode host either
            await w.owner.say("/list")
            reply = await w.owner.wait_message(lambda t: t.startswith(f"{result['chat']}  "))
            assert text_of_item(reply).split("\n")[0] == f"{result['chat']}  bot SimpleX Directory"
