"""Test kit for the simulated network: the scripted users of ``simplex_protocols.sim.testing``,
recording every frame.

``World`` is :class:`simplex_protocols.sim.testing.World` whose clients' backends record every
frame the simulator sends (responses and events), so the fidelity test can check each one's
shape.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from typing import Any

from simplex_protocols.core import CoreBackend
from simplex_protocols.sim import testing
from simplex_protocols.sim.testing import RecordingBackend, ScriptedUser

JSON = dict[str, Any]

#: Every wait in the tests is bounded by this many (real) seconds.
WAIT_S = testing.WAIT_S


class Recorder:
    """Frames received by clients: ``(kind, resp)`` with kind ``response`` or ``event``."""

    def __init__(self) -> None:
        self.frames: list[tuple[str, JSON]] = []

    def record(self, frame: Mapping[str, Any]) -> None:
        resp = frame.get("resp")
        if isinstance(resp, dict):
            self.frames.append(("response" if "corrId" in frame else "event", resp))

    def types(self, kind: str | None = None) -> set[str]:
        return {r["type"] for k, r in self.frames if kind is None or k == kind}


_CAPTURE: contextvars.ContextVar[Recorder | None] = contextvars.ContextVar("capture", default=None)


@contextlib.contextmanager
def capture() -> Iterator[Recorder]:
    """Record every frame of every World made inside the block into one recorder."""
    recorder = Recorder()
    token = _CAPTURE.set(recorder)
    try:
        yield recorder
    finally:
        _CAPTURE.reset(token)


class Client(ScriptedUser):
    """A ChatCore on one simulated core, with every event it receives kept in order;
    ``event`` is the next event of a type (after the last one returned)."""

    event = ScriptedUser.next_event


class World(testing.World):
    """A seeded network on a manual clock, and the clients of a test; every frame the
    clients receive goes to the recorder of :func:`capture` (or the world's own)."""

    user_class = Client

    def __init__(
        self,
        seed: int = 7,
        *,
        chaos: bool = False,
        websocket: bool = False,
        core_profile: str | None = None,
    ) -> None:
        super().__init__(
            seed, chaos=chaos, websocket=websocket, wait_s=WAIT_S, core_profile=core_profile
        )
        self.recorder = _CAPTURE.get() or Recorder()

    async def attach(self, name: str, backend: CoreBackend | None = None) -> ScriptedUser:
        """A client on the core ``name`` (created empty when missing)."""
        inner = backend if backend is not None else self.backend(name)
        return await super().attach(name, RecordingBackend(inner, self.recorder.record))


def text_item(event: JSON) -> list[tuple[int, str, str]]:
    """(itemId, direction, text) of each item of a newChatItems-like event."""
    out = []
    for aci in event["chatItems"]:
        item = aci["chatItem"]
        out.append((item["meta"]["itemId"], item["chatDir"]["type"], item["meta"]["itemText"]))
    return out
