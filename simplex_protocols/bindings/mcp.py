"""The MCP binding of "Agent protocols over SimpleX", over the official ``mcp`` SDK.

Bot side: :class:`MCPBinding` serves any server built with the SDK (``MCPServer`` with its
tool decorators, or a lowlevel ``Server``) over the chat transport and Service RPC. Tool
authors use :func:`caller_of` (who is calling: the same function as
:func:`simplex_protocols.bindings.caller_of`), :func:`needs_conversation` and
:func:`require_conversation` (what cannot be served over Service RPC), and the bot keeps its
``requestState`` key with :func:`load_or_create_secret`.

Caller side: :class:`SimplexTransport` is a client transport of the SDK, so
``mcp.Client(SimplexTransport(link, core=...))`` calls a SimpleX bot with the SDK's own API.
:func:`build_request`, :func:`choose_revision`, :func:`is_final`,
:func:`read_response`, :func:`continue_request` and :func:`progress_of` work on plain JSON
objects, without a server.

Importing this module imports the ``mcp`` SDK; :mod:`simplex_protocols.bindings` does not.
See ``docs/bindings-mcp.md``.
"""

from __future__ import annotations

from simplex_protocols._exports import publish

from ._caller import caller_of as caller_of
from ._mcp_binding import MCPBinding as MCPBinding
from ._mcp_caller import DEFAULT_REVISION as DEFAULT_REVISION
from ._mcp_caller import MCPResponse as MCPResponse
from ._mcp_caller import MCPResponseError as MCPResponseError
from ._mcp_caller import Progress as Progress
from ._mcp_caller import build_request as build_request
from ._mcp_caller import choose_revision as choose_revision
from ._mcp_caller import continue_request as continue_request
from ._mcp_caller import is_final as is_final
from ._mcp_caller import progress_of as progress_of
from ._mcp_caller import read_response as read_response
from ._mcp_context import ConversationRequired as ConversationRequired
from ._mcp_context import caller_principal as caller_principal
from ._mcp_context import needs_conversation as needs_conversation
from ._mcp_context import require_conversation as require_conversation
from ._mcp_secret import load_or_create_secret as load_or_create_secret
from ._mcp_transport import SIMPLEX_ERROR_KEY as SIMPLEX_ERROR_KEY
from ._mcp_transport import SimplexTransport as SimplexTransport

__all__ = [
    "DEFAULT_REVISION",
    "SIMPLEX_ERROR_KEY",
    "ConversationRequired",
    "MCPBinding",
    "MCPResponse",
    "MCPResponseError",
    "Progress",
    "SimplexTransport",
    "build_request",
    "caller_of",
    "caller_principal",
    "choose_revision",
    "continue_request",
    "is_final",
    "load_or_create_secret",
    "needs_conversation",
    "progress_of",
    "read_response",
    "require_conversation",
]

publish(globals(), __all__, defined_in="simplex_protocols.bindings._mcp_")
