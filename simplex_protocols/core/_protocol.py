"""Sans-IO correlation of chat core commands and responses.

:class:`CoreProtocol` does no I/O. It turns a command string into the frame to send, and an
incoming frame into what it means: the response to a command in flight, an event, a response
nobody waits for any more, or a frame that is not in the CLI's shape. Frames have the shape of
the SimpleX CLI's WebSocket API (see :mod:`simplex_protocols.core._backend`)::

    out:       {"corrId": "7", "cmd": "/_get chats 1"}
    response:  {"corrId": "7", "resp": {"type": "apiChats", ...}}
    event:     {"resp": {"type": "newChatItems", ...}}

Every backend moves frames of this shape, so the correlation is written once, here.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CoreProtocol",
    "CoreProtocolEvent",
    "EventReceived",
    "InvalidFrame",
    "ResponseReceived",
    "UnmatchedResponse",
    "counter_corr_ids",
]


@dataclass(frozen=True, slots=True)
class ResponseReceived:
    """The response to a command in flight arrived.

    Attributes:
        corr_id: the correlation ID the command was sent with.
        command: the command string it answers.
        response: the response object (``resp``), unchanged: unknown fields are kept.
    """

    corr_id: str
    command: str
    response: dict[str, Any] = field(repr=False)


@dataclass(frozen=True, slots=True)
class EventReceived:
    """An event arrived (a frame without ``corrId``).

    Attributes:
        event: the event object (``resp``), unchanged: unknown types and fields are kept.
    """

    event: dict[str, Any] = field(repr=False)


@dataclass(frozen=True, slots=True)
class UnmatchedResponse:
    """A response arrived for a correlation ID that no command waits for.

    This happens when a command timed out or was cancelled and its answer came later; the
    core may well have carried the command out.
    """

    corr_id: str
    response: dict[str, Any] = field(repr=False)


@dataclass(frozen=True, slots=True)
class InvalidFrame:
    """A frame that is not in the CLI's shape (no ``resp`` object, or not an object at all).

    Attributes:
        reason: what was wrong, in words.
        code: ``"not_an_object"``, ``"bad_corr_id"`` or ``"no_resp"``.
        corr_id: the frame's correlation ID when it named a command in flight; that command
            is no longer in flight (its caller must be told it failed).
        command: the command string of that command, when ``corr_id`` is set.
        frame: the frame as received.
    """

    reason: str
    code: str
    corr_id: str | None = None
    command: str | None = None
    frame: Any = field(default=None, repr=False)


CoreProtocolEvent = ResponseReceived | EventReceived | UnmatchedResponse | InvalidFrame


def counter_corr_ids(start: int = 1) -> Callable[[], str]:
    """Return a source of correlation IDs ``"1"``, ``"2"``, ... (the default source)."""
    numbers: Iterator[int] = itertools.count(start)
    return lambda: str(next(numbers))


class CoreProtocol:
    """Correlation bookkeeping between commands sent and frames received. Never blocks.

    Args:
        corr_ids: a callable returning a fresh correlation ID each call (default: a counter
            from 1). IDs must be unique among the commands in flight.
    """

    def __init__(self, corr_ids: Callable[[], str] | None = None) -> None:
        self._next_corr_id = corr_ids if corr_ids is not None else counter_corr_ids()
        self._in_flight: dict[str, str] = {}

    @property
    def in_flight(self) -> Mapping[str, str]:
        """The commands waiting for a response, by correlation ID (a read-only view)."""
        return dict(self._in_flight)

    def send_command(self, cmd: str) -> tuple[str, dict[str, str]]:
        """Register a command as in flight and return its correlation ID and frame.

        Raises:
            ValueError: the ID source returned an ID that is already in flight, or not a
                string (a bug in the injected source).
        """
        corr_id = self._next_corr_id()
        if not isinstance(corr_id, str) or not corr_id:
            raise ValueError(f"correlation ID source returned {corr_id!r}, not a string")
        if corr_id in self._in_flight:
            raise ValueError(f"correlation ID {corr_id!r} is already in flight")
        self._in_flight[corr_id] = cmd
        return corr_id, {"corrId": corr_id, "cmd": cmd}

    def forget(self, corr_id: str) -> None:
        """Stop waiting for a command (it timed out or was cancelled). Idempotent.

        A response that arrives later becomes :class:`UnmatchedResponse`.
        """
        self._in_flight.pop(corr_id, None)

    def connection_lost(self) -> list[tuple[str, str]]:
        """Forget every command in flight and return them as ``(corr_id, command)`` pairs.

        Call when the connection to the core is lost: no response to these will come, so
        their callers must be failed.
        """
        lost = list(self._in_flight.items())
        self._in_flight.clear()
        return lost

    def receive_frame(self, frame: Any) -> list[CoreProtocolEvent]:
        """Interpret one incoming frame.

        Unknown fields of the frame and of ``resp`` are kept; unknown response and event
        types are not errors.
        """
        if not isinstance(frame, Mapping):
            return [
                InvalidFrame(
                    f"a frame must be a JSON object, not {type(frame).__name__}",
                    "not_an_object",
                    frame=frame,
                )
            ]
        corr_id = frame.get("corrId")
        resp = frame.get("resp")
        if corr_id is not None and not isinstance(corr_id, str):
            # The CLI echoes our own string IDs; a number here cannot match any command.
            return [
                InvalidFrame(
                    f"corrId must be a string, not {type(corr_id).__name__}",
                    "bad_corr_id",
                    frame=frame,
                )
            ]
        if isinstance(resp, Mapping) and not isinstance(resp, dict):
            resp = dict(resp)
        if not isinstance(resp, dict):
            command = self._in_flight.pop(corr_id, None) if corr_id is not None else None
            return [
                InvalidFrame(
                    "the frame has no resp object",
                    "no_resp",
                    corr_id=corr_id if command is not None else None,
                    command=command,
                    frame=frame,
                )
            ]
        if corr_id is None:
            return [EventReceived(resp)]
        command = self._in_flight.pop(corr_id, None)
        if command is None:
            return [UnmatchedResponse(corr_id, resp)]
        return [ResponseReceived(corr_id, command, resp)]
