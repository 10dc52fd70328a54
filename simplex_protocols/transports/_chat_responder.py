"""The chat transport, bot side: answer each ``/_call`` for a protocol the bot serves.

Spec "Chat transport": "A bot that declares transports.chat for a protocol MUST answer each
/_call for it that mentions the bot or mentions nobody." (CALL-BOT-1) "In a group, a command
with a mention is answered by the mentioned member." (CALL-GRP-1) "A bot answers a command with
one or more replies. Each reply quotes the command" (CALL-REP-1). "A bot whose reply exceeds the
limit replies with the binding's error instead." (CALL-SIZE-3)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final

import anyio
import anyio.abc
import anyio.lowlevel

from simplex_protocols._clock import Clock
from simplex_protocols._trace_context import request_trace_id
from simplex_protocols.chat_call import (
    CallDisposition,
    CallReply,
    IncomingCall,
    build_reply,
    build_unquoted_error,
    is_call_command,
    triage_call,
)
from simplex_protocols.core import (
    ChatAPI,
    ChatCore,
    ChatRef,
    ContactRef,
    GroupRef,
    ReceivedMessage,
    event_type,
    event_user_id,
    received_messages,
)
from simplex_protocols.core import commands as cmds
from simplex_protocols.errors import (
    CallFormatError,
    CoreConnectionError,
    CoreError,
    MessageTooLargeError,
)

from ._binding import Binding, Caller, TransportKind
from ._common import CallRecord, log_call, logger, method_of, served_bindings, shielded
from ._server import Call, EventResponder

__all__ = ["COMMAND_CONTENT_TYPES", "ChatResponder", "internal_error_for", "message_caller"]

#: Message content types whose text can carry a command (AMB-17, reading B): text, and text
#: with a link preview. Captions of images, files and other media do not.
COMMAND_CONTENT_TYPES: Final = frozenset({"text", "link"})


def internal_error_for(
    binding: Binding, request: Mapping[str, Any] | None, reason: str
) -> dict[str, Any] | None:
    """The binding's error answer to a request it could not finish, or ``None`` for none.

    A binding may offer ``internal_error(request, reason)``; otherwise, for a JSON-RPC request
    (MCP and A2A both are), this is the JSON-RPC error -32603 with the request's ``id``. A
    JSON-RPC notification (no ``id``) gets no answer (AMB-30).
    """
    hook = getattr(binding, "internal_error", None)
    if callable(hook):
        value = hook(request, reason)
        return dict(value) if isinstance(value, Mapping) else None
    if request is None or "id" not in request or request.get("jsonrpc") != "2.0":
        return None
    return {
        "jsonrpc": "2.0",
        "id": request["id"],
        "error": {"code": -32603, "message": reason},
    }


def _is_notification(message: Mapping[str, Any]) -> bool:
    return "method" in message and "id" not in message


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _profile_name(obj: Any, key: str) -> str | None:
    profile = obj.get(key) if isinstance(obj, Mapping) else None
    return _str(profile.get("displayName")) if isinstance(profile, Mapping) else None


def _peer_type(obj: Any, key: str) -> str | None:
    profile = obj.get(key) if isinstance(obj, Mapping) else None
    return _str(profile.get("peerType")) if isinstance(profile, Mapping) else None


def message_caller(message: ReceivedMessage) -> Caller | None:
    """The :class:`Caller` of a received command: the contact, or the group member.

    Keys: ``chat:@<contactId>`` in a direct chat, ``chat:#<groupId>/<groupMemberId>`` in a
    group. ``None`` for senders that are neither (a channel).
    """
    chat_info = message.item.get("chatInfo")
    ref = message.chat_ref
    if isinstance(ref, ContactRef):
        contact = chat_info.get("contact") if isinstance(chat_info, Mapping) else None
        return Caller(
            key=f"chat:@{ref.contact_id}",
            transport=TransportKind.CHAT,
            display_name=message.sender or _profile_name(contact, "profile"),
            contact_id=ref.contact_id,
            peer_type=_peer_type(contact, "profile"),
        )
    if isinstance(ref, GroupRef) and message.sender_member_id is not None:
        chat_item = message.item.get("chatItem")
        direction = chat_item.get("chatDir") if isinstance(chat_item, Mapping) else None
        member = direction.get("groupMember") if isinstance(direction, Mapping) else None
        return Caller(
            key=f"chat:#{ref.group_id}/{message.sender_member_id}",
            transport=TransportKind.CHAT,
            display_name=_profile_name(member, "memberProfile") or message.sender,
            group_id=ref.group_id,
            group_member_id=message.sender_member_id,
            in_group=True,
            peer_type=_peer_type(member, "memberProfile"),
        )
    return None


def _membership_names(message: ReceivedMessage) -> set[str]:
    chat_info = message.item.get("chatInfo")
    info = chat_info.get("groupInfo") if isinstance(chat_info, Mapping) else None
    membership = info.get("membership") if isinstance(info, Mapping) else None
    names = set()
    if isinstance(membership, Mapping):
        for name in (
            _profile_name(membership, "memberProfile"),
            _str(membership.get("localDisplayName")),
        ):
            if name is not None:
                names.add(name)
    return names


@dataclass
class _Answering:
    """One call's answer as it is being sent."""

    chat: ChatRef
    command_item_id: int
    command_text: str
    in_group: bool
    binding: Binding
    request: Mapping[str, Any] | None
    replies: int = 0
    ended: bool = False
    replaced: bool = False
    unanswerable: bool = False
    dropped: list[str] = field(default_factory=list)


