"""Approvals: an action from its call to its outcome (plan "action()" and "perform(N)").

:class:`Approvals` attaches a call to an action or creates one (the checks, the counter, the
card), waits for the owner's decision with progress notifications, performs approved actions
(each tool's perform, registered in :attr:`Approvals.performers`) and edits or posts their
cards with the outcome; it expires pending actions, deletes decided ones, and does the stop's
work on actions. The owner commands that decide are in :mod:`simplex_protocols.mcp_server.owner_commands`.

With ``--durable-actions`` (not the plan's) it also keeps each action in the journal
(:mod:`simplex_protocols.mcp_server.journal`): written before the card is posted and at every
change of state, so that a start restores the actions (:meth:`Approvals.restore`, then
:meth:`Approvals.repair_cards`): pending ones stay pending, and one that was performing is marked
"outcome unknown" and never performed again. :class:`CrashPoint` names the moments between two
of those writes, where a test ends the server as a crash would.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

import anyio
import anyio.lowlevel

from simplex_protocols._wire import aeson_string_size
from simplex_protocols.core import ChatView, MemberView
from simplex_protocols.errors import CoreError, UnexpectedResponseError

from .actions import (
    MAX_PENDING_ACTIONS,
    OUTCOME_UNKNOWN,
    Action,
    ActionEvent,
    ActionState,
    ActionTool,
    action_key,
)
from .cards import MAX_CARD_BYTES, Card, Outcome, largest_send_form
from .chats import ChatReader
from .connect_flow import connect_deadline
from .control import utc_minutes
from .errors import ToolError
from .journal import JournalRow, action_of, row_of
from .log import CORE_FAILURES, failure_text
from .state import AgentState, CallContext
from .text import fold, name_md
from .trace import current_trace
from .waits import wait_until, wall_at

__all__ = [
    "CARD_TOO_LONG_MESSAGE",
    "LOST_MESSAGE",
    "NO_APPROVING_OWNER_MESSAGE",
    "NO_OWNER_MESSAGE",
    "PENDING_LIMIT_MESSAGE",
    "STOPPING_MESSAGE",
    "ActionToolParts",
    "Approvals",
    "Checks",
    "CrashPoint",
    "Prepare",
    "traced_line",
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
#: Sent items of the agent control chat a start looks through for a card whose item ID the
#: journal lacks (the server ended between the post and the journal's update).
_CARD_SEARCH: Final = 100


class CrashPoint(enum.Enum):
    """The moments between the journal's writes for one action (``--durable-actions``)."""

    JOURNALED = "action journaled, card not posted"
    CARD_POSTED = "card posted, its item not journaled"
    PERFORMING = "performing journaled, perform not started"
    PERFORMED = "perform ended, outcome not journaled"
    DECIDED = "outcome journaled, card not edited"


def _no_crash(point: CrashPoint) -> None:
    return None


#: Builds the card, the log description and the /pending description of action number N.
Prepare = Callable[[int], tuple[Card, str, str]]

#: A tool's perform of an approved action (raises what makes it fail).
Perform = Callable[[Action], Awaitable[None]]

#: A tool's checks of a new call: the card builder and the chat's standing approval, or the
#: tool's result when the call needs no action (a connect to a known target).
Checks = Callable[[], Awaitable["tuple[Prepare, Mapping[str, Any] | None] | dict[str, Any]"]]


