"""Commands: sending, editing and deleting messages; the statuses of sent messages.

:func:`post_message` is how every sent message is made (a welcome message too): the sent item,
then the message to each of the chat's peers.
"""

from __future__ import annotations

import copy
from typing import Any

from simplex_protocols._framing import MSG_UPDATE_ENVELOPE_BYTES
from simplex_protocols._wire import chat_message_size, json_size
from simplex_protocols.coretext import mentioned_names
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES

from . import _records as rec
from ._context import Args, CoreContext, json_arg, json_object, parse_int
from ._delivery import Delivery
from ._errors import chat_error, command_error, store_error
from ._grammar import CommandGroup
from ._store import ConnRow, GroupRow, ItemRow, MemberRow, UserRow

__all__ = [
    "COMMANDS",
    "MAX_RCV_MENTIONS",
    "MAX_SND_MENTIONS",
    "check_size",
    "contact_conn",
    "member_conns",
    "mention_json",
    "on_delivered",
    "on_sent",
    "post_message",
    "quote_json",
    "send_composed",
]

JSON = dict[str, Any]

#: At most this many members can be mentioned in one message (the core's maxSndMentions).
MAX_SND_MENTIONS = 3

#: At most this many mentions of a received message are kept (the core's maxRcvMentions).
MAX_RCV_MENTIONS = 5

#: The commands of this module, in matching order.
COMMANDS = CommandGroup("messages")


def check_size(mc: JSON, *, update: bool = False, extra: int = 0) -> None:
    """Refuse a message whose encoded JSON exceeds 15,602 bytes (``errorStore largeMsg``)."""
    text = mc.get("text", "")
    text = text if isinstance(text, str) else ""
    if update:
        size = chat_message_size(text, envelope_bytes=MSG_UPDATE_ENVELOPE_BYTES) + extra
    else:
        size = chat_message_size(text) + extra
    others = {k: v for k, v in mc.items() if k not in ("type", "text")}
    if others:
        size += json_size(others)
    if size > MAX_CHAT_MESSAGE_BYTES:
        raise store_error("largeMsg")


def contact_conn(ctx: CoreContext, contact_id: int) -> ConnRow | None:
    """The connection of a contact (``None``: it has none)."""
    c = ctx.db.contacts.get(contact_id)
    if c is None or c.conn_id is None:
        return None
    return ctx.db.conns.get(c.conn_id)


def member_conns(ctx: CoreContext, g: GroupRow, *, exclude: int | None = None) -> list[ConnRow]:
    """Connections to the current, connected members of a group."""
    out = []
    for m in ctx.db.group_members(g.group_id):
        if m.category == "user" or m.group_member_id == exclude:
            continue
        if m.status not in ("connected", "complete") or m.conn_id is None:
            continue
        conn = ctx.db.conns.get(m.conn_id)
        if conn is not None and conn.peer is not None:
            out.append(conn)
    return out


def _send_target(ctx: CoreContext, user: UserRow, ref: str) -> tuple[str, int, bool]:
    kind, chat_id, scope = ctx.parse_ref(ref.split("(as_group")[0])
    as_group = "(as_group=on)" in ref
    if scope is not None and scope.startswith("(_support"):
        raise command_error("member support chats are not supported by the simulator")
    if kind == "direct":
        c = ctx.get_contact(user, chat_id)
        if c.status != "active":
            raise chat_error("contactNotActive", contact=ctx.contact_json(c))
        conn = contact_conn(ctx, chat_id)
        if conn is None or conn.status != "ready":
            raise chat_error("contactNotReady", contact=ctx.contact_json(c))
        return kind, chat_id, False
    if kind == "group":
        g = ctx.get_group(user, chat_id)
        m = ctx.membership(g)
        if m.status not in ("connected", "complete", "creator"):
            raise chat_error("groupNotJoined", groupInfo=ctx.group_json(g))
        if not rec.role_at_least(m.role, "author"):
            raise chat_error("groupUserRole", groupInfo=ctx.group_json(g), requiredRole="author")
        return kind, chat_id, as_group
    if kind == "local":
        if chat_id not in ctx.db.folders or ctx.db.folders[chat_id].user_id != user.user_id:
            raise store_error("noteFolderNotFound", noteFolderId=chat_id)
        return kind, chat_id, False
    raise command_error(f"cannot send to {ref}")


