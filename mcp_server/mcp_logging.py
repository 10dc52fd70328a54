"""The server's log lines as MCP log notifications, on the streams of the requests in flight.

The server is stateless over HTTP: no stream outlives the request that opened it. So a
notification the server has to send on its own (a log line, an update of a subscribed resource
for a 2025-era client) rides the response stream of a request in flight that asked for it, and
is lost when none is open. Which requests ask:

==========  =====================================================================
era         a request gets
==========  =====================================================================
2026-07-28  the log lines at or above the level in its ``_meta``
            (``io.modelcontextprotocol/logLevel``); without it, none (the spec's
            opt-in per request)
2025        the log lines at or above the level of the last ``logging/setLevel``
            (none before one), and ``notifications/resources/updated`` for the
            URIs of ``resources/subscribe``: both server-wide, since one agent has
            one host and stateless requests share no session
==========  =====================================================================

A log line is ``info`` (stdout) or ``error`` (stderr). What the agent's parts log never holds a
message's text or the token (actions are logged by chat and kind, members by name); a line
that holds a link or a QR code (the control chat's join link: whoever has it may become an
owner) is never relayed, as a second guard.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any, Final, get_args

import anyio
import anyio.streams.memory
import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .log import Log

__all__ = [
    "LOGGER_NAME",
    "MAX_QUEUED_NOTIFICATIONS",
    "NotificationRelay",
    "RelayLog",
    "RelayMiddleware",
    "relayable",
]

#: The ``logger`` of the server's log notifications.
LOGGER_NAME: Final = "simplex-mcp"
#: Notifications a request's stream holds before it sends them; more are dropped (counted).
MAX_QUEUED_NOTIFICATIONS: Final = 256

#: The levels, lowest first (RFC 5424 order, as the SDK's literal declares them).
_LEVELS: Final[tuple[types.LoggingLevel, ...]] = get_args(types.LoggingLevel)
_NO_LEVELS: Final[frozenset[types.LoggingLevel]] = frozenset()
#: A link (any scheme, or a ``simplex:`` one), a QR code's block characters, a terminal escape.
_SECRET_LIKE: Final = re.compile(r"://|simplex:|[\u2580-\u259f]|\x1b")


def relayable(text: str) -> bool:
    """Whether a log line may go to a client: not blank, and no link or QR code in it."""
    return bool(text.strip()) and _SECRET_LIKE.search(text) is None


def levels_from(level: types.LoggingLevel | None) -> frozenset[types.LoggingLevel]:
    """``level`` and the levels above it (none for ``None``)."""
    if level is None:
        return _NO_LEVELS
    return frozenset(_LEVELS[_LEVELS.index(level) :])


class _Stream:
    """One request in flight: what it receives, and the notifications queued for it."""

    def __init__(
        self,
        ctx: ServerRequestContext[Any, Any],
        levels: frozenset[types.LoggingLevel],
        legacy: bool,
    ) -> None:
        self.ctx = ctx
        self.levels = levels
        self.legacy = legacy
        self.dropped = 0
        self._send, self._receive = anyio.create_memory_object_stream[types.ServerNotification](
            MAX_QUEUED_NOTIFICATIONS
        )

    def offer(self, notification: types.ServerNotification) -> None:
        try:
            self._send.send_nowait(notification)
        except anyio.WouldBlock:
            self.dropped += 1
        except anyio.ClosedResourceError:
            pass

    def close(self) -> None:
        self._send.close()

    async def pump(self) -> None:
        """Send the queued notifications on the request's stream until :meth:`close`."""
        async with self._receive:
            async for notification in self._receive:
                # A stream the client closed fails the send; the request ends with it.
                with contextlib.suppress(Exception):
                    await self.ctx.session.send_notification(
                        notification, related_request_id=self.ctx.request_id
                    )


class NotificationRelay:
    """The requests in flight that receive log lines or resource updates, and what they get.

    ``legacy_level`` is the level of the last ``logging/setLevel`` (2025 era); the
    ``legacy_subscriptions`` are the URIs of ``resources/subscribe``.
    """

    def __init__(self) -> None:
        self._streams: set[_Stream] = set()
        self.legacy_level: types.LoggingLevel | None = None
        self.legacy_subscriptions: set[str] = set()

    def _open(self, ctx: ServerRequestContext[Any, Any]) -> _Stream | None:
        """The stream of a request that receives notifications, or ``None``."""
        if ctx.request_id is None or ctx.method == "initialize":
            return None
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            levels = allowed_log_levels(ctx.protocol_version, ctx.meta)
            return _Stream(ctx, levels, legacy=False) if levels else None
        if self.legacy_level is None and not self.legacy_subscriptions:
            return None
        return _Stream(ctx, levels_from(self.legacy_level), legacy=True)

    @contextlib.contextmanager
    def _registered(self, stream: _Stream) -> Iterator[None]:
        self._streams.add(stream)
        try:
            yield
        finally:
            self._streams.discard(stream)
            stream.close()

    async def serve(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Run a request, relaying notifications on its stream while it runs.

        The queued notifications are sent before the result, in the order they were offered.
        """
        stream = self._open(ctx)
        if stream is None:
            return await call_next(ctx)
        result: HandlerResult = None
        failure: Exception | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(stream.pump)
            with self._registered(stream):
                # Raised outside the task group, so the SDK sees the handler's own error (an
                # MCPError keeps its code), not a group of one.
                try:
                    result = await call_next(ctx)
                except Exception as exc:
                    failure = exc
        if failure is not None:
            raise failure
        return result

    def log(self, level: types.LoggingLevel, text: str) -> None:
        """Relay a log line to the requests that asked for its level."""
        if not self._streams or not relayable(text):
            return
        for stream in list(self._streams):
            if level in stream.levels:
                stream.offer(
                    types.LoggingMessageNotification(
                        params=types.LoggingMessageNotificationParams(
                            level=level, logger=LOGGER_NAME, data=text
                        )
                    )
                )

    def resource_updated(self, uri: str) -> None:
        """Relay ``notifications/resources/updated`` to the 2025-era requests, when a
        ``resources/subscribe`` named ``uri``."""
        if uri not in self.legacy_subscriptions:
            return
        for stream in list(self._streams):
            if stream.legacy:
                stream.offer(
                    types.ResourceUpdatedNotification(
                        params=types.ResourceUpdatedNotificationParams(uri=uri)
                    )
                )

    async def set_level(
        self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """``logging/setLevel`` (2025 era): the level of the lines relayed from now on."""
        self.legacy_level = params.level
        return types.EmptyResult()


class RelayMiddleware:
    """The SDK server's middleware that gives each request its relayed notifications."""

    def __init__(self, relay: NotificationRelay) -> None:
        self._relay = relay

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        return await self._relay.serve(ctx, call_next)


class RelayLog(Log):
    """The server's log: each line is written by ``inner``, then relayed.

    Args:
        inner: the log that writes the lines (stdout and stderr).
        relay: where the lines go to clients.
    """

    def __init__(self, inner: Log, relay: NotificationRelay) -> None:
        super().__init__()
        self.inner = inner
        self.relay = relay

    def line(self, text: str) -> None:
        self.inner.line(text)
        for part in text.split("\n"):
            self.relay.log("info", part)

    def error(self, text: str) -> None:
        self.inner.error(text)
        for part in text.split("\n"):
            self.relay.log("error", part)
