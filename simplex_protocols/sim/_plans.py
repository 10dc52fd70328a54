"""Resolving links and SimpleX names, and the connection plans of ``/_connect plan``.

A link or a name resolves to a :class:`~simplex_protocols.sim._delivery.LinkTarget`: the core
and the row (address, group link or one-time invitation) it names. What a plan reports of the
target comes from the owner's database, as the router would serve the link's data.
"""

from __future__ import annotations

import copy
from typing import Any

from . import _records as rec
from ._context import Args, CoreContext
from ._delivery import LinkTarget, NameRecord
from ._errors import agent_error, broker_timeout, chat_error, smp_error
from ._grammar import CommandGroup
from ._links import LinkRef, parse_link, parse_name
from ._store import ConnRow, LinkRow, UserRow

__all__ = ["COMMANDS", "Resolved", "claim_domain", "name_link", "resolve", "target_user"]

JSON = dict[str, Any]

#: The commands of this module, in matching order.
COMMANDS = CommandGroup("plans")


class Resolved:
    """A link or a name resolved on the network."""

    def __init__(
        self, ref: LinkRef, target: LinkTarget, name_info: JSON | None, name: str | None
    ) -> None:
        self.ref = ref
        self.target = target
        self.name_info = name_info
        self.name = name


def resolve(ctx: CoreContext, user: UserRow, text: str, *, allow_names: bool = True) -> Resolved:
    """Resolve a link or a SimpleX name to its target, failing as the core fails."""
    name_info: JSON | None = None
    name_full: str | None = None
    link_text = text
    if parse_link(text) is None and allow_names:
        name = parse_name(text)
        if name is None:
            raise chat_error("invalidConnReq")
        if not ctx.network.faults.has_name_servers(ctx.name):
            raise agent_error({"type": "NO_NAME_SERVERS"})
        if ctx.network.faults.is_router_down(user.router):
            raise broker_timeout(user.router)
        record = ctx.network.name_record(name.full)
        if record is None:
            raise smp_error(user.router, {"type": "NAME", "nameErr": {"type": "NOT_FOUND"}})
        domain = name.simplex_domain()
        if not record.known_domain:
            raise chat_error(
                "simplexDomainNotReady",
                simplexDomain=domain,
                simplexDomainError={"type": "unknownDomain"},
            )
        link = name_link(ctx.peer(record.core), record)
        if link is None:
            raise chat_error(
                "simplexDomainNotReady",
                simplexDomain=domain,
                simplexDomainError={"type": "noValidLink"},
            )
        link_text = link
        name_full = name.full
        name_info = {
            "nameType": "publicGroup" if record.kind == "publicGroup" else "contact",
            "nameDomain": domain,
        }
    resolved = ctx.network.resolve_link(link_text)
    if resolved is None:
        raise chat_error("invalidConnReq")
    ref, target = resolved
    if target is None:
        raise smp_error(ref.host, {"type": "AUTH"})
    if ctx.network.faults.is_router_down(target.router):
        raise broker_timeout(target.router)
    return Resolved(ref, target, name_info, name_full)


def name_link(ctx: CoreContext, record: NameRecord) -> str | None:
    """The link a registered name points to now (``None``: the target has no link)."""
    if record.kind == "publicGroup":
        g = ctx.db.groups.get(record.group_id) if record.group_id is not None else None
        if g is None or g.link_id is None or g.link_id not in ctx.db.links:
            return None
        return ctx.db.links[g.link_id].short
    u = ctx.db.users.get(record.user_id)
    if u is None or u.address_link_id is None or u.address_link_id not in ctx.db.links:
        return None
    return ctx.db.links[u.address_link_id].short


def claim_domain(
    ctx: CoreContext, user_id: int, name: str, kind: str, group_id: int | None
) -> None:
    """Put a verified domain claim into the user's profile or the group's public record."""
    if kind == "contact":
        prof = ctx.user_profile(ctx.db.users[user_id])
        prof.profile["contactDomain"] = {"domain": name}
        return
    if group_id is None:
        return
    g = ctx.db.groups[group_id]
    pub = g.profile.get("publicGroup")
    if isinstance(pub, dict):
        access = pub.setdefault(
            "publicGroupAccess", {"domainWebPage": False, "allowEmbedding": False}
        )
        access["groupDomainClaim"] = {"domain": name}
    g.domain_verified = True


