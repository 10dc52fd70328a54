"""The core's character classes: Haskell's ``Data.Char``, not Python's ``str`` methods."""

from __future__ import annotations

import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from simplex_protocols.coretext import is_punctuation, is_space

PUNCTUATION_CATEGORIES = {"Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"}


def test_is_space_follows_haskell_not_python() -> None:
    assert is_space("\u3000") and is_space("\xa0") and is_space("\t")
    assert not is_space("\u2028") and not is_space("\x1c") and not is_space("\x85")


@given(st.characters())
def test_a_space_is_a_c_space_or_a_space_separator(ch: str) -> None:
    # GHC.Unicode.isSpace: "\t\n\v\f\r", and the general category Space (Zs), which below
    # U+0378 holds only U+0020 and U+00A0.
    assert is_space(ch) == (ch in "\t\n\v\f\r" or unicodedata.category(ch) == "Zs")


def test_python_counts_exactly_seven_more_spaces_than_the_core() -> None:
    every = (chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    only_python = {ch for ch in every if ch.isspace() != is_space(ch)}
    assert only_python == {"\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2028", "\u2029"}
    assert all(ch.isspace() for ch in only_python)


@given(st.characters())
def test_punctuation_is_the_seven_p_categories(ch: str) -> None:
    assert is_punctuation(ch) == (unicodedata.category(ch) in PUNCTUATION_CATEGORIES)


def test_punctuation_examples() -> None:
    assert all(is_punctuation(ch) for ch in "_-.,?!'()[]{}\"“”«»¿")
    # math, currency and modifier symbols are not punctuation to the core
    assert not any(is_punctuation(ch) for ch in "$+^~<>=|`€")
