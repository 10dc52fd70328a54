"""HTTP: the listener on 127.0.0.1, the bearer token, ``/mcp``, and the ``mcp`` SDK's handler.

====================  =====================================================================
layer                 what
====================  =====================================================================
listener              127.0.0.1:PORT (uvicorn, h11); no request timeout, so calls may wait
                      for hours; keep-alive 5 s
unauthenticated       a connection must send a request's complete headers with the token
connections           within 5 s (:data:`HEADER_TIMEOUT_S`) or it is closed; at most 64 wait
                      at once (:data:`MAX_UNAUTHENTICATED`): a new one closes the oldest
bearer token          ``Authorization: Bearer <DIR/token>``, compared in constant time; 401,
                      and the connection closes
path                  ``/mcp`` only; 404 otherwise, a request target that is not a URL included
Origin, Host          no Origin or a localhost origin on any port; a localhost Host; 403
protocol              the SDK's Streamable HTTP: 2026-07-28 per request, the 2025 era
                      stateless; JSON or SSE per call, SSE keep-alive pings
cancellation          the client closing the response stream cancels the tool's handler
tools                 :mod:`simplex_protocols.mcp_server.tools` on the SDK's low-level server
====================  =====================================================================
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import secrets
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
import anyio.abc
import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Message, Receive, Scope, Send

# Undocumented: the h11 connection class, subclassed with its headers, transport and loop
# attributes (checked against uvicorn 0.54, the minor release pyproject.toml pins).
from uvicorn.protocols.http.h11_impl import H11Protocol

from simplex_protocols._trace_context import RandomBytes
from simplex_protocols._wire import dumps
from simplex_protocols.errors import CoreConnectionError, SimplexError

from .additions import install_additions
from .agent import Agent
from .config import VERSION
from .errors import ToolError
from .log import CORE_FAILURES, failure_text
from .tools import ToolSpec, instructions, tool_specs, validation_error
from .trace import TracedLog, call_trace, traced, with_trace

__all__ = [
    "HEADER_TIMEOUT_S",
    "MAX_UNAUTHENTICATED",
    "MCP_PATH",
    "ConnectionGuard",
    "GuardedApp",
    "HttpServer",
    "PortInUseError",
    "bind_port",
    "build_mcp_server",
]

MCP_PATH: Final = "/mcp"
#: How long a new connection has to send its first request's headers, token included.
HEADER_TIMEOUT_S: Final = 5.0
#: How many connections may wait at once without having shown the token.
MAX_UNAUTHENTICATED: Final = 64
_LOCAL_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
_HOST_MODE_META: Final = {"anthropic/requiresUserInteraction": True}

ToolHandler = Callable[[Mapping[str, Any], Any], Awaitable[dict[str, Any]]]


class PortInUseError(SimplexError):
    """The port is taken (exit code 1)."""

    code = "port_in_use"

    def __init__(self, port: int) -> None:
        self.port = port
        super().__init__(f"Port {port} is in use. Start with --port N.")


def bind_port(port: int) -> socket.socket:
    """Bind 127.0.0.1:PORT (0: any free port) before anything is printed.

    Raises:
        PortInUseError: the port is taken.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit it on Linux: a response written in two parts (headers,
        # then body) is not held back by Nagle's algorithm waiting for a delayed ACK.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):
            raise PortInUseError(port) from None
        raise
    sock.setblocking(False)
    return sock


class _Progress:
    """Progress notifications of one call: a no-op without a progress token."""

    def __init__(self, ctx: ServerRequestContext[Any, Any]) -> None:
        self._ctx = ctx
        self._count = 0

    async def progress(self, message: str) -> None:
        self._count += 1
        with contextlib.suppress(Exception):
            await self._ctx.session.report_progress(self._count, None, message)


def _tool_list(host_mode: bool, specs: tuple[ToolSpec, ...]) -> list[types.Tool]:
    tools = []
    for spec in specs:
        tool: dict[str, Any] = {
            "name": spec.name,
            "description": spec.description,
            "inputSchema": dict(spec.input_schema),
            "outputSchema": dict(spec.output_schema),
        }
        if host_mode and spec.action:
            tool["_meta"] = dict(_HOST_MODE_META)
        tools.append(types.Tool.model_validate(tool))
    return tools


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def build_mcp_server(
    agent: Agent,
    *,
    name: str,
    display: str,
    host_mode: bool,
    version: str = VERSION,
    random_bytes: RandomBytes = secrets.token_bytes,
) -> Server[Any]:
    """The SDK's low-level server with the five tools (six with ``--call-tool``), whose
    handlers call ``agent``; ``random_bytes`` makes the trace and span IDs of the calls."""
    call_tool = agent.config.call_tool
    specs = tool_specs(call_tool=call_tool)
    handlers: dict[str, ToolHandler] = {
        "connect": agent.connect,
        "send": agent.send,
        "receive": agent.receive,
        "list": agent.list_chats,
        "leave": agent.leave,
    }
    if call_tool:
        handlers["call"] = agent.call
    tools = _tool_list(host_mode, specs)

    async def on_list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        # W3C trace context (docs/mcp_server.md "Beyond the plan"): the call is a span of the
        # caller's trace or of a new one, named in the result, errors included.
        trace = call_trace(params.meta, random_bytes)
        with traced(trace):
            if trace.problem is not None:
                agent.log.line(trace.problem)
            result = await dispatch(ctx, params)
        return with_trace(result, trace)

    async def dispatch(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        handler = handlers.get(params.name)
        if handler is None:
            return _error_result(f"Unknown tool: {params.name}")
        arguments = dict(params.arguments or {})
        problem = validation_error(params.name, arguments)
        if problem is not None:
            return _error_result(problem)
        try:
            result = await handler(arguments, _Progress(ctx))
        except ToolError as exc:
            return _error_result(exc.message)
        except CORE_FAILURES as exc:
            return _error_result(failure_text(exc))
        except CoreConnectionError as exc:
            return _error_result(f"The chat core is not reachable: {exc}")
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=dumps(result))], structured_content=result
        )

    def input_schema(tool: str) -> Mapping[str, Any] | None:
        for spec in specs:
            if spec.name == tool:
                return spec.input_schema
        return None

    server = Server(
        f"simplex-{name}",
        version=version,
        title=display,
        instructions=instructions(
            display, durable_actions=agent.config.durable_actions, call_tool=call_tool
        ),
        get_tool_input_schema=input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
    # resources, completion, logging and cache hints (docs/mcp_server.md "Beyond the plan")
    install_additions(server, agent)
    if not isinstance(agent.state.log, TracedLog):
        # last, so that the lines relayed to clients carry the trace ID too
        agent.state.log = TracedLog(agent.state.log)
    return server


def _find_header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    for key, value in headers:
        if key.lower() == name:
            return bytes(value)
    return None


def _header(scope: Scope, name: bytes) -> bytes | None:
    return _find_header(scope.get("headers", []), name)


def _local_origin(origin: str) -> bool:
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return False
    host = parts.hostname or ""
    return (
        parts.scheme in ("http", "https")
        and (host in _LOCAL_HOSTS or f"[{host}]" in _LOCAL_HOSTS)
        and not parts.path.strip("/")
    )


def _local_host(host: str) -> bool:
    if host.startswith("["):
        name, _, rest = host.partition("]")
        name += "]"
        port = rest[1:] if rest.startswith(":") else rest
    else:
        name, _, port = host.partition(":")
    return name in _LOCAL_HOSTS and (port == "" or port.isdigit())


async def _plain(
    send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _Bearer:
    """The expected ``Authorization`` header, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}".encode()

    def matches(self, value: bytes | None) -> bool:
        return hmac.compare_digest(value or b"", self._expected)


class ConnectionGuard:
    """The connections that have not shown the bearer token yet: a deadline and a cap.

    Any local process can open connections to the port. One that never finishes its headers
    would otherwise be kept for ever (uvicorn has no header timeout), and enough of them use up
    the process's descriptors, locking the agent's own client out. So every new connection has
    ``header_timeout_s`` to send a request's headers with the token, and at most
    ``max_unauthenticated`` connections wait at once: a new connection beyond the cap closes the
    oldest waiting one, so the real client, whose headers follow its connect at once, always
    gets in, however many idle connections came before it.

    The counters say what the guard did: ``timed_out`` and ``evicted`` connections closed.
    """

    def __init__(
        self,
        token: str,
        *,
        header_timeout_s: float = HEADER_TIMEOUT_S,
        max_unauthenticated: int = MAX_UNAUTHENTICATED,
    ) -> None:
        self.bearer = _Bearer(token)
        self.header_timeout_s = header_timeout_s
        self.max_unauthenticated = max_unauthenticated
        # Insertion-ordered: the first key is the connection that has waited longest.
        self._waiting: dict[_GuardedProtocol, None] = {}
        self.timed_out = 0
        self.evicted = 0

    @property
    def unauthenticated(self) -> int:
        """How many connections are open without having shown the token."""
        return len(self._waiting)

    def opened(self, conn: _GuardedProtocol) -> None:
        self._waiting[conn] = None
        while len(self._waiting) > self.max_unauthenticated:
            self.evicted += 1
            next(iter(self._waiting)).drop()

    def forget(self, conn: _GuardedProtocol) -> None:
        self._waiting.pop(conn, None)

    def protocol(self) -> type[asyncio.Protocol]:
        """uvicorn's h11 protocol class for the connections this guard watches."""
        guard = self

        class Guarded(_GuardedProtocol):
            _guard = guard

        return Guarded


class _GuardedProtocol(H11Protocol):
    """uvicorn's h11 connection, watched by a :class:`ConnectionGuard` until it authenticates."""

    _guard: ConnectionGuard
    _timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._timer = self.loop.call_later(self._guard.header_timeout_s, self._headers_late)
        self._guard.opened(self)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # uvicorn sets the headers once a request's are complete. A wrong token keeps the
        # connection waiting: its 401 closes it, or the deadline does.
        if (
            self._timer is not None
            and self.headers is not None
            and self._guard.bearer.matches(_find_header(self.headers, b"authorization"))
        ):
            self._stop_timer()
            self._guard.forget(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        self._guard.forget(self)
        super().connection_lost(exc)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _headers_late(self) -> None:
        self._timer = None
        self._guard.timed_out += 1
        self.drop()

    def drop(self) -> None:
        """Close the connection now (its descriptor is freed at once, nothing is flushed)."""
        self._stop_timer()
        self._guard.forget(self)
        self.transport.abort()


class GuardedApp:
    """The ASGI app: token, path, Origin and Host checks, then the SDK's handler."""

    def __init__(
        self, token: str, inner: Callable[[Scope, Receive, Send], Awaitable[None]]
    ) -> None:
        self._bearer = _Bearer(token)
        self._inner = inner
        self._open: set[anyio.CancelScope] = set()
        self._closed = False

    def close_calls(self) -> None:
        """End every request in progress (the server stops: open calls fail) and refuse new ones."""
        self._closed = True
        for scope in list(self._open):
            scope.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if not self._bearer.matches(_header(scope, b"authorization")):
            # The connection closes: one without the token is not kept open for another try.
            await _plain(
                send,
                401,
                "Unauthorized",
                [(b"www-authenticate", b"Bearer"), (b"connection", b"close")],
            )
            return
        raw_path = scope.get("raw_path") or scope.get("path", "").encode("latin-1", "replace")
        if raw_path != MCP_PATH.encode() or scope.get("path") != MCP_PATH:
            await _plain(send, 404, "Not Found")
            return
        origin = _header(scope, b"origin")
        if origin is not None and not _local_origin(origin.decode("latin-1")):
            await _plain(send, 403, "Forbidden: Origin")
            return
        host = _header(scope, b"host")
        if host is None or not _local_host(host.decode("latin-1")):
            await _plain(send, 403, "Forbidden: Host")
            return
        if self._closed:
            await _plain(send, 503, "The server is stopping.")
            return
        started = complete = False

        async def tracked(message: Message) -> None:
            nonlocal started, complete
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                complete = True
            await send(message)

        with anyio.CancelScope() as cancel:
            self._open.add(cancel)
            try:
                await self._inner(scope, receive, tracked)
            finally:
                self._open.discard(cancel)
        if cancel.cancelled_caught:
            # the server stops: the call ends with a complete response, so the listener has
            # nothing to complain about and the client sees the call end
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                if not started:
                    await _plain(send, 503, "The server is stopping.")
                elif not complete:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})


class _QuietServer(uvicorn.Server):
    """uvicorn without its own signal handlers: the server's stop sequence owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        yield


class HttpServer:
    """The MCP endpoint at ``http://127.0.0.1:PORT/mcp`` on an already bound socket.

    ``header_timeout_s`` and ``max_unauthenticated`` bound the connections that have not shown
    the token yet (:class:`ConnectionGuard`).
    """

    def __init__(
        self,
        mcp: Server[Any],
        sock: socket.socket,
        token: str,
        *,
        header_timeout_s: float = HEADER_TIMEOUT_S,
        max_unauthenticated: int = MAX_UNAUTHENTICATED,
    ) -> None:
        self.sock = sock
        self.port: int = sock.getsockname()[1]
        self.manager = StreamableHTTPSessionManager(
            app=mcp,
            stateless=True,
            json_response=False,
            # Host and Origin are checked by GuardedApp, with 403 for both.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self.app = GuardedApp(token, self.manager.handle_request)
        self.guard = ConnectionGuard(
            token, header_timeout_s=header_timeout_s, max_unauthenticated=max_unauthenticated
        )
        config = uvicorn.Config(
            self.app,
            http=self.guard.protocol(),
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            timeout_keep_alive=5,
            timeout_graceful_shutdown=1,
        )
        self._server = _QuietServer(config)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{MCP_PATH}"

    @property
    def open_connections(self) -> int:
        """How many connections the listener holds open, authenticated or not."""
        return len(self._server.server_state.connections)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[HttpServer]:
        """Serve while the block runs; at its end, close the listener and end open calls."""
        async with self.manager.run(), anyio.create_task_group() as tg:
            tg.start_soon(self._serve)
            try:
                yield self
            finally:
                self.close()
                tg.cancel_scope.cancel()

    async def _serve(self) -> None:
        await self._server.serve(sockets=[self.sock])

    def close(self) -> None:
        """Stop accepting requests and end open calls."""
        self.app.close_calls()
        self._server.should_exit = True
        self._server.force_exit = True
