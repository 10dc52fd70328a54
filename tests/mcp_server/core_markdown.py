"""How the SimpleX core parses a message's text into formatted fragments (``formattedText``).

A test-side port of the parts of the core's markdown parser (``Simplex.Chat.Markdown``,
``parseMaybeMarkdownList``) that decide whether text forms a tappable command or a SimpleX
link: lines are parsed separately (``T.lines``); a fragment starts at the beginning of a
line, after a run of spaces or after another fragment; ``` ` ```, ``*``, ``_`` and ``~`` take
the text up to the same character (no closing character: the rest of the line is plain text),
and a span whose content is empty or starts or ends with a space is plain text with its
delimiters; ``/`` starts a command when a keyword of letters, digits and ``_`` follows (the
quoted form ``/'approve 1'`` included); a word starting with ``simplex:/``, or an https URL of
the SimpleX link forms, is a SimpleX link.

The simulated network does not compute ``formattedText``, so the e2e tests apply this parser
to the card's text as received.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["Fragment", "parse_line", "parse_text"]

_SHORT_LINK_PATHS = ("/a", "/c", "/g", "/i", "/r", "/contact", "/invitation")


@dataclass(frozen=True)
class Fragment:
    """One formatted fragment: ``kind`` is None (plain), snippet, bold, italic, strike, command, simplexLink or uri."""

    kind: str | None
    text: str


def _is_space(ch: str) -> bool:
    return ch in " \t\n\r\f\v\u00a0" or unicodedata.category(ch) == "Zs"


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def _ref_char(ch: str) -> bool:
    return ch > " " and ch not in "#@'"


def _command(line: str, i: int) -> tuple[Fragment, int] | None:
    """A command at ``line[i] == "/"``, as prefixedStringP '/' commandTextP."""
    j = i + 1
    if j >= len(line):
        return None
    if line[j] == "'":
        end = line.find("'", j + 1)
        if end == -1 or end == j + 1 or not _ref_char(line[j + 1]):
            return None
        cmd, nxt, punct = line[j + 1 : end], end + 1, ""
    else:
        if not _ref_char(line[j]):
            return None
        k = j
        while k < len(line) and not _is_space(line[k]):
            k += 1
        word = line[j:k]
        stripped = word.rstrip("".join(ch for ch in word if _is_punct(ch)))
        while stripped and _is_punct(stripped[-1]):
            stripped = stripped[:-1]
        cmd, nxt, punct = stripped, k, word[len(stripped) :]
    words = cmd.split()
    if not words or not all(ch.isalnum() or ch == "_" for ch in words[0]):
        return None
    return Fragment("command", line[i : nxt - len(punct)]), nxt - len(punct)


def _word_kind(word: str) -> str | None:
    bare = word
    while bare and _is_punct(bare[-1]) and bare[-1] not in "/)":
        bare = bare[:-1]
    if len(bare) >= 10 and bare.startswith("simplex:/"):
        return "simplexLink"
    if len(bare) >= 10 and bare.startswith(("http://", "https://")):
        parts = urlsplit(bare)
        if parts.fragment and parts.path in _SHORT_LINK_PATHS:
            return "simplexLink"
        return "uri"
    return None


_FORMATS = {"`": "snippet", "*": "bold", "_": "italic", "~": "strike"}


def parse_line(line: str) -> list[Fragment]:
    """The fragments of one line."""
    out: list[Fragment] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == " ":
            j = i
            while j < len(line) and line[j] == " ":
                j += 1
            out.append(Fragment(None, line[i:j]))
            i = j
            continue
        if ch in _FORMATS:
            end = line.find(ch, i + 1)
            if end == -1:
                out.append(Fragment(None, line[i:]))
                break
            content = line[i + 1 : end]
            if not content or content[0] == " " or content[-1] == " ":
                out.append(Fragment(None, line[i : end + 1]))
            else:
                out.append(Fragment(_FORMATS[ch], content))
            i = end + 1
            continue
        if ch == "/":
            found = _command(line, i)
            if found is not None:
                out.append(found[0])
                i = found[1]
                continue
        j = i
        while j < len(line) and line[j] != " ":
            j += 1
        word = line[i:j]
        out.append(Fragment(_word_kind(word), word))
        i = j
    return out


def parse_text(text: str) -> list[list[Fragment]]:
    """The fragments of each line (the core splits lines at ``\\n`` only)."""
    return [parse_line(line) for line in text.split("\n")]
