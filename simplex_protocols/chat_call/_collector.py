"""The caller's side of a ``/_call``: which received messages answer the command (sans-IO).

Spec "Chat transport" > "Replies": "A caller matches each reply to its command by the quoted
message. Replies can arrive in any order. A caller collects every reply until its wait ends,
each with its sender, in arrival order. ... A reply whose text is not a message of the protocol
is collected as text, with its sender. In a direct chat, a caller accepts replies only from the
recipient. In a group, a caller of a command with a mention accepts only the mentioned member's
replies."

:class:`ReplyCollector` keeps that state for one sent command. It does no I/O and never reads a
clock: received chat items and the current time are passed in (``receive_item(item, now)``,
``check_deadline(now)``), and what happened comes out as events (``next_event()``), as in h11.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from simplex_protocols import _wire
from simplex_protocols.errors import CallFramingError

__all__ = [
    "AnswerCompleted",
    "CallCompleted",
    "CallResult",
    "CallState",
    "CallTarget",
    "CallTimedOut",
    "CollectorEvent",
    "IgnoreReason",
    "ReceivedItem",
    "Reply",
    "ReplyCollector",
    "ReplyIgnored",
    "ReplyReceived",
    "Sender",
    "TextReplyReceived",
    "jsonrpc_response_to",
]


class CallState(enum.Enum):
    """Where a collector is: waiting for replies, or ended one of two ways."""

    WAITING = "waiting"
    COMPLETED = "completed"
    TIMED_OUT = "timed_out"


class IgnoreReason(enum.StrEnum):
    """Why a received item is not a reply to the command."""

    #: The collector's wait has ended (the call completed or timed out).
    CALL_ENDED = "call_ended"
    #: The same item ID arrived before.
    DUPLICATE = "duplicate"
    #: The item belongs to another chat.
    OTHER_CHAT = "other_chat"
    #: We sent the item.
    OWN_ITEM = "own_item"
    #: The item is not a message (a group event, a deleted message, ...).
    NOT_A_MESSAGE = "not_a_message"
    #: The item quotes nothing.
    NOT_A_REPLY = "not_a_reply"
    #: The item quotes another item than the command (CALL-CLR-1).
    OTHER_QUOTE = "other_quote"
    #: The sender may not answer this command (CALL-CLR-4, CALL-CLR-5).
    WRONG_SENDER = "wrong_sender"
    #: The core's JSON for the item could not be read.
    UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True)
class Sender:
    """Who sent a message: a contact (direct chat) or a group member.

    Two senders are equal when their IDs are equal; the display name is for people only.

    Attributes:
        contact_id: the contact's ID in a direct chat.
        group_member_id: the member's ID in a group.
        display_name: the sender's display name, when known.
    """

    contact_id: int | None = None
    group_member_id: int | None = None
    display_name: str | None = field(default=None, compare=False)

    @property
    def key(self) -> str:
        """``@<contactId>`` or ``member:<groupMemberId>``: a stable text key for the sender."""
        if self.group_member_id is not None:
            return f"member:{self.group_member_id}"
        return f"@{self.contact_id}"


@dataclass(frozen=True, slots=True)
class CallTarget:
    """Where a command was sent: a direct chat, or a group with or without a mention.

    Use :meth:`direct` or :meth:`group`.

    Attributes:
        contact_id: the contact of a direct chat.
        group_id: the group.
        member_id: in a group, the mentioned member's ``groupMemberId``; ``None`` for a
            broadcast.
    """

    contact_id: int | None = None
    group_id: int | None = None
    member_id: int | None = None

    def __post_init__(self) -> None:
        if (self.contact_id is None) == (self.group_id is None):
            raise ValueError("a call target is either a direct chat or a group")
        if self.member_id is not None and self.group_id is None:
            raise ValueError("a mentioned member needs a group")

    @classmethod
    def direct(cls, contact_id: int) -> CallTarget:
        """A command sent in the direct chat with a contact."""
        return cls(contact_id=contact_id)

    @classmethod
    def group(cls, group_id: int, member_id: int | None = None) -> CallTarget:
        """A command sent in a group: to the mentioned member, or to every member."""
        return cls(group_id=group_id, member_id=member_id)

    @property
    def in_group(self) -> bool:
        """Whether the command was sent in a group."""
        return self.group_id is not None

    @property
    def broadcast(self) -> bool:
        """Whether the command is a broadcast: in a group, without a mention (CALL-GRP-2)."""
        return self.group_id is not None and self.member_id is None


def _bad_item(reason: str) -> CallFramingError:
    return CallFramingError(f"unreadable chat item: {reason}", code="bad_chat_item")


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad_item(f"{what} is not an integer")
    return value


def _obj(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad_item(f"{what} is not an object")
    return value


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class ReceivedItem:
    """A chat item, reduced to what reply matching needs.

    Build one with :meth:`from_core` from the core's JSON (an ``AChatItem`` of a
    ``newChatItems`` event), or with :meth:`direct` / :meth:`group` in tests.

    Attributes:
        item_id: the item's ID (``chatItem.meta.itemId``).
        text: the message text (``content.msgContent.text``); ``None`` when the item is not a
            message.
        sender: who sent it; ``None`` for our own items and for senders that are neither a
            contact nor a member (a channel).
        quoted_item_id: the ID of the item it quotes (``chatItem.quotedItem.itemId``).
        contact_id: the contact of the direct chat the item is in.
        group_id: the group the item is in.
        own: whether we sent the item.
    """

    item_id: int
    text: str | None
    sender: Sender | None
    quoted_item_id: int | None = None
    contact_id: int | None = None
    group_id: int | None = None
    own: bool = False

    @classmethod
    def direct(
        cls,
        item_id: int,
        contact_id: int,
        text: str | None,
        *,
        quoted_item_id: int | None = None,
        own: bool = False,
        display_name: str | None = None,
    ) -> ReceivedItem:
        """An item of the direct chat with a contact: from the contact, or ``own``."""
        sender = None if own else Sender(contact_id=contact_id, display_name=display_name)
        return cls(item_id, text, sender, quoted_item_id, contact_id=contact_id, own=own)

    @classmethod
    def group(
        cls,
        item_id: int,
        group_id: int,
        member_id: int | None,
        text: str | None,
        *,
        quoted_item_id: int | None = None,
        display_name: str | None = None,
    ) -> ReceivedItem:
        """An item of a group: from the member ``member_id``, or our own when it is ``None``."""
        own = member_id is None
        sender = (
            None
            if member_id is None
            else Sender(group_member_id=member_id, display_name=display_name)
        )
        return cls(item_id, text, sender, quoted_item_id, group_id=group_id, own=own)

    @classmethod
    def from_core(cls, item: Mapping[str, Any]) -> ReceivedItem:
        """Read an ``AChatItem`` (``{"chatInfo": ..., "chatItem": ...}``) of the chat core.

        Only the fields reply matching needs are read; everything else is ignored.

        Raises:
            CallFramingError: ``bad_chat_item`` when a needed field is missing or mistyped.
        """
        item = _obj(item, "the item")
        chat_info = _obj(item.get("chatInfo"), "chatInfo")
        chat_item = _obj(item.get("chatItem"), "chatItem")
        meta = _obj(chat_item.get("meta"), "chatItem.meta")
        item_id = _int(meta.get("itemId"), "meta.itemId")
        contact_id: int | None = None
        group_id: int | None = None
        contact_name: str | None = None
        chat_type = chat_info.get("type")
        if chat_type == "direct":
            contact = _obj(chat_info.get("contact"), "chatInfo.contact")
            contact_id = _int(contact.get("contactId"), "contact.contactId")
            contact_name = _opt_str(contact.get("localDisplayName"))
        elif chat_type == "group":
            group_info = _obj(chat_info.get("groupInfo"), "chatInfo.groupInfo")
            group_id = _int(group_info.get("groupId"), "groupInfo.groupId")
        direction = _obj(chat_item.get("chatDir"), "chatItem.chatDir")
        dir_type = direction.get("type")
        sender: Sender | None = None
        own = dir_type in ("directSnd", "groupSnd", "localSnd", "feedSnd")
        if dir_type == "directRcv" and contact_id is not None:
            sender = Sender(contact_id=contact_id, display_name=contact_name)
        elif dir_type == "groupRcv":
            member = _obj(direction.get("groupMember"), "chatDir.groupMember")
            profile = member.get("memberProfile")
            name = _opt_str(profile.get("displayName")) if isinstance(profile, Mapping) else None
            sender = Sender(
                group_member_id=_int(member.get("groupMemberId"), "groupMember.groupMemberId"),
                display_name=name or _opt_str(member.get("localDisplayName")),
            )
        text: str | None = None
        content = chat_item.get("content")
        if (
            isinstance(content, Mapping)
            and content.get("type") in ("rcvMsgContent", "sndMsgContent")
            and not meta.get("itemDeleted")
        ):
            msg_content = _obj(content.get("msgContent"), "content.msgContent")
            text = msg_content.get("text")
            if not isinstance(text, str):
                raise _bad_item("msgContent.text is not a string")
        quoted_item_id: int | None = None
        quoted = chat_item.get("quotedItem")
        if isinstance(quoted, Mapping) and quoted.get("itemId") is not None:
            quoted_item_id = _int(quoted.get("itemId"), "quotedItem.itemId")
        return cls(
            item_id,
            text,
            sender,
            quoted_item_id,
            contact_id=contact_id,
            group_id=group_id,
            own=own,
        )


@dataclass(frozen=True, slots=True)
class Reply:
    """A reply to the command, as collected (CALL-CLR-2, CALL-CLR-3).

    Attributes:
        sender: who sent it.
        item_id: its item ID.
        text: its text, unchanged.
        message: the protocol message (the text decoded as a JSON object), or ``None`` when
            the text is not a message of the protocol: then the reply is collected as text.
        final: whether the binding says this message ends the sender's answer.
    """

    sender: Sender
    item_id: int
    text: str
    message: Mapping[str, Any] | None
    final: bool = False

    @property
    def is_text(self) -> bool:
        """Whether the reply is collected as text (its text is not a protocol message)."""
        return self.message is None


@dataclass(frozen=True, slots=True)
class CallResult:
    """Everything collected for a command, in arrival order.

    Attributes:
        replies: the replies in the order they arrived (CALL-CLR-2).
        completed: the senders whose answer ended with the binding's final message.
        state: how the wait ended (or ``WAITING`` for a snapshot taken before the end).
    """

    replies: tuple[Reply, ...]
    completed: frozenset[Sender]
    state: CallState

    def by_sender(self) -> dict[Sender, tuple[Reply, ...]]:
        """The replies of each sender, kept apart, each in arrival order (a broadcast)."""
        out: dict[Sender, list[Reply]] = {}
        for reply in self.replies:
            out.setdefault(reply.sender, []).append(reply)
        return {sender: tuple(replies) for sender, replies in out.items()}

    def final_message(self, sender: Sender | None = None) -> Mapping[str, Any] | None:
        """The final protocol message (of ``sender``, or of anyone), or ``None``."""
        for reply in self.replies:
            if reply.final and reply.message is not None and sender in (None, reply.sender):
                return reply.message
        return None


@dataclass(frozen=True, slots=True)
class ReplyReceived:
    """A reply whose text is a protocol message arrived (CALL-CLR-1, CALL-CLR-2)."""

    reply: Reply


@dataclass(frozen=True, slots=True)
class TextReplyReceived:
    """A reply whose text is not a protocol message arrived; kept as text (CALL-CLR-3)."""

    reply: Reply


@dataclass(frozen=True, slots=True)
class ReplyIgnored:
    """A received item is not a reply to this command.

    Attributes:
        item_id: the item's ID, or ``None`` when it could not be read.
        reason: why it was ignored.
        sender: its sender, when known.
    """

    item_id: int | None
    reason: IgnoreReason
    sender: Sender | None = None


@dataclass(frozen=True, slots=True)
class AnswerCompleted:
    """A sender's final message arrived: that sender's answer has ended."""

    sender: Sender


@dataclass(frozen=True, slots=True)
class CallCompleted:
    """Every expected answer ended before the deadline. No further events follow."""

    result: CallResult


@dataclass(frozen=True, slots=True)
class CallTimedOut:
    """The deadline passed. ``result`` holds whatever arrived. No further events follow.

    For a broadcast without expected members this is the normal end of the call.
    """

    result: CallResult


CollectorEvent = (
    ReplyReceived
    | TextReplyReceived
    | ReplyIgnored
    | AnswerCompleted
    | CallCompleted
    | CallTimedOut
)


class ReplyCollector:
    """Collects the replies to one sent ``/_call`` command (sans-IO).

    Args:
        command_item_id: the item ID of the sent command, from the core's answer to the send.
        target: where the command was sent (:meth:`CallTarget.direct`,
            :meth:`CallTarget.group`).
        deadline: when the wait ends, on the same clock as the ``now`` arguments.
        is_final: tells whether a protocol message ends its sender's answer (the binding's
            rule: for MCP the JSON-RPC response to the request, for A2A streaming a terminal
            state). ``None``: no message ends an answer, the wait ends at the deadline.
        expected_members: in a broadcast, the ``groupMemberId`` of the members whose answers
            end the call early once each has ended; without it a broadcast waits until the
            deadline.

    The collector matches replies by quote (CALL-CLR-1), keeps their arrival order and senders
    (CALL-CLR-2), keeps non-protocol replies as text (CALL-CLR-3), and accepts only the
    recipient in a direct chat (CALL-CLR-4) and only the mentioned member in a group
    (CALL-CLR-5). Items sent in the same chat before the command was created cannot quote it;
    the caller buffers items that arrive before it knows ``command_item_id`` and passes them in
    afterwards.
    """

    def __init__(
        self,
        command_item_id: int,
        target: CallTarget,
        *,
        deadline: float,
        is_final: Callable[[Mapping[str, Any]], bool] | None = None,
        expected_members: Iterable[int] | None = None,
    ) -> None:
        self._command_item_id = command_item_id
        self._target = target
        self._deadline = deadline
        self._is_final = is_final
        self._state = CallState.WAITING
        self._events: deque[CollectorEvent] = deque()
        self._replies: list[Reply] = []
        self._completed: set[Sender] = set()
        self._seen: set[int] = set()
        self._expected: frozenset[Sender] | None
        if target.contact_id is not None:
            self._expected = frozenset({Sender(contact_id=target.contact_id)})
            if expected_members is not None:
                raise ValueError("expected_members is for a broadcast in a group")
        elif target.member_id is not None:
            self._expected = frozenset({Sender(group_member_id=target.member_id)})
            if expected_members is not None:
                raise ValueError("expected_members is for a broadcast in a group")
        elif expected_members is not None:
            self._expected = frozenset(Sender(group_member_id=m) for m in expected_members)
        else:
            self._expected = None

    @property
    def command_item_id(self) -> int:
        """The item ID of the command this collector answers."""
        return self._command_item_id

    @property
    def target(self) -> CallTarget:
        """Where the command was sent."""
        return self._target

    @property
    def deadline(self) -> float:
        """When the wait ends."""
        return self._deadline

    @property
    def state(self) -> CallState:
        """Waiting, completed or timed out."""
        return self._state

    @property
    def replies(self) -> tuple[Reply, ...]:
        """The replies collected so far, in arrival order."""
        return tuple(self._replies)

    def result(self) -> CallResult:
        """A snapshot of what has been collected, and the state."""
        return CallResult(tuple(self._replies), frozenset(self._completed), self._state)

    def next_event(self) -> CollectorEvent | None:
        """The next event, or ``None`` when nothing new has happened."""
        return self._events.popleft() if self._events else None

    def check_deadline(self, now: float) -> None:
        """Tell the collector the time; at or after the deadline the wait ends (CallTimedOut)."""
        if self._state is CallState.WAITING and now >= self._deadline:
            self._state = CallState.TIMED_OUT
            self._events.append(CallTimedOut(self.result()))

    def receive_item(self, item: ReceivedItem | Mapping[str, Any], now: float) -> None:
        """Take one received chat item: a :class:`ReceivedItem` or the core's ``AChatItem``.

        Every item gives exactly one of ``ReplyReceived``, ``TextReplyReceived`` or
        ``ReplyIgnored``, possibly followed by ``AnswerCompleted`` and ``CallCompleted``; an
        item at or after the deadline first ends the wait (``CallTimedOut``) and is then
        ignored. Never raises for a bad item: it is ignored as ``unreadable``.
        """
        self.check_deadline(now)
        if not isinstance(item, ReceivedItem):
            try:
                item = ReceivedItem.from_core(item)
            except CallFramingError:
                self._events.append(ReplyIgnored(None, IgnoreReason.UNREADABLE))
                return
        reason = self._reject(item)
        if reason is not None:
            self._events.append(ReplyIgnored(item.item_id, reason, item.sender))
            return
        self._seen.add(item.item_id)
        assert item.sender is not None and item.text is not None  # checked by _reject
        message = _protocol_message(item.text)
        final = message is not None and self._is_final is not None and self._is_final(message)
        reply = Reply(item.sender, item.item_id, item.text, message, final)
        self._replies.append(reply)
        # CALL-CLR-3: a reply that is not a protocol message is collected as text.
        self._events.append(
            ReplyReceived(reply) if message is not None else TextReplyReceived(reply)
        )
        if final and reply.sender not in self._completed:
            self._completed.add(reply.sender)
            self._events.append(AnswerCompleted(reply.sender))
            if self._expected is not None and self._expected <= self._completed:
                self._state = CallState.COMPLETED
                self._events.append(CallCompleted(self.result()))

    def _reject(self, item: ReceivedItem) -> IgnoreReason | None:
        if self._state is not CallState.WAITING:
            return IgnoreReason.CALL_ENDED
        if item.item_id in self._seen:
            return IgnoreReason.DUPLICATE
        target = self._target
        if target.contact_id is not None:
            if item.contact_id != target.contact_id:
                return IgnoreReason.OTHER_CHAT
        elif item.group_id != target.group_id:
            return IgnoreReason.OTHER_CHAT
        if item.own:
            return IgnoreReason.OWN_ITEM
        if item.text is None:
            return IgnoreReason.NOT_A_MESSAGE
        if item.quoted_item_id is None:
            return IgnoreReason.NOT_A_REPLY
        # CALL-CLR-1: "A caller matches each reply to its command by the quoted message."
        if item.quoted_item_id != self._command_item_id:
            return IgnoreReason.OTHER_QUOTE
        sender = item.sender
        if sender is None:
            return IgnoreReason.WRONG_SENDER
        if target.contact_id is not None:
            # CALL-CLR-4: "In a direct chat, a caller accepts replies only from the recipient."
            if sender.contact_id != target.contact_id:
                return IgnoreReason.WRONG_SENDER
        elif sender.group_member_id is None:
            return IgnoreReason.WRONG_SENDER
        elif target.member_id is not None and sender.group_member_id != target.member_id:
            # CALL-CLR-5: "In a group, a caller of a command with a mention accepts only the
            # mentioned member's replies."
            return IgnoreReason.WRONG_SENDER
        return None


def _protocol_message(text: str) -> dict[str, Any] | None:
    """The text as a protocol message (a JSON object), or ``None`` to collect it as text."""
    if not text.lstrip(" \t\r\n").startswith("{"):
        return None
    try:
        value = _wire.loads(text)
    except _wire.WireJSONError:
        return None
    return value if isinstance(value, dict) else None


def _same_id(a: Any, b: Any) -> bool:
    # JSON-RPC IDs are strings or numbers; True is not 1 and "1" is not 1.
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    return isinstance(a, int | float) and isinstance(b, int | float) and a == b


def jsonrpc_response_to(request_id: str | int | float) -> Callable[[Mapping[str, Any]], bool]:
    """A final-message rule: the JSON-RPC response (result or error) with ``request_id``.

    It ends an MCP answer, and an A2A answer of a method that does not stream. Notifications
    and requests (messages with ``method``) do not end it.
    """

    def is_final(message: Mapping[str, Any]) -> bool:
        return (
            "method" not in message
            and ("result" in message or "error" in message)
            and "id" in message
            and _same_id(message["id"], request_id)
        )

    return is_final
