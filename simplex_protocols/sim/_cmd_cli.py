"""Commands: the CLI's short and human forms, and the API commands a client commonly adds.

Programs written for ``simplex-chat -p`` use more of the core's parser than the toolkit does:
the short forms (``/u``, ``/ad``, ``/sa``, ``/da``, ``/gs``, ``/v``), the commands that act for
the active user (``/address``, ``/contacts``, ``/groups``), messages to a chat by name
(``@name text``, ``#group text``), reactions, forwarding, reading a user's chats, and aliases.
Each is the core's syntax from ``chatCommandP`` (``src/Simplex/Chat/Library/Commands.hs``), and
each answers with the core's response; the short forms run the same handlers as the API forms.
"""

from __future__ import annotations

import bisect
import copy
from typing import Any, Final

from . import _cmd_chats, _cmd_messages, _cmd_users
from . import _records as rec
from ._context import Args, CoreContext, json_arg, json_object, parse_int
from ._errors import command_error, store_error
from ._grammar import CommandGroup
from ._store import ItemRow, UserRow

__all__ = ["COMMANDS", "KNOWN_EMOJI", "MAX_MSG_REACTIONS"]

JSON = dict[str, Any]

#: The commands of this module, in matching order (after every API command: the core's parser
#: tries the forms by name, such as ``@name text``, near its end).
COMMANDS = CommandGroup("cli")

#: The emoji a reaction can be (``mrEmojiChar`` in ``Simplex.Chat.Protocol``): one character.
KNOWN_EMOJI: Final = frozenset("👍👎😀😂😢❤️🚀✅")

#: At most this many reactions of the user on one item (the core's ``maxMsgReactions``).
MAX_MSG_REACTIONS: Final = 3


def _for_active(handler: Any, *absent: str) -> Any:
    """A handler of an API command with ``<userId>``, run for the active user (the API form's
    other parameters ``absent``)."""

    def run(ctx: CoreContext, a: Args) -> JSON:
        args: Args = dict.fromkeys(absent)
        args.update(a)
        args["userId"] = str(ctx.active_user().user_id)
        result: JSON = handler(ctx, args)
        return result

    run.__name__ = f"{handler.__name__}_active_user"
    run.__doc__ = f"{handler.__name__}, for the active user."
    return run


def _unquote(name: str | None) -> str:
    text = name or ""
    return text[1:-1] if len(text) >= 2 and text[0] == "'" and text[-1] == "'" else text


# ---------------------------------------------------------------------------- users

COMMANDS.command("/u")(_cmd_users.show_active_user)


@COMMANDS.command("/user <name:dname>[ <password:rest>]", "/u <name:dname>[ <password:rest>]")
def set_active_user_by_name(ctx: CoreContext, a: Args) -> JSON:
    """``SetActiveUser``: make the user with this display name active."""
    name = _unquote(a["name"])
    for user in ctx.db.users.values():
        if user.local_display_name == name:
            ctx.db.active_user_id = user.user_id
            return {"type": "activeUser", "user": ctx.user_json(user.user_id)}
    raise store_error("userNotFoundByName", contactName=name)


@COMMANDS.command("/version", "/v")
def show_version(ctx: CoreContext, a: Args) -> JSON:
    """``ShowVersion``: the core's version, as the core this one behaves as reports it."""
    return ctx.core_profile.version_info()


# ---------------------------------------------------------------------------- address

COMMANDS.command("/address", "/ad")(_for_active(_cmd_users.create_address, "pq"))
COMMANDS.command("/show_address", "/sa")(_for_active(_cmd_users.show_address))
COMMANDS.command("/delete_address", "/da")(_for_active(_cmd_users.delete_address))


# ---------------------------------------------------------------------------- chats

COMMANDS.command("/contacts")(_for_active(_cmd_chats.list_contacts))


