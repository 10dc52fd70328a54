"""Scripted simulated users, for tests: yours (a bot's), the examples' and this toolkit's.

A :class:`World` is a seeded :class:`~simplex_protocols.sim.SimNetwork` on a
:class:`~simplex_protocols._clock.ManualClock` (time moves only when the test advances it),
with a task group and the users of one test. Each :class:`ScriptedUser` drives its own chat
core through a :class:`~simplex_protocols.core.ChatCore`, as an app or a bot would, and keeps
every event it receives, so a test can wait for one::

    from simplex_protocols.sim.testing import World

    async with World(seed=1) as world:
        alice, bob = await world.users("alice", "bob")
        alice_contact, _ = await world.connect(alice, bob)   # alice uses bob's address
        await alice.send(f"@{alice_contact['contactId']}", "hello")
        event = await bob.message("hello")

Every wait is bounded by ``wait_s`` real seconds (:class:`TimeoutError` after that), so a test
that waits for something that never comes fails instead of hanging; nothing here sleeps.
``docs/sim.md`` describes the whole kit.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc

from simplex_protocols._clock import Clock, ManualClock
from simplex_protocols._wire import dumps
from simplex_protocols.core import (
    ChatAPI,
    ChatCore,
    ChatRef,
    CoreBackend,
    WebSocketBackend,
    parse_chat_ref,
)
from simplex_protocols.errors import CoreConnectionError, CoreError

from ._network import SimNetwork, SimUser
from ._server import SimServer

__all__ = ["WAIT_S", "RecordingBackend", "ScriptedUser", "World", "seed_received"]

JSON = dict[str, Any]

#: The default bound, in real seconds, of every wait of a world.
WAIT_S = 5.0

#: Events a user keeps unread before its core's subscription overflows.
_EVENT_BUFFER = 100_000

#: Scheduler rounds :meth:`ScriptedUser.settle` lets pass.
_SETTLE_ROUNDS = 30


class RecordingBackend:
    """A :class:`~simplex_protocols.core.CoreBackend` that keeps what passes through it.

    Args:
        inner: the backend that moves the frames.
        on_frame: called with each frame received (responses and events), as it arrives.
        keep_frames: keep the frames received in :attr:`frames` (``False`` for long runs that
            need only the commands).

    Attributes:
        commands: every command string sent, in order.
        frames: every frame received, in order (empty without ``keep_frames``).
    """

    def __init__(
        self,
        inner: CoreBackend,
        on_frame: Callable[[Mapping[str, Any]], None] | None = None,
        *,
        keep_frames: bool = True,
    ) -> None:
        self.inner = inner
        self.on_frame = on_frame
        self.keep_frames = keep_frames
        self.commands: list[str] = []
        self.frames: list[JSON] = []

    @property
    def description(self) -> str:
        return self.inner.description

    async def connect(self) -> None:
        await self.inner.connect()

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        self.commands.append(str(frame["cmd"]))
        await self.inner.send_frame(frame)

    async def receive_frame(self) -> dict[str, Any]:
        frame = await self.inner.receive_frame()
        if self.keep_frames:
            self.frames.append(frame)
        if self.on_frame is not None:
            self.on_frame(frame)
        return frame

    async def aclose(self) -> None:
        await self.inner.aclose()


class ScriptedUser:
    """A simulated user driven by a test: a ChatCore on its core, and every event it got.

    Made by :meth:`World.user` (a new user) or :meth:`World.attach` (a client on a core).

    Attributes:
        world: the world the user lives in.
        name: the core's name (its ``sim:NAME``).
        core: the user's :class:`~simplex_protocols.core.ChatCore` (entered).
        api: a :class:`~simplex_protocols.core.ChatAPI` over it.
        user_id: the user's ID in its core (0 until the user is created).
        display_name: the profile's display name.
        events: every event received, in order.
        lost: the connection to the core was lost (see :meth:`reconnect`).
    """

    def __init__(self, world: World, name: str, core: ChatCore) -> None:
        self.world = world
        self.name = name
        self.core = core
        self.api = ChatAPI(core)
        self.user_id = 0
        self.display_name = name
        self.events: list[JSON] = []
        self.lost = False
        self._seen = 0
        self._arrived = anyio.Event()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, user_id={self.user_id})"

    async def collect_events(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Keep every event of the core in :attr:`events` (the world runs this)."""
        try:
            async with self.core.events(buffer=_EVENT_BUFFER) as subscription:
                task_status.started()
                async for event in subscription:
                    self.events.append(event)
                    self._arrived.set()
                    self._arrived = anyio.Event()
        except CoreConnectionError:
            self.lost = True

    async def reconnect(self) -> None:
        """Reconnect after a lost connection, and keep collecting events."""
        await self.core.reconnect()
        self.lost = False
        await self.world.task_group.start(self.collect_events)

    # ------------------------------------------------------------------ commands

    async def cmd(self, text: str) -> JSON:
        """Run a command and return its response.

        Raises:
            CoreError: the core refused it (``chatCmdError``).
            TimeoutError: no response within the world's ``wait_s``.
        """
        with anyio.fail_after(self.world.wait_s):
            return await self.core.command(text)

    async def cmd_json(self, head: str, value: Any) -> JSON:
        """Run ``head`` followed by ``value`` as JSON."""
        return await self.cmd(f"{head} {dumps(value)}")

    async def error(self, text: str) -> JSON:
        """Run a command that must fail; return the core's ChatError object.

        Raises:
            AssertionError: the command succeeded.
        """
        with anyio.fail_after(self.world.wait_s):
            try:
                resp = await self.core.command(text)
            except CoreError as exc:
                return dict(exc.chat_error)
        raise AssertionError(f"{text!r} succeeded: {resp}")

    async def send(
        self,
        chat: ChatRef | str,
        text: str = "",
        *,
        quoted: int | None = None,
        content: Mapping[str, Any] | None = None,
    ) -> int:
        """Send a message to ``chat`` (``"@3"``, ``"#1"`` or a ref): ``text``, or another
        ``content``, replying to the item ``quoted``; return the sent item's ID."""
        ref = parse_chat_ref(chat) if isinstance(chat, str) else chat
        msg: JSON = {
            "msgContent": dict(content) if content is not None else {"type": "text", "text": text}
        }
        if quoted is not None:
            msg["quotedItemId"] = quoted
        with anyio.fail_after(self.world.wait_s):
            sent = await self.api.send_messages(ref, [msg])
        return int(sent[0]["chatItem"]["meta"]["itemId"])

    # ------------------------------------------------------------------ events

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds, checking again as each event arrives."""
        with anyio.fail_after(self.world.wait_s):
            while not predicate():
                await self._arrived.wait()

    async def next_event(self, etype: str, where: Callable[[JSON], bool] | None = None) -> JSON:
        """The next event of type ``etype`` that passes ``where``, after the last one this
        method returned (waiting for it if needed)."""
        with anyio.fail_after(self.world.wait_s):
            while True:
                for i in range(self._seen, len(self.events)):
                    ev = self.events[i]
                    if ev.get("type") == etype and (where is None or where(ev)):
                        self._seen = i + 1
                        return ev
                await self._arrived.wait()

    async def first_event(
        self, etype: str, where: Callable[[JSON], bool] | None = None, *, since: int = 0
    ) -> JSON:
        """The first event of type ``etype`` that passes ``where`` of all received (of those
        from ``events[since]`` on), waiting for it if needed."""
        found: list[JSON] = []

        def check() -> bool:
            for ev in self.events[since:]:
                if ev.get("type") == etype and (where is None or where(ev)):
                    found.append(ev)
                    return True
            return False

        await self.wait_for(check)
        return found[0]

    async def message(self, text: str | None = None) -> JSON:
        """The next ``newChatItems`` event whose first item is a received message (with
        ``text``), as :meth:`next_event` finds it."""

        def is_message(ev: JSON) -> bool:
            item = ev["chatItems"][0]["chatItem"]
            if item["content"]["type"] != "rcvMsgContent":
                return False
            return text is None or item["meta"]["itemText"] == text

        return await self.next_event("newChatItems", is_message)

    def all(self, etype: str) -> list[JSON]:
        """Every event of type ``etype`` received so far."""
        return [e for e in self.events if e.get("type") == etype]

    def received(self) -> list[JSON]:
        """Every received message so far (``rcvMsgContent`` items, as AChatItem objects)."""
        out = []
        for ev in self.events:
            if ev.get("type") != "newChatItems":
                continue
            for aci in ev["chatItems"]:
                if aci["chatItem"]["content"]["type"] == "rcvMsgContent":
                    out.append(aci)
        return out

    def received_texts(self) -> list[str]:
        """The texts of :meth:`received`."""
        return [aci["chatItem"]["content"]["msgContent"]["text"] for aci in self.received()]

    async def settle(self) -> None:
        """Let every frame the simulator has queued reach this user's subscribers."""
        for _ in range(_SETTLE_ROUNDS):
            await anyio.lowlevel.checkpoint()


