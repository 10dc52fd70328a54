"""The receive and list tools (plan "receive and list"), and the chats of the /list reply.

``receive`` reads pages from the oldest unread item (``/_get chat ... around=``, then
``after=`` pages of 100) until it has ``limit`` + 1 new messages, so a chat with thousands of
unread items costs a few pages; messages arriving during the call are collected from events.
``list`` reads ``/_get chats`` 100 at a time.
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, Final

from simplex_protocols.core import ChatInfoView, ChatItemView, ChatRef, ChatView
from simplex_protocols.errors import CoreError

from .chats import ChatReader, unknown_chat
from .control import ListEntry, utc_minutes
from .errors import ToolError
from .messages import chat_kind, chat_type, known_peer_type, message_of
from .state import AgentState, CallContext
from .waits import ArrivedItem, ChatCollector, wait_until, wall_at

__all__ = ["ReadTools"]

#: Items a receive keeps of those arriving during the call.
_RECEIVE_KEEP: Final = 10_000
#: The page size of ``/_get chat ... after=`` and of ``/_get chats``.
_PAGE: Final = 100
#: ``/_get chats`` pages read at most.
_MAX_CHAT_PAGES: Final = 10_000


class _UnreadItems:
    """The unread items of the pages a receive has read, sorted as it reads them.

    Each item is looked at once, as its page arrives: new messages (received, unread, not
    live) to return, other unread items that are not messages (events, features) to mark
    read with them, and how many unread items the pages held (the rest count in ``more``).
    """

    __slots__ = ("_info", "new", "seen", "skipped")

    def __init__(self, chat_info: Mapping[str, Any]) -> None:
        self._info = chat_info
        self.new: dict[int, ArrivedItem] = {}
        self.skipped: list[int] = []
        self.seen = 0

    def add(self, page: Sequence[ChatItemView]) -> int | None:
        """Sort a page's items; the ID of its last item (``None``: no page follows it)."""
        for chat_item in page:
            if not chat_item.unread:
                continue
            self.seen += 1
            item = chat_item.item_id
            if item is None:
                continue
            if chat_item.is_received and not chat_item.live:
                self.new[item] = (self._info, chat_item.raw)
            elif not chat_item.is_message:
                self.skipped.append(item)
        return page[-1].item_id if page else None


