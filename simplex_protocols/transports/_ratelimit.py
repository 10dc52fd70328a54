"""Request rate limits on an injected clock: a sliding window per key (sans-IO)."""

from __future__ import annotations

import math
from collections import OrderedDict, deque
from dataclasses import dataclass

__all__ = ["RateLimit", "RateLimiter"]


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
    """Sliding-window counters, one per key, with a bound on the keys it remembers.

    Args:
        limit: the limit every key gets.
        max_keys: how many keys are remembered; past it the least recently seen key is
            forgotten (its count starts again), so a flood of fresh keys cannot exhaust memory.

    The caller passes the time (``now``), on whatever clock it uses.
    """

    def __init__(self, limit: RateLimit, *, max_keys: int = 10_000) -> None:
        if max_keys < 1:
            raise ValueError("max_keys must be at least 1")
        self.limit = limit
        self._max_keys = max_keys
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def check(self, key: str, now: float) -> int | None:
        """Count one request for ``key`` at ``now``.

        Returns:
            ``None`` when the request is admitted (it is counted), or the whole number of
            seconds after which a request will be admitted (at least 1; the refused request is
            not counted).
        """
        window = self._seen.get(key)
        if window is None:
            window = deque()
            self._seen[key] = window
            while len(self._seen) > self._max_keys:
                self._seen.popitem(last=False)
        else:
            self._seen.move_to_end(key)
        start = now - self.limit.per_s
        while window and window[0] <= start:
            window.popleft()
        if len(window) < self.limit.requests:
            window.append(now)
            return None
        # The oldest request in the window leaves it at window[0] + per_s.
        return max(1, math.ceil(window[0] + self.limit.per_s - now))
