"""Simulated network: reading chats as the core's queries read them, the chat list, unread
state, the shutdown SQL of the MCP server plan, and the network's waiting."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from simkit import Client, World

from simplex_protocols.sim._cmd_users import _agent_hex

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]


def ids(resp: JSON) -> list[int]:
    return [int(i["meta"]["itemId"]) for i in resp["chat"]["chatItems"]]


def texts(resp: JSON) -> list[str]:
    return [str(i["meta"]["itemText"]) for i in resp["chat"]["chatItems"]]


async def _pair_with_messages(w: World, n: int) -> tuple[Client, Client, int, int, list[int]]:
    """bob sends alice ``n`` messages; returns their contact IDs and alice's item IDs."""
    alice = await w.user("alice")
    bob = await w.user("bob")
    a_contact, b_contact = await w.connect(alice, bob, await w.address(bob))
    got = []
    for i in range(n):
        await bob.cmd(f"/_send @{b_contact['contactId']} text m{i}")
        got.append(
            int((await alice.message(f"m{i}"))["chatItems"][0]["chatItem"]["meta"]["itemId"])
        )
    return alice, bob, a_contact["contactId"], b_contact["contactId"], got


async def test_every_paging_form_reads_as_the_cores_queries() -> None:
    async with World() as w:
        alice, _bob, cid, _, m = await _pair_with_messages(w, 8)
        ref = f"@{cid}"
        await alice.cmd(f"/_read chat items {ref} {m[0]},{m[1]},{m[2]}")
        last = await alice.cmd(f"/_get chat {ref} count=3")
        assert ids(last) == m[-3:]
        assert last["chat"]["chatStats"]["unreadCount"] == 0  # count= pages carry empty stats
        assert "navInfo" not in last
        assert ids(await alice.cmd(f"/_get chat {ref} after={m[2]} count=2")) == m[3:5]
        assert ids(await alice.cmd(f"/_get chat {ref} before={m[5]} count=2")) == m[3:5]
        around = await alice.cmd(f"/_get chat {ref} around={m[4]} count=1")
        assert ids(around) == m[3:6]
        # around carries the chat's real stats and what follows the page
        assert around["chat"]["chatStats"]["unreadCount"] == 5
        assert around["chat"]["chatStats"]["minUnreadItemId"] == m[3]
        assert around["navInfo"] == {"afterUnread": 2, "afterTotal": 2}
        # initial is around the first unread item: N before it, it, N after it
        initial = await alice.cmd(f"/_get chat {ref} initial=2")
        assert ids(initial) == m[1:6]
        assert initial["chat"]["chatStats"]["minUnreadItemId"] == m[3]
        assert initial["navInfo"] == {"afterUnread": 2, "afterTotal": 2}
        # content and search select the items around the pivot
        found = await alice.cmd(f"/_get chat {ref} content=text count=20 search=M7")
        assert texts(found) == ["m7"]
        # an item of another chat, or none, is not a pivot
        for page in (f"after={m[-1] + 100} count=1", f"around={m[-1] + 100} count=1"):
            err = await alice.error(f"/_get chat {ref} {page}")
            assert err["storeError"]["type"] == "chatItemNotFound"
        err = await alice.error(f"/_get chat {ref} initial=2 search=m")
        assert err["storeError"] == {
            "type": "internalError",
            "message": "initial chat pagination doesn't support search",
        }
        # with nothing unread, initial is the last N items
        await alice.cmd(f"/_read chat {ref}")
        none_unread = await alice.cmd(f"/_get chat {ref} initial=2")
        assert ids(none_unread) == m[-2:]
        assert none_unread["navInfo"] == {"afterUnread": 0, "afterTotal": 0}
        assert none_unread["chat"]["chatStats"]["unreadCount"] == 0


