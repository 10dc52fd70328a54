"""Builders for the chat core commands the toolkit uses: pure functions, strings out.

Each function returns the exact command string the core's parser (``chatCommandP``) reads,
with its flags in the parser's order and any JSON argument last, encoded by
:func:`simplex_protocols._wire.dumps`. Arguments are checked before anything is built:

- IDs are positive integers of 1 to 15 digits: the core reads IDs as Int64 with a plain
  decimal parser, so a longer number wraps around and can name another chat
  (:data:`simplex_protocols.limits.MAX_CHAT_REF_DIGITS`).
- Single-word arguments (links, SimpleX names, keys, request IDs, timestamps) must not
  contain whitespace: the parser would split them.
- Free text (``text <msg>``, ``search=``, SQL) is always the last argument, where the parser
  takes the rest of the line, so no text can change how the command is read.

Bad arguments raise :class:`~simplex_protocols.errors.CommandArgumentError` (a
``ValueError``) with a stable ``code``. The syntax follows section 3 of the core API reference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

from simplex_protocols._wire import dumps
from simplex_protocols.coretext import is_space, view_name
from simplex_protocols.errors import CommandArgumentError
from simplex_protocols.limits import MAX_CHAT_REF_DIGITS

__all__ = [
    "MEMBER_ROLES",
    "SEED_ONLY",
    "SEND_VERB",
    "SERVICE_REQUEST_VERB",
    "SERVICE_RESPONSE_VERB",
    "ChatRef",
    "ContactRef",
    "GroupRef",
    "accept_contact",
    "add_contact",
    "add_member",
    "add_my_address_short_link",
    "chat_items_read",
    "chat_read",
    "composed_text",
    "connect",
    "connect_contact_via_address",
    "connect_plan",
    "connect_prepared_contact",
    "connect_prepared_group",
    "contact_info",
    "create_active_user",
    "create_group_link",
    "create_my_address",
    "delete_chat",
    "delete_chat_items",
    "delete_group_link",
    "delete_my_address",
    "exec_agent_sql",
    "exec_chat_sql",
    "get_chat",
    "get_chats",
    "get_group_link",
    "get_network_config",
    "group_info",
    "join_group",
    "leave_group",
    "list_contacts",
    "list_groups",
    "list_members",
    "list_users",
    "mention",
    "new_group",
    "parse_chat_ref",
    "prepare_contact",
    "prepare_group",
    "quote_name",
    "reject_contact",
    "remove_members",
    "send_messages",
    "send_service_request",
    "send_service_response",
    "send_text",
    "set_active_user",
    "set_address_settings",
    "set_auto_accept_group_invitations",
    "set_auto_accept_member_contacts",
    "set_contact_prefs",
    "set_custom_data",
    "set_group_link_role",
    "set_members_role",
    "set_network_config",
    "set_profile_address",
    "show_active_user",
    "show_my_address",
    "show_version",
    "start_chat",
    "stop_chat",
    "update_chat_item",
    "update_chat_item_text",
    "update_group_profile",
    "update_profile",
]

#: The member roles the core's command parser accepts (``memberRole`` in ``chatCommandP``).
MEMBER_ROLES: Final = ("observer", "member", "moderator", "admin", "owner")

MemberRole = Literal["observer", "member", "moderator", "admin", "owner"]
DeleteItemMode = Literal["broadcast", "internal", "internalMark", "history"]
DeleteChatMode = Literal["full", "entity", "messages"]

_MAX_ID: Final = 10**MAX_CHAT_REF_DIGITS - 1


# --------------------------------------------------------------------------- argument checks


def _fail(reason: str, code: str, argument: str) -> CommandArgumentError:
    return CommandArgumentError(reason, code=code, argument=argument)


def _id(value: object, argument: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(f"must be an integer, not {type(value).__name__}", "bad_id", argument)
    if value < 1:
        raise _fail(f"must be a positive integer, not {value}", "bad_id", argument)
    if value > _MAX_ID:
        raise _fail(
            f"has more than {MAX_CHAT_REF_DIGITS} digits; the core would read another ID",
            "id_too_long",
            argument,
        )
    return str(value)


def _ids(values: Sequence[int], argument: str) -> str:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
        raise _fail("needs at least one ID", "empty_list", argument)
    return ",".join(_id(v, argument) for v in values)


def _count(value: object, argument: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _fail(f"must be a non-negative integer, not {value!r}", "bad_count", argument)
    if value > _MAX_ID:
        raise _fail(f"has more than {MAX_CHAT_REF_DIGITS} digits", "bad_count", argument)
    return str(value)


def _token(value: object, argument: str) -> str:
    """One word: no whitespace, nothing unprintable, not empty."""
    if not isinstance(value, str) or not value:
        raise _fail("must be a non-empty string", "bad_token", argument)
    # str.isprintable is false for every whitespace character but the ASCII space (they are
    # separators or controls), so the two checks cover "no whitespace, nothing unprintable"
    if not value.isprintable() or " " in value:
        raise _fail(
            "must not contain spaces or control characters (the core would split it)",
            "bad_token",
            argument,
        )
    return value


def _text(value: object, argument: str) -> str:
    if not isinstance(value, str):
        raise _fail(f"must be a string, not {type(value).__name__}", "bad_text", argument)
    return value


def _json(value: object, argument: str) -> str:
    try:
        return dumps(value)
    except (TypeError, ValueError) as exc:
        raise _fail(f"is not JSON: {exc}", "bad_json", argument) from None


def _check_object(value: object, argument: str) -> None:
    if not isinstance(value, Mapping):
        raise _fail(f"must be a JSON object, not {type(value).__name__}", "bad_json", argument)


def _json_object(value: object, argument: str) -> str:
    _check_object(value, argument)
    return _json(value, argument)


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def _flag(name: str, value: bool | None) -> str:
    """`` name=on|off`` when the caller chose, nothing to leave the core's default."""
    return "" if value is None else f" {name}={_on_off(value)}"