def address_link_data(ctx: CoreContext, link: LinkRow) -> JSON:
    """ContactShortLinkData of one of our addresses, as the router serves it."""
    user = ctx.db.users[link.user_id]
    data: JSON = {"profile": rec.profile(ctx.user_profile(user))}
    reply = link.settings.get("autoReply")
    if isinstance(reply, dict):
        data["message"] = copy.deepcopy(reply)
    data["business"] = bool(link.settings.get("businessAddress", False))
    if "serves" in link.settings:
        data["serves"] = list(link.settings["serves"])
    return data


def group_link_data(ctx: CoreContext, link: LinkRow) -> tuple[JSON, JSON]:
    """(GroupShortLinkInfo, GroupShortLinkData) of one of our group links."""
    g = ctx.db.groups[link.group_id or 0]
    info: JSON = {"direct": g.direct, "groupRelays": []}
    pub = g.profile.get("publicGroup")
    if isinstance(pub, dict) and isinstance(pub.get("publicGroupId"), str):
        info["publicGroupId"] = pub["publicGroupId"]
    data: JSON = {"groupProfile": copy.deepcopy(g.profile)}
    if isinstance(pub, dict):
        current = sum(1 for m in ctx.db.group_members(g.group_id) if rec.current_member(m))
        data["publicGroupData"] = {"publicMemberCount": current}
    return info, data


def invitation_link_data(ctx: CoreContext, conn: ConnRow) -> JSON:
    """ContactShortLinkData of one of our one-time invitations."""
    user = ctx.db.users[conn.user_id]
    return {
        "profile": ctx.profile_for_peer(user, conn.custom_user_profile_id),
        "business": False,
    }


