"""One scenario, played: the simulated world, the scripted peers, and what they observed.

:class:`Stage` builds a scenario's world on a fresh, seeded :class:`SimNetwork`: the client's
user, the bots (declaring ``mcp`` and ``a2a`` on both transports, addresses with ratchet keys),
the third party and the group when the scenario has them, all connected before the client
starts. It serves the client's core on ``ws://127.0.0.1:PORT/client`` through a recording
proxy (every command the client sends is kept with its time), runs the peers' scripts when
the client's commands and requests arrive, and keeps what the peers received and sent. The
checks read the resulting :class:`ScenarioRun`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Final, cast

import anyio
import anyio.abc
from simplex_chat.types import T
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from simplex_protocols import _wire
from simplex_protocols._clock import Clock, ManualClock, SystemClock
from simplex_protocols.chat_call import CallCommand, format_call_command, parse_call_command
from simplex_protocols.core import ChatAPI, ChatCore, ChatRef, ContactRef, GroupRef, event_type
from simplex_protocols.core import commands as cmds
from simplex_protocols.errors import (
    CallFramingError,
    CommandArgumentError,
    CoreConnectionError,
    CoreError,
    SignatureError,
    UnexpectedResponseError,
)
from simplex_protocols.rpc import PublicKey
from simplex_protocols.sim import SimNetwork, SimUser

from . import _dialects as dialects
from ._contract import CallSpec as ContextCall
from ._contract import ChatPlace, ClientOutput, RetryPolicy
from ._process import ProcessResult
from ._scenarios import (
    CLIENT_NAME,
    GROUP_NAME,
    PEER_NAMES,
    CallPlan,
    ChatStep,
    RPCStep,
    Scenario,
)

__all__ = [
    "CREDENTIAL",
    "ChatReceipt",
    "CommandRecord",
    "RPCReceipt",
    "ScenarioRun",
    "SentMessage",
    "Stage",
    "same_key",
]

JSON = dict[str, Any]

#: The credential the A2A scenarios give the client (A2A-AUTHZ-3, A2A-AUTHZ-4).
CREDENTIAL: Final = "Bearer conformance-credential-5f0c2e"
#: The most a peer waits for a command to reach it before giving up on a script step.
_RECEIPT_WAIT_S: Final = 10.0


def _declaration() -> JSON:
    transports = {"chat": True, "rpc": True}
    return {
        "protocols": {
            "mcp": {"versions": list(dialects.MCP_VERSIONS), "transports": transports},
            "a2a": {"versions": list(dialects.A2A_VERSIONS), "transports": transports},
        }
    }


@dataclass(slots=True)
class CommandRecord:
    """A command the client sent to its core, and the type of the core's response."""

    t: float
    cmd: str
    response: str | None = None
    t_response: float | None = None


@dataclass(slots=True)
class ChatReceipt:
    """A message from the client that a peer received.

    Attributes:
        call: the label of the call it belongs to (``None``: not a command of any call).
        command: the parsed command; ``None`` with ``problem`` when it does not parse.
        resume: it is a SubscribeToTask for a call's task.
        continued: it is the continuation of a call's ``input_required`` result.
    """

    t: float
    peer: str
    in_group: bool
    item_id: int
    text: str
    content_type: str
    call: str | None = None
    command: CallCommand | None = None
    problem: str | None = None
    resume: bool = False
    continued: bool = False

    @property
    def follow_up(self) -> bool:
        """A command that follows a call's first one (a resume, a continuation)."""
        return self.resume or self.continued


@dataclass(slots=True)
class RPCReceipt:
    """A Service RPC request a responder received, and what it answered.

    ``t`` is when the responder read the request, ``t_answered`` when it handed its answer to
    its core (before the client could read it).
    """

    t: float
    peer: str
    request_data: JSON
    signer_key: str | None
    call: str | None
    attempt: int
    answer: JSON | None = None
    t_answered: float | None = None


