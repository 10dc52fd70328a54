"""Waiting on events with an injected clock, and collecting the items of a chat.

:func:`wait_event` races an :class:`anyio.Event` against the clock, so tests move time with a
``ManualClock`` instead of sleeping. :class:`ChatCollector` keeps the message items that arrive
in one chat (from ``newChatItems``), replaces live messages at their updates and drops deleted
ones, and wakes its waiter at each change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import anyio

from simplex_protocols._clock import Clock

from .messages import is_live, is_received_message, item_id

__all__ = ["ChatCollector", "wait_event"]


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


class ChatCollector:
    """The received message items of one chat, in arrival order.

    Args:
        chat: the chat reference.
        clock: for the time of the last arrival.
        keep: the most items kept; later ones are counted in :attr:`overflow`.
        above: only items with an ID above this are kept (``None``: all).
    """

    def __init__(
        self, chat: str, clock: Clock, *, keep: int = 100, above: int | None = None
    ) -> None:
        self.chat = chat
        self._clock = clock
        self.keep = keep
        self.above = above
        self.items: dict[int, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
        self.overflow = 0
        self.last_arrival: float | None = None
        self.first_arrival: float | None = None
        self.changed = anyio.Event()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def add(self, chat_info: Mapping[str, Any], chat_item: Mapping[str, Any]) -> None:
        """A new item of the chat (``newChatItems``); only received messages are kept."""
        if not is_received_message(chat_item):
            return
        item = item_id(chat_item)
        if item is None or item in self.items or (self.above is not None and item <= self.above):
            return
        if len(self.items) >= self.keep:
            self.overflow += 1
        else:
            self.items[item] = (chat_info, chat_item)
        now = self._clock.now()
        self.last_arrival = now
        if self.first_arrival is None:
            self.first_arrival = now
        self._wake()

    def update(self, chat_info: Mapping[str, Any], chat_item: Mapping[str, Any]) -> None:
        """An item was updated (``chatItemUpdated``, e.g. a live message)."""
        item = item_id(chat_item)
        if item is not None and item in self.items:
            self.items[item] = (chat_info, chat_item)
            self.last_arrival = self._clock.now()
            self._wake()

    def delete(self, item: int) -> None:
        """An item was deleted; a deleted live message is dropped."""
        if item in self.items:
            del self.items[item]
            self._wake()

    def drop_not_above(self, item: int) -> None:
        """Keep only items with an ID above ``item`` (the sent item of a send)."""
        self.above = item
        for key in [k for k in self.items if k <= item]:
            del self.items[key]

    def any_live(self) -> bool:
        return any(is_live(chat_item) for _, chat_item in self.items.values())

    def final_items(self) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
        """The kept items that are not live, in arrival order."""
        return [(ci, item) for ci, item in self.items.values() if not is_live(item)]

    def live_count(self) -> int:
        return sum(1 for _, item in self.items.values() if is_live(item))
