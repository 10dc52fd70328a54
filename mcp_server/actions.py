"""Actions: the state machine, the attach rule, open counts, expiry and deletion.

An action is one connect, send or leave that the owner approves (plan "Actions"). This module
keeps the actions of a server run in memory and moves them between states; it does no I/O:
the caller posts and edits cards, performs actions and writes the counter.

=====================  ==========  ==========
event                  from        to
=====================  ==========  ==========
call, mode requests    \\-          pending
card post fails        pending     failed
control chat lost      pending     failed
call, mode host        \\-          performing
send, standing         \\-          performing
/approve N             pending     performing
/approve CHAT all      pending     performing
perform(N) ends        performing  done | failed
/reject N              pending     rejected
--expire hours pass    pending     expired
=====================  ==========  ==========

With ``--durable-actions`` a start finds in the journal the actions that were performing when
the server stopped or crashed, and marks them "outcome unknown": they are never performed again
(:data:`START_TRANSITIONS`, :mod:`simplex_protocols.mcp_server.journal`).

Time is wall-clock seconds (``Clock.wall()``), so a sleep of the computer delays no expiry.
A connect's way to its connection after the approval has its own table
(:mod:`simplex_protocols.mcp_server.connect_flow`).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

from simplex_protocols._wire import dumps
from simplex_protocols.core import ChatRef

from .cards import Card, Outcome
from .connect_flow import ConnectEvent, Connection, ConnectState, next_connect_state
from .errors import InvalidTransitionError
from .plans import PlanSummary
from .waits import ChatCollector

__all__ = [
    "MAX_PENDING_ACTIONS",
    "OUTCOME_UNKNOWN",
    "START_TRANSITIONS",
    "TRANSITIONS",
    "Action",
    "ActionBook",
    "ActionEvent",
    "ActionKey",
    "ActionState",
    "ActionTool",
    "InvalidTransitionError",
    "action_key",
]

#: At most this many actions wait for the owner at once (plan "Errors").
MAX_PENDING_ACTIONS: Final = 20


class ActionTool(enum.StrEnum):
    """The tools whose calls are actions."""

    CONNECT = "connect"
    SEND = "send"
    LEAVE = "leave"
    #: ``--call-tool`` only (not the plan's): a call of another bot's MCP or A2A method.
    CALL = "call"


class ActionState(enum.StrEnum):
    """The state of an action (:attr:`reported` is what ``list`` shows)."""

    PENDING = "pending"
    PERFORMING = "performing"
    DONE = "done"
    FAILED = "failed"
    REJECTED = "rejected"
    EXPIRED = "expired"
    #: ``--durable-actions`` only: performing when the server stopped or crashed.
    UNKNOWN = "unknown"

    @property
    def decided(self) -> bool:
        """Done, failed, rejected, expired or unknown: no transition leaves this state."""
        return self in _DECIDED

    @property
    def reported(self) -> str:
        """The state as results and ``list`` show it: the plan's states, with an unknown
        outcome shown as ``failed`` (its error says "outcome unknown"), so the tools' output
        schemas stay the plan's."""
        return ActionState.FAILED.value if self is ActionState.UNKNOWN else self.value


_DECIDED: Final = frozenset(
    {
        ActionState.DONE,
        ActionState.FAILED,
        ActionState.REJECTED,
        ActionState.EXPIRED,
        ActionState.UNKNOWN,
    }
)

#: The error of an action whose outcome is unknown (``--durable-actions``).
OUTCOME_UNKNOWN: Final = (
    "outcome unknown: the server stopped while performing it, and never performs it again"
)


class ActionEvent(enum.Enum):
    """What moves an action from one state to another."""

    CARD_POST_FAILED = "card post fails"
    CONTROL_CHAT_LOST = "control chat lost"
    APPROVED = "/approve N"
    PERFORMED = "perform(N) ends: done"
    PERFORM_FAILED = "perform(N) ends: failed"
    REJECTED = "/reject N"
    EXPIRED = "--expire hours pass"
    RESTARTED = "start after perform"


#: The transition table: (state, event) -> next state. A pair not in the table is refused.
TRANSITIONS: Final[Mapping[tuple[ActionState, ActionEvent], ActionState]] = {
    (ActionState.PENDING, ActionEvent.CARD_POST_FAILED): ActionState.FAILED,
    (ActionState.PENDING, ActionEvent.CONTROL_CHAT_LOST): ActionState.FAILED,
    (ActionState.PENDING, ActionEvent.APPROVED): ActionState.PERFORMING,
    (ActionState.PENDING, ActionEvent.REJECTED): ActionState.REJECTED,
    (ActionState.PENDING, ActionEvent.EXPIRED): ActionState.EXPIRED,
    (ActionState.PERFORMING, ActionEvent.PERFORMED): ActionState.DONE,
    (ActionState.PERFORMING, ActionEvent.PERFORM_FAILED): ActionState.FAILED,
}