@COMMANDS.command(
    "/groups[ @<contact:dname>][ <search:rest>]", "/gs[ @<contact:dname>][ <search:rest>]"
)
def list_groups_of_active_user(ctx: CoreContext, a: Args) -> JSON:
    """``ListGroups``: the active user's groups, shared with a contact (by name) or matching a
    search."""
    user = ctx.active_user()
    contact_id: str | None = None
    if a["contact"] is not None:
        contact_id = str(_contact_by_name(ctx, user, _unquote(a["contact"])).contact_id)
    return _cmd_chats.list_groups(
        ctx, {"userId": str(user.user_id), "contactId": contact_id, "search": a["search"]}
    )


def _contact_by_name(ctx: CoreContext, user: UserRow, name: str) -> Any:
    for c in ctx.db.contacts.values():
        if (
            c.user_id == user.user_id
            and not c.is_user_contact
            and not c.chat_deleted
            and c.local_display_name == name
        ):
            return c
    raise store_error("contactNotFoundByName", contactName=name)


def _group_by_name(ctx: CoreContext, user: UserRow, name: str) -> Any:
    for g in ctx.db.groups.values():
        if g.user_id == user.user_id and g.local_display_name == name:
            return g
    raise store_error("groupNotFoundByName", groupName=name)


@COMMANDS.command("/_read user <userId:int>")
def read_user(ctx: CoreContext, a: Args) -> JSON:
    """``APIUserRead``: every unread item of every chat of the user becomes read."""
    return _read_all(ctx, ctx.user_by_id(a["userId"]))


@COMMANDS.command("/read user")
def read_active_user(ctx: CoreContext, a: Args) -> JSON:
    """``UserRead``: :func:`read_user` for the active user."""
    return _read_all(ctx, ctx.active_user())


def _read_all(ctx: CoreContext, user: UserRow) -> JSON:
    chats = [
        ("direct", c.contact_id) for c in ctx.db.contacts.values() if c.user_id == user.user_id
    ]
    chats += [("group", g.group_id) for g in ctx.db.groups.values() if g.user_id == user.user_id]
    chats += [
        ("local", f.note_folder_id) for f in ctx.db.folders.values() if f.user_id == user.user_id
    ]
    for kind, chat_id in chats:
        index = ctx.db.chat_index(kind, chat_id)
        if index is None:
            continue
        for key in list(index.unread_keys):
            ctx.db.set_item_status(
                index.items[bisect.bisect_left(index.keys, key)], {"type": "rcvRead"}
            )
    return {"type": "cmdOk", "user_": ctx.user_json(user.user_id)}


@COMMANDS.command(
    "/_set alias @<contactId:int>[ <alias:rest>]",
    "/_set alias #<groupId:int>[ <alias:rest>]",
    "/_set alias :<connId:int>[ <alias:rest>]",
)
def set_alias(ctx: CoreContext, a: Args) -> JSON:
    """``APISetContactAlias`` / ``APISetGroupAlias`` / ``APISetConnectionAlias``: the chat's
    local alias (no text: none)."""
    user = ctx.active_user()
    alias = a["alias"] or ""
    if a.get("contactId") is not None:
        c = ctx.get_contact(user, parse_int(a["contactId"]))
        ctx.db.profiles[c.profile_id].local_alias = alias
        return {
            "type": "contactAliasUpdated",
            "user": ctx.user_json(user.user_id),
            "toContact": ctx.contact_json(c),
        }
    if a.get("groupId") is not None:
        g = ctx.get_group(user, parse_int(a["groupId"]))
        g.local_alias = alias
        return {
            "type": "groupAliasUpdated",
            "user": ctx.user_json(user.user_id),
            "toGroup": ctx.group_json(g),
        }
    conn_id = parse_int(a.get("connId"))
    conn = ctx.db.conns.get(conn_id)
    if conn is None or conn.user_id != user.user_id or conn.pending is None:
        raise store_error("pendingConnectionNotFound", connId=conn_id)
    conn.local_alias = alias
    return {
        "type": "connectionAliasUpdated",
        "user": ctx.user_json(user.user_id),
        "toConnection": rec.pending_connection(conn),
    }


# ---------------------------------------------------------------------------- messages


