"""Protocol bindings: MCP and A2A over the SimpleX transports, as adapters over the official SDKs.

The contract every binding follows is :class:`Binding`; the transports pass each request's
:class:`Caller`. Both are defined by :mod:`simplex_protocols.transports` (the layer below) and
re-exported here as the same objects. A tool or an agent reads its caller with
:func:`caller_of`, whichever SDK's context it holds. The MCP binding lives in
:mod:`simplex_protocols.bindings.mcp` and the A2A binding in
:mod:`simplex_protocols.bindings.a2a` (each imports its SDK only when used; so does
:func:`caller_of`, which both re-export).
"""

from __future__ import annotations

from simplex_protocols._exports import publish
from simplex_protocols.transports import Binding as Binding
from simplex_protocols.transports import Caller as Caller
from simplex_protocols.transports import Emit as Emit
from simplex_protocols.transports import EnvelopeOutcome as EnvelopeOutcome
from simplex_protocols.transports import TransportKind as TransportKind

from ._caller import caller_of as caller_of

__all__ = ["Binding", "Caller", "Emit", "EnvelopeOutcome", "TransportKind", "caller_of"]

publish(globals(), __all__)
