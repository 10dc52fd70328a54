"""Connection handshakes: a one-time invitation used, a connection confirmed (``x.conf``) and
completed (``x.ok``), for contacts, group members and business chats."""

from __future__ import annotations

import copy
from typing import Any

from . import _records as rec
from ._cmd_messages import post_message
from ._context import CoreContext
from ._inbound import Received, ReceiveTable
from ._rcv_groups import group_of_invitation, member_joined
from ._store import ConnRow, MemberRow, UserRow

__all__ = ["RECEIVE"]

JSON = dict[str, Any]

#: The messages this module handles.
RECEIVE = ReceiveTable()


@RECEIVE.on_connection("x.inv.join")
def on_inv_join(ctx: CoreContext, r: Received) -> None:
    """Someone used our one-time invitation."""
    conn, user = r.conn, r.user
    if conn.pending != "invitation":
        return
    prow = ctx.profile_row(r.body.get("profile"))
    conn.peer = r.delivery.src_agent
    conn.status = "accepted"
    c = ctx.new_contact(user, prow, conn_id=conn.conn_id, used=True)
    conn.contact_id = c.contact_id
    ctx.emit(
        {
            "type": "contactConnecting",
            "user": ctx.user_json(user.user_id),
            "contact": ctx.contact_json(c),
        }
    )
    ctx.send_on(
        conn,
        {
            "t": "x.conf",
            "kind": "contact",
            "profile": ctx.profile_for_peer(user, conn.custom_user_profile_id),
        },
    )


@RECEIVE.on_connection("x.conf")
def on_conf(ctx: CoreContext, r: Received) -> None:
    """The other side accepted our connection: complete it."""
    kind = r.body.get("kind")
    r.conn.peer = r.delivery.src_agent
    if kind == "contact":
        _conf_contact(ctx, r)
    elif kind in ("group", "business"):
        _conf_group(ctx, r)


def _conf_contact(ctx: CoreContext, r: Received) -> None:
    conn, user = r.conn, r.user
    prow = ctx.profile_row(r.body.get("profile"))
    conn.status = "ready"
    c = r.contact
    if c is not None:
        old = ctx.db.profiles[c.profile_id].profile
        for key in ("contactDomain",):
            if key in old and key not in prow.profile:
                prow.profile[key] = copy.deepcopy(old[key])
        c.profile_id = prow.profile_id
        c.used = True
    else:
        c = ctx.new_contact(
            user, prow, conn_id=conn.conn_id, used=True, via_link=conn.pending_target
        )
        conn.contact_id = c.contact_id
    if conn.pending == "join_invitation" or conn.pending == "address":
        c.via_link = conn.pending_target
    ctx.send_on(conn, {"t": "x.ok"})
    ctx.emit(
        {
            "type": "contactConnected",
            "user": ctx.user_json(user.user_id),
            "contact": ctx.contact_json(c),
            **(
                {"userCustomProfile": rec.profile(ctx.db.profiles[conn.custom_user_profile_id])}
                if conn.custom_user_profile_id is not None
                else {}
            ),
        }
    )


def _conf_group(ctx: CoreContext, r: Received) -> None:
    conn, user, body = r.conn, r.user, r.body
    host_info: JSON = body["host"] if isinstance(body.get("host"), dict) else {}
    g = ctx.db.groups.get(conn.pending_group_id) if conn.pending_group_id else None
    if g is None:
        g = group_of_invitation(ctx, user, body, "connected", conn.custom_user_profile_id)
    g.net_id = str(body.get("netId"))
    g.profile = ctx.core_profile.group_profile(copy.deepcopy(body.get("groupProfile") or g.profile))
    g.direct = bool(body.get("direct", True))
    g.via_link = conn.pending_target
    me = ctx.membership(g)
    me.member_id = str(body.get("memberId"))
    me.role = str(body.get("role", "member"))
    me.status = "connected"
    host_prow = ctx.profile_row(host_info.get("profile"))
    host: MemberRow
    if g.host_member_id is not None and g.host_member_id in ctx.db.members:
        host = ctx.db.members[g.host_member_id]
        host.member_id = str(host_info.get("memberId"))
        host.role = str(host_info.get("role", "owner"))
        host.profile_id = host.member_contact_profile_id = host_prow.profile_id
        host.local_display_name = ctx.unique_name(
            user.user_id, str(host_prow.profile.get("displayName", ""))
        )
        host.status = "connected"
    else:
        host = ctx.new_member(
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
    ctx.send_on(conn, {"t": "x.ok"})
    ctx.emit(
        {
            "type": "userJoinedGroup",
            "user": ctx.user_json(user.user_id),
            "groupInfo": ctx.group_json(g),
            "hostMember": ctx.member_json(host),
        }
    )


@RECEIVE.on_connection("x.ok")
def on_ok(ctx: CoreContext, r: Received) -> None:
    """The joiner completed the connection on its side."""
    conn, user, c = r.conn, r.user, r.contact
    conn.status = "ready"
    if c is not None:
        ctx.emit(
            {
                "type": "contactConnected",
                "user": ctx.user_json(user.user_id),
                "contact": ctx.contact_json(c),
            }
        )
        _send_welcome(ctx, user, conn, "direct", c.contact_id)
        return
    g, m = r.group, r.member
    if g is None or m is None:
        return
    m.status = "connected"
    member_joined(ctx, user, g, m)
    _send_welcome(ctx, user, conn, "group", g.group_id)


def _send_welcome(ctx: CoreContext, user: UserRow, conn: ConnRow, kind: str, chat_id: int) -> None:
    if conn.welcome is None:
        return
    welcome, conn.welcome = conn.welcome, None
    post_message(ctx, user, kind, chat_id, welcome)
