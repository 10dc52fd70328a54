"""Protocol bindings: MCP and A2A over the SimpleX transports, as adapters over the official SDKs.

The contract every binding follows is :class:`Binding`; the transports pass each request's
:class:`Caller`. The MCP binding lives in :mod:`simplex_protocols.bindings.mcp` and the A2A
binding in :mod:`simplex_protocols.bindings.a2a` (each imports its SDK only when used).
"""

from __future__ import annotations

from simplex_protocols._exports import publish

from ._base import Binding as Binding
from ._base import Caller as Caller
from ._base import Emit as Emit
from ._base import EnvelopeOutcome as EnvelopeOutcome
from ._base import TransportKind as TransportKind

__all__ = ["Binding", "Caller", "Emit", "EnvelopeOutcome", "TransportKind"]

publish(globals(), __all__)