async def test_group_items_are_ordered_by_the_senders_time_direct_ones_by_creation() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        a_contact, b_contact = await w.connect(alice, bob, await w.address(bob))
        gid = (await alice.cmd_json(f"/_group {alice.user_id}", {"displayName": "g"}))["groupInfo"][
            "groupId"
        ]
        link = (await alice.cmd(f"/_create link #{gid} member"))["groupLink"]
        await bob.cmd(f"/_connect {bob.user_id} {link['connLinkContact']['connShortLink']}")
        bgid = (await bob.event("userJoinedGroup"))["groupInfo"]["groupId"]
        # alice's messages take 5 s to reach bob; bob writes in between
        w.network.faults.latency(5, link=("alice", "bob"))
        await alice.cmd(f"/_send #{gid} text early group")
        await alice.cmd(f"/_send @{a_contact['contactId']} text early direct")
        await w.clock.advance(1)
        await bob.cmd(f"/_send #{bgid} text later group")
        await bob.cmd(f"/_send @{b_contact['contactId']} text later direct")
        await w.clock.advance(5)
        await bob.message("early direct")
        group = texts(await bob.cmd(f"/_get chat #{bgid} count=2"))
        direct = texts(await bob.cmd(f"/_get chat @{b_contact['contactId']} count=2"))
        assert group == ["early group", "later group"]  # item time: the sender's
        assert direct == ["later direct", "early direct"]  # creation


async def test_unread_counts_follow_reads_across_the_chat_list_and_users() -> None:
    async with World() as w:
        alice, _bob, cid, _, m = await _pair_with_messages(w, 4)
        users = await alice.cmd("/users")
        assert users["users"][0]["unreadCount"] == 4
        chats = (await alice.cmd(f"/_get chats {alice.user_id}"))["chats"]
        stats = next(c for c in chats if c["chatInfo"].get("contact", {}).get("contactId") == cid)
        assert stats["chatStats"]["unreadCount"] == 4
        assert stats["chatStats"]["minUnreadItemId"] == m[0]
        assert [i["meta"]["itemId"] for i in stats["chatItems"]] == [m[-1]]  # the last item
        await alice.cmd(f"/_read chat items @{cid} {m[0]},{m[1]}")
        assert (await alice.cmd("/users"))["users"][0]["unreadCount"] == 2
        unread_only = await alice.cmd_json(
            f"/_get chats {alice.user_id}", {"type": "filters", "favorite": False, "unread": True}
        )
        assert [c["chatInfo"]["contact"]["contactId"] for c in unread_only["chats"]] == [cid]
        await alice.cmd(f"/_read chat @{cid}")
        assert (await alice.cmd("/users"))["users"][0]["unreadCount"] == 0
        unread_only = await alice.cmd_json(
            f"/_get chats {alice.user_id}", {"type": "filters", "favorite": False, "unread": True}
        )
        assert unread_only["chats"] == []


async def test_the_chat_list_pages_by_chat_time_and_searches_names() -> None:
    async with World() as w:
        alice = await w.user("alice")
        await w.clock.advance(1)  # after the preset contact
        for name in ("Trail one", "Trail two", "Road three", "Trail four"):
            await alice.cmd_json(f"/_group {alice.user_id}", {"displayName": name, "fullName": ""})
            await w.clock.advance(1)

        def names(resp: JSON) -> list[str]:
            return [
                c["chatInfo"].get("groupInfo", c["chatInfo"].get("contact", {}))["localDisplayName"]
                for c in resp["chats"]
            ]

        first = await alice.cmd(f"/_get chats {alice.user_id} count=2")
        assert names(first) == ["Trail four", "Road three"]
        ts = first["chats"][-1]["chatInfo"]["groupInfo"]["chatTs"]
        assert names(await alice.cmd(f"/_get chats {alice.user_id} before={ts} count=2")) == [
            "Trail two",
            "Trail one",
        ]
        assert names(await alice.cmd(f"/_get chats {alice.user_id} after={ts} count=5")) == [
            "Trail four"
        ]
        found = await alice.cmd_json(
            f"/_get chats {alice.user_id}", {"type": "search", "search": "trail t"}
        )
        assert names(found) == ["Trail two"]


