"""DECL-PROTO-16: "A protocol in a group's ``groupPreferences`` is a claim that the group's
owners answer it in that group."

The groups a ResponderBot owns are the business chats of its business address: the core makes
one for each customer, with the bot as its owner, and copies the protocols of the bot's profile
into the chat's ``groupPreferences`` (DECL-PROTO-10). A customer reads the declaration there
and calls the owner with ``/_call``: every protocol declared is answered. When the bot is
started again serving less, the chats it made before must not go on claiming what it no longer
answers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from simplex_protocols.bindings.a2a import build_send_message, is_final_message
from simplex_protocols.bindings.mcp import is_final
from simplex_protocols.bot import ResponderBot
from simplex_protocols.core import GroupRef
from simplex_protocols.declarations import ProtocolDeclarations, protocols_from_preferences

from .botkit import WAIT_S, Caller, EchoAgent, World, echo_card, make_tools, tool_call, tool_text

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


def business_bot(tmp_path: Path, world: World, *, a2a: bool = True) -> ResponderBot:
    return ResponderBot(
        display_name="Acme",
        mcp=make_tools(),
        a2a=EchoAgent() if a2a else None,
        agent_card=echo_card() if a2a else None,
        business=True,
        data_dir=tmp_path / "acme",
        clock=world.clock,
    )


async def open_business_chat(customer: Caller, address: str) -> int:
    """The customer connects to the business address; the business chat's group ID."""
    since = len(customer.events)
    with anyio.fail_after(WAIT_S):
        await customer.api.connect(customer.user_id, address)
    joined = await customer.first_event("userJoinedGroup", since=since)
    assert joined["groupInfo"]["businessChat"]["chatType"] == "business"
    return int(joined["groupInfo"]["groupId"])


async def group_declarations(customer: Caller, group_id: int) -> ProtocolDeclarations:
    """What the group's profile declares, as the customer's core has it now."""
    info = await customer.api.group_info(group_id)
    prefs = info["groupProfile"].get("groupPreferences")
    return protocols_from_preferences(prefs or {}, scope="groupPreferences")


async def owners(customer: Caller, group_id: int) -> list[int]:
    members = await customer.api.list_members(group_id)
    return [int(m["groupMemberId"]) for m in members if m["memberRole"] == "owner"]


#: What the bot answers to the request of each protocol.
ANSWERS = {"mcp": "12 anvils are in stock.", "a2a": "echo: Price of two anvils"}


def request_for(protocol: str) -> tuple[JSON, Callable[[Mapping[str, Any]], bool]]:
    """A request of ``protocol`` and the rule that says its answer is complete."""
    if protocol == "mcp":
        mcp = tool_call("availability", {"item": "anvil"}, rid=1)
        return mcp, functools.partial(is_final, mcp)
    a2a = build_send_message("Price of two anvils", request_id=1)
    return a2a, functools.partial(is_final_message, a2a)


async def ask_the_owners(customer: Caller, group_id: int, protocol: str) -> str:
    """Call ``protocol`` in the group as a broadcast, waiting for every owner: the text of the
    one answer, which must come from the bot."""
    request, final = request_for(protocol)
    result = await customer.chat.call(
        GroupRef(group_id),
        protocol,
        request,
        final=final,
        expected_members=await owners(customer, group_id),
    )
    assert result.completed, protocol
    [answer] = result.answers
    assert answer.sender.display_name == "Acme" and answer.final is not None
    if protocol == "mcp":
        return tool_text(answer.final)
    return str(answer.final["result"]["task"]["artifacts"][0]["parts"][0]["text"])


@pytest.mark.requirement("DECL-PROTO-16", "DECL-PROTO-10", "CALL-GRP-2")
async def test_decl_proto_16_the_owner_answers_every_protocol_the_business_chat_declares(
    tmp_path: Path,
) -> None:
    async with World() as world:
        alice = await world.caller("alice")
        async with business_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            group_id = await open_business_chat(alice, bot.address)
            declared = await group_declarations(alice, group_id)
            assert len(await owners(alice, group_id)) == 1
            answers = {}
            for protocol in declared:
                assert declared.serves(protocol, "chat")
                answers[protocol] = await ask_the_owners(alice, group_id, protocol)
    assert sorted(declared) == ["a2a", "mcp"]
    assert answers == ANSWERS


@pytest.mark.requirement("DECL-PROTO-16")
async def test_decl_proto_16_a_business_chat_stops_declaring_what_the_owner_no_longer_serves(
    tmp_path: Path,
) -> None:
    async with World() as world:
        alice = await world.caller("alice")
        async with business_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            group_id = await open_business_chat(alice, bot.address)
            assert sorted(await group_declarations(alice, group_id)) == ["a2a", "mcp"]
        # The same bot, started again without its A2A agent.
        async with business_bot(tmp_path, world, a2a=False).serving(world.network.backend("acme")):
            await alice.settle()
            declared = await group_declarations(alice, group_id)
            answer = await ask_the_owners(alice, group_id, "mcp")
    # The chat made before declares only what its owner answers now, and that is answered.
    assert sorted(declared) == ["mcp"]
    # ... and no longer the Service RPC transport the core copied (DECL-PROTO-7).
    assert declared.problems == ()
    assert answer == ANSWERS["mcp"]
