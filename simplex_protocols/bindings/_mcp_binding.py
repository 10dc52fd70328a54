"""The MCP binding: one JSON-RPC request of MCP 2026-07-28 or later in, its answer out.

A thin adapter over the official ``mcp`` SDK. Each request takes the path of the SDK's own
single-exchange HTTP entry (``mcp/server/_streamable_http_modern.py``), without HTTP:

1. ``classify_inbound_request``: the ``_meta`` envelope is there and names a served revision
   (else the SDK's -32602 or -32022);
2. ``Connection.from_envelope``: a born-ready connection for this one request;
3. ``serve_one`` with a dispatch context whose notifications become replies in a conversation
   (and are dropped over Service RPC);
4. ``modern_error_data``: the SDK's mapping of an exception to a JSON-RPC error.

What the binding adds is what the spec's "MCP binding" says and the SDK does not know:
the caller of each request (in the SDK's request context), cancellation by
``notifications/cancelled`` from the same caller, ``conversation_required`` over Service RPC,
the answer to a legacy ``initialize``, the size-limit replacement, and a ``requestState``
sealed with the bot's own key and bound to the caller.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, cast

import anyio

# Private parts of mcp 2.3 (pyproject.toml pins mcp to 2.3.x): _otel's middleware class, to
# take the SDK's telemetry out of the chain (telemetry=False, or no tracer provider), and
# runner.modern_error_data (not in runner.__all__), the SDK's own exception-to-error mapping;
# no public API gives either.
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.runner import ServerRunner, aclose_shielded, modern_error_data, serve_one
from mcp.shared.dispatcher import CallOptions, as_request_id, coerce_request_id
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import InboundLadderRejection, InboundModernRoute, classify_inbound_request
from mcp.shared.jsonrpc_dispatcher import (
    cancelled_request_id_from_params,
    progress_token_from_params,
)
from mcp.shared.message import MessageMetadata, ServerMessageMetadata
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ServerEvent,
    ToolsListChanged,
)
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    PROTOCOL_VERSION_META_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPCNotification,
    JSONRPCRequest,
    ProgressToken,
    RequestId,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from opentelemetry import trace
from pydantic import ValidationError

from simplex_protocols import _wire
from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols.errors import MessageTooLargeError
from simplex_protocols.transports import Caller, Emit, EnvelopeOutcome

from ._mcp_caller import is_final
from ._mcp_context import (
    ConversationRequired,
    caller_principal,
    is_marked_needs_conversation,
    principal_of,
)
from ._mcp_fastmcp import lowlevel_server_of
from ._mcp_pages import (
    LIST_METHODS,
    CursorError,
    ItemTooLarge,
    ListSnapshots,
    chat_measure,
    decode_cursor,
    next_page,
    rpc_measure,
)

if TYPE_CHECKING:
    from fastmcp import FastMCP

__all__ = ["MCPBinding"]

logger = logging.getLogger("simplex_protocols.bindings.mcp")

#: The methods whose answer is a stream of notifications, not one response: served only in a
#: conversation (AMB-30).
_STREAMING_METHODS: Final = frozenset({"subscriptions/listen"})

#: At most this many characters of a parse problem go into the error's ``data``.
_MAX_REASON_CHARS: Final = 200

CONVERSATION_REQUIRED: Final = "conversation_required"
TOO_LARGE: Final = "too_large"

#: The command a chat reply quotes is not known to the binding, only the request it carried;
#: the command is taken to be up to twice the request's compact JSON and this many bytes more
#: (the ``/_call [@member] mcp`` prefix, and the spaces of a caller who pretty-prints).
_COMMAND_SLACK_BYTES: Final = 256


#: The lists a list-changed event of the server's subscription bus changes.
_CHANGED_LISTS: Final[Mapping[type, tuple[str, ...]]] = {
    ToolsListChanged: ("tools/list",),
    PromptsListChanged: ("prompts/list",),
    ResourcesListChanged: ("resources/list", "resources/templates/list"),
}


class _ResponseTooLarge(Exception):
    """Over Service RPC: the response cannot be made to fit (MCP-MSG-7, too_large)."""


def _rpc_outcome(exc: ConversationRequired | _ResponseTooLarge) -> EnvelopeOutcome:
    """The envelope error of a Service RPC call that ended with ``exc``."""
    if isinstance(exc, ConversationRequired):
        # MCP-MSG-8: the tool said so while it ran (require_conversation).
        return EnvelopeOutcome(CONVERSATION_REQUIRED, exc.reason)
    # MCP-MSG-7, RPC-ERR-7: over Service RPC, a response above the size limit is replaced
    # "with the envelope error too_large".
    return EnvelopeOutcome(TOO_LARGE, "a list item is larger than a Service RPC response")


def _quoted_command(prepared: _Prepared) -> str:
    """A text at least as large as the ``/_call`` command a reply to ``prepared`` quotes."""
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": prepared.request_id}
    request["method"] = prepared.method
    if prepared.params is not None:
        request["params"] = prepared.params
    text = _wire.dumps(request)
    return text + " " * (len(text) + _COMMAND_SLACK_BYTES)


def _error(
    request_id: RequestId | None, code: int, message: str, data: Any = None
) -> dict[str, Any]:
    """A JSON-RPC error response; ``"id": null`` when the request's id is unknown."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _invalid_request(request_id: RequestId | None) -> dict[str, Any]:
    return _error(request_id, INVALID_REQUEST, "Invalid Request")


