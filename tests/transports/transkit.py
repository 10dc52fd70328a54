"""Test kit for the transports: peers on a simulated network, and small bindings of our own.

``Net`` owns a seeded :class:`SimNetwork` on a :class:`ManualClock`, a task group and the
peers of a test. A ``Peer`` is a user with its own :class:`ChatCore` on the network, which
keeps every event it receives so that tests can wait for one.

``EchoBinding`` is a JSON-RPC binding whose behaviour the request chooses (``params``):
``notify`` notifications before the response, ``big`` bytes of padding in the response,
``fail`` to raise, ``conversation`` to need a conversation over Service RPC, ``sleep`` seconds
on the clock before answering, ``gate`` to wait for a test's signal, ``outcome`` to answer an
envelope error of that code over Service RPC.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

import anyio
import anyio.abc

from simplex_protocols._clock import ManualClock
from simplex_protocols._wire import dumps
from simplex_protocols.bindings import Caller, Emit, EnvelopeOutcome
from simplex_protocols.chat_call import jsonrpc_response_to
from simplex_protocols.core import ChatAPI, ChatCore, CoreBackend
from simplex_protocols.sim import SimNetwork

JSON = dict[str, Any]

#: Every wait in the tests is bounded by this many real seconds.
WAIT_S = 5.0

ECHO_PROTOCOLS = {"echo": {"versions": ["1"], "transports": {"chat": True, "rpc": True}}}


async def until(predicate: Callable[[], bool]) -> None:
    """Let other tasks run until ``predicate()`` holds (bounded by ``WAIT_S``; no sleeping)."""
    with anyio.fail_after(WAIT_S):
        while not predicate():
            await anyio.lowlevel.checkpoint()


class Peer:
    """A user on its own core, with every event it received kept in order."""

    def __init__(self, net: Net, name: str, core: ChatCore) -> None:
        self.net = net
        self.name = name
        self.core = core
        self.api = ChatAPI(core)
        self.user_id = 0
        self.display_name = name
        self.events: list[JSON] = []
        self._arrived = anyio.Event()

    async def _collect(self, task_status: anyio.abc.TaskStatus[None]) -> None:
        async with self.core.events(buffer=100_000) as sub:
            task_status.started()
            async for event in sub:
                self.events.append(event)
                self._arrived.set()
                self._arrived = anyio.Event()

    async def cmd(self, text: str) -> JSON:
        with anyio.fail_after(WAIT_S):
            return await self.core.command(text)

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Wait (bounded) until ``predicate()`` holds, re-checking as events arrive."""
        with anyio.fail_after(WAIT_S):
            while not predicate():
                await self._arrived.wait()

    async def event(self, etype: str, where: Callable[[JSON], bool] | None = None) -> JSON:
        """The first event of this type that matches (waiting for it if needed)."""
        found: list[JSON] = []

        def check() -> bool:
            for ev in self.events:
                if ev.get("type") == etype and (where is None or where(ev)):
                    found.append(ev)
                    return True
            return False

        await self.wait_for(check)
        return found[0]

    def received(self) -> list[JSON]:
        """Received chat items (``rcvMsgContent``), as AChatItem objects, in order."""
        out = []
        for ev in self.events:
            if ev.get("type") != "newChatItems":
                continue
            for aci in ev["chatItems"]:
                if aci["chatItem"]["content"]["type"] == "rcvMsgContent":
                    out.append(aci)
        return out

    def received_texts(self) -> list[str]:
        return [aci["chatItem"]["content"]["msgContent"]["text"] for aci in self.received()]

    async def send(
        self, ref: str, text: str, *, quoted: int | None = None, content: JSON | None = None
    ) -> int:
        """Send a message (text, or another content); return its item ID."""
        msg: JSON = {
            "msgContent": content if content is not None else {"type": "text", "text": text}
        }
        if quoted is not None:
            msg["quotedItemId"] = quoted
        sent = await self.cmd(f"/_send {ref} json {dumps([msg])}")
        return int(sent["chatItems"][0]["chatItem"]["meta"]["itemId"])

    async def settle(self) -> None:
        """Let every frame the simulator queued reach this peer's subscribers."""
        for _ in range(30):
            await anyio.lowlevel.checkpoint()


