"""Waiting on events with an injected clock, and collecting the items of a chat.

:func:`wait_event` races an :class:`anyio.Event` against the clock, so tests move time with a
``ManualClock`` instead of sleeping; :func:`wait_until` waits for an end that can move, with the
calls' progress notifications. :class:`ChatCollector` keeps the message items that arrive
in one chat (from ``newChatItems``), replaces live messages at their updates and drops deleted
ones, and wakes its waiter at each change; :class:`Collectors` holds them by chat.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import anyio

from simplex_protocols._clock import Clock
from simplex_protocols.core import ChatItemView, ChatRef

from .control import utc_minutes

__all__ = [
    "MAX_KEPT_RESPONSES",
    "PROGRESS_INTERVAL_S",
    "ArrivedItem",
    "ChatCollector",
    "Collectors",
    "wait_event",
    "wait_for_responses",
    "wait_until",
    "wall_at",
]


async def wait_event(event: anyio.Event, clock: Clock, deadline: float | None) -> bool:
    """Wait until ``event`` is set (``True``) or the clock reaches ``deadline`` (``False``).

    ``deadline`` is on the clock's monotonic scale (``clock.now()``); the time left is read when
    the timer starts, so a clock moved on meanwhile is taken into account. ``None`` or an
    infinite deadline waits without a time limit.
    """
    if event.is_set():
        return True
    if deadline is not None and math.isinf(deadline):
        deadline = None
    if deadline is not None and deadline <= clock.now():
        return False
    fired = False
    async with anyio.create_task_group() as tg:

        async def waiter() -> None:
            nonlocal fired
            await event.wait()
            fired = True
            tg.cancel_scope.cancel()

        async def timer() -> None:
            assert deadline is not None
            await clock.sleep(deadline - clock.now())
            tg.cancel_scope.cancel()

        tg.start_soon(waiter)
        if deadline is not None:
            tg.start_soon(timer)
    return fired


#: Received items a send or a connect keeps; later ones count in ``more``.
MAX_KEPT_RESPONSES: Final = 100

#: Progress notifications: at once, then every this many seconds.
PROGRESS_INTERVAL_S: Final = 60.0


async def wait_until(
    clock: Clock,
    progress: Callable[[str], Awaitable[None]],
    end: Callable[[], float],
    changed: Callable[[], anyio.Event],
    message: Callable[[float], str],
) -> None:
    """Wait until the clock reaches ``end()`` (re-read at each change), with progress
    notifications at once and then every 60 s. ``end()`` of ``math.inf`` waits for a change.

    Args:
        clock: the clock.
        progress: sends one progress notification.
        end: the end of the wait, on the monotonic scale.
        changed: the event set at the next change of what ``end`` reads.
        message: the progress text for the current end.
    """
    last = -math.inf
    while True:
        now = clock.now()
        deadline = end()
        if now >= deadline:
            return
        if now - last >= PROGRESS_INTERVAL_S:
            last = now
            await progress(message(deadline))
        event = changed()
        if now >= end():
            return
        await wait_event(event, clock, min(end(), last + PROGRESS_INTERVAL_S))


def wall_at(clock: Clock, deadline: float) -> float:
    """The wall-clock time of a monotonic ``deadline``."""
    return clock.wall() + (deadline - clock.now())


async def wait_for_responses(
    collector: ChatCollector,
    clock: Clock,
    progress: Callable[[str], Awaitable[None]],
    end: Callable[[], float],
    chat: str,
) -> None:
    """Wait until ``end()`` while the responses in ``chat`` arrive, with the progress
    ``<k> responses in <chat>; waiting until <time>.`` (plan "responses")."""
    await wait_until(
        clock,
        progress,
        end,
        lambda: collector.changed,
        lambda until: (
            f"{len(collector.items)} responses in {chat}; waiting until {utc_minutes(wall_at(clock, until))}."
        ),
    )


#: A chat's item as it arrived: its ``chatInfo`` and its ``chatItem``.
ArrivedItem = tuple[Mapping[str, Any], Mapping[str, Any]]


class ChatCollector:
    """The received message items of one chat, in arrival order.

    Args:
        chat: the chat.
        clock: for the time of the last arrival.
        keep: the most items kept; later ones are counted in :attr:`overflow`.
        above: only items with an ID above this are kept (``None``: all).
    """

    def __init__(
        self, chat: ChatRef, clock: Clock, *, keep: int = 100, above: int | None = None
    ) -> None:
        self.chat = chat
        self._clock = clock
        self.keep = keep
        self.above = above
        self.items: dict[int, ArrivedItem] = {}
        #: The IDs of the kept items that are live (still streamed by their sender).
        self._live: set[int] = set()
        self.overflow = 0
        self.last_arrival: float | None = None
        self.first_arrival: float | None = None
        self.changed = anyio.Event()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def _keep(self, item: int, chat_info: Mapping[str, Any], chat_item: ChatItemView) -> None:
        self.items[item] = (chat_info, chat_item.raw)
        if chat_item.live:
            self._live.add(item)
        else:
            self._live.discard(item)

    def add(self, chat_info: Mapping[str, Any], chat_item: Mapping[str, Any]) -> None:
        """A new item of the chat (``newChatItems``); only received messages are kept."""
        view = ChatItemView(chat_item)
        if not view.is_received:
            return
        item = view.item_id
        if item is None or item in self.items or (self.above is not None and item <= self.above):
            return
        if len(self.items) >= self.keep:
            self.overflow += 1
        else:
            self._keep(item, chat_info, view)
        now = self._clock.now()
        self.last_arrival = now
        if self.first_arrival is None:
            self.first_arrival = now
        self._wake()

    def update(self, chat_info: Mapping[str, Any], chat_item: Mapping[str, Any]) -> None:
        """An item was updated (``chatItemUpdated``, e.g. a live message)."""
        view = ChatItemView(chat_item)
        item = view.item_id
        if item is not None and item in self.items:
            self._keep(item, chat_info, view)
            self.last_arrival = self._clock.now()
            self._wake()

    def delete(self, item: int) -> None:
        """An item was deleted; a deleted live message is dropped."""
        if item in self.items:
            del self.items[item]
            self._live.discard(item)
            self._wake()

    def drop_not_above(self, item: int) -> None:
        """Keep only items with an ID above ``item`` (the sent item of a send)."""
        self.above = item
        for key in [k for k in self.items if k <= item]:
            del self.items[key]
            self._live.discard(key)

    def any_live(self) -> bool:
        return bool(self._live)

    def final_items(self) -> list[ArrivedItem]:
        """The kept items that are not live, in arrival order."""
        return [arrived for item, arrived in self.items.items() if item not in self._live]

    def live_count(self) -> int:
        return len(self._live)


class Collectors:
    """The collectors of the chats, by chat: where each new, updated or deleted item goes."""

    def __init__(self) -> None:
        self._by_chat: dict[ChatRef, set[ChatCollector]] = {}

    def __contains__(self, chat: object) -> bool:
        return chat in self._by_chat

    def add(self, collector: ChatCollector) -> None:
        """Start collecting: the collector gets the chat's items from now on."""
        self._by_chat.setdefault(collector.chat, set()).add(collector)

    def remove(self, collector: ChatCollector) -> None:
        """Stop collecting (a collector not collecting is ignored)."""
        group = self._by_chat.get(collector.chat)
        if group is not None:
            group.discard(collector)
            if not group:
                del self._by_chat[collector.chat]

    def of(self, chat: ChatRef | None) -> list[ChatCollector]:
        """The collectors of ``chat`` (a copy: a collector may stop while the list is used)."""
        group = self._by_chat.get(chat) if chat is not None else None
        return list(group) if group else []
