"""JSON builders: database rows rendered as the core's records.

Every function here returns a fresh ``dict`` in the shape of the core's JSON (field names,
nesting, tags), with optional fields omitted when they have no value, as the core's encoder
omits ``Nothing``. The shapes follow ``simplex_chat.types`` and the newer fields of the core
API reference (peer type ``agent``, SimpleX names, channels, ``protocols``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from simplex_protocols.coretext import Markdown, has_links
from simplex_protocols.links import parse_simplex_link, parse_simplex_name

from ._store import (
    ConnRow,
    ContactRow,
    Database,
    GroupRow,
    ItemRow,
    LinkRow,
    MemberRow,
    ProfileRow,
    RequestRow,
    UserRow,
)

__all__ = [
    "CHAT_VERSION",
    "EDIT_WINDOW_S",
    "EMPTY_STATS",
    "MARKDOWN",
    "ROLE_ORDER",
    "achat",
    "chat_info",
    "chat_item",
    "chat_stats",
    "connection",
    "contact",
    "created_conn_link",
    "full_group_preferences",
    "group_info",
    "group_link",
    "group_member",
    "iso",
    "local_profile",
    "pending_connection",
    "profile",
    "role_at_least",
    "user",
    "user_contact_link",
    "user_contact_request",
]

JSON = dict[str, Any]

#: The chat protocol version the simulated cores speak.
CHAT_VERSION = 16

#: Own messages can be edited for 24 hours (the core's edit window).
EDIT_WINDOW_S = 24 * 3600.0

#: The core's Markdown, reading SimpleX links and names as the links package parses them: the
#: one parser of every item's ``formattedText``, its ``hasLink`` and its mentions.
MARKDOWN = Markdown(parse_link=parse_simplex_link, parse_name=parse_simplex_name)

ROLE_ORDER: tuple[str, ...] = (
    "relay",
    "observer",
    "author",
    "member",
    "moderator",
    "admin",
    "owner",
)

EMPTY_STATS: JSON = {
    "unreadCount": 0,
    "unreadMentions": 0,
    "reportsCount": 0,
    "minUnreadItemId": 0,
    "unreadChat": False,
}

_DEFAULT_PREFS: JSON = {
    "timedMessages": {"allow": "yes"},
    "fullDelete": {"allow": "no"},
    "reactions": {"allow": "yes"},
    "voice": {"allow": "yes"},
    "files": {"allow": "always"},
    "calls": {"allow": "yes"},
    "sessions": {"allow": "no"},
}

_DEFAULT_CONTACT_PREFS: JSON = {
    "timedMessages": {"allow": "yes"},
    "fullDelete": {"allow": "no"},
    "reactions": {"allow": "yes"},
    "voice": {"allow": "yes"},
    "files": {"allow": "yes"},
    "calls": {"allow": "yes"},
    "sessions": {"allow": "no"},
}

_DEFAULT_GROUP_PREFS: JSON = {
    "timedMessages": {"enable": "off"},
    "directMessages": {"enable": "on"},
    "fullDelete": {"enable": "off"},
    "reactions": {"enable": "on"},
    "voice": {"enable": "on"},
    "files": {"enable": "on"},
    "simplexLinks": {"enable": "on"},
    "reports": {"enable": "on"},
    "history": {"enable": "off"},
    "support": {"enable": "off"},
    "sessions": {"enable": "off"},
    "comments": {"enable": "off"},
    "signMessages": {"enable": "off"},
}

_VRANGE: JSON = {"minVersion": 1, "maxVersion": CHAT_VERSION}


def jcopy(value: Any) -> Any:
    """A copy of a JSON value (faster than ``copy.deepcopy`` for plain dicts and lists)."""
    if isinstance(value, dict):
        return {k: jcopy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jcopy(v) for v in value]
    return value


def iso(ts: float) -> str:
    """A UTC timestamp as the core writes it: ``2026-10-17T09:15:00.123Z``."""
    dt = datetime.fromtimestamp(ts, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def role_at_least(role: str, required: str) -> bool:
    """Whether ``role`` is ``required`` or above in the core's role order."""
    try:
        return ROLE_ORDER.index(role) >= ROLE_ORDER.index(required)
    except ValueError:
        return False


def has_link(text: str) -> bool:
    """``meta.hasLink``: the text has a web link, a SimpleX link or a SimpleX name."""
    return has_links(MARKDOWN.parse(text))


# ---------------------------------------------------------------------------- profiles


