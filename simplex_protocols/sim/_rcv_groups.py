"""Groups as their members see them: joining by a link or an invitation, the introductions
that connect every member with every other, history for new members, and the group events
members send (roles, removals, leaving, deletion, the profile)."""

from __future__ import annotations

import copy
from typing import Any

from . import _records as rec
from ._cmd_messages import contact_conn, member_conns
from ._context import CoreContext
from ._delivery import Delivery
from ._inbound import FromContact, FromMember, Received, ReceiveTable
from ._store import ConnRow, GroupRow, ItemRow, LinkRow, MemberRow, UserRow

__all__ = ["RECEIVE", "group_of_invitation", "join_invited_group", "member_joined", "pair_intro"]

JSON = dict[str, Any]

#: Items a new member receives from the group's history, when history is on.
HISTORY_ITEMS = 100

#: The messages this module handles.
RECEIVE = ReceiveTable()


def _group_event(
    ctx: CoreContext, user: UserRow, g: GroupRow, m: MemberRow | None, event: JSON
) -> ItemRow:
    return ctx.new_item(
        user,
        "group",
        g.group_id,
        "groupRcv" if m is not None else "channelRcv",
        {"type": "rcvGroupEvent", "rcvGroupEvent": event},
        sender_member_id=m.group_member_id if m is not None else None,
    )


