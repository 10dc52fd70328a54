"""Wire JSON: strict decoding, compact encoding, and the core's size rules."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simplex_protocols import _wire
from simplex_protocols.limits import MSG_NEW_ENVELOPE_BYTES


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