def profile(row: ProfileRow) -> JSON:
    """A Profile: the profile as sent to peers (no local fields)."""
    out: JSON = jcopy(row.profile)
    return out


def local_profile(row: ProfileRow, *, domain_verified: bool | None = None) -> JSON:
    """A LocalProfile: the profile with ``profileId`` and ``localAlias``."""
    p = jcopy(row.profile)
    out: JSON = {"profileId": row.profile_id, "displayName": p.pop("displayName", "")}
    out["fullName"] = p.pop("fullName", "")
    p.pop("badge", None)
    out.update(p)
    out["localAlias"] = row.local_alias
    if domain_verified is not None and "contactDomain" in out:
        out["contactDomainVerified"] = domain_verified
    return out


def full_preferences(prefs: JSON | None) -> JSON:
    out: JSON = jcopy(_DEFAULT_PREFS)
    if prefs:
        for key in _DEFAULT_PREFS:
            if isinstance(prefs.get(key), dict):
                out[key] = jcopy(prefs[key])
    out["commands"] = jcopy(prefs.get("commands", [])) if prefs else []
    return out


def full_group_preferences(prefs: JSON | None) -> JSON:
    out: JSON = jcopy(_DEFAULT_GROUP_PREFS)
    if prefs:
        for key in _DEFAULT_GROUP_PREFS:
            if isinstance(prefs.get(key), dict):
                out[key] = jcopy(prefs[key])
    out["commands"] = jcopy(prefs.get("commands", [])) if prefs else []
    return out


def user(db: Database, row: UserRow) -> JSON:
    prof = db.profiles[row.profile_id]
    return {
        "userId": row.user_id,
        "agentUserId": row.agent_user_id,
        "userContactId": row.user_contact_id,
        "localDisplayName": row.local_display_name,
        "profile": local_profile(prof),
        "fullPreferences": full_preferences(prof.profile.get("preferences")),
        "activeUser": db.active_user_id == row.user_id,
        "activeOrder": row.active_order,
        "showNtfs": row.show_ntfs,
        "sendRcptsContacts": row.send_rcpts_contacts,
        "sendRcptsSmallGroups": row.send_rcpts_small_groups,
        "autoAcceptMemberContacts": row.auto_accept_member_contacts,
        "autoAcceptGroupInvitations": row.auto_accept_group_invitations,
        "userChatRelay": False,
        "clientService": False,
    }


# ---------------------------------------------------------------------------- connections


def created_conn_link(full: str, short: str | None) -> JSON:
    out: JSON = {"connFullLink": full}
    if short:
        out["connShortLink"] = short
    return out


def connection(conn: ConnRow) -> JSON:
    out: JSON = {
        "connId": conn.conn_id,
        "agentConnId": conn.agent_conn_id,
        "connChatVersion": CHAT_VERSION,
        "peerChatVRange": dict(_VRANGE),
        "connLevel": 0,
    }
    if conn.via_user_contact_link is not None:
        out["viaUserContactLink"] = conn.via_user_contact_link
    out["viaGroupLink"] = conn.via_group_link
    if conn.group_link_id is not None:
        out["groupLinkId"] = conn.group_link_id
    if conn.x_contact_id is not None:
        out["xContactId"] = conn.x_contact_id
    if conn.custom_user_profile_id is not None:
        out["customUserProfileId"] = conn.custom_user_profile_id
    out["connType"] = conn.conn_type
    out["connStatus"] = {"type": conn.status}
    out["contactConnInitiated"] = conn.contact_conn_initiated
    out["localAlias"] = conn.local_alias
    entity = conn.contact_id if conn.conn_type == "contact" else conn.member_id
    if conn.conn_type == "user_contact":
        entity = conn.link_id
    if entity is not None:
        out["entityId"] = entity
    out.update(
        {
            "pqSupport": conn.pq,
            "pqEncryption": conn.pq,
            "authErrCounter": 0,
            "quotaErrCounter": 0,
            "createdAt": conn.created_at,
        }
    )
    return out


def pending_connection(conn: ConnRow) -> JSON:
    """A PendingContactConnection (``pccConnId`` is the connection's ID)."""
    out: JSON = {
        "pccConnId": conn.conn_id,
        "pccAgentConnId": conn.agent_conn_id,
        "pccConnStatus": {"type": conn.status},
        "viaContactUri": conn.via_contact_uri,
    }
    if conn.via_user_contact_link is not None:
        out["viaUserContactLink"] = conn.via_user_contact_link
    if conn.group_link_id is not None:
        out["groupLinkId"] = conn.group_link_id
    if conn.custom_user_profile_id is not None:
        out["customUserProfileId"] = conn.custom_user_profile_id
    if conn.conn_link_inv is not None:
        out["connLinkInv"] = jcopy(conn.conn_link_inv)
    out.update(
        {"localAlias": conn.local_alias, "createdAt": conn.created_at, "updatedAt": conn.updated_at}
    )
    return out


