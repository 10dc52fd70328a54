"""Simulated network, in process: users, addresses, invitations, plans and direct messages."""

from __future__ import annotations

import pytest
from simkit import World, text_item

from simplex_protocols._framing import MSG_NEW_ENVELOPE_BYTES
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES

pytestmark = pytest.mark.anyio


async def test_new_user_has_user_row_preset_contact_and_notes_folder() -> None:
    async with World() as w:
        alice = await w.user("alice", peer_type="agent")
        user = (await alice.cmd("/user"))["user"]
        assert user["userId"] == 1
        assert user["userContactId"] == 1
        assert user["profile"]["peerType"] == "agent"
        chats = (await alice.cmd("/_get chats 1 pcc=off"))["chats"]
        names = [c["chatInfo"]["contact"]["localDisplayName"] for c in chats]
        assert names == ["Ask SimpleX Team"]
        team = chats[0]["chatInfo"]["contact"]
        assert team["contactId"] == 2
        assert "activeConn" not in team


async def test_no_user_yet_is_no_active_user_error() -> None:
    async with World() as w:
        c = await w.attach("nobody")
        err = await c.error("/user")
        assert err == {"type": "error", "errorType": {"type": "noActiveUser"}}


async def test_duplicate_and_invalid_display_names_are_refused() -> None:
    async with World() as w:
        alice = await w.user("alice")
        err = await alice.error(
            '/_create user {"profile":{"displayName":"alice","fullName":""},"pastTimestamp":false}'
        )
        assert err["errorType"] == {"type": "userExists", "contactName": "alice"}
        err = await alice.error(
            '/_create user {"profile":{"displayName":"a,b","fullName":""},"pastTimestamp":false}'
        )
        assert err["errorType"]["type"] == "invalidDisplayName"


async def test_two_users_connect_by_address_and_exchange_quote_and_reply() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob", peer_type="bot")
        link = await w.address(bob)
        assert link.startswith("https://smp") and "/a#" in link

        sent = await alice.cmd(f"/_connect {alice.user_id} {link}")
        assert sent["type"] == "sentInvitation"
        pcc_id = sent["connection"]["pccConnId"]
        accepting = await bob.event("acceptingContactRequest")
        assert accepting["contact"]["profile"]["displayName"] == "alice"
        a_contact = (await alice.event("contactConnected"))["contact"]
        b_contact = (await bob.event("contactConnected"))["contact"]
        # the pending connection becomes the contact's connection
        assert a_contact["activeConn"]["connId"] == pcc_id
        assert a_contact["activeConn"]["connStatus"] == {"type": "ready"}
        assert a_contact["profile"]["peerType"] == "bot"
        a_cid, b_cid = a_contact["contactId"], b_contact["contactId"]
        assert (a_cid, b_cid) == (3, 3)  # 1: the user's own contact, 2: the preset contact

        r = await alice.cmd_json(
            f"/_send @{a_cid} json",
            [{"msgContent": {"type": "text", "text": "trail running shoes"}}],
        )
        [(sent_id, direction, _)] = text_item(r)
        assert direction == "directSnd"
        assert r["chatItems"][0]["chatItem"]["meta"]["itemStatus"] == {"type": "sndNew"}
        got = await bob.event("newChatItems")
        [(rcv_id, direction, text)] = text_item(got)
        assert (direction, text) == ("directRcv", "trail running shoes")
        assert got["chatItems"][0]["chatItem"]["meta"]["itemStatus"] == {"type": "rcvNew"}
        statuses = [await alice.event("chatItemsStatusesUpdated") for _ in range(2)]
        assert [s["chatItems"][0]["chatItem"]["meta"]["itemStatus"]["type"] for s in statuses] == [
            "sndSent",
            "sndRcvd",
        ]

        reply = await bob.cmd_json(
            f"/_send @{b_cid} json",
            [{"msgContent": {"type": "text", "text": "Ridgecrest, $142"}, "quotedItemId": rcv_id}],
        )
        quoted = reply["chatItems"][0]["chatItem"]["quotedItem"]
        assert quoted["itemId"] == rcv_id and quoted["chatDir"] == {"type": "directRcv"}
        answer = await alice.event("newChatItems")
        item = answer["chatItems"][0]["chatItem"]
        assert item["quotedItem"]["itemId"] == sent_id
        assert item["quotedItem"]["chatDir"] == {"type": "directSnd"}
        assert item["quotedItem"]["content"] == {"type": "text", "text": "trail running shoes"}
        # item IDs grow across the database: the reply's ID is above the sent one
        assert item["meta"]["itemId"] > sent_id

        page = await alice.cmd(f"/_get chat @{a_cid} count=10")
        assert [i["meta"]["itemText"] for i in page["chat"]["chatItems"]] == [
            "trail running shoes",
            "Ridgecrest, $142",
        ]
        assert page["chat"]["chatStats"]["unreadCount"] == 0  # count= returns empty stats


