"""Commands: users and profiles, the chat controller, network settings, SQL, the address."""

from __future__ import annotations

import base64
import copy
import re
from typing import Any

from simplex_protocols import _wire

from . import _records as rec
from ._corebase import CoreBase, parse_int
from ._errors import broker_timeout, chat_error, command_error, store_error
from ._links import make_contact_link
from ._network import LinkTarget
from ._store import ContactRow, LinkRow, NoteFolderRow, UserRow

__all__ = ["UserCommands", "json_arg"]

JSON = dict[str, Any]
Args = dict[str, str | None]

# A well-formed short link on a simulated router that no simulated user owns: connecting to it
# fails as a removed link does (the preset contact is never reachable on this network).
_TEAM_LINK = "https://smp1.sim.test/a#HbTp3NcZ2IjgwNqo14_rZgSwIaM2vG79fMc8xGs19Yg"


def json_arg(text: str | None, what: str) -> Any:
    """Decode a command's JSON argument, refusing bad JSON as the core's parser does."""
    if text is None:
        raise command_error(f"{what}: JSON expected")
    try:
        return _wire.loads(text)
    except _wire.WireJSONError as exc:
        raise command_error(f"{what}: {exc}") from None


def json_object(text: str | None, what: str) -> JSON:
    value = json_arg(text, what)
    if not isinstance(value, dict):
        raise command_error(f"{what}: JSON object expected")
    return value


