"""ReplyCollector: quote matching, sender rules, arrival order, text replies, deadline."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from simplex_protocols.chat_call import (
    AnswerCompleted,
    CallCompleted,
    CallState,
    CallTarget,
    CallTimedOut,
    CollectorEvent,
    IgnoreReason,
    ReceivedItem,
    Reply,
    ReplyCollector,
    ReplyIgnored,
    ReplyReceived,
    Sender,
    TextReplyReceived,
    jsonrpc_response_to,
)
from simplex_protocols.errors import CallFramingError

CMD = 20  # the command's item ID
FINAL = '{"jsonrpc":"2.0","id":1,"result":{}}'
PROGRESS = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}'


def drain(collector: ReplyCollector) -> list[CollectorEvent]:
    out: list[CollectorEvent] = []
    while (event := collector.next_event()) is not None:
        out.append(event)
    return out


def direct_collector(**kwargs: Any) -> ReplyCollector:
    return ReplyCollector(
        CMD, CallTarget.direct(4), deadline=30.0, is_final=jsonrpc_response_to(1), **kwargs
    )


def core_direct_item(
    item_id: int, text: str, quoted: int | None, *, contact_id: int = 4
) -> dict[str, Any]:
    chat_item: dict[str, Any] = {
        "chatDir": {"type": "directRcv"},
        "meta": {
            "itemId": item_id,
            "itemTs": "2026-10-17T09:05:00Z",
            "itemText": text,
            "itemStatus": {"type": "rcvNew"},
            "itemEdited": False,
            "userMention": False,
            "hasLink": False,
            "deletable": True,
            "editable": False,
            "showGroupAsSender": False,
            "createdAt": "2026-10-17T09:05:01Z",
            "updatedAt": "2026-10-17T09:05:01Z",
        },
        "content": {"type": "rcvMsgContent", "msgContent": {"type": "text", "text": text}},
        "mentions": {},
        "reactions": [],
    }
    if quoted is not None:
        chat_item["quotedItem"] = {
            "chatDir": {"type": "directSnd"},
            "itemId": quoted,
            "sentAt": "2026-10-17T09:04:50Z",
            "content": {"type": "text", "text": "/_call mcp {}"},
        }
    return {
        "chatInfo": {
            "type": "direct",
            "contact": {"contactId": contact_id, "localDisplayName": "acme"},
        },
        "chatItem": chat_item,
    }


def core_group_item(item_id: int, member_id: int, text: str, quoted: int | None) -> dict[str, Any]:
    item = core_direct_item(item_id, text, quoted)
    item["chatInfo"] = {"type": "group", "groupInfo": {"groupId": 15}}
    item["chatItem"]["chatDir"] = {
        "type": "groupRcv",
        "groupMember": {
            "groupMemberId": member_id,
            "localDisplayName": f"m{member_id}",
            "memberProfile": {"displayName": f"Member {member_id}"},
        },
    }
    return item


# ---------------------------------------------------------------------------------- direct


@pytest.mark.requirement("CALL-CLR-1", "CALL-CLR-2")
def test_direct_call_collects_notifications_then_completes_on_the_response() -> None:
    c = direct_collector()
    c.receive_item(ReceivedItem.direct(21, 4, PROGRESS, quoted_item_id=CMD), now=1.0)
    c.receive_item(ReceivedItem.direct(22, 4, FINAL, quoted_item_id=CMD), now=2.0)
    events = drain(c)
    bot = Sender(contact_id=4)
    progress = Reply(
        bot,
        21,
        PROGRESS,
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
    )
    final = Reply(bot, 22, FINAL, {"jsonrpc": "2.0", "id": 1, "result": {}}, final=True)
    assert events[:3] == [ReplyReceived(progress), ReplyReceived(final), AnswerCompleted(bot)]
    assert isinstance(events[3], CallCompleted)
    assert events[3].result.replies == (progress, final)
    assert events[3].result.final_message() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert len(events) == 4 and c.state is CallState.COMPLETED


@pytest.mark.requirement("CALL-CLR-1")
def test_replies_are_matched_by_quote_whatever_else_arrives_between() -> None:
    c = direct_collector()
    c.receive_item(ReceivedItem.direct(21, 4, "hello"), now=1.0)
    c.receive_item(ReceivedItem.direct(22, 4, FINAL, quoted_item_id=19), now=1.0)
    c.receive_item(ReceivedItem.direct(23, 4, FINAL, quoted_item_id=CMD), now=1.0)
    events = drain(c)
    assert events[0] == ReplyIgnored(21, IgnoreReason.NOT_A_REPLY, Sender(contact_id=4))
    assert events[1] == ReplyIgnored(22, IgnoreReason.OTHER_QUOTE, Sender(contact_id=4))
    assert isinstance(events[2], ReplyReceived) and events[2].reply.item_id == 23


@pytest.mark.requirement("CALL-CLR-3")
def test_a_reply_that_is_not_a_protocol_message_is_kept_as_text_with_its_sender() -> None:
    c = direct_collector()
    for i, text in enumerate(["Sorry, I only speak MCP.", "[1,2]", '{"a":1,"a":2}', "", "{"]):
        c.receive_item(ReceivedItem.direct(21 + i, 4, text, quoted_item_id=CMD), now=1.0)
    events = drain(c)
    assert all(isinstance(e, TextReplyReceived) for e in events)
    first = events[0]
    assert isinstance(first, TextReplyReceived)
    assert first.reply.text == "Sorry, I only speak MCP."
    assert all(r.is_text and r.sender == Sender(contact_id=4) for r in c.replies)


@pytest.mark.requirement("CALL-CLR-4")
def test_direct_call_ignores_other_chats_and_own_items() -> None:
    c = direct_collector()
    c.receive_item(ReceivedItem.direct(21, 5, FINAL, quoted_item_id=CMD), now=1.0)
    c.receive_item(ReceivedItem.group(22, 15, 44, FINAL, quoted_item_id=CMD), now=1.0)
    c.receive_item(ReceivedItem.direct(23, 4, FINAL, quoted_item_id=CMD, own=True), now=1.0)
    reasons = [e.reason for e in drain(c) if isinstance(e, ReplyIgnored)]
    assert reasons == [IgnoreReason.OTHER_CHAT, IgnoreReason.OTHER_CHAT, IgnoreReason.OWN_ITEM]
    assert c.replies == () and c.state is CallState.WAITING


def test_duplicates_and_items_that_are_not_messages_are_ignored() -> None:
    c = direct_collector()
    c.receive_item(ReceivedItem.direct(21, 4, PROGRESS, quoted_item_id=CMD), now=1.0)
    c.receive_item(ReceivedItem.direct(21, 4, PROGRESS, quoted_item_id=CMD), now=1.0)
    c.receive_item(ReceivedItem.direct(22, 4, None, quoted_item_id=CMD), now=1.0)
    events = drain(c)
    assert events[1:] == [
        ReplyIgnored(21, IgnoreReason.DUPLICATE, Sender(contact_id=4)),
        ReplyIgnored(22, IgnoreReason.NOT_A_MESSAGE, Sender(contact_id=4)),
    ]


def test_deadline_ends_the_wait_and_later_items_are_ignored() -> None:
    c = direct_collector()
    c.receive_item(ReceivedItem.direct(21, 4, PROGRESS, quoted_item_id=CMD), now=1.0)
    c.check_deadline(29.9)
    assert c.state is CallState.WAITING
    c.check_deadline(30.0)
    c.receive_item(ReceivedItem.direct(22, 4, FINAL, quoted_item_id=CMD), now=31.0)
    c.check_deadline(40.0)
    events = drain(c)
    assert isinstance(events[1], CallTimedOut)
    assert [r.item_id for r in events[1].result.replies] == [21]
    assert events[2] == ReplyIgnored(22, IgnoreReason.CALL_ENDED, Sender(contact_id=4))
    assert len(events) == 3 and c.state is CallState.TIMED_OUT


def test_an_item_at_the_deadline_times_out_first() -> None:
    c = direct_collector()
    c.receive_item(ReceivedItem.direct(22, 4, FINAL, quoted_item_id=CMD), now=30.0)
    events = drain(c)
    assert isinstance(events[0], CallTimedOut)
    assert events[1] == ReplyIgnored(22, IgnoreReason.CALL_ENDED, Sender(contact_id=4))


def test_without_a_final_rule_the_wait_ends_only_at_the_deadline() -> None:
    c = ReplyCollector(CMD, CallTarget.direct(4), deadline=5.0)
    c.receive_item(ReceivedItem.direct(21, 4, FINAL, quoted_item_id=CMD), now=1.0)
    assert c.state is CallState.WAITING and not c.replies[0].final
    c.check_deadline(5.0)
    assert c.state is CallState.TIMED_OUT


# ---------------------------------------------------------------------------------- groups


@pytest.mark.requirement("CALL-CLR-5")
def test_group_call_with_a_mention_accepts_only_the_mentioned_member() -> None:
    c = ReplyCollector(
        CMD, CallTarget.group(15, member_id=44), deadline=30.0, is_final=jsonrpc_response_to(1)
    )
    c.receive_item(ReceivedItem.group(21, 15, 45, FINAL, quoted_item_id=CMD), now=1.0)
    c.receive_item(ReceivedItem.group(22, 15, None, FINAL, quoted_item_id=CMD), now=1.0)
    c.receive_item(ReceivedItem.group(23, 15, 44, FINAL, quoted_item_id=CMD), now=1.0)
    events = drain(c)
    assert events[0] == ReplyIgnored(21, IgnoreReason.WRONG_SENDER, Sender(group_member_id=45))
    assert events[1] == ReplyIgnored(22, IgnoreReason.OWN_ITEM, None)
    assert isinstance(events[2], ReplyReceived) and events[2].reply.sender == Sender(
        group_member_id=44
    )
    assert isinstance(events[-1], CallCompleted)


@pytest.mark.requirement("CALL-CLR-2", "CALL-GRP-2")
def test_broadcast_collects_every_member_kept_apart_until_the_deadline() -> None:
    c = ReplyCollector(CMD, CallTarget.group(15), deadline=30.0, is_final=jsonrpc_response_to(1))
    c.receive_item(ReceivedItem.group(21, 15, 44, PROGRESS, quoted_item_id=CMD), now=1.0)
    c.receive_item(ReceivedItem.group(22, 15, 45, FINAL, quoted_item_id=CMD), now=2.0)
    c.receive_item(ReceivedItem.group(23, 15, 44, FINAL, quoted_item_id=CMD), now=3.0)
    c.receive_item(ReceivedItem.group(24, 15, 46, "no idea", quoted_item_id=CMD), now=4.0)
    assert c.state is CallState.WAITING
    c.check_deadline(30.0)
    events = drain(c)
    assert [type(e).__name__ for e in events] == [
        "ReplyReceived",
        "ReplyReceived",
        "AnswerCompleted",
        "ReplyReceived",
        "AnswerCompleted",
        "TextReplyReceived",
        "CallTimedOut",
    ]
    result = events[-1].result  # type: ignore[union-attr]
    by_sender = result.by_sender()
    assert [r.item_id for r in by_sender[Sender(group_member_id=44)]] == [21, 23]
    assert [r.item_id for r in by_sender[Sender(group_member_id=45)]] == [22]
    assert result.completed == {Sender(group_member_id=44), Sender(group_member_id=45)}
    assert result.final_message(Sender(group_member_id=46)) is None


def test_broadcast_with_expected_members_completes_when_each_has_answered() -> None:
    c = ReplyCollector(
        CMD,
        CallTarget.group(15),
        deadline=30.0,
        is_final=jsonrpc_response_to(1),
        expected_members=[44, 45],
    )
    c.receive_item(ReceivedItem.group(21, 15, 44, FINAL, quoted_item_id=CMD), now=1.0)
    assert c.state is CallState.WAITING
    c.receive_item(ReceivedItem.group(22, 15, 45, FINAL, quoted_item_id=CMD), now=2.0)
    assert c.state is CallState.COMPLETED
    assert isinstance(drain(c)[-1], CallCompleted)


def test_expected_members_only_make_sense_for_a_broadcast() -> None:
    with pytest.raises(ValueError, match="broadcast"):
        ReplyCollector(CMD, CallTarget.group(15, 44), deadline=1.0, expected_members=[44])
    with pytest.raises(ValueError, match="broadcast"):
        ReplyCollector(CMD, CallTarget.direct(4), deadline=1.0, expected_members=[44])
    with pytest.raises(ValueError):
        CallTarget(contact_id=1, group_id=2)
    with pytest.raises(ValueError):
        CallTarget(contact_id=1, member_id=2)


# ---------------------------------------------------------------------------------- core JSON


def test_core_json_items_are_read() -> None:
    item = ReceivedItem.from_core(core_direct_item(21, "Ridgecrest, $142", 20))
    assert item == ReceivedItem(21, "Ridgecrest, $142", Sender(contact_id=4), 20, contact_id=4)
    assert item.sender is not None and item.sender.display_name == "acme"
    group = ReceivedItem.from_core(core_group_item(22, 44, FINAL, 20))
    assert group == ReceivedItem(22, FINAL, Sender(group_member_id=44), 20, group_id=15)
    assert group.sender is not None and group.sender.display_name == "Member 44"


def test_collector_takes_core_json() -> None:
    c = ReplyCollector(
        CMD, CallTarget.group(15, 44), deadline=30.0, is_final=jsonrpc_response_to(1)
    )
    c.receive_item(core_group_item(21, 44, FINAL, CMD), now=1.0)
    assert c.state is CallState.COMPLETED


@pytest.mark.parametrize(
    "mutate",
    [
        lambda i: i.pop("chatInfo"),
        lambda i: i["chatItem"]["meta"].pop("itemId"),
        lambda i: i["chatItem"]["meta"].__setitem__("itemId", "21"),
        lambda i: i["chatItem"]["meta"].__setitem__("itemId", True),
        lambda i: i["chatItem"].__setitem__("chatDir", None),
        lambda i: i["chatItem"]["content"]["msgContent"].__setitem__("text", 5),
        lambda i: i["chatItem"]["quotedItem"].__setitem__("itemId", "20"),
    ],
)
def test_unreadable_core_items_are_ignored_not_raised(mutate: Any) -> None:
    item = core_direct_item(21, FINAL, CMD)
    mutate(item)
    with pytest.raises(CallFramingError) as info:
        ReceivedItem.from_core(item)
    assert info.value.code == "bad_chat_item"
    c = direct_collector()
    c.receive_item(item, now=1.0)
    assert drain(c) == [ReplyIgnored(None, IgnoreReason.UNREADABLE)]


def test_non_message_content_and_deleted_items_have_no_text() -> None:
    item = core_direct_item(21, FINAL, CMD)
    item["chatItem"]["content"] = {"type": "rcvDeleted", "deleteMode": "cidmBroadcast"}
    assert ReceivedItem.from_core(item).text is None
    item = core_direct_item(21, FINAL, CMD)
    item["chatItem"]["meta"]["itemDeleted"] = {"type": "deleted"}
    assert ReceivedItem.from_core(item).text is None


def test_own_and_channel_items() -> None:
    item = core_direct_item(21, FINAL, CMD)
    item["chatItem"]["chatDir"] = {"type": "directSnd"}
    read = ReceivedItem.from_core(item)
    assert read.own and read.sender is None
    item["chatInfo"] = {"type": "group", "groupInfo": {"groupId": 15}}
    item["chatItem"]["chatDir"] = {"type": "channelRcv"}
    read = ReceivedItem.from_core(item)
    assert not read.own and read.sender is None
    c = ReplyCollector(CMD, CallTarget.group(15), deadline=9.0)
    c.receive_item(read, now=0.0)
    assert drain(c) == [ReplyIgnored(21, IgnoreReason.WRONG_SENDER, None)]


# ---------------------------------------------------------------------------------- final rule


@pytest.mark.parametrize(
    ("message", "final"),
    [
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, True),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603}}, True),
        ({"jsonrpc": "2.0", "id": 1.0, "result": {}}, True),
        ({"jsonrpc": "2.0", "id": "1", "result": {}}, False),
        ({"jsonrpc": "2.0", "id": True, "result": {}}, False),
        ({"jsonrpc": "2.0", "id": 2, "result": {}}, False),
        ({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}, False),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, False),
        ({"jsonrpc": "2.0", "id": 1}, False),
    ],
)
def test_jsonrpc_response_rule(message: dict[str, Any], final: bool) -> None:
    assert jsonrpc_response_to(1)(message) is final


def test_jsonrpc_string_ids() -> None:
    assert jsonrpc_response_to("a")({"id": "a", "result": 1})
    assert not jsonrpc_response_to("1")({"id": 1, "result": 1})


# ---------------------------------------------------------------------------------- state machine

SENDERS = [44, 45, 46]


class CollectorMachine(RuleBasedStateMachine):
    """Random replies, in any order, from allowed and other senders, quoting this or other items."""

    @initialize(
        kind=st.sampled_from(["direct", "mention", "broadcast", "broadcast-expected"]),
        deadline=st.floats(min_value=1.0, max_value=100.0),
    )
    def start(self, kind: str, deadline: float) -> None:
        self.kind = kind
        self.deadline = deadline
        self.now = 0.0
        self.next_id = CMD + 1
        expected = None
        if kind == "direct":
            target = CallTarget.direct(4)
        elif kind == "mention":
            target = CallTarget.group(15, 44)
        else:
            target = CallTarget.group(15)
            expected = [44, 45] if kind == "broadcast-expected" else None
        self.collector = ReplyCollector(
            CMD,
            target,
            deadline=deadline,
            is_final=jsonrpc_response_to(1),
            expected_members=expected,
        )
        self.expected_senders: set[Sender] | None = (
            {Sender(contact_id=4)}
            if kind == "direct"
            else {Sender(group_member_id=44)}
            if kind == "mention"
            else {Sender(group_member_id=m) for m in expected}
            if expected
            else None
        )
        self.model_replies: list[tuple[int, Sender, bool]] = []
        self.model_completed: set[Sender] = set()
        self.model_state = CallState.WAITING
        self.events: list[CollectorEvent] = []

    def _allowed(self, sender: Sender) -> bool:
        if self.kind == "direct":
            return sender == Sender(contact_id=4)
        if self.kind == "mention":
            return sender == Sender(group_member_id=44)
        return sender.group_member_id is not None

    @rule(
        member=st.sampled_from(SENDERS),
        quotes_command=st.booleans(),
        body=st.sampled_from([FINAL, PROGRESS, "plain text", '{"id":2,"result":1}']),
        step=st.floats(min_value=0.0, max_value=20.0),
        other_chat=st.booleans(),
    )
    def receive(
        self, member: int, quotes_command: bool, body: str, step: float, other_chat: bool
    ) -> None:
        self.now += step
        item_id = self.next_id
        self.next_id += 1
        quoted = CMD if quotes_command else CMD - 1
        if self.kind == "direct":
            contact = 4 if member == 44 else 5
            item = ReceivedItem.direct(item_id, contact, body, quoted_item_id=quoted)
            sender = Sender(contact_id=contact)
            same_chat = contact == 4
        else:
            group = 16 if other_chat else 15
            item = ReceivedItem.group(item_id, group, member, body, quoted_item_id=quoted)
            sender = Sender(group_member_id=member)
            same_chat = not other_chat
        # the model
        if self.model_state is CallState.WAITING and self.now >= self.deadline:
            self.model_state = CallState.TIMED_OUT
        if (
            self.model_state is CallState.WAITING
            and same_chat
            and quotes_command
            and self._allowed(sender)
        ):
            final = body == FINAL
            self.model_replies.append((item_id, sender, final))
            if final:
                self.model_completed.add(sender)
                if (
                    self.expected_senders is not None
                    and self.expected_senders <= self.model_completed
                ):
                    self.model_state = CallState.COMPLETED
        self.last_item = item
        self.collector.receive_item(item, self.now)
        self.events.extend(drain(self.collector))

    @rule(step=st.floats(min_value=0.0, max_value=50.0))
    def tick(self, step: float) -> None:
        self.now += step
        if self.model_state is CallState.WAITING and self.now >= self.deadline:
            self.model_state = CallState.TIMED_OUT
        self.collector.check_deadline(self.now)
        self.events.extend(drain(self.collector))

    @precondition(lambda self: self.next_id > CMD + 1)
    @rule()
    def redeliver_last(self) -> None:
        # The core can report an item twice; it is collected once.
        before = len(self.collector.replies)
        if self.model_state is CallState.WAITING and self.now >= self.deadline:
            self.model_state = CallState.TIMED_OUT
        self.collector.receive_item(self.last_item, self.now)
        self.events.extend(drain(self.collector))
        assert len(self.collector.replies) == before

    @invariant()
    def matches_the_model(self) -> None:
        got = [(r.item_id, r.sender, r.final) for r in self.collector.replies]
        assert got == self.model_replies
        assert self.collector.state is self.model_state
        assert self.collector.result().completed == self.model_completed

    @invariant()
    def ending_event_is_last_and_single(self) -> None:
        ends = [i for i, e in enumerate(self.events) if isinstance(e, CallCompleted | CallTimedOut)]
        assert len(ends) <= 1
        if ends:
            after = self.events[ends[0] + 1 :]
            assert all(
                isinstance(e, ReplyIgnored) and e.reason is IgnoreReason.CALL_ENDED for e in after
            )

    @invariant()
    def collected_replies_are_announced_in_order(self) -> None:
        announced = [
            e.reply.item_id for e in self.events if isinstance(e, ReplyReceived | TextReplyReceived)
        ]
        assert announced == [r.item_id for r in self.collector.replies]


CollectorMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=30, deadline=None
)
test_collector_state_machine = CollectorMachine.TestCase
