"""Message items and chats as the tools show them: the Message of an item, a chat's type.

Results carry message items only (``content.type`` ``rcvMsgContent`` or ``sndMsgContent``);
feature, banner and event items are left out. Live messages (still streamed by their sender)
are left out until their final update. The types of chats and the commands they advertise
follow the plan's "receive and list" and "connect" sections; the facts they are read from
(connected, incognito, SimpleX name, ...) are the core client's views
(:class:`~simplex_protocols.core.ChatInfoView`, :class:`~simplex_protocols.core.ChatItemView`).

No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from simplex_protocols.core import ChatInfoView, ChatItemView

__all__ = [
    "ROLE_ORDER",
    "chat_kind",
    "chat_type",
    "commands_of",
    "known_peer_type",
    "message_of",
]

#: Group member roles, lowest first.
ROLE_ORDER: Final = ("relay", "observer", "author", "member", "moderator", "admin", "owner")

_PEER_TYPES: Final = frozenset({"human", "bot", "agent", "business"})


def known_peer_type(peer_type: str | None) -> str | None:
    """A profile's peer type when it is one the tools report."""
    return peer_type if peer_type in _PEER_TYPES else None


def message_of(
    chat_ref: str, chat_info: Mapping[str, Any], chat_item: Mapping[str, Any], *, own_name: str
) -> dict[str, Any] | None:
    """The Message of a message item, or ``None`` for other items.

    Args:
        chat_ref: the chat's reference.
        chat_info: the chat's ChatInfo (for the contact's or channel's name).
        chat_item: the ChatItem.
        own_name: the agent's name in this chat (its profile's, or the incognito profile's),
            for its own messages.
    """
    item = ChatItemView(chat_item)
    item_id = item.item_id
    if not item.is_message or item_id is None:
        return None
    message: dict[str, Any] = {"chat": chat_ref, "item": item_id}
    from_type: str | None = None
    from_member: int | None = None
    direction = item.direction
    member = item.sender
    if member is not None:
        sender = member.display_name
        from_type = known_peer_type(member.peer_type)
        from_member = member.member_id
    elif direction == "directRcv":
        contact = ChatInfoView(chat_info)
        sender = contact.display_name
        from_type = known_peer_type(contact.peer_type)
    elif direction == "channelRcv":
        sender = ChatInfoView(chat_info).display_name
    else:
        sender = own_name
        from_type = "agent"
    message["from"] = sender
    if from_member is not None:
        message["from_member"] = from_member
    if from_type is not None:
        message["from_type"] = from_type
    message["time"] = item.item_ts or ""
    message["text"] = item.text or ""
    message["new"] = item.unread
    quoted = item.quoted_item_id
    if quoted is not None:
        message["reply_to"] = {"chat": chat_ref, "item": quoted}
    message["mentions_me"] = item.mentions_user
    return message


def chat_type(chat: ChatInfoView) -> str:
    """The tools' type of a chat: ``contact``, ``business``, ``group`` or ``channel``."""
    if chat.is_direct:
        return "contact"
    if chat.is_business:
        return "business"
    if chat.is_channel:
        return "channel"
    return "group"


def chat_kind(chat: ChatInfoView) -> str:
    """The card's type of a chat: the tools' type, with ``bot`` or ``agent`` for such contacts."""
    kind = chat_type(chat)
    if kind == "contact":
        peer = known_peer_type(chat.peer_type)
        if peer in ("bot", "agent", "business"):
            return peer
    return kind


def commands_of(value: Any) -> list[Any] | None:
    """ChatBotCommands as the tools return them: ``{keyword, label, params}`` or ``{label, commands}``."""
    if not isinstance(value, Sequence) or isinstance(value, str) or not value:
        return None
    out: list[Any] = []
    for entry in value:
        if not isinstance(entry, Mapping):
            continue
        label = _str(entry.get("label")) or ""
        if entry.get("type") == "menu":
            inner = commands_of(entry.get("commands")) or []
            out.append({"label": label, "commands": inner})
        else:
            keyword = _str(entry.get("keyword"))
            if keyword is None:
                continue
            command: dict[str, Any] = {"keyword": keyword, "label": label}
            params = _str(entry.get("params"))
            if params is not None:
                command["params"] = params
            out.append(command)
    return out or None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