# ---------------------------------------------------------------------------- contacts


def _allowed(pref: JSON | None, default: str) -> str:
    if isinstance(pref, dict) and isinstance(pref.get("allow"), str):
        return str(pref["allow"])
    return default


def merged_preferences(db: Database, c: ContactRow) -> JSON:
    u = db.users[c.user_id]
    user_prefs = db.profiles[u.profile_id].profile.get("preferences") or {}
    peer_prefs = db.profiles[c.profile_id].profile.get("preferences") or {}
    out: JSON = {}
    for feature, default in _DEFAULT_PREFS.items():
        own = c.user_preferences.get(feature)
        if isinstance(own, dict):
            user_pref: JSON = {"type": "contact", "preference": jcopy(own)}
            ua = _allowed(own, default["allow"])
        else:
            ua = _allowed(user_prefs.get(feature), default["allow"])
            user_pref = {"type": "user", "preference": {"allow": ua}}
        ca = _allowed(peer_prefs.get(feature), _DEFAULT_CONTACT_PREFS[feature]["allow"])
        for_contact = ua == "always" or (ua == "yes" and ca in ("yes", "always"))
        for_user = ca == "always" or (ca == "yes" and ua in ("yes", "always"))
        if feature == "timedMessages":
            ttl = (peer_prefs.get(feature) or {}).get("ttl")
            for_contact = for_user = for_user and for_contact and ttl is not None
        out[feature] = {
            "enabled": {"forUser": for_user, "forContact": for_contact},
            "userPreference": user_pref,
            "contactPreference": {"allow": ca},
        }
    commands = peer_prefs.get("commands")
    if isinstance(commands, list):
        out["commands"] = jcopy(commands)
    return out


def contact(db: Database, c: ContactRow) -> JSON:
    prof = db.profiles[c.profile_id]
    verified = bool(c.domain_verified) if "contactDomain" in prof.profile else None
    out: JSON = {
        "contactId": c.contact_id,
        "localDisplayName": c.local_display_name,
        "profile": local_profile(prof, domain_verified=verified),
    }
    if c.conn_id is not None and c.conn_id in db.conns:
        out["activeConn"] = connection(db.conns[c.conn_id])
    out.update(
        {
            "contactUsed": c.used,
            "contactStatus": c.status,
            "chatSettings": {"enableNtfs": "all", "favorite": c.favorite, "dropFeed": False},
            "userPreferences": jcopy(c.user_preferences),
            "mergedPreferences": merged_preferences(db, c),
            "createdAt": c.created_at,
            "updatedAt": c.updated_at,
        }
    )
    if c.chat_ts is not None:
        out["chatTs"] = c.chat_ts
    if c.prepared is not None:
        out["preparedContact"] = jcopy(c.prepared)
    if c.contact_request_id is not None:
        out["contactRequestId"] = c.contact_request_id
    if c.contact_group_member_id is not None:
        out["contactGroupMemberId"] = c.contact_group_member_id
    out["contactGrpInvSent"] = False
    out["chatTags"] = []
    if c.chat_item_ttl is not None:
        out["chatItemTTL"] = c.chat_item_ttl
    out["chatDeleted"] = c.chat_deleted
    if c.custom_data is not None:
        out["customData"] = jcopy(c.custom_data)
    return out


def user_contact_request(db: Database, r: RequestRow) -> JSON:
    out: JSON = {
        "contactRequestId": r.contact_request_id,
        "agentInvitationId": r.agent_invitation_id,
    }
    if r.contact_id is not None:
        out["contactId_"] = r.contact_id
    if r.business_group_id is not None:
        out["businessGroupId_"] = r.business_group_id
    out["userContactLinkId_"] = r.link_id
    out.update(
        {
            "cReqChatVRange": dict(_VRANGE),
            "localDisplayName": r.local_display_name,
            "profileId": r.profile_id,
            "profile": local_profile(db.profiles[r.profile_id]),
            "createdAt": r.created_at,
            "updatedAt": r.updated_at,
            "xContactId": r.x_contact_id,
            "pqSupport": True,
        }
    )
    if r.request_shared_msg_id is not None:
        out["requestSharedMsgId"] = r.request_shared_msg_id
    out["rejectionSupported"] = True
    return out