def _message_content(text: str | None) -> JSON:
    """``msgTextP``: a MsgContent in JSON, else the text of a text message."""
    raw = text or ""
    if raw[:1] == "{":
        try:
            value = json_arg(raw, "MsgContent")
        except Exception:
            value = None
        if isinstance(value, dict) and isinstance(value.get("type"), str):
            return value
    return {"type": "text", "text": raw}


@COMMANDS.command("@<name:dname> <text:rest>")
def send_to_contact_by_name(ctx: CoreContext, a: Args) -> JSON:
    """``SendMessage`` to a contact, by its local display name."""
    user = ctx.active_user()
    c = _contact_by_name(ctx, user, _unquote(a["name"]))
    return _send_named(ctx, f"@{c.contact_id}", _message_content(a["text"]))


@COMMANDS.command("#<name:dname> <text:rest>")
def send_to_group_by_name(ctx: CoreContext, a: Args) -> JSON:
    """``SendMessage`` to a group, by its local display name."""
    user = ctx.active_user()
    g = _group_by_name(ctx, user, _unquote(a["name"]))
    return _send_named(ctx, f"#{g.group_id}", _message_content(a["text"]))


def _send_named(ctx: CoreContext, ref: str, mc: JSON) -> JSON:
    return _cmd_messages.send_composed(ctx, ref, [{"msgContent": mc}])


@COMMANDS.command("/_forward <toRef:chatref> <fromRef:chatref> <ids:ids>[ ttl=<ttl:ttl>]")
def forward_items(ctx: CoreContext, a: Args) -> JSON:
    """``APIForwardChatItems``: the items of one chat sent again to another, each marked with
    where it was forwarded from (``meta.itemForwarded``)."""
    user = ctx.active_user()
    from_kind, from_id, _ = ctx.parse_ref(a["fromRef"] or "")
    if from_kind == "direct":
        source_name = ctx.get_contact(user, from_id).local_display_name
    elif from_kind == "group":
        source_name = str(ctx.get_group(user, from_id).profile.get("displayName", ""))
    elif from_kind != "local":
        raise command_error("not supported")
    messages: list[JSON] = []
    origins: list[JSON | None] = []
    for item_id in (int(x) for x in (a["ids"] or "").split(",")):
        item = ctx.db.items.get(item_id)
        if item is None or (item.chat_type, item.chat_id) != (from_kind, from_id):
            raise store_error("chatItemNotFound", itemId=item_id)
        mc = item.content.get("msgContent")
        if item.deleted is not None or not isinstance(mc, dict):
            continue
        messages.append({"msgContent": copy.deepcopy(mc)})
        origins.append(_forwarded_from(item, from_kind, from_id, source_name))
    if not messages:
        raise command_error("no items to forward")
    resp = _cmd_messages.send_composed(ctx, a["toRef"] or "", messages, ttl=a["ttl"], forward=True)
    items = [ctx.db.items[aci["chatItem"]["meta"]["itemId"]] for aci in resp["chatItems"]]
    for item, origin in zip(items, origins, strict=True):
        item.forwarded = origin
    resp["chatItems"] = [ctx.a_item(i) for i in items]
    return resp


def _forwarded_from(item: ItemRow, kind: str, chat_id: int, name: str) -> JSON | None:
    """``CIForwardedFrom``: an item forwarded before keeps where it first came from; notes
    are forwarded with none."""
    if item.forwarded is not None and item.forwarded.get("type") != "unknown":
        return copy.deepcopy(item.forwarded)
    if kind == "local":
        return None
    direction = "snd" if item.dir_type.endswith("Snd") else "rcv"
    out: JSON = {"type": "contact" if kind == "direct" else "group", "chatName": name}
    out["msgDir"] = direction
    out["contactId" if kind == "direct" else "groupId"] = chat_id
    out["chatItemId"] = item.item_id
    return out


# ---------------------------------------------------------------------------- reactions


def reaction_arg(text: str | None) -> JSON:
    """A ``MsgReaction`` the core knows (``knownReaction``): an emoji of :data:`KNOWN_EMOJI`.

    Raises:
        ChatFailure: ``commandError`` for anything else, as the core's parser refuses it.
    """
    reaction = json_object(text, "MsgReaction")
    emoji = reaction.get("emoji")
    if reaction.get("type") != "emoji" or not isinstance(emoji, str) or emoji not in KNOWN_EMOJI:
        raise command_error("unknown MsgReaction")
    return {"type": "emoji", "emoji": emoji}


