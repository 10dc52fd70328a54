"""Commands: users and profiles, the chat controller, network settings, SQL, the address."""

from __future__ import annotations

import base64
import copy
import re
from typing import Any

from . import _records as rec
from ._context import Args, CoreContext, json_arg, json_object, parse_int
from ._errors import broker_timeout, chat_error, command_error, store_error
from ._grammar import CommandGroup
from ._store import ContactRow, LinkRow, NoteFolderRow, UserRow

__all__ = ["COMMANDS"]

JSON = dict[str, Any]

#: The commands of this module, in matching order.
COMMANDS = CommandGroup("users")

# A well-formed short link on a simulated router that no simulated user owns: connecting to it
# fails as a removed link does (the preset contact is never reachable on this network).
_TEAM_LINK = "https://smp1.sim.test/a#HbTp3NcZ2IjgwNqo14_rZgSwIaM2vG79fMc8xGs19Yg"


@COMMANDS.command("/user")
def show_active_user(ctx: CoreContext, a: Args) -> JSON:
    return {"type": "activeUser", "user": ctx.user_json(ctx.active_user().user_id)}


@COMMANDS.command("/users")
def list_users(ctx: CoreContext, a: Args) -> JSON:
    users = []
    for u in sorted(ctx.db.users.values(), key=lambda r: r.user_id):
        unread = ctx.db.user_unread_count(u.user_id)
        users.append({"user": ctx.user_json(u.user_id), "unreadCount": unread})
    return {"type": "usersList", "users": users}


@COMMANDS.command("/_create user <newUser:json>")
def create_user(ctx: CoreContext, a: Args) -> JSON:
    new_user = json_object(a["newUser"], "NewUser")
    profile = ctx.core_profile.profile(new_user.get("profile"))
    if profile is None:
        profile = {"displayName": _random_display_name(ctx), "fullName": ""}
    if not isinstance(profile, dict):
        raise command_error("NewUser: profile must be an object")
    name = ctx.valid_display_name(profile.get("displayName"))
    profile.setdefault("fullName", "")
    for u in ctx.db.users.values():
        if u.local_display_name == name:
            raise chat_error("userExists", contactName=name)
    return {"type": "activeUser", "user": ctx.user_json(_new_user(ctx, profile).user_id)}


def _random_display_name(ctx: CoreContext) -> str:
    rng = ctx.network.random
    return f"user{rng.randint(1000, 9999)}"


def _new_user(ctx: CoreContext, profile: JSON) -> UserRow:
    """Create a user with its own contact row, the preset contact and a notes folder."""
    ts = ctx.ts()
    prow = ctx.new_profile(profile)
    user_id = ctx.db.next_id("users")
    user_contact_id = ctx.db.next_id("contacts")
    order = max((u.active_order for u in ctx.db.users.values()), default=0) + 1
    user = UserRow(
        user_id=user_id,
        agent_user_id=user_id,
        user_contact_id=user_contact_id,
        profile_id=prow.profile_id,
        local_display_name=str(profile["displayName"]),
        active_order=order,
        created_at=ts,
        router=ctx.network.next_router(),
    )
    ctx.db.users[user_id] = user
    ctx.db.contacts[user_contact_id] = ContactRow(
        contact_id=user_contact_id,
        user_id=user_id,
        profile_id=prow.profile_id,
        local_display_name=user.local_display_name,
        created_at=ts,
        updated_at=ts,
        is_user_contact=True,
    )
    # the core creates the preset contact card "Ask SimpleX Team" for every new user
    team = ctx.new_profile(
        {
            "displayName": "Ask SimpleX Team",
            "fullName": "",
            "shortDescr": "Send questions about SimpleX Chat app and your suggestions",
            "contactLink": _TEAM_LINK,
            "peerType": "bot",
        }
    )
    ctx.new_contact(user, team)
    folder = NoteFolderRow(ctx.db.next_id("folders"), user_id, ts)
    ctx.db.folders[folder.note_folder_id] = folder
    user.note_folder_id = folder.note_folder_id
    ctx.db.active_user_id = user_id
    return user


@COMMANDS.command("/_user <userId:int>[ <viewPwd:rest>]")
def set_active_user(ctx: CoreContext, a: Args) -> JSON:
    if a["viewPwd"] is not None:
        # any JSON value (the password is a JSON string), decoded as the parser decodes it
        json_arg(a["viewPwd"], "view password")
    user = ctx.user_by_id(a["userId"])
    ctx.db.active_user_id = user.user_id
    return {"type": "activeUser", "user": ctx.user_json(user.user_id)}


