"""The agent's server: the composition of its parts over one chat core.

:class:`Agent` carries out the plan's "Processing" sections by composing plain objects, each
of one concern:

=====================  ==========================================================
part                   module
=====================  ==========================================================
shared state           :mod:`simplex_protocols.mcp_server.state` (core, options, control chat, actions)
the chats              :mod:`simplex_protocols.mcp_server.chats` (reading chats, checking references)
the five tools         :mod:`simplex_protocols.mcp_server.tools_connect`, :mod:`simplex_protocols.mcp_server.tools_send`,
                       :mod:`simplex_protocols.mcp_server.tools_read` (receive, list),
                       :mod:`simplex_protocols.mcp_server.tools_leave`; with ``--call-tool``
                       :mod:`simplex_protocols.mcp_server.tools_call`
approvals              :mod:`simplex_protocols.mcp_server.approvals` (action(), cards, perform, expiry,
                       the stop), :mod:`simplex_protocols.mcp_server.owner_commands`
events                 :mod:`simplex_protocols.mcp_server.events` (the pump and the collections),
                       :mod:`simplex_protocols.mcp_server.membership` (the control chat's members)
=====================  ==========================================================

Errors the model can correct are raised as :class:`ToolError` (an ``isError`` result with the
message); errors after approval are results with ``status: "failed"``.

With ``--durable-actions`` the agent also resumes the journal's actions at a start
(:meth:`Agent.restore`, :meth:`Agent.resume`): their cards are brought up to date, expiry runs,
and the owner commands that arrived while the server was down are taken from the control chat's
items after the last one taken (the journal keeps its ID), each once: later events of the same
items are dropped (:meth:`Agent.handle_event`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import anyio
import anyio.abc

from simplex_protocols._clock import Clock
from simplex_protocols.core import AChatItemView, ChatAPI, ChatItemView
from simplex_protocols.rpc import KeyStore

from .actions import ActionBook, ActionTool
from .approvals import LOST_MESSAGE, NO_APPROVING_OWNER_MESSAGE, NO_OWNER_MESSAGE, Approvals
from .chats import ChatReader
from .config import AgentConfig
from .control import ControlChat, CustomDataQueue
from .errors import ToolError
from .events import EventPump
from .log import Log
from .membership import Membership
from .owner_commands import OwnerCommands
from .state import AgentState, CallContext, NoProgress
from .tools_call import CallTool
from .tools_connect import ConnectTool
from .tools_leave import LeaveTool
from .tools_read import ReadTools
from .tools_send import SendTool
from .waits import Collectors

#: The page size of the control chat's items read at a start.
_PAGE: Final = 100

__all__ = [
    "LOST_MESSAGE",
    "NO_APPROVING_OWNER_MESSAGE",
    "NO_OWNER_MESSAGE",
    "Agent",
    "AgentConfig",
    "CallContext",
    "NoProgress",
    "ToolError",
]


class Agent:
    """The agent's processing over one chat core.

    Args:
        state: the agent's state (its chat core, options, clock, log, profile, control chat
            and action counter).
        print_link: prints a new join link of the control chat (no ``--owners``).
    """

    def __init__(
        self, state: AgentState, *, print_link: Callable[[str], None] | None = None
    ) -> None:
        self.state = state
        self.chats = ChatReader(state)
        self.approvals = Approvals(state)
        self.connect_tool = ConnectTool(state, self.chats, self.approvals)
        self.send_tool = SendTool(state, self.chats, self.approvals)
        self.read_tools = ReadTools(state, self.chats)
        self.leave_tool = LeaveTool(state, self.chats, self.approvals)
        keys = state.config.call_keys
        #: ``--call-tool`` (not the plan's): the call tool, with the per-bot signing keys.
        self.call_tool: CallTool | None = (
            CallTool(state, self.chats, self.approvals, KeyStore(keys))
            if keys is not None
            else None
        )
        self.approvals.performers.update(
            {
                ActionTool.CONNECT: self.connect_tool.perform,
                ActionTool.SEND: self.send_tool.perform,
                ActionTool.LEAVE: self.leave_tool.perform,
            }
        )
        if self.call_tool is not None:
            self.approvals.performers[ActionTool.CALL] = self.call_tool.perform
        self.owner_commands = OwnerCommands(
            state, self.approvals, self.chats, self.read_tools.list_entries
        )
        if self.call_tool is not None:
            self.owner_commands.bot_of_call = self.call_tool.bot_of_action
        self.membership = Membership(state, self.approvals, print_link)
        self.events = EventPump(
            state,
            owner_command=self.owner_commands.submit,
            chat_connected=self.connect_tool.chat_connected,
            membership=self.membership,
        )
        #: --durable-actions: the last received item of the control chat taken as a command.
        self._command_cursor: int | None = None

    # ------------------------------------------------------------------ the shared state

    @property
    def api(self) -> ChatAPI:
        return self.state.api

    @property
    def config(self) -> AgentConfig:
        return self.state.config

    @property
    def log(self) -> Log:
        return self.state.log

    @property
    def user_id(self) -> int:
        return self.state.user_id

    @property
    def book(self) -> ActionBook:
        return self.state.book

    @property
    def custom(self) -> CustomDataQueue:
        return self.state.custom

    @property
    def collectors(self) -> Collectors:
        return self.state.collectors

    @property
    def clock(self) -> Clock:
        return self.state.clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self.state.clock = clock

    @property
    def control(self) -> ControlChat | None:
        return self.state.control

    @control.setter
    def control(self, control: ControlChat | None) -> None:
        self.state.control = control

    @property
    def lost(self) -> bool:
        return self.state.lost

    @lost.setter
    def lost(self, lost: bool) -> None:
        self.state.lost = lost

    @property
    def stopping(self) -> bool:
        return self.state.stopping

    @stopping.setter
    def stopping(self, stopping: bool) -> None:
        self.state.stopping = stopping

    def approvers(self) -> list[dict[str, Any]]:
        """The members whose /approve and /reject count (plan "Participants")."""
        return self.state.approvers()

    # ------------------------------------------------------------------ lifecycle

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Run the background work: the custom data queue, owner commands, and the expiry loop."""
        async with anyio.create_task_group() as tg:
            self.state.started(tg)
            tg.start_soon(self.state.custom.run)
            tg.start_soon(self.owner_commands.run)
            tg.start_soon(self.approvals.run_expiry)
            task_status.started()

    def handle_event(self, event: Mapping[str, Any]) -> None:
        """Handle one core event, in order; long work is started, not awaited."""
        if self._command_cursor is not None and event.get("type") == "newChatItems":
            event = self._unseen_commands(event)
        self.events.handle_event(event)

    async def expire(self) -> None:
        """Expire pending actions whose time passed; delete decided ones after theirs."""
        await self.approvals.expire()

    async def owner_command(self, sender: Mapping[str, Any], text: str) -> None:
        """Run one owner command from ``sender`` (a member of the agent control chat)."""
        await self.owner_commands.owner_command(sender, text)

    async def announce_restart(
        self, member: Mapping[str, Any], humans: Sequence[Mapping[str, Any]]
    ) -> None:
        """--owners without a list: log and post which --owners to restart with."""
        await self.membership.announce_restart(member, humans)

    async def stop_actions(self) -> int:
        """The stop's work on actions; returns the number of pending and performing actions."""
        return await self.approvals.stop_actions()

    async def wait_deliveries(self, limit_s: float, *, poll_s: float = 0.1) -> None:
        """Wait until the control chat's pending deliveries are 0, polled, at most ``limit_s``."""
        if self.state.control is not None:
            await self.state.control.wait_deliveries(self.state.clock, limit_s, poll_s=poll_s)

    # ------------------------------------------------------------------ --durable-actions

    def restore(self, *, cards_here: bool) -> int:
        """Put the journal's actions back in memory (before HTTP takes calls); how many."""
        journal = self.state.journal
        if journal is None:
            return 0
        restored = self.approvals.restore(journal.rows(), cards_here=cards_here)
        if self.state.lost:
            self.approvals.fail_pending()
        return len(restored)

    async def resume(self, kept: int) -> None:
        """The rest of a start with the journal: the restored actions' cards, expiry (their
        deadlines are absolute, so the downtime counts), the notice of the kept actions, and
        the owner commands that arrived while the server was down."""
        state = self.state
        if state.journal is None:
            return
        await self.approvals.repair_cards()
        await self.approvals.expire()
        if kept:
            notice = f"Restarted: {kept} action{'s' if kept != 1 else ''} kept from the last run."
            state.log.line(notice)
            if state.control is not None and not state.lost:
                await state.control.post(notice)
        await self._missed_commands()

    async def _missed_commands(self) -> None:
        """Queue the owner commands received after the journal's cursor (all of the control
        chat's items at the first start with the journal are taken as seen)."""
        state = self.state
        journal, control = state.journal, state.control
        if journal is None or control is None or state.lost:
            return
        same_chat = journal.meta("control_group") == control.group_id
        cursor = journal.meta("control_item") if same_chat else None
        if cursor is None:
            last = await self.chats.page(control.ref, count=1)
            cursor = max((i.item_id for i in last if i.item_id is not None), default=0)
        else:
            while True:
                page = await self.chats.page(control.ref, after=cursor, count=_PAGE)
                for item in page:
                    if item.item_id is not None and item.item_id > cursor:
                        cursor = item.item_id
                        self._take_command(item)
                if len(page) < _PAGE:
                    break
        self._command_cursor = cursor
        journal.set_meta(control_group=control.group_id, control_item=cursor)

    def _take_command(self, item: ChatItemView) -> None:
        """An item read from the control chat, taken as the event pump takes one."""
        text, sender = item.text, item.sender
        state = self.state
        if (
            item.direction == "groupRcv"
            and text is not None
            and text.startswith("/")
            and sender is not None
            and not state.lost
            and not state.stopping
        ):
            self.owner_commands.submit(sender.raw, text)

    def _unseen_commands(self, event: Mapping[str, Any]) -> Mapping[str, Any]:
        """``event`` without the control chat's received items up to the cursor (taken at the
        start already); the cursor moves on (and is journaled) past the others."""
        items = event.get("chatItems")
        cursor = self._command_cursor
        if not isinstance(items, list) or cursor is None:
            return event
        kept: list[Any] = []
        for raw in items:
            if isinstance(raw, Mapping):
                a_item = AChatItemView(raw)
                item = a_item.item
                n = item.item_id
                if (
                    n is not None
                    and item.direction == "groupRcv"
                    and self.state.is_control(a_item.chat.ref)
                ):
                    if n <= cursor:
                        continue
                    cursor = n
            kept.append(raw)
        if cursor != self._command_cursor:
            self._command_cursor = cursor
            journal = self.state.journal
            if journal is not None:
                journal.set_meta(control_item=cursor)
        return event if len(kept) == len(items) else {**event, "chatItems": kept}

    # ------------------------------------------------------------------ the tools

    async def connect(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The connect tool (plan "connect")."""
        return await self.connect_tool.connect(arguments, ctx)

    async def send(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The send tool (plan "send")."""
        return await self.send_tool.send(arguments, ctx)

    async def receive(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The receive tool (plan "receive")."""
        return await self.read_tools.receive(arguments, ctx)

    async def list_chats(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The list tool (plan "list")."""
        return await self.read_tools.list_chats(arguments, ctx)

    async def leave(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The leave tool (plan "leave")."""
        return await self.leave_tool.leave(arguments, ctx)

    async def call(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The call tool (``--call-tool``, not the plan's).

        Raises:
            ToolError: the server runs without ``--call-tool``.
        """
        if self.call_tool is None:
            raise ToolError("Unknown tool: call")
        return await self.call_tool.call(arguments, ctx)
