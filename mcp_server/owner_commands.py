"""The owner commands of the agent control chat: /approve, /reject, /revoke, /pending, /list.

Commands arrive from the event pump (:meth:`OwnerCommands.submit`, never awaited there) and run
one at a time, in arrival order, in :meth:`OwnerCommands.run` (plan "ownerCommand"): a command
awaits the custom data write of the one before it. The grammar and the replies that need no I/O
are in :mod:`simplex_protocols.mcp_server.control`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import anyio

from simplex_protocols.core import ChatInfoView, ChatRef, MemberView
from simplex_protocols.errors import CoreError, UnexpectedResponseError

from .actions import ActionEvent, ActionState, ActionTool
from .approvals import Approvals, traced_line
from .cards import Outcome
from .chats import ChatReader
from .control import (
    COMMANDS_HELP,
    COMMANDS_HELP_CALLS,
    ListEntry,
    OwnerCommand,
    iso_time,
    list_reply,
    parse_owner_command,
    pending_lines,
)
from .errors import ToolError
from .log import failure_text
from .state import AgentState
from .text import fold, name_md, read_chat_ref

__all__ = ["OwnerCommands"]

#: Owner commands waiting to run; more at once are dropped with an error line.
_QUEUE: Final = 1000


class OwnerCommands:
    """Runs the owner commands.

    Args:
        state: the agent's state.
        approvals: decides and performs actions.
        chats: reads the chats that /approve CHAT all and /revoke name.
        list_entries: the chats for /list.
    """

    def __init__(
        self,
        state: AgentState,
        approvals: Approvals,
        chats: ChatReader,
        list_entries: Callable[[], Awaitable[list[ListEntry]]],
    ) -> None:
        self._state = state
        self._approvals = approvals
        self._chats = chats
        self._list_entries = list_entries
        #: ``--call-tool``: the bot's address and phrase of a new call action
        #: (:meth:`simplex_protocols.mcp_server.tools_call.CallTool.bot_of_action`).
        self.bot_of_call: Callable[[int], tuple[str, str] | None] = lambda n: None
        self._send, self._receive = anyio.create_memory_object_stream[
            tuple[Mapping[str, Any], str]
        ](_QUEUE)

    def submit(self, sender: Mapping[str, Any], text: str) -> None:
        """Queue a command from a member of the agent control chat (no await)."""
        try:
            self._send.send_nowait((sender, text))
        except anyio.WouldBlock:
            self._state.log.error("Too many owner commands at once; one was dropped.")

    async def run(self) -> None:
        """Run the queued commands, one at a time (in the agent's task group)."""
        async with self._receive:
            async for member, text in self._receive:
                try:
                    await self.owner_command(member, text)
                except (CoreError, UnexpectedResponseError, ToolError) as exc:
                    detail = exc.message if isinstance(exc, ToolError) else failure_text(exc)
                    self._state.log.error(f"Owner command failed: {detail}")

    async def _reply(self, text: str) -> None:
        state = self._state
        if state.control is not None and not state.lost:
            await state.control.post(text)

    async def owner_command(self, sender: Mapping[str, Any], text: str) -> None:
        """Run one owner command from ``sender`` (a member of the agent control chat)."""
        state = self._state
        command = parse_owner_command(text)
        if command is None or state.stopping:  # once the server stops, no /approve performs
            return
        await self._approvals.expire()
        calls = state.config.call_tool
        if command.verb == "unknown" or (command.calls and not calls):
            await self._reply(COMMANDS_HELP_CALLS if calls else COMMANDS_HELP)
            return
        member = MemberView(sender)
        sender_id = member.member_id
        if sender_id is None or sender_id not in state.approver_ids():
            if state.config.owners:
                await self._reply("Only the owners listed in --owners approve actions.")
            else:
                await self._reply("Only owners approve actions.")
            return
        sender_name = member.display_name
        if command.calls and command.verb == "approve":
            await self._approve_calls(command, sender_name, sender_id)
        elif command.calls:
            await self._revoke_calls(command)
        elif command.verb in ("approve", "reject") and not command.all:
            await self._decide(command, sender_name)
        elif command.verb == "approve":
            await self._approve_all(command, sender_name, sender_id)
        elif command.verb == "revoke":
            await self._revoke(command)
        elif command.verb == "pending":
            await self._reply(
                pending_lines([(a.n, a.pending_text, a.expires) for a in state.book.pending()])
            )
        elif command.verb == "list":
            await self._reply(list_reply(await self._list_entries()))

    async def _decide(self, command: OwnerCommand, sender_name: str) -> None:
        n_text = command.n or ""
        action = self._state.book.get(int(n_text)) if len(n_text) <= 18 else None
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
            self._approvals.start_perform(action)
        else:
            action.apply(ActionEvent.REJECTED)
            self._state.log.line(
                traced_line(action, f"Action {action.n} rejected by {fold(sender_name)}.")
            )
            await self._approvals.decide(action, Outcome.REJECTED)

    def _calls_data(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """Copies of the control chat's custom data, its ``simplexMcp`` and the standing call
        approvals in it (``--call-tool``), by bot address."""
        data = dict(self._state.control_data)
        mcp = data.get("simplexMcp")
        mcp = dict(mcp) if isinstance(mcp, Mapping) else {}
        calls = mcp.get("calls")
        calls = dict(calls) if isinstance(calls, Mapping) else {}
        return data, mcp, calls

    async def _write_calls(
        self, data: dict[str, Any], mcp: dict[str, Any], calls: dict[str, Any]
    ) -> None:
        state = self._state
        mcp["calls"] = calls
        data["simplexMcp"] = mcp
        state.control_data = data
        if state.control is not None:
            await state.custom.write(state.control.ref, data)

    async def _approve_calls(self, command: OwnerCommand, sender_name: str, sender_id: int) -> None:
        """``/approve N calls``: call N is performed, and every later call to its bot is
        standing, until ``/revoke N calls`` (``--call-tool``)."""
        state = self._state
        n_text = command.n or ""
        action = state.book.get(int(n_text)) if len(n_text) <= 18 else None
        if (
            action is None
            or action.tool is not ActionTool.CALL
            or action.state is not ActionState.PENDING
            or action.card is None
        ):
            await self._reply(f"Action {n_text} is not a pending call.")
            return
        bot = self.bot_of_call(action.n)
        if bot is not None:
            address, phrase = bot
            data, mcp, calls = self._calls_data()
            calls[address] = {
                "approvedBy": sender_name,
                "approvedById": sender_id,
                "approvedAt": iso_time(state.clock.wall()),
                "n": action.n,
            }
            await self._write_calls(data, mcp, calls)
            await self._reply(
                f"Approved calls to {phrase} by {name_md(sender_name)}. /'revoke {action.n} calls'"
            )
        pending = [action]
        if bot is not None:
            pending += [
                a
                for a in state.book.pending()
                if a is not action
                and a.tool is ActionTool.CALL
                and a.card is not None
                and self.bot_of_call(a.n) is not None
                and self.bot_of_call(a.n) == bot
            ]
        for each in pending:
            each.decided_by = sender_name
            self._approvals.start_perform(each)

    async def _revoke_calls(self, command: OwnerCommand) -> None:
        """``/revoke N calls``: calls to the bot approved by ``/approve N calls`` need approval
        again."""
        data, mcp, calls = self._calls_data()
        n_text = command.n or ""
        found = [
            a for a, e in calls.items() if isinstance(e, Mapping) and str(e.get("n")) == n_text
        ]
        if not found:
            await self._reply(f"Calls of action {n_text} have no standing approval.")
            return
        for address in found:
            del calls[address]
        await self._write_calls(data, mcp, calls)
        await self._reply(f"Calls to the bot of action {n_text} need approval again.")

    async def _chat_of(self, chat: str) -> tuple[ChatRef, ChatInfoView] | None:
        """The agent's chat that an owner command names: its reference and info, or ``None``."""
        ref = read_chat_ref(chat)
        if ref is None or self._state.is_control(ref):
            return None
        info = await self._chats.chat_info(ref)
        return None if info is None else (ref, info)

    async def _approve_all(self, command: OwnerCommand, sender_name: str, sender_id: int) -> None:
        state = self._state
        chat = command.chat or ""
        found = await self._chat_of(chat)
        if found is None or str(found[1].ref) != chat:
            await self._reply(f"No chat {chat}. /list shows the agent's chats.")
            return
        ref, info = found
        data = dict(state.custom.of(info))
        data["simplexMcp"] = {
            "approvedBy": sender_name,
            "approvedById": sender_id,
            "approvedAt": iso_time(state.clock.wall()),
        }
        await state.custom.write(ref, data)
        subject = self._chats.subject(ref, info)
        await self._reply(
            f"Approved for {subject.phrase(with_simplex_name=False)} ({chat}) by {name_md(sender_name)}. /'revoke {chat}'"
        )
        for action in state.book.pending():
            if (
                action.tool is ActionTool.SEND
                and action.input.get("chat") == chat
                and action.card is not None
            ):
                action.decided_by = sender_name
                self._approvals.start_perform(action)

    async def _revoke(self, command: OwnerCommand) -> None:
        chat = command.chat or ""
        found = await self._chat_of(chat)
        data = dict(self._state.custom.of(found[1])) if found is not None else {}
        if found is None or "simplexMcp" not in data:
            await self._reply(f"Messages to {chat} have no standing approval.")
            return
        ref, info = found
        del data["simplexMcp"]
        await self._state.custom.write(ref, data or None)
        subject = self._chats.subject(ref, info)
        await self._reply(
            f"Messages to {subject.phrase(with_simplex_name=False)} ({chat}) need approval again."
        )
