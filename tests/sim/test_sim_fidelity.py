"""Fidelity: every response and event the simulator emits has the core's shape.

The shapes are ``simplex_chat.types`` (``T``, ``CR``, ``CEvt``) where they describe them, and
the newer shapes of ``simplex_protocols.core.types`` / ``simplex_protocols.sim._newer_types``
(peer type ``agent``, Service RPC, SimpleX names, channels, ``protocols``/``serves``/
``audience``). The test drives every flow of the other simulator tests, records every frame,
and checks each one; a shape that drifts fails it.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

import pytest
import test_sim_cli
import test_sim_contacts
import test_sim_faults
import test_sim_groups
import test_sim_service
from simkit import World, capture
from simplex_chat.types import T

import simplex_protocols.sim
from simplex_protocols.sim import check_frame, check_shape
from simplex_protocols.sim._newer_types import EVENT_SHAPES, RESPONSE_SHAPES

pytestmark = pytest.mark.anyio

SIM_DIR = Path(simplex_protocols.sim.__file__).parent

#: A text with every Markdown format the core knows (a SimpleX link is appended).
ALL_FORMATS = (
    "*bold* _italic_ ~strike~ `snippet` #secret# !1 red! !- small! https://example.com "
    "[site](https://example.com) @bob /help chat@example.com +44 7777 777 777 #news "
    "@directory.simplex"
)

#: The event deliberately unknown to every client (chaos mode).
CHAOS_EVENT = "simChaosEvent"


def _scenarios() -> list[Callable[[], Awaitable[None]]]:
    out = []
    for module in (
        test_sim_contacts,
        test_sim_groups,
        test_sim_service,
        test_sim_faults,
        test_sim_cli,
    ):
        for name, fn in inspect.getmembers(module, inspect.iscoroutinefunction):
            if name.startswith("test_") and not inspect.signature(fn).parameters:
                out.append(fn)
    return out


async def _more_commands() -> None:
    """Responses and events the other tests do not produce."""
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        await alice.cmd("/users")
        await alice.cmd("/network socks=off smp-proxy=always smp-proxy-fallback=protected")
        await alice.cmd("/network")
        await alice.cmd("/sql chat SELECT 1")
        await alice.cmd("/sql agent SELECT 1")
        link = await w.address(bob, settings={"businessAddress": False})
        await bob.cmd(f"/_show_address {bob.user_id}")
        await bob.cmd(f"/_profile_address {bob.user_id} on")
        plan = await alice.cmd(f"/_connect plan {alice.user_id} {link}")
        cl = plan["connLink"]
        data = plan["connectionPlan"]["contactAddressPlan"]["contactSLinkData_"]
        prepared = await alice.cmd_json(
            f"/_prepare contact {alice.user_id} {cl['connFullLink']}", data
        )
        await alice.cmd(
            f"/_connect contact @{prepared['chat']['chatInfo']['contact']['contactId']} text hi"
        )
        req = await bob.event("receivedContactRequest")
        await bob.cmd(f"/_get chats {bob.user_id} pcc=on")
        await alice.cmd(f"/_get chats {alice.user_id} pcc=on")
        await bob.cmd(f"/_reject {req['contactRequest']['contactRequestId']} notify=on")
        await alice.event("contactRequestRejected")
        inv = await alice.cmd(f"/_connect {alice.user_id}")
        await alice.cmd(f"/_delete :{inv['connection']['pccConnId']}")
        await alice.cmd(f"/_contacts {alice.user_id}")
        await alice.cmd(f"/_set accept member contacts {alice.user_id} on")
        await alice.cmd(f"/_set accept group invitations {alice.user_id} on")
        gid = (
            await alice.cmd_json(f"/_group {alice.user_id}", {"displayName": "g", "fullName": ""})
        )["groupInfo"]["groupId"]
        await alice.cmd(f"/_info #{gid}")
        await alice.cmd(f"/_read chat #{gid}")
        await alice.cmd(f"/_get chat #{gid} initial=5")
        await alice.cmd("/_get chat *1 count=5")
        # a business request accepted by /_accept
        shop = await w.user("shop", peer_type="business")
        blink = await w.address(shop, settings={"businessAddress": True})
        await alice.cmd(f"/_connect {alice.user_id} {blink}")
        breq = await shop.event("receivedContactRequest")
        await shop.cmd(f"/_accept {breq['contactRequest']['contactRequestId']}")
        await alice.event("userJoinedGroup")
        # contact preferences
        a_contact, _ = await w.connect(alice, bob, await bob_address(bob))
        await alice.cmd_json(
            f"/_set prefs @{a_contact['contactId']}", {"fullDelete": {"allow": "yes"}}
        )
        await bob.event("contactUpdated")
        # a text with every Markdown format, and a reply that quotes it (formattedText on the
        # items and on the quote)
        blink_text = await bob_address(bob)
        await alice.cmd_json(
            f"/_send @{a_contact['contactId']} json",
            [{"msgContent": {"type": "text", "text": f"{ALL_FORMATS}\n{blink_text}"}}],
        )
        got = await bob.message()
        quoted = got["chatItems"][0]["chatItem"]["meta"]["itemId"]
        await bob.cmd_json(
            f"/_send @{got['chatItems'][0]['chatInfo']['contact']['contactId']} json",
            [{"msgContent": {"type": "text", "text": "/ok"}, "quotedItemId": quoted}],
        )
        await alice.message("/ok")
        await bob.cmd(f"/_delete_address {bob.user_id}")
        await alice.cmd("/_stop")
        await alice.cmd("/_start")


async def bob_address(bob: Any) -> str:
    link: str = (await bob.cmd(f"/_show_address {bob.user_id}"))["contactLink"]["connLinkContact"][
        "connShortLink"
    ]
    await bob.cmd_json(
        f"/_address_settings {bob.user_id}",
        {"businessAddress": False, "autoAccept": {"acceptIncognito": False}},
    )
    return link


async def test_every_frame_the_simulator_emits_has_the_cores_shape() -> None:
    with capture() as recorder:
        for scenario in _scenarios():
            await scenario()
        await _more_commands()
    problems: dict[str, list[str]] = {}
    for kind, resp in recorder.frames:
        frame = {"corrId": "1", "resp": resp} if kind == "response" else {"resp": resp}
        errors = check_frame(frame)
        if errors:
            problems.setdefault(f"{kind} {resp.get('type')}", errors[:3])
    assert problems == {}
    # every format of FormattedText was emitted, on items and on quotes
    formats: set[str] = set()
    quotes_with_formats = 0
    for _, resp in recorder.frames:
        for aci in resp.get("chatItems") or []:
            item = aci.get("chatItem") or {}
            for fragment in item.get("formattedText") or []:
                formats.add(fragment.get("format", {}).get("type"))
            quotes_with_formats += bool((item.get("quotedItem") or {}).get("formattedText"))
    assert formats - {None} == set(typing.get_args(T.Format_Tag))
    assert quotes_with_formats
    seen_events = recorder.types("event")
    seen_responses = recorder.types("response")
    # every response and event tag the simulator's code can emit was emitted and checked
    source = "".join(p.read_text(encoding="utf-8") for p in SIM_DIR.glob("*.py"))
    emitted = set(re.findall(r'"type": "([A-Za-z]+)"', source)) & (
        set(RESPONSE_SHAPES) | set(EVENT_SHAPES)
    )
    assert emitted - (seen_events | seen_responses) == set()
    # the events the MCP server plan handles, and the Service RPC ones, are all exercised
    for tag in (
        "newChatItems",
        "chatItemUpdated",
        "chatItemsDeleted",
        "chatItemsStatusesUpdated",
        "contactConnected",
        "contactConnecting",
        "contactUpdated",
        "contactDeletedByContact",
        "receivedContactRequest",
        "acceptingContactRequest",
        "acceptingBusinessRequest",
        "userJoinedGroup",
        "joinedGroupMember",
        "joinedGroupMemberConnecting",
        "connectedToGroupMember",
        "memberRole",
        "leftMember",
        "deletedMember",
        "deletedMemberUser",
        "groupDeleted",
        "groupUpdated",
        "receivedGroupInvitation",
        "serviceRequest",
        "serviceReplySent",
        "contactRequestRejected",
    ):
        assert tag in seen_events, tag
    for tag in (
        "activeUser",
        "usersList",
        "chatCmdError",
        "connectionPlan",
        "newPreparedChat",
        "startedConnectionToContact",
        "startedConnectionToGroup",
        "sentInvitation",
        "sentConfirmation",
        "sentInvitationToContact",
        "invitation",
        "newChatItems",
        "apiChat",
        "apiChats",
        "itemsReadForChat",
        "serviceResponse",
        "serviceReplyAccepted",
        "publicGroupCreated",
        "groupLinkCreated",
        "membersRoleUser",
        "userDeletedMembers",
        "leftMemberUser",
        "groupDeletedUser",
        "networkConfig",
        "sQLResult",
        "contactInfo",
        "groupInfo",
    ):
        assert tag in seen_responses, tag


async def test_chaos_mode_adds_an_unknown_event_and_extra_fields() -> None:
    with capture() as recorder:
        async with World(chaos=True) as w:
            alice = await w.user("alice")
            bob = await w.user("bob")
            await w.connect(alice, bob, await w.address(bob))
            await alice.settle()
            assert alice.all(CHAOS_EVENT), "chaos mode sends an unknown event after each command"
    assert CHAOS_EVENT not in EVENT_SHAPES
    for kind, resp in recorder.frames:
        assert "simChaos" in resp
        if resp["type"] != CHAOS_EVENT:
            frame = {"corrId": "1", "resp": resp} if kind == "response" else {"resp": resp}
            assert check_frame(frame) == []


# ------------------------------------------------------------------ the checker itself


class _Inner(TypedDict):
    type: Literal["inner"]
    n: int


class _Other(TypedDict):
    type: Literal["other"]
    s: str


class _Outer(TypedDict):
    name: str
    items: list[_Inner | _Other]
    maybe: NotRequired[bool]
    table: dict[str, int]


def test_check_shape_allows_extra_keys_and_optional_fields() -> None:
    value = {
        "name": "x",
        "items": [{"type": "inner", "n": 1, "extra": True}],
        "table": {"a": 1},
        "more": [],
    }
    assert check_shape(value, _Outer) == []


def test_check_shape_reports_drift() -> None:
    value = {
        "items": [{"type": "inner", "n": "1"}, {"type": "gone"}],
        "maybe": 1,
        "table": {"a": True},
    }
    errors = check_shape(value, _Outer)
    assert "$: missing key 'name' (_Outer)" in errors
    assert "$.items[0].n: expected integer, got string" in errors
    assert any(e.startswith("$.items[1].type: unknown tag 'gone'") for e in errors)
    assert "$.maybe: expected boolean, got number" in errors
    assert "$.table.a: expected integer, got boolean" in errors


def test_check_shape_overrides_widen_older_shapes() -> None:
    old = Literal["human", "bot"]
    assert check_shape("agent", old) != []
    assert check_shape("agent", old, overrides=[(old, Literal["human", "bot", "agent"])]) == []


def test_every_known_shape_is_checkable() -> None:
    for shapes in (RESPONSE_SHAPES, EVENT_SHAPES):
        for tag, shape in shapes.items():
            errors = check_shape({"type": tag}, shape)
            assert all("cannot check" not in e for e in errors), (tag, errors)
