"""The simulated chat protocol: what a core does with each message it receives.

Cores exchange small internal messages named after the chat protocol's events (``x.contact``,
``x.msg.new``, ``x.grp.mem.new``, ...). They never leave the process and are not the
SimpleX wire format; what is faithful is what each core then stores and reports to its
clients (items, statuses and events).

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

import copy
from typing import TYPE_CHECKING, Any

from . import _records as rec
from ._cmd_connect import business_group_profile
from ._cmd_messages import HISTORY_ITEMS, MAX_RCV_MENTIONS
from ._corebase import parse_int
from ._errors import store_error
from ._markdown import mentioned_names, parse_markdown
from ._service import ServiceCommands
from ._store import ConnRow, ContactRow, GroupRow, ItemRow, LinkRow, MemberRow, RequestRow, UserRow

if TYPE_CHECKING:
    from ._network import Delivery

__all__ = ["Receiver"]

JSON = dict[str, Any]


class Receiver(ServiceCommands):
    def receive(self, d: Delivery) -> None:
        """Handle one delivered message."""
        body = d.body
        t = str(body.get("t", ""))
        if d.dst.startswith("link:"):
            target = self.network.lookup_key(d.dst[5:])
            if target is None or target.core != self.name:
                return
            link = self.db.links.get(target.row_id)
            if link is None:
                return
            if t == "x.contact" and link.kind == "address":
                self.on_contact_request(link, d)
            elif t == "x.grp.link.join" and link.kind == "group":
                self.on_group_join(link, d)
            elif t == "x.svc.req" and link.kind == "address":
                self.on_service_request(link, d)
            return
        if d.dst.startswith("svc:"):
            if t == "x.svc.resp":
                self.on_service_response(d)
            return
        conn = self.db.conn_by_agent_id(d.dst)
        if conn is None or conn.status == "deleted":
            return
        if d.msg_seq:
            if t in ("x.msg.new", "x.msg.update", "x.msg.del") and d.msg_seq > conn.rcv_seq + 1:
                self._integrity_error(conn, conn.rcv_seq + 1, d.msg_seq - 1)
            conn.rcv_seq = max(conn.rcv_seq, d.msg_seq)
        handler = _HANDLERS.get(t)
        if handler is not None:
            handler(self, conn, d)

    # ------------------------------------------------------------------ helpers

    def _user_of(self, conn: ConnRow) -> UserRow:
        return self.db.users[conn.user_id]

    def _member_of(self, conn: ConnRow) -> tuple[GroupRow, MemberRow] | None:
        if conn.member_id is None or conn.member_id not in self.db.members:
            return None
        m = self.db.members[conn.member_id]
        g = self.db.groups.get(m.group_id)
        return (g, m) if g is not None else None

    def _group_event(self, user: UserRow, g: GroupRow, m: MemberRow | None, event: JSON) -> ItemRow:
        return self.new_item(
            user,
            "group",
            g.group_id,
            "groupRcv" if m is not None else "channelRcv",
            {"type": "rcvGroupEvent", "rcvGroupEvent": event},
            sender_member_id=m.group_member_id if m is not None else None,
        )

    def _report_group_event(
        self,
        user: UserRow,
        g: GroupRow,
        by: MemberRow | None,
        item_event: JSON,
        response_type: str,
        members: dict[str, MemberRow],
        **fields: Any,
    ) -> None:
        """A group event: its item (``item_event`` by ``by``), the ``response_type`` event
        naming the user, the group, ``members`` (by key) and ``fields``, then the new item."""
        item = self._group_event(user, g, by, item_event)
        self.emit(
            {
                "type": response_type,
                "user": self.user_json(user.user_id),
                "groupInfo": self.group_json(g),
                **{key: self.member_json(m) for key, m in members.items()},
                **fields,
            }
        )
        self._new_items_event(user, [item])

    def _new_items_event(self, user: UserRow, items: list[ItemRow]) -> None:
        if items:
            self.emit(
                {
                    "type": "newChatItems",
                    "user": self.user_json(user.user_id),
                    "chatItems": [self.a_item(i) for i in items],
                }
            )

    def _integrity_error(self, conn: ConnRow, first: int, last: int) -> None:
        chat = self.chat_of_conn(conn)
        if chat is None:
            return
        user = self._user_of(conn)
        sender = conn.member_id if chat[0] == "group" else None
        item = self.new_item(
            user,
            chat[0],
            chat[1],
            "groupRcv" if chat[0] == "group" else "directRcv",
            {
                "type": "rcvIntegrityError",
                "msgError": {"type": "msgSkipped", "fromMsgId": first, "toMsgId": last},
            },
            sender_member_id=sender,
        )
        self._new_items_event(user, [item])

    def _profile_row(self, profile: Any) -> Any:
        prof = profile if isinstance(profile, dict) else {"displayName": "unknown", "fullName": ""}
        return self.new_profile(prof)

    # ------------------------------------------------------------------ address requests

    def on_contact_request(self, link: LinkRow, d: Delivery) -> None:
        body = d.body
        user = self.db.users[link.user_id]
        prow = self._profile_row(body.get("profile"))
        ts = self.ts()
        req = RequestRow(
            contact_request_id=self.db.next_id("requests"),
            user_id=user.user_id,
            link_id=link.link_id,
            agent_invitation_id=self.random_id(12),
            profile_id=prow.profile_id,
            local_display_name=self.unique_name(
                user.user_id, str(prow.profile.get("displayName", ""))
            ),
            x_contact_id=str(body.get("xContactId") or self.random_id(12)),
            created_at=ts,
            updated_at=ts,
            reply_conn=d.src_agent or "",
            message=body.get("msg") if isinstance(body.get("msg"), dict) else None,
            request_shared_msg_id=body.get("msgSharedId"),
            welcome_seen=bool(body.get("welcomeSeen")),
            member_id=body["memberId"] if isinstance(body.get("memberId"), str) else None,
        )
        self.db.requests[req.contact_request_id] = req
        if "autoAccept" in link.settings:
            self.accept_any(user, req, None, announce=True)
            return
        self.emit(
            {
                "type": "receivedContactRequest",
                "user": self.user_json(user.user_id),
                "contactRequest": rec.user_contact_request(self.db, req),
            }
        )

    def cmd_accept_contact(self, a: dict[str, str | None]) -> JSON:
        user = self.active_user()
        req = self.db.requests.get(parse_int(a["reqId"]))
        if req is None or req.user_id != user.user_id:
            raise store_error("contactRequestNotFound", contactRequestId=parse_int(a["reqId"]))
        incognito_id = self.incognito_profile(user).profile_id if a["incognito"] == "on" else None
        entity = self.accept_any(user, req, incognito_id, announce=False)
        if isinstance(entity, GroupRow):
            return {
                "type": "acceptingBusinessRequest",
                "user": self.user_json(user.user_id),
                "groupInfo": self.group_json(entity),
            }
        return {
            "type": "acceptingContactRequest",
            "user": self.user_json(user.user_id),
            "contact": self.contact_json(entity),
        }

    def accept_any(
        self, user: UserRow, req: RequestRow, incognito_id: int | None, *, announce: bool
    ) -> ContactRow | GroupRow:
        """Accept a contact request; with ``announce``, report it as auto-accepted."""
        link = self.db.links[req.link_id]
        self.db.requests.pop(req.contact_request_id, None)
        prow = self.db.profiles[req.profile_id]
        welcome = None if req.welcome_seen else link.settings.get("autoReply")
        if link.settings.get("businessAddress"):
            return self._accept_business(user, link, req, prow, welcome, announce)
        conn = self._accepted_conn(user, "contact", link, req, welcome, incognito_id)
        c = self.new_contact(user, prow, conn_id=conn.conn_id, used=True)
        conn.contact_id = c.contact_id
        if announce:
            self.emit(
                {
                    "type": "acceptingContactRequest",
                    "user": self.user_json(user.user_id),
                    "contact": self.contact_json(c),
                }
            )
        self._request_message(user, req, "direct", c.contact_id)
        self.send_on(
            conn,
            {
                "t": "x.conf",
                "kind": "contact",
                "profile": self.profile_for_peer(user, incognito_id),
            },
        )
        return c

    def _accept_business(
        self,
        user: UserRow,
        link: LinkRow,
        req: RequestRow,
        prow: Any,
        welcome: Any,
        announce: bool,
    ) -> GroupRow:
        my_profile = self.user_profile(user)
        g = self._new_group_row(
            user,
            business_group_profile(my_profile.profile),
            net_id=self.random_id(16),
            role="owner",
            status="creator",
        )
        customer_id = req.member_id or self.random_id(12)
        g.business = {
            "chatType": "customer",
            "businessId": self.membership(g).member_id,
            "customerId": customer_id,
        }
        conn = self._accepted_conn(user, "member", link, req, welcome)
        m = self.new_member(
            user,
            g.group_id,
            customer_id,
            "member",
            "invitee",
            "accepted",
            prow,
            invited_by={"type": "user"},
            conn_id=conn.conn_id,
        )
        conn.member_id = m.group_member_id
        if announce:
            self.emit(
                {
                    "type": "acceptingBusinessRequest",
                    "user": self.user_json(user.user_id),
                    "groupInfo": self.group_json(g),
                }
            )
        self._request_message(user, req, "group", g.group_id, m.group_member_id)
        self.send_on(
            conn,
            {
                "t": "x.conf",
                "kind": "business",
                "groupProfile": copy.deepcopy(g.profile),
                "netId": g.net_id,
                "memberId": customer_id,
                "role": "member",
                "host": self._member_info(self.membership(g)),
                "direct": True,
                "business": {"businessId": g.business["businessId"], "customerId": customer_id},
            },
        )
        return g

    def _accepted_conn(
        self,
        user: UserRow,
        conn_type: str,
        link: LinkRow,
        req: RequestRow,
        welcome: Any,
        incognito_id: int | None = None,
    ) -> ConnRow:
        """The connection of an accepted request: to its sender, with the welcome to send."""
        conn = self.new_conn(
            user,
            conn_type,
            "accepted",
            via_user_contact_link=link.link_id,
            x_contact_id=req.x_contact_id,
            custom_user_profile_id=incognito_id,
        )
        conn.peer = req.reply_conn
        conn.welcome = copy.deepcopy(welcome) if isinstance(welcome, dict) else None
        return conn

    def _request_message(
        self,
        user: UserRow,
        req: RequestRow,
        chat_type: str,
        chat_id: int,
        sender_member_id: int | None = None,
    ) -> None:
        """The message sent with an accepted request, as a received item of the new chat."""
        if req.message is None:
            return
        item = self.new_item(
            user,
            chat_type,
            chat_id,
            f"{chat_type}Rcv",
            {"type": "rcvMsgContent", "msgContent": copy.deepcopy(req.message)},
            sender_member_id=sender_member_id,
            shared_msg_id=req.request_shared_msg_id,
        )
        self._new_items_event(user, [item])

    def _member_info(self, m: MemberRow) -> JSON:
        return {
            "memberId": m.member_id,
            "role": m.role,
            "profile": rec.profile(self.db.profiles[m.profile_id]),
        }

    # ------------------------------------------------------------------ group link joins

    def on_group_join(self, link: LinkRow, d: Delivery) -> None:
        g = self.db.groups.get(link.group_id or 0)
        if g is None:
            return
        me = self.membership(g)
        if me.status not in ("creator", "connected", "complete"):
            return
        user = self.db.users[g.user_id]
        body = d.body
        prow = self._profile_row(body.get("profile"))
        conn = self.new_conn(user, "member", "accepted", group_link_id=link.group_link_id)
        conn.peer = d.src_agent
        m = self.new_member(
            user,
            g.group_id,
            self.random_id(12),
            link.role,
            "invitee",
            "accepted",
            prow,
            invited_by={"type": "user"},
            conn_id=conn.conn_id,
        )
        conn.member_id = m.group_member_id
        if isinstance(body.get("msg"), dict):
            item = self.new_item(
                user,
                "group",
                g.group_id,
                "groupRcv",
                {"type": "rcvMsgContent", "msgContent": copy.deepcopy(body["msg"])},
                sender_member_id=m.group_member_id,
                shared_msg_id=body.get("msgSharedId"),
            )
            self._new_items_event(user, [item])
        self.send_on(
            conn,
            {
                "t": "x.conf",
                "kind": "group",
                "groupProfile": copy.deepcopy(g.profile),
                "netId": g.net_id,
                "memberId": m.member_id,
                "role": link.role,
                "host": self._member_info(me),
                "direct": g.direct,
            },
        )

    # ------------------------------------------------------------------ handshake

    def on_inv_join(self, conn: ConnRow, d: Delivery) -> None:
        """Someone used our one-time invitation."""
        if conn.pending != "invitation":
            return
        user = self._user_of(conn)
        prow = self._profile_row(d.body.get("profile"))
        conn.peer = d.src_agent
        conn.status = "accepted"
        c = self.new_contact(user, prow, conn_id=conn.conn_id, used=True)
        conn.contact_id = c.contact_id
        self.emit(
            {
                "type": "contactConnecting",
                "user": self.user_json(user.user_id),
                "contact": self.contact_json(c),
            }
        )
        self.send_on(
            conn,
            {
                "t": "x.conf",
                "kind": "contact",
                "profile": self.profile_for_peer(user, conn.custom_user_profile_id),
            },
        )

    def on_conf(self, conn: ConnRow, d: Delivery) -> None:
        """The other side accepted our connection: complete it."""
        user = self._user_of(conn)
        kind = d.body.get("kind")
        conn.peer = d.src_agent
        if kind == "contact":
            self._conf_contact(user, conn, d)
        elif kind in ("group", "business"):
            self._conf_group(user, conn, d)

    def _conf_contact(self, user: UserRow, conn: ConnRow, d: Delivery) -> None:
        prow = self._profile_row(d.body.get("profile"))
        conn.status = "ready"
        if conn.contact_id is not None and conn.contact_id in self.db.contacts:
            c = self.db.contacts[conn.contact_id]
            old = self.db.profiles[c.profile_id].profile
            for key in ("contactDomain",):
                if key in old and key not in prow.profile:
                    prow.profile[key] = copy.deepcopy(old[key])
            c.profile_id = prow.profile_id
            c.used = True
        else:
            c = self.new_contact(
                user, prow, conn_id=conn.conn_id, used=True, via_link=conn.pending_target
            )
            conn.contact_id = c.contact_id
        if conn.pending == "join_invitation" or conn.pending == "address":
            c.via_link = conn.pending_target
        self.send_on(conn, {"t": "x.ok"})
        self.emit(
            {
                "type": "contactConnected",
                "user": self.user_json(user.user_id),
                "contact": self.contact_json(c),
                **(
                    {
                        "userCustomProfile": rec.profile(
                            self.db.profiles[conn.custom_user_profile_id]
                        )
                    }
                    if conn.custom_user_profile_id is not None
                    else {}
                ),
            }
        )

    def _conf_group(self, user: UserRow, conn: ConnRow, d: Delivery) -> None:
        body = d.body
        host_info: JSON = body["host"] if isinstance(body.get("host"), dict) else {}
        g = self.db.groups.get(conn.pending_group_id) if conn.pending_group_id else None
        if g is None:
            g = self._new_group_row(
                user,
                copy.deepcopy(body.get("groupProfile") or {}),
                net_id=str(body.get("netId")),
                role=str(body.get("role", "member")),
                status="connected",
                member_id=str(body.get("memberId")),
                incognito_id=conn.custom_user_profile_id,
            )
        g.net_id = str(body.get("netId"))
        g.profile = copy.deepcopy(body.get("groupProfile") or g.profile)
        g.direct = bool(body.get("direct", True))
        g.via_link = conn.pending_target
        me = self.membership(g)
        me.member_id = str(body.get("memberId"))
        me.role = str(body.get("role", "member"))
        me.status = "connected"
        host_prow = self._profile_row(host_info.get("profile"))
        host: MemberRow
        if g.host_member_id is not None and g.host_member_id in self.db.members:
            host = self.db.members[g.host_member_id]
            host.member_id = str(host_info.get("memberId"))
            host.role = str(host_info.get("role", "owner"))
            host.profile_id = host.member_contact_profile_id = host_prow.profile_id
            host.local_display_name = self.unique_name(
                user.user_id, str(host_prow.profile.get("displayName", ""))
            )
            host.status = "connected"
        else:
            host = self.new_member(
                user,
                g.group_id,
                str(host_info.get("memberId")),
                str(host_info.get("role", "owner")),
                "host",
                "connected",
                host_prow,
            )
            g.host_member_id = host.group_member_id
        host.conn_id = conn.conn_id
        conn.conn_type = "member"
        conn.member_id = host.group_member_id
        conn.contact_id = None
        conn.status = "ready"
        if body.get("kind") == "business":
            biz = body.get("business") or {}
            g.business = {
                "chatType": "business",
                "businessId": str(biz.get("businessId", host.member_id)),
                "customerId": me.member_id,
            }
        me.invited_by = {"type": "unknown"}
        me.invited_by_group_member_id = host.group_member_id
        self.send_on(conn, {"t": "x.ok"})
        self.emit(
            {
                "type": "userJoinedGroup",
                "user": self.user_json(user.user_id),
                "groupInfo": self.group_json(g),
                "hostMember": self.member_json(host),
            }
        )

    def on_ok(self, conn: ConnRow, d: Delivery) -> None:
        """The joiner completed the connection on its side."""
        user = self._user_of(conn)
        conn.status = "ready"
        if conn.contact_id is not None and conn.contact_id in self.db.contacts:
            c = self.db.contacts[conn.contact_id]
            self.emit(
                {
                    "type": "contactConnected",
                    "user": self.user_json(user.user_id),
                    "contact": self.contact_json(c),
                }
            )
            self._send_welcome(user, conn, "direct", c.contact_id)
            return
        gm = self._member_of(conn)
        if gm is None:
            return
        g, m = gm
        m.status = "connected"
        self._member_joined(user, g, m)
        self._send_welcome(user, conn, "group", g.group_id)

    def _send_welcome(self, user: UserRow, conn: ConnRow, kind: str, chat_id: int) -> None:
        if conn.welcome is None:
            return
        welcome, conn.welcome = conn.welcome, None
        self.post_message(user, kind, chat_id, welcome)

    def _member_joined(self, user: UserRow, g: GroupRow, m: MemberRow) -> None:
        """A member we admitted (by our link or our invitation) is connected."""
        self._report_group_event(
            user, g, m, {"type": "memberConnected"}, "joinedGroupMember", {"member": m}
        )
        if g.direct and g.business is None:
            others = self.member_conns(g, exclude=m.group_member_id)
            announce = {"t": "x.grp.mem.new", "member": self._member_info(m)}
            for conn in others:
                self.send_on(conn, announce)
            new_conn = self.db.conns.get(m.conn_id or 0)
            if others and new_conn is not None:
                members = [
                    self._member_info(self.db.members[c.member_id])
                    for c in others
                    if c.member_id is not None
                ]
                self.send_on(new_conn, {"t": "x.grp.intros", "members": members})
        history = rec.full_group_preferences(g.profile.get("groupPreferences"))["history"]
        if history.get("enable") == "on" and m.conn_id is not None:
            self._send_history(g, self.db.conns[m.conn_id])

    def _send_history(self, g: GroupRow, conn: ConnRow) -> None:
        entries = []
        for item in rec.ordered_items(self.db, "group", g.group_id)[-HISTORY_ITEMS:]:
            if item.content.get("type") not in ("sndMsgContent", "rcvMsgContent") or item.deleted:
                continue
            if item.dir_type == "groupSnd":
                sender: str | None = self.membership(g).member_id
            elif item.sender_member_id is not None:
                sender = self.db.members[item.sender_member_id].member_id
            else:
                sender = None
            entries.append(
                {
                    "sharedMsgId": item.shared_msg_id,
                    "content": copy.deepcopy(item.content["msgContent"]),
                    "sentAt": item.item_ts,
                    "memberId": sender,
                    "asGroup": item.show_group_as_sender,
                }
            )
        if entries:
            self.send_on(conn, {"t": "x.grp.history", "items": entries})

    # ------------------------------------------------------------------ group membership

    def on_mem_new(self, conn: ConnRow, d: Delivery) -> None:
        gm = self._member_of(conn)
        info = d.body.get("member")
        if gm is None or not isinstance(info, dict):
            return
        g, host = gm
        user = self._user_of(conn)
        if self.db.member_by_member_id(g.group_id, str(info.get("memberId"))) is not None:
            return
        prow = self._profile_row(info.get("profile"))
        mconn = self.new_conn(user, "member", "joined")
        m = self.new_member(
            user,
            g.group_id,
            str(info.get("memberId")),
            str(info.get("role", "member")),
            "post",
            "announced",
            prow,
            conn_id=mconn.conn_id,
        )
        m.invited_by_group_member_id = host.group_member_id
        mconn.member_id = m.group_member_id
        self.emit(
            {
                "type": "joinedGroupMemberConnecting",
                "user": self.user_json(user.user_id),
                "groupInfo": self.group_json(g),
                "hostMember": self.member_json(host),
                "member": self.member_json(m),
            }
        )
        self.network.introduce(
            g.net_id, self.membership(g).member_id, m.member_id, self.name, mconn.agent_conn_id
        )

    def on_intros(self, conn: ConnRow, d: Delivery) -> None:
        """The host introduces the group's current members to us (we just joined)."""
        gm = self._member_of(conn)
        if gm is None:
            return
        g, host = gm
        user = self._user_of(conn)
        me = self.membership(g)
        for info in d.body.get("members") or []:
            if not isinstance(info, dict) or not g.direct:
                continue
            member_id = str(info.get("memberId"))
            if member_id == me.member_id or self.db.member_by_member_id(g.group_id, member_id):
                continue
            prow = self._profile_row(info.get("profile"))
            mconn = self.new_conn(user, "member", "joined")
            m = self.new_member(
                user,
                g.group_id,
                member_id,
                str(info.get("role", "member")),
                "pre",
                "introduced",
                prow,
                conn_id=mconn.conn_id,
            )
            m.invited_by_group_member_id = host.group_member_id
            mconn.member_id = m.group_member_id
            self.network.introduce(
                g.net_id, me.member_id, member_id, self.name, mconn.agent_conn_id
            )

    def pair_intro(self, mine: str, theirs: str) -> None:
        conn = self.db.conn_by_agent_id(mine)
        if conn is not None:
            conn.peer = theirs

    def on_mem_con(self, conn: ConnRow, d: Delivery) -> None:
        gm = self._member_of(conn)
        if gm is None:
            return
        g, m = gm
        user = self._user_of(conn)
        conn.status = "ready"
        me = self.membership(g)
        if m.category == "host" and me.status in ("accepted", "invited"):
            m.status = "connected"
            me.status = "connected"
            self.emit(
                {
                    "type": "userJoinedGroup",
                    "user": self.user_json(user.user_id),
                    "groupInfo": self.group_json(g),
                    "hostMember": self.member_json(m),
                }
            )
            return
        if m.category == "invitee" and m.status in ("accepted", "invited"):
            m.status = "connected"
            self._member_joined(user, g, m)
            return
        m.status = "connected"
        self._report_group_event(
            user, g, m, {"type": "memberConnected"}, "connectedToGroupMember", {"member": m}
        )

    def on_history(self, conn: ConnRow, d: Delivery) -> None:
        gm = self._member_of(conn)
        if gm is None:
            return
        g, host = gm
        user = self._user_of(conn)
        items = []
        me = self.membership(g)
        for entry in d.body.get("items") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("content"), dict):
                continue
            sender_id = entry.get("memberId")
            if sender_id == me.member_id:
                continue
            sender = self.db.member_by_member_id(g.group_id, str(sender_id)) if sender_id else None
            channel = entry.get("asGroup") or (
                not g.direct and (sender is None or sender.role == "owner")
            )
            items.append(
                self.new_item(
                    user,
                    "group",
                    g.group_id,
                    "channelRcv" if channel else "groupRcv",
                    {"type": "rcvMsgContent", "msgContent": copy.deepcopy(entry["content"])},
                    item_ts=str(entry.get("sentAt") or self.ts()),
                    sender_member_id=None if channel else (sender or host).group_member_id,
                    shared_msg_id=entry.get("sharedMsgId"),
                    show_group_as_sender=bool(channel),
                )
            )
        self._new_items_event(user, items)

    def on_mem_role(self, conn: ConnRow, d: Delivery) -> None:
        gm = self._member_of(conn)
        if gm is None:
            return
        g, by = gm
        user = self._user_of(conn)
        target = self.db.member_by_member_id(g.group_id, str(d.body.get("memberId")))
        if target is None:
            return
        from_role, to_role = target.role, str(d.body.get("role"))
        target.role = to_role
        if target.category == "user":
            event: JSON = {"type": "userRole", "role": to_role}
        else:
            event = {
                "type": "memberRole",
                "groupMemberId": target.group_member_id,
                "profile": rec.profile(self.db.profiles[target.profile_id]),
                "role": to_role,
            }
        self._report_group_event(
            user,
            g,
            by,
            event,
            "memberRole",
            {"byMember": by, "member": target},
            fromRole=from_role,
            toRole=to_role,
        )

    def on_mem_del(self, conn: ConnRow, d: Delivery) -> None:
        gm = self._member_of(conn)
        if gm is None:
            return
        g, by = gm
        user = self._user_of(conn)
        target = self.db.member_by_member_id(g.group_id, str(d.body.get("memberId")))
        if target is None:
            return
        with_messages = bool(d.body.get("withMessages"))
        target.status = "removed"
        if target.category == "user":
            self._report_group_event(
                user,
                g,
                by,
                {"type": "userDeleted"},
                "deletedMemberUser",
                {"member": by},
                withMessages=with_messages,
            )
        else:
            self._report_group_event(
                user,
                g,
                by,
                {
                    "type": "memberDeleted",
                    "groupMemberId": target.group_member_id,
                    "profile": rec.profile(self.db.profiles[target.profile_id]),
                },
                "deletedMember",
                {"byMember": by, "deletedMember": target},
                withMessages=with_messages,
            )

    def on_leave(self, conn: ConnRow, d: Delivery) -> None:
        gm = self._member_of(conn)
        if gm is None:
            return
        g, m = gm
        user = self._user_of(conn)
        m.status = "left"
        self._report_group_event(user, g, m, {"type": "memberLeft"}, "leftMember", {"member": m})

    def on_group_del(self, conn: ConnRow, d: Delivery) -> None:
        gm = self._member_of(conn)
        if gm is None:
            return
        g, by = gm
        user = self._user_of(conn)
        self.membership(g).status = "deleted"
        self._report_group_event(
            user, g, by, {"type": "groupDeleted"}, "groupDeleted", {"member": by}
        )

    def on_group_info(self, conn: ConnRow, d: Delivery) -> None:
        gm = self._member_of(conn)
        profile = d.body.get("groupProfile")
        if gm is None or not isinstance(profile, dict):
            return
        g, by = gm
        user = self._user_of(conn)
        before = self.group_json(g)
        g.profile = copy.deepcopy(profile)
        g.updated_at = self.ts()
        item = self._group_event(
            user, g, by, {"type": "groupUpdated", "groupProfile": copy.deepcopy(profile)}
        )
        self.emit(
            {
                "type": "groupUpdated",
                "user": self.user_json(user.user_id),
                "fromGroup": before,
                "toGroup": self.group_json(g),
                "member_": self.member_json(by),
            }
        )
        self._new_items_event(user, [item])

    def on_group_inv(self, conn: ConnRow, d: Delivery) -> None:
        """A contact invited us to a group (``/_add``)."""
        if conn.contact_id is None or conn.contact_id not in self.db.contacts:
            return
        c = self.db.contacts[conn.contact_id]
        user = self._user_of(conn)
        body = d.body
        host_info: JSON = body["fromMember"] if isinstance(body.get("fromMember"), dict) else {}
        g = self._new_group_row(
            user,
            copy.deepcopy(body.get("groupProfile") or {}),
            net_id=str(body.get("netId")),
            role=str(body.get("role", "member")),
            status="invited",
            member_id=str(body.get("memberId")),
        )
        g.direct = bool(body.get("direct", True))
        host = self.new_member(
            user,
            g.group_id,
            str(host_info.get("memberId")),
            str(host_info.get("role", "owner")),
            "host",
            "invited",
            self.db.profiles[c.profile_id],
            member_contact_id=c.contact_id,
        )
        g.host_member_id = host.group_member_id
        me = self.membership(g)
        me.invited_by = {"type": "contact", "byContactId": c.contact_id}
        item = self.new_item(
            user,
            "direct",
            c.contact_id,
            "directRcv",
            {
                "type": "rcvGroupInvitation",
                "groupInvitation": {
                    "groupId": g.group_id,
                    "groupMemberId": me.group_member_id,
                    "localDisplayName": g.local_display_name,
                    "groupProfile": copy.deepcopy(g.profile),
                    "status": "pending",
                },
                "memberRole": me.role,
            },
        )
        self.emit(
            {
                "type": "receivedGroupInvitation",
                "user": self.user_json(user.user_id),
                "groupInfo": self.group_json(g),
                "contact": self.contact_json(c),
                "fromMemberRole": host.role,
                "memberRole": me.role,
            }
        )
        self._new_items_event(user, [item])
        if user.auto_accept_group_invitations:
            self.join_invited_group(user, g)

    def join_invited_group(self, user: UserRow, g: GroupRow) -> None:
        """Accept a group invitation: tell the host, and connect to it as a member."""
        me = self.membership(g)
        me.status = "accepted"
        host = self.db.members.get(g.host_member_id or 0)
        if host is None or host.member_contact_id is None:
            return
        contact_conn = self.contact_conn(host.member_contact_id)
        if contact_conn is None:
            return
        mconn = self.new_conn(user, "member", "joined", member_id=host.group_member_id)
        host.conn_id = mconn.conn_id
        self.send_on(contact_conn, {"t": "x.grp.acpt", "memberId": me.member_id})
        self.network.introduce(
            g.net_id, me.member_id, host.member_id, self.name, mconn.agent_conn_id
        )

    def on_group_accept(self, conn: ConnRow, d: Delivery) -> None:
        """The contact we invited accepted (``/_join``): connect to it as a member."""
        user = self._user_of(conn)
        member_id = str(d.body.get("memberId"))
        for g in self.db.groups.values():
            if g.user_id != user.user_id:
                continue
            m = self.db.member_by_member_id(g.group_id, member_id)
            if m is None or m.member_contact_id != conn.contact_id:
                continue
            m.status = "accepted"
            mconn = self.new_conn(user, "member", "joined", member_id=m.group_member_id)
            m.conn_id = mconn.conn_id
            self.network.introduce(
                g.net_id, self.membership(g).member_id, m.member_id, self.name, mconn.agent_conn_id
            )
            return

    # ------------------------------------------------------------------ contacts

    def on_info(self, conn: ConnRow, d: Delivery) -> None:
        if conn.contact_id is None or conn.contact_id not in self.db.contacts:
            return
        profile = d.body.get("profile")
        if not isinstance(profile, dict):
            return
        c = self.db.contacts[conn.contact_id]
        user = self._user_of(conn)
        before = self.contact_json(c)
        prow = self.db.profiles[c.profile_id]
        prow.profile = copy.deepcopy(profile)
        c.updated_at = self.ts()
        self.emit(
            {
                "type": "contactUpdated",
                "user": self.user_json(user.user_id),
                "fromContact": before,
                "toContact": self.contact_json(c),
            }
        )

    def on_direct_del(self, conn: ConnRow, d: Delivery) -> None:
        if conn.contact_id is None or conn.contact_id not in self.db.contacts:
            return
        c = self.db.contacts[conn.contact_id]
        user = self._user_of(conn)
        item = self.new_item(
            user,
            "direct",
            c.contact_id,
            "directRcv",
            {"type": "rcvDirectEvent", "rcvDirectEvent": {"type": "contactDeleted"}},
        )
        c.status = "deleted"
        conn.status = "deleted"
        self.emit(
            {
                "type": "contactDeletedByContact",
                "user": self.user_json(user.user_id),
                "contact": self.contact_json(c),
            }
        )
        self._new_items_event(user, [item])

    def on_contact_rejected(self, conn: ConnRow, d: Delivery) -> None:
        user = self._user_of(conn)
        conn.status = "deleted"
        if conn.contact_id is not None and conn.contact_id in self.db.contacts:
            c = self.db.contacts[conn.contact_id]
            c.status = "rejected"
            self.emit(
                {
                    "type": "contactRequestRejected",
                    "user": self.user_json(user.user_id),
                    "contact": self.contact_json(c),
                    "rejectionReason": "user_rejected",
                }
            )

    # ------------------------------------------------------------------ messages

    def _msg_sender(self, conn: ConnRow) -> tuple[str, int, MemberRow | None] | None:
        if conn.contact_id is not None and conn.contact_id in self.db.contacts:
            return "direct", conn.contact_id, None
        gm = self._member_of(conn)
        if gm is None:
            return None
        return "group", gm[0].group_id, gm[1]

    def on_msg_new(self, conn: ConnRow, d: Delivery) -> None:
        sender = self._msg_sender(conn)
        body = d.body
        if sender is None or not isinstance(body.get("content"), dict):
            return
        kind, chat_id, member = sender
        user = self._user_of(conn)
        mentions: JSON = {}
        user_mention = False
        dir_type = "directRcv"
        as_group = False
        if kind == "group":
            g = self.db.groups[chat_id]
            me = self.membership(g)
            if me.status not in ("connected", "complete", "creator"):
                return
            mentions = self._received_mentions(chat_id, body)
            quoted = body.get("quote")
            user_reply = isinstance(quoted, dict) and quoted.get("memberId") == me.member_id
            user_mention = user_reply or any(
                m.get("memberId") == me.member_id for m in mentions.values()
            )
            as_group = bool(body.get("asGroup")) or (
                not g.direct and member is not None and member.role == "owner"
            )
            dir_type = "channelRcv" if as_group else "groupRcv"
        quote = self._received_quote(kind, chat_id, body.get("quote"))
        timed = None
        if isinstance(body.get("ttl"), int):
            timed = {
                "ttl": body["ttl"],
                "deleteAt": rec.iso(self.network.clock.wall() + body["ttl"]),
            }
        item = self.new_item(
            user,
            kind,
            chat_id,
            dir_type,
            {"type": "rcvMsgContent", "msgContent": copy.deepcopy(body["content"])},
            item_ts=str(body.get("sentAt") or self.ts()),
            sender_member_id=member.group_member_id
            if member is not None and not as_group
            else None,
            shared_msg_id=body.get("sharedMsgId"),
            live=True if body.get("live") else None,
            user_mention=user_mention,
            mentions=mentions,
            quote=quote,
            timed=timed,
            show_group_as_sender=as_group,
        )
        if kind == "direct":
            self.db.contacts[chat_id].used = True
        self._new_items_event(user, [item])

    def _received_mentions(self, group_id: int, body: JSON) -> JSON:
        """The mentions of a received group message, read as the core reads them: only names
        that are ``mention`` fragments of the text, in their order, each member once, at most
        5 (``maxRcvMentions``)."""
        raw = body.get("mentions")
        content = body.get("content")
        text = content.get("text") if isinstance(content, dict) else None
        if not isinstance(raw, dict) or not raw or not isinstance(text, str):
            return {}
        out: JSON = {}
        seen: set[str] = set()
        for name in mentioned_names(parse_markdown(text)):
            if len(out) >= MAX_RCV_MENTIONS:
                break
            member_id = raw.get(name)
            if member_id is None or str(member_id) in seen:
                continue
            seen.add(str(member_id))
            target = self.db.member_by_member_id(group_id, str(member_id))
            out[name] = (
                self.mention_json(target) if target is not None else {"memberId": str(member_id)}
            )
        return out

    def _received_quote(self, kind: str, chat_id: int, raw: Any) -> JSON | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("content"), dict):
            return None
        shared = raw.get("sharedMsgId")
        local = self.db.item_by_shared_id(kind, chat_id, str(shared)) if shared else None
        if local is not None and local.content.get("type") in ("sndMsgContent", "rcvMsgContent"):
            return self.quote_json(local)
        out: JSON = {}
        if kind == "group" and raw.get("memberId"):
            g = self.db.groups[chat_id]
            if raw["memberId"] == self.membership(g).member_id:
                out["chatDir"] = {"type": "groupSnd"}
            else:
                m = self.db.member_by_member_id(chat_id, str(raw["memberId"]))
                if m is not None:
                    out["chatDir"] = {"type": "groupRcv", "groupMember": self.member_json(m)}
        if shared:
            out["sharedMsgId"] = shared
        out["sentAt"] = str(raw.get("sentAt") or self.ts())
        out["content"] = copy.deepcopy(raw["content"])
        return out

    def _find_received(self, conn: ConnRow, shared: Any) -> tuple[UserRow, ItemRow] | None:
        sender = self._msg_sender(conn)
        if sender is None or not isinstance(shared, str):
            return None
        kind, chat_id, member = sender
        item = self.db.item_by_shared_id(kind, chat_id, shared)
        if item is None or not item.dir_type.endswith("Rcv"):
            return None
        if member is not None and item.sender_member_id not in (None, member.group_member_id):
            return None
        return self._user_of(conn), item

    def on_msg_update(self, conn: ConnRow, d: Delivery) -> None:
        found = self._find_received(conn, d.body.get("sharedMsgId"))
        content = d.body.get("content")
        if found is None or not isinstance(content, dict):
            return
        user, item = found
        was_live = bool(item.live)
        item.content = {"type": "rcvMsgContent", "msgContent": copy.deepcopy(content)}
        item.item_text = str(content.get("text", ""))
        item.has_link = rec.has_link(item.item_text)
        if item.chat_type == "group":
            item.mentions = self._received_mentions(item.chat_id, d.body)
        if "live" in d.body and item.live is not None:
            item.live = bool(d.body["live"])
        if not was_live:
            item.edited = True
        item.updated_at = self.ts()
        self.emit(
            {
                "type": "chatItemUpdated",
                "user": self.user_json(user.user_id),
                "chatItem": self.a_item(item),
            }
        )

    def on_msg_del(self, conn: ConnRow, d: Delivery) -> None:
        found = self._find_received(conn, d.body.get("sharedMsgId"))
        if found is None:
            return
        user, item = found
        before = self.a_item(item)
        item.deleted = {"type": "deleted", "deletedTs": self.ts(), "chatType": item.chat_type}
        item.updated_at = self.ts()
        self.emit(
            {
                "type": "chatItemsDeleted",
                "user": self.user_json(user.user_id),
                "chatItemDeletions": [{"deletedChatItem": before, "toChatItem": self.a_item(item)}],
                "byUser": False,
                "timed": False,
            }
        )


_HANDLERS: dict[str, Any] = {
    "x.inv.join": Receiver.on_inv_join,
    "x.conf": Receiver.on_conf,
    "x.ok": Receiver.on_ok,
    "x.info": Receiver.on_info,
    "x.direct.del": Receiver.on_direct_del,
    "x.contact.rej": Receiver.on_contact_rejected,
    "x.msg.new": Receiver.on_msg_new,
    "x.msg.update": Receiver.on_msg_update,
    "x.msg.del": Receiver.on_msg_del,
    "x.grp.mem.new": Receiver.on_mem_new,
    "x.grp.intros": Receiver.on_intros,
    "x.grp.mem.con": Receiver.on_mem_con,
    "x.grp.history": Receiver.on_history,
    "x.grp.mem.role": Receiver.on_mem_role,
    "x.grp.mem.del": Receiver.on_mem_del,
    "x.grp.leave": Receiver.on_leave,
    "x.grp.del": Receiver.on_group_del,
    "x.grp.info": Receiver.on_group_info,
    "x.grp.inv": Receiver.on_group_inv,
    "x.grp.acpt": Receiver.on_group_accept,
}
