"""The kinds of MCP server the binding serves, and how a FastMCP server is served in process.

:class:`~simplex_protocols.bindings.mcp.MCPBinding` serves a lowlevel ``mcp`` SDK ``Server``.
It gets one from each kind of server it accepts:

- a lowlevel ``Server``: served as it is;
- an ``MCPServer``: its lowlevel server, unwrapped as the SDK's in-memory client does;
- a ``fastmcp.FastMCP`` (the ``fastmcp`` package, 4.x; extra ``simplex-protocols[fastmcp]``):
  the lowlevel server FastMCP builds for itself and runs on each of its own transports. It
  carries FastMCP's middleware chain, its ``Context`` (progress, logging), its error handling
  (``ToolError``, masked exceptions) and a lifespan that drives FastMCP's own, so a tool
  behaves as over ``fastmcp run``.

``fastmcp`` is optional and slow to import, so nothing here imports it until a server from it
arrives (told by the module of its class).

FastMCP reads the request slot of the SDK's request context as a Starlette request (its
``get_http_request()``, ``get_http_headers()`` and ``get_access_token()``), while the binding
puts its :class:`~simplex_protocols.transports.Caller` there. For a FastMCP server a first
middleware puts a request in that slot that carries the caller and the caller's headers, so
FastMCP's helpers work (``get_http_headers()`` gives the group member's headers, as
``ctx.headers`` does in an ``MCPServer`` tool) and :func:`caller_of` still finds the caller.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any, Final

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request

from simplex_protocols.errors import BindingConfigError
from simplex_protocols.transports import Caller

from ._mcp_context import CALLER_ATTR, ConversationRequired

if TYPE_CHECKING:
    from fastmcp import FastMCP

__all__ = ["UnsupportedServerError", "check_server_kind", "lowlevel_server_of"]

#: The kinds of server MCPBinding serves, as its error messages name them.
SUPPORTED_KINDS: Final = (
    "an mcp SDK MCPServer, an mcp SDK lowlevel Server, or a fastmcp.FastMCP server (fastmcp 4.x)"
)

#: The major version of fastmcp whose server layout this module knows.
_FASTMCP_MAJOR: Final = 4


class UnsupportedServerError(BindingConfigError, TypeError):
    """The server given to the MCP binding is of a kind it does not serve.

    A :class:`BindingConfigError` (catch that), and also a ``TypeError``: before FastMCP
    servers were served, a server of another kind raised ``TypeError``, and code written then
    may catch that.
    """

    code = "unsupported_server"


def _unsupported(server: object, why: str = "") -> BindingConfigError:
    kind = f"{type(server).__module__}.{type(server).__qualname__}"
    return UnsupportedServerError(
        f"MCPBinding serves {SUPPORTED_KINDS}, not {kind}{why}", code="unsupported_server"
    )


def _is_from_fastmcp(obj: object) -> bool:
    """Whether ``obj``'s class (or a base of it) is defined in the ``fastmcp`` package."""
    return any(cls.__module__.partition(".")[0] == "fastmcp" for cls in type(obj).__mro__)


def check_server_kind(server: object) -> None:
    """Raise unless ``server`` is of a kind :class:`MCPBinding` serves; it is not changed.

    Raises:
        BindingConfigError: ``unsupported_server``, naming the kinds served (also a
            ``TypeError``). A FastMCP object of a major version other than 4 is refused too.
    """
    if isinstance(server, MCPServer | Server):
        return
    if _is_from_fastmcp(server):
        _fastmcp_inner(server)
        return
    raise _unsupported(server)


