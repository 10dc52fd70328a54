"""The clients of one simulated core, and the order in which they get its output.

A command's response goes to the session that sent the command, before the events the
command caused; events go to every attached session, or wait in a backlog while none is
attached. :class:`Emitter` keeps those rules for one core.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["BACKLOG_LIMIT", "Emitter", "Session"]

JSON = dict[str, Any]

#: Events kept for a core while no client is attached; older ones are dropped first.
BACKLOG_LIMIT = 10_000


class Session:
    """One client attached to a core (a WebSocket connection or an in-process backend).

    Frames for the client go into :attr:`outbox` with :meth:`push`, which wakes the task
    waiting for this session (and only it), so a busy network does not wake idle clients.
    """

    def __init__(self, core_name: str, number: int) -> None:
        self.core_name = core_name
        self.number = number
        self.outbox: deque[JSON] = deque()
        self.closed = False
        self.wakeup: Any = None  # an anyio.Event set by push() or close(), made by the waiter

    def push(self, frame: JSON) -> None:
        """Queue a frame for the client and wake its waiting task."""
        self.outbox.append(frame)
        self.wake()

    def close(self) -> None:
        self.closed = True
        self.wake()

    def wake(self) -> None:
        event, self.wakeup = self.wakeup, None
        if event is not None:
            event.set()

    def __repr__(self) -> str:
        return f"Session({self.core_name!r}, #{self.number}, closed={self.closed})"


class _ChaosSwitch(Protocol):
    chaos: bool


class Emitter:
    """The sessions of one core, its backlog, and the events a running command defers.

    Args:
        core_name: the core's name (each session carries it).
        network: whose ``chaos`` switch decorates every frame (read at each frame, so the
            switch may change at any time).
        shape: how the core writes each response and event (a core profile's shapes).
    """

    def __init__(
        self,
        core_name: str,
        network: _ChaosSwitch,
        shape: Callable[[JSON], JSON] | None = None,
    ) -> None:
        self.core_name = core_name
        self.sessions: list[Session] = []
        self.backlog: deque[JSON] = deque()
        self._network = network
        self._shape = shape
        self._session_count = 0
        self._deferred: list[JSON] | None = None

    def attach(self) -> Session:
        """Attach a new client; it receives the backlog of events first."""
        self._session_count += 1
        session = Session(self.core_name, self._session_count)
        session.outbox.extend(self.backlog)
        self.backlog.clear()
        self.sessions.append(session)
        return session

    def detach(self, session: Session) -> None:
        session.close()
        if session in self.sessions:
            self.sessions.remove(session)

    def drop_sessions(self) -> None:
        for session in list(self.sessions):
            self.detach(session)

    def _decorate(self, resp: JSON) -> JSON:
        if self._shape is not None:
            resp = self._shape(resp)
        if self._network.chaos:
            resp = dict(resp)
            resp["simChaos"] = {"note": "extra field added by the simulator's chaos mode"}
        return resp

    def reply(self, session: Session | None, corr_id: str, resp: JSON) -> None:
        """Send a command's response to the session that sent the command."""
        if session is None or session.closed:
            return
        session.push({"corrId": corr_id, "resp": self._decorate(resp)})

    def defer(self) -> None:
        """Hold the events emitted from now on until :meth:`flush_deferred` (a command runs:
        its response goes first)."""
        self._deferred = []

    def emit(self, resp: JSON) -> None:
        """Send an event to every attached session (after the current command's response)."""
        if self._deferred is not None:
            self._deferred.append(resp)
            return
        frame = {"resp": self._decorate(resp)}
        if not self.sessions:
            self.backlog.append(frame)
            while len(self.backlog) > BACKLOG_LIMIT:
                self.backlog.popleft()
            return
        for session in self.sessions:
            session.push(copy.deepcopy(frame) if len(self.sessions) > 1 else frame)

    def flush_deferred(self) -> None:
        deferred, self._deferred = self._deferred, None
        for resp in deferred or []:
            self.emit(resp)
