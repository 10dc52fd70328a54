"""Request rate limits on an injected clock: a sliding window per key (sans-IO)."""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["MemoryRateCounter", "RateCounter", "RateLimit", "RateLimiter"]


@dataclass(frozen=True, slots=True)
class RateLimit:
    """At most ``requests`` requests in any ``per_s`` seconds.

    Attributes:
        requests: how many requests the window admits (at least 1).
        per_s: the window, in seconds (positive).
    """

    requests: int
    per_s: float

    def __post_init__(self) -> None:
        if isinstance(self.requests, bool) or not isinstance(self.requests, int):
            raise TypeError("requests must be an integer")
        if self.requests < 1:
            raise ValueError("requests must be at least 1")
        if not (isinstance(self.per_s, int | float) and math.isfinite(self.per_s)):
            raise ValueError("per_s must be a finite number of seconds")
        if self.per_s <= 0:
            raise ValueError("per_s must be positive")


class RateLimiter:
    """Sliding-window counters, one per key, in bounded memory that never forgets a limited key.

    A key is *limited* while its window holds ``limit.requests`` requests: it is refused until
    the oldest of them leaves the window. Keys below their limit are kept in the order they
    were last seen, and past ``max_keys`` the least recently seen of them is forgotten (its
    count starts again): keys cost a requester nothing, so a flood of fresh keys must not
    exhaust memory. A limited key is kept until its window ends, however many keys come after
    it; when ``max_keys`` keys are limited at once, a request that would limit one more is
    refused until the first of them is released, so memory stays within twice ``max_keys``
    windows.

    Args:
        limit: the limit every key gets.
        max_keys: how many keys below their limit are remembered, and how many limited keys.

    The caller passes the time (``now``), on whatever clock it uses.
    """

    def __init__(self, limit: RateLimit, *, max_keys: int = 10_000) -> None:
        if max_keys < 1:
            raise ValueError("max_keys must be at least 1")
        self.limit = limit
        self._max_keys = max_keys
        #: Keys below their limit, least recently seen first.
        self._open: OrderedDict[str, deque[float]] = OrderedDict()
        #: Keys at their limit. A refused request is not counted, so their windows do not
        #: change until they are released.
        self._limited: dict[str, deque[float]] = {}
        #: (when the oldest request leaves the window, key) for every limited key.
        self._releases: list[tuple[float, str]] = []

    def __len__(self) -> int:
        return len(self._open) + len(self._limited)

    def is_limited(self, key: str, now: float) -> bool:
        """Whether ``key`` is at its limit at ``now`` (and so remembered)."""
        self._release(now)
        return key in self._limited

    def retry_after(self, key: str, now: float) -> int | None:
        """Whether a request for ``key`` at ``now`` would be admitted; nothing is counted.

        Returns:
            ``None`` when it would be admitted, else the whole number of seconds after which
            one will be (at least 1).
        """
        self._release(now)
        window = self._limited.get(key)
        if window is not None:
            # The oldest request in the window leaves it at window[0] + per_s.
            return _seconds_until(window[0] + self.limit.per_s, now)
        window = self._open.get(key)
        count = len(_pruned(window, now - self.limit.per_s)) if window is not None else 0
        if count + 1 >= self.limit.requests and len(self._limited) >= self._max_keys:
            # Admitting it would limit one key more than can be remembered.
            return _seconds_until(self._releases[0][0], now)
        return None

    def record(self, key: str, now: float) -> None:
        """Count an admitted request for ``key`` at ``now`` (see :meth:`retry_after`)."""
        self._release(now)
        window = self._limited.get(key)
        if window is not None:  # refused requests are not counted; a caller's mistake
            return
        window = self._open.pop(key, None)
        if window is None:
            window = deque()
        _pruned(window, now - self.limit.per_s).append(now)
        if len(window) >= self.limit.requests:
            self._limited[key] = window
            heapq.heappush(self._releases, (window[0] + self.limit.per_s, key))
            return
        self._open[key] = window
        while len(self._open) > self._max_keys:
            self._open.popitem(last=False)

    def check(self, key: str, now: float) -> int | None:
        """Count one request for ``key`` at ``now``, when it is admitted.

        Returns:
            ``None`` when the request is admitted (it is counted), or the whole number of
            seconds after which a request will be admitted (at least 1; the refused request is
            not counted).
        """
        retry = self.retry_after(key, now)
        if retry is None:
            self.record(key, now)
        return retry

    def _release(self, now: float) -> None:
        """Move the keys whose oldest request has left the window back below their limit."""
        while self._releases and self._releases[0][0] <= now:
            _, key = heapq.heappop(self._releases)
            window = self._limited.pop(key, None)
            if window is None:
                continue
            _pruned(window, now - self.limit.per_s)
            self._open[key] = window
            self._open.move_to_end(key)
            while len(self._open) > self._max_keys:
                self._open.popitem(last=False)


@runtime_checkable
class RateCounter(Protocol):
    """Where a responder counts requests against its limits: in memory, or shared.

    Several processes serving one service share one counter (for example in PostgreSQL), so a
    caller cannot multiply its limit by the number of processes.
    """

    async def admit(
        self, checks: Sequence[tuple[str, RateLimit]], *, now: float, wall: float
    ) -> int | None:
        """Count one request against every ``(key, limit)`` of ``checks``, when all admit it.

        Every check is asked before any counts, so a request one of them refuses is counted by
        none.

        Args:
            checks: the keys and the limit of each (a key is counted under its own limit).
            now: the time on the responder's monotonic clock (a counter in one process).
            wall: the time on the responder's wall clock (a counter shared by processes).

        Returns:
            ``None`` when the request is admitted, else the whole number of seconds after which
            one will be (at least 1).
        """
        ...


class MemoryRateCounter:
    """A :class:`RateCounter` in this process: one :class:`RateLimiter` per limit.

    Args:
        max_keys: as :class:`RateLimiter`.
    """

    def __init__(self, *, max_keys: int = 10_000) -> None:
        self._max_keys = max_keys
        self._limiters: dict[RateLimit, RateLimiter] = {}

    def limiter(self, limit: RateLimit) -> RateLimiter:
        """The limiter that counts the keys of ``limit``."""
        limiter = self._limiters.get(limit)
        if limiter is None:
            limiter = self._limiters[limit] = RateLimiter(limit, max_keys=self._max_keys)
        return limiter

    def admit_now(self, checks: Sequence[tuple[str, RateLimit]], now: float) -> int | None:
        """:meth:`admit`, without awaiting (on the monotonic clock)."""
        limiters = [(self.limiter(limit), key) for key, limit in checks]
        for limiter, key in limiters:
            retry_after = limiter.retry_after(key, now)
            if retry_after is not None:
                return retry_after
        for limiter, key in limiters:
            limiter.record(key, now)
        return None

    async def admit(
        self, checks: Sequence[tuple[str, RateLimit]], *, now: float, wall: float
    ) -> int | None:
        """See :meth:`RateCounter.admit`; counted on ``now``."""
        return self.admit_now(checks, now)


def _pruned(window: deque[float], start: float) -> deque[float]:
    while window and window[0] <= start:
        window.popleft()
    return window


def _seconds_until(when: float, now: float) -> int:
    return max(1, math.ceil(when - now))
