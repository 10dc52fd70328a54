"""Numeric limits of "Agent protocols over SimpleX" and of the SimpleX chat core.

Every constant carries its unit in its name. The sources are given beside each value.

The framing the core and the agent add around a message's JSON is internal to the size
checks (``chat_call.fits_in_message``, ``rpc.check_service_size``); implementers who redo
the Service RPC arithmetic find it in :mod:`simplex_protocols.rpc.advanced`.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT_S",
    "MAX_CHAT_MESSAGE_BYTES",
    "MAX_CHAT_REF_DIGITS",
    "MAX_SERVICE_JSON_BYTES",
    "RESPONSE_WINDOW_S",
    "SERVICE_PADDED_BYTES",
]

#: The core refuses a chat message whose encoded JSON exceeds this many bytes
#: (spec "Chat transport" > "Message size"; core ``maxEncodedMsgLength``).
MAX_CHAT_MESSAGE_BYTES: Final = 15_602

#: Before encryption, the agent pads a service request or response, its own framing
#: included, to this many bytes; a longer one fails (spec "Service RPC transport").
SERVICE_PADDED_BYTES: Final = 11_106

#: A request and a response SHOULD NOT exceed this many bytes of JSON (RPC-LIM-3).
MAX_SERVICE_JSON_BYTES: Final = 10_000

#: The requester's default wait for a service response (spec "Service RPC transport").
DEFAULT_REQUEST_TIMEOUT_S: Final = 30.0

#: The core accepts a service response within this many seconds of receiving the request.
RESPONSE_WINDOW_S: Final = 180.0

#: Chat references (``@N``, ``#N``) have 1 to 15 digits: longer numbers wrap around Int64 in
#: the core's parser and can name another chat (MCP server plan, "Identifiers").
MAX_CHAT_REF_DIGITS: Final = 15
