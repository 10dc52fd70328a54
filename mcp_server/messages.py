"""Message items: how a chat item of the core becomes a Message of the tools, and chat facts.

Results carry message items only (``content.type`` ``rcvMsgContent`` or ``sndMsgContent``);
feature, banner and event items are left out. Live messages (still streamed by their sender)
are left out until their final update. The readings of chats (connected, incognito, type,
SimpleX name, known as) follow the plan's "receive and list" and "connect" sections.

No I/O here: these functions read the core's JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = [
    "ROLE_ORDER",
    "chat_commands",
    "chat_connected",
    "chat_display_name",
    "chat_incognito",
    "chat_kind",
    "chat_ref_of",
    "chat_simplex_name",
    "chat_type",
    "group_role",
    "is_live",
    "is_message",
    "is_received_message",
    "item_id",
    "message_of",
    "peer_type_of",
]

#: Group member roles, lowest first.
ROLE_ORDER: Final = ("relay", "observer", "author", "member", "moderator", "admin", "owner")

_PEER_TYPES: Final = frozenset({"human", "bot", "agent", "business"})


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def item_id(chat_item: Mapping[str, Any]) -> int | None:
    """``meta.itemId`` of a ChatItem."""
    value = _obj(chat_item.get("meta")).get("itemId")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def is_message(chat_item: Mapping[str, Any]) -> bool:
    """A message item: ``rcvMsgContent`` or ``sndMsgContent``."""
    return _obj(chat_item.get("content")).get("type") in ("rcvMsgContent", "sndMsgContent")


def is_received_message(chat_item: Mapping[str, Any]) -> bool:
    """A received message item (``rcvMsgContent``)."""
    return _obj(chat_item.get("content")).get("type") == "rcvMsgContent"


def is_live(chat_item: Mapping[str, Any]) -> bool:
    """Still streamed by its sender (``meta.itemLive``)."""
    return _obj(chat_item.get("meta")).get("itemLive") is True


def is_unread(chat_item: Mapping[str, Any]) -> bool:
    """``meta.itemStatus`` is ``rcvNew``."""
    return _obj(_obj(chat_item.get("meta")).get("itemStatus")).get("type") == "rcvNew"


def chat_ref_of(chat_info: Mapping[str, Any]) -> str | None:
    """``@N`` for a direct chat, ``#N`` for a group chat, ``None`` otherwise."""
    kind = chat_info.get("type")
    if kind == "direct":
        contact_id = _obj(chat_info.get("contact")).get("contactId")
        return f"@{contact_id}" if isinstance(contact_id, int) else None
    if kind == "group":
        group_id = _obj(chat_info.get("groupInfo")).get("groupId")
        return f"#{group_id}" if isinstance(group_id, int) else None
    return None


def peer_type_of(profile: Mapping[str, Any]) -> str | None:
    """A profile's peer type when it is one the tools report."""
    value = profile.get("peerType")
    return value if value in _PEER_TYPES else None


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
    if not is_message(chat_item):
        return None
    meta = _obj(chat_item.get("meta"))
    item = item_id(chat_item)
    if item is None:
        return None
    direction = _obj(chat_item.get("chatDir"))
    kind = direction.get("type")
    message: dict[str, Any] = {"chat": chat_ref, "item": item}
    sender: str | None = None
    from_type: str | None = None
    from_member: int | None = None
    if kind == "groupRcv":
        member = _obj(direction.get("groupMember"))
        profile = _obj(member.get("memberProfile"))
        sender = _str(profile.get("displayName")) or _str(member.get("localDisplayName"))
        from_type = peer_type_of(profile)
        member_id = member.get("groupMemberId")
        from_member = member_id if isinstance(member_id, int) else None
    elif kind == "directRcv":
        profile = _obj(_obj(chat_info.get("contact")).get("profile"))
        sender = _str(profile.get("displayName"))
        from_type = peer_type_of(profile)
    elif kind == "channelRcv":
        group_profile = _obj(_obj(chat_info.get("groupInfo")).get("groupProfile"))
        sender = _str(group_profile.get("displayName"))
    else:
        sender = own_name
        from_type = "agent"
    message["from"] = sender if sender is not None else ""
    if from_member is not None:
        message["from_member"] = from_member
    if from_type is not None:
        message["from_type"] = from_type
    message["time"] = _str(meta.get("itemTs")) or ""
    content = _obj(_obj(chat_item.get("content")).get("msgContent"))
    message["text"] = _str(content.get("text")) or ""
    message["new"] = is_unread(chat_item)
    quoted = _obj(chat_item.get("quotedItem"))
    quoted_id = quoted.get("itemId")
    if isinstance(quoted_id, int):
        message["reply_to"] = {"chat": chat_ref, "item": quoted_id}
    message["mentions_me"] = meta.get("userMention") is True
    return message