@COMMANDS.command("/_reaction <ref:chatref> <itemId:int> <on:onoff> <reaction:json>")
def react(ctx: CoreContext, a: Args) -> JSON:
    """``APIChatItemReaction``: add or remove the user's reaction to a message, and tell the
    chat's peers."""
    reaction = reaction_arg(a["reaction"])
    add = a["on"] == "on"
    user = ctx.active_user()
    kind, chat_id, scope = ctx.parse_ref(a["ref"] or "")
    if kind == "direct":
        ctx.get_contact(user, chat_id)
    elif kind == "group" and scope is None:
        ctx.get_group(user, chat_id)
    else:
        raise command_error("not supported")
    item_id = parse_int(a["itemId"])
    item = ctx.db.items.get(item_id)
    if (
        item is None
        or (item.chat_type, item.chat_id) != (kind, chat_id)
        or item.content.get("type") not in ("sndMsgContent", "rcvMsgContent")
        or item.deleted is not None
    ):
        raise store_error("chatItemNotFound", itemId=item_id)
    if item.shared_msg_id is None:
        raise command_error("reaction not possible - no shared item ID")
    emoji = reaction["emoji"]
    mine = [k for k, r in item.reactions.items() if r["userReacted"]]
    if (emoji in mine) == add:
        raise command_error("reaction already " + ("added" if add else "removed"))
    if add and len(mine) >= MAX_MSG_REACTIONS:
        raise command_error("too many reactions")
    set_reaction(item, reaction, None, add)
    body: JSON = {
        "t": "x.msg.react",
        "sharedMsgId": item.shared_msg_id,
        "reaction": reaction,
        "add": add,
    }
    if kind == "group":
        g = ctx.db.groups[chat_id]
        body["memberId"] = (
            ctx.membership(g).member_id
            if item.dir_type == "groupSnd"
            else ctx.db.members[item.sender_member_id].member_id
            if item.sender_member_id is not None
            else None
        )
        conns = _cmd_messages.member_conns(ctx, g)
    else:
        conn = _cmd_messages.contact_conn(ctx, chat_id)
        conns = [conn] if conn is not None and conn.status == "ready" else []
    for conn in conns:
        ctx.send_on(conn, body)
    direction: JSON = {"type": "directSnd" if kind == "direct" else "groupSnd"}
    return {
        "type": "chatItemReaction",
        "user": ctx.user_json(user.user_id),
        "added": add,
        "reaction": reaction_json(ctx, item, direction, reaction),
    }


def set_reaction(item: ItemRow, reaction: JSON, reactor: str | None, add: bool) -> None:
    """Add or remove one reaction of the user (``reactor`` ``None``) or of a peer."""
    emoji = str(reaction["emoji"])
    entry = item.reactions.get(emoji)
    if entry is None:
        if not add:
            return
        entry = item.reactions[emoji] = {"reaction": reaction, "userReacted": False, "peers": []}
    if reactor is None:
        entry["userReacted"] = add
    elif add and reactor not in entry["peers"]:
        entry["peers"].append(reactor)
    elif not add and reactor in entry["peers"]:
        entry["peers"].remove(reactor)
    if not entry["userReacted"] and not entry["peers"]:
        del item.reactions[emoji]


def reaction_json(ctx: CoreContext, item: ItemRow, direction: JSON, reaction: JSON) -> JSON:
    """``ACIReaction``: the chat, who reacted (``chatDir``), the item and the reaction."""
    return {
        "chatInfo": rec.chat_info(ctx.db, item.chat_type, item.chat_id),
        "chatReaction": {
            "chatDir": direction,
            "chatItem": rec.chat_item(ctx.db, item, ctx.now()),
            "sentAt": ctx.ts(),
            "reaction": copy.deepcopy(reaction),
        },
    }
