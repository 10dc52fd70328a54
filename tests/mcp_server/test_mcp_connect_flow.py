"""A connect's way to its connection: the transition table over every state and event, what
completes each kind of connection, and the end of the wait."""

from __future__ import annotations

import pytest

from simplex_protocols.core import ContactRef, GroupRef
from simplex_protocols.mcp_server.actions import ActionBook, ActionState, ActionTool
from simplex_protocols.mcp_server.connect_flow import (
    CONNECT_TRANSITIONS,
    CONNECT_WAIT_CAP_S,
    ConnectEvent,
    ConnectState,
    ContactConnection,
    GroupConnection,
    PendingConnection,
    completed_by,
    connect_deadline,
    next_connect_state,
)
from simplex_protocols.mcp_server.errors import InvalidTransitionError

S, E = ConnectState, ConnectEvent

#: The table of the module's docstring, written out: every allowed pair and where it leads.
EXPECTED = {
    (S.JOINING, E.JOIN_SENT): S.WAITING,
    (S.JOINING, E.CHAT_CONNECTED): S.CONNECTED,
    (S.WAITING, E.CHAT_CONNECTED): S.CONNECTED,
    (S.REQUESTED, E.CHAT_CONNECTED): S.CONNECTED,
    (S.JOINING, E.KNOWN_UNCONNECTED): S.REQUESTED,
    (S.WAITING, E.DEADLINE): S.REQUESTED,
    (S.JOINING, E.PERFORM_FAILED): S.FAILED,
    (S.WAITING, E.PERFORM_FAILED): S.FAILED,
}


def test_the_table_is_the_documented_one() -> None:
    assert dict(CONNECT_TRANSITIONS) == EXPECTED


@pytest.mark.parametrize("state", list(ConnectState))
@pytest.mark.parametrize("event", list(ConnectEvent))
def test_every_state_and_event(state: ConnectState, event: ConnectEvent) -> None:
    expected = EXPECTED.get((state, event))
    if expected is None:
        with pytest.raises(InvalidTransitionError) as refused:
            next_connect_state(state, event, action=7)
        assert refused.value.code == "invalid_transition"
        assert "action 7" in str(refused.value)
    else:
        assert next_connect_state(state, event, action=7) is expected


def test_connected_and_failed_are_final() -> None:
    for final in (S.CONNECTED, S.FAILED):
        assert not any(state is final for state, _ in CONNECT_TRANSITIONS)


def test_an_action_advances_and_wakes_its_waiters() -> None:
    book = ActionBook()
    action = book.create(
        1,
        ActionTool.CONNECT,
        {"target": "@x.simplex"},
        now=0.0,
        expire_s=60.0,
        state=ActionState.PERFORMING,
    )
    assert action.connect_state is S.JOINING and not action.connected
    changed = action.changed
    assert action.advance(E.JOIN_SENT) is S.WAITING
    assert changed.is_set() and not action.connected
    action.advance(E.CHAT_CONNECTED)
    assert action.connected
    with pytest.raises(InvalidTransitionError):
        action.advance(E.DEADLINE)
    assert action.connect_state is S.CONNECTED


def test_what_completes_each_kind_of_connection() -> None:
    contact, group = ContactRef(4), GroupRef(4)
    assert completed_by(ContactConnection(4), contact, None)
    assert not completed_by(ContactConnection(4), group, None)
    assert not completed_by(ContactConnection(5), contact, 4)
    assert completed_by(GroupConnection(4), group, 99)
    assert not completed_by(GroupConnection(4), contact, 99)
    # a pending connection becomes the contact's or the host member's: matched by its ID
    assert completed_by(PendingConnection(9), contact, 9)
    assert completed_by(PendingConnection(9), group, 9)
    assert not completed_by(PendingConnection(9), contact, 8)
    assert not completed_by(PendingConnection(9), contact, None)
    assert (ContactConnection(4).chat, GroupConnection(4).chat, PendingConnection(9).chat) == (
        contact,
        group,
        None,
    )


def test_the_wait_ends_after_wait_seconds_at_most_23_h_50_min_after_creation() -> None:
    # monotonic start 1000 is wall 5000 (the action was created at wall 4000)
    assert connect_deadline(wait_s=60, created=4000.0, start=1000.0, wall=5000.0) == 1060.0
    late = connect_deadline(wait_s=86_400, created=4000.0, start=1000.0, wall=5000.0)
    assert late == 1000.0 + (4000.0 + CONNECT_WAIT_CAP_S - 5000.0)
    assert CONNECT_WAIT_CAP_S == 23 * 3600 + 50 * 60
