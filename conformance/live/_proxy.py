"""A chat core backend that sits between a bot and its core and rewrites what passes.

The mutant bots of the selftest are the reference bot behind a :class:`RewritingBackend`: the
bot's code stays as it is, and the mutant changes one thing on the wire, the way a broken
implementation would (a reply without its quote, an envelope with both ``response`` and
``error``, a request whose ``requestKey`` the bot never sees ...).

A :class:`Rewrite` sees every command the bot sends (the command string) and every event the
core sends the bot. It may change a command, send more commands after it (their responses are
swallowed), delay it on the clock, or answer it itself; and it may change or drop an event.
Responses to the bot's own commands pass unchanged.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from simplex_protocols._clock import Clock
from simplex_protocols._wire import WireJSONError, loads
from simplex_protocols.core import CoreBackend

__all__ = [
    "Outgoing",
    "Rewrite",
    "RewritingBackend",
    "json_object",
]

JSON = dict[str, Any]

_EXTRA_PREFIX = "mutant-"


@dataclass(slots=True)
class Outgoing:
    """What the backend does with one command of the bot.

    Attributes:
        command: the command to send in its place (with the bot's ``corrId``), or ``None`` to
            answer the bot with ``response`` instead.
        extra: commands sent after it, whose responses the bot never sees.
        delay_s: seconds of the clock to wait before sending.
        response: the response the bot gets when ``command`` is ``None``.
    """

    command: str | None
    extra: list[str] = field(default_factory=list)
    delay_s: float = 0.0
    response: JSON | None = None


class Rewrite:
    """A mutant's changes; the base class changes nothing."""

    def outgoing(self, command: str) -> Outgoing:
        """What to do with a command the bot sends."""
        return Outgoing(command)

    def incoming(self, event: JSON) -> JSON | None:
        """The event the bot gets in place of ``event`` (``None``: the bot gets nothing)."""
        return event


class RewritingBackend:
    """A :class:`CoreBackend` that passes frames between a bot and ``inner`` through
    ``rewrite``."""

    def __init__(self, inner: CoreBackend, rewrite: Rewrite, clock: Clock) -> None:
        self.inner = inner
        self.rewrite = rewrite
        self.clock = clock
        self._extra_ids = itertools.count(1)
        self._answers: deque[JSON] = deque()

    @property
    def description(self) -> str:
        return self.inner.description

    async def connect(self) -> None:
        await self.inner.connect()

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        command = frame.get("cmd")
        if not isinstance(command, str):
            await self.inner.send_frame(frame)
            return
        plan = self.rewrite.outgoing(command)
        if plan.delay_s > 0:
            await self.clock.sleep(plan.delay_s)
        if plan.command is None:
            self._answers.append({"corrId": frame.get("corrId"), "resp": plan.response or {}})
        else:
            await self.inner.send_frame({**frame, "cmd": plan.command})
        for extra in plan.extra:
            corr = f"{_EXTRA_PREFIX}{next(self._extra_ids)}"
            await self.inner.send_frame({"corrId": corr, "cmd": extra})

    async def receive_frame(self) -> dict[str, Any]:
        while True:
            if self._answers:
                return self._answers.popleft()
            frame = await self.inner.receive_frame()
            corr = frame.get("corrId")
            if isinstance(corr, str):
                if corr.startswith(_EXTRA_PREFIX):
                    continue
                return frame
            event = frame.get("resp")
            if not isinstance(event, dict):
                return frame
            changed = self.rewrite.incoming(event)
            if changed is None:
                continue
            return {**frame, "resp": changed}

    async def aclose(self) -> None:
        await self.inner.aclose()


def json_object(text: str) -> JSON | None:
    """``text`` read as a JSON object, or ``None``."""
    try:
        value = loads(text)
    except (WireJSONError, ValueError):
        return None
    return value if isinstance(value, dict) else None
