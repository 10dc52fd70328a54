"""Simulated network, in process: groups, group links, roles, business chats, channels, names."""

from __future__ import annotations

import pytest
from simkit import Client, World, text_item

from simplex_protocols._wire import dumps

pytestmark = pytest.mark.anyio

MCP_PROTOCOLS = {"mcp": {"versions": ["2026-07-28"], "transports": {"chat": True, "rpc": True}}}


async def _group_of_three(w: World) -> tuple[Client, Client, Client, int, dict[str, int]]:
    """alice owns #team; bob and carol join by its link. Returns alice's group ID and the
    group member IDs of bob and carol in alice's database."""
    alice = await w.user("alice")
    bob = await w.user("bob")
    carol = await w.user("carol")
    created = await alice.cmd_json(
        f"/_group {alice.user_id}", {"displayName": "team", "fullName": ""}
    )
    g = created["groupInfo"]
    assert g["membership"]["memberRole"] == "owner"
    assert g["membership"]["memberStatus"] == "creator"
    gid = g["groupId"]
    link = (await alice.cmd(f"/_create link #{gid} member"))["groupLink"]
    short = link["connLinkContact"]["connShortLink"]
    assert "/g#" in short
    ids = {}
    for joiner in (bob, carol):
        sent = await joiner.cmd(f"/_connect {joiner.user_id} {short}")
        assert sent["type"] == "sentInvitation"
        joined = await joiner.event("userJoinedGroup")
        # the group link's pending connection becomes the host member's connection
        assert joined["hostMember"]["activeConn"]["connId"] == sent["connection"]["pccConnId"]
        assert joined["groupInfo"]["membership"]["memberStatus"] == "connected"
        assert joined["groupInfo"]["membership"]["memberRole"] == "member"
        member = (await alice.event("joinedGroupMember"))["member"]
        ids[joiner.name] = member["groupMemberId"]
    # bob hears of carol through the host, then both connect to each other
    connecting = await bob.event("joinedGroupMemberConnecting")
    assert connecting["member"]["memberProfile"]["displayName"] == "carol"
    assert (await bob.event("connectedToGroupMember"))["member"]["memberProfile"][
        "displayName"
    ] == "carol"
    assert (await carol.event("connectedToGroupMember"))["member"]["memberProfile"][
        "displayName"
    ] == "bob"
    return alice, bob, carol, gid, ids


async def test_group_of_three_with_a_mention() -> None:
    async with World() as w:
        alice, bob, carol, gid, _ids = await _group_of_three(w)
        members = (await alice.cmd(f"/_members #{gid}"))["group"]["members"]
        assert sorted(m["memberProfile"]["displayName"] for m in members) == ["bob", "carol"]
        bob_gid = (await bob.cmd(f"/_groups {bob.user_id}"))["groups"][0]["groupId"]
        bob_members = (await bob.cmd(f"/_members #{bob_gid}"))["group"]["members"]
        carol_id = next(
            m["groupMemberId"] for m in bob_members if m["memberProfile"]["displayName"] == "carol"
        )
        sent = await bob.cmd_json(
            f"/_send #{bob_gid} json",
            [
                {
                    "msgContent": {"type": "text", "text": "@carol which size?"},
                    "mentions": {"carol": carol_id},
                }
            ],
        )
        item = sent["chatItems"][0]["chatItem"]
        assert item["chatDir"] == {"type": "groupSnd"}
        assert item["mentions"]["carol"]["memberRef"]["groupMemberId"] == carol_id
        got = await carol.message()
        c_item = got["chatItems"][0]["chatItem"]
        assert c_item["chatDir"]["type"] == "groupRcv"
        assert c_item["chatDir"]["groupMember"]["memberProfile"]["displayName"] == "bob"
        assert c_item["meta"]["userMention"] is True
        assert (
            c_item["mentions"]["carol"]["memberId"]
            == got["chatItems"][0]["chatInfo"]["groupInfo"]["membership"]["memberId"]
        )
        a_item = (await alice.message())["chatItems"][0]["chatItem"]
        assert a_item["meta"]["userMention"] is False
        # a reply that quotes it
        rcv_id = c_item["meta"]["itemId"]
        carol_gid = got["chatItems"][0]["chatInfo"]["groupInfo"]["groupId"]
        await carol.cmd_json(
            f"/_send #{carol_gid} json",
            [{"msgContent": {"type": "text", "text": "44"}, "quotedItemId": rcv_id}],
        )
        back = await bob.message("44")
        assert back["chatItems"][0]["chatItem"]["quotedItem"]["itemId"] == item["meta"]["itemId"]
        assert back["chatItems"][0]["chatItem"]["quotedItem"]["chatDir"] == {"type": "groupSnd"}
        # mentions are read from the text's Markdown, as the core reads them: a text without
        # formatting keeps none (they are dropped), a name the text does not mention, more
        # than 3, or one member twice is refused, and the member must be in the group
        plain = await bob.cmd_json(
            f"/_send #{bob_gid} json",
            [{"msgContent": {"type": "text", "text": "x"}, "mentions": {"x": carol_id}}],
        )
        assert plain["chatItems"][0]["chatItem"]["mentions"] == {}
        for text, mentions in (
            ("hi @carol", {"bob": carol_id}),
            ("/ask @carol", {"carol": carol_id}),  # a one-line command has no mentions
            ("@a @b", {"a": carol_id, "b": carol_id}),
            ("@a @b @c @d", {"a": 1, "b": 2, "c": 3, "d": 4}),
        ):
            err = await bob.error(
                f"/_send #{bob_gid} json "
                + dumps([{"msgContent": {"type": "text", "text": text}, "mentions": mentions}])
            )
            assert err == {"type": "errorStore", "storeError": {"type": "invalidMention"}}, text
        err = await bob.error(
            f"/_send #{bob_gid} json "
            + dumps([{"msgContent": {"type": "text", "text": "@x hi"}, "mentions": {"x": 9999}}])
        )
        assert err == {
            "type": "errorStore",
            "storeError": {"type": "groupMemberNotFound", "groupMemberId": 9999},
        }


