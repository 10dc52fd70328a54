"""What the simulated network carries between cores, and what it keeps about them.

A :class:`Delivery` is one message in flight; a :class:`LinkTarget` is what a link key names;
a :class:`NameRecord` is a registered SimpleX name; a :class:`ServiceCall` is a Service RPC
request waiting for its response. The network and the cores both use them; neither owns them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._session import Session

__all__ = ["Delivery", "LinkTarget", "NameRecord", "ServiceCall"]

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
    ad: bytes
    payload: bytes
    signature: Any = None
    public_key: Any = None
