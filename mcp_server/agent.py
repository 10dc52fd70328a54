"""The agent's server: the five tools, actions and their performing, owner commands, events.

:class:`Agent` carries out the plan's "Processing" sections over a chat core: ``connect``,
``send``, ``receive``, ``list`` and ``leave``; ``action()`` (attach, create, card, wait);
``perform`` of each action; the owner commands of the agent control chat; and the events that
complete connects, collect responses and change the control chat's members.

Errors the model can correct are raised as :class:`ToolError` (an ``isError`` result with the
message); errors after approval are results with ``status: "failed"``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import anyio
import anyio.abc
import anyio.lowlevel

from simplex_protocols._clock import Clock
from simplex_protocols._wire import aeson_string_size, dumps
from simplex_protocols.errors import CoreError, SimplexError

from .actions import (
    MAX_PENDING_ACTIONS,
    Action,
    ActionBook,
    ActionEvent,
    ActionState,
    ActionTool,
    action_key,
)
from .cards import (
    MAX_CARD_BYTES,
    Card,
    Outcome,
    ReplyTo,
    Subject,
    connect_card,
    largest_send_form,
    leave_card,
    send_card,
)
from .cli import ApproveMode, OwnerEntry
from .control import (
    COMMANDS_HELP,
    GREETING,
    ControlChat,
    CustomDataQueue,
    ListEntry,
    OwnerCommand,
    iso_time,
    list_reply,
    owner_entries,
    parse_owner_command,
    pending_lines,
    utc_minutes,
)
from .log import Log, chat_error_text
from .messages import (
    ROLE_ORDER,
    chat_commands,
    chat_connected,
    chat_display_name,
    chat_incognito,
    chat_kind,
    chat_ref_of,
    chat_simplex_name,
    chat_type,
    commands_of,
    group_role,
    is_live,
    is_message,
    is_received_message,
    is_unread,
    item_id,
    message_of,
    peer_type_of,
)
from .text import code_span, fold, is_simplex_name, mention_name, name_md, parse_chat_ref
from .waits import ChatCollector, wait_event

__all__ = [
    "LOST_MESSAGE",
    "NO_APPROVING_OWNER_MESSAGE",
    "NO_OWNER_MESSAGE",
    "Agent",
    "AgentConfig",
    "CallContext",
    "ToolError",
]

NO_OWNER_MESSAGE: Final = "The agent has no owner. The person who runs it has to join its control chat with the link the server printed."
NO_APPROVING_OWNER_MESSAGE: Final = "The agent has no approving owner. The person who runs it has to restart it with the --owners options it printed."
LOST_MESSAGE: Final = (
    "The agent lost its control chat. The person who runs it has to restart it with --reset-owners."
)
PENDING_LIMIT_MESSAGE: Final = (
    f"{MAX_PENDING_ACTIONS} actions are pending; wait for the owner's decisions."
)
CARD_TOO_LONG_MESSAGE: Final = "text: too long for its approval card; shorten it."
STOPPING_MESSAGE: Final = "The server is stopping."

#: Progress notifications: at once, then every this many seconds.
PROGRESS_INTERVAL_S: Final = 60.0
#: The wait for a connection ends at most this long after the action's creation, so the
#: card's outcome edit falls within the 24 hours a sent message stays editable.
CONNECT_WAIT_CAP_S: Final = 23 * 3600 + 50 * 60
#: Messages read at the connection of a connect.
CONNECT_MESSAGES: Final = 50
#: Received items a send keeps; later ones count in ``more``.
MAX_KEPT_RESPONSES: Final = 100

_CURRENT_OR_PENDING: Final = frozenset(
    {
        "introduced",
        "intro-inv",
        "accepted",
        "announced",
        "connected",
        "complete",
        "creator",
        "pending_approval",
        "pending_review",
    }
)


def unknown_chat(chat: str) -> str:
    return f"No chat {chat}. list shows the agent's chats."


class ToolError(SimplexError):
    """An error the model can correct: the call returns ``isError: true`` with :attr:`message`."""

    code = "tool_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CallContext(Protocol):
    """What a tool handler gets from the MCP layer: progress notifications.

    Cancellation arrives as an anyio cancellation of the handler (the client closed the
    request's stream).
    """

    async def progress(self, message: str) -> None:
        """Send a progress notification (a no-op when the request has no progress token)."""
        ...


class NoProgress:
    """A :class:`CallContext` without progress notifications."""

    async def progress(self, message: str) -> None:
        return None


class _InFlight:
    """Counts writes in progress (cards posted or edited) and wakes waiters when none is left."""

    def __init__(self) -> None:
        self.count = 0
        self._idle = anyio.Event()
        self._idle.set()

    def __enter__(self) -> None:
        if self.count == 0:
            self._idle = anyio.Event()
        self.count += 1

    def __exit__(self, *exc: object) -> None:
        self.count -= 1
        if self.count == 0:
            self._idle.set()

    async def wait_idle(self) -> None:
        while self.count:
            await self._idle.wait()


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """The options the agent's processing depends on."""

    name: str
    display: str
    mode: ApproveMode = ApproveMode.REQUESTS
    owners: tuple[OwnerEntry, ...] | None = None
    expire_hours: int = 23
    register_hint: str = ""
    qr_code: str = "small"


@dataclass
class _PlanSummary:
    """What ``/_connect plan`` says about a target (plan "connect": the plan summary)."""

    plan_type: str
    sub_type: str
    kind: str
    chat_type: str
    name: str | None
    simplex_name: str | None
    description: str | None
    welcome: str | None
    commands: list[Any] | None
    peer_type: str | None
    conn_link: str | None
    direct: bool
    business: bool
    link_data: Mapping[str, Any] | None
    known_chat: str | None = None
    known_info: Mapping[str, Any] | None = None
    contact_id: int | None = None


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _msg_text(content: Any) -> str | None:
    text = _obj(content).get("text")
    return text if isinstance(text, str) and text else None


def _conn_link_text(value: Any) -> str | None:
    link = _obj(value)
    full = _str(link.get("connFullLink"))
    short = _str(link.get("connShortLink"))
    if full and short:
        return f"{full} {short}"
    return full or short


class Agent:
    """The agent's processing over one chat core.

    Args:
        command: sends a command to the chat core and returns its response.
        config: the options.
        clock: time for waits (monotonic) and expiry (wall).
        log: where log lines go.
        user_id: the agent's user (profile) ID.
        profile_name: the agent's display name.
        control: the agent control chat, or ``None`` when lost.
        next_action: the action counter read from the control chat's custom data.
        control_data: the control chat's custom data (other keys are kept on writes).
    """

    def __init__(
        self,
        command: Callable[[str], Awaitable[dict[str, Any]]],
        config: AgentConfig,
        *,
        clock: Clock,
        log: Log,
        user_id: int,
        profile_name: str,
        control: ControlChat | None,
        next_action: int,
        control_data: Mapping[str, Any] | None = None,
        print_link: Callable[[str], None] | None = None,
    ) -> None:
        self._command = command
        self.config = config
        self.clock = clock
        self.log = log
        self.user_id = user_id
        self.profile_name = profile_name
        self.control = control
        self.lost = control is None
        self.stopping = False
        self.next_action = max(1, next_action)
        self._control_data = dict(control_data or {})
        self.book = ActionBook()
        self.custom = CustomDataQueue(self._command)
        self._collectors: dict[str, set[ChatCollector]] = {}
        self._owner_commands_send, self._owner_commands_receive = anyio.create_memory_object_stream[
            tuple[Mapping[str, Any], str]
        ](1000)
        self._tg: anyio.abc.TaskGroup | None = None
        self._print_link = print_link
        self._had_approvers = bool(self.approvers())
        self._performs: set[int] = set()
        #: Cards being posted or edited (the stop waits for them).
        self._card_writes = _InFlight()
        #: Members outside ``--owners LIST`` already announced as owners that can't approve.
        self._announced_outside: set[int] = set()

    # ------------------------------------------------------------------ lifecycle

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Run the background work: the custom data queue, owner commands, and the expiry loop."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self.custom.run)
            tg.start_soon(self._owner_command_loop)
            tg.start_soon(self._expiry_loop)
            task_status.started()

    def _spawn(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        assert self._tg is not None, "Agent.run() is not running"
        self._tg.start_soon(fn, *args)

    async def _expiry_loop(self) -> None:
        while True:
            await self.clock.sleep(60)
            await self.expire()

    async def expire(self) -> None:
        """Expire pending actions whose time passed; delete decided ones after theirs (wall clock)."""
        if self.stopping:  # the stop cancels what is pending
            return
        now = self.clock.wall()
        for action in self.book.expire_due(now):
            self.log.line(f"Action {action.n} expired.")
            await self.edit_card(action, Outcome.EXPIRED)
        for action in self.book.purge_due(now):
            self._stop_collecting(action)

    # ------------------------------------------------------------------ approvers

    def approvers(self) -> list[dict[str, Any]]:
        """The members whose /approve and /reject count (plan "Participants")."""
        if self.control is None or self.lost:
            return []
        owners = self.control.human_owners()
        if self.config.owners is None:
            return owners
        listed = {entry.member_id for entry in self.config.owners}
        return [m for m in owners if m.get("groupMemberId") in listed]

    def _approver_ids(self) -> set[int]:
        return {
            m["groupMemberId"] for m in self.approvers() if isinstance(m.get("groupMemberId"), int)
        }

    def _approval_of(self, chat_info: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The chat's standing approval, when it applies (mode requests, approver still one)."""
        if self.config.mode is not ApproveMode.REQUESTS:
            return None
        entity = _obj(
            chat_info.get("contact")
            if chat_info.get("type") == "direct"
            else chat_info.get("groupInfo")
        )
        approval = _obj(_obj(entity.get("customData")).get("simplexMcp"))
        approver = approval.get("approvedById")
        if isinstance(approver, int) and approver in self._approver_ids():
            return approval
        return None

    # ------------------------------------------------------------------ core helpers

    async def _chat_info(self, chat: str) -> Mapping[str, Any] | None:
        """``/_get chat <chat> count=0``: the chat's ChatInfo, or ``None`` for a store error."""
        try:
            response = await self._command(f"/_get chat {chat} count=0")
        except CoreError as exc:
            if exc.chat_error.get("type") == "errorStore" or exc.error_type in (
                "contactNotFound",
                "groupNotFound",
            ):
                return None
            raise
        return _obj(_obj(response.get("chat")).get("chatInfo"))

    def _is_control(self, chat: str) -> bool:
        ref = parse_chat_ref(chat)
        return (
            self.control is not None
            and ref is not None
            and ref.kind == "#"
            and ref.id == self.control.group_id
        )

    def _checked_ref(self, chat: str) -> str:
        """The chat reference, refusing the control chat and references over 15 digits."""
        ref = parse_chat_ref(chat)
        if ref is None or self._is_control(chat):
            raise ToolError(unknown_chat(chat))
        return str(ref)

    async def _own_name(self, chat: str, chat_info: Mapping[str, Any]) -> str:
        """The agent's name in a chat: the incognito profile's or its profile's."""
        if chat_incognito(chat_info):
            known = await self._known_as(chat, chat_info)
            if known:
                return known
        return self.profile_name

    async def _known_as(self, chat: str, chat_info: Mapping[str, Any]) -> str | None:
        if chat_info.get("type") == "group":
            return _str(
                _obj(
                    _obj(_obj(chat_info.get("groupInfo")).get("membership")).get("memberProfile")
                ).get("displayName")
            )
        if not chat_incognito(chat_info):
            return None
        try:
            info = await self._command(f"/_info {chat}")
        except CoreError:
            return None
        return _str(_obj(info.get("customUserProfile")).get("displayName"))

    # ------------------------------------------------------------------ collectors

    def _collect(self, collector: ChatCollector) -> None:
        self._collectors.setdefault(collector.chat, set()).add(collector)

    def _uncollect(self, collector: ChatCollector) -> None:
        group = self._collectors.get(collector.chat)
        if group is not None:
            group.discard(collector)
            if not group:
                del self._collectors[collector.chat]

    def _stop_collecting(self, action: Action) -> None:
        collector = action.extra.pop("collector", None)
        if isinstance(collector, ChatCollector):
            self._uncollect(collector)

    # ------------------------------------------------------------------ events

    def handle_event(self, event: Mapping[str, Any]) -> None:
        """Handle one core event, in order; long work is started, not awaited."""
        kind = event.get("type")
        if kind == "newChatItems":
            for aci in event.get("chatItems") or []:
                self._on_new_item(_obj(aci))
        elif kind == "chatItemUpdated":
            aci = _obj(event.get("chatItem"))
            ref = chat_ref_of(_obj(aci.get("chatInfo")))
            if ref is not None:
                for collector in list(self._collectors.get(ref, ())):
                    collector.update(_obj(aci.get("chatInfo")), _obj(aci.get("chatItem")))
        elif kind == "chatItemsDeleted":
            for deletion in event.get("chatItemDeletions") or []:
                aci = _obj(_obj(deletion).get("deletedChatItem"))
                ref = chat_ref_of(_obj(aci.get("chatInfo")))
                item = item_id(_obj(aci.get("chatItem")))
                if ref is not None and item is not None:
                    for collector in list(self._collectors.get(ref, ())):
                        collector.delete(item)
        elif kind == "contactConnected":
            self._on_contact_connected(_obj(event.get("contact")))
        elif kind == "userJoinedGroup":
            self._on_user_joined_group(_obj(event.get("groupInfo")), _obj(event.get("hostMember")))
        if kind in _MEMBERSHIP_EVENTS:
            self._on_membership(kind, event)

    def _on_new_item(self, aci: Mapping[str, Any]) -> None:
        chat_info = _obj(aci.get("chatInfo"))
        chat_item = _obj(aci.get("chatItem"))
        ref = chat_ref_of(chat_info)
        if ref is None:
            return
        if self.control is not None and ref == self.control.ref:
            direction = _obj(chat_item.get("chatDir"))
            if direction.get("type") != "groupRcv" or chat_info.get("groupChatScope") is not None:
                return
            text = _str(_obj(_obj(chat_item.get("content")).get("msgContent")).get("text"))
            # Once the server stops, no /approve starts a perform.
            if text is not None and text.startswith("/") and not self.lost and not self.stopping:
                try:
                    self._owner_commands_send.send_nowait(
                        (_obj(direction.get("groupMember")), text)
                    )
                except anyio.WouldBlock:
                    self.log.error("Too many owner commands at once; one was dropped.")
            return
        for collector in list(self._collectors.get(ref, ())):
            collector.add(chat_info, chat_item)

    def _connect_actions(self) -> list[Action]:
        return [
            a
            for a in self.book
            if a.tool is ActionTool.CONNECT
            and a.state in (ActionState.PERFORMING, ActionState.DONE)
            and not a.connected
            and a.conn is not None
        ]

    def _on_contact_connected(self, contact: Mapping[str, Any]) -> None:
        self._chat_connected("contact", "@", contact.get("contactId"), contact)

    def _on_user_joined_group(self, group_info: Mapping[str, Any], host: Mapping[str, Any]) -> None:
        self._chat_connected("group", "#", group_info.get("groupId"), host)

    def _chat_connected(self, key: str, sigil: str, chat_id: Any, peer: Mapping[str, Any]) -> None:
        """The connect actions that wait for this chat (``conn[key]`` is its ID) or for the
        peer's connection (``pcc``) are connected."""
        conn_id = _obj(peer.get("activeConn")).get("connId")
        for action in self._connect_actions():
            conn = action.conn or {}
            if conn.get(key) == chat_id or ("pcc" in conn and conn.get("pcc") == conn_id):
                action.chat = f"{sigil}{chat_id}"
                self._mark_connected(action)

    def _connect_collector(self, action: Action) -> ChatCollector | None:
        """The collection of a connect's chat, from the moment the chat is known."""
        collector = action.extra.get("collector")
        if isinstance(collector, ChatCollector):
            return collector
        if action.chat is None:
            return None
        collector = ChatCollector(action.chat, self.clock, keep=MAX_KEPT_RESPONSES)
        action.extra["collector"] = collector
        self._collect(collector)
        return collector

    def _mark_connected(self, action: Action) -> None:
        if action.connected:
            return
        self._connect_collector(action)
        action.connected = True
        action.extra["connected_at"] = self.clock.now()
        action.notify()

    # ------------------------------------------------------------------ control chat membership

    def _on_membership(self, kind: Any, event: Mapping[str, Any]) -> None:
        control = self.control
        if control is None or self.lost:
            return
        group_id = _obj(event.get("groupInfo")).get("groupId")
        if group_id != control.group_id:
            return
        if kind in ("deletedMemberUser", "groupDeleted"):
            self._lose_control_chat()
            return
        member = _obj(
            event.get("deletedMember") if kind == "deletedMember" else event.get("member")
        )
        member_id = member.get("groupMemberId")
        if kind == "memberRole" and member_id == control.membership_id:
            if event.get("toRole") != "owner":
                self._lose_control_chat()
            return
        before = self._had_approvers
        was_owner = isinstance(member_id, int) and any(
            m.get("groupMemberId") == member_id for m in control.human_owners()
        )
        if member:
            record = dict(member)
            if kind == "memberRole" and isinstance(event.get("toRole"), str):
                record["memberRole"] = event["toRole"]
            if kind in ("leftMember", "deletedMember"):
                record["memberStatus"] = "left" if kind == "leftMember" else "removed"
            control.update_member(record)
        if kind == "joinedGroupMember" and isinstance(member_id, int):
            if self.config.owners is None:
                self._spawn(self._owner_joined, member_id)
                return
            if not self.config.owners:
                control.members.setdefault(member_id, dict(member))["memberStatus"] = "connected"
                self._spawn(self._observer_joined, member_id)
                return
        if self.config.owners and isinstance(member_id, int):
            self._listed_owner_change(member_id, was_owner=was_owner)
        after = bool(self.approvers())
        self._had_approvers = after
        if before and not after and self.config.owners is None:
            self.log.line("No owners in the agent control chat.")
            self._spawn(self._open_link)

    def _listed_owner_change(self, member_id: int, *, was_owner: bool) -> None:
        """--owners LIST: an owner outside the list appeared, or an owner in the list is gone."""
        control = self.control
        assert control is not None and self.config.owners
        record = control.members.get(member_id, {})
        name = ControlChat.member_name(record)
        head = f"(member {member_id})"
        if member_id not in {entry.member_id for entry in self.config.owners}:
            # members added in the app: joinedGroupMemberConnecting, connectedToGroupMember,
            # memberRole; announced once, until the member stops being an owner
            if record.get("memberRole") == "owner" and record.get("memberStatus") not in (
                "left",
                "removed",
                "deleted",
            ):
                if member_id in self._announced_outside:
                    return
                self._announced_outside.add(member_id)
                owners = [m for m in control.human_owners() if m.get("groupMemberId") != member_id]
                terminal, chat = owner_entries(_by_member_id([*owners, record]))
                tail = "is now an owner and can't approve actions yet. Restart the server with"
                self._say(
                    f"{fold(name)} {head} {tail} {terminal}",
                    f"{name_md(name)} {head} {tail} {chat}",
                )
            else:
                self._announced_outside.discard(member_id)
            return
        if not was_owner or any(
            m.get("groupMemberId") == member_id for m in control.human_owners()
        ):
            return
        remaining = _by_member_id(control.human_owners())
        head += " is no longer an owner."
        if remaining:
            terminal, chat = owner_entries(remaining)
            self._say(
                f"{fold(name)} {head} Restart the server with {terminal}",
                f"{name_md(name)} {head} Restart the server with {chat}",
            )
        else:
            tail = "No owners remain: restart the server with"
            self._say(
                f"{fold(name)} {head} {tail} --reset-owners --owners",
                f"{name_md(name)} {head} {tail} {code_span('--reset-owners --owners')}",
            )

    def _say(self, line: str, text: str) -> None:
        """Log a line now, and post its chat form in the agent control chat."""
        self.log.line(line)
        self._spawn(self._post_notice, text)

    async def _post_notice(self, text: str, *, when_lost: bool = False) -> None:
        """Post in the agent control chat (``when_lost``: even once it is lost); a refusal is
        logged."""
        if self.control is None or (self.lost and not when_lost):
            return
        try:
            await self.control.post(text)
        except CoreError as exc:
            self.log.error(
                f"Could not post in the agent control chat: {chat_error_text(exc.chat_error)}"
            )

    async def _owner_joined(self, member_id: int) -> None:
        """A human joined by the link (no --owners): the link is deleted, the member is an owner."""
        control = self.control
        if control is None:
            return
        try:
            await control.delete_link()
            await control.set_role(member_id, "owner")
            member = control.members.get(member_id, {})
            if member.get("memberStatus") not in ("connected", "complete"):
                member["memberStatus"] = "connected"
            await control.post(GREETING)
        except CoreError as exc:
            self.log.error(
                f"Could not make member {member_id} an owner: {chat_error_text(exc.chat_error)}"
            )
            return
        self._had_approvers = bool(self.approvers())
        name = fold(control.member_name(control.members.get(member_id, {})))
        self.log.line(
            f"{name} joined (member {member_id}) and is now an owner. The link is deleted."
        )
        if self.config.register_hint:
            self.log.line(self.config.register_hint)

    async def announce_restart(
        self, member: Mapping[str, Any], humans: Sequence[Mapping[str, Any]]
    ) -> None:
        """--owners without a list: log and post which --owners to restart with."""
        if self.control is None:
            return
        terminal, chat = owner_entries(humans)
        name = fold(ControlChat.member_name(member))
        head = f"joined (member {member.get('groupMemberId')}). Restart the server with"
        self.log.line(f"{name} {head} {terminal}")
        text = f"{name_md(ControlChat.member_name(member))} {head} {chat}"
        await self._post_notice(text, when_lost=True)

    async def _observer_joined(self, member_id: int) -> None:
        """A human joined by the observer link (--owners without a list)."""
        control = self.control
        if control is None:
            return
        try:
            await control.delete_link()
        except CoreError as exc:
            self.log.error(f"Could not delete the link: {chat_error_text(exc.chat_error)}")
        member = control.members.get(member_id)
        if member is not None:
            await self.announce_restart(member, control.humans() or [member])

    async def _open_link(self) -> None:
        control = self.control
        if control is None:
            return
        try:
            link = await control.create_link("member")
        except CoreError as exc:
            self.log.error(
                f"Could not create the link of the agent control chat: {chat_error_text(exc.chat_error)}"
            )
            return
        if self._print_link is not None:
            self._print_link(link)

    def _lose_control_chat(self) -> None:
        """The agent's profile was removed, the group deleted, or the agent's role lowered."""
        if self.lost:
            return
        self.lost = True
        for action in self.book:
            if action.state is ActionState.PENDING:
                action.error = "control chat lost"
                action.apply(ActionEvent.CONTROL_CHAT_LOST)
        self.log.line("The agent lost its control chat. Restart the server with --reset-owners.")

    # ------------------------------------------------------------------ owner commands

    async def _owner_command_loop(self) -> None:
        async with self._owner_commands_receive:
            async for member, text in self._owner_commands_receive:
                try:
                    await self.owner_command(member, text)
                except (CoreError, ToolError) as exc:
                    detail = (
                        chat_error_text(exc.chat_error)
                        if isinstance(exc, CoreError)
                        else exc.message
                    )
                    self.log.error(f"Owner command failed: {detail}")

    async def _reply(self, text: str) -> None:
        if self.control is not None and not self.lost:
            await self.control.post(text)

    async def owner_command(self, sender: Mapping[str, Any], text: str) -> None:
        """Run one owner command from ``sender`` (a member of the agent control chat)."""
        command = parse_owner_command(text)
        if command is None or self.stopping:  # once the server stops, no /approve performs
            return
        await self.expire()
        if command.verb == "unknown":
            await self._reply(COMMANDS_HELP)
            return
        sender_id = sender.get("groupMemberId")
        if not isinstance(sender_id, int) or sender_id not in self._approver_ids():
            if self.config.owners:
                await self._reply("Only the owners listed in --owners approve actions.")
            else:
                await self._reply("Only owners approve actions.")
            return
        sender_name = ControlChat.member_name(sender)
        if command.verb in ("approve", "reject") and not command.all:
            await self._decide(command, sender_name)
        elif command.verb == "approve":
            await self._approve_all(command, sender_name, sender_id)
        elif command.verb == "revoke":
            await self._revoke(command)
        elif command.verb == "pending":
            await self._reply(
                pending_lines(
                    [(a.n, str(a.extra.get("pending", "")), a.expires) for a in self.book.pending()]
                )
            )
        elif command.verb == "list":
            await self._reply(list_reply(await self._list_entries()))

    async def _decide(self, command: OwnerCommand, sender_name: str) -> None:
        n_text = command.n or ""
        action = self.book.get(int(n_text)) if len(n_text) <= 18 else None
        if action is None or action.state is not ActionState.PENDING or action.card is None:
            await self._reply(f"Action {n_text} is not pending.")
            return
        if command.chat is not None and (
            action.tool is ActionTool.CONNECT or action.input.get("chat") != command.chat
        ):
            await self._reply(f"Action {n_text} is not for {command.chat}.")
            return
        action.decided_by = sender_name
        if command.verb == "approve":
            self._start_perform(action)
        else:
            action.apply(ActionEvent.REJECTED)
            self.log.line(f"Action {action.n} rejected by {fold(sender_name)}.")
            await self.edit_card(action, Outcome.REJECTED)

    async def _approve_all(self, command: OwnerCommand, sender_name: str, sender_id: int) -> None:
        chat = command.chat or ""
        ref = parse_chat_ref(chat)
        chat_info = None if ref is None or self._is_control(chat) else await self._chat_info(chat)
        if ref is None or chat_info is None or chat_ref_of(chat_info) != chat:
            await self._reply(f"No chat {chat}. /list shows the agent's chats.")
            return
        entity = _obj(
            chat_info.get("contact")
            if chat_info.get("type") == "direct"
            else chat_info.get("groupInfo")
        )
        data = dict(_obj(entity.get("customData")))
        data["simplexMcp"] = {
            "approvedBy": sender_name,
            "approvedById": sender_id,
            "approvedAt": iso_time(self.clock.wall()),
        }
        await self.custom.write(chat, data)
        subject = self._subject(chat, chat_info)
        await self._reply(
            f"Approved for {subject.phrase(with_simplex_name=False)} ({chat}) by {name_md(sender_name)}. /'revoke {chat}'"
        )
        for action in self.book.pending():
            if (
                action.tool is ActionTool.SEND
                and action.input.get("chat") == chat
                and action.card is not None
            ):
                action.decided_by = sender_name
                self._start_perform(action)

    async def _revoke(self, command: OwnerCommand) -> None:
        chat = command.chat or ""
        ref = parse_chat_ref(chat)
        chat_info = None if ref is None or self._is_control(chat) else await self._chat_info(chat)
        entity = _obj(
            chat_info.get("contact")
            if chat_info is not None and chat_info.get("type") == "direct"
            else (chat_info or {}).get("groupInfo")
        )
        data = dict(_obj(entity.get("customData")))
        if chat_info is None or "simplexMcp" not in data:
            await self._reply(f"Messages to {chat} have no standing approval.")
            return
        del data["simplexMcp"]
        await self.custom.write(chat, data or None)
        subject = self._subject(chat, chat_info)
        await self._reply(
            f"Messages to {subject.phrase(with_simplex_name=False)} ({chat}) need approval again."
        )

    # ------------------------------------------------------------------ cards

    def _subject(self, chat: str, chat_info: Mapping[str, Any]) -> Subject:
        return Subject(
            kind=chat_kind(chat_info),
            name=chat_display_name(chat_info),
            simplex_name=chat_simplex_name(chat_info),
            chat=chat,
            incognito=chat_incognito(chat_info),
        )

    async def edit_card(self, action: Action, outcome: Outcome) -> None:
        card = action.extra.get("card")
        if action.card is None or not isinstance(card, Card) or self.control is None or self.lost:
            return
        try:
            with self._card_writes:
                await self.control.edit(
                    action.card, card.outcome(outcome, by=action.decided_by, error=action.error)
                )
        except CoreError as exc:
            self.log.error(
                f"Could not edit the card of action {action.n}: {chat_error_text(exc.chat_error)}"
            )

    async def _post_outcome(self, action: Action, outcome: Outcome) -> None:
        card = action.extra.get("card")
        if not isinstance(card, Card) or self.control is None or self.lost:
            return
        try:
            with self._card_writes:
                action.card = await self.control.post(
                    card.outcome(outcome, by=action.decided_by, error=action.error)
                )
        except CoreError as exc:
            self.log.error(
                f"Could not post the card of action {action.n}: {chat_error_text(exc.chat_error)}"
            )

    # ------------------------------------------------------------------ action()

    def _longest_approver_name(self) -> str:
        names = [ControlChat.member_name(m) for m in self.approvers()]
        return max(names, key=lambda n: aeson_string_size(name_md(n)), default="")

    async def action(
        self,
        tool: ActionTool,
        arguments: Mapping[str, Any],
        ctx: CallContext,
        *,
        prepare: Callable[[int], tuple[Card, str, str]] | None,
        standing: Mapping[str, Any] | None = None,
        wait_s: float | None = None,
    ) -> Action | dict[str, Any] | None:
        """Attach to an action or create one, post its card, and wait for its decision.

        Args:
            tool: the tool.
            arguments: the call's input.
            ctx: progress notifications.
            prepare: builds the card, the log description and the /pending description for
                action number N; ``None`` when the caller only attaches.
            standing: a send's standing approval (``approvedBy``, ``approvedById``), when it applies.
            wait_s: for connect, the wait of the connection (for the progress text).

        Returns:
            The action when it is done (the tool continues); the result dict when it was
            rejected, expired or failed; ``None`` when the call was cancelled before creating
            an action.

        Raises:
            ToolError: a new action is refused (stopping, lost, 20 pending, card too long, no
                approver).
        """
        # The call's signal aborted: no action and no card. This checkpoint does not let another
        # task run, so the attach check and the creation below happen with no await between.
        await anyio.lowlevel.checkpoint_if_cancelled()
        action = self.book.find(tool, action_key(tool, arguments))
        if action is None:
            if prepare is None:
                return None
            action = self._create(tool, arguments, prepare, standing)
            await self._announce(action)
        action.open += 1
        try:
            await self._wait_decided(action, ctx)
            if action.state is ActionState.DONE:
                return action
            result: dict[str, Any] = {"action": action.n, "status": action.state.value}
            if action.state is ActionState.FAILED:
                result["error"] = action.error or "failed"
            self._forget(action)
            return result
        finally:
            action.open -= 1

    def _create(
        self,
        tool: ActionTool,
        arguments: Mapping[str, Any],
        prepare: Callable[[int], tuple[Card, str, str]],
        standing: Mapping[str, Any] | None,
    ) -> Action:
        """The checks of a new action and its creation, with no await (plan "action()")."""
        if self.stopping:
            raise ToolError(STOPPING_MESSAGE)
        if self.lost:
            raise ToolError(LOST_MESSAGE)
        if self.book.pending_count() >= MAX_PENDING_ACTIONS:
            raise ToolError(PENDING_LIMIT_MESSAGE)
        n = self.next_action
        card, log_text, pending_text = prepare(n)
        host = self.config.mode is ApproveMode.HOST
        if tool is ActionTool.SEND:
            approver = (
                str(standing.get("approvedBy", ""))
                if standing is not None
                else self._longest_approver_name()
            )
            if (
                largest_send_form(card, approver=approver, standing=standing is not None)
                > MAX_CARD_BYTES
            ):
                raise ToolError(CARD_TOO_LONG_MESSAGE)
        if not host and not self.approvers():
            raise ToolError(
                NO_APPROVING_OWNER_MESSAGE if self.config.owners is not None else NO_OWNER_MESSAGE
            )
        self.next_action = n + 1
        state = ActionState.PERFORMING if host or standing is not None else ActionState.PENDING
        action = self.book.create(
            n,
            tool,
            arguments,
            now=self.clock.wall(),
            expire_s=self.config.expire_hours * 3600.0,
            state=state,
            standing=standing is not None,
        )
        action.extra.update(card=card, pending=pending_text)
        if standing is not None:
            action.decided_by = str(standing.get("approvedBy", ""))
        self.log.line(f"Action {n}: {log_text}")
        return action

    async def _announce(self, action: Action) -> None:
        """Write the counter, then post the card or start the perform; not cancelled by the call."""
        with anyio.CancelScope(shield=True), self._card_writes:
            data = dict(self._control_data)
            control_key = dict(_obj(data.get("simplexMcp")))
            control_key.update(control=True, nextAction=self.next_action)
            data["simplexMcp"] = control_key
            self._control_data = data
            if self.control is not None:
                try:
                    await self.custom.write(self.control.ref, data)
                except CoreError as exc:
                    self.log.error(
                        f"Could not write the action counter: {chat_error_text(exc.chat_error)}"
                    )
            if action.state is ActionState.PERFORMING:
                if self.stopping:
                    # mode host or a standing approval, and the server stops meanwhile: the
                    # action is cancelled, not performed (the stop posts its card)
                    action.extra["not_started"] = True
                    return
                self._start_perform(action, already=True)
                return
            card = action.extra["card"]
            assert isinstance(card, Card)
            try:
                if self.control is None or self.lost:
                    raise ToolError(LOST_MESSAGE)
                action.card = await self.control.post(card.pending())
            except (CoreError, ToolError) as exc:
                action.error = (
                    chat_error_text(exc.chat_error) if isinstance(exc, CoreError) else exc.message
                )
                if action.state is ActionState.PENDING:
                    action.apply(ActionEvent.CARD_POST_FAILED)

    def _forget(self, action: Action) -> None:
        self.book.remove(action)
        self._stop_collecting(action)

    async def _wait_until(
        self,
        ctx: CallContext,
        end: Callable[[], float],
        changed: Callable[[], anyio.Event],
        message: Callable[[float], str],
    ) -> None:
        """Wait until the clock reaches ``end()`` (re-read at each change), with progress
        notifications at once and then every 60 s. ``end()`` of ``math.inf`` waits for a change."""
        last = -math.inf
        while True:
            now = self.clock.now()
            deadline = end()
            if now >= deadline:
                return
            if now - last >= PROGRESS_INTERVAL_S:
                last = now
                await ctx.progress(message(deadline))
            event = changed()
            if now >= end():
                return
            await wait_event(event, self.clock, min(end(), last + PROGRESS_INTERVAL_S))

    async def _wait_decided(self, action: Action, ctx: CallContext) -> None:
        """Wait until the action is decided, with progress at once and every 60 s."""
        await self._wait_until(
            ctx,
            lambda: -math.inf if action.state.decided else math.inf,
            lambda: action.changed,
            lambda _: self._progress_text(action),
        )

    def _wall_at(self, deadline: float) -> float:
        return self.clock.wall() + (deadline - self.clock.now())

    def _progress_text(self, action: Action) -> str:
        if action.state is ActionState.PENDING:
            return f"Action {action.n} waits for an approver until {utc_minutes(action.expires)}."
        if action.tool is ActionTool.CONNECT:
            deadline = action.extra.get("connect_deadline")
            when = (
                utc_minutes(self._wall_at(deadline))
                if isinstance(deadline, float)
                else utc_minutes(self.clock.wall())
            )
            return f"Action {action.n} waits for the connection until {when}."
        return f"Action {action.n} is being performed."

    # ------------------------------------------------------------------ perform

    def _start_perform(self, action: Action, *, already: bool = False) -> None:
        if not already:
            action.apply(ActionEvent.APPROVED)
        now = self.clock.now()
        action.extra["approved_at"] = now
        if action.tool is ActionTool.CONNECT:
            # known from the approval on, so progress names it while the perform starts
            action.extra["connect_deadline"] = self._connect_deadline(action, now)
        if action.n in self._performs:
            return
        self._performs.add(action.n)
        self._spawn(self._perform, action)

    def _connect_deadline(self, action: Action, start: float) -> float:
        """The end of a connect's wait: ``wait`` seconds from ``start`` (the approval), at most
        23 h 50 min after the action's creation (monotonic clock)."""
        wait_s = float(action.input.get("wait", 60))
        cap = start + (action.created + CONNECT_WAIT_CAP_S - self.clock.wall())
        return min(start + wait_s, cap)

    async def _perform(self, action: Action) -> None:
        try:
            if action.tool is ActionTool.SEND:
                await self._perform_send(action)
            elif action.tool is ActionTool.CONNECT:
                await self._perform_connect(action)
            else:
                await self._perform_leave(action)
        except CoreError as exc:
            action.error = chat_error_text(exc.chat_error)
        except ToolError as exc:
            action.error = exc.message
        except Exception as exc:  # never lose an action: it fails with the reason
            action.error = f"internal error: {type(exc).__name__}"
            self.log.error(f"Action {action.n} failed: {exc!r}")
        finally:
            self._performs.discard(action.n)
        await self._perform_ended(action)

    async def _perform_ended(self, action: Action) -> None:
        failed = action.error is not None
        if action.state is not ActionState.PERFORMING:
            return
        # From here on, the stop leaves the action to this outcome (it is not interrupted).
        action.extra["ended"] = True
        host = self.config.mode is ApproveMode.HOST
        by = fold(action.decided_by or "")
        if failed:
            what = f"failed: {fold(action.error or '')}."
        elif action.tool is ActionTool.SEND:
            what = "sent."
        elif action.tool is ActionTool.CONNECT:
            what = "connected." if action.connected else "connection requested."
        else:
            what = "deleted." if str(action.input.get("chat", "")).startswith("@") else "left."
        if host:
            suffix = f"; failed: {fold(action.error or '')}." if failed else "."
            self.log.line(f"Action {action.n}: performed without approval (mode host){suffix}")
        elif action.standing:
            self.log.line(f"Action {action.n} approved for this chat by {by}: {what}")
        else:
            self.log.line(f"Action {action.n} approved by {by}: {what}")
        if action.interrupted:
            action.apply(ActionEvent.PERFORM_FAILED if failed else ActionEvent.PERFORMED)
            return
        not_connected = action.tool is ActionTool.CONNECT and not action.connected
        if host:
            outcome = (
                Outcome.HOST_FAILED
                if failed
                else (Outcome.HOST_NOT_CONNECTED if not_connected else Outcome.HOST)
            )
            await self._post_outcome(action, outcome)
        elif action.standing:
            await self._post_outcome(
                action, Outcome.STANDING_FAILED if failed else Outcome.STANDING
            )
        else:
            outcome = (
                Outcome.FAILED
                if failed
                else (Outcome.NOT_CONNECTED if not_connected else Outcome.DONE)
            )
            await self.edit_card(action, outcome)
        action.apply(ActionEvent.PERFORM_FAILED if failed else ActionEvent.PERFORMED)

    # ------------------------------------------------------------------ connect

    async def _plan(self, target: str) -> _PlanSummary:
        """``/_connect plan`` and its summary; the plan's tool errors."""
        try:
            response = await self._command(f"/_connect plan {self.user_id} {target}")
        except CoreError as exc:
            inner = _obj(exc.chat_error.get("errorType"))
            if exc.chat_error.get("type") == "error" and inner.get("type") == "invalidConnReq":
                raise ToolError(f"Not a SimpleX link or name: {target}") from None
            raise ToolError(chat_error_text(exc.chat_error)) from None
        plan = _obj(response.get("connectionPlan"))
        plan_type = _str(plan.get("type")) or ""
        if plan_type == "error":
            raise ToolError(chat_error_text(_obj(plan.get("chatError"))))
        sub = _obj(plan.get(f"{plan_type}Plan"))
        sub_type = _str(sub.get("type")) or ""
        simplex_name = target if is_simplex_name(target) else None
        conn_link = _conn_link_text(response.get("connLink"))
        summary = _PlanSummary(
            plan_type=plan_type,
            sub_type=sub_type,
            kind="contact",
            chat_type="contact",
            name=None,
            simplex_name=simplex_name,
            description=None,
            welcome=None,
            commands=None,
            peer_type=None,
            conn_link=conn_link,
            direct=True,
            business=False,
            link_data=None,
        )
        if plan_type in ("invitationLink", "contactAddress"):
            data = _obj(sub.get("contactSLinkData_"))
            contact = _obj(sub.get("contact"))
            profile = _obj(data.get("profile")) or _obj(contact.get("profile"))
            summary.link_data = data or None
            summary.business = data.get("business") is True
            summary.name = _str(profile.get("displayName"))
            summary.description = _str(profile.get("shortDescr"))
            summary.welcome = _msg_text(data.get("message"))
            summary.commands = commands_of(_obj(profile.get("preferences")).get("commands"))
            summary.peer_type = peer_type_of(profile)
            if summary.business:
                summary.kind = summary.chat_type = "business"
            elif summary.peer_type in ("bot", "agent", "business"):
                summary.kind = summary.peer_type
            contact_id = contact.get("contactId")
            if isinstance(contact_id, int):
                summary.contact_id = contact_id
                summary.known_chat = f"@{contact_id}"
        elif plan_type == "groupLink":
            info = _obj(sub.get("groupSLinkInfo_"))
            data = _obj(sub.get("groupSLinkData_"))
            group_info = _obj(sub.get("groupInfo") or sub.get("groupInfo_"))
            group_profile = _obj(data.get("groupProfile")) or _obj(group_info.get("groupProfile"))
            summary.link_data = data or None
            summary.direct = info.get("direct") is not False
            summary.kind = summary.chat_type = "group" if summary.direct else "channel"
            summary.name = _str(group_profile.get("displayName"))
            summary.description = _str(group_profile.get("shortDescr"))
            summary.welcome = _str(group_profile.get("description"))
            summary.commands = commands_of(
                _obj(group_profile.get("groupPreferences")).get("commands")
            )
            group_id = group_info.get("groupId")
            if isinstance(group_id, int):
                summary.known_chat = f"#{group_id}"
        return summary

    def _check_plan(self, target: str, summary: _PlanSummary, message: str | None) -> bool:
        """The plan checks of connect; ``True`` when the target is known (no action)."""
        sub = summary.sub_type
        if sub == "known":
            return True
        if sub in ("connecting", "connectingProhibit", "noRelays", "updateRequired", "ownLink"):
            raise ToolError(f"{target} can't be joined now: {summary.plan_type} {sub}.")
        if message is not None and (
            summary.plan_type != "contactAddress"
            or sub == "contactViaAddress"
            or summary.link_data is None
        ):
            raise ToolError(
                f"message: {target} is not a contact or business address with short link data, or its contact exists without a connection."
            )
        return False

    async def connect(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The connect tool (plan "connect")."""
        target = str(arguments.get("target", ""))
        incognito = bool(arguments.get("incognito", False))
        message = _str(arguments.get("message"))
        wait_s = float(arguments.get("wait", 60))
        idle_s = float(arguments.get("idle", 30))
        while True:
            existing = self.book.find(ActionTool.CONNECT, action_key(ActionTool.CONNECT, arguments))
            plan: _PlanSummary | None = None
            prepare: Callable[[int], tuple[Card, str, str]] | None = None
            if existing is None:
                plan = await self._plan(target)
                if self._check_plan(target, plan, message):
                    return await self._known_result(plan)
                prepare = self._connect_preparer(plan, incognito, message)
            outcome = await self.action(ActionTool.CONNECT, arguments, ctx, prepare=prepare)
            if outcome is not None:
                break
        if isinstance(outcome, dict):
            return outcome
        action = outcome
        if plan is not None and action.plan is None:
            action.plan = plan
        attached_done = existing is not None and existing.state.decided
        action.open += 1
        try:
            return await self._connect_result(
                action, wait_s, idle_s, message is not None, ctx, attached_done=attached_done
            )
        finally:
            action.open -= 1

    @staticmethod
    def _connect_preparer(
        plan: _PlanSummary, incognito: bool, message: str | None
    ) -> Callable[[int], tuple[Card, str, str]]:
        def prepare(n: int) -> tuple[Card, str, str]:
            subject = Subject(plan.kind, plan.name, plan.simplex_name, plan.known_chat, incognito)
            card = connect_card(
                n,
                subject,
                incognito=incognito,
                description=plan.description,
                welcome=plan.welcome,
                message=message,
            )
            how = "incognito" if incognito else "as itself"
            pending_how = "incognito" if incognito else "as myself"
            return (
                card,
                f"connect to {subject.log_phrase()}, {how}",
                f"connect to {subject.phrase(with_simplex_name=False)}, {pending_how}",
            )

        return prepare

    async def _known_result(self, summary: _PlanSummary) -> dict[str, Any]:
        result: dict[str, Any] = {"status": "known"}
        chat = summary.known_chat
        if chat is None:
            return result | self._plan_fields(summary)
        result["chat"] = chat
        chat_info = await self._chat_info(chat)
        if chat_info is None:
            return result | self._plan_fields(summary)
        result["connected"] = chat_connected(chat_info)
        result |= await self._chat_fields(chat, chat_info, summary)
        return result

    @staticmethod
    def _plan_fields(summary: _PlanSummary) -> dict[str, Any]:
        fields: dict[str, Any] = {"type": summary.chat_type}
        if summary.name is not None:
            fields["name"] = summary.name
        if summary.simplex_name is not None:
            fields["simplex_name"] = summary.simplex_name
        if summary.peer_type is not None and summary.chat_type == "contact":
            fields["peer_type"] = summary.peer_type
        if summary.description:
            fields["description"] = summary.description
        if summary.welcome:
            fields["welcome"] = summary.welcome
        if summary.commands:
            fields["commands"] = summary.commands
        return fields

    async def _chat_fields(
        self, chat: str, chat_info: Mapping[str, Any], summary: _PlanSummary | None
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "type": chat_type(chat_info),
            "name": chat_display_name(chat_info),
        }
        simplex_name = chat_simplex_name(chat_info) or (
            summary.simplex_name if summary is not None else None
        )
        if simplex_name:
            fields["simplex_name"] = simplex_name
        if chat_info.get("type") == "direct":
            peer = peer_type_of(_obj(_obj(chat_info.get("contact")).get("profile")))
            if peer is not None:
                fields["peer_type"] = peer
        if summary is not None and summary.description:
            fields["description"] = summary.description
        if summary is not None and summary.welcome:
            fields["welcome"] = summary.welcome
        commands = chat_commands(chat_info) or (summary.commands if summary is not None else None)
        if commands:
            fields["commands"] = commands
        if chat_incognito(chat_info):
            known = await self._known_as(chat, chat_info)
            if known:
                fields["known_as"] = known
        if chat_info.get("type") == "group":
            role = group_role(chat_info)
            if role:
                fields["role"] = role
        return fields

    async def _connect_result(
        self,
        action: Action,
        wait_s: float,
        idle_s: float,
        with_message: bool,
        ctx: CallContext,
        *,
        attached_done: bool,
    ) -> dict[str, Any]:
        result: dict[str, Any] = {"action": action.n, "status": "done"}
        summary = action.plan if isinstance(action.plan, _PlanSummary) else None
        chat = action.chat
        if chat is None:
            result["connected"] = False
            if summary is not None:
                result |= self._plan_fields(summary)
            self._forget(action)
            return result
        started = action.extra.get("approved_at")
        start = started if isinstance(started, float) and not attached_done else self.clock.now()
        deadline = start + wait_s
        collector = self._connect_collector(action)
        assert collector is not None
        try:
            chat_info = await self._chat_info(chat) or {}
            own = await self._own_name(chat, chat_info)
            snapshot = await self._snapshot(chat, CONNECT_MESSAGES)
            if action.connected:
                connected_at = action.extra.get("connected_at")
                since = connected_at if isinstance(connected_at, float) else self.clock.now()

                def end() -> float:
                    if collector.any_live():
                        return deadline
                    if with_message:
                        first = collector.first_arrival
                        if first is None:
                            return deadline
                        return min(deadline, (collector.last_arrival or first) + idle_s)
                    return min(deadline, max(since, collector.last_arrival or since) + idle_s)

                await self._wait_until(
                    ctx,
                    end,
                    lambda: collector.changed,
                    lambda until: (
                        f"{len(collector.items)} responses in {chat}; waiting until {utc_minutes(self._wall_at(until))}."
                    ),
                )
            items: dict[int, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
            for chat_item in snapshot:
                item = item_id(chat_item)
                if item is not None and is_message(chat_item) and not is_live(chat_item):
                    items[item] = (chat_info, chat_item)
            for ci, chat_item in collector.final_items():
                item = item_id(chat_item)
                if item is not None:
                    items.setdefault(item, (ci, chat_item))
            messages = []
            unread: list[int] = []
            for item in sorted(items):
                ci, chat_item = items[item]
                message = message_of(chat, ci or chat_info, chat_item, own_name=own)
                if message is not None:
                    messages.append(message)
                    if message["new"]:
                        unread.append(item)
            fresh = await self._chat_info(chat) or chat_info
            result["chat"] = chat
            result["connected"] = chat_connected(fresh)
            result |= await self._chat_fields(chat, fresh, summary)
            result["messages"] = messages
            if unread:
                await self._read(chat, unread)
        finally:
            self._forget(action)
        return result

    async def _snapshot(self, chat: str, count: int) -> list[Mapping[str, Any]]:
        try:
            response = await self._command(f"/_get chat {chat} count={count}")
        except CoreError:
            return []
        items = _obj(response.get("chat")).get("chatItems")
        return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []

    async def _read(self, chat: str, items: Sequence[int]) -> None:
        if items:
            await self._command(f"/_read chat items {chat} {','.join(str(i) for i in items)}")

    async def _perform_connect(self, action: Action) -> None:
        target = str(action.input.get("target", ""))
        incognito = "on" if action.input.get("incognito") else "off"
        message = _str(action.input.get("message"))
        summary = await self._plan(target)
        action.plan = summary
        if self._check_plan(target, summary, message):
            chat = summary.known_chat
            action.chat = chat
            if chat is not None:
                chat_info = await self._chat_info(chat)
                if chat_info is not None and chat_connected(chat_info):
                    self._mark_connected(action)
                    if chat_incognito(chat_info):
                        action.known_as = await self._known_as(chat, chat_info)
            return
        domain = f" domain={target[1:]}" if summary.simplex_name else ""
        link = summary.conn_link or target
        text = f" text {message}" if message is not None else ""
        data = dumps(summary.link_data) if summary.link_data is not None else "{}"
        response: Mapping[str, Any]
        if summary.plan_type == "groupLink" and not summary.direct:
            prepared = await self._command(
                f"/_prepare group {self.user_id} {link} direct=off{domain} {data}"
            )
            group_id = _obj(_obj(_obj(prepared.get("chat")).get("chatInfo")).get("groupInfo")).get(
                "groupId"
            )
            action.conn = {"group": int(group_id)} if isinstance(group_id, int) else None
            response = await self._command(f"/_connect group #{group_id} incognito={incognito}")
        elif (
            summary.plan_type == "contactAddress"
            and summary.sub_type == "ok"
            and (summary.simplex_name or message is not None)
        ):
            prepared = await self._command(
                f"/_prepare contact {self.user_id} {link}{domain} {data}"
            )
            chat_info = _obj(_obj(prepared.get("chat")).get("chatInfo"))
            if chat_info.get("type") == "group":
                group_id = _obj(chat_info.get("groupInfo")).get("groupId")
                action.conn = {"group": int(group_id)} if isinstance(group_id, int) else None
                response = await self._command(
                    f"/_connect group #{group_id} incognito={incognito}{text}"
                )
            else:
                contact_id = _obj(chat_info.get("contact")).get("contactId")
                action.conn = {"contact": int(contact_id)} if isinstance(contact_id, int) else None
                response = await self._command(
                    f"/_connect contact @{contact_id} incognito={incognito}{text}"
                )
        elif (
            summary.plan_type == "contactAddress"
            and summary.sub_type == "contactViaAddress"
            and summary.contact_id is not None
        ):
            response = await self._command(
                f"/_connect contact {self.user_id} incognito={incognito} {summary.contact_id}"
            )
        else:
            response = await self._command(f"/_connect {self.user_id} incognito={incognito} {link}")
        kind = response.get("type")
        if action.conn is None:
            if kind in ("sentInvitation", "sentConfirmation"):
                pcc = _obj(response.get("connection")).get("pccConnId")
                action.conn = {"pcc": int(pcc)} if isinstance(pcc, int) else None
            elif kind in (
                "startedConnectionToContact",
                "sentInvitationToContact",
                "contactAlreadyExists",
            ):
                contact_id = _obj(response.get("contact")).get("contactId")
                action.conn = {"contact": int(contact_id)} if isinstance(contact_id, int) else None
            elif kind == "startedConnectionToGroup":
                group_id = _obj(response.get("groupInfo")).get("groupId")
                action.conn = {"group": int(group_id)} if isinstance(group_id, int) else None
        custom = _obj(response.get("customUserProfile"))
        if custom:
            action.known_as = _str(custom.get("displayName"))
        conn = action.conn or {}
        if "contact" in conn:
            action.chat = f"@{conn['contact']}"
        elif "group" in conn:
            action.chat = f"#{conn['group']}"
        self._connect_collector(action)
        if action.chat is not None and not action.connected:
            chat_info = await self._chat_info(action.chat)
            if kind == "contactAlreadyExists" or (
                chat_info is not None and chat_connected(chat_info)
            ):
                self._mark_connected(action)
                if kind == "contactAlreadyExists" and chat_info is not None:
                    action.known_as = await self._known_as(action.chat, chat_info)
                return
        known = action.extra.get("connect_deadline")
        deadline = (
            known if isinstance(known, float) else self._connect_deadline(action, self.clock.now())
        )
        action.extra["connect_deadline"] = deadline
        action.notify()
        while not action.connected and self.clock.now() < deadline:
            await wait_event(action.changed, self.clock, deadline)

    # ------------------------------------------------------------------ send

    async def send(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The send tool (plan "send")."""
        wait_s = float(arguments.get("wait", 60))
        idle_s = float(arguments.get("idle", 30))
        limit = int(arguments.get("limit", 50))
        while True:
            existing = self.book.find(ActionTool.SEND, action_key(ActionTool.SEND, arguments))
            prepare, standing = (
                (None, None) if existing is not None else await self._send_checks(arguments)
            )
            outcome = await self.action(
                ActionTool.SEND, arguments, ctx, prepare=prepare, standing=standing
            )
            if outcome is not None:
                break
        if isinstance(outcome, dict):
            return outcome
        return await self._responses(
            outcome,
            wait_s,
            idle_s,
            limit,
            ctx,
            attached_done=existing is not None and existing.state.decided,
        )

    async def _send_checks(
        self, arguments: Mapping[str, Any]
    ) -> tuple[Callable[[int], tuple[Card, str, str]], Mapping[str, Any] | None]:
        """The input checks of send; the card builder and the chat's standing approval."""
        chat_text = str(arguments.get("chat", ""))
        chat = self._checked_ref(chat_text)
        chat_info = await self._chat_info(chat)
        if chat_info is None or chat_ref_of(chat_info) != chat:
            raise ToolError(unknown_chat(chat_text))
        if not chat_connected(chat_info):
            raise ToolError(
                f"The agent is not connected to {chat} and can't post; list shows connected: false."
            )
        if chat_info.get("type") == "group":
            role = group_role(chat_info) or "observer"
            if role in ROLE_ORDER and ROLE_ORDER.index(role) < ROLE_ORDER.index("author"):
                raise ToolError(f"The agent has role {role} in {chat} and can't post.")
        reply: ReplyTo | None = None
        reply_to = arguments.get("reply_to")
        if isinstance(reply_to, int):
            reply = await self._reply_item(chat, reply_to)
        mention_names: dict[int, str] = {}
        mentions = arguments.get("mention")
        if isinstance(mentions, list) and mentions:
            if chat_info.get("type") == "direct":
                raise ToolError(
                    f"mention: {chat} is a contact chat; mentions apply to groups and channels."
                )
            mention_names = await self._mention_names(chat, mentions)
        subject = self._subject(chat, chat_info)
        text = str(arguments.get("text", ""))
        standing = self._approval_of(chat_info)

        def build(n: int) -> tuple[Card, str, str]:
            card = send_card(
                n, subject, chat, text, reply_to=reply, mentions=list(mention_names.values())
            )
            return (
                card,
                f"send to {subject.log_phrase()} ({chat})",
                f"send to {subject.phrase(with_simplex_name=False)}",
            )

        return build, standing

    async def _reply_item(self, chat: str, item: int) -> ReplyTo:
        try:
            response = await self._command(f"/_get chat {chat} around={item} count=0")
        except CoreError:
            raise ToolError(f"reply_to: {chat} has no item {item}.") from None
        chat_data = _obj(response.get("chat"))
        chat_info = _obj(chat_data.get("chatInfo"))
        for chat_item in chat_data.get("chatItems") or []:
            chat_item = _obj(chat_item)
            if item_id(chat_item) == item:
                direction = _obj(chat_item.get("chatDir")).get("type")
                sender: str | None
                if direction == "groupRcv":
                    member = _obj(_obj(chat_item.get("chatDir")).get("groupMember"))
                    sender = ControlChat.member_name(member)
                elif direction in ("directRcv", "channelRcv"):
                    sender = chat_display_name(chat_info)
                else:
                    sender = None
                text = (
                    _msg_text(_obj(chat_item.get("content")).get("msgContent"))
                    or _str(_obj(chat_item.get("meta")).get("itemText"))
                    or ""
                )
                return ReplyTo(sender, text)
        raise ToolError(f"reply_to: {chat} has no item {item}.")

    async def _mention_names(self, chat: str, mentions: Sequence[Any]) -> dict[int, str]:
        response = await self._command(f"/_members {chat}")
        members = _obj(response.get("group")).get("members")
        by_id = (
            {m.get("groupMemberId"): m for m in members if isinstance(m, Mapping)}
            if isinstance(members, list)
            else {}
        )
        names: dict[int, str] = {}
        for member_id in mentions:
            member = by_id.get(member_id)
            if member is None or not isinstance(member_id, int):
                raise ToolError(f"mention: {chat} has no member {member_id}.")
            names[member_id] = ControlChat.member_name(member)
        return names

    async def _perform_send(self, action: Action) -> None:
        chat = str(action.input.get("chat", ""))
        text = str(action.input.get("text", ""))
        card = action.extra.get("card")
        mention_ids = action.input.get("mention")
        mentions: dict[str, int] = {}
        if isinstance(mention_ids, list) and mention_ids:
            names = await self._mention_names(chat, mention_ids)
            prefix: list[str] = []
            for member_id, name in names.items():
                written = "@" + mention_name(name)
                mentions[name] = member_id
                if written not in text:
                    prefix.append(written)
            if prefix:
                text = " ".join(prefix) + " " + text
        collector = ChatCollector(chat, self.clock, keep=MAX_KEPT_RESPONSES)
        action.extra["collector"] = collector
        self._collect(collector)
        composed: dict[str, Any] = {
            "msgContent": {"type": "text", "text": text},
            "mentions": mentions,
        }
        reply_to = action.input.get("reply_to")
        if isinstance(reply_to, int):
            composed["quotedItemId"] = reply_to
        response = await self._command(f"/_send {chat} json {dumps([composed])}")
        items = response.get("chatItems")
        sent = (
            item_id(_obj(_obj(items[0]).get("chatItem")))
            if isinstance(items, list) and items
            else None
        )
        action.chat = chat
        action.item = sent
        action.extra["sent_at"] = self.clock.now()
        if sent is not None:
            collector.drop_not_above(sent)
        del card

    async def _responses(
        self,
        action: Action,
        wait_s: float,
        idle_s: float,
        limit: int,
        ctx: CallContext,
        *,
        attached_done: bool,
    ) -> dict[str, Any]:
        """Collect the responses of a done send (plan "responses")."""
        chat = action.chat or str(action.input.get("chat", ""))
        collector = action.extra.get("collector")
        if not isinstance(collector, ChatCollector):
            collector = ChatCollector(chat, self.clock, keep=MAX_KEPT_RESPONSES, above=action.item)
            action.extra["collector"] = collector
            self._collect(collector)
        sent_at = action.extra.get("sent_at")
        start = self.clock.now() if attached_done or not isinstance(sent_at, float) else sent_at
        deadline = start + wait_s
        action.open += 1
        try:

            def end() -> float:
                if collector.last_arrival is not None and not collector.any_live():
                    return min(deadline, collector.last_arrival + idle_s)
                return deadline

            await self._wait_until(
                ctx,
                end,
                lambda: collector.changed,
                lambda until: (
                    f"{len(collector.items)} responses in {chat}; waiting until {utc_minutes(self._wall_at(until))}."
                ),
            )
            chat_info = await self._chat_info(chat) or {}
            own = await self._own_name(chat, chat_info)
            finals = collector.final_items()
            returned = finals[:limit]
            more = len(finals) - len(returned) + collector.live_count() + collector.overflow
            messages = [
                m
                for ci, item in returned
                if (m := message_of(chat, ci, item, own_name=own)) is not None
            ]
            ids = [m["item"] for m in messages]
            await self._read(chat, ids)
        finally:
            action.open -= 1
        self._forget(action)
        result: dict[str, Any] = {"action": action.n, "status": "done", "chat": chat}
        if action.item is not None:
            result["item"] = action.item
        result["responses"] = messages
        result["more"] = more
        return result

    # ------------------------------------------------------------------ leave

    async def leave(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The leave tool (plan "leave")."""
        chat_text = str(arguments.get("chat", ""))
        while True:
            existing = self.book.find(ActionTool.LEAVE, action_key(ActionTool.LEAVE, arguments))
            prepare = None if existing is not None else await self._leave_checks(chat_text)
            outcome = await self.action(ActionTool.LEAVE, arguments, ctx, prepare=prepare)
            if outcome is not None:
                break
        if isinstance(outcome, dict):
            return outcome
        self._forget(outcome)
        return {"action": outcome.n, "status": "done", "chat": str(outcome.input.get("chat", ""))}

    async def _leave_checks(self, chat_text: str) -> Callable[[int], tuple[Card, str, str]]:
        """The input checks of leave; the card builder."""
        chat = self._checked_ref(chat_text)
        chat_info = await self._chat_info(chat)
        if chat_info is None or chat_ref_of(chat_info) != chat:
            raise ToolError(unknown_chat(chat_text))
        subject = self._subject(chat, chat_info)
        verb = "delete" if chat.startswith("@") else "leave"

        def build(n: int) -> tuple[Card, str, str]:
            phrase = subject.phrase(with_simplex_name=False)
            return (
                leave_card(n, subject, chat),
                f"{verb} {subject.log_phrase()} ({chat})",
                f"{verb} {phrase}",
            )

        return build

    async def _perform_leave(self, action: Action) -> None:
        chat = str(action.input.get("chat", ""))
        if chat.startswith("@"):
            await self._command(f"/_delete {chat} full notify=on")
        else:
            chat_info = await self._chat_info(chat)
            status = _obj(_obj(_obj(chat_info).get("groupInfo")).get("membership")).get(
                "memberStatus"
            )
            if status in _CURRENT_OR_PENDING:
                await self._command(f"/_leave {chat}")
            await self._command(f"/_delete {chat} full notify=on")
        action.chat = chat

    # ------------------------------------------------------------------ receive

    async def receive(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The receive tool (plan "receive")."""
        chat_text = str(arguments.get("chat", ""))
        wait_s = float(arguments.get("wait", 0))
        limit = int(arguments.get("limit", 50))
        chat = self._checked_ref(chat_text)
        arrived = ChatCollector(chat, self.clock, keep=10_000)
        self._collect(arrived)
        try:
            try:
                s = await self._command(f"/_get chat {chat} initial=1")
            except CoreError as exc:
                if exc.chat_error.get("type") == "errorStore":
                    raise ToolError(unknown_chat(chat_text)) from None
                raise
            s_chat = _obj(s.get("chat"))
            chat_info = _obj(s_chat.get("chatInfo"))
            if chat_ref_of(chat_info) != chat:
                raise ToolError(unknown_chat(chat_text))
            stats = _obj(s_chat.get("chatStats"))
            raw_count = stats.get("unreadCount")
            unread_count = raw_count if isinstance(raw_count, int) else 0
            pages: list[Mapping[str, Any]] = []
            min_unread = stats.get("minUnreadItemId")
            if unread_count > 0 and isinstance(min_unread, int):
                pages.extend(await self._page(f"/_get chat {chat} around={min_unread} count=0"))
                while (
                    pages
                    and sum(
                        1
                        for i in pages
                        if is_received_message(i) and is_unread(i) and not is_live(i)
                    )
                    < limit + 1
                ):
                    last_id = item_id(pages[-1])
                    if last_id is None:
                        break
                    page = await self._page(f"/_get chat {chat} after={last_id} count=100")
                    pages.extend(page)
                    if len(page) < 100:
                        break
            unread = [
                i for i in pages if is_received_message(i) and is_unread(i) and not is_live(i)
            ]
            skipped = [i for i in pages if not is_message(i) and is_unread(i)]
            rcv_new_in_pages = sum(1 for i in pages if is_unread(i))
            new: dict[int, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
            for chat_item in unread:
                item = item_id(chat_item)
                if item is not None:
                    new[item] = (chat_info, chat_item)
            if not new and wait_s > 0:
                deadline = self.clock.now() + wait_s
                await self._wait_until(
                    ctx,
                    lambda: -math.inf if arrived.final_items() else deadline,
                    lambda: arrived.changed,
                    lambda until: (
                        f"No new messages in {chat}; waiting until {utc_minutes(self._wall_at(until))}."
                    ),
                )
            for ci, chat_item in arrived.final_items():
                item = item_id(chat_item)
                if item is not None and item not in new:
                    new[item] = (ci, chat_item)
            own = await self._own_name(chat, chat_info)
            ordered = list(new.values())
            returned = ordered[:limit]
            messages = [
                m
                for ci, item in returned
                if (m := message_of(chat, ci, item, own_name=own)) is not None
            ]
            for message in messages:
                message["new"] = True
            more = (
                len(ordered)
                - len(returned)
                + max(0, unread_count - rcv_new_in_pages)
                + arrived.live_count()
                + arrived.overflow
            )
            to_read = [m["item"] for m in messages] + [
                i for c in skipped if (i := item_id(c)) is not None
            ]
            await self._read(chat, to_read)
            return {"chat": chat, "messages": messages, "more": more}
        finally:
            self._uncollect(arrived)

    async def _page(self, command: str) -> list[Mapping[str, Any]]:
        response = await self._command(command)
        items = _obj(response.get("chat")).get("chatItems")
        return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []

    # ------------------------------------------------------------------ list

    async def _all_chats(self) -> list[Mapping[str, Any]]:
        """``/_get chats`` page by page: every contact and group chat but the control chat."""
        chats: list[Mapping[str, Any]] = []
        command = f"/_get chats {self.user_id} pcc=off count=100"
        for _ in range(10_000):
            response = await self._command(command)
            page = [c for c in response.get("chats") or [] if isinstance(c, Mapping)]
            chats.extend(page)
            if len(page) < 100:
                break
            last = _obj(page[-1].get("chatInfo"))
            entity = _obj(
                last.get("contact") if last.get("type") == "direct" else last.get("groupInfo")
            )
            ts = _str(entity.get("chatTs")) or _str(entity.get("updatedAt"))
            if ts is None:
                break
            command = f"/_get chats {self.user_id} pcc=off before={ts} count=100"
        out: list[Mapping[str, Any]] = []
        seen: set[str] = set()
        for achat in chats:
            ref = chat_ref_of(_obj(achat.get("chatInfo")))
            if ref is None or ref in seen or (self.control is not None and ref == self.control.ref):
                continue
            seen.add(ref)
            out.append(achat)
        return out

    async def list_chats(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The list tool (plan "list")."""
        chats: list[dict[str, Any]] = []
        for achat in await self._all_chats():
            chat_info = _obj(achat.get("chatInfo"))
            ref = chat_ref_of(chat_info)
            assert ref is not None
            entry: dict[str, Any] = {
                "chat": ref,
                "type": chat_type(chat_info),
                "name": chat_display_name(chat_info),
            }
            simplex_name = chat_simplex_name(chat_info)
            if simplex_name:
                entry["simplex_name"] = simplex_name
            if chat_info.get("type") == "direct":
                peer = peer_type_of(_obj(_obj(chat_info.get("contact")).get("profile")))
                if peer:
                    entry["peer_type"] = peer
            incognito = chat_incognito(chat_info)
            entry["incognito"] = incognito
            if chat_info.get("type") == "group" or incognito:
                known = await self._known_as(ref, chat_info)
                if known:
                    entry["known_as"] = known
            entry["connected"] = chat_connected(chat_info)
            unread = _obj(achat.get("chatStats")).get("unreadCount")
            entry["unread"] = unread if isinstance(unread, int) else 0
            if self._approval_of(chat_info) is not None:
                entry["approved"] = True
            chats.append(entry)
        actions = [
            {
                "action": a.n,
                "tool": a.tool.value,
                "input": a.input,
                "state": a.state.value,
                "open": a.open > 0,
            }
            for a in self.book
        ]
        return {"chats": chats, "actions": actions}

    async def _list_entries(self) -> list[ListEntry]:
        entries: list[ListEntry] = []
        for achat in await self._all_chats():
            chat_info = _obj(achat.get("chatInfo"))
            ref = chat_ref_of(chat_info)
            assert ref is not None
            approval = self._approval_of(chat_info)
            approved_by = _str(approval.get("approvedBy")) if approval is not None else None
            entries.append(
                ListEntry(
                    ref,
                    chat_kind(chat_info),
                    chat_display_name(chat_info),
                    approved_by,
                    chat_connected(chat_info),
                )
            )
        return entries

    # ------------------------------------------------------------------ stop

    async def stop_actions(self) -> int:
        """The stop's work on actions; returns K, the pending and performing actions.

        New actions are refused from now on; once the cards being posted are posted, pending
        cards get the cancelled form and performing actions are marked interrupted (their
        perform's end edits no card): an approved card gets the interrupted form, and an action
        without a card yet (mode host, or a send under a standing approval) gets its card
        posted in that form (or cancelled, when its perform never started). Returns once the
        outcome edits of performs that ended before the stop are done too.
        """
        self.stopping = True
        with anyio.CancelScope(shield=True):
            await self._card_writes.wait_idle()
            pending = self.book.pending()
            performing = [
                a
                for a in self.book
                if a.state is ActionState.PERFORMING and not a.extra.get("ended")
            ]
            for action in performing:
                action.interrupted = True
            for action in pending:
                await self.edit_card(action, Outcome.CANCELLED)
            host = self.config.mode is ApproveMode.HOST
            for action in performing:
                if action.extra.get("not_started"):
                    await self._post_outcome(action, Outcome.CANCELLED)
                elif action.card is not None:
                    await self.edit_card(action, Outcome.INTERRUPTED)
                else:
                    await self._post_outcome(
                        action, Outcome.HOST_INTERRUPTED if host else Outcome.INTERRUPTED
                    )
            await self._card_writes.wait_idle()
        return len(pending) + len(performing)

    async def wait_deliveries(self, limit_s: float, *, poll_s: float = 0.1) -> None:
        """Wait until the control chat's pending deliveries are 0, polled, at most ``limit_s``.

        An edit of a received card emits no status event, so the server asks the databases:
        the agent connections of the control chat's members, then the messages not yet
        delivered on them.
        """
        control = self.control
        if control is None:
            return
        deadline = self.clock.now() + limit_s
        with anyio.CancelScope(shield=True):
            while True:
                try:
                    pending = await self._pending_deliveries(control.group_id)
                except CoreError:
                    return
                now = self.clock.now()
                if pending == 0 or now >= deadline:
                    return
                await self.clock.sleep(min(poll_s, deadline - now))

    async def _pending_deliveries(self, group_id: int) -> int:
        # ``/sql`` rows are text: the column names joined by "|" first (when there are rows),
        # then each row's values joined by "|" (execSQL, addSQLResultRow)
        response = await self._command(
            "/sql chat SELECT hex(agent_conn_id) FROM connections WHERE group_member_id IN "
            f"(SELECT group_member_id FROM group_members WHERE group_id = {group_id})"
        )
        ids = [
            row.strip().strip("'\"")
            for row in response.get("rows") or []
            if isinstance(row, str) and _HEX_ROW.fullmatch(row.strip().strip("'\""))
        ]
        if not ids:
            return 0
        listed = ",".join(f"'{conn_id}'" for conn_id in ids)
        response = await self._command(
            "/sql agent SELECT count(*) FROM snd_message_deliveries WHERE failed = 0 AND "
            f"hex(conn_id) IN ({listed})"
        )
        counts = [
            int(row.strip())
            for row in response.get("rows") or []
            if isinstance(row, str) and _COUNT_ROW.fullmatch(row.strip())
        ]
        return counts[0] if counts else 0


_HEX_ROW: Final = re.compile(r"[0-9A-Fa-f]{1,200}")
_COUNT_ROW: Final = re.compile(r"[0-9]{1,18}")


def _by_member_id(members: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    def key(member: Mapping[str, Any]) -> int:
        member_id = member.get("groupMemberId")
        return member_id if isinstance(member_id, int) else 0

    return sorted(members, key=key)


_MEMBERSHIP_EVENTS: Final = frozenset(
    {
        "joinedGroupMember",
        "joinedGroupMemberConnecting",
        "connectedToGroupMember",
        "memberRole",
        "leftMember",
        "deletedMember",
        "deletedMemberUser",
        "groupDeleted",
    }
)