class Approvals:
    """The actions of the agent, from creation to outcome.

    Args:
        state: the agent's state.
    """

    def __init__(self, state: AgentState) -> None:
        self._state = state
        #: Each action tool's perform.
        self.performers: dict[ActionTool, Perform] = {}
        self._performs: set[int] = set()
        #: Called at each :class:`CrashPoint` (tests end the server there).
        self.crash_point: Callable[[CrashPoint], None] = _no_crash
        #: The actions the journal keeps once the stop is done (``--durable-actions``).
        self.kept = 0

    # ------------------------------------------------------------------ the journal

    def save(self, action: Action, *, state: ActionState | None = None) -> None:
        """Write the action's journal row (``state``: the state it is about to take)."""
        journal = self._state.journal
        if journal is not None:
            journal.save(row_of(action, state=state))

    # ------------------------------------------------------------------ action()

    async def call(
        self, tool: ActionTool, arguments: Mapping[str, Any], ctx: CallContext, checks: Checks
    ) -> tuple[Action | dict[str, Any], Action | None]:
        """The action of a tool call: attached to the action in memory with the same action
        fields, or created once the tool's checks pass (the checks run only then); when the
        action to attach to leaves memory meanwhile, the call starts over.

        Returns:
            What :meth:`action` returned (the done action, or the result of a rejected,
            expired or failed one) or the checks' result, and the action the call attached to
            (``None`` when it created one).

        Raises:
            ToolError: the checks or :meth:`action` refused the call.
        """
        key = action_key(tool, arguments)
        while True:
            existing = self._state.book.find(tool, key)
            prepare: Prepare | None = None
            standing: Mapping[str, Any] | None = None
            if existing is None:
                checked = await checks()
                if isinstance(checked, dict):
                    return checked, None
                prepare, standing = checked
            outcome = await self.action(tool, arguments, ctx, prepare=prepare, standing=standing)
            if outcome is not None:
                return outcome, existing

    async def action(
        self,
        tool: ActionTool,
        arguments: Mapping[str, Any],
        ctx: CallContext,
        *,
        prepare: Prepare | None,
        standing: Mapping[str, Any] | None = None,
    ) -> Action | dict[str, Any] | None:
        """Attach to an action or create one, post its card, and wait for its decision.

        Args:
            tool: the tool.
            arguments: the call's input.
            ctx: progress notifications.
            prepare: builds the card and descriptions of a new action; ``None`` when the
                caller only attaches.
            standing: a send's standing approval (``approvedBy``, ``approvedById``), when it applies.

        Returns:
            The action when it is done (the tool continues); the result dict when it was
            rejected, expired or failed; ``None`` when the call was cancelled before creating
            an action, or there is no action to attach to.

        Raises:
            ToolError: a new action is refused (stopping, lost, 20 pending, card too long, no
                approver).
        """
        # The call's signal aborted: no action and no card. This checkpoint does not let another
        # task run, so the attach check and the creation below happen with no await between.
        await anyio.lowlevel.checkpoint_if_cancelled()
        book = self._state.book
        action = book.find(tool, action_key(tool, arguments))
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
            result: dict[str, Any] = {"action": action.n, "status": action.state.reported}
            if action.state is ActionState.FAILED:
                result["error"] = action.error or "failed"
            elif action.state is ActionState.UNKNOWN:
                result["error"] = action.error or OUTCOME_UNKNOWN
            self.forget(action)
            return result
        finally:
            action.open -= 1

    def _create(
        self,
        tool: ActionTool,
        arguments: Mapping[str, Any],
        prepare: Prepare,
        standing: Mapping[str, Any] | None,
    ) -> Action:
        """The checks of a new action and its creation, with no await (plan "action()")."""
        state = self._state
        if state.stopping:
            raise ToolError(STOPPING_MESSAGE)
        if state.lost:
            raise ToolError(LOST_MESSAGE)
        if state.book.pending_count() >= MAX_PENDING_ACTIONS:
            raise ToolError(PENDING_LIMIT_MESSAGE)
        n = state.next_action
        card, log_text, pending_text = prepare(n)
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
        if not state.host_mode and not state.approvers():
            raise ToolError(
                NO_APPROVING_OWNER_MESSAGE if state.config.owners is not None else NO_OWNER_MESSAGE
            )
        state.next_action = n + 1
        performing = state.host_mode or standing is not None
        action = state.book.create(
            n,
            tool,
            arguments,
            now=state.clock.wall(),
            expire_s=state.config.expire_hours * 3600.0,
            state=ActionState.PERFORMING if performing else ActionState.PENDING,
            standing=standing is not None,
        )
        action.forms = card
        action.pending_text = pending_text
        if standing is not None:
            action.decided_by = str(standing.get("approvedBy", ""))
        trace = current_trace()
        if trace is not None and trace.announced:
            action.trace_id = trace.trace_id
        state.log.line(f"Action {n}: {log_text}")
        return action

    def _longest_approver_name(self) -> str:
        names = [MemberView(m).display_name for m in self._state.approvers()]
        return max(names, key=lambda n: aeson_string_size(name_md(n)), default="")

    async def _announce(self, action: Action) -> None:
        """Write the counter, then post the card or start the perform; not cancelled by the call."""
        state = self._state
        with anyio.CancelScope(shield=True), state.card_writes:
            data = dict(state.control_data)
            control_key = data.get("simplexMcp")
            control_key = dict(control_key) if isinstance(control_key, Mapping) else {}
            control_key.update(control=True, nextAction=state.next_action)
            data["simplexMcp"] = control_key
            state.control_data = data
            if state.control is not None:
                try:
                    await state.custom.write(state.control.ref, data)
                except CORE_FAILURES as exc:
                    state.log.error(f"Could not write the action counter: {failure_text(exc)}")
            self.save(action)
            self.crash_point(CrashPoint.JOURNALED)
            if action.state is ActionState.PERFORMING:
                if state.stopping:
                    # mode host or a standing approval, and the server stops meanwhile: the
                    # action is cancelled, not performed (the stop posts its card)
                    action.not_started = True
                    return
                self.start_perform(action, already=True)
                return
            card = action.forms
            assert card is not None
            try:
                if state.control is None or state.lost:
                    raise ToolError(LOST_MESSAGE)
                action.card = await state.control.post(card.pending())
                self.crash_point(CrashPoint.CARD_POSTED)
            except (CoreError, UnexpectedResponseError, ToolError) as exc:
                action.error = exc.message if isinstance(exc, ToolError) else failure_text(exc)
                if action.state is ActionState.PENDING:
                    action.apply(ActionEvent.CARD_POST_FAILED)
            self.save(action)

    def forget(self, action: Action) -> None:
        """Delete the action from memory (its result was returned) and end its collection."""
        self._state.book.remove(action)
        self.stop_collecting(action)
        self._unjournal(action)

    def _unjournal(self, action: Action) -> None:
        journal = self._state.journal
        if journal is not None and self._state.book.get(action.n) is None:
            journal.remove(action.n)

    def stop_collecting(self, action: Action) -> None:
        if action.collector is not None:
            self._state.collectors.remove(action.collector)
            action.collector = None

    async def _wait_decided(self, action: Action, ctx: CallContext) -> None:
        """Wait until the action is decided, with progress at once and every 60 s."""
        await wait_until(
            self._state.clock,
            ctx.progress,
            lambda: -math.inf if action.state.decided else math.inf,
            lambda: action.changed,
            lambda _: self._progress_text(action),
        )

    def _progress_text(self, action: Action) -> str:
        if action.state is ActionState.PENDING:
            return f"Action {action.n} waits for an approver until {utc_minutes(action.expires)}."
        if action.tool is ActionTool.CONNECT:
            clock = self._state.clock
            deadline = action.deadline
            when = wall_at(clock, deadline) if deadline is not None else clock.wall()
            return f"Action {action.n} waits for the connection until {utc_minutes(when)}."
        return f"Action {action.n} is being performed."

    # ------------------------------------------------------------------ perform

    def start_perform(self, action: Action, *, already: bool = False) -> None:
        """Start the perform of an approved action (``already``: created performing)."""
        if not already:
            action.apply(ActionEvent.APPROVED)
        # journaled before the perform starts: from here on a restart never performs it
        self.save(action)
        now = self._state.clock.now()
        action.approved_at = now
        if action.tool is ActionTool.CONNECT:
            # known from the approval on, so progress names it while the perform starts
            action.deadline = self.connect_deadline(action, now)
        if action.n in self._performs:
            return
        self._performs.add(action.n)
        self._state.spawn(self._perform, action)

    def connect_deadline(self, action: Action, start: float) -> float:
        """The end of a connect's wait: ``wait`` seconds from ``start`` (the approval), at most
        23 h 50 min after the action's creation (monotonic clock)."""
        return connect_deadline(
            wait_s=float(action.input.get("wait", 60)),
            created=action.created,
            start=start,
            wall=self._state.clock.wall(),
        )

    async def _perform(self, action: Action) -> None:
        self.crash_point(CrashPoint.PERFORMING)
        try:
            await self.performers[action.tool](action)
        except CORE_FAILURES as exc:
            action.error = failure_text(exc)
        except ToolError as exc:
            action.error = exc.message
        except Exception as exc:  # never lose an action: it fails with the reason
            action.error = f"internal error: {type(exc).__name__}"
            self._state.log.error(f"Action {action.n} failed: {exc!r}")
        finally:
            self._performs.discard(action.n)
        self.crash_point(CrashPoint.PERFORMED)
        await self._perform_ended(action)

    async def _perform_ended(self, action: Action) -> None:
        state = self._state
        failed = action.error is not None
        if action.state is not ActionState.PERFORMING:
            return
        # From here on, the stop leaves the action to this outcome (it is not interrupted).
        action.ended = True
        by = fold(action.decided_by or "")
        if failed:
            what = f"failed: {fold(action.error or '')}."
        elif action.tool is ActionTool.SEND:
            what = "sent."
        elif action.tool is ActionTool.CONNECT:
            what = "connected." if action.connected else "connection requested."
        elif action.tool is ActionTool.CALL:
            what = "called."
        else:
            what = "deleted." if str(action.input.get("chat", "")).startswith("@") else "left."
        if state.host_mode:
            suffix = f"; failed: {fold(action.error or '')}." if failed else "."
            state.log.line(f"Action {action.n}: performed without approval (mode host){suffix}")
        elif action.standing:
            scope = action.forms.standing_scope if action.forms is not None else "this chat"
            state.log.line(
                traced_line(action, f"Action {action.n} approved for {scope} by {by}: {what}")
            )
        else:
            state.log.line(traced_line(action, f"Action {action.n} approved by {by}: {what}"))
        event = ActionEvent.PERFORM_FAILED if failed else ActionEvent.PERFORMED
        if action.interrupted:
            # the stop has journaled it (--durable-actions): its outcome stays unknown
            action.apply(event)
            return
        not_connected = action.tool is ActionTool.CONNECT and not action.connected
        if state.host_mode:
            outcome = (
                Outcome.HOST_FAILED
                if failed
                else (Outcome.HOST_NOT_CONNECTED if not_connected else Outcome.HOST)
            )
        elif action.standing:
            outcome = Outcome.STANDING_FAILED if failed else Outcome.STANDING
        else:
            outcome = (
                Outcome.FAILED
                if failed
                else (Outcome.NOT_CONNECTED if not_connected else Outcome.DONE)
            )
        action.outcome = outcome
        self.save(action, state=ActionState.FAILED if failed else ActionState.DONE)
        self.crash_point(CrashPoint.DECIDED)
        action.shown = await self._show(action, outcome)
        action.apply(event)
        self.save(action)

    async def _show(self, action: Action, outcome: Outcome) -> bool:
        """Edit the card to ``outcome``, or post it in that form when the action has none yet
        (mode host, a standing approval); whether it now shows it."""
        if action.card is None:
            return await self._post_outcome(action, outcome)
        return await self.edit_card(action, outcome)

    async def decide(self, action: Action, outcome: Outcome) -> None:
        """Journal a decided action (rejected, expired) and edit its card to ``outcome``."""
        action.outcome = outcome
        self.save(action)
        self.crash_point(CrashPoint.DECIDED)
        action.shown = await self.edit_card(action, outcome)
        self.save(action)

    # ------------------------------------------------------------------ cards

    async def edit_card(self, action: Action, outcome: Outcome) -> bool:
        """Edit the action's card to ``outcome`` (its commands go); a refusal is logged.

        Returns whether the card was edited.
        """
        state = self._state
        card = action.forms
        if action.card is None or card is None or state.control is None or state.lost:
            return False
        try:
            with state.card_writes:
                await state.control.edit(
                    action.card, card.outcome(outcome, by=action.decided_by, error=action.error)
                )
        except CORE_FAILURES as exc:
            state.log.error(f"Could not edit the card of action {action.n}: {failure_text(exc)}")
            return False
        return True

    async def _post_outcome(self, action: Action, outcome: Outcome) -> bool:
        state = self._state
        card = action.forms
        if card is None or state.control is None or state.lost:
            return False
        try:
            with state.card_writes:
                action.card = await state.control.post(
                    card.outcome(outcome, by=action.decided_by, error=action.error)
                )
        except CORE_FAILURES as exc:
            state.log.error(f"Could not post the card of action {action.n}: {failure_text(exc)}")
            return False
        return True

    # ------------------------------------------------------------------ expiry, control chat lost

    async def run_expiry(self) -> None:
        """Expire and delete actions every minute (run in the agent's task group)."""
        while True:
            await self._state.clock.sleep(60)
            await self.expire()

    async def expire(self) -> None:
        """Expire pending actions whose time passed; delete decided ones after theirs (wall clock)."""
        state = self._state
        if state.stopping:  # the stop cancels what is pending
            return
        now = state.clock.wall()
        for action in state.book.expire_due(now):
            state.log.line(f"Action {action.n} expired.")
            await self.decide(action, Outcome.EXPIRED)
        for action in state.book.purge_due(now):
            self.stop_collecting(action)
            self._unjournal(action)

    def fail_pending(self) -> None:
        """The control chat is lost: each pending action fails (its card is left unedited)."""
        for action in self._state.book:
            if action.state is ActionState.PENDING:
                action.error = "control chat lost"
                action.apply(ActionEvent.CONTROL_CHAT_LOST)
                self.save(action)

    # ------------------------------------------------------------------ stop

    async def stop_actions(self) -> int:
        """The stop's work on actions; returns K, the pending and performing actions.

        New actions are refused from now on; once the cards being posted are posted, pending
        cards get the cancelled form and performing actions are marked interrupted (their
        perform's end edits no card): an approved card gets the interrupted form, and an action
        without a card yet (mode host, or a send under a standing approval) gets its card
        posted in that form (or cancelled, when its perform never started). Returns once the
        outcome edits of performs that ended before the stop are done too.

        With ``--durable-actions`` pending actions are kept as they are (their cards keep their
        commands), the interrupted ones are journaled with an unknown outcome, so that no start
        performs them again, and K counts the interrupted and cancelled ones only;
        :attr:`kept` is then the number of actions the journal keeps.
        """
        state = self._state
        state.stopping = True
        journal = state.journal
        with anyio.CancelScope(shield=True):
            await state.card_writes.wait_idle()
            pending = state.book.pending() if journal is None else []
            performing = [
                a for a in state.book if a.state is ActionState.PERFORMING and not a.ended
            ]
            for action in performing:
                action.interrupted = True
                if journal is not None and not action.not_started:
                    journal.save(
                        replace(
                            row_of(action, state=ActionState.UNKNOWN),
                            error=action.error or OUTCOME_UNKNOWN,
                        )
                    )
            for action in pending:
                await self.edit_card(action, Outcome.CANCELLED)
            for action in performing:
                if action.not_started:
                    await self._post_outcome(action, Outcome.CANCELLED)
                    if journal is not None:
                        journal.remove(action.n)
                    continue
                if action.card is not None:
                    outcome = Outcome.INTERRUPTED
                    shown = await self.edit_card(action, outcome)
                else:
                    outcome = Outcome.HOST_INTERRUPTED if state.host_mode else Outcome.INTERRUPTED
                    shown = await self._post_outcome(action, outcome)
                if journal is not None:
                    journal.save(
                        replace(
                            row_of(action, state=ActionState.UNKNOWN),
                            error=action.error or OUTCOME_UNKNOWN,
                            outcome=outcome.value,
                            shown=shown,
                        )
                    )
            await state.card_writes.wait_idle()
        if journal is not None:
            self.kept = sum(1 for a in state.book if not a.not_started)
        return len(pending) + len(performing)

    # ------------------------------------------------------------------ a start (--durable-actions)

    def restore(self, rows: Iterable[JournalRow], *, cards_here: bool) -> list[Action]:
        """Put the journal's actions back in memory, before the server takes calls.

        Pending and decided actions come back as they were; one that was performing is marked
        "outcome unknown" (:data:`~simplex_protocols.mcp_server.actions.START_TRANSITIONS`) and
        journaled so at once: whatever its perform did, no start performs it again. The counter
        goes on after the highest number. No I/O but the journal's; :meth:`repair_cards` then
        brings the cards up to date.

        Args:
            rows: the journal's rows.
            cards_here: the journal's card IDs are items of the current agent control chat
                (else, after ``--reset-owners``, the cards are gone: pending ones are posted
                again).

        Returns:
            The restored actions, by number.
        """
        state = self._state
        restored: list[Action] = []
        for row in rows:
            action = action_of(row)
            if not cards_here:
                action.card = None
                action.shown = action.shown or action.state.decided
            if action.state is ActionState.PERFORMING:
                action.resume(ActionEvent.RESTARTED)
                action.error = OUTCOME_UNKNOWN
                action.outcome = (
                    Outcome.HOST_UNKNOWN
                    if state.host_mode
                    else (Outcome.STANDING_UNKNOWN if action.standing else Outcome.UNKNOWN)
                )
                action.shown = False
                state.log.line(f"Action {action.n}: outcome unknown, not performed again.")
            state.book.restore(action)
            self.save(action)
            restored.append(action)
            state.next_action = max(state.next_action, action.n + 1)
        return restored

    async def repair_cards(self) -> None:
        """Bring the restored actions' cards up to date: the outcome a card is still to show
        (the server ended before the edit), and the card of a pending action whose item ID the
        journal lacks (found among the control chat's recent items, else posted now)."""
        state = self._state
        if state.control is None or state.lost:
            return
        for action in state.book:
            if action.state is ActionState.PENDING and action.card is None:
                action.card = await self._find_card(action)
                if action.card is None and action.forms is not None:
                    try:
                        with state.card_writes:
                            action.card = await state.control.post(action.forms.pending())
                    except CORE_FAILURES as exc:
                        state.log.error(
                            f"Could not post the card of action {action.n}: {failure_text(exc)}"
                        )
                self.save(action)
            elif action.state.decided and action.outcome is not None and not action.shown:
                action.shown = await self._show(action, action.outcome)
                self.save(action)

    async def _find_card(self, action: Action) -> int | None:
        """The item ID of the action's pending card among the control chat's recent items."""
        state = self._state
        card = action.forms
        if card is None or state.control is None:
            return None
        text = card.pending()
        try:
            page = ChatView(await state.api.get_chat(state.control.ref, count=_CARD_SEARCH))
        except CORE_FAILURES:
            return None
        for item in page.items():
            if item.direction == "groupSnd" and item.text == text:
                return item.item_id
        return None


def traced_line(action: Action, text: str) -> str:
    """A log line about an owner's decision on ``action``, ending with the trace ID of the
    call that created it when that call carried trace context (an owner command runs in no
    call, so the log does not add it by itself)."""
    if action.trace_id is None or current_trace() is not None:
        return text
    return f"{text} (trace {action.trace_id})"


@dataclass(frozen=True, slots=True)
class ActionToolParts:
    """What the tools whose calls are actions (connect, send, leave) work with: the agent's
    state, its chats, and the approvals of their actions."""

    state: AgentState
    chats: ChatReader
    approvals: Approvals
