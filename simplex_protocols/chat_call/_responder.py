"""The bot's side of a ``/_call``: whether to answer, and the replies (sans-IO).

Spec "Chat transport": "A bot that declares transports.chat for a protocol MUST answer each
/_call for it that mentions the bot or mentions nobody." (CALL-BOT-1) "In a group, a command
with a mention is answered by the mentioned member. A command without a mention is a
broadcast: each member that serves the protocol answers it." (CALL-GRP-1, CALL-GRP-2) "Each
reply quotes the command" (CALL-REP-1) "A bot whose reply exceeds the limit replies with the
binding's error instead." (CALL-SIZE-3)
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from simplex_protocols import _wire
from simplex_protocols.errors import CallFormatError, CallFramingError, MessageTooLargeError
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES

from ._command import CallCommand, is_call_command, parse_call_command

__all__ = [
    "CallDisposition",
    "CallReply",
    "IncomingCall",
    "build_reply",
    "build_unquoted_error",
    "is_addressed_to",
    "triage_call",
]


class CallDisposition(enum.StrEnum):
    """What a bot does with a received ``/_call``."""

    #: A well-formed command for us: pass the request to the protocol.
    ANSWER = "answer"
    #: A command for us whose request is malformed: answer with the protocol's parse error.
    ANSWER_ERROR = "answer_error"
    #: Not for us (it mentions another member), or too malformed to tell the protocol.
    IGNORE = "ignore"


@dataclass(frozen=True, slots=True)
class IncomingCall:
    """A received ``/_call`` and what to do with it.

    Attributes:
        disposition: answer, answer with the protocol's parse error, or ignore.
        command: the command, when it is well-formed.
        error: the framing problem, when it is not.
    """

    disposition: CallDisposition
    command: CallCommand | None = None
    error: CallFramingError | None = None

    @property
    def protocol(self) -> str | None:
        """The protocol named by the command, when it got that far."""
        if self.command is not None:
            return self.command.protocol
        return self.error.protocol if self.error is not None else None

    @property
    def request_text(self) -> str | None:
        """The request as written, for the protocol's parse error."""
        if self.command is not None:
            return self.command.request_text
        return self.error.request_text if self.error is not None else None


def _names(my_names: str | Iterable[str]) -> frozenset[str]:
    return frozenset((my_names,)) if isinstance(my_names, str) else frozenset(my_names)


def is_addressed_to(member: str | None, my_names: str | Iterable[str]) -> bool:
    """Whether a command with this mention is for us: it mentions nobody, or one of our names.

    Args:
        member: the command's mentioned name (``CallCommand.member``), or ``None``.
        my_names: our display name, or several names we answer to. A mention is compared
            exactly: the core writes the member's display name in a mention.
    """
    return member is None or member in _names(my_names)


def triage_call(text: str, *, my_names: str | Iterable[str]) -> IncomingCall | None:
    """Read a received message as a ``/_call`` and decide what the bot does with it.

    Args:
        text: the message's text.
        my_names: our display name, or several names we answer to.

    Returns:
        ``None`` when the text is not a ``/_call`` at all. Otherwise an :class:`IncomingCall`:

        - ``ANSWER`` for a well-formed command that mentions us or nobody (CALL-BOT-1,
          CALL-GRP-2);
        - ``IGNORE`` for a command that mentions someone else (CALL-GRP-1), well-formed or not,
          and for a malformed command whose protocol cannot be told (a bad or missing protocol
          name, a bad mention): no protocol's error format applies (the spec does not say what
          to answer; we stay silent);
        - ``ANSWER_ERROR`` for a command for us whose request is missing or is not a JSON
          object: the protocol's parse error answers it (the error keeps ``request_text``).

        Whether the bot serves ``protocol`` is the bot's own check.
    """
    if not is_call_command(text):
        return None
    mine = _names(my_names)
    try:
        command = parse_call_command(text)
    except CallFramingError as exc:
        if exc.member is not None and exc.member not in mine:
            return IncomingCall(CallDisposition.IGNORE, error=exc)
        if exc.protocol is not None:
            return IncomingCall(CallDisposition.ANSWER_ERROR, error=exc)
        return IncomingCall(CallDisposition.IGNORE, error=exc)
    # CALL-BOT-1: answer each /_call that mentions the bot or mentions nobody.
    if command.member is None or command.member in mine:
        return IncomingCall(CallDisposition.ANSWER, command=command)
    return IncomingCall(CallDisposition.IGNORE, command=command)