#: The transitions of a start with ``--durable-actions`` (:meth:`Action.resume`), kept apart
#: from the plan's table: in the plan no action outlives its run.
START_TRANSITIONS: Final[Mapping[tuple[ActionState, ActionEvent], ActionState]] = {
    (ActionState.PERFORMING, ActionEvent.RESTARTED): ActionState.UNKNOWN,
}


#: The action fields of a call (plan "Correlation"): target, incognito, message for connect;
#: chat, text, reply_to, mention for send; chat for leave.
ActionKey = tuple[Any, ...]


def action_key(tool: ActionTool, arguments: Mapping[str, Any]) -> ActionKey:
    """The action fields of a call, with defaults filled in, for the attach rule."""
    if tool is ActionTool.CONNECT:
        return (
            arguments.get("target"),
            bool(arguments.get("incognito", False)),
            arguments.get("message"),
        )
    if tool is ActionTool.SEND:
        mention = arguments.get("mention")
        return (
            arguments.get("chat"),
            arguments.get("text"),
            arguments.get("reply_to"),
            tuple(mention) if isinstance(mention, list) else None,
        )
    if tool is ActionTool.CALL:
        params = arguments.get("params")
        return (
            arguments.get("target"),
            arguments.get("protocol"),
            arguments.get("method"),
            dumps(params) if params is not None else None,
            arguments.get("transport", "auto"),
        )
    return (arguments.get("chat"),)


@dataclass(eq=False)
class Action:
    """One action of this server run (plan "Action record").

    The fields after ``expires`` are filled while the action is processed:

    - its card: ``forms`` (the texts of the card, from its creation), ``pending_text`` (its
      /pending line), ``card`` (the item ID of the card in the agent control chat);
    - its decision: ``decided_by`` (the approver's display name; for a standing send, the
      approver of the chat's approval), ``approved_at`` (monotonic clock);
    - its perform: ``chat`` and ``item`` (the sent item of a send), ``sent_at``, ``collector``
      (the received items of the chat), ``not_started`` (performing when the server stopped,
      before its perform began), ``ended`` (its perform ended, so the stop leaves its outcome
      to it), ``error`` when it failed;
    - a connect's: ``plan`` (the plan summary), ``conn`` (what completes the connection),
      ``connect_state`` (:mod:`simplex_protocols.mcp_server.connect_flow`), ``deadline`` (the end of the wait
      for the connection, monotonic clock), ``connected_at``, ``known_as``;
    - with ``--durable-actions``: ``outcome`` (the form its card takes once decided) and
      ``shown`` (the card shows it), as the journal keeps them;
    - a call's (``--call-tool``): ``answer`` (the result the tool returns once performed; in
      memory only, never journaled), ``trace_id`` (the trace ID of the call that created it,
      when that call carried trace context: the owner's decision lines name it).
    """

    n: int
    tool: ActionTool
    input: dict[str, Any]
    key: ActionKey
    created: float
    expires: float
    state: ActionState = ActionState.PENDING
    standing: bool = False
    forms: Card | None = None
    pending_text: str = ""
    card: int | None = None
    decided_by: str | None = None
    approved_at: float | None = None
    open: int = 0
    chat: ChatRef | None = None
    item: int | None = None
    sent_at: float | None = None
    collector: ChatCollector | None = None
    interrupted: bool = False
    not_started: bool = False
    ended: bool = False
    plan: PlanSummary | None = None
    conn: Connection | None = None
    connect_state: ConnectState = ConnectState.JOINING
    deadline: float | None = None
    connected_at: float | None = None
    known_as: str | None = None
    error: str | None = None
    outcome: Outcome | None = None
    shown: bool = False
    answer: dict[str, Any] | None = None
    trace_id: str | None = None
    settled: anyio.Event = field(default_factory=anyio.Event)
    changed: anyio.Event = field(default_factory=anyio.Event)

    def apply(self, event: ActionEvent) -> ActionState:
        """Move to the next state for ``event``.

        Raises:
            InvalidTransitionError: the event is not allowed in the current state.
        """
        return self._move(TRANSITIONS, event)

    def resume(self, event: ActionEvent) -> ActionState:
        """Move to the next state for ``event`` at a start with ``--durable-actions``.

        Raises:
            InvalidTransitionError: :data:`START_TRANSITIONS` has no such move.
        """
        return self._move(START_TRANSITIONS, event)

    def _move(
        self, table: Mapping[tuple[ActionState, ActionEvent], ActionState], event: ActionEvent
    ) -> ActionState:
        nxt = table.get((self.state, event))
        if nxt is None:
            raise InvalidTransitionError(
                f"action {self.n}: {event.value} in state {self.state.value}"
            )
        self.state = nxt
        self.notify()
        if nxt.decided:
            self.settled.set()
        return nxt

    @property
    def connected(self) -> bool:
        """A connect whose chat is connected."""
        return self.connect_state is ConnectState.CONNECTED

    def advance(self, event: ConnectEvent) -> ConnectState:
        """Move a connect on its way to the connection (:data:`simplex_protocols.mcp_server.connect_flow.CONNECT_TRANSITIONS`).

        Raises:
            InvalidTransitionError: the event is not allowed in the connect's state.
        """
        self.connect_state = next_connect_state(self.connect_state, event, action=self.n)
        self.notify()
        return self.connect_state

    def notify(self) -> None:
        """Wake the calls that wait for a change of this action."""
        self.changed.set()
        self.changed = anyio.Event()

    def listed(self) -> dict[str, Any]:
        """The action as ``list`` shows it; one whose outcome is unknown (``--durable-actions``)
        shows as failed, with its error."""
        entry: dict[str, Any] = {
            "action": self.n,
            "tool": self.tool.value,
            "input": self.input,
            "state": self.state.reported,
            "open": self.open > 0,
        }
        if self.state is ActionState.UNKNOWN:
            entry["error"] = self.error or OUTCOME_UNKNOWN
        return entry


