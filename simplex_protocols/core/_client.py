"""ChatCore: the one async interface to a SimpleX chat core, over any :class:`CoreBackend`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, Final, Self

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from simplex_protocols.errors import (
    CallTimeoutError,
    CoreConnectionError,
    CoreError,
    EventOverflowError,
    UnexpectedResponseError,
)

from ._backend import CoreBackend
from ._protocol import (
    CoreProtocol,
    EventReceived,
    InvalidFrame,
    ResponseReceived,
    UnmatchedResponse,
)

__all__ = ["DEFAULT_EVENT_BUFFER", "ChatCore", "EventListener", "EventSubscription"]

logger = logging.getLogger("simplex_protocols.core")

#: Events a subscription holds for a subscriber that has not read them yet.
DEFAULT_EVENT_BUFFER: Final = 1000

#: The most a backend may take to close while :class:`ChatCore` shuts down.
_CLOSE_TIMEOUT_S: Final = 10.0

#: Response types that mean the command failed (WebSocket API; the embedded backend maps
#: its ``{"error": ...}`` to the same shape).
_ERROR_TYPES: Final = frozenset({"chatCmdError", "chatError"})


class _Waiter:
    """One command in flight: the caller waits until ``answered``, woken by ``wakeup``.

    ``wakeup`` is a bare asyncio future (the package runs on asyncio): an ``anyio.Event`` would
    add an ``asyncio.Event``, its deque of waiters and two coroutines for every command in
    flight (about 1.3 kB, and five objects more for the garbage collector to walk, each).
    """

    __slots__ = ("answered", "error", "response", "wakeup")

    def __init__(self) -> None:
        self.wakeup: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.answered = False
        self.response: dict[str, Any] | None = None
        self.error: BaseException | None = None

    def resolve(self, response: dict[str, Any]) -> None:
        if not self.answered:
            self.answered = True
            self.response = response
            self._wake()

    def fail(self, error: BaseException) -> None:
        if not self.answered:
            self.answered = True
            self.error = error
            self._wake()

    def _wake(self) -> None:
        # Done already when the waiting task was cancelled (the future with it).
        if not self.wakeup.done():
            self.wakeup.set_result(None)


class _Connection:
    """One connection of the backend: its reader task and its shutdown."""

    __slots__ = ("generation", "reader_done", "scope", "shut", "shutting_down")

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.scope = anyio.CancelScope()
        self.reader_done = anyio.Event()
        self.shut = anyio.Event()
        self.shutting_down = False


class _Closable:
    """``async with`` for an object that :meth:`aclose` ends."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class EventSubscription(_Closable):
    """One subscriber's view of the core's events: every event after it was made, in order.

    Use it as an async iterator, preferably inside ``async with`` so that it is unregistered
    when you are done::

        async with core.events() as events:
            async for event in events:
                ...

    Each event is the core's event object (the ``resp`` of an event frame), unchanged. A
    subscription made with ``types`` sees only the events of those types (their ``type`` tag):
    the others are never queued for it, so they neither wake its reader nor fill its buffer.

    Overflow policy: a subscription buffers at most ``buffer_size`` unread events. When one
    more arrives, the subscription ends: the subscriber still reads every buffered event, in
    order, and then gets :class:`~simplex_protocols.errors.EventOverflowError`. Events are never
    skipped silently, and a slow subscriber never holds up commands or other subscribers.

    Iteration ends with ``StopAsyncIteration`` when the subscription or the core is closed,
    and with :class:`~simplex_protocols.errors.CoreConnectionError` when the connection to the
    core is lost (after the events that arrived before the loss).
    """

    def __init__(
        self, core: ChatCore, buffer_size: int, types: frozenset[str] | None = None
    ) -> None:
        self._core = core
        self.buffer_size = buffer_size
        #: The event types this subscription takes (``None``: every event).
        self.types = types
        self._send: MemoryObjectSendStream[dict[str, Any]]
        self._receive: MemoryObjectReceiveStream[dict[str, Any]]
        self._send, self._receive = anyio.create_memory_object_stream[dict[str, Any]](buffer_size)
        self._error: BaseException | None = None
        self._ended = False
        self._error_raised = False

    # -- called by ChatCore -----------------------------------------------------------------

    def _deliver(self, event: dict[str, Any]) -> None:
        if self._ended:
            return
        try:
            self._send.send_nowait(event)
        except anyio.WouldBlock:
            self._end(EventOverflowError(self.buffer_size))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._end(None)

    def _end(self, error: BaseException | None) -> None:
        if self._ended:
            return
        self._ended = True
        self._error = error
        self._send.close()
        self._core._unsubscribe(self)

    # -- public -----------------------------------------------------------------------------

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> dict[str, Any]:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            if self._error is not None and not self._error_raised:
                self._error_raised = True
                raise self._error from self._error.__cause__
            raise StopAsyncIteration from None
        except anyio.ClosedResourceError:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        """Stop receiving events. Idempotent; buffered events are discarded."""
        self._end(None)
        self._receive.close()


