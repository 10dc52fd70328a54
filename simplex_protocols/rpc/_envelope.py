"""Service RPC request and response envelopes (spec "Service RPC transport" > "Request", "Response").

Validation runs in two steps: the spec's JTD schemas (``spec/schemas/service-request.jtd.json``,
``service-response.jtd.json``) through :func:`simplex_protocols._schema.validate`, then the rules
JTD cannot express: a response has exactly one of ``response`` and ``error`` (RPC-ENV-1),
``protocol`` is a protocol name (RPC-REQ-2), ``requestKey`` decodes as an Ed25519 key
(RPC-REQ-4). Every failure is an :class:`~simplex_protocols.errors.EnvelopeError` with a stable
``code`` and a JSON pointer ``position``; a responder answers any of them with ``bad_request``
(:func:`bad_request_for`).

Readings taken where the spec is silent:

- A member is present when its key is present, whatever its value: ``{"response": null}`` is a
  response whose message is ``null`` (RFC 8927 treats a present ``null`` as present, and the
  ``response`` schema is the empty form, which accepts ``null``). Whether ``null`` is a valid
  protocol message is the binding's question. ``{"error": null}`` fails the schema.
- ``version`` may be any JSON value, ``null`` included; :data:`ABSENT` marks an absent one.
- Unknown members are kept in ``extra`` and written back (RPC-REQ-7).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

from simplex_protocols import _schema, _wire
from simplex_protocols._frozen import slot_builder
from simplex_protocols.coretext import is_protocol_name
from simplex_protocols.errors import (
    EnvelopeError,
    LocalProtocolError,
    RequestKeyMismatchError,
    ServiceError,
    SignatureError,
    service_error_for_code,
)

from ._corejson import core_encode_json
from ._signing import PublicKey, _decode_public_key_text

__all__ = [
    "ABSENT",
    "Absent",
    "ErrorCode",
    "JSONValue",
    "ServiceErrorBody",
    "ServiceRequest",
    "ServiceResponse",
    "bad_request_for",
    "check_request_key",
    "error_response",
    "format_service_request",
    "format_service_response",
    "is_protocol_name",
    "parse_service_request",
    "parse_service_response",
    "raise_for_response",
    "response_or_raise",
    "success_response",
]

#: Any JSON value as ``json`` decodes it (``dict``, ``list``, ``str``, ``int``, ``float``,
#: ``bool``, ``None``).
JSONValue: TypeAlias = Any


class _AbsentType(enum.Enum):
    ABSENT = "ABSENT"

    def __repr__(self) -> str:
        return "ABSENT"


#: Marks an optional envelope member that is not there (as opposed to a present ``null``).
ABSENT: Final = _AbsentType.ABSENT
Absent: TypeAlias = Literal[_AbsentType.ABSENT]


class ErrorCode(enum.StrEnum):
    """The envelope error codes of the spec (RPC-ERR-1).

    Unknown codes are legal on the wire and are kept as plain ``str``.
    """

    UNSUPPORTED_PROTOCOL = "unsupported_protocol"
    UNSUPPORTED_VERSION = "unsupported_version"
    BAD_REQUEST = "bad_request"
    CONVERSATION_REQUIRED = "conversation_required"
    TOO_LARGE = "too_large"
    RATE_LIMITED = "rate_limited"
    INTERNAL = "internal"


_KNOWN_CODES: Final = {code.value: code for code in ErrorCode}


def _code(value: str) -> ErrorCode | str:
    return _KNOWN_CODES.get(value, value)


@dataclass(frozen=True, slots=True)
class ServiceRequest:
    """A Service RPC request envelope.

    Attributes:
        protocol: the protocol name, for example ``"mcp"`` (RPC-REQ-2).
        request: the protocol's request message, unchanged (RPC-REQ-6).
        version: the protocol version for protocols whose messages carry none, or
            :data:`ABSENT` (omitted for ``mcp`` and ``a2a``).
        request_key: ``requestKey`` text, the requester's public key; the request must then be
            signed with that key (RPC-REQ-5).
        extra: unknown members, kept and written back (RPC-REQ-7).
    """

    protocol: str
    request: JSONValue
    version: JSONValue | Absent = ABSENT
    request_key: str | None = None
    extra: Mapping[str, JSONValue] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSONValue]:
        """The envelope as a JSON object.

        Raises:
            LocalProtocolError: the envelope breaks the spec (bad protocol name, an ``extra``
                member that shadows an envelope field, a ``requestKey`` that is not a key).
        """
        if not is_protocol_name(self.protocol):
            raise LocalProtocolError(f"{self.protocol!r} is not a protocol name (RPC-REQ-2)")
        out: dict[str, JSONValue] = {}
        for key, value in self.extra.items():
            if key in _REQUEST_FIELDS:
                raise LocalProtocolError(f"extra member {key!r} is an envelope field")
            out[key] = value
        out["protocol"] = self.protocol
        out["request"] = self.request
        if self.version is not ABSENT:
            out["version"] = self.version
        if self.request_key is not None:
            _check_request_key_text(self.request_key, local=True)
            out["requestKey"] = self.request_key
        return out


#: Builds the envelope of each request a responder parses, at half the cost of its __init__.
_new_request: Final = slot_builder(ServiceRequest)

_REQUEST_FIELDS: Final = frozenset({"protocol", "request", "version", "requestKey"})
# Protocol names that arrive on almost every request, known to be names without the pattern.
_COMMON_PROTOCOLS: Final = frozenset({"mcp", "a2a"})
_RESPONSE_FIELDS: Final = frozenset({"response", "error"})
_ERROR_FIELDS: Final = frozenset({"code", "message", "retryAfter"})


@dataclass(frozen=True, slots=True)
class ServiceErrorBody:
    """The ``error`` member of a response: the request was not passed to the protocol.

    Attributes:
        code: an :class:`ErrorCode`, or the unknown code as a plain ``str``.
        message: a description for the requester's logs.
        retry_after: seconds after which a repeated request can succeed (uint32).
        extra: unknown members of the error object.
    """

    code: ErrorCode | str
    message: str | None = None
    retry_after: int | None = None
    extra: Mapping[str, JSONValue] = field(default_factory=dict)

    @property
    def known(self) -> bool:
        """Whether the code is one of the spec's seven."""
        return isinstance(self.code, ErrorCode)

    @property
    def retryable(self) -> bool:
        """Whether the requester may repeat the request (after :attr:`retry_after`).

        An error with ``retryAfter`` is retryable; without it, every error is final. For unknown
        codes this is RPC-ERR-6; for ``rate_limited`` without ``retryAfter`` it is our reading
        of an open question (the spec gives no wait, so the requester does not retry).
        """
        return self.retry_after is not None

    def to_json(self) -> dict[str, JSONValue]:
        """The error object.

        Raises:
            LocalProtocolError: ``retry_after`` is not a uint32, ``code`` or ``message`` is not a
                string, or an ``extra`` member shadows a field.
        """
        if not isinstance(self.code, str):
            raise LocalProtocolError("error code must be a string")
        out: dict[str, JSONValue] = {}
        for key, value in self.extra.items():
            if key in _ERROR_FIELDS:
                raise LocalProtocolError(f"extra member {key!r} is an error field")
            out[key] = value
        out["code"] = str(self.code)
        if self.message is not None:
            if not isinstance(self.message, str):
                raise LocalProtocolError("error message must be a string")
            out["message"] = self.message
        if self.retry_after is not None:
            if (
                isinstance(self.retry_after, bool)
                or not isinstance(self.retry_after, int)
                or not 0 <= self.retry_after <= 0xFFFFFFFF
            ):
                raise LocalProtocolError("retryAfter must be a uint32 (0 to 4294967295)")
            out["retryAfter"] = self.retry_after
        return out

    def to_exception(self) -> ServiceError:
        """The :class:`~simplex_protocols.errors.ServiceError` subclass for this error."""
        return service_error_for_code(
            str(self.code), self.message, self.retry_after, self.to_json()
        )


