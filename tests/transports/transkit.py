"""Test kit for the transports: peers on a simulated network, and small bindings of our own.

``Net`` is :class:`simplex_protocols.sim.testing.World` (a seeded network on a manual clock, a
task group and the peers of a test); a ``Peer`` is one of its scripted users, which keeps every
event it receives so that tests can wait for one.

``EchoBinding`` is a JSON-RPC binding whose behaviour the request chooses (``params``):
``notify`` notifications before the response, ``big`` bytes of padding in the response,
``fail`` to raise, ``conversation`` to need a conversation over Service RPC, ``sleep`` seconds
on the clock before answering, ``gate`` to wait for a test's signal (with ``swallow``, a
cancellation while it waits is caught, and the call returns normally: with its response over
Service RPC, with none in a conversation), ``outcome`` to answer an
envelope error of that code over Service RPC.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import anyio.abc

from simplex_protocols._clock import ManualClock
from simplex_protocols.bindings import Caller, Emit, EnvelopeOutcome
from simplex_protocols.chat_call import jsonrpc_response_to
from simplex_protocols.sim.testing import WAIT_S, ScriptedUser, World

JSON = dict[str, Any]

ECHO_PROTOCOLS = {"echo": {"versions": ["1"], "transports": {"chat": True, "rpc": True}}}


async def until(predicate: Callable[[], bool]) -> None:
    """Let other tasks run until ``predicate()`` holds (bounded by ``WAIT_S``; no sleeping)."""
    with anyio.fail_after(WAIT_S):
        while not predicate():
            await anyio.lowlevel.checkpoint()


async def shut_down_while_held(
    responder: Any, binding: EchoBinding, run: Callable[[], Awaitable[None]]
) -> None:
    """Run ``run`` (a call through the ``held`` gate) and shut ``responder`` down with no grace
    once the binding holds the call."""
    with anyio.fail_after(WAIT_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await binding.start_signal("held").wait()
            await responder.shutdown(grace_s=0)


class Peer(ScriptedUser):
    """A user on its own core, with every event it received kept in order; ``event`` is the
    first event of a type that matches, of all received."""

    event = ScriptedUser.first_event


class Net(World):
    """A seeded network on a manual clock, the peers of a test, and a task group."""

    user_class = Peer

    def __init__(self, seed: int = 11) -> None:
        super().__init__(seed, wait_s=WAIT_S)

    #: A new user, created and started through the API.
    peer = World.user

    async def bot(self, name: str, **kw: Any) -> ScriptedUser:
        """A bot that declares the echo protocol on both transports."""
        return await self.user(
            name, peer_type="bot", preferences={"protocols": ECHO_PROTOCOLS}, **kw
        )

    async def connect(
        self, a: ScriptedUser, b: ScriptedUser, link: str | None = None
    ) -> tuple[int, int]:
        """``a`` connects to ``b``'s address (``link``, or a new one); returns (b's contact ID
        at a, a's at b)."""
        a_contact, b_contact = await super().connect(a, b, link)
        return int(a_contact["contactId"]), int(b_contact["contactId"])

    async def member_id(self, viewer: ScriptedUser, group_id: int, display_name: str) -> int:
        """The groupMemberId of a member, in ``viewer``'s database."""
        members = await viewer.api.list_members(group_id)
        for m in members:
            if m["memberProfile"]["displayName"] == display_name:
                return int(m["groupMemberId"])
        raise AssertionError(f"{display_name} is not a member of #{group_id} at {viewer.name}")


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
        #: Cancellations a ``swallow`` call caught and returned from normally.
        self.swallowed = 0

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
                if params.get("swallow"):
                    # As SDK code that ends quietly when it is cancelled (a stream closed).
                    try:
                        await self.gate(key).wait()
                    except anyio.get_cancelled_exc_class():
                        self.swallowed += 1
                else:
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
        swallowed = self.swallowed
        await self._work(params)
        if "id" in request and self.swallowed == swallowed:
            # A call that swallowed its cancellation ends quietly, with no response.
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