def _role(value: object, argument: str = "role") -> str:
    if value not in MEMBER_ROLES:
        raise _fail(
            f"must be one of {', '.join(MEMBER_ROLES)}, not {value!r}", "bad_role", argument
        )
    return str(value)


# --------------------------------------------------------------------------- chat references


@dataclass(frozen=True, slots=True)
class ContactRef:
    """A direct chat with a contact: ``@<contactId>``."""

    contact_id: int

    def __post_init__(self) -> None:
        _id(self.contact_id, "contact_id")

    def __str__(self) -> str:
        return f"@{self.contact_id}"


@dataclass(frozen=True, slots=True)
class GroupRef:
    """A group chat (also a business chat or a channel): ``#<groupId>``."""

    group_id: int

    def __post_init__(self) -> None:
        _id(self.group_id, "group_id")

    def __str__(self) -> str:
        return f"#{self.group_id}"


ChatRef = ContactRef | GroupRef


def parse_chat_ref(text: str) -> ChatRef:
    """Parse ``@<contactId>`` or ``#<groupId>`` (1 to 15 digits, positive).

    Raises:
        CommandArgumentError: ``code`` ``"bad_chat_ref"`` for any other text,
            ``"id_too_long"`` for more than 15 digits (the core would wrap the number
            around and name another chat).
    """
    if not isinstance(text, str) or len(text) < 2 or text[0] not in "@#":
        raise _fail(f"{text!r} is not @<contactId> or #<groupId>", "bad_chat_ref", "chat_ref")
    digits = text[1:]
    if not (digits.isascii() and digits.isdigit()):
        raise _fail(f"{text!r} is not @<contactId> or #<groupId>", "bad_chat_ref", "chat_ref")
    if len(digits) > MAX_CHAT_REF_DIGITS:
        raise _fail(
            f"{text[:20]!r}... has more than {MAX_CHAT_REF_DIGITS} digits; "
            "the core would read another chat",
            "id_too_long",
            "chat_ref",
        )
    number = int(digits)
    if number < 1:
        raise _fail(f"{text!r}: IDs start at 1", "bad_chat_ref", "chat_ref")
    return ContactRef(number) if text[0] == "@" else GroupRef(number)


def _ref(value: object, argument: str = "chat_ref") -> str:
    if isinstance(value, ContactRef | GroupRef):
        return str(value)
    raise _fail(f"must be a ContactRef or GroupRef, not {value!r}", "bad_chat_ref", argument)


# --------------------------------------------------------------------------- names


def quote_name(name: str) -> str:
    """A display name as the core writes it in text and commands (``viewName``).

    The name in single quotes when it contains a space character or ends with punctuation, as
    the core's Haskell sees them (:func:`simplex_protocols.coretext.view_name`), else as it is.
    A name that :func:`simplex_protocols.chat_call.format_mention` also accepts is written the
    same way by both.

    Raises:
        CommandArgumentError: ``bad_name`` when the name is empty, has a single quote (the
            core's ``mkValidName`` drops ``'`` from every display name), a line break, or a
            character that is neither printable nor a space to the core (controls, format
            characters, U+2028 and U+2029): no display name has them.
    """
    if not isinstance(name, str) or not name:
        raise _fail("a display name must be a non-empty string", "bad_name", "name")
    if "'" in name or any(not ch.isprintable() and not is_space(ch) for ch in name):
        raise _fail(
            "a display name cannot contain a single quote or control characters",
            "bad_name",
            "name",
        )
    if "\n" in name or "\r" in name:
        raise _fail("a display name cannot contain line breaks", "bad_name", "name")
    return view_name(name)


def mention(name: str) -> str:
    """The mention of a member in message text: ``@name`` or ``@'name with spaces'``."""
    return "@" + quote_name(name)