@dataclass(frozen=True, slots=True)
class ServiceResponse:
    """A Service RPC response envelope: exactly one of ``response`` and ``error`` (RPC-ENV-1).

    Build one with :func:`success_response` or :func:`error_response`.

    Attributes:
        response: the protocol's response message, or :data:`ABSENT` for an error response.
        error: the error, or ``None`` for a success response.
        extra: unknown members.
    """

    response: JSONValue | Absent = ABSENT
    error: ServiceErrorBody | None = None
    extra: Mapping[str, JSONValue] = field(default_factory=dict)

    @property
    def is_error(self) -> bool:
        """Whether this is an error response."""
        return self.error is not None

    def to_json(self) -> dict[str, JSONValue]:
        """The envelope as a JSON object.

        Raises:
            LocalProtocolError: both or neither of ``response`` and ``error`` (RPC-ENV-1), or an
                invalid error object.
        """
        has_response = self.response is not ABSENT
        if has_response == (self.error is not None):
            raise LocalProtocolError("a response has exactly one of response and error (RPC-ENV-1)")
        out: dict[str, JSONValue] = {}
        for key, value in self.extra.items():
            if key in _RESPONSE_FIELDS:
                raise LocalProtocolError(f"extra member {key!r} is an envelope field")
            out[key] = value
        if self.error is not None:
            out["error"] = self.error.to_json()
        else:
            out["response"] = self.response
        return out


