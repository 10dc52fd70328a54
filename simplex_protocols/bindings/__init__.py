"""Protocol bindings: MCP and A2A over the SimpleX transports, as adapters over the official SDKs.

The contract every binding follows is :class:`Binding`; the transports pass each request's
:class:`Caller`. Both are defined by :mod:`simplex_protocols.transports` (the layer below) and
re-exported here as the same objects. The MCP binding lives in :mod:`simplex_protocols.bindings.mcp` and the A2A
binding in :mod:`simplex_protocols.bindings.a2a` (each imports its SDK only when used).
"""

from __future__ import annotations

from simplex_protocols._exports import publish
from simplex_protocols.transports import Binding as Binding
from simplex_protocols.transports import Caller as Caller
from simplex_protocols.transports import Emit as Emit
from simplex_protocols.transports import EnvelopeOutcome as EnvelopeOutcome
from simplex_protocols.transports import TransportKind as TransportKind

__all__ = ["Binding", "Caller", "Emit", "EnvelopeOutcome", "TransportKind"]

publish(globals(), __all__)