class Net:
    """A seeded network on a manual clock, the peers of a test, and a task group."""

    def __init__(self, seed: int = 11) -> None:
        self.clock = ManualClock()
        self.network = SimNetwork(seed=seed, clock=self.clock)
        self._stack = contextlib.AsyncExitStack()
        self.tg: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> Net:
        self.tg = await self._stack.enter_async_context(anyio.create_task_group())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.tg is not None:
            self.tg.cancel_scope.cancel()
        await self._stack.__aexit__(exc_type, exc, tb)

    async def attach(self, name: str, backend: CoreBackend | None = None) -> Peer:
        assert self.tg is not None
        core = ChatCore(backend if backend is not None else self.network.backend(name))
        await self._stack.enter_async_context(core)
        peer = Peer(self, name, core)
        await self.tg.start(peer._collect)
        return peer

    async def peer(
        self,
        name: str,
        *,
        display_name: str | None = None,
        peer_type: str | None = None,
        preferences: JSON | None = None,
        service_requests: bool = False,
        backend: CoreBackend | None = None,
    ) -> Peer:
        """A new user, created and started through the API."""
        peer = await self.attach(name, backend)
        profile: JSON = {"displayName": display_name or name, "fullName": ""}
        if peer_type is not None:
            profile["peerType"] = peer_type
        if preferences is not None:
            profile["preferences"] = preferences
        created = await peer.cmd(
            f"/_create user {dumps({'profile': profile, 'pastTimestamp': False})}"
        )
        peer.user_id = created["user"]["userId"]
        peer.display_name = display_name or name
        opts = " service_requests=on" if service_requests else ""
        await peer.cmd(f"/_start main=on{opts}")
        return peer

    async def bot(self, name: str, **kw: Any) -> Peer:
        """A bot that declares the echo protocol on both transports."""
        return await self.peer(
            name, peer_type="bot", preferences={"protocols": ECHO_PROTOCOLS}, **kw
        )

    async def address(self, peer: Peer, *, pq: bool | None = True) -> str:
        opt = "" if pq is None else f" pq_ratchet={'on' if pq else 'off'}"
        created = await peer.cmd(f"/_address {peer.user_id}{opt}")
        settings = {"businessAddress": False, "autoAccept": {"acceptIncognito": False}}
        await peer.cmd(f"/_address_settings {peer.user_id} {dumps(settings)}")
        return str(created["connLinkContact"]["connShortLink"])

    async def connect(self, a: Peer, b: Peer, link: str | None = None) -> tuple[int, int]:
        """``a`` connects to ``b``'s address (``link``, or a new one); returns (b's contact ID
        at a, a's at b)."""
        link = link if link is not None else await self.address(b)
        await a.cmd(f"/_connect {a.user_id} {link}")
        ea = await a.event("contactConnected")
        eb = await b.event(
            "contactConnected", lambda e: e["contact"]["localDisplayName"] == a.display_name
        )
        return int(ea["contact"]["contactId"]), int(eb["contact"]["contactId"])

    async def group(self, owner: Peer, members: list[Peer], name: str = "team") -> dict[str, int]:
        """``owner`` creates a group and every member joins by its link; returns each peer's
        group ID (by peer name), once every member is connected to every other."""
        created = await owner.cmd(
            f"/_group {owner.user_id} {dumps({'displayName': name, 'fullName': ''})}"
        )
        gid = int(created["groupInfo"]["groupId"])
        link = (await owner.cmd(f"/_create link #{gid} member"))["groupLink"]
        short = link["connLinkContact"]["connShortLink"]
        ids = {owner.name: gid}
        for joiner in members:
            await joiner.cmd(f"/_connect {joiner.user_id} {short}")
            joined = await joiner.event(
                "userJoinedGroup", lambda e: e["groupInfo"]["groupProfile"]["displayName"] == name
            )
            ids[joiner.name] = int(joined["groupInfo"]["groupId"])
        for m in members:
            others = len(members) - 1
            await m.wait_for(
                lambda m=m, others=others: (
                    sum(1 for e in m.events if e.get("type") == "connectedToGroupMember") >= others
                )
            )
        return ids

    async def member_id(self, viewer: Peer, group_id: int, display_name: str) -> int:
        """The groupMemberId of a member, in ``viewer``'s database."""
        members = await viewer.api.list_members(group_id)
        for m in members:
            if m["memberProfile"]["displayName"] == display_name:
                return int(m["groupMemberId"])
        raise AssertionError(f"{display_name} is not a member of #{group_id} at {viewer.name}")

    async def start(self, func: Any) -> None:
        """Start a long-running task (a responder's ``serve``) in the test's task group."""
        assert self.tg is not None
        await self.tg.start(func)


# --------------------------------------------------------------------- bindings


def rpc_request(rid: Any = 1, method: str = "echo", **params: Any) -> JSON:
    """A JSON-RPC request for the echo binding."""
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


