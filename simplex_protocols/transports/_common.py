"""Pieces both transports share: clock deadlines, call records and log lines, shielded work."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import anyio

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols.core import ChatAPI, ChatCore

from ._binding import Binding, TransportKind

__all__ = [
    "CallRecord",
    "binding_map",
    "core_of",
    "log_call",
    "method_of",
    "real_clock",
    "run_until",
    "shielded",
]

logger = logging.getLogger("simplex_protocols.transports")

T = TypeVar("T")

#: A method name we are willing to write in a log line: a JSON-RPC method as MCP and A2A name
#: them. Anything else is a peer's text and is logged as ``?``.
_METHOD = re.compile(r"[A-Za-z0-9_./-]{1,64}")

#: How long shielded work (a reply, an error answer) may take when the caller is being
#: cancelled: long enough for a core to take a command, short enough not to hang a shutdown.
SHIELD_TIMEOUT_S: Final = 10.0


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What a responder logs about one call. Never the request's or the answer's contents.

    Attributes:
        transport: the transport the call arrived on.
        caller: the caller's key (``chat:@4``, ``chat:#15/44``, ``rpc:<signerKey>``,
            ``rpc-anonymous:<random>``).
        protocol: the protocol named by the call, when it got that far.
        method: the request's ``method`` when it is a plain method name, else ``None``.
        outcome: how the call ended. Chat: ``answered``, ``parse_error``, ``replaced``
            (a reply was over the size limit and the binding's error took its place),
            ``failed`` (the handler raised; the binding's error was sent), ``shutdown`` (the
            call was cut short by a shutdown; the binding's error was sent), ``unanswered``
            (no reply could be sent). Service RPC: ``response`` or the envelope error code.
        duration_s: from the call's arrival to its last reply, on the responder's clock.
        replies: how many replies (chat) or envelopes (Service RPC) were sent.
        trace_id: the W3C trace ID of the request's ``params._meta.traceparent``, when it has
            a valid one: the caller's trace, which the log line names.
    """

    transport: TransportKind
    caller: str
    protocol: str | None
    method: str | None
    outcome: str
    duration_s: float
    replies: int
    trace_id: str | None = None


def core_of(core: ChatCore | ChatAPI) -> ChatCore:
    """The :class:`ChatCore` behind a core or a :class:`ChatAPI`."""
    return core.core if isinstance(core, ChatAPI) else core


def method_of(request: Any) -> str | None:
    """The request's JSON-RPC ``method`` when it is a plain name fit for a log line."""
    if isinstance(request, Mapping):
        method = request.get("method")
        if isinstance(method, str) and _METHOD.fullmatch(method):
            return method
    return None


def log_call(record: CallRecord, on_call: Callable[[CallRecord], None] | None) -> None:
    """Write the call's log line and hand the record to ``on_call``, if any."""
    logger.info(
        "%s call from %s: %s %s -> %s in %.3f s (%d %s)%s",
        record.transport.value,
        record.caller,
        record.protocol or "?",
        record.method or "?",
        record.outcome,
        record.duration_s,
        record.replies,
        "reply" if record.replies == 1 else "replies",
        f" (trace {record.trace_id})" if record.trace_id else "",
        extra={"simplex_call": record},
    )
    if on_call is not None:
        try:
            on_call(record)
        except Exception:
            logger.exception("the on_call hook failed")


def binding_map(bindings: Mapping[str, Binding] | Any) -> dict[str, Binding]:
    """Bindings by protocol name, from a mapping or an iterable of bindings.

    Raises:
        ValueError: two bindings have the same name, or a mapping key differs from the
            binding's name.
        TypeError: an item is not a :class:`~simplex_protocols.bindings.Binding`.
    """
    out: dict[str, Binding] = {}
    items = bindings.items() if isinstance(bindings, Mapping) else ((None, b) for b in bindings)
    for key, binding in items:
        if not isinstance(binding, Binding):
            raise TypeError(f"{binding!r} is not a Binding")
        name = binding.name
        if key is not None and key != name:
            raise ValueError(f"binding {name!r} is registered under another name, {key!r}")
        if name in out:
            raise ValueError(f"two bindings for the protocol {name!r}")
        out[name] = binding
    return out


