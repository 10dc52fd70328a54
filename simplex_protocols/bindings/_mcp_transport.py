"""The ``mcp`` SDK's client over SimpleX: :class:`SimplexTransport`.

``mcp.Client(SimplexTransport(link, core=...))`` talks to a SimpleX bot with the SDK's own API
(``list_tools``, ``call_tool``, ``read_resource``, ``get_prompt``, progress callbacks,
cancellation). The SDK writes JSON-RPC messages to the transport's streams; each request goes
to the bot as one Service RPC request or one ``/_call mcp`` (the binding's era: revision
2026-07-28 and later, one request per call, no ``initialize``), and the answer comes back on
the read stream, notifications first.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Final

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

# Private module of mcp 2.3 (pinned in pyproject.toml): the SDK's name for a client transport's
# streams, which this class gives Client.
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage
from mcp_types import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    REQUEST_TIMEOUT,
    UNSUPPORTED_PROTOCOL_VERSION,
    jsonrpc_message_adapter,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from simplex_protocols._clock import Clock
from simplex_protocols.chat_call import Reply
from simplex_protocols.core import ChatAPI, ChatCore
from simplex_protocols.errors import (
    CallTimeoutError,
    ConversationRequiredError,
    CoreConnectionError,
    ServiceError,
    SimplexError,
    TooLargeError,
)
from simplex_protocols.rpc import KeyStore

from ._mcp_caller import is_final
from ._simplex_client import DEFAULT_CONNECT_WAIT_S, BotLink, TransportChoice

__all__ = ["SIMPLEX_ERROR_KEY", "SimplexTransport"]

logger = logging.getLogger("simplex_protocols.bindings.mcp")

#: The key, in the ``data`` of an error the transport answers itself, of the toolkit's stable
#: error code (``conversation_required``, ``rate_limited``, ``timeout``,
#: ``core_connection_lost`` ...): ``MCPError.error.data["simplexError"]``.
SIMPLEX_ERROR_KEY: Final = "simplexError"

#: Methods that only a conversation can serve (an endless notification stream).
_CONVERSATION_METHODS: Final = frozenset({"subscriptions/listen"})

#: How many SDK messages may wait in each direction.
_STREAM_BUFFER: Final = 64


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _error_for(request_id: Any, exc: SimplexError) -> dict[str, Any]:
    """The JSON-RPC error the SDK raises as ``MCPError`` for one of our failures."""
    data: dict[str, Any] = {SIMPLEX_ERROR_KEY: exc.code}
    if isinstance(exc, ServiceError) and exc.retry_after is not None:
        data["retryAfter"] = exc.retry_after
    if isinstance(exc, CallTimeoutError):
        code = REQUEST_TIMEOUT
    elif isinstance(exc, CoreConnectionError):
        code = CONNECTION_CLOSED
    else:
        code = INTERNAL_ERROR
    return _error(request_id, code, str(exc), data)


class SimplexTransport:
    """A client transport of the ``mcp`` SDK that reaches a SimpleX bot.

    Use it as ``mcp.Client``'s server::

        async with mcp.Client(SimplexTransport(link, core="ws://127.0.0.1:5225")) as client:
            tools = await client.list_tools()

    Args:
        target: the bot's contact address link or SimpleX name.
        core: a ``--core`` string (``ws://HOST:PORT``, ``lib[:DB_PREFIX]``, ``sim:NAME``),
            opened and closed with the client, or an entered ``ChatCore`` (or ``ChatAPI``).
            A core opened from a string gets a user (``display_name``, peer type ``agent``)
            when it has none; a given core must have an active user.
        transport: ``"rpc"`` (Service RPC only), ``"chat"`` (a conversation only), or
            ``"auto"``: Service RPC, and the same request in a conversation when the bot
            answers ``conversation_required`` (MCP-MSG-8, RPC-ERR-9) or ``too_large``
            (MCP-MSG-7); ``subscriptions/listen`` always in a conversation.
        sign: sign Service RPC requests with this bot's own key from ``key_store``
            (RPC-SIG-5).
        key_store: where signing keys live (needed with ``sign``).
        timeout_s: how long each request may take (default: 30 s, the core's default).
        display_name: see ``core``.
        clock: the clock of the waits.
        connect_wait_s: how long a new conversation may take to be accepted.

    Over Service RPC the bot sends no notifications, so progress callbacks are called only
    in a conversation. Cancelling a call (the SDK's ``notifications/cancelled``) stops the
    wait; in a conversation it is also sent to the bot, which stops the request.

    A failure of the transport itself reaches the SDK caller as ``mcp.MCPError``, whose
    ``error.data["simplexError"]`` is the toolkit's stable code (:data:`SIMPLEX_ERROR_KEY`):
    ``rate_limited``, ``unsupported_protocol``, ``conversation_required`` (``"rpc"`` only)
    and the other envelope codes (a refused call), ``timeout`` (-32001), ``core_connection_lost``
    (-32000), ``service_transport_error`` (the address takes no service requests),
    ``core_error``, ``own_address``, ``connection_pending`` (the conversation cannot be
    opened). A legacy ``initialize`` is answered -32022 with the revisions this binding
    carries, without reaching the bot (MCP-VER-5).

    Raises:
        LinkError: ``target`` is no SimpleX link or name.
        CoreOptionError: ``core`` is an invalid ``--core`` string.
        ValueError: ``transport`` is not ``auto``, ``rpc`` or ``chat``; ``sign`` without a
            ``key_store``.
    """

    def __init__(
        self,
        target: str,
        *,
        core: str | ChatCore | ChatAPI,
        transport: TransportChoice = "auto",
        sign: bool = False,
        key_store: KeyStore | None = None,
        timeout_s: float | None = None,
        display_name: str = "simplex-protocols",
        clock: Clock | None = None,
        connect_wait_s: float = DEFAULT_CONNECT_WAIT_S,
    ) -> None:
        if transport not in ("auto", "rpc", "chat"):
            raise ValueError(f"transport is auto, rpc or chat, not {transport!r}")
        if sign and key_store is None:
            raise ValueError("sign=True needs a key_store")
        self.transport: TransportChoice = transport
        self.sign = sign
        self.timeout_s = timeout_s
        self.link = BotLink(
            target,
            core=core,
            display_name=display_name,
            clock=clock,
            key_store=key_store,
            connect_wait_s=connect_wait_s,
        )
        self._tg: anyio.abc.TaskGroup | None = None
        self._to_client: MemoryObjectSendStream[SessionMessage | Exception] | None = None
        self._in_flight: dict[tuple[type, Any], tuple[anyio.CancelScope, list[str]]] = {}

    async def __aenter__(self) -> TransportStreams:
        await self.link.__aenter__()
        to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](
            _STREAM_BUFFER
        )
        client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](
            _STREAM_BUFFER
        )
        self._to_client = to_client
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._pump, from_client)
        return client_reads, client_writes

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._tg is not None:
                self._tg.cancel_scope.cancel()
                await self._tg.__aexit__(None, None, None)
        finally:
            if self._to_client is not None:
                await self._to_client.aclose()
            await self.link.__aexit__(exc_type, exc, tb)

    # ------------------------------------------------------------------ the SDK's messages

    async def _pump(self, from_client: MemoryObjectReceiveStream[SessionMessage]) -> None:
        assert self._tg is not None
        async with from_client:
            async for item in from_client:
                message = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
                method = message.get("method")
                if not isinstance(method, str):
                    continue  # an answer to a server request: this binding has none
                if "id" not in message:
                    await self._notification(method, message)
                elif method == "initialize":
                    await self._send(self._legacy_refusal(message))
                else:
                    self._tg.start_soon(self._serve, message)

    def _legacy_refusal(self, request: Mapping[str, Any]) -> dict[str, Any]:
        # MCP-VER-5: revisions before 2026-07-28 begin with initialize, outside this binding;
        # the SDK's answer to initialize on a modern connection is -32022 with the revisions.
        params = request.get("params")
        requested = params.get("protocolVersion") if isinstance(params, Mapping) else None
        return _error(
            request.get("id"),
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": list(MODERN_PROTOCOL_VERSIONS), "requested": requested},
        )

    async def _notification(self, method: str, message: Mapping[str, Any]) -> None:
        if method != "notifications/cancelled":
            return  # notifications/initialized and the like belong to the handshake era
        params = message.get("params")
        request_id = params.get("requestId") if isinstance(params, Mapping) else None
        entry = self._in_flight.get((type(request_id), request_id))
        if entry is None:
            return
        scope, carried_by = entry
        scope.cancel()
        if carried_by and carried_by[-1] == "chat":
            # The bot stops the request only when the same caller says so, in the same
            # conversation (a cancellation from anyone else could stop others' requests).
            try:
                await self.link.notify("mcp", message)
            except SimplexError as exc:
                logger.info("the cancellation did not reach the bot: %s", exc.code)

    async def _send(self, message: Mapping[str, Any]) -> None:
        assert self._to_client is not None
        parsed = jsonrpc_message_adapter.validate_python(message, by_name=False)
        await self._to_client.send(SessionMessage(parsed))

    # ------------------------------------------------------------------ one request

    async def _serve(self, request: dict[str, Any]) -> None:
        request_id = request.get("id")
        key = (type(request_id), request_id)
        carried_by: list[str] = []
        with anyio.CancelScope() as scope:
            self._in_flight[key] = (scope, carried_by)
            try:
                answer = await self._answer(request, carried_by)
            except SimplexError as exc:
                answer = _error_for(request_id, exc)
            finally:
                self._in_flight.pop(key, None)
            try:
                await self._send(answer)
            except Exception as exc:
                # The bot's answer is no MCP message the SDK accepts.
                logger.info("an answer the SDK refused: %s", type(exc).__name__)
                await self._send(
                    _error(request_id, INTERNAL_ERROR, "the bot's answer is not a JSON-RPC message")
                )
        # A cancelled request gets no answer: the SDK has stopped waiting for it.

    async def _answer(self, request: dict[str, Any], carried_by: list[str]) -> Mapping[str, Any]:
        method = request.get("method")
        if self.transport == "chat" or (
            self.transport == "auto" and method in _CONVERSATION_METHODS
        ):
            carried_by.append("chat")
            return await self._in_conversation(request)
        carried_by.append("rpc")
        try:
            response = await self.link.request(
                "mcp", request, timeout_s=self.timeout_s, sign=self.sign
            )
        except (ConversationRequiredError, TooLargeError) as refused:
            if self.transport != "auto":
                raise
            # MCP-MSG-8 / RPC-ERR-9: the same call, in a conversation; MCP-MSG-7: a
            # conversation carries a larger answer than Service RPC.
            logger.info("%s over Service RPC; calling in a conversation", refused.code)
            carried_by.append("chat")
            return await self._in_conversation(request)
        if not isinstance(response, Mapping):
            return _error(
                request.get("id"), INTERNAL_ERROR, "the envelope's response is not an object"
            )
        return response

    async def _in_conversation(self, request: dict[str, Any]) -> Mapping[str, Any]:
        async def forward(reply: Reply) -> None:
            message = reply.message
            if message is not None and "method" in message and "id" not in message:
                await self._send(message)  # progress and other notifications, as they come

        result = await self.link.call(
            "mcp",
            request,
            final=lambda message: is_final(request, message),
            wait_s=self.timeout_s,
            on_reply=forward,
        )
        response = result.response
        assert response is not None  # raise_on_timeout: a call without it raised
        return response
