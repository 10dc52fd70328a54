"""The chat transport: ``/_call`` in a conversation, over a chat core.

- caller: :class:`ChatCaller` (and :func:`call`) sends ``/_call`` to a contact or a group and
  collects the replies that quote it (CALL-CLR-1..5), returning a :class:`ChatCallResult`;
- bot: :class:`ChatResponder` answers every ``/_call`` for the protocols the bot serves, in
  direct chats and groups, through its bindings (CALL-BOT-1, CALL-GRP-1/2, CALL-REP-1,
  CALL-SIZE-3).
"""

from __future__ import annotations

from simplex_protocols._exports import publish

from ._chat_caller import Answer as Answer
from ._chat_caller import ChatCaller as ChatCaller
from ._chat_caller import ChatCallResult as ChatCallResult
from ._chat_caller import FinalRule as FinalRule
from ._chat_caller import call as call
from ._chat_responder import COMMAND_CONTENT_TYPES as COMMAND_CONTENT_TYPES
from ._chat_responder import ChatResponder as ChatResponder
from ._chat_responder import caller_of as caller_of
from ._chat_responder import internal_error_for as internal_error_for
from ._common import CallRecord as CallRecord

__all__ = [
    "COMMAND_CONTENT_TYPES",
    "Answer",
    "CallRecord",
    "ChatCallResult",
    "ChatCaller",
    "ChatResponder",
    "FinalRule",
    "call",
    "caller_of",
    "internal_error_for",
]

publish(globals(), __all__)
