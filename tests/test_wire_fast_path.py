"""The fast wire JSON path accepts and refuses exactly what the reference path does.

``_wire.loads`` lets orjson read the text first; ``_wire.reference_loads`` is the standard
library's decoder with every check written out. For any text, both give the same value (same
types, same key order) or the same error (code, position and reason), as ``str`` and as UTF-8
bytes, with and without duplicate keys allowed. The generated texts aim at what the two
decoders treat differently: duplicate keys, nesting near the depth limit and beyond orjson's,
lone surrogates raw and escaped, integers beyond 64 bits, numbers that round to infinity,
colons inside strings and written as escapes, whitespace JSON allows and whitespace it does not,
and text after the value.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simplex_protocols import _wire
from simplex_protocols._spec import spec_path

Decode = Callable[..., Any]


def _typed(value: Any) -> Any:
    """``value`` with every type made visible: 1, 1.0 and True compare equal in Python."""
    if isinstance(value, dict):
        return ("object", tuple((key, _typed(child)) for key, child in value.items()))
    if isinstance(value, list):
        return ("array", tuple(_typed(child) for child in value))
    if isinstance(value, float):
        return ("float", repr(value))  # repr tells -0.0 from 0.0
    return (type(value).__name__, value)


def _outcome(decode: Decode, text: str | bytes, allow_duplicate_keys: bool) -> tuple[Any, ...]:
    try:
        value = decode(text, allow_duplicate_keys=allow_duplicate_keys)
    except _wire.WireJSONError as exc:
        return ("refused", exc.code, exc.position, exc.reason)
    return ("accepted", _typed(value))


def _assert_same(text: str) -> None:
    inputs: list[str | bytes] = [text, text.encode("utf-8", "surrogatepass")]
    for given_text in inputs:
        for allow in (False, True):
            fast = _outcome(_wire.loads, given_text, allow)
            reference = _outcome(_wire.reference_loads, given_text, allow)
            assert fast == reference, (given_text, allow)


# --------------------------------------------------------------------------- generated JSON

_WHITESPACE = st.sampled_from(["", "", "", " ", "\n", "\t", "\r\n  ", "\x0c", "\x0b", "\u00a0"])

_NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.integers(-(2**64) - 2, -(2**63) + 2).map(str),
    st.integers(2**63 - 2, 2**64 + 2).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: f"{f:.17e}"),
    st.builds(
        lambda mantissa, exponent: f"{mantissa}e{exponent}",
        st.integers(-(10**20), 10**20),
        st.integers(-400, 400),
    ),
    st.sampled_from(
        [
            "-0",
            "-0.0",
            "0.0",
            "1E5",
            "1e+2",
            "1e400",
            "-1e400",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.797693134862315807e308",
            "1.797693134862315808e308",
            "1.7976931348623159e308",
            "4.9e-325",
            "2.4703282292062328e-324",
            "1" * 30,
            "1" * 5000,
            "-" + "9" * 25,
            "NaN",
            "Infinity",
            "-Infinity",
            "01",
            "1.",
            ".5",
            "+1",
            "0x10",
        ]
    ),
)

_STRING_PIECES = st.one_of(
    st.text(
        alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters='"\\'), max_size=4
    ),
    st.sampled_from(
        [
            ":",
            "https://x",
            "u003a",
            "\\u003a",
            "\\u003A",
            "\\\\u003a",
            "\\n",
            '\\"',
            "\\\\",
            "\\/",
            "\\u0000",
            "\\u00e9",
            "\\ud800",
            "\\udfff",
            "\\udc00\\ud800",
            "\\ud83d\\ude00",
            "\\ud83d",
            "\ud800",
            "\udc00",
            "\x01",
            "\x7f",
            "é",
            "😀",
            "\u2028",
            "\\x",
        ]
    ),
)

_STRINGS = st.lists(_STRING_PIECES, max_size=4).map(lambda pieces: '"' + "".join(pieces) + '"')

# Few distinct keys, so objects often repeat one; "a" also appears escaped.
_KEYS = st.sampled_from(['"a"', '"b"', '"a:b"', '"\\u0061"', '"\\u003a"', '":"', '""'])

_SCALARS = st.one_of(st.sampled_from(["null", "true", "false"]), _NUMBERS, _STRINGS)


@st.composite
def _render_array(draw: st.DrawFn, items: st.SearchStrategy[str]) -> str:
    ws = draw(_WHITESPACE)
    return "[" + ws + ("," + ws).join(draw(st.lists(items, max_size=4))) + ws + "]"


@st.composite
def _render_object(draw: st.DrawFn, items: st.SearchStrategy[str]) -> str:
    ws = draw(_WHITESPACE)
    pairs = draw(st.lists(st.tuples(_KEYS, items), max_size=4))
    body = ("," + ws).join(f"{key}{ws}:{ws}{value}" for key, value in pairs)
    return "{" + ws + body + ws + "}"


_VALUES = st.recursive(
    _SCALARS,
    lambda inner: _render_array(inner) | _render_object(inner),
    max_leaves=10,
)


@st.composite
def _nested(draw: st.DrawFn) -> str:
    """Nesting around the depth limit (64), and beyond orjson's (1,024)."""
    depth = draw(st.sampled_from([1, 2, 63, 64, 65, 66, 200, 1023, 1024, 1025, 1100]))
    opens = draw(st.lists(st.sampled_from(["[", '{"a":']), min_size=depth, max_size=depth))
    inner = draw(_SCALARS | st.sampled_from(["[]", "{}"]))
    closes = "".join("]" if token == "[" else "}" for token in reversed(opens))
    return "".join(opens) + inner + closes