class ActionBook:
    """The actions of this server run, in memory, by number.

    The attach check (:meth:`find`) and the creation (:meth:`create`) are synchronous, so a
    caller that runs them with no ``await`` in between makes two identical calls made at once
    share one action.
    """

    def __init__(self) -> None:
        self._actions: dict[int, Action] = {}

    def __iter__(self) -> Iterator[Action]:
        return iter(sorted(self._actions.values(), key=lambda a: a.n))

    def __len__(self) -> int:
        return len(self._actions)

    def get(self, n: int) -> Action | None:
        """Action ``n``, when it is in memory."""
        return self._actions.get(n)

    def find(self, tool: ActionTool, key: ActionKey) -> Action | None:
        """An action in memory with the same tool and action fields: a call attaches to it."""
        for action in self._actions.values():
            if action.tool is tool and action.key == key:
                return action
        return None

    def pending(self) -> list[Action]:
        """The actions waiting for the owner, oldest first."""
        return [a for a in self if a.state is ActionState.PENDING]

    def pending_count(self) -> int:
        return sum(1 for a in self._actions.values() if a.state is ActionState.PENDING)

    def create(
        self,
        n: int,
        tool: ActionTool,
        arguments: Mapping[str, Any],
        *,
        now: float,
        expire_s: float,
        state: ActionState = ActionState.PENDING,
        standing: bool = False,
    ) -> Action:
        """Create action ``n`` in ``state`` (pending, or performing in mode host and under a standing approval).

        Raises:
            ValueError: action ``n`` exists, or ``state`` is not pending or performing.
        """
        if n in self._actions:
            raise ValueError(f"action {n} exists")
        if state not in (ActionState.PENDING, ActionState.PERFORMING):
            raise ValueError("an action starts pending or performing")
        action = Action(
            n=n,
            tool=tool,
            input=dict(arguments),
            key=action_key(tool, arguments),
            created=now,
            expires=now + expire_s,
            state=state,
            standing=standing,
        )
        self._actions[n] = action
        return action

    def restore(self, action: Action) -> None:
        """Keep an action read from the journal at a start (``--durable-actions``).

        Raises:
            ValueError: action ``n`` exists.
        """
        if action.n in self._actions:
            raise ValueError(f"action {action.n} exists")
        self._actions[action.n] = action

    def remove(self, action: Action) -> None:
        """Delete an action from memory (its result was returned)."""
        if self._actions.get(action.n) is action:
            del self._actions[action.n]

    def expire_due(self, now: float) -> list[Action]:
        """Expire the pending actions whose ``expires`` has passed; return them, oldest first."""
        due = [a for a in self if a.state is ActionState.PENDING and a.expires <= now]
        for action in due:
            action.apply(ActionEvent.EXPIRED)
        return due

    def purge_due(self, now: float) -> list[Action]:
        """Delete the decided actions with no open call whose ``expires`` has passed; return them."""
        due = [a for a in self if a.state.decided and a.open == 0 and a.expires <= now]
        for action in due:
            del self._actions[action.n]
        return due