# ---------------------------------------------------------------------------- groups


def group_member(db: Database, m: MemberRow) -> JSON:
    g = db.groups.get(m.group_id)
    prof = db.profiles[m.profile_id]
    lp = local_profile(prof)
    if g is not None and m.category != "user":
        # the core strips preferences from member profiles in groups (Seed001 §protocols)
        lp.pop("preferences", None)
    out: JSON = {
        "groupMemberId": m.group_member_id,
        "groupId": m.group_id,
        "indexInGroup": m.index_in_group,
        "memberId": m.member_id,
        "memberRole": m.role,
        "memberCategory": m.category,
        "memberStatus": m.status,
        "memberSettings": {"showMessages": m.show_messages},
        "blockedByAdmin": m.blocked_by_admin,
        "invitedBy": jcopy(m.invited_by),
    }
    if m.invited_by_group_member_id is not None:
        out["invitedByGroupMemberId"] = m.invited_by_group_member_id
    out["localDisplayName"] = m.local_display_name
    out["memberProfile"] = lp
    if m.member_contact_id is not None:
        out["memberContactId"] = m.member_contact_id
    out["memberContactProfileId"] = m.member_contact_profile_id
    if m.conn_id is not None and m.conn_id in db.conns:
        out["activeConn"] = connection(db.conns[m.conn_id])
    out.update(
        {
            "memberChatVRange": dict(_VRANGE),
            "createdAt": m.created_at,
            "updatedAt": m.updated_at,
        }
    )
    return out


def current_member(m: MemberRow) -> bool:
    return m.status not in ("rejected", "removed", "left", "deleted", "unknown", "invited")


def group_info(db: Database, g: GroupRow) -> JSON:
    prefs = g.profile.get("groupPreferences")
    members = db.group_members(g.group_id)
    out: JSON = {
        "groupId": g.group_id,
        "useRelays": False,
        "localDisplayName": g.local_display_name,
        "groupProfile": jcopy(g.profile),
        "localAlias": g.local_alias,
    }
    if g.business is not None:
        out["businessChat"] = jcopy(g.business)
    out["fullGroupPreferences"] = full_group_preferences(prefs if isinstance(prefs, dict) else None)
    out["membership"] = group_member(db, db.members[g.membership_id])
    out["chatSettings"] = {"enableNtfs": "all", "favorite": g.favorite, "dropFeed": False}
    out["createdAt"] = g.created_at
    out["updatedAt"] = g.updated_at
    if g.chat_ts is not None:
        out["chatTs"] = g.chat_ts
    if g.prepared is not None:
        out["preparedGroup"] = jcopy(g.prepared)
    out["chatTags"] = []
    if g.custom_data is not None:
        out["customData"] = jcopy(g.custom_data)
    out["groupSummary"] = {"currentMembers": sum(1 for m in members if current_member(m))}
    out["membersRequireAttention"] = 0
    if g.via_group_link_uri is not None:
        out["viaGroupLinkUri"] = g.via_group_link_uri
    if g.domain_verified is not None:
        out["groupDomainVerified"] = g.domain_verified
    return out


def user_contact_link(link: LinkRow) -> JSON:
    return {
        "userContactLinkId": link.link_id,
        "connLinkContact": created_conn_link(link.full, link.short),
        "shortLinkDataSet": link.short_link_data_set,
        "shortLinkLargeDataSet": False,
        "addressSettings": jcopy(link.settings),
    }


def group_link(link: LinkRow) -> JSON:
    return {
        "userContactLinkId": link.link_id,
        "connLinkContact": created_conn_link(link.full, link.short),
        "shortLinkDataSet": link.short_link_data_set,
        "shortLinkLargeDataSet": False,
        "groupLinkId": link.group_link_id or "",
        "acceptMemberRole": link.role,
    }


# ---------------------------------------------------------------------------- chat items


def chat_info(db: Database, chat_type: str, chat_id: int) -> JSON:
    if chat_type == "direct":
        return {"type": "direct", "contact": contact(db, db.contacts[chat_id])}
    if chat_type == "group":
        return {"type": "group", "groupInfo": group_info(db, db.groups[chat_id])}
    folder = db.folders[chat_id]
    return {
        "type": "local",
        "noteFolder": {
            "noteFolderId": folder.note_folder_id,
            "userId": folder.user_id,
            "createdAt": folder.created_at,
            "updatedAt": folder.created_at,
            "chatTs": folder.created_at,
            "favorite": False,
            "unread": False,
        },
    }