async def test_one_time_invitation_link() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        inv = await alice.cmd(f"/_connect {alice.user_id}")
        assert inv["type"] == "invitation"
        short = inv["connLinkInvitation"]["connShortLink"]
        assert "/i#" in short
        plan = await bob.cmd(f"/_connect plan {bob.user_id} {short}")
        assert plan["connectionPlan"]["type"] == "invitationLink"
        assert plan["connectionPlan"]["invitationLinkPlan"]["type"] == "ok"
        own = await alice.cmd(f"/_connect plan {alice.user_id} {short}")
        assert own["connectionPlan"]["invitationLinkPlan"] == {"type": "ownLink"}
        conf = await bob.cmd(f"/_connect {bob.user_id} {short}")
        assert conf["type"] == "sentConfirmation"
        assert (await alice.event("contactConnecting"))["contact"]["profile"][
            "displayName"
        ] == "bob"
        a_contact = (await alice.event("contactConnected"))["contact"]
        assert a_contact["activeConn"]["connId"] == inv["connection"]["pccConnId"]
        await bob.event("contactConnected")
        known = await bob.cmd(f"/_connect plan {bob.user_id} {short}")
        assert known["connectionPlan"]["invitationLinkPlan"]["type"] == "known"
        # a used one-time link is gone from the router
        carol = await w.user("carol")
        err = await carol.error(f"/_connect {carol.user_id} {short}")
        assert err["type"] == "errorAgent"
        assert err["agentError"]["smpErr"] == {"type": "AUTH"}


async def test_address_plans_ok_own_known_and_contact_via_address() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        link = await w.address(
            bob,
            settings={
                "businessAddress": False,
                "autoAccept": {"acceptIncognito": False},
                "serves": ["agent", "human"],
            },
        )
        plan = (await alice.cmd(f"/_connect plan {alice.user_id} {link}"))["connectionPlan"]
        ok = plan["contactAddressPlan"]
        assert ok["type"] == "ok"
        assert ok["contactSLinkData_"]["business"] is False
        assert ok["contactSLinkData_"]["serves"] == ["agent", "human"]
        own = (await bob.cmd(f"/_connect plan {bob.user_id} {link}"))["connectionPlan"]
        assert own["contactAddressPlan"] == {"type": "ownLink"}
        await w.connect(alice, bob, link)
        known = (await alice.cmd(f"/_connect plan {alice.user_id} {link}"))["connectionPlan"]
        assert known["contactAddressPlan"]["type"] == "known"
        again = await alice.cmd(f"/_connect {alice.user_id} {link}")
        assert again["type"] == "contactAlreadyExists"
        # a contact card whose profile names the address: contactViaAddress
        carol = await w.user("carol")
        await bob.cmd_json(
            f"/_profile {bob.user_id}", {"displayName": "bob", "fullName": "", "contactLink": link}
        )
        card = w.network.core("carol").ctx
        carol_user = card.db.users[carol.user_id]
        card.new_contact(
            carol_user,
            card.new_profile({"displayName": "bob", "fullName": "", "contactLink": link}),
        )
        via = (await carol.cmd(f"/_connect plan {carol.user_id} {link}"))["connectionPlan"]
        assert via["contactAddressPlan"]["type"] == "contactViaAddress"
        started = await carol.cmd(
            f"/_connect contact {carol.user_id} {via['contactAddressPlan']['contact']['contactId']}"
        )
        assert started["type"] == "sentInvitationToContact"
        await carol.event("contactConnected")


