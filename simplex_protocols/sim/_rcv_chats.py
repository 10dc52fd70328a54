"""What contacts and members send in a chat: messages (new, edited, deleted), a contact's
new profile, a contact's deletion, a rejected contact request."""

from __future__ import annotations

import copy
from typing import Any

from simplex_protocols._wire import dumps
from simplex_protocols.coretext import mentioned_names

from . import _records as rec
from ._cmd_cli import reaction_arg, reaction_json, set_reaction
from ._cmd_messages import MAX_RCV_MENTIONS, mention_json, quote_json
from ._context import CoreContext
from ._errors import ChatFailure
from ._inbound import FromContact, FromMember, Received, ReceiveTable
from ._store import ItemRow, MemberRow

__all__ = ["RECEIVE"]

JSON = dict[str, Any]

#: The messages this module handles.
RECEIVE = ReceiveTable()


@RECEIVE.from_contact("x.info")
def on_info(ctx: CoreContext, r: FromContact) -> None:
    """A contact updated its profile."""
    profile = r.body.get("profile")
    if not isinstance(profile, dict):
        return
    c, user = r.contact, r.user
    before = ctx.contact_json(c)
    prow = ctx.db.profiles[c.profile_id]
    prow.profile = ctx.core_profile.profile(copy.deepcopy(profile))
    c.updated_at = ctx.ts()
    ctx.emit(
        {
            "type": "contactUpdated",
            "user": ctx.user_json(user.user_id),
            "fromContact": before,
            "toContact": ctx.contact_json(c),
        }
    )


@RECEIVE.from_contact("x.direct.del")
def on_direct_del(ctx: CoreContext, r: FromContact) -> None:
    """A contact deleted us."""
    c, user = r.contact, r.user
    item = ctx.new_item(
        user,
        "direct",
        c.contact_id,
        "directRcv",
        {"type": "rcvDirectEvent", "rcvDirectEvent": {"type": "contactDeleted"}},
    )
    c.status = "deleted"
    r.conn.status = "deleted"
    ctx.emit(
        {
            "type": "contactDeletedByContact",
            "user": ctx.user_json(user.user_id),
            "contact": ctx.contact_json(c),
        }
    )
    ctx.emit_new_items(user, [item])


@RECEIVE.on_connection("x.contact.rej")
def on_contact_rejected(ctx: CoreContext, r: Received) -> None:
    """The owner of an address rejected our request (``/_reject ... notify=on``)."""
    user, c = r.user, r.contact
    r.conn.status = "deleted"
    if c is not None:
        c.status = "rejected"
        ctx.emit(
            {
                "type": "contactRequestRejected",
                "user": ctx.user_json(user.user_id),
                "contact": ctx.contact_json(c),
                "rejectionReason": "user_rejected",
            }
        )


def _sender(m: FromContact | FromMember) -> tuple[str, int, MemberRow | None]:
    """The chat of a message, and its sender when the chat is a group."""
    if isinstance(m, FromContact):
        return "direct", m.contact.contact_id, None
    return "group", m.group.group_id, m.member


@RECEIVE.from_chat("x.msg.new")
def on_msg_new(ctx: CoreContext, r: FromContact | FromMember) -> None:
    """A new message from a contact or a member: a received item."""
    body, user = r.body, r.user
    if not isinstance(body.get("content"), dict):
        return
    kind, chat_id, member = _sender(r)
    mentions: JSON = {}
    user_mention = False
    dir_type = "directRcv"
    as_group = False
    if kind == "group":
        g = ctx.db.groups[chat_id]
        me = ctx.membership(g)
        if me.status not in ("connected", "complete", "creator"):
            return
        mentions = _received_mentions(ctx, chat_id, body)
        quoted = body.get("quote")
        user_reply = isinstance(quoted, dict) and quoted.get("memberId") == me.member_id
        user_mention = user_reply or any(
            m.get("memberId") == me.member_id for m in mentions.values()
        )
        as_group = bool(body.get("asGroup")) or (
            not g.direct and member is not None and member.role == "owner"
        )
        dir_type = "channelRcv" if as_group else "groupRcv"
    quote = _received_quote(ctx, kind, chat_id, body.get("quote"))
    timed = None
    if isinstance(body.get("ttl"), int):
        timed = {
            "ttl": body["ttl"],
            "deleteAt": rec.iso(ctx.network.clock.wall() + body["ttl"]),
        }
    item = ctx.new_item(
        user,
        kind,
        chat_id,
        dir_type,
        {"type": "rcvMsgContent", "msgContent": copy.deepcopy(body["content"])},
        item_ts=str(body.get("sentAt") or ctx.ts()),
        sender_member_id=member.group_member_id if member is not None and not as_group else None,
        shared_msg_id=body.get("sharedMsgId"),
        live=True if body.get("live") else None,
        user_mention=user_mention,
        mentions=mentions,
        quote=quote,
        timed=timed,
        show_group_as_sender=as_group,
        # a forwarded message does not say where from: the recipient sees "unknown"
        forwarded={"type": "unknown"} if body.get("forward") else None,
    )
    if kind == "direct":
        ctx.db.contacts[chat_id].used = True
    ctx.emit_new_items(user, [item])


