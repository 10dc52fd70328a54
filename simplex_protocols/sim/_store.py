"""One simulated core's database: the rows the chat core keeps, with its ID assignment.

The chat core keeps one SQLite database per process, with one auto-increment counter per
table: contact IDs, group IDs, group member IDs, connection IDs and profile IDs are rows of
their tables, and chat item IDs grow across every chat of every user of the database. The
simulator keeps the same tables as plain dataclasses, so IDs come out as the core assigns
them. Rows hold only JSON-compatible values, so a database is saved and loaded as JSON.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = [
    "ChatIndex",
    "ConnRow",
    "ContactRow",
    "Database",
    "GroupRow",
    "ItemRow",
    "LinkRow",
    "MemberRow",
    "NoteFolderRow",
    "ProfileRow",
    "RequestRow",
    "ServiceRequestRow",
    "SortedRun",
    "UserRow",
    "item_key",
]

JSON = dict[str, Any]

#: An item's place in its chat: groups are ordered by item time (the sender's time), other
#: chats by creation, then by item ID, as the core's queries order them.
ItemKey = tuple[str, int]
#: What a :class:`SortedRun` keeps: item IDs or item keys.
K = TypeVar("K", int, ItemKey)


@dataclass
class ProfileRow:
    """A row of ``contact_profiles``: a profile as received or as our own, plus local fields."""

    profile_id: int
    profile: JSON
    local_alias: str = ""
    incognito: bool = False


@dataclass
class UserRow:
    user_id: int
    agent_user_id: int
    user_contact_id: int
    profile_id: int
    local_display_name: str
    active_order: int
    created_at: str
    show_ntfs: bool = True
    send_rcpts_contacts: bool = True
    send_rcpts_small_groups: bool = True
    auto_accept_member_contacts: bool = False
    auto_accept_group_invitations: bool = False
    address_link_id: int | None = None
    note_folder_id: int | None = None
    router: str = ""


@dataclass
class ConnRow:
    """A row of ``connections``: one end of a SimpleX connection (a pair of queues)."""

    conn_id: int
    user_id: int
    agent_conn_id: str
    conn_type: str  # "contact" | "member" | "user_contact"
    status: str  # ConnStatus tag
    created_at: str
    updated_at: str
    router: str
    contact_id: int | None = None
    member_id: int | None = None  # group_member_id
    link_id: int | None = None  # user_contact_link_id (user_contact connections)
    custom_user_profile_id: int | None = None
    via_contact_uri: bool = False
    via_user_contact_link: int | None = None
    via_group_link: bool = False
    group_link_id: str | None = None
    x_contact_id: str | None = None
    contact_conn_initiated: bool = False
    conn_link_inv: JSON | None = None  # CreatedConnLink of a one-time invitation we created
    pending_link: JSON | None = None  # CreatedConnLink of the link we joined
    welcome: JSON | None = None  # auto-reply to send when the connection completes
    local_alias: str = ""
    pq: bool = True
    # pending-connection bookkeeping (PendingContactConnection)
    pending: str | None = None  # "invitation" | "join_invitation" | "address" | "group_link"
    pending_target: str | None = None  # the link key we joined
    pending_group_id: int | None = None  # a prepared or joined group waiting for this conn
    pending_contact_id: int | None = None  # a prepared contact waiting for this conn
    # network state
    peer: str | None = None  # agent connection ID of the other end
    snd_seq: int = 0
    rcv_seq: int = 0


@dataclass
class ContactRow:
    contact_id: int
    user_id: int
    profile_id: int
    local_display_name: str
    created_at: str
    updated_at: str
    chat_ts: str | None = None
    conn_id: int | None = None
    status: str = "active"
    used: bool = False
    user_preferences: JSON = field(default_factory=dict)
    custom_data: JSON | None = None
    prepared: JSON | None = None  # PreparedContact
    contact_request_id: int | None = None
    contact_group_member_id: int | None = None
    chat_deleted: bool = False
    via_link: str | None = None  # link key of the address this contact came from (ours or theirs)
    is_user_contact: bool = False  # the user's own row (userContactId)
    chat_item_ttl: int | None = None
    unread_chat: bool = False
    favorite: bool = False
    domain_verified: bool | None = None


@dataclass
class GroupRow:
    group_id: int
    user_id: int
    local_display_name: str
    profile: JSON  # GroupProfile
    membership_id: int
    net_id: str  # network-wide identity of the group (the same in every member's database)
    created_at: str
    updated_at: str
    chat_ts: str | None = None
    local_alias: str = ""
    business: JSON | None = None  # BusinessChatInfo
    custom_data: JSON | None = None
    prepared: JSON | None = None  # PreparedGroup
    link_id: int | None = None  # our group link
    direct: bool = True  # False: a channel (members are not introduced to each other)
    domain_verified: bool | None = None
    via_group_link_uri: str | None = None
    host_member_id: int | None = None  # group_member_id of the member who admitted us
    via_link: str | None = None  # link key we joined by
    unread_chat: bool = False
    favorite: bool = False


@dataclass
class MemberRow:
    group_member_id: int
    group_id: int
    user_id: int
    index_in_group: int
    member_id: str  # network-wide member ID (base64)
    role: str
    category: str  # "user" | "invitee" | "host" | "pre" | "post"
    status: str
    invited_by: JSON
    local_display_name: str
    profile_id: int  # memberProfile
    member_contact_profile_id: int
    created_at: str
    updated_at: str
    invited_by_group_member_id: int | None = None
    member_contact_id: int | None = None
    conn_id: int | None = None
    show_messages: bool = True
    blocked_by_admin: bool = False


@dataclass
class ItemRow:
    """A row of ``chat_items``: IDs grow across all chats of the database."""

    item_id: int
    user_id: int
    chat_type: str  # "direct" | "group" | "local"
    chat_id: int
    dir_type: str  # CIDirection tag
    content: JSON  # CIContent
    item_text: str
    item_ts: str
    created_at: str
    updated_at: str
    status: JSON  # CIStatus
    created_seq: float  # clock time of creation, for the 24 h edit window
    sender_member_id: int | None = None  # group_member_id for groupRcv
    shared_msg_id: str | None = None
    edited: bool = False
    live: bool | None = None
    user_mention: bool = False
    mentions: JSON = field(default_factory=dict)
    quote: JSON | None = None  # CIQuote
    deleted: JSON | None = None  # CIDeleted
    timed: JSON | None = None  # CITimed
    has_link: bool = False
    show_group_as_sender: bool = False
    forwarded: JSON | None = None  # CIForwardedFrom
    #: reactions by emoji: the reaction, whether the user reacted, and the peers who did
    reactions: dict[str, JSON] = field(default_factory=dict)


def item_key(item: ItemRow) -> ItemKey:
    """The sort key of an item in its chat (``(item_ts, item_id)`` in groups, else by ID)."""
    return (item.item_ts, item.item_id) if item.chat_type == "group" else ("", item.item_id)


def is_unread(item: ItemRow) -> bool:
    """The core counts every item with status ``rcvNew`` as unread."""
    return item.status.get("type") == "rcvNew"


class SortedRun(Generic[K]):
    """A sorted list of keys whose removals at the front cost O(1), amortised.

    A chat is read oldest first: each ``/_read chat items`` takes the first unread items
    away. Deleting from the front of a plain list moves every key after them, so reading a
    hundred of a hundred thousand unread items would move ten million; here the front only
    moves forward, and the keys behind it are dropped once they are half of the list.
    """

    __slots__ = ("_head", "_keys")

    def __init__(self) -> None:
        self._keys: list[K] = []
        self._head = 0

    def __len__(self) -> int:
        return len(self._keys) - self._head

    def __bool__(self) -> bool:
        return len(self._keys) > self._head

    def __iter__(self) -> Iterator[K]:
        return itertools.islice(self._keys, self._head, None)

    def __getitem__(self, at: int) -> K:
        """The key at ``at`` from the front (0 is the smallest)."""
        if not 0 <= at < len(self):
            raise IndexError(at)
        return self._keys[self._head + at]

    def add(self, key: K) -> None:
        bisect.insort(self._keys, key, lo=self._head)

    def remove(self, key: K) -> bool:
        """Take ``key`` out; whether it was there."""
        keys, head = self._keys, self._head
        at = bisect.bisect_left(keys, key, lo=head)
        if at == len(keys) or keys[at] != key:
            return False
        if at == head:
            self._head = head = head + 1
            if head * 2 >= len(keys):
                del keys[:head]
                self._head = 0
        else:
            del keys[at]
        return True

    def count_after(self, key: K) -> int:
        """How many keys are greater than ``key``."""
        return len(self._keys) - bisect.bisect_right(self._keys, key, lo=self._head)


class ChatIndex:
    """One chat's items in the core's order, and its unread items (kept as items change).

    ``keys``/``items`` are parallel lists sorted by :func:`item_key`; ``unread_keys`` are the
    keys of the unread items in the same order, ``unread_ids`` their IDs in ID order, and
    ``unread_mentions`` how many of them mention the user. Paging is then a binary search and
    a slice; counts are lengths; marking the oldest unread items read costs O(1) each.
    """

    __slots__ = ("items", "keys", "unread_ids", "unread_keys", "unread_mentions", "user_id")

    def __init__(self, user_id: int) -> None:
        self.user_id = user_id
        self.keys: list[ItemKey] = []
        self.items: list[ItemRow] = []
        self.unread_keys: SortedRun[ItemKey] = SortedRun()
        self.unread_ids: SortedRun[int] = SortedRun()
        self.unread_mentions = 0

    def add(self, item: ItemRow) -> None:
        key = item_key(item)
        if not self.keys or key > self.keys[-1]:
            self.keys.append(key)
            self.items.append(item)
        else:
            at = bisect.bisect_left(self.keys, key)
            self.keys.insert(at, key)
            self.items.insert(at, item)
        if is_unread(item):
            self.mark_unread(item, True)

    def remove(self, item: ItemRow) -> None:
        key = item_key(item)
        at = bisect.bisect_left(self.keys, key)
        if at < len(self.keys) and self.keys[at] == key:
            del self.keys[at]
            del self.items[at]
        if is_unread(item):
            self.mark_unread(item, False)

    def mark_unread(self, item: ItemRow, unread: bool) -> None:
        key = item_key(item)
        if unread:
            self.unread_keys.add(key)
            self.unread_ids.add(item.item_id)
            self.unread_mentions += bool(item.user_mention)
        elif self.unread_keys.remove(key):
            self.unread_ids.remove(item.item_id)
            self.unread_mentions -= bool(item.user_mention)

    def position(self, item: ItemRow) -> int:
        """The index of ``item`` in :attr:`items` (it must be in this chat)."""
        return bisect.bisect_left(self.keys, item_key(item))

    def unread_after(self, item: ItemRow) -> int:
        """How many unread items come after ``item`` in the chat's order."""
        return self.unread_keys.count_after(item_key(item))

    def first_unread(self) -> ItemRow | None:
        """The first unread item in the chat's order."""
        if not self.unread_keys:
            return None
        return self.items[bisect.bisect_left(self.keys, self.unread_keys[0])]


