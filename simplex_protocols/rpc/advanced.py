"""Service RPC arithmetic for implementers: the agent's framing, the core's JSON, signed bytes.

A requester or responder built on :mod:`simplex_protocols.rpc` needs none of this:
:func:`~simplex_protocols.rpc.check_service_size` applies the size limits and
:class:`~simplex_protocols.rpc.SigningKey` signs. These are the pieces behind them, for
implementers of the spec in another stack who want to check their numbers and bytes against
ours (``docs/rpc.md``, "Sizes" and "Signed requests").

Sizes (RPC-LIM-2; simplexmq ``Agent.Protocol``, ``Crypto.pad``):
    :data:`SERVICE_PAD_FRAMING_BYTES` (every request and response), :func:`request_framing_bytes`
    (a request's whole framing), :func:`reply_queue_info_size` and
    :data:`PRESET_REPLY_QUEUE_INFO_BYTES` (its reply queue address), :data:`UNSIGNED_FIELD_BYTES`
    and :data:`SIGNATURE_FIELD_BYTES` (its signature field), :func:`service_json_size` (the JSON
    the agent pads).

Encoding: :func:`core_encode_json`, JSON as the chat core's aeson writes it (what is padded and
what is signed).

Signatures (RPC-SIG-1): :func:`service_signature_input`, the bytes Ed25519 signs, and
:data:`SERVICE_SIGNATURE_DOMAIN`, the domain string hashed into them.
"""

from __future__ import annotations

from simplex_protocols._exports import publish
from simplex_protocols._framing import SERVICE_PAD_FRAMING_BYTES as SERVICE_PAD_FRAMING_BYTES

from ._corejson import core_encode_json as core_encode_json
from ._signing import SERVICE_SIGNATURE_DOMAIN as SERVICE_SIGNATURE_DOMAIN
from ._signing import service_signature_input as service_signature_input
from ._sizes import PRESET_REPLY_QUEUE_INFO_BYTES as PRESET_REPLY_QUEUE_INFO_BYTES
from ._sizes import SIGNATURE_FIELD_BYTES as SIGNATURE_FIELD_BYTES
from ._sizes import UNSIGNED_FIELD_BYTES as UNSIGNED_FIELD_BYTES
from ._sizes import reply_queue_info_size as reply_queue_info_size
from ._sizes import request_framing_bytes as request_framing_bytes
from ._sizes import service_json_size as service_json_size

__all__ = [
    "PRESET_REPLY_QUEUE_INFO_BYTES",
    "SERVICE_PAD_FRAMING_BYTES",
    "SERVICE_SIGNATURE_DOMAIN",
    "SIGNATURE_FIELD_BYTES",
    "UNSIGNED_FIELD_BYTES",
    "core_encode_json",
    "reply_queue_info_size",
    "request_framing_bytes",
    "service_json_size",
    "service_signature_input",
]

publish(globals(), __all__, defined_in="simplex_protocols.rpc._")
