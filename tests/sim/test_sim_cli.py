"""The CLI's commands and short forms, over WebSocket as ``simplex-sim serve`` serves them.

Programs written for ``simplex-chat -p`` use the core's short forms and human commands
(``chatCommandP``): these tests send them through the simulator's WebSocket server and check
each answers as its API form does, with the core's response tags and errors. The fidelity test
drives these scenarios too, so every frame they cause is checked against the core's shapes.
"""

from __future__ import annotations

from typing import Any

import pytest
from simkit import World

from simplex_protocols._wire import dumps
from simplex_protocols.sim import CORE_PROFILES

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


async def _pair(w: World) -> tuple[Any, Any, JSON, JSON]:
    alice = await w.user("alice", display_name="alice")
    bob = await w.user("bob", display_name="bob")
    a_contact, b_contact = await w.connect(alice, bob)
    return alice, bob, a_contact, b_contact


async def test_short_forms_answer_as_the_api_forms() -> None:
    async with World(websocket=True) as w:
        alice = await w.user("alice")
        assert (await alice.cmd("/u"))["user"] == (await alice.cmd("/user"))["user"]
        created = await alice.cmd("/ad")
        assert created["type"] == "userContactLinkCreated"
        shown = await alice.cmd("/sa")
        assert shown["type"] == "userContactLink"
        assert shown["contactLink"]["connLinkContact"] == created["connLinkContact"]
        assert (await alice.cmd("/show_address"))["contactLink"] == shown["contactLink"]
        assert (await alice.error("/address"))["storeError"]["type"] == "duplicateContactLink"
        assert (await alice.cmd("/da"))["type"] == "userContactLinkDeleted"
        assert (await alice.error("/sa"))["storeError"]["type"] == "userContactLinkNotFound"
        contacts = await alice.cmd("/contacts")
        assert contacts["type"] == "contactsList"
        assert [c["localDisplayName"] for c in contacts["contacts"]] == ["Ask SimpleX Team"]
        assert (await alice.cmd("/groups"))["groups"] == []
        assert (await alice.cmd("/gs"))["type"] == "groupsList"
        version = await alice.cmd("/v")
        assert version["type"] == "versionInfo"
        assert version["versionInfo"]["version"] == CORE_PROFILES["spec"].version.version
        assert (await alice.cmd("/version")) == version


async def test_users_are_chosen_by_name() -> None:
    async with World(websocket=True) as w:
        alice = await w.user("alice", display_name="alice")
        second = await alice.cmd_json(
            "/_create user", {"profile": {"displayName": "Alice Work", "fullName": ""}}
        )
        assert (await alice.cmd("/u"))["user"]["userId"] == second["user"]["userId"]
        back = await alice.cmd("/user alice")
        assert back["type"] == "activeUser" and back["user"]["userId"] == alice.user_id
        again = await alice.cmd("/u 'Alice Work'")
        assert again["user"]["userId"] == second["user"]["userId"]
        failed = await alice.error("/user nobody")
        assert failed["storeError"] == {"type": "userNotFoundByName", "contactName": "nobody"}


async def test_messages_to_chats_by_name() -> None:
    async with World(websocket=True) as w:
        alice, bob, a_contact, _ = await _pair(w)
        sent = await alice.cmd("@bob hello by name")
        assert sent["type"] == "newChatItems"
        item = sent["chatItems"][0]
        assert item["chatInfo"]["contact"]["contactId"] == a_contact["contactId"]
        assert (await bob.message("hello by name"))["type"] == "newChatItems"
        failed = await alice.error("@nobody hi")
        assert failed["storeError"] == {"type": "contactNotFoundByName", "contactName": "nobody"}
        ids = await w.group(alice, [bob], name="team")
        await alice.cmd("#team hi team")
        got = await bob.message("hi team")
        assert got["chatItems"][0]["chatInfo"]["groupInfo"]["groupId"] == ids["bob"]
        failed = await alice.error("#nowhere hi")
        assert failed["storeError"] == {"type": "groupNotFoundByName", "groupName": "nowhere"}
        # the groups shared with a contact named bob (bob joined by the link, not as the contact)
        assert (await alice.cmd("/gs @bob"))["type"] == "groupsList"
        assert [g["groupId"] for g in (await alice.cmd("/groups team"))["groups"]] == [ids["alice"]]
        failed = await alice.error("/gs @nobody")
        assert failed["storeError"]["type"] == "contactNotFoundByName"


