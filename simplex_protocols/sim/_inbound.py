"""Receiving: the resolve step of every delivered message, and the table of its handlers.

Cores exchange small internal messages named after the chat protocol's events (``x.contact``,
``x.msg.new``, ``x.grp.mem.new``, ...). They never leave the process and are not the
SimpleX wire format; what is faithful is what each core then stores and reports to its
clients (items, statuses and events).

A message arrives at one of three places: a link's queue (``link:<key>``: contact requests,
group link joins, service requests), a service call's reply queue (``svc:<call ID>``), or one
of our connections. For a connection, one resolve step finds what the message is from (the
connection, its user, the contact or the sending member and its group, the chat) before
:class:`ReceiveTable` hands it to the handler registered for its type, and only when the
sender is what the handler is registered for: a contact (:meth:`ReceiveTable.from_contact`),
a group member (:meth:`~ReceiveTable.from_member`), either (:meth:`~ReceiveTable.from_chat`)
or any connection (:meth:`~ReceiveTable.on_connection`). Messages of other senders are ignored,
as the core ignores a message that does not belong to the connection it came on.

Connection handshakes:

- address: the joiner sends ``x.contact`` to the address; the owner accepts (at once with
  auto-accept, or on ``/_accept``) and answers ``x.conf``; the joiner answers ``x.ok``;
- one-time invitation: the joiner sends ``x.inv.join`` to the inviter's queue, then as above;
- group link: the joiner sends ``x.grp.link.join``; the host answers ``x.conf`` with the
  group, its members and the joiner's member ID; the joiner answers ``x.ok``; the host
  announces the new member (``x.grp.mem.new``) and the network pairs the new member with each
  member (``x.grp.mem.con`` at both ends).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ._context import CoreContext
from ._delivery import Delivery
from ._store import ConnRow, ContactRow, GroupRow, LinkRow, MemberRow, UserRow

__all__ = ["FromContact", "FromMember", "ReceiveTable", "Received", "resolve"]

JSON = dict[str, Any]

#: Message types whose sequence the receiver checks: a gap is reported as skipped messages.
_SEQUENCED = frozenset({"x.msg.new", "x.msg.update", "x.msg.del"})


@dataclass(frozen=True, slots=True)
class Received:
    """A message on one of our connections, and what it is from (see :func:`resolve`)."""

    delivery: Delivery
    conn: ConnRow
    user: UserRow
    contact: ContactRow | None
    group: GroupRow | None
    member: MemberRow | None  # the sender, a member of ``group``

    @property
    def body(self) -> JSON:
        return self.delivery.body

    @property
    def chat(self) -> tuple[str, int] | None:
        """The chat the message belongs to: the contact's, or the sender's group."""
        if self.contact is not None:
            return "direct", self.contact.contact_id
        if self.group is not None:
            return "group", self.group.group_id
        return None


@dataclass(frozen=True, slots=True)
class FromContact:
    """A message from a contact, on the contact's connection."""

    delivery: Delivery
    conn: ConnRow
    user: UserRow
    contact: ContactRow

    @property
    def body(self) -> JSON:
        return self.delivery.body


@dataclass(frozen=True, slots=True)
class FromMember:
    """A message from a member of a group, on the connection to that member."""

    delivery: Delivery
    conn: ConnRow
    user: UserRow
    group: GroupRow
    member: MemberRow

    @property
    def body(self) -> JSON:
        return self.delivery.body


def resolve(ctx: CoreContext, conn: ConnRow, d: Delivery) -> Received:
    """What a message on ``conn`` is from: its user, and its contact or sending member."""
    db = ctx.db
    contact = db.contacts.get(conn.contact_id) if conn.contact_id is not None else None
    member = db.members.get(conn.member_id) if conn.member_id is not None else None
    group = db.groups.get(member.group_id) if member is not None else None
    if group is None:
        member = None
    return Received(d, conn, db.users[conn.user_id], contact, group, member)


ConnectionHandler = Callable[[CoreContext, Received], None]
ContactHandler = Callable[[CoreContext, FromContact], None]
MemberHandler = Callable[[CoreContext, FromMember], None]
ChatHandler = Callable[[CoreContext, FromContact | FromMember], None]
LinkHandler = Callable[[CoreContext, LinkRow, Delivery], None]
ServiceQueueHandler = Callable[[CoreContext, Delivery], None]


