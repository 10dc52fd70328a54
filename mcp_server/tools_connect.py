"""The connect tool (plan "connect"): the plan of the target, the action, the join once it is
approved, the wait for the connection, and the result with the chat's first messages.

The join's steps follow the plan type (plan "perform connect"): a channel and a contact name or
an address with a message are prepared and then joined; a known contact without a connection is
joined through its address; other links are joined at once. What completes the connection is
the action's :data:`~simplex_protocols.mcp_server.connect_flow.Connection`, and the connect's way to it follows
:mod:`simplex_protocols.mcp_server.connect_flow`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from simplex_protocols.core import (
    Capability,
    ChatInfoView,
    ChatItemView,
    ChatRef,
    ChatView,
    ConnectionPlanView,
    ContactRef,
    GroupRef,
    JoinResponseView,
)
from simplex_protocols.errors import CommandArgumentError, CoreError, UnexpectedResponseError
from simplex_protocols.links import is_simplex_name

from .actions import Action, ActionState, ActionTool
from .approvals import ActionToolParts, Prepare
from .cards import Card, Subject, connect_card
from .connect_flow import (
    ConnectEvent,
    Connection,
    ConnectState,
    ContactConnection,
    GroupConnection,
    PendingConnection,
    completed_by,
)
from .errors import ToolError
from .log import chat_error_text, failure_text, missing_in_response
from .messages import message_of
from .plans import PlanSummary, check_plan, plan_summary
from .state import CallContext
from .waits import MAX_KEPT_RESPONSES, ArrivedItem, ChatCollector, wait_event, wait_for_responses

__all__ = ["CONNECT_MESSAGES", "ConnectTool"]

#: Messages read at the connection of a connect.
CONNECT_MESSAGES: Final = 50

#: The chat of a result when the core no longer has it.
_NO_CHAT: Final = ChatInfoView({})

#: Responses whose contact is the connect's chat.
_CONTACT_RESPONSES: Final = frozenset(
    {"startedConnectionToContact", "sentInvitationToContact", "contactAlreadyExists"}
)


@dataclass(frozen=True, slots=True)
class ConnectTool(ActionToolParts):
    """The connect tool and the perform of its actions."""

    # ------------------------------------------------------------------ the tool

    async def connect(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The connect tool (plan "connect")."""
        target = str(arguments.get("target", ""))
        incognito = bool(arguments.get("incognito", False))
        message = _str(arguments.get("message"))
        wait_s = float(arguments.get("wait", 60))
        idle_s = float(arguments.get("idle", 30))
        plan: PlanSummary | None = None

        async def checks() -> tuple[Prepare, None] | dict[str, Any]:
            nonlocal plan
            plan = await self._plan(target)
            if check_plan(target, plan, message):
                return await self._known_result(plan)
            return _preparer(plan, incognito, message, self._joins_as_member(plan)), None

        outcome, existing = await self.approvals.call(ActionTool.CONNECT, arguments, ctx, checks)
        if isinstance(outcome, dict):
            return outcome
        action = outcome
        if plan is not None and action.plan is None:
            action.plan = plan
        attached_done = existing is not None and existing.state.decided
        action.open += 1
        try:
            return await self._result(
                action, wait_s, idle_s, message is not None, ctx, attached_done=attached_done
            )
        finally:
            action.open -= 1

    async def _plan(self, target: str) -> PlanSummary:
        """``/_connect plan`` and its summary; the plan's tool errors."""
        state = self.state
        if not state.core_has(Capability.SIMPLEX_NAMES) and is_simplex_name(target):
            raise ToolError(
                f"The agent's chat core cannot look up SimpleX names such as {target}: "
                "connect with the link instead."
            )
        try:
            response = await state.api.connect_plan(state.user_id, target)
        except CommandArgumentError:
            # a target the core's parser would split or refuse (spaces, control characters)
            raise ToolError(f"Not a SimpleX link or name: {target}") from None
        except CoreError as exc:
            if exc.chain[:2] == ["error", "invalidConnReq"]:
                raise ToolError(f"Not a SimpleX link or name: {target}") from None
            raise ToolError(chat_error_text(exc.chat_error)) from None
        except UnexpectedResponseError as exc:
            raise ToolError(failure_text(exc)) from None
        return plan_summary(target, ConnectionPlanView(response))

    async def _known_result(self, summary: PlanSummary) -> dict[str, Any]:
        result: dict[str, Any] = {"status": "known"}
        chat = summary.known_chat
        if chat is None:
            return result | _plan_fields(summary)
        result["chat"] = str(chat)
        info = await self.chats.chat_info(chat)
        if info is None:
            return result | _plan_fields(summary)
        result["connected"] = info.connected
        result |= await self.chats.chat_fields(chat, info, summary)
        return result

    async def _result(
        self,
        action: Action,
        wait_s: float,
        idle_s: float,
        with_message: bool,
        ctx: CallContext,
        *,
        attached_done: bool,
    ) -> dict[str, Any]:
        """The result of a done connect: the chat's messages at the connection, then those that
        arrive until none comes for ``idle_s`` (or ``wait_s`` after the approval)."""
        clock = self.state.clock
        result: dict[str, Any] = {"action": action.n, "status": "done"}
        summary = action.plan
        chat = action.chat
        if chat is None:
            result["connected"] = False
            if summary is not None:
                result |= _plan_fields(summary)
            self.approvals.forget(action)
            return result
        started = action.approved_at
        start = started if started is not None and not attached_done else clock.now()
        deadline = start + wait_s
        collector = self._collector(action)
        assert collector is not None
        try:
            info = await self.chats.chat_info(chat) or _NO_CHAT
            own = await self.chats.own_name(chat, info)
            snapshot = await self.chats.snapshot(chat, CONNECT_MESSAGES)
            if action.connected:
                since = action.connected_at if action.connected_at is not None else clock.now()

                def end() -> float:
                    if collector.any_live():
                        return deadline
                    if with_message:
                        first = collector.first_arrival
                        if first is None:
                            return deadline
                        return min(deadline, (collector.last_arrival or first) + idle_s)
                    return min(deadline, max(since, collector.last_arrival or since) + idle_s)

                await wait_for_responses(collector, clock, ctx.progress, end, str(chat))
            items: dict[int, ArrivedItem] = {}
            for shown in snapshot:
                item = shown.item_id
                if item is not None and shown.is_message and not shown.live:
                    items[item] = (info.raw, shown.raw)
            for arrived in collector.final_items():
                item = ChatItemView(arrived[1]).item_id
                if item is not None:
                    items.setdefault(item, arrived)
            messages = []
            unread: list[int] = []
            for item in sorted(items):
                chat_info, chat_item = items[item]
                message = message_of(str(chat), chat_info or info.raw, chat_item, own_name=own)
                if message is not None:
                    messages.append(message)
                    if message["new"]:
                        unread.append(item)
            fresh = await self.chats.chat_info(chat) or info
            result["chat"] = str(chat)
            result["connected"] = fresh.connected
            result |= await self.chats.chat_fields(chat, fresh, summary)
            result["messages"] = messages
            if unread:
                await self.chats.read(chat, unread)
        finally:
            self.approvals.forget(action)
        return result

    # ------------------------------------------------------------------ perform

    async def perform(self, action: Action) -> None:
        """Perform an approved connect: join, then wait for the connection (at most until its
        deadline)."""
        try:
            await self._perform(action)
        except Exception:
            if action.connect_state in (ConnectState.JOINING, ConnectState.WAITING):
                action.advance(ConnectEvent.PERFORM_FAILED)
            raise

    async def _perform(self, action: Action) -> None:
        state = self.state
        target = str(action.input.get("target", ""))
        message = _str(action.input.get("message"))
        # the plan again: the approval can come hours later, and a prepare creates a chat each time
        summary = await self._plan(target)
        action.plan = summary
        if check_plan(target, summary, message):
            action.chat = summary.known_chat
            info = await self.chats.chat_info(action.chat) if action.chat is not None else None
            if info is not None and info.connected and action.chat is not None:
                self._mark_connected(action)
                if info.incognito:
                    action.known_as = await self.chats.known_as(action.chat, info)
            else:
                action.advance(ConnectEvent.KNOWN_UNCONNECTED)
            return
        response = await self._join(action, summary, target, message)
        if action.conn is None:
            action.conn = _connection_of(response)
        if response.incognito_name is not None:
            action.known_as = response.incognito_name
        if action.conn is not None and action.conn.chat is not None:
            action.chat = action.conn.chat
        if action.connect_state is ConnectState.JOINING:
            action.advance(ConnectEvent.JOIN_SENT)
        self._collector(action)
        if action.chat is not None and not action.connected:
            info = await self.chats.chat_info(action.chat)
            already = response.type == "contactAlreadyExists"
            if already or (info is not None and info.connected):
                self._mark_connected(action)
                if already and info is not None:
                    action.known_as = await self.chats.known_as(action.chat, info)
                return
        deadline = action.deadline
        if deadline is None:
            deadline = self.approvals.connect_deadline(action, state.clock.now())
        action.deadline = deadline
        action.notify()
        while not action.connected and state.clock.now() < deadline:
            await wait_event(action.changed, state.clock, deadline)
        if not action.connected:
            action.advance(ConnectEvent.DEADLINE)

    async def _join(
        self, action: Action, summary: PlanSummary, target: str, message: str | None
    ) -> JoinResponseView:
        """The join of the plan type; sets ``action.conn`` when a prepared chat names it."""
        api = self.state.api
        user_id = self.state.user_id
        incognito = bool(action.input.get("incognito"))
        # a core without prepared-chats parses neither domain= nor direct=: the chat is
        # prepared without the name it was found by, and a channel joined as a group
        prepared_options = self.state.core_has(Capability.PREPARED_CHATS)
        domain = target[1:] if summary.simplex_name and prepared_options else None
        full_link, short_link = summary.links(target)
        data = summary.link_data if summary.link_data is not None else {}
        if summary.plan_type == "groupLink" and not summary.direct:
            prepared = await api.prepare_group(
                user_id,
                full_link,
                data,
                short_link=short_link,
                direct=False if prepared_options else None,
                domain=domain,
            )
            group_id = _prepared_group(prepared)
            action.conn = GroupConnection(group_id)
            return JoinResponseView(await api.connect_prepared_group(group_id, incognito=incognito))
        if (
            summary.plan_type == "contactAddress"
            and summary.sub_type == "ok"
            and (summary.simplex_name or message is not None)
        ):
            prepared = await api.prepare_contact(
                user_id, full_link, data, short_link=short_link, domain=domain
            )
            if ChatView(prepared).info.is_group:
                # a business address: the prepared chat is a business group
                group_id = _prepared_group(prepared)
                action.conn = GroupConnection(group_id)
                started = await api.connect_prepared_group(
                    group_id, incognito=incognito, message=message
                )
                return JoinResponseView(started)
            contact = ChatView(prepared).info.ref
            if not isinstance(contact, ContactRef):
                raise missing_in_response("no contact in the prepared chat", prepared)
            action.conn = ContactConnection(contact.contact_id)
            return JoinResponseView(
                await api.connect_prepared_contact(
                    contact.contact_id, incognito=incognito, message=message
                )
            )
        if (
            summary.plan_type == "contactAddress"
            and summary.sub_type == "contactViaAddress"
            and summary.contact_id is not None
        ):
            return JoinResponseView(
                await api.connect_via_address(user_id, summary.contact_id, incognito=incognito)
            )
        return JoinResponseView(
            await api.connect(user_id, full_link, short_link=short_link, incognito=incognito)
        )

    # ------------------------------------------------------------------ the connection

    def chat_connected(self, chat: ChatRef, peer_conn_id: int | None) -> None:
        """A contact connected or a group joined: the connects it completes are connected
        (their chat is this one)."""
        for action in self.state.book:
            if (
                action.tool is ActionTool.CONNECT
                and action.state in (ActionState.PERFORMING, ActionState.DONE)
                and action.conn is not None
                and action.connect_state
                in (ConnectState.JOINING, ConnectState.WAITING, ConnectState.REQUESTED)
                and completed_by(action.conn, chat, peer_conn_id)
            ):
                action.chat = chat
                self._mark_connected(action)

    def _joins_as_member(self, plan: PlanSummary) -> bool:
        """A channel that this core joins as a group (no ``direct=off``: ``prepared-chats``)."""
        return (
            plan.plan_type == "groupLink"
            and not plan.direct
            and not self.state.core_has(Capability.PREPARED_CHATS)
        )

    def _collector(self, action: Action) -> ChatCollector | None:
        """The collection of a connect's chat, from the moment the chat is known."""
        if action.collector is not None:
            return action.collector
        if action.chat is None:
            return None
        collector = ChatCollector(action.chat, self.state.clock, keep=MAX_KEPT_RESPONSES)
        action.collector = collector
        self.state.collectors.add(collector)
        return collector

    def _mark_connected(self, action: Action) -> None:
        if action.connected:
            return
        self._collector(action)
        action.connected_at = self.state.clock.now()
        action.advance(ConnectEvent.CHAT_CONNECTED)