_TAILS = st.sampled_from(["", "", "", " ", "\n\t", " x", "1", "{}", ",", "\x00", "\u00a0"])


@settings(max_examples=1500, deadline=None)
@given(
    st.one_of(_VALUES, _nested(), _SCALARS),
    _WHITESPACE,
    _TAILS,
)
@example('{"a":1,"a":2}', "", "")
@example('{"a":"x:y","a":"z"}', "", "")
@example('{"a":1,"\\u0061":2}', "", "")
@example('{"a":1,"a":"\\u003a"}', "", "")
@example('{"a":[1,{"b":2,"b":3}]}', "", "")
@example("[" * 65 + "]" * 65, "", "")
@example(str(2**64), "", "")
@example(f"[{-(2**63) - 1}]", "", "")
@example('["\\ud800"]', "", "")
@example('"\ud800"', "", "")
@example("1e400", " ", "")
@example("[1]", "", " x")
def test_fast_and_reference_paths_agree_on_generated_json(
    value: str, leading: str, tail: str
) -> None:
    _assert_same(leading + value + tail)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=' \t\n\r{}[]":,0123456789.eE-+truefalsnu\\a\ud800', max_size=40))
def test_fast_and_reference_paths_agree_on_json_like_noise(text: str) -> None:
    _assert_same(text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=24))
def test_fast_and_reference_paths_agree_on_any_bytes(data: bytes) -> None:
    for allow in (False, True):
        fast = _outcome(_wire.loads, data, allow)
        assert fast == _outcome(_wire.reference_loads, data, allow)


# --------------------------------------------------------------------------- spec vectors


def _strings_in(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, child in node.items():
            yield key
            yield from _strings_in(child)
    elif isinstance(node, list):
        for child in node:
            yield from _strings_in(child)


def _vector_texts() -> list[str]:
    """Every string of the spec's vectors, and the request part of every ``/_call`` text."""
    texts: set[str] = set()
    for path in sorted(Path(spec_path("vectors")).rglob("*.json")):
        for text in _strings_in(json.loads(path.read_text(encoding="utf-8"))):
            texts.add(text)
            if text.startswith("/_call") and "{" in text:
                texts.add(text[text.index("{") :])
    return sorted(texts)


def test_fast_and_reference_paths_agree_on_every_spec_vector_string() -> None:
    texts = _vector_texts()
    # The vectors hold JSON texts (envelopes, requests) as well as other strings.
    assert sum(text.lstrip().startswith("{") for text in texts) > 20
    for text in texts:
        _assert_same(text)


# --------------------------------------------------------------------------- the fast path runs


def _no_reference(text: str | bytes, *, allow_duplicate_keys: bool = False) -> Any:
    raise AssertionError("the reference path was asked")


@pytest.mark.parametrize(
    "text",
    [
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}',
        '{"protocol":"mcp","request":{"id":"x","n":[1,2.5,-3e10,true,null]}}',
        '{"links":["https://example.com/a?t=12:00"],"at":"12:30"}',
        '  [ {"a" : "é😀\\n"} ]\n',
        str(2**64 - 1),
        "-0.0",
    ],
)
def test_ordinary_text_never_reaches_the_reference_path(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _typed(_wire.reference_loads(text))
    monkeypatch.setattr(_wire, "reference_loads", _no_reference)
    assert _typed(_wire.loads(text)) == expected
    assert _typed(_wire.loads(text.encode())) == expected


@pytest.mark.parametrize(
    ("text", "code"),
    [
        # What orjson lets through and the fast path must catch itself.
        ('{"a":1,"a":2}', "duplicate_key"),
        ('{"u":"https://x","u":"y"}', "duplicate_key"),
        ('{"a":1,"a":"\\u003a"}', "duplicate_key"),
        ("[" * 65 + "]" * 65, "too_deep"),
        ('{"a":' * 65 + "1" + "}" * 65, "too_deep"),
        # What orjson refuses, with the reference path's code.
        ("[" * 2000 + "]" * 2000, "too_deep"),
        ("NaN", "not_json"),
        ("1e400", "bad_number"),
        ('"\\ud800"', "lone_surrogate"),
        ('"\ud800"', "lone_surrogate"),
        ("[1] 2", "trailing_data"),
    ],
)
def test_what_orjson_treats_differently_gets_the_reference_verdict(text: str, code: str) -> None:
    with pytest.raises(_wire.WireJSONError) as info:
        _wire.loads(text)
    assert info.value.code == code


def test_integers_beyond_64_bits_stay_exact_integers() -> None:
    # orjson reads them as floats; the reference path keeps them exact.
    for number in (2**64, -(2**63) - 1, 10**30):
        value = _wire.loads(f'{{"n":[{number}]}}')
        assert value == {"n": [number]}
        assert type(value["n"][0]) is int