async def test_roles_removal_leaving_and_group_deletion() -> None:
    async with World() as w:
        alice, bob, carol, gid, ids = await _group_of_three(w)
        changed = await alice.cmd(f"/_member role #{gid} {ids['bob']} observer")
        assert changed["type"] == "membersRoleUser" and changed["toRole"] == "observer"
        ev = await bob.event("memberRole")
        assert ev["member"]["groupMemberId"] == ev["groupInfo"]["membership"]["groupMemberId"]
        assert (ev["fromRole"], ev["toRole"]) == ("member", "observer")
        assert (await carol.event("memberRole"))["toRole"] == "observer"
        bob_gid = ev["groupInfo"]["groupId"]
        err = await bob.error(f"/_send #{bob_gid} text hello")
        assert err["errorType"]["type"] == "groupUserRole"
        assert err["errorType"]["requiredRole"] == "author"
        err = await bob.error(f"/_member role #{bob_gid} {ev['byMember']['groupMemberId']} member")
        assert err["errorType"]["type"] == "groupUserRole"
        # removal
        removed = await alice.cmd(f"/_remove #{gid} {ids['carol']}")
        assert removed["type"] == "userDeletedMembers"
        assert (await carol.event("deletedMemberUser"))["groupInfo"]["membership"][
            "memberStatus"
        ] == "removed"
        deleted = await bob.event("deletedMember")
        assert deleted["deletedMember"]["memberProfile"]["displayName"] == "carol"
        # leaving
        left = await bob.cmd(f"/_leave #{bob_gid}")
        assert left["type"] == "leftMemberUser"
        assert (await alice.event("leftMember"))["member"]["groupMemberId"] == ids["bob"]
        # a former member deletes the group; an owner deletes it with notification
        assert (await bob.cmd(f"/_delete #{bob_gid} full"))["type"] == "groupDeletedUser"
        dave = await w.user("dave")
        link = (await alice.cmd(f"/_get link #{gid}"))["groupLink"]["connLinkContact"][
            "connShortLink"
        ]
        await dave.cmd(f"/_connect {dave.user_id} {link}")
        dave_gid = (await dave.event("userJoinedGroup"))["groupInfo"]["groupId"]
        err = await dave.error(f"/_delete #{dave_gid} full notify=on")
        assert err["errorType"] == {
            "type": "groupUserRole",
            "groupInfo": err["errorType"]["groupInfo"],
            "requiredRole": "owner",
        }
        await alice.cmd(f"/_delete #{gid} full notify=on")
        assert (await dave.event("groupDeleted"))["member"]["memberRole"] == "owner"


