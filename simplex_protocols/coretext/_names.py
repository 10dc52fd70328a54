"""Display names and protocol names.

Display names follow the chat core: which names it accepts for a profile and which valid name it
suggests for any other (``mkValidName``), and how it writes a name in text (``viewName``).
Protocol names follow the spec ("Protocol names", NAME-1).
"""

from __future__ import annotations

import re
from typing import Final

from ._chars import is_letter, is_mark, is_number, is_punctuation, is_space, is_symbol

__all__ = [
    "MAX_DISPLAY_NAME_CHARS",
    "is_protocol_name",
    "is_valid_display_name",
    "mk_valid_name",
    "view_name",
]

#: A display name has at most this many characters (``take 50`` in the core's ``mkValidName``).
MAX_DISPLAY_NAME_CHARS: Final = 50

# The characters the core drops from any display name. ``'`` is dropped by every version of
# mkValidName; the current core drops the others too (its tests/ValidNames.hs turns "J.Doe" into
# "JDoe" and "alice@example.com" into "aliceexamplecom"; the MCP server plan lists them, citing
# Commands.hs). None of them can then start a mention, a group, a command or a link, or end a
# code span.
_NEVER_IN_NAME: Final = frozenset(".,;/\\#@'\"~`")

# After a run of punctuation the core keeps at most three punctuation characters in a row.
_MAX_PUNCTUATION_RUN: Final = 3


def _can_start(ch: str) -> bool:
    # validFirstChar: a letter, a number or a symbol (all of them above U+0020).
    return is_letter(ch) or is_number(ch) or is_symbol(ch)


def mk_valid_name(text: str) -> str:
    """The valid display name the core makes from ``text`` (the core's ``mkValidName``).

    Follows ``mkValidName`` in ``Simplex.Chat.Library.Commands``: one pass over the characters
    that keeps a character only where it fits after the previous kept one, then at most
    :data:`MAX_DISPLAY_NAME_CHARS` characters without trailing spaces:

    - ``.,;/\\#@'"~`` and the backtick are dropped everywhere;
    - the first character is a letter, a number or a symbol;
    - a space character (Haskell's ``isSpace``) is kept as U+0020, and not after another space;
    - after a space: a letter, a number, a symbol, or punctuation when the character before the
      space was not punctuation;
    - after punctuation: a letter, a number, a symbol, a space, or up to three punctuation
      characters in a row;
    - after anything else: also combining marks and punctuation.

    Control, format, private-use and unassigned characters and the line and paragraph separators
    fit nowhere and are dropped.

    Args:
        text: any text.

    Returns:
        The valid name; empty when ``text`` has nothing a name can start with. Applying the
        function to its result gives the result back.
    """
    kept: list[str] = []
    previous = ""
    punctuation_run = 0
    for ch in text:
        if ch in _NEVER_IN_NAME:
            continue
        space = is_space(ch)
        punctuation = is_punctuation(ch)
        if not previous:
            fits = _can_start(ch)
        elif previous == " ":
            fits = _can_start(ch) or (punctuation and punctuation_run == 0)
        elif is_punctuation(previous):
            fits = (
                _can_start(ch) or space or (punctuation and punctuation_run < _MAX_PUNCTUATION_RUN)
            )
        else:
            fits = _can_start(ch) or space or is_mark(ch) or punctuation
        if not fits:
            # A dropped character changes nothing: the next one is judged against the last
            # character kept, which is what makes the result a fixed point.
            continue
        previous = " " if space else ch
        kept.append(previous)
        if punctuation:
            punctuation_run += 1
        elif not space:
            punctuation_run = 0
    return "".join(kept[:MAX_DISPLAY_NAME_CHARS]).rstrip(" ")


def is_valid_display_name(name: object) -> bool:
    """Whether the core accepts ``name`` as a display name (the core's ``checkValidName``).

    The core refuses an empty name and any name that :func:`mk_valid_name` changes, answering
    ``invalidDisplayName`` with that valid name. A valid name has 1 to 50 characters, starts with
    a letter, a number or a symbol, has single U+0020 spaces and none at its ends, and none of
    ``.,;/\\#@'"~`` or the backtick, so in a message it forms no command, mention, link, code
    span or second line.
    """
    return isinstance(name, str) and bool(name) and mk_valid_name(name) == name


def view_name(name: str) -> str:
    """A display name as the core writes it in text and commands (``viewName`` in ``Markdown.hs``).

    The name in single quotes when it contains a space character or ends with a punctuation
    character (Haskell's ``isSpace`` and ``isPunctuation``), the name itself otherwise. A ``'``
    inside the name is no reason to quote it: the core writes ``it's`` as ``it's``, and reads
    ``@it's`` back as the name ``it's``.
    """
    if any(is_space(ch) for ch in name) or (name != "" and is_punctuation(name[-1])):
        return f"'{name}'"
    return name


# NAME-1: "A protocol name consists of lowercase ASCII letters, digits and hyphens."
# fullmatch and an explicit ASCII class: "$" would accept a trailing newline, and \w or
# str.islower() would accept non-ASCII letters and look-alikes.
_PROTOCOL_NAME: Final = re.compile(r"[a-z0-9-]+")


def is_protocol_name(name: object) -> bool:
    """Whether ``name`` is a protocol name: lowercase ASCII letters, digits and hyphens (NAME-1).

    Any value may be given: what is not a ``str`` (``None``, bytes, a number read from JSON) is
    not a protocol name, so envelope and declaration parsers can ask before they know the type.
    """
    return isinstance(name, str) and _PROTOCOL_NAME.fullmatch(name) is not None
