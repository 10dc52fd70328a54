"""The chat transport of "Agent protocols over SimpleX": ``/_call`` in a conversation (sans-IO).

Spec section "Chat transport". Everything here works on strings, dicts and numbers; nothing
reads a socket or a clock.

Commands (CALL-CMD-1..4, NAME-1):
    :class:`CallCommand`, :func:`parse_call_command`, :func:`format_call_command`,
    :func:`is_call_command`; mentions as the core writes them: :func:`format_mention`,
    :func:`parse_mention`; :func:`is_protocol_name` (the same objects as in
    :mod:`simplex_protocols.coretext`, the home of the core's text rules).

Message size (CALL-SIZE-1..3):
    :func:`fits_in_message`, :func:`check_message_size`; the arithmetic behind them
    (``message_size``, ``reply_budget``) is in :mod:`simplex_protocols.chat_call.advanced`.

Caller (CALL-CLR-1..5):
    :class:`ReplyCollector` matches replies to a sent command and emits events
    (:class:`ReplyReceived`, :class:`TextReplyReceived`, :class:`ReplyIgnored`,
    :class:`AnswerCompleted`, :class:`CallCompleted`, :class:`CallTimedOut`);
    :class:`CallTarget`, :class:`ReceivedItem`, :class:`Sender`, :class:`Reply`,
    :class:`CallResult`, :func:`jsonrpc_response_to`.

Bot (CALL-BOT-1, CALL-GRP-1/2, CALL-REP-1/2, CALL-SIZE-3):
    :func:`triage_call`, :func:`is_addressed_to`, :func:`build_reply`, :class:`CallReply`.
"""

from __future__ import annotations

from simplex_protocols._exports import publish
from simplex_protocols.coretext import format_mention as format_mention
from simplex_protocols.coretext import is_protocol_name as is_protocol_name
from simplex_protocols.coretext import parse_mention as parse_mention

from ._collector import AnswerCompleted as AnswerCompleted
from ._collector import CallCompleted as CallCompleted
from ._collector import CallResult as CallResult
from ._collector import CallState as CallState
from ._collector import CallTarget as CallTarget
from ._collector import CallTimedOut as CallTimedOut
from ._collector import CollectorEvent as CollectorEvent
from ._collector import IgnoreReason as IgnoreReason
from ._collector import ReceivedItem as ReceivedItem
from ._collector import Reply as Reply
from ._collector import ReplyCollector as ReplyCollector
from ._collector import ReplyIgnored as ReplyIgnored
from ._collector import ReplyReceived as ReplyReceived
from ._collector import Sender as Sender
from ._collector import TextReplyReceived as TextReplyReceived
from ._collector import jsonrpc_response_to as jsonrpc_response_to
from ._command import CallCommand as CallCommand
from ._command import format_call_command as format_call_command
from ._command import is_call_command as is_call_command
from ._command import parse_call_command as parse_call_command
from ._responder import CallDisposition as CallDisposition
from ._responder import CallReply as CallReply
from ._responder import IncomingCall as IncomingCall
from ._responder import build_reply as build_reply
from ._responder import build_unquoted_error as build_unquoted_error
from ._responder import is_addressed_to as is_addressed_to
from ._responder import triage_call as triage_call
from ._size import check_message_size as check_message_size
from ._size import fits_in_message as fits_in_message

__all__ = [
    "AnswerCompleted",
    "CallCommand",
    "CallCompleted",
    "CallDisposition",
    "CallReply",
    "CallResult",
    "CallState",
    "CallTarget",
    "CallTimedOut",
    "CollectorEvent",
    "IgnoreReason",
    "IncomingCall",
    "ReceivedItem",
    "Reply",
    "ReplyCollector",
    "ReplyIgnored",
    "ReplyReceived",
    "Sender",
    "TextReplyReceived",
    "build_reply",
    "build_unquoted_error",
    "check_message_size",
    "fits_in_message",
    "format_call_command",
    "format_mention",
    "is_addressed_to",
    "is_call_command",
    "is_protocol_name",
    "jsonrpc_response_to",
    "parse_call_command",
    "parse_mention",
    "triage_call",
]

publish(globals(), __all__)