async def test_a_reaction_reaches_the_peer_and_counts_on_both_sides() -> None:
    async with World(websocket=True) as w:
        alice, bob, a_contact, _ = await _pair(w)
        item_id = await alice.send(f"@{a_contact['contactId']}", "react to this")
        got = await bob.message("react to this")
        bob_item = got["chatItems"][0]["chatItem"]["meta"]["itemId"]
        bob_ref = f"@{got['chatItems'][0]['chatInfo']['contact']['contactId']}"
        thumbs = {"type": "emoji", "emoji": "👍"}
        added = await bob.cmd_json(f"/_reaction {bob_ref} {bob_item} on", thumbs)
        assert added["type"] == "chatItemReaction" and added["added"] is True
        reaction = added["reaction"]["chatReaction"]
        assert reaction["chatDir"] == {"type": "directSnd"}
        assert reaction["chatItem"]["reactions"] == [
            {"reaction": thumbs, "userReacted": True, "totalReacted": 1}
        ]
        event = await alice.next_event("chatItemReaction")
        assert event["added"] is True
        assert event["reaction"]["chatReaction"]["chatDir"] == {"type": "directRcv"}
        assert event["reaction"]["chatReaction"]["chatItem"]["meta"]["itemId"] == item_id
        assert event["reaction"]["chatReaction"]["chatItem"]["reactions"] == [
            {"reaction": thumbs, "userReacted": False, "totalReacted": 1}
        ]
        again = await bob.error(f"/_reaction {bob_ref} {bob_item} on {_json(thumbs)}")
        assert again["errorType"] == {"type": "commandError", "message": "reaction already added"}
        for emoji in ("😀", "🚀"):
            await bob.cmd_json(
                f"/_reaction {bob_ref} {bob_item} on", {"type": "emoji", "emoji": emoji}
            )
        too_many = await bob.error(
            f"/_reaction {bob_ref} {bob_item} on " + _json({"type": "emoji", "emoji": "✅"})
        )
        assert too_many["errorType"]["message"] == "too many reactions"
        removed = await bob.cmd_json(f"/_reaction {bob_ref} {bob_item} off", thumbs)
        assert removed["added"] is False
        assert thumbs not in [
            r["reaction"] for r in removed["reaction"]["chatReaction"]["chatItem"]["reactions"]
        ]
        assert (await alice.next_event("chatItemReaction"))["added"] is True
        await alice.next_event("chatItemReaction")
        assert (await alice.next_event("chatItemReaction"))["added"] is False
        unknown = await bob.error(
            f"/_reaction {bob_ref} {bob_item} on " + _json({"type": "emoji", "emoji": "🦀"})
        )
        assert unknown["errorType"]["type"] == "commandError"


async def test_a_reaction_in_a_group_names_the_member() -> None:
    async with World(websocket=True) as w:
        alice, bob, _, _ = await _pair(w)
        ids = await w.group(alice, [bob], name="club")
        await alice.send(f"#{ids['alice']}", "group post")
        got = await bob.message("group post")
        item = got["chatItems"][0]["chatItem"]["meta"]["itemId"]
        heart = {"type": "emoji", "emoji": "❤"}
        await bob.cmd_json(f"/_reaction #{ids['bob']} {item} on", heart)
        event = await alice.next_event("chatItemReaction")
        direction = event["reaction"]["chatReaction"]["chatDir"]
        assert direction["type"] == "groupRcv"
        assert direction["groupMember"]["memberProfile"]["displayName"] == "bob"