@COMMANDS.command("/_profile <userId:int> <profile:json>")
def update_profile(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    ctx.require_started()
    new = ctx.core_profile.profile(json_object(a["profile"], "Profile"))
    name = ctx.valid_display_name(new.get("displayName"))
    new.setdefault("fullName", "")
    return _apply_profile(ctx, user, new, name)


def _apply_profile(ctx: CoreContext, user: UserRow, new: JSON, name: str | None = None) -> JSON:
    prow = ctx.user_profile(user)
    old = copy.deepcopy(prow.profile)
    if new == old:
        return {"type": "userProfileNoChange", "user": ctx.user_json(user.user_id)}
    if name is not None and name != user.local_display_name:
        for u in ctx.db.users.values():
            if u.user_id != user.user_id and u.local_display_name == name:
                raise chat_error("userExists", contactName=name)
        user.local_display_name = name
        ctx.db.contacts[user.user_contact_id].local_display_name = name
    prow.profile = copy.deepcopy(new)
    sent = 0
    for c in ctx.db.contacts.values():
        if c.user_id != user.user_id or c.is_user_contact or c.conn_id is None:
            continue
        conn = ctx.db.conns.get(c.conn_id)
        if conn is None or conn.status != "ready" or conn.custom_user_profile_id is not None:
            continue
        ctx.send_on(conn, {"t": "x.info", "profile": _contact_profile_for(ctx, user, c)})
        sent += 1
    return {
        "type": "userProfileUpdated",
        "user": ctx.user_json(user.user_id),
        "fromProfile": old,
        "toProfile": copy.deepcopy(new),
        "updateSummary": {"updateSuccesses": sent, "updateFailures": 0, "changedContacts": []},
    }


def _contact_profile_for(ctx: CoreContext, user: UserRow, c: ContactRow) -> JSON:
    """The user's profile as one contact sees it (with that contact's preferences)."""
    prof = rec.profile(ctx.user_profile(user))
    if c.user_preferences:
        prefs = dict(prof.get("preferences") or {})
        prefs.update(copy.deepcopy(c.user_preferences))
        prof["preferences"] = prefs
    return prof


@COMMANDS.command("/_set prefs @<contactId:int> <prefs:json>")
def set_contact_prefs(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    c = ctx.get_contact(user, parse_int(a["contactId"]))
    prefs = ctx.core_profile.preferences(json_object(a["prefs"], "Preferences"))
    before = ctx.contact_json(c)
    c.user_preferences = prefs
    conn = ctx.db.conns.get(c.conn_id) if c.conn_id is not None else None
    if conn is not None and conn.status == "ready":
        ctx.send_on(conn, {"t": "x.info", "profile": _contact_profile_for(ctx, user, c)})
    return {
        "type": "contactPrefsUpdated",
        "user": ctx.user_json(user.user_id),
        "fromContact": before,
        "toContact": ctx.contact_json(c),
    }


@COMMANDS.command("/_profile_address <userId:int> <on:onoff>")
def set_profile_address(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    new = copy.deepcopy(ctx.user_profile(user).profile)
    if a["on"] == "on":
        link = _address(ctx, user)
        new["contactLink"] = link.short
    else:
        new.pop("contactLink", None)
    return _apply_profile(ctx, user, new)


@COMMANDS.command(
    # large_link_data= (v6.4's parser has it; accepted and ignored: link data is never too
    # large here) comes before service_requests=, the newest option.
    "/_start[ main=<main:onoff>][ snd_files=<sndFiles:onoff>]"
    "[ large_link_data=<largeLinkData:onoff>][ service_requests=<serviceRequests:onoff>]"
)
def start_chat(ctx: CoreContext, a: Args) -> JSON:
    if ctx.started:
        # Decision (documented): a running simulated core applies service_requests=, so a
        # client that always sends /_start ... service_requests=on works on a core that a
        # test fixture or `simplex-sim serve` started first.
        if a["serviceRequests"] is not None:
            ctx.service_requests = a["serviceRequests"] == "on"
        return {"type": "chatRunning"}
    ctx.started = True
    ctx.service_requests = a["serviceRequests"] == "on"
    ctx.network.changed()
    return {"type": "chatStarted"}


@COMMANDS.command("/_stop")
def stop_chat(ctx: CoreContext, a: Args) -> JSON:
    ctx.started = False
    return {"type": "chatStopped"}


@COMMANDS.command("/network[ <options:rest>]", "/net[ <options:rest>]")
def network_config(ctx: CoreContext, a: Args) -> JSON:
    options = (a["options"] or "").split()
    if options and not options[0].startswith("socks="):
        raise command_error("socks= must come first in /network")
    cfg = ctx.network_config
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


@COMMANDS.command("/sql chat <query:rest>")
def sql_chat(ctx: CoreContext, a: Args) -> JSON:
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
        members = {x.group_member_id for x in ctx.db.group_members(int(m.group("group")))}
    else:
        members = {int(x) for x in re.findall(r"\d+", m.group("ids") or "")}
    values = [
        _agent_hex(conn.agent_conn_id)
        for conn in sorted(ctx.db.conns.values(), key=lambda c: c.conn_id)
        if conn.member_id in members and conn.status != "deleted"
    ]
    return {"type": "sQLResult", "rows": _sql_rows(m.group("column"), values)}


@COMMANDS.command("/sql agent <query:rest>")
def sql_agent(ctx: CoreContext, a: Args) -> JSON:
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
            c.agent_conn_id for c in ctx.db.conns.values() if _agent_hex(c.agent_conn_id) in wanted
        ]
        count = ctx.network.pending_deliveries(ids)
    return {"type": "sQLResult", "rows": _sql_rows(m.group("column"), [str(count)])}


def _address(ctx: CoreContext, user: UserRow) -> LinkRow:
    if user.address_link_id is None or user.address_link_id not in ctx.db.links:
        raise store_error("userContactLinkNotFound")
    return ctx.db.links[user.address_link_id]


def _ratchet(pq: str | None, current: str | None) -> str | None:
    if pq is None:
        return current
    return "pq" if pq == "on" else "nopq"


@COMMANDS.command("/_address <userId:int>[ pq_ratchet=<pq:onoff>]")
def create_address(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    if user.address_link_id is not None:
        raise store_error("duplicateContactLink")
    if ctx.network.faults.is_router_down(user.router):
        raise broker_timeout(user.router)
    link = ctx.new_link(user, "address", "contact")
    link.ratchet = _ratchet(a["pq"], None)
    user.address_link_id = link.link_id
    return {
        "type": "userContactLinkCreated",
        "user": ctx.user_json(user.user_id),
        "connLinkContact": rec.created_conn_link(link.full, link.short),
    }


@COMMANDS.command("/_short_link_address <userId:int>[ pq_ratchet=<pq:onoff>]")
def short_link_address(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    link = _address(ctx, user)
    link.ratchet = _ratchet(a["pq"], link.ratchet)
    link.short_link_data_set = True
    return {
        "type": "userContactLink",
        "user": ctx.user_json(user.user_id),
        "contactLink": rec.user_contact_link(link),
    }


@COMMANDS.command("/_show_address <userId:int>")
def show_address(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    return {
        "type": "userContactLink",
        "user": ctx.user_json(user.user_id),
        "contactLink": rec.user_contact_link(_address(ctx, user)),
    }


@COMMANDS.command("/_address_settings <userId:int>[ pq_ratchet=<pq:onoff>] <settings:json>")
def address_settings(ctx: CoreContext, a: Args) -> JSON:
    # The core's parser decodes the JSON (jsonP): a bad AddressSettings is a commandError
    # before the user is looked up. businessAddress is a field without a default, so a JSON
    # without it does not decode.
    settings = ctx.core_profile.address_settings(json_object(a["settings"], "AddressSettings"))
    if "businessAddress" not in settings:
        raise command_error('Error in $: key "businessAddress" not found (AddressSettings)')
    business = settings["businessAddress"]
    if not isinstance(business, bool):
        raise command_error("AddressSettings: businessAddress must be a boolean")
    user = ctx.user_by_id(a["userId"])
    link = _address(ctx, user)
    out: JSON = {"businessAddress": business}
    auto = settings.get("autoAccept")
    if auto is not None:
        if not isinstance(auto, dict) or not isinstance(auto.get("acceptIncognito", False), bool):
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
    link.ratchet = _ratchet(a["pq"], link.ratchet)
    return {
        "type": "userContactLinkUpdated",
        "user": ctx.user_json(user.user_id),
        "contactLink": rec.user_contact_link(link),
    }


@COMMANDS.command("/_delete_address <userId:int>")
def delete_address(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    link = _address(ctx, user)
    ctx.delete_link(link)
    user.address_link_id = None
    return {"type": "userContactLinkDeleted", "user": ctx.user_json(user.user_id)}


@COMMANDS.command("/_set accept member contacts <userId:int> <on:onoff>")
def accept_member_contacts(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    user.auto_accept_member_contacts = a["on"] == "on"
    return {"type": "cmdOk", "user_": ctx.user_json(user.user_id)}


@COMMANDS.command("/_set accept group invitations <userId:int> <on:onoff>")
def accept_group_invitations(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    user.auto_accept_group_invitations = a["on"] == "on"
    return {"type": "cmdOk", "user_": ctx.user_json(user.user_id)}


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
