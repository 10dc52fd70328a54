"""Messages: item fields, chat facts, receive pages and limits, leave, approvals in list, refused
sends, and the connect wait cap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_sim import World, result_text, structured, text_of_item, world

from simplex_protocols.core import ChatInfoView
from simplex_protocols.mcp_server.messages import chat_kind, chat_type, commands_of, message_of

CONTACT_INFO: dict[str, Any] = {
    "type": "direct",
    "contact": {
        "contactId": 4,
        "profile": {
            "displayName": "SimpleX Directory",
            "peerType": "bot",
            "contactDomain": {"domain": "directory.simplex"},
            "contactDomainVerified": True,
        },
        "activeConn": {"connId": 9, "connStatus": {"type": "ready"}},
    },
}
GROUP_INFO: dict[str, Any] = {
    "type": "group",
    "groupInfo": {
        "groupId": 15,
        "groupProfile": {"displayName": "Trail Club"},
        "membership": {
            "memberRole": "member",
            "memberStatus": "connected",
            "memberProfile": {"profileId": 8, "displayName": "BraveOtter"},
            "memberContactProfileId": 1,
        },
    },
}


def item(
    direction: dict[str, Any],
    text: str,
    *,
    item_id: int = 21,
    status: str = "rcvNew",
    content: str = "rcvMsgContent",
    **meta: Any,
) -> dict[str, Any]:
    return {
        "chatDir": direction,
        "meta": {
            "itemId": item_id,
            "itemTs": "2026-10-17T09:05:00Z",
            "itemStatus": {"type": status},
            "userMention": False,
            **meta,
        },
        "content": {"type": content, "msgContent": {"type": "text", "text": text}},
        "mentions": {},
    }


def test_message_fields_of_a_direct_item_with_a_quote() -> None:
    chat_item = item({"type": "directRcv"}, "Ridgecrest, $142", userMention=True)
    chat_item["quotedItem"] = {"itemId": 20, "content": {"type": "text", "text": "x"}}
    assert message_of("@4", CONTACT_INFO, chat_item, own_name="My Agent") == {
        "chat": "@4",
        "item": 21,
        "from": "SimpleX Directory",
        "from_type": "bot",
        "time": "2026-10-17T09:05:00Z",
        "text": "Ridgecrest, $142",
        "new": True,
        "reply_to": {"chat": "@4", "item": 20},
        "mentions_me": True,
    }


def test_message_fields_of_group_channel_and_own_items() -> None:
    member = {
        "type": "groupRcv",
        "groupMember": {
            "groupMemberId": 44,
            "memberProfile": {"displayName": "Switchback", "peerType": "human"},
        },
    }
    assert message_of("#15", GROUP_INFO, item(member, "hi"), own_name="BraveOtter") == {
        "chat": "#15",
        "item": 21,
        "from": "Switchback",
        "from_member": 44,
        "from_type": "human",
        "time": "2026-10-17T09:05:00Z",
        "text": "hi",
        "new": True,
        "mentions_me": False,
    }
    channel = message_of(
        "#15", GROUP_INFO, item({"type": "channelRcv"}, "post", status="rcvRead"), own_name="x"
    )
    assert channel is not None and (channel["from"], channel["new"]) == ("Trail Club", False)
    own = message_of(
        "#15",
        GROUP_INFO,
        item({"type": "groupSnd"}, "mine", content="sndMsgContent", status="sndSent"),
        own_name="BraveOtter",
    )
    assert own is not None and (own["from"], own["from_type"], own["new"]) == (
        "BraveOtter",
        "agent",
        False,
    )


def test_only_message_items_are_messages() -> None:
    event = item(
        {"type": "groupRcv", "groupMember": {"groupMemberId": 1}}, "x", content="rcvGroupEvent"
    )
    assert message_of("#15", GROUP_INFO, event, own_name="x") is None
    assert (
        message_of(
            "#15",
            GROUP_INFO,
            {**item({"type": "directRcv"}, "x"), "content": {"type": "chatBanner"}},
            own_name="x",
        )
        is None
    )


def test_chat_facts() -> None:
    assert ChatInfoView(CONTACT_INFO).connected
    assert chat_type(ChatInfoView(CONTACT_INFO)) == "contact"
    assert chat_kind(ChatInfoView(CONTACT_INFO)) == "bot"
    assert ChatInfoView(CONTACT_INFO).simplex_name == "@directory.simplex"
    assert not ChatInfoView(CONTACT_INFO).incognito
    assert ChatInfoView(GROUP_INFO).incognito
    assert chat_type(ChatInfoView(GROUP_INFO)) == "group"
    business = {
        "type": "group",
        "groupInfo": {**GROUP_INFO["groupInfo"], "businessChat": {"chatType": "business"}},
    }
    assert chat_type(ChatInfoView(business)) == "business"
    channel = {
        "type": "group",
        "groupInfo": {
            **GROUP_INFO["groupInfo"],
            "groupProfile": {"displayName": "N", "publicGroup": {"groupType": "channel"}},
        },
    }
    assert chat_type(ChatInfoView(channel)) == "channel"
    unverified = {
        "type": "direct",
        "contact": {
            **CONTACT_INFO["contact"],
            "profile": {"displayName": "x", "contactDomain": {"domain": "x.simplex"}},
        },
    }
    assert ChatInfoView(unverified).simplex_name is None
    pending = {
        "type": "group",
        "groupInfo": {**GROUP_INFO["groupInfo"], "membership": {"memberStatus": "accepted"}},
    }
    assert not ChatInfoView(pending).connected


def test_commands_of_keep_keywords_labels_params_and_menus() -> None:
    assert commands_of(
        [
            {"type": "command", "keyword": "help", "label": "Help"},
            {"type": "command", "keyword": "role", "label": "Role", "params": "<ID>"},
            {
                "type": "menu",
                "label": "Settings",
                "commands": [{"type": "command", "keyword": "x", "label": "X"}],
            },
        ]
    ) == [
        {"keyword": "help", "label": "Help"},
        {"keyword": "role", "label": "Role", "params": "<ID>"},
        {"label": "Settings", "commands": [{"keyword": "x", "label": "X"}]},
    ]
    assert commands_of([]) is None
    assert commands_of(None) is None


async def connected_vendor(w: World) -> str:
    async with anyio.create_task_group() as tg:
        result: dict[str, Any] = {}

        async def connect() -> None:
            result.update(
                structured(await w.server.call("connect", {"target": w.vendor_link, "idle": 1}))
            )

        tg.start_soon(connect)
        await w.owner.wait_message(lambda t: "/'approve 1'" in t)
        await w.owner.say("/approve 1")
        await w.server.seen.until(
            lambda: any(e["type"] == "userJoinedGroup" for e in w.server.seen.events)
        )
        await w.clock.advance(1)
    return str(result["chat"])


@pytest.mark.anyio
async def test_receive_pages_stop_at_limit_plus_one_and_more_counts_the_rest(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            chat = await connected_vendor(w)
            vendor_chat = next(
                f"#{info['groupInfo']['groupId']}" for info, _ in w.vendor.new_items("group")
            )
            for n in range(250):
                await w.vendor.send_text(vendor_chat, f"news {n}")
            await w.server.seen.until(lambda: "news 249" in w.server.seen.received_texts(chat))
            commands: list[str] = []
            core = w.server.info.agent.api.core
            original = core.command

            async def traced(command: str, **options: Any) -> dict[str, Any]:
                commands.append(command)
                return await original(command, **options)

            core.command = traced  # type: ignore[method-assign]
            first = structured(await w.server.call("receive", {"chat": chat, "limit": 3}))
            assert [m["text"] for m in first["messages"]] == ["news 0", "news 1", "news 2"]
            assert first["more"] == 247
            pages = [c for c in commands if c.startswith(f"/_get chat {chat}")]
            assert pages[0] == f"/_get chat {chat} initial=1"
            assert pages[1].startswith(f"/_get chat {chat} around=")
            assert len(pages) == 3  # the first after= page already holds limit + 1 new messages
            second = structured(await w.server.call("receive", {"chat": chat, "limit": 100}))
            assert [m["text"] for m in second["messages"]] == [f"news {n}" for n in range(3, 103)]
            assert second["more"] == 147
            listing = structured(await w.server.call("list"))
            assert next(c for c in listing["chats"] if c["chat"] == chat)["unread"] == 147


@pytest.mark.anyio
async def test_a_send_to_an_unconnected_contact_is_refused_and_mentions_need_a_group(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            listing = structured(await w.server.call("list"))
            preset = next(c for c in listing["chats"] if c["name"] == "Ask SimpleX Team")
            assert preset["connected"] is False
            refused = await w.server.call("send", {"chat": preset["chat"], "text": "hi"})
            assert (
                result_text(refused)
                == f"The agent is not connected to {preset['chat']} and can't post; list shows connected: false."
            )
            chat = await connected_vendor(w)
            refused = await w.server.call("send", {"chat": chat, "text": "hi", "reply_to": 999})
            assert result_text(refused) == f"reply_to: {chat} has no item 999."
            refused = await w.server.call("send", {"chat": chat, "text": "hi", "mention": [999]})
            assert result_text(refused) == f"mention: {chat} has no member 999."
            refused = await w.server.call("send", {"chat": "@77", "text": "hi"})
            assert result_text(refused) == "No chat @77. list shows the agent's chats."


@pytest.mark.anyio
async def test_leave_a_contact_deletes_it(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
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
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                await w.owner.say("/approve 1")
                await w.server.seen.until(
                    lambda: any(e["type"] == "contactConnected" for e in w.server.seen.events)
                )
                await w.clock.advance(1)
            chat = str(result["chat"])
            async with anyio.create_task_group() as tg:
                left: dict[str, Any] = {}

                async def leave() -> None:
                    left.update(structured(await w.server.call("leave", {"chat": chat})))

                tg.start_soon(leave)
                card = await w.owner.wait_message(lambda t: f"/'approve {chat} 2'" in t)
                assert (
                    text_of_item(card)
                    == f"I want to delete bot SimpleX Directory ({chat}).\n/'approve {chat} 2' or /'reject {chat} 2'"
                )
                await w.owner.say(f"/approve {chat} 2")
            assert left == {"action": 2, "status": "done", "chat": chat}
            await w.owner.wait_message(
                lambda t: t == f"I deleted bot SimpleX Directory ({chat}).\nApproved by Alice."
            )
            await w.server.log.wait_line(
                lambda line: line == "Action 2 approved by Alice: deleted."
            )
            listing = structured(await w.server.call("list"))
            assert all(c["chat"] != chat for c in listing["chats"])


@pytest.mark.anyio
async def test_an_approval_whose_approver_is_no_longer_one_does_not_apply(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            chat = await connected_vendor(w)
            await w.owner.say(f"/approve {chat} all")
            await w.owner.wait_message(lambda t: t.startswith("Approved for business Ridgeline"))
            listing = structured(await w.server.call("list"))
            assert next(c for c in listing["chats"] if c["chat"] == chat)["approved"] is True
            await w.owner.cmd(f"/_leave {w.owner.control}")
            await w.server.log.wait_line(
                lambda line: line == "No owners in the agent control chat."
            )
            listing = structured(await w.server.call("list"))
            assert "approved" not in next(c for c in listing["chats"] if c["chat"] == chat)
            refused = await w.server.call("send", {"chat": chat, "text": "hi"})
            assert result_text(refused).startswith("The agent has no owner.")


@pytest.mark.anyio
async def test_the_connect_wait_ends_23_h_50_min_after_the_action_was_created(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            w.network.faults.offline("directory")
            progress: list[str] = []
            arrived = anyio.Event()

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(message or "")
                arrived.set()

            async with anyio.create_task_group() as tg:
                result: dict[str, Any] = {}

                async def connect() -> None:
                    result.update(
                        structured(
                            await w.server.call(
                                "connect",
                                {"target": "@directory.simplex", "wait": 86400},
                                progress_callback=on_progress,
                            )
                        )
                    )

                tg.start_soon(connect)
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                await w.clock.advance(22 * 3600)  # the owner decides after 22 hours
                await w.owner.say("/approve 1")
                while not any("waits for the connection" in p for p in progress):
                    arrived = anyio.Event()
                    await w.clock.advance(60)
                    await arrived.wait()
                assert "Action 1 waits for the connection until 2026-10-18 08:50 UTC." in progress
                await w.clock.advance(110 * 60)
            assert result["connected"] is False
            assert result["status"] == "done"
            await w.server.log.wait_line(
                lambda line: line == "Action 1 approved by Alice: connection requested."
            )
            await w.owner.wait_message(
                lambda t: (
                    t.startswith("I asked to connect to bot SimpleX Directory")
                    and t.endswith("Approved by Alice.")
                )
            )
