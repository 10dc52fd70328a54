"""The chat transport: ``/_call`` in a conversation, over a chat core.

- caller: :class:`ChatCaller` (and :func:`call`) sends ``/_call`` to a contact or a group and
  collects the replies that quote it (CALL-CLR-1..5), returning a :class:`ChatCallResult`;
- bot: :class:`ChatResponder` answers every ``/_call`` for the protocols the bot serves, in
  direct chats and groups, through its bindings (CALL-BOT-1, CALL-GRP-1/2, CALL-REP-1,
  CALL-SIZE-3); :func:`message_caller` is the :class:`~simplex_protocols.transports.Caller` it
  passes them for a received command.
"""

from __future__ import annotations

from simplex_protocols._exports import publish

from ._chat_caller import Answer as Answer
from ._chat_caller import ChatCaller as ChatCaller
from ._chat_caller import ChatCallResult as ChatCallResult
from ._chat_caller import FinalRule as FinalRule
from ._chat_caller import call as call
from ._chat_responder import ChatResponder as ChatResponder
from ._chat_responder import internal_error_for as internal_error_for
from ._chat_responder import message_caller as message_caller
from ._common import CallRecord as CallRecord

__all__ = [
    "Answer",
    "CallRecord",
    "ChatCallResult",
    "ChatCaller",
    "ChatResponder",
    "FinalRule",
    "call",
    "internal_error_for",
    "message_caller",
]

publish(globals(), __all__)
