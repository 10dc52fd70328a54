"""Who is calling, for a tool or an agent: one :func:`caller_of` for both bindings.

Each binding hands the :class:`~simplex_protocols.transports.Caller` the transport gave it to
its SDK, which passes it on in the context a handler receives: the MCP binding in the request
context of a tool or a lowlevel handler, the A2A binding in the call context of an agent. The
handler asks :func:`caller_of` with that context, whichever SDK it comes from.

Nothing here imports an SDK: a context exists only once its SDK is imported, so the binding
module that reads it is imported on the first call that brings one.
"""

from __future__ import annotations

from typing import Final

from simplex_protocols.transports import Caller

__all__ = ["caller_of"]

#: The top-level packages of the SDKs whose contexts carry a caller.
_SDKS: Final = frozenset({"mcp", "a2a", "fastmcp"})


def caller_of(context: object) -> Caller | None:
    """The SimpleX caller of the request a tool or an agent is serving, or ``None``.

    Args:
        context: what the SDK hands the handler. MCP: an ``MCPServer`` tool's ``Context``, or
            a lowlevel handler's (or a middleware's) ``ServerRequestContext``, or a FastMCP
            tool's ``Context``. A2A: the
            ``RequestContext`` an ``AgentExecutor`` receives, or a ``ServerCallContext``.

    Returns:
        The :class:`~simplex_protocols.transports.Caller` the transport passed to the binding:
        the contact or the group member in a conversation, the signer key (or an anonymous
        one-off key) over Service RPC. ``None`` when the request did not come through a
        SimpleX binding (the same server or agent served by its SDK over HTTP), outside a
        request, and for any other object.
    """
    sdk = _sdk_of(context)
    if sdk in ("mcp", "fastmcp"):
        from ._mcp_context import mcp_caller_of

        return mcp_caller_of(context)
    if sdk == "a2a":
        from ._a2a_server import a2a_caller_of

        return a2a_caller_of(context)
    return None


def _sdk_of(context: object) -> str | None:
    """The SDK whose class ``context`` is (or derives from), by the class's top-level package."""
    for cls in type(context).__mro__:
        package = cls.__module__.partition(".")[0]
        if package in _SDKS:
            return package
    return None
