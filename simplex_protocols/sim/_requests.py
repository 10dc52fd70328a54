"""Contact requests at an address: received, accepted (at once with auto-accept, or on
``/_accept``), or rejected (``/_reject``).

Accepting makes the contact, or at a business address a business chat (a group of the business
and the customer), and answers the requester with ``x.conf``; the welcome message of the
address (``autoReply``) is sent once the requester confirms (``x.ok``).
"""

from __future__ import annotations

import copy
from typing import Any

from . import _records as rec
from ._cmd_connect import business_group_profile
from ._context import Args, CoreContext, parse_int
from ._delivery import Delivery
from ._errors import store_error
from ._grammar import CommandGroup
from ._inbound import ReceiveTable
from ._store import ConnRow, ContactRow, GroupRow, LinkRow, RequestRow, UserRow

__all__ = ["COMMANDS", "RECEIVE"]

JSON = dict[str, Any]

#: The commands of this module, in matching order.
COMMANDS = CommandGroup("requests")

#: The messages this module handles.
RECEIVE = ReceiveTable()


@RECEIVE.at_link("x.contact", "address")
def on_contact_request(ctx: CoreContext, link: LinkRow, d: Delivery) -> None:
    """A contact request at one of our addresses: accepted at once, or reported."""
    body = d.body
    user = ctx.db.users[link.user_id]
    prow = ctx.profile_row(body.get("profile"))
    ts = ctx.ts()
    req = RequestRow(
        contact_request_id=ctx.db.next_id("requests"),
        user_id=user.user_id,
        link_id=link.link_id,
        agent_invitation_id=ctx.random_id(12),
        profile_id=prow.profile_id,
        local_display_name=ctx.unique_name(user.user_id, str(prow.profile.get("displayName", ""))),
        x_contact_id=str(body.get("xContactId") or ctx.random_id(12)),
        created_at=ts,
        updated_at=ts,
        reply_conn=d.src_agent or "",
        message=body.get("msg") if isinstance(body.get("msg"), dict) else None,
        request_shared_msg_id=body.get("msgSharedId"),
        welcome_seen=bool(body.get("welcomeSeen")),
        member_id=body["memberId"] if isinstance(body.get("memberId"), str) else None,
    )
    ctx.db.requests[req.contact_request_id] = req
    if "autoAccept" in link.settings:
        _accept_any(ctx, user, req, None, announce=True)
        return
    ctx.emit(
        {
            "type": "receivedContactRequest",
            "user": ctx.user_json(user.user_id),
            "contactRequest": rec.user_contact_request(ctx.db, req),
        }
    )


