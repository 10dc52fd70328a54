"""The agent's chats as the tools read them over the chat core: a chat's info, the name the
agent has in it, its fields in results, its recent items, and marking items read.

Chat references from tool input are checked here (1 to 15 digits; never the agent control
chat), so that no tool can name the control chat.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from simplex_protocols.core import ChatInfoView, ChatItemView, ChatRef, ChatView, ContactRef
from simplex_protocols.errors import CoreError

from .cards import Subject
from .errors import ToolError
from .log import CORE_FAILURES
from .messages import chat_kind, chat_type, commands_of, known_peer_type
from .plans import PlanSummary
from .state import AgentState
from .text import read_chat_ref

__all__ = ["ChatReader", "unknown_chat"]


def unknown_chat(chat: str) -> str:
    """The tool error for a chat that is not one of the agent's."""
    return f"No chat {chat}. list shows the agent's chats."


def is_store_error(exc: CoreError) -> bool:
    """The core has no such chat: a store error, or its contact or group is not found."""
    return exc.chat_error.get("type") == "errorStore" or exc.error_type in (
        "contactNotFound",
        "groupNotFound",
    )


class ChatReader:
    """Reads the agent's chats through the chat core.

    Args:
        state: the agent's state (the core, the profile's name, the control chat).
    """

    def __init__(self, state: AgentState) -> None:
        self._state = state
        self._api = state.api

    def checked_ref(self, chat: str) -> ChatRef:
        """The chat reference of tool input, refusing the control chat and bad references.

        Raises:
            ToolError: not ``@N`` or ``#N`` with 1 to 15 digits, or the agent control chat.
        """
        ref = read_chat_ref(chat)
        if ref is None or self._state.is_control(ref):
            raise ToolError(unknown_chat(chat))
        return ref

    async def chat_info(self, chat: ChatRef) -> ChatInfoView | None:
        """``/_get chat <chat> count=0``: the chat's info, or ``None`` for a store error."""
        try:
            a_chat = await self._api.get_chat(chat, count=0)
        except CoreError as exc:
            if is_store_error(exc):
                return None
            raise
        return ChatView(a_chat).info

    @staticmethod
    def membership_name(info: ChatInfoView) -> str | None:
        """The agent's name in a group: its membership's."""
        membership = info.membership
        return (membership.display_name or None) if membership is not None else None

    async def known_as(self, chat: ChatRef, info: ChatInfoView) -> str | None:
        """The agent's name in a group (its membership's), or its incognito name with a contact."""
        if info.is_group:
            return self.membership_name(info)
        if not info.incognito or not isinstance(chat, ContactRef):
            return None
        try:
            contact_info = await self._api.contact_info(chat.contact_id)
        except CORE_FAILURES:
            return None
        profile = contact_info.get("customUserProfile")
        name = profile.get("displayName") if profile is not None else None
        return name if isinstance(name, str) else None

    async def own_name(self, chat: ChatRef, info: ChatInfoView) -> str:
        """The agent's name in a chat: the incognito profile's or its profile's."""
        if info.incognito:
            known = await self.known_as(chat, info)
            if known:
                return known
        return self._state.profile_name

    @staticmethod
    def subject(chat: ChatRef, info: ChatInfoView) -> Subject:
        """What a card about this chat names."""
        return Subject(
            kind=chat_kind(info),
            name=info.display_name,
            simplex_name=info.simplex_name,
            chat=str(chat),
            incognito=info.incognito,
        )

    async def chat_fields(
        self, chat: ChatRef, info: ChatInfoView, summary: PlanSummary | None
    ) -> dict[str, Any]:
        """The chat fields of a connect's result (plan "connect": result)."""
        fields: dict[str, Any] = {"type": chat_type(info), "name": info.display_name}
        simplex_name = info.simplex_name or (summary.simplex_name if summary is not None else None)
        if simplex_name:
            fields["simplex_name"] = simplex_name
        peer = known_peer_type(info.peer_type)
        if peer is not None:
            fields["peer_type"] = peer
        if summary is not None and summary.description:
            fields["description"] = summary.description
        if summary is not None and summary.welcome:
            fields["welcome"] = summary.welcome
        commands = commands_of(info.commands) or (summary.commands if summary is not None else None)
        if commands:
            fields["commands"] = commands
        if info.incognito:
            known = await self.known_as(chat, info)
            if known:
                fields["known_as"] = known
        if info.is_group:
            membership = info.membership
            role = membership.role if membership is not None else None
            if role:
                fields["role"] = role
        return fields

    async def snapshot(self, chat: ChatRef, count: int) -> list[ChatItemView]:
        """The chat's last ``count`` items (none when the core refuses)."""
        try:
            a_chat = await self._api.get_chat(chat, count=count)
        except CORE_FAILURES:
            return []
        return list(ChatView(a_chat).items())

    async def page(self, chat: ChatRef, **pagination: Any) -> list[ChatItemView]:
        """A page of the chat's items (``/_get chat`` with ``around=``, ``after=``, ...)."""
        return list(ChatView(await self._api.get_chat(chat, **pagination)).items())

    async def read(self, chat: ChatRef, items: Sequence[int]) -> None:
        """Mark items read (``/_read chat items``); nothing for no items."""
        if items:
            await self._api.read_chat_items(chat, items)
