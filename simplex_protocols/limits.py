"""Numeric limits of "Agent protocols over SimpleX" and of the SimpleX chat core.

Every constant carries its unit in its name. The sources are given beside each value.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT_S",
    "MAX_CHAT_MESSAGE_BYTES",
    "MAX_CHAT_REF_DIGITS",
    "MAX_SERVICE_JSON_BYTES",
    "MSG_NEW_ENVELOPE_BYTES",
    "MSG_UPDATE_ENVELOPE_BYTES",
    "RESPONSE_WINDOW_S",
    "SERVICE_PADDED_BYTES",
    "SERVICE_PAD_FRAMING_BYTES",
]

#: The core refuses a chat message whose encoded JSON exceeds this many bytes
#: (spec "Chat transport" > "Message size"; core ``maxEncodedMsgLength``).
MAX_CHAT_MESSAGE_BYTES: Final = 15_602

#: Bytes of the ``x.msg.new`` envelope around a text message's JSON-escaped text, measured
#: with core 7.1.0.11 (MCP server plan, "Card size").
MSG_NEW_ENVELOPE_BYTES: Final = 114

#: Bytes of the ``x.msg.update`` envelope around an edited text (MCP server plan, "Card size";
#: 182 with a 30-day ttl).
MSG_UPDATE_ENVELOPE_BYTES: Final = 168

#: Before encryption, the agent pads a service request or response, its own framing
#: included, to this many bytes; a longer one fails (spec "Service RPC transport").
SERVICE_PADDED_BYTES: Final = 11_106

#: Bytes of the agent's own framing around every service request and response JSON: the 2-byte
#: length that ``C.pad`` writes before the padded message, and the 1-byte agent message tag
#: (``'P'`` for ``AgentServiceResponse``, ``'A'`` for ``AgentServiceRequest``), in simplexmq
#: ``Simplex.Messaging.Crypto.pad`` and ``Agent.Protocol`` (``e2eEncConnInfoLength PQSupportOn``
#: is the 11,106). A request adds its reply queue address and signature field on top; see
#: ``simplex_protocols.rpc.request_framing_bytes``.
SERVICE_PAD_FRAMING_BYTES: Final = 3

#: A request and a response SHOULD NOT exceed this many bytes of JSON (RPC-LIM-3).
MAX_SERVICE_JSON_BYTES: Final = 10_000

#: The requester's default wait for a service response (spec "Service RPC transport").
DEFAULT_REQUEST_TIMEOUT_S: Final = 30.0

#: The core accepts a service response within this many seconds of receiving the request.
RESPONSE_WINDOW_S: Final = 180.0

#: Chat references (``@N``, ``#N``) have 1 to 15 digits: longer numbers wrap around Int64 in
#: the core's parser and can name another chat (MCP server plan, "Identifiers").
MAX_CHAT_REF_DIGITS: Final = 15
