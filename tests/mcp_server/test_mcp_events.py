"""The event pump: each event of the core to the part of the agent it concerns, and the
collections of chat items by chat."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from mcp_fakes import ScriptedBackend

from simplex_protocols._clock import ManualClock
from simplex_protocols.core import ChatAPI, ChatCore, ChatRef, ContactRef, EventView, GroupRef
from simplex_protocols.mcp_server.approvals import Approvals
from simplex_protocols.mcp_server.config import AgentConfig
from simplex_protocols.mcp_server.control import ControlChat
from simplex_protocols.mcp_server.events import EventPump
from simplex_protocols.mcp_server.log import Log
from simplex_protocols.mcp_server.membership import MEMBERSHIP_EVENTS, Membership
from simplex_protocols.mcp_server.state import AgentState
from simplex_protocols.mcp_server.waits import ChatCollector, Collectors

CONTROL = 10


def contact(contact_id: int, conn_id: int = 1) -> dict[str, Any]:
    return {"contactId": contact_id, "activeConn": {"connId": conn_id}}


def direct(contact_id: int) -> dict[str, Any]:
    return {"type": "direct", "contact": contact(contact_id)}


def group(group_id: int, **more: Any) -> dict[str, Any]:
    return {"type": "group", "groupInfo": {"groupId": group_id}, **more}


def chat_item(item_id: int, text: str, direction: dict[str, Any]) -> dict[str, Any]:
    return {
        "chatDir": direction,
        "meta": {"itemId": item_id, "itemStatus": {"type": "rcvNew"}},
        "content": {"type": "rcvMsgContent", "msgContent": {"type": "text", "text": text}},
    }


def new_items(*pairs: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "newChatItems",
        "chatItems": [{"chatInfo": info, "chatItem": item} for info, item in pairs],
    }


OWNER = {"groupMemberId": 2, "memberProfile": {"displayName": "Alice"}}


class Recorder(Membership):
    """The membership part, recording the events it is given."""

    def __init__(self, state: AgentState) -> None:
        super().__init__(state, Approvals(state), None)
        self.seen: list[str] = []

    def on_event(self, event: EventView) -> None:
        self.seen.append(event.type)


class Pump:
    """An event pump over an agent state, with every part it feeds recorded."""

    def __init__(self) -> None:
        self.clock = ManualClock()
        api = ChatAPI(ChatCore(ScriptedBackend(lambda cmd: {"type": "cmdOk"})))
        self.state = AgentState(
            api,
            AgentConfig(name="a", display="A"),
            clock=self.clock,
            log=Log(),
            user_id=1,
            profile_name="A",
            control=ControlChat(api, CONTROL, 1),
            next_action=1,
        )
        self.commands: list[tuple[Mapping[str, Any], str]] = []
        self.connected: list[tuple[ChatRef, int | None]] = []
        self.membership = Recorder(self.state)
        self.pump = EventPump(
            self.state,
            owner_command=lambda sender, text: self.commands.append((sender, text)),
            chat_connected=lambda chat, conn: self.connected.append((chat, conn)),
            membership=self.membership,
        )

    def collector(self, chat: ChatRef) -> ChatCollector:
        collector = ChatCollector(chat, self.clock)
        self.state.collectors.add(collector)
        return collector


def test_new_items_go_to_the_collectors_of_their_chat() -> None:
    p = Pump()
    four, five = p.collector(ContactRef(4)), p.collector(ContactRef(5))
    p.pump.handle_event(
        new_items(
            (direct(4), chat_item(21, "hi", {"type": "directRcv"})),
            (group(7), chat_item(22, "x", {"type": "groupRcv", "groupMember": OWNER})),
        )
    )
    assert list(four.items) == [21] and not five.items
    assert p.commands == [] and p.membership.seen == []


def test_updates_and_deletions_reach_the_collectors() -> None:
    p = Pump()
    four = p.collector(ContactRef(4))
    p.pump.handle_event(new_items((direct(4), chat_item(21, "v1", {"type": "directRcv"}))))
    updated = chat_item(21, "v2", {"type": "directRcv"})
    p.pump.handle_event(
        {"type": "chatItemUpdated", "chatItem": {"chatInfo": direct(4), "chatItem": updated}}
    )
    assert four.items[21][1] is updated
    p.pump.handle_event(
        {
            "type": "chatItemsDeleted",
            "chatItemDeletions": [
                {"deletedChatItem": {"chatInfo": direct(4), "chatItem": updated}},
                "junk",
            ],
        }
    )
    assert four.items == {}


@pytest.mark.parametrize(
    ("info", "direction", "text", "queued"),
    [
        (group(CONTROL), {"type": "groupRcv", "groupMember": OWNER}, "/approve 1", True),
        (group(CONTROL), {"type": "groupRcv", "groupMember": OWNER}, "approve 1", False),
        (group(CONTROL), {"type": "groupSnd"}, "/approve 1", False),
        # a member support scope is not the control chat's main chat
        (
            group(CONTROL, groupChatScope={"type": "memberSupport"}),
            {"type": "groupRcv", "groupMember": OWNER},
            "/approve 1",
            False,
        ),
    ],
)
def test_owner_commands_come_from_the_control_chats_main_scope(
    info: dict[str, Any], direction: dict[str, Any], text: str, queued: bool
) -> None:
    p = Pump()
    control = p.collector(GroupRef(CONTROL))
    p.pump.handle_event(new_items((info, chat_item(30, text, direction))))
    assert p.commands == ([(OWNER, text)] if queued else [])
    assert control.items == {}  # the control chat's items are never collected


@pytest.mark.parametrize("flag", ["stopping", "lost"])
def test_no_owner_command_once_stopping_or_lost(flag: str) -> None:
    p = Pump()
    setattr(p.state, flag, True)
    direction = {"type": "groupRcv", "groupMember": OWNER}
    p.pump.handle_event(new_items((group(CONTROL), chat_item(30, "/approve 1", direction))))
    assert p.commands == []


def test_connected_chats_and_their_peer_connections() -> None:
    p = Pump()
    p.pump.handle_event({"type": "contactConnected", "contact": contact(4, conn_id=9)})
    p.pump.handle_event(
        {
            "type": "userJoinedGroup",
            "groupInfo": {"groupId": 7},
            "hostMember": {"groupMemberId": 1, "activeConn": {"connId": 11}},
        }
    )
    p.pump.handle_event({"type": "contactConnected", "contact": {"contactId": "x"}})
    assert p.connected == [(ContactRef(4), 9), (GroupRef(7), 11)]


def test_membership_events_go_to_the_membership_part() -> None:
    p = Pump()
    for kind in [*sorted(MEMBERSHIP_EVENTS), "contactConnected", "newChatItems"]:
        p.pump.handle_event({"type": kind, "groupInfo": {"groupId": CONTROL}})
    assert p.membership.seen == sorted(MEMBERSHIP_EVENTS)


def test_collectors_by_chat() -> None:
    collectors = Collectors()
    clock = ManualClock()
    a, b = ChatCollector(ContactRef(4), clock), ChatCollector(ContactRef(4), clock)
    collectors.add(a)
    collectors.add(b)
    assert ContactRef(4) in collectors and set(collectors.of(ContactRef(4))) == {a, b}
    collectors.remove(a)
    collectors.remove(a)  # again: ignored
    assert collectors.of(ContactRef(4)) == [b]
    collectors.remove(b)
    assert ContactRef(4) not in collectors and collectors.of(ContactRef(4)) == []
    assert collectors.of(None) == []


def test_a_collector_counts_live_items_until_their_final_update() -> None:
    clock = ManualClock()
    collector = ChatCollector(ContactRef(4), clock, keep=2)
    live = chat_item(21, "typing", {"type": "directRcv"})
    live["meta"]["itemLive"] = True
    collector.add(direct(4), live)
    collector.add(direct(4), chat_item(22, "done", {"type": "directRcv"}))
    collector.add(direct(4), chat_item(23, "over", {"type": "directRcv"}))
    assert (collector.any_live(), collector.live_count(), collector.overflow) == (True, 1, 1)
    assert [item["meta"]["itemId"] for _, item in collector.final_items()] == [22]
    collector.update(direct(4), chat_item(21, "typed", {"type": "directRcv"}))
    assert not collector.any_live()
    assert [item["meta"]["itemId"] for _, item in collector.final_items()] == [21, 22]
    collector.drop_not_above(21)
    assert list(collector.items) == [22]
