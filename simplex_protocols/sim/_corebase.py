"""The shared state and helpers of one simulated chat core.

:class:`CoreBase` holds the database, the client sessions and the output rules (a command's
response goes to the session that sent it, before the events the command caused; events go
to every attached session, or wait in a backlog while none is attached). The command and
protocol handlers are mixins over it (``_cmd_*.py``, ``_receive.py``, ``_service.py``).
"""

from __future__ import annotations

import copy
import re
import unicodedata
from collections import deque
from typing import TYPE_CHECKING, Any

from . import _records as rec
from ._errors import ChatFailure, chat_error, command_error, store_error
from ._links import b64url
from ._store import (
    ConnRow,
    ContactRow,
    Database,
    GroupRow,
    ItemRow,
    MemberRow,
    ProfileRow,
    UserRow,
)

if TYPE_CHECKING:
    from ._network import SimNetwork

__all__ = ["BACKLOG_LIMIT", "ChatFailure", "CoreBase", "Session", "event_text", "parse_int"]

JSON = dict[str, Any]

#: Events kept for a core while no client is attached; older ones are dropped first.
BACKLOG_LIMIT = 10_000

_INVALID_NAME_CHARS = set(".,;/\\#@'\"~`")

_ADJECTIVES = (
    "Brave", "Calm", "Clever", "Eager", "Gentle", "Happy", "Jolly", "Kind", "Lively", "Merry",
    "Nimble", "Proud", "Quiet", "Swift", "Witty", "Bold", "Bright", "Keen", "Noble", "Sunny",
)  # fmt: skip
_ANIMALS = (
    "Otter", "Falcon", "Badger", "Heron", "Lynx", "Marten", "Osprey", "Panda", "Quokka", "Raven",
    "Stoat", "Tapir", "Walrus", "Yak", "Zebra", "Beaver", "Crane", "Dingo", "Egret", "Ferret",
)  # fmt: skip


class Session:
    """One client attached to a core (a WebSocket connection or an in-process backend).

    Frames for the client go into :attr:`outbox` with :meth:`push`, which wakes the task
    waiting for this session (and only it), so a busy network does not wake idle clients.
    """

    def __init__(self, core_name: str, number: int) -> None:
        self.core_name = core_name
        self.number = number
        self.outbox: deque[JSON] = deque()
        self.closed = False
        self.wakeup: Any = None  # an anyio.Event set by push() or close(), made by the waiter

    def push(self, frame: JSON) -> None:
        """Queue a frame for the client and wake its waiting task."""
        self.outbox.append(frame)
        self.wake()

    def close(self) -> None:
        self.closed = True
        self.wake()

    def wake(self) -> None:
        event, self.wakeup = self.wakeup, None
        if event is not None:
            event.set()

    def __repr__(self) -> str:
        return f"Session({self.core_name!r}, #{self.number}, closed={self.closed})"


class CoreBase:
    """State and helpers shared by the command and protocol handlers of one core."""

    def __init__(self, network: SimNetwork, name: str, db: Database, *, started: bool) -> None:
        self.network = network
        self.name = name
        self.db = db
        self.started = started
        self.service_requests = False
        self.sessions: list[Session] = []
        self.backlog: deque[JSON] = deque()
        self._session_count = 0
        self._deferred: list[JSON] | None = None
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

    # ------------------------------------------------------------------ time and randomness

    def now(self) -> float:
        return self.network.clock.now()

    def ts(self) -> str:
        return rec.iso(self.network.clock.wall())

    def random_id(self, nbytes: int = 12) -> str:
        return b64url(self.network.random.randbytes(nbytes))

    # ------------------------------------------------------------------ sessions and output

    def attach(self) -> Session:
        """Attach a new client; it receives the backlog of events first."""
        self._session_count += 1
        session = Session(self.name, self._session_count)
        session.outbox.extend(self.backlog)
        self.backlog.clear()
        self.sessions.append(session)
        return session

    def detach(self, session: Session) -> None:
        session.close()
        if session in self.sessions:
            self.sessions.remove(session)

    def drop_sessions(self) -> None:
        for session in list(self.sessions):
            self.detach(session)

    def _decorate(self, resp: JSON) -> JSON:
        if self.network.chaos:
            resp = dict(resp)
            resp["simChaos"] = {"note": "extra field added by the simulator's chaos mode"}
        return resp

    def reply(self, session: Session | None, corr_id: str, resp: JSON) -> None:
        """Send a command's response to the session that sent the command."""
        if session is None or session.closed:
            return
        session.push({"corrId": corr_id, "resp": self._decorate(resp)})

    def emit(self, resp: JSON) -> None:
        """Send an event to every attached session (after the current command's response)."""
        if self._deferred is not None:
            self._deferred.append(resp)
            return
        frame = {"resp": self._decorate(resp)}
        if not self.sessions:
            self.backlog.append(frame)
            while len(self.backlog) > BACKLOG_LIMIT:
                self.backlog.popleft()
            return
        for session in self.sessions:
            session.push(copy.deepcopy(frame) if len(self.sessions) > 1 else frame)

    def flush_deferred(self) -> None:
        deferred, self._deferred = self._deferred, None
        for resp in deferred or []:
            self.emit(resp)

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
        if not isinstance(name, str) or not name:
            raise chat_error("invalidDisplayName", displayName=str(name), validName="")
        valid = "".join(ch for ch in name if ch not in _INVALID_NAME_CHARS).strip()
        first_ok = name[0].isalnum() or unicodedata.category(name[0]).startswith("S")
        if valid != name or len(name) > 50 or not first_ok:
            raise chat_error("invalidDisplayName", displayName=name, validName=valid)
        return name

    def new_profile(self, profile: JSON, *, incognito: bool = False) -> ProfileRow:
        row = ProfileRow(self.db.next_id("profiles"), copy.deepcopy(profile), "", incognito)
        self.db.profiles[row.profile_id] = row
        return row

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

    # ------------------------------------------------------------------ JSON helpers

    def a_item(self, item: ItemRow) -> JSON:
        return rec.a_chat_item(self.db, item, self.now())

    def group_json(self, g: GroupRow) -> JSON:
        return rec.group_info(self.db, g)

    def contact_json(self, c: ContactRow) -> JSON:
        return rec.contact(self.db, c)

    def member_json(self, m: MemberRow) -> JSON:
        return rec.group_member(self.db, m)

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
    if text is None:
        raise command_error("missing number")
    try:
        return int(text)
    except ValueError:
        raise command_error(f"not a number: {text!r}") from None


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
