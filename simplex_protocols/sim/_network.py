"""The simulated network: routers, links, SimpleX names, faults, message delivery and timers.

The network is a synchronous state machine driven by its clock (as aioquic is driven by
``now``): a command to a core may queue deliveries; :meth:`SimNetwork.pump` moves every
delivery that can move now (the router is up, the sender and the recipient are online, its
latency has passed) and holds the others; :meth:`SimNetwork.next_deadline` says when the
next held delivery or service-request timeout is due. The async layer (backends and the
WebSocket server) only waits for "something changed" or "the next deadline", so the whole
network is deterministic under a seeded :class:`random.Random` and a
:class:`~simplex_protocols._clock.ManualClock`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import anyio

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols._wire import dumps
from simplex_protocols.core import CoreOption

from ._backend import SimBackend
from ._core import SimCore
from ._delivery import Delivery, LinkTarget, NameRecord, ServiceCalls
from ._faults import Faults
from ._links import ROUTER_HOSTS, LinkRef, parse_link, parse_name
from ._profiles import CoreProfile, core_profile
from ._session import Session
from ._store import Database

__all__ = ["SimNetwork", "SimUser", "default_network", "option_backend"]

JSON = dict[str, Any]

logger = logging.getLogger("simplex_protocols.sim")

_STATE_FORMAT = "simplex-protocols/sim-state/1"

#: Kinds of message that a "message loss" fault can drop. Handshakes and group management
#: messages are never lost: the agent retries them until they are delivered.
_LOSSABLE = frozenset({"x.msg.new", "x.msg.update", "x.msg.del", "x.svc.req", "x.svc.resp"})


class SimUser:
    """A handle on one simulated user: its core (by name) and its user ID there."""

    def __init__(self, network: SimNetwork, core: str, user_id: int) -> None:
        self.network = network
        self.name = core
        self.user_id = user_id

    def __repr__(self) -> str:
        return f"SimUser({self.name!r}, user_id={self.user_id})"

    @property
    def core(self) -> SimCore:
        return self.network.core(self.name)

    @property
    def display_name(self) -> str:
        db = self.core.db
        return db.users[self.user_id].local_display_name

    @property
    def router(self) -> str:
        return self.core.db.users[self.user_id].router

    def command(self, cmd: str) -> JSON:
        """Run one non-blocking command on this user's core; return the response object."""
        return self.core.execute(cmd)

    def backend(self) -> SimBackend:
        """A new in-process backend attached to this user's core."""
        return self.network.backend(self.name)

    def create_address(
        self,
        *,
        pq_ratchet: bool | None = None,
        business: bool = False,
        auto_accept: bool = True,
        welcome: str | None = None,
        serves: list[str] | None = None,
    ) -> str:
        """Create this user's contact address (as ``/_address``) and return its short link.

        ``pq_ratchet`` adds ratchet keys (needed for Service RPC): ``True`` with PQ, ``False``
        without; ``None`` leaves the address without them, as ``/_address`` without the option.
        """
        opt = "" if pq_ratchet is None else f" pq_ratchet={'on' if pq_ratchet else 'off'}"
        created = self.command(f"/_address {self.user_id}{opt}")
        if created.get("type") != "userContactLinkCreated":
            raise RuntimeError(f"address not created: {created}")
        settings: JSON = {"businessAddress": business}
        if auto_accept:
            settings["autoAccept"] = {"acceptIncognito": False}
        if welcome is not None:
            settings["autoReply"] = {"type": "text", "text": welcome}
        if serves is not None:
            settings["serves"] = list(serves)
        updated = self.command(f"/_address_settings {self.user_id} {dumps(settings)}")
        if updated.get("type") != "userContactLinkUpdated":
            raise RuntimeError(f"address settings not set: {updated}")
        return str(created["connLinkContact"]["connShortLink"])

    @property
    def address(self) -> str | None:
        """The short link of this user's contact address, if it has one."""
        db = self.core.db
        link_id = db.users[self.user_id].address_link_id
        return db.links[link_id].short if link_id is not None else None