class UserCommands(CoreBase):
    # ------------------------------------------------------------------ users

    def cmd_show_active_user(self, a: Args) -> JSON:
        return {"type": "activeUser", "user": self.user_json(self.active_user().user_id)}

    def cmd_list_users(self, a: Args) -> JSON:
        users = []
        for u in sorted(self.db.users.values(), key=lambda r: r.user_id):
            unread = self.db.user_unread_count(u.user_id)
            users.append({"user": self.user_json(u.user_id), "unreadCount": unread})
        return {"type": "usersList", "users": users}

    def cmd_create_user(self, a: Args) -> JSON:
        new_user = json_object(a["newUser"], "NewUser")
        profile = new_user.get("profile")
        if profile is None:
            profile = {"displayName": self._random_display_name(), "fullName": ""}
        if not isinstance(profile, dict):
            raise command_error("NewUser: profile must be an object")
        name = self.valid_display_name(profile.get("displayName"))
        profile.setdefault("fullName", "")
        for u in self.db.users.values():
            if u.local_display_name == name:
                raise chat_error("userExists", contactName=name)
        return {"type": "activeUser", "user": self.user_json(self.create_user(profile).user_id)}

    def _random_display_name(self) -> str:
        rng = self.network.random
        return f"user{rng.randint(1000, 9999)}"

    def create_user(self, profile: JSON) -> UserRow:
        """Create a user with its own contact row, the preset contact and a notes folder."""
        ts = self.ts()
        prow = self.new_profile(profile)
        user_id = self.db.next_id("users")
        user_contact_id = self.db.next_id("contacts")
        order = max((u.active_order for u in self.db.users.values()), default=0) + 1
        user = UserRow(
            user_id=user_id,
            agent_user_id=user_id,
            user_contact_id=user_contact_id,
            profile_id=prow.profile_id,
            local_display_name=str(profile["displayName"]),
            active_order=order,
            created_at=ts,
            router=self.network.next_router(),
        )
        self.db.users[user_id] = user
        self.db.contacts[user_contact_id] = ContactRow(
            contact_id=user_contact_id,
            user_id=user_id,
            profile_id=prow.profile_id,
            local_display_name=user.local_display_name,
            created_at=ts,
            updated_at=ts,
            is_user_contact=True,
        )
        # the core creates the preset contact card "Ask SimpleX Team" for every new user
        team = self.new_profile(
            {
                "displayName": "Ask SimpleX Team",
                "fullName": "",
                "shortDescr": "Send questions about SimpleX Chat app and your suggestions",
                "contactLink": _TEAM_LINK,
                "peerType": "bot",
            }
        )
        self.new_contact(user, team)
        folder = NoteFolderRow(self.db.next_id("folders"), user_id, ts)
        self.db.folders[folder.note_folder_id] = folder
        user.note_folder_id = folder.note_folder_id
        self.db.active_user_id = user_id
        return user

    def cmd_set_active_user(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        self.db.active_user_id = user.user_id
        return {"type": "activeUser", "user": self.user_json(user.user_id)}

    def cmd_update_profile(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        self.require_started()
        new = json_object(a["profile"], "Profile")
        name = self.valid_display_name(new.get("displayName"))
        new.setdefault("fullName", "")
        return self.apply_profile(user, new, name)

    def apply_profile(self, user: UserRow, new: JSON, name: str | None = None) -> JSON:
        prow = self.user_profile(user)
        old = copy.deepcopy(prow.profile)
        if new == old:
            return {"type": "userProfileNoChange", "user": self.user_json(user.user_id)}
        if name is not None and name != user.local_display_name:
            for u in self.db.users.values():
                if u.user_id != user.user_id and u.local_display_name == name:
                    raise chat_error("userExists", contactName=name)
            user.local_display_name = name
            self.db.contacts[user.user_contact_id].local_display_name = name
        prow.profile = copy.deepcopy(new)
        sent = 0
        for c in self.db.contacts.values():
            if c.user_id != user.user_id or c.is_user_contact or c.conn_id is None:
                continue
            conn = self.db.conns.get(c.conn_id)
            if conn is None or conn.status != "ready" or conn.custom_user_profile_id is not None:
                continue
            self.send_on(conn, {"t": "x.info", "profile": self.contact_profile_for(user, c)})
            sent += 1
        return {
            "type": "userProfileUpdated",
            "user": self.user_json(user.user_id),
            "fromProfile": old,
            "toProfile": copy.deepcopy(new),
            "updateSummary": {"updateSuccesses": sent, "updateFailures": 0, "changedContacts": []},
        }

    def contact_profile_for(self, user: UserRow, c: ContactRow) -> JSON:
        """The user's profile as one contact sees it (with that contact's preferences)."""
        prof = rec.profile(self.user_profile(user))
        if c.user_preferences:
            prefs = dict(prof.get("preferences") or {})
            prefs.update(copy.deepcopy(c.user_preferences))
            prof["preferences"] = prefs
        return prof

    def cmd_set_contact_prefs(self, a: Args) -> JSON:
        user = self.active_user()
        c = self.get_contact(user, parse_int(a["contactId"]))
        prefs = json_object(a["prefs"], "Preferences")
        before = self.contact_json(c)
        c.user_preferences = prefs
        conn = self.db.conns.get(c.conn_id) if c.conn_id is not None else None
        if conn is not None and conn.status == "ready":
            self.send_on(conn, {"t": "x.info", "profile": self.contact_profile_for(user, c)})
        return {
            "type": "contactPrefsUpdated",
            "user": self.user_json(user.user_id),
            "fromContact": before,
            "toContact": self.contact_json(c),
        }

    def cmd_set_profile_address(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        new = copy.deepcopy(self.user_profile(user).profile)
        if a["on"] == "on":
            link = self._address(user)
            new["contactLink"] = link.short
        else:
            new.pop("contactLink", None)
        return self.apply_profile(user, new)

    # ------------------------------------------------------------------ controller

    def cmd_start_chat(self, a: Args) -> JSON:
        if self.started:
            # Decision (documented): a running simulated core applies service_requests=, so a
            # client that always sends /_start ... service_requests=on works on a core that a
            # test fixture or `simplex-sim serve` started first.
            if a["serviceRequests"] is not None:
                self.service_requests = a["serviceRequests"] == "on"
            return {"type": "chatRunning"}
        self.started = True
        self.service_requests = a["serviceRequests"] == "on"
        self.network.changed()
        return {"type": "chatStarted"}

    def cmd_stop_chat(self, a: Args) -> JSON:
        self.started = False
        return {"type": "chatStopped"}

    def cmd_network_config(self, a: Args) -> JSON:
        options = (a["options"] or "").split()
        if options and not options[0].startswith("socks="):
            raise command_error("socks= must come first in /network")
        cfg = self.network_config
        for opt in options:
            key, _, value = opt.partition("=")
            if key == "socks":
                if value == "off":
                    cfg.pop("socksProxy", None)
                elif value == "on":
                    cfg["socksProxy"] = ":9050"
                else:
                    cfg["socksProxy"] = value
            elif key == "socks-mode" and value in ("always", "onion"):
                cfg["socksMode"] = value
            elif key == "host-mode" and value in ("public", "onion"):
                cfg["hostMode"] = value
            elif key == "required-host-mode" and not value:
                cfg["requiredHostMode"] = True
            elif key == "smp-proxy" and value in ("always", "unknown", "unprotected", "never"):
                cfg["smpProxyMode"] = value
            elif key == "smp-proxy-fallback" and value in ("allow", "allowProtected", "prohibit"):
                cfg["smpProxyFallback"] = value
            elif key == "smp-proxy-fallback" and value == "protected":
                cfg["smpProxyFallback"] = "allowProtected"
            elif key == "timeout" and re.fullmatch(r"\d+(\.\d+)?", value):
                cfg["tcpTimeout"] = int(float(value) * 1_000_000)
            elif key == "log" and value in ("on", "off"):
                cfg["logTLSErrors"] = value == "on"
            else:
                raise command_error(f"/network: unknown option {opt!r}")
        return {"type": "networkConfig", "networkConfig": copy.deepcopy(cfg)}

    def cmd_sql_chat(self, a: Args) -> JSON:
        """``/sql chat``: the query the MCP server plan runs at shutdown is answered from the
        simulator's state; any other query has no rows.

        ``SELECT hex(agent_conn_id) FROM connections WHERE group_member_id IN (<subquery or
        list>)``, the subquery being ``SELECT group_member_id FROM group_members WHERE group_id
        = N``: the agent connection IDs (hex, upper case) of those members' connections.
        """
        query = a["query"] or ""
        m = _SQL_MEMBER_CONNS.fullmatch(query.strip().rstrip(";").strip())
        if m is None:
            return {"type": "sQLResult", "rows": []}
        if m.group("group") is not None:
            members = {x.group_member_id for x in self.db.group_members(int(m.group("group")))}
        else:
            members = {int(x) for x in re.findall(r"\d+", m.group("ids") or "")}
        values = [
            _agent_hex(conn.agent_conn_id)
            for conn in sorted(self.db.conns.values(), key=lambda c: c.conn_id)
            if conn.member_id in members and conn.status != "deleted"
        ]
        return {"type": "sQLResult", "rows": _sql_rows(m.group("column"), values)}

    def cmd_sql_agent(self, a: Args) -> JSON:
        """``/sql agent``: the MCP server plan's count of pending deliveries is answered from
        the network; any other query has no rows.

        ``SELECT count(*) FROM snd_message_deliveries WHERE failed = 0 AND hex(conn_id) IN
        ('<hex>', ...)``: how many messages sent on those connections the routers have not
        taken yet (the agent deletes a delivery when the router accepts the message): held
        by a router that is down, by the sender's core being offline, or queued behind them.
        """
        query = a["query"] or ""
        m = _SQL_PENDING.fullmatch(query.strip().rstrip(";").strip())
        if m is None:
            return {"type": "sQLResult", "rows": []}
        wanted = {h.upper() for h in re.findall(r"[0-9A-Fa-f]+", m.group("ids"))}
        count = 0
        if m.group("failed") == "0":
            ids = [
                c.agent_conn_id
                for c in self.db.conns.values()
                if _agent_hex(c.agent_conn_id) in wanted
            ]
            count = self.network.pending_deliveries(ids)
        return {"type": "sQLResult", "rows": _sql_rows(m.group("column"), [str(count)])}

    # ------------------------------------------------------------------ address

    def _address(self, user: UserRow) -> LinkRow:
        if user.address_link_id is None or user.address_link_id not in self.db.links:
            raise store_error("userContactLinkNotFound")
        return self.db.links[user.address_link_id]

    def _ratchet(self, pq: str | None, current: str | None) -> str | None:
        if pq is None:
            return current
        return "pq" if pq == "on" else "nopq"

    def cmd_create_address(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        if user.address_link_id is not None:
            raise store_error("duplicateContactLink")
        if self.network.faults.is_router_down(user.router):
            raise broker_timeout(user.router)
        link = self.new_link(user, "address", "contact")
        link.ratchet = self._ratchet(a["pq"], None)
        user.address_link_id = link.link_id
        return {
            "type": "userContactLinkCreated",
            "user": self.user_json(user.user_id),
            "connLinkContact": rec.created_conn_link(link.full, link.short),
        }

    def new_link(
        self, user: UserRow, kind: str, link_type: str, *, group_id: int | None = None
    ) -> LinkRow:
        """Create an address or group link on the user's router and publish it."""
        group_link_id = self.random_id(16) if kind == "group" else None
        full, short, key, queue_id = make_contact_link(
            self.network.random, user.router, link_type, group_link_id=group_link_id
        )
        link_id = self.db.next_id("links")
        conn = self.new_conn(user, "user_contact", "ready", link_id=link_id)
        link = LinkRow(
            link_id=link_id,
            user_id=user.user_id,
            kind=kind,
            key=key,
            queue_id=queue_id,
            full=full,
            short=short,
            conn_id=conn.conn_id,
            created_at=self.ts(),
            group_id=group_id,
            group_link_id=group_link_id,
        )
        self.db.links[link_id] = link
        self.network.register_link(
            [key, queue_id], LinkTarget(kind, self.name, link_id, user.router)
        )
        return link

    def delete_link(self, link: LinkRow) -> None:
        self.network.unregister_link([link.key, link.queue_id])
        self.db.conns.pop(link.conn_id, None)
        self.db.links.pop(link.link_id, None)

    def cmd_short_link_address(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        link = self._address(user)
        link.ratchet = self._ratchet(a["pq"], link.ratchet)
        link.short_link_data_set = True
        return {
            "type": "userContactLink",
            "user": self.user_json(user.user_id),
            "contactLink": rec.user_contact_link(link),
        }

    def cmd_show_address(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        return {
            "type": "userContactLink",
            "user": self.user_json(user.user_id),
            "contactLink": rec.user_contact_link(self._address(user)),
        }

    def cmd_address_settings(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        link = self._address(user)
        settings = json_object(a["settings"], "AddressSettings")
        business = settings.get("businessAddress", False)
        if not isinstance(business, bool):
            raise command_error("AddressSettings: businessAddress must be a boolean")
        out: JSON = {"businessAddress": business}
        auto = settings.get("autoAccept")
        if auto is not None:
            if not isinstance(auto, dict) or not isinstance(
                auto.get("acceptIncognito", False), bool
            ):
                raise command_error("AddressSettings: autoAccept must be {acceptIncognito: bool}")
            incognito = bool(auto.get("acceptIncognito", False))
            if incognito and (business or link.short_link_data_set):
                raise command_error(
                    "incognito auto-accept is not allowed for addresses with short link data "
                    "or business addresses"
                )
            out["autoAccept"] = {"acceptIncognito": incognito}
        reply = settings.get("autoReply")
        if reply is not None:
            if not isinstance(reply, dict) or not isinstance(reply.get("type"), str):
                raise command_error("AddressSettings: autoReply must be a MsgContent")
            out["autoReply"] = copy.deepcopy(reply)
        serves = settings.get("serves")
        if serves is not None:
            # Decision (documented): a bot sets `serves` in its address settings; it is
            # published in the address link data (Seed001 "Contact address peers").
            if not isinstance(serves, list) or not all(isinstance(s, str) for s in serves):
                raise command_error("AddressSettings: serves must be a list of strings")
            out["serves"] = list(serves)
        link.settings = out
        link.ratchet = self._ratchet(a["pq"], link.ratchet)
        return {
            "type": "userContactLinkUpdated",
            "user": self.user_json(user.user_id),
            "contactLink": rec.user_contact_link(link),
        }

    def cmd_delete_address(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        link = self._address(user)
        self.delete_link(link)
        user.address_link_id = None
        return {"type": "userContactLinkDeleted", "user": self.user_json(user.user_id)}

    def cmd_accept_member_contacts(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        user.auto_accept_member_contacts = a["on"] == "on"
        return {"type": "cmdOk", "user_": self.user_json(user.user_id)}

    def cmd_accept_group_invitations(self, a: Args) -> JSON:
        user = self.user_by_id(a["userId"])
        user.auto_accept_group_invitations = a["on"] == "on"
        return {"type": "cmdOk", "user_": self.user_json(user.user_id)}


_SQL_MEMBER_CONNS = re.compile(
    r"SELECT\s+(?P<column>hex\(\s*agent_conn_id\s*\))\s+FROM\s+connections\s+"
    r"WHERE\s+group_member_id\s+IN\s*\(\s*(?:SELECT\s+group_member_id\s+FROM\s+group_members\s+"
    r"WHERE\s+group_id\s*=\s*(?P<group>\d+)|(?P<ids>\d+(?:\s*,\s*\d+)*)?)\s*\)",
    re.IGNORECASE,
)
_SQL_PENDING = re.compile(
    r"SELECT\s+(?P<column>count\(\s*\*\s*\))\s+FROM\s+snd_message_deliveries\s+"
    r"WHERE\s+failed\s*=\s*(?P<failed>[01])\s+AND\s+hex\(\s*conn_id\s*\)\s+IN\s*"
    r"\((?P<ids>(?:\s*'[0-9A-Fa-f]*'\s*,?)*)\)",
    re.IGNORECASE,
)


def _sql_rows(column: str, values: list[str]) -> list[str]:
    """The core's ``sQLResult`` rows: the column names (``|``-separated), then one line per
    row; no rows at all when the query returns none."""
    return [column, *values] if values else []


def _agent_hex(agent_conn_id: str) -> str:
    raw = base64.urlsafe_b64decode(agent_conn_id + "=" * (-len(agent_conn_id) % 4))
    return raw.hex().upper()