@dataclass
class LinkRow:
    """A row of ``user_contact_links``: a contact address or a group link."""

    link_id: int
    user_id: int
    kind: str  # "address" | "group"
    key: str  # network lookup key (the short link key)
    queue_id: str  # network lookup key of the full link
    full: str
    short: str
    conn_id: int
    created_at: str
    settings: JSON = field(default_factory=lambda: {"businessAddress": False})
    ratchet: str | None = None  # None: no ratchet keys; "pq" / "nopq"
    group_id: int | None = None
    group_link_id: str | None = None
    role: str = "member"
    short_link_data_set: bool = True


@dataclass
class RequestRow:
    """A row of ``contact_requests``: a request on our address waiting to be accepted."""

    contact_request_id: int
    user_id: int
    link_id: int
    agent_invitation_id: str
    profile_id: int
    local_display_name: str
    x_contact_id: str
    created_at: str
    updated_at: str
    reply_conn: str  # agent connection ID of the requester's pending connection
    message: JSON | None = None  # MsgContent sent with the request
    contact_id: int | None = None
    business_group_id: int | None = None
    request_shared_msg_id: str | None = None
    welcome_seen: bool = False  # the requester showed the welcome from the link data
    member_id: str | None = None  # a business request: the customer's member ID


@dataclass
class NoteFolderRow:
    note_folder_id: int
    user_id: int
    created_at: str


