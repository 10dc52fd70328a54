"""A scripted chat core backend for the core client's tests: the test plays the core."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from simplex_protocols.errors import CoreConnectionError

Responder = Callable[[str], dict[str, Any] | None]


class FakeBackend:
    """Records the frames sent; frames pushed by the test come back from receive_frame.

    With ``responder`` set, each command is answered at once with ``responder(cmd)`` (no
    answer when it returns ``None``).
    """

    def __init__(self, description: str = "fake:core", responder: Responder | None = None) -> None:
        self._description = description
        self.responder = responder
        self.sent: list[dict[str, Any]] = []
        self.connects = 0
        self.closes = 0
        self.connected = False
        self.connect_error: BaseException | None = None
        self._send: MemoryObjectSendStream[Any] | None = None
        self._recv: MemoryObjectReceiveStream[Any] | None = None
        self._sent_changed = anyio.Event()

    @property
    def description(self) -> str:
        return self._description

    async def connect(self) -> None:
        if self.connect_error is not None:
            raise self.connect_error
        self.connects += 1
        self._send, self._recv = anyio.create_memory_object_stream[Any](math.inf)
        self.connected = True

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        if not self.connected:
            raise CoreConnectionError("fake: not connected")
        self.sent.append(dict(frame))
        self._sent_changed.set()
        self._sent_changed = anyio.Event()
        if self.responder is not None:
            resp = self.responder(str(frame["cmd"]))
            if resp is not None:
                self.push({"corrId": frame["corrId"], "resp": resp})

    async def receive_frame(self) -> dict[str, Any]:
        recv = self._recv
        if recv is None:
            raise CoreConnectionError("fake: not connected")
        try:
            item = await recv.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise CoreConnectionError("fake: connection closed") from None
        if isinstance(item, BaseException):
            raise item
        return item  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        self.closes += 1
        self.connected = False
        if self._send is not None:
            self._send.close()

    # -- the test's side ------------------------------------------------------------------

    def push(self, frame: Any) -> None:
        """Deliver a frame (any value) to the reader."""
        assert self._send is not None
        self._send.send_nowait(frame)

    def respond(self, corr_id: str, resp: dict[str, Any]) -> None:
        self.push({"corrId": corr_id, "resp": resp})

    def event(self, resp: dict[str, Any]) -> None:
        self.push({"resp": resp})

    def drop(self, reason: str = "fake: connection dropped") -> None:
        """Lose the connection: receive_frame raises CoreConnectionError."""
        self.connected = False
        self.push(CoreConnectionError(reason))

    async def wait_sent(self, count: int) -> list[dict[str, Any]]:
        """Wait until ``count`` frames were sent in total."""
        while len(self.sent) < count:
            await self._sent_changed.wait()
        return self.sent
