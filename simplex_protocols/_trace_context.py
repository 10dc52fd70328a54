"""W3C Trace Context values: parse and check ``traceparent`` and ``tracestate``, make new IDs.

MCP carries trace context in a request's ``params._meta`` under the keys ``traceparent`` and
``tracestate``, with the values the W3C Trace Context headers have (Trace Context Level 1,
sections 3.2 and 3.3; the MCP SDK calls this SEP-414). ``simplex-mcp`` keeps a caller's trace
and gives each tool call a span of its own; the library's MCP callers send a trace on; the
responders log the trace ID of each call.

Nothing here raises for a bad value or does I/O: a parser returns ``None`` for what it does not
accept, and new IDs come from an injected random source (``secrets.token_bytes`` by default),
so tests are deterministic.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "MAX_TRACESTATE_CHARS",
    "MAX_TRACESTATE_MEMBERS",
    "TRACEPARENT_KEY",
    "TRACESTATE_KEY",
    "RandomBytes",
    "TraceParent",
    "new_span_id",
    "new_trace",
    "parse_traceparent",
    "parse_tracestate",
    "request_trace_id",
]

#: The ``_meta`` keys (the header names, lower case).
TRACEPARENT_KEY: Final = "traceparent"
TRACESTATE_KEY: Final = "tracestate"

#: A longer ``tracestate`` is refused (the size W3C asks every vendor to propagate).
MAX_TRACESTATE_CHARS: Final = 512
#: At most this many list members (W3C: "a maximum of 32 list-members").
MAX_TRACESTATE_MEMBERS: Final = 32

#: A source of random bytes: called with a length, returns that many bytes.
RandomBytes = Callable[[int], bytes]

#: version 00 is exactly 55 characters: ``00-<32 hex>-<16 hex>-<2 hex>``.
_VERSION_00_CHARS: Final = 55
#: The flags of a trace this side starts: sampled (we log it, so we record it).
_NEW_TRACE_FLAGS: Final = 0x01
_SAMPLED: Final = 0x01

_LOWER_HEX: Final = frozenset("0123456789abcdef")

# tracestate list members (W3C Trace Context Level 2, 3.3.1.3): a simple key, or a
# multi-tenant key "tenant@system"; a value of printable ASCII without "," and "=", not ending
# in a space. Level 2 lets a simple key begin with a digit as well, a superset of Level 1.
_KEY_CHARS: Final = r"[a-z0-9_\-*/]"
_KEY: Final = re.compile(
    rf"[a-z0-9]{_KEY_CHARS}{{0,255}}|[a-z0-9]{_KEY_CHARS}{{0,240}}@[a-z]{_KEY_CHARS}{{0,13}}"
)
_VALUE: Final = re.compile(r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]")
#: Optional whitespace around list members.
_OWS: Final = " \t"


def _is_lower_hex(text: str) -> bool:
    return bool(text) and all(c in _LOWER_HEX for c in text)


def _is_zero(text: str) -> bool:
    return text.strip("0") == ""


@dataclass(frozen=True, slots=True)
class TraceParent:
    """A ``traceparent``: the trace, the span it was sent from, and the trace flags.

    Attributes:
        trace_id: 32 lowercase hex digits, not all zero.
        span_id: 16 lowercase hex digits, not all zero (the header's ``parent-id``).
        flags: the trace flags (bit 0: sampled).
    """

    trace_id: str
    span_id: str
    flags: int = _NEW_TRACE_FLAGS

    @property
    def value(self) -> str:
        """The value to send: always version 00, the version this module writes."""
        return f"00-{self.trace_id}-{self.span_id}-{self.flags:02x}"

    def child(self, random_bytes: RandomBytes = secrets.token_bytes) -> TraceParent:
        """The same trace and flags with a new span ID: the span of work done for this one."""
        return TraceParent(self.trace_id, new_span_id(random_bytes), self.flags)


def _random_hex(random_bytes: RandomBytes, size: int) -> str:
    raw = bytes(random_bytes(size))[:size].rjust(size, b"\x00")
    if not any(raw):
        # An all-zero ID is invalid; a source that gives zeros (a test's) still gives a valid one.
        raw = raw[:-1] + b"\x01"
    return raw.hex()


def new_span_id(random_bytes: RandomBytes = secrets.token_bytes) -> str:
    """A new span ID: 8 random bytes as 16 lowercase hex digits, never all zero."""
    return _random_hex(random_bytes, 8)


def new_trace(random_bytes: RandomBytes = secrets.token_bytes) -> TraceParent:
    """A new trace (16 random bytes for its ID) and its first span, sampled."""
    return TraceParent(_random_hex(random_bytes, 16), new_span_id(random_bytes))


def parse_traceparent(value: Any) -> TraceParent | None:
    """The ``traceparent`` in ``value``, or ``None`` when it is not a valid one.

    Version 00 is exactly ``00-<trace-id>-<parent-id>-<flags>`` (55 characters) in lowercase
    hex; an all-zero trace ID or parent ID is invalid, and so is version ``ff``. A later
    version is read as W3C asks: its first 55 characters as version 00, followed by the end or
    a ``-``; only its sampled flag is kept.
    """
    if not isinstance(value, str) or len(value) < _VERSION_00_CHARS:
        return None
    version = value[:2]
    if not _is_lower_hex(version) or version == "ff":
        return None
    if version == "00" and len(value) != _VERSION_00_CHARS:
        return None
    if len(value) > _VERSION_00_CHARS and value[_VERSION_00_CHARS] != "-":
        return None
    if (value[2], value[35], value[52]) != ("-", "-", "-"):
        return None
    trace_id, span_id, flags = value[3:35], value[36:52], value[53:55]
    if not (_is_lower_hex(trace_id) and _is_lower_hex(span_id) and _is_lower_hex(flags)):
        return None
    if _is_zero(trace_id) or _is_zero(span_id):
        return None
    bits = int(flags, 16)
    return TraceParent(trace_id, span_id, bits if version == "00" else bits & _SAMPLED)


def parse_tracestate(value: Any) -> str | None:
    """The ``tracestate`` in ``value`` as it is sent on, or ``None`` when it is not valid.

    Valid: text of at most 512 characters holding at most 32 ``key=value`` list members with
    distinct keys, each as W3C defines them, separated by commas with optional spaces or tabs
    around them. Empty members are allowed and dropped; the result is the members joined by
    commas (``""`` when there are none).
    """
    if not isinstance(value, str) or len(value) > MAX_TRACESTATE_CHARS:
        return None
    members: list[str] = []
    keys: set[str] = set()
    for raw in value.split(","):
        member = raw.strip(_OWS)
        if not member:
            continue
        key, sep, member_value = member.partition("=")
        if not sep or _KEY.fullmatch(key) is None or _VALUE.fullmatch(member_value) is None:
            return None
        if key in keys:
            return None
        keys.add(key)
        members.append(member)
        if len(members) > MAX_TRACESTATE_MEMBERS:
            return None
    return ",".join(members)


def request_trace_id(request: Any) -> str | None:
    """The trace ID of a JSON-RPC request's ``params._meta.traceparent``, when it is valid.

    For log lines: the ID is 32 hex digits, so a peer's text never reaches a log this way.
    """
    params = request.get("params") if isinstance(request, Mapping) else None
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    parent = parse_traceparent(meta.get(TRACEPARENT_KEY)) if isinstance(meta, Mapping) else None
    return parent.trace_id if parent is not None else None