@dataclass
class ServiceRequestRow:
    """A Service RPC request received on our address and not answered yet."""

    request_id: str
    user_id: int
    received_at: float
    reply_to: str  # opaque route back to the requester
    connection_id: str


_TABLES: dict[str, type[Any]] = {
    "users": UserRow,
    "profiles": ProfileRow,
    "contacts": ContactRow,
    "conns": ConnRow,
    "groups": GroupRow,
    "members": MemberRow,
    "items": ItemRow,
    "links": LinkRow,
    "requests": RequestRow,
    "folders": NoteFolderRow,
}

_ID_FIELD: dict[str, str] = {
    "users": "user_id",
    "profiles": "profile_id",
    "contacts": "contact_id",
    "conns": "conn_id",
    "groups": "group_id",
    "members": "group_member_id",
    "items": "item_id",
    "links": "link_id",
    "requests": "contact_request_id",
    "folders": "note_folder_id",
}


@dataclass
class Database:
    """The tables of one simulated core, with one auto-increment counter per table."""

    counters: dict[str, int] = field(default_factory=dict)
    users: dict[int, UserRow] = field(default_factory=dict)
    profiles: dict[int, ProfileRow] = field(default_factory=dict)
    contacts: dict[int, ContactRow] = field(default_factory=dict)
    conns: dict[int, ConnRow] = field(default_factory=dict)
    groups: dict[int, GroupRow] = field(default_factory=dict)
    members: dict[int, MemberRow] = field(default_factory=dict)
    items: dict[int, ItemRow] = field(default_factory=dict)
    links: dict[int, LinkRow] = field(default_factory=dict)
    requests: dict[int, RequestRow] = field(default_factory=dict)
    folders: dict[int, NoteFolderRow] = field(default_factory=dict)
    service_requests: dict[str, ServiceRequestRow] = field(default_factory=dict)
    active_user_id: int | None = None
    _agent_index: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    # Indexes over the rows (not saved; built on first use and kept as rows change).
    _chats: dict[tuple[str, int], ChatIndex] = field(
        default_factory=dict, repr=False, compare=False
    )
    _shared: dict[tuple[str, int, str], int] = field(
        default_factory=dict, repr=False, compare=False
    )
    _indexed: bool = field(default=False, repr=False, compare=False)
    _members_by_group: dict[int, list[MemberRow]] = field(
        default_factory=dict, repr=False, compare=False
    )
    _members_generation: tuple[int, int] = field(default=(-1, -1), repr=False, compare=False)

    def next_id(self, table: str) -> int:
        """The next row ID of ``table`` (1, 2, 3, ...; never reused, as AUTOINCREMENT)."""
        value = self.counters.get(table, 0) + 1
        self.counters[table] = value
        return value

    # ------------------------------------------------------------------ lookups

    def conn_by_agent_id(self, agent_conn_id: str) -> ConnRow | None:
        index = self._agent_index
        conn_id = index.get(agent_conn_id)
        conn = self.conns.get(conn_id) if conn_id is not None else None
        if conn is not None and conn.agent_conn_id == agent_conn_id:
            return conn
        index.clear()
        index.update({c.agent_conn_id: c.conn_id for c in self.conns.values()})
        conn_id = index.get(agent_conn_id)
        return self.conns.get(conn_id) if conn_id is not None else None

    def group_members(self, group_id: int) -> list[MemberRow]:
        """The members of a group (the user's own membership included), in ID order."""
        generation = (len(self.members), self.counters.get("members", 0))
        seen_len, seen_counter = self._members_generation
        if generation != self._members_generation:
            # Members are only ever added (the next ID) or deleted (one fewer row). When every
            # ID handed out since the last look is a new row, only those rows are added (a
            # thousand groups made one by one would otherwise index every member each time);
            # after a deletion, or rows loaded from a file, the index is built again.
            added = generation[1] - seen_counter
            if seen_len >= 0 and added > 0 and generation[0] - seen_len == added:
                by_group = self._members_by_group
                for member_id in range(seen_counter + 1, generation[1] + 1):
                    m = self.members.get(member_id)
                    if m is None:
                        break
                    by_group.setdefault(m.group_id, []).append(m)
                else:
                    self._members_generation = generation
            if self._members_generation != generation:
                by_group = {}
                for m in self.members.values():
                    by_group.setdefault(m.group_id, []).append(m)
                self._members_by_group = by_group
                self._members_generation = generation
        return list(self._members_by_group.get(group_id, ()))

    def member_by_member_id(self, group_id: int, member_id: str) -> MemberRow | None:
        for m in self.group_members(group_id):
            if m.member_id == member_id:
                return m
        return None

    # ------------------------------------------------------------------ chat items

    def chat_index(self, chat_type: str, chat_id: int) -> ChatIndex | None:
        """The index of one chat's items, or ``None`` when it has none."""
        if not self._indexed:
            self._build_index()
        return self._chats.get((chat_type, chat_id))

    def chat_items(self, chat_type: str, chat_id: int) -> list[ItemRow]:
        """A chat's items in the core's order (a new list)."""
        index = self.chat_index(chat_type, chat_id)
        return list(index.items) if index is not None else []

    def item_by_shared_id(self, chat_type: str, chat_id: int, shared_id: str) -> ItemRow | None:
        if not self._indexed:
            self._build_index()
        item_id = self._shared.get((chat_type, chat_id, shared_id))
        return self.items.get(item_id) if item_id is not None else None

    def add_item(self, item: ItemRow) -> None:
        """Store a new item (its chat, time and shared ID never change afterwards)."""
        self.items[item.item_id] = item
        if self._indexed:
            self._index_item(item)

    def remove_item(self, item_id: int) -> None:
        item = self.items.pop(item_id, None)
        if item is None or not self._indexed:
            return
        index = self._chats.get((item.chat_type, item.chat_id))
        if index is not None:
            index.remove(item)
        if item.shared_msg_id is not None:
            key = (item.chat_type, item.chat_id, item.shared_msg_id)
            if self._shared.get(key) == item.item_id:
                del self._shared[key]

    def set_item_status(self, item: ItemRow, status: JSON) -> None:
        """Change an item's ``CIStatus`` (keeping the unread counts)."""
        was_unread = is_unread(item)
        item.status = status
        if self._indexed and was_unread != is_unread(item):
            index = self._chats.get((item.chat_type, item.chat_id))
            if index is not None:
                index.mark_unread(item, not was_unread)

    def user_unread_count(self, user_id: int) -> int:
        if not self._indexed:
            self._build_index()
        return sum(len(ix.unread_keys) for ix in self._chats.values() if ix.user_id == user_id)

    def _index_item(self, item: ItemRow) -> None:
        key = (item.chat_type, item.chat_id)
        index = self._chats.get(key)
        if index is None:
            index = self._chats[key] = ChatIndex(item.user_id)
        index.add(item)
        if item.shared_msg_id is not None:
            self._shared.setdefault(
                (item.chat_type, item.chat_id, item.shared_msg_id), item.item_id
            )

    def _build_index(self) -> None:
        self._chats.clear()
        self._shared.clear()
        for item_id in sorted(self.items):
            self._index_item(self.items[item_id])
        self._indexed = True

    # ------------------------------------------------------------------ persistence

    def to_json(self) -> JSON:
        out: JSON = {"counters": dict(self.counters), "activeUserId": self.active_user_id}
        for table in _TABLES:
            rows = getattr(self, table)
            out[table] = [dataclasses.asdict(row) for row in rows.values()]
        out["service_requests"] = [
            dataclasses.asdict(row) for row in self.service_requests.values()
        ]
        return out

    @classmethod
    def from_json(cls, data: JSON) -> Database:
        db = cls()
        db.counters = {str(k): int(v) for k, v in data.get("counters", {}).items()}
        active = data.get("activeUserId")
        db.active_user_id = int(active) if active is not None else None
        for table, row_cls in _TABLES.items():
            rows = getattr(db, table)
            for raw in data.get(table, []):
                row = row_cls(**raw)
                rows[getattr(row, _ID_FIELD[table])] = row
        for raw in data.get("service_requests", []):
            svc = ServiceRequestRow(**raw)
            db.service_requests[svc.request_id] = svc
        return db