@dataclass(slots=True)
class SentMessage:
    """A message a peer sent in a call's script, or in answer to a follow-up command."""

    t: float
    call: str
    by: str
    step: ChatStep
    message: JSON | None
    text: str
    ok: bool
    error: str | None = None
    follow_up: bool = False


@dataclass(slots=True)
class ScenarioRun:
    """Everything observed while one scenario ran."""

    scenario: Scenario
    protocol: str
    plans: tuple[CallPlan, ...]
    calls: tuple[ContextCall, ...]
    context: JSON
    process: ProcessResult | None = None
    output: ClientOutput | None = None
    contract_problem: str | None = None
    commands: list[CommandRecord] = field(default_factory=list)
    chat_receipts: list[ChatReceipt] = field(default_factory=list)
    rpc_receipts: list[RPCReceipt] = field(default_factory=list)
    sent: list[SentMessage] = field(default_factory=list)
    aliases: dict[str, set[str | int]] = field(default_factory=dict)
    #: When the client's wait for a call's answer began, as near as the harness can tell
    #: (the client's command passing the proxy), by call label and whether it is the wait of
    #: a follow-up command.
    wait_started: dict[tuple[str, bool], float] = field(default_factory=dict)
    harness_errors: list[str] = field(default_factory=list)
    transcript: list[JSON] = field(default_factory=list)
    duration_s: float = 0.0

    def index(self, label: str) -> int:
        for i, plan in enumerate(self.plans):
            if plan.label == label:
                return i
        raise KeyError(label)

    def command_time(self, receipt_t: float) -> float:
        """When the command a peer received at ``receipt_t`` passed the proxy (the client sent
        it just before); ``receipt_t`` when no command of the client was seen."""
        sends = [
            c.t for c in self.commands if c.cmd.startswith(cmds.SEND_VERB) and c.t <= receipt_t
        ]
        return max(sends, default=receipt_t)

    def receipts_of(self, label: str) -> list[ChatReceipt]:
        return [r for r in self.chat_receipts if r.call == label and not r.follow_up]

    def rpc_of(self, label: str) -> list[RPCReceipt]:
        return [r for r in self.rpc_receipts if r.call == label]

    def note(self, t: float, text: str, **facts: Any) -> None:
        self.transcript.append({"t": round(t, 3), "dir": "note", "text": text, **facts})


def _request_text(protocol: str, request: Mapping[str, Any]) -> str | None:
    """The text a request carries (the echo tool's argument, the A2A message's text)."""
    params = request.get("params")
    if not isinstance(params, Mapping):
        return None
    if protocol == "mcp":
        arguments = params.get("arguments")
        text = arguments.get("text") if isinstance(arguments, Mapping) else None
        return text if isinstance(text, str) else None
    message = params.get("message")
    parts = message.get("parts") if isinstance(message, Mapping) else None
    if isinstance(parts, list) and parts and isinstance(parts[0], Mapping):
        text = parts[0].get("text")
        return text if isinstance(text, str) else None
    return None