async def test_request_without_auto_accept_and_accept() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        link = await w.address(bob, settings={"businessAddress": False})
        await alice.cmd(f"/_connect {alice.user_id} {link}")
        req = await bob.event("receivedContactRequest")
        req_id = req["contactRequest"]["contactRequestId"]
        pending = (await alice.cmd(f"/_connect plan {alice.user_id} {link}"))["connectionPlan"]
        assert pending["contactAddressPlan"] == {"type": "connectingConfirmReconnect"}
        accepted = await bob.cmd(f"/_accept {req_id}")
        assert accepted["type"] == "acceptingContactRequest"
        await alice.event("contactConnected")
        await bob.event("contactConnected")
        err = await bob.error(f"/_accept {req_id}")
        assert err == {
            "type": "errorStore",
            "storeError": {"type": "contactRequestNotFound", "contactRequestId": req_id},
        }


async def test_prepared_contact_with_welcome_and_request_message() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob", peer_type="bot")
        link = await w.address(
            bob,
            settings={
                "businessAddress": False,
                "autoAccept": {"acceptIncognito": False},
                "autoReply": {"type": "text", "text": "Welcome!"},
            },
        )
        plan = await alice.cmd(f"/_connect plan {alice.user_id} {link}")
        data = plan["connectionPlan"]["contactAddressPlan"]["contactSLinkData_"]
        assert data["message"] == {"type": "text", "text": "Welcome!"}
        cl = plan["connLink"]
        prepared = await alice.cmd_json(
            f"/_prepare contact {alice.user_id} {cl['connFullLink']} {cl['connShortLink']}", data
        )
        assert prepared["type"] == "newPreparedChat"
        chat = prepared["chat"]
        contact = chat["chatInfo"]["contact"]
        assert "activeConn" not in contact and contact["preparedContact"]["uiConnLinkType"] == "con"
        assert chat["chatStats"]["unreadCount"] == 1
        assert chat["chatStats"]["minUnreadItemId"] == chat["chatItems"][0]["meta"]["itemId"]
        cid = contact["contactId"]
        started = await alice.cmd(f"/_connect contact @{cid} incognito=off text hello there")
        assert started["type"] == "startedConnectionToContact"
        connected = await alice.event("contactConnected")
        assert connected["contact"]["contactId"] == cid
        got = await bob.event("newChatItems")
        assert text_item(got)[0][2] == "hello there"
        await bob.settle()
        # the welcome was shown from the link data: bob does not send it again
        assert all(
            "Welcome!" not in [t for _, _, t in text_item(e)] for e in alice.all("newChatItems")
        )
        stats = (await alice.cmd(f"/_get chat @{cid} initial=10"))["chat"]["chatStats"]
        assert stats["unreadCount"] == 1


async def test_welcome_is_sent_after_plain_connect() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        link = await w.address(
            bob,
            settings={
                "businessAddress": False,
                "autoAccept": {"acceptIncognito": False},
                "autoReply": {"type": "text", "text": "Welcome!"},
            },
        )
        await w.connect(alice, bob, link)
        got = await alice.event("newChatItems")
        assert text_item(got)[0][1:] == ("directRcv", "Welcome!")


async def test_incognito_connection_uses_a_random_profile_with_the_peer_type() -> None:
    async with World() as w:
        alice = await w.user("alice", peer_type="agent")
        bob = await w.user("bob")
        link = await w.address(bob)
        sent = await alice.cmd(f"/_connect {alice.user_id} incognito=on {link}")
        custom = sent["customUserProfile"]
        assert custom["displayName"] != "alice" and custom["peerType"] == "agent"
        contact = (await alice.event("contactConnected"))["contact"]
        assert "customUserProfileId" in contact["activeConn"]
        seen = (await bob.event("contactConnected"))["contact"]
        assert seen["profile"]["displayName"] == custom["displayName"]
        info = await alice.cmd(f"/_info @{contact['contactId']}")
        assert info["customUserProfile"]["displayName"] == custom["displayName"]


