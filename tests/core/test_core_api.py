"""ChatAPI over a scripted core, and the typed event views."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from core_fakes import FakeBackend

from simplex_protocols.core import (
    ChatAPI,
    ChatCore,
    ContactRef,
    GroupRef,
    chat_items,
    chat_ref_of,
    event_type,
    event_user_id,
    received_messages,
)
from simplex_protocols.core import commands as c
from simplex_protocols.errors import CoreError, UnexpectedResponseError

pytestmark = pytest.mark.anyio

USER = {
    "userId": 1,
    "localDisplayName": "agent",
    "profile": {"displayName": "agent", "peerType": "agent"},
}


def error(tag: str, kind: str = "error", key: str = "errorType") -> dict[str, Any]:
    return {"type": "chatCmdError", "chatError": {"type": kind, key: {"type": tag}}}


def scripted(answers: dict[str, dict[str, Any]]) -> FakeBackend:
    return FakeBackend(responder=lambda cmd: answers.get(cmd, {"type": "somethingElse"}))


async def run_api(answers: dict[str, dict[str, Any]], body: Any) -> FakeBackend:
    backend = scripted(answers)
    async with ChatCore(backend) as core:
        with anyio.fail_after(5):
            await body(ChatAPI(core))
    return backend


async def test_active_user_and_no_active_user() -> None:
    async def body(api: ChatAPI) -> None:
        assert await api.active_user() == USER

    await run_api({"/user": {"type": "activeUser", "user": USER}}, body)

    async def none(api: ChatAPI) -> None:
        assert await api.active_user() is None

    await run_api({"/user": error("noActiveUser")}, none)

    async def other(api: ChatAPI) -> None:
        with pytest.raises(CoreError) as info:
            await api.active_user()
        assert info.value.error_type == "chatNotStarted"

    await run_api({"/user": error("chatNotStarted")}, other)


async def test_ensure_active_user_creates_one_only_when_there_is_none() -> None:
    profile = {"displayName": "agent", "fullName": "", "peerType": "agent"}
    create = c.create_active_user(profile)

    async def existing(api: ChatAPI) -> None:
        assert await api.ensure_active_user(profile) == (USER, False)

    backend = await run_api({"/user": {"type": "activeUser", "user": USER}}, existing)
    assert create not in [f["cmd"] for f in backend.sent]

    async def fresh(api: ChatAPI) -> None:
        assert await api.ensure_active_user(profile) == (USER, True)

    backend = await run_api(
        {"/user": error("noActiveUser"), create: {"type": "activeUser", "user": USER}}, fresh
    )
    assert create in [f["cmd"] for f in backend.sent]


async def test_unexpected_response_type_names_both_tags() -> None:
    async def body(api: ChatAPI) -> None:
        with pytest.raises(UnexpectedResponseError) as info:
            await api.stop_chat()
        assert info.value.expected == ("chatStopped",)
        assert info.value.received == "somethingElse"
        assert info.value.command == "/_stop"
        assert info.value.code == "unexpected_response"
        assert "'chatStopped'" in str(info.value)
        assert "'somethingElse'" in str(info.value)

    await run_api({}, body)


async def test_start_chat_with_service_requests() -> None:
    async def body(api: ChatAPI) -> None:
        assert await api.start_chat(service_requests=True) is True
        assert await api.start_chat() is False

    backend = await run_api(
        {
            "/_start main=on service_requests=on": {"type": "chatStarted"},
            "/_start main=on": {"type": "chatRunning"},
        },
        body,
    )
    assert [f["cmd"] for f in backend.sent] == [
        "/_start main=on service_requests=on",
        "/_start main=on",
    ]


async def test_address_and_group_link_absence_are_none() -> None:
    async def body(api: ChatAPI) -> None:
        assert await api.show_address(1) is None
        assert await api.get_group_link(15) is None

    await run_api(
        {
            "/_show_address 1": error("userContactLinkNotFound", "errorStore", "storeError"),
            "/_get link #15": error("groupLinkNotFound", "errorStore", "storeError"),
        },
        body,
    )


async def test_service_rpc_requester_and_responder() -> None:
    request = {"protocol": "mcp", "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}
    req_cmd = c.send_service_request(1, "@shop.simplex", request, timeout_s=5, sign_key="KEY")
    resp_cmd = c.send_service_response(1, "aW52LTE", {"response": {"tools": []}})

    async def body(api: ChatAPI) -> None:
        assert await api.send_service_request(
            1, "@shop.simplex", request, timeout_s=5, sign_key="KEY"
        ) == {"response": {"tools": []}}
        assert (
            await api.send_service_response(1, "aW52LTE", {"response": {"tools": []}}) == "conn-7"
        )

    await run_api(
        {
            req_cmd: {
                "type": "serviceResponse",
                "user": USER,
                "responseData": {"response": {"tools": []}},
            },
            resp_cmd: {"type": "serviceReplyAccepted", "user": USER, "connectionId": "conn-7"},
        },
        body,
    )


async def test_service_request_timeout_is_a_core_error() -> None:
    timeout = {
        "type": "chatCmdError",
        "chatError": {
            "type": "errorAgent",
            "agentError": {
                "type": "AGENT",
                "agentErr": {"type": "A_SERVICE", "serviceError": {"type": "timeout"}},
            },
            "agentConnId": "",
        },
    }

    async def body(api: ChatAPI) -> None:
        with pytest.raises(CoreError) as info:
            await api.send_service_request(1, "t", {"protocol": "mcp"})
        assert info.value.chain == ["errorAgent", "AGENT", "A_SERVICE", "timeout"]

    await run_api({'/_service_request 1 t {"protocol":"mcp"}': timeout}, body)


async def test_messages_chats_and_groups() -> None:
    item = {
        "chatInfo": {"type": "direct", "contact": {"contactId": 4}},
        "chatItem": {"meta": {"itemId": 21}},
    }
    chat = {
        "chatInfo": {"type": "group", "groupInfo": {"groupId": 15}},
        "chatItems": [],
        "chatStats": {"unreadCount": 2},
    }
    member = {"groupMemberId": 44, "memberRole": "member"}
    answers = {
        "/_send @4 text hello": {"type": "newChatItems", "user": USER, "chatItems": [item]},
        "/_get chat #15 initial=20": {"type": "apiChat", "user": USER, "chat": chat},
        "/_get chats 1 count=5": {"type": "apiChats", "user": USER, "chats": [chat]},
        "/_read chat items #15 21,22": {
            "type": "itemsReadForChat",
            "user": USER,
            "chatInfo": chat["chatInfo"],
        },
        "/_members #15": {
            "type": "groupMembers",
            "user": USER,
            "group": {"groupInfo": {}, "members": [member]},
        },
        "/_member role #15 44 admin": {
            "type": "membersRoleUser",
            "user": USER,
            "members": [member],
        },
        '/_set custom #15 {"a":1}': {"type": "cmdOk"},
        "/_delete @4 full notify=on": {"type": "contactDeleted", "user": USER, "contact": {}},
        "/_update item @4 21 text edited": {
            "type": "chatItemNotChanged",
            "user": USER,
            "chatItem": item,
        },
    }

    async def body(api: ChatAPI) -> None:
        assert await api.send_text(ContactRef(4), "hello") == [item]
        assert await api.get_chat(GroupRef(15), initial=20) == chat
        assert await api.get_chats(1, count=5) == [chat]
        assert await api.read_chat_items(GroupRef(15), [21, 22]) == chat["chatInfo"]
        assert await api.list_members(15) == [member]
        assert await api.set_members_role(15, [44], "admin") == [member]
        await api.set_custom_data(GroupRef(15), {"a": 1})
        assert (await api.delete_chat(ContactRef(4)))["type"] == "contactDeleted"
        assert await api.update_chat_item(ContactRef(4), 21, "edited") == item

    await run_api(answers, body)


async def test_a_responder_loop_reads_service_request_events() -> None:
    backend = FakeBackend(
        responder=lambda cmd: {"type": "serviceReplyAccepted", "user": USER, "connectionId": "c1"}
    )
    answered: list[str] = []
    async with ChatCore(backend) as core, core.events() as events:
        api = ChatAPI(core)
        backend.event({"type": "contactConnected", "user": USER})
        backend.event(
            {
                "type": "serviceRequest",
                "user": USER,
                "requestId": "r1",
                "signerKey": "K",
                "requestData": {"protocol": "mcp"},
            }
        )
        with anyio.fail_after(5):
            async for event in events:
                if event_type(event) == "serviceRequest":
                    answered.append(
                        await api.send_service_response(1, event["requestId"], {"response": {}})
                    )
                    break
    assert answered == ["c1"]
    assert backend.sent[-1]["cmd"] == '/_service_response 1 r1 {"response":{}}'


# --------------------------------------------------------------------------- event views


def rcv_item(
    chat_info: dict[str, Any], direction: dict[str, Any], item_id: int, text: str, **meta: Any
) -> dict[str, Any]:
    return {
        "chatInfo": chat_info,
        "chatItem": {
            "chatDir": direction,
            "meta": {"itemId": item_id, "itemStatus": {"type": "rcvNew"}, **meta},
            "content": {"type": "rcvMsgContent", "msgContent": {"type": "text", "text": text}},
            "quotedItem": {"itemId": 20},
            "futureField": True,
        },
    }


CONTACT = {"type": "direct", "contact": {"contactId": 4, "localDisplayName": "Ridgeline"}}
GROUP = {"type": "group", "groupInfo": {"groupId": 15, "localDisplayName": "Trail club"}}


def test_received_messages_reads_direct_group_and_channel_items() -> None:
    direct = rcv_item(CONTACT, {"type": "directRcv"}, 21, "Ridgecrest, $142")
    group = rcv_item(
        GROUP,
        {
            "type": "groupRcv",
            "groupMember": {"groupMemberId": 44, "localDisplayName": "Switchback"},
        },
        22,
        "@agent which size?",
        userMention=True,
        itemLive=True,
    )
    channel = rcv_item(GROUP, {"type": "channelRcv"}, 23, "news")
    sent = {
        "chatInfo": CONTACT,
        "chatItem": {
            "chatDir": {"type": "directSnd"},
            "meta": {"itemId": 24},
            "content": {"type": "sndMsgContent"},
        },
    }
    event_item = {
        "chatInfo": GROUP,
        "chatItem": {"meta": {"itemId": 25}, "content": {"type": "rcvGroupEvent"}},
    }
    broken = {"chatInfo": CONTACT, "chatItem": {"content": {"type": "rcvMsgContent"}}}
    event = {
        "type": "newChatItems",
        "user": USER,
        "chatItems": [direct, sent, group, event_item, broken, channel, "junk"],
    }
    got = received_messages(event)
    assert [(m.chat_ref, m.item_id, m.text, m.sender) for m in got] == [
        (ContactRef(4), 21, "Ridgecrest, $142", "Ridgeline"),
        (GroupRef(15), 22, "@agent which size?", "Switchback"),
        (GroupRef(15), 23, "news", "Trail club"),
    ]
    assert got[1].sender_member_id == 44
    assert (got[1].mentions_user, got[1].live, got[0].mentions_user, got[0].live) == (
        True,
        True,
        False,
        False,
    )
    assert all(m.quoted_item_id == 20 and m.unread and m.content_type == "text" for m in got)
    assert got[0].item is direct  # the raw item is kept


def test_received_messages_of_an_update_and_of_other_events() -> None:
    updated = rcv_item(CONTACT, {"type": "directRcv"}, 21, "final text")
    assert [
        m.text for m in received_messages({"type": "chatItemUpdated", "chatItem": updated})
    ] == ["final text"]
    assert received_messages({"type": "contactConnected", "chatItems": [updated]}) == []
    assert received_messages({"type": "newChatItems", "chatItems": "nonsense"}) == []


def test_small_views() -> None:
    assert event_type({"type": "x"}) == "x"
    assert event_type({"type": 3}) == ""
    assert event_user_id({"user": {"userId": 7}}) == 7
    assert event_user_id({"type": "hostConnected"}) is None
    assert chat_ref_of(CONTACT) == ContactRef(4)
    assert chat_ref_of(GROUP) == GroupRef(15)
    assert chat_ref_of({"type": "local", "noteFolder": {}}) is None
    assert chat_ref_of({"type": "direct", "contact": {"contactId": 10**16}}) is None
    assert chat_items({"chatItem": {"a": 1}}) == [{"a": 1}]
    assert chat_items({"chatItems": [{"a": 1}, 2]}) == [{"a": 1}]


async def test_auto_accept_group_invitations_is_set_and_checked() -> None:
    async def body(api: ChatAPI) -> None:
        await api.set_auto_accept_group_invitations(1, True)
        with pytest.raises(UnexpectedResponseError) as info:
            await api.set_auto_accept_group_invitations(1, False)
        assert info.value.received == "somethingElse"
        assert info.value.command == "/_set accept group invitations 1 off"

    backend = await run_api({"/_set accept group invitations 1 on": {"type": "cmdOk"}}, body)
    assert [f["cmd"] for f in backend.sent] == [
        "/_set accept group invitations 1 on",
        "/_set accept group invitations 1 off",
    ]
