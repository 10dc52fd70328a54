"""Service RPC sizes: the padded 11,106-byte limit and the 10,000-byte recommendation.

Spec "Service RPC transport" > "Exchange": "Before encryption, the agent pads a request or a
response, its own framing included, to 11,106 bytes, and a longer one fails. A request and a
response SHOULD NOT exceed 10,000 bytes of JSON."

The framing, from simplexmq (``Simplex.Messaging.Agent.Protocol``, ``Crypto``, ``Ratchet``):

- the JSON is the body of an agent message: ``AgentServiceRequest`` encodes as ``'A'``, the
  reply queues (a 1-byte count, then each ``SMPQueueInfo``), the optional signature (``'0'``,
  or ``'1'`` and the length-prefixed 44-byte key and 64-byte signature), then the JSON;
  ``AgentServiceResponse`` encodes as ``'P'`` then the JSON;
- the double ratchet pads that message to ``e2eEncConnInfoLength PQSupportOn = 11106`` with
  ``C.pad``: a 2-byte length, the message, ``'#'`` up to the size, failing when longer.

So a response takes 3 bytes besides its JSON (:data:`SERVICE_PAD_FRAMING_BYTES`),
and a request takes 3 + 1 + the reply queue address + 1 (unsigned) or 111 (signed). The reply
queue address depends on the requester's server; :func:`reply_queue_info_size` computes it and
:data:`PRESET_REPLY_QUEUE_INFO_BYTES` is the size for a preset server with a domain and an onion
host (187 bytes), the usual case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from simplex_protocols import _wire
from simplex_protocols._framing import SERVICE_PAD_FRAMING_BYTES
from simplex_protocols.errors import MessageTooLargeError
from simplex_protocols.limits import MAX_SERVICE_JSON_BYTES, SERVICE_PADDED_BYTES

from ._corejson import core_encode_json
from ._envelope import (
    ServiceRequest,
    ServiceResponse,
    format_service_request,
    format_service_response,
)

__all__ = [
    "PRESET_REPLY_QUEUE_INFO_BYTES",
    "SIGNATURE_FIELD_BYTES",
    "UNSIGNED_FIELD_BYTES",
    "Measurable",
    "ServiceSize",
    "check_service_size",
    "reply_queue_info_size",
    "request_framing_bytes",
    "service_json_size",
]

#: ``Maybe RequestSignature`` when absent: the byte ``'0'``.
UNSIGNED_FIELD_BYTES: Final = 1
#: ``Maybe RequestSignature`` when present: ``'1'``, then 1 + 44 (key DER) and 1 + 64 (signature).
SIGNATURE_FIELD_BYTES: Final = 1 + (1 + 44) + (1 + 64)

#: Bytes of an ``SMPQueueInfo`` with a 24-byte sender ID on a preset server written with two
#: hosts of 15 and 62 characters (``smp8.simplex.im`` and its onion address) and no port.
PRESET_REPLY_QUEUE_INFO_BYTES: Final = 187

Kind = Literal["request", "response"]


def reply_queue_info_size(
    hosts: Sequence[str], port: str = "", *, sender_id_bytes: int = 24
) -> int:
    """Bytes of the reply queue address (``SMPQueueInfo``) the agent puts in a request.

    ``clientVersion`` (2), the server (a 1-byte host count, each host and the port as a
    length-prefixed string, the 32-byte key hash with its length), the sender ID with its
    length, the 44-byte X25519 key DER with its length, and the queue mode (1).
    """
    server = 1 + sum(1 + len(host.encode("ascii", "replace")) for host in hosts)
    server += 1 + len(port.encode("ascii", "replace")) + 1 + 32
    return 2 + server + 1 + sender_id_bytes + 1 + 44 + 1


def request_framing_bytes(
    *, signed: bool = False, reply_queue_info_bytes: int = PRESET_REPLY_QUEUE_INFO_BYTES
) -> int:
    """Bytes the agent adds around a request's JSON before padding (see the module docstring)."""
    signature = SIGNATURE_FIELD_BYTES if signed else UNSIGNED_FIELD_BYTES
    return SERVICE_PAD_FRAMING_BYTES + 1 + reply_queue_info_bytes + signature


Measurable = str | Mapping[str, Any] | ServiceRequest | ServiceResponse


def _core_text(value: Measurable) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, ServiceRequest):
        return format_service_request(value)
    if isinstance(value, ServiceResponse):
        return format_service_response(value)
    return core_encode_json(value)


def service_json_size(value: Measurable) -> int:
    """Bytes of the JSON the agent pads: the envelope as the chat core re-encodes it.

    Text is measured as given (it is taken to be what the core writes); a mapping or an envelope
    is encoded first with :func:`core_encode_json`.
    """
    return _wire.json_size(_core_text(value))


@dataclass(frozen=True, slots=True)
class ServiceSize:
    """The sizes of a request or a response against both limits.

    Attributes:
        json_bytes: the JSON as the core sends it.
        padded_bytes: the JSON with the agent's framing, compared with 11,106 (RPC-LIM-2).
        within_recommended: ``json_bytes <= 10,000`` (RPC-LIM-3, a SHOULD NOT: a warning).
    """

    json_bytes: int
    padded_bytes: int
    within_recommended: bool


def check_service_size(
    value: Measurable,
    *,
    kind: Kind,
    signed: bool = False,
    reply_queue_info_bytes: int = PRESET_REPLY_QUEUE_INFO_BYTES,
) -> ServiceSize:
    """Measure a request or response against the padded limit and the recommendation.

    Args:
        value: the envelope, or its JSON text as the core writes it.
        kind: ``"request"`` or ``"response"``; the framing differs.
        signed: for a request, whether it carries a signature (110 bytes more).
        reply_queue_info_bytes: for a request, the size of the reply queue address.

    Returns:
        The sizes; ``within_recommended`` is false above 10,000 bytes of JSON (RPC-LIM-3), which
        is a warning, not an error.

    Raises:
        MessageTooLargeError: the padded size exceeds 11,106 bytes: the agent would refuse it
            (RPC-LIM-2).
    """
    text = _core_text(value)
    json_bytes = _wire.json_size(text)
    extra = 0
    if kind == "request":
        extra = request_framing_bytes(signed=signed, reply_queue_info_bytes=reply_queue_info_bytes)
        extra -= SERVICE_PAD_FRAMING_BYTES
    padded = _wire.service_padded_size(text, extra_framing_bytes=extra)
    if padded > SERVICE_PADDED_BYTES:
        # RPC-LIM-2: the agent pads "its own framing included, to 11,106 bytes, and a longer one
        # fails".
        raise MessageTooLargeError(f"service {kind}", padded, SERVICE_PADDED_BYTES)
    return ServiceSize(
        json_bytes=json_bytes,
        padded_bytes=padded,
        within_recommended=json_bytes <= MAX_SERVICE_JSON_BYTES,
    )
