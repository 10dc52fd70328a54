"""What the SDK client transports share: a chat core, our user, and the way to one bot.

:class:`BotLink` holds the core (opened from a ``--core`` string, or an entered
:class:`~simplex_protocols.core.ChatCore` given by the caller), the requesting user, and the
bot's address; it sends Service RPC requests through
:class:`~simplex_protocols.transports.ServiceRPCRequester` and ``/_call`` through
:class:`~simplex_protocols.transports.ChatCaller`, opening the conversation the first time one
is needed. Both SDK transports (MCP and A2A) are thin layers over it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, Literal

import anyio

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols.chat_call import Reply, format_call_command
from simplex_protocols.core import ChatAPI, ChatCore, ContactRef, GroupRef, event_type, open_core
from simplex_protocols.core import commands as cmds
from simplex_protocols.errors import CallFormatError, CallTimeoutError, CoreError
from simplex_protocols.limits import DEFAULT_REQUEST_TIMEOUT_S
from simplex_protocols.links import parse_simplex_target
from simplex_protocols.rpc import JSONValue, KeyStore
from simplex_protocols.transports import ChatCaller, ChatCallResult, ServiceRPCRequester

__all__ = [
    "DEFAULT_CONNECT_WAIT_S",
    "BotLink",
    "Conversation",
    "TransportChoice",
    "open_conversation",
]

#: How the transports reach the bot: Service RPC, a conversation, or the spec's choice.
TransportChoice = Literal["auto", "rpc", "chat"]

#: How long a new conversation may take to be accepted.
DEFAULT_CONNECT_WAIT_S: Final = 60.0

#: The profile a transport creates when it opened the core and found no user in it.
_AGENT_PROFILE: Final = {"fullName": "", "peerType": "agent"}


@dataclass(frozen=True, slots=True)
class Conversation:
    """Where ``/_call`` goes: a direct chat, or a business chat with the business's member."""

    chat: ContactRef | GroupRef
    member_id: int | None = None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _refuse(reason: str, code: str) -> CallFormatError:
    return CallFormatError(reason, code=code)


async def open_conversation(
    api: ChatAPI,
    user_id: int,
    target: str,
    plan: Mapping[str, Any],
    *,
    wait_s: float,
    who: str = "the bot",
    domain: str | None = None,
    while_connecting: Callable[[], contextlib.AbstractAsyncContextManager[object]] | None = None,
) -> Conversation:
    """A conversation with a contact address: the contact we have, or a new connection.

    A new connection is made as the apps make it: ``/_prepare contact`` with the link data of
    the plan, then ``/_connect contact`` (``/_connect group`` for a business address), ready
    when ``contactConnected`` (``userJoinedGroup``) arrives.

    Args:
        api: the core.
        user_id: our user.
        target: the link or SimpleX name the plan was made for.
        plan: the core's ``connectionPlan`` response for ``target``.
        wait_s: how long the connection may take to be accepted.
        who: the bot's name, for messages.
        domain: the SimpleX name the plan verified, recorded with a new prepared chat
            (``/_prepare contact … domain=``); give it only to a core that has the option.
        while_connecting: a context the wait for acceptance runs in (a progress line, say);
            not entered when the conversation exists already.

    Raises:
        CallFormatError: ``own_address`` (the address is ours), ``not_a_contact_address``,
            ``connection_pending`` (a connection to it waits to be accepted elsewhere),
            ``no_link_data`` (the plan cannot be connected with), ``bad_prepared_chat`` (the
            core's prepared chat names no contact or group).
        CallTimeoutError: the connection was not accepted within ``wait_s``.
        CoreError: the core refused a command.
    """
    connecting = while_connecting if while_connecting is not None else contextlib.nullcontext
    connection = plan.get("connectionPlan")
    connection = connection if isinstance(connection, Mapping) else {}
    details = connection.get("contactAddressPlan")
    if not isinstance(details, Mapping):
        raise _refuse(f"{target} is not a contact address", "not_a_contact_address")
    status = details.get("type")
    contact = details.get("contact")
    contact_id = _int(contact.get("contactId")) if isinstance(contact, Mapping) else None
    if status == "ownLink":
        raise _refuse("this is your own address", "own_address")
    if status in ("known", "contactViaAddress", "connectingProhibit") and contact_id is not None:
        if status == "known":
            return Conversation(ContactRef(contact_id))
        async with api.core.events() as events:
            if status == "contactViaAddress":
                await api.connect_contact_via_address(user_id, contact_id)
            async with connecting():
                await _wait_connected(events, contact_id, wait_s, who)
        return Conversation(ContactRef(contact_id))
    if status != "ok":
        raise _refuse(f"a connection to {who} is pending ({status})", "connection_pending")
    data = details.get("contactSLinkData_")
    link = plan.get("connLink")
    link = link if isinstance(link, Mapping) else {}
    full, short = link.get("connFullLink"), link.get("connShortLink")
    if not isinstance(data, Mapping) or not isinstance(full, str):
        raise _refuse(f"the plan of {who} has no link data to connect with", "no_link_data")
    if data.get("business") is True:
        existing = await _business_chat(api, user_id, {full, short})
        if existing is not None:
            return Conversation(GroupRef(existing), await _business_member(api, existing))
    async with api.core.events() as events:
        chat = await api.prepare_contact(
            user_id,
            full,
            data,
            short_link=short if isinstance(short, str) else None,
            domain=domain,
        )
        info = chat.get("chatInfo") if isinstance(chat, Mapping) else None
        info = info if isinstance(info, Mapping) else {}
        if info.get("type") == "group":
            group_id = _int(_obj(info.get("groupInfo")).get("groupId"))
            if group_id is None:
                raise _refuse("the business chat has no group ID", "bad_prepared_chat")
            async with connecting():
                await api.connect_prepared_group(group_id)
                await _wait(
                    events,
                    lambda e: (
                        event_type(e) == "userJoinedGroup"
                        and _int(_obj(e.get("groupInfo")).get("groupId")) == group_id
                    ),
                    wait_s,
                    who,
                )
            return Conversation(GroupRef(group_id), await _business_member(api, group_id))
        new_id = _int(_obj(info.get("contact")).get("contactId"))
        if new_id is None:
            raise _refuse("the prepared chat has no contact ID", "bad_prepared_chat")
        async with connecting():
            started = await api.connect_prepared_contact(new_id)
            if started.get("type") == "contactAlreadyExists":
                existing = _int(_obj(started.get("contact")).get("contactId"))
                if existing is not None:
                    return Conversation(ContactRef(existing))
            await _wait_connected(events, new_id, wait_s, who)
    return Conversation(ContactRef(new_id))


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