def served_bindings(
    bindings: Mapping[str, Binding] | Any, protocols: Collection[str] | None
) -> tuple[dict[str, Binding], frozenset[str]]:
    """A responder's bindings by protocol name (:func:`binding_map`) and the protocols it
    serves: ``protocols``, or every binding's by default.

    Raises:
        ValueError: a protocol has no binding, or as :func:`binding_map`.
        TypeError: as :func:`binding_map`.
    """
    by_name = binding_map(bindings)
    served = set(by_name) if protocols is None else set(protocols)
    missing = served - set(by_name)
    if missing:
        raise ValueError(f"no binding for the protocols {sorted(missing)}")
    return by_name, frozenset(served)


def real_clock(clock: Clock) -> bool:
    """Whether ``clock`` is the real clock, whose deadlines the event loop's own timer keeps
    (``anyio.move_on_after``): :func:`run_until` needs no task for it, and the hot paths write
    its real-clock branch in their own frame."""
    return type(clock) is SystemClock


async def run_until(
    clock: Clock, deadline: float, func: Callable[..., Awaitable[T]], *args: Any
) -> tuple[bool, T | None]:
    """Run ``func(*args)`` until it returns or ``deadline`` passes on ``clock``.

    ``args`` are passed rather than closed over: a closure per call costs a function, its
    cells and a coroutine more, for every call in flight (each call of a transport passes here).

    Returns:
        ``(True, result)`` when ``func`` returned in time, ``(False, None)`` when the deadline
        passed first (``func`` was cancelled).

    Raises:
        Exception: whatever ``func`` raised, unchanged (never wrapped in an exception group).
    """
    if real_clock(clock):
        # The event loop's own timer does it for the real clock: no task, no task group
        # and no sleeping coroutine per call (each call of a transport passes here).
        with anyio.move_on_after(deadline - clock.now()):
            return True, await func(*args)
        return False, None
    return await _run_until_on_clock(clock, deadline, func, *args)


async def _run_until_on_clock(
    clock: Clock, deadline: float, func: Callable[..., Awaitable[T]], *args: Any
) -> tuple[bool, T | None]:
    """:func:`run_until` on another clock (a ManualClock in tests): a timer task sleeps on it.

    Apart from :func:`run_until` so that the real clock's path has no closure cells in its
    frame.
    """
    result: list[T] = []
    errors: list[Exception] = []
    async with anyio.create_task_group() as tg:

        async def timer() -> None:
            await clock.sleep(max(0.0, deadline - clock.now()))
            tg.cancel_scope.cancel()

        tg.start_soon(timer)
        try:
            result.append(await func(*args))
        except Exception as exc:
            errors.append(exc)
        tg.cancel_scope.cancel()
    if errors:
        raise errors[0]
    if result:
        return True, result[0]
    return False, None


async def shielded(func: Callable[[], Awaitable[T]], *, timeout_s: float = SHIELD_TIMEOUT_S) -> T:
    """Run ``func`` so that a cancellation around it cannot cut it in half.

    Used for sends: a reply or an envelope is either sent whole or not at all. The work is
    bounded by ``timeout_s`` of real time so that a dead core cannot hold up a shutdown.

    Raises:
        TimeoutError: ``func`` did not finish within ``timeout_s``.
        Exception: whatever ``func`` raised.
    """
    with anyio.CancelScope(shield=True) as scope:
        scope.deadline = anyio.current_time() + (timeout_s if math.isfinite(timeout_s) else 1e9)
        return await func()
    raise TimeoutError(f"a send did not finish within {timeout_s} s")
