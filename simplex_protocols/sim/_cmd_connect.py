"""Commands: prepared chats, connecting by links and names, one-time invitations."""

from __future__ import annotations

import copy
from typing import Any

from . import _records as rec
from ._cmd_messages import check_size
from ._context import Args, CoreContext, json_object, parse_int
from ._delivery import LinkTarget
from ._errors import broker_timeout, chat_error, command_error
from ._grammar import CommandGroup
from ._links import LinkRef, make_invitation_link, parse_link
from ._plans import Resolved, name_link, resolve, target_user
from ._store import ConnRow, GroupRow, UserRow

__all__ = ["COMMANDS", "business_group_profile"]

JSON = dict[str, Any]

#: The commands of this module, in matching order.
COMMANDS = CommandGroup("connect")


def _link_arg(full: str | None, short: str | None) -> JSON:
    if full is None or parse_link(full) is None:
        raise chat_error("invalidConnReq")
    if short is not None and parse_link(short) is None:
        raise chat_error("invalidConnReq")
    return rec.created_conn_link(full, short)


def _verified_domain(ctx: CoreContext, domain: str | None, conn_link: JSON) -> bool | None:
    if domain is None:
        return None
    record = ctx.network.name_record(domain.lstrip("@#"))
    if record is None or not record.known_domain:
        return False
    link = name_link(ctx.peer(record.core), record)
    if link is None:
        return False
    a = ctx.network.resolve_link(link)
    b = ctx.network.resolve_link(conn_link.get("connShortLink") or conn_link["connFullLink"])
    return a is not None and b is not None and a[0].lookup_key == b[0].lookup_key