class ChatResponder(EventResponder):
    """Answers ``/_call`` commands in direct chats and groups through the bot's bindings.

    For each received text (or link) message that is a ``/_call`` (AMB-17):

    - a command that mentions another member is ignored (CALL-GRP-1);
    - a command for a protocol the bot does not serve gets no answer (AMB-1);
    - a command for us whose request is not a JSON object gets the binding's parse error
      (AMB-27), quoting the command;
    - otherwise the binding answers: each message it emits is one reply quoting the command,
      in order (CALL-REP-1); a reply over the size limit is replaced by the binding's error,
      which ends the answer (CALL-SIZE-3; a notification is a reply too, so an oversize
      notification is replaced the same way, AMB-31 reading B); a binding that raises, or a call cut short by a shutdown, gets the
      binding's internal error as its last reply (:func:`internal_error_for`).

    Our own messages are never answered, and edits of a command are not new commands.

    Args:
        core: an entered :class:`~simplex_protocols.core.ChatCore` (or a ``ChatAPI`` over one).
        bindings: the bindings, as a mapping by protocol name or an iterable.
        protocols: the protocols served in conversations (declared with ``transports.chat``);
            default: every binding's.
        names: more names the bot answers to in a mention, besides its profile's display
            name and, in each group, its member profile's.
        user_id: answer only in this user's chats (default: the core's active user).
        clock: the responder's clock (durations, shutdown grace).
        max_concurrency: how many calls are answered at once; others wait for a slot.
        shutdown_grace_s: how long :meth:`shutdown` lets calls in flight go on.
        on_call: called with a :class:`CallRecord` after each call (also logged).
    """

    def __init__(
        self,
        core: ChatCore | ChatAPI,
        bindings: Mapping[str, Binding] | Iterable[Binding],
        *,
        protocols: Collection[str] | None = None,
        names: Iterable[str] = (),
        user_id: int | None = None,
        clock: Clock | None = None,
        max_concurrency: int = 32,
        shutdown_grace_s: float = 10.0,
        on_call: Callable[[CallRecord], None] | None = None,
    ) -> None:
        super().__init__(
            core,
            clock=clock,
            max_concurrency=max_concurrency,
            shutdown_grace_s=shutdown_grace_s,
        )
        self.api = ChatAPI(self.core)
        self.bindings, self.protocols = served_bindings(bindings, protocols)
        self.user_id = user_id
        self.names = set(names)
        self._on_call = on_call

    async def _load_identity(self) -> None:
        user: Mapping[str, Any] | None = None
        if self.user_id is None:
            user = await self.api.active_user()
        else:
            for info in await self.api.list_users():
                candidate = info.get("user")
                if isinstance(candidate, Mapping) and candidate.get("userId") == self.user_id:
                    user = candidate
        if user is None:
            raise CoreError(
                {"type": "error", "errorType": {"type": "noActiveUser"}},
                command=cmds.show_active_user(),
            )
        self.user_id = int(user["userId"])
        for name in (_profile_name(user, "profile"), _str(user.get("localDisplayName"))):
            if name is not None:
                self.names.add(name)

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Learn the bot's user and names from the core, then answer calls until
        :meth:`shutdown`. See :meth:`EventResponder.serve`.

        Raises:
            CoreError: the core has no such user.
            CoreConnectionError: the connection to the core was lost.
        """
        if not self.closing:
            await self._load_identity()
        await super().serve(task_status=task_status)

    # ------------------------------------------------------------------ events

    # Only new items are commands: an edited command is not asked again.
    _event_types = frozenset({"newChatItems"})

    def _accept(self, event: dict[str, Any]) -> list[Call]:
        if event_type(event) != "newChatItems":
            return []
        if self.user_id is not None and event_user_id(event) not in (None, self.user_id):
            return []
        calls: list[Call] = []
        for message in received_messages(event):
            call = self._triage(message)
            if call is not None:
                calls.append(call)
        return calls

    def _triage(self, message: ReceivedMessage) -> Call | None:
        # AMB-17: text and link messages carry commands; captions and live drafts do not.
        if message.content_type not in COMMAND_CONTENT_TYPES or message.live:
            return None
        # CALL-CMD-6: a command is the text of a message, from its first character.
        if not is_call_command(message.text):
            return None
        chat = message.chat_ref
        if chat is None:
            return None
        caller = message_caller(message)
        if caller is None:
            return None
        names = self.names | _membership_names(message) if caller.in_group else self.names
        incoming = triage_call(message.text, my_names=names)
        if incoming is None or incoming.disposition is CallDisposition.IGNORE:
            # CALL-GRP-1: a command that mentions another member is not ours.
            return None
        protocol = incoming.protocol
        if protocol is None or protocol not in self.protocols:
            # AMB-1: silence for a protocol we do not serve.
            return None
        arrived = self.clock.now()
        binding = self.bindings[protocol]

        # The call itself, its scope still to come (a partial, not a closure: no coroutine
        # frame of its own stays alive with each pending call).
        return partial(self._answer, message, chat, caller, binding, incoming, arrived)

    # ------------------------------------------------------------------ answering

    async def _answer(
        self,
        message: ReceivedMessage,
        chat: ChatRef,
        caller: Caller,
        binding: Binding,
        incoming: IncomingCall,
        arrived: float,
        scope: anyio.CancelScope,
    ) -> None:
        command = incoming.command
        state = _Answering(
            chat=chat,
            command_item_id=message.item_id,
            command_text=message.text,
            in_group=caller.in_group,
            binding=binding,
            request=command.request if command is not None else None,
        )
        outcome = "answered"
        finished = False
        failed = False
        try:
            with scope:
                # A free slot is taken at once: ``async with`` the limiter would wait a turn
                # of the event loop even then (anyio's acquire ends with a checkpoint).
                try:
                    self._limiter.acquire_nowait()
                except anyio.WouldBlock:
                    await self._limiter.acquire()
                try:
                    if command is None:
                        # AMB-27: a malformed request gets the protocol's parse error.
                        error = incoming.error
                        reason = error.reason if error is not None else "invalid request"
                        await self._emit(
                            state, binding.parse_error(incoming.request_text or "", reason)
                        )
                        state.ended = True
                        outcome = "parse_error"
                    else:

                        async def emit(reply: dict[str, Any]) -> None:
                            await self._emit(state, reply)

                        await binding.handle_chat(command.request, caller, emit)
                        # Some SDK code swallows a cancellation and returns normally (a
                        # stream that ends quietly); a cancelled scope cancels again at the
                        # next checkpoint, so a call cut short is not taken for answered.
                        # Only a cancelled call waits for it: an answered one goes on
                        # without a turn of the event loop.
                        await anyio.lowlevel.checkpoint_if_cancelled()
                except Exception:
                    failed = True
                    logger.exception(
                        "the %s binding failed on a call from %s", binding.name, caller.key
                    )
                finally:
                    self._limiter.release()
                finished = True
        finally:
            if failed or not finished:
                outcome = "failed" if failed else "shutdown"
                if not state.ended:
                    reason = "internal error" if failed else "the bot is shutting down"
                    error_reply = internal_error_for(binding, state.request, reason)
                    if error_reply is not None:
                        await self._emit(state, error_reply)
                        state.ended = True
            if state.unanswerable and state.replies == 0:
                outcome = "unanswered"
            elif state.replaced and outcome == "answered":
                outcome = "replaced"
            log_call(
                CallRecord(
                    TransportKind.CHAT,
                    caller.key,
                    incoming.protocol,
                    method_of(state.request),
                    outcome,
                    self.clock.now() - arrived,
                    state.replies,
                    request_trace_id(state.request),
                ),
                self._on_call,
            )

    async def _emit(self, state: _Answering, message: Any) -> None:
        """Send one message of the answer (a JSON object) as a reply quoting the command."""
        if state.ended and state.replaced:
            # The binding's error took the place of an oversize reply and ended the answer.
            logger.debug("a message after the answer ended was not sent")
            return
        if not isinstance(message, Mapping):
            logger.error("the %s binding emitted a non-object; not sent", state.binding.name)
            return
        binding = state.binding
        note = _is_notification(message)

        def oversize(replaced: Mapping[str, Any]) -> Mapping[str, Any] | str:
            # A notification has no id: its replacement answers the request (AMB-31, B).
            if note and state.request is not None:
                return binding.oversize_error(state.request)
            return binding.oversize_error(replaced)

        try:
            reply = build_reply(
                message,
                command_item_id=state.command_item_id,
                command_text=state.command_text,
                in_group=state.in_group,
                oversize=oversize,
            )
        except MessageTooLargeError:
            # Even the binding's error does not fit beside the quoted command: the core quotes
            # it whole (AMB-33), so the error goes without the quote; CALL-BOT-1 still holds.
            await self._answer_unquoted(state, oversize(message))
            return
        except CallFormatError:
            logger.error("the %s binding emitted a message that is not JSON", binding.name)
            return
        sent = await self._send(state, reply)
        if sent == "large" and not reply.replaced:
            # The core counted more than our model: send the binding's error instead.
            try:
                replacement = build_reply(
                    oversize(message),
                    command_item_id=state.command_item_id,
                    command_text=state.command_text,
                    in_group=state.in_group,
                )
            except (MessageTooLargeError, CallFormatError) as exc:
                logger.error("cannot reply to a command: %s", exc)
                state.unanswerable = True
                state.ended = True
                return
            reply = CallReply(replacement.text, replacement.quoted_item_id, replacement.size, True)
            sent = await self._send(state, reply)
        if sent != "sent":
            state.unanswerable = True
            if not note:
                state.ended = True
            return
        state.replies += 1
        if reply.replaced:
            # CALL-SIZE-3: the binding's error replaced the reply; it ends the answer.
            state.replaced = True
            state.ended = True
        elif state.request is not None and binding.is_final(state.request, message):
            state.ended = True

    async def _answer_unquoted(self, state: _Answering, error: Mapping[str, Any] | str) -> None:
        """Send the binding's ``error`` without quoting the command (AMB-33)."""
        state.ended = True
        try:
            reply = build_unquoted_error(error, in_group=state.in_group)
        except (MessageTooLargeError, CallFormatError) as exc:
            logger.error("cannot reply to a command: %s", exc)
            state.unanswerable = True
            return
        logger.warning(
            "a command of %d characters is too long to be quoted in a reply; "
            "its error is sent without the quote",
            len(state.command_text),
        )
        if await self._send(state, reply) != "sent":
            state.unanswerable = True
            return
        state.replies += 1
        state.replaced = True

    async def _send(self, state: _Answering, reply: CallReply) -> str:
        """Send one reply whole (never cut by a cancellation).

        Returns ``"sent"``, ``"large"`` (the core refused it as too large: ``largeMsg``) or
        ``"failed"`` (any other refusal, logged).
        """

        async def send() -> None:
            # CALL-REP-1: each reply quotes the command (quotedItemId).
            await self.api.send_messages(state.chat, [reply.composed_message()])

        try:
            await shielded(send)
        except CoreError as exc:
            if exc.error_type == "largeMsg":
                logger.warning("the core refused a reply as too large (%d bytes)", reply.size)
                return "large"
            logger.error("the core refused a reply: %s", exc)
            return "failed"
        except TimeoutError:
            logger.error("the core did not take a reply in time")
            return "failed"
        except CoreConnectionError as exc:
            logger.error("could not send a reply: %s", exc)
            return "failed"
        return "sent"
