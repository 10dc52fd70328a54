"""The bot's log: one line per call (never its contents, unless asked), and a binding wrapper
that logs contents for debugging.

Logger names:

- ``simplex_protocols.bot``: the bot's life (profile, address, start, stop);
- ``simplex_protocols.bot.calls``: one INFO line per call: who (the caller key), protocol,
  method, outcome, duration, and the caller's W3C trace ID when the request's
  ``params._meta.traceparent`` is valid; the :class:`~simplex_protocols.transports.CallRecord` is in the
  record's ``simplex_call`` attribute for structured handlers;
- ``simplex_protocols.bot.contents``: requests and replies, only when the bot was made with
  ``log_contents=True`` (for debugging: the contents are the callers' data).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

from simplex_protocols._wire import dumps
from simplex_protocols.bindings import Binding, Caller, Emit, EnvelopeOutcome

__all__ = [
    "BOT_LOGGER",
    "CALLS_LOGGER",
    "CONTENTS_LOGGER",
    "ContentLoggingBinding",
    "log_call_record",
]

BOT_LOGGER: Final = "simplex_protocols.bot"
CALLS_LOGGER: Final = "simplex_protocols.bot.calls"
CONTENTS_LOGGER: Final = "simplex_protocols.bot.contents"

#: Contents longer than this are cut in the log (the rest is counted, not shown).
_MAX_LOGGED_CHARS: Final = 4000

calls_logger = logging.getLogger(CALLS_LOGGER)
contents_logger = logging.getLogger(CONTENTS_LOGGER)


def log_call_record(bot_name: str, record: Any) -> None:
    """Write the call line for a transport's ``CallRecord``."""
    # The trace ID only when the record has one (a checked traceparent: 32 hex digits, never
    # a peer's text), so that one trace ID follows a call from the caller into this line.
    trace_id = getattr(record, "trace_id", None)
    calls_logger.info(
        "%s: %s call from %s: %s %s -> %s in %.3f s%s",
        bot_name,
        record.transport.value,
        record.caller,
        record.protocol or "?",
        record.method or "?",
        record.outcome,
        record.duration_s,
        f" (trace {trace_id})" if trace_id else "",
        extra={"simplex_call": record, "simplex_bot": bot_name},
    )


def _text(value: Any) -> str:
    try:
        text = dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > _MAX_LOGGED_CHARS:
        return f"{text[:_MAX_LOGGED_CHARS]}... ({len(text) - _MAX_LOGGED_CHARS} more characters)"
    return text


class ContentLoggingBinding:
    """A binding that logs each request and each message of its answer, then passes it on.

    Only for debugging: contents are the callers' data. Everything else is the wrapped
    binding's.
    """

    def __init__(self, inner: Binding) -> None:
        self.inner = inner
        # The optional internal_error(request, reason) of the contract: offered only when the
        # wrapped binding offers it, so the transports' fallback stays the same for both.
        hook = getattr(inner, "internal_error", None)
        if callable(hook):
            self.internal_error = hook

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def versions(self) -> tuple[str, ...]:
        return self.inner.versions

    async def handle_chat(self, request: Mapping[str, Any], caller: Caller, emit: Emit) -> None:
        contents_logger.info("chat %s request from %s: %s", self.name, caller.key, _text(request))

        async def logged(message: dict[str, Any]) -> None:
            contents_logger.info("chat %s reply to %s: %s", self.name, caller.key, _text(message))
            await emit(message)

        await self.inner.handle_chat(request, caller, logged)

    async def handle_rpc(
        self, request: Any, caller: Caller, *, budget_s: float
    ) -> dict[str, Any] | EnvelopeOutcome:
        contents_logger.info("rpc %s request from %s: %s", self.name, caller.key, _text(request))
        answer = await self.inner.handle_rpc(request, caller, budget_s=budget_s)
        shown = answer if isinstance(answer, dict) else {"envelopeError": answer.code}
        contents_logger.info("rpc %s answer to %s: %s", self.name, caller.key, _text(shown))
        return answer

    def parse_error(self, raw_request: str, reason: str) -> dict[str, Any]:
        return self.inner.parse_error(raw_request, reason)

    def oversize_error(self, message: Mapping[str, Any]) -> dict[str, Any]:
        return self.inner.oversize_error(message)

    def is_final(self, request: Mapping[str, Any], message: Mapping[str, Any]) -> bool:
        return self.inner.is_final(request, message)
