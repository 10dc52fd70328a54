"""ResponderBots in a group: they join when invited, answer a broadcast each, answer a command
that mentions them, and stay silent for a command that mentions another member."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import pytest

from simplex_protocols._wire import dumps
from simplex_protocols.bindings.mcp import is_final
from simplex_protocols.bot import ResponderBot
from simplex_protocols.core import GroupRef
from simplex_protocols.transports import CallRecord

from .botkit import WAIT_S, Caller, World, make_tools, tool_call, tool_text

pytestmark = pytest.mark.anyio


async def invite(alice: Caller, bots: list[ResponderBot]) -> tuple[GroupRef, dict[str, int]]:
    """Alice makes a group and adds the bots; returns the group and each bot's member ID."""
    contacts = [await alice.connect(bot.address) for bot in bots]
    with anyio.fail_after(WAIT_S):
        created = await alice.core.command(
            f"/_group {alice.user_id} {dumps({'displayName': 'team', 'fullName': ''})}"
        )
        group_id = int(created["groupInfo"]["groupId"])
        async with alice.core.events() as events:
            for contact in contacts:
                await alice.api.add_member(group_id, contact.contact_id, "member")
            joined: set[str] = set()
            async for event in events:
                if event.get("type") in ("joinedGroupMember", "connectedToGroupMember"):
                    joined.add(event["member"]["memberProfile"]["displayName"])
                if joined >= {bot.display_name for bot in bots}:
                    break
    members = await alice.api.list_members(group_id)
    ids = {m["memberProfile"]["displayName"]: int(m["groupMemberId"]) for m in members}
    return GroupRef(group_id), ids


@pytest.mark.requirement("CALL-GRP-1", "CALL-GRP-2")
async def test_bots_in_a_group_answer_broadcasts_and_their_mentions(tmp_path: Path) -> None:
    calls: dict[str, list[CallRecord]] = {"Acme": [], "Beta": []}

    def bot(name: str) -> ResponderBot:
        return ResponderBot(
            display_name=name,
            mcp=make_tools(),
            join_groups=True,
            data_dir=tmp_path / name,
            clock=world.clock,
            on_call=calls[name].append,
        )

    async with World() as world:
        alice = await world.caller("alice")
        async with (
            bot("Acme").serving(world.network.backend("acme")) as acme,
            bot("Beta").serving(world.network.backend("beta")) as beta,
        ):
            group, members = await invite(alice, [acme, beta])
            request = tool_call("whoami", {})
            final = functools.partial(is_final, request)
            broadcast = await alice.chat.call(
                group,
                "mcp",
                request,
                final=final,
                expected_members=[members["Acme"], members["Beta"]],
            )
            mention = tool_call("availability", {"item": "anvil"}, rid=2)
            mentioned = await alice.chat.call(
                group,
                "mcp",
                mention,
                member_id=members["Beta"],
                final=functools.partial(is_final, mention),
            )
    assert broadcast.completed
    by_name = {a.sender.display_name: a for a in broadcast.answers}
    assert set(by_name) == {"Acme", "Beta"}
    for answer in by_name.values():
        assert answer.final is not None
        # The caller in a group is the member, as each bot knows it.
        assert tool_text(answer.final).startswith("chat:#")
    assert mentioned.completed
    [answer] = mentioned.answers
    assert answer.sender.display_name == "Beta"
    assert answer.final is not None and tool_text(answer.final) == "12 anvils are in stock."
    # Acme saw the command that mentioned Beta and did not answer it.
    assert [r.method for r in calls["Acme"]] == ["tools/call"]
    assert [r.method for r in calls["Beta"]] == ["tools/call", "tools/call"]


async def test_without_join_groups_an_invitation_is_not_accepted(tmp_path: Path) -> None:
    async with World() as world:
        alice = await world.caller("alice")
        bot = ResponderBot(
            display_name="Acme", mcp=make_tools(), data_dir=tmp_path / "a", clock=world.clock
        )
        async with bot.serving(world.network.backend("acme")):
            contact = await alice.connect(bot.address)
            created = await alice.core.command(
                f"/_group {alice.user_id} {dumps({'displayName': 'team', 'fullName': ''})}"
            )
            await alice.api.add_member(
                int(created["groupInfo"]["groupId"]), contact.contact_id, "member"
            )
            await world.network.settle()
            groups = world.network.user("acme").command(f"/_groups {bot.user_id}")
    [group] = groups["groups"]
    assert group["membership"]["memberStatus"] == "invited"