@COMMANDS.command(
    "/_connect plan <userId:int> <target:word>[ resolve=<resolve:resolve>][ sig=<sig:json>]"
)
def connect_plan(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    ref = parse_link(a["target"] or "")
    if ref is not None and ref.link_type == "invitation":
        local = _local_invitation_plan(ctx, user, ref.lookup_key)
        if local is not None:
            return {
                "type": "connectionPlan",
                "user": ctx.user_json(user.user_id),
                "connLink": local[0],
                "connectionPlan": {"type": "invitationLink", "invitationLinkPlan": local[1]},
            }
    r = resolve(ctx, user, a["target"] or "")
    owner = ctx.peer(r.target.core)
    conn_link, plan = _plan(ctx, user, r, owner)
    out: JSON = {
        "type": "connectionPlan",
        "user": ctx.user_json(user.user_id),
        "connLink": conn_link,
    }
    if r.name_info is not None:
        out["planSimplexName"] = r.name_info
    out["connectionPlan"] = plan
    return out


def _plan(ctx: CoreContext, user: UserRow, r: Resolved, owner: CoreContext) -> tuple[JSON, JSON]:
    t = r.target
    own = owner is ctx and target_user(ctx, t) == user.user_id
    key = r.ref.lookup_key
    if t.kind == "invitation":
        pcc = owner.db.conns[t.row_id]
        link = rec.created_conn_link(
            (pcc.conn_link_inv or {}).get("connFullLink", ""),
            (pcc.conn_link_inv or {}).get("connShortLink"),
        )
        if own:
            return link, {"type": "invitationLink", "invitationLinkPlan": {"type": "ownLink"}}
        mine = _my_conn_for(ctx, user, key)
        if mine is not None:
            c = ctx.db.contacts.get(mine.contact_id or 0)
            if c is not None and mine.status == "ready":
                sub: JSON = {"type": "known", "contact": ctx.contact_json(c)}
            else:
                sub = {"type": "connecting"}
                if c is not None:
                    sub["contact_"] = ctx.contact_json(c)
            return link, {"type": "invitationLink", "invitationLinkPlan": sub}
        ok: JSON = {"type": "ok", "contactSLinkData_": invitation_link_data(owner, pcc)}
        return link, {"type": "invitationLink", "invitationLinkPlan": ok}
    link_row = owner.db.links[t.row_id]
    link = rec.created_conn_link(link_row.full, link_row.short)
    if t.kind == "address":
        return link, {
            "type": "contactAddress",
            "contactAddressPlan": _address_plan(ctx, user, own, key, link_row, owner),
        }
    return link, {
        "type": "groupLink",
        "groupLinkPlan": _group_plan(ctx, user, own, key, link_row, owner),
    }


def _local_invitation_plan(ctx: CoreContext, user: UserRow, key: str) -> tuple[JSON, JSON] | None:
    """A one-time link this database knows (ours, or one we used): planned locally."""
    for conn in ctx.db.conns.values():
        if conn.user_id != user.user_id or conn.pending_target != key:
            continue
        if conn.pending not in ("invitation", "join_invitation"):
            continue
        link = copy.deepcopy(conn.conn_link_inv or conn.pending_link or {"connFullLink": ""})
        c = ctx.db.contacts.get(conn.contact_id or 0)
        if c is not None and conn.status == "ready":
            return link, {"type": "known", "contact": ctx.contact_json(c)}
        if conn.pending == "invitation":
            return link, {"type": "ownLink"}
        sub: JSON = {"type": "connecting"}
        if c is not None:
            sub["contact_"] = ctx.contact_json(c)
        return link, sub
    return None


def target_user(ctx: CoreContext, t: LinkTarget) -> int:
    """The user who owns the link or the one-time invitation ``t`` names."""
    owner = ctx.peer(t.core)
    if t.kind == "invitation":
        return owner.db.conns[t.row_id].user_id
    return owner.db.links[t.row_id].user_id


def _my_conn_for(ctx: CoreContext, user: UserRow, key: str) -> ConnRow | None:
    for conn in ctx.db.conns.values():
        if conn.user_id == user.user_id and conn.pending_target == key:
            return conn
    return None


def _address_plan(
    ctx: CoreContext, user: UserRow, own: bool, key: str, link: LinkRow, owner: CoreContext
) -> JSON:
    if own:
        return {"type": "ownLink"}
    for c in ctx.db.contacts.values():
        if c.user_id != user.user_id or c.via_link != key or c.status != "active":
            continue
        conn = ctx.db.conns.get(c.conn_id or 0)
        if conn is None:
            continue
        if conn.status == "ready":
            return {"type": "known", "contact": ctx.contact_json(c)}
        return {"type": "connectingProhibit", "contact": ctx.contact_json(c)}
    mine = _my_conn_for(ctx, user, key)
    if (
        mine is not None
        and mine.status != "ready"
        and mine.contact_id is None
        and mine.pending_group_id is None
    ):
        return {"type": "connectingConfirmReconnect"}
    for c in ctx.db.contacts.values():
        if c.user_id != user.user_id or c.is_user_contact or c.conn_id is not None:
            continue
        card = ctx.db.profiles[c.profile_id].profile.get("contactLink")
        if c.prepared is None and card in (link.short, link.full):
            return {"type": "contactViaAddress", "contact": ctx.contact_json(c)}
    # The link data is read from the router and decoded by this core's records.
    return {
        "type": "ok",
        "contactSLinkData_": ctx.core_profile.contact_link_data(address_link_data(owner, link)),
    }


def _group_plan(
    ctx: CoreContext, user: UserRow, own: bool, key: str, link: LinkRow, owner: CoreContext
) -> JSON:
    if own:
        g = ctx.db.groups[link.group_id or 0]
        return {"type": "ownLink", "groupInfo": ctx.group_json(g)}
    for g in ctx.db.groups.values():
        if g.user_id != user.user_id or g.via_link != key:
            continue
        m = ctx.membership(g)
        if m.status in ("connected", "complete", "creator"):
            return {
                "type": "known",
                "groupInfo": ctx.group_json(g),
                "groupUpdated": False,
                "linkOwners": [],
            }
        started = g.prepared is None or bool(g.prepared.get("connLinkStartedConnection"))
        if started and rec.current_member(m):
            return {"type": "connectingProhibit", "groupInfo_": ctx.group_json(g)}
    mine = _my_conn_for(ctx, user, key)
    if mine is not None and mine.status != "ready" and mine.pending_group_id is None:
        return {"type": "connectingConfirmReconnect"}
    info, data = group_link_data(owner, link)
    data = ctx.core_profile.group_link_data(data)
    return {"type": "ok", "groupSLinkInfo_": info, "groupSLinkData_": data}