class SimNetwork:
    """A simulated SimpleX network: routers plus one chat core per simulated user.

    Args:
        seed: seed of the network's :class:`random.Random` (keys, IDs, incognito names,
            message loss). ``None`` seeds from the operating system.
        clock: the clock for timestamps, latency and timeouts; defaults to
            :class:`~simplex_protocols._clock.SystemClock`. Use
            :class:`~simplex_protocols._clock.ManualClock` in tests.
        chaos: add an extra field to every response and event and emit an unknown event
            type after each command, so that clients are tested against both.
        core_profile: the real core that the network's cores behave as, by default: ``spec``
            (the newest, as the seeds describe it), ``v7.0`` or ``v6.4`` (see
            :data:`~simplex_protocols.sim.CORE_PROFILES`); a user's core may have another.

    Raises:
        ValueError: an unknown core profile.
    """

    def __init__(
        self,
        seed: int | None = None,
        clock: Clock | None = None,
        *,
        chaos: bool = False,
        core_profile: str | CoreProfile | None = None,
    ) -> None:
        self.core_profile = _profile_of(core_profile)
        self.seed = seed if seed is not None else int.from_bytes(os.urandom(8), "big")
        self.random = random.Random(self.seed)
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.chaos = chaos
        self.faults = Faults(self)
        self._cores: dict[str, SimCore] = {}
        self._links: dict[str, LinkTarget] = {}
        self._names: dict[str, NameRecord] = {}
        self._agents: dict[str, tuple[str, str]] = {}
        self._intros: dict[str, tuple[str, str]] = {}
        self._deliveries: list[Delivery] = []
        self._delivery_seq = 0
        self._wire_due: dict[str, float] = {}
        # tasks waiting for their session: their wakeup event -> the deadline they sleep to
        self._sleepers: dict[anyio.Event, float | None] = {}
        # tasks waiting for any change (wait_changed): woken after every pump
        self._watchers: list[anyio.Event] = []
        self._pumping = False
        self._router_turn = 0
        self.service_calls = ServiceCalls()

    # ------------------------------------------------------------------ cores and users

    def core(self, name: str) -> SimCore:
        """The core named ``name``.

        Raises:
            KeyError: no such core.
        """
        return self._cores[name]

    @property
    def core_names(self) -> list[str]:
        return sorted(self._cores)

    def has_core(self, name: str) -> bool:
        return name in self._cores

    def ensure_core(
        self, name: str, *, started: bool, profile: str | CoreProfile | None = None
    ) -> SimCore:
        """The core named ``name``, created empty (no user yet) when missing, behaving as the
        core ``profile`` (``None``: the network's default); an existing core keeps its own."""
        if not name or "/" in name:
            raise ValueError(f"invalid core name {name!r}")
        if name not in self._cores:
            chosen = self.core_profile if profile is None else _profile_of(profile)
            self._cores[name] = SimCore(self, name, Database(), started=started, profile=chosen)
        return self._cores[name]

    def next_router(self) -> str:
        host = ROUTER_HOSTS[self._router_turn % len(ROUTER_HOSTS)]
        self._router_turn += 1
        return host

    def add_user(
        self,
        name: str,
        *,
        display_name: str | None = None,
        peer_type: str | None = None,
        preferences: JSON | None = None,
        full_name: str = "",
        short_descr: str | None = None,
        started: bool = True,
        service_requests: bool = False,
        core_profile: str | CoreProfile | None = None,
    ) -> SimUser:
        """Create a simulated user with its own core (database) named ``name``.

        Args:
            name: the core's name: the WebSocket path and the ``sim:NAME`` backend.
            display_name: the profile's display name (default ``name``).
            peer_type: ``"human"``, ``"bot"``, ``"business"`` or ``"agent"`` (omitted when
                ``None``, as the core omits it).
            preferences: the profile's preferences (for example ``commands`` and
                ``protocols``), stored and returned unchanged.
            started: whether the core's chat is running, as after ``/_start``.
            service_requests: whether it accepts Service RPC requests (``service_requests=on``).
            core_profile: the real core the user's core behaves as (``None``: the network's).

        Raises:
            ValueError: a core named ``name`` exists already, the display name is invalid, or
                the core profile is unknown.
        """
        if name in self._cores:
            raise ValueError(f"a simulated user named {name!r} exists already")
        core = self.ensure_core(name, started=started, profile=core_profile)
        core.service_requests = service_requests
        prof: JSON = {"displayName": display_name or name, "fullName": full_name}
        if short_descr is not None:
            prof["shortDescr"] = short_descr
        if preferences is not None:
            prof["preferences"] = preferences
        if peer_type is not None:
            prof["peerType"] = peer_type
        resp = core.execute(f"/_create user {dumps({'profile': prof, 'pastTimestamp': False})}")
        if resp.get("type") != "activeUser":
            del self._cores[name]
            raise ValueError(f"user not created: {resp}")
        return SimUser(self, name, int(resp["user"]["userId"]))

    def user(self, name: str) -> SimUser:
        """The active user of the core named ``name``.

        Raises:
            KeyError: no such core, or it has no user yet.
        """
        core = self._cores[name]
        if core.db.active_user_id is None:
            raise KeyError(f"core {name!r} has no user yet")
        return SimUser(self, name, core.db.active_user_id)

    def backend(self, name: str) -> SimBackend:
        """An in-process :class:`~simplex_protocols.core.CoreBackend` for the core ``name``.

        The core is created on demand without a user and without a running chat (as an
        embedded core before ``/_create user`` and ``/_start``).
        """
        self.ensure_core(name, started=False)
        return SimBackend(self, name)

    def disconnect(self, name: str | None = None) -> None:
        """Drop every client session of one core (or of all): their receives fail."""
        for core in list(self._cores.values()):
            if name is None or core.name == name:
                core.drop_sessions()
        self.changed()

    # ------------------------------------------------------------------ connections

    def register_agent(self, agent_conn_id: str, core: str, router: str) -> None:
        """Record where an agent connection lives: its core and the router of its queue."""
        self._agents[agent_conn_id] = (core, router)

    def core_of_agent(self, agent_conn_id: str) -> tuple[str, str] | None:
        return self._agents.get(agent_conn_id)

    def introduce(
        self, net_id: str, own_member: str, peer_member: str, core: str, agent: str
    ) -> None:
        """One side of a group member introduction is ready; pair both sides when both are.

        When the other side (``peer_member``'s core) registered its connection for the same
        pair, the two connections are paired and both ends get ``x.grp.mem.con``.
        """
        key = "|".join([net_id, *sorted((own_member, peer_member))])
        other = self._intros.pop(key, None)
        if other is None or other[0] == own_member:
            self._intros[key] = (own_member, agent)
            return
        peer_agent = other[1]
        for mine, theirs in ((agent, peer_agent), (peer_agent, agent)):
            loc = self._agents.get(mine)
            if loc is None:
                continue
            target_core = self._cores.get(loc[0])
            if target_core is not None:
                target_core.pair_intro(mine, theirs)
        for src, dst, member in ((agent, peer_agent, own_member), (peer_agent, agent, peer_member)):
            src_loc, dst_loc = self._agents.get(src), self._agents.get(dst)
            if src_loc is None or dst_loc is None:
                continue
            self.send(
                src_loc[0],
                dst_loc[0],
                dst,
                dst_loc[1],
                {"t": "x.grp.mem.con", "memberId": member},
                src_agent=src,
            )

    # ------------------------------------------------------------------ links and names

    def register_link(self, keys: Iterable[str], target: LinkTarget) -> None:
        for key in keys:
            self._links[key] = target

    def unregister_link(self, keys: Iterable[str]) -> None:
        for key in keys:
            self._links.pop(key, None)

    def resolve_link(self, text: str) -> tuple[LinkRef, LinkTarget | None] | None:
        """Parse a link and find what it names (``None`` target: no such queue)."""
        ref = parse_link(text)
        if ref is None:
            return None
        return ref, self._links.get(ref.lookup_key)

    def lookup_key(self, key: str) -> LinkTarget | None:
        return self._links.get(key)

    def register_name(
        self,
        name: str,
        user: SimUser | str,
        kind: str = "contact",
        *,
        group_id: int | None = None,
        known_domain: bool = True,
    ) -> None:
        """Register a SimpleX name with a verified domain.

        ``kind="contact"`` resolves ``@name`` to the user's contact address (whatever it is at
        resolution time); ``kind="publicGroup"`` resolves ``#name`` to the link of the user's
        group ``group_id`` (a channel or a group). The user's profile (or the group's public
        record) gets the domain claim, so peers that connect by the name see it verified.
        ``known_domain=False`` makes resolution fail with ``simplexDomainNotReady
        unknownDomain``; a name whose target has no link fails with ``noValidLink``.

        Raises:
            ValueError: the name is not a SimpleX name, the kind is unknown, or the group is
                missing.
        """
        ref = parse_name(name)
        if ref is None:
            raise ValueError(f"not a SimpleX name: {name!r}")
        if kind not in ("contact", "publicGroup"):
            raise ValueError("kind is 'contact' or 'publicGroup'")
        core_name = user if isinstance(user, str) else user.name
        core = self.core(core_name)
        user_id = user.user_id if isinstance(user, SimUser) else core.db.active_user_id
        if user_id is None:
            raise ValueError(f"core {core_name!r} has no user")
        if kind == "publicGroup" and (group_id is None or group_id not in core.db.groups):
            raise ValueError("a publicGroup name needs group_id of one of the user's groups")
        self._names[ref.full] = NameRecord(
            ref.full, core_name, user_id, kind, group_id, known_domain
        )
        core.claim_domain(user_id, ref.full, kind, group_id)

    def name_record(self, full: str) -> NameRecord | None:
        return self._names.get(full)

    # ------------------------------------------------------------------ delivery

    def send(
        self,
        src_core: str,
        dst_core: str,
        dst: str,
        router: str,
        body: JSON,
        *,
        src_agent: str | None = None,
        receipt: list[int] | None = None,
        msg_seq: int = 0,
    ) -> None:
        """Queue a message from one core to a queue on ``router`` (delivered by :meth:`pump`)."""
        self._delivery_seq += 1
        wire = f"{src_agent or src_core}>{dst}"
        due = self.clock.now() + self.faults.delay(src_core, dst_core)
        due = max(due, self._wire_due.get(wire, 0.0))
        self._wire_due[wire] = due
        lost = False
        if body.get("t") in _LOSSABLE:
            p = self.faults.loss_probability(src_core, dst_core)
            lost = p > 0 and self.random.random() < p
        self._deliveries.append(
            Delivery(
                seq=self._delivery_seq,
                src_core=src_core,
                dst_core=dst_core,
                dst=dst,
                router=router,
                body=body,
                src_agent=src_agent,
                receipt=receipt,
                due=due,
                wire=wire,
                lost=lost,
                msg_seq=msg_seq,
            )
        )

    def changed(self) -> None:
        """Something changed (a fault, a stopped core): move what can move now."""
        self.pump()

    def pump(self) -> None:
        """Deliver every message that can be delivered now, in order, and fire timeouts.

        Frames for clients reach their sessions' outboxes (which wake only those clients);
        a task waiting for a later deadline is woken only when an earlier one appears.
        """
        if self._pumping:
            return
        self._pumping = True
        try:
            progress = True
            while progress:
                progress = False
                now = self.clock.now()
                # the routers take what they can (in order per connection) ...
                held: set[str] = set()
                for d in self._deliveries:
                    if d.accepted or d.wire in held:
                        continue
                    if self.faults.is_offline(d.src_core) or self.faults.is_router_down(d.router):
                        held.add(d.wire)
                        continue
                    d.accepted = True
                    if d.src_core in self._cores:
                        self._cores[d.src_core].on_accepted(d)
                # ... and deliver what is due to recipients that are online and running
                # (messages sent while this pass runs queue up behind the ones kept)
                blocked: set[str] = set()
                pending, self._deliveries = self._deliveries, []
                kept: list[Delivery] = []
                for d in pending:
                    if d.wire in blocked:
                        kept.append(d)
                        continue
                    dst = self._cores.get(d.dst_core)
                    if dst is None:
                        continue
                    if (
                        not d.accepted
                        or d.due > now
                        or self.faults.is_offline(d.dst_core)
                        or not dst.started
                    ):
                        blocked.add(d.wire)
                        kept.append(d)
                        continue
                    progress = True
                    if d.lost:
                        continue
                    try:
                        dst.receive(d)
                    except Exception:  # a bug in one core must not stop the network
                        logger.exception(
                            "simulated core %r failed on %s", d.dst_core, d.body.get("t")
                        )
                        continue
                    if d.receipt and d.src_core in self._cores:
                        self._cores[d.src_core].on_delivered(d)
                self._deliveries = kept + self._deliveries
                self._fire_service_timeouts(now)
        finally:
            self._pumping = False
        self._rearm()
        if self._watchers:
            watchers, self._watchers = self._watchers, []
            for event in watchers:
                event.set()

    def pending_deliveries(self, agent_conn_ids: Iterable[str] | None = None) -> int:
        """Messages the routers have not taken yet (optionally only those sent on these
        connections), as the agent's ``snd_message_deliveries`` counts them: a delivery
        ends when the router accepts the message, whether or not the recipient is online."""
        if agent_conn_ids is None:
            return sum(1 for d in self._deliveries if not d.accepted)
        ids = set(agent_conn_ids)
        return sum(1 for d in self._deliveries if not d.accepted and d.src_agent in ids)

    def messages_in_flight(self) -> int:
        """Messages sent and not yet delivered to their recipients (held by a fault, waiting
        for their latency, or for an offline or stopped recipient)."""
        return len(self._deliveries)

    def next_deadline(self) -> float | None:
        """When the next delivery or service timeout falls due, on the clock (or ``None``)."""
        now = self.clock.now()
        best: float | None = None
        for d in self._deliveries:
            if (
                d.due > now
                and (best is None or d.due < best)
                and not self.faults.is_offline(d.dst_core)
            ):
                best = d.due
        first_call = self.service_calls.earliest_deadline()
        if first_call is not None and (best is None or first_call < best):
            best = first_call
        return best

    def _fire_service_timeouts(self, now: float) -> None:
        if not self.service_calls:
            return
        for call in self.service_calls.pop_due(now):
            core = self._cores.get(call.core)
            if core is not None:
                core.service_call_timed_out(call)

    # ------------------------------------------------------------------ waiting

    def _rearm(self) -> None:
        """Wake the waiting tasks that sleep past the next deadline, so they sleep to it."""
        if not self._sleepers:
            return
        deadline = self.next_deadline()
        if deadline is None:
            return
        for event, armed in list(self._sleepers.items()):
            if armed is None or deadline < armed:
                event.set()

    async def wait_for(self, session: Session) -> None:
        """Wait until ``session`` has a frame or is closed, or the next deadline passes (then
        deliver what is due). Returns at once when the session has a frame or is closed."""
        if session.outbox or session.closed:
            return
        event = anyio.Event()
        session.wakeup = event
        try:
            await self._sleep(event)
        finally:
            if session.wakeup is event:
                session.wakeup = None

    async def wait_changed(self) -> None:
        """Wait until the network next delivers or changes (a pump), or its next deadline
        passes (then deliver what is due)."""
        event = anyio.Event()
        self._watchers.append(event)
        try:
            await self._sleep(event)
        finally:
            if event in self._watchers:
                self._watchers.remove(event)

    async def _sleep(self, event: anyio.Event) -> None:
        deadline = self.next_deadline()
        self._sleepers[event] = deadline
        try:
            if deadline is None:
                await event.wait()
            elif isinstance(self.clock, SystemClock):
                with anyio.move_on_after(max(0.0, deadline - self.clock.now())):
                    await event.wait()
            else:
                await self._wait_on_clock(event, deadline)
        finally:
            self._sleepers.pop(event, None)
        if deadline is not None and self.clock.now() >= deadline:
            self.pump()

    async def _wait_on_clock(self, event: anyio.Event, deadline: float) -> None:
        """Wait for ``event`` or for ``deadline`` on an injected clock (a ManualClock moves
        only when a test advances it)."""
        async with anyio.create_task_group() as tg:

            async def sleeper() -> None:
                await self.clock.sleep(max(0.0, deadline - self.clock.now()))
                event.set()

            tg.start_soon(sleeper)
            await event.wait()
            tg.cancel_scope.cancel()

    def process_timers(self) -> None:
        """Deliver what is due and fire timeouts now (for in-process use without backends)."""
        self.pump()

    async def settle(self) -> None:
        """Let the network deliver everything that is due now (yields to other tasks)."""
        self.pump()
        await anyio.lowlevel.checkpoint()

    # ------------------------------------------------------------------ persistence

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the network's state (users, chats, links, names, queued messages) as JSON.

        Sessions and Service RPC calls in flight are not saved: they end with the process.
        """
        state: JSON = {
            "format": _STATE_FORMAT,
            "seed": self.seed,
            "random": _encode_random_state(self.random.getstate()),
            "routerTurn": self._router_turn,
            "deliverySeq": self._delivery_seq,
            "cores": {
                name: {
                    "db": core.db.to_json(),
                    "started": core.started,
                    "serviceRequests": core.service_requests,
                    "coreProfile": core.profile.name,
                }
                for name, core in self._cores.items()
            },
            "links": {k: dataclasses.asdict(v) for k, v in self._links.items()},
            "names": {k: dataclasses.asdict(v) for k, v in self._names.items()},
            "agents": {k: list(v) for k, v in self._agents.items()},
            "intros": {k: list(v) for k, v in self._intros.items()},
            "deliveries": [dataclasses.asdict(d) for d in self._deliveries],
            "faults": {
                "routersDown": sorted(self.faults._routers_down),
                "offline": sorted(self.faults._offline),
            },
        }
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(dumps(state), encoding="utf-8")
        tmp.replace(target)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Clock | None = None,
        chaos: bool = False,
        core_profile: str | CoreProfile | None = None,
    ) -> SimNetwork:
        """Read a state file written by :meth:`save`.

        Each core keeps the profile it was saved with (a file written before profiles existed
        has ``spec`` cores); ``core_profile`` is the default for cores made from now on.

        Raises:
            ValueError: the file is not a simulator state file of this format, or names an
                unknown core profile.
            OSError: the file cannot be read.
        """
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(raw, dict) or raw.get("format") != _STATE_FORMAT:
            raise ValueError(f"{path}: not a simplex-sim state file ({_STATE_FORMAT})")
        net = cls(seed=int(raw["seed"]), clock=clock, chaos=chaos, core_profile=core_profile)
        net.random.setstate(_decode_random_state(raw["random"]))
        net._router_turn = int(raw.get("routerTurn", 0))
        net._delivery_seq = int(raw.get("deliverySeq", 0))
        for name, data in raw.get("cores", {}).items():
            core = SimCore(
                net,
                name,
                Database.from_json(data["db"]),
                started=bool(data["started"]),
                profile=_profile_of(data.get("coreProfile")),
            )
            core.service_requests = bool(data.get("serviceRequests", False))
            net._cores[name] = core
        net._links = {k: LinkTarget(**v) for k, v in raw.get("links", {}).items()}
        net._names = {k: NameRecord(**v) for k, v in raw.get("names", {}).items()}
        net._agents = {k: (v[0], v[1]) for k, v in raw.get("agents", {}).items()}
        net._intros = {k: (v[0], v[1]) for k, v in raw.get("intros", {}).items()}
        now = net.clock.now()
        for d in raw.get("deliveries", []):
            delivery = Delivery(**d)
            delivery.due = min(delivery.due, now)
            net._deliveries.append(delivery)
        faults = raw.get("faults", {})
        net.faults._routers_down = set(faults.get("routersDown", []))
        net.faults._offline = set(faults.get("offline", []))
        return net


def _profile_of(name: str | CoreProfile | None) -> CoreProfile:
    return core_profile(name)


def _encode_random_state(state: tuple[Any, ...]) -> list[Any]:
    version, internal, gauss = state
    return [version, list(internal), gauss]


def _decode_random_state(data: list[Any]) -> tuple[Any, ...]:
    return (data[0], tuple(data[1]), data[2])


_default: SimNetwork | None = None


def default_network() -> SimNetwork:
    """The process-wide simulated network (used by ``--core sim:USER``), created on first use."""
    global _default
    if _default is None:
        _default = SimNetwork()
    return _default


def option_backend(option: CoreOption) -> SimBackend:
    """The backend of ``--core sim:USER``: USER's core in :func:`default_network`."""
    if option.user is None:
        raise ValueError(f"{option}: a sim option names its user")
    return default_network().backend(option.user)