@dataclass
class _DispatchContext:
    """A ``mcp.shared.dispatcher.DispatchContext`` for one inbound request.

    Like the SDK's ``_SingleExchangeDispatchContext``, but notifications go to the transport's
    ``emit`` (one reply each, in a conversation) instead of an SSE stream, and nowhere over
    Service RPC. There is no back-channel: a 2026-07-28 server sends no requests.
    """

    transport: TransportContext
    request_id: RequestId | None
    message_metadata: MessageMetadata
    progress_token: ProgressToken | None = None
    sink: Emit | None = None
    can_send_request: bool = field(default=False, init=False)
    _cancel_requested: anyio.Event | None = field(default=None, init=False, repr=False)

    @property
    def cancel_requested(self) -> anyio.Event:
        """Set when the caller cancels the request. Made when first asked for: most requests
        are never cancelled, and nothing reads it over Service RPC."""
        if self._cancel_requested is None:
            self._cancel_requested = anyio.Event()
        return self._cancel_requested

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        if self.sink is None:
            return  # Service RPC: one response and nothing else
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        try:
            await self.sink(message)
        except MessageTooLargeError:
            # A sink that cannot send a notification whole (the chat transport replaces one
            # over the limit instead, AMB-31 reading B): notifications are optional
            # (MCP-MSG-3), so the request goes on.
            logger.debug("dropped %s: over the message size limit", method)
        except Exception:
            # Notifications are advisory, as on every SDK transport: a failed send must not
            # fail the request. The response goes through the transport, which sees the error.
            logger.warning("could not send %s", method, exc_info=True)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        # MCP-MSG-3: progress only for a request that carries a progress token.
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify("notifications/progress", params)


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A request that passed the SDK's inbound ladder."""

    request_id: RequestId
    method: str
    params: dict[str, Any] | None
    route: InboundModernRoute


@dataclass(slots=True)
class _InFlight:
    scope: anyio.CancelScope
    dctx: _DispatchContext


def _subscription_bus(server: Server[Any], mcp_server: MCPServer[Any] | None) -> Any:
    """The bus the server publishes its list changes on (``subscriptions/listen``), or ``None``.

    The SDK's ``ListenHandler`` serves ``subscriptions/listen`` from it, and ``MCPServer``
    keeps it even when it serves no ``subscriptions/listen``; neither has a public accessor.
    A server with neither has its kept list pages expire on the clock only.
    """
    entry = server.get_request_handler("subscriptions/listen")
    bus = getattr(getattr(entry, "handler", None), "_bus", None)
    if bus is None and mcp_server is not None:
        bus = getattr(mcp_server, "_subscriptions", None)
    return bus if callable(getattr(bus, "subscribe", None)) else None