def composed_text(
    text: str,
    *,
    quoted_item_id: int | None = None,
    mentions: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A ComposedMessage with text content, for :func:`send_messages`.

    Args:
        text: the message text (mentions must appear in it as :func:`mention` writes them).
        quoted_item_id: the item this message replies to.
        mentions: display name to group member ID, for members mentioned in a group.
    """
    message: dict[str, Any] = {"msgContent": {"type": "text", "text": _text(text, "text")}}
    if quoted_item_id is not None:
        message["quotedItemId"] = int(_id(quoted_item_id, "quoted_item_id"))
    message["mentions"] = {
        _text(k, "mentions"): int(_id(v, "mentions")) for k, v in (mentions or {}).items()
    }
    return message


# --------------------------------------------------------------------------- 3.1 users


def show_active_user() -> str:
    """``/user`` → ``activeUser``."""
    return "/user"


def list_users() -> str:
    """``/users`` → ``usersList``."""
    return "/users"


def create_active_user(
    profile: Mapping[str, Any] | None,
    *,
    past_timestamp: bool = False,
    user_chat_relay: bool | None = None,
    client_service: bool | None = None,
) -> str:
    """``/_create user <json(NewUser)>`` → ``activeUser``."""
    new_user: dict[str, Any] = {}
    if profile is not None:
        _json_object(profile, "profile")
        new_user["profile"] = profile
    new_user["pastTimestamp"] = bool(past_timestamp)
    if user_chat_relay is not None:
        new_user["userChatRelay"] = bool(user_chat_relay)
    if client_service is not None:
        new_user["clientService"] = bool(client_service)
    return "/_create user " + _json(new_user, "profile")


def set_active_user(user_id: int, *, view_password: str | None = None) -> str:
    """``/_user <userId>[ <json(password)>]`` → ``activeUser``."""
    pwd = (
        ""
        if view_password is None
        else " " + _json(_text(view_password, "view_password"), "view_password")
    )
    return f"/_user {_id(user_id, 'user_id')}{pwd}"


def update_profile(user_id: int, profile: Mapping[str, Any]) -> str:
    """``/_profile <userId> <json(Profile)>`` → ``userProfileUpdated`` / ``userProfileNoChange``."""
    return f"/_profile {_id(user_id, 'user_id')} {_json_object(profile, 'profile')}"


def set_contact_prefs(contact_id: int, preferences: Mapping[str, Any]) -> str:
    """``/_set prefs @<contactId> <json(Preferences)>`` → ``contactPrefsUpdated``."""
    return (
        f"/_set prefs @{_id(contact_id, 'contact_id')} {_json_object(preferences, 'preferences')}"
    )


# --------------------------------------------------------------------------- 3.2 controller


def start_chat(
    *, main: bool = True, snd_files: bool | None = None, service_requests: bool = False
) -> str:
    """``/_start main=on|off[ snd_files=on|off][ service_requests=on]`` → ``chatStarted`` /
    ``chatRunning``.

    ``service_requests=on`` lets the core hand Service RPC requests to this client
    (``serviceRequest`` events); without it the core drops them.
    """
    cmd = f"/_start main={_on_off(main)}"
    cmd += _flag("snd_files", snd_files)
    if service_requests:
        cmd += " service_requests=on"
    return cmd


def stop_chat() -> str:
    """``/_stop`` → ``chatStopped``."""
    return "/_stop"


def get_network_config() -> str:
    """``/network`` → ``networkConfig``."""
    return "/network"


def set_network_config(
    *,
    socks: bool | str = False,
    socks_mode: str | None = None,
    host_mode: str | None = None,
    required_host_mode: bool = False,
    smp_proxy: str | None = None,
    smp_proxy_fallback: str | None = None,
    timeout_s: int | None = None,
    log: bool | None = None,
) -> str:
    """``/network socks=off|on|<addr>[ socks-mode=..][ host-mode=..][ required-host-mode]
    [ smp-proxy=..][ smp-proxy-fallback=..][ timeout=<s>][ log=on|off]`` → ``networkConfig``.

    Example: ``set_network_config(smp_proxy="always", smp_proxy_fallback="protected")``.
    """
    socks_value = _on_off(socks) if isinstance(socks, bool) else _token(socks, "socks")
    cmd = f"/network socks={socks_value}"
    for name, value in (("socks-mode", socks_mode), ("host-mode", host_mode)):
        if value is not None:
            cmd += f" {name}={_token(value, name)}"
    if required_host_mode:
        cmd += " required-host-mode"
    for name, value in (("smp-proxy", smp_proxy), ("smp-proxy-fallback", smp_proxy_fallback)):
        if value is not None:
            cmd += f" {name}={_token(value, name)}"
    if timeout_s is not None:
        cmd += f" timeout={_id(timeout_s, 'timeout_s')}"
    return cmd + _flag("log", log)


def exec_chat_sql(query: str) -> str:
    """``/sql chat <query>`` → ``sQLResult {rows}``."""
    return "/sql chat " + _nonempty(query, "query")


def exec_agent_sql(query: str) -> str:
    """``/sql agent <query>`` → ``sQLResult {rows}``."""
    return "/sql agent " + _nonempty(query, "query")


def _nonempty(value: object, argument: str) -> str:
    text = _text(value, argument)
    if not text.strip():
        raise _fail("must not be empty", "bad_text", argument)
    return text


# --------------------------------------------------------------------------- 3.3 address


def create_my_address(user_id: int, *, pq_ratchet: bool | None = None) -> str:
    """``/_address <userId>[ pq_ratchet=on|off]`` → ``userContactLinkCreated``.

    ``pq_ratchet`` adds double-ratchet keys to the address (``on``: with post-quantum keys),
    which Service RPC requests need; without it the address has none.
    """
    return f"/_address {_id(user_id, 'user_id')}{_flag('pq_ratchet', pq_ratchet)}"


def add_my_address_short_link(user_id: int, *, pq_ratchet: bool | None = None) -> str:
    """``/_short_link_address <userId>[ pq_ratchet=on|off]`` → ``userContactLink``."""
    return f"/_short_link_address {_id(user_id, 'user_id')}{_flag('pq_ratchet', pq_ratchet)}"


def show_my_address(user_id: int) -> str:
    """``/_show_address <userId>`` → ``userContactLink``."""
    return f"/_show_address {_id(user_id, 'user_id')}"


def set_address_settings(
    user_id: int, settings: Mapping[str, Any], *, pq_ratchet: bool | None = None
) -> str:
    """``/_address_settings <userId>[ pq_ratchet=on|off] <json(AddressSettings)>`` →
    ``userContactLinkUpdated``."""
    return (
        f"/_address_settings {_id(user_id, 'user_id')}{_flag('pq_ratchet', pq_ratchet)} "
        + _json_object(settings, "settings")
    )


def set_profile_address(user_id: int, enable: bool) -> str:
    """``/_profile_address <userId> on|off`` → ``userProfileUpdated``."""
    return f"/_profile_address {_id(user_id, 'user_id')} {_on_off(enable)}"


def delete_my_address(user_id: int) -> str:
    """``/_delete_address <userId>`` → ``userContactLinkDeleted``."""
    return f"/_delete_address {_id(user_id, 'user_id')}"


def accept_contact(contact_request_id: int, *, incognito: bool | None = None) -> str:
    """``/_accept[ incognito=on|off] <contactReqId>`` → ``acceptingContactRequest``."""
    return (
        f"/_accept{_flag('incognito', incognito)} {_id(contact_request_id, 'contact_request_id')}"
    )


def reject_contact(contact_request_id: int, *, notify: bool | None = None) -> str:
    """``/_reject <contactReqId>[ notify=on|off]`` → ``contactRequestRejected``."""
    return f"/_reject {_id(contact_request_id, 'contact_request_id')}{_flag('notify', notify)}"


def set_auto_accept_member_contacts(user_id: int, enable: bool) -> str:
    """``/_set accept member contacts <userId> on|off`` → ``cmdOk``."""
    return f"/_set accept member contacts {_id(user_id, 'user_id')} {_on_off(enable)}"


def set_auto_accept_group_invitations(user_id: int, enable: bool) -> str:
    """``/_set accept group invitations <userId> on|off`` → ``cmdOk`` (newest cores)."""
    return f"/_set accept group invitations {_id(user_id, 'user_id')} {_on_off(enable)}"


# --------------------------------------------------------------------------- 3.4 connecting


PlanResolveMode = Literal["allGroups", "unknown", "never"]


def connect_plan(
    user_id: int,
    target: str,
    *,
    resolve: PlanResolveMode | None = None,
    link_owner_sig: Mapping[str, Any] | None = None,
) -> str:
    """``/_connect plan <userId> <link or name>[ resolve=..][ sig=<json>]`` →
    ``connectionPlan``. ``target`` is a SimpleX link or name (``@name.simplex``,
    ``#name.simplex``)."""
    cmd = f"/_connect plan {_id(user_id, 'user_id')} {_token(target, 'target')}"
    if resolve is not None:
        if resolve not in ("allGroups", "unknown", "never"):
            raise _fail(
                f"must be allGroups, unknown or never, not {resolve!r}", "bad_token", "resolve"
            )
        cmd += f" resolve={resolve}"
    if link_owner_sig is not None:
        cmd += " sig=" + _json_object(link_owner_sig, "link_owner_sig")
    return cmd


def _link(full_link: str, short_link: str | None) -> str:
    text = _token(full_link, "full_link")
    if short_link is not None:
        text += " " + _token(short_link, "short_link")
    return text


def prepare_contact(
    user_id: int,
    full_link: str,
    link_data: Mapping[str, Any],
    *,
    short_link: str | None = None,
    domain: str | None = None,
) -> str:
    """``/_prepare contact <userId> <connFullLink>[ <connShortLink>][ domain=<name>]
    <json(ContactShortLinkData)>`` → ``newPreparedChat``."""
    cmd = f"/_prepare contact {_id(user_id, 'user_id')} {_link(full_link, short_link)}"
    if domain is not None:
        cmd += f" domain={_token(domain, 'domain')}"
    return cmd + " " + _json_object(link_data, "link_data")


def prepare_group(
    user_id: int,
    full_link: str,
    link_data: Mapping[str, Any],
    *,
    short_link: str | None = None,
    direct: bool | None = None,
    domain: str | None = None,
) -> str:
    """``/_prepare group <userId> <connFullLink>[ <connShortLink>][ direct=on|off]
    [ domain=<name>] <json(GroupShortLinkData)>`` → ``newPreparedChat``.

    ``direct=False`` prepares a channel.
    """
    cmd = f"/_prepare group {_id(user_id, 'user_id')} {_link(full_link, short_link)}"
    cmd += _flag("direct", direct)
    if domain is not None:
        cmd += f" domain={_token(domain, 'domain')}"
    return cmd + " " + _json_object(link_data, "link_data")


def _message_tail(message: str | Mapping[str, Any] | None) -> str:
    if message is None:
        return ""
    if isinstance(message, str):
        return " text " + message
    return " json " + _json_object(message, "message")


def connect_prepared_contact(
    contact_id: int,
    *,
    incognito: bool | None = None,
    message: str | Mapping[str, Any] | None = None,
) -> str:
    """``/_connect contact @<contactId>[ incognito=on|off][ text <msg>| json <MsgContent>]``
    → ``startedConnectionToContact`` / ``contactAlreadyExists``."""
    return (
        f"/_connect contact @{_id(contact_id, 'contact_id')}{_flag('incognito', incognito)}"
        + _message_tail(message)
    )


def connect_prepared_group(
    group_id: int,
    *,
    incognito: bool | None = None,
    owner_contact: tuple[int, str] | None = None,
    message: str | Mapping[str, Any] | None = None,
) -> str:
    """``/_connect group #<groupId>[ incognito=on|off][ contact=<id> owner=<memberId>]
    [ text <msg>| json <MsgContent>]`` → ``startedConnectionToGroup``."""
    cmd = f"/_connect group #{_id(group_id, 'group_id')}{_flag('incognito', incognito)}"
    if owner_contact is not None:
        contact_id, owner_member_id = owner_contact
        cmd += f" contact={_id(contact_id, 'owner_contact')} owner={_token(owner_member_id, 'owner_contact')}"
    return cmd + _message_tail(message)


def add_contact(user_id: int, *, incognito: bool | None = None) -> str:
    """``/_connect <userId>[ incognito=on|off]``: create a one-time invitation link →
    ``invitation``."""
    return f"/_connect {_id(user_id, 'user_id')}{_flag('incognito', incognito)}"


def connect(
    user_id: int,
    full_link: str,
    *,
    short_link: str | None = None,
    incognito: bool | None = None,
) -> str:
    """``/_connect <userId>[ incognito=on|off] <connFullLink>[ <connShortLink>]`` →
    ``sentConfirmation`` / ``sentInvitation`` / ``contactAlreadyExists``."""
    return f"/_connect {_id(user_id, 'user_id')}{_flag('incognito', incognito)} " + _link(
        full_link, short_link
    )


def connect_contact_via_address(
    user_id: int, contact_id: int, *, incognito: bool | None = None
) -> str:
    """``/_connect contact <userId>[ incognito=on|off] <contactId>`` →
    ``sentInvitationToContact``."""
    return f"/_connect contact {_id(user_id, 'user_id')}{_flag('incognito', incognito)} " + _id(
        contact_id, "contact_id"
    )


# --------------------------------------------------------------------------- 3.5 messages


def _send_flags(live: bool, ttl: int | Literal["default"] | None, sign: bool) -> str:
    flags = " live=on" if live else ""
    if ttl is not None:
        flags += " ttl=" + ("default" if ttl == "default" else _id(ttl, "ttl"))
    if sign:
        flags += " sign=on"
    return flags


def send_messages(
    send_ref: ChatRef,
    messages: Sequence[Mapping[str, Any]],
    *,
    live: bool = False,
    ttl: int | Literal["default"] | None = None,
    sign: bool = False,
) -> str:
    """``/_send <ref>[ live=on][ ttl=<s>|default][ sign=on] json <json([ComposedMessage])>``
    → ``newChatItems``. See :func:`composed_text`."""
    if isinstance(messages, Mapping) or not isinstance(messages, Sequence) or not messages:
        raise _fail("needs a non-empty list of ComposedMessage objects", "empty_list", "messages")
    for item in messages:
        # Each item an object; the list is written (and its JSON checked) once, below.
        _check_object(item, "messages")
    return f"/_send {_ref(send_ref, 'send_ref')}{_send_flags(live, ttl, sign)} json " + _json(
        list(messages), "messages"
    )


def send_text(
    send_ref: ChatRef,
    text: str,
    *,
    live: bool = False,
    ttl: int | Literal["default"] | None = None,
    sign: bool = False,
) -> str:
    """``/_send <ref>[ live=on][ ttl=..][ sign=on] text <text>`` → ``newChatItems``."""
    return f"/_send {_ref(send_ref, 'send_ref')}{_send_flags(live, ttl, sign)} text " + _text(
        text, "text"
    )


def update_chat_item(
    chat_ref: ChatRef, item_id: int, updated: Mapping[str, Any], *, live: bool = False
) -> str:
    """``/_update item <ref> <itemId>[ live=on] json <json(UpdatedMessage)>`` →
    ``chatItemUpdated`` / ``chatItemNotChanged``."""
    return (
        f"/_update item {_ref(chat_ref)} {_id(item_id, 'item_id')}"
        + (" live=on" if live else "")
        + " json "
        + _json_object(updated, "updated")
    )


def update_chat_item_text(chat_ref: ChatRef, item_id: int, text: str, *, live: bool = False) -> str:
    """``/_update item <ref> <itemId>[ live=on] text <text>``."""
    return (
        f"/_update item {_ref(chat_ref)} {_id(item_id, 'item_id')}"
        + (" live=on" if live else "")
        + " text "
        + _text(text, "text")
    )


def delete_chat_items(
    chat_ref: ChatRef, item_ids: Sequence[int], mode: DeleteItemMode = "broadcast"
) -> str:
    """``/_delete item <ref> <id>[,<id>...] broadcast|internal|internalMark|history`` →
    ``chatItemsDeleted``."""
    if mode not in ("broadcast", "internal", "internalMark", "history"):
        raise _fail(f"unknown delete mode {mode!r}", "bad_token", "mode")
    return f"/_delete item {_ref(chat_ref)} {_ids(item_ids, 'item_ids')} {mode}"


def get_chat(
    chat_ref: ChatRef,
    *,
    count: int | None = None,
    after: int | None = None,
    before: int | None = None,
    around: int | None = None,
    initial: int | None = None,
    content: str | None = None,
    search: str | None = None,
) -> str:
    """``/_get chat <ref>[ content=<tag>] <pagination>[ search=<text>]`` → ``apiChat``.

    Pagination, exactly one form: ``count=n`` (the last n items), ``after=id count=n``,
    ``before=id count=n``, ``around=id count=n`` (``count=0`` gives the item alone), or
    ``initial=n`` (the page a client opens with, with the chat's unread stats).
    """
    anchors = {"after": after, "before": before, "around": around}
    given = {k: v for k, v in anchors.items() if v is not None}
    if initial is not None:
        if count is not None or given:
            raise _fail(
                "initial= cannot be combined with count, after, before or around",
                "bad_pagination",
                "initial",
            )
        pagination = f"initial={_count(initial, 'initial')}"
    else:
        if count is None:
            raise _fail("needs count (or initial)", "bad_pagination", "count")
        if len(given) > 1:
            raise _fail("at most one of after, before and around", "bad_pagination", "after")
        pagination = "".join(f"{k}={_id(v, k)} " for k, v in given.items())
        pagination += f"count={_count(count, 'count')}"
    cmd = f"/_get chat {_ref(chat_ref)}"
    if content is not None:
        cmd += f" content={_token(content, 'content')}"
    cmd += " " + pagination
    if search is not None:
        cmd += " search=" + _nonempty(search, "search")
    return cmd


def _utc_time(value: str | datetime, argument: str) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise _fail("needs a timezone-aware datetime", "bad_time", argument)
        text = value.astimezone(UTC).isoformat(timespec="milliseconds")
        return text.replace("+00:00", "Z")
    return _token(value, argument)


def get_chats(
    user_id: int,
    *,
    pending_connections: bool | None = None,
    count: int | None = None,
    after: str | datetime | None = None,
    before: str | datetime | None = None,
    query: Mapping[str, Any] | None = None,
) -> str:
    """``/_get chats <userId>[ pcc=on|off][ count=n | after=<ts> count=n | before=<ts> count=n]
    [ <json(ChatListQuery)>]`` → ``apiChats``.

    Omitted parts take the core's defaults (``count=5000``, no filter, ``pcc=off``).
    """
    cmd = f"/_get chats {_id(user_id, 'user_id')}{_flag('pcc', pending_connections)}"
    if after is not None and before is not None:
        raise _fail("at most one of after and before", "bad_pagination", "after")
    if after is not None or before is not None:
        if count is None:
            raise _fail("after/before need count", "bad_pagination", "count")
        name, when = ("after", after) if after is not None else ("before", before)
        assert when is not None
        cmd += f" {name}={_utc_time(when, name)} count={_count(count, 'count')}"
    elif count is not None:
        cmd += f" count={_count(count, 'count')}"
    if query is not None:
        cmd += " " + _json_object(query, "query")
    return cmd


def chat_items_read(chat_ref: ChatRef, item_ids: Sequence[int]) -> str:
    """``/_read chat items <ref> <id>[,<id>...]`` → ``itemsReadForChat``."""
    return f"/_read chat items {_ref(chat_ref)} {_ids(item_ids, 'item_ids')}"


def chat_read(chat_ref: ChatRef) -> str:
    """``/_read chat <ref>`` → ``cmdOk``."""
    return f"/_read chat {_ref(chat_ref)}"


# --------------------------------------------------------------------------- 3.6 chats


def set_custom_data(chat_ref: ChatRef, data: Mapping[str, Any] | None) -> str:
    """``/_set custom @<contactId>|#<groupId>[ <json>]`` (``None`` clears) → ``cmdOk``."""
    cmd = f"/_set custom {_ref(chat_ref)}"
    return cmd if data is None else cmd + " " + _json_object(data, "data")


def delete_chat(
    chat_ref: ChatRef, mode: DeleteChatMode = "full", *, notify: bool | None = None
) -> str:
    """``/_delete <ref> full|entity[ notify=on|off]`` or ``/_delete <ref> messages`` →
    ``contactDeleted`` / ``contactConnectionDeleted`` / ``groupDeletedUser``.

    ``notify`` defaults to on for ``full`` and ``entity`` (written out); ``messages`` takes
    no ``notify``.
    """
    if mode == "messages":
        if notify is not None:
            raise _fail("messages mode takes no notify", "bad_token", "notify")
        return f"/_delete {_ref(chat_ref)} messages"
    if mode not in ("full", "entity"):
        raise _fail(f"unknown delete mode {mode!r}", "bad_token", "mode")
    return f"/_delete {_ref(chat_ref)} {mode} notify={_on_off(True if notify is None else notify)}"


def contact_info(contact_id: int) -> str:
    """``/_info @<contactId>`` → ``contactInfo``."""
    return f"/_info @{_id(contact_id, 'contact_id')}"


def group_info(group_id: int) -> str:
    """``/_info #<groupId>`` → ``groupInfo``."""
    return f"/_info #{_id(group_id, 'group_id')}"


def list_contacts(user_id: int) -> str:
    """``/_contacts <userId>`` → ``contactsList``."""
    return f"/_contacts {_id(user_id, 'user_id')}"


def list_groups(
    user_id: int,
    *,
    contact_id: int | None = None,
    search: str | None = None,
    glued: bool = False,
) -> str:
    """``/_groups <userId>[ @<contactId>][ <search>]`` → ``groupsList``.

    ``glued``: no space before the user ID (``/_groups1``), the form a 6.4-era core parses
    (``Commands.hs`` at 000f4df: ``"/_groups" *> (APIListGroups <$> A.decimal ...``; the
    generated docs write the space).

    Raises:
        CommandArgumentError: ``code`` ``"ambiguous_search"`` when, without ``contact_id``,
            the search starts with ``@`` and a digit (the core would read a contact filter).
    """
    cmd = ("/_groups" if glued else "/_groups ") + _id(user_id, "user_id")
    if contact_id is not None:
        cmd += f" @{_id(contact_id, 'contact_id')}"
    if search is not None:
        text = _nonempty(search, "search")
        if contact_id is None and text.startswith("@") and text[1:2].isdigit():
            raise _fail(
                "a search starting with @ and a digit reads as a contact filter",
                "ambiguous_search",
                "search",
            )
        cmd += " " + text
    return cmd


# --------------------------------------------------------------------------- 3.7 groups


def new_group(user_id: int, profile: Mapping[str, Any], *, incognito: bool = False) -> str:
    """``/_group <userId>[ incognito=on] <json(GroupProfile)>`` → ``groupCreated``."""
    return (
        f"/_group {_id(user_id, 'user_id')}"
        + (" incognito=on" if incognito else "")
        + " "
        + _json_object(profile, "profile")
    )


def update_group_profile(group_id: int, profile: Mapping[str, Any]) -> str:
    """``/_group_profile #<groupId> <json(GroupProfile)>`` → ``groupUpdated``."""
    return f"/_group_profile #{_id(group_id, 'group_id')} {_json_object(profile, 'profile')}"


def list_members(group_id: int) -> str:
    """``/_members #<groupId>`` → ``groupMembers``."""
    return f"/_members #{_id(group_id, 'group_id')}"


def set_members_role(group_id: int, member_ids: Sequence[int], role: MemberRole) -> str:
    """``/_member role #<groupId> <gmId>[,<gmId>...] <role>`` → ``membersRoleUser``."""
    return (
        f"/_member role #{_id(group_id, 'group_id')} {_ids(member_ids, 'member_ids')} {_role(role)}"
    )


def remove_members(group_id: int, member_ids: Sequence[int], *, with_messages: bool = False) -> str:
    """``/_remove #<groupId> <gmId>[,...][ messages=on]`` → ``userDeletedMembers``."""
    return f"/_remove #{_id(group_id, 'group_id')} {_ids(member_ids, 'member_ids')}" + (
        " messages=on" if with_messages else ""
    )


def leave_group(group_id: int) -> str:
    """``/_leave #<groupId>`` → ``leftMemberUser``."""
    return f"/_leave #{_id(group_id, 'group_id')}"


def join_group(group_id: int) -> str:
    """``/_join #<groupId>`` → ``userAcceptedGroupSent``."""
    return f"/_join #{_id(group_id, 'group_id')}"


def add_member(group_id: int, contact_id: int, role: MemberRole) -> str:
    """``/_add #<groupId> <contactId> <role>`` → ``sentGroupInvitation``."""
    return f"/_add #{_id(group_id, 'group_id')} {_id(contact_id, 'contact_id')} {_role(role)}"


def create_group_link(group_id: int, role: MemberRole = "member") -> str:
    """``/_create link #<groupId> <role>`` → ``groupLinkCreated``."""
    return f"/_create link #{_id(group_id, 'group_id')} {_role(role)}"


def set_group_link_role(group_id: int, role: MemberRole) -> str:
    """``/_set link role #<groupId> <role>`` → ``groupLink``."""
    return f"/_set link role #{_id(group_id, 'group_id')} {_role(role)}"


def delete_group_link(group_id: int) -> str:
    """``/_delete link #<groupId>`` → ``groupLinkDeleted``."""
    return f"/_delete link #{_id(group_id, 'group_id')}"


def get_group_link(group_id: int) -> str:
    """``/_get link #<groupId>`` → ``groupLink``."""
    return f"/_get link #{_id(group_id, 'group_id')}"


# --------------------------------------------------------------------------- 3.8 service RPC


def _seconds(value: float, argument: str) -> str:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise _fail(f"must be a positive number of seconds, not {value!r}", "bad_timeout", argument)
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    if text == "0":
        raise _fail("must be at least a microsecond", "bad_timeout", argument)
    return text


def send_service_request(
    user_id: int,
    target: str,
    request: Mapping[str, Any],
    *,
    timeout_s: float | None = None,
    sign_key: str | None = None,
) -> str:
    """``/_service_request <userId> <target>[ timeout=<s>][ sign_key=<key>] <json>`` →
    ``serviceResponse {responseData}`` once the responder answers.

    ``target`` is a contact address link or the SimpleX name of one; without ``timeout_s``
    the core waits 30 s. ``sign_key`` signs the request with the requester's Ed25519 key.
    """
    cmd = f"{SERVICE_REQUEST_VERB} {_id(user_id, 'user_id')} {_token(target, 'target')}"
    if timeout_s is not None:
        cmd += f" timeout={_seconds(timeout_s, 'timeout_s')}"
    if sign_key is not None:
        cmd += f" sign_key={_token(sign_key, 'sign_key')}"
    return cmd + " " + _json_object(request, "request")


def send_service_response(user_id: int, request_id: str, response: Mapping[str, Any]) -> str:
    """``/_service_response <userId> <requestId> <json>`` → ``serviceReplyAccepted``."""
    return (
        f"{SERVICE_RESPONSE_VERB} {_id(user_id, 'user_id')} {_token(request_id, 'request_id')} "
        + _json_object(response, "response")
    )


# --------------------------------------------------------------------------- command names

#: The name (first word) of the commands :func:`send_messages` and :func:`send_text` build, for
#: errors and records that name a command without its arguments.
SEND_VERB: Final = "/_send"

#: The name of the command :func:`send_service_request` builds.
SERVICE_REQUEST_VERB: Final = "/_service_request"

#: The name of the command :func:`send_service_response` builds.
SERVICE_RESPONSE_VERB: Final = "/_service_response"


# --------------------------------------------------------------------------- the core itself


def show_version() -> str:
    """``/version`` (the CLI's ``/v``) → ``versionInfo {versionInfo: {version,
    simplexmqVersion, simplexmqCommit}, chatMigrations, agentMigrations}``."""
    return "/version"


# --------------------------------------------------------------------------- seed-only syntax


@dataclass(frozen=True, slots=True)
class SeedOnlySyntax:
    """A command form the toolkit knows only from the seeds: no released core's parser or
    generated docs that we can read has it (``docs/core.md``).

    Attributes:
        syntax: the form, as the builder writes it.
        source: the seed and its section.
    """

    syntax: str
    source: str


#: The builders that write seed-only syntax, each the one place that writes its command: when
#: a released core writes it otherwise, the builder (and this table) is the one edit.
SEED_ONLY: Final[Mapping[str, SeedOnlySyntax]] = {
    "send_service_request": SeedOnlySyntax(
        "/_service_request <userId> <target>[ timeout=<seconds>][ sign_key=<key>] <json>",
        "seed 001 (Agent protocols over SimpleX), Service RPC transport: Exchange; Signed requests",
    ),
    "add_my_address_short_link": SeedOnlySyntax(
        "/_short_link_address <userId>[ pq_ratchet=on|off]",
        "seed 001, Service RPC transport: Requirements",
    ),
    "prepare_contact": SeedOnlySyntax(
        "/_prepare contact <userId> <fullLink>[ <shortLink>][ domain=<name>] <json>",
        "seed 000 (the MCP server plan), Processing: connect (simplex_name)",
    ),
    "prepare_group": SeedOnlySyntax(
        "/_prepare group <userId> <fullLink>[ <shortLink>][ direct=on|off][ domain=<name>] <json>",
        "seed 000, Processing: connect (channels: direct=off)",
    ),
}
