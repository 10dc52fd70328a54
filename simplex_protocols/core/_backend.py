"""The contract between :class:`~simplex_protocols.core.ChatCore` and a chat core backend.

A backend only moves frames. Frames have the shape of the SimpleX CLI's WebSocket API, whatever
the backend speaks underneath:

- out: ``{"corrId": "<string>", "cmd": "<command string>"}``
- in, the response to a command: ``{"corrId": "<same string>", "resp": <ChatResponse>}``; a
  command error is ``{"corrId": ..., "resp": {"type": "chatCmdError", "chatError": <ChatError>}}``
- in, an event: ``{"resp": <ChatEvent>}`` (no ``corrId``); an event error is
  ``{"resp": {"type": "chatError", "chatError": <ChatError>}}``

The embedded libsimplex backend turns ``{"result": ...}`` / ``{"error": ...}`` into these shapes,
so :class:`ChatCore` correlates and dispatches the same way for every backend.

Rules every backend follows:

- It only moves frames: no correlation, no retries, no interpretation of commands.
- Its own dependency's exceptions (``websockets``, ``ctypes``, the simulator's internals) never
  escape: a lost or unusable connection is :class:`~simplex_protocols.errors.CoreConnectionError`
  (mapped at one place, with ``raise ... from``).
- Once the connection is lost, :meth:`CoreBackend.receive_frame` raises
  :class:`~simplex_protocols.errors.CoreConnectionError` and keeps raising it; it never hangs.
- :meth:`CoreBackend.connect` may be called again after the connection was lost or closed
  (``ChatCore.reconnect``); it starts a fresh connection.
- :meth:`CoreBackend.send_frame` may be called by several tasks at once.
- It runs on anyio's asyncio backend (the embedded one needs asyncio).

The simulated network provides its in-process backend through
``simplex_protocols.sim.default_network().backend(user)``, which returns a :class:`CoreBackend`
synchronously; ``--core sim:USER`` resolves to it lazily.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

__all__ = ["CoreBackend"]


@runtime_checkable
class CoreBackend(Protocol):
    """Moves frames between :class:`ChatCore` and one chat core."""

    @property
    def description(self) -> str:
        """Where the core is, for logs and reports: ``ws://127.0.0.1:5225``, ``lib:./bot``, ``sim:alice``."""
        ...

    async def connect(self) -> None:
        """Open the connection (or start the embedded core); again after a loss, a new one.

        Raises:
            CoreConnectionError: the core cannot be reached.
            BackendUnavailableError: this backend cannot run here (a library is missing).
        """
        ...

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        """Send ``{"corrId", "cmd"}``.

        Raises:
            CoreConnectionError: the connection is closed or was lost.
        """
        ...

    async def receive_frame(self) -> dict[str, Any]:
        """Wait for the next incoming frame (a response or an event).

        Raises:
            CoreConnectionError: the connection was closed or lost; no more frames will come.
        """
        ...

    async def aclose(self) -> None:
        """Close the connection. Idempotent."""
        ...