# --------------------------------------------------------------------------- building


def success_response(
    response: JSONValue, *, extra: Mapping[str, JSONValue] | None = None
) -> ServiceResponse:
    """A response carrying the protocol's response message (the binding's last reply)."""
    return ServiceResponse(response=response, extra=dict(extra or {}))


def error_response(
    code: ErrorCode | str,
    message: str | None = None,
    retry_after: int | None = None,
) -> ServiceResponse:
    """An error response: the request was not passed to the protocol (RPC-ENV-4).

    Raises:
        LocalProtocolError: ``retry_after`` is not a uint32.
    """
    body = ServiceErrorBody(code=_code(str(code)), message=message, retry_after=retry_after)
    body.to_json()  # validate now rather than when it is sent
    return ServiceResponse(error=body)


def bad_request_for(
    exc: EnvelopeError | RequestKeyMismatchError | SignatureError,
) -> ServiceResponse:
    """The ``bad_request`` answer to an invalid envelope or a ``requestKey`` mismatch.

    RPC-ERR-4 (invalid envelope), RPC-SIG-3 and RPC-SIG-4 (``requestKey``). The message names
    the problem in our words; it never echoes the peer's text.
    """
    if isinstance(exc, EnvelopeError):
        where = f" at {exc.position}" if isinstance(exc.position, str) and exc.position else ""
        message = f"invalid envelope ({exc.code}){where}"
    elif isinstance(exc, RequestKeyMismatchError):
        message = str(exc)
    else:
        message = f"invalid key ({exc.code})"
    return error_response(ErrorCode.BAD_REQUEST, message)


def format_service_request(request: ServiceRequest) -> str:
    """The envelope JSON exactly as the chat core encodes it (and the agent signs it).

    Members are sorted by key and written compactly, as aeson writes them (see
    :func:`core_encode_json`).

    Raises:
        LocalProtocolError: the envelope breaks the spec.
        ValueError: a value holds NaN or an infinity.
        TypeError: a value is not JSON.
    """
    return core_encode_json(request.to_json())


def format_service_response(response: ServiceResponse) -> str:
    """The response envelope JSON exactly as the chat core encodes it.

    Raises:
        LocalProtocolError: the envelope breaks the spec (RPC-ENV-1, RPC-ENV-2).
        ValueError: a value holds NaN or an infinity.
        TypeError: a value is not JSON.
    """
    return core_encode_json(response.to_json())


# --------------------------------------------------------------------------- parsing


