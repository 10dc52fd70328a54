"""The leave tool (plan "leave"): delete a contact, or leave a group or channel and delete it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simplex_protocols.core import ContactRef, GroupRef

from .actions import Action, ActionTool
from .approvals import ActionToolParts, Prepare
from .cards import Card, leave_card
from .chats import unknown_chat
from .errors import ToolError
from .state import CallContext

__all__ = ["LeaveTool"]


@dataclass(frozen=True, slots=True)
class LeaveTool(ActionToolParts):
    """The leave tool and the perform of its actions."""

    async def leave(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The leave tool (plan "leave")."""
        chat_text = str(arguments.get("chat", ""))
        outcome, _ = await self.approvals.call(
            ActionTool.LEAVE, arguments, ctx, lambda: self._checks(chat_text)
        )
        if isinstance(outcome, dict):
            return outcome
        self.approvals.forget(outcome)
        return {"action": outcome.n, "status": "done", "chat": str(outcome.input.get("chat", ""))}

    async def _checks(self, chat_text: str) -> tuple[Prepare, None]:
        """The input checks of leave; the card builder."""
        chat = self.chats.checked_ref(chat_text)
        info = await self.chats.chat_info(chat)
        if info is None or info.ref != chat:
            raise ToolError(unknown_chat(chat_text))
        subject = self.chats.subject(chat, info)
        verb = "delete" if isinstance(chat, ContactRef) else "leave"

        def build(n: int) -> tuple[Card, str, str]:
            phrase = subject.phrase(with_simplex_name=False)
            return (
                leave_card(n, subject, str(chat)),
                f"{verb} {subject.log_phrase()} ({chat})",
                f"{verb} {phrase}",
            )

        return build, None

    async def perform(self, action: Action) -> None:
        """Perform an approved leave: ``@C`` deleted; ``#G`` left while the membership is
        current or pending (only an owner or a former member deletes a group), then deleted."""
        api = self.state.api
        chat = self.chats.checked_ref(str(action.input.get("chat", "")))
        if isinstance(chat, GroupRef):
            info = await self.chats.chat_info(chat)
            membership = info.membership if info is not None else None
            if membership is not None and (membership.current or membership.pending):
                await api.leave_group(chat.group_id)
        await api.delete_chat(chat, "full", notify=True)
        action.chat = chat
