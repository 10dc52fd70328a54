"""Mentions: the core's reader (``displayNameTextP_``), its writer (``viewName``), and the callers
that write mentions (``chat_call``, ``core``, ``mcp_server``), which agree by construction."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from simplex_protocols import chat_call, core
from simplex_protocols.coretext import (
    Markdown,
    format_mention,
    is_space,
    is_valid_display_name,
    mentioned_names,
    mk_valid_name,
    parse_mention,
    read_mention,
    view_name,
)
from simplex_protocols.errors import CallFormatError, CallFramingError, CommandArgumentError
from simplex_protocols.links import parse_simplex_link, parse_simplex_name
from simplex_protocols.mcp_server.text import mention_name

MD = Markdown(parse_link=parse_simplex_link, parse_name=parse_simplex_name)

names = st.text(min_size=1, max_size=24)


def _formattable(name: str) -> bool:
    try:
        format_mention(name)
    except CallFormatError:
        return False
    return True


def _core_mention(name: str) -> str | None:
    try:
        return core.mention(name)
    except CommandArgumentError:
        return None


# ------------------------------------------------------------------------------ examples


@pytest.mark.parametrize(
    ("name", "mention"),
    [
        ("bob", "@bob"),
        ("алиса", "@алиса"),
        ("John Doe", "@'John Doe'"),
        ("J.Doe", "@J.Doe"),
        ("Acme Inc.", "@'Acme Inc.'"),
        ("bot_", "@'bot_'"),
        ("bot_1", "@bot_1"),
        ("a+b", "@a+b"),
        ("x\u00a0y", "@'x\u00a0y'"),
        ("O'Brien", "@O'Brien"),
        ("日本", "@日本"),
        ("why?", "@'why?'"),
        ("(x)", "@'(x)'"),
        ("$", "@$"),
    ],
)
@pytest.mark.requirement("CALL-CMD-4")
def test_mention_forms(name: str, mention: str) -> None:
    assert format_mention(name) == mention
    assert parse_mention(mention) == name


@pytest.mark.parametrize(
    "name", ["", " bob", "#bob", "@bob", "'bob", "a\nb", "a\x00", "O'Brien Jr", "x'", "a\x7fb"]
)
def test_names_the_mention_syntax_cannot_carry(name: str) -> None:
    with pytest.raises(CallFormatError) as info:
        format_mention(name)
    assert info.value.code == "bad_member_name"


@pytest.mark.parametrize("text", ["bob", "@", "@'bob", "@bob x", "@'bob'x", "@bob.", "@ bob"])
def test_parse_mention_refuses(text: str) -> None:
    with pytest.raises(CallFramingError) as info:
        parse_mention(text)
    assert info.value.code == "bad_mention"


def test_quoted_mention_of_a_plain_name_is_read() -> None:
    assert parse_mention("@'bob'") == "bob"


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("@", 0),
        ("@ bob", 0),
        ("@\xa0bob", 0),  # U+00A0 passes refChar, and the core reads an empty name
        ("@'bob", 1),
        ("@''", 1),
        ("@' bob'", 2),
        ("@#bob", 1),
        ("@a\x01b", 1),
        ("@'a\x01b'", 2),
        ("@bob,", 4),
        ("@,", 1),
    ],
)
def test_read_mention_says_where_the_mention_goes_wrong(text: str, position: int) -> None:
    with pytest.raises(CallFramingError) as info:
        read_mention(text, 0)
    assert (info.value.code, info.value.position) == ("bad_mention", position)


def test_chat_call_exports_the_coretext_functions() -> None:
    assert chat_call.format_mention is format_mention
    assert chat_call.parse_mention is parse_mention


def test_core_writes_it_s_bare_and_u2028_is_no_space_for_the_core() -> None:
    # viewName (Markdown.hs) quotes a name for a space (isSpace) or for final punctuation
    # (isPunctuation); a ' inside the name is neither, so the core writes @it's, and
    # displayNameTextP_ reads the bare name up to the next space, ' included.
    assert view_name("it's") == "it's"
    assert chat_call.format_mention("it's") == "@it's"
    assert parse_mention("@it's") == "it's"
    assert mentioned_names(MD.parse("hi @it's")) == ["it's"]
    # core's builders take the names the core has, and mkValidName drops ' from every display
    # name: no member is called it's, so core refuses it rather than writing another text.
    assert mk_valid_name("it's") == "its" and not is_valid_display_name("it's")
    with pytest.raises(CommandArgumentError) as info:
        core.mention("it's")
    assert info.value.code == "bad_name"
    # U+2028 is a line separator (Zl), not a space separator (Zs): Haskell's isSpace is False,
    # so the core does not quote a name for it (Python's str.isspace says True).
    assert "\u2028".isspace() and not is_space("\u2028")
    assert view_name("a\u2028b") == "a\u2028b"
    assert chat_call.format_mention("a\u2028b") == "@a\u2028b"
    assert mentioned_names(MD.parse("hi @a\u2028b")) == ["a\u2028b"]
    # core refuses it as it refuses every character that is neither printable nor a space to
    # the core (no display name has one); it never quotes it.
    with pytest.raises(CommandArgumentError):
        core.quote_name("a\u2028b")


# ------------------------------------------------------------------------------ properties


@given(names)
def test_mention_round_trip(name: str) -> None:
    assume(_formattable(name))
    assert parse_mention(format_mention(name)) == name


@given(st.text())
def test_parse_mention_is_total(text: str) -> None:
    try:
        parse_mention(text)
    except CallFramingError as exc:
        assert exc.code == "bad_mention"


@given(st.characters())
def test_unquoted_name_rule_matches_view_name(ch: str) -> None:
    # A one-character name is quoted exactly when it is a Haskell space or punctuation.
    name = "a" + ch
    assume(_formattable(name))
    quoted = format_mention(name).startswith("@'")
    assert quoted == (is_space(ch) or unicodedata.category(ch).startswith("P"))


@given(st.text(max_size=30))
def test_the_core_reads_back_the_mention_of_every_valid_name(text: str) -> None:
    name = mk_valid_name(text)
    assume(name)
    mention = "@" + view_name(name)
    assert MD.parse_line(mention) == [({"type": "mention", "memberName": name}, mention)]
    assert parse_mention(mention) == name


@given(names)
def test_every_caller_writes_a_name_the_same_way(name: str) -> None:
    # core (commands), chat_call (/_call) and mcp_server (messages) have different ideas of
    # which names they take, and one way of writing them.
    core_text = _core_mention(name)
    if core_text is not None:
        assert core_text == "@" + mention_name(name)
    if _formattable(name):
        assert chat_call.format_mention(name) == "@" + mention_name(name)
    assert mention_name is view_name