def _load(text_or_mapping: str | bytes | Mapping[str, Any], requirement: str) -> Mapping[str, Any]:
    if isinstance(text_or_mapping, str | bytes):
        try:
            value = _wire.loads(text_or_mapping)
        except _wire.WireJSONError as exc:
            raise EnvelopeError(
                f"the envelope is not acceptable JSON: {exc.reason}",
                code=exc.syntax_code,
                requirement=requirement,
                position=exc.position if exc.position is not None else "",
                input_excerpt=_excerpt(text_or_mapping),
            ) from None
        if type(value) is dict:
            return value  # decoded from JSON text, so every key is a string
    else:
        value = text_or_mapping
    if not isinstance(value, Mapping):
        raise EnvelopeError(
            "the envelope is not a JSON object",
            code="not_an_object",
            requirement=requirement,
            position="",
        )
    for key in value:
        if not isinstance(key, str):
            raise EnvelopeError(
                "an object key is not a string",
                code="not_json",
                requirement=requirement,
                position="",
            )
    return value


def _excerpt(raw: str | bytes) -> str:
    if isinstance(raw, str):
        return raw[:80]
    return raw[:80].decode("utf-8", "replace")


def _schema_error(name: str, value: Any, requirement: str) -> None:
    if _schema.is_valid(name, value):
        return
    issues = _schema.validate(name, value)
    issue = issues[0]
    schema_path = issue.schema_path
    position = issue.instance_path
    if schema_path.endswith("/type"):
        reason = f"{position} has the wrong type"
    elif schema_path.endswith(("/properties", "/optionalProperties")):
        reason = f"{position or 'the envelope'} is not an object"
    else:
        member = schema_path.rsplit("/", 1)[-1]
        reason = f"required member {member} is missing"
        position = f"{position}/{member}"
    raise EnvelopeError(reason, code="schema", requirement=requirement, position=position)


def _check_request_key_text(text: str, *, local: bool = False) -> None:
    try:
        if local:
            PublicKey.decode(text)  # any value a caller gave: decode checks that it is a str
        else:
            _decode_public_key_text(text)  # a str: the schema said so; no key object needed
    except SignatureError as exc:
        if local:
            raise LocalProtocolError(f"requestKey is not a key encoding ({exc.code})") from None
        raise EnvelopeError(
            f"requestKey is not an Ed25519 key encoding ({exc.code})",
            code="bad_request_key",
            requirement="RPC-REQ-4",
            position="/requestKey",
        ) from None


def check_request_key(request: ServiceRequest, signer_key: str | None) -> None:
    """Check ``requestKey`` against the key the core verified (RPC-SIG-3, RPC-SIG-4).

    The keys are compared decoded, not as strings, so padding differences do not matter. A
    request without ``requestKey`` passes, signed or not (RPC-SIG-7).

    Args:
        request: the parsed envelope (``requestKey`` was decoded when it was parsed).
        signer_key: ``signerKey`` of the ``serviceRequest`` event, ``None`` when unsigned.

    Raises:
        RequestKeyMismatchError: ``requestKey`` differs from ``signerKey`` (RPC-SIG-3) or the
            request is unsigned (RPC-SIG-4); the responder answers ``bad_request``.
        SignatureError: ``signerKey`` itself is not a key encoding (the core never sends one).
    """
    if request.request_key is None:
        return
    if signer_key is None:
        # RPC-SIG-4: "A responder MUST answer bad_request ... to an unsigned request with
        # requestKey."
        raise RequestKeyMismatchError(request.request_key, None)
    claimed = PublicKey.decode(request.request_key)
    verified = PublicKey.decode(signer_key)
    if claimed != verified:
        # RPC-SIG-3: "A responder MUST answer bad_request to a request whose requestKey differs
        # from signerKey".
        raise RequestKeyMismatchError(request.request_key, signer_key)