class World:
    """A seeded simulated network on a manual clock, a task group, and the users of a test.

    Use it as an async context manager; the users' cores and tasks end with the block.

    Args:
        seed: seeds the network's random source (keys, links, IDs, names).
        clock: the network's clock (default: a new
            :class:`~simplex_protocols._clock.ManualClock`).
        chaos: the network's chaos mode (an unknown field and event around every command).
        websocket: users reach their cores over WebSocket, through a
            :class:`~simplex_protocols.sim.SimServer` on 127.0.0.1, instead of in process.
        wait_s: the bound, in real seconds, of every wait.
        core_profile: the real core the network's cores behave as (``spec``, ``v7.0``,
            ``v6.4``; see :data:`~simplex_protocols.sim.CORE_PROFILES`).

    Attributes:
        clock: the network's clock.
        network: the :class:`~simplex_protocols.sim.SimNetwork`.
        server: the WebSocket server (``websocket=True``), else ``None``.
        clients: every user made, by core name (the last one made for a name).
    """

    #: The class of the users this world makes (a subclass may add its own helpers).
    user_class: type[ScriptedUser] = ScriptedUser

    def __init__(
        self,
        seed: int = 7,
        *,
        clock: Clock | None = None,
        chaos: bool = False,
        websocket: bool = False,
        wait_s: float = WAIT_S,
        core_profile: str | None = None,
    ) -> None:
        self.clock: Clock = clock if clock is not None else ManualClock()
        self.network = SimNetwork(
            seed=seed, clock=self.clock, chaos=chaos, core_profile=core_profile
        )
        self.websocket = websocket
        self.wait_s = wait_s
        self.server: SimServer | None = None
        self.clients: dict[str, ScriptedUser] = {}
        self._stack = contextlib.AsyncExitStack()
        self._tg: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> Self:
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

    @property
    def task_group(self) -> anyio.abc.TaskGroup:
        """The world's task group (the world must be entered)."""
        if self._tg is None:
            raise RuntimeError("enter the World (async with) first")
        return self._tg

    async def start(self, func: Callable[..., Any]) -> None:
        """Start a long-running task (``func(task_status=...)``, a responder's ``serve``) in
        the world's task group, once it reports it started."""
        await self.task_group.start(func)

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Let other tasks run until ``predicate()`` holds (bounded by ``wait_s``)."""
        with anyio.fail_after(self.wait_s):
            while not predicate():
                await anyio.lowlevel.checkpoint()

    # ------------------------------------------------------------------ users

    def backend(self, name: str) -> CoreBackend:
        """A new backend to the core ``name``: in process, or over WebSocket."""
        if self.server is not None:
            return WebSocketBackend(self.server.url(name), ping_interval=None)
        return self.network.backend(name)

    async def attach(self, name: str, backend: CoreBackend | None = None) -> ScriptedUser:
        """A client of the core ``name`` (created empty when missing), on ``backend`` or a new
        :meth:`backend`; its core lives as long as the world."""
        core = ChatCore(backend if backend is not None else self.backend(name))
        await self._stack.enter_async_context(core)
        user = self.user_class(self, name, core)
        await self.task_group.start(user.collect_events)
        self.clients[name] = user
        return user

    async def user(
        self,
        name: str,
        *,
        display_name: str | None = None,
        peer_type: str | None = None,
        preferences: Mapping[str, Any] | None = None,
        service_requests: bool = False,
        backend: CoreBackend | None = None,
    ) -> ScriptedUser:
        """A new user on the core ``name``, created and started through the API
        (``/_create user``, ``/_start``), as an app does it.

        Args:
            name: the core's name.
            display_name: the profile's display name (default ``name``).
            peer_type: ``"human"``, ``"bot"``, ``"business"`` or ``"agent"`` (default: none).
            preferences: the profile's preferences (``commands``, ``protocols``).
            service_requests: start with ``service_requests=on`` (Service RPC responders).
            backend: the backend to use (default: a new :meth:`backend`).
        """
        user = await self.attach(name, backend)
        profile: JSON = {"displayName": display_name or name, "fullName": ""}
        if peer_type is not None:
            profile["peerType"] = peer_type
        if preferences is not None:
            profile["preferences"] = dict(preferences)
        with anyio.fail_after(self.wait_s):
            created = await user.api.create_active_user(profile)
            user.user_id = int(created["userId"])
            user.display_name = str(profile["displayName"])
            await user.api.start_chat(service_requests=service_requests)
        return user

    async def users(self, *names: str) -> list[ScriptedUser]:
        """New users, one per name (as :meth:`user` makes them)."""
        return [await self.user(name) for name in names]

    async def bot(
        self, name: str, *, preferences: Mapping[str, Any] | None = None, **options: Any
    ) -> ScriptedUser:
        """A new user with peer type ``bot`` (``options`` as :meth:`user` takes them)."""
        return await self.user(name, peer_type="bot", preferences=preferences, **options)

    # ------------------------------------------------------------------ connecting

    async def address(
        self,
        user: ScriptedUser,
        *,
        pq_ratchet: bool | None = True,
        settings: Mapping[str, Any] | None = None,
    ) -> str:
        """Create the user's address and return its short link.

        Args:
            user: whose address.
            pq_ratchet: ``True``/``False``: with ratchet keys (as Service RPC needs), with or
                without post-quantum keys; ``None``: without.
            settings: the AddressSettings (default: auto-accept, not a business address).
        """
        body = (
            dict(settings)
            if settings is not None
            else {"businessAddress": False, "autoAccept": {"acceptIncognito": False}}
        )
        with anyio.fail_after(self.wait_s):
            created = await user.api.create_address(user.user_id, pq_ratchet=pq_ratchet)
            await user.api.set_address_settings(user.user_id, body)
        return str(created["connShortLink"])

    async def connect(
        self, a: ScriptedUser, b: ScriptedUser, link: str | None = None
    ) -> tuple[JSON, JSON]:
        """``a`` connects to ``b``'s address (``link``, or a new :meth:`address` of ``b``, which
        must auto-accept); return (``a``'s contact of ``b``, ``b``'s contact of ``a``) once both
        are connected: each side's next ``contactConnected`` naming the other (as
        :meth:`ScriptedUser.next_event` finds it). A new address has ratchet keys when ``b``'s
        core can add them (a core of a profile without ``pq_ratchet=`` makes it without)."""
        if link is None:
            core = self.network.core(b.name)
            with_keys = not isinstance(
                core.grammar.parse(f"/_address {b.user_id} pq_ratchet=on"), str
            )
            link = await self.address(b, pq_ratchet=True if with_keys else None)
        with anyio.fail_after(self.wait_s):
            await a.api.connect(a.user_id, link)
        ea = await a.next_event("contactConnected", _names(b.display_name))
        eb = await b.next_event("contactConnected", _names(a.display_name))
        return ea["contact"], eb["contact"]

    async def group(
        self, owner: ScriptedUser, members: Sequence[ScriptedUser], name: str = "team"
    ) -> dict[str, int]:
        """``owner`` creates a group ``name`` and each member joins by its link; returns each
        user's group ID (by core name) once every member is connected to every other."""
        with anyio.fail_after(self.wait_s):
            info = await owner.api.new_group(owner.user_id, {"displayName": name, "fullName": ""})
            gid = int(info["groupId"])
            link = await owner.api.create_group_link(gid)
        short = str(link["connLinkContact"]["connShortLink"])
        ids = {owner.name: gid}
        start = {m.name: len(m.events) for m in members}
        for joiner in members:
            with anyio.fail_after(self.wait_s):
                await joiner.api.connect(joiner.user_id, short)
            joined = await joiner.first_event(
                "userJoinedGroup",
                lambda e: e["groupInfo"]["groupProfile"]["displayName"] == name,
                since=start[joiner.name],
            )
            ids[joiner.name] = int(joined["groupInfo"]["groupId"])
        for m in members:
            await m.wait_for(functools.partial(_connected_to, m, start[m.name], len(members) - 1))
        return ids


