"""What a tool sees of SimpleX: its caller, and whether it may run without a conversation.

The MCP binding puts the :class:`~simplex_protocols.bindings.Caller` of each request in the
SDK's request context (``ServerMessageMetadata.request_context``, the slot the SDK's HTTP entry
fills with the Starlette request). Lowlevel handlers read it as ``ctx.request``, ``MCPServer``
tools as ``ctx.request_context.request``; :func:`mcp_caller_of` reads either (for handlers,
:func:`simplex_protocols.bindings.caller_of`, which takes either SDK's context).

A tool that cannot be answered in one Service RPC round trip (it reports progress over
minutes, or streams notifications) declares it in one of three ways, all answered over Service
RPC with the envelope error ``conversation_required`` (MCP-MSG-8):

- :func:`needs_conversation` on the tool function (``MCPServer`` tools): known before the tool
  runs;
- ``MCPBinding(server, conversation_tools={"name", ...})``: the same, for any server;
- :func:`require_conversation` inside the tool, for a decision made while it runs (it raises
  :class:`ConversationRequired`, an ``MCPError`` that ``MCPServer`` lets through).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.request_state import authenticated_principal
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR
from starlette.requests import Request

from simplex_protocols.transports import Caller, TransportKind

__all__ = [
    "ConversationRequired",
    "caller_principal",
    "mcp_caller_of",
    "needs_conversation",
    "principal_of",
    "require_conversation",
]

#: The attribute of the request a FastMCP server sees (``_mcp_fastmcp``) that keeps the caller.
CALLER_ATTR: Final = "simplex_caller"

#: The attribute :func:`needs_conversation` sets on a tool function.
NEEDS_CONVERSATION_ATTR: Final = "__simplex_needs_conversation__"

_F = TypeVar("_F", bound=Callable[..., Any])


class ConversationRequired(MCPError):
    """Raised in a tool (by :func:`require_conversation`) that cannot be served over Service RPC.

    It is an ``MCPError`` because ``MCPServer`` turns every other exception a tool raises into
    a result with ``isError``; an ``MCPError`` reaches the binding, which answers the envelope
    error ``conversation_required`` (MCP-MSG-8). Served any other way (in a conversation, or by
    the SDK over HTTP or stdio) it would read as a JSON-RPC internal error, which is why
    :func:`require_conversation` raises it only for Service RPC callers.
    """

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(
            code=INTERNAL_ERROR, message="This call needs a conversation", data=reason or None
        )
        self.reason = reason


def mcp_caller_of(ctx: Any) -> Caller | None:
    """:func:`~simplex_protocols.bindings.caller_of` for an MCP context.

    ``ctx`` is an ``MCPServer`` tool's ``Context``, a ``ServerRequestContext`` or a FastMCP
    tool's ``Context``; a request that did not come through the binding, or no request at all
    gives ``None``.
    """
    request_context: Any
    if isinstance(ctx, Context):
        try:
            request_context = ctx.request_context
        except ValueError:  # outside a request
            return None
    elif isinstance(ctx, ServerRequestContext):
        request_context = ctx
    else:
        # A FastMCP Context: its request context (None outside a request) has the same slot.
        return _request_caller(getattr(getattr(ctx, "request_context", None), "request", None))
    if not isinstance(request_context, ServerRequestContext):
        return None
    return _request_caller(request_context.request)


def _request_caller(request: object) -> Caller | None:
    """The binding's caller in the request slot: itself, or kept by a FastMCP server's request."""
    if isinstance(request, Request):
        request = getattr(request, CALLER_ATTR, None)
    return request if isinstance(request, Caller) else None


def needs_conversation(fn: _F) -> _F:
    """Mark a tool function as one that needs a conversation (MCP-MSG-8).

    Over Service RPC the binding answers ``conversation_required`` for a ``tools/call`` of the
    tool without running it. In a conversation the mark has no effect. The function is
    returned unchanged, so the decorator goes above or below ``@server.tool()``::

        @server.tool(structured_output=False)
        @needs_conversation
        async def track_delivery(order: str, ctx: Context) -> str: ...

    The binding finds the mark through ``MCPServer``'s tool registry. For a lowlevel
    ``Server``, name the tools in ``MCPBinding(conversation_tools=...)`` instead.
    """
    setattr(fn, NEEDS_CONVERSATION_ATTR, True)
    return fn


def is_marked_needs_conversation(fn: object) -> bool:
    """Whether :func:`needs_conversation` marked ``fn``."""
    return getattr(fn, NEEDS_CONVERSATION_ATTR, False) is True


def require_conversation(ctx: Any, reason: str | None = None) -> None:
    """Refuse to go on unless the request came in a conversation (MCP-MSG-8).

    Call it in a tool (or a resource or prompt function, or a lowlevel handler) before doing
    anything that cannot finish in one Service RPC round trip. Over Service RPC it raises
    :class:`ConversationRequired`, which the binding answers with the envelope error
    ``conversation_required``; otherwise it returns.

    Args:
        ctx: the tool's ``Context``, or a lowlevel ``ServerRequestContext``.
        reason: an optional description for the requester (sent as the error's ``data``).

    Raises:
        ConversationRequired: the caller is a Service RPC requester.
    """
    caller = mcp_caller_of(ctx)
    if caller is not None and caller.transport is TransportKind.RPC:
        raise ConversationRequired(reason)


def caller_principal(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The principal a multi-round-trip ``requestState`` is bound to (``bind_principal``).

    - In a conversation: the caller's key (the contact, or the group member), so another
      contact or member replaying the state is refused (-32602 "Invalid or expired
      requestState").
    - Over signed Service RPC: the signer key's caller key, so only the same key continues.
    - Over unsigned Service RPC: ``None``. Unsigned requesters cannot be told apart (each
      request has a fresh anonymous key), so their state is a bearer token: any unsigned
      request that presents it, for the same tool and arguments, within its lifetime,
      continues the call. It cannot be continued by a contact, a member or a signed
      requester, nor can theirs by an unsigned request (the SDK refuses a state whose
      binding differs in either direction).
    - A request that did not come through the binding (the server also served over HTTP):
      the SDK's default, the OAuth principal.
    """
    caller = mcp_caller_of(ctx)
    if caller is None:
        return authenticated_principal(ctx)
    return principal_of(caller)


def principal_of(caller: Caller) -> str | None:
    """Who ``caller`` is, as far as state may be bound to it: its key, or ``None`` for an
    unsigned Service RPC requester (each of its requests has a fresh key; see
    :func:`caller_principal`)."""
    if caller.transport is TransportKind.RPC and not caller.signed:
        return None
    return caller.key