def parse_service_request(text_or_mapping: str | bytes | Mapping[str, Any]) -> ServiceRequest:
    """Parse and validate a request envelope (``requestData`` of ``serviceRequest``).

    Args:
        text_or_mapping: the envelope JSON text (``str`` or UTF-8 ``bytes``), or the object the
            core already decoded.

    Raises:
        EnvelopeError: with ``code`` one of ``not_json``, ``not_utf8``, ``duplicate_key``,
            ``too_deep``, ``lone_surrogate``, ``bad_number`` (the text), ``not_an_object``,
            ``schema`` (RPC-REQ-1), ``bad_protocol_name`` (RPC-REQ-2), ``bad_request_key``
            (RPC-REQ-4). The responder answers ``bad_request`` (:func:`bad_request_for`).
    """
    value = _load(text_or_mapping, "RPC-REQ-1")
    _schema_error("service-request", value, "RPC-REQ-1")
    protocol = value["protocol"]
    if protocol not in _COMMON_PROTOCOLS and not is_protocol_name(protocol):
        # RPC-REQ-2: "protocol: the protocol name"; a protocol name "consists of lowercase
        # ASCII letters, digits and hyphens".
        raise EnvelopeError(
            "protocol is not a protocol name (lowercase ASCII letters, digits and hyphens)",
            code="bad_protocol_name",
            requirement="RPC-REQ-2",
            position="/protocol",
        )
    request_key = value.get("requestKey")
    if request_key is not None:
        _check_request_key_text(request_key)
    version = value.get("version", ABSENT)
    # The schema made requestKey a string when present, so the count of envelope fields present
    # tells whether there are other members worth collecting.
    fields = 2 + (version is not ABSENT) + (request_key is not None)
    extra = (
        {k: v for k, v in value.items() if k not in _REQUEST_FIELDS} if len(value) > fields else {}
    )
    return _new_request(protocol, value["request"], version, request_key, extra)


def parse_service_response(text_or_mapping: str | bytes | Mapping[str, Any]) -> ServiceResponse:
    """Parse and validate a response envelope (``responseData`` of ``serviceResponse``).

    Raises:
        EnvelopeError: with ``code`` one of the JSON codes of :func:`parse_service_request`,
            ``not_an_object``, ``schema`` (RPC-ENV-2), ``both_response_and_error`` or
            ``neither_response_nor_error`` (RPC-ENV-1).
    """
    value = _load(text_or_mapping, "RPC-ENV-2")
    _schema_error("service-response", value, "RPC-ENV-2")
    has_response = "response" in value
    has_error = "error" in value
    if has_response and has_error:
        # RPC-ENV-1: "A response has exactly one of response and error."
        raise EnvelopeError(
            "the response has both response and error",
            code="both_response_and_error",
            requirement="RPC-ENV-1",
            position="",
        )
    if not has_response and not has_error:
        raise EnvelopeError(
            "the response has neither response nor error",
            code="neither_response_nor_error",
            requirement="RPC-ENV-1",
            position="",
        )
    extra = {k: v for k, v in value.items() if k not in _RESPONSE_FIELDS}
    if has_response:
        return ServiceResponse(response=value["response"], extra=extra)
    error = value["error"]
    retry_after = error.get("retryAfter")
    return ServiceResponse(
        error=ServiceErrorBody(
            code=_code(error["code"]),
            message=error.get("message"),
            retry_after=None if retry_after is None else int(retry_after),
            extra={k: v for k, v in error.items() if k not in _ERROR_FIELDS},
        ),
        extra=extra,
    )


# --------------------------------------------------------------------------- requester side


def raise_for_response(response: ServiceResponse) -> None:
    """Raise the response's error, if it has one.

    Raises:
        ServiceError: the subclass for the code (:func:`~simplex_protocols.errors.service_error_for_code`);
            its ``retryable`` says whether to repeat after ``retry_after`` (RPC-ERR-5, RPC-ERR-6).
    """
    if response.error is not None:
        raise response.error.to_exception()


def response_or_raise(response: ServiceResponse) -> JSONValue:
    """The protocol's response message, or the error raised as by :func:`raise_for_response`.

    Raises:
        ServiceError: the response is an error.
    """
    raise_for_response(response)
    return response.response
