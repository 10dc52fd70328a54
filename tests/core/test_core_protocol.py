"""CoreProtocol, the sans-IO correlation of commands and responses: frames in, events out."""

from __future__ import annotations

from typing import Any

import pytest

from simplex_protocols.core import (
    CoreProtocol,
    EventReceived,
    InvalidFrame,
    ResponseReceived,
    UnmatchedResponse,
)


def test_send_command_registers_it_and_builds_the_cli_frame() -> None:
    proto = CoreProtocol()
    corr_id, frame = proto.send_command("/_get chats 1")
    assert (corr_id, frame) == ("1", {"corrId": "1", "cmd": "/_get chats 1"})
    assert proto.in_flight == {"1": "/_get chats 1"}
    assert proto.send_command("/user")[0] == "2"


def test_injected_corr_id_source_is_used() -> None:
    ids = iter(["a", "b"])
    proto = CoreProtocol(lambda: next(ids))
    assert proto.send_command("/user")[1] == {"corrId": "a", "cmd": "/user"}
    assert proto.send_command("/users")[0] == "b"


def test_a_source_repeating_an_id_in_flight_is_refused() -> None:
    proto = CoreProtocol(lambda: "same")
    proto.send_command("/user")
    with pytest.raises(ValueError, match="already in flight"):
        proto.send_command("/users")


RESP = {"type": "activeUser", "user": {"userId": 1}}
UNKNOWN_EVENT = {"type": "somethingNew", "extra": {"nested": [1, 2]}, "user": {"userId": 1}}

# (frame, expected events) with command "/user" in flight as corrId "1"
FRAME_TABLE: list[tuple[str, Any, list[Any]]] = [
    ("response", {"corrId": "1", "resp": RESP}, [ResponseReceived("1", "/user", RESP)]),
    (
        "response with unknown frame fields",
        {"corrId": "1", "resp": RESP, "remoteHostId": 3},
        [ResponseReceived("1", "/user", RESP)],
    ),
    ("event", {"resp": UNKNOWN_EVENT}, [EventReceived(UNKNOWN_EVENT)]),
    ("event with null corrId", {"corrId": None, "resp": RESP}, [EventReceived(RESP)]),
    ("response to nobody", {"corrId": "9", "resp": RESP}, [UnmatchedResponse("9", RESP)]),
]


@pytest.mark.parametrize(
    ("frame", "expected"), [(f, e) for _, f, e in FRAME_TABLE], ids=[n for n, _, _ in FRAME_TABLE]
)
def test_frames_in_events_out(frame: Any, expected: list[Any]) -> None:
    proto = CoreProtocol()
    proto.send_command("/user")
    events = proto.receive_frame(frame)
    assert events == expected
    for event in events:
        if isinstance(event, ResponseReceived | EventReceived | UnmatchedResponse):
            payload = event.response if not isinstance(event, EventReceived) else event.event
            assert payload is frame["resp"]  # passed through, not copied


INVALID_TABLE: list[tuple[str, Any, str, str | None]] = [
    ("a list", [1, 2], "not_an_object", None),
    ("a string", "hello", "not_an_object", None),
    ("numeric corrId", {"corrId": 1, "resp": RESP}, "bad_corr_id", None),
    ("no resp, command in flight", {"corrId": "1"}, "no_resp", "1"),
    ("resp not an object", {"corrId": "1", "resp": [1]}, "no_resp", "1"),
    ("no resp, nobody waiting", {"corrId": "5"}, "no_resp", None),
    ("event without resp", {"other": 1}, "no_resp", None),
]


@pytest.mark.parametrize(
    ("frame", "code", "corr_id"),
    [(f, c, i) for _, f, c, i in INVALID_TABLE],
    ids=[n for n, _, _, _ in INVALID_TABLE],
)
def test_invalid_frames_are_reported_not_raised(frame: Any, code: str, corr_id: str | None) -> None:
    proto = CoreProtocol()
    proto.send_command("/user")
    [event] = proto.receive_frame(frame)
    assert isinstance(event, InvalidFrame)
    assert (event.code, event.corr_id) == (code, corr_id)
    if corr_id is not None:
        assert event.command == "/user"
        assert proto.in_flight == {}


def test_a_response_matches_once_then_is_unmatched() -> None:
    proto = CoreProtocol()
    proto.send_command("/user")
    assert isinstance(proto.receive_frame({"corrId": "1", "resp": RESP})[0], ResponseReceived)
    assert isinstance(proto.receive_frame({"corrId": "1", "resp": RESP})[0], UnmatchedResponse)


def test_forgotten_command_gets_an_unmatched_response() -> None:
    proto = CoreProtocol()
    proto.send_command("/user")
    proto.forget("1")
    proto.forget("1")
    assert proto.receive_frame({"corrId": "1", "resp": RESP}) == [UnmatchedResponse("1", RESP)]


def test_connection_lost_returns_every_command_in_flight_once() -> None:
    proto = CoreProtocol()
    for cmd in ("/user", "/users", "/_stop"):
        proto.send_command(cmd)
    assert proto.connection_lost() == [("1", "/user"), ("2", "/users"), ("3", "/_stop")]
    assert proto.connection_lost() == []
    assert proto.in_flight == {}


def test_out_of_order_responses_go_to_their_commands() -> None:
    proto = CoreProtocol()
    cmds = [f"/_info @{i}" for i in range(1, 6)]
    ids = [proto.send_command(c)[0] for c in cmds]
    got = {}
    for corr_id in reversed(ids):
        [event] = proto.receive_frame(
            {"corrId": corr_id, "resp": {"type": "contactInfo", "n": corr_id}}
        )
        assert isinstance(event, ResponseReceived)
        got[event.command] = event.response["n"]
    assert got == dict(zip(cmds, ids, strict=True))