async def _wait(
    events: Any, matches: Callable[[Mapping[str, Any]], bool], wait_s: float, who: str
) -> None:
    try:
        with anyio.fail_after(wait_s):
            async for event in events:
                if matches(event):
                    return
    except TimeoutError:
        raise CallTimeoutError(
            f"{who} did not accept the connection within {wait_s:g} s", timeout=wait_s
        ) from None
    raise CoreError({"type": "error", "errorType": {"type": "eventsEnded"}}, command=cmds.SEND_VERB)


async def _wait_connected(events: Any, contact_id: int, wait_s: float, who: str) -> None:
    await _wait(
        events,
        lambda e: (
            event_type(e) == "contactConnected"
            and _int(_obj(e.get("contact")).get("contactId")) == contact_id
        ),
        wait_s,
        who,
    )


async def _business_chat(api: ChatAPI, user_id: int, links: set[Any]) -> int | None:
    """The business chat we already joined through this address (found by its link: the plan
    of a business address names no contact, a business chat being a group)."""
    for entry in await api.list_groups(user_id):
        raw: Any = entry
        info = raw.get("groupInfo", raw) if isinstance(raw, Mapping) else None
        if not isinstance(info, Mapping) or not isinstance(info.get("businessChat"), Mapping):
            continue
        to_connect = _obj(_obj(info.get("preparedGroup")).get("connLinkToConnect"))
        if not links & {to_connect.get("connShortLink"), to_connect.get("connFullLink")}:
            continue
        status = _obj(info.get("membership")).get("memberStatus")
        group_id = _int(info.get("groupId"))
        if status in ("connected", "complete") and group_id is not None:
            return group_id
    return None


async def _business_member(api: ChatAPI, group_id: int) -> int | None:
    for member in await api.list_members(group_id):
        member_id = _int(member.get("groupMemberId"))
        if member.get("memberCategory") == "host" and member_id is not None:
            return member_id
    return None