async def test_message_size_limit_is_the_cores() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        a_contact, _ = await w.connect(alice, bob, await w.address(bob))
        cid = a_contact["contactId"]
        fits = "x" * (MAX_CHAT_MESSAGE_BYTES - MSG_NEW_ENVELOPE_BYTES)
        r = await alice.cmd_json(
            f"/_send @{cid} json", [{"msgContent": {"type": "text", "text": fits}}]
        )
        assert r["type"] == "newChatItems"
        err = await alice.error(
            f"/_send @{cid} json " + '[{"msgContent":{"type":"text","text":"' + fits + 'x"}}]'
        )
        assert err == {"type": "errorStore", "storeError": {"type": "largeMsg"}}
        # escapes count: 1 newline is 2 bytes of JSON
        escaped = "\n" * ((MAX_CHAT_MESSAGE_BYTES - MSG_NEW_ENVELOPE_BYTES) // 2 + 1)
        err = await alice.error(f"/_send @{cid} text {escaped}")
        assert err["storeError"]["type"] == "largeMsg"


async def test_commands_that_do_not_parse_get_command_error() -> None:
    async with World() as w:
        alice = await w.user("alice")
        for bad in (
            "/_send @x json []",
            "/nonsense",
            "/_get chat @3 count=",
            "",
            "/_create user {not json",
        ):
            err = await alice.error(bad)
            assert err["type"] == "error"
            assert err["errorType"]["type"] == "commandError"
            assert isinstance(err["errorType"]["message"], str)


async def test_frame_that_is_not_a_request_gets_invalid_request() -> None:
    async with World() as w:
        await w.user("alice")
        backend = w.network.backend("alice")
        await backend.connect()
        await backend.send_frame({"cmd": "/user"})
        frame = await backend.receive_frame()
        assert frame == {
            "resp": {
                "type": "chatCmdError",
                "chatError": {
                    "type": "error",
                    "errorType": {"type": "commandError", "message": "invalid request"},
                },
            }
        }
        await backend.aclose()


async def test_edit_live_message_and_delete() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        a_contact, _ = await w.connect(alice, bob, await w.address(bob))
        cid = a_contact["contactId"]
        live = await alice.cmd(f"/_send @{cid} live=on text draft")
        item_id = live["chatItems"][0]["chatItem"]["meta"]["itemId"]
        assert live["chatItems"][0]["chatItem"]["meta"]["itemLive"] is True
        got = await bob.event("newChatItems")
        assert got["chatItems"][0]["chatItem"]["meta"]["itemLive"] is True
        upd = await alice.cmd(f"/_update item @{cid} {item_id} live=on text draft two")
        assert upd["type"] == "chatItemUpdated"
        ev = await bob.event("chatItemUpdated")
        assert ev["chatItem"]["chatItem"]["meta"]["itemText"] == "draft two"
        assert ev["chatItem"]["chatItem"]["meta"]["itemLive"] is True
        final = await alice.cmd(f"/_update item @{cid} {item_id} text final")
        assert final["chatItem"]["chatItem"]["meta"]["itemLive"] is False
        ev = await bob.event("chatItemUpdated")
        assert ev["chatItem"]["chatItem"]["meta"]["itemLive"] is False
        same = await alice.cmd(f"/_update item @{cid} {item_id} text final")
        assert same["type"] == "chatItemNotChanged"
        edited = await alice.cmd(f"/_update item @{cid} {item_id} text edited")
        assert edited["chatItem"]["chatItem"]["meta"]["itemEdited"] is True
        rcv_id = ev["chatItem"]["chatItem"]["meta"]["itemId"]
        b_cid = ev["chatItem"]["chatInfo"]["contact"]["contactId"]
        err = await bob.error(f"/_update item @{b_cid} {rcv_id} text mine now")
        assert err["errorType"] == {"type": "invalidChatItemUpdate"}
        deleted = await alice.cmd(f"/_delete item @{cid} {item_id} broadcast")
        assert deleted["type"] == "chatItemsDeleted"
        assert "itemDeleted" in deleted["chatItemDeletions"][0]["toChatItem"]["chatItem"]["meta"]
        ev = await bob.event("chatItemsDeleted")
        assert ev["byUser"] is False


async def test_edit_window_is_24_hours_on_the_clock() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        a_contact, _ = await w.connect(alice, bob, await w.address(bob))
        cid = a_contact["contactId"]
        item_id = (await alice.cmd(f"/_send @{cid} text hi"))["chatItems"][0]["chatItem"]["meta"][
            "itemId"
        ]
        await w.clock.advance(24 * 3600 + 1)
        err = await alice.error(f"/_update item @{cid} {item_id} text late")
        assert err["errorType"] == {"type": "invalidChatItemUpdate"}


async def test_paging_forms_of_get_chat_and_read_items() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        a_contact, b_contact = await w.connect(alice, bob, await w.address(bob))
        for n in range(6):
            await bob.cmd(f"/_send @{b_contact['contactId']} text m{n}")
        for _ in range(6):
            await alice.event("newChatItems")
        cid = a_contact["contactId"]
        initial = await alice.cmd(f"/_get chat @{cid} initial=2")
        stats = initial["chat"]["chatStats"]
        assert stats["unreadCount"] == 6
        first = stats["minUnreadItemId"]
        around = await alice.cmd(f"/_get chat @{cid} around={first} count=0")
        assert [i["meta"]["itemId"] for i in around["chat"]["chatItems"]] == [first]
        after = await alice.cmd(f"/_get chat @{cid} after={first} count=3")
        ids = [i["meta"]["itemId"] for i in after["chat"]["chatItems"]]
        assert len(ids) == 3 and ids[0] > first and ids == sorted(ids)
        before = await alice.cmd(f"/_get chat @{cid} before={ids[-1]} count=2")
        assert [i["meta"]["itemId"] for i in before["chat"]["chatItems"]] == ids[:2]
        last = await alice.cmd(f"/_get chat @{cid} count=2")
        assert [i["meta"]["itemText"] for i in last["chat"]["chatItems"]] == ["m4", "m5"]
        assert last["chat"]["chatStats"] == {
            "unreadCount": 0,
            "unreadMentions": 0,
            "reportsCount": 0,
            "minUnreadItemId": 0,
            "unreadChat": False,
        }
        read = await alice.cmd(f"/_read chat items @{cid} {first},{ids[0]}")
        assert read["type"] == "itemsReadForChat"
        stats = (await alice.cmd(f"/_get chat @{cid} initial=2"))["chat"]["chatStats"]
        assert stats["unreadCount"] == 4
        chats = (await alice.cmd(f"/_get chats {alice.user_id} pcc=off count=1"))["chats"]
        assert chats[0]["chatStats"]["unreadCount"] == 4
        assert chats[0]["chatItems"][0]["meta"]["itemText"] == "m5"
        err = await alice.error(f"/_get chat @{cid} around=999 count=0")
        assert err == {
            "type": "errorStore",
            "storeError": {"type": "chatItemNotFound", "itemId": 999},
        }
        err = await alice.error("/_get chat @77 count=1")
        assert err == {
            "type": "errorStore",
            "storeError": {"type": "contactNotFound", "contactId": 77},
        }


async def test_custom_data_profile_update_and_contact_deletion() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        a_contact, b_contact = await w.connect(alice, bob, await w.address(bob))
        cid = a_contact["contactId"]
        ok = await alice.cmd_json(f"/_set custom @{cid}", {"simplexMcp": {"approvedBy": "Alice"}})
        assert ok["type"] == "cmdOk"
        info = await alice.cmd(f"/_info @{cid}")
        assert info["contact"]["customData"] == {"simplexMcp": {"approvedBy": "Alice"}}
        await alice.cmd(f"/_set custom @{cid}")
        assert "customData" not in (await alice.cmd(f"/_info @{cid}"))["contact"]
        prefs = {
            "commands": [{"type": "command", "keyword": "help", "label": "Help"}],
            "protocols": {
                "mcp": {"versions": ["2026-07-28"], "transports": {"chat": True, "rpc": True}}
            },
        }
        upd = await bob.cmd_json(
            f"/_profile {bob.user_id}",
            {"displayName": "bob", "fullName": "", "peerType": "bot", "preferences": prefs},
        )
        assert upd["type"] == "userProfileUpdated"
        changed = await alice.event("contactUpdated")
        # DECL-PROTO-2: preferences are kept as received, unknown keys included
        assert changed["toContact"]["profile"]["preferences"] == prefs
        same = await bob.cmd_json(
            f"/_profile {bob.user_id}",
            {"displayName": "bob", "fullName": "", "peerType": "bot", "preferences": prefs},
        )
        assert same["type"] == "userProfileNoChange"
        deleted = await alice.cmd(f"/_delete @{cid} full notify=on")
        assert deleted["type"] == "contactDeleted"
        gone = await bob.event("contactDeletedByContact")
        assert gone["contact"]["contactId"] == b_contact["contactId"]
