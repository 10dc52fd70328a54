"""Service RPC envelopes: parsing, building, validation errors and the requester's error rules."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from simplex_protocols import errors
from simplex_protocols.rpc import (
    ABSENT,
    ErrorCode,
    ServiceErrorBody,
    ServiceRequest,
    ServiceResponse,
    SigningKey,
    bad_request_for,
    error_response,
    format_service_request,
    format_service_response,
    is_protocol_name,
    parse_service_request,
    parse_service_response,
    raise_for_response,
    response_or_raise,
    success_response,
)

KEY = SigningKey.from_seed(bytes(range(32))).public_key.encode()


def _envelope_error(fn: Any, value: Any) -> errors.EnvelopeError:
    with pytest.raises(errors.EnvelopeError) as info:
        fn(value)
    return info.value


# --------------------------------------------------------------------------- requests


@pytest.mark.requirement("RPC-REQ-1", "RPC-REQ-6")
def test_parse_request_keeps_the_request_message_unchanged() -> None:
    text = '{"protocol":"mcp","request":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}'
    assert parse_service_request(text) == ServiceRequest(
        protocol="mcp", request={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    )


def test_parse_request_accepts_bytes_and_an_already_decoded_object() -> None:
    value = {"protocol": "a2a", "request": {}}
    assert parse_service_request(json.dumps(value).encode()) == parse_service_request(value)


def test_a_parsed_request_is_a_whole_frozen_service_request() -> None:
    # The parser builds its ServiceRequest without the dataclass's __init__: the result must
    # still be equal, hash alike, repr alike and refuse changes as one built the usual way.
    text = json.dumps(
        {"protocol": "mcp", "request": [1], "version": 2, "requestKey": KEY, "x": True}
    )
    parsed = parse_service_request(text)
    built = ServiceRequest("mcp", [1], 2, KEY, {"x": True})
    assert parsed == built
    assert repr(parsed) == repr(built)
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.protocol = "a2a"  # type: ignore[misc]
    assert dataclasses.replace(parsed, protocol="a2a").protocol == "a2a"


@pytest.mark.requirement("RPC-REQ-3")
def test_absent_version_differs_from_a_null_version() -> None:
    absent = parse_service_request('{"protocol":"x","request":{}}')
    null = parse_service_request('{"protocol":"x","request":{},"version":null}')
    assert absent.version is ABSENT
    assert null.version is None
    assert format_service_request(null) == '{"protocol":"x","request":{},"version":null}'
    assert format_service_request(absent) == '{"protocol":"x","request":{}}'


@pytest.mark.requirement("RPC-REQ-7")
def test_unknown_request_members_are_kept_and_written_back() -> None:
    request = parse_service_request('{"protocol":"mcp","request":{},"trace":{"id":7}}')
    assert request.extra == {"trace": {"id": 7}}
    assert format_service_request(request) == '{"protocol":"mcp","request":{},"trace":{"id":7}}'


@pytest.mark.requirement("RPC-REQ-4")
def test_request_key_is_kept_as_text_once_it_decodes() -> None:
    request = parse_service_request({"protocol": "mcp", "request": {}, "requestKey": KEY})
    assert request.request_key == KEY


@pytest.mark.requirement("RPC-REQ-4")
def test_request_key_that_is_not_a_key_is_an_envelope_error() -> None:
    exc = _envelope_error(
        parse_service_request, {"protocol": "mcp", "request": {}, "requestKey": "abc"}
    )
    assert (exc.code, exc.position, exc.requirement) == (
        "bad_request_key",
        "/requestKey",
        "RPC-REQ-4",
    )


@pytest.mark.requirement("RPC-REQ-2")
@pytest.mark.parametrize("name", ["MCP", "", "mcp ", "my_proto", "m\u0441p", "mcp\n"])
def test_protocol_that_is_not_a_protocol_name_is_refused(name: str) -> None:
    exc = _envelope_error(parse_service_request, {"protocol": name, "request": {}})
    assert (exc.code, exc.position, exc.requirement) == (
        "bad_protocol_name",
        "/protocol",
        "RPC-REQ-2",
    )


@pytest.mark.requirement("RPC-REQ-2")
def test_protocol_names_are_lowercase_letters_digits_and_hyphens() -> None:
    assert is_protocol_name("mcp") and is_protocol_name("a2a") and is_protocol_name("x-1")
    assert not is_protocol_name("Mcp") and not is_protocol_name(None) and not is_protocol_name("")


@pytest.mark.requirement("RPC-REQ-1")
@pytest.mark.parametrize(
    ("value", "position"),
    [
        ({"request": {}}, "/protocol"),
        ({"protocol": "mcp"}, "/request"),
        ({"protocol": 1, "request": {}}, "/protocol"),
        ({"protocol": "mcp", "request": {}, "requestKey": None}, "/requestKey"),
    ],
)
def test_request_schema_errors_point_at_the_member(value: dict[str, Any], position: str) -> None:
    exc = _envelope_error(parse_service_request, value)
    assert (exc.code, exc.position, exc.requirement) == ("schema", position, "RPC-REQ-1")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "not_json"),
        ("{", "not_json"),
        ("[1]", "not_an_object"),
        ("null", "not_an_object"),
        ('{"protocol":"mcp","protocol":"mcp","request":{}}', "duplicate_key"),
        ('{"protocol":"mcp","request":' + "[" * 80 + "]" * 80 + "}", "too_deep"),
        ('{"protocol":"mcp","request":1e400}', "bad_number"),
        ('{"protocol":"mcp","request":"\\udc00"}', "lone_surrogate"),
        (b'{"protocol":"\xff"}', "not_utf8"),
    ],
)
def test_text_that_is_not_acceptable_json_gets_its_own_code(text: str | bytes, code: str) -> None:
    assert _envelope_error(parse_service_request, text).code == code
    assert _envelope_error(parse_service_response, text).code == code


def test_mapping_with_non_string_keys_is_refused() -> None:
    assert _envelope_error(parse_service_request, {1: "x"}).code == "not_json"


def test_building_an_invalid_request_is_a_local_error() -> None:
    with pytest.raises(errors.LocalProtocolError):
        format_service_request(ServiceRequest(protocol="MCP", request={}))
    with pytest.raises(errors.LocalProtocolError):
        format_service_request(ServiceRequest(protocol="mcp", request={}, extra={"protocol": 1}))
    with pytest.raises(errors.LocalProtocolError):
        format_service_request(ServiceRequest(protocol="mcp", request={}, request_key="abc"))


def test_request_is_written_as_the_core_encodes_it() -> None:
    request = ServiceRequest(
        protocol="mcp",
        request={"method": "tools/list", "jsonrpc": "2.0", "id": 1},
        request_key=KEY,
    )
    assert format_service_request(request) == (
        '{"protocol":"mcp","request":{"id":1,"jsonrpc":"2.0","method":"tools/list"},'
        f'"requestKey":"{KEY}"}}'
    )


# --------------------------------------------------------------------------- responses


@pytest.mark.requirement("RPC-ENV-1", "RPC-ENV-2")
def test_parse_success_response() -> None:
    response = parse_service_response('{"response":{"jsonrpc":"2.0","id":1,"result":{}}}')
    assert response == success_response({"jsonrpc": "2.0", "id": 1, "result": {}})
    assert not response.is_error


@pytest.mark.requirement("RPC-ENV-1")
def test_null_response_counts_as_a_response() -> None:
    response = parse_service_response('{"response":null}')
    assert response.response is None
    assert response.error is None
    assert format_service_response(response) == '{"response":null}'


@pytest.mark.requirement("RPC-ENV-1")
@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"response":{},"error":{"code":"internal"}}', "both_response_and_error"),
        ('{"response":null,"error":{"code":"internal"}}', "both_response_and_error"),
        ("{}", "neither_response_nor_error"),
        ('{"result":{}}', "neither_response_nor_error"),
    ],
)
def test_response_has_exactly_one_of_response_and_error(text: str, code: str) -> None:
    exc = _envelope_error(parse_service_response, text)
    assert (exc.code, exc.requirement) == (code, "RPC-ENV-1")


@pytest.mark.requirement("RPC-ENV-2")
@pytest.mark.parametrize("retry_after", ["-1", "4294967296", "3.5", "true", '"5"', "null"])
def test_retry_after_outside_uint32_is_a_schema_error(retry_after: str) -> None:
    exc = _envelope_error(
        parse_service_response, f'{{"error":{{"code":"rate_limited","retryAfter":{retry_after}}}}}'
    )
    assert (exc.code, exc.position) == ("schema", "/error/retryAfter")


@pytest.mark.requirement("RPC-ENV-2")
@pytest.mark.parametrize(
    ("retry_after", "value"), [("0", 0), ("4294967295", 4294967295), ("3.0", 3)]
)
def test_retry_after_inside_uint32_is_read_as_an_integer(retry_after: str, value: int) -> None:
    response = parse_service_response(
        f'{{"error":{{"code":"rate_limited","retryAfter":{retry_after}}}}}'
    )
    assert response.error is not None
    assert response.error.retry_after == value
    assert isinstance(response.error.retry_after, int)


@pytest.mark.requirement("RPC-ERR-1")
@pytest.mark.parametrize("code", list(ErrorCode))
def test_known_codes_become_error_code_members(code: ErrorCode) -> None:
    response = parse_service_response({"error": {"code": code.value}})
    assert response.error is not None
    assert response.error.code is code
    assert response.error.known


@pytest.mark.requirement("RPC-ERR-6")
def test_unknown_codes_are_kept_as_plain_strings() -> None:
    response = parse_service_response('{"error":{"code":"quota_exceeded","hint":1}}')
    assert response.error == ServiceErrorBody(code="quota_exceeded", extra={"hint": 1})
    assert type(response.error.code) is str
    assert not response.error.known


def test_error_members_and_unknown_members_round_trip() -> None:
    text = '{"error":{"code":"internal","message":"boom","retryAfter":5,"x":[1]},"y":true}'
    response = parse_service_response(text)
    assert format_service_response(response) == text


def test_building_invalid_responses_is_a_local_error() -> None:
    with pytest.raises(errors.LocalProtocolError):
        format_service_response(ServiceResponse())
    with pytest.raises(errors.LocalProtocolError):
        format_service_response(
            ServiceResponse(response=1, error=ServiceErrorBody(code=ErrorCode.INTERNAL))
        )
    with pytest.raises(errors.LocalProtocolError):
        error_response(ErrorCode.RATE_LIMITED, retry_after=2**32)
    with pytest.raises(errors.LocalProtocolError):
        error_response(ErrorCode.RATE_LIMITED, retry_after=-1)


def test_error_response_builds_the_error_envelope() -> None:
    response = error_response("rate_limited", "slow down", 30)
    assert response.error == ServiceErrorBody(ErrorCode.RATE_LIMITED, "slow down", 30)
    assert format_service_response(response) == (
        '{"error":{"code":"rate_limited","message":"slow down","retryAfter":30}}'
    )


@pytest.mark.requirement("RPC-ERR-4")
def test_invalid_envelope_is_answered_with_bad_request() -> None:
    exc = _envelope_error(parse_service_request, '{"protocol":"MCP","request":{}}')
    answer = bad_request_for(exc)
    assert answer.error is not None
    assert answer.error.code is ErrorCode.BAD_REQUEST
    assert answer.error.message == "invalid envelope (bad_protocol_name) at /protocol"


@pytest.mark.requirement("RPC-SIG-4", "RPC-ERR-4")
def test_request_key_mismatch_is_answered_with_bad_request() -> None:
    answer = bad_request_for(errors.RequestKeyMismatchError(KEY, None))
    assert answer.error is not None and answer.error.code is ErrorCode.BAD_REQUEST


# --------------------------------------------------------------------------- requester side


@pytest.mark.requirement("RPC-ERR-1")
@pytest.mark.parametrize(
    ("code", "cls"),
    [
        ("unsupported_protocol", errors.UnsupportedProtocolError),
        ("unsupported_version", errors.UnsupportedVersionError),
        ("bad_request", errors.BadRequestError),
        ("conversation_required", errors.ConversationRequiredError),
        ("too_large", errors.TooLargeError),
        ("rate_limited", errors.RateLimitedError),
        ("internal", errors.InternalServiceError),
    ],
)
def test_raise_for_response_raises_the_subclass_of_the_code(
    code: str, cls: type[errors.ServiceError]
) -> None:
    with pytest.raises(cls) as info:
        raise_for_response(parse_service_response({"error": {"code": code, "message": "m"}}))
    assert type(info.value) is cls
    assert (info.value.code, info.value.message) == (code, "m")


def test_response_or_raise_returns_the_message() -> None:
    assert response_or_raise(success_response({"ok": 1})) == {"ok": 1}
    assert response_or_raise(parse_service_response('{"response":null}')) is None


@pytest.mark.requirement("RPC-ERR-6")
def test_unknown_code_is_final_without_retry_after() -> None:
    with pytest.raises(errors.ServiceError) as info:
        response_or_raise(parse_service_response('{"error":{"code":"quota_exceeded"}}'))
    assert type(info.value) is errors.ServiceError
    assert info.value.code == "quota_exceeded"
    assert not info.value.retryable


@pytest.mark.requirement("RPC-ERR-6", "RPC-ENV-6")
def test_unknown_code_with_retry_after_is_retryable() -> None:
    with pytest.raises(errors.ServiceError) as info:
        response_or_raise(parse_service_response('{"error":{"code":"busy","retryAfter":9}}'))
    assert info.value.retryable
    assert info.value.retry_after == 9


@pytest.mark.requirement("RPC-ERR-5")
def test_rate_limited_without_retry_after_is_final() -> None:
    """Our reading of AMB-10: no wait is known, so the requester does not repeat."""
    body = parse_service_response('{"error":{"code":"rate_limited"}}').error
    assert body is not None
    assert not body.retryable
    assert not body.to_exception().retryable


@pytest.mark.requirement("RPC-ERR-5")
def test_rate_limited_with_retry_after_is_retryable_after_it() -> None:
    with pytest.raises(errors.RateLimitedError) as info:
        raise_for_response(error_response(ErrorCode.RATE_LIMITED, retry_after=30))
    assert info.value.retryable and info.value.retry_after == 30


def test_exception_keeps_the_whole_error_object() -> None:
    body = parse_service_response('{"error":{"code":"internal","trace":"t"}}').error
    assert body is not None
    assert body.to_exception().error == {"code": "internal", "trace": "t"}


def test_public_names_report_the_public_module() -> None:
    assert ServiceRequest.__module__ == "simplex_protocols.rpc"
    assert parse_service_request.__module__ == "simplex_protocols.rpc"