def _names(display_name: str) -> Callable[[JSON], bool]:
    """Whether a ``contactConnected`` event is of a contact with ``display_name``."""
    return lambda event: bool(event["contact"]["profile"]["displayName"] == display_name)


def _connected_to(user: ScriptedUser, since: int, count: int) -> bool:
    """Whether ``user`` connected to ``count`` group members after ``events[since]``."""
    events = user.events[since:]
    return sum(1 for e in events if e.get("type") == "connectedToGroupMember") >= count


def seed_received(
    user: SimUser, chat: str, texts: Iterable[str], *, member: int | None = None
) -> list[int]:
    """Store received text messages in a chat of ``user``'s core at once, unread, as if they
    had arrived while no client listened: no delivery over the network and no event.

    For benchmarks and tests that need a chat with many unread items (a hundred thousand take
    a second or two, where sending them would take minutes). Each item is what the core
    stores for a received text message (``rcvMsgContent``, status ``rcvNew``, a shared message
    ID, the next item ID, the core's clock time), so the chat's pages, stats and ``/_read``
    commands treat them as any other.

    Args:
        user: whose core and user (:meth:`SimNetwork.user`).
        chat: ``@contactId`` (from the contact) or ``#groupId`` (from a member of the group).
        texts: the messages' texts, oldest first.
        member: the sending member's ``groupMemberId`` in a group (default: the first member
            who is not the user).

    Returns:
        The new items' IDs, in order.
    """
    ctx = user.core.ctx
    row = ctx.db.users[user.user_id]
    kind, chat_id, scope = ctx.parse_ref(chat)
    if scope is not None or kind not in ("direct", "group"):
        raise ValueError(f"{chat}: a contact or a group chat, without a scope")
    sender: int | None = None
    if kind == "group":
        group = ctx.get_group(row, chat_id)
        others = [
            m for m in ctx.db.group_members(chat_id) if m.group_member_id != group.membership_id
        ]
        if member is not None:
            others = [m for m in others if m.group_member_id == member]
        if not others:
            which = f"member {member}" if member is not None else "other member"
            raise ValueError(f"{chat}: no {which} to send the messages")
        sender = others[0].group_member_id
        direction = "groupRcv"
    else:
        ctx.get_contact(row, chat_id).used = True
        direction = "directRcv"
    ids: list[int] = []
    for text in texts:
        item = ctx.new_item(
            row,
            kind,
            chat_id,
            direction,
            {"type": "rcvMsgContent", "msgContent": {"type": "text", "text": text}},
            sender_member_id=sender,
            shared_msg_id=ctx.random_id(),
        )
        ids.append(item.item_id)
    return ids