class ReceiveTable:
    """Handlers by message type (and, at a link, by the link's kind)."""

    def __init__(self) -> None:
        self.connections: dict[str, ConnectionHandler] = {}
        self.links: dict[tuple[str, str], LinkHandler] = {}
        self.service_queues: dict[str, ServiceQueueHandler] = {}

    @classmethod
    def merged(cls, tables: Iterable[ReceiveTable]) -> ReceiveTable:
        """One table of the handlers of ``tables``.

        Raises:
            ValueError: two tables handle the same message type.
        """
        out = cls()
        for table in tables:
            for t, handler in table.connections.items():
                out._add(out.connections, t, handler)
            for key, link_handler in table.links.items():
                out._add(out.links, key, link_handler)
            for t, queue_handler in table.service_queues.items():
                out._add(out.service_queues, t, queue_handler)
        return out

    @staticmethod
    def _add(into: dict[Any, Any], key: Any, handler: Any) -> None:
        if key in into:
            raise ValueError(f"two handlers for {key!r}")
        into[key] = handler

    # ------------------------------------------------------------------ registering

    def on_connection(self, t: str) -> Callable[[ConnectionHandler], ConnectionHandler]:
        """Handle ``t`` on any of our connections (a handshake, before a contact exists)."""

        def register(handler: ConnectionHandler) -> ConnectionHandler:
            self._add(self.connections, t, handler)
            return handler

        return register

    def from_contact(self, t: str) -> Callable[[ContactHandler], ContactHandler]:
        """Handle ``t`` from a contact."""

        def register(handler: ContactHandler) -> ContactHandler:
            def route(ctx: CoreContext, r: Received) -> None:
                if r.contact is not None:
                    handler(ctx, FromContact(r.delivery, r.conn, r.user, r.contact))

            self._add(self.connections, t, route)
            return handler

        return register

    def from_member(self, t: str) -> Callable[[MemberHandler], MemberHandler]:
        """Handle ``t`` from a member of one of our groups."""

        def register(handler: MemberHandler) -> MemberHandler:
            def route(ctx: CoreContext, r: Received) -> None:
                if r.group is not None and r.member is not None:
                    handler(ctx, FromMember(r.delivery, r.conn, r.user, r.group, r.member))

            self._add(self.connections, t, route)
            return handler

        return register

    def from_chat(self, t: str) -> Callable[[ChatHandler], ChatHandler]:
        """Handle ``t`` from a contact or a member (the contact when the connection has both)."""

        def register(handler: ChatHandler) -> ChatHandler:
            def route(ctx: CoreContext, r: Received) -> None:
                if r.contact is not None:
                    handler(ctx, FromContact(r.delivery, r.conn, r.user, r.contact))
                elif r.group is not None and r.member is not None:
                    handler(ctx, FromMember(r.delivery, r.conn, r.user, r.group, r.member))

            self._add(self.connections, t, route)
            return handler

        return register

    def at_link(self, t: str, kind: str) -> Callable[[LinkHandler], LinkHandler]:
        """Handle ``t`` sent to one of our links of ``kind`` (``address``, ``group``)."""

        def register(handler: LinkHandler) -> LinkHandler:
            self._add(self.links, (t, kind), handler)
            return handler

        return register

    def at_service_queue(self, t: str) -> Callable[[ServiceQueueHandler], ServiceQueueHandler]:
        """Handle ``t`` sent to the reply queue of one of our service calls."""

        def register(handler: ServiceQueueHandler) -> ServiceQueueHandler:
            self._add(self.service_queues, t, handler)
            return handler

        return register

    # ------------------------------------------------------------------ receiving

    def deliver(self, ctx: CoreContext, d: Delivery) -> None:
        """Handle one delivered message."""
        t = str(d.body.get("t", ""))
        if d.dst.startswith("link:"):
            target = ctx.network.lookup_key(d.dst[5:])
            if target is None or target.core != ctx.name:
                return
            link = ctx.db.links.get(target.row_id)
            link_handler = self.links.get((t, link.kind)) if link is not None else None
            if link is not None and link_handler is not None:
                link_handler(ctx, link, d)
            return
        if d.dst.startswith("svc:"):
            queue_handler = self.service_queues.get(t)
            if queue_handler is not None:
                queue_handler(ctx, d)
            return
        conn = ctx.db.conn_by_agent_id(d.dst)
        if conn is None or conn.status == "deleted":
            return
        received = resolve(ctx, conn, d)
        if d.msg_seq:
            if t in _SEQUENCED and d.msg_seq > conn.rcv_seq + 1:
                _integrity_error(ctx, received, conn.rcv_seq + 1, d.msg_seq - 1)
            conn.rcv_seq = max(conn.rcv_seq, d.msg_seq)
        handler = self.connections.get(t)
        if handler is not None:
            handler(ctx, received)


def _integrity_error(ctx: CoreContext, r: Received, first: int, last: int) -> None:
    """Messages skipped on a connection, as the core reports a gap: an item in its chat."""
    chat = r.chat
    if chat is None:
        return
    sender = r.conn.member_id if chat[0] == "group" else None
    item = ctx.new_item(
        r.user,
        chat[0],
        chat[1],
        "groupRcv" if chat[0] == "group" else "directRcv",
        {
            "type": "rcvIntegrityError",
            "msgError": {"type": "msgSkipped", "fromMsgId": first, "toMsgId": last},
        },
        sender_member_id=sender,
    )
    ctx.emit_new_items(r.user, [item])