def lowlevel_server_of(server: object) -> tuple[Server[Any], MCPServer[Any] | None]:
    """The lowlevel server to serve for ``server``, and the ``MCPServer`` around it if any.

    For a FastMCP server the first middleware of its lowlevel server is made the one that
    puts the caller where FastMCP looks for its request (once, however often it is served).

    Raises:
        BindingConfigError: as :func:`check_server_kind`.
    """
    if isinstance(server, MCPServer):
        # The SDK unwraps an MCPServer the same way (mcp/client/_memory.py). Private, with no
        # public accessor in mcp 2.3 (the minor release pyproject.toml pins).
        return server._lowlevel_server, server
    if isinstance(server, Server):
        return server, None
    if _is_from_fastmcp(server):
        inner = _fastmcp_inner(server)
        if not any(isinstance(m, _CallerAsRequest) for m in inner.middleware):
            # First: FastMCP's own middleware, next in the chain, reads the request slot.
            inner.middleware.insert(0, _CallerAsRequest())
        _let_conversation_required_through(server)
        return inner, None
    raise _unsupported(server)


def _fastmcp_inner(server: object) -> Server[Any]:
    """The lowlevel SDK server a FastMCP 4 server runs on its own transports."""
    import fastmcp
    from fastmcp import FastMCP

    major = fastmcp.__version__.partition(".")[0]
    if major != str(_FASTMCP_MAJOR):
        raise _unsupported(server, f" (fastmcp {fastmcp.__version__} is installed)")
    if not isinstance(server, FastMCP):
        raise _unsupported(server)
    return _inner_of(server)


def _inner_of(server: FastMCP[Any]) -> Server[Any]:
    # FastMCP 4 has no public accessor for its lowlevel server; ``_mcp_server`` is the one its
    # stdio and HTTP runners serve and its in-memory client transport drives
    # (fastmcp/client/transports/memory.py), the same in every 4.x release. The extra pins
    # fastmcp below 5 for this reason.
    inner = getattr(server, "_mcp_server", None)
    if not isinstance(inner, Server):
        raise _unsupported(server, " (its lowlevel server was not found)")
    return inner


def _let_conversation_required_through(server: Any) -> None:
    """Make ``require_conversation`` in a FastMCP tool reach the binding (MCP-MSG-8).

    FastMCP turns what a tool raises, an ``MCPError`` too, into a ``ToolError`` and then a
    result with ``isError``; its middleware sees the ``ToolError`` with the tool's exception
    as its cause. The outermost FastMCP middleware raises a ``ConversationRequired`` cause
    again, so the binding answers ``conversation_required`` over Service RPC.
    """
    through = _conversation_required_through()
    if not any(isinstance(m, through) for m in server.middleware):
        server.middleware.insert(0, through())


@functools.cache
def _conversation_required_through() -> type[Any]:
    # Made on first use: its base class is fastmcp's, imported only with a FastMCP server.
    from fastmcp.server.middleware import Middleware

    class ConversationRequiredThrough(Middleware):
        async def on_call_tool(self, context: Any, call_next: Any) -> Any:
            try:
                return await call_next(context)
            except Exception as exc:
                if isinstance(exc.__cause__, ConversationRequired):
                    raise exc.__cause__ from None
                raise

    return ConversationRequiredThrough


class _CallerRequest(Request):
    """The request a FastMCP server sees for a call that came over SimpleX.

    Not an HTTP request: it has the caller's headers (those a group member sent, else none)
    and no body, and keeps the caller for :func:`~simplex_protocols.bindings.caller_of`.
    """

    def __init__(self, caller: Caller) -> None:
        headers = [
            (name.lower().encode("latin-1"), value.encode("latin-1", "replace"))
            for name, value in (caller.headers or {}).items()
        ]
        super().__init__(
            {
                "type": "http",
                "asgi": {"version": "3.0"},
                "http_version": "1.1",
                "method": "POST",
                "scheme": "simplex",
                "path": "/",
                "raw_path": b"/",
                "root_path": "",
                "query_string": b"",
                "headers": headers,
                "client": None,
                "server": None,
                "state": {},
            }
        )
        setattr(self, CALLER_ATTR, caller)


class _CallerAsRequest:
    """A lowlevel ``ServerMiddleware``: the binding's caller in a request FastMCP can read."""

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if isinstance(ctx.request, Caller):
            ctx = dataclasses.replace(ctx, request=_CallerRequest(ctx.request))
        return await call_next(ctx)
