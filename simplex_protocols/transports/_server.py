"""The run loop both responders share: take events as they arrive, run each call in its own
task, shut down gracefully (stop taking calls, let the calls in flight finish within a grace
period, then cut the rest short so that each answers with its error)."""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import anyio
import anyio.abc

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols.core import ChatAPI, ChatCore
from simplex_protocols.errors import CoreConnectionError

from ._common import core_of, logger, run_until

__all__ = ["Call", "EventResponder"]

Call = Callable[[anyio.CancelScope], Awaitable[None]]


class EventResponder:
    """Base of :class:`ChatResponder` and :class:`ServiceRPCResponder`.

    A subclass implements :meth:`_accept`, which looks at one event and returns the calls to
    run for it, and names the event types it accepts in ``_event_types`` (its listener takes
    only those: a bot runs a responder per transport). Events come through a
    :class:`~simplex_protocols.core.EventListener`: each call's task is started as its event
    arrives, in the core's reading task, so no burst can overflow a buffer and no call waits a
    turn of the event loop to be seen. Each call gets a cancel scope: it runs its protocol work
    inside the scope and its sends outside it, so a shutdown cuts the work short but never a
    send.
    """

    def __init__(
        self,
        core: ChatCore | ChatAPI,
        *,
        clock: Clock | None,
        max_concurrency: int,
        shutdown_grace_s: float,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if shutdown_grace_s < 0:
            raise ValueError("shutdown_grace_s cannot be negative")
        self.core = core_of(core)
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.max_concurrency = max_concurrency
        self.shutdown_grace_s = shutdown_grace_s
        self._limiter = anyio.CapacityLimiter(max_concurrency)
        self._inflight: set[anyio.CancelScope] = set()
        self._idle = anyio.Event()
        self._idle.set()
        self._closing = False
        self._closing_at: float | None = None
        self._serving = False
        self._tg: anyio.abc.TaskGroup | None = None
        self._reader_scope: anyio.CancelScope | None = None
        # The context serve() runs in: each call's task starts from a copy of it, as it did
        # when calls were started by serve's own task (not the core's reading task).
        self._context: contextvars.Context | None = None
        self._stopped = anyio.Event()

    # ------------------------------------------------------------------ subclass hook

    #: The event types :meth:`_accept` can take a call from (``None``: every event).
    _event_types: ClassVar[frozenset[str] | None] = None

    def _accept(self, event: dict[str, Any]) -> list[Call]:
        """The calls to run for one event (none for events of no interest)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ state

    @property
    def closing(self) -> bool:
        """Whether :meth:`shutdown` was called (or the event stream ended): no new calls."""
        return self._closing

    @property
    def in_flight(self) -> int:
        """How many calls are being answered (or waiting for a free slot) now."""
        return len(self._inflight)

    # ------------------------------------------------------------------ running

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Answer calls until :meth:`shutdown` is called, then return.

        Use ``await task_group.start(responder.serve)``: it returns once the responder is
        subscribed to the core's events, so no call sent after that is missed.

        If the task running ``serve`` is cancelled, every call in flight is cut short and
        answered with its error before ``serve`` ends.

        Raises:
            CoreConnectionError: the connection to the core was lost; the calls in flight were
                cut short (their answers could not be sent).
            RuntimeError: ``serve`` is already running, or ran before.
        """
        if self._serving or self._stopped.is_set():
            raise RuntimeError("a responder serves once; make a new one")
        if self._closing:
            # shutdown() came first: nothing to serve.
            task_status.started()
            self._stopped.set()
            return
        self._serving = True
        lost: CoreConnectionError | None = None
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                with anyio.CancelScope() as reader_scope:
                    self._reader_scope = reader_scope
                    try:
                        await self._read(task_status)
                    except CoreConnectionError as exc:
                        lost = exc
                self._close()
                if lost is None:
                    await self._drain()
                else:
                    for scope in list(self._inflight):
                        scope.cancel()
        finally:
            self._tg = None
            self._stopped.set()
        if lost is not None:
            raise lost

    async def shutdown(self, grace_s: float | None = None) -> None:
        """Stop taking calls, let the calls in flight finish, then answer the rest with errors.

        Args:
            grace_s: how long the calls in flight may go on, on the responder's clock
                (default: ``shutdown_grace_s``). Calls still running then are cut short and
                answered with their error; nothing is left half-sent.

        Returns once :meth:`serve` has returned (at once if it is not running).
        """
        if grace_s is not None:
            if grace_s < 0:
                raise ValueError("grace_s cannot be negative")
            self.shutdown_grace_s = grace_s
        self._close()
        if self._reader_scope is not None:
            self._reader_scope.cancel()
        if self._serving:
            await self._stopped.wait()

    def _close(self) -> None:
        if not self._closing:
            self._closing = True
            self._closing_at = self.clock.now()

    async def _read(self, task_status: anyio.abc.TaskStatus[None]) -> None:
        self._context = contextvars.copy_context()
        async with self.core.listen(self._on_event, types=self._event_types) as listener:
            task_status.started()
            # Returns when the core closes; raises CoreConnectionError when it is lost.
            await listener.wait()

    def _on_event(self, event: dict[str, Any]) -> None:
        """One event, in the core's reading task: start its calls (nothing here waits)."""
        if self._closing:
            return
        context = self._context
        assert context is not None
        for call in self._accept(event):
            context.run(self._start, call)

    def _start(self, call: Call) -> None:
        assert self._tg is not None
        scope = anyio.CancelScope()
        if not self._inflight:
            self._idle = anyio.Event()
        self._inflight.add(scope)
        self._tg.start_soon(self._run, call, scope)

    async def _run(self, call: Call, scope: anyio.CancelScope) -> None:
        try:
            await call(scope)
        except Exception:
            logger.exception("a call failed in the transport")
        finally:
            self._inflight.discard(scope)
            if not self._inflight:
                self._idle.set()

    async def _drain(self) -> None:
        # The grace period counts from the shutdown request, on the responder's clock.
        start = self._closing_at if self._closing_at is not None else self.clock.now()
        deadline = start + self.shutdown_grace_s
        if self._inflight and deadline > self.clock.now():

            async def idle() -> None:
                await self._idle.wait()

            await run_until(self.clock, deadline, idle)
        for scope in list(self._inflight):
            scope.cancel()