def _quote_for(ctx: CoreContext, chat_type: str, chat_id: int, item_id: Any) -> ItemRow:
    if not isinstance(item_id, int) or isinstance(item_id, bool):
        raise store_error("invalidQuote")
    item = ctx.db.items.get(item_id)
    if (
        item is None
        or item.chat_type != chat_type
        or item.chat_id != chat_id
        or item.content.get("type") not in ("sndMsgContent", "rcvMsgContent")
    ):
        raise store_error("invalidQuote")
    return item


def quote_json(ctx: CoreContext, item: ItemRow) -> JSON:
    """The ``quotedItem`` of an item that quotes ``item`` of the same chat."""
    direction: JSON = {"type": item.dir_type}
    if item.dir_type == "groupRcv" and item.sender_member_id is not None:
        direction["groupMember"] = ctx.member_json(ctx.db.members[item.sender_member_id])
    out: JSON = {"chatDir": direction, "itemId": item.item_id}
    if item.shared_msg_id is not None:
        out["sharedMsgId"] = item.shared_msg_id
    out["sentAt"] = item.item_ts
    out["content"] = copy.deepcopy(item.content["msgContent"])
    return out


def mention_json(ctx: CoreContext, m: MemberRow) -> JSON:
    """A mention of member ``m``, as an item's ``mentions`` hold it."""
    ref: JSON = {
        "groupMemberId": m.group_member_id,
        "displayName": str(ctx.db.profiles[m.profile_id].profile.get("displayName", "")),
    }
    alias = ctx.db.profiles[m.profile_id].local_alias
    if alias:
        ref["localAlias"] = alias
    ref["memberRole"] = m.role
    return {"memberId": m.member_id, "memberRef": ref}


def post_message(
    ctx: CoreContext,
    user: UserRow,
    chat_type: str,
    chat_id: int,
    mc: JSON,
    *,
    quote: ItemRow | None = None,
    mentions: dict[str, MemberRow] | None = None,
    live: bool = False,
    ttl: int | None = None,
    as_group: bool = False,
    forward: bool = False,
) -> ItemRow:
    """Create a sent item and send the message to the chat's peers (``forward``: as a
    forwarded message, which the recipients see as forwarded from an unknown chat)."""
    dir_type = {"direct": "directSnd", "group": "groupSnd", "local": "localSnd"}[chat_type]
    shared = ctx.random_id() if chat_type != "local" else None
    timed = None
    if ttl is not None:
        timed = {"ttl": ttl, "deleteAt": rec.iso(ctx.network.clock.wall() + ttl)}
    item = ctx.new_item(
        user,
        chat_type,
        chat_id,
        dir_type,
        {"type": "sndMsgContent", "msgContent": copy.deepcopy(mc)},
        shared_msg_id=shared,
        live=True if live else None,
        quote=quote_json(ctx, quote) if quote is not None else None,
        mentions={n: mention_json(ctx, m) for n, m in (mentions or {}).items()},
        timed=timed,
        show_group_as_sender=as_group,
        status={"type": "sndSent", "sndProgress": "complete"} if chat_type == "local" else None,
    )
    if chat_type == "local":
        return item
    body: JSON = {
        "t": "x.msg.new",
        "sharedMsgId": shared,
        "content": copy.deepcopy(mc),
        "sentAt": item.item_ts,
    }
    if quote is not None:
        body["quote"] = _quote_wire(ctx, quote)
    if mentions:
        body["mentions"] = {n: m.member_id for n, m in mentions.items()}
    if live:
        body["live"] = True
    if ttl is not None:
        body["ttl"] = ttl
    if as_group:
        body["asGroup"] = True
    if forward:
        body["forward"] = True
    conns = _recipients(ctx, chat_type, chat_id)
    for conn in conns:
        ctx.send_on(conn, body, receipt=[item.item_id])
    if not conns:
        ctx.db.set_item_status(item, {"type": "sndSent", "sndProgress": "complete"})
    return item


