"""Test kit for the simulated network: clients over ChatCore that record every frame.

``World`` owns a seeded :class:`SimNetwork` on a :class:`ManualClock` and a task group;
``World.client(name)`` attaches a :class:`ChatCore` to a simulated core through a backend that
records every frame the simulator sends (responses and events), so the fidelity test can
check each one's shape.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Mapping
from types import TracebackType
from typing import Any

import anyio
import anyio.abc

from simplex_protocols._clock import ManualClock
from simplex_protocols._wire import dumps
from simplex_protocols.core import ChatCore, CoreBackend, WebSocketBackend
from simplex_protocols.errors import CoreConnectionError, CoreError
from simplex_protocols.sim import SimNetwork, SimServer

JSON = dict[str, Any]

#: Every wait in the tests is bounded by this many (real) seconds.
WAIT_S = 5.0


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


class RecordingBackend:
    """A CoreBackend wrapper that records the frames it receives."""

    def __init__(self, inner: CoreBackend, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    @property
    def description(self) -> str:
        return self.inner.description

    async def connect(self) -> None:
        await self.inner.connect()

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        await self.inner.send_frame(frame)

    async def receive_frame(self) -> dict[str, Any]:
        frame = await self.inner.receive_frame()
        self.recorder.record(frame)
        return frame

    async def aclose(self) -> None:
        await self.inner.aclose()


class Client:
    """A ChatCore on one simulated core, with every event it receives kept in order."""

    def __init__(self, world: World, name: str, core: ChatCore) -> None:
        self.world = world
        self.name = name
        self.core = core
        self.events: list[JSON] = []
        self._seen = 0
        self._arrived = anyio.Event()
        self.user_id = 0
        self.lost = False

    async def _collect(self, task_status: anyio.abc.TaskStatus[None]) -> None:
        try:
            async with self.core.events(buffer=100_000) as sub:
                task_status.started()
                async for event in sub:
                    self.events.append(event)
                    self._arrived.set()
                    self._arrived = anyio.Event()
        except CoreConnectionError:
            self.lost = True

    async def reconnect(self) -> None:
        """Reconnect after a lost connection and collect events again."""
        await self.core.reconnect()
        self.lost = False
        assert self.world._tg is not None
        await self.world._tg.start(self._collect)

    async def cmd(self, text: str) -> JSON:
        """Run a command; fail the test on an error response."""
        with anyio.fail_after(WAIT_S):
            return await self.core.command(text)

    async def cmd_json(self, head: str, value: Any) -> JSON:
        return await self.cmd(f"{head} {dumps(value)}")

    async def error(self, text: str) -> JSON:
        """Run a command that must fail; return the core's ChatError object."""
        with anyio.fail_after(WAIT_S):
            try:
                resp = await self.core.command(text)
            except CoreError as exc:
                return dict(exc.chat_error)
        raise AssertionError(f"{text!r} succeeded: {resp}")

    async def event(self, etype: str, where: Callable[[JSON], bool] | None = None) -> JSON:
        """The next event of this type (after the last one returned) that matches."""
        with anyio.fail_after(WAIT_S):
            while True:
                for i in range(self._seen, len(self.events)):
                    ev = self.events[i]
                    if ev.get("type") == etype and (where is None or where(ev)):
                        self._seen = i + 1
                        return ev
                await self._arrived.wait()

    async def message(self, text: str | None = None) -> JSON:
        """The next ``newChatItems`` event that carries a received message (with ``text``)."""

        def is_message(ev: JSON) -> bool:
            item = ev["chatItems"][0]["chatItem"]
            if item["content"]["type"] != "rcvMsgContent":
                return False
            return text is None or item["meta"]["itemText"] == text

        return await self.event("newChatItems", is_message)

    def all(self, etype: str) -> list[JSON]:
        return [e for e in self.events if e.get("type") == etype]

    async def settle(self) -> None:
        """Let every frame the simulator has queued reach this client."""
        for _ in range(20):
            await anyio.lowlevel.checkpoint()


class World:
    """A seeded network on a manual clock, and the clients of a test."""

    def __init__(self, seed: int = 7, *, chaos: bool = False, websocket: bool = False) -> None:
        self.clock = ManualClock()
        self.network = SimNetwork(seed=seed, clock=self.clock, chaos=chaos)
        self.websocket = websocket
        self.server: SimServer | None = None
        self.recorder = _CAPTURE.get() or Recorder()
        self._stack = contextlib.AsyncExitStack()
        self._tg: anyio.abc.TaskGroup | None = None
        self.clients: dict[str, Client] = {}

    async def __aenter__(self) -> World:
        if self.websocket:
            self.server = await self._stack.enter_async_context(SimServer(self.network, port=0))
        self._tg = await self._stack.enter_async_context(anyio.create_task_group())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        await self._stack.__aexit__(exc_type, exc, tb)

    async def attach(self, name: str, backend: CoreBackend | None = None) -> Client:
        """A client on the core ``name`` (created empty when missing)."""
        assert self._tg is not None
        if backend is not None:
            inner = backend
        elif self.server is not None:
            inner = WebSocketBackend(self.server.url(name), ping_interval=None)
        else:
            inner = self.network.backend(name)
        core = ChatCore(RecordingBackend(inner, self.recorder))
        await self._stack.enter_async_context(core)
        client = Client(self, name, core)
        await self._tg.start(client._collect)
        self.clients[name] = client
        return client

    async def user(
        self,
        name: str,
        *,
        display_name: str | None = None,
        peer_type: str | None = None,
        preferences: JSON | None = None,
        service_requests: bool = False,
    ) -> Client:
        """A new user created through the API (``/_create user``, ``/_start``)."""
        client = await self.attach(name)
        profile: JSON = {"displayName": display_name or name, "fullName": ""}
        if peer_type is not None:
            profile["peerType"] = peer_type
        if preferences is not None:
            profile["preferences"] = preferences
        created = await client.cmd_json(
            "/_create user", {"profile": profile, "pastTimestamp": False}
        )
        client.user_id = created["user"]["userId"]
        opts = " service_requests=on" if service_requests else ""
        await client.cmd(f"/_start main=on{opts}")
        return client

    async def address(
        self,
        client: Client,
        *,
        pq: str | None = "on",
        settings: JSON | None = None,
    ) -> str:
        """Create the client's address with settings; return its short link."""
        opt = f" pq_ratchet={pq}" if pq else ""
        created = await client.cmd(f"/_address {client.user_id}{opt}")
        body = (
            settings
            if settings is not None
            else {
                "businessAddress": False,
                "autoAccept": {"acceptIncognito": False},
            }
        )
        await client.cmd_json(f"/_address_settings {client.user_id}", body)
        link: str = created["connLinkContact"]["connShortLink"]
        return link

    async def connect(self, a: Client, b: Client, link: str) -> tuple[JSON, JSON]:
        """``a`` connects to ``b``'s address; returns (a's contact, b's contact)."""
        await a.cmd(f"/_connect {a.user_id} {link}")
        ea = await a.event("contactConnected")
        eb = await b.event("contactConnected")
        return ea["contact"], eb["contact"]


def text_item(event: JSON) -> list[tuple[int, str, str]]:
    """(itemId, direction, text) of each item of a newChatItems-like event."""
    out = []
    for aci in event["chatItems"]:
        item = aci["chatItem"]
        out.append((item["meta"]["itemId"], item["chatDir"]["type"], item["meta"]["itemText"]))
    return out