def _received_mentions(ctx: CoreContext, group_id: int, body: JSON) -> JSON:
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
    for name in mentioned_names(rec.MARKDOWN.parse(text)):
        if len(out) >= MAX_RCV_MENTIONS:
            break
        member_id = raw.get(name)
        if member_id is None or str(member_id) in seen:
            continue
        seen.add(str(member_id))
        target = ctx.db.member_by_member_id(group_id, str(member_id))
        out[name] = (
            mention_json(ctx, target) if target is not None else {"memberId": str(member_id)}
        )
    return out


def _received_quote(ctx: CoreContext, kind: str, chat_id: int, raw: Any) -> JSON | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), dict):
        return None
    shared = raw.get("sharedMsgId")
    local = ctx.db.item_by_shared_id(kind, chat_id, str(shared)) if shared else None
    if local is not None and local.content.get("type") in ("sndMsgContent", "rcvMsgContent"):
        return quote_json(ctx, local)
    out: JSON = {}
    if kind == "group" and raw.get("memberId"):
        g = ctx.db.groups[chat_id]
        if raw["memberId"] == ctx.membership(g).member_id:
            out["chatDir"] = {"type": "groupSnd"}
        else:
            m = ctx.db.member_by_member_id(chat_id, str(raw["memberId"]))
            if m is not None:
                out["chatDir"] = {"type": "groupRcv", "groupMember": ctx.member_json(m)}
    if shared:
        out["sharedMsgId"] = shared
    out["sentAt"] = str(raw.get("sentAt") or ctx.ts())
    out["content"] = copy.deepcopy(raw["content"])
    return out


def _find_received(ctx: CoreContext, r: FromContact | FromMember) -> ItemRow | None:
    """The received item a message edits or deletes, when its sender sent it."""
    shared = r.body.get("sharedMsgId")
    if not isinstance(shared, str):
        return None
    kind, chat_id, member = _sender(r)
    item = ctx.db.item_by_shared_id(kind, chat_id, shared)
    if item is None or not item.dir_type.endswith("Rcv"):
        return None
    if member is not None and item.sender_member_id not in (None, member.group_member_id):
        return None
    return item


@RECEIVE.from_chat("x.msg.update")
def on_msg_update(ctx: CoreContext, r: FromContact | FromMember) -> None:
    """A sender edited one of its messages."""
    item = _find_received(ctx, r)
    content = r.body.get("content")
    if item is None or not isinstance(content, dict):
        return
    user = r.user
    was_live = bool(item.live)
    item.content = {"type": "rcvMsgContent", "msgContent": copy.deepcopy(content)}
    item.item_text = str(content.get("text", ""))
    item.has_link = rec.has_link(item.item_text)
    if item.chat_type == "group":
        item.mentions = _received_mentions(ctx, item.chat_id, r.body)
    if "live" in r.body and item.live is not None:
        item.live = bool(r.body["live"])
    if not was_live:
        item.edited = True
    item.updated_at = ctx.ts()
    ctx.emit(
        {
            "type": "chatItemUpdated",
            "user": ctx.user_json(user.user_id),
            "chatItem": ctx.a_item(item),
        }
    )


@RECEIVE.from_chat("x.msg.del")
def on_msg_del(ctx: CoreContext, r: FromContact | FromMember) -> None:
    """A sender deleted one of its messages (for everyone)."""
    item = _find_received(ctx, r)
    if item is None:
        return
    user = r.user
    before = ctx.a_item(item)
    item.deleted = {"type": "deleted", "deletedTs": ctx.ts(), "chatType": item.chat_type}
    item.updated_at = ctx.ts()
    ctx.emit(
        {
            "type": "chatItemsDeleted",
            "user": ctx.user_json(user.user_id),
            "chatItemDeletions": [{"deletedChatItem": before, "toChatItem": ctx.a_item(item)}],
            "byUser": False,
            "timed": False,
        }
    )


@RECEIVE.from_chat("x.msg.react")
def on_msg_react(ctx: CoreContext, r: FromContact | FromMember) -> None:
    """A contact or a member added or removed a reaction to a message of the chat."""
    shared = r.body.get("sharedMsgId")
    if not isinstance(shared, str):
        return
    kind, chat_id, member = _sender(r)
    item = ctx.db.item_by_shared_id(kind, chat_id, shared)
    if item is None or item.deleted is not None:
        return
    try:
        reaction = reaction_arg(dumps(r.body.get("reaction")))
    except ChatFailure:
        return
    add = r.body.get("add") is True
    reactor = member.member_id if member is not None else "contact"
    set_reaction(item, reaction, reactor, add)
    direction: JSON = {"type": "directRcv"}
    if member is not None:
        direction = {"type": "groupRcv", "groupMember": ctx.member_json(member)}
    ctx.emit(
        {
            "type": "chatItemReaction",
            "user": ctx.user_json(r.user.user_id),
            "added": add,
            "reaction": reaction_json(ctx, item, direction, reaction),
        }
    )