class EventListener(_Closable):
    """Events handed to a function as they arrive (:meth:`ChatCore.listen`).

    The function is called in the task that reads the core's frames, once per event of the
    listener's types, in the order the core sent them, before anything else runs: there is
    no buffer that can overflow and no turn of the event loop between an event and its
    handling. So the function must not block or wait: it looks at the event and hands the work
    on (starts a task, sets an event, appends to a list), as a responder does with each call.

    If the function raises, the listener ends with that exception: :meth:`wait` raises it,
    and the core goes on reading for everyone else. The listener also ends when it is closed
    (:meth:`aclose`, or leaving ``async with``), when the core closes, and with
    :class:`~simplex_protocols.errors.CoreConnectionError` when the connection is lost.
    """

    def __init__(
        self,
        core: ChatCore,
        handler: Callable[[dict[str, Any]], object],
        types: frozenset[str] | None,
    ) -> None:
        self._core = core
        self._handler = handler
        #: The event types this listener takes (``None``: every event).
        self.types = types
        self._ended = anyio.Event()
        self._error: BaseException | None = None

    # -- called by ChatCore -----------------------------------------------------------------

    def _deliver(self, event: dict[str, Any]) -> None:
        if self._ended.is_set():
            return
        try:
            self._handler(event)
        except Exception as exc:
            self._end(exc)

    def _end(self, error: BaseException | None) -> None:
        if self._ended.is_set():
            return
        self._error = error
        self._ended.set()
        self._core._unsubscribe(self)

    # -- public -----------------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        """Whether the listener takes no more events."""
        return self._ended.is_set()

    async def wait(self) -> None:
        """Wait until the listener ends.

        Returns when it was closed, or the core was. Raises what the handler raised, or
        :class:`~simplex_protocols.errors.CoreConnectionError` when the connection was lost.
        """
        await self._ended.wait()
        if self._error is not None:
            raise self._error

    async def aclose(self) -> None:
        """Stop taking events. Idempotent."""
        self._end(None)


