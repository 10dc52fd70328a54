"""What the parts of the agent share: the chat core, the options, time, the log, the agent
control chat and its approvers, the actions, and the collections of chat items.

:class:`AgentState` is plain state with a few readings of it (the approvers, a chat's standing
approval); the parts that act on it (tools, approvals, owner commands, events) each hold it
and are composed by :class:`simplex_protocols.mcp_server.agent.Agent`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Protocol

import anyio
import anyio.abc

from simplex_protocols._clock import Clock
from simplex_protocols.core import (
    Capability,
    CapabilityStatus,
    ChatAPI,
    ChatInfoView,
    ChatRef,
    CoreCapabilities,
    MemberView,
)

from .actions import ActionBook
from .config import AgentConfig, ApproveMode
from .control import ControlChat, CustomDataQueue
from .journal import ActionJournal
from .log import Log
from .waits import Collectors

__all__ = ["AgentState", "CallContext", "InFlight", "NoProgress"]


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


class InFlight:
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


class AgentState:
    """The agent's shared state over one chat core.

    Args:
        api: the chat core.
        config: the options.
        clock: time for waits (monotonic) and expiry (wall).
        log: where log lines go.
        user_id: the agent's user (profile) ID.
        profile_name: the agent's display name.
        control: the agent control chat, or ``None`` when lost.
        next_action: the action counter read from the control chat's custom data.
        control_data: the control chat's custom data (other keys are kept on writes).
        custom: where custom data is written and read (default: in the core).
        capabilities: what the start's probe found of the core (``None``: not probed, taken
            as the spec's core).
        journal: the action journal (``--durable-actions``), or ``None`` (the plan's actions,
            in memory only).
    """

    def __init__(
        self,
        api: ChatAPI,
        config: AgentConfig,
        *,
        clock: Clock,
        log: Log,
        user_id: int,
        profile_name: str,
        control: ControlChat | None,
        next_action: int,
        control_data: Mapping[str, Any] | None = None,
        custom: CustomDataQueue | None = None,
        capabilities: CoreCapabilities | None = None,
        journal: ActionJournal | None = None,
    ) -> None:
        self.api = api
        self.config = config
        self.clock = clock
        self.log = log
        self.user_id = user_id
        self.profile_name = profile_name
        self.control = control
        self.lost = control is None
        #: Set once the server stops: new actions are refused and no /approve performs.
        self.stopping = False
        self.next_action = max(1, next_action)
        self.control_data = dict(control_data or {})
        self.book = ActionBook()
        self.custom = custom if custom is not None else CustomDataQueue(api)
        self.capabilities = capabilities
        self.journal = journal
        self.collectors = Collectors()
        #: Cards being posted or edited (the stop waits for them).
        self.card_writes = InFlight()
        self.host_mode = config.mode is ApproveMode.HOST
        self._tg: anyio.abc.TaskGroup | None = None

    def started(self, tg: anyio.abc.TaskGroup) -> None:
        """The task group of the agent's background work (:meth:`spawn` starts tasks in it)."""
        self._tg = tg

    def spawn(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Start work in the background, not awaited by the caller (an event handler)."""
        assert self._tg is not None, "Agent.run() is not running"
        self._tg.start_soon(fn, *args)

    def core_has(self, capability: Capability) -> bool:
        """Whether the core has ``capability``: not found missing by the start's probe."""
        if self.capabilities is None:
            return True
        return self.capabilities.status(capability) is not CapabilityStatus.MISSING

    def approvers(self) -> list[dict[str, Any]]:
        """The members whose /approve and /reject count (plan "Participants")."""
        if self.control is None or self.lost:
            return []
        owners = self.control.human_owners()
        if self.config.owners is None:
            return owners
        listed = {entry.member_id for entry in self.config.owners}
        return [m for m in owners if MemberView(m).member_id in listed]

    def approver_ids(self) -> set[int]:
        ids = (MemberView(m).member_id for m in self.approvers())
        return {member_id for member_id in ids if member_id is not None}

    def approval_of(self, chat: ChatInfoView) -> Mapping[str, Any] | None:
        """The chat's standing approval, when it applies (mode requests, approver still one)."""
        if self.config.mode is not ApproveMode.REQUESTS:
            return None
        approval = self.custom.of(chat).get("simplexMcp")
        if not isinstance(approval, Mapping):
            return None
        approver = approval.get("approvedById")
        if isinstance(approver, int) and approver in self.approver_ids():
            return approval
        return None

    def is_control(self, ref: ChatRef | None) -> bool:
        """Whether ``ref`` is the agent control chat (which the tools never name)."""
        return self.control is not None and ref == self.control.ref