@dataclass(frozen=True, slots=True)
class ReadTools:
    """The receive and list tools."""

    state: AgentState
    chats: ChatReader

    # ------------------------------------------------------------------ receive

    async def receive(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The receive tool (plan "receive")."""
        state = self.state
        chat_text = str(arguments.get("chat", ""))
        wait_s = float(arguments.get("wait", 0))
        limit = int(arguments.get("limit", 50))
        chat = self.chats.checked_ref(chat_text)
        arrived = ChatCollector(chat, state.clock, keep=_RECEIVE_KEEP)
        state.collectors.add(arrived)
        try:
            try:
                first = ChatView(await state.api.get_chat(chat, initial=1))
            except CoreError as exc:
                if exc.chat_error.get("type") == "errorStore":
                    raise ToolError(unknown_chat(chat_text)) from None
                raise
            info = first.info
            if info.ref != chat:
                raise ToolError(unknown_chat(chat_text))
            unread_count = first.unread_count
            unread = _UnreadItems(info.raw)
            min_unread = first.min_unread_item_id
            if unread_count > 0 and min_unread is not None:
                last_id = unread.add(await self.chats.page(chat, around=min_unread, count=0))
                while last_id is not None and len(unread.new) < limit + 1:
                    page = await self.chats.page(chat, after=last_id, count=_PAGE)
                    last_id = unread.add(page)
                    if len(page) < _PAGE:
                        break
            new, skipped = unread.new, unread.skipped
            if not new and wait_s > 0:
                deadline = state.clock.now() + wait_s
                await wait_until(
                    state.clock,
                    ctx.progress,
                    lambda: -math.inf if arrived.final_items() else deadline,
                    lambda: arrived.changed,
                    lambda until: (
                        f"No new messages in {chat}; waiting until {utc_minutes(wall_at(state.clock, until))}."
                    ),
                )
            for arrival in arrived.final_items():
                item = ChatItemView(arrival[1]).item_id
                if item is not None and item not in new:
                    new[item] = arrival
            own = await self.chats.own_name(chat, info)
            ordered = list(new.values())
            returned = ordered[:limit]
            ref_text = str(chat)
            messages = [
                m
                for chat_info, chat_item in returned
                if (m := message_of(ref_text, chat_info, chat_item, own_name=own)) is not None
            ]
            for message in messages:
                message["new"] = True
            more = (
                len(ordered)
                - len(returned)
                + max(0, unread_count - unread.seen)
                + arrived.live_count()
                + arrived.overflow
            )
            await self.chats.read(chat, [m["item"] for m in messages] + skipped)
            return {"chat": ref_text, "messages": messages, "more": more}
        finally:
            state.collectors.remove(arrived)

    # ------------------------------------------------------------------ list

    async def _agent_chats(self) -> AsyncGenerator[tuple[str, ChatRef, ChatInfoView, ChatView]]:
        """``/_get chats`` page by page, newest first: every contact and group chat but the
        control chat, once, with its reference (as text and as a value) and info.

        Each page is read when the one before it is used up, and its views are made one chat
        at a time, so a thousand chats never hold a thousand views, or every page, at once.
        """
        state = self.state
        control = state.control.ref if state.control is not None else None
        seen: set[str] = set()
        before: str | None = None
        for _ in range(_MAX_CHAT_PAGES):
            page = await state.api.get_chats(
                state.user_id, pending_connections=False, count=_PAGE, before=before
            )
            for a_chat in page:
                chat = ChatView(a_chat)
                info = chat.info
                ref = info.ref
                if ref is None or ref == control:
                    continue
                text = str(ref)
                if text in seen:
                    continue
                seen.add(text)
                yield text, ref, info, chat
            if len(page) < _PAGE:
                return
            before = ChatView(page[-1]).info.chat_ts
            if before is None:
                return

    async def list_chats(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The list tool (plan "list")."""
        chats: list[dict[str, Any]] = []
        async with aclosing(self._agent_chats()) as agent_chats:
            async for text, ref, info, chat in agent_chats:
                incognito = info.incognito
                # only a contact with an incognito profile needs a command for known_as
                known = (
                    await self.chats.known_as(ref, info) if incognito and info.is_direct else None
                )
                chats.append(self._entry(text, info, chat, incognito, known))
        actions = [a.listed() for a in self.state.book]
        return {"chats": chats, "actions": actions}

    def _entry(
        self,
        text: str,
        info: ChatInfoView,
        chat: ChatView,
        incognito: bool,
        known_as: str | None,
    ) -> dict[str, Any]:
        """A chat as list shows it (``incognito``: the chat's ``info.incognito``, read once;
        ``known_as``: a contact's incognito name)."""
        entry: dict[str, Any] = {"chat": text, "type": chat_type(info), "name": info.display_name}
        simplex_name = info.simplex_name
        if simplex_name:
            entry["simplex_name"] = simplex_name
        peer = known_peer_type(info.peer_type)
        if peer:
            entry["peer_type"] = peer
        entry["incognito"] = incognito
        known = self.chats.membership_name(info) if info.is_group else known_as
        if known:
            entry["known_as"] = known
        entry["connected"] = info.connected
        entry["unread"] = chat.unread_count
        if self.state.approval_of(info) is not None:
            entry["approved"] = True
        return entry

    async def list_entries(self) -> list[ListEntry]:
        """The chats of the owner's /list: reference, type, name, approver, connected."""
        entries: list[ListEntry] = []
        async with aclosing(self._agent_chats()) as agent_chats:
            async for text, _, info, _ in agent_chats:
                approval = self.state.approval_of(info)
                approved_by = approval.get("approvedBy") if approval is not None else None
                by = approved_by if isinstance(approved_by, str) else None
                entries.append(
                    ListEntry(text, chat_kind(info), info.display_name, by, info.connected)
                )
        return entries