async def test_group_profile_update_custom_data_and_link_role() -> None:
    async with World() as w:
        alice, bob, _carol, gid, _ = await _group_of_three(w)
        profile = {
            "displayName": "team",
            "fullName": "",
            "groupPreferences": {
                "history": {"enable": "on"},
                "commands": [{"type": "command", "keyword": "pending", "label": "Pending actions"}],
                "protocols": MCP_PROTOCOLS,
            },
        }
        upd = await alice.cmd_json(f"/_group_profile #{gid}", profile)
        assert upd["type"] == "groupUpdated"
        assert upd["toGroup"]["fullGroupPreferences"]["history"] == {"enable": "on"}
        ev = await bob.event("groupUpdated")
        assert ev["toGroup"]["groupProfile"]["groupPreferences"]["protocols"] == MCP_PROTOCOLS
        assert ev["member_"]["memberRole"] == "owner"
        bob_gid = ev["toGroup"]["groupId"]
        err = await bob.error(
            f"/_group_profile #{bob_gid} " + '{"displayName":"mine","fullName":""}'
        )
        assert err["errorType"]["requiredRole"] == "owner"
        await alice.cmd_json(
            f"/_set custom #{gid}", {"simplexMcp": {"control": True, "nextAction": 1}}
        )
        groups = (await alice.cmd(f"/_groups {alice.user_id}"))["groups"]
        assert groups[0]["customData"] == {"simplexMcp": {"control": True, "nextAction": 1}}
        err = await alice.error(f"/_create link #{gid} member")
        assert err["storeError"]["type"] == "duplicateGroupLink"
        err = await alice.error(f"/_set link role #{gid} admin")
        assert err["errorType"]["type"] == "groupMemberInitialRole"
        assert (await alice.cmd(f"/_set link role #{gid} observer"))["groupLink"][
            "acceptMemberRole"
        ] == "observer"
        assert (await alice.cmd(f"/_delete link #{gid}"))["type"] == "groupLinkDeleted"
        err = await alice.error(f"/_delete link #{gid}")
        assert err["storeError"]["type"] == "groupLinkNotFound"


async def test_history_is_sent_to_a_new_member_when_on() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        g = (
            await alice.cmd_json(
                f"/_group {alice.user_id}",
                {
                    "displayName": "news",
                    "fullName": "",
                    "groupPreferences": {"history": {"enable": "on"}},
                },
            )
        )["groupInfo"]
        await alice.cmd(f"/_send #{g['groupId']} text first post")
        link = (await alice.cmd(f"/_create link #{g['groupId']}"))["groupLink"]["connLinkContact"][
            "connShortLink"
        ]
        await bob.cmd(f"/_connect {bob.user_id} {link}")
        await bob.event("userJoinedGroup")
        got = await bob.message()
        assert text_item(got)[0][1:] == ("groupRcv", "first post")


async def test_add_member_by_invitation_and_join() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        carol = await w.user("carol")
        a_contact, _ = await w.connect(alice, bob, await w.address(bob))
        gid = (
            await alice.cmd_json(
                f"/_group {alice.user_id}", {"displayName": "club", "fullName": ""}
            )
        )["groupInfo"]["groupId"]
        link = (await alice.cmd(f"/_create link #{gid}"))["groupLink"]["connLinkContact"][
            "connShortLink"
        ]
        await carol.cmd(f"/_connect {carol.user_id} {link}")
        await carol.event("userJoinedGroup")
        sent = await alice.cmd(f"/_add #{gid} {a_contact['contactId']} member")
        assert sent["type"] == "sentGroupInvitation"
        inv = await bob.event("receivedGroupInvitation")
        assert inv["groupInfo"]["membership"]["memberStatus"] == "invited"
        item = (await bob.event("newChatItems"))["chatItems"][0]["chatItem"]
        assert item["content"]["type"] == "rcvGroupInvitation"
        joined = await bob.cmd(f"/_join #{inv['groupInfo']['groupId']}")
        assert joined["type"] == "userAcceptedGroupSent"
        assert joined["hostContact"]["profile"]["displayName"] == "alice"
        assert (await bob.event("userJoinedGroup"))["groupInfo"]["membership"][
            "memberStatus"
        ] == "connected"
        assert await alice.event(
            "joinedGroupMember", lambda e: e["member"]["memberProfile"]["displayName"] == "bob"
        )
        # the host introduces the new member to the others
        assert (await carol.event("joinedGroupMemberConnecting"))["member"]["memberProfile"][
            "displayName"
        ] == "bob"
        assert (await carol.event("connectedToGroupMember"))["member"]["memberProfile"][
            "displayName"
        ] == "bob"
        assert (await bob.event("connectedToGroupMember"))["member"]["memberProfile"][
            "displayName"
        ] == "carol"