def chat_item(db: Database, item: ItemRow, now: float) -> JSON:
    direction: JSON = {"type": item.dir_type}
    if item.dir_type == "groupRcv" and item.sender_member_id is not None:
        direction["groupMember"] = group_member(db, db.members[item.sender_member_id])
    is_msg = item.content.get("type") in ("sndMsgContent", "rcvMsgContent")
    editable = (
        item.dir_type in ("directSnd", "groupSnd", "localSnd")
        and is_msg
        and item.deleted is None
        and now - item.created_seq < EDIT_WINDOW_S
    )
    meta: JSON = {
        "itemId": item.item_id,
        "itemTs": item.item_ts,
        "itemText": item.item_text,
        "itemStatus": jcopy(item.status),
    }
    if item.shared_msg_id is not None:
        meta["itemSharedMsgId"] = item.shared_msg_id
    if item.forwarded is not None:
        meta["itemForwarded"] = jcopy(item.forwarded)
    if item.deleted is not None:
        meta["itemDeleted"] = jcopy(item.deleted)
    meta["itemEdited"] = item.edited
    if item.timed is not None:
        meta["itemTimed"] = jcopy(item.timed)
    if item.live is not None:
        meta["itemLive"] = item.live
    meta.update(
        {
            "userMention": item.user_mention,
            "hasLink": item.has_link,
            "deletable": item.deleted is None,
            "editable": editable,
            "showGroupAsSender": item.show_group_as_sender,
            "createdAt": item.created_at,
            "updatedAt": item.updated_at,
        }
    )
    out: JSON = {
        "chatDir": direction,
        "meta": meta,
        "content": jcopy(item.content),
        "mentions": jcopy(item.mentions),
    }
    formatted = MARKDOWN.parse(item.item_text)
    if formatted is not None:
        out["formattedText"] = formatted
    if item.quote is not None:
        out["quotedItem"] = quote(item.quote)
    out["reactions"] = [
        {
            "reaction": jcopy(r["reaction"]),
            "userReacted": bool(r["userReacted"]),
            "totalReacted": int(r["userReacted"]) + len(r["peers"]),
        }
        for r in item.reactions.values()
    ]
    return out


def quote(row: JSON) -> JSON:
    """A CIQuote with the ``formattedText`` of the quoted content's text, as the core adds it."""
    out: JSON = jcopy(row)
    content = out.get("content")
    text = content.get("text") if isinstance(content, dict) else None
    formatted = MARKDOWN.parse(text) if isinstance(text, str) else None
    if formatted is not None:
        out["formattedText"] = formatted
    return out


def a_chat_item(db: Database, item: ItemRow, now: float) -> JSON:
    return {
        "chatInfo": chat_info(db, item.chat_type, item.chat_id),
        "chatItem": chat_item(db, item, now),
    }


def chat_stats(
    db: Database,
    chat_type: str,
    chat_id: int,
    *,
    unread_chat: bool = False,
    min_unread_by_id: bool = False,
) -> JSON:
    """Real chat statistics: every ``rcvNew`` item of the chat counts as unread.

    ``minUnreadItemId`` is the first unread item in the chat's order (``/_get chat``), or
    the lowest unread item ID with ``min_unread_by_id`` (the chat list's previews), as the
    core's two queries compute it.
    """
    index = db.chat_index(chat_type, chat_id)
    if index is None or not index.unread_keys:
        return {**EMPTY_STATS, "unreadChat": unread_chat}
    if min_unread_by_id:
        first = index.unread_ids[0]
    else:
        found = index.first_unread()
        first = found.item_id if found is not None else 0
    return {
        "unreadCount": len(index.unread_keys),
        "unreadMentions": index.unread_mentions if chat_type == "group" else 0,
        "reportsCount": 0,
        "minUnreadItemId": first,
        "unreadChat": unread_chat,
    }


def ordered_items(db: Database, chat_type: str, chat_id: int) -> list[ItemRow]:
    """A chat's items in the core's order: groups by item time, others by creation."""
    return db.chat_items(chat_type, chat_id)


def achat(
    db: Database, chat_type: str, chat_id: int, items: list[ItemRow], stats: JSON, now: float
) -> JSON:
    return {
        "chatInfo": chat_info(db, chat_type, chat_id),
        "chatItems": [chat_item(db, i, now) for i in items],
        "chatStats": jcopy(stats),
    }