class ChatCore:
    """The one async interface to a SimpleX chat core.

    Send command strings, get their response objects, and subscribe to events, over any
    :class:`CoreBackend` (a ``simplex-chat -p PORT`` WebSocket, the embedded libsimplex, or
    the simulated network)::

        async with ChatCore(WebSocketBackend("ws://127.0.0.1:5225")) as core:
            user = await core.command("/user")
            async with core.events() as events:
                async for event in events:
                    ...

    Many commands may be in flight at once; each response goes to the command with its
    correlation ID. A background task reads frames while the ``async with`` block runs.

    Args:
        backend: what moves frames to and from the core.
        corr_ids: a source of correlation IDs (default: ``"1"``, ``"2"``, ...).
        event_buffer: the default number of unread events a subscription holds before it
            overflows (see :class:`EventSubscription`).

    A lost connection fails every command in flight and ends every subscription with
    :class:`~simplex_protocols.errors.CoreConnectionError`. The object stays usable: call
    :meth:`reconnect` to connect again (commands and new subscriptions then work again).
    """

    def __init__(
        self,
        backend: CoreBackend,
        *,
        corr_ids: Callable[[], str] | None = None,
        event_buffer: int = DEFAULT_EVENT_BUFFER,
    ) -> None:
        if event_buffer < 1:
            raise ValueError("event_buffer must be at least 1")
        self._backend = backend
        self._protocol = CoreProtocol(corr_ids)
        self._event_buffer = event_buffer
        self._waiters: dict[str, _Waiter] = {}
        self._subscriptions: list[EventSubscription | EventListener] = []
        self._tg: anyio.abc.TaskGroup | None = None
        self._conn: _Connection | None = None
        self._generation = 0
        self._connected = False
        self._entered = False
        self._closed = False
        self._lost: CoreConnectionError | None = None
        self._reconnect_lock = anyio.Lock()

    # ------------------------------------------------------------------ lifecycle

    @property
    def backend(self) -> CoreBackend:
        """The backend this core talks through."""
        return self._backend

    @property
    def description(self) -> str:
        """Where the core is: the backend's description (``ws://127.0.0.1:5225``, ...)."""
        return self._backend.description

    @property
    def connected(self) -> bool:
        """Whether commands can be sent now."""
        return self._connected

    async def __aenter__(self) -> Self:
        """Connect to the core and start reading frames.

        Raises:
            CoreConnectionError: the core cannot be reached.
            BackendUnavailableError: the backend cannot run here.
        """
        if self._entered:
            raise RuntimeError("a ChatCore can be entered only once; make a new one")
        self._entered = True
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        try:
            await self._connect()
        except BaseException:
            self._closed = True
            self._tg = None
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
        tg, self._tg = self._tg, None
        if tg is not None:
            tg.cancel_scope.cancel()
            # The block's own exception, if any, propagates unchanged when this returns.
            await tg.__aexit__(None, None, None)

    async def aclose(self) -> None:
        """Close the connection: commands in flight fail, subscriptions end. Idempotent.

        Commands in flight fail with :class:`~simplex_protocols.errors.CoreConnectionError`;
        subscriptions end normally (after their buffered events). The core cannot be used
        afterwards.
        """
        if self._closed:
            return
        self._closed = True
        self._connected = False
        self._fail_in_flight(
            lambda: CoreConnectionError(f"{self.description}: the ChatCore was closed")
        )
        for sub in list(self._subscriptions):
            sub._end(None)
        conn = self._conn
        if conn is None:
            with anyio.move_on_after(_CLOSE_TIMEOUT_S, shield=True):
                await self._close_backend(self._backend)
        elif conn.shutting_down:
            with anyio.CancelScope(shield=True):
                await conn.shut.wait()
        else:
            await self._shutdown(conn)

    async def reconnect(self) -> None:
        """Connect again, after a lost connection (or to drop the current one and start over).

        Commands in flight on the current connection, if any, fail with
        :class:`~simplex_protocols.errors.CoreConnectionError`, and current subscriptions end
        with it. Subscribe again after reconnecting.

        Raises:
            CoreConnectionError: the core cannot be reached (the core stays disconnected and
                :meth:`reconnect` may be tried again), or the ChatCore is closed or was never
                entered.
        """
        if self._closed or self._tg is None:
            raise CoreConnectionError(f"{self.description}: the ChatCore is closed or not entered")
        async with self._reconnect_lock:
            conn = self._conn
            if conn is not None:
                if self._connected:
                    self._connection_lost(
                        CoreConnectionError(
                            f"{self.description}: the connection was dropped to reconnect"
                        ),
                        conn,
                    )
                if not conn.shutting_down:
                    await self._shutdown(conn)
                with anyio.CancelScope(shield=True):
                    await conn.shut.wait()
            await self._connect()

    async def _connect(self) -> None:
        try:
            await self._backend.connect()
        except CoreConnectionError:
            raise
        except Exception as exc:
            raise CoreConnectionError(
                f"{self.description}: the backend failed to connect: {exc!r}"
            ) from exc
        self._generation += 1
        conn = _Connection(self._generation)
        self._conn = conn
        self._connected = True
        self._lost = None
        assert self._tg is not None
        self._tg.start_soon(self._read_frames, conn)

    async def _shutdown(self, conn: _Connection) -> None:
        """Stop the reader of ``conn`` and close the backend. Runs once per connection."""
        if conn.shutting_down:
            return
        conn.shutting_down = True
        conn.scope.cancel()
        with anyio.CancelScope(shield=True):
            await conn.reader_done.wait()
            with anyio.move_on_after(_CLOSE_TIMEOUT_S):
                await self._close_backend(self._backend)
            conn.shut.set()

    @staticmethod
    async def _close_backend(backend: CoreBackend) -> None:
        try:
            await backend.aclose()
        except Exception:
            logger.warning("closing the chat core backend failed", exc_info=True)

    # ------------------------------------------------------------------ commands

    async def command(self, cmd: str, *, timeout: float | None = None) -> dict[str, Any]:  # noqa: ASYNC109 (a per-command deadline is part of the interface)
        """Send one command and return the core's response object (``resp``).

        Args:
            cmd: the command string, e.g. ``"/_get chats 1"`` (see :mod:`.commands`).
            timeout: seconds to wait for the response; ``None`` waits as long as the
                connection lives.

        Returns:
            The response object, unchanged (unknown fields kept).

        Raises:
            CoreError: the core answered ``chatCmdError`` or ``chatError``; ``.chat_error``
                holds the core's ChatError object.
            CoreConnectionError: not connected, or the connection was lost before the
                response arrived (the command may or may not have been carried out).
            CallTimeoutError: no response within ``timeout``; a response arriving later is
                discarded (the command may still be carried out by the core).
            UnexpectedResponseError: the core answered with a frame without a response
                object.

        The core stays usable after each of these errors, except after a lost connection,
        which needs :meth:`reconnect`.
        """
        if not self._connected:
            raise self._not_connected()
        conn = self._conn
        corr_id, frame = self._protocol.send_command(cmd)
        waiter = _Waiter()
        self._waiters[corr_id] = waiter
        try:
            if timeout is None:
                # Most commands: no cancel scope of their own (one per command in flight), and
                # the wait in this frame (no coroutine of its own while the command is pending).
                await self._send(frame, conn)
                if not waiter.answered:
                    await waiter.wakeup
            else:
                with anyio.move_on_after(timeout):
                    await self._send(frame, conn)
                    if not waiter.answered:
                        await waiter.wakeup
        finally:
            self._waiters.pop(corr_id, None)
            if not waiter.answered:
                self._protocol.forget(corr_id)
        if not waiter.answered:
            raise CallTimeoutError(
                f"{self.description}: no response to {_verb(cmd)!r} within {timeout} s",
                timeout=timeout,
            )
        if waiter.error is not None:
            raise waiter.error
        response = waiter.response
        assert response is not None
        if response.get("type") in _ERROR_TYPES:
            chat_error = response.get("chatError")
            raise CoreError(
                chat_error if isinstance(chat_error, dict) else {},
                response=response,
                command=cmd,
            )
        return response

    async def _send(self, frame: dict[str, str], conn: _Connection | None) -> None:
        """Hand a command's frame to the backend; a failure is a lost connection (which fails
        the command's waiter)."""
        try:
            await self._backend.send_frame(frame)
        except CoreConnectionError as exc:
            self._connection_lost(exc, conn)
        except Exception as exc:
            lost = CoreConnectionError(f"{self.description}: sending failed: {exc!r}")
            lost.__cause__ = exc
            self._connection_lost(lost, conn)

    # ------------------------------------------------------------------ events

    def events(
        self, *, buffer: int | None = None, types: Iterable[str] | None = None
    ) -> EventSubscription:
        """Subscribe to events: the subscription sees every event that arrives from now on.

        Args:
            buffer: unread events the subscription holds before it overflows (default: the
                core's ``event_buffer``).
            types: take only the events of these types (``newChatItems``, ...); by default
                every event. A subscriber that reads one kind of event says so here, and the
                rest of the stream costs it nothing.

        Raises:
            CoreConnectionError: the core is closed.
        """
        if self._closed:
            raise CoreConnectionError(f"{self.description}: the ChatCore is closed")
        size = self._event_buffer if buffer is None else buffer
        if size < 1:
            raise ValueError("buffer must be at least 1")
        if isinstance(types, str):
            raise TypeError("types is a collection of event types, not one string")
        sub = EventSubscription(self, size, frozenset(types) if types is not None else None)
        self._subscriptions.append(sub)
        return sub

    def listen(
        self, handler: Callable[[dict[str, Any]], object], *, types: Iterable[str] | None = None
    ) -> EventListener:
        """Hand every event that arrives from now on to ``handler``, as it arrives.

        For a subscriber that does little with each event and must not wait for it (see
        :class:`EventListener`); one that reads events at its own pace uses :meth:`events`.

        Args:
            handler: called with each event (the core's event object), in the core's reading
                task; it must not block.
            types: take only the events of these types; by default every event.

        Raises:
            CoreConnectionError: the core is closed.
        """
        if self._closed:
            raise CoreConnectionError(f"{self.description}: the ChatCore is closed")
        if isinstance(types, str):
            raise TypeError("types is a collection of event types, not one string")
        listener = EventListener(self, handler, frozenset(types) if types is not None else None)
        self._subscriptions.append(listener)
        return listener

    def _unsubscribe(self, sub: EventSubscription | EventListener) -> None:
        with contextlib.suppress(ValueError):
            self._subscriptions.remove(sub)

    # ------------------------------------------------------------------ reading

    async def _read_frames(self, conn: _Connection) -> None:
        backend = self._backend
        lost: CoreConnectionError
        try:
            with conn.scope:
                try:
                    while True:
                        frame = await backend.receive_frame()
                        if conn is not self._conn:
                            return
                        self._dispatch(frame)
                except CoreConnectionError as exc:
                    lost = exc
                except Exception as exc:
                    lost = CoreConnectionError(
                        f"{self.description}: reading from the core failed: {exc!r}"
                    )
                    lost.__cause__ = exc
                self._connection_lost(lost, conn)
        finally:
            conn.reader_done.set()

    def _dispatch(self, frame: Any) -> None:
        for item in self._protocol.receive_frame(frame):
            if isinstance(item, ResponseReceived):
                waiter = self._waiters.get(item.corr_id)
                if waiter is not None:
                    waiter.resolve(item.response)
            elif isinstance(item, EventReceived):
                kind = item.event.get("type")
                # A copy: a subscription that overflows leaves the list while it is walked.
                for sub in list(self._subscriptions):
                    if sub.types is None or kind in sub.types:
                        sub._deliver(item.event)
            elif isinstance(item, UnmatchedResponse):
                logger.debug(
                    "response to corrId %s arrived after its command stopped waiting", item.corr_id
                )
            elif isinstance(item, InvalidFrame):
                if item.corr_id is not None:
                    waiter = self._waiters.get(item.corr_id)
                    if waiter is not None:
                        frame_obj = item.frame if isinstance(item.frame, dict) else {}
                        waiter.fail(
                            UnexpectedResponseError(
                                (),
                                "",
                                response=frame_obj,
                                command=item.command,
                                code="malformed_frame",
                            )
                        )
                else:
                    logger.warning("the chat core sent an invalid frame: %s", item.reason)

    # ------------------------------------------------------------------ failures

    def _connection_lost(self, error: CoreConnectionError, conn: _Connection | None) -> None:
        """Fail everything waiting on ``conn`` and shut it down; ignore stale reports."""
        if conn is None or conn is not self._conn or not self._connected:
            return
        self._connected = False
        self._lost = error
        logger.warning("lost the chat core at %s: %s", self.description, error)

        def fresh() -> CoreConnectionError:
            copy = CoreConnectionError(str(error))
            copy.__cause__ = error.__cause__ if error.__cause__ is not None else error
            return copy

        self._fail_in_flight(fresh)
        for sub in list(self._subscriptions):
            sub._end(fresh())
        if self._tg is not None:
            self._tg.start_soon(self._shutdown, conn)

    def _fail_in_flight(self, make_error: Callable[[], CoreConnectionError]) -> None:
        for corr_id, _cmd in self._protocol.connection_lost():
            waiter = self._waiters.get(corr_id)
            if waiter is not None:
                waiter.fail(make_error())

    def _not_connected(self) -> CoreConnectionError:
        if self._closed:
            return CoreConnectionError(f"{self.description}: the ChatCore is closed")
        if self._lost is not None:
            err = CoreConnectionError(
                f"{self.description}: not connected ({self._lost}); call reconnect()"
            )
            err.__cause__ = self._lost
            return err
        return CoreConnectionError(
            f"{self.description}: not connected; use `async with ChatCore(...)`"
        )


def _verb(cmd: str) -> str:
    return cmd.split(" ", 1)[0]