@pytest.mark.requirement("DECL-PROTO-10")
async def test_business_address_creates_a_business_chat_with_protocols_copied() -> None:
    async with World() as w:
        alice = await w.user("alice", peer_type="agent")
        prefs = {
            "commands": [{"type": "command", "keyword": "help", "label": "Help"}],
            "protocols": MCP_PROTOCOLS,
        }
        shop = await w.user(
            "shop", display_name="Ridgeline", peer_type="business", preferences=prefs
        )
        link = await w.address(
            shop,
            settings={
                "businessAddress": True,
                "autoAccept": {"acceptIncognito": False},
                "autoReply": {"type": "text", "text": "How can we help?"},
            },
        )
        plan = await alice.cmd(f"/_connect plan {alice.user_id} {link}")
        data = plan["connectionPlan"]["contactAddressPlan"]["contactSLinkData_"]
        assert data["business"] is True
        cl = plan["connLink"]
        prepared = await alice.cmd_json(
            f"/_prepare contact {alice.user_id} {cl['connFullLink']} {cl['connShortLink']}", data
        )
        info = prepared["chat"]["chatInfo"]
        assert info["type"] == "group"
        g = info["groupInfo"]
        assert g["businessChat"]["chatType"] == "business"
        # DECL-PROTO-10: protocols copied into the chat's groupPreferences, as commands are
        assert g["groupProfile"]["groupPreferences"]["protocols"] == MCP_PROTOCOLS
        assert g["fullGroupPreferences"]["commands"] == prefs["commands"]
        assert prepared["chat"]["chatStats"]["unreadCount"] == 1
        started = await alice.cmd(
            f"/_connect group #{g['groupId']} incognito=on text Do you have trail shoes?"
        )
        assert started["type"] == "startedConnectionToGroup"
        assert started["customUserProfile"]["peerType"] == "agent"
        joined = await alice.event("userJoinedGroup")
        assert joined["groupInfo"]["groupId"] == g["groupId"]
        assert (
            joined["groupInfo"]["membership"]["memberProfile"]["profileId"]
            != joined["groupInfo"]["membership"]["memberContactProfileId"]
        )
        accepted = await shop.event("acceptingBusinessRequest")
        assert accepted["groupInfo"]["businessChat"]["chatType"] == "customer"
        assert (
            accepted["groupInfo"]["groupProfile"]["groupPreferences"]["protocols"] == MCP_PROTOCOLS
        )
        request = await shop.message()
        assert text_item(request)[0][1:] == ("groupRcv", "Do you have trail shoes?")
        await shop.event("joinedGroupMember")
        shop_gid = accepted["groupInfo"]["groupId"]
        await shop.cmd(f"/_send #{shop_gid} text Yes, size 44 in stock.")
        answer = await alice.message("Yes, size 44 in stock.")
        assert (
            answer["chatItems"][0]["chatItem"]["chatDir"]["groupMember"]["memberProfile"][
                "displayName"
            ]
            == "Ridgeline"
        )