@COMMANDS.command("/_accept[ incognito=<incognito:onoff>] <reqId:int>")
def accept_contact(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    req = ctx.db.requests.get(parse_int(a["reqId"]))
    if req is None or req.user_id != user.user_id:
        raise store_error("contactRequestNotFound", contactRequestId=parse_int(a["reqId"]))
    incognito_id = ctx.incognito_profile(user).profile_id if a["incognito"] == "on" else None
    entity = _accept_any(ctx, user, req, incognito_id, announce=False)
    if isinstance(entity, GroupRow):
        return {
            "type": "acceptingBusinessRequest",
            "user": ctx.user_json(user.user_id),
            "groupInfo": ctx.group_json(entity),
        }
    return {
        "type": "acceptingContactRequest",
        "user": ctx.user_json(user.user_id),
        "contact": ctx.contact_json(entity),
    }


def _accept_any(
    ctx: CoreContext, user: UserRow, req: RequestRow, incognito_id: int | None, *, announce: bool
) -> ContactRow | GroupRow:
    """Accept a contact request; with ``announce``, report it as auto-accepted."""
    link = ctx.db.links[req.link_id]
    ctx.db.requests.pop(req.contact_request_id, None)
    prow = ctx.db.profiles[req.profile_id]
    welcome = None if req.welcome_seen else link.settings.get("autoReply")
    if link.settings.get("businessAddress"):
        return _accept_business(ctx, user, link, req, prow, welcome, announce)
    conn = _accepted_conn(ctx, user, "contact", link, req, welcome, incognito_id)
    c = ctx.new_contact(user, prow, conn_id=conn.conn_id, used=True)
    conn.contact_id = c.contact_id
    if announce:
        ctx.emit(
            {
                "type": "acceptingContactRequest",
                "user": ctx.user_json(user.user_id),
                "contact": ctx.contact_json(c),
            }
        )
    _request_message(ctx, user, req, "direct", c.contact_id)
    ctx.send_on(
        conn,
        {
            "t": "x.conf",
            "kind": "contact",
            "profile": ctx.profile_for_peer(user, incognito_id),
        },
    )
    return c


def _accept_business(
    ctx: CoreContext,
    user: UserRow,
    link: LinkRow,
    req: RequestRow,
    prow: Any,
    welcome: Any,
    announce: bool,
) -> GroupRow:
    my_profile = ctx.user_profile(user)
    g = ctx.new_group_row(
        user,
        business_group_profile(my_profile.profile),
        net_id=ctx.random_id(16),
        role="owner",
        status="creator",
    )
    customer_id = req.member_id or ctx.random_id(12)
    g.business = {
        "chatType": "customer",
        "businessId": ctx.membership(g).member_id,
        "customerId": customer_id,
    }
    conn = _accepted_conn(ctx, user, "member", link, req, welcome)
    m = ctx.new_member(
        user,
        g.group_id,
        customer_id,
        "member",
        "invitee",
        "accepted",
        prow,
        invited_by={"type": "user"},
        conn_id=conn.conn_id,
    )
    conn.member_id = m.group_member_id
    if announce:
        ctx.emit(
            {
                "type": "acceptingBusinessRequest",
                "user": ctx.user_json(user.user_id),
                "groupInfo": ctx.group_json(g),
            }
        )
    _request_message(ctx, user, req, "group", g.group_id, m.group_member_id)
    ctx.send_on(
        conn,
        {
            "t": "x.conf",
            "kind": "business",
            "groupProfile": copy.deepcopy(g.profile),
            "netId": g.net_id,
            "memberId": customer_id,
            "role": "member",
            "host": ctx.member_info(ctx.membership(g)),
            "direct": True,
            "business": {"businessId": g.business["businessId"], "customerId": customer_id},
        },
    )
    return g


def _accepted_conn(
    ctx: CoreContext,
    user: UserRow,
    conn_type: str,
    link: LinkRow,
    req: RequestRow,
    welcome: Any,
    incognito_id: int | None = None,
) -> ConnRow:
    """The connection of an accepted request: to its sender, with the welcome to send."""
    conn = ctx.new_conn(
        user,
        conn_type,
        "accepted",
        via_user_contact_link=link.link_id,
        x_contact_id=req.x_contact_id,
        custom_user_profile_id=incognito_id,
    )
    conn.peer = req.reply_conn
    conn.welcome = copy.deepcopy(welcome) if isinstance(welcome, dict) else None
    return conn


def _request_message(
    ctx: CoreContext,
    user: UserRow,
    req: RequestRow,
    chat_type: str,
    chat_id: int,
    sender_member_id: int | None = None,
) -> None:
    """The message sent with an accepted request, as a received item of the new chat."""
    if req.message is None:
        return
    item = ctx.new_item(
        user,
        chat_type,
        chat_id,
        f"{chat_type}Rcv",
        {"type": "rcvMsgContent", "msgContent": copy.deepcopy(req.message)},
        sender_member_id=sender_member_id,
        shared_msg_id=req.request_shared_msg_id,
    )
    ctx.emit_new_items(user, [item])


@COMMANDS.command("/_reject <reqId:int>[ notify=<notify:onoff>]")
def reject_contact(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    req = ctx.db.requests.get(parse_int(a["reqId"]))
    if req is None or req.user_id != user.user_id:
        raise store_error("contactRequestNotFound", contactRequestId=parse_int(a["reqId"]))
    req_json = rec.user_contact_request(ctx.db, req)
    del ctx.db.requests[req.contact_request_id]
    if a["notify"] == "on":
        target = ctx.network.core_of_agent(req.reply_conn)
        if target is not None:
            ctx.network.send(ctx.name, target[0], req.reply_conn, target[1], {"t": "x.contact.rej"})
    return {
        "type": "contactRequestRejected",
        "user": ctx.user_json(user.user_id),
        "contactRequest": req_json,
    }
