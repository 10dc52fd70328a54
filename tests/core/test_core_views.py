"""The typed views of the core's JSON, over the shapes the simulated core sends, and over junk.

Each accessor is checked on a response or an event of the simulator (contacts, an incognito
contact, groups and their members, messages and their senders, connection plans, the responses
of connecting commands), and on objects of the wrong shape, which read as nothing.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from core_fakes import FakeBackend

from simplex_protocols.core import (
    AChatItemView,
    ChatAPI,
    ChatCore,
    ChatInfoView,
    ChatItemView,
    ChatView,
    ConnectionPlanView,
    ContactRef,
    EventView,
    GroupRef,
    JoinResponseView,
    MemberView,
    first_item_id,
    link_text,
)
from simplex_protocols.sim.testing import ScriptedUser, World

pytestmark = pytest.mark.anyio


async def contact_chat(user: ScriptedUser, contact_id: int) -> ChatView:
    return ChatView(await user.api.get_chat(ContactRef(contact_id), count=10))


async def test_a_contact_chat_its_name_reference_connection_and_custom_data() -> None:
    async with World(seed=3) as world:
        alice, bob = await world.users("alice", "bob")
        bob_at_alice, _ = await world.connect(alice, bob)
        contact_id = int(bob_at_alice["contactId"])
        await alice.api.set_custom_data(ContactRef(contact_id), {"note": {"x": 1}})
        chat = await contact_chat(alice, contact_id)
        info = chat.info
        assert (info.type, info.ref, info.is_direct, info.is_group) == (
            "direct",
            ContactRef(contact_id),
            True,
            False,
        )
        assert (info.display_name, info.connection_status, info.connected) == ("bob", "ready", True)
        assert info.contact_conn_id == bob_at_alice["activeConn"]["connId"]
        assert (info.incognito, info.peer_type, info.membership, info.group_info) == (
            False,
            None,
            None,
            {},
        )
        assert info.custom_data == {"note": {"x": 1}}
        assert info.chat_ts is not None and info.chat_ts.endswith("Z")
        assert (info.is_business, info.is_channel, info.simplex_name, info.commands) == (
            False,
            False,
            None,
            None,
        )
        assert info.entity is info.contact and info.profile["displayName"] == "bob"


async def test_messages_their_senders_texts_and_read_state() -> None:
    async with World(seed=3) as world:
        alice, bob = await world.users("alice", "bob")
        bob_at_alice, alice_at_bob = await world.connect(alice, bob)
        mine = await alice.send(f"@{bob_at_alice['contactId']}", "hello")
        reply = await bob.send(f"@{alice_at_bob['contactId']}", "hi there", quoted=None)
        event = EventView(await alice.message("hi there"))
        assert event.type == "newChatItems"
        [a_item] = list(event.chat_items())
        chat, item = a_item.chat, a_item.item
        assert chat.ref == ContactRef(int(bob_at_alice["contactId"]))
        assert (item.is_message, item.is_received, item.own, item.direction) == (
            True,
            True,
            False,
            "directRcv",
        )
        assert (item.text, item.item_text, item.unread, item.live) == (
            "hi there",
            "hi there",
            True,
            False,
        )
        assert item.sender is None and item.sender_name(chat) == "bob"
        assert item.item_id is not None and item.item_id > mine
        assert item.item_ts is not None and item.mentions_user is False
        page = await contact_chat(alice, int(bob_at_alice["contactId"]))
        own = next(i for i in page.items() if i.item_id == mine)
        assert (own.own, own.is_received, own.is_message, own.sender_name(page.info)) == (
            True,
            False,
            True,
            None,
        )
        # a quote names the item it replies to
        quoting = await bob.send(f"@{alice_at_bob['contactId']}", "about that", quoted=reply)
        assert quoting > reply
        quoted = EventView(await alice.message("about that"))
        assert next(quoted.chat_items()).item.quoted_item_id == item.item_id
        initial = ChatView(await alice.api.get_chat(chat.ref, initial=1))
        assert initial.unread_count == 2
        assert initial.min_unread_item_id == item.item_id


async def test_groups_membership_members_and_their_messages() -> None:
    async with World(seed=4) as world:
        alice, bob, carol = await world.users("alice", "bob", "carol")
        ids = await world.group(alice, [bob, carol], name="trail")
        owned = ChatView(await alice.api.get_chat(GroupRef(ids["alice"]), count=0)).info
        assert (owned.ref, owned.is_group, owned.display_name) == (
            GroupRef(ids["alice"]),
            True,
            "trail",
        )
        membership = owned.membership
        assert membership is not None
        assert (membership.role, membership.status, membership.active, membership.current) == (
            "owner",
            "creator",
            True,
            True,
        )
        assert (membership.pending, membership.incognito, owned.incognito) == (False, False, False)
        assert owned.connected and owned.connection_status is None and owned.peer_type is None
        joined = ChatView(await bob.api.get_chat(GroupRef(ids["bob"]), count=0)).info
        assert joined.membership is not None and joined.membership.role == "member"
        members = [MemberView(m) for m in await alice.api.list_members(ids["alice"])]
        assert sorted(m.display_name for m in members) == ["bob", "carol"]
        assert all(m.member_id is not None and m.active and m.role == "member" for m in members)
        await carol.send(f"#{ids['carol']}", "hi all")
        event = EventView(await bob.message("hi all"))
        a_item = next(event.chat_items())
        sender = a_item.item.sender
        assert sender is not None and sender.display_name == "carol"
        assert a_item.item.direction == "groupRcv"
        assert a_item.item.sender_name(a_item.chat) == "carol"
        assert sender.member_id is not None and sender.conn_id is not None
        # a member's new role, as the event of the change says it
        await alice.api.set_members_role(ids["alice"], [members[0].member_id or 0], "admin")
        changed = EventView(await bob.first_event("memberRole"))
        assert changed.group_id == ids["bob"] and changed.to_role == "admin"
        assert changed.member is not None and changed.member.member_id is not None


async def test_an_incognito_contact_and_the_response_of_a_connect() -> None:
    async with World(seed=5) as world:
        alice, bob = await world.users("alice", "bob")
        link = await world.address(bob)
        planned = ConnectionPlanView(await alice.api.connect_plan(alice.user_id, link))
        assert (planned.plan_type, planned.sub_type) == ("contactAddress", "ok")
        assert planned.full_link is not None and planned.short_link == link
        assert planned.profile["displayName"] == "bob" and not planned.business
        assert planned.known_contact_id is None and planned.channel_link_data() is None
        started = JoinResponseView(await alice.api.connect(alice.user_id, link, incognito=True))
        assert started.type in ("sentConfirmation", "sentInvitation")
        assert started.pending_conn_id is not None and started.contact_id is None
        assert started.incognito_name is not None and started.incognito_name != "alice"
        connected = EventView(await alice.next_event("contactConnected"))
        contact = connected.contact
        assert contact.ref is not None and contact.contact_conn_id == started.pending_conn_id
        info = (await contact_chat(alice, contact.ref.contact_id)).info  # type: ignore[union-attr]
        assert info.incognito and info.connected
        known = ConnectionPlanView(await alice.api.connect_plan(alice.user_id, link))
        assert known.sub_type == "known"
        assert known.known_contact_id == contact.ref.contact_id  # type: ignore[union-attr]


async def test_a_group_link_plan_a_channel_link_and_joining_a_group() -> None:
    async with World(seed=6) as world:
        alice, bob = await world.users("alice", "bob")
        info = await alice.api.new_group(alice.user_id, {"displayName": "club", "fullName": ""})
        group_link = await alice.api.create_group_link(int(info["groupId"]))
        link = link_text(group_link["connLinkContact"])
        assert link == group_link["connLinkContact"]["connShortLink"]
        plan = ConnectionPlanView(await bob.api.connect_plan(bob.user_id, str(link)))
        assert (plan.plan_type, plan.sub_type, plan.direct) == ("groupLink", "ok", True)
        assert plan.group_profile["displayName"] == "club"
        assert plan.channel_link_data() is None and plan.known_group_id is None
        await bob.api.connect(bob.user_id, str(link))
        joined = EventView(await bob.next_event("userJoinedGroup"))
        assert joined.group_info.ref is not None and joined.group_id is not None
        assert joined.host_member.conn_id is not None
        created = await alice.cmd_json(
            f"/_public group {alice.user_id}",
            {"displayName": "News", "fullName": "", "shortDescr": "first"},
        )
        world.network.register_name(
            "#news.simplex", "alice", "publicGroup", group_id=int(created["groupInfo"]["groupId"])
        )
        channel = ConnectionPlanView(await bob.api.connect_plan(bob.user_id, "#news.simplex"))
        assert (channel.plan_type, channel.direct) == ("groupLink", False)
        data = channel.channel_link_data()
        assert data is not None and data["groupProfile"]["displayName"] == "News"


async def test_first_item_id_and_a_sent_item_with_its_chat() -> None:
    async with World(seed=3) as world:
        alice, bob = await world.users("alice", "bob")
        bob_at_alice, _ = await world.connect(alice, bob)
        ref = ContactRef(int(bob_at_alice["contactId"]))
        sent = await alice.api.send_text(ref, "one")
        assert first_item_id(sent) == sent[0]["chatItem"]["meta"]["itemId"]
        a_item = AChatItemView(sent[0])
        assert a_item.chat.ref == ref and a_item.item.own


JUNK: list[Any] = [{}, {"type": 3}, {"meta": "x", "content": [], "chatDir": None}]


@pytest.mark.parametrize("raw", JUNK)
async def test_views_of_the_wrong_shape_read_as_nothing(raw: Any) -> None:
    info = ChatInfoView(raw)
    assert (info.type, info.ref, info.display_name, info.connected, info.incognito) == (
        "",
        None,
        "",
        False,
        False,
    )
    assert (info.custom_data, info.membership, info.simplex_name, info.chat_ts) == (
        {},
        None,
        None,
        None,
    )
    item = ChatItemView(raw)
    assert (item.item_id, item.is_message, item.text, item.sender, item.quoted_item_id) == (
        None,
        False,
        None,
        None,
        None,
    )
    assert (item.live, item.unread, item.own, item.mentions_user) == (False, False, False, False)
    member = MemberView(raw)
    assert (member.member_id, member.display_name, member.role, member.active) == (
        None,
        "",
        None,
        False,
    )
    chat = ChatView(raw)
    assert (list(chat.items()), chat.unread_count, chat.min_unread_item_id) == ([], 0, None)
    plan = ConnectionPlanView(raw)
    assert (plan.plan_type, plan.sub_type, plan.full_link, plan.channel_link_data()) == (
        "",
        "",
        None,
        None,
    )
    event = EventView(raw)
    assert (list(event.chat_items()), list(event.deleted_items()), event.member) == ([], [], None)
    join = JoinResponseView(raw)
    assert (join.pending_conn_id, join.contact_id, join.group_id, join.incognito_name) == (
        None,
        None,
        None,
        None,
    )
    assert first_item_id(raw) is None and link_text(raw) is None


def test_ids_that_no_chat_reference_can_name_are_not_read_as_chats() -> None:
    huge = {"type": "startedConnectionToGroup", "groupInfo": {"groupId": 10**16}}
    assert JoinResponseView(huge).group_id is None
    assert JoinResponseView({"contact": {"contactId": 0}}).contact_id is None
    assert ChatInfoView({"type": "group", "groupInfo": {"groupId": 10**16}}).ref is None
    assert link_text({"connFullLink": "https://a/b"}) == "https://a/b"


async def test_connect_via_address_returns_the_whole_response() -> None:
    response = {
        "type": "sentInvitationToContact",
        "contact": {"contactId": 4},
        "customUserProfile": {"displayName": "BraveOtter", "fullName": ""},
    }
    backend = FakeBackend(
        responder=lambda cmd: response if cmd == "/_connect contact 1 incognito=on 4" else None
    )
    async with ChatCore(backend) as core:
        with anyio.fail_after(5):
            got = await ChatAPI(core).connect_via_address(1, 4, incognito=True)
    assert got == response
    assert JoinResponseView(got).incognito_name == "BraveOtter"
