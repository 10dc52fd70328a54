"""Bytes the chat core and the agent add around a message's own JSON (internal).

The size rules in ``_wire`` add these to the JSON they measure. Users check sizes with
``chat_call.fits_in_message`` and ``rpc.check_service_size``; implementers who redo the
arithmetic find the Service RPC constant in :mod:`simplex_protocols.rpc.advanced`.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "MSG_NEW_ENVELOPE_BYTES",
    "MSG_UPDATE_ENVELOPE_BYTES",
    "SERVICE_PAD_FRAMING_BYTES",
]

#: Bytes of the ``x.msg.new`` envelope around a text message's JSON-escaped text, measured
#: with core 7.1.0.11 (MCP server plan, "Card size").
MSG_NEW_ENVELOPE_BYTES: Final = 114

#: Bytes of the ``x.msg.update`` envelope around an edited text (MCP server plan, "Card size";
#: 182 with a 30-day ttl).
MSG_UPDATE_ENVELOPE_BYTES: Final = 168

#: Bytes of the agent's own framing around every service request and response JSON: the 2-byte
#: length that ``C.pad`` writes before the padded message, and the 1-byte agent message tag
#: (``'P'`` for ``AgentServiceResponse``, ``'A'`` for ``AgentServiceRequest``), in simplexmq
#: ``Simplex.Messaging.Crypto.pad`` and ``Agent.Protocol`` (``e2eEncConnInfoLength PQSupportOn``
#: is the 11,106). A request adds its reply queue address and signature field on top; see
#: ``simplex_protocols.rpc.advanced.request_framing_bytes``.
SERVICE_PAD_FRAMING_BYTES: Final = 3