@COMMANDS.command(
    "/_prepare contact <userId:int> <fullLink:word>[ <shortLink:link>]"
    "[ domain=<domain:word>] <linkData:json>"
)
def prepare_contact(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    conn_link = _link_arg(a["fullLink"], a["shortLink"])
    data = ctx.core_profile.contact_link_data(json_object(a["linkData"], "ContactShortLinkData"))
    prof = data.get("profile")
    if not isinstance(prof, dict) or not isinstance(prof.get("displayName"), str):
        raise command_error("ContactShortLinkData: profile with displayName expected")
    ref = parse_link(conn_link["connFullLink"])
    verified = _verified_domain(ctx, a["domain"], conn_link)
    prof = copy.deepcopy(prof)
    if verified and a["domain"] is not None and "contactDomain" not in prof:
        prof["contactDomain"] = {"domain": a["domain"].lstrip("@#")}
    welcome = data.get("message")
    if data.get("business") is True:
        g = prepare_business_chat(ctx, user, conn_link, prof, welcome, ref)
        g.domain_verified = verified
        return _prepared_response(ctx, user, "group", g.group_id)
    prow = ctx.new_profile(prof)
    # ConnectionMode's JSON is lower case (simplexmq Agent/Protocol.hs, ToJSON ConnectionMode:
    # the text encoding "INV"/"CON" lowered, since commit 79c67f2); simplex_chat 7.0.2's types
    # write INV/CON, which no core sends.
    link_type = "inv" if ref is not None and ref.link_type == "invitation" else "con"
    c = ctx.new_contact(
        user, prow, prepared={"connLinkToConnect": conn_link, "uiConnLinkType": link_type}
    )
    c.domain_verified = verified
    if isinstance(welcome, dict):
        shared = ctx.random_id()
        ctx.new_item(
            user,
            "direct",
            c.contact_id,
            "directRcv",
            {"type": "rcvMsgContent", "msgContent": copy.deepcopy(welcome)},
            shared_msg_id=shared,
        )
        assert c.prepared is not None
        c.prepared["welcomeSharedMsgId"] = shared
    return _prepared_response(ctx, user, "direct", c.contact_id)


def _prepared_response(ctx: CoreContext, user: UserRow, chat_type: str, chat_id: int) -> JSON:
    items = rec.ordered_items(ctx.db, chat_type, chat_id)
    stats = rec.chat_stats(ctx.db, chat_type, chat_id)
    return {
        "type": "newPreparedChat",
        "user": ctx.user_json(user.user_id),
        "chat": rec.achat(ctx.db, chat_type, chat_id, items, stats, ctx.now()),
    }


def prepare_business_chat(
    ctx: CoreContext, user: UserRow, conn_link: JSON, prof: JSON, welcome: Any, ref: LinkRef | None
) -> GroupRow:
    """A prepared business chat: a group of the business (its host member) and us, the customer."""
    group_profile = business_group_profile(prof)
    g = ctx.new_group_row(user, group_profile, net_id="", role="member", status="unknown")
    host_profile = ctx.new_profile(prof)
    host = ctx.new_member(
        user, g.group_id, ctx.random_id(12), "owner", "host", "unknown", host_profile
    )
    g.host_member_id = host.group_member_id
    g.business = {
        "chatType": "business",
        "businessId": host.member_id,
        "customerId": ctx.membership(g).member_id,
    }
    g.prepared = {
        "connLinkToConnect": conn_link,
        "connLinkPreparedConnection": False,
        "connLinkStartedConnection": False,
    }
    g.via_link = ref.lookup_key if ref is not None else None
    if isinstance(welcome, dict):
        shared = ctx.random_id()
        ctx.new_item(
            user,
            "group",
            g.group_id,
            "groupRcv",
            {"type": "rcvMsgContent", "msgContent": copy.deepcopy(welcome)},
            sender_member_id=host.group_member_id,
            shared_msg_id=shared,
        )
        g.prepared["welcomeSharedMsgId"] = shared
    return g


@COMMANDS.command(
    "/_prepare group <userId:int> <fullLink:word>[ <shortLink:link>]"
    "[ direct=<direct:onoff>][ domain=<domain:word>] <linkData:json>"
)
def prepare_group(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    conn_link = _link_arg(a["fullLink"], a["shortLink"])
    data = ctx.core_profile.group_link_data(json_object(a["linkData"], "GroupShortLinkData"))
    gp = data.get("groupProfile")
    if not isinstance(gp, dict) or not isinstance(gp.get("displayName"), str):
        raise command_error("GroupShortLinkData: groupProfile with displayName expected")
    ref = parse_link(conn_link["connFullLink"])
    direct = a["direct"] != "off"
    g = ctx.new_group_row(user, gp, net_id="", role="member", status="unknown")
    g.direct = direct
    g.via_link = ref.lookup_key if ref is not None else None
    g.prepared = {
        "connLinkToConnect": conn_link,
        "connLinkPreparedConnection": False,
        "connLinkStartedConnection": False,
    }
    g.domain_verified = _verified_domain(ctx, a["domain"], conn_link)
    host_id: int | None = None
    if direct:
        placeholder = ctx.new_profile({"displayName": str(gp["displayName"]), "fullName": ""})
        host = ctx.new_member(
            user, g.group_id, ctx.random_id(12), "owner", "host", "unknown", placeholder
        )
        g.host_member_id = host_id = host.group_member_id
    description = gp.get("description")
    if isinstance(description, str) and description:
        shared = ctx.random_id()
        ctx.new_item(
            user,
            "group",
            g.group_id,
            "groupRcv" if direct else "channelRcv",
            {"type": "rcvMsgContent", "msgContent": {"type": "text", "text": description}},
            sender_member_id=host_id,
            shared_msg_id=shared,
            show_group_as_sender=not direct,
        )
        g.prepared["welcomeSharedMsgId"] = shared
    return _prepared_response(ctx, user, "group", g.group_id)


def _incognito(ctx: CoreContext, user: UserRow, flag: str | None) -> int | None:
    return ctx.incognito_profile(user).profile_id if flag == "on" else None


def _message_arg(a: Args) -> JSON | None:
    if a.get("msg") is not None:
        mc = json_object(a["msg"], "MsgContent")
        if not isinstance(mc.get("type"), str):
            raise command_error("MsgContent: type expected")
        return mc
    if a.get("text") is not None:
        return {"type": "text", "text": a["text"]}
    return None


def _custom(ctx: CoreContext, incognito_id: int | None) -> JSON:
    if incognito_id is None:
        return {}
    return {"customUserProfile": rec.profile(ctx.db.profiles[incognito_id])}


def join(
    ctx: CoreContext,
    user: UserRow,
    r: Resolved,
    conn: ConnRow,
    incognito_id: int | None,
    *,
    message: JSON | None = None,
    message_shared_id: str | None = None,
    welcome_seen: bool = False,
    business_member_id: str | None = None,
) -> None:
    """Send the first message of a connection to the link's owner."""
    t = r.target
    profile = ctx.profile_for_peer(user, incognito_id)
    if t.kind == "invitation":
        owner_conn = ctx.peer(t.core).db.conns[t.row_id]
        conn.peer = owner_conn.agent_conn_id
        ctx.network.unregister_link(_inv_keys(owner_conn))
        ctx.send_on(conn, {"t": "x.inv.join", "profile": profile})
        return
    body: JSON = {
        "t": "x.grp.link.join" if t.kind == "group" else "x.contact",
        "profile": profile,
        "xContactId": conn.x_contact_id,
    }
    if message is not None:
        body["msg"] = message
        body["msgSharedId"] = message_shared_id
    if welcome_seen:
        body["welcomeSeen"] = True
    if business_member_id is not None:
        body["memberId"] = business_member_id
    ctx.send_to_link(r.ref.lookup_key, t.router, t.core, body, conn.agent_conn_id)


def _pending_conn(
    ctx: CoreContext, user: UserRow, r: Resolved, incognito_id: int | None, **kw: Any
) -> ConnRow:
    t = r.target
    pending = {"invitation": "join_invitation", "address": "address", "group": "group_link"}[t.kind]
    group_link_id = None
    owner_db = ctx.peer(t.core).db
    if t.kind == "invitation":
        pending_link = copy.deepcopy(owner_db.conns[t.row_id].conn_link_inv)
    else:
        row = owner_db.links[t.row_id]
        pending_link = rec.created_conn_link(row.full, row.short)
        group_link_id = row.group_link_id
    return ctx.new_conn(
        user,
        "contact",
        "joined",
        via_contact_uri=t.kind != "invitation",
        pending=pending,
        pending_target=r.ref.lookup_key,
        custom_user_profile_id=incognito_id,
        x_contact_id=ctx.random_id(12) if t.kind != "invitation" else None,
        group_link_id=group_link_id,
        contact_conn_initiated=True,
        pending_link=pending_link,
        **kw,
    )


def _resolve_prepared(ctx: CoreContext, user: UserRow, prepared: JSON) -> Resolved:
    """The link a prepared contact or group connects to."""
    link = prepared["connLinkToConnect"]
    text = link.get("connShortLink") or link["connFullLink"]
    return resolve(ctx, user, text, allow_names=False)


def _request_item(
    ctx: CoreContext,
    user: UserRow,
    chat_type: str,
    chat_id: int,
    prepared: JSON,
    message: JSON | None,
) -> str | None:
    """The message sent with a connection request, as a sent item of the prepared chat;
    its shared message ID (``None`` without a message). A message over the size limit is
    refused as the core refuses it (``largeMsg``)."""
    if message is None:
        return None
    check_size(message)
    shared = ctx.random_id()
    ctx.new_item(
        user,
        chat_type,
        chat_id,
        f"{chat_type}Snd",
        {"type": "sndMsgContent", "msgContent": message},
        shared_msg_id=shared,
    )
    prepared["requestSharedMsgId"] = shared
    return shared


@COMMANDS.command(
    "/_connect contact @<contactId:int>[ incognito=<incognito:onoff>]"
    "[ text <text:text>][ json <msg:json>]"
)
def connect_prepared_contact(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    c = ctx.get_contact(user, parse_int(a["contactId"]))
    if c.prepared is None or c.conn_id is not None:
        raise command_error("contact doesn't have link to connect")
    r = _resolve_prepared(ctx, user, c.prepared)
    message = _message_arg(a)
    incognito_id = _incognito(ctx, user, a["incognito"])
    conn = _pending_conn(ctx, user, r, incognito_id, contact_id=c.contact_id)
    c.conn_id = conn.conn_id
    c.via_link = r.ref.lookup_key
    shared = _request_item(ctx, user, "direct", c.contact_id, c.prepared, message)
    join(
        ctx,
        user,
        r,
        conn,
        incognito_id,
        message=message,
        message_shared_id=shared,
        welcome_seen="welcomeSharedMsgId" in c.prepared,
    )
    return {
        "type": "startedConnectionToContact",
        "user": ctx.user_json(user.user_id),
        "contact": ctx.contact_json(c),
        **_custom(ctx, incognito_id),
    }


@COMMANDS.command(
    "/_connect group #<groupId:int>[ incognito=<incognito:onoff>]"
    "[ text <text:text>][ json <msg:json>]"
)
def connect_prepared_group(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    g = ctx.get_group(user, parse_int(a["groupId"]))
    if g.prepared is None or g.prepared.get("connLinkStartedConnection"):
        raise command_error("group doesn't have link to connect")
    r = _resolve_prepared(ctx, user, g.prepared)
    message = _message_arg(a)
    incognito_id = _incognito(ctx, user, a["incognito"])
    m = ctx.membership(g)
    if incognito_id is not None:
        m.profile_id = incognito_id
    conn = _pending_conn(ctx, user, r, incognito_id, pending_group_id=g.group_id)
    if g.host_member_id is not None:
        ctx.db.members[g.host_member_id].conn_id = conn.conn_id
        conn.conn_type = "member"
        conn.member_id = g.host_member_id
    g.prepared["connLinkPreparedConnection"] = True
    g.prepared["connLinkStartedConnection"] = True
    m.status = "accepted"
    shared = _request_item(ctx, user, "group", g.group_id, g.prepared, message)
    join(
        ctx,
        user,
        r,
        conn,
        incognito_id,
        message=message,
        message_shared_id=shared,
        welcome_seen="welcomeSharedMsgId" in g.prepared,
        business_member_id=m.member_id if g.business is not None else None,
    )
    return {
        "type": "startedConnectionToGroup",
        "user": ctx.user_json(user.user_id),
        "groupInfo": ctx.group_json(g),
        **_custom(ctx, incognito_id),
        "relayResults": [],
    }


@COMMANDS.command("/_connect contact <userId:int>[ incognito=<incognito:onoff>] <contactId:int>")
def connect_contact_via_address(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    c = ctx.get_contact(user, parse_int(a["contactId"]))
    card = ctx.db.profiles[c.profile_id].profile.get("contactLink")
    if not isinstance(card, str) or c.conn_id is not None:
        raise command_error("contact doesn't have address to connect")
    r = resolve(ctx, user, card, allow_names=False)
    incognito_id = _incognito(ctx, user, a["incognito"])
    conn = _pending_conn(ctx, user, r, incognito_id, contact_id=c.contact_id)
    c.conn_id = conn.conn_id
    c.via_link = r.ref.lookup_key
    join(ctx, user, r, conn, incognito_id)
    return {
        "type": "sentInvitationToContact",
        "user": ctx.user_json(user.user_id),
        "contact": ctx.contact_json(c),
        **_custom(ctx, incognito_id),
    }


@COMMANDS.command("/_connect <userId:int>[ incognito=<incognito:onoff>]")
def add_contact(ctx: CoreContext, a: Args) -> JSON:
    # Before the link form, as in the core's parser (APIAddContact is tried first): with the
    # link optional there, "/_connect 1 incognito=on" would read "incognito=on" as a link.
    user = ctx.user_by_id(a["userId"])
    if ctx.network.faults.is_router_down(user.router):
        raise broker_timeout(user.router)
    incognito_id = _incognito(ctx, user, a["incognito"])
    full, short, key, queue_id = make_invitation_link(ctx.network.random, user.router)
    conn_link = rec.created_conn_link(full, short)
    conn = ctx.new_conn(
        user,
        "contact",
        "new",
        pending="invitation",
        conn_link_inv=conn_link,
        custom_user_profile_id=incognito_id,
        contact_conn_initiated=True,
    )
    conn.pending_target = key
    ctx.network.register_link(
        [key, queue_id], LinkTarget("invitation", ctx.name, conn.conn_id, user.router)
    )
    return {
        "type": "invitation",
        "user": ctx.user_json(user.user_id),
        "connLinkInvitation": conn_link,
        "connection": rec.pending_connection(conn),
    }


@COMMANDS.command(
    "/_connect <userId:int>[ incognito=<incognito:onoff>] <fullLink:word>[ <shortLink:link>]"
)
def connect_link(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    text = a["shortLink"] or a["fullLink"] or ""
    r = resolve(ctx, user, text, allow_names=False)
    return connect_resolved(ctx, user, r, a["incognito"])


def connect_resolved(ctx: CoreContext, user: UserRow, r: Resolved, incognito: str | None) -> JSON:
    """Connect to a resolved link: a one-time invitation, an address or a group link."""
    if r.ref.link_type == "channel":
        raise command_error("channel links must be connected via APIConnectPreparedGroup")
    owner = ctx.peer(r.target.core)
    if owner is ctx and target_user(ctx, r.target) == user.user_id:
        raise command_error("can't connect to your own link")
    if r.target.kind == "address":
        for c in ctx.db.contacts.values():
            conn = ctx.db.conns.get(c.conn_id or 0)
            if (
                c.user_id == user.user_id
                and c.via_link == r.ref.lookup_key
                and conn is not None
                and conn.status == "ready"
            ):
                return {
                    "type": "contactAlreadyExists",
                    "user": ctx.user_json(user.user_id),
                    "contact": ctx.contact_json(c),
                }
    incognito_id = _incognito(ctx, user, incognito)
    conn = _pending_conn(ctx, user, r, incognito_id)
    business_member: str | None = None
    if r.target.kind == "address":
        link = owner.db.links[r.target.row_id]
        if link.settings.get("businessAddress"):
            business_member = ctx.random_id(12)
    join(ctx, user, r, conn, incognito_id, business_member_id=business_member)
    tag = "sentConfirmation" if r.target.kind == "invitation" else "sentInvitation"
    return {
        "type": tag,
        "user": ctx.user_json(user.user_id),
        "connection": rec.pending_connection(conn),
        **_custom(ctx, incognito_id),
    }


@COMMANDS.command("/connect[ <args:rest>]", "/c[ <args:rest>]")
def connect_cli(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    words = (a["args"] or "").split()
    incognito = None
    if words and words[0] in ("incognito", "i"):
        incognito = "on"
        words = words[1:]
    if not words:
        return add_contact(ctx, {"userId": str(user.user_id), "incognito": incognito})
    r = resolve(ctx, user, words[0])
    return connect_resolved(ctx, user, r, incognito)


def business_group_profile(prof: JSON) -> JSON:
    """The group profile of a business chat: the business profile, with its commands and
    ``protocols`` copied into ``groupPreferences`` (DECL-PROTO-10)."""
    gp: JSON = {"displayName": prof.get("displayName", ""), "fullName": prof.get("fullName", "")}
    for key in ("shortDescr", "description", "image"):
        if key in prof:
            gp[key] = prof[key]
    prefs = prof.get("preferences")
    group_prefs: JSON = {}
    if isinstance(prefs, dict):
        # DECL-PROTO-10: "In a business chat, protocols of the business profile MUST be
        # copied into the chat's groupPreferences, as commands are."
        for key in ("commands", "protocols"):
            if key in prefs:
                group_prefs[key] = copy.deepcopy(prefs[key])
    if group_prefs:
        gp["groupPreferences"] = group_prefs
    return gp


def _inv_keys(conn: ConnRow) -> list[str]:
    keys: list[str] = []
    link = conn.conn_link_inv or {}
    for text in (link.get("connShortLink"), link.get("connFullLink")):
        if isinstance(text, str):
            ref = parse_link(text)
            if ref is not None:
                keys.append(ref.lookup_key)
    return keys
