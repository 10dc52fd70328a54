"""A connect's way to its connection: what it waits for, and its states as a transition table.

Once approved, a connect reads the plan of its target again and joins it (plan "perform
connect"); the join's response names what completes the connection, a :data:`Connection`:

- :class:`PendingConnection`: a one-time link or an address without a chat yet
  (``sentInvitation``, ``sentConfirmation``: ``connection.pccConnId``), completed when that
  connection becomes a contact's or a group host's;
- :class:`ContactConnection`: a contact (prepared, or ``startedConnectionToContact``,
  ``sentInvitationToContact``, ``contactAlreadyExists``), completed by ``contactConnected``;
- :class:`GroupConnection`: a group, business chat or channel (prepared, or
  ``startedConnectionToGroup``), completed by ``userJoinedGroup``.

=================  ===========  ===========
event              from         to
=================  ===========  ===========
join sent          joining      waiting
chat connected     joining      connected
chat connected     waiting      connected
chat connected     requested    connected
known, unconnected joining      requested
deadline           waiting      requested
perform failed     joining      failed
perform failed     waiting      failed
=================  ===========  ===========

"Requested" is the end of the wait without the connection: the action is done, "connection
requested"; the peer may still accept later, and the connection completes then while the action
is in memory. No I/O here.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from simplex_protocols.core import ChatRef, ContactRef, GroupRef

from .errors import InvalidTransitionError

__all__ = [
    "CONNECT_TRANSITIONS",
    "CONNECT_WAIT_CAP_S",
    "ConnectEvent",
    "ConnectState",
    "Connection",
    "ContactConnection",
    "GroupConnection",
    "PendingConnection",
    "completed_by",
    "connect_deadline",
    "next_connect_state",
]


@dataclass(frozen=True, slots=True)
class PendingConnection:
    """A pending connection (``pccConnId``): the peer's contact or group host is not known yet."""

    conn_id: int

    @property
    def chat(self) -> ChatRef | None:
        return None


@dataclass(frozen=True, slots=True)
class ContactConnection:
    """The contact chat ``@contact_id``."""

    contact_id: int

    @property
    def chat(self) -> ChatRef | None:
        return ContactRef(self.contact_id)


@dataclass(frozen=True, slots=True)
class GroupConnection:
    """The group chat ``#group_id`` (a group, business chat or channel)."""

    group_id: int

    @property
    def chat(self) -> ChatRef | None:
        return GroupRef(self.group_id)


#: What completes a connect.
Connection = PendingConnection | ContactConnection | GroupConnection


def completed_by(conn: Connection, chat: ChatRef, peer_conn_id: int | None) -> bool:
    """Whether a connected chat completes ``conn``.

    ``chat`` is the contact of ``contactConnected`` or the group of ``userJoinedGroup``, and
    ``peer_conn_id`` the connection of that contact or of the group's host member: a pending
    connection becomes the contact's (Store/Direct.hs) or the host member's (Store/Groups.hs).
    """
    if isinstance(conn, PendingConnection):
        return conn.conn_id == peer_conn_id
    return conn.chat == chat


class ConnectState(enum.Enum):
    """Where a performing (or done) connect is on its way to the connection."""

    JOINING = "joining"
    WAITING = "waiting"
    CONNECTED = "connected"
    REQUESTED = "requested"
    FAILED = "failed"


class ConnectEvent(enum.Enum):
    """What moves a connect on."""

    JOIN_SENT = "join sent"
    CHAT_CONNECTED = "chat connected"
    KNOWN_UNCONNECTED = "known, unconnected"
    DEADLINE = "deadline"
    PERFORM_FAILED = "perform failed"


#: The transition table: (state, event) -> next state. A pair not in the table is refused.
CONNECT_TRANSITIONS: Final[Mapping[tuple[ConnectState, ConnectEvent], ConnectState]] = {
    (ConnectState.JOINING, ConnectEvent.JOIN_SENT): ConnectState.WAITING,
    (ConnectState.JOINING, ConnectEvent.CHAT_CONNECTED): ConnectState.CONNECTED,
    (ConnectState.WAITING, ConnectEvent.CHAT_CONNECTED): ConnectState.CONNECTED,
    (ConnectState.REQUESTED, ConnectEvent.CHAT_CONNECTED): ConnectState.CONNECTED,
    (ConnectState.JOINING, ConnectEvent.KNOWN_UNCONNECTED): ConnectState.REQUESTED,
    (ConnectState.WAITING, ConnectEvent.DEADLINE): ConnectState.REQUESTED,
    (ConnectState.JOINING, ConnectEvent.PERFORM_FAILED): ConnectState.FAILED,
    (ConnectState.WAITING, ConnectEvent.PERFORM_FAILED): ConnectState.FAILED,
}


#: The wait for a connection ends at most this long after the action's creation, so the
#: card's outcome edit falls within the 24 hours a sent message stays editable.
CONNECT_WAIT_CAP_S: Final = 23 * 3600 + 50 * 60


def connect_deadline(*, wait_s: float, created: float, start: float, wall: float) -> float:
    """The end of a connect's wait on the monotonic clock: ``wait_s`` from ``start``, at most
    :data:`CONNECT_WAIT_CAP_S` after ``created`` (wall clock; ``wall`` is the wall time at
    ``start``)."""
    cap = start + (created + CONNECT_WAIT_CAP_S - wall)
    return min(start + wait_s, cap)


def next_connect_state(state: ConnectState, event: ConnectEvent, *, action: int) -> ConnectState:
    """The state after ``event``.

    Raises:
        InvalidTransitionError: the event is not allowed in ``state`` (``action`` names the
            action in the message).
    """
    nxt = CONNECT_TRANSITIONS.get((state, event))
    if nxt is None:
        raise InvalidTransitionError(
            f"action {action}: connect {event.value} in state {state.value}"
        )
    return nxt