class BotLink:
    """One bot, reached through one chat core, over Service RPC and in a conversation.

    Args:
        target: the bot's contact address link or SimpleX name.
        core: a ``--core`` string (``ws://HOST:PORT``, ``lib[:DB_PREFIX]``, ``sim:NAME``),
            opened on :meth:`__aenter__` and closed on exit, or an entered ``ChatCore`` (or a
            ``ChatAPI`` over one), which stays open.
        display_name: the user to create in a core opened from a string that has none (peer
            type ``agent``). A given ``ChatCore`` must have an active user already.
        clock: the clock of the waits.
        key_store: the signing keys, for signed Service RPC requests.
        connect_wait_s: how long a new conversation may take to be accepted.
        user_id: the requesting user of a given core, when the caller knows it already (the
            core is then not asked for its active user).

    Raises:
        LinkError: ``target`` is no SimpleX link or name (nothing is opened).
        CoreOptionError: ``core`` is an invalid ``--core`` string.
    """

    def __init__(
        self,
        target: str,
        *,
        core: str | ChatCore | ChatAPI,
        display_name: str = "simplex-protocols",
        clock: Clock | None = None,
        key_store: KeyStore | None = None,
        connect_wait_s: float = DEFAULT_CONNECT_WAIT_S,
        user_id: int | None = None,
    ) -> None:
        parse_simplex_target(target)
        self.target = target
        self._given = core if not isinstance(core, str) else None
        self._opened: ChatCore | None = open_core(core) if isinstance(core, str) else None
        self.display_name = display_name
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.key_store = key_store
        self.connect_wait_s = connect_wait_s
        self._stack = contextlib.AsyncExitStack()
        self._api: ChatAPI | None = None
        self._user_id: int | None = user_id if self._given is not None else None
        self._conversation: Conversation | None = None
        self._connecting = anyio.Lock()

    @property
    def api(self) -> ChatAPI:
        if self._api is None:
            raise RuntimeError("enter the transport (async with) first")
        return self._api

    @property
    def user_id(self) -> int:
        if self._user_id is None:
            raise RuntimeError("enter the transport (async with) first")
        return self._user_id

    async def __aenter__(self) -> BotLink:
        if self._opened is not None:
            await self._stack.enter_async_context(self._opened)
            self._api = ChatAPI(self._opened)
        else:
            given = self._given
            assert given is not None
            self._api = given if isinstance(given, ChatAPI) else ChatAPI(given)
        if self._user_id is not None:
            return self
        try:
            if self._opened is None:
                # a core the caller gave: its user is the caller's to make
                found = await self._api.active_user()
                if found is None:
                    raise CoreError(
                        {"type": "error", "errorType": {"type": "noActiveUser"}},
                        command=cmds.show_active_user(),
                    )
                user = found
            else:
                user, created = await self._api.ensure_active_user(
                    {"displayName": self.display_name, **_AGENT_PROFILE}
                )
                if created:
                    await self._api.start_chat()
            self._user_id = int(user["userId"])
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stack.aclose()

    async def request(
        self,
        protocol: str,
        request: JSONValue,
        *,
        timeout_s: float | None,
        sign: bool,
    ) -> JSONValue:
        """One Service RPC request (errors as
        :meth:`~simplex_protocols.transports.ServiceRPCRequester.request_with_retry`)."""
        requester = ServiceRPCRequester(
            self.api, user_id=self.user_id, clock=self.clock, key_store=self.key_store
        )
        wait = DEFAULT_REQUEST_TIMEOUT_S if timeout_s is None else timeout_s
        return await requester.request_with_retry(
            self.target,
            protocol,
            request,
            timeout_s=timeout_s,
            sign=sign,
            max_retry_after_s=int(wait),
        )

    async def conversation(self) -> Conversation:
        """The conversation with the bot, opened on first use."""
        async with self._connecting:
            if self._conversation is None:
                plan = await self.api.connect_plan(self.user_id, self.target)
                self._conversation = await open_conversation(
                    self.api, self.user_id, self.target, plan, wait_s=self.connect_wait_s
                )
            return self._conversation

    async def call(
        self,
        protocol: str,
        request: Mapping[str, Any],
        *,
        final: Callable[[Mapping[str, Any]], bool],
        wait_s: float | None,
        on_reply: Callable[[Reply], Awaitable[None]] | None = None,
        conversation: Conversation | None = None,
        raise_on_timeout: bool = True,
    ) -> ChatCallResult:
        """One ``/_call`` in the conversation: ``conversation``, else the bot's, opened on
        first use (errors as :meth:`~simplex_protocols.transports.ChatCaller.call`; a call
        whose final message does not come in time raises unless ``raise_on_timeout`` is
        false, which returns the partial result)."""
        chat = conversation if conversation is not None else await self.conversation()
        caller = ChatCaller(self.api, clock=self.clock)
        return await caller.call(
            chat.chat,
            protocol,
            request,
            member_id=chat.member_id,
            final=final,
            wait_s=wait_s,
            on_reply=on_reply,
            raise_on_timeout=raise_on_timeout,
        )

    async def notify(self, protocol: str, message: Mapping[str, Any]) -> None:
        """Send a message that gets no answer (a JSON-RPC notification) in the conversation."""
        conversation = await self.conversation()
        mention: str | None = None
        if conversation.member_id is not None and isinstance(conversation.chat, GroupRef):
            for member in await self.api.list_members(conversation.chat.group_id):
                if member.get("groupMemberId") == conversation.member_id:
                    name = _obj(member.get("memberProfile")).get("displayName")
                    mention = name if isinstance(name, str) else None
        text = format_call_command(protocol, message, member=mention)
        await self.api.send_messages(conversation.chat, [cmds.composed_text(text)])
