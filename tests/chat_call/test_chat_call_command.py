"""``/_call`` framing: unit tests, round trips and totality (mentions: tests/coretext)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from simplex_protocols import _wire
from simplex_protocols.chat_call import (
    CallCommand,
    format_call_command,
    format_mention,
    is_call_command,
    parse_call_command,
)
from simplex_protocols.errors import (
    CallFormatError,
    CallFramingError,
    MessageTooLargeError,
    ParseError,
)

MCP_LIST = (
    '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": '
    '{"io.modelcontextprotocol/protocolVersion": "2026-07-28", '
    '"io.modelcontextprotocol/clientCapabilities": {}}}}'
)


def framing_error(text: str) -> CallFramingError:
    with pytest.raises(CallFramingError) as info:
        parse_call_command(text)
    return info.value


# ------------------------------------------------------------------------------ parse


@pytest.mark.requirement("CALL-CMD-1", "CALL-CMD-2")
def test_spec_example_parses_with_its_spaces_kept_in_request_text() -> None:
    command = parse_call_command("/_call mcp " + MCP_LIST)
    assert command == CallCommand("mcp", json.loads(MCP_LIST), None, MCP_LIST)


@pytest.mark.requirement("CALL-CMD-1", "CALL-CMD-4")
def test_command_with_a_mention_names_the_member() -> None:
    command = parse_call_command('/_call @Switchback mcp {"id":1}')
    assert command == CallCommand("mcp", {"id": 1}, "Switchback", '{"id":1}')


@pytest.mark.requirement("CALL-CMD-4")
def test_quoted_mention_carries_spaces_and_trailing_punctuation() -> None:
    assert parse_call_command("/_call @'John Doe' a2a {}").member == "John Doe"
    assert parse_call_command("/_call @'Acme, Inc.' a2a {}").member == "Acme, Inc."


@pytest.mark.requirement("CALL-CMD-4")
def test_bare_name_with_an_inner_apostrophe_is_one_name() -> None:
    assert parse_call_command("/_call @O'Brien mcp {}").member == "O'Brien"


@pytest.mark.requirement("CALL-CMD-3")
@pytest.mark.parametrize(
    "text",
    [
        '/_call   @bob    mcp  {"a":1}',
        '/_call  mcp {"a":1}',
        '/_call mcp  {"a":1}',
        '/_call @bob  mcp {"a":1}',
        "/_call  @'Bob Smith' mcp {}",
    ],
)
def test_a_run_of_spaces_between_parts_is_refused(text: str) -> None:
    # AMB-6, reading A: one space separates the parts, as CALL-CMD-3 says
    with pytest.raises(CallFramingError) as caught:
        parse_call_command(text)
    assert caught.value.code == "bad_separator"


@pytest.mark.requirement("CALL-CMD-2")
def test_json_whitespace_inside_and_after_the_object_is_the_request_s_own() -> None:
    command = parse_call_command('/_call mcp {\n  "a": [1, 2]\n}\n')
    assert command.request == {"a": [1, 2]}
    assert command.request_text == '{\n  "a": [1, 2]\n}\n'


@pytest.mark.parametrize(
    ("text", "code", "requirement"),
    [
        ("hello", "not_a_call", "CALL-CMD-1"),
        (" /_call mcp {}", "not_a_call", "CALL-CMD-1"),
        ("/_callmcp {}", "not_a_call", "CALL-CMD-1"),
        ("/_CALL mcp {}", "not_a_call", "CALL-CMD-1"),
        ("/_call", "missing_protocol", "CALL-CMD-1"),
        ("/_call ", "missing_protocol", "CALL-CMD-1"),
        ("/_call {}", "missing_protocol", "CALL-CMD-1"),
        ("/_call @bob {}", "missing_protocol", "CALL-CMD-1"),
        ("/_call\tmcp {}", "bad_separator", "CALL-CMD-3"),
        ("/_call\nmcp {}", "bad_separator", "CALL-CMD-3"),
        ("/_call\u00a0mcp {}", "bad_separator", "CALL-CMD-3"),
        ("/_call mcp\t{}", "bad_separator", "CALL-CMD-3"),
        ("/_call mcp\n{}", "bad_separator", "CALL-CMD-3"),
        ("/_call mcp \n{}", "bad_separator", "CALL-CMD-3"),
        ("/_call @bob\tmcp {}", "bad_separator", "CALL-CMD-3"),
        ("/_call MCP {}", "bad_protocol_name", "NAME-1"),
        ("/_call m_cp {}", "bad_protocol_name", "NAME-1"),
        ("/_call mcp{} {}", "bad_protocol_name", "NAME-1"),
        ("/_call mcp\u00e9 {}", "bad_protocol_name", "NAME-1"),
        ("/_call mcp", "missing_request", "CALL-CMD-2"),
        ("/_call mcp   ", "missing_request", "CALL-CMD-2"),
        ("/_call mcp [1]", "request_not_object", "CALL-CMD-2"),
        ("/_call mcp 1", "request_not_object", "CALL-CMD-2"),
        ('/_call mcp "x"', "request_not_object", "CALL-CMD-2"),
        ("/_call mcp null", "request_not_object", "CALL-CMD-2"),
        ("/_call mcp {", "request_not_json", "CALL-CMD-2"),
        ("/_call mcp {'a': 1}", "request_not_json", "CALL-CMD-2"),
        ("/_call mcp {} please", "request_trailing_text", "CALL-CMD-2"),
        ("/_call mcp {}{}", "request_trailing_text", "CALL-CMD-2"),
        ('/_call mcp {"a":1,"a":2}', "request_duplicate_key", "CALL-CMD-2"),
        ('/_call mcp {"a":NaN}', "request_not_json", "CALL-CMD-2"),
        ('/_call mcp {"a":1e999}', "request_bad_number", "CALL-CMD-2"),
        ('/_call mcp {"a":"\\ud800"}', "request_lone_surrogate", "CALL-CMD-2"),
        ("/_call @ mcp {}", "bad_mention", "CALL-CMD-4"),
        ("/_call @", "bad_mention", "CALL-CMD-4"),
        ("/_call @'' mcp {}", "bad_mention", "CALL-CMD-4"),
        ("/_call @'John Doe mcp {}", "bad_mention", "CALL-CMD-4"),
        ("/_call @'John'x mcp {}", "bad_mention", "CALL-CMD-4"),
        ("/_call @' bob' mcp {}", "bad_mention", "CALL-CMD-4"),
        ("/_call @#bob mcp {}", "bad_mention", "CALL-CMD-4"),
        ("/_call @@bob mcp {}", "bad_mention", "CALL-CMD-4"),
        ("/_call @bob, mcp {}", "bad_mention", "CALL-CMD-4"),
        ("/_call @bob_ mcp {}", "bad_mention", "CALL-CMD-4"),
        ("/_call @bob\x01x mcp {}", "bad_mention", "CALL-CMD-4"),
        ("/_call @'a\nb' mcp {}", "bad_mention", "CALL-CMD-4"),
    ],
)
def test_malformed_command_names_its_problem(text: str, code: str, requirement: str) -> None:
    error = framing_error(text)
    assert (error.code, error.requirement) == (code, requirement)
    assert isinstance(error, ParseError)
    assert isinstance(error, ValueError)


@pytest.mark.requirement("CALL-CMD-2")
def test_nesting_deeper_than_64_is_refused_and_64_is_accepted() -> None:
    deep = '{"a":' * 64 + "1" + "}" * 64
    assert parse_call_command(f"/_call mcp {deep}").request_text == deep
    error = framing_error('/_call mcp {"a":' + deep + "}")
    assert error.code == "request_too_deep"


@pytest.mark.requirement("CALL-CMD-2")
def test_error_in_the_request_keeps_the_parts_read_so_far() -> None:
    error = framing_error("/_call @bob mcp {not json")
    assert (error.protocol, error.member, error.request_text) == ("mcp", "bob", "{not json")
    assert error.position == len("/_call @bob mcp ") + 1


def test_error_before_the_protocol_keeps_nothing_it_did_not_read() -> None:
    error = framing_error("/_call MCP {}")
    assert (error.protocol, error.member, error.request_text) == (None, None, None)


def test_missing_request_keeps_an_empty_request_text() -> None:
    for text in ("/_call a2a", "/_call a2a  "):
        error = framing_error(text)
        assert (error.protocol, error.request_text) == ("a2a", "")


def test_bad_separator_before_the_request_keeps_the_rest_as_request_text() -> None:
    error = framing_error('/_call mcp \n{"id":1}')
    assert (error.code, error.protocol, error.request_text) == (
        "bad_separator",
        "mcp",
        '\n{"id":1}',
    )


def test_a_space_that_is_not_a_haskell_space_ends_nothing_in_a_bare_name() -> None:
    # U+2028 is a space to Python but not to the core: it belongs to the name.
    command = parse_call_command("/_call @a\u2028b mcp {}")
    assert command.member == "a\u2028b"


def test_unicode_space_separators_are_refused_between_parts() -> None:
    assert framing_error("/_call @bob\u3000mcp {}").code == "bad_separator"
    assert framing_error("/_call mcp\u2003{}").code == "bad_separator"


def test_bidi_marks_in_a_name_are_kept_exactly() -> None:
    name = "\u202ebob\u202c"
    assert parse_call_command(f"/_call @{name} mcp {{}}").member == name


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/_call", True),
        ("/_call mcp {}", True),
        ("/_call\tmcp", True),
        ("/_callmcp", False),
        (" /_call mcp {}", False),
        ("/call mcp {}", False),
        ("", False),
    ],
)
def test_is_call_command(text: str, expected: bool) -> None:
    assert is_call_command(text) is expected


# ------------------------------------------------------------------------------ format


@pytest.mark.requirement("CALL-CMD-1", "CALL-CMD-3")
def test_format_writes_one_space_and_compact_json() -> None:
    text = format_call_command("mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert text == '/_call mcp {"jsonrpc":"2.0","id":1,"method":"tools/list"}'


@pytest.mark.requirement("CALL-CMD-4")
def test_format_quotes_names_as_the_core_does() -> None:
    assert format_call_command("a2a", {}, member="bob") == "/_call @bob a2a {}"
    assert format_call_command("a2a", {}, member="John Doe") == "/_call @'John Doe' a2a {}"
    assert format_call_command("a2a", {}, member="Acme Inc.") == "/_call @'Acme Inc.' a2a {}"
    assert format_call_command("a2a", {}, member="J.Doe") == "/_call @J.Doe a2a {}"


def test_format_keeps_request_text_as_given() -> None:
    assert format_call_command("mcp", MCP_LIST) == "/_call mcp " + MCP_LIST


def test_format_keeps_utf8_unescaped() -> None:
    assert format_call_command("mcp", {"q": "é😀"}) == '/_call mcp {"q":"é😀"}'


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("MCP", {}), "bad_protocol_name"),
        (("", {}), "bad_protocol_name"),
        (("mcp", "[1]"), "request_not_object"),
        (("mcp", "{bad"), "request_not_object"),
        (("mcp", " {}"), "bad_separator"),
        (("mcp", "\n{}"), "bad_separator"),
        (("mcp", {"x": float("nan")}), "request_not_object"),
        (("mcp", {"x": object()}), "request_not_object"),
        (("mcp", [1]), "request_not_object"),
    ],
)
def test_format_refuses_what_cannot_be_a_command(args: tuple[Any, Any], code: str) -> None:
    with pytest.raises(CallFormatError) as info:
        format_call_command(*args)
    assert info.value.code == code


def test_format_refuses_a_command_over_the_message_limit() -> None:
    with pytest.raises(MessageTooLargeError) as info:
        format_call_command("mcp", {"x": "a" * 16_000})
    assert info.value.limit == 15_602
    # without the check it is only text
    assert format_call_command("mcp", {"x": "a" * 16_000}, check_size=False).startswith("/_call")


# ------------------------------------------------------------------------------ properties

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
requests = st.dictionaries(st.text(max_size=10), json_value, max_size=5)
protocols = st.from_regex(r"[a-z0-9-]{1,12}", fullmatch=True)
names = st.text(min_size=1, max_size=24)


def _formattable(name: str) -> bool:
    try:
        format_mention(name)
    except CallFormatError:
        return False
    return True


@given(protocols, requests, st.none() | names)
def test_parse_format_round_trip(
    protocol: str, request: dict[str, Any], member: str | None
) -> None:
    assume(member is None or _formattable(member))
    text = format_call_command(protocol, request, member=member, check_size=False)
    command = parse_call_command(text)
    assert command == CallCommand(protocol, request, member, _wire.dumps(request))
    assert (
        format_call_command(
            command.protocol, command.request_text, member=command.member, check_size=False
        )
        == text
    )


@given(st.text())
def test_any_text_parses_or_raises_a_framing_error(text: str) -> None:
    try:
        parse_call_command(text)
    except CallFramingError as exc:
        assert exc.code
        assert is_call_command(text) or exc.code == "not_a_call"


@given(st.text(alphabet=st.sampled_from(list("/_cal @'{}[]\"mp \t\n\u3000x,.1:é")), max_size=40))
def test_command_like_text_parses_or_raises_a_framing_error(text: str) -> None:
    for candidate in (text, "/_call " + text, "/_call @" + text):
        try:
            command = parse_call_command(candidate)
        except CallFramingError:
            continue
        # Whatever the parser accepts, the formatter writes back in canonical form, and that
        # form parses to the same command.
        canonical = format_call_command(
            command.protocol, command.request_text, member=command.member, check_size=False
        )
        assert parse_call_command(canonical) == command


def test_a_parsed_command_is_a_whole_frozen_call_command() -> None:
    # The fast path builds its CallCommand without the dataclass's __init__ (slot_builder):
    # equal, repr alike and frozen as one built the usual way.
    parsed = parse_call_command("/_call @'bob smith' mcp {\"id\":1}")
    built = CallCommand("mcp", {"id": 1}, "bob smith", '{"id":1}')
    assert parsed == built
    assert repr(parsed) == repr(built)
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.protocol = "a2a"  # type: ignore[misc]
