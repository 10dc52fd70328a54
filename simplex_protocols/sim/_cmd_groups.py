"""Commands: groups and channels, their profiles, members, roles and links."""

from __future__ import annotations

import copy
from typing import Any

from . import _records as rec
from ._cmd_messages import contact_conn, member_conns
from ._context import Args, CoreContext, json_object, parse_int
from ._errors import chat_error, command_error, store_error
from ._grammar import CommandGroup
from ._rcv_groups import join_invited_group
from ._store import GroupRow, LinkRow, MemberRow, UserRow

__all__ = ["COMMANDS", "broadcast"]

JSON = dict[str, Any]

#: The commands of this module, in matching order.
COMMANDS = CommandGroup("groups")

_MAX_LINK_ROLE = "member"


@COMMANDS.command("/_group <userId:int>[ incognito=<incognito:onoff>] <profile:json>")
def new_group(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    profile = _group_profile_arg(ctx, a["profile"])
    g = _create_group(ctx, user, profile, a["incognito"] == "on")
    return {
        "type": "groupCreated",
        "user": ctx.user_json(user.user_id),
        "groupInfo": ctx.group_json(g),
    }


def _group_profile_arg(ctx: CoreContext, text: str | None) -> JSON:
    profile = json_object(text, "GroupProfile")
    if not isinstance(profile.get("displayName"), str) or not profile["displayName"]:
        raise command_error("GroupProfile: displayName expected")
    ctx.valid_display_name(profile["displayName"])
    profile.setdefault("fullName", "")
    decoded: JSON = ctx.core_profile.group_profile(profile)
    return decoded


def _create_group(ctx: CoreContext, user: UserRow, profile: JSON, incognito: bool) -> GroupRow:
    incognito_id = ctx.incognito_profile(user).profile_id if incognito else None
    return ctx.new_group_row(
        user,
        profile,
        net_id=ctx.random_id(16),
        role="owner",
        status="creator",
        incognito_id=incognito_id,
    )


@COMMANDS.command(
    "/_public group <userId:int>[ incognito=<incognito:onoff>] <relays:ids> <profile:json>",
    "/_public group <userId:int>[ incognito=<incognito:onoff>] <profile:json>",
)
def new_public_group(ctx: CoreContext, a: Args) -> JSON:
    """Create a channel: a group whose members are not introduced to each other.

    The simulated network has no chat relays: the relay IDs are accepted and ignored, and
    subscribers connect to the owner directly.
    """
    user = ctx.user_by_id(a["userId"])
    profile = _group_profile_arg(ctx, a["profile"])
    g = _create_group(ctx, user, profile, a["incognito"] == "on")
    g.direct = False
    link = ctx.new_link(user, "group", "channel", group_id=g.group_id)
    link.role = "observer"
    g.link_id = link.link_id
    pub: JSON = profile["publicGroup"] if isinstance(profile.get("publicGroup"), dict) else {}
    record: JSON = {
        "groupType": "channel",
        "groupLink": link.short,
        "publicGroupId": ctx.random_id(16),
    }
    record.update({k: v for k, v in pub.items() if k not in ("groupLink", "publicGroupId")})
    g.profile["publicGroup"] = record
    return {
        "type": "publicGroupCreated",
        "user": ctx.user_json(user.user_id),
        "groupInfo": ctx.group_json(g),
        "groupLink": rec.group_link(link),
        "groupRelays": [],
    }


def _require_role(ctx: CoreContext, g: GroupRow, role: str) -> MemberRow:
    me = ctx.membership(g)
    if me.status not in ("creator", "connected", "complete") or not rec.role_at_least(
        me.role, role
    ):
        raise chat_error("groupUserRole", groupInfo=ctx.group_json(g), requiredRole=role)
    return me


def _members_arg(ctx: CoreContext, g: GroupRow, ids: str | None) -> list[MemberRow]:
    out = []
    for text in (ids or "").split(","):
        gm_id = parse_int(text)
        m = ctx.db.members.get(gm_id)
        if m is None or m.group_id != g.group_id or m.category == "user":
            raise store_error("groupMemberNotFound", groupMemberId=gm_id)
        out.append(m)
    return out


def broadcast(
    ctx: CoreContext, g: GroupRow, body: JSON, *, also: list[MemberRow] | None = None
) -> None:
    """Send ``body`` to every connected member of ``g`` (and to ``also``, who may be leaving)."""
    conns = member_conns(ctx, g)
    for m in also or []:
        conn = ctx.db.conns.get(m.conn_id or 0)
        if conn is not None and conn not in conns and conn.peer is not None:
            conns.append(conn)
    for conn in conns:
        ctx.send_on(conn, body)


def _snd_event(ctx: CoreContext, user: UserRow, g: GroupRow, event: JSON) -> None:
    ctx.new_item(
        user, "group", g.group_id, "groupSnd", {"type": "sndGroupEvent", "sndGroupEvent": event}
    )


@COMMANDS.command("/_group_profile #<groupId:int> <profile:json>")
def update_group_profile(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    g = ctx.get_group(user, parse_int(a["groupId"]))
    profile = _group_profile_arg(ctx, a["profile"])
    _require_role(ctx, g, "owner")
    before = ctx.group_json(g)
    g.profile = profile
    g.updated_at = ctx.ts()
    _snd_event(ctx, user, g, {"type": "groupUpdated", "groupProfile": copy.deepcopy(profile)})
    broadcast(ctx, g, {"t": "x.grp.info", "groupProfile": copy.deepcopy(profile)})
    return {
        "type": "groupUpdated",
        "user": ctx.user_json(user.user_id),
        "fromGroup": before,
        "toGroup": ctx.group_json(g),
        "msgSigned": False,
    }


@COMMANDS.command("/_members #<groupId:int>")
def list_members(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    g = ctx.get_group(user, parse_int(a["groupId"]))
    members = [ctx.member_json(m) for m in ctx.db.group_members(g.group_id) if m.category != "user"]
    return {
        "type": "groupMembers",
        "user": ctx.user_json(user.user_id),
        "group": {"groupInfo": ctx.group_json(g), "members": members},
    }


@COMMANDS.command("/_member role #<groupId:int> <ids:ids> <role:role>")
def member_role(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    g = ctx.get_group(user, parse_int(a["groupId"]))
    role = a["role"] or "member"
    targets = _members_arg(ctx, g, a["ids"])
    me = _require_role(ctx, g, "admin")
    needed = "owner" if role == "owner" else "admin"
    for m in targets:
        if rec.role_at_least(m.role, "owner") or rec.role_at_least(role, "owner"):
            needed = "owner"
    if not rec.role_at_least(me.role, needed):
        raise chat_error("groupUserRole", groupInfo=ctx.group_json(g), requiredRole=needed)
    for m in targets:
        m.role = role
        m.updated_at = ctx.ts()
        _snd_event(
            ctx,
            user,
            g,
            {
                "type": "memberRole",
                "groupMemberId": m.group_member_id,
                "profile": rec.profile(ctx.db.profiles[m.profile_id]),
                "role": role,
            },
        )
        broadcast(ctx, g, {"t": "x.grp.mem.role", "memberId": m.member_id, "role": role}, also=[m])
    return {
        "type": "membersRoleUser",
        "user": ctx.user_json(user.user_id),
        "groupInfo": ctx.group_json(g),
        "members": [ctx.member_json(m) for m in targets],
        "toRole": role,
        "msgSigned": False,
    }


@COMMANDS.command("/_remove #<groupId:int> <ids:ids>[ messages=<messages:onoff>]")
def remove_members(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    g = ctx.get_group(user, parse_int(a["groupId"]))
    targets = _members_arg(ctx, g, a["ids"])
    me = _require_role(ctx, g, "admin")
    for m in targets:
        if rec.role_at_least(m.role, "owner") and not rec.role_at_least(me.role, "owner"):
            raise chat_error("groupUserRole", groupInfo=ctx.group_json(g), requiredRole="owner")
    with_messages = a["messages"] == "on"
    for m in targets:
        broadcast(
            ctx,
            g,
            {"t": "x.grp.mem.del", "memberId": m.member_id, "withMessages": with_messages},
            also=[m],
        )
        m.status = "removed"
        m.updated_at = ctx.ts()
        _snd_event(
            ctx,
            user,
            g,
            {
                "type": "memberDeleted",
                "groupMemberId": m.group_member_id,
                "profile": rec.profile(ctx.db.profiles[m.profile_id]),
            },
        )
        if with_messages:
            for item in ctx.db.chat_items("group", g.group_id):
                if item.sender_member_id == m.group_member_id:
                    item.deleted = {
                        "type": "deleted",
                        "deletedTs": ctx.ts(),
                        "chatType": "group",
                    }
    return {
        "type": "userDeletedMembers",
        "user": ctx.user_json(user.user_id),
        "groupInfo": ctx.group_json(g),
        "members": [ctx.member_json(m) for m in targets],
        "withMessages": with_messages,
        "msgSigned": False,
    }


@COMMANDS.command("/_leave #<groupId:int>")
def leave_group(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    g = ctx.get_group(user, parse_int(a["groupId"]))
    me = ctx.membership(g)
    if not rec.current_member(me):
        raise chat_error("groupMemberUserRemoved")
    broadcast(ctx, g, {"t": "x.grp.leave"})
    me.status = "left"
    _snd_event(ctx, user, g, {"type": "userLeft"})
    return {
        "type": "leftMemberUser",
        "user": ctx.user_json(user.user_id),
        "groupInfo": ctx.group_json(g),
    }


@COMMANDS.command("/_join #<groupId:int>")
def join_group(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    g = ctx.get_group(user, parse_int(a["groupId"]))
    me = ctx.membership(g)
    if me.status != "invited":
        raise store_error("groupInvitationNotFound")
    join_invited_group(ctx, user, g)
    host = ctx.db.members.get(g.host_member_id or 0)
    out: JSON = {
        "type": "userAcceptedGroupSent",
        "user": ctx.user_json(user.user_id),
        "groupInfo": ctx.group_json(g),
    }
    if host is not None and host.member_contact_id in ctx.db.contacts:
        out["hostContact"] = ctx.contact_json(ctx.db.contacts[host.member_contact_id or 0])
    return out


@COMMANDS.command("/_add #<groupId:int> <contactId:int> <role:role>")
def add_member(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    g = ctx.get_group(user, parse_int(a["groupId"]))
    c = ctx.get_contact(user, parse_int(a["contactId"]))
    role = a["role"] or "member"
    me = _require_role(ctx, g, "admin")
    if not rec.role_at_least(me.role, role):
        raise chat_error("groupUserRole", groupInfo=ctx.group_json(g), requiredRole=role)
    conn = contact_conn(ctx, c.contact_id)
    if conn is None or conn.status != "ready":
        raise chat_error("contactNotReady", contact=ctx.contact_json(c))
    for m in ctx.db.group_members(g.group_id):
        if m.member_contact_id == c.contact_id and rec.current_member(m):
            raise chat_error("groupDuplicateMember", contactName=c.local_display_name)
    m = ctx.new_member(
        user,
        g.group_id,
        ctx.random_id(12),
        role,
        "invitee",
        "invited",
        ctx.db.profiles[c.profile_id],
        invited_by={"type": "user"},
        member_contact_id=c.contact_id,
    )
    ctx.send_on(
        conn,
        {
            "t": "x.grp.inv",
            "groupProfile": copy.deepcopy(g.profile),
            "netId": g.net_id,
            "memberId": m.member_id,
            "role": role,
            "fromMember": ctx.member_info(me),
            "direct": g.direct,
        },
    )
    return {
        "type": "sentGroupInvitation",
        "user": ctx.user_json(user.user_id),
        "groupInfo": ctx.group_json(g),
        "contact": ctx.contact_json(c),
        "member": ctx.member_json(m),
    }


def _group_link(ctx: CoreContext, g: GroupRow) -> LinkRow:
    if g.link_id is None or g.link_id not in ctx.db.links:
        raise store_error("groupLinkNotFound", groupInfo=ctx.group_json(g))
    return ctx.db.links[g.link_id]


def _link_role(ctx: CoreContext, g: GroupRow, role: str) -> str:
    if not rec.role_at_least(_MAX_LINK_ROLE, role):
        raise chat_error("groupMemberInitialRole", groupInfo=ctx.group_json(g), initialRole=role)
    return role


@COMMANDS.command("/_create link #<groupId:int>[ <role:role>]")
def create_group_link(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    g = ctx.get_group(user, parse_int(a["groupId"]))
    _require_role(ctx, g, "admin")
    role = _link_role(ctx, g, a["role"] or "member")
    if g.link_id is not None:
        raise store_error("duplicateGroupLink", groupInfo=ctx.group_json(g))
    link = ctx.new_link(user, "group", "group" if g.direct else "channel", group_id=g.group_id)
    link.role = role
    g.link_id = link.link_id
    return {
        "type": "groupLinkCreated",
        "user": ctx.user_json(user.user_id),
        "groupInfo": ctx.group_json(g),
        "groupLink": rec.group_link(link),
    }


@COMMANDS.command("/_set link role #<groupId:int> <role:role>")
def set_group_link_role(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    g = ctx.get_group(user, parse_int(a["groupId"]))
    link = _group_link(ctx, g)
    link.role = _link_role(ctx, g, a["role"] or "member")
    return {
        "type": "groupLink",
        "user": ctx.user_json(user.user_id),
        "groupInfo": ctx.group_json(g),
        "groupLink": rec.group_link(link),
    }


@COMMANDS.command("/_delete link #<groupId:int>")
def delete_group_link(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    g = ctx.get_group(user, parse_int(a["groupId"]))
    link = _group_link(ctx, g)
    ctx.delete_link(link)
    g.link_id = None
    return {
        "type": "groupLinkDeleted",
        "user": ctx.user_json(user.user_id),
        "groupInfo": ctx.group_json(g),
    }


@COMMANDS.command("/_get link #<groupId:int>")
def get_group_link(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    g = ctx.get_group(user, parse_int(a["groupId"]))
    return {
        "type": "groupLink",
        "user": ctx.user_json(user.user_id),
        "groupInfo": ctx.group_json(g),
        "groupLink": rec.group_link(_group_link(ctx, g)),
    }
