"""A chat core played by the test: each command answered by a function, under a real ChatCore.

For unit tests of the server's parts that need a core but no network: the server talks to it
through ``ChatAPI`` over ``ChatCore``, exactly as it talks to a real one, and the test sees every
command string it sent.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

from simplex_protocols.core import ChatAPI, ChatCore
from simplex_protocols.errors import CoreConnectionError

JSON = dict[str, Any]

#: Answers one command: the response (a dict), at once or awaited.
Handler = Callable[[str], JSON | Awaitable[JSON]]


class ScriptedBackend:
    """A core backend whose every command is answered by ``handler(cmd)``.

    The handler runs in the task that sends the command, so a handler that waits holds that
    command (and only it) until it returns.
    """

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.commands: list[str] = []
        self._send, self._receive = anyio.create_memory_object_stream[JSON](math.inf)

    @property
    def description(self) -> str:
        return "scripted"

    async def connect(self) -> None:
        return None

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        cmd = str(frame["cmd"])
        self.commands.append(cmd)
        answer = self.handler(cmd)
        response = await answer if inspect.isawaitable(answer) else answer
        self._send.send_nowait({"corrId": frame["corrId"], "resp": response})

    async def receive_frame(self) -> JSON:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise CoreConnectionError("scripted: closed") from None

    async def aclose(self) -> None:
        self._send.close()


@asynccontextmanager
async def scripted_api(handler: Handler) -> AsyncIterator[tuple[ChatAPI, ScriptedBackend]]:
    """A ``ChatAPI`` over a ``ChatCore`` over a :class:`ScriptedBackend`."""
    backend = ScriptedBackend(handler)
    async with ChatCore(backend) as core:
        yield ChatAPI(core), backend
