"""The Markdown parser on long texts: the inputs that made the first port quadratic.

Each text below once cost the parser a pass over the rest of the line for every character (a
search for a closing ``]`` or ``'``, a phone number read across every ``1 1 1``, trailing
punctuation stripped one copy at a time, fragments joined one copy at a time). They are parsed
here at a size where that would take minutes, and each result is checked whole; how fast the
parser is, is measured by ``bench/markdown.py``, not asserted.
"""

from __future__ import annotations

from typing import Any

import pytest

from simplex_protocols.coretext import Markdown
from simplex_protocols.links import parse_simplex_link, parse_simplex_name

MD = Markdown(parse_link=parse_simplex_link, parse_name=parse_simplex_name, cache_size=0)

N = 100_000

JSON = dict[str, Any]


def _plain(text: str) -> list[JSON]:
    return [{"text": text}]


@pytest.mark.parametrize(
    "text",
    [
        "[" * N,
        "a" + "." * N,
        "@'" * N,
        "x1 " * N,
        "hi\n" + "/'" * N + "x",
        ("lorem ipsum dolor sit amet " * (N // 20)).strip(),
        "line of text\n" * (N // 10),
        "!r " * N,
        "*a " * N,
    ],
    ids=[
        "brackets",
        "dots",
        "quotes",
        "words-with-digits",
        "slash-quotes",
        "words",
        "lines",
        "bangs",
        "stars",
    ],
)
def test_a_long_text_of_no_format_is_plain(text: str) -> None:
    assert MD.parse(text) is None


def test_a_long_line_of_names_is_one_fragment_per_name() -> None:
    parsed = MD.parse("#a " * N)
    assert parsed is not None
    names = [f for f in parsed if f.get("format", {}).get("type") == "simplexName"]
    assert len(names) == N
    assert {f["text"] for f in names} == {"#a"}
    assert "".join(f["text"] for f in parsed) == ("#a " * N)


def test_a_long_word_after_a_mention_sign_is_one_mention() -> None:
    word = "@" + "b" * N
    assert MD.parse(word) == [{"format": {"type": "mention", "memberName": "b" * N}, "text": word}]


def test_a_name_longer_than_the_cores_limit_is_a_mention_not_a_name() -> None:
    long_name = "x" * 300 + ".simplex"
    parsed = MD.parse(f"hi @{long_name} and @{'x' * 10}.simplex")
    assert parsed is not None
    assert parsed[1] == {
        "format": {"type": "mention", "memberName": long_name},
        "text": "@" + long_name,
    }
    assert parsed[3]["format"]["type"] == "simplexName"


def test_quoted_mentions_one_after_another() -> None:
    text = "@'a'" * N
    parsed = MD.parse(text)
    assert parsed is not None
    assert len(parsed) == 1 and parsed[0]["format"]["type"] == "mention"
    assert "".join(f["text"] for f in parsed) == "@'a'" * N


def test_a_phone_number_is_at_most_22_characters() -> None:
    assert MD.parse("+1 555 123 4567") == [{"format": {"type": "phone"}, "text": "+1 555 123 4567"}]
    assert MD.parse("1" * 23) is None
    # digits and spaces: from each digit the number would run on past 22 characters, until the
    # last 21 of the line, which are one phone number
    parsed = MD.parse("1 " * N)
    assert parsed == [
        {"text": "1 " * (N - 11)},
        {"format": {"type": "phone"}, "text": "1 1 1 1 1 1 1 1 1 1 1"},
        {"text": " "},
    ]


def test_an_address_of_many_dots_is_read_at_once() -> None:
    address = "a." * 40 + "a@example.com"
    assert MD.parse(address) == [{"format": {"type": "email"}, "text": address}]
    assert MD.parse("a." * 40 + "a@a..b") is None


def test_each_parse_returns_fresh_objects() -> None:
    md = Markdown(parse_link=parse_simplex_link, parse_name=parse_simplex_name)
    first = md.parse("*bold* #news")
    assert first is not None
    first[0]["format"]["type"] = "changed"
    first[2]["format"]["nameInfo"]["nameType"] = "changed"
    again = md.parse("*bold* #news")
    assert again is not None
    assert again[0]["format"] == {"type": "bold"}
    assert again[2]["format"]["nameInfo"]["nameType"] == "publicGroup"
