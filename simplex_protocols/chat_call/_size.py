"""Message sizes as the chat core counts them (spec "Chat transport" > "Message size").

"The core refuses a message whose encoded JSON exceeds 15,602 bytes. The command or the reply
is a string inside that JSON, so its escape characters count towards the limit." (CALL-SIZE-2)

The model is :func:`simplex_protocols._wire.chat_message_size`: the ``x.msg.new`` envelope
(114 bytes, measured), the text as aeson writes a string, and for a reply the quote the core
adds: the message reference and the quoted command's whole text (150 bytes plus the quoted
text in a direct chat, 188 plus the quoted text in a group). ``docs/chat_call.md`` gives the
sources and the numbers.
"""

from __future__ import annotations

from simplex_protocols import _wire
from simplex_protocols.errors import MessageTooLargeError
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES

__all__ = ["check_message_size", "fits_in_message", "message_size", "reply_budget"]


def message_size(text: str, *, quoted_text: str | None = None, in_group: bool = False) -> int:
    """Bytes of encoded JSON the core counts for a text message (CALL-SIZE-2).

    Args:
        text: the text of the message: a command, or a reply.
        quoted_text: for a reply, the text of the quoted command; ``None`` for a message that
            quotes nothing.
        in_group: whether the message is sent in a group (a group quote names the quoted
            member).

    Returns:
        The size in bytes; the core refuses the message when it exceeds
        ``limits.MAX_CHAT_MESSAGE_BYTES`` (15,602).
    """
    return _wire.chat_message_size(text, quoted_text=quoted_text, in_group=in_group)


def fits_in_message(text: str, *, quoted_text: str | None = None, in_group: bool = False) -> bool:
    """Whether the core accepts the message: its size is at most 15,602 bytes (CALL-SIZE-2)."""
    size = _wire.chat_message_size(text, quoted_text=quoted_text, in_group=in_group)
    return size <= MAX_CHAT_MESSAGE_BYTES


def check_message_size(
    text: str,
    *,
    quoted_text: str | None = None,
    in_group: bool = False,
    what: str = "chat message",
) -> int:
    """Refuse a message the core would refuse; return its size otherwise.

    Raises:
        MessageTooLargeError: the size exceeds 15,602 bytes (CALL-SIZE-1/2). ``size`` and
            ``limit`` are set; nothing was sent.
    """
    size = _wire.chat_message_size(text, quoted_text=quoted_text, in_group=in_group)
    if size > MAX_CHAT_MESSAGE_BYTES:
        raise MessageTooLargeError(what, size, MAX_CHAT_MESSAGE_BYTES)
    return size


def reply_budget(command_text: str, *, in_group: bool = False) -> int:
    """Bytes left for a reply's text, as aeson writes it, when the reply quotes the command.

    A reply quotes the whole command (CALL-REP-1), so a long command leaves less room for its
    replies. The result can be negative: then no reply that quotes the command fits.
    """
    used = _wire.chat_message_size("", quoted_text=command_text, in_group=in_group)
    return MAX_CHAT_MESSAGE_BYTES - used
