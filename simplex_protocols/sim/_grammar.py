"""The simulated core's command parser: one table of command patterns, compiled to regexes.

A pattern is the command's syntax as the core API reference writes it:

- literal text, matched exactly (one space separates parts, as in the core's parser);
- ``<name:type>``, a parameter of a type below (``<name>`` alone is a ``word``);
- ``[ ... ]``, an optional part (may nest); ``(a|b)`` literal alternatives are written as a
  parameter of type ``a|b``.

The first pattern that matches the whole command (trailing spaces removed, as the core does)
selects the handler ``cmd_<handler>`` of the core, which receives the parameters as strings
(``None`` for an absent optional part). A command that no pattern matches is refused with
``commandError``, never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["COMMANDS", "CommandSpec", "ParsedCommand", "parse_command"]

_TYPES: dict[str, str] = {
    "int": r"-?\d{1,19}",
    "ids": r"\d{1,19}(?:,\d{1,19})*",
    "onoff": r"on|off",
    "word": r"\S+",
    "num": r"\d+(?:\.\d+)?",
    "role": r"owner|admin|moderator|member|observer|author",
    "chatref": r"[@#*:%]\d{1,19}(?:\(_support(?::\d{1,19})?\))?",
    "sendref": r"[@#]\d{1,19}(?:\(_support(?::\d{1,19})?\))?(?:\(as_group=(?:on|off)\))?",
    "json": r"[\[{].*",
    "rest": r".+",
    "text": r".*",
    "delmode": r"full|entity|messages",
    "itemdel": r"broadcast|internal|internalMark|history",
    "resolve": r"allGroups|unknown|never",
    "ttl": r"\d+|default",
    "page": r"count=\d+|(?:after|before|around)=\d{1,19} count=\d+|initial=\d+",
    "timepage": r"count=\d+|(?:after|before)=\S+ count=\d+",
    "contenttag": r"[a-z]+",
}

_PARAM_RE = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*)(?::([^>]+))?>")


@dataclass(frozen=True)
class CommandSpec:
    """One command of the table: its syntax and the handler that runs it."""

    pattern: str
    handler: str
    regex: re.Pattern[str]
    prefix: str


@dataclass(frozen=True)
class ParsedCommand:
    handler: str
    args: dict[str, str | None]
    pattern: str


def _compile(pattern: str) -> tuple[str, str]:
    """Compile a pattern into a regex, and return its literal prefix."""
    out: list[str] = []
    i = 0
    prefix_done = False
    prefix = []
    while i < len(pattern):
        ch = pattern[i]
        if ch == "[":
            out.append("(?:")
            prefix_done = True
            i += 1
        elif ch == "]":
            out.append(")?")
            i += 1
        elif ch == "<":
            m = _PARAM_RE.match(pattern, i)
            if not m:
                raise ValueError(f"bad parameter in command pattern {pattern!r}")
            name, kind = m.group(1), m.group(2) or "word"
            rx = _TYPES.get(kind, kind)
            out.append(f"(?P<{name}>{rx})")
            prefix_done = True
            i = m.end()
        else:
            out.append(re.escape(ch))
            if not prefix_done:
                prefix.append(ch)
            i += 1
    return "".join(out), "".join(prefix).rstrip()


def _spec(pattern: str, handler: str) -> CommandSpec:
    rx, prefix = _compile(pattern)
    return CommandSpec(pattern, handler, re.compile(rx + r"\Z", re.DOTALL), prefix)


_INC = "[ incognito=<incognito:onoff>]"

#: Every command the simulated core understands, in matching order.
COMMANDS: tuple[CommandSpec, ...] = tuple(
    _spec(p, h)
    for p, h in [
        # users and profiles
        ("/user", "show_active_user"),
        ("/users", "list_users"),
        ("/_create user <newUser:json>", "create_user"),
        ("/_user <userId:int>[ <viewPwd:json>]", "set_active_user"),
        ("/_profile <userId:int> <profile:json>", "update_profile"),
        ("/_set prefs @<contactId:int> <prefs:json>", "set_contact_prefs"),
        ("/_profile_address <userId:int> <on:onoff>", "set_profile_address"),
        # controller, network, SQL
        (
            "/_start[ main=<main:onoff>][ snd_files=<sndFiles:onoff>]"
            "[ service_requests=<serviceRequests:onoff>]",
            "start_chat",
        ),
        ("/_stop", "stop_chat"),
        ("/network[ <options:rest>]", "network_config"),
        ("/net[ <options:rest>]", "network_config"),
        ("/sql chat <query:rest>", "sql_chat"),
        ("/sql agent <query:rest>", "sql_agent"),
        # address
        ("/_address <userId:int>[ pq_ratchet=<pq:onoff>]", "create_address"),
        ("/_short_link_address <userId:int>[ pq_ratchet=<pq:onoff>]", "short_link_address"),
        ("/_show_address <userId:int>", "show_address"),
        (
            "/_address_settings <userId:int>[ pq_ratchet=<pq:onoff>] <settings:json>",
            "address_settings",
        ),
        ("/_delete_address <userId:int>", "delete_address"),
        ("/_accept[ incognito=<incognito:onoff>] <reqId:int>", "accept_contact"),
        ("/_reject <reqId:int>[ notify=<notify:onoff>]", "reject_contact"),
        ("/_set accept member contacts <userId:int> <on:onoff>", "accept_member_contacts"),
        ("/_set accept group invitations <userId:int> <on:onoff>", "accept_group_invitations"),
        # connecting
        (
            "/_connect plan <userId:int> <target:word>[ resolve=<resolve:resolve>]"
            "[ sig=<sig:json>]",
            "connect_plan",
        ),
        (
            "/_prepare contact <userId:int> <fullLink:word>[ <shortLink:word>]"
            "[ domain=<domain:word>] <linkData:json>",
            "prepare_contact",
        ),
        (
            "/_prepare group <userId:int> <fullLink:word>[ <shortLink:word>]"
            "[ direct=<direct:onoff>][ domain=<domain:word>] <linkData:json>",
            "prepare_group",
        ),
        (
            f"/_connect contact @<contactId:int>{_INC}[ text <text:text>][ json <msg:json>]",
            "connect_prepared_contact",
        ),
        (
            f"/_connect group #<groupId:int>{_INC}[ text <text:text>][ json <msg:json>]",
            "connect_prepared_group",
        ),
        (f"/_connect contact <userId:int>{_INC} <contactId:int>", "connect_contact_via_address"),
        (f"/_connect <userId:int>{_INC} <fullLink:word>[ <shortLink:word>]", "connect_link"),
        (f"/_connect <userId:int>{_INC}", "add_contact"),
        ("/connect[ <args:rest>]", "connect_cli"),
        ("/c[ <args:rest>]", "connect_cli"),
        # messages and reading
        (
            "/_send <ref:sendref>[ live=<live:onoff>][ ttl=<ttl:ttl>][ sign=<sign:onoff>]"
            " json <messages:json>",
            "send_messages",
        ),
        (
            "/_send <ref:sendref>[ live=<live:onoff>][ ttl=<ttl:ttl>][ sign=<sign:onoff>]"
            " text <text:text>",
            "send_text",
        ),
        (
            "/_update item <ref:chatref> <itemId:int>[ live=<live:onoff>] json <updated:json>",
            "update_item",
        ),
        (
            "/_update item <ref:chatref> <itemId:int>[ live=<live:onoff>] text <text:text>",
            "update_item_text",
        ),
        ("/_delete item <ref:chatref> <ids:ids> <mode:itemdel>", "delete_items"),
        (
            "/_get chat <ref:chatref>[ content=<content:contenttag>] <page:page>"
            "[ search=<search:text>]",
            "get_chat",
        ),
        (
            "/_get chats <userId:int>[ pcc=<pcc:onoff>][ <page:timepage>][ <query:json>]",
            "get_chats",
        ),
        ("/_read chat items <ref:chatref> <ids:ids>", "read_items"),
        ("/_read chat <ref:chatref>", "read_chat"),
        # chats
        ("/_set custom <ref:chatref>[ <data:json>]", "set_custom_data"),
        (
            "/_delete <ref:chatref>[ <mode:delmode>][ notify=<notify:onoff>]",
            "delete_chat",
        ),
        ("/_info <ref:chatref>", "chat_info"),
        ("/_contacts <userId:int>", "list_contacts"),
        ("/_groups <userId:int>[ @<contactId:int>][ <search:rest>]", "list_groups"),
        # groups
        ("/_group <userId:int>[ incognito=<incognito:onoff>] <profile:json>", "new_group"),
        (
            "/_public group <userId:int>[ incognito=<incognito:onoff>] <relays:ids> <profile:json>",
            "new_public_group",
        ),
        (
            "/_public group <userId:int>[ incognito=<incognito:onoff>] <profile:json>",
            "new_public_group",
        ),
        ("/_group_profile #<groupId:int> <profile:json>", "update_group_profile"),
        ("/_members #<groupId:int>", "list_members"),
        ("/_member role #<groupId:int> <ids:ids> <role:role>", "member_role"),
        ("/_remove #<groupId:int> <ids:ids>[ messages=<messages:onoff>]", "remove_members"),
        ("/_leave #<groupId:int>", "leave_group"),
        ("/_join #<groupId:int>", "join_group"),
        ("/_add #<groupId:int> <contactId:int> <role:role>", "add_member"),
        ("/_create link #<groupId:int>[ <role:role>]", "create_group_link"),
        ("/_set link role #<groupId:int> <role:role>", "set_group_link_role"),
        ("/_delete link #<groupId:int>", "delete_group_link"),
        ("/_get link #<groupId:int>", "get_group_link"),
        # Service RPC
        (
            "/_service_request <userId:int> <target:word>[ timeout=<timeout:num>]"
            "[ sign_key=<signKey:word>] <request:rest>",
            "service_request",
        ),
        ("/_service_response <userId:int> <requestId:word> <response:rest>", "service_response"),
    ]
)


def _head(text: str) -> str:
    return text.split(" ", 1)[0]


_BY_HEAD: dict[str, tuple[CommandSpec, ...]] = {}
for _spec_item in COMMANDS:
    _BY_HEAD[_head(_spec_item.prefix)] = (*_BY_HEAD.get(_head(_spec_item.prefix), ()), _spec_item)


def parse_command(command: str) -> ParsedCommand | str:
    """Match a command against the table.

    Returns the parsed command, or a message for ``commandError`` that names the syntax the
    command's prefix expects.
    """
    text = command.rstrip(" ")
    for spec in _BY_HEAD.get(_head(text), ()):
        m = spec.regex.match(text)
        if m:
            return ParsedCommand(spec.handler, dict(m.groupdict()), spec.pattern)
    best: CommandSpec | None = None
    for spec in COMMANDS:
        if text.startswith(spec.prefix) and (best is None or len(spec.prefix) > len(best.prefix)):
            best = spec
    if best is not None and best.prefix not in ("/c", "/net"):
        return f"Failed reading: {best.pattern}"
    word = text.split(" ", 1)[0] if text else ""
    return f"Failed reading: unknown command {word!r}" if word else "Failed reading: empty"
