"""The simulated network's in-process backend: frames in the CLI WebSocket shape, no sockets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from simplex_protocols.errors import CoreConnectionError

from ._session import Session

__all__ = ["INVALID_REQUEST", "SimBackend", "frame_command"]

JSON = dict[str, Any]

#: The response to a frame that is not a valid request (no ``corrId`` on it).
INVALID_REQUEST: JSON = {
    "resp": {
        "type": "chatCmdError",
        "chatError": {
            "type": "error",
            "errorType": {"type": "commandError", "message": "invalid request"},
        },
    }
}


def frame_command(frame: Any) -> tuple[str, str] | None:
    """``(corrId, cmd)`` of a request frame, or ``None`` if it is not a valid request."""
    if not isinstance(frame, Mapping):
        return None
    corr_id, cmd = frame.get("corrId"), frame.get("cmd")
    if not isinstance(corr_id, str) or not isinstance(cmd, str):
        return None
    return corr_id, cmd


class _Core(Protocol):
    def attach(self) -> Session: ...

    def detach(self, session: Session) -> None: ...

    def handle_command(self, session: Session | None, corr_id: str, command: str) -> None: ...


class _Network(Protocol):
    """The part of :class:`~simplex_protocols.sim.SimNetwork` a backend uses."""

    @property
    def core_names(self) -> list[str]: ...

    def core(self, name: str) -> _Core: ...

    def ensure_core(self, name: str, *, started: bool) -> _Core: ...

    def changed(self) -> None: ...

    async def wait_for(self, session: Session) -> None: ...


class SimBackend:
    """A :class:`~simplex_protocols.core.CoreBackend` attached to one simulated core.

    It speaks exactly the CLI WebSocket API's frames: ``{"corrId", "cmd"}`` out,
    ``{"corrId", "resp"}`` responses and ``{"resp"}`` events in. Several backends can attach
    to one core; each gets the responses to its own commands and every event.
    """

    def __init__(self, network: _Network, core: str) -> None:
        self._network = network
        self._core = core
        self._session: Session | None = None
        self._closed = False

    @property
    def description(self) -> str:
        return f"sim:{self._core}"

    def __repr__(self) -> str:
        return f"SimBackend({self._core!r})"

    async def connect(self) -> None:
        """Attach to the core (the core's backlog of events is delivered first)."""
        if self._closed:
            raise CoreConnectionError(f"{self.description}: backend is closed")
        if self._session is None or self._session.closed:
            self._session = self._network.ensure_core(self._core, started=False).attach()

    def _live_session(self) -> Session:
        session = self._session
        if session is None or self._closed:
            raise CoreConnectionError(f"{self.description}: not connected")
        if session.closed:
            raise CoreConnectionError(f"{self.description}: connection to the core was lost")
        return session

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        session = self._live_session()
        request = frame_command(frame)
        core = self._network.core(self._core)
        if request is None:
            session.push(dict(INVALID_REQUEST))
            return
        corr_id, cmd = request
        core.handle_command(session, corr_id, cmd)

    async def receive_frame(self) -> dict[str, Any]:
        while True:
            session = self._live_session()
            if session.outbox:
                return session.outbox.popleft()
            await self._network.wait_for(session)

    async def aclose(self) -> None:
        self._closed = True
        if self._session is not None and self._core in self._network.core_names:
            self._network.core(self._core).detach(self._session)
        self._network.changed()