def _report_group_event(
    ctx: CoreContext,
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
    item = _group_event(ctx, user, g, by, item_event)
    ctx.emit(
        {
            "type": response_type,
            "user": ctx.user_json(user.user_id),
            "groupInfo": ctx.group_json(g),
            **{key: ctx.member_json(m) for key, m in members.items()},
            **fields,
        }
    )
    ctx.emit_new_items(user, [item])


@RECEIVE.at_link("x.grp.link.join", "group")
def on_group_join(ctx: CoreContext, link: LinkRow, d: Delivery) -> None:
    """Someone joins one of our groups by its link: admit them as a member."""
    g = ctx.db.groups.get(link.group_id or 0)
    if g is None:
        return
    me = ctx.membership(g)
    if me.status not in ("creator", "connected", "complete"):
        return
    user = ctx.db.users[g.user_id]
    body = d.body
    prow = ctx.profile_row(body.get("profile"))
    conn = ctx.new_conn(user, "member", "accepted", group_link_id=link.group_link_id)
    conn.peer = d.src_agent
    m = ctx.new_member(
        user,
        g.group_id,
        ctx.random_id(12),
        link.role,
        "invitee",
        "accepted",
        prow,
        invited_by={"type": "user"},
        conn_id=conn.conn_id,
    )
    conn.member_id = m.group_member_id
    if isinstance(body.get("msg"), dict):
        item = ctx.new_item(
            user,
            "group",
            g.group_id,
            "groupRcv",
            {"type": "rcvMsgContent", "msgContent": copy.deepcopy(body["msg"])},
            sender_member_id=m.group_member_id,
            shared_msg_id=body.get("msgSharedId"),
        )
        ctx.emit_new_items(user, [item])
    ctx.send_on(
        conn,
        {
            "t": "x.conf",
            "kind": "group",
            "groupProfile": copy.deepcopy(g.profile),
            "netId": g.net_id,
            "memberId": m.member_id,
            "role": link.role,
            "host": ctx.member_info(me),
            "direct": g.direct,
        },
    )


def member_joined(ctx: CoreContext, user: UserRow, g: GroupRow, m: MemberRow) -> None:
    """A member we admitted (by our link or our invitation) is connected."""
    _report_group_event(
        ctx, user, g, m, {"type": "memberConnected"}, "joinedGroupMember", {"member": m}
    )
    if g.direct and g.business is None:
        others = member_conns(ctx, g, exclude=m.group_member_id)
        announce = {"t": "x.grp.mem.new", "member": ctx.member_info(m)}
        for conn in others:
            ctx.send_on(conn, announce)
        new_conn = ctx.db.conns.get(m.conn_id or 0)
        if others and new_conn is not None:
            members = [
                ctx.member_info(ctx.db.members[c.member_id])
                for c in others
                if c.member_id is not None
            ]
            ctx.send_on(new_conn, {"t": "x.grp.intros", "members": members})
    history = rec.full_group_preferences(g.profile.get("groupPreferences"))["history"]
    if history.get("enable") == "on" and m.conn_id is not None:
        _send_history(ctx, g, ctx.db.conns[m.conn_id])


def _send_history(ctx: CoreContext, g: GroupRow, conn: ConnRow) -> None:
    entries = []
    for item in rec.ordered_items(ctx.db, "group", g.group_id)[-HISTORY_ITEMS:]:
        if item.content.get("type") not in ("sndMsgContent", "rcvMsgContent") or item.deleted:
            continue
        if item.dir_type == "groupSnd":
            sender: str | None = ctx.membership(g).member_id
        elif item.sender_member_id is not None:
            sender = ctx.db.members[item.sender_member_id].member_id
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
        ctx.send_on(conn, {"t": "x.grp.history", "items": entries})


def _peer_member(
    ctx: CoreContext, r: FromMember, info: JSON, category: str, status: str
) -> tuple[MemberRow, ConnRow]:
    """A member the host told us about (``info``): its row, and our connection to it."""
    prow = ctx.profile_row(info.get("profile"))
    mconn = ctx.new_conn(r.user, "member", "joined")
    m = ctx.new_member(
        r.user,
        r.group.group_id,
        str(info.get("memberId")),
        str(info.get("role", "member")),
        category,
        status,
        prow,
        conn_id=mconn.conn_id,
    )
    m.invited_by_group_member_id = r.member.group_member_id
    mconn.member_id = m.group_member_id
    return m, mconn


@RECEIVE.from_member("x.grp.mem.new")
def on_mem_new(ctx: CoreContext, r: FromMember) -> None:
    """The host announces a new member: connect to it."""
    g, host, user = r.group, r.member, r.user
    info = r.body.get("member")
    if not isinstance(info, dict):
        return
    if ctx.db.member_by_member_id(g.group_id, str(info.get("memberId"))) is not None:
        return
    m, mconn = _peer_member(ctx, r, info, "post", "announced")
    ctx.emit(
        {
            "type": "joinedGroupMemberConnecting",
            "user": ctx.user_json(user.user_id),
            "groupInfo": ctx.group_json(g),
            "hostMember": ctx.member_json(host),
            "member": ctx.member_json(m),
        }
    )
    ctx.network.introduce(
        g.net_id, ctx.membership(g).member_id, m.member_id, ctx.name, mconn.agent_conn_id
    )


@RECEIVE.from_member("x.grp.intros")
def on_intros(ctx: CoreContext, r: FromMember) -> None:
    """The host introduces the group's current members to us (we just joined)."""
    g = r.group
    me = ctx.membership(g)
    for info in r.body.get("members") or []:
        if not isinstance(info, dict) or not g.direct:
            continue
        member_id = str(info.get("memberId"))
        if member_id == me.member_id or ctx.db.member_by_member_id(g.group_id, member_id):
            continue
        _, mconn = _peer_member(ctx, r, info, "pre", "introduced")
        ctx.network.introduce(g.net_id, me.member_id, member_id, ctx.name, mconn.agent_conn_id)


def pair_intro(ctx: CoreContext, mine: str, theirs: str) -> None:
    """Both sides of a member introduction are ready: our connection ``mine`` now leads to
    ``theirs``."""
    conn = ctx.db.conn_by_agent_id(mine)
    if conn is not None:
        conn.peer = theirs


@RECEIVE.from_member("x.grp.mem.con")
def on_mem_con(ctx: CoreContext, r: FromMember) -> None:
    """A connection to a member is ready (the host's, an invitee's or an introduced one's)."""
    g, m, user = r.group, r.member, r.user
    r.conn.status = "ready"
    me = ctx.membership(g)
    if m.category == "host" and me.status in ("accepted", "invited"):
        m.status = "connected"
        me.status = "connected"
        ctx.emit(
            {
                "type": "userJoinedGroup",
                "user": ctx.user_json(user.user_id),
                "groupInfo": ctx.group_json(g),
                "hostMember": ctx.member_json(m),
            }
        )
        return
    if m.category == "invitee" and m.status in ("accepted", "invited"):
        m.status = "connected"
        member_joined(ctx, user, g, m)
        return
    m.status = "connected"
    _report_group_event(
        ctx, user, g, m, {"type": "memberConnected"}, "connectedToGroupMember", {"member": m}
    )


@RECEIVE.from_member("x.grp.history")
def on_history(ctx: CoreContext, r: FromMember) -> None:
    """The host sends the group's recent messages to us, a new member."""
    g, host, user = r.group, r.member, r.user
    items = []
    me = ctx.membership(g)
    for entry in r.body.get("items") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), dict):
            continue
        sender_id = entry.get("memberId")
        if sender_id == me.member_id:
            continue
        sender = ctx.db.member_by_member_id(g.group_id, str(sender_id)) if sender_id else None
        channel = entry.get("asGroup") or (
            not g.direct and (sender is None or sender.role == "owner")
        )
        items.append(
            ctx.new_item(
                user,
                "group",
                g.group_id,
                "channelRcv" if channel else "groupRcv",
                {"type": "rcvMsgContent", "msgContent": copy.deepcopy(entry["content"])},
                item_ts=str(entry.get("sentAt") or ctx.ts()),
                sender_member_id=None if channel else (sender or host).group_member_id,
                shared_msg_id=entry.get("sharedMsgId"),
                show_group_as_sender=bool(channel),
            )
        )
    ctx.emit_new_items(user, items)


