"""HTTP: the listener on 127.0.0.1, the bearer token, ``/mcp``, and the ``mcp`` SDK's handler.

====================  =====================================================================
layer                 what
====================  =====================================================================
listener              127.0.0.1:PORT (uvicorn, h11); no request timeout, so calls may wait
                      for hours; keep-alive 5 s
bearer token          ``Authorization: Bearer <DIR/token>``, compared in constant time; 401
path                  ``/mcp`` only; 404 otherwise, a request target that is not a URL included
Origin, Host          no Origin or a localhost origin on any port; a localhost Host; 403
protocol              the SDK's Streamable HTTP: 2026-07-28 per request, the 2025 era
                      stateless; JSON or SSE per call, SSE keep-alive pings
cancellation          the client closing the response stream cancels the tool's handler
tools                 :mod:`mcp_server.tools` on the SDK's low-level server
====================  =====================================================================
"""

from __future__ import annotations

import contextlib
import errno
import hmac
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
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

from simplex_protocols._wire import dumps
from simplex_protocols.errors import CoreConnectionError, SimplexError

from .agent import Agent
from .errors import ToolError
from .log import CORE_FAILURES, failure_text
from .tools import TOOLS, instructions, validation_error

__all__ = [
    "MCP_PATH",
    "GuardedApp",
    "HttpServer",
    "PortInUseError",
    "bind_port",
    "build_mcp_server",
]

MCP_PATH: Final = "/mcp"
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


def _tool_list(host_mode: bool) -> list[types.Tool]:
    tools = []
    for spec in TOOLS:
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
    agent: Agent, *, name: str, display: str, host_mode: bool, version: str = "0.1.0"
) -> Server[Any]:
    """The SDK's low-level server with the five tools, whose handlers call ``agent``."""
    handlers: dict[str, ToolHandler] = {
        "connect": agent.connect,
        "send": agent.send,
        "receive": agent.receive,
        "list": agent.list_chats,
        "leave": agent.leave,
    }
    tools = _tool_list(host_mode)

    async def on_list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(
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
        for spec in TOOLS:
            if spec.name == tool:
                return spec.input_schema
        return None

    return Server(
        f"simplex-{name}",
        version=version,
        title=display,
        instructions=instructions(display),
        get_tool_input_schema=input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value)
    return None


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


class GuardedApp:
    """The ASGI app: token, path, Origin and Host checks, then the SDK's handler."""

    def __init__(
        self, token: str, inner: Callable[[Scope, Receive, Send], Awaitable[None]]
    ) -> None:
        self._expected = f"Bearer {token}".encode()
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
        authorization = _header(scope, b"authorization") or b""
        if not hmac.compare_digest(authorization, self._expected):
            await _plain(send, 401, "Unauthorized", [(b"www-authenticate", b"Bearer")])
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
    """The MCP endpoint at ``http://127.0.0.1:PORT/mcp`` on an already bound socket."""

    def __init__(self, mcp: Server[Any], sock: socket.socket, token: str) -> None:
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
        config = uvicorn.Config(
            self.app,
            http="h11",
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
