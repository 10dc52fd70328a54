"""Typed views of the core's events: read the fields the toolkit needs, keep the raw dict.

Events are the core's JSON objects, passed through unchanged (unknown types and fields
kept). These helpers never raise on an unexpected shape: what they cannot read, they skip
or report as ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from simplex_protocols.limits import MAX_CHAT_REF_DIGITS

from ._commands import ChatRef, ContactRef, GroupRef

__all__ = [
    "ReceivedMessage",
    "chat_items",
    "chat_ref_of",
    "event_type",
    "event_user_id",
    "received_messages",
]

_MAX_ID = 10**MAX_CHAT_REF_DIGITS - 1


def event_type(event: Mapping[str, Any]) -> str:
    """The event's ``type`` tag, or ``""`` when it has none."""
    tag = event.get("type")
    return tag if isinstance(tag, str) else ""


def event_user_id(event: Mapping[str, Any]) -> int | None:
    """The ``userId`` of the user the event is for, when it names one."""
    user = event.get("user")
    uid = user.get("userId") if isinstance(user, Mapping) else None
    return uid if isinstance(uid, int) and not isinstance(uid, bool) else None


def _positive_id(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= _MAX_ID:
        return value
    return None


def chat_ref_of(chat_info: Any) -> ChatRef | None:
    """``@contactId`` or ``#groupId`` of a ChatInfo; ``None`` for other chats."""
    if not isinstance(chat_info, Mapping):
        return None
    kind = chat_info.get("type")
    if kind == "direct":
        contact = chat_info.get("contact")
        cid = _positive_id(contact.get("contactId")) if isinstance(contact, Mapping) else None
        return ContactRef(cid) if cid is not None else None
    if kind == "group":
        info = chat_info.get("groupInfo")
        gid = _positive_id(info.get("groupId")) if isinstance(info, Mapping) else None
        return GroupRef(gid) if gid is not None else None
    return None


def chat_items(event: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The AChatItem objects an event carries (``newChatItems``, ``chatItemsStatusesUpdated``:
    ``chatItems``; ``chatItemUpdated``: ``chatItem``), as they are."""
    items = event.get("chatItems")
    if isinstance(items, list):
        return [i for i in items if isinstance(i, dict)]
    item = event.get("chatItem")
    return [item] if isinstance(item, dict) else []


@dataclass(frozen=True, slots=True)
class ReceivedMessage:
    """A message someone sent us, read from an AChatItem (``rcvMsgContent`` items only).

    Attributes:
        chat_ref: the chat it arrived in (``@4``, ``#15``), or ``None`` for other chats.
        item_id: the item's ID in our database (``meta.itemId``).
        text: the message text (``content.msgContent.text``; ``""`` when absent).
        content_type: the MsgContent tag (``"text"``, ``"link"``, ``"image"``, ...).
        sender: the sender's display name: the group member (``groupRcv``), the contact
            (``directRcv``) or the channel (``channelRcv``), when known.
        sender_member_id: the sender's ``groupMemberId`` in a group.
        quoted_item_id: the ID of the item it replies to (``quotedItem.itemId``).
        mentions_user: whether it mentions us (``meta.userMention``).
        live: whether it is a live message still being typed (``meta.itemLive``).
        unread: whether it is new (``meta.itemStatus.type == "rcvNew"``).
        item: the AChatItem as received.
    """

    chat_ref: ChatRef | None
    item_id: int
    text: str
    content_type: str
    sender: str | None
    sender_member_id: int | None
    quoted_item_id: int | None
    mentions_user: bool
    live: bool
    unread: bool
    item: dict[str, Any] = field(repr=False, compare=False)


def _name(obj: Any) -> str | None:
    if not isinstance(obj, Mapping):
        return None
    name = obj.get("localDisplayName")
    if isinstance(name, str) and name:
        return name
    for key in ("profile", "memberProfile", "groupProfile"):
        prof = obj.get(key)
        if isinstance(prof, Mapping) and isinstance(prof.get("displayName"), str):
            return str(prof["displayName"])
    return None


def _received(a_chat_item: dict[str, Any]) -> ReceivedMessage | None:
    chat_info = a_chat_item.get("chatInfo")
    item = a_chat_item.get("chatItem")
    if not isinstance(item, Mapping):
        return None
    content = item.get("content")
    meta = item.get("meta")
    if not isinstance(content, Mapping) or content.get("type") != "rcvMsgContent":
        return None
    if not isinstance(meta, Mapping):
        return None
    item_id = meta.get("itemId")
    if not isinstance(item_id, int) or isinstance(item_id, bool):
        return None
    msg = content.get("msgContent")
    msg = msg if isinstance(msg, Mapping) else {}
    text = msg.get("text")
    direction = item.get("chatDir")
    direction = direction if isinstance(direction, Mapping) else {}
    sender: str | None = None
    member_id: int | None = None
    if direction.get("type") == "groupRcv":
        member = direction.get("groupMember")
        sender = _name(member)
        if isinstance(member, Mapping):
            member_id = _positive_id(member.get("groupMemberId"))
    elif direction.get("type") == "directRcv" and isinstance(chat_info, Mapping):
        sender = _name(chat_info.get("contact"))
    elif direction.get("type") == "channelRcv" and isinstance(chat_info, Mapping):
        sender = _name(chat_info.get("groupInfo"))
    quoted = item.get("quotedItem")
    quoted_id = quoted.get("itemId") if isinstance(quoted, Mapping) else None
    status = meta.get("itemStatus")
    return ReceivedMessage(
        chat_ref=chat_ref_of(chat_info),
        item_id=item_id,
        text=text if isinstance(text, str) else "",
        content_type=str(msg.get("type", "")),
        sender=sender,
        sender_member_id=member_id,
        quoted_item_id=quoted_id
        if isinstance(quoted_id, int) and not isinstance(quoted_id, bool)
        else None,
        mentions_user=meta.get("userMention") is True,
        live=meta.get("itemLive") is True,
        unread=isinstance(status, Mapping) and status.get("type") == "rcvNew",
        item=a_chat_item,
    )


def received_messages(event: Mapping[str, Any]) -> list[ReceivedMessage]:
    """The received messages in a ``newChatItems`` or ``chatItemUpdated`` event, in order.

    Items that are not received messages (our own sends, group events, features, deleted
    items) and items of unknown shape are skipped. Other event types give ``[]``.
    """
    if event_type(event) not in ("newChatItems", "chatItemUpdated"):
        return []
    out: list[ReceivedMessage] = []
    for a_chat_item in chat_items(event):
        message = _received(a_chat_item)
        if message is not None:
            out.append(message)
    return out