@dataclass(frozen=True, slots=True)
class CallReply:
    """One reply to a command, ready to send.

    Attributes:
        text: the reply's text.
        quoted_item_id: the command's item ID; the reply quotes it (CALL-REP-1). ``None``
            only for the error that answers a command too long to be quoted (AMB-33).
        size: the message's encoded size as the core counts it, quote included.
        replaced: whether the original message was over the limit and this is the
            replacement (CALL-SIZE-3).
    """

    text: str
    quoted_item_id: int | None
    size: int
    replaced: bool = False

    def composed_message(self) -> dict[str, Any]:
        """The ``ComposedMessage`` of the core's ``/_send ... json [...]`` for this reply."""
        composed: dict[str, Any] = {"msgContent": {"type": "text", "text": self.text}}
        if self.quoted_item_id is not None:
            composed["quotedItemId"] = self.quoted_item_id
        return composed


def _text_of(message: Mapping[str, Any] | str) -> str:
    if isinstance(message, str):
        return message
    try:
        return _wire.dumps(dict(message))
    except (TypeError, ValueError) as exc:
        raise CallFormatError(
            f"the reply cannot be written as JSON: {exc}",
            code="reply_not_json",
            requirement="CALL-REP-2",
        ) from None


def build_unquoted_error(error: Mapping[str, Any] | str, *, in_group: bool) -> CallReply:
    """The binding's error for a command so long that no reply quoting it fits, as a message
    that does not quote it (AMB-33).

    The core carries the whole quoted content in a reply (``quoteContent``: no truncation),
    while the spec says a reply carries a truncated quote and that a bot MUST answer each
    ``/_call`` (CALL-BOT-1): a command over about 15.2 KB cannot be answered with a quote, so
    it is answered without one, the error carrying the request's id.

    Raises:
        CallFormatError: ``reply_not_json``: the error cannot be written as JSON.
        MessageTooLargeError: not even the error alone fits (it always does for MCP and A2A).
    """
    text = _text_of(error)
    size = _wire.chat_message_size(text, in_group=in_group)
    if size > MAX_CHAT_MESSAGE_BYTES:
        raise MessageTooLargeError("reply", size, MAX_CHAT_MESSAGE_BYTES)
    return CallReply(text, None, size, replaced=True)


def build_reply(
    message: Mapping[str, Any] | str,
    *,
    command_item_id: int,
    command_text: str,
    in_group: bool,
    oversize: Callable[[Mapping[str, Any]], Mapping[str, Any] | str] | None = None,
) -> CallReply:
    """Build a reply that quotes the command, replacing one that would be over the limit.

    Args:
        message: the protocol message (a JSON object, written compactly; CALL-REP-2), or a
            text to send as it is.
        command_item_id: the item ID of the received command.
        command_text: the command's text: the reply carries it as its quote, so it counts
            towards the reply's size.
        in_group: whether the command came in a group.
        oversize: the binding's replacement for a message over the limit (for MCP and A2A a
            JSON-RPC error -32603; ``Binding.oversize_error``). Called with the message.

    Returns:
        The reply. ``replaced`` is set when ``oversize`` supplied it (CALL-SIZE-3).

    Raises:
        CallFormatError: ``reply_not_json``: the message cannot be written as JSON.
        MessageTooLargeError: the reply does not fit and there is no replacement, or the
            replacement does not fit either (a command so long that even a short reply
            quoting it is over the limit).
    """
    text = _text_of(message)
    size = _wire.chat_message_size(text, quoted_text=command_text, in_group=in_group)
    if size <= MAX_CHAT_MESSAGE_BYTES:
        return CallReply(text, command_item_id, size)
    if oversize is None or isinstance(message, str):
        raise MessageTooLargeError("reply", size, MAX_CHAT_MESSAGE_BYTES)
    # CALL-SIZE-3: "A bot whose reply exceeds the limit replies with the binding's error
    # instead."
    text = _text_of(oversize(message))
    size = _wire.chat_message_size(text, quoted_text=command_text, in_group=in_group)
    if size > MAX_CHAT_MESSAGE_BYTES:
        raise MessageTooLargeError("reply", size, MAX_CHAT_MESSAGE_BYTES)
    return CallReply(text, command_item_id, size, replaced=True)