def _quote_wire(ctx: CoreContext, quote: ItemRow) -> JSON:
    out: JSON = {
        "sharedMsgId": quote.shared_msg_id,
        "sentAt": quote.item_ts,
        "content": copy.deepcopy(quote.content["msgContent"]),
    }
    if quote.chat_type == "group":
        if quote.dir_type == "groupSnd":
            g = ctx.db.groups[quote.chat_id]
            out["memberId"] = ctx.membership(g).member_id
        elif quote.sender_member_id is not None:
            out["memberId"] = ctx.db.members[quote.sender_member_id].member_id
    return out


def _recipients(ctx: CoreContext, chat_type: str, chat_id: int) -> list[ConnRow]:
    if chat_type == "direct":
        conn = contact_conn(ctx, chat_id)
        return [conn] if conn is not None and conn.status == "ready" else []
    return member_conns(ctx, ctx.db.groups[chat_id])


def _composed(
    ctx: CoreContext, user: UserRow, a: Args, messages: list[Any], *, forward: bool = False
) -> JSON:
    kind, chat_id, as_group = _send_target(ctx, user, a["ref"] or "")
    live = a.get("live") == "on"
    ttl = None
    if a.get("ttl") not in (None, "default"):
        ttl = parse_int(a.get("ttl"))
    if not messages:
        raise command_error("no messages to send")
    prepared: list[tuple[JSON, ItemRow | None, dict[str, MemberRow]]] = []
    for msg in messages:
        if not isinstance(msg, dict) or not isinstance(msg.get("msgContent"), dict):
            raise command_error("ComposedMessage: msgContent expected")
        mc = msg["msgContent"]
        if not isinstance(mc.get("type"), str) or not isinstance(mc.get("text", ""), str):
            raise command_error("MsgContent: type and text expected")
        # The text alone is measured before its Markdown is read for mentions: a text over the
        # limit is refused without parsing it.
        check_size(mc)
        quote = None
        if msg.get("quotedItemId") is not None:
            quote = _quote_for(ctx, kind, chat_id, msg["quotedItemId"])
        mentions = _mentions(ctx, kind, chat_id, msg.get("mentions") or {}, mc)
        extra = json_size(_quote_wire(ctx, quote)) + 9 if quote is not None else 0
        if mentions:
            extra += json_size({n: m.member_id for n, m in mentions.items()}) + 12
        check_size(mc, extra=extra)
        prepared.append((mc, quote, mentions))
    items = [
        post_message(
            ctx,
            user,
            kind,
            chat_id,
            mc,
            quote=q,
            mentions=mn,
            live=live,
            ttl=ttl,
            as_group=as_group,
            forward=forward,
        )
        for mc, q, mn in prepared
    ]
    return {
        "type": "newChatItems",
        "user": ctx.user_json(user.user_id),
        "chatItems": [ctx.a_item(i) for i in items],
    }


def send_composed(
    ctx: CoreContext,
    ref: str,
    messages: list[Any],
    *,
    ttl: str | None = None,
    forward: bool = False,
) -> JSON:
    """Send ComposedMessages to a chat reference as ``/_send`` does (``newChatItems``)."""
    user = ctx.active_user()
    return _composed(ctx, user, {"ref": ref, "live": None, "ttl": ttl}, messages, forward=forward)


