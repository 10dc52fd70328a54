"""The chat transport, caller side: send ``/_call`` and collect the replies that quote it.

Spec "Chat transport" > "Replies": "A caller matches each reply to its command by the quoted
message. Replies can arrive in any order. A caller collects every reply until its wait ends,
each with its sender, in arrival order. In a group, a broadcast receives the answers of every
member that serves the protocol." The matching itself is the sans-IO
:class:`~simplex_protocols.chat_call.ReplyCollector`; this module drives it over a chat core.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from types import FunctionType, MethodType
from typing import Any, Final

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols.chat_call import (
    CallState,
    CallTarget,
    Reply,
    ReplyCollector,
    ReplyReceived,
    Sender,
    TextReplyReceived,
    format_call_command,
)
from simplex_protocols.chat_call.advanced import message_size, reply_budget
from simplex_protocols.core import ChatAPI, ChatCore, ChatRef, ContactRef, GroupRef, event_type
from simplex_protocols.core import commands as cmds
from simplex_protocols.errors import (
    CallFormatError,
    CallTimeoutError,
    CoreError,
    MessageTooLargeError,
    UnexpectedResponseError,
)
from simplex_protocols.limits import DEFAULT_REQUEST_TIMEOUT_S, MAX_CHAT_MESSAGE_BYTES

from ._binding import Binding
from ._common import core_of, run_until

__all__ = ["Answer", "ChatCallResult", "ChatCaller", "FinalRule", "call"]

#: When an answer ends: a binding (its ``is_final`` with the request bound) or a rule on the
#: message alone.
FinalRule = Binding | Callable[[Mapping[str, Any]], bool]

#: Events a call's subscription holds while the command is being sent.
_CALL_EVENT_BUFFER: Final = 10_000

#: The events a call reads its replies from (the rest of the stream is not queued for it).
_REPLY_EVENTS: Final = frozenset({"newChatItems"})

#: The reply text a command must leave room for beside its quote: a JSON-RPC error of a
#: binding (-32603 and a short message) fits in it (AMB-33).
MIN_ANSWER_BYTES: Final = 160


@dataclass(frozen=True, slots=True)
class Answer:
    """One sender's replies to a command, in arrival order.

    Attributes:
        sender: who answered (a contact, or a group member).
        replies: every reply of this sender, protocol messages and text alike (CALL-CLR-2).
        completed: whether the binding's final message arrived from this sender.
    """

    sender: Sender
    replies: tuple[Reply, ...]
    completed: bool

    @property
    def messages(self) -> tuple[Mapping[str, Any], ...]:
        """The protocol messages, in arrival order (notifications, stream items, the response)."""
        return tuple(r.message for r in self.replies if r.message is not None)

    @property
    def texts(self) -> tuple[str, ...]:
        """Replies that are not protocol messages, as text (CALL-CLR-3)."""
        return tuple(r.text for r in self.replies if r.message is None)

    @property
    def final(self) -> Mapping[str, Any] | None:
        """The message that ended the answer (for MCP: the JSON-RPC response), if it came."""
        for reply in self.replies:
            if reply.final and reply.message is not None:
                return reply.message
        return None


@dataclass(frozen=True, slots=True)
class ChatCallResult:
    """What a ``/_call`` brought back.

    Attributes:
        command_item_id: the item ID of the sent command.
        command_text: the command as sent.
        target: where it was sent (direct chat, group member, or broadcast).
        state: ``COMPLETED`` (every expected answer ended with the binding's final message)
            or ``TIMED_OUT`` (the wait ended first; the normal end of a broadcast).
        replies: every reply, of every allowed sender, in arrival order.
        answers: the replies kept apart by sender, in the order the senders first answered.
    """

    command_item_id: int
    command_text: str
    target: CallTarget
    state: CallState
    replies: tuple[Reply, ...]
    answers: tuple[Answer, ...]

    @property
    def completed(self) -> bool:
        """Whether the call ended with the final message(s) before the wait ran out."""
        return self.state is CallState.COMPLETED

    @property
    def text_replies(self) -> tuple[Reply, ...]:
        """Replies that are not protocol messages, each with its sender (CALL-CLR-3)."""
        return tuple(r for r in self.replies if r.message is None)

    def answer_from(self, sender: Sender) -> Answer | None:
        """The answer of one sender, if it replied."""
        for answer in self.answers:
            if answer.sender == sender:
                return answer
        return None

    @property
    def answer(self) -> Answer | None:
        """The recipient's answer, for a direct call or a call with a mention.

        ``None`` when nothing came. For a broadcast use :attr:`answers`.
        """
        return self.answers[0] if self.answers and not self.target.broadcast else None

    @property
    def response(self) -> Mapping[str, Any] | None:
        """The final message of a direct call or a call with a mention, when it came."""
        answer = self.answer
        return answer.final if answer is not None else None


def _result(collector: ReplyCollector, command_text: str, target: CallTarget) -> ChatCallResult:
    snapshot = collector.result()
    senders: list[Sender] = []
    grouped: dict[Sender, list[Reply]] = {}
    for reply in snapshot.replies:
        if reply.sender not in grouped:
            senders.append(reply.sender)
            grouped[reply.sender] = []
        grouped[reply.sender].append(reply)
    answers = tuple(
        Answer(sender, tuple(grouped[sender]), sender in snapshot.completed) for sender in senders
    )
    return ChatCallResult(
        command_item_id=collector.command_item_id,
        command_text=command_text,
        target=target,
        state=snapshot.state,
        replies=snapshot.replies,
        answers=answers,
    )


def _final_rule(
    rule: FinalRule | None, request: Mapping[str, Any]
) -> Callable[[Mapping[str, Any]], bool] | None:
    if rule is None:
        return None
    if isinstance(rule, FunctionType | MethodType):
        # A plain rule: no need for the protocol check below, which looks up every member
        # of Binding on each call.
        return rule
    if isinstance(rule, Binding):
        binding = rule

        def is_final(message: Mapping[str, Any]) -> bool:
            return binding.is_final(request, message)

        return is_final
    return rule


def _item_id(items: Any) -> int:
    if isinstance(items, list) and items:
        chat_item = items[0].get("chatItem") if isinstance(items[0], Mapping) else None
        meta = chat_item.get("meta") if isinstance(chat_item, Mapping) else None
        item_id = meta.get("itemId") if isinstance(meta, Mapping) else None
        if isinstance(item_id, int) and not isinstance(item_id, bool):
            return item_id
    raise UnexpectedResponseError(
        ("newChatItems",), "newChatItems", command=cmds.SEND_VERB, code="malformed_frame"
    )


class ChatCaller:
    """Calls bots in conversations: ``/_call`` out, the replies that quote it back.

    Args:
        core: an entered :class:`~simplex_protocols.core.ChatCore` (or a ``ChatAPI`` over one).
        clock: the clock for the wait; :class:`~simplex_protocols._clock.SystemClock` by
            default.
        default_wait_s: how long a call waits when ``wait_s`` is not given (AMB-18: the
            Service RPC default, 30 s).

    Each call subscribes to the core's events before it sends the command, so no reply is
    missed, and reads them until its wait ends. Many calls may run at once.
    """

    def __init__(
        self,
        core: ChatCore | ChatAPI,
        *,
        clock: Clock | None = None,
        default_wait_s: float = DEFAULT_REQUEST_TIMEOUT_S,
    ) -> None:
        if default_wait_s <= 0:
            raise ValueError("default_wait_s must be positive")
        self.core = core_of(core)
        self.api = ChatAPI(self.core)
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.default_wait_s = default_wait_s

    async def _member(
        self, group_id: int, member_id: int | None, member_name: str | None
    ) -> tuple[int, str]:
        members = await self.api.list_members(group_id)
        for member in members:
            gm_id = member.get("groupMemberId")
            profile = member.get("memberProfile")
            name = profile.get("displayName") if isinstance(profile, Mapping) else None
            if member_id is not None and gm_id == member_id and isinstance(name, str):
                return member_id, member_name if member_name is not None else name
            if (
                member_id is None
                and member_name is not None
                and name == member_name
                and isinstance(gm_id, int)
            ):
                return gm_id, member_name
        who = f"#{member_id}" if member_id is not None else repr(member_name)
        raise CallFormatError(f"no member {who} in the group #{group_id}", code="unknown_member")

    async def call(
        self,
        chat: ChatRef,
        protocol: str,
        request: Mapping[str, Any],
        *,
        member_id: int | None = None,
        member_name: str | None = None,
        final: FinalRule | None = None,
        wait_s: float | None = None,
        expected_members: Iterable[int] | None = None,
        raise_on_timeout: bool = True,
        mentions_map: bool = False,
        on_reply: Callable[[Reply], Awaitable[None]] | None = None,
    ) -> ChatCallResult:
        """Send ``/_call`` to a contact or a group and collect the replies that quote it.

        Args:
            chat: the direct chat (``ContactRef``) or the group (``GroupRef``).
            protocol: the protocol name (CALL-CMD-5: one the recipient serves).
            request: the protocol's request message, a JSON object (CALL-CMD-2).
            member_id: in a group, the ``groupMemberId`` of the member to call; without it
                (and without ``member_name``) the command is a broadcast (CALL-GRP-2).
            member_name: the member's display name, as written in the mention; looked up
                from ``member_id`` when not given (or the member found by it).
            final: the binding, or a rule on messages, that says when an answer ends
                (AMB-18). Without it every call waits for its whole wait.
            wait_s: how long to wait (default ``default_wait_s``), on the caller's clock.
            expected_members: in a broadcast, the members whose final messages end the call
                early once all have come; without them a broadcast waits until the end.
            raise_on_timeout: for a direct call or a call with a mention that has a
                ``final`` rule, raise :class:`CallTimeoutError` when the final message does
                not come in time (the partial result is its ``partial``); ``False`` returns
                the partial result instead.
            mentions_map: also send the mention in the message's ``mentions`` map. Off by
                default: the core reads a one-line text that starts with ``/`` as a single
                command and finds no mention in it, so it refuses a map (``invalidMention``);
                see ``docs/transports.md``.
            on_reply: awaited with each reply as it arrives (before the call returns), for
                callers that show progress or stream items live.

        Returns:
            The replies, in arrival order and by sender. A broadcast returns when the wait
            ends (or every expected member has answered), with each member's answer apart.

        Raises:
            MessageTooLargeError: the command is over the message limit; nothing was sent
                (CALL-SIZE-1, CALL-SIZE-2). Also when the core refuses it as ``largeMsg``, and
                when it leaves no room for a reply that quotes it (``what`` is "the shortest
                reply quoting this command"; AMB-33).
            CallFormatError: the command cannot be written (a bad protocol name, a request
                that is not JSON), or the member is not in the group (``unknown_member``).
            CallTimeoutError: see ``raise_on_timeout``.
            CoreError: the core refused to send (for example a contact not ready).
            CoreConnectionError: the connection to the core was lost.

        The caller stays usable after each of these.
        """
        wait = self.default_wait_s if wait_s is None else wait_s
        if wait <= 0:
            raise ValueError("wait_s must be positive")
        target: CallTarget
        mention: str | None = None
        if isinstance(chat, ContactRef):
            if member_id is not None or member_name is not None:
                raise ValueError("a member is called in a group, not in a direct chat")
            target = CallTarget.direct(chat.contact_id)
        elif isinstance(chat, GroupRef):
            if member_id is not None or member_name is not None:
                member_id, mention = await self._member(chat.group_id, member_id, member_name)
            target = CallTarget.group(chat.group_id, member_id)
        else:
            raise TypeError("chat is a ContactRef or a GroupRef")
        # CALL-SIZE-1/2: a command that is over the limit is refused before it is sent.
        text = format_call_command(protocol, request, member=mention)
        # AMB-33: the core quotes a command whole in each reply, so a command that leaves no
        # room for a short answer beside its quote could not be answered with one.
        room = reply_budget(text, in_group=target.in_group)
        if room < MIN_ANSWER_BYTES:
            raise MessageTooLargeError(
                "the shortest reply quoting this command",
                MAX_CHAT_MESSAGE_BYTES - room + MIN_ANSWER_BYTES,
                MAX_CHAT_MESSAGE_BYTES,
            )
        mentions = {mention: member_id} if mentions_map and mention and member_id else None
        composed = cmds.composed_text(text, mentions=mentions)
        start = self.clock.now()
        async with self.core.events(buffer=_CALL_EVENT_BUFFER, types=_REPLY_EVENTS) as events:
            # Subscribed before sending: a reply cannot slip past.
            try:
                sent = await self.api.send_messages(chat, [composed])
            except CoreError as exc:
                if exc.error_type != "largeMsg":
                    raise
                # The core counted more than our model: still "too large", nothing was sent.
                size = message_size(text, in_group=target.in_group)
                raise MessageTooLargeError("chat message", size, MAX_CHAT_MESSAGE_BYTES) from exc
            collector = ReplyCollector(
                _item_id(sent),
                target,
                deadline=start + wait,
                is_final=_final_rule(final, request),
                expected_members=expected_members if target.broadcast else None,
            )

            async def collect() -> None:
                async for event in events:
                    if event_type(event) != "newChatItems":
                        continue
                    items = event.get("chatItems")
                    for item in items if isinstance(items, list) else []:
                        collector.receive_item(item, self.clock.now())
                    while (happened := collector.next_event()) is not None:
                        if on_reply is not None and isinstance(
                            happened, ReplyReceived | TextReplyReceived
                        ):
                            await on_reply(happened.reply)
                    if collector.state is not CallState.WAITING:
                        return

            await run_until(self.clock, collector.deadline, collect)
            collector.check_deadline(max(self.clock.now(), collector.deadline))
        result = _result(collector, text, target)
        if raise_on_timeout and final is not None and not target.broadcast and not result.completed:
            raise CallTimeoutError(
                f"no final {protocol} message within {wait:g} s",
                timeout=wait,
                partial=result,
            )
        return result


async def call(
    core: ChatCore | ChatAPI,
    chat: ChatRef,
    protocol: str,
    request: Mapping[str, Any],
    *,
    clock: Clock | None = None,
    **options: Any,
) -> ChatCallResult:
    """One ``/_call`` with a throw-away :class:`ChatCaller`; ``options`` as :meth:`ChatCaller.call`."""
    return await ChatCaller(core, clock=clock).call(chat, protocol, request, **options)