@RECEIVE.from_member("x.grp.mem.role")
def on_mem_role(ctx: CoreContext, r: FromMember) -> None:
    """A member changed a member's role (ours, or another's)."""
    g, by, user = r.group, r.member, r.user
    target = ctx.db.member_by_member_id(g.group_id, str(r.body.get("memberId")))
    if target is None:
        return
    from_role, to_role = target.role, str(r.body.get("role"))
    target.role = to_role
    if target.category == "user":
        event: JSON = {"type": "userRole", "role": to_role}
    else:
        event = {
            "type": "memberRole",
            "groupMemberId": target.group_member_id,
            "profile": rec.profile(ctx.db.profiles[target.profile_id]),
            "role": to_role,
        }
    _report_group_event(
        ctx,
        user,
        g,
        by,
        event,
        "memberRole",
        {"byMember": by, "member": target},
        fromRole=from_role,
        toRole=to_role,
    )


@RECEIVE.from_member("x.grp.mem.del")
def on_mem_del(ctx: CoreContext, r: FromMember) -> None:
    """A member removed a member (us, or another)."""
    g, by, user = r.group, r.member, r.user
    target = ctx.db.member_by_member_id(g.group_id, str(r.body.get("memberId")))
    if target is None:
        return
    with_messages = bool(r.body.get("withMessages"))
    target.status = "removed"
    if target.category == "user":
        _report_group_event(
            ctx,
            user,
            g,
            by,
            {"type": "userDeleted"},
            "deletedMemberUser",
            {"member": by},
            withMessages=with_messages,
        )
    else:
        _report_group_event(
            ctx,
            user,
            g,
            by,
            {
                "type": "memberDeleted",
                "groupMemberId": target.group_member_id,
                "profile": rec.profile(ctx.db.profiles[target.profile_id]),
            },
            "deletedMember",
            {"byMember": by, "deletedMember": target},
            withMessages=with_messages,
        )


@RECEIVE.from_member("x.grp.leave")
def on_leave(ctx: CoreContext, r: FromMember) -> None:
    """A member left the group."""
    g, m, user = r.group, r.member, r.user
    m.status = "left"
    _report_group_event(ctx, user, g, m, {"type": "memberLeft"}, "leftMember", {"member": m})


@RECEIVE.from_member("x.grp.del")
def on_group_del(ctx: CoreContext, r: FromMember) -> None:
    """The owner deleted the group."""
    g, by, user = r.group, r.member, r.user
    ctx.membership(g).status = "deleted"
    _report_group_event(ctx, user, g, by, {"type": "groupDeleted"}, "groupDeleted", {"member": by})