def _mentions(
    ctx: CoreContext, kind: str, chat_id: int, raw: Any, mc: JSON
) -> dict[str, MemberRow]:
    """The mentions of a sent or edited message, checked as the core checks them.

    The core reads the text's Markdown: a text without formatting keeps no mentions (they
    are dropped, not refused); otherwise every name must be a ``mention`` fragment of the
    text (a one-line text starting with ``/`` is one command and has none), at most 3,
    each a different member of the group (``errorStore invalidMention``).
    """
    if not isinstance(raw, dict):
        raise command_error("mentions must be an object")
    if not raw:
        return {}
    if kind != "group":
        raise store_error("invalidMention")
    for gm_id in raw.values():
        if not isinstance(gm_id, int) or isinstance(gm_id, bool):
            raise command_error("mentions: a group member ID (a number) for each name")
    text = mc.get("text", "")
    formatted = rec.MARKDOWN.parse(text) if isinstance(text, str) else None
    if not formatted:
        return {}
    names = set(mentioned_names(formatted))
    if len(raw) > MAX_SND_MENTIONS or not set(raw) <= names or len(set(raw.values())) != len(raw):
        raise store_error("invalidMention")
    out: dict[str, MemberRow] = {}
    for name, gm_id in raw.items():
        m = ctx.db.members.get(gm_id)
        if m is None or m.group_id != chat_id:
            raise store_error("groupMemberNotFound", groupMemberId=gm_id)
        out[str(name)] = m
    return out