class EchoBinding:
    """A JSON-RPC binding that answers what ``params`` asks for (see the module docstring)."""

    def __init__(self, name: str = "echo", *, clock: ManualClock | None = None) -> None:
        self._name = name
        self.clock = clock
        self.callers: list[Caller] = []
        self.budgets: list[float] = []
        self.requests: list[Any] = []
        self.gates: dict[str, anyio.Event] = {}
        self.started: dict[str, anyio.Event] = {}
        self.running = 0
        self.max_running = 0

    @property
    def name(self) -> str:
        return self._name

    @property
    def versions(self) -> tuple[str, ...]:
        return ("1",)

    def gate(self, key: str) -> anyio.Event:
        return self.gates.setdefault(key, anyio.Event())

    def start_signal(self, key: str) -> anyio.Event:
        return self.started.setdefault(key, anyio.Event())

    async def _work(self, params: Mapping[str, Any]) -> None:
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            key = params.get("gate")
            if isinstance(key, str):
                self.start_signal(key).set()
                await self.gate(key).wait()
            sleep = params.get("sleep")
            if isinstance(sleep, int | float) and self.clock is not None:
                await self.clock.sleep(sleep)
            if params.get("fail"):
                raise RuntimeError("secret internals: the database password is hunter2")
        finally:
            self.running -= 1

    def _response(self, request: Mapping[str, Any]) -> JSON:
        params = request.get("params") or {}
        result: JSON = {"echo": {k: v for k, v in params.items() if k != "big"}}
        if isinstance(params.get("big"), int):
            result["padding"] = "x" * params["big"]
        return {"jsonrpc": "2.0", "id": request.get("id"), "result": result}

    async def handle_chat(self, request: Mapping[str, Any], caller: Caller, emit: Emit) -> None:
        self.callers.append(caller)
        self.requests.append(request)
        params = request.get("params") or {}
        for n in range(int(params.get("notify", 0))):
            note: JSON = {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progress": n},
            }
            if isinstance(params.get("big_note"), int):
                note["params"]["padding"] = "y" * params["big_note"]
            await emit(note)
        await self._work(params)
        if "id" in request:
            await emit(self._response(request))
        for n in range(int(params.get("after", 0))):
            await emit({"jsonrpc": "2.0", "method": "notifications/late", "params": {"n": n}})

    async def handle_rpc(
        self, request: Any, caller: Caller, *, budget_s: float
    ) -> dict[str, Any] | EnvelopeOutcome:
        self.callers.append(caller)
        self.budgets.append(budget_s)
        self.requests.append(request)
        params = (request.get("params") or {}) if isinstance(request, Mapping) else {}
        if params.get("conversation"):
            return EnvelopeOutcome("conversation_required", "this needs a conversation")
        if isinstance(params.get("outcome"), str):
            retry = params.get("retry_after")
            return EnvelopeOutcome(
                params["outcome"], "as asked", retry if isinstance(retry, int) else None
            )
        await self._work(params)
        return self._response(request)

    def parse_error(self, raw_request: str, reason: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}

    def oversize_error(self, message: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": message.get("id"),
            "error": {"code": -32603, "message": "response too large"},
        }

    def is_final(self, request: Mapping[str, Any], message: Mapping[str, Any]) -> bool:
        return jsonrpc_response_to(request.get("id", 0))(message)


class ScriptedBackend:
    """A core that answers each command with what ``handler(cmd)`` returns (``None``: never),
    and delivers the events a test pushes."""

    def __init__(self, handler: Callable[[str], JSON | None]) -> None:
        self.handler = handler
        self.commands: list[str] = []
        self._frames: list[JSON] = []
        self._wake = anyio.Event()
        self._lost = False

    @property
    def description(self) -> str:
        return "scripted"

    async def connect(self) -> None:
        self._lost = False

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        cmd = str(frame["cmd"])
        self.commands.append(cmd)
        resp = self.handler(cmd)
        if resp is not None:
            self._push({"corrId": frame["corrId"], "resp": resp})

    def _push(self, frame: JSON) -> None:
        self._frames.append(frame)
        self._wake.set()

    def event(self, event: JSON) -> None:
        self._push({"resp": event})

    def lose(self) -> None:
        """The connection drops."""
        self._lost = True
        self._wake.set()

    async def receive_frame(self) -> JSON:
        from simplex_protocols.errors import CoreConnectionError

        while not self._frames:
            if self._lost:
                raise CoreConnectionError("scripted: the connection was lost")
            await self._wake.wait()
            self._wake = anyio.Event()
        return self._frames.pop(0)

    async def aclose(self) -> None:
        self._lost = True
        self._wake.set()


def chat_error(**tree: Any) -> JSON:
    """``{"type": "chatCmdError", "chatError": tree}``."""
    return {"type": "chatCmdError", "chatError": tree}


def agent_error(inner: JSON) -> JSON:
    return chat_error(type="errorAgent", agentError=inner, agentConnId="")


def service_error(kind: str) -> JSON:
    return agent_error(
        {"type": "AGENT", "agentErr": {"type": "A_SERVICE", "serviceError": {"type": kind}}}
    )
