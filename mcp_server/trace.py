"""W3C trace context of the tool calls: each call is a span, named in its result.

=====================  ====================================================================
request ``_meta``      what the call gets
=====================  ====================================================================
valid ``traceparent``  the caller's trace ID and flags, and a new span ID for the call;
                       a valid ``tracestate`` is kept to send on, never logged
no trace context       a new trace (random IDs, sampled) and its first span
invalid data           a new trace, and one fixed log line saying so (the bad value is
                       never written); an invalid ``tracestate`` alone is dropped with
                       its own fixed line; the call runs as any other
=====================  ====================================================================

The result's ``_meta.traceparent`` names the call (its trace ID and its span ID), a tool error
included. While a call runs, :func:`current_trace` gives its trace (for the bots a call sends
requests to), and, when its request carried trace context, every log line written for it ends
with the trace ID: ``Action 1: send to contact Bob (@3) (trace 4bf9...4736)``. A call without
trace context keeps the plan's log lines word for word. ``baggage`` is neither kept nor logged.
Trace IDs are correlation data, never a credential.
"""

from __future__ import annotations

import contextlib
import contextvars
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import mcp_types as types

from simplex_protocols._trace_context import (
    TRACEPARENT_KEY,
    TRACESTATE_KEY,
    RandomBytes,
    TraceParent,
    new_trace,
    parse_traceparent,
    parse_tracestate,
)

from .log import Log

__all__ = [
    "INVALID_TRACEPARENT",
    "INVALID_TRACESTATE",
    "CallTrace",
    "TracedLog",
    "call_trace",
    "current_trace",
    "traced",
    "with_trace",
]

#: The log line for trace context whose ``traceparent`` is missing or invalid.
INVALID_TRACEPARENT: Final = (
    "Trace context: the call's traceparent is missing or not valid W3C trace context; "
    "the call starts a new trace."
)
#: The log line for a valid ``traceparent`` with an invalid ``tracestate``.
INVALID_TRACESTATE: Final = (
    "Trace context: the call's tracestate is not valid W3C trace context (at most 512 "
    "characters and 32 members); it is not sent on."
)


@dataclass(frozen=True, slots=True)
class CallTrace:
    """The trace context of one tool call.

    Attributes:
        span: the call's own span: the trace ID and the call's span ID (what the result's
            ``_meta.traceparent`` says, and what requests made for the call carry).
        parent: the caller's span, when the request carried a valid ``traceparent``.
        tracestate: the caller's ``tracestate``, checked, to send on with ``span``.
        announced: the request carried trace context (valid or not): its log lines show the
            trace ID.
        problem: the fixed diagnostic for invalid trace data, or ``None``.
    """

    span: TraceParent
    parent: TraceParent | None = None
    tracestate: str | None = None
    announced: bool = False
    problem: str | None = None

    @property
    def trace_id(self) -> str:
        return self.span.trace_id

    @property
    def traceparent(self) -> str:
        """The call's ``traceparent`` value."""
        return self.span.value


def call_trace(
    meta: Mapping[str, Any] | None, random_bytes: RandomBytes = secrets.token_bytes
) -> CallTrace:
    """The trace context of a call whose request has ``meta`` as its ``_meta``; never raises."""
    meta = meta if isinstance(meta, Mapping) else {}
    announced = TRACEPARENT_KEY in meta or TRACESTATE_KEY in meta
    parent = parse_traceparent(meta.get(TRACEPARENT_KEY))
    if parent is None:
        # W3C: without a valid traceparent the tracestate is not read at all.
        return CallTrace(
            new_trace(random_bytes),
            announced=announced,
            problem=INVALID_TRACEPARENT if announced else None,
        )
    raw_state = meta.get(TRACESTATE_KEY)
    tracestate = parse_tracestate(raw_state) if raw_state is not None else ""
    return CallTrace(
        parent.child(random_bytes),
        parent,
        tracestate or None,
        announced=True,
        problem=INVALID_TRACESTATE if tracestate is None else None,
    )


_CURRENT: contextvars.ContextVar[CallTrace | None] = contextvars.ContextVar(
    "simplex_mcp_call_trace", default=None
)


def current_trace() -> CallTrace | None:
    """The trace of the tool call running in this task (and the tasks it started), if any."""
    return _CURRENT.get()


@contextlib.contextmanager
def traced(trace: CallTrace) -> Iterator[CallTrace]:
    """Run the block as the call ``trace`` describes: :func:`current_trace` gives it."""
    token = _CURRENT.set(trace)
    try:
        yield trace
    finally:
        _CURRENT.reset(token)


def with_trace(result: types.CallToolResult, trace: CallTrace) -> types.CallToolResult:
    """``result`` with the call's ``traceparent`` in its ``_meta`` (the rest unchanged)."""
    meta = dict(result.meta or {})
    meta[TRACEPARENT_KEY] = trace.traceparent
    return result.model_copy(update={"meta": meta})


class TracedLog(Log):
    """The server's log, whose lines written for a call with trace context end with its
    trace ID; every other line is written by ``inner`` unchanged.

    Args:
        inner: the log that writes the lines.
    """

    def __init__(self, inner: Log) -> None:
        super().__init__()
        self.inner = inner

    @staticmethod
    def _marked(text: str) -> str:
        trace = _CURRENT.get()
        if trace is None or not trace.announced:
            return text
        suffix = f" (trace {trace.trace_id})"
        return "\n".join(part + suffix for part in text.split("\n"))

    def line(self, text: str) -> None:
        self.inner.line(self._marked(text))

    def error(self, text: str) -> None:
        self.inner.error(self._marked(text))