class _Peer:
    """A scripted peer: its core, its chats with the client, and what it received."""

    def __init__(self, stage: Stage, key: str, user: SimUser) -> None:
        self.stage = stage
        self.key = key
        self.user = user
        self.core: ChatCore | None = None
        self.contact_id: int | None = None  # its contact for the client
        self.group_id: int | None = None  # its ID of the group
        self.seeded_item: int | None = None
        self.items: dict[str, int] = {}
        self.arrived: dict[str, anyio.Event] = {}

    def arrival(self, label: str) -> anyio.Event:
        if label not in self.arrived:
            self.arrived[label] = anyio.Event()
        return self.arrived[label]

    @property
    def api(self) -> ChatAPI:
        assert self.core is not None
        return ChatAPI(self.core)

    def ref(self, in_group: bool) -> ChatRef | None:
        """Its chat with the client: the group, or the direct chat (``None`` when it has none)."""
        if in_group:
            return GroupRef(self.group_id) if self.group_id is not None else None
        return ContactRef(self.contact_id) if self.contact_id is not None else None

    async def serve(self, task_status: anyio.abc.TaskStatus[None]) -> None:
        assert self.core is not None
        try:
            async with self.core.events(buffer=100_000) as events:
                task_status.started()
                async for event in events:
                    kind = event_type(event)
                    if kind == "newChatItems":
                        for item in event.get("chatItems") or []:
                            self.stage.chat_item(self, item)
                    elif kind == "serviceRequest":
                        self.stage.start(self.stage.service_request, self, event)
        except CoreConnectionError:
            return

    async def send(self, in_group: bool, text: str, quote: int | None) -> tuple[bool, str | None]:
        message: JSON = {"msgContent": {"type": "text", "text": text}}
        if quote is not None:
            message["quotedItemId"] = quote
        chat = self.ref(in_group)
        if chat is None:
            return False, "no chat with the client"
        try:
            await self.api.send_messages(chat, [message])
        except CoreError as exc:
            return False, exc.error_type or str(exc)
        return True, None


