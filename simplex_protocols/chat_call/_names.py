"""Protocol names and member mentions, as the spec and the SimpleX chat core define them.

Protocol names (spec "Protocol names", NAME-1): lowercase ASCII letters, digits and hyphens.

Mentions (spec "Chat transport" > "Commands", CALL-CMD-4: "a mention of the called member"),
in the core's syntax (simplex-chat ``src/Simplex/Chat/Markdown.hs``):

- the core writes a mention as ``@`` + ``viewName name``: the name in single quotes when it
  contains a space character or ends with a punctuation character, bare otherwise;
- the core reads ``@'...'`` up to the next ``'``, and a bare ``@name`` up to the next space
  character, where trailing punctuation is not part of the name (``displayNameTextP_``); the
  first character of a name is above U+0020 and is not ``#``, ``@`` or ``'`` (``refChar``).

"Space" and "punctuation" are Haskell's ``Data.Char.isSpace`` and ``isPunctuation``, which
differ from Python's ``str.isspace``: U+001C..U+001F, U+0085, U+2028 and U+2029 are spaces to
Python and not to Haskell. The functions here follow Haskell.

Beyond the core's grammar we refuse control characters (U+0000..U+001F, U+007F) in a name: a
command is one line of text, and a name that carries them cannot be written in one.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from simplex_protocols.errors import CallFormatError, CallFramingError

__all__ = [
    "format_mention",
    "is_protocol_name",
    "is_space",
    "parse_mention",
]

_PROTOCOL_NAME: Final = re.compile(r"[a-z0-9-]+")
_PUNCTUATION_CATEGORIES: Final = frozenset({"Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"})
_LATIN1_SPACES: Final = frozenset(" \t\n\v\f\r\xa0")
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


def is_protocol_name(name: str) -> bool:
    """Whether ``name`` is a protocol name: lowercase ASCII letters, digits and hyphens (NAME-1)."""
    return _PROTOCOL_NAME.fullmatch(name) is not None


def is_space(ch: str) -> bool:
    """Haskell's ``Data.Char.isSpace`` for one character, the core's idea of a space."""
    if ord(ch) <= 0x377:
        return ch in _LATIN1_SPACES
    return unicodedata.category(ch) == "Zs"


def _is_punctuation(ch: str) -> bool:
    return unicodedata.category(ch) in _PUNCTUATION_CATEGORIES


def _first_char_ok(ch: str) -> bool:
    # refChar in Markdown.hs: above U+0020 and none of the three mention/reference markers.
    return ch > " " and ch not in "#@'"


def _needs_quotes(name: str) -> bool:
    # viewName in Markdown.hs: quote names that contain spaces or end on punctuation.
    return _is_punctuation(name[-1]) or any(is_space(ch) for ch in name)


def _name_problem(name: str) -> str | None:
    if not name:
        return "the name is empty"
    if not _first_char_ok(name[0]):
        return f"a name cannot start with {name[0]!r}"
    if _CONTROL.search(name):
        return "the name has a control character"
    if "'" in name and _needs_quotes(name):
        return "the name needs quotes and has a quote character in it"
    return None


def format_mention(name: str) -> str:
    """The mention of a member as the core writes it: ``@name`` or ``@'name with spaces'``.

    Args:
        name: the member's display name.

    Returns:
        ``"@" + name``, with the name in single quotes when it contains a space character or
        ends with a punctuation character (the core's ``viewName``).

    Raises:
        CallFormatError: ``bad_member_name`` (CALL-CMD-4) when the mention syntax cannot carry
            the name: it is empty, starts with a space, ``#``, ``@`` or ``'``, has a control
            character, or needs quotes and has a ``'`` in it.
    """
    problem = _name_problem(name)
    if problem is not None:
        raise CallFormatError(problem, code="bad_member_name", requirement="CALL-CMD-4")
    return f"@'{name}'" if _needs_quotes(name) else f"@{name}"


def _mention_error(reason: str, text: str, position: int) -> CallFramingError:
    return CallFramingError(
        reason,
        code="bad_mention",
        requirement="CALL-CMD-4",
        position=position,
        input_excerpt=text,
    )


def read_mention(text: str, start: int) -> tuple[str, int]:
    """Read the mention that starts at ``text[start] == "@"``; return the name and the end.

    The end is the index just after the mention. The caller checks what follows it.

    Raises:
        CallFramingError: ``bad_mention`` when there is no valid name after ``@``.
    """
    i = start + 1
    if i >= len(text):
        raise _mention_error("a mention without a name", text, start)
    if text[i] == "'":
        close = text.find("'", i + 1)
        if close < 0:
            raise _mention_error("a quoted name without its closing quote", text, i)
        name = text[i + 1 : close]
        end = close + 1
        if not name:
            raise _mention_error("a mention without a name", text, i)
        if not _first_char_ok(name[0]):
            raise _mention_error(f"a name cannot start with {name[0]!r}", text, i + 1)
        if _CONTROL.search(name):
            raise _mention_error("the name has a control character", text, i + 1)
        return name, end
    end = i
    while end < len(text) and not is_space(text[end]):
        end += 1
    name = text[i:end]
    if not name:
        raise _mention_error("a mention without a name", text, start)
    if not _first_char_ok(name[0]):
        raise _mention_error(f"a name cannot start with {name[0]!r}", text, i)
    if _CONTROL.search(name):
        raise _mention_error("the name has a control character", text, i)
    if _is_punctuation(name[-1]):
        # The core would read the name without its trailing punctuation: a name that ends with
        # punctuation is written in quotes.
        raise _mention_error("a name that ends with punctuation must be quoted", text, end - 1)
    return name, end


def parse_mention(text: str) -> str:
    """The member name of a mention written as the core writes it (``@name``, ``@'name'``).

    The whole text must be one mention. ``@'bob'`` is accepted although the core writes
    ``@bob``.

    Raises:
        CallFramingError: ``bad_mention`` (CALL-CMD-4) when the text is not exactly one valid
            mention.
    """
    if not text.startswith("@"):
        raise _mention_error("a mention starts with @", text, 0)
    name, end = read_mention(text, 0)
    if end != len(text):
        raise _mention_error("text after the mention", text, end)
    return name