def records_traces(provider: trace.TracerProvider) -> bool:
    """Whether ``provider`` is one set up to record spans: not the OpenTelemetry API's own
    stand-in (``ProxyTracerProvider``, which the API hands out until a provider is set, or
    ``NoOpTracerProvider``)."""
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def _served_versions(versions: Iterable[str] | None) -> tuple[str, ...]:
    if versions is None:
        # Newest first: a declaration lists versions in the bot's order of preference.
        return tuple(reversed(MODERN_PROTOCOL_VERSIONS))
    chosen = tuple(versions)
    if not chosen:
        raise ValueError("MCPBinding needs at least one MCP revision to serve")
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"MCP revisions are listed twice: {list(chosen)}")
    for version in chosen:
        # MCP-VER-1: revisions from 2026-07-28 on, and only those the SDK can serve.
        if version not in MODERN_PROTOCOL_VERSIONS:
            raise ValueError(
                f"MCP revision {version!r} is not served by the mcp SDK installed "
                f"(it serves {list(MODERN_PROTOCOL_VERSIONS)} on one-shot transports)"
            )
    return chosen


class MCPBinding:
    """Serve an MCP server built with the ``mcp`` SDK over the SimpleX transports.

    Args:
        server: an ``MCPServer`` (tool decorators and all), a lowlevel ``Server``, or a
            ``fastmcp.FastMCP`` server (fastmcp 4.x, extra ``simplex-protocols[fastmcp]``).
        versions: the MCP revisions to serve and declare, in order of preference; by default
            every per-request-envelope revision the SDK serves, newest first (today
            ``("2026-07-28",)``). Each must be one of ``MODERN_PROTOCOL_VERSIONS``.
        request_state_keys: the secrets that seal a multi-round-trip ``requestState`` (each 32
            bytes or more; the first seals, all unseal: see :func:`load_or_create_secret`).
            With ``None`` a random key is made for this process, and states do not survive a
            restart.
        request_state_ttl_s: how long a ``requestState`` stays valid (the SDK's wall clock).
        conversation_tools: names of tools answered over Service RPC with
            ``conversation_required`` without running them (MCP-MSG-8); tools marked with
            :func:`needs_conversation` are added to these.
        telemetry: keep the SDK's ``OpenTelemetryMiddleware``, which makes a span of every
            request and reads the caller's W3C trace context from ``_meta``. ``True`` keeps it,
            ``False`` removes it from the server's middleware. ``None`` (the default) keeps it
            only when OpenTelemetry has a tracer provider when the binding starts (set with
            ``opentelemetry.trace.set_tracer_provider`` or named by
            ``OTEL_PYTHON_TRACER_PROVIDER``): without one its spans record nothing, yet it
            costs memory and CPU time on every call (``bench/rpc.py`` measures both).
        clock: bounds Service RPC calls to their ``budget_s`` (``SystemClock`` by default).

    The binding installs the SDK's ``RequestStateBoundary`` middleware in the server, keyed
    with ``request_state_keys`` and bound to the caller (:func:`caller_principal`); it replaces
    the one ``MCPServer`` installs by itself. Pass keys here, not to ``MCPServer``.

    Use it as an async context manager, which enters the server's lifespan once::

        async with MCPBinding(server, request_state_keys=[secret]) as binding:
            ...  # the transports call binding.handle_chat / binding.handle_rpc

    Raises:
        BindingConfigError: ``server`` is of none of those kinds (``unsupported_server``; also
            a ``TypeError``).
        ValueError: a revision is not served by the SDK, or a key is shorter than 32 bytes.
    """

    def __init__(
        self,
        server: MCPServer[Any] | Server[Any] | FastMCP[Any],
        *,
        versions: Iterable[str] | None = None,
        request_state_keys: Sequence[bytes | str] | None = None,
        request_state_ttl_s: float = 600.0,
        conversation_tools: Iterable[str] = (),
        telemetry: bool | None = None,
        clock: Clock | None = None,
    ) -> None:
        # An MCPServer or a FastMCP server is served through its lowlevel server; any other
        # kind is a BindingConfigError that names the kinds served (_mcp_fastmcp).
        self._server: Server[Any]
        self._mcp_server: MCPServer[Any] | None
        self._server, self._mcp_server = lowlevel_server_of(server)
        self._versions = _served_versions(versions)
        self._conversation_tools = frozenset(conversation_tools)
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._install_request_state(request_state_keys, request_state_ttl_s)
        self._telemetry = telemetry
        if telemetry is False:
            self._drop_telemetry()
        self._stack: AsyncExitStack | None = None
        self._lifespan_state: Any = None
        self._in_flight: dict[tuple[str, RequestId], list[_InFlight]] = {}
        self._chat_transport = TransportContext(kind="simplex-chat", can_send_request=False)
        self._rpc_transport = TransportContext(kind="simplex-rpc", can_send_request=False)
        # The server pages a list was cut from, for its next pages (_mcp_pages).
        self._list_snapshots = ListSnapshots()

    def _install_request_state(self, keys: Sequence[bytes | str] | None, ttl_s: float) -> None:
        # MCP-MSG-6: the requestState of an input_required result is sealed with the bot's key
        # (so it survives a restart) and bound to the caller (so nobody else can continue it).
        security = RequestStateSecurity(
            keys=list(keys) if keys is not None else [os.urandom(32)],
            ttl=ttl_s,
            bind_principal=caller_principal,
        )
        boundary = RequestStateBoundary(security, default_audience=self._server.name)
        chain = self._server.middleware
        for index, middleware in enumerate(chain):
            if isinstance(middleware, RequestStateBoundary):
                chain[index] = boundary
                return
        # Where MCPServer puts it: inside OpenTelemetry, outside the author's own middleware.
        position = next(
            (i + 1 for i, m in enumerate(chain) if isinstance(m, OpenTelemetryMiddleware)), 0
        )
        chain.insert(position, boundary)

    def _drop_telemetry(self) -> None:
        self._server.middleware[:] = [
            m for m in self._server.middleware if not isinstance(m, OpenTelemetryMiddleware)
        ]

    # ------------------------------------------------------------------ the Binding contract

    @property
    def name(self) -> str:
        """``"mcp"``."""
        return "mcp"

    @property
    def versions(self) -> tuple[str, ...]:
        """The MCP revisions served, in order of preference (the ``protocols`` declaration)."""
        return self._versions

    @property
    def server(self) -> Server[Any]:
        """The lowlevel SDK server the binding serves (an ``MCPServer``'s inner server)."""
        return self._server

    @property
    def in_flight(self) -> int:
        """How many conversation requests are being served now (Service RPC calls excluded)."""
        return sum(len(entries) for entries in self._in_flight.values())

    async def __aenter__(self) -> MCPBinding:
        if self._stack is not None:
            raise RuntimeError("this MCPBinding is already running")
        if self._telemetry is None and not records_traces(trace.get_tracer_provider()):
            self._drop_telemetry()
            logger.debug("no OpenTelemetry tracer provider: the SDK's spans are off")
        stack = AsyncExitStack()
        self._lifespan_state = await stack.enter_async_context(self._server.lifespan(self._server))
        bus = _subscription_bus(self._server, self._mcp_server)
        if bus is not None:
            stack.callback(bus.subscribe(self._list_changed))
        self._stack = stack
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    def _check_running(self) -> None:
        if self._stack is None:
            raise RuntimeError("MCPBinding is not running: enter it first (async with binding:)")

    async def handle_chat(self, request: Mapping[str, Any], caller: Caller, emit: Emit) -> None:
        """Answer ``/_call mcp <request>`` in a conversation.

        Notifications the server sends for the request (``notifications/progress`` when the
        request has a progress token, the events of ``subscriptions/listen``) are emitted
        first, each as one reply (MCP-MSG-3); the JSON-RPC response ends the answer (MCP-MSG-2). A
        bad request is answered with its JSON-RPC error, never with an exception. A
        notification from the caller is acted on and answered with nothing (AMB-30):
        ``notifications/cancelled`` cancels that caller's request with the ``requestId``,
        which then gets no response.

        Raises:
            RuntimeError: the binding is not running (``async with binding:``).
            Exception: whatever ``emit`` raises for the response (the transport's own error).
        """
        self._check_running()
        if not isinstance(cast(object, request), Mapping):
            await emit(_invalid_request(None))
            return
        if "id" not in request:
            error = await self._receive_notification(request, caller)
            if error is not None:
                await emit(error)
            return
        prepared = self._prepare(request)
        if isinstance(prepared, dict):
            await emit(prepared)
            return
        response = await self._serve_cancellable(prepared, caller, emit)
        if response is not None:
            await emit(response)

    async def handle_rpc(
        self, request: Any, caller: Caller, *, budget_s: float
    ) -> dict[str, Any] | EnvelopeOutcome:
        """Answer a Service RPC envelope's ``request``.

        Returns the JSON-RPC response, or ``EnvelopeOutcome("conversation_required")`` for:
        a tool that needs a conversation (MCP-MSG-8), ``subscriptions/listen``, a notification
        (AMB-30, reading C), and a call still running after ``budget_s`` (it is cancelled). A
        request that is not a valid JSON-RPC request gets the JSON-RPC error inside the
        response (AMB-28, reading A). Notifications the server sends are dropped.

        Raises:
            RuntimeError: the binding is not running (``async with binding:``).
        """
        self._check_running()
        if not isinstance(request, Mapping):
            return _invalid_request(None)
        if "id" not in request:
            try:
                JSONRPCNotification.model_validate(request)
            except ValidationError:
                return _invalid_request(None)
            # AMB-30 (reading C): a Service RPC response has nothing to carry for it.
            return EnvelopeOutcome(
                CONVERSATION_REQUIRED, "a notification has no response; send it in a conversation"
            )
        prepared = self._prepare(request)
        if isinstance(prepared, dict):
            return prepared
        reason = self._conversation_reason(prepared)
        if reason is not None:
            # MCP-MSG-8: "Over Service RPC, a call of a tool that needs a conversation is
            # answered with the envelope error conversation_required."
            return EnvelopeOutcome(CONVERSATION_REQUIRED, reason)
        dctx = self._dispatch_context(prepared, caller, sink=None)
        answer: dict[str, Any] | EnvelopeOutcome | None = None
        if isinstance(self._clock, SystemClock):
            with anyio.move_on_after(budget_s):
                # _call_rpc's work without its coroutine: one frame fewer per call in flight.
                try:
                    answer = await self._call(prepared, dctx, caller, rpc=True)
                except (ConversationRequired, _ResponseTooLarge) as exc:
                    answer = _rpc_outcome(exc)
        else:
            answer = await self._call_rpc_on_clock(prepared, dctx, caller, budget_s)
        if answer is None:
            # The call could not finish inside the Service RPC response window: it is
            # cancelled, and the requester is told to make it in a conversation, where it
            # has no time limit (as A2A-RPC-3 does for a long task).
            return EnvelopeOutcome(
                CONVERSATION_REQUIRED,
                "the call did not finish in the Service RPC response window",
            )
        return answer

    def parse_error(self, raw_request: str, reason: str) -> dict[str, Any]:
        """The answer to a request text that is not valid JSON (-32700) or not an object (-32600).

        The ``id`` is ``null``, as JSON-RPC requires when the request's id cannot be read
        (AMB-27, reading A). ``reason`` (at most 200 characters) is the error's ``data``.
        """
        return parse_error(raw_request, reason)

    def oversize_error(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """The replacement for a reply over the size limit (see :func:`oversize_error`)."""
        return oversize_error(message)

    def internal_error(
        self, request: Mapping[str, Any] | None, reason: str
    ) -> dict[str, Any] | None:
        """The answer to a call the bot could not finish (see :func:`internal_error`)."""
        return internal_error(request, reason)

    def is_final(self, request: Mapping[str, Any], message: Mapping[str, Any]) -> bool:
        """Whether ``message`` is the JSON-RPC response to ``request`` (see :func:`is_final`)."""
        return is_final(request, message)

    # ------------------------------------------------------------------ serving

    def _prepare(self, request: Mapping[str, Any]) -> _Prepared | dict[str, Any]:
        """Run the SDK's inbound ladder; an error response if the request does not pass."""
        try:
            req = JSONRPCRequest.model_validate(request)
        except ValidationError:
            return _invalid_request(as_request_id(request.get("id")))
        if req.method == "initialize":
            # AMB-21 (reading A): a handshake-era client gets -32022 and the served
            # revisions, as the SDK's dual-era loop answers an initialize on a 2026 connection.
            requested = (req.params or {}).get("protocolVersion")
            data: dict[str, Any] = {"supported": list(self._versions)}
            if isinstance(requested, str):
                data["requested"] = requested
            return _error(
                req.id,
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version: the initialize handshake is not served here; "
                "send each request with its _meta envelope",
                data,
            )
        # MCP-VER-2, MCP-VER-4: the envelope names a revision this bot serves, else -32602
        # (no envelope) or -32022 with the served revisions. headers=None: no HTTP rung.
        verdict = classify_inbound_request(
            request, headers=None, supported_modern_versions=self._versions
        )
        if isinstance(verdict, InboundLadderRejection):
            data = verdict.data
            if hasattr(data, "model_dump"):
                data = data.model_dump(mode="json")
            return _error(req.id, verdict.code, verdict.message, data)
        return _Prepared(req.id, req.method, req.params, verdict)

    def _conversation_reason(self, prepared: _Prepared) -> str | None:
        """Why a request cannot be answered over Service RPC, or ``None`` when it can."""
        if prepared.method in _STREAMING_METHODS:
            return f"{prepared.method} streams notifications: it needs a conversation"
        if prepared.method == "tools/call" and prepared.params is not None:
            tool = prepared.params.get("name")
            if isinstance(tool, str) and self._tool_needs_conversation(tool):
                return "this tool needs a conversation: call it with /_call in a chat"
        return None

    def _tool_needs_conversation(self, tool: str) -> bool:
        if tool in self._conversation_tools:
            return True
        if self._mcp_server is None:
            return False
        # MCPServer keeps its tools in a registry with no public lookup by name; the SDK's
        # own get_tool_input_schema hook reads the same one.
        registry = getattr(self._mcp_server, "_tool_manager", None)
        get_tool = getattr(registry, "get_tool", None)
        registered = get_tool(tool) if callable(get_tool) else None
        return registered is not None and is_marked_needs_conversation(
            getattr(registered, "fn", None)
        )

    def _dispatch_context(
        self, prepared: _Prepared, caller: Caller, *, sink: Emit | None
    ) -> _DispatchContext:
        transport = self._chat_transport if sink is not None else self._rpc_transport
        if caller.headers:
            transport = TransportContext(
                kind=transport.kind, can_send_request=False, headers=dict(caller.headers)
            )
        return _DispatchContext(
            transport=transport,
            request_id=prepared.request_id,
            # The caller reaches handlers as ctx.request (lowlevel) and
            # ctx.request_context.request (MCPServer); Context.headers reads caller.headers.
            message_metadata=ServerMessageMetadata(request_context=caller, can_send_request=False),
            progress_token=progress_token_from_params(prepared.params),
            sink=sink,
        )

    async def _call(
        self, prepared: _Prepared, dctx: _DispatchContext, caller: Caller, *, rpc: bool
    ) -> dict[str, Any]:
        """``serve_one`` and the SDK's error mapping: the JSON-RPC response (MCP-MSG-2).

        Raises:
            ConversationRequired: over Service RPC, the tool needs a conversation (MCP-MSG-8).
            _ResponseTooLarge: over Service RPC, a list item fits in no page (MCP-MSG-7).
        """
        try:
            if prepared.method in LIST_METHODS:
                return await self._list_page(prepared, dctx, caller, rpc=rpc)
            result = await self._serve(prepared, dctx, prepared.params)
        except ConversationRequired:
            if rpc:
                raise
            error = modern_error_data(ConversationRequired())
            return _error(prepared.request_id, error.code, error.message, error.data)
        except _ResponseTooLarge:
            raise
        except CursorError as exc:
            # MCP "Pagination": "Invalid cursors SHOULD result in an error with code -32602".
            return _error(prepared.request_id, INVALID_PARAMS, "Invalid cursor", exc.reason)
        except Exception as exc:
            error = modern_error_data(exc)
            return _error(prepared.request_id, error.code, error.message, error.data)
        if prepared.method == "server/discover":
            result = self._discover_result(result)
        # MCP-MSG-4: the response has the request's id.
        return {"jsonrpc": "2.0", "id": prepared.request_id, "result": result}

    def _serve(
        self, prepared: _Prepared, dctx: _DispatchContext, params: dict[str, Any] | None
    ) -> Awaitable[dict[str, Any]]:
        """One ``serve_one`` of the request's method with ``params``, on a fresh connection.

        Not a coroutine of its own: it hands back ``serve_one``'s, one frame fewer per call in
        flight.
        """
        route = prepared.route
        connection = Connection.from_envelope(
            route.protocol_version, route.client_info, route.client_capabilities
        )
        return serve_one(
            self._server,
            dctx,
            prepared.method,
            params,
            connection=connection,
            lifespan_state=self._lifespan_state,
        )

    async def _list_page(
        self, prepared: _Prepared, dctx: _DispatchContext, caller: Caller, *, rpc: bool
    ) -> dict[str, Any]:
        """A page of a list method that fits the transport the request came on (_mcp_pages).

        Raises:
            CursorError: the ``cursor`` param is not one of ours, or points past the list.
            _ResponseTooLarge: over Service RPC, the next item fits in no page.
        """
        params = dict(prepared.params or {})
        # A null cursor is the first page, as the SDK's own request models read it.
        given = params.pop("cursor", None)
        cursor = decode_cursor(given, prepared.method) if given is not None else None

        async def fetch(upstream: str | None) -> dict[str, Any]:
            # The server sees its own cursor, never ours.
            asked = params if upstream is None else {**params, "cursor": upstream}
            return await self._serve(prepared, dctx, asked)

        if rpc:
            measure = rpc_measure()
        else:
            measure = chat_measure(_quoted_command(prepared), in_group=caller.in_group)
        # The server's pages are kept per caller (a server may list different tools per
        # caller), and the headers it was given, which it may list by. Unsigned Service RPC
        # requesters cannot be told apart (principal None), so their kept pages are found by
        # whoever holds a cursor of them, as their requestState is.
        owner = (principal_of(caller), tuple(sorted(caller.headers.items())))
        page = await next_page(
            prepared.method,
            cursor,
            request_id=prepared.request_id,
            fetch=fetch,
            measure=measure,
            snapshots=self._list_snapshots.view(owner, self._clock.now()),
        )
        if isinstance(page, ItemTooLarge):
            logger.info(
                "an item of %s takes %d bytes on its own, over the %s limit of %d",
                prepared.method,
                page.size,
                measure.transport,
                page.limit,
            )
            if rpc:
                raise _ResponseTooLarge
            # MCP-MSG-7: in a conversation, "a response above the size limit is replaced with
            # a JSON-RPC error with code -32603".
            return oversize_error({"id": prepared.request_id})
        return page.response

    def _list_changed(self, event: ServerEvent) -> None:
        # A listener of the server's subscription bus: synchronous, and never raises.
        methods = _CHANGED_LISTS.get(type(event))
        if methods is not None:
            self._list_snapshots.drop(methods)
            logger.debug("the server changed its %s: kept pages dropped", ", ".join(methods))

    async def _call_rpc_on_clock(
        self, prepared: _Prepared, dctx: _DispatchContext, caller: Caller, budget_s: float
    ) -> dict[str, Any] | EnvelopeOutcome | None:
        """:meth:`_call_rpc` within ``budget_s`` on another clock than the real one (a
        ManualClock in tests), where a watchdog sleeps on it; ``None`` when it ran out."""
        answer: dict[str, Any] | EnvelopeOutcome | None = None

        async def watchdog(scope: anyio.CancelScope) -> None:
            await self._clock.sleep(budget_s)
            scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(watchdog, tg.cancel_scope)
            answer = await self._call_rpc(prepared, dctx, caller)
            tg.cancel_scope.cancel()
        return answer

    async def _call_rpc(
        self, prepared: _Prepared, dctx: _DispatchContext, caller: Caller
    ) -> dict[str, Any] | EnvelopeOutcome:
        try:
            return await self._call(prepared, dctx, caller, rpc=True)
        except (ConversationRequired, _ResponseTooLarge) as exc:
            return _rpc_outcome(exc)

    def _discover_result(self, result: dict[str, Any]) -> dict[str, Any]:
        # MCP-CAP-2: server/discover reports the revisions this binding serves and declares
        # (the SDK's handler reports every revision the SDK knows).
        supported = result.get("supportedVersions")
        if isinstance(supported, list):
            result = {**result, "supportedVersions": [v for v in supported if v in self._versions]}
        return result

    async def _serve_cancellable(
        self, prepared: _Prepared, caller: Caller, emit: Emit
    ) -> dict[str, Any] | None:
        """Serve a conversation request that ``notifications/cancelled`` can cancel."""
        dctx = self._dispatch_context(prepared, caller, sink=emit)
        key = (caller.key, coerce_request_id(prepared.request_id))
        response: dict[str, Any] | None = None
        with anyio.CancelScope() as scope:
            entry = _InFlight(scope, dctx)
            self._in_flight.setdefault(key, []).append(entry)
            try:
                response = await self._call(prepared, dctx, caller, rpc=False)
            finally:
                entries = self._in_flight.get(key, [])
                if entry in entries:
                    entries.remove(entry)
                if not entries:
                    self._in_flight.pop(key, None)
        if scope.cancel_called:
            return None  # MCP: a cancelled request gets no response
        return response

    async def _receive_notification(
        self, message: Mapping[str, Any], caller: Caller
    ) -> dict[str, Any] | None:
        """Act on a notification from the caller (AMB-30); an error only for a malformed one."""
        try:
            note = JSONRPCNotification.model_validate(message)
        except ValidationError:
            return _invalid_request(None)
        if note.method == "notifications/cancelled":
            request_id = cancelled_request_id_from_params(note.params)
            if request_id is not None:
                self._cancel(caller, request_id)
            return None
        await self._deliver_notification(note, caller)
        return None

    def _cancel(self, caller: Caller, request_id: RequestId) -> None:
        # Keyed by the caller: a request id chosen by one contact or member never reaches
        # another's request (the reason the SDK's HTTP entry drops posted cancellations).
        entries = self._in_flight.get((caller.key, coerce_request_id(request_id)), [])
        for entry in list(entries):
            entry.dctx.cancel_requested.set()
            entry.scope.cancel()
        if entries:
            logger.debug("cancelled %d request(s) at the caller's request", len(entries))

    async def _deliver_notification(self, note: JSONRPCNotification, caller: Caller) -> None:
        """Hand a notification to the server's own notification handlers, through the SDK."""
        params = note.params
        meta = params.get("_meta") if params is not None else None
        envelope: Mapping[str, Any] = meta if isinstance(meta, Mapping) else {}
        version = envelope.get(PROTOCOL_VERSION_META_KEY, self._versions[0])
        if version not in self._versions:
            logger.debug("dropped %s: revision not served", note.method)
            return
        connection = Connection.from_envelope(
            version, envelope.get(CLIENT_INFO_META_KEY), envelope.get(CLIENT_CAPABILITIES_META_KEY)
        )
        dctx = _DispatchContext(
            transport=self._chat_transport,
            request_id=None,
            message_metadata=ServerMessageMetadata(request_context=caller, can_send_request=False),
        )
        runner = ServerRunner(self._server, connection, self._lifespan_state)
        try:
            await runner.on_notify(dctx, note.method, params)
        finally:
            await aclose_shielded(connection)


# ---------------------------------------------------------------------- module-level answers


def parse_error(raw_request: str, reason: str) -> dict[str, Any]:
    """The JSON-RPC answer to a request text that is not a JSON object (AMB-27, reading A).

    -32700 (parse error) when the text is not JSON, -32600 (invalid request) when it is JSON
    but not an object (a batch, a string, a number...). The ``id`` is ``null``; ``reason`` (at
    most 200 characters) is the error's ``data``.
    """
    data = reason[:_MAX_REASON_CHARS] if reason else None
    try:
        _wire.loads(raw_request)
    except ValueError:
        return _error(None, PARSE_ERROR, "Parse error", data)
    return _error(None, INVALID_REQUEST, "Invalid Request", data)


def internal_error(request: Mapping[str, Any] | None, reason: str) -> dict[str, Any] | None:
    """The answer to a request the bot could not finish: a handler failed, or the bot is
    shutting down while the call runs.

    A JSON-RPC error -32603 with the request's ``id`` (``null`` when it is not a string or an
    integer) and ``reason`` (at most 200 characters; the transport's words, such as "internal
    error" or "the bot is shutting down", never a handler's exception) as its message. It ends
    the answer (MCP-MSG-2). ``None`` for a notification, which is never answered (AMB-30), and
    for a request that could not be read (the transport answered it with :func:`parse_error`).
    """
    if not isinstance(request, Mapping) or "id" not in request:
        return None
    return _error(
        as_request_id(request.get("id")),
        INTERNAL_ERROR,
        reason[:_MAX_REASON_CHARS] or "Internal error",
    )


def oversize_error(message: Mapping[str, Any]) -> dict[str, Any]:
    """The replacement for an MCP reply over the size limit (MCP-MSG-7).

    A JSON-RPC error -32603 with the id of ``message`` (``null`` when it has none). It replaces
    the response, and in a conversation also a notification over the limit (the chat
    transport passes the request then, so the error has its id; AMB-31, reading B).
    """
    # MCP-MSG-7: "A response above the size limit is replaced with a JSON-RPC error with code
    # -32603 in a conversation".
    return _error(
        as_request_id(message.get("id")),
        INTERNAL_ERROR,
        "The response is larger than a SimpleX message can carry",
    )