class Stage:
    """A scenario's world on the simulated network; an async context manager.

    Args:
        scenario: what to build and play.
        protocol: the protocol of the calls (a protocol scenario's own, else the run's first).
        seed: the network's seed.
        manual_clock: run the network on a :class:`ManualClock` (deterministic timestamps);
            else on the system clock.
    """

    def __init__(
        self, scenario: Scenario, protocol: str, *, seed: int, manual_clock: bool = True
    ) -> None:
        self.scenario = scenario
        self.protocol = protocol
        self.clock: Clock = ManualClock() if manual_clock else SystemClock()
        self.network = SimNetwork(seed=seed, clock=self.clock)
        self.peers: dict[str, _Peer] = {}
        self.client_user: SimUser | None = None
        self.client_group_id: int | None = None
        self.member_ids: dict[str, int] = {}
        self.links: dict[str, str] = {}
        self._stack = contextlib.AsyncExitStack()
        self._tg: anyio.abc.TaskGroup | None = None
        self._server: Server | None = None
        self._t0 = time.monotonic()
        self._triggered: set[str] = set()
        #: One per script being played: set once its in-time messages are all sent.
        self._scripts: list[anyio.Event] = []
        self.run: ScenarioRun | None = None

    # ------------------------------------------------------------------ lifecycle

    def now(self) -> float:
        return time.monotonic() - self._t0

    async def __aenter__(self) -> Stage:
        self._tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._build()
        calls = tuple(self._context_call(plan) for plan in self.scenario.calls)
        self.run = ScenarioRun(
            scenario=self.scenario,
            protocol=self.protocol,
            plans=self.scenario.calls,
            calls=calls,
            context={},
            aliases=self._aliases(),
        )
        if self.scenario.seeded_earlier:
            self._seed_earlier_command()
        # The harness watches the client's core too: the events of the set-up go to it, so
        # the client's own session starts with none.
        observer = ChatCore(self.network.backend("client"))
        await self._stack.enter_async_context(observer)
        for peer in self.peers.values():
            peer.core = ChatCore(self.network.backend(peer.user.name))
            await self._stack.enter_async_context(peer.core)
            await self._tg.start(peer.serve)
        self._server = await serve(
            self._proxy,
            "127.0.0.1",
            0,
            compression=None,
            max_size=8 * 1024 * 1024,
            ping_interval=None,
        )
        self.run.context = self._context()
        self._t0 = time.monotonic()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        await self._stack.__aexit__(exc_type, exc, tb)

    def start(self, func: Any, *args: Any) -> None:
        assert self._tg is not None
        self._tg.start_soon(func, *args)

    @property
    def core_url(self) -> str:
        assert self._server is not None
        port = next(iter(self._server.sockets)).getsockname()[1]
        return f"ws://127.0.0.1:{port}/client"

    # ------------------------------------------------------------------ the world

    def _user(self, key: str, **options: Any) -> SimUser:
        return self.network.add_user(key, display_name=PEER_NAMES[key], **options)

    def _bot(self, key: str) -> _Peer:
        user = self._user(key, peer_type="bot", preferences=_declaration(), service_requests=True)
        self.links[key] = user.create_address(pq_ratchet=True)
        peer = _Peer(self, key, user)
        self.peers[key] = peer
        return peer

    def _connect_direct(self, peer: _Peer) -> None:
        client = self.client_user
        assert client is not None
        client.command(cmds.connect(client.user_id, self.links[peer.key]))
        self.network.process_timers()
        peer.contact_id = self._contact_id(peer.user, CLIENT_NAME)

    @staticmethod
    def _contact_id(user: SimUser, display_name: str) -> int:
        listed = cast("list[T.Contact]", user.command(cmds.list_contacts(user.user_id))["contacts"])
        for contact in listed:
            if contact["profile"]["displayName"] == display_name:
                return contact["contactId"]
        raise RuntimeError(f"{user.name} has no contact {display_name!r}")

    def _build(self) -> None:
        scenario = self.scenario
        self.client_user = self.network.add_user(
            "client", display_name=CLIENT_NAME, peer_type="agent"
        )
        self._connect_direct(self._bot("bot"))
        if scenario.second_bot:
            self._bot("bot2")
        if scenario.third_party:
            mallory = _Peer(self, "mallory", self._user("mallory", peer_type="human"))
            self.peers["mallory"] = mallory
            self.links["mallory"] = mallory.user.create_address()
            self._connect_direct(mallory)
        if scenario.group:
            self._build_group()

    def _build_group(self) -> None:
        client = self.client_user
        assert client is not None
        members = [self._bot(key) for key in ("bob", "carol", "dave")]
        bob = members[0]
        profile = {"displayName": GROUP_NAME, "fullName": ""}
        created = cast(
            "T.GroupInfo", bob.user.command(cmds.new_group(bob.user.user_id, profile))["groupInfo"]
        )
        bob.group_id = created["groupId"]
        link = cast(
            "T.GroupLink", bob.user.command(cmds.create_group_link(bob.group_id))["groupLink"]
        )
        short = link["connLinkContact"]["connShortLink"]
        for user in (client, members[1].user, members[2].user):
            user.command(cmds.connect(user.user_id, short))
            self.network.process_timers()
        for peer in members[1:]:
            peer.group_id = self._group_id(peer.user)
        self.client_group_id = self._group_id(client)
        listed = client.command(cmds.list_members(self.client_group_id))
        for member in cast("list[T.GroupMember]", listed["group"]["members"]):
            self.member_ids[member["memberProfile"]["displayName"]] = member["groupMemberId"]

    @staticmethod
    def _group_id(user: SimUser) -> int:
        groups = cast("list[T.GroupInfo]", user.command(cmds.list_groups(user.user_id))["groups"])
        for group in groups:
            if group["groupProfile"]["displayName"] == GROUP_NAME:
                return group["groupId"]
        raise RuntimeError(f"{user.name} is not in the group")

    def _aliases(self) -> dict[str, set[str | int]]:
        """What a client may call each peer in its result: the display name, or its ID."""
        out: dict[str, set[str | int]] = {}
        for key, peer in self.peers.items():
            name = PEER_NAMES[key]
            names: set[str | int] = {name}
            if peer.contact_id is not None and key in ("bot", "mallory"):
                assert self.client_user is not None
                try:
                    cid = self._contact_id(self.client_user, name)
                except RuntimeError:
                    cid = None
                if cid is not None:
                    names |= {cid, str(cid), f"@{cid}"}
            if name in self.member_ids:
                mid = self.member_ids[name]
                names |= {mid, str(mid), f"member:{mid}"}
            out[key] = names
        return out

    def _seed_earlier_command(self) -> None:
        """An earlier command, the same as the client's, left unanswered (CALL-CLR-1)."""
        client, bot = self.client_user, self.peers["bot"]
        assert client is not None
        plan = self.scenario.calls[0]
        call = self._context_call(plan)
        # The bindings bring their SDKs along: imported only for this scenario.
        request: JSON
        if self.protocol == "mcp":
            from simplex_protocols.bindings import mcp

            request = mcp.build_request(call.method, call.params, request_id=call.request_id)
        else:
            from simplex_protocols.bindings import a2a

            request = a2a.build_a2a_request(call.method, call.params, request_id=call.request_id)
        text = format_call_command(self.protocol, request)
        bot_contact = self._contact_id(client, PEER_NAMES["bot"])
        message = {"msgContent": {"type": "text", "text": text}}
        client.command(cmds.send_messages(ContactRef(bot_contact), [message]))
        self.network.process_timers()
        assert bot.contact_id is not None
        chat = cast(
            "T.AChat", bot.user.command(cmds.get_chat(ContactRef(bot.contact_id), count=1))["chat"]
        )
        bot.seeded_item = chat["chatItems"][-1]["meta"]["itemId"]

    # ------------------------------------------------------------------ the context

    def _context_call(self, plan: CallPlan) -> ContextCall:
        method, params = dialects.call_params(
            self.protocol, plan.transport, plan.request_id, plan.text
        )
        if plan.method is not None:
            method = plan.method
        versions = dialects.MCP_VERSIONS if self.protocol == "mcp" else dialects.A2A_VERSIONS
        chat: ChatPlace | None = None
        target: str | None = None
        if plan.transport == "rpc":
            target = self.links[plan.where]
        elif plan.where.startswith("group"):
            assert self.client_group_id is not None
            member = plan.where.partition(":")[2]
            if member:
                name = PEER_NAMES[member]
                chat = ChatPlace(
                    "group",
                    GROUP_NAME,
                    group_id=self.client_group_id,
                    member_id=self.member_ids[name],
                    member_name=name,
                )
            else:
                chat = ChatPlace("group", GROUP_NAME, group_id=self.client_group_id)
        else:
            assert self.client_user is not None
            name = PEER_NAMES[plan.where]
            chat = ChatPlace("direct", name, contact_id=self._contact_id(self.client_user, name))
        credentials = {"Authorization": CREDENTIAL} if plan.credentials else {}
        return ContextCall(
            label=plan.label,
            protocol=self.protocol,
            transport=plan.transport,
            method=method,
            params=params,
            request_id=plan.request_id,
            versions=versions,
            wait_s=plan.wait_s,
            chat=chat,
            target=target,
            sign=plan.sign,
            credentials=credentials,
            retry=RetryPolicy(3, 5.0) if plan.retry else None,
            input_responses=dict(dialects.INPUT_RESPONSES) if plan.input_required else None,
        )

    def _context(self) -> JSON:
        from ._contract import CONTEXT_SCHEMA

        assert self.run is not None and self.client_user is not None
        return {
            "schema": CONTEXT_SCHEMA,
            "scenario": self.scenario.id,
            "title": self.scenario.title,
            "core": self.core_url,
            "user_id": self.client_user.user_id,
            "calls": [call.to_json() for call in self.run.calls],
        }

    def target_of_first_call(self) -> str:
        assert self.run is not None
        call = self.run.calls[0]
        if call.transport == "rpc":
            assert call.target is not None
            return call.target
        assert call.chat is not None
        return call.chat.ref

    # ------------------------------------------------------------------ the proxy

    async def _proxy(self, ws: ServerConnection) -> None:
        run = self.run
        assert run is not None
        backend = self.network.backend("client")
        await backend.connect()
        pending: dict[str, CommandRecord] = {}

        async def writer() -> None:
            try:
                while True:
                    frame = await backend.receive_frame()
                    corr = frame.get("corrId")
                    if isinstance(corr, str) and corr in pending:
                        record = pending.pop(corr)
                        resp = frame.get("resp")
                        record.response = resp.get("type") if isinstance(resp, dict) else None
                        record.t_response = self.now()
                    await ws.send(_wire.dumps(frame))
            except (ConnectionClosed, CoreConnectionError):
                return

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(writer)
                try:
                    async for message in ws:
                        try:
                            frame: Any = _wire.loads(message)
                        except _wire.WireJSONError:
                            frame = None
                        if isinstance(frame, dict) and isinstance(frame.get("cmd"), str):
                            record = CommandRecord(self.now(), frame["cmd"])
                            run.commands.append(record)
                            if isinstance(frame.get("corrId"), str):
                                pending[frame["corrId"]] = record
                        await backend.send_frame(frame if isinstance(frame, dict) else {})
                except (ConnectionClosed, CoreConnectionError):
                    pass
                tg.cancel_scope.cancel()
        except (ConnectionClosed, CoreConnectionError):
            pass
        finally:
            await backend.aclose()

    # ------------------------------------------------------------------ chat scripts

    def _match(self, request: Mapping[str, Any], transport: str, peer: str) -> CallPlan | None:
        """The call a request belongs to: by its JSON-RPC id, else by its text."""
        candidates = [
            p
            for p in self.scenario.calls
            if p.transport == transport
            and (p.where == peer or p.callee == peer or p.where.startswith("group"))
        ]
        rid = request.get("id")
        for plan in candidates:
            if not isinstance(rid, bool) and rid == plan.request_id:
                return plan
        text = _request_text(self.protocol, request)
        for plan in candidates:
            if text == plan.text:
                return plan
        return None

    def chat_item(self, peer: _Peer, item: Mapping[str, Any]) -> None:
        run = self.run
        assert run is not None
        chat_item = item.get("chatItem") or {}
        direction = chat_item.get("chatDir") or {}
        kind = direction.get("type")
        if kind == "directRcv":
            info = (item.get("chatInfo") or {}).get("contact") or {}
            sender = (info.get("profile") or {}).get("displayName")
            in_group = False
        elif kind == "groupRcv":
            member = direction.get("groupMember") or {}
            sender = (member.get("memberProfile") or {}).get("displayName")
            in_group = True
        else:
            return
        if sender != CLIENT_NAME:
            return
        meta = chat_item.get("meta") or {}
        item_id = int(meta.get("itemId", 0))
        if item_id == peer.seeded_item:
            return
        content = chat_item.get("content") or {}
        msg = content.get("msgContent") or {}
        raw_text = msg.get("text")
        text = raw_text if isinstance(raw_text, str) else ""
        receipt = ChatReceipt(
            self.now(), peer.key, in_group, item_id, text, str(msg.get("type", content.get("type")))
        )
        run.chat_receipts.append(receipt)
        try:
            receipt.command = parse_call_command(text)
        except CallFramingError as exc:
            receipt.problem = exc.code
            return
        request = receipt.command.request
        if request.get("method") == "SubscribeToTask":
            params = request.get("params")
            task = params.get("id") if isinstance(params, Mapping) else None
            label = (
                task[len("task-") :] if isinstance(task, str) and task.startswith("task-") else None
            )
            if label is not None and any(
                p.label == label and p.resume for p in self.scenario.calls
            ):
                receipt.call, receipt.resume = label, True
                run.wait_started.setdefault((label, True), run.command_time(receipt.t))
                if peer.key == "bot":
                    self.start(self._play_resume, peer, receipt, request, self._script())
            return
        plan = self._match(request, "chat", peer.key)
        if plan is None:
            return
        params = request.get("params")
        if plan.input_required and isinstance(params, Mapping) and "inputResponses" in params:
            receipt.call, receipt.continued = plan.label, True
            run.wait_started.setdefault((plan.label, True), run.command_time(receipt.t))
            if peer.key == plan.callee:
                self.start(self._play_continuation, peer, receipt, request, self._script())
            return
        receipt.call = plan.label
        peer.items.setdefault(plan.label, item_id)
        peer.arrival(plan.label).set()
        if peer.key == plan.callee and plan.label not in self._triggered:
            self._triggered.add(plan.label)
            run.wait_started[(plan.label, False)] = run.command_time(receipt.t)
            self.start(self._play, plan, request, receipt.t, self._script())

    def _script(self) -> anyio.Event:
        done = anyio.Event()
        self._scripts.append(done)
        return done

    async def finish_scripts(self, limit_s: float) -> None:
        """Let every script started play its in-time messages, even if the client is gone.

        What a client must keep is what was sent within its wait; a client that returned
        early does not shorten the script (else it would pass for the messages it missed).
        Late messages are not waited for.
        """
        with anyio.move_on_after(limit_s):
            for done in list(self._scripts):
                await done.wait()

    async def _play(
        self, plan: CallPlan, request: Mapping[str, Any], t0: float, done: anyio.Event
    ) -> None:
        try:
            for step in sorted(plan.steps, key=lambda s: s.after_s):
                if step.late:
                    done.set()
                delay = t0 + step.after_s - self.now()
                if delay > 0:
                    await anyio.sleep(delay)
                await self._send_step(plan, step, request)
        finally:
            done.set()

    def _message(self, plan: CallPlan, step: ChatStep, request: Mapping[str, Any]) -> JSON | None:
        if step.kind == "text":
            return None
        if step.kind == "progress":
            return dialects.progress_message(self.protocol, request, plan.label, step.step)
        if step.kind == "submitted":
            return dialects.submitted_item(request, plan.label)
        if step.kind == "input":
            return dialects.input_required_result(request, plan.label)
        return dialects.final_message(self.protocol, request, plan.label, step.text)

    async def _send_step(self, plan: CallPlan, step: ChatStep, request: Mapping[str, Any]) -> None:
        run = self.run
        assert run is not None
        peer = self.peers[step.by]
        in_group = plan.where.startswith("group") and peer.group_id is not None
        quote: int | None = None
        if step.quote == "command":
            with anyio.move_on_after(_RECEIPT_WAIT_S):
                await peer.arrival(plan.label).wait()
            quote = peer.items.get(plan.label)
            if quote is None:
                run.harness_errors.append(f"{step.by} never received the command of {plan.label}")
                return
        elif step.quote == "earlier":
            quote = peer.seeded_item
        message = self._message(plan, step, request)
        text = _wire.dumps(message) if message is not None else step.text
        if step.lost:
            self.network.faults.loss(1.0, link=(peer.user.name, "client"))
        ok, error = await peer.send(in_group, text, quote)
        if step.lost:
            self.network.faults.loss(0.0, link=(peer.user.name, "client"))
        run.sent.append(
            SentMessage(self.now(), plan.label, step.by, step, message, text, ok, error)
        )
        if not ok:
            run.harness_errors.append(f"{step.by} could not send a {step.kind} message: {error}")

    async def _play_continuation(
        self, peer: _Peer, receipt: ChatReceipt, request: Mapping[str, Any], done: anyio.Event
    ) -> None:
        try:
            await self._continue(peer, receipt, request)
        finally:
            done.set()

    async def _continue(
        self, peer: _Peer, receipt: ChatReceipt, request: Mapping[str, Any]
    ) -> None:
        run = self.run
        assert run is not None and receipt.call is not None
        message = dialects.final_message(self.protocol, request, receipt.call, "done after input")
        text = _wire.dumps(message)
        ok, error = await peer.send(receipt.in_group, text, receipt.item_id)
        step = ChatStep(peer.key, "final")
        run.sent.append(
            SentMessage(
                self.now(), receipt.call, peer.key, step, message, text, ok, error, follow_up=True
            )
        )

    async def _play_resume(
        self, peer: _Peer, receipt: ChatReceipt, request: Mapping[str, Any], done: anyio.Event
    ) -> None:
        try:
            await self._resume(peer, receipt, request)
        finally:
            done.set()

    async def _resume(self, peer: _Peer, receipt: ChatReceipt, request: Mapping[str, Any]) -> None:
        run = self.run
        assert run is not None and receipt.call is not None
        step = ChatStep(peer.key, "resume")
        for message in dialects.resume_messages(request, receipt.call, f"resumed {receipt.call}"):
            text = _wire.dumps(message)
            ok, error = await peer.send(receipt.in_group, text, receipt.item_id)
            run.sent.append(
                SentMessage(
                    self.now(),
                    receipt.call,
                    peer.key,
                    step,
                    message,
                    text,
                    ok,
                    error,
                    follow_up=True,
                )
            )

    # ------------------------------------------------------------------ Service RPC

    async def service_request(self, peer: _Peer, event: Mapping[str, Any]) -> None:
        run = self.run
        assert run is not None and peer.core is not None
        request_id = event.get("requestId")
        data = event.get("requestData")
        signer = event.get("signerKey")
        signer_key = signer if isinstance(signer, str) else None
        envelope = data if isinstance(data, dict) else {}
        request = envelope.get("request")
        plan = self._match(request, "rpc", peer.key) if isinstance(request, dict) else None
        label = plan.label if plan is not None else None
        attempt = sum(1 for r in run.rpc_receipts if r.call == label and r.peer == peer.key)
        receipt = RPCReceipt(self.now(), peer.key, envelope, signer_key, label, attempt)
        run.rpc_receipts.append(receipt)
        answer = self._rpc_answer(plan, attempt, envelope, signer_key)
        # The time the answer is handed to the core: the client cannot have it sooner, so a
        # delay measured from here is never shorter than the client's own wait.
        answering = self.now()
        try:
            await peer.api.send_service_response(peer.user.user_id, str(request_id), answer)
        except (CoreError, UnexpectedResponseError, CommandArgumentError) as exc:
            run.harness_errors.append(f"{peer.key} could not answer a request: {exc}")
            return
        receipt.answer = answer
        receipt.t_answered = answering

    def _rpc_answer(
        self,
        plan: CallPlan | None,
        attempt: int,
        envelope: Mapping[str, Any],
        signer_key: str | None,
    ) -> JSON:
        request_key = envelope.get("requestKey")
        # As a conformant responder does (RPC-SIG-3, RPC-SIG-4).
        if request_key is not None and not same_key(request_key, signer_key):
            return {
                "error": {
                    "code": "bad_request",
                    "message": "requestKey is not the signer's key",
                }
            }
        request = envelope.get("request")
        if not isinstance(request, dict):
            return {"error": {"code": "bad_request", "message": "no request object"}}
        step = RPCStep()
        label = "unmatched"
        if plan is not None:
            label = plan.label
            if plan.answers:
                step = plan.answers[min(attempt, len(plan.answers) - 1)]
        if step.error is not None:
            return {"error": dict(step.error)}
        response = dialects.final_message(self.protocol, request, label, step.text)
        if step.size:
            missing = step.size - len(_wire.dumps({"response": response}).encode())
            if missing > 0:
                response = dialects.final_message(
                    self.protocol, request, label, step.text + "z" * missing
                )
        return {"response": response}


def same_key(request_key: Any, signer_key: str | None) -> bool:
    """Whether a ``requestKey`` names the key the core verified (compared decoded, RPC-REQ-4)."""
    if not isinstance(request_key, str) or signer_key is None:
        return False
    try:
        return PublicKey.decode(request_key) == PublicKey.decode(signer_key)
    except SignatureError:
        return False