@RECEIVE.from_member("x.grp.info")
def on_group_info(ctx: CoreContext, r: FromMember) -> None:
    """A member (the owner) updated the group's profile."""
    g, by, user = r.group, r.member, r.user
    profile = r.body.get("groupProfile")
    if not isinstance(profile, dict):
        return
    before = ctx.group_json(g)
    profile = ctx.core_profile.group_profile(copy.deepcopy(profile))
    g.profile = profile
    g.updated_at = ctx.ts()
    item = _group_event(
        ctx, user, g, by, {"type": "groupUpdated", "groupProfile": copy.deepcopy(profile)}
    )
    ctx.emit(
        {
            "type": "groupUpdated",
            "user": ctx.user_json(user.user_id),
            "fromGroup": before,
            "toGroup": ctx.group_json(g),
            "member_": ctx.member_json(by),
        }
    )
    ctx.emit_new_items(user, [item])


@RECEIVE.from_contact("x.grp.inv")
def on_group_inv(ctx: CoreContext, r: FromContact) -> None:
    """A contact invited us to a group (``/_add``)."""
    c, user, body = r.contact, r.user, r.body
    host_info: JSON = body["fromMember"] if isinstance(body.get("fromMember"), dict) else {}
    g = group_of_invitation(ctx, user, body, "invited")
    g.direct = bool(body.get("direct", True))
    host = ctx.new_member(
        user,
        g.group_id,
        str(host_info.get("memberId")),
        str(host_info.get("role", "owner")),
        "host",
        "invited",
        ctx.db.profiles[c.profile_id],
        member_contact_id=c.contact_id,
    )
    g.host_member_id = host.group_member_id
    me = ctx.membership(g)
    me.invited_by = {"type": "contact", "byContactId": c.contact_id}
    item = ctx.new_item(
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
    ctx.emit(
        {
            "type": "receivedGroupInvitation",
            "user": ctx.user_json(user.user_id),
            "groupInfo": ctx.group_json(g),
            "contact": ctx.contact_json(c),
            "fromMemberRole": host.role,
            "memberRole": me.role,
        }
    )
    ctx.emit_new_items(user, [item])
    if user.auto_accept_group_invitations:
        join_invited_group(ctx, user, g)


def group_of_invitation(
    ctx: CoreContext, user: UserRow, body: JSON, status: str, incognito_id: int | None = None
) -> GroupRow:
    """The group an invitation or a host's confirmation describes (its profile, its ID on the
    network, our role and member ID), with our membership in ``status``."""
    return ctx.new_group_row(
        user,
        ctx.core_profile.group_profile(copy.deepcopy(body.get("groupProfile") or {})),
        net_id=str(body.get("netId")),
        role=str(body.get("role", "member")),
        status=status,
        member_id=str(body.get("memberId")),
        incognito_id=incognito_id,
    )


def join_invited_group(ctx: CoreContext, user: UserRow, g: GroupRow) -> None:
    """Accept a group invitation: tell the host, and connect to it as a member."""
    me = ctx.membership(g)
    me.status = "accepted"
    host = ctx.db.members.get(g.host_member_id or 0)
    if host is None or host.member_contact_id is None:
        return
    host_conn = contact_conn(ctx, host.member_contact_id)
    if host_conn is None:
        return
    mconn = ctx.new_conn(user, "member", "joined", member_id=host.group_member_id)
    host.conn_id = mconn.conn_id
    ctx.send_on(host_conn, {"t": "x.grp.acpt", "memberId": me.member_id})
    ctx.network.introduce(g.net_id, me.member_id, host.member_id, ctx.name, mconn.agent_conn_id)


@RECEIVE.on_connection("x.grp.acpt")
def on_group_accept(ctx: CoreContext, r: Received) -> None:
    """The contact we invited accepted (``/_join``): connect to it as a member."""
    conn, user = r.conn, r.user
    member_id = str(r.body.get("memberId"))
    for g in ctx.db.groups.values():
        if g.user_id != user.user_id:
            continue
        m = ctx.db.member_by_member_id(g.group_id, member_id)
        if m is None or m.member_contact_id != conn.contact_id:
            continue
        m.status = "accepted"
        mconn = ctx.new_conn(user, "member", "joined", member_id=m.group_member_id)
        m.conn_id = mconn.conn_id
        ctx.network.introduce(
            g.net_id, ctx.membership(g).member_id, m.member_id, ctx.name, mconn.agent_conn_id
        )
        return
