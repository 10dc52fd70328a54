"""Character classes as the chat core's Haskell sees them (``Data.Char`` in GHC's ``base``).

The core's parsers and ``viewName`` classify characters with ``Data.Char``, whose answers differ
from Python's ``str`` methods: ``isSpace`` is not ``str.isspace`` (U+001C..U+001F, U+0085, U+2028
and U+2029 are spaces to Python and not to Haskell), and ``isPunctuation`` is a set of general
categories that Python has no method for. Everything else here follows one general category
group, as GHC defines it.

Both languages read the general category from their own copy of the Unicode tables, so a code
point assigned by a Unicode version newer than one of them may be classified differently.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = [
    "is_digit",
    "is_letter",
    "is_mark",
    "is_number",
    "is_punctuation",
    "is_ref_char",
    "is_space",
    "is_symbol",
]

# GHC.Unicode.isSpace: up to U+0377 a fixed list (every code point there is assigned, so no new
# space can appear); above it the general category Space (Zs).
_LATIN_SPACES: Final = frozenset(" \t\n\v\f\r\xa0")
_LATIN_END: Final = 0x377


def is_space(ch: str) -> bool:
    """Haskell's ``Data.Char.isSpace`` for one character: the core's idea of a space.

    The space, tab, line feed, vertical tab, form feed, carriage return, U+00A0, and every
    other character of general category Zs (space separator). Not the line and paragraph
    separators U+2028 and U+2029 (Zl, Zp), not U+0085 and not U+001C..U+001F, which Python's
    ``str.isspace`` counts.
    """
    if ord(ch) <= _LATIN_END:
        return ch in _LATIN_SPACES
    return unicodedata.category(ch) == "Zs"


def is_punctuation(ch: str) -> bool:
    """Haskell's ``Data.Char.isPunctuation``: general categories Pc, Pd, Ps, Pe, Pi, Pf and Po.

    So ``_``, ``-``, ``.``, ``,``, ``?``, ``!``, ``'``, brackets and quotation marks; not ``$``,
    ``+``, ``^`` or ``~``, which are symbols.
    """
    return unicodedata.category(ch)[0] == "P"


def is_letter(ch: str) -> bool:
    """Haskell's ``isLetter`` (and ``isAlpha``): general categories Lu, Ll, Lt, Lm and Lo."""
    return unicodedata.category(ch)[0] == "L"


def is_mark(ch: str) -> bool:
    """Haskell's ``isMark``: general categories Mn, Mc and Me (combining marks)."""
    return unicodedata.category(ch)[0] == "M"


def is_number(ch: str) -> bool:
    """Haskell's ``isNumber``: general categories Nd, Nl and No."""
    return unicodedata.category(ch)[0] == "N"


def is_symbol(ch: str) -> bool:
    """Haskell's ``isSymbol``: general categories Sm, Sc, Sk and So."""
    return unicodedata.category(ch)[0] == "S"


def is_digit(ch: str) -> bool:
    """Haskell's ``isDigit``: the ASCII digits only (``str.isdigit`` takes any script's)."""
    return "0" <= ch <= "9"


def is_ref_char(ch: str) -> bool:
    """Whether ``ch`` can start a display name the core reads (``refChar`` in ``Markdown.hs``).

    Above U+0020 and none of ``#``, ``@`` and ``'``, which start a group, a mention and a
    quoted name.
    """
    return ch > " " and ch not in "#@'"
