"""Vector operations of the ``rpc`` families (``spec/vectors/rpc/``).

Each operation takes the case's ``input`` and ``args`` and returns JSON, or raises one of the
library's typed errors, which the registry turns into ``{"ok": false, "error": {"code": ...}}``.

Typed forms used by the envelope operations:

- request: ``{"protocol", "request", "version" (only when present), "request_key" (string or
  null), "extra" (unknown members)}``;
- response: ``{"response": <message>, "extra"}`` or ``{"error": {"code", "known", "message"
  (when present), "retry_after" (when present), "extra"}, "extra"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simplex_protocols.conformance.ops import op
from simplex_protocols.errors import SignatureError
from simplex_protocols.rpc import (
    ABSENT,
    ErrorCode,
    PublicKey,
    ServiceErrorBody,
    ServiceRequest,
    ServiceResponse,
    ServiceSize,
    SigningKey,
    check_request_key,
    check_service_size,
    format_service_request,
    format_service_response,
    parse_service_request,
    parse_service_response,
)
from simplex_protocols.rpc.advanced import PRESET_REPLY_QUEUE_INFO_BYTES

__all__: list[str] = []


def _text(value: Any) -> Any:
    """Raw bytes (``input_b64``) stay bytes; everything else is passed as it is."""
    return value


def _request_form(request: ServiceRequest) -> dict[str, Any]:
    out: dict[str, Any] = {"protocol": request.protocol, "request": request.request}
    if request.version is not ABSENT:
        out["version"] = request.version
    out["request_key"] = request.request_key
    out["extra"] = dict(request.extra)
    return out


def _response_form(response: ServiceResponse) -> dict[str, Any]:
    if response.error is None:
        return {"response": response.response, "extra": dict(response.extra)}
    error = response.error
    body: dict[str, Any] = {"code": str(error.code), "known": error.known}
    if error.message is not None:
        body["message"] = error.message
    if error.retry_after is not None:
        body["retry_after"] = error.retry_after
    body["extra"] = dict(error.extra)
    return {"error": body, "extra": dict(response.extra)}


@op("rpc.parse_request")
def parse_request(value: Any, args: Mapping[str, Any]) -> Any:
    """Parse a request envelope; answer its typed form."""
    return _request_form(parse_service_request(_text(value)))


@op("rpc.format_request")
def format_request(value: Any, args: Mapping[str, Any]) -> Any:
    """Write a request envelope from its typed form, as the core encodes it."""
    request = ServiceRequest(
        protocol=value["protocol"],
        request=value["request"],
        version=value.get("version", ABSENT),
        request_key=value.get("request_key"),
        extra=value.get("extra", {}),
    )
    return format_service_request(request)


@op("rpc.parse_response")
def parse_response(value: Any, args: Mapping[str, Any]) -> Any:
    """Parse a response envelope; answer its typed form."""
    return _response_form(parse_service_response(_text(value)))


@op("rpc.format_response")
def format_response(value: Any, args: Mapping[str, Any]) -> Any:
    """Write a response envelope from its typed form, as the core encodes it."""
    if "error" in value:
        error = value["error"]
        code = error["code"]
        body = ServiceErrorBody(
            code=_error_code(code),
            message=error.get("message"),
            retry_after=error.get("retry_after"),
            extra=error.get("extra", {}),
        )
        return format_service_response(ServiceResponse(error=body, extra=value.get("extra", {})))
    return format_service_response(
        ServiceResponse(response=value["response"], extra=value.get("extra", {}))
    )


def _error_code(code: str) -> ErrorCode | str:
    try:
        return ErrorCode(code)
    except ValueError:
        return code


@op("rpc.classify_error")
def classify_error(value: Any, args: Mapping[str, Any]) -> Any:
    """How a requester treats a response: a message, a final error, or a retryable one.

    The answer holds only what the spec defines (the outcome, the code, whether the code is one
    of the spec's, the wait); which exception class this library raises for it is tested in
    ``tests/test_vectors.py``, not by the vectors.
    """
    response = parse_service_response(_text(value))
    if response.error is None:
        return {"outcome": "response"}
    error = response.error
    exc = error.to_exception()
    return {
        "outcome": "retryable" if exc.retryable else "final",
        "code": str(error.code),
        "known": error.known,
        "retry_after": error.retry_after,
    }


def envelope_size(value: Any, args: Mapping[str, Any]) -> ServiceSize:
    """:func:`check_service_size` of an envelope with the case's ``kind`` (default
    ``response``), ``signed`` and ``reply_queue_info_bytes``."""
    return check_service_size(
        value,
        kind=args.get("kind", "response"),
        signed=bool(args.get("signed", False)),
        reply_queue_info_bytes=int(
            args.get("reply_queue_info_bytes", PRESET_REPLY_QUEUE_INFO_BYTES)
        ),
    )


@op("rpc.padded_size")
def padded_size(value: Any, args: Mapping[str, Any]) -> Any:
    """Sizes of an envelope (its JSON text as the core writes it) against both limits."""
    size = envelope_size(value, args)
    return {
        "json_bytes": size.json_bytes,
        "padded_bytes": size.padded_bytes,
        "within_recommended": size.within_recommended,
    }


@op("rpc.decode_key")
def decode_key(value: Any, args: Mapping[str, Any]) -> Any:
    """Decode ``signerKey``/``requestKey`` text."""
    key = PublicKey.decode(value)
    return {"raw_hex": key.raw.hex(), "spki_der_hex": key.spki_der.hex(), "canonical": key.encode()}


def _payload(value: Mapping[str, Any]) -> bytes:
    if "payload_hex" in value:
        return bytes.fromhex(value["payload_hex"])
    text: str = value["payload"]
    return text.encode("utf-8")


@op("rpc.verify_signature")
def verify_signature(value: Any, args: Mapping[str, Any]) -> Any:
    """Verify a request signature with the key in ``args.key.request_key``."""
    key_text = args["key"]["request_key"]
    key = PublicKey.decode(key_text)
    try:
        signature = bytes.fromhex(value["signature_hex"])
        ad = bytes.fromhex(value["ad_hex"])
    except ValueError:
        raise SignatureError("malformed hex in the case", code="bad_signature") from None
    key.verify_service_payload(ad, _payload(value), signature)
    return {"signer_key": key.encode()}


@op("rpc.sign_payload")
def sign_payload(value: Any, args: Mapping[str, Any]) -> Any:
    """Sign a payload with the key of ``seed_hex`` bound to ``ad_hex`` (known answers)."""
    key = SigningKey.from_seed(bytes.fromhex(value["seed_hex"]))
    ad = bytes.fromhex(value["ad_hex"])
    signature = key.sign_service_payload(ad, _payload(value))
    # No sign_key: how a library stores the private key is its own choice (AMB-20).
    return {"request_key": key.public_key.encode(), "signature_hex": signature.hex()}


@op("rpc.check_request_key")
def check_request_key_op(value: Any, args: Mapping[str, Any]) -> Any:
    """Check an envelope's ``requestKey`` against ``args.signer_key`` (null: unsigned)."""
    request = parse_service_request(_text(value))
    signer_key = args.get("signer_key")
    check_request_key(request, signer_key)
    return {"request_key": request.request_key, "signed": signer_key is not None}
