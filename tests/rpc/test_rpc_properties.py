"""Property tests: round trips hold, and every parser is total (a value or the library's error)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simplex_protocols import errors
from simplex_protocols.rpc import (
    ABSENT,
    ErrorCode,
    PublicKey,
    ServiceErrorBody,
    ServiceRequest,
    ServiceResponse,
    SigningKey,
    format_service_request,
    format_service_response,
    parse_service_request,
    parse_service_response,
)
from simplex_protocols.rpc.advanced import core_encode_json

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
protocol_names = st.from_regex(r"[a-z0-9-]{1,12}", fullmatch=True)
extras = st.dictionaries(
    st.text(max_size=8).filter(
        lambda k: k not in {"protocol", "request", "version", "requestKey", "response", "error"}
    ),
    json_values,
    max_size=3,
)
KEY = SigningKey.from_seed(bytes(range(32))).public_key.encode()


def _same(a: Any, b: Any) -> bool:
    """Equality where -0.0 and 0.0 are one JSON number."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) or a == b


@given(
    protocol=protocol_names,
    request=json_values,
    version=st.one_of(st.just(ABSENT), json_values),
    request_key=st.sampled_from([None, KEY]),
    extra=extras,
)
def test_request_round_trip(
    protocol: str, request: Any, version: Any, request_key: str | None, extra: dict[str, Any]
) -> None:
    value = ServiceRequest(protocol, request, version, request_key, extra)
    text = format_service_request(value)
    back = parse_service_request(text)
    assert back.protocol == protocol and back.request_key == request_key
    assert _same(back.request, request) and _same(dict(back.extra), extra)
    assert (back.version is ABSENT) == (version is ABSENT)
    assert format_service_request(back) == text


error_bodies = st.builds(
    ServiceErrorBody,
    code=st.one_of(st.sampled_from(list(ErrorCode)), st.text(max_size=10)),
    message=st.one_of(st.none(), st.text(max_size=20)),
    retry_after=st.one_of(st.none(), st.integers(min_value=0, max_value=2**32 - 1)),
    extra=st.dictionaries(
        st.text(max_size=6).filter(lambda k: k not in {"code", "message", "retryAfter"}),
        json_values,
        max_size=2,
    ),
)


@given(
    body=st.one_of(error_bodies, json_values.map(lambda v: ("response", v))),
    extra=extras,
)
def test_response_round_trip(body: Any, extra: dict[str, Any]) -> None:
    if isinstance(body, ServiceErrorBody):
        value = ServiceResponse(error=body, extra=extra)
    else:
        value = ServiceResponse(response=body[1], extra=extra)
    text = format_service_response(value)
    back = parse_service_response(text)
    assert format_service_response(back) == text
    if isinstance(body, ServiceErrorBody):
        assert back.error is not None
        assert back.error.code == body.code and back.error.retry_after == body.retry_after
        assert back.error.retryable is (body.retry_after is not None)


@given(json_values)
def test_core_encoding_is_json_that_reads_back(value: Any) -> None:
    text = core_encode_json(value)
    assert _same(json.loads(text), value)


# Strings with every kind of character aeson treats apart: controls (\b and \f among them),
# quotes, backslashes, DEL, U+2028, non-ASCII, and lone surrogates (which orjson refuses).
_tricky_text = st.text(
    alphabet=st.sampled_from('\x00\x01\x08\x0c\n\r\t\x1f "\\/\x7f\u2028\u00e9\U0001f600\ud800az')
)
_encodable: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | _tricky_text,
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=8) | _tricky_text, children, max_size=4)
    ),
    max_leaves=16,
)


@settings(max_examples=500)
@given(_encodable)
def test_core_encoding_fast_path_writes_what_the_reference_writes(value: Any) -> None:
    from simplex_protocols.rpc._corejson import reference_core_encode_json

    assert core_encode_json(value) == reference_core_encode_json(value)


def test_core_encoding_of_deep_and_non_json_values_matches_the_reference() -> None:
    from simplex_protocols.rpc._corejson import reference_core_encode_json

    deep: Any = "x"
    for _ in range(300):
        deep = [deep]
    assert core_encode_json(deep) == reference_core_encode_json(deep)
    for bad in ({1: "a"}, {"a": {1, 2}}, [object()], {"a": [{"b": {None: 1}}]}):
        with pytest.raises(TypeError):
            core_encode_json(bad)


class _Key(str):
    """A ``str`` subclass: orjson refuses it as a key on the fast path, the reference writes it."""


class _Count(int):
    pass


@pytest.mark.parametrize(
    "value",
    [
        {_Key("b"): 1, "a": [_Key("x")]},
        {"a": {"deeper": {_Key("k"): True}}},
        [_Count(3), {"n": _Count(4)}],
        {"list": [[[{"z": 1, "y": [2.5, "t"]}]]]},
    ],
)
def test_core_encoding_of_subclasses_and_floats_deep_inside_matches_the_reference(
    value: Any,
) -> None:
    from simplex_protocols.rpc._corejson import reference_core_encode_json

    assert core_encode_json(value) == reference_core_encode_json(value)


def _total(fn: Any, value: Any) -> None:
    try:
        fn(value)
    except errors.EnvelopeError as exc:
        assert isinstance(exc.code, str) and exc.code


@settings(max_examples=300)
@given(st.one_of(st.text(), st.binary()))
def test_envelope_parsers_are_total_on_text_and_bytes(value: str | bytes) -> None:
    _total(parse_service_request, value)
    _total(parse_service_response, value)


@settings(max_examples=300)
@given(json_values)
def test_envelope_parsers_are_total_on_json(value: Any) -> None:
    _total(parse_service_request, json.dumps(value))
    _total(parse_service_response, json.dumps(value))
    if isinstance(value, dict):
        _total(parse_service_request, value)
        _total(parse_service_response, value)


@settings(max_examples=300)
@given(
    st.fixed_dictionaries(
        {"protocol": st.one_of(protocol_names, json_values), "request": json_values},
        optional={
            "requestKey": st.one_of(st.text(), st.just(KEY), json_values),
            "version": json_values,
        },
    )
)
def test_request_parser_is_total_on_near_valid_envelopes(value: dict[str, Any]) -> None:
    _total(parse_service_request, value)


@settings(max_examples=300)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "response": json_values,
            "error": st.one_of(
                json_values,
                st.fixed_dictionaries(
                    {"code": st.one_of(st.text(), json_values)},
                    optional={"message": json_values, "retryAfter": json_values},
                ),
            ),
        },
    )
)
def test_response_parser_is_total_on_near_valid_envelopes(value: dict[str, Any]) -> None:
    _total(parse_service_response, value)


@settings(max_examples=300)
@given(
    st.one_of(
        st.text(),
        st.text(
            alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/",
            max_size=70,
        ),
    )
)
def test_key_decoders_are_total(text: str) -> None:
    for fn in (PublicKey.decode, SigningKey.from_sign_key):
        try:
            fn(text)
        except errors.SignatureError as exc:
            assert exc.code


@given(st.binary(min_size=32, max_size=32), st.binary(max_size=200), st.binary(max_size=500))
def test_sign_verify_round_trip(seed: bytes, ad: bytes, payload: bytes) -> None:
    key = SigningKey.from_seed(seed)
    signature = key.sign_service_payload(ad, payload)
    decoded = PublicKey.decode(key.public_key.encode())
    decoded.verify_service_payload(ad, payload, signature)
    assert SigningKey.from_sign_key(key.to_sign_key()) == key
