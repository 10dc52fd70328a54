"""The actions state machine: transitions, attach rule, expiry and deletion."""

from __future__ import annotations

import pytest

from simplex_protocols.mcp_server.actions import (
    MAX_PENDING_ACTIONS,
    TRANSITIONS,
    ActionBook,
    ActionEvent,
    ActionState,
    ActionTool,
    InvalidTransitionError,
    action_key,
)

HOUR = 3600.0


def test_every_transition_of_the_table() -> None:
    expected = {
        (ActionState.PENDING, ActionEvent.CARD_POST_FAILED): ActionState.FAILED,
        (ActionState.PENDING, ActionEvent.CONTROL_CHAT_LOST): ActionState.FAILED,
        (ActionState.PENDING, ActionEvent.APPROVED): ActionState.PERFORMING,
        (ActionState.PENDING, ActionEvent.REJECTED): ActionState.REJECTED,
        (ActionState.PENDING, ActionEvent.EXPIRED): ActionState.EXPIRED,
        (ActionState.PERFORMING, ActionEvent.PERFORMED): ActionState.DONE,
        (ActionState.PERFORMING, ActionEvent.PERFORM_FAILED): ActionState.FAILED,
    }
    assert dict(TRANSITIONS) == expected


@pytest.mark.parametrize("state", list(ActionState))
@pytest.mark.parametrize("event", list(ActionEvent))
def test_each_state_and_event(state: ActionState, event: ActionEvent) -> None:
    book = ActionBook()
    action = book.create(1, ActionTool.SEND, {"chat": "@4", "text": "x"}, now=0, expire_s=HOUR)
    action.state = state
    nxt = TRANSITIONS.get((state, event))
    if nxt is None:
        with pytest.raises(InvalidTransitionError):
            action.apply(event)
        assert action.state is state
    else:
        assert action.apply(event) is nxt
        assert action.settled.is_set() == nxt.decided


def test_an_action_starts_pending_or_performing() -> None:
    book = ActionBook()
    assert (
        book.create(1, ActionTool.SEND, {"chat": "@4", "text": "x"}, now=0, expire_s=HOUR).state
        is ActionState.PENDING
    )
    assert book.create(
        2,
        ActionTool.SEND,
        {"chat": "@4", "text": "y"},
        now=0,
        expire_s=HOUR,
        state=ActionState.PERFORMING,
        standing=True,
    ).standing
    with pytest.raises(ValueError):
        book.create(3, ActionTool.SEND, {}, now=0, expire_s=HOUR, state=ActionState.DONE)
    with pytest.raises(ValueError):
        book.create(1, ActionTool.SEND, {}, now=0, expire_s=HOUR)


def test_attach_rule_same_tool_and_action_fields() -> None:
    book = ActionBook()
    send = book.create(
        7, ActionTool.SEND, {"chat": "#9", "text": "hi", "wait": 600}, now=0, expire_s=HOUR
    )
    # wait, idle and limit are not action fields: the call attaches.
    assert (
        book.find(
            ActionTool.SEND, action_key(ActionTool.SEND, {"chat": "#9", "text": "hi", "idle": 5})
        )
        is send
    )
    assert (
        book.find(ActionTool.SEND, action_key(ActionTool.SEND, {"chat": "#9", "text": "hi!"}))
        is None
    )
    assert (
        book.find(
            ActionTool.SEND,
            action_key(ActionTool.SEND, {"chat": "#9", "text": "hi", "reply_to": 3}),
        )
        is None
    )
    assert book.find(ActionTool.LEAVE, action_key(ActionTool.LEAVE, {"chat": "#9"})) is None
    connect = book.create(
        8, ActionTool.CONNECT, {"target": "@directory.simplex"}, now=0, expire_s=HOUR
    )
    assert (
        book.find(
            ActionTool.CONNECT,
            action_key(
                ActionTool.CONNECT, {"target": "@directory.simplex", "incognito": False, "wait": 5}
            ),
        )
        is connect
    )
    assert (
        book.find(
            ActionTool.CONNECT,
            action_key(ActionTool.CONNECT, {"target": "@directory.simplex", "incognito": True}),
        )
        is None
    )


def test_action_keys() -> None:
    assert action_key(ActionTool.CONNECT, {"target": "t"}) == ("t", False, None)
    assert action_key(ActionTool.SEND, {"chat": "#1", "text": "x", "mention": [44]}) == (
        "#1",
        "x",
        None,
        (44,),
    )
    assert action_key(ActionTool.LEAVE, {"chat": "@4", "extra": 1}) == ("@4",)


def test_pending_count_and_limit() -> None:
    book = ActionBook()
    for n in range(1, MAX_PENDING_ACTIONS + 1):
        book.create(n, ActionTool.SEND, {"chat": "@4", "text": str(n)}, now=0, expire_s=HOUR)
    assert book.pending_count() == MAX_PENDING_ACTIONS == 20
    book.get(1).apply(ActionEvent.REJECTED)  # type: ignore[union-attr]
    assert book.pending_count() == 19
    assert [a.n for a in book.pending()] == list(range(2, 21))


def test_expiry_on_the_wall_clock() -> None:
    book = ActionBook()
    a = book.create(1, ActionTool.SEND, {"chat": "@4", "text": "a"}, now=100, expire_s=HOUR)
    b = book.create(2, ActionTool.SEND, {"chat": "@4", "text": "b"}, now=200, expire_s=HOUR)
    c = book.create(
        3,
        ActionTool.SEND,
        {"chat": "@4", "text": "c"},
        now=0,
        expire_s=HOUR,
        state=ActionState.PERFORMING,
    )
    assert book.expire_due(100 + HOUR - 1) == []
    assert book.expire_due(100 + HOUR) == [a]
    assert a.state is ActionState.EXPIRED
    assert b.state is ActionState.PENDING
    assert c.state is ActionState.PERFORMING  # only pending actions expire


def test_decided_actions_with_no_open_call_are_deleted_after_expires() -> None:
    book = ActionBook()
    a = book.create(1, ActionTool.SEND, {"chat": "@4", "text": "a"}, now=0, expire_s=HOUR)
    b = book.create(2, ActionTool.SEND, {"chat": "@4", "text": "b"}, now=0, expire_s=HOUR)
    c = book.create(3, ActionTool.SEND, {"chat": "@4", "text": "c"}, now=0, expire_s=HOUR)
    a.apply(ActionEvent.REJECTED)
    b.apply(ActionEvent.REJECTED)
    b.open = 1
    assert book.purge_due(HOUR - 1) == []
    assert book.purge_due(HOUR) == [a]
    assert book.get(1) is None
    assert book.get(2) is b  # a call still waits on it
    assert book.get(3) is c  # pending
    book.remove(b)
    assert len(book) == 1


def test_notify_wakes_waiters_with_a_fresh_event() -> None:
    book = ActionBook()
    a = book.create(1, ActionTool.SEND, {"chat": "@4", "text": "a"}, now=0, expire_s=HOUR)
    first = a.changed
    a.apply(ActionEvent.APPROVED)
    assert first.is_set()
    assert not a.changed.is_set()