@COMMANDS.command(
    "/_send <ref:sendref>[ live=<live:onoff>][ ttl=<ttl:ttl>][ sign=<sign:onoff>]"
    " json <messages:json>"
)
def send_messages(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    messages = json_arg(a["messages"], "ComposedMessage list")
    if isinstance(messages, dict):
        messages = [messages]
    if not isinstance(messages, list):
        raise command_error("a JSON list of ComposedMessage expected")
    return _composed(ctx, user, a, messages)


@COMMANDS.command(
    "/_send <ref:sendref>[ live=<live:onoff>][ ttl=<ttl:ttl>][ sign=<sign:onoff>] text <text:text>"
)
def send_text(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    return _composed(ctx, user, a, [{"msgContent": {"type": "text", "text": a["text"] or ""}}])


def _own_item(ctx: CoreContext, user: UserRow, ref: str, item_id: int) -> tuple[str, int, ItemRow]:
    kind, chat_id, _ = ctx.parse_ref(ref)
    if kind == "direct":
        ctx.get_contact(user, chat_id)
    elif kind == "group":
        ctx.get_group(user, chat_id)
    item = ctx.db.items.get(item_id)
    if item is None or item.chat_type != kind or item.chat_id != chat_id:
        raise store_error("chatItemNotFound", itemId=item_id)
    return kind, chat_id, item


@COMMANDS.command(
    "/_update item <ref:chatref> <itemId:int>[ live=<live:onoff>] json <updated:json>"
)
def update_item(ctx: CoreContext, a: Args) -> JSON:
    updated = json_object(a["updated"], "UpdatedMessage")
    if not isinstance(updated.get("msgContent"), dict):
        raise command_error("UpdatedMessage: msgContent expected")
    return _update(ctx, a, updated["msgContent"], updated.get("mentions") or {})


@COMMANDS.command("/_update item <ref:chatref> <itemId:int>[ live=<live:onoff>] text <text:text>")
def update_item_text(ctx: CoreContext, a: Args) -> JSON:
    return _update(ctx, a, {"type": "text", "text": a["text"] or ""}, {})


def _update(ctx: CoreContext, a: Args, mc: JSON, raw_mentions: Any) -> JSON:
    user = ctx.active_user()
    kind, chat_id, item = _own_item(ctx, user, a["ref"] or "", parse_int(a["itemId"]))
    editable = (
        item.dir_type in ("directSnd", "groupSnd", "localSnd")
        and item.content.get("type") == "sndMsgContent"
        and item.deleted is None
        and ctx.now() - item.created_seq < rec.EDIT_WINDOW_S
    )
    if not editable:
        raise chat_error("invalidChatItemUpdate")
    live = a.get("live") == "on"
    check_size(mc, update=True)  # before the Markdown of the mentions is read
    mentions = _mentions(ctx, kind, chat_id, raw_mentions, mc)
    old = item.content.get("msgContent")
    was_live = bool(item.live)
    if old == mc and not (was_live and not live) and not live:
        return {
            "type": "chatItemNotChanged",
            "user": ctx.user_json(user.user_id),
            "chatItem": ctx.a_item(item),
        }
    item.content = {"type": "sndMsgContent", "msgContent": copy.deepcopy(mc)}
    item.item_text = str(mc.get("text", ""))
    item.has_link = rec.has_link(item.item_text)
    item.mentions = {n: mention_json(ctx, m) for n, m in mentions.items()}
    item.updated_at = ctx.ts()
    if was_live:
        item.live = live
    if not (was_live or live):
        item.edited = True
    body: JSON = {
        "t": "x.msg.update",
        "sharedMsgId": item.shared_msg_id,
        "content": copy.deepcopy(mc),
    }
    if mentions:
        body["mentions"] = {n: m.member_id for n, m in mentions.items()}
    if item.live is not None:
        body["live"] = bool(item.live)
    if kind != "local":
        for conn in _recipients(ctx, kind, chat_id):
            ctx.send_on(conn, body)
    return {
        "type": "chatItemUpdated",
        "user": ctx.user_json(user.user_id),
        "chatItem": ctx.a_item(item),
    }


@COMMANDS.command("/_delete item <ref:chatref> <ids:ids> <mode:itemdel>")
def delete_items(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    mode = a["mode"] or "internal"
    ids = [int(x) for x in (a["ids"] or "").split(",")]
    found = [_own_item(ctx, user, a["ref"] or "", i) for i in ids]
    if mode == "broadcast":
        for _, _, item in found:
            if (
                item.dir_type not in ("directSnd", "groupSnd")
                or item.content.get("type") != "sndMsgContent"
            ):
                raise chat_error("invalidChatItemDelete")
    deletions = []
    for kind, chat_id, item in found:
        before = ctx.a_item(item)
        if mode in ("broadcast", "internalMark"):
            item.deleted = {"type": "deleted", "deletedTs": ctx.ts(), "chatType": kind}
            item.updated_at = ctx.ts()
            deletions.append({"deletedChatItem": before, "toChatItem": ctx.a_item(item)})
            if mode == "broadcast":
                for conn in _recipients(ctx, kind, chat_id):
                    ctx.send_on(conn, {"t": "x.msg.del", "sharedMsgId": item.shared_msg_id})
        else:
            ctx.db.remove_item(item.item_id)
            deletions.append({"deletedChatItem": before})
    return {
        "type": "chatItemsDeleted",
        "user": ctx.user_json(user.user_id),
        "chatItemDeletions": deletions,
        "byUser": True,
        "timed": False,
    }


def on_sent(ctx: CoreContext, d: Delivery) -> None:
    """The router accepted a message: its items become ``sndSent``."""
    changed = []
    for item_id in d.receipt or []:
        item = ctx.db.items.get(item_id)
        if item is not None and item.status.get("type") == "sndNew":
            ctx.db.set_item_status(item, {"type": "sndSent", "sndProgress": "complete"})
            changed.append(item)
    _statuses(ctx, changed)


def on_delivered(ctx: CoreContext, d: Delivery) -> None:
    """The recipient received a direct message: its items become ``sndRcvd``."""
    changed = []
    for item_id in d.receipt or []:
        item = ctx.db.items.get(item_id)
        if (
            item is not None
            and item.chat_type == "direct"
            and item.status.get("type") in ("sndNew", "sndSent")
        ):
            ctx.db.set_item_status(
                item, {"type": "sndRcvd", "msgRcptStatus": "ok", "sndProgress": "complete"}
            )
            changed.append(item)
    _statuses(ctx, changed)


def _statuses(ctx: CoreContext, items: list[ItemRow]) -> None:
    if not items:
        return
    user = ctx.db.users.get(items[0].user_id)
    if user is None:
        return
    ctx.emit(
        {
            "type": "chatItemsStatusesUpdated",
            "user": ctx.user_json(user.user_id),
            "chatItems": [ctx.a_item(i) for i in items],
        }
    )
