"""The send tool (plan "send" and "responses"): the checks of the message, the action, the send
once it is approved, and the responses that arrive after it.

Responses come from events, not from reads after the sent item: group items sort by the
sender's time, so a response can sort before the sent item, while item IDs only grow. A
response that arrives before ``/_send`` returns is kept, and one with an ID below the sent item
is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simplex_protocols.core import ChatRef, ChatView, GroupRef, MemberView, first_item_id
from simplex_protocols.core import commands as cmds
from simplex_protocols.errors import CommandArgumentError, CoreError, UnexpectedResponseError

from .actions import Action, ActionTool
from .approvals import ActionToolParts, Prepare
from .cards import Card, ReplyTo, send_card
from .chats import unknown_chat
from .errors import ToolError
from .messages import ROLE_ORDER, message_of
from .state import CallContext
from .text import mention_name
from .waits import MAX_KEPT_RESPONSES, ChatCollector, wait_for_responses

__all__ = ["SendTool"]


@dataclass(frozen=True, slots=True)
class SendTool(ActionToolParts):
    """The send tool and the perform of its actions."""

    async def send(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The send tool (plan "send")."""
        wait_s = float(arguments.get("wait", 60))
        idle_s = float(arguments.get("idle", 30))
        limit = int(arguments.get("limit", 50))
        outcome, existing = await self.approvals.call(
            ActionTool.SEND, arguments, ctx, lambda: self._checks(arguments)
        )
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

    async def _checks(
        self, arguments: Mapping[str, Any]
    ) -> tuple[Prepare, Mapping[str, Any] | None]:
        """The input checks of send; the card builder and the chat's standing approval."""
        chat_text = str(arguments.get("chat", ""))
        chat = self.chats.checked_ref(chat_text)
        info = await self.chats.chat_info(chat)
        if info is None or info.ref != chat:
            raise ToolError(unknown_chat(chat_text))
        if not info.connected:
            raise ToolError(
                f"The agent is not connected to {chat} and can't post; list shows connected: false."
            )
        membership = info.membership
        if info.is_group:
            role = (membership.role if membership is not None else None) or "observer"
            if role in ROLE_ORDER and ROLE_ORDER.index(role) < ROLE_ORDER.index("author"):
                raise ToolError(f"The agent has role {role} in {chat} and can't post.")
        reply: ReplyTo | None = None
        reply_to = arguments.get("reply_to")
        if isinstance(reply_to, int):
            reply = await self._reply_item(chat, reply_to)
        mention_names: dict[int, str] = {}
        mentions = arguments.get("mention")
        if isinstance(mentions, list) and mentions:
            if not isinstance(chat, GroupRef):
                raise ToolError(
                    f"mention: {chat} is a contact chat; mentions apply to groups and channels."
                )
            mention_names = await self._mention_names(chat, mentions)
        subject = self.chats.subject(chat, info)
        text = str(arguments.get("text", ""))
        standing = self.state.approval_of(info)

        def build(n: int) -> tuple[Card, str, str]:
            card = send_card(
                n, subject, str(chat), text, reply_to=reply, mentions=list(mention_names.values())
            )
            return (
                card,
                f"send to {subject.log_phrase()} ({chat})",
                f"send to {subject.phrase(with_simplex_name=False)}",
            )

        return build, standing

    async def _reply_item(self, chat: ChatRef, item: int) -> ReplyTo:
        """The item a send replies to: its sender and text."""
        missing = ToolError(f"reply_to: {chat} has no item {item}.")
        try:
            page = ChatView(await self.state.api.get_chat(chat, around=item, count=0))
        except (CoreError, UnexpectedResponseError, CommandArgumentError):
            raise missing from None
        for chat_item in page.items():
            if chat_item.item_id == item:
                text = chat_item.text or chat_item.item_text or ""
                return ReplyTo(chat_item.sender_name(page.info), text)
        raise missing

    async def _mention_names(self, chat: GroupRef, mentions: Sequence[Any]) -> dict[int, str]:
        """The display names of the mentioned members."""
        by_id = {
            MemberView(m).member_id: m for m in await self.state.api.list_members(chat.group_id)
        }
        names: dict[int, str] = {}
        for member_id in mentions:
            member = by_id.get(member_id) if isinstance(member_id, int) else None
            if member is None:
                raise ToolError(f"mention: {chat} has no member {member_id}.")
            names[member_id] = MemberView(member).display_name
        return names

    async def perform(self, action: Action) -> None:
        """Perform an approved send: the text with its mentions, collected responses from now."""
        state = self.state
        chat = self.chats.checked_ref(str(action.input.get("chat", "")))
        text = str(action.input.get("text", ""))
        mention_ids = action.input.get("mention")
        mentions: dict[str, int] = {}
        if isinstance(mention_ids, list) and mention_ids and isinstance(chat, GroupRef):
            prefix: list[str] = []
            for member_id, name in (await self._mention_names(chat, mention_ids)).items():
                written = "@" + mention_name(name)
                mentions[name] = member_id
                if written not in text:
                    prefix.append(written)
            if prefix:
                text = " ".join(prefix) + " " + text
        collector = ChatCollector(chat, state.clock, keep=MAX_KEPT_RESPONSES)
        action.collector = collector
        state.collectors.add(collector)
        reply_to = action.input.get("reply_to")
        composed = cmds.composed_text(
            text,
            quoted_item_id=reply_to if isinstance(reply_to, int) else None,
            mentions=mentions,
        )
        sent = first_item_id(await state.api.send_messages(chat, [composed]))
        action.chat = chat
        action.item = sent
        action.sent_at = state.clock.now()
        if sent is not None:
            collector.drop_not_above(sent)

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
        state = self.state
        clock = state.clock
        # the chat as the call named it
        chat_text = str(action.input.get("chat", ""))
        chat = action.chat or self.chats.checked_ref(chat_text)
        collector = action.collector
        if collector is None:
            collector = ChatCollector(chat, clock, keep=MAX_KEPT_RESPONSES, above=action.item)
            action.collector = collector
            state.collectors.add(collector)
        sent_at = action.sent_at
        start = clock.now() if attached_done or sent_at is None else sent_at
        deadline = start + wait_s
        action.open += 1
        try:

            def end() -> float:
                if collector.last_arrival is not None and not collector.any_live():
                    return min(deadline, collector.last_arrival + idle_s)
                return deadline

            await wait_for_responses(collector, clock, ctx.progress, end, chat_text)
            info = await self.chats.chat_info(chat)
            own = await self.chats.own_name(chat, info) if info is not None else state.profile_name
            finals = collector.final_items()
            returned = finals[:limit]
            more = len(finals) - len(returned) + collector.live_count() + collector.overflow
            messages = [
                m
                for chat_info, item in returned
                if (m := message_of(chat_text, chat_info, item, own_name=own)) is not None
            ]
            await self.chats.read(chat, [m["item"] for m in messages])
        finally:
            action.open -= 1
        self.approvals.forget(action)
        result: dict[str, Any] = {"action": action.n, "status": "done", "chat": chat_text}
        if action.item is not None:
            result["item"] = action.item
        result["responses"] = messages
        result["more"] = more
        return result
