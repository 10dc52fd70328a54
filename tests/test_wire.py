"""Wire JSON: strict decoding, compact encoding, and the core's size rules."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simplex_protocols import _wire
from simplex_protocols._framing import MSG_NEW_ENVELOPE_BYTES


def test_dumps_is_compact_and_keeps_utf8() -> None:
    assert _wire.dumps({"a": ["é", 1]}) == '{"a":["é",1]}'


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"a":1,"a":2}', "duplicate_key"),
        ("NaN", "not_json"),
        ('{"a":', "not_json"),
        ("[" * 65 + "]" * 65, "too_deep"),
        ('"\\ud800"', "lone_surrogate"),
        ("1e999", "bad_number"),
    ],
)
def test_loads_refuses_with_a_code(text: str, code: str) -> None:
    with pytest.raises(_wire.WireJSONError) as info:
        _wire.loads(text)
    assert info.value.code == code


@pytest.mark.parametrize(
    ("text", "position"), [('{"a":1} x', 8), ("1 2", 2), ('{}{"b":2}', 2), ("[1]\n\t,", 5)]
)
def test_loads_names_text_after_the_value_trailing_data(text: str, position: int) -> None:
    with pytest.raises(_wire.WireJSONError) as info:
        _wire.loads(text)
    assert (info.value.code, info.value.position) == ("trailing_data", position)
    assert info.value.syntax_code == "not_json"


@pytest.mark.parametrize("text", [' {"a":1} ', "\n[1]\r\n", "\t7\t"])
def test_loads_accepts_whitespace_around_the_value(text: str) -> None:
    assert _wire.loads(text) == json.loads(text)


_JSONISH = st.one_of(
    st.text(alphabet=' \t\n\r{}[]":,0123456789.eE-+truefalsn', max_size=30),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
        max_leaves=8,
    ).map(json.dumps),
)


@given(_JSONISH, st.sampled_from(["", " ", "\n", " x", "1", "{}"]))
def test_loads_agrees_with_json_loads_on_what_is_one_json_value(text: str, tail: str) -> None:
    # Beyond json.loads, loads refuses only NaN/infinities, duplicate keys, depth, lone
    # surrogates and huge numbers, each with its own code.
    text += tail
    try:
        expected: object = json.loads(text)
    except ValueError:
        with pytest.raises(_wire.WireJSONError):
            _wire.loads(text)
    else:
        if isinstance(expected, float) and expected != expected:
            return
        try:
            assert _wire.loads(text) == expected
        except _wire.WireJSONError as exc:
            assert exc.code in {"duplicate_key", "bad_number", "lone_surrogate"}


def test_loads_refuses_bytes_that_are_not_utf8() -> None:
    with pytest.raises(_wire.WireJSONError) as info:
        _wire.loads(b'"\xff"')
    assert info.value.code == "not_utf8"


def test_loads_accepts_nesting_at_the_limit() -> None:
    depth = _wire.MAX_JSON_DEPTH
    assert _wire.loads("[" * depth + "]" * depth) is not None


def test_duplicate_keys_can_be_allowed() -> None:
    assert _wire.loads('{"a":1,"a":2}', allow_duplicate_keys=True) == {"a": 2}


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("", 0),
        ("abc", 3),
        ('"', 2),
        ("\\", 2),
        ("\n\r\t", 6),
        ("\b\f", 12),
        ("\x00", 6),
        ("\x7f", 1),
        ("é", 2),
        ("😀", 4),
        ("\u2028", 3),
        ("/", 1),
    ],
)
def test_aeson_string_size(text: str, size: int) -> None:
    assert _wire.aeson_string_size(text) == size


def test_chat_message_size_adds_the_envelope() -> None:
    assert _wire.chat_message_size("hi") == MSG_NEW_ENVELOPE_BYTES + 2


@given(st.text())
def test_aeson_size_is_python_size_minus_the_quotes_when_no_short_escape_differs(text: str) -> None:
    # Python writes \b and \f as two bytes where aeson writes six; elsewhere they agree.
    python = len(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass")) - 2
    extra = 4 * sum(ch in "\b\f" for ch in text)
    assert _wire.aeson_string_size(text) == python + extra
