"""Chat message size arithmetic for implementers (spec "Chat transport" > "Message size").

Callers and bots need none of this: :func:`~simplex_protocols.chat_call.fits_in_message` and
:func:`~simplex_protocols.chat_call.check_message_size` apply the 15,602-byte limit, and
:func:`~simplex_protocols.chat_call.build_reply` replaces a reply that would not fit. These are
the numbers behind them, for implementers who compare their model with ours
(``docs/chat_call.md``, "Message size"):

- :func:`message_size`: the bytes of encoded JSON the core counts for a text message, with the
  quote a reply carries (CALL-SIZE-2);
- :func:`reply_budget`: the bytes of reply text left once a reply quotes its command
  (CALL-REP-1, CALL-SIZE-3).
"""

from __future__ import annotations

from simplex_protocols._exports import publish

from ._size import message_size as message_size
from ._size import reply_budget as reply_budget

__all__ = ["message_size", "reply_budget"]

publish(globals(), __all__, defined_in="simplex_protocols.chat_call._")