async def test_forwarded_items_say_where_they_come_from() -> None:
    async with World(websocket=True) as w:
        alice, bob, a_contact, b_contact = await _pair(w)
        carol = await w.user("carol", display_name="carol")
        a_carol, _ = await w.connect(alice, carol)
        await bob.send(f"@{b_contact['contactId']}", "pass it on")
        got = await alice.message("pass it on")
        item_id = got["chatItems"][0]["chatItem"]["meta"]["itemId"]
        forwarded = await alice.cmd(
            f"/_forward @{a_carol['contactId']} @{a_contact['contactId']} {item_id}"
        )
        assert forwarded["type"] == "newChatItems"
        meta = forwarded["chatItems"][0]["chatItem"]["meta"]
        assert meta["itemForwarded"] == {
            "type": "contact",
            "chatName": "bob",
            "msgDir": "rcv",
            "contactId": a_contact["contactId"],
            "chatItemId": item_id,
        }
        at_carol = await carol.message("pass it on")
        assert at_carol["chatItems"][0]["chatItem"]["meta"]["itemForwarded"] == {"type": "unknown"}
        missing = await alice.error(
            f"/_forward @{a_carol['contactId']} @{a_contact['contactId']} 999"
        )
        assert missing["storeError"]["type"] == "chatItemNotFound"


async def test_reading_a_user_reads_every_chat() -> None:
    async with World(websocket=True) as w:
        alice, bob, _, b_contact = await _pair(w)
        for text in ("one", "two"):
            await bob.send(f"@{b_contact['contactId']}", text)
            await alice.message(text)
        assert (await alice.cmd("/users"))["users"][0]["unreadCount"] > 0
        assert (await alice.cmd(f"/_read user {alice.user_id}"))["type"] == "cmdOk"
        assert (await alice.cmd("/users"))["users"][0]["unreadCount"] == 0
        await bob.send(f"@{b_contact['contactId']}", "three")
        await alice.message("three")
        assert (await alice.cmd("/read user"))["type"] == "cmdOk"
        assert (await alice.cmd("/users"))["users"][0]["unreadCount"] == 0


async def test_aliases_of_contacts_groups_and_pending_connections() -> None:
    async with World(websocket=True) as w:
        alice, bob, a_contact, _ = await _pair(w)
        renamed = await alice.cmd(f"/_set alias @{a_contact['contactId']} Bobby")
        assert renamed["type"] == "contactAliasUpdated"
        assert renamed["toContact"]["profile"]["localAlias"] == "Bobby"
        cleared = await alice.cmd(f"/_set alias @{a_contact['contactId']}")
        assert cleared["toContact"]["profile"]["localAlias"] == ""
        ids = await w.group(alice, [bob], name="crew")
        group = await alice.cmd(f"/_set alias #{ids['alice']} the crew")
        assert group["type"] == "groupAliasUpdated" and group["toGroup"]["localAlias"] == "the crew"
        invitation = await alice.cmd(f"/_connect {alice.user_id}")
        conn_id = invitation["connection"]["pccConnId"]
        pending = await alice.cmd(f"/_set alias :{conn_id} for dave")
        assert pending["type"] == "connectionAliasUpdated"
        assert pending["toConnection"]["localAlias"] == "for dave"


async def test_connect_with_only_the_incognito_flag_creates_an_invitation() -> None:
    async with World(websocket=True) as w:
        alice = await w.user("alice")
        for flag in ("on", "off"):
            created = await alice.cmd(f"/_connect {alice.user_id} incognito={flag}")
            assert created["type"] == "invitation"
            assert ("customUserProfileId" in created["connection"]) is (flag == "on")


async def test_address_settings_need_business_address() -> None:
    async with World(websocket=True) as w:
        alice = await w.user("alice")
        await alice.cmd(f"/_address {alice.user_id}")
        failed = await alice.error(f'/_address_settings {alice.user_id} {{"autoAccept": {{}}}}')
        assert failed["type"] == "error"
        assert failed["errorType"]["type"] == "commandError"
        assert "businessAddress" in failed["errorType"]["message"]
        # decoded before the user is looked up, as the core's parser decodes it
        failed = await alice.error('/_address_settings 999 {"autoAccept": {}}')
        assert failed["errorType"]["type"] == "commandError"
        done = await alice.cmd_json(
            f"/_address_settings {alice.user_id}", {"businessAddress": False}
        )
        assert done["contactLink"]["addressSettings"] == {"businessAddress": False}


def _json(value: Any) -> str:
    return dumps(value)
