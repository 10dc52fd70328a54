"""Sizes against the padded limit, the agent's framing, and JSON written as the core writes it."""

from __future__ import annotations

import json

import pytest

from simplex_protocols import _wire, errors, limits
from simplex_protocols.rpc import ServiceRequest, check_service_size, success_response
from simplex_protocols.rpc.advanced import (
    PRESET_REPLY_QUEUE_INFO_BYTES,
    SERVICE_PAD_FRAMING_BYTES,
    SIGNATURE_FIELD_BYTES,
    UNSIGNED_FIELD_BYTES,
    core_encode_json,
    reply_queue_info_size,
    request_framing_bytes,
    service_json_size,
)

ONION = "beccx4yfxxbvyhqypaavemqurytl6hozr47wfc7uuecacjqdvwpw2xid.onion"


def _response_text(json_bytes: int) -> str:
    return '{"response":"' + "x" * (json_bytes - 15) + '"}'


def test_framing_constants_follow_the_agent_encoding() -> None:
    assert SERVICE_PAD_FRAMING_BYTES == 3  # C.pad's 2-byte length + the 1-byte tag
    assert UNSIGNED_FIELD_BYTES == 1
    assert SIGNATURE_FIELD_BYTES == 1 + 1 + 44 + 1 + 64
    assert reply_queue_info_size(["smp8.simplex.im", ONION]) == PRESET_REPLY_QUEUE_INFO_BYTES == 187
    assert reply_queue_info_size(["smp.example.com"], "5223") == 128
    assert request_framing_bytes() == 3 + 1 + 187 + 1
    assert request_framing_bytes(signed=True) == 3 + 1 + 187 + 111


def test_wire_padded_size_adds_the_framing() -> None:
    assert _wire.service_padded_size('{"response":1}') == 14 + 3
    assert _wire.service_padded_size('{"response":1}', extra_framing_bytes=189) == 14 + 3 + 189


@pytest.mark.requirement("RPC-LIM-2")
@pytest.mark.parametrize(("json_bytes", "fits"), [(11102, True), (11103, True), (11104, False)])
def test_response_padded_limit(json_bytes: int, fits: bool) -> None:
    text = _response_text(json_bytes)
    if fits:
        assert check_service_size(text, kind="response").padded_bytes == json_bytes + 3
    else:
        with pytest.raises(errors.MessageTooLargeError) as info:
            check_service_size(text, kind="response")
        assert (info.value.size, info.value.limit) == (11107, limits.SERVICE_PADDED_BYTES)


@pytest.mark.requirement("RPC-LIM-2")
@pytest.mark.parametrize("signed", [False, True])
def test_request_padded_limit_depends_on_the_signature_field(signed: bool) -> None:
    limit_json = limits.SERVICE_PADDED_BYTES - request_framing_bytes(signed=signed)
    head = '{"protocol":"mcp","request":"'
    fits = head + "x" * (limit_json - len(head) - 2) + '"}'
    assert check_service_size(fits, kind="request", signed=signed).padded_bytes == 11106
    with pytest.raises(errors.MessageTooLargeError):
        check_service_size(fits[:-2] + 'x"}', kind="request", signed=signed)


@pytest.mark.requirement("RPC-LIM-3")
@pytest.mark.parametrize(("json_bytes", "within"), [(9999, True), (10000, True), (10001, False)])
def test_recommended_size_is_a_warning_not_an_error(json_bytes: int, within: bool) -> None:
    size = check_service_size(_response_text(json_bytes), kind="response")
    assert size.json_bytes == json_bytes
    assert size.within_recommended is within


def test_sizes_of_values_use_the_core_encoding() -> None:
    value = {"response": {"b": "é\n", "a": 1.0}}
    assert service_json_size(value) == len(b'{"response":{"a":1.0,"b":"\xc3\xa9\\n"}}')
    assert service_json_size(success_response("x")) == len('{"response":"x"}')
    assert service_json_size(ServiceRequest(protocol="mcp", request={})) == len(
        '{"protocol":"mcp","request":{}}'
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"b": 1, "a": [True, False, None]}, '{"a":[true,false,null],"b":1}'),
        ({"é": 1, "z": 2, "A": 3}, '{"A":3,"z":2,"é":1}'),
        (
            '"\\\n\r\t\b\f\u0001\u007f\u2028/',
            '"\\"\\\\\\n\\r\\t\\u0008\\u000c\\u0001\u007f\u2028/"',
        ),
        (1.5, "1.5"),
        (3.0, "3.0"),
        (0.05, "5.0e-2"),
        (1e-7, "1.0e-7"),
        (12345678.5, "1.23456785e7"),
        (1234567.5, "1234567.5"),
        (-2.5, "-2.5"),
        (0.0, "0.0"),
        (10**30, str(10**30)),
    ],
)
def test_core_encoding_matches_aeson(value: object, text: str) -> None:
    assert core_encode_json(value) == text
    assert json.loads(text) == value


def test_core_encoding_refuses_what_is_not_json() -> None:
    with pytest.raises(ValueError):
        core_encode_json(float("nan"))
    with pytest.raises(TypeError):
        core_encode_json({1: 2})
    with pytest.raises(TypeError):
        core_encode_json(object())
