"""Commands: chats of any kind: custom data, deletion, information, the lists of contacts and
groups."""

from __future__ import annotations

from typing import Any

from . import _records as rec
from ._cmd_groups import broadcast
from ._cmd_messages import contact_conn
from ._context import Args, CoreContext, json_arg, parse_int
from ._errors import chat_error, command_error, store_error
from ._grammar import CommandGroup
from ._store import UserRow

__all__ = ["COMMANDS"]

JSON = dict[str, Any]

#: The commands of this module, in matching order.
COMMANDS = CommandGroup("chats")


@COMMANDS.command("/_set custom <ref:chatref>[ <data:json>]")
def set_custom_data(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    kind, chat_id, _ = ctx.parse_ref(a["ref"] or "")
    data = None
    if a["data"] is not None:
        data = json_arg(a["data"], "custom data")
        if not isinstance(data, dict):
            raise command_error("custom data must be a JSON object")
    if kind == "direct":
        ctx.get_contact(user, chat_id).custom_data = data
    elif kind == "group":
        ctx.get_group(user, chat_id).custom_data = data
    else:
        raise command_error("custom data is set on contacts and groups")
    return {"type": "cmdOk", "user_": ctx.user_json(user.user_id)}


@COMMANDS.command("/_delete <ref:chatref>[ <mode:delmode>][ notify=<notify:onoff>]")
def delete_chat(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    kind, chat_id, _ = ctx.parse_ref(a["ref"] or "")
    mode = a["mode"] or "full"
    notify = a["notify"] != "off"
    if kind == "direct":
        return _delete_contact(ctx, user, chat_id, mode, notify)
    if kind == "group":
        return _delete_group(ctx, user, chat_id, mode, notify)
    if kind == "contactConnection":
        conn = ctx.db.conns.get(chat_id)
        if conn is None or conn.user_id != user.user_id or conn.pending is None:
            raise store_error("pendingConnectionNotFound", connId=chat_id)
        pcc = rec.pending_connection(conn)
        if conn.pending_target is not None and conn.pending == "invitation":
            ctx.network.unregister_link([conn.pending_target])
        del ctx.db.conns[conn.conn_id]
        return {
            "type": "contactConnectionDeleted",
            "user": ctx.user_json(user.user_id),
            "connection": pcc,
        }
    raise command_error(f"{a['ref']}: cannot be deleted")


def _delete_contact(
    ctx: CoreContext, user: UserRow, contact_id: int, mode: str, notify: bool
) -> JSON:
    c = ctx.get_contact(user, contact_id)
    for item in ctx.db.chat_items("direct", contact_id):
        ctx.db.remove_item(item.item_id)
    if mode == "messages":
        return {
            "type": "contactDeleted",
            "user": ctx.user_json(user.user_id),
            "contact": ctx.contact_json(c),
        }
    conn = contact_conn(ctx, contact_id)
    if conn is not None and notify and conn.status == "ready" and c.status == "active":
        ctx.send_on(conn, {"t": "x.direct.del"})
    if conn is not None:
        conn.status = "deleted"
    c.status = "deletedByUser"
    out = ctx.contact_json(c)
    if mode == "full":
        if conn is not None:
            ctx.db.conns.pop(conn.conn_id, None)
        del ctx.db.contacts[contact_id]
    else:
        c.chat_deleted = True
    return {"type": "contactDeleted", "user": ctx.user_json(user.user_id), "contact": out}


def _delete_group(ctx: CoreContext, user: UserRow, group_id: int, mode: str, notify: bool) -> JSON:
    g = ctx.get_group(user, group_id)
    me = ctx.membership(g)
    if mode == "messages":
        for item in ctx.db.chat_items("group", group_id):
            ctx.db.remove_item(item.item_id)
        return {
            "type": "groupDeletedUser",
            "user": ctx.user_json(user.user_id),
            "groupInfo": ctx.group_json(g),
            "msgSigned": False,
            "localDeletion": True,
        }
    current = me.status in ("creator", "connected", "complete", "accepted", "announced")
    if current and not rec.role_at_least(me.role, "owner"):
        raise chat_error("groupUserRole", groupInfo=ctx.group_json(g), requiredRole="owner")
    if current and notify:
        broadcast(ctx, g, {"t": "x.grp.del"})
    out = ctx.group_json(g)
    for item in ctx.db.chat_items("group", group_id):
        ctx.db.remove_item(item.item_id)
    for m in ctx.db.group_members(group_id):
        if m.conn_id is not None:
            ctx.db.conns.pop(m.conn_id, None)
        del ctx.db.members[m.group_member_id]
    if g.link_id is not None and g.link_id in ctx.db.links:
        ctx.delete_link(ctx.db.links[g.link_id])
    del ctx.db.groups[group_id]
    return {
        "type": "groupDeletedUser",
        "user": ctx.user_json(user.user_id),
        "groupInfo": out,
        "msgSigned": False,
        "localDeletion": not current,
    }


@COMMANDS.command("/_info <ref:chatref>")
def chat_info(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    kind, chat_id, _ = ctx.parse_ref(a["ref"] or "")
    if kind == "direct":
        c = ctx.get_contact(user, chat_id)
        out: JSON = {
            "type": "contactInfo",
            "user": ctx.user_json(user.user_id),
            "contact": ctx.contact_json(c),
        }
        conn = contact_conn(ctx, chat_id)
        if conn is not None and conn.custom_user_profile_id is not None:
            out["customUserProfile"] = rec.profile(ctx.db.profiles[conn.custom_user_profile_id])
        return out
    if kind == "group":
        g = ctx.get_group(user, chat_id)
        return {
            "type": "groupInfo",
            "user": ctx.user_json(user.user_id),
            "groupInfo": ctx.group_json(g),
        }
    raise command_error("/_info takes @contact or #group")


@COMMANDS.command("/_contacts <userId:int>")
def list_contacts(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    contacts = [
        ctx.contact_json(c)
        for c in ctx.db.contacts.values()
        if c.user_id == user.user_id and not c.is_user_contact and not c.chat_deleted
    ]
    return {"type": "contactsList", "user": ctx.user_json(user.user_id), "contacts": contacts}


@COMMANDS.command("/_groups <userId:int>[ @<contactId:int>][ <search:rest>]")
def list_groups(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    groups = [g for g in ctx.db.groups.values() if g.user_id == user.user_id]
    if a["contactId"] is not None:
        cid = parse_int(a["contactId"])
        groups = [
            g
            for g in groups
            if any(m.member_contact_id == cid for m in ctx.db.group_members(g.group_id))
        ]
    if a["search"]:
        needle = a["search"].lower()
        groups = [g for g in groups if needle in g.local_display_name.lower()]
    return {
        "type": "groupsList",
        "user": ctx.user_json(user.user_id),
        "groups": [ctx.group_json(g) for g in groups],
    }