async def test_the_shutdown_sql_reads_connections_and_pending_deliveries() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        gid = (await alice.cmd_json(f"/_group {alice.user_id}", {"displayName": "g"}))["groupInfo"][
            "groupId"
        ]
        link = (await alice.cmd(f"/_create link #{gid} member"))["groupLink"]
        await bob.cmd(f"/_connect {bob.user_id} {link['connLinkContact']['connShortLink']}")
        await alice.event("joinedGroupMember")
        members = (await alice.cmd(f"/_members #{gid}"))["group"]["members"]
        conn_ids = [m["activeConn"]["agentConnId"] for m in members if "activeConn" in m]
        query = (
            "/sql chat SELECT hex(agent_conn_id) FROM connections WHERE group_member_id IN "
            f"(SELECT group_member_id FROM group_members WHERE group_id = {gid})"
        )
        rows = (await alice.cmd(query))["rows"]
        # the core's rows: the column names, then one line per row
        assert rows == ["hex(agent_conn_id)", *[_agent_hex(c) for c in conn_ids]]
        hexes = rows[1:]
        pending = (
            "/sql agent SELECT count(*) FROM snd_message_deliveries WHERE failed = 0 AND "
            f"hex(conn_id) IN ({','.join(repr(h) for h in hexes)})"
        )
        assert (await alice.cmd(pending))["rows"] == ["count(*)", "0"]
        # a message to an offline member is on the router: no delivery is pending
        w.network.faults.offline("bob")
        await alice.cmd(f"/_send #{gid} text to the router")
        assert (await alice.cmd(pending))["rows"] == ["count(*)", "0"]
        w.network.faults.offline("bob", False)
        # a router that is down keeps it pending, as does the sender being offline
        w.network.faults.router_down(w.network.user("bob").router)
        await alice.cmd(f"/_send #{gid} text held")
        assert (await alice.cmd(pending))["rows"] == ["count(*)", "1"]
        w.network.faults.router_down(w.network.user("bob").router, False)
        assert (await alice.cmd(pending))["rows"] == ["count(*)", "0"]
        w.network.faults.offline("alice")
        await alice.cmd(f"/_send #{gid} text kept")
        assert (await alice.cmd(pending))["rows"] == ["count(*)", "1"]
        # no such connections: a count of 0; other queries: no rows
        none = "/sql agent SELECT count(*) FROM snd_message_deliveries WHERE failed = 0 AND hex(conn_id) IN ()"
        assert (await alice.cmd(none))["rows"] == ["count(*)", "0"]
        assert (await alice.cmd(query.replace(f"= {gid})", "= 999)")))["rows"] == []
        assert (await alice.cmd("/sql chat SELECT 1"))["rows"] == []


async def test_idle_clients_do_no_work_after_a_change() -> None:
    async with World() as w:
        for name in ("a", "b", "c"):
            await w.user(name)
        pumps = 0
        pump = w.network.pump

        def counting_pump() -> None:
            nonlocal pumps
            pumps += 1
            pump()

        w.network.pump = counting_pump  # type: ignore[method-assign]
        w.network.changed()
        for _ in range(200):
            await anyio.lowlevel.checkpoint()
        # one pump for the change; the waiting clients are not woken by it
        assert pumps == 1


async def test_a_waiting_client_wakes_for_a_later_delivery_on_the_clock() -> None:
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        a_contact, _ = await w.connect(alice, bob, await w.address(bob))
        await bob.settle()  # bob's client waits with no deadline
        w.network.faults.latency(3, link=("alice", "bob"))
        await alice.cmd(f"/_send @{a_contact['contactId']} text in 3 s")
        await bob.settle()
        assert "in 3 s" not in [
            e["chatItems"][0]["chatItem"]["meta"]["itemText"] for e in bob.all("newChatItems")
        ]
        assert w.network.next_deadline() == w.clock.now() + 3
        await w.clock.advance(3)
        await bob.message("in 3 s")
        assert w.network.next_deadline() is None
