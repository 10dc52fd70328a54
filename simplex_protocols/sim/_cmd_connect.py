"""Commands: connection plans, prepared chats, connecting by links and names, requests."""

from __future__ import annotations

import copy
from typing import Any

from . import _records as rec
from ._cmd_messages import MessageCommands
from ._cmd_users import json_object
from ._corebase import parse_int
from ._errors import (
    agent_error,
    broker_timeout,
    chat_error,
    command_error,
    smp_error,
    store_error,
)
from ._links import LinkRef, make_invitation_link, parse_link, parse_name
from ._network import LinkTarget
from ._store import ConnRow, GroupRow, LinkRow, UserRow

__all__ = ["ConnectCommands", "Resolved"]

JSON = dict[str, Any]
Args = dict[str, str | None]


class Resolved:
    """A link or a name resolved on the network."""

    def __init__(
        self, ref: LinkRef, target: LinkTarget, name_info: JSON | None, name: str | None
    ) -> None:
        self.ref = ref
        self.target = target
        self.name_info = name_info
        self.name = name


class ConnectCommands(MessageCommands):
    # ------------------------------------------------------------------ resolution

    def resolve(self, user: UserRow, text: str, *, allow_names: bool = True) -> Resolved:
        """Resolve a link or a SimpleX name to its target, failing as the core fails."""
        name_info: JSON | None = None
        name_full: str | None = None
        link_text = text
        if parse_link(text) is None and allow_names:
            name = parse_name(text)
            if name is None:
                raise chat_error("invalidConnReq")
            if not self.network.faults.has_name_servers(self.name):
                raise agent_error({"type": "NO_NAME_SERVERS"})
            if self.network.faults.is_router_down(user.router):
                raise broker_timeout(user.router)
            record = self.network.name_record(name.full)
            if record is None:
                raise smp_error(user.router, {"type": "NAME", "nameErr": {"type": "NOT_FOUND"}})
            domain = name.simplex_domain()
            if not record.known_domain:
                raise chat_error(
                    "simplexDomainNotReady",
                    simplexDomain=domain,
                    simplexDomainError={"type": "unknownDomain"},
                )
            link = self.network.core(record.core).name_link(record)
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
        resolved = self.network.resolve_link(link_text)
        if resolved is None:
            raise chat_error("invalidConnReq")
        ref, target = resolved
        if target is None:
            raise smp_error(ref.host, {"type": "AUTH"})
        if self.network.faults.is_router_down(target.router):
            raise broker_timeout(target.router)
        return Resolved(ref, target, name_info, name_full)

    def name_link(self, record: Any) -> str | None:
        """The link a registered name points to now (``None``: the target has no link)."""
        if record.kind == "publicGroup":
            g = self.db.groups.get(record.group_id)
            if g is None or g.link_id is None or g.link_id not in self.db.links:
                return None
            return self.db.links[g.link_id].short
        u = self.db.users.get(record.user_id)
        if u is None or u.address_link_id is None or u.address_link_id not in self.db.links:
            return None
        return self.db.links[u.address_link_id].short

    def claim_domain(self, user_id: int, name: str, kind: str, group_id: int | None) -> None:
        """Put a verified domain claim into the user's profile or the group's public record."""
        if kind == "contact":
            prof = self.user_profile(self.db.users[user_id])
            prof.profile["contactDomain"] = {"domain": name}
            return
        if group_id is None:
            return
        g = self.db.groups[group_id]
        pub = g.profile.get("publicGroup")
        if isinstance(pub, dict):
            access = pub.setdefault(
                "publicGroupAccess", {"domainWebPage": False, "allowEmbedding": False}
            )
            access["groupDomainClaim"] = {"domain": name}
        g.domain_verified = True

    def owner_core(self, target: LinkTarget) -> ConnectCommands:
        core = self.network.core(target.core)
        assert isinstance(core, ConnectCommands)
        return core

    # ------------------------------------------------------------------ link data

    def address_link_data(self, link: LinkRow) -> JSON:
        """ContactShortLinkData of one of our addresses, as the router serves it."""
        user = self.db.users[link.user_id]
        data: JSON = {"profile": rec.profile(self.user_profile(user))}
        reply = link.settings.get("autoReply")
        if isinstance(reply, dict):
            data["message"] = copy.deepcopy(reply)
        data["business"] = bool(link.settings.get("businessAddress", False))
        if "serves" in link.settings:
            data["serves"] = list(link.settings["serves"])
        return data

    def group_link_data(self, link: LinkRow) -> tuple[JSON, JSON]:
        """(GroupShortLinkInfo, GroupShortLinkData) of one of our group links."""
        g = self.db.groups[link.group_id or 0]
        info: JSON = {"direct": g.direct, "groupRelays": []}
        pub = g.profile.get("publicGroup")
        if isinstance(pub, dict) and isinstance(pub.get("publicGroupId"), str):
            info["publicGroupId"] = pub["publicGroupId"]
        data: JSON = {"groupProfile": copy.deepcopy(g.profile)}
        if isinstance(pub, dict):
            current = sum(1 for m in self.db.group_members(g.group_id) if rec.current_member(m))
            data["publicGroupData"] = {"publicMemberCount": current}
        return info, data

    def invitation_link_data(self, conn: ConnRow) -> JSON:
        user = self.db.users[conn.user_id]
        return {
            "profile": self.profile_for_peer(user, conn.custom_user_profile_id),
            "business": False,
        }

    # ------------------------------------------------------------------ plans

    def cmd_connect_plan(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        ref = parse_link(a["target"] or "")
        if ref is not None and ref.link_type == "invitation":
            local = self._local_invitation_plan(user, ref.lookup_key)
            if local is not None:
                return {
                    "type": "connectionPlan",
                    "user": self.user_json(user.user_id),
                    "connLink": local[0],
                    "connectionPlan": {"type": "invitationLink", "invitationLinkPlan": local[1]},
                }
        r = self.resolve(user, a["target"] or "")
        owner = self.owner_core(r.target)
        conn_link, plan = self.plan(user, r, owner)
        out: JSON = {
            "type": "connectionPlan",
            "user": self.user_json(user.user_id),
            "connLink": conn_link,
        }
        if r.name_info is not None:
            out["planSimplexName"] = r.name_info
        out["connectionPlan"] = plan
        return out

    def plan(self, user: UserRow, r: Resolved, owner: ConnectCommands) -> tuple[JSON, JSON]:
        t = r.target
        own = owner is self and self._target_user(t) == user.user_id
        key = r.ref.lookup_key
        if t.kind == "invitation":
            pcc = owner.db.conns[t.row_id]
            link = rec.created_conn_link(
                (pcc.conn_link_inv or {}).get("connFullLink", ""),
                (pcc.conn_link_inv or {}).get("connShortLink"),
            )
            if own:
                return link, {"type": "invitationLink", "invitationLinkPlan": {"type": "ownLink"}}
            mine = self._my_conn_for(user, key)
            if mine is not None:
                c = self.db.contacts.get(mine.contact_id or 0)
                if c is not None and mine.status == "ready":
                    sub: JSON = {"type": "known", "contact": self.contact_json(c)}
                else:
                    sub = {"type": "connecting"}
                    if c is not None:
                        sub["contact_"] = self.contact_json(c)
                return link, {"type": "invitationLink", "invitationLinkPlan": sub}
            ok: JSON = {"type": "ok", "contactSLinkData_": owner.invitation_link_data(pcc)}
            return link, {"type": "invitationLink", "invitationLinkPlan": ok}
        link_row = owner.db.links[t.row_id]
        link = rec.created_conn_link(link_row.full, link_row.short)
        if t.kind == "address":
            return link, {
                "type": "contactAddress",
                "contactAddressPlan": self._address_plan(user, own, key, link_row, owner),
            }
        return link, {
            "type": "groupLink",
            "groupLinkPlan": self._group_plan(user, own, key, link_row, owner),
        }

    def _local_invitation_plan(self, user: UserRow, key: str) -> tuple[JSON, JSON] | None:
        """A one-time link this database knows (ours, or one we used): planned locally."""
        for conn in self.db.conns.values():
            if conn.user_id != user.user_id or conn.pending_target != key:
                continue
            if conn.pending not in ("invitation", "join_invitation"):
                continue
            link = copy.deepcopy(conn.conn_link_inv or conn.pending_link or {"connFullLink": ""})
            c = self.db.contacts.get(conn.contact_id or 0)
            if c is not None and conn.status == "ready":
                return link, {"type": "known", "contact": self.contact_json(c)}
            if conn.pending == "invitation":
                return link, {"type": "ownLink"}
            sub: JSON = {"type": "connecting"}
            if c is not None:
                sub["contact_"] = self.contact_json(c)
            return link, sub
        return None

    def _target_user(self, t: LinkTarget) -> int:
        owner = self.network.core(t.core)
        if t.kind == "invitation":
            return owner.db.conns[t.row_id].user_id
        return owner.db.links[t.row_id].user_id

    def _my_conn_for(self, user: UserRow, key: str) -> ConnRow | None:
        for conn in self.db.conns.values():
            if conn.user_id == user.user_id and conn.pending_target == key:
                return conn
        return None

    def _address_plan(
        self, user: UserRow, own: bool, key: str, link: LinkRow, owner: ConnectCommands
    ) -> JSON:
        if own:
            return {"type": "ownLink"}
        for c in self.db.contacts.values():
            if c.user_id != user.user_id or c.via_link != key or c.status != "active":
                continue
            conn = self.db.conns.get(c.conn_id or 0)
            if conn is None:
                continue
            if conn.status == "ready":
                return {"type": "known", "contact": self.contact_json(c)}
            return {"type": "connectingProhibit", "contact": self.contact_json(c)}
        mine = self._my_conn_for(user, key)
        if (
            mine is not None
            and mine.status != "ready"
            and mine.contact_id is None
            and mine.pending_group_id is None
        ):
            return {"type": "connectingConfirmReconnect"}
        for c in self.db.contacts.values():
            if c.user_id != user.user_id or c.is_user_contact or c.conn_id is not None:
                continue
            card = self.db.profiles[c.profile_id].profile.get("contactLink")
            if c.prepared is None and card in (link.short, link.full):
                return {"type": "contactViaAddress", "contact": self.contact_json(c)}
        return {"type": "ok", "contactSLinkData_": owner.address_link_data(link)}

    def _group_plan(
        self, user: UserRow, own: bool, key: str, link: LinkRow, owner: ConnectCommands
    ) -> JSON:
        if own:
            g = self.db.groups[link.group_id or 0]
            return {"type": "ownLink", "groupInfo": self.group_json(g)}
        for g in self.db.groups.values():
            if g.user_id != user.user_id or g.via_link != key:
                continue
            m = self.membership(g)
            if m.status in ("connected", "complete", "creator"):
                return {
                    "type": "known",
                    "groupInfo": self.group_json(g),
                    "groupUpdated": False,
                    "linkOwners": [],
                }
            started = g.prepared is None or bool(g.prepared.get("connLinkStartedConnection"))
            if started and rec.current_member(m):
                return {"type": "connectingProhibit", "groupInfo_": self.group_json(g)}
        mine = self._my_conn_for(user, key)
        if mine is not None and mine.status != "ready" and mine.pending_group_id is None:
            return {"type": "connectingConfirmReconnect"}
        info, data = owner.group_link_data(link)
        return {"type": "ok", "groupSLinkInfo_": info, "groupSLinkData_": data}

    # ------------------------------------------------------------------ prepared chats

    def _link_arg(self, full: str | None, short: str | None) -> JSON:
        if full is None or parse_link(full) is None:
            raise chat_error("invalidConnReq")
        if short is not None and parse_link(short) is None:
            raise chat_error("invalidConnReq")
        return rec.created_conn_link(full, short)

    def _verified_domain(self, domain: str | None, conn_link: JSON) -> bool | None:
        if domain is None:
            return None
        record = self.network.name_record(domain.lstrip("@#"))
        if record is None or not record.known_domain:
            return False
        link = self.network.core(record.core).name_link(record)
        if link is None:
            return False
        a = self.network.resolve_link(link)
        b = self.network.resolve_link(conn_link.get("connShortLink") or conn_link["connFullLink"])
        return a is not None and b is not None and a[0].lookup_key == b[0].lookup_key

    def cmd_prepare_contact(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        conn_link = self._link_arg(a["fullLink"], a["shortLink"])
        data = json_object(a["linkData"], "ContactShortLinkData")
        prof = data.get("profile")
        if not isinstance(prof, dict) or not isinstance(prof.get("displayName"), str):
            raise command_error("ContactShortLinkData: profile with displayName expected")
        ref = parse_link(conn_link["connFullLink"])
        verified = self._verified_domain(a["domain"], conn_link)
        prof = copy.deepcopy(prof)
        if verified and a["domain"] is not None and "contactDomain" not in prof:
            prof["contactDomain"] = {"domain": a["domain"].lstrip("@#")}
        welcome = data.get("message")
        if data.get("business") is True:
            g = self.prepare_business_chat(user, conn_link, prof, welcome, ref)
            g.domain_verified = verified
            return self._prepared_response(user, "group", g.group_id)
        prow = self.new_profile(prof)
        link_type = "INV" if ref is not None and ref.link_type == "invitation" else "CON"
        c = self.new_contact(
            user, prow, prepared={"connLinkToConnect": conn_link, "uiConnLinkType": link_type}
        )
        c.domain_verified = verified
        if isinstance(welcome, dict):
            shared = self.random_id()
            self.new_item(
                user,
                "direct",
                c.contact_id,
                "directRcv",
                {"type": "rcvMsgContent", "msgContent": copy.deepcopy(welcome)},
                shared_msg_id=shared,
            )
            assert c.prepared is not None
            c.prepared["welcomeSharedMsgId"] = shared
        return self._prepared_response(user, "direct", c.contact_id)

    def _prepared_response(self, user: UserRow, chat_type: str, chat_id: int) -> JSON:
        items = rec.ordered_items(self.db, chat_type, chat_id)
        stats = rec.chat_stats(self.db, chat_type, chat_id)
        return {
            "type": "newPreparedChat",
            "user": self.user_json(user.user_id),
            "chat": rec.achat(self.db, chat_type, chat_id, items, stats, self.now()),
        }

    def _new_group_row(
        self,
        user: UserRow,
        profile: JSON,
        *,
        net_id: str,
        role: str,
        status: str,
        member_id: str | None = None,
        incognito_id: int | None = None,
    ) -> GroupRow:
        ts = self.ts()
        gid = self.db.next_id("groups")
        my_profile = self.db.profiles[incognito_id] if incognito_id else self.user_profile(user)
        g = GroupRow(
            group_id=gid,
            user_id=user.user_id,
            local_display_name=self.unique_name(user.user_id, str(profile.get("displayName", ""))),
            profile=copy.deepcopy(profile),
            membership_id=0,
            net_id=net_id,
            created_at=ts,
            updated_at=ts,
            chat_ts=ts,
        )
        self.db.groups[gid] = g
        m = self.new_member(
            user,
            gid,
            member_id or self.random_id(12),
            role,
            "user",
            status,
            my_profile,
            invited_by={"type": "user"},
            contact_profile_id=self.user_profile(user).profile_id,
            member_contact_id=user.user_contact_id,
        )
        g.membership_id = m.group_member_id
        return g

    def prepare_business_chat(
        self, user: UserRow, conn_link: JSON, prof: JSON, welcome: Any, ref: LinkRef | None
    ) -> GroupRow:
        group_profile = business_group_profile(prof)
        g = self._new_group_row(user, group_profile, net_id="", role="member", status="unknown")
        host_profile = self.new_profile(prof)
        host = self.new_member(
            user, g.group_id, self.random_id(12), "owner", "host", "unknown", host_profile
        )
        g.host_member_id = host.group_member_id
        g.business = {
            "chatType": "business",
            "businessId": host.member_id,
            "customerId": self.membership(g).member_id,
        }
        g.prepared = {
            "connLinkToConnect": conn_link,
            "connLinkPreparedConnection": False,
            "connLinkStartedConnection": False,
        }
        g.via_link = ref.lookup_key if ref is not None else None
        if isinstance(welcome, dict):
            shared = self.random_id()
            self.new_item(
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

    def cmd_prepare_group(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        conn_link = self._link_arg(a["fullLink"], a["shortLink"])
        data = json_object(a["linkData"], "GroupShortLinkData")
        gp = data.get("groupProfile")
        if not isinstance(gp, dict) or not isinstance(gp.get("displayName"), str):
            raise command_error("GroupShortLinkData: groupProfile with displayName expected")
        ref = parse_link(conn_link["connFullLink"])
        direct = a["direct"] != "off"
        g = self._new_group_row(user, gp, net_id="", role="member", status="unknown")
        g.direct = direct
        g.via_link = ref.lookup_key if ref is not None else None
        g.prepared = {
            "connLinkToConnect": conn_link,
            "connLinkPreparedConnection": False,
            "connLinkStartedConnection": False,
        }
        g.domain_verified = self._verified_domain(a["domain"], conn_link)
        host_id: int | None = None
        if direct:
            placeholder = self.new_profile({"displayName": str(gp["displayName"]), "fullName": ""})
            host = self.new_member(
                user, g.group_id, self.random_id(12), "owner", "host", "unknown", placeholder
            )
            g.host_member_id = host_id = host.group_member_id
        description = gp.get("description")
        if isinstance(description, str) and description:
            shared = self.random_id()
            self.new_item(
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
        return self._prepared_response(user, "group", g.group_id)

    # ------------------------------------------------------------------ connecting

    def _incognito(self, user: UserRow, flag: str | None) -> int | None:
        return self.incognito_profile(user).profile_id if flag == "on" else None

    def _message_arg(self, a: Args) -> JSON | None:
        if a.get("msg") is not None:
            mc = json_object(a["msg"], "MsgContent")
            if not isinstance(mc.get("type"), str):
                raise command_error("MsgContent: type expected")
            return mc
        if a.get("text") is not None:
            return {"type": "text", "text": a["text"]}
        return None

    def _custom(self, incognito_id: int | None) -> JSON:
        if incognito_id is None:
            return {}
        return {"customUserProfile": rec.profile(self.db.profiles[incognito_id])}

    def join(
        self,
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
        profile = self.profile_for_peer(user, incognito_id)
        if t.kind == "invitation":
            owner_conn = self.network.core(t.core).db.conns[t.row_id]
            conn.peer = owner_conn.agent_conn_id
            self.network.unregister_link(_inv_keys(owner_conn))
            self.send_on(conn, {"t": "x.inv.join", "profile": profile})
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
        self.send_to_link(r.ref.lookup_key, t.router, t.core, body, conn.agent_conn_id)

    def _pending_conn(
        self, user: UserRow, r: Resolved, incognito_id: int | None, **kw: Any
    ) -> ConnRow:
        t = r.target
        pending = {"invitation": "join_invitation", "address": "address", "group": "group_link"}[
            t.kind
        ]
        group_link_id = None
        owner_db = self.network.core(t.core).db
        if t.kind == "invitation":
            pending_link = copy.deepcopy(owner_db.conns[t.row_id].conn_link_inv)
        else:
            row = owner_db.links[t.row_id]
            pending_link = rec.created_conn_link(row.full, row.short)
            group_link_id = row.group_link_id
        return self.new_conn(
            user,
            "contact",
            "joined",
            via_contact_uri=t.kind != "invitation",
            pending=pending,
            pending_target=r.ref.lookup_key,
            custom_user_profile_id=incognito_id,
            x_contact_id=self.random_id(12) if t.kind != "invitation" else None,
            group_link_id=group_link_id,
            contact_conn_initiated=True,
            pending_link=pending_link,
            **kw,
        )

    def cmd_connect_link(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        text = a["shortLink"] or a["fullLink"] or ""
        r = self.resolve(user, text, allow_names=False)
        return self.connect_resolved(user, r, a["incognito"])

    def connect_resolved(self, user: UserRow, r: Resolved, incognito: str | None) -> JSON:
        if r.ref.link_type == "channel":
            raise command_error("channel links must be connected via APIConnectPreparedGroup")
        owner = self.owner_core(r.target)
        if owner is self and self._target_user(r.target) == user.user_id:
            raise command_error("can't connect to your own link")
        if r.target.kind == "address":
            for c in self.db.contacts.values():
                conn = self.db.conns.get(c.conn_id or 0)
                if (
                    c.user_id == user.user_id
                    and c.via_link == r.ref.lookup_key
                    and conn is not None
                    and conn.status == "ready"
                ):
                    return {
                        "type": "contactAlreadyExists",
                        "user": self.user_json(user.user_id),
                        "contact": self.contact_json(c),
                    }
        incognito_id = self._incognito(user, incognito)
        conn = self._pending_conn(user, r, incognito_id)
        business_member: str | None = None
        if r.target.kind == "address":
            link = owner.db.links[r.target.row_id]
            if link.settings.get("businessAddress"):
                business_member = self.random_id(12)
        self.join(user, r, conn, incognito_id, business_member_id=business_member)
        tag = "sentConfirmation" if r.target.kind == "invitation" else "sentInvitation"
        return {
            "type": tag,
            "user": self.user_json(user.user_id),
            "connection": rec.pending_connection(conn),
            **self._custom(incognito_id),
        }

    def cmd_add_contact(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        if self.network.faults.is_router_down(user.router):
            raise broker_timeout(user.router)
        incognito_id = self._incognito(user, a["incognito"])
        full, short, key, queue_id = make_invitation_link(self.network.random, user.router)
        conn_link = rec.created_conn_link(full, short)
        conn = self.new_conn(
            user,
            "contact",
            "new",
            pending="invitation",
            conn_link_inv=conn_link,
            custom_user_profile_id=incognito_id,
            contact_conn_initiated=True,
        )
        conn.pending_target = key
        self.network.register_link(
            [key, queue_id], LinkTarget("invitation", self.name, conn.conn_id, user.router)
        )
        return {
            "type": "invitation",
            "user": self.user_json(user.user_id),
            "connLinkInvitation": conn_link,
            "connection": rec.pending_connection(conn),
        }

    def _resolve_prepared(self, user: UserRow, prepared: JSON) -> Resolved:
        """The link a prepared contact or group connects to."""
        link = prepared["connLinkToConnect"]
        text = link.get("connShortLink") or link["connFullLink"]
        return self.resolve(user, text, allow_names=False)

    def _request_item(
        self, user: UserRow, chat_type: str, chat_id: int, prepared: JSON, message: JSON | None
    ) -> str | None:
        """The message sent with a connection request, as a sent item of the prepared chat;
        its shared message ID (``None`` without a message). A message over the size limit is
        refused as the core refuses it (``largeMsg``)."""
        if message is None:
            return None
        self.check_size(message)
        shared = self.random_id()
        self.new_item(
            user,
            chat_type,
            chat_id,
            f"{chat_type}Snd",
            {"type": "sndMsgContent", "msgContent": message},
            shared_msg_id=shared,
        )
        prepared["requestSharedMsgId"] = shared
        return shared

    def cmd_connect_prepared_contact(self, a: Args) -> JSON:
        user = self.active_user()
        c = self.get_contact(user, parse_int(a["contactId"]))
        if c.prepared is None or c.conn_id is not None:
            raise command_error("contact doesn't have link to connect")
        r = self._resolve_prepared(user, c.prepared)
        message = self._message_arg(a)
        incognito_id = self._incognito(user, a["incognito"])
        conn = self._pending_conn(user, r, incognito_id, contact_id=c.contact_id)
        c.conn_id = conn.conn_id
        c.via_link = r.ref.lookup_key
        shared = self._request_item(user, "direct", c.contact_id, c.prepared, message)
        self.join(
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
            "user": self.user_json(user.user_id),
            "contact": self.contact_json(c),
            **self._custom(incognito_id),
        }

    def cmd_connect_prepared_group(self, a: Args) -> JSON:
        user = self.active_user()
        g = self.get_group(user, parse_int(a["groupId"]))
        if g.prepared is None or g.prepared.get("connLinkStartedConnection"):
            raise command_error("group doesn't have link to connect")
        r = self._resolve_prepared(user, g.prepared)
        message = self._message_arg(a)
        incognito_id = self._incognito(user, a["incognito"])
        m = self.membership(g)
        if incognito_id is not None:
            m.profile_id = incognito_id
        conn = self._pending_conn(user, r, incognito_id, pending_group_id=g.group_id)
        if g.host_member_id is not None:
            self.db.members[g.host_member_id].conn_id = conn.conn_id
            conn.conn_type = "member"
            conn.member_id = g.host_member_id
        g.prepared["connLinkPreparedConnection"] = True
        g.prepared["connLinkStartedConnection"] = True
        m.status = "accepted"
        shared = self._request_item(user, "group", g.group_id, g.prepared, message)
        self.join(
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
            "user": self.user_json(user.user_id),
            "groupInfo": self.group_json(g),
            **self._custom(incognito_id),
            "relayResults": [],
        }

    def cmd_connect_contact_via_address(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        c = self.get_contact(user, parse_int(a["contactId"]))
        card = self.db.profiles[c.profile_id].profile.get("contactLink")
        if not isinstance(card, str) or c.conn_id is not None:
            raise command_error("contact doesn't have address to connect")
        r = self.resolve(user, card, allow_names=False)
        incognito_id = self._incognito(user, a["incognito"])
        conn = self._pending_conn(user, r, incognito_id, contact_id=c.contact_id)
        c.conn_id = conn.conn_id
        c.via_link = r.ref.lookup_key
        self.join(user, r, conn, incognito_id)
        return {
            "type": "sentInvitationToContact",
            "user": self.user_json(user.user_id),
            "contact": self.contact_json(c),
            **self._custom(incognito_id),
        }

    def cmd_connect_cli(self, a: Args) -> JSON:
        user = self.active_user()
        words = (a["args"] or "").split()
        incognito = None
        if words and words[0] in ("incognito", "i"):
            incognito = "on"
            words = words[1:]
        if not words:
            return self.cmd_add_contact({"userId": str(user.user_id), "incognito": incognito})
        r = self.resolve(user, words[0])
        return self.connect_resolved(user, r, incognito)

    # ------------------------------------------------------------------ contact requests

    def cmd_reject_contact(self, a: Args) -> JSON:
        user = self.active_user()
        req = self.db.requests.get(parse_int(a["reqId"]))
        if req is None or req.user_id != user.user_id:
            raise store_error("contactRequestNotFound", contactRequestId=parse_int(a["reqId"]))
        req_json = rec.user_contact_request(self.db, req)
        del self.db.requests[req.contact_request_id]
        if a["notify"] == "on":
            target = self.network.core_of_agent(req.reply_conn)
            if target is not None:
                self.network.send(
                    self.name, target[0], req.reply_conn, target[1], {"t": "x.contact.rej"}
                )
        return {
            "type": "contactRequestRejected",
            "user": self.user_json(user.user_id),
            "contactRequest": req_json,
        }


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
