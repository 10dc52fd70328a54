"""What the simulated network carries between cores, and what it keeps about them.

A :class:`Delivery` is one message in flight; a :class:`LinkTarget` is what a link key names;
a :class:`NameRecord` is a registered SimpleX name; a :class:`ServiceCall` is a Service RPC
request waiting for its response, kept in :class:`ServiceCalls`. The network and the cores both
use them; neither owns them.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._session import Session

__all__ = ["Delivery", "LinkTarget", "NameRecord", "ServiceCall", "ServiceCalls"]

JSON = dict[str, Any]


@dataclass
class LinkTarget:
    """What a link key resolves to on the network."""

    kind: str  # "address" | "group" | "invitation"
    core: str
    row_id: int  # LinkRow ID (address, group) or ConnRow ID (invitation)
    router: str


@dataclass
class NameRecord:
    """A registered SimpleX name."""

    name: str  # "directory.simplex"
    core: str
    user_id: int
    kind: str  # "contact" | "publicGroup"
    group_id: int | None = None
    known_domain: bool = True


@dataclass
class Delivery:
    """One message in flight from one core to another."""

    seq: int
    src_core: str
    dst_core: str
    dst: str  # agent connection ID, "link:<key>" or "svc:<call ID>"
    router: str
    body: JSON
    src_agent: str | None
    receipt: list[int] | None  # item IDs at the sender that this delivery carries
    due: float
    wire: str  # FIFO key: messages on one wire keep their order
    lost: bool = False
    accepted: bool = False
    msg_seq: int = 0


@dataclass
class ServiceCall:
    """A ``/_service_request`` waiting for its response (kept in memory only)."""

    call_id: str
    core: str
    session: Session | None
    corr_id: str
    user_id: int
    deadline: float
    router: str


class ServiceCalls(dict[str, ServiceCall]):
    """The calls waiting for their responses, by call ID, and the earliest of their deadlines.

    The network asks for the earliest deadline on every pump and every wait; with a thousand
    calls in flight a scan of them all made each command cost more the more calls were
    waiting. The deadlines are kept in a heap instead. An entry whose call was answered (taken
    out of the dict) stays in the heap until it comes to the top or the heap is rebuilt, so
    the dict's own ``pop``, ``del`` and ``get`` need nothing more.
    """

    def __init__(self) -> None:
        super().__init__()
        self._heap: list[tuple[float, int, str]] = []
        self._order = itertools.count()

    def __setitem__(self, call_id: str, call: ServiceCall) -> None:
        super().__setitem__(call_id, call)
        heapq.heappush(self._heap, (call.deadline, next(self._order), call_id))
        if len(self._heap) > 2 * len(self) + 64:
            # Mostly answered calls: rebuild, so the heap stays in proportion to the calls.
            self._heap = [(c.deadline, next(self._order), k) for k, c in self.items()]
            heapq.heapify(self._heap)

    def setdefault(self, call_id: str, call: ServiceCall) -> ServiceCall:
        if call_id not in self:
            self[call_id] = call
        return self[call_id]

    def update(  # type: ignore[override]
        self, other: Mapping[str, ServiceCall] | Iterable[tuple[str, ServiceCall]] = ()
    ) -> None:
        items = other.items() if isinstance(other, Mapping) else other
        for call_id, call in items:
            self[call_id] = call

    def _top(self) -> tuple[str, ServiceCall] | None:
        heap = self._heap
        while heap:
            deadline, _, call_id = heap[0]
            call = self.get(call_id)
            if call is not None and call.deadline == deadline:
                return call_id, call
            heapq.heappop(heap)  # answered, or replaced under the same ID
        return None

    def earliest_deadline(self) -> float | None:
        """The deadline of the call that times out first (``None`` when no call waits)."""
        top = self._top()
        return top[1].deadline if top is not None else None

    def pop_due(self, now: float) -> list[ServiceCall]:
        """Take out and return the calls whose deadline is ``now`` or earlier, earliest first."""
        due: list[ServiceCall] = []
        while (top := self._top()) is not None and top[1].deadline <= now:
            heapq.heappop(self._heap)
            del self[top[0]]
            due.append(top[1])
        return due