# ----------------------------------------------------------------------------- chat facts


def chat_connected(chat_info: Mapping[str, Any]) -> bool:
    """Contacts: ``activeConn.connStatus`` ready; groups: membership connected or complete (or creator)."""
    if chat_info.get("type") == "direct":
        conn = _obj(_obj(chat_info.get("contact")).get("activeConn"))
        return (
            _obj(conn.get("connStatus")).get("type") == "ready" or conn.get("connStatus") == "ready"
        )
    if chat_info.get("type") == "group":
        status = _obj(_obj(chat_info.get("groupInfo")).get("membership")).get("memberStatus")
        return status in ("connected", "complete", "creator")
    return False


def chat_incognito(chat_info: Mapping[str, Any]) -> bool:
    """Contacts: ``activeConn.customUserProfileId`` set; groups: membership profile differs from the user's."""
    if chat_info.get("type") == "direct":
        conn = _obj(_obj(chat_info.get("contact")).get("activeConn"))
        return conn.get("customUserProfileId") is not None
    if chat_info.get("type") == "group":
        membership = _obj(_obj(chat_info.get("groupInfo")).get("membership"))
        own = _obj(membership.get("memberProfile")).get("profileId")
        base = membership.get("memberContactProfileId")
        return own is not None and base is not None and own != base
    return False


def chat_type(chat_info: Mapping[str, Any]) -> str:
    """The tools' type of a chat: ``contact``, ``business``, ``group`` or ``channel``."""
    if chat_info.get("type") == "direct":
        return "contact"
    group = _obj(chat_info.get("groupInfo"))
    if group.get("businessChat") is not None:
        return "business"
    public = _obj(_obj(group.get("groupProfile")).get("publicGroup"))
    if public.get("groupType") == "channel" or group.get("useRelays") is True:
        return "channel"
    return "group"


def chat_kind(chat_info: Mapping[str, Any]) -> str:
    """The card's type of a chat: the tools' type, with ``bot`` or ``agent`` for such contacts."""
    kind = chat_type(chat_info)
    if kind == "contact":
        peer = peer_type_of(_obj(_obj(chat_info.get("contact")).get("profile")))
        if peer in ("bot", "agent", "business"):
            return peer
    return kind


def chat_display_name(chat_info: Mapping[str, Any]) -> str:
    """The contact's or group's display name."""
    if chat_info.get("type") == "direct":
        contact = _obj(chat_info.get("contact"))
        return (
            _str(_obj(contact.get("profile")).get("displayName"))
            or _str(contact.get("localDisplayName"))
            or ""
        )
    group = _obj(chat_info.get("groupInfo"))
    return (
        _str(_obj(group.get("groupProfile")).get("displayName"))
        or _str(group.get("localDisplayName"))
        or ""
    )


def chat_simplex_name(chat_info: Mapping[str, Any]) -> str | None:
    """The verified SimpleX name: ``@`` + the contact's claimed domain, ``#`` + the group's."""
    if chat_info.get("type") == "direct":
        profile = _obj(_obj(chat_info.get("contact")).get("profile"))
        domain = _str(_obj(profile.get("contactDomain")).get("domain"))
        return f"@{domain}" if domain and profile.get("contactDomainVerified") is True else None
    group = _obj(chat_info.get("groupInfo"))
    access = _obj(_obj(_obj(group.get("groupProfile")).get("publicGroup")).get("publicGroupAccess"))
    domain = _str(_obj(access.get("groupDomainClaim")).get("domain"))
    return f"#{domain}" if domain and group.get("groupDomainVerified") is True else None


def group_role(chat_info: Mapping[str, Any]) -> str | None:
    """The agent's role in a group chat."""
    return _str(_obj(_obj(chat_info.get("groupInfo")).get("membership")).get("memberRole"))


def chat_commands(chat_info: Mapping[str, Any]) -> list[Any] | None:
    """The commands a contact (profile preferences) or group (group preferences) advertises."""
    if chat_info.get("type") == "direct":
        prefs = _obj(_obj(_obj(chat_info.get("contact")).get("profile")).get("preferences"))
    else:
        prefs = _obj(
            _obj(_obj(chat_info.get("groupInfo")).get("groupProfile")).get("groupPreferences")
        )
    return commands_of(prefs.get("commands"))


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
