"""Member mentions: how the core reads a name after ``@``, and the mention syntax of commands.

The core reads a name with ``displayNameTextP_`` (``Simplex.Chat.Markdown``): ``'...'`` up to the
next ``'``, or a bare name up to the next space character whose trailing punctuation is not part
of the name; the first character must pass ``refChar``. It writes a name with ``viewName``
(:func:`~simplex_protocols.coretext.view_name`).

The spec's ``/_call @<member>`` (CALL-CMD-4: "a mention of the called member") uses that syntax
on one line of text, so :func:`format_mention`, :func:`parse_mention` and :func:`read_mention`
refuse, beyond the core's grammar, control characters (U+0000..U+001F, U+007F) in a name, a name
that needs quotes and has a ``'`` in it (the quoted name would end at its own ``'``), and a bare
name that ends with punctuation (the core would read the name without it).
"""

from __future__ import annotations

import re
from typing import Final

from simplex_protocols.errors import CallFormatError, CallFramingError

from ._chars import is_punctuation, is_ref_char, is_space
from ._names import view_name

__all__ = ["format_mention", "parse_mention", "read_display_name", "read_mention"]

_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


def read_display_name(text: str, start: int) -> tuple[str, str, int] | None:
    """The core's ``displayNameTextP_`` at ``text[start]``: ``(name, punctuation, end)``.

    ``name`` is the text between the quotes of ``'...'``, or the text up to the next space
    character without its trailing punctuation, which is ``punctuation`` (always empty for a
    quoted name); ``end`` is the index after what was read, the closing quote included. ``None``
    when no name can be read there: the first character fails ``refChar``, or a quote is not
    closed. A bare name may be empty when it is all punctuation (``@,`` names ``""``), as in the
    core.
    """
    if start >= len(text):
        return None
    if text[start] == "'":
        first = start + 1
        if first >= len(text) or not is_ref_char(text[first]):
            return None
        close = text.find("'", first)
        if close < 0:
            return None
        return text[first:close], "", close + 1
    if not is_ref_char(text[start]):
        return None
    end = start
    while end < len(text) and not is_space(text[end]):
        end += 1
    cut = end
    while cut > start and is_punctuation(text[cut - 1]):
        cut -= 1
    return text[start:cut], text[cut:end], end


def _needs_quotes(name: str) -> bool:
    return view_name(name) != name


def _name_problem(name: str) -> str | None:
    if not name:
        return "the name is empty"
    if not is_ref_char(name[0]):
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
        ``"@" +`` :func:`~simplex_protocols.coretext.view_name` ``(name)``: the name in single
        quotes when it contains a space character or ends with a punctuation character.

    Raises:
        CallFormatError: ``bad_member_name`` (CALL-CMD-4) when the mention syntax cannot carry
            the name: it is empty, starts with a space, ``#``, ``@`` or ``'``, has a control
            character, or needs quotes and has a ``'`` in it.
    """
    problem = _name_problem(name)
    if problem is not None:
        raise CallFormatError(problem, code="bad_member_name", requirement="CALL-CMD-4")
    return "@" + view_name(name)


def _mention_error(reason: str, text: str, position: int) -> CallFramingError:
    return CallFramingError(
        reason,
        code="bad_mention",
        requirement="CALL-CMD-4",
        position=position,
        input_excerpt=text,
    )


def _why_unreadable(text: str, start: int) -> CallFramingError:
    """The error for a mention at ``text[start] == "@"`` that :func:`read_display_name` refused."""
    i = start + 1
    if i >= len(text):
        return _mention_error("a mention without a name", text, start)
    if text[i] == "'":
        if text.find("'", i + 1) < 0:
            return _mention_error("a quoted name without its closing quote", text, i)
        if text[i + 1] == "'":
            return _mention_error("a mention without a name", text, i)
        return _mention_error(f"a name cannot start with {text[i + 1]!r}", text, i + 1)
    if is_space(text[i]):
        return _mention_error("a mention without a name", text, start)
    return _mention_error(f"a name cannot start with {text[i]!r}", text, i)


def read_mention(text: str, start: int) -> tuple[str, int]:
    """Read the mention that starts at ``text[start] == "@"``; return the name and the end.

    The end is the index just after the mention. The caller checks what follows it.

    Raises:
        CallFramingError: ``bad_mention`` (CALL-CMD-4) when there is no valid name after ``@``:
            no name, an unclosed quote, a first character the core does not accept, a control
            character, or a bare name that ends with punctuation.
    """
    read = read_display_name(text, start + 1)
    if read is None:
        raise _why_unreadable(text, start)
    name, punctuation, end = read
    if not name and not punctuation:
        # U+00A0 passes refChar and is a space: the core reads an empty name in "@\xa0".
        raise _mention_error("a mention without a name", text, start)
    quoted = text[start + 1] == "'"
    found = _CONTROL.search(name)
    if found is not None:
        raise _mention_error("the name has a control character", text, start + 1 + quoted)
    if punctuation:
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
