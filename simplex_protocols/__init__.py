"""simplex-protocols: agent protocols over SimpleX.

A toolkit that lets software agents find each other and call each other's tools over SimpleX,
following "Agent protocols over SimpleX" (revision 2, 2026-10-21): addresses in llms.txt,
profile protocol declarations, the ``/_call`` chat transport, the Service RPC transport with
signed requests, and the MCP and A2A bindings.

The top level holds only the version and the root of the exception tree. Import from the
subpackages:

- :mod:`simplex_protocols.llmstxt`: the Communications section of llms.txt
- :mod:`simplex_protocols.declarations`: ``protocols``, ``audience``, ``changeFrequency``, ``serves``
- :mod:`simplex_protocols.chat_call`: ``/_call`` framing, sizes and reply matching
- :mod:`simplex_protocols.rpc`: Service RPC envelopes, error codes and signing
- :mod:`simplex_protocols.errors`: every exception
- :mod:`simplex_protocols.limits`: every numeric limit
"""

from __future__ import annotations

from . import errors as errors
from .errors import SimplexError as SimplexError

__version__ = "0.1.0"

__all__ = ["SimplexError", "__version__", "errors"]
