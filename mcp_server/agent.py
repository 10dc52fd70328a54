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
                       :mod:`simplex_protocols.mcp_server.tools_leave`
approvals              :mod:`simplex_protocols.mcp_server.approvals` (action(), cards, perform, expiry,
                       the stop), :mod:`simplex_protocols.mcp_server.owner_commands`
events                 :mod:`simplex_protocols.mcp_server.events` (the pump and the collections),
                       :mod:`simplex_protocols.mcp_server.membership` (the control chat's members)
=====================  ==========================================================

Errors the model can correct are raised as :class:`ToolError` (an ``isError`` result with the
message); errors after approval are results with ``status: "failed"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
import anyio.abc

from simplex_protocols._clock import Clock
from simplex_protocols.core import ChatAPI

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
from .tools_connect import ConnectTool
from .tools_leave import LeaveTool
from .tools_read import ReadTools
from .tools_send import SendTool
from .waits import Collectors

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
        self.approvals.performers.update(
            {
                ActionTool.CONNECT: self.connect_tool.perform,
                ActionTool.SEND: self.send_tool.perform,
                ActionTool.LEAVE: self.leave_tool.perform,
            }
        )
        self.owner_commands = OwnerCommands(
            state, self.approvals, self.chats, self.read_tools.list_entries
        )
        self.membership = Membership(state, self.approvals, print_link)
        self.events = EventPump(
            state,
            owner_command=self.owner_commands.submit,
            chat_connected=self.connect_tool.chat_connected,
            membership=self.membership,
        )

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