async def test_channel_with_an_observer_and_public_group_record() -> None:
    async with World() as w:
        owner = await w.user("news", display_name="Ridgeline News")
        alice = await w.user("alice", peer_type="agent")
        created = await owner.cmd_json(
            f"/_public group {owner.user_id} 1",
            {
                "displayName": "Ridgeline News",
                "fullName": "",
                "description": "Trail news",
                "publicGroup": {"audience": ["human", "agent"], "changeFrequency": "weekly"},
                "groupPreferences": {"history": {"enable": "on"}},
            },
        )
        assert created["type"] == "publicGroupCreated"
        g = created["groupInfo"]
        pub = g["groupProfile"]["publicGroup"]
        assert (
            pub["groupType"] == "channel"
            and pub["audience"] == ["human", "agent"]
            and pub["changeFrequency"] == "weekly"
        )
        link = created["groupLink"]["connLinkContact"]["connShortLink"]
        assert "/c#" in link
        await owner.cmd(f"/_send #{g['groupId']} text Spring sale")
        w.network.register_name(
            "ridgeline.simplex", w.network.user("news"), "publicGroup", group_id=g["groupId"]
        )
        plan = await alice.cmd(f"/_connect plan {alice.user_id} #ridgeline.simplex")
        assert plan["planSimplexName"] == {
            "nameType": "publicGroup",
            "nameDomain": {"nameTLD": "simplex", "domain": "ridgeline", "subDomain": []},
        }
        ok = plan["connectionPlan"]["groupLinkPlan"]
        assert ok["type"] == "ok" and ok["groupSLinkInfo_"]["direct"] is False
        assert ok["groupSLinkData_"]["groupProfile"]["publicGroup"]["audience"] == [
            "human",
            "agent",
        ]
        err = await alice.error(f"/_connect {alice.user_id} {link}")
        assert (
            err["errorType"]["message"]
            == "channel links must be connected via APIConnectPreparedGroup"
        )
        cl = plan["connLink"]
        prepared = await alice.cmd_json(
            f"/_prepare group {alice.user_id} {cl['connFullLink']} {cl['connShortLink']} direct=off domain=ridgeline.simplex",
            ok["groupSLinkData_"],
        )
        pg = prepared["chat"]["chatInfo"]["groupInfo"]
        assert pg["groupDomainVerified"] is True
        assert prepared["chat"]["chatItems"][0]["chatDir"] == {"type": "channelRcv"}
        await alice.cmd(f"/_connect group #{pg['groupId']} incognito=on")
        joined = await alice.event("userJoinedGroup")
        assert joined["groupInfo"]["membership"]["memberRole"] == "observer"
        history = await alice.message()
        assert text_item(history)[0][1:] == ("channelRcv", "Spring sale")
        await owner.cmd(f"/_send #{g['groupId']} text New arrivals")
        post = await alice.message()
        assert text_item(post)[0][1:] == ("channelRcv", "New arrivals")
        err = await alice.error(f"/_send #{pg['groupId']} text hi")
        assert err["errorType"]["requiredRole"] == "author"
        known = await alice.cmd(f"/_connect plan {alice.user_id} #ridgeline.simplex")
        assert known["connectionPlan"]["groupLinkPlan"]["type"] == "known"


async def test_simplex_names_resolve_and_fail_as_the_core_reports() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bot = await w.user("directory", display_name="SimpleX Directory", peer_type="bot")
        w.network.register_name("directory.simplex", w.network.user("directory"), "contact")
        err = await alice.error(f"/_connect plan {alice.user_id} @directory.simplex")
        assert err["errorType"]["type"] == "simplexDomainNotReady"
        assert err["errorType"]["simplexDomainError"] == {"type": "noValidLink"}
        await w.address(bot)
        plan = await alice.cmd(f"/_connect plan {alice.user_id} @directory.simplex")
        assert plan["planSimplexName"]["nameType"] == "contact"
        data = plan["connectionPlan"]["contactAddressPlan"]["contactSLinkData_"]
        assert data["profile"]["contactDomain"] == {"domain": "directory.simplex"}
        cl = plan["connLink"]
        prepared = await alice.cmd_json(
            f"/_prepare contact {alice.user_id} {cl['connFullLink']} {cl['connShortLink']} domain=directory.simplex",
            data,
        )
        contact = prepared["chat"]["chatInfo"]["contact"]
        assert contact["profile"]["contactDomainVerified"] is True
        await alice.cmd(f"/_connect contact @{contact['contactId']}")
        connected = (await alice.event("contactConnected"))["contact"]
        assert connected["profile"]["contactDomain"]["domain"] == "directory.simplex"
        assert connected["profile"]["contactDomainVerified"] is True
        err = await alice.error(f"/_connect plan {alice.user_id} @nobody.simplex")
        assert err["type"] == "errorAgent"
        assert err["agentError"]["smpErr"] == {"type": "NAME", "nameErr": {"type": "NOT_FOUND"}}
        w.network.register_name(
            "shy.simplex", w.network.user("directory"), "contact", known_domain=False
        )
        err = await alice.error(f"/_connect plan {alice.user_id} @shy.simplex")
        assert err["errorType"]["simplexDomainError"] == {"type": "unknownDomain"}
        w.network.faults.name_servers(False, user="alice")
        err = await alice.error(f"/_connect plan {alice.user_id} @directory.simplex")
        assert err == {
            "type": "errorAgent",
            "agentError": {"type": "NO_NAME_SERVERS"},
            "agentConnId": "",
        }
        err = await alice.error(f"/_connect plan {alice.user_id} not-a-link")
        assert err == {"type": "error", "errorType": {"type": "invalidConnReq"}}
