"""``simplex-sim serve``: each simulated core as a WebSocket endpoint speaking the CLI's API.

``ws://127.0.0.1:PORT/NAME`` is the core ``NAME`` (created on demand, running, as the CLI's
core runs from its start); ``ws://127.0.0.1:PORT/`` is the default core. Frames are exactly
those of ``simplex-chat -p PORT``: ``{"corrId", "cmd"}`` in, ``{"corrId", "resp"}`` and
``{"resp"}`` out, ``"invalid request"`` for a frame that is not a request. The server binds
127.0.0.1 only.
"""

from __future__ import annotations

import re
from types import TracebackType
from typing import Any

import anyio
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from simplex_protocols import _wire

from ._backend import INVALID_REQUEST, frame_command
from ._network import SimNetwork
from ._session import Session

__all__ = ["SimServer"]

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class SimServer:
    """A WebSocket server over a :class:`SimNetwork`.

    Use as an async context manager, or call :meth:`start` and :meth:`aclose`::

        async with SimServer(network, port=0) as server:
            url = server.url("alice")   # ws://127.0.0.1:<port>/alice
    """

    def __init__(
        self,
        network: SimNetwork,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        default_core: str = "default",
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("simplex-sim serves on the loopback interface only")
        self.network = network
        self.host = host
        self.requested_port = port
        self.default_core = default_core
        self._server: Server | None = None
        self._connections: dict[ServerConnection, str] = {}

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        for sock in self._server.sockets:
            return int(sock.getsockname()[1])
        raise RuntimeError("server has no socket")

    def url(self, core: str | None = None) -> str:
        """The endpoint of one core (``None``: the default core)."""
        return f"ws://{self.host}:{self.port}/{core or ''}"

    async def start(self) -> None:
        self._server = await serve(
            self._handle,
            self.host,
            self.requested_port,
            compression=None,
            max_size=8 * 1024 * 1024,
            ping_interval=None,
        )

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> SimServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def serve_forever(self) -> None:
        if self._server is None:
            await self.start()
        assert self._server is not None
        await self._server.serve_forever()

    def drop_connections(self, core: str | None = None) -> int:
        """Abort the WebSocket connections of one core (or all), as a lost network would.

        Returns how many were dropped. Commands in flight on them get no response.
        """
        dropped = 0
        for ws, name in list(self._connections.items()):
            if core is None or name == core:
                ws.transport.abort()
                dropped += 1
        return dropped

    # ------------------------------------------------------------------ connections

    async def _handle(self, ws: ServerConnection) -> None:
        path = ws.request.path if ws.request is not None else "/"
        name = path.split("?", 1)[0].strip("/") or self.default_core
        if not _NAME_RE.match(name):
            await ws.close(1008, "invalid user name in path")
            return
        core = self.network.ensure_core(name, started=True)
        session = core.attach()
        self._connections[ws] = name
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._writer, ws, session)
                await self._reader(ws, session)
                tg.cancel_scope.cancel()
        finally:
            self._connections.pop(ws, None)
            if name in self.network.core_names:
                self.network.core(name).detach(session)
            self.network.changed()

    async def _reader(self, ws: ServerConnection, session: Session) -> None:
        try:
            async for message in ws:
                try:
                    frame: Any = _wire.loads(message)
                except _wire.WireJSONError:
                    frame = None
                request = frame_command(frame)
                if request is None:
                    session.push(dict(INVALID_REQUEST))
                    continue
                corr_id, cmd = request
                self.network.core(session.core_name).handle_command(session, corr_id, cmd)
        except ConnectionClosed:
            pass

    async def _writer(self, ws: ServerConnection, session: Session) -> None:
        try:
            while not session.closed:
                while session.outbox:
                    await ws.send(_wire.dumps(session.outbox.popleft()))
                await self.network.wait_for(session)
        except ConnectionClosed:
            pass
