"""What the command groups and receive handlers of one simulated core share.

:class:`CoreContext` holds one core's database (the store), its event emitter, its running
state and a reference to the network (through :class:`NetworkPort`, the part of the network a
core uses), with the helpers every handler needs: time and randomness, looking rows up,
creating rows as the core assigns their IDs, the JSON of rows, and sending to peers. The
handlers are plain functions that take it (``_cmd_*.py``, ``_rcv_*.py``, ``_requests.py``,
``_service.py``); :class:`~simplex_protocols.sim.SimCore` owns one and dispatches to them.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Iterable
from typing import Any, Protocol

from simplex_protocols import _wire
from simplex_protocols._clock import Clock
from simplex_protocols.coretext import is_valid_display_name, mk_valid_name

from . import _records as rec
from ._delivery import LinkTarget, NameRecord, ServiceCalls
from ._errors import chat_error, command_error, store_error
from ._faults import Faults
from ._links import LinkRef, b64url, make_contact_link
from ._profiles import CoreProfile, core_profile
from ._session import Emitter, Session
from ._store import (
    ConnRow,
    ContactRow,
    Database,
    GroupRow,
    ItemRow,
    LinkRow,
    MemberRow,
    ProfileRow,
    UserRow,
)

__all__ = [
    "DEFERRED",
    "Args",
    "CoreContext",
    "NetworkPort",
    "PeerCore",
    "event_text",
    "json_arg",
    "json_object",
    "parse_int",
]

JSON = dict[str, Any]

#: A command's parameters by name, as the grammar matched them (``None``: an absent part).
Args = dict[str, str | None]

#: Returned by a handler whose response comes later (a blocking command).
DEFERRED: JSON = {"type": "__deferred__"}

_ADJECTIVES = (
    "Brave", "Calm", "Clever", "Eager", "Gentle", "Happy", "Jolly", "Kind", "Lively", "Merry",
    "Nimble", "Proud", "Quiet", "Swift", "Witty", "Bold", "Bright", "Keen", "Noble", "Sunny",
)  # fmt: skip
_ANIMALS = (
    "Otter", "Falcon", "Badger", "Heron", "Lynx", "Marten", "Osprey", "Panda", "Quokka", "Raven",
    "Stoat", "Tapir", "Walrus", "Yak", "Zebra", "Beaver", "Crane", "Dingo", "Egret", "Ferret",
)  # fmt: skip


class PeerCore(Protocol):
    """Another core of the network, as a core sees it (the owner of a link, a name)."""

    ctx: CoreContext


class NetworkPort(Protocol):
    """The part of :class:`~simplex_protocols.sim.SimNetwork` a core uses."""

    random: random.Random
    clock: Clock
    chaos: bool
    faults: Faults
    service_calls: ServiceCalls

    def core(self, name: str) -> PeerCore: ...

    def next_router(self) -> str: ...

    def changed(self) -> None: ...

    def pump(self) -> None: ...

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
    ) -> None: ...

    def pending_deliveries(self, agent_conn_ids: Iterable[str] | None = None) -> int: ...

    def register_agent(self, agent_conn_id: str, core: str, router: str) -> None: ...

    def core_of_agent(self, agent_conn_id: str) -> tuple[str, str] | None: ...

    def introduce(
        self, net_id: str, own_member: str, peer_member: str, core: str, agent: str
    ) -> None: ...

    def register_link(self, keys: Iterable[str], target: LinkTarget) -> None: ...

    def unregister_link(self, keys: Iterable[str]) -> None: ...

    def resolve_link(self, text: str) -> tuple[LinkRef, LinkTarget | None] | None: ...

    def lookup_key(self, key: str) -> LinkTarget | None: ...

    def name_record(self, full: str) -> NameRecord | None: ...


class CoreContext:
    """One core's store, emitter and state, and the helpers its handlers share.

    Args:
        network: the network the core is part of.
        name: the core's name (its WebSocket path, its ``sim:NAME`` backend).
        db: the core's database.
        events: where the core's responses and events go.
        started: whether the chat is running (as after ``/_start``).
        profile: the real core this one behaves as (``spec``: the newest).
    """

    def __init__(
        self,
        network: NetworkPort,
        name: str,
        db: Database,
        events: Emitter,
        *,
        started: bool,
        profile: CoreProfile | None = None,
    ) -> None:
        self.network = network
        self.name = name
        self.db = db
        self.events = events
        self.started = started
        #: The real core this one behaves as: what it parses, keeps and writes.
        self.core_profile = core_profile(profile)
        self.service_requests = False
        #: The session and correlation ID of the command running now (a blocking command
        #: answers that session later).
        self.current: tuple[Session | None, str] = (None, "")
        self.network_config: JSON = {
            "socksMode": "always",
            "hostMode": "onionViaSocks",
            "requiredHostMode": False,
            "sessionMode": "user",
            "smpProxyMode": "unknown",
            "smpProxyFallback": "allowProtected",
            "smpWebPortServers": "preset",
            "tcpConnectTimeout": 25_000_000,
            "tcpTimeout": 15_000_000,
            "tcpTimeoutPerKb": 10_000,
            "rcvConcurrency": 12,
            "smpPingInterval": 600_000_000,
            "smpPingCount": 3,
            "logTLSErrors": False,
        }

    def __repr__(self) -> str:
        return f"CoreContext({self.name!r})"

    def peer(self, core_name: str) -> CoreContext:
        """The context of a core of the network (this one's for its own name)."""
        return self.network.core(core_name).ctx

    # ------------------------------------------------------------------ time and randomness

    def now(self) -> float:
        return self.network.clock.now()

    def ts(self) -> str:
        return rec.iso(self.network.clock.wall())

    def random_id(self, nbytes: int = 12) -> str:
        return b64url(self.network.random.randbytes(nbytes))

    # ------------------------------------------------------------------ output

    def emit(self, resp: JSON) -> None:
        """Send an event to the core's clients (after the current command's response)."""
        self.events.emit(resp)

    def emit_new_items(self, user: UserRow, items: list[ItemRow]) -> None:
        """The ``newChatItems`` event of new items (none: no event)."""
        if items:
            self.events.emit(
                {
                    "type": "newChatItems",
                    "user": self.user_json(user.user_id),
                    "chatItems": [self.a_item(i) for i in items],
                }
            )

    # ------------------------------------------------------------------ users

    def user_json(self, user_id: int) -> JSON:
        return rec.user(self.db, self.db.users[user_id])

    def active_user(self) -> UserRow:
        uid = self.db.active_user_id
        if uid is None or uid not in self.db.users:
            raise chat_error("noActiveUser")
        return self.db.users[uid]

    def user_by_id(self, text: str | None) -> UserRow:
        user_id = parse_int(text)
        user = self.db.users.get(user_id)
        if user is None:
            raise store_error("userNotFound", userId=user_id)
        return user

    def user_profile(self, user: UserRow) -> ProfileRow:
        return self.db.profiles[user.profile_id]

    def require_started(self) -> None:
        if not self.started:
            raise chat_error("chatNotStarted")

    # ------------------------------------------------------------------ chat references

    def parse_ref(self, ref: str) -> tuple[str, int, str | None]:
        """``@3`` / ``#5(_support:7)`` / ``*1`` / ``:9`` into (type, ID, scope)."""
        m = re.match(r"^([@#*:%])(\d+)(\(.*\))?$", ref)
        if not m:
            raise command_error(f"invalid chat reference {ref!r}")
        kind = {"@": "direct", "#": "group", "*": "local", ":": "contactConnection", "%": "feed"}[
            m.group(1)
        ]
        return kind, parse_int(m.group(2)), m.group(3)

    def get_contact(self, user: UserRow, contact_id: int) -> ContactRow:
        c = self.db.contacts.get(contact_id)
        if c is None or c.user_id != user.user_id or c.is_user_contact:
            raise store_error("contactNotFound", contactId=contact_id)
        return c

    def get_group(self, user: UserRow, group_id: int) -> GroupRow:
        g = self.db.groups.get(group_id)
        if g is None or g.user_id != user.user_id:
            raise store_error("groupNotFound", groupId=group_id)
        return g

    def membership(self, g: GroupRow) -> MemberRow:
        return self.db.members[g.membership_id]

    # ------------------------------------------------------------------ row creation

    def valid_display_name(self, name: Any) -> str:
        """``name``, when the core accepts it as a display name.

        Raises:
            ChatFailure: ``invalidDisplayName`` with the valid name the core suggests.
        """
        if not is_valid_display_name(name):
            valid = mk_valid_name(name) if isinstance(name, str) else ""
            raise chat_error("invalidDisplayName", displayName=str(name), validName=valid)
        return str(name)

    def new_profile(self, profile: JSON, *, incognito: bool = False) -> ProfileRow:
        row = ProfileRow(self.db.next_id("profiles"), copy.deepcopy(profile), "", incognito)
        self.db.profiles[row.profile_id] = row
        return row

    def profile_row(self, profile: Any) -> ProfileRow:
        """A profile row for a profile a peer sent (a placeholder when it sent none), as this
        core decodes it (a key its Profile record lacks is dropped)."""
        prof = profile if isinstance(profile, dict) else {"displayName": "unknown", "fullName": ""}
        return self.new_profile(self.core_profile.profile(prof))

    def incognito_profile(self, user: UserRow) -> ProfileRow:
        """A random profile for one connection; it keeps the user's peer type."""
        rng = self.network.random
        name = rng.choice(_ADJECTIVES) + rng.choice(_ANIMALS)
        profile: JSON = {"displayName": name, "fullName": ""}
        peer_type = self.user_profile(user).profile.get("peerType")
        if peer_type is not None:
            profile["peerType"] = peer_type
        return self.new_profile(profile, incognito=True)

    def unique_name(self, user_id: int, wanted: str) -> str:
        """A local display name not used by another contact, group or member of the user."""
        used = {c.local_display_name for c in self.db.contacts.values() if c.user_id == user_id}
        used |= {g.local_display_name for g in self.db.groups.values() if g.user_id == user_id}
        used |= {
            m.local_display_name
            for m in self.db.members.values()
            if m.user_id == user_id and m.category != "user"
        }
        used |= {u.local_display_name for u in self.db.users.values() if u.user_id == user_id}
        if wanted not in used:
            return wanted
        n = 1
        while f"{wanted}_{n}" in used:
            n += 1
        return f"{wanted}_{n}"

    def new_conn(self, user: UserRow, conn_type: str, status: str, **fields: Any) -> ConnRow:
        ts = self.ts()
        conn = ConnRow(
            conn_id=self.db.next_id("conns"),
            user_id=user.user_id,
            agent_conn_id=self.random_id(12),
            conn_type=conn_type,
            status=status,
            created_at=ts,
            updated_at=ts,
            router=fields.pop("router", user.router),
            **fields,
        )
        self.db.conns[conn.conn_id] = conn
        self.network.register_agent(conn.agent_conn_id, self.name, conn.router)
        return conn

    def new_contact(self, user: UserRow, profile: ProfileRow, **fields: Any) -> ContactRow:
        ts = self.ts()
        name = self.unique_name(user.user_id, str(profile.profile.get("displayName", "")))
        c = ContactRow(
            contact_id=self.db.next_id("contacts"),
            user_id=user.user_id,
            profile_id=profile.profile_id,
            local_display_name=name,
            created_at=ts,
            updated_at=ts,
            chat_ts=ts,
            **fields,
        )
        self.db.contacts[c.contact_id] = c
        return c

    def new_member(
        self,
        user: UserRow,
        g_id: int,
        member_id: str,
        role: str,
        category: str,
        status: str,
        profile: ProfileRow,
        *,
        invited_by: JSON | None = None,
        contact_profile_id: int | None = None,
        conn_id: int | None = None,
        member_contact_id: int | None = None,
    ) -> MemberRow:
        ts = self.ts()
        index = sum(1 for m in self.db.members.values() if m.group_id == g_id)
        if category == "user":
            name = user.local_display_name
        else:
            name = self.unique_name(user.user_id, str(profile.profile.get("displayName", "")))
        m = MemberRow(
            group_member_id=self.db.next_id("members"),
            group_id=g_id,
            user_id=user.user_id,
            index_in_group=index,
            member_id=member_id,
            role=role,
            category=category,
            status=status,
            invited_by=invited_by or {"type": "unknown"},
            local_display_name=name,
            profile_id=profile.profile_id,
            member_contact_profile_id=contact_profile_id or profile.profile_id,
            created_at=ts,
            updated_at=ts,
            conn_id=conn_id,
            member_contact_id=member_contact_id,
        )
        self.db.members[m.group_member_id] = m
        return m

    def new_group_row(
        self,
        user: UserRow,
        profile: JSON,
        *,
        net_id: str,
        role: str,
        status: str,
        member_id: str | None = None,
        incognito_id: int | None = None,
    ) -> GroupRow:
        """A group row and the user's membership in it."""
        ts = self.ts()
        gid = self.db.next_id("groups")
        my_profile = self.db.profiles[incognito_id] if incognito_id else self.user_profile(user)
        g = GroupRow(
            group_id=gid,
            user_id=user.user_id,
            local_display_name=self.unique_name(user.user_id, str(profile.get("displayName", ""))),
            profile=copy.deepcopy(profile),
            membership_id=0,
            net_id=net_id,
            created_at=ts,
            updated_at=ts,
            chat_ts=ts,
        )
        self.db.groups[gid] = g
        m = self.new_member(
            user,
            gid,
            member_id or self.random_id(12),
            role,
            "user",
            status,
            my_profile,
            invited_by={"type": "user"},
            contact_profile_id=self.user_profile(user).profile_id,
            member_contact_id=user.user_contact_id,
        )
        g.membership_id = m.group_member_id
        return g

    def new_item(
        self,
        user: UserRow,
        chat_type: str,
        chat_id: int,
        dir_type: str,
        content: JSON,
        *,
        item_ts: str | None = None,
        sender_member_id: int | None = None,
        **fields: Any,
    ) -> ItemRow:
        ts = self.ts()
        msg = content.get("msgContent")
        text = str(msg.get("text", "")) if isinstance(msg, dict) else event_text(content)
        status: JSON = {"type": "sndNew"} if dir_type.endswith("Snd") else {"type": "rcvNew"}
        if dir_type.endswith("Snd") and content.get("type") not in ("sndMsgContent",):
            status = {"type": "sndSent", "sndProgress": "complete"}
        item = ItemRow(
            item_id=self.db.next_id("items"),
            user_id=user.user_id,
            chat_type=chat_type,
            chat_id=chat_id,
            dir_type=dir_type,
            content=content,
            item_text=text,
            item_ts=item_ts or ts,
            created_at=ts,
            updated_at=ts,
            status=fields.pop("status", None) or status,
            created_seq=self.now(),
            sender_member_id=sender_member_id,
            has_link=rec.has_link(text),
            **fields,
        )
        self.db.add_item(item)
        self.touch_chat(chat_type, chat_id, item.item_ts)
        return item

    def touch_chat(self, chat_type: str, chat_id: int, ts: str | None = None) -> None:
        stamp = ts or self.ts()
        if chat_type == "direct" and chat_id in self.db.contacts:
            c = self.db.contacts[chat_id]
            c.chat_ts = max(c.chat_ts or "", stamp)
            c.chat_deleted = False
        elif chat_type == "group" and chat_id in self.db.groups:
            g = self.db.groups[chat_id]
            g.chat_ts = max(g.chat_ts or "", stamp)

    def new_link(
        self, user: UserRow, kind: str, link_type: str, *, group_id: int | None = None
    ) -> LinkRow:
        """Create an address or group link on the user's router and publish it."""
        group_link_id = self.random_id(16) if kind == "group" else None
        full, short, key, queue_id = make_contact_link(
            self.network.random, user.router, link_type, group_link_id=group_link_id
        )
        link_id = self.db.next_id("links")
        conn = self.new_conn(user, "user_contact", "ready", link_id=link_id)
        link = LinkRow(
            link_id=link_id,
            user_id=user.user_id,
            kind=kind,
            key=key,
            queue_id=queue_id,
            full=full,
            short=short,
            conn_id=conn.conn_id,
            created_at=self.ts(),
            group_id=group_id,
            group_link_id=group_link_id,
        )
        self.db.links[link_id] = link
        self.network.register_link(
            [key, queue_id], LinkTarget(kind, self.name, link_id, user.router)
        )
        return link

    def delete_link(self, link: LinkRow) -> None:
        self.network.unregister_link([link.key, link.queue_id])
        self.db.conns.pop(link.conn_id, None)
        self.db.links.pop(link.link_id, None)

    # ------------------------------------------------------------------ JSON of rows

    def a_item(self, item: ItemRow) -> JSON:
        return rec.a_chat_item(self.db, item, self.now())

    def group_json(self, g: GroupRow) -> JSON:
        return rec.group_info(self.db, g)

    def contact_json(self, c: ContactRow) -> JSON:
        return rec.contact(self.db, c)

    def member_json(self, m: MemberRow) -> JSON:
        return rec.group_member(self.db, m)

    def member_info(self, m: MemberRow) -> JSON:
        """A member as one core tells another about it (ID, role and profile)."""
        return {
            "memberId": m.member_id,
            "role": m.role,
            "profile": rec.profile(self.db.profiles[m.profile_id]),
        }

    def profile_for_peer(self, user: UserRow, incognito_id: int | None) -> JSON:
        if incognito_id is not None:
            return rec.profile(self.db.profiles[incognito_id])
        return rec.profile(self.user_profile(user))

    # ------------------------------------------------------------------ sending

    def send_on(
        self,
        conn: ConnRow,
        body: JSON,
        *,
        receipt: list[int] | None = None,
    ) -> None:
        """Send a message to the other end of a connection (dropped if it has none)."""
        if conn.peer is None:
            return
        target = self.network.core_of_agent(conn.peer)
        if target is None:
            return
        conn.snd_seq += 1
        dst_core, router = target
        self.network.send(
            self.name,
            dst_core,
            conn.peer,
            router,
            body,
            src_agent=conn.agent_conn_id,
            receipt=receipt,
            msg_seq=conn.snd_seq,
        )

    def send_to_link(self, key: str, router: str, dst_core: str, body: JSON, src: str) -> None:
        self.network.send(self.name, dst_core, f"link:{key}", router, body, src_agent=src)


def parse_int(text: str | None) -> int:
    """A command's number parameter (``commandError`` when it is not one)."""
    if text is None:
        raise command_error("missing number")
    try:
        return int(text)
    except ValueError:
        raise command_error(f"not a number: {text!r}") from None


def json_arg(text: str | None, what: str) -> Any:
    """Decode a command's JSON argument, refusing bad JSON as the core's parser does."""
    if text is None:
        raise command_error(f"{what}: JSON expected")
    try:
        return _wire.loads(text)
    except _wire.WireJSONError as exc:
        raise command_error(f"{what}: {exc}") from None


def json_object(text: str | None, what: str) -> JSON:
    """A command's JSON parameter that must be an object."""
    value = json_arg(text, what)
    if not isinstance(value, dict):
        raise command_error(f"{what}: JSON object expected")
    return value


def event_text(content: JSON) -> str:
    """The itemText the core shows for a non-message item."""
    tag = str(content.get("type", ""))
    for key in ("rcvGroupEvent", "sndGroupEvent", "rcvDirectEvent"):
        ev = content.get(key)
        if isinstance(ev, dict):
            return {
                "memberConnected": "connected",
                "memberLeft": "left",
                "memberRole": f"changed role to {ev.get('role', '')}",
                "userRole": f"changed your role to {ev.get('role', '')}",
                "memberDeleted": "removed member",
                "userDeleted": "removed you",
                "groupDeleted": "deleted group",
                "groupUpdated": "group profile updated",
                "userLeft": "you left",
                "contactDeleted": "contact deleted",
                "profileUpdated": "updated profile",
            }.get(str(ev.get("type")), str(ev.get("type", "")))
    if tag == "rcvIntegrityError":
        return "skipped message(s)"
    if tag == "rcvGroupInvitation":
        return "received invitation to join group"
    if tag in ("sndDeleted", "rcvDeleted"):
        return "deleted"
    return ""
