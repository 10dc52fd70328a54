"""--owners LIST after the start: the membership messages of the plan's table, approvers as the
list defines them, names quoted for the shell; and --reset-owners.

e2e rows "owners list" (owner added in the app; restart line) and "reset owners"; "Other
scenarios": reset owners, no approver.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_sim import (
    Owner,
    World,
    add_in_the_app,
    agent_server,
    join_link,
    result_text,
    text_of_item,
    world,
)

from simplex_protocols.mcp_server.config import OwnerEntry

NO_APPROVING_OWNER = (
    "The agent has no approving owner. The person who runs it has to restart it with the "
    "--owners options it printed."
)


async def join_as_observer(owner: Owner, link: str) -> None:
    await owner.join(link)


async def listed_alice(w: World) -> None:
    """--owners: Alice joins as an observer; the restart with --owners 2:Alice makes her owner."""
    await join_as_observer(w.owner, join_link(w.server.log))
    await w.server.log.wait_line(lambda line: line.startswith("Alice joined (member 2)."))
    await w.restart(owners=(OwnerEntry(2, "Alice"),))


@pytest.mark.anyio
async def test_an_owner_added_in_the_app_and_an_owner_gone(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path, owners=()) as w:
            await listed_alice(w)
            log = w.server.log
            async with anyio.create_task_group() as tg, AsyncExitStack() as stack:
                bob = await add_in_the_app(w, stack, tg, "bob", "Bob Smith", "owner")
                line = "Bob Smith (member 3) is now an owner and can't approve actions yet."
                assert await log.wait_line(lambda text: text.startswith(line)) == (
                    f"{line} Restart the server with --owners 2:Alice,'3:Bob Smith'"
                )
                await w.owner.wait_message(
                    lambda t: t == f"{line} Restart the server with `--owners 2:Alice,3:Bob Smith`"
                )
                # announced once, though several events said so
                assert len([x for x in log.lines if x.startswith(line)]) == 1
                # Bob owns the chat but is not in the list: he does not approve
                await bob.say("/pending")
                await w.owner.wait_message(
                    lambda t: t == "Only the owners listed in --owners approve actions."
                )
                await w.owner.say("/pending")
                await w.owner.wait_message(lambda t: t == "No pending actions.")

                # Bob lowers Alice's role in the app: the list has no approver left
                alice_at_bob = await bob.member_id_of("Alice")
                await bob.cmd(f"/_member role {bob.control} {alice_at_bob} member")
                gone = "Alice (member 2) is no longer an owner."
                assert await log.wait_line(lambda text: text.startswith(gone)) == (
                    f"{gone} Restart the server with --owners '3:Bob Smith'"
                )
                await w.owner.wait_message(
                    lambda t: t == f"{gone} Restart the server with `--owners 3:Bob Smith`"
                )
                refused = await w.server.call("connect", {"target": "@directory.simplex"})
                assert result_text(refused) == NO_APPROVING_OWNER
                start = len(w.owner.agent_messages())
                await w.owner.say("/approve 1")
                await w.owner.wait_message(
                    lambda t: (
                        t == "Only the owners listed in --owners approve actions."
                        and len(w.owner.agent_messages()) > start
                    )
                )
                tg.cancel_scope.cancel()

            # the printed line works: Bob is the owner now, and approves
            server = await w.restart(owners=(OwnerEntry(3, "Bob Smith"),))
            assert "Owners: 3:Bob Smith." in server.log.lines


@pytest.mark.anyio
async def test_no_owner_remains_then_reset_owners_keeps_the_counter(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path, owners=()) as w:
            await listed_alice(w)
            log = w.server.log
            async with anyio.create_task_group() as tg:

                async def connect() -> None:
                    await w.server.call("connect", {"target": "@directory.simplex"})

                tg.start_soon(connect)
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                old_control = w.owner.control
                await w.owner.cmd(f"/_leave {old_control}")
                gone = "Alice (member 2) is no longer an owner."
                assert await log.wait_line(lambda text: text.startswith(gone)) == (
                    f"{gone} No owners remain: restart the server with --reset-owners --owners"
                )
                refused = await w.server.call("connect", {"target": w.vendor_link})
                assert result_text(refused) == NO_APPROVING_OWNER
                tg.cancel_scope.cancel()

            server = await w.restart(owners=(), reset_owners=True)
            lines = server.log.lines
            assert lines[3:5] == [
                'Agent control chat "My Agent" created.',
                "Join the agent control chat in the SimpleX app. The link works once:",
            ]
            assert "The link adds an observer. Its ID and name are printed when it joins." in lines
            await w.owner.join(join_link(server.log))
            assert w.owner.control != old_control
            joined = await server.log.wait_line(lambda text: text.startswith("Alice joined"))
            member = int(joined.split("(member ")[1].split(")")[0])
            assert joined == (
                f"Alice joined (member {member}). Restart the server with --owners {member}:Alice"
            )
            server = await w.restart(owners=(OwnerEntry(member, "Alice"),))
            async with anyio.create_task_group() as tg:

                async def again() -> None:
                    await server.call("connect", {"target": "@directory.simplex"})

                tg.start_soon(again)
                # action 1 was created before the reset: the new chat continues at 2
                card = await w.owner.wait_message(lambda t: "/'approve 2'" in t)
                assert text_of_item(card).startswith("I want to connect to bot SimpleX Directory")
                tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_reset_owners_deletes_the_control_chat_with_notification(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            old_group = w.owner.group_id
            start = len(w.owner.events)
            server = await w.restart(reset_owners=True)
            # the owner's app learns that the chat is deleted
            await w.owner.wait_event(
                lambda e: e["type"] == "groupDeleted" and e["groupInfo"]["groupId"] == old_group,
                start=start,
            )
            assert 'Agent control chat "My Agent" created.' in server.log.lines
            assert any(
                line.startswith("Whoever joins by this link becomes an owner")
                for line in server.log.lines
            )
            # no approver until someone joins the new chat
            refused = await server.call("connect", {"target": "@directory.simplex"})
            assert result_text(refused).startswith("The agent has no owner.")
            await w.owner.join(join_link(server.log))
            await w.owner.wait_message(
                lambda t: t == "I'm your agent. I ask here before I connect or send."
            )
            joined = await server.log.wait_line(lambda text: text.startswith("Alice joined"))
            assert joined.endswith("and is now an owner. The link is deleted.")
            # the agent keeps only one control chat
            groups = (
                await server.info.agent.api.core.command(f"/_groups {server.info.agent.user_id}")
            )["groups"]
            controls = [
                g for g in groups if g.get("customData", {}).get("simplexMcp", {}).get("control")
            ]
            assert len(controls) == 1


@pytest.mark.anyio
async def test_a_second_agent_on_another_port_has_its_own_chat_profile_and_actions(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            async with (
                agent_server(
                    w.network,
                    tmp_path / "agent-2",
                    clock=w.clock,
                    display_name=None,
                    name="my-agent-2",
                ) as second,
                anyio.create_task_group() as tg,
                AsyncExitStack() as stack,
            ):
                assert second.info.port != w.server.info.port
                assert 'Agent control chat "my-agent-2" created.' in second.log.lines
                alice = Owner(w.network, w.owner.user)
                await alice.start(stack, tg)
                await alice.join(join_link(second.log))
                await second.log.wait_line(
                    lambda line: (
                        line.startswith("Alice joined (member ")
                        and line.endswith("and is now an owner. The link is deleted.")
                    )
                )
                assert "  simplex-mcp register my-agent-2" in second.log.lines
                result: dict[str, Any] = {}

                async def connect() -> None:
                    called = await second.call(
                        "connect", {"target": "@directory.simplex", "idle": 1}
                    )
                    result.update(called.structured_content or {})

                async with anyio.create_task_group() as calls:
                    calls.start_soon(connect)
                    await alice.wait_message(lambda t: "/'approve 1'" in t)
                    await alice.say("/approve 1")
                    await second.seen.until(
                        lambda: any(e["type"] == "contactConnected" for e in second.seen.events)
                    )
                    await w.clock.advance(1)
                assert result["status"] == "done"
                # the directory sees the profile my-agent-2, an agent
                connected = await w.directory.wait_event(
                    lambda e: (
                        e["type"] == "contactConnected"
                        and e["contact"]["profile"]["displayName"] == "my-agent-2"
                    )
                )
                assert connected["contact"]["profile"]["peerType"] == "agent"
                # the first agent has no such chat and no such action
                listing = (await w.server.call("list")).structured_content or {}
                assert all(c["name"] != "SimpleX Directory" for c in listing["chats"])
                assert listing["actions"] == []
                # no card of the second agent reached the first agent's control chat
                assert not any("/'approve 1'" in text_of_item(m) for m in w.owner.agent_messages())
                tg.cancel_scope.cancel()