def _preparer(
    plan: PlanSummary, incognito: bool, message: str | None, joins_as_member: bool
) -> Prepare:
    def prepare(n: int) -> tuple[Card, str, str]:
        known = str(plan.known_chat) if plan.known_chat is not None else None
        subject = Subject(plan.kind, plan.name, plan.simplex_name, known, incognito)
        card = connect_card(
            n,
            subject,
            incognito=incognito,
            description=plan.description,
            welcome=plan.welcome,
            message=message,
            joins_as_member=joins_as_member,
        )
        how = "incognito" if incognito else "as itself"
        pending_how = "incognito" if incognito else "as myself"
        return (
            card,
            f"connect to {subject.log_phrase()}, {how}",
            f"connect to {subject.phrase(with_simplex_name=False)}, {pending_how}",
        )

    return prepare


def _plan_fields(summary: PlanSummary) -> dict[str, Any]:
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


def _prepared_group(prepared: Mapping[str, Any]) -> int:
    """The group of a prepared chat (a channel, or a business chat)."""
    group = ChatView(prepared).info.ref
    if not isinstance(group, GroupRef):
        raise missing_in_response("no group in the prepared chat", prepared)
    return group.group_id


def _connection_of(response: JoinResponseView) -> Connection | None:
    """What completes the connection, from the join's response."""
    kind = response.type
    if kind in ("sentInvitation", "sentConfirmation"):
        conn_id = response.pending_conn_id
        return PendingConnection(conn_id) if conn_id is not None else None
    if kind in _CONTACT_RESPONSES:
        contact_id = response.contact_id
        return ContactConnection(contact_id) if contact_id is not None else None
    if kind == "startedConnectionToGroup":
        group_id = response.group_id
        return GroupConnection(group_id) if group_id is not None else None
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
