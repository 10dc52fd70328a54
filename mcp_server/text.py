"""Peer text made safe for the agent control chat, and the chat references of tool input.

Everything a peer or a member writes (names, messages, welcome texts, errors that quote them)
reaches the owner inside the agent control chat, where the SimpleX apps turn ``/word`` into a
tappable command and a link into a tappable SimpleX link. The rules here make sure that no
peer text ever forms one of those, or a second line in a card (the plan's "What the owner sees:
the agent control chat"):

- names and errors are folded to one line: each run of control, format, line separator and
  paragraph separator characters (``\\p{Cc}``, ``\\p{Cf}``, ``\\p{Zl}``, ``\\p{Zp}``) becomes one
  space (:func:`fold`), which takes out bidi overrides and zero-width characters too;
- a name is shown as it is only when it is a valid SimpleX display name (:func:`is_valid_name`,
  the core's rule from :mod:`simplex_protocols.coretext`) and the core's Markdown finds nothing
  in it: no phone number, address, link, mention or command (:func:`shows_bare`); any other
  name is a code span (:func:`name_md`);
- text is shown line by line, each line a code span (:func:`text_lines_md`), with backticks
  replaced by ``'`` and a leading or trailing space turned into U+00A0, because the core's
  markdown parser reads a span whose content starts or ends with a space as plain text. Each
  line is cleaned as names are (:func:`clean_line`), so a bidi override cannot reorder what the
  owner reads and a zero-width character cannot hide in it; only a zero-width joiner between
  two emoji stays, as it makes one emoji of them.

The core parses each line of a message separately and nothing inside a code span is parsed
again, so a code span can hold any text safely, provided the span forms: the core opens one
only at the start of a line, after a space or right after another fragment. A span right after
``(`` is not one, and its content is read as Markdown (:func:`parenthesized` puts a space
between).

No I/O here.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from simplex_protocols.core import ChatRef, parse_chat_ref
from simplex_protocols.coretext import MAX_DISPLAY_NAME_CHARS as MAX_DISPLAY_NAME_CHARS
from simplex_protocols.coretext import Markdown
from simplex_protocols.coretext import is_valid_display_name as is_valid_name
from simplex_protocols.coretext import view_name as mention_name
from simplex_protocols.errors import CommandArgumentError
from simplex_protocols.links import parse_simplex_link, parse_simplex_name

__all__ = [
    "MAX_DISPLAY_NAME_CHARS",
    "clean_line",
    "code_span",
    "error_md",
    "fold",
    "is_simplex_name",
    "is_valid_name",
    "mention_md",
    "mention_name",
    "name_md",
    "parenthesized",
    "read_chat_ref",
    "shell_quote",
    "shows_bare",
    "text_lines",
    "text_lines_md",
]

_FOLDED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp"})

_NBSP: Final = "\u00a0"
_ZWJ: Final = "\u200d"
_VARIATION_SELECTOR_16: Final = "\ufe0f"

# The core's Markdown, which the apps show: what a name must not form.
_MARKDOWN: Final = Markdown(parse_link=parse_simplex_link, parse_name=parse_simplex_name)

# Line breaks as Python's str.splitlines knows them: \n, \r, \r\n, \v, \f, \x1c-\x1e, \x85,
# U+2028, U+2029. The core splits only on \n, but an app may break a line at any of them.
_SPLIT_LINES: Final = str.splitlines


def _folded(ch: str) -> bool:
    return unicodedata.category(ch) in _FOLDED_CATEGORIES


def fold(text: str) -> str:
    """Fold text to one line: each run of ``\\p{Cc}``, ``\\p{Cf}``, ``\\p{Zl}``, ``\\p{Zp}`` is one space."""
    out: list[str] = []
    in_run = False
    for ch in text:
        if _folded(ch):
            if not in_run:
                out.append(" ")
                in_run = True
        else:
            out.append(ch)
            in_run = False
    return "".join(out)


def _joins_emoji(line: str, i: int) -> bool:
    """Whether the zero-width joiner at ``line[i]`` sits between two emoji (``👩‍💻``).

    Before it: a symbol (``So``), a skin tone modifier (``Sk``) or the emoji variation
    selector; after it: a symbol.
    """
    before = line[i - 1] if i else ""
    after = line[i + 1] if i + 1 < len(line) else ""
    return (
        (before == _VARIATION_SELECTOR_16 or unicodedata.category(before or "a") in ("So", "Sk"))
        and after != ""
        and unicodedata.category(after) == "So"
    )


def clean_line(line: str) -> str:
    """A line of peer text folded as names are (:func:`fold`), emoji sequences kept whole.

    Bidi overrides and isolates, zero-width spaces and joiners and every other control or
    format character become a space, one per run; a zero-width joiner between two emoji stays.
    """
    if _ZWJ not in line:
        return fold(line)
    out: list[str] = []
    start = 0
    for i, ch in enumerate(line):
        if ch == _ZWJ and _joins_emoji(line, i):
            out.append(fold(line[start:i]))
            out.append(_ZWJ)
            start = i + 1
    out.append(fold(line[start:]))
    return "".join(out)


def code_span(text: str) -> str:
    """``text`` as one code span: backticks become ``'``, edge spaces U+00A0.

    ``text`` must be one line (see :func:`fold`, :func:`text_lines`).
    """
    content = text.replace("`", "'")
    if content.startswith(" "):
        content = _NBSP + content[1:]
    if content.endswith(" "):
        content = content[:-1] + _NBSP
    return f"`{content}`"


#: The characters that open and close the core's inline formats (bold, italic, strike-through,
#: code, secret, colour).
_PAIRING_DELIMITERS: Final = frozenset("*_~`#!")


def shows_bare(name: str) -> bool:
    """Whether a folded name may be shown as it is: a valid display name in which the core's
    Markdown forms no fragment (``+1 (555) 123-4567`` is a phone number, ``a@b.co`` an
    address, ``bob.com`` a link: each is a code span instead).

    The name is parsed alone: in a card it follows a space and is followed by a space or by
    ``.``, ``,`` or ``:``, which the core cuts from the end of a link and which end a phone
    number, so the name forms what it forms alone.
    """
    if not is_valid_name(name):
        return False
    if any(ch in _PAIRING_DELIMITERS for ch in name):
        # Alone the name forms nothing, but its delimiter can pair with one in another name
        # or line of the same card (``0 *`` twice: ``*, as myself ... by 0 *``), and the text
        # between them becomes one fragment that swallows the card's commands.
        return False
    return all(fmt is None for fmt, _ in _MARKDOWN.parse_line(name))


def name_md(name: str) -> str:
    """A peer's or member's name for a card or a reply: folded; a code span unless it
    :func:`shows_bare`."""
    folded = fold(name)
    return folded if shows_bare(folded) else code_span(folded)


def mention_md(name: str) -> str:
    """``@name`` as the core quotes it (``@'Ann Lee'``), or a code span when the name is not
    valid or the core would not read the whole of it as one mention."""
    folded = fold(name)
    if is_valid_name(folded):
        shown = "@" + mention_name(folded)
        fragments = _MARKDOWN.parse_line(shown)
        if len(fragments) == 1 and (fragments[0][0] or {}).get("type") == "mention":
            return shown
    return code_span("@" + folded)


def parenthesized(md: str) -> str:
    """``(md)``, with spaces inside when ``md`` starts with a code span: ``( `x` )``.

    The core opens a code span only at the start of a line, after a space or after another
    fragment; after ``(`` the backtick is plain text and the span's content would be read as
    Markdown, where ``/approve 3`` is a command.
    """
    return f"( {md} )" if md.startswith("`") else f"({md})"


def error_md(error: str) -> str:
    """An error in a card: folded to one line, as a code span."""
    return code_span(fold(error))


def text_lines(text: str) -> list[str]:
    """The lines of a text, as the apps may show them (every line break counts)."""
    return _SPLIT_LINES(text) or [""]


def text_lines_md(text: str) -> list[str]:
    """Text from a peer or the agent, one code span per line (empty lines stay empty), each
    line cleaned (:func:`clean_line`)."""
    return [code_span(clean_line(line)) if line else "" for line in text_lines(text)]


_SIMPLEX_NAME_RE: Final = re.compile(
    r"[@#][a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)+"
)


def is_simplex_name(text: str) -> bool:
    """Whether ``text`` has the form of a SimpleX name reference: ``@name.simplex``, ``#name.simplex``."""
    return len(text) <= 256 and _SIMPLEX_NAME_RE.fullmatch(text) is not None


def read_chat_ref(text: str) -> ChatRef | None:
    """A chat reference as :func:`simplex_protocols.core.parse_chat_ref` reads it (``@N`` or
    ``#N``, 1 to 15 digits, positive), or ``None`` for any text it refuses.

    A longer number is refused: the core reads chat IDs into an Int64 with a plain decimal
    parser, so ``#18446744073709551626`` would name ``#10`` (plan "Identifiers").
    """
    try:
        return parse_chat_ref(text)
    except CommandArgumentError:
        return None


def _shell_safe(ch: str) -> bool:
    return ch.isalpha() or ch.isdecimal() or ch in "_-"


def shell_quote(text: str) -> str:
    """Quote for a POSIX shell as the plan prints ``--owners`` entries and folders.

    Text of letters, digits, ``_`` and ``-`` only is kept; anything else is put in single
    quotes, with ``'`` written as ``'\\''``: ``3:Alice Smith`` gives ``'3:Alice Smith'``.
    """
    if text and all(_shell_safe(ch) for ch in text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"
