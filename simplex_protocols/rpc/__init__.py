"""Service RPC: request and response envelopes, error codes, sizes and signed requests.

Implements "Agent protocols over SimpleX" (revision 2, 2026-10-21), section "Service RPC
transport": the envelopes and their validation (RPC-REQ-*, RPC-ENV-*), the error codes and the
requester's retry rule (RPC-ERR-*), the size limits (RPC-LIM-2, RPC-LIM-3), and Ed25519 request
signatures with the ``signerKey``/``requestKey`` encoding (RPC-SIG-*). Everything here is
sans-IO except :class:`KeyStore`, which keeps signing keys in files.

The arithmetic behind the size check and the bytes a signature covers are in
:mod:`simplex_protocols.rpc.advanced`, for implementers who compare their numbers with ours.

Responder::

    try:
        request = parse_service_request(event["requestData"])
        check_request_key(request, event.get("signerKey"))
    except (EnvelopeError, RequestKeyMismatchError, SignatureError) as exc:
        answer = bad_request_for(exc)
    ...
    text = format_service_response(answer)

Requester::

    response = parse_service_response(response_data)
    result = response_or_raise(response)     # raises a ServiceError subclass for an error
"""

from __future__ import annotations

from simplex_protocols._exports import publish
from simplex_protocols.coretext import is_protocol_name as is_protocol_name

from ._envelope import ABSENT as ABSENT
from ._envelope import Absent as Absent
from ._envelope import ErrorCode as ErrorCode
from ._envelope import JSONValue as JSONValue
from ._envelope import ServiceErrorBody as ServiceErrorBody
from ._envelope import ServiceRequest as ServiceRequest
from ._envelope import ServiceResponse as ServiceResponse
from ._envelope import bad_request_for as bad_request_for
from ._envelope import check_request_key as check_request_key
from ._envelope import error_response as error_response
from ._envelope import format_service_request as format_service_request
from ._envelope import format_service_response as format_service_response
from ._envelope import parse_service_request as parse_service_request
from ._envelope import parse_service_response as parse_service_response
from ._envelope import raise_for_response as raise_for_response
from ._envelope import response_or_raise as response_or_raise
from ._envelope import success_response as success_response
from ._keystore import KeyStore as KeyStore
from ._signing import PublicKey as PublicKey
from ._signing import SigningKey as SigningKey
from ._sizes import ServiceSize as ServiceSize
from ._sizes import check_service_size as check_service_size

__all__ = [
    "ABSENT",
    "Absent",
    "ErrorCode",
    "JSONValue",
    "KeyStore",
    "PublicKey",
    "ServiceErrorBody",
    "ServiceRequest",
    "ServiceResponse",
    "ServiceSize",
    "SigningKey",
    "bad_request_for",
    "check_request_key",
    "check_service_size",
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

publish(globals(), __all__)
