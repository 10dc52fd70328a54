"""Commands: groups, channels, group links, members, custom data, chat info and deletion."""

from __future__ import annotations

import copy
from typing import Any

from . import _records as rec
from ._cmd_users import json_arg, json_object
from ._corebase import parse_int
from ._errors import chat_error, command_error, store_error
from ._receive import Receiver
from ._store import GroupRow, LinkRow, MemberRow, UserRow

__all__ = ["GroupCommands"]

JSON = dict[str, Any]
Args = dict[str, str | None]

_MAX_LINK_ROLE = "member"


class GroupCommands(Receiver):
    # ------------------------------------------------------------------ creating groups

    def cmd_new_group(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        profile = self._group_profile_arg(a["profile"])
        g = self._create_group(user, profile, a["incognito"] == "on")
        return {
            "type": "groupCreated",
            "user": self.user_json(user.user_id),
            "groupInfo": self.group_json(g),
        }

    def _group_profile_arg(self, text: str | None) -> JSON:
        profile = json_object(text, "GroupProfile")
        if not isinstance(profile.get("displayName"), str) or not profile["displayName"]:
            raise command_error("GroupProfile: displayName expected")
        self.valid_display_name(profile["displayName"])
        profile.setdefault("fullName", "")
        return profile

    def _create_group(self, user: UserRow, profile: JSON, incognito: bool) -> GroupRow:
        incognito_id = self.incognito_profile(user).profile_id if incognito else None
        return self._new_group_row(
            user,
            profile,
            net_id=self.random_id(16),
            role="owner",
            status="creator",
            incognito_id=incognito_id,
        )

    def cmd_new_public_group(self, a: Args) -> JSON:
        """Create a channel: a group whose members are not introduced to each other.

        The simulated network has no chat relays: the relay IDs are accepted and ignored, and
        subscribers connect to the owner directly.
        """
        user = self.user_by_id(a["userId"])
        profile = self._group_profile_arg(a["profile"])
        g = self._create_group(user, profile, a["incognito"] == "on")
        g.direct = False
        link = self.new_link(user, "group", "channel", group_id=g.group_id)
        link.role = "observer"
        g.link_id = link.link_id
        pub: JSON = profile["publicGroup"] if isinstance(profile.get("publicGroup"), dict) else {}
        record: JSON = {
            "groupType": "channel",
            "groupLink": link.short,
            "publicGroupId": self.random_id(16),
        }
        record.update({k: v for k, v in pub.items() if k not in ("groupLink", "publicGroupId")})
        g.profile["publicGroup"] = record
        return {
            "type": "publicGroupCreated",
            "user": self.user_json(user.user_id),
            "groupInfo": self.group_json(g),
            "groupLink": rec.group_link(link),
            "groupRelays": [],
        }

    # ------------------------------------------------------------------ roles and checks

    def _require_role(self, g: GroupRow, role: str) -> MemberRow:
        me = self.membership(g)
        if me.status not in ("creator", "connected", "complete") or not rec.role_at_least(
            me.role, role
        ):
            raise chat_error("groupUserRole", groupInfo=self.group_json(g), requiredRole=role)
        return me

    def _members_arg(self, g: GroupRow, ids: str | None) -> list[MemberRow]:
        out = []
        for text in (ids or "").split(","):
            gm_id = parse_int(text)
            m = self.db.members.get(gm_id)
            if m is None or m.group_id != g.group_id or m.category == "user":
                raise store_error("groupMemberNotFound", groupMemberId=gm_id)
            out.append(m)
        return out

    def _broadcast(self, g: GroupRow, body: JSON, *, also: list[MemberRow] | None = None) -> None:
        conns = self.member_conns(g)
        for m in also or []:
            conn = self.db.conns.get(m.conn_id or 0)
            if conn is not None and conn not in conns and conn.peer is not None:
                conns.append(conn)
        for conn in conns:
            self.send_on(conn, body)

    def _snd_event(self, user: UserRow, g: GroupRow, event: JSON) -> None:
        self.new_item(
            user, "group", g.group_id, "groupSnd", {"type": "sndGroupEvent", "sndGroupEvent": event}
        )

    # ------------------------------------------------------------------ profile and members

    def cmd_update_group_profile(self, a: Args) -> JSON:
        user = self.active_user()
        g = self.get_group(user, parse_int(a["groupId"]))
        profile = self._group_profile_arg(a["profile"])
        self._require_role(g, "owner")
        before = self.group_json(g)
        g.profile = profile
        g.updated_at = self.ts()
        self._snd_event(user, g, {"type": "groupUpdated", "groupProfile": copy.deepcopy(profile)})
        self._broadcast(g, {"t": "x.grp.info", "groupProfile": copy.deepcopy(profile)})
        return {
            "type": "groupUpdated",
            "user": self.user_json(user.user_id),
            "fromGroup": before,
            "toGroup": self.group_json(g),
            "msgSigned": False,
        }

    def cmd_list_members(self, a: Args) -> JSON:
        user = self.active_user()
        g = self.get_group(user, parse_int(a["groupId"]))
        members = [
            self.member_json(m) for m in self.db.group_members(g.group_id) if m.category != "user"
        ]
        return {
            "type": "groupMembers",
            "user": self.user_json(user.user_id),
            "group": {"groupInfo": self.group_json(g), "members": members},
        }

    def cmd_member_role(self, a: Args) -> JSON:
        user = self.active_user()
        g = self.get_group(user, parse_int(a["groupId"]))
        role = a["role"] or "member"
        targets = self._members_arg(g, a["ids"])
        me = self._require_role(g, "admin")
        needed = "owner" if role == "owner" else "admin"
        for m in targets:
            if rec.role_at_least(m.role, "owner") or rec.role_at_least(role, "owner"):
                needed = "owner"
        if not rec.role_at_least(me.role, needed):
            raise chat_error("groupUserRole", groupInfo=self.group_json(g), requiredRole=needed)
        for m in targets:
            m.role = role
            m.updated_at = self.ts()
            self._snd_event(
                user,
                g,
                {
                    "type": "memberRole",
                    "groupMemberId": m.group_member_id,
                    "profile": rec.profile(self.db.profiles[m.profile_id]),
                    "role": role,
                },
            )
            self._broadcast(
                g, {"t": "x.grp.mem.role", "memberId": m.member_id, "role": role}, also=[m]
            )
        return {
            "type": "membersRoleUser",
            "user": self.user_json(user.user_id),
            "groupInfo": self.group_json(g),
            "members": [self.member_json(m) for m in targets],
            "toRole": role,
            "msgSigned": False,
        }

    def cmd_remove_members(self, a: Args) -> JSON:
        user = self.active_user()
        g = self.get_group(user, parse_int(a["groupId"]))
        targets = self._members_arg(g, a["ids"])
        me = self._require_role(g, "admin")
        for m in targets:
            if rec.role_at_least(m.role, "owner") and not rec.role_at_least(me.role, "owner"):
                raise chat_error(
                    "groupUserRole", groupInfo=self.group_json(g), requiredRole="owner"
                )
        with_messages = a["messages"] == "on"
        for m in targets:
            self._broadcast(
                g,
                {"t": "x.grp.mem.del", "memberId": m.member_id, "withMessages": with_messages},
                also=[m],
            )
            m.status = "removed"
            m.updated_at = self.ts()
            self._snd_event(
                user,
                g,
                {
                    "type": "memberDeleted",
                    "groupMemberId": m.group_member_id,
                    "profile": rec.profile(self.db.profiles[m.profile_id]),
                },
            )
            if with_messages:
                for item in self.db.chat_items("group", g.group_id):
                    if item.sender_member_id == m.group_member_id:
                        item.deleted = {
                            "type": "deleted",
                            "deletedTs": self.ts(),
                            "chatType": "group",
                        }
        return {
            "type": "userDeletedMembers",
            "user": self.user_json(user.user_id),
            "groupInfo": self.group_json(g),
            "members": [self.member_json(m) for m in targets],
            "withMessages": with_messages,
            "msgSigned": False,
        }

    def cmd_leave_group(self, a: Args) -> JSON:
        user = self.active_user()
        g = self.get_group(user, parse_int(a["groupId"]))
        me = self.membership(g)
        if not rec.current_member(me):
            raise chat_error("groupMemberUserRemoved")
        self._broadcast(g, {"t": "x.grp.leave"})
        me.status = "left"
        self._snd_event(user, g, {"type": "userLeft"})
        return {
            "type": "leftMemberUser",
            "user": self.user_json(user.user_id),
            "groupInfo": self.group_json(g),
        }

    def cmd_join_group(self, a: Args) -> JSON:
        user = self.active_user()
        g = self.get_group(user, parse_int(a["groupId"]))
        me = self.membership(g)
        if me.status != "invited":
            raise store_error("groupInvitationNotFound")
        self.join_invited_group(user, g)
        host = self.db.members.get(g.host_member_id or 0)
        out: JSON = {
            "type": "userAcceptedGroupSent",
            "user": self.user_json(user.user_id),
            "groupInfo": self.group_json(g),
        }
        if host is not None and host.member_contact_id in self.db.contacts:
            out["hostContact"] = self.contact_json(self.db.contacts[host.member_contact_id or 0])
        return out

    def cmd_add_member(self, a: Args) -> JSON:
        user = self.active_user()
        g = self.get_group(user, parse_int(a["groupId"]))
        c = self.get_contact(user, parse_int(a["contactId"]))
        role = a["role"] or "member"
        me = self._require_role(g, "admin")
        if not rec.role_at_least(me.role, role):
            raise chat_error("groupUserRole", groupInfo=self.group_json(g), requiredRole=role)
        conn = self.contact_conn(c.contact_id)
        if conn is None or conn.status != "ready":
            raise chat_error("contactNotReady", contact=self.contact_json(c))
        for m in self.db.group_members(g.group_id):
            if m.member_contact_id == c.contact_id and rec.current_member(m):
                raise chat_error("groupDuplicateMember", contactName=c.local_display_name)
        m = self.new_member(
            user,
            g.group_id,
            self.random_id(12),
            role,
            "invitee",
            "invited",
            self.db.profiles[c.profile_id],
            invited_by={"type": "user"},
            member_contact_id=c.contact_id,
        )
        self.send_on(
            conn,
            {
                "t": "x.grp.inv",
                "groupProfile": copy.deepcopy(g.profile),
                "netId": g.net_id,
                "memberId": m.member_id,
                "role": role,
                "fromMember": self._member_info(me),
                "direct": g.direct,
            },
        )
        return {
            "type": "sentGroupInvitation",
            "user": self.user_json(user.user_id),
            "groupInfo": self.group_json(g),
            "contact": self.contact_json(c),
            "member": self.member_json(m),
        }

    # ------------------------------------------------------------------ group links

    def _group_link(self, g: GroupRow) -> LinkRow:
        if g.link_id is None or g.link_id not in self.db.links:
            raise store_error("groupLinkNotFound", groupInfo=self.group_json(g))
        return self.db.links[g.link_id]

    def _link_role(self, g: GroupRow, role: str) -> str:
        if not rec.role_at_least(_MAX_LINK_ROLE, role):
            raise chat_error(
                "groupMemberInitialRole", groupInfo=self.group_json(g), initialRole=role
            )
        return role

    def cmd_create_group_link(self, a: Args) -> JSON:
        user = self.active_user()
        g = self.get_group(user, parse_int(a["groupId"]))
        self._require_role(g, "admin")
        role = self._link_role(g, a["role"] or "member")
        if g.link_id is not None:
            raise store_error("duplicateGroupLink", groupInfo=self.group_json(g))
        link = self.new_link(user, "group", "group" if g.direct else "channel", group_id=g.group_id)
        link.role = role
        g.link_id = link.link_id
        return {
            "type": "groupLinkCreated",
            "user": self.user_json(user.user_id),
            "groupInfo": self.group_json(g),
            "groupLink": rec.group_link(link),
        }

    def cmd_set_group_link_role(self, a: Args) -> JSON:
        user = self.active_user()
        g = self.get_group(user, parse_int(a["groupId"]))
        link = self._group_link(g)
        link.role = self._link_role(g, a["role"] or "member")
        return {
            "type": "groupLink",
            "user": self.user_json(user.user_id),
            "groupInfo": self.group_json(g),
            "groupLink": rec.group_link(link),
        }

    def cmd_delete_group_link(self, a: Args) -> JSON:
        user = self.active_user()
        g = self.get_group(user, parse_int(a["groupId"]))
        link = self._group_link(g)
        self.delete_link(link)
        g.link_id = None
        return {
            "type": "groupLinkDeleted",
            "user": self.user_json(user.user_id),
            "groupInfo": self.group_json(g),
        }

    def cmd_get_group_link(self, a: Args) -> JSON:
        user = self.active_user()
        g = self.get_group(user, parse_int(a["groupId"]))
        return {
            "type": "groupLink",
            "user": self.user_json(user.user_id),
            "groupInfo": self.group_json(g),
            "groupLink": rec.group_link(self._group_link(g)),
        }

    # ------------------------------------------------------------------ chats

    def cmd_set_custom_data(self, a: Args) -> JSON:
        user = self.active_user()
        kind, chat_id, _ = self.parse_ref(a["ref"] or "")
        data = None
        if a["data"] is not None:
            data = json_arg(a["data"], "custom data")
            if not isinstance(data, dict):
                raise command_error("custom data must be a JSON object")
        if kind == "direct":
            self.get_contact(user, chat_id).custom_data = data
        elif kind == "group":
            self.get_group(user, chat_id).custom_data = data
        else:
            raise command_error("custom data is set on contacts and groups")
        return {"type": "cmdOk", "user_": self.user_json(user.user_id)}

    def cmd_chat_info(self, a: Args) -> JSON:
        user = self.active_user()
        kind, chat_id, _ = self.parse_ref(a["ref"] or "")
        if kind == "direct":
            c = self.get_contact(user, chat_id)
            out: JSON = {
                "type": "contactInfo",
                "user": self.user_json(user.user_id),
                "contact": self.contact_json(c),
            }
            conn = self.contact_conn(chat_id)
            if conn is not None and conn.custom_user_profile_id is not None:
                out["customUserProfile"] = rec.profile(
                    self.db.profiles[conn.custom_user_profile_id]
                )
            return out
        if kind == "group":
            g = self.get_group(user, chat_id)
            return {
                "type": "groupInfo",
                "user": self.user_json(user.user_id),
                "groupInfo": self.group_json(g),
            }
        raise command_error("/_info takes @contact or #group")

    def cmd_list_contacts(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        contacts = [
            self.contact_json(c)
            for c in self.db.contacts.values()
            if c.user_id == user.user_id and not c.is_user_contact and not c.chat_deleted
        ]
        return {"type": "contactsList", "user": self.user_json(user.user_id), "contacts": contacts}

    def cmd_list_groups(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        groups = [g for g in self.db.groups.values() if g.user_id == user.user_id]
        if a["contactId"] is not None:
            cid = parse_int(a["contactId"])
            groups = [
                g
                for g in groups
                if any(m.member_contact_id == cid for m in self.db.group_members(g.group_id))
            ]
        if a["search"]:
            needle = a["search"].lower()
            groups = [g for g in groups if needle in g.local_display_name.lower()]
        return {
            "type": "groupsList",
            "user": self.user_json(user.user_id),
            "groups": [self.group_json(g) for g in groups],
        }

    def cmd_delete_chat(self, a: Args) -> JSON:
        user = self.active_user()
        kind, chat_id, _ = self.parse_ref(a["ref"] or "")
        mode = a["mode"] or "full"
        notify = a["notify"] != "off"
        if kind == "direct":
            return self._delete_contact(user, chat_id, mode, notify)
        if kind == "group":
            return self._delete_group(user, chat_id, mode, notify)
        if kind == "contactConnection":
            conn = self.db.conns.get(chat_id)
            if conn is None or conn.user_id != user.user_id or conn.pending is None:
                raise store_error("pendingConnectionNotFound", connId=chat_id)
            pcc = rec.pending_connection(conn)
            if conn.pending_target is not None and conn.pending == "invitation":
                self.network.unregister_link([conn.pending_target])
            del self.db.conns[conn.conn_id]
            return {
                "type": "contactConnectionDeleted",
                "user": self.user_json(user.user_id),
                "connection": pcc,
            }
        raise command_error(f"{a['ref']}: cannot be deleted")

    def _delete_contact(self, user: UserRow, contact_id: int, mode: str, notify: bool) -> JSON:
        c = self.get_contact(user, contact_id)
        for item in self.db.chat_items("direct", contact_id):
            self.db.remove_item(item.item_id)
        if mode == "messages":
            return {
                "type": "contactDeleted",
                "user": self.user_json(user.user_id),
                "contact": self.contact_json(c),
            }
        conn = self.contact_conn(contact_id)
        if conn is not None and notify and conn.status == "ready" and c.status == "active":
            self.send_on(conn, {"t": "x.direct.del"})
        if conn is not None:
            conn.status = "deleted"
        c.status = "deletedByUser"
        out = self.contact_json(c)
        if mode == "full":
            if conn is not None:
                self.db.conns.pop(conn.conn_id, None)
            del self.db.contacts[contact_id]
        else:
            c.chat_deleted = True
        return {"type": "contactDeleted", "user": self.user_json(user.user_id), "contact": out}

    def _delete_group(self, user: UserRow, group_id: int, mode: str, notify: bool) -> JSON:
        g = self.get_group(user, group_id)
        me = self.membership(g)
        if mode == "messages":
            for item in self.db.chat_items("group", group_id):
                self.db.remove_item(item.item_id)
            return {
                "type": "groupDeletedUser",
                "user": self.user_json(user.user_id),
                "groupInfo": self.group_json(g),
                "msgSigned": False,
                "localDeletion": True,
            }
        current = me.status in ("creator", "connected", "complete", "accepted", "announced")
        if current and not rec.role_at_least(me.role, "owner"):
            raise chat_error("groupUserRole", groupInfo=self.group_json(g), requiredRole="owner")
        if current and notify:
            self._broadcast(g, {"t": "x.grp.del"})
        out = self.group_json(g)
        for item in self.db.chat_items("group", group_id):
            self.db.remove_item(item.item_id)
        for m in self.db.group_members(group_id):
            if m.conn_id is not None:
                self.db.conns.pop(m.conn_id, None)
            del self.db.members[m.group_member_id]
        if g.link_id is not None and g.link_id in self.db.links:
            self.delete_link(self.db.links[g.link_id])
        del self.db.groups[group_id]
        return {
            "type": "groupDeletedUser",
            "user": self.user_json(user.user_id),
            "groupInfo": out,
            "msgSigned": False,
            "localDeletion": not current,
        }
