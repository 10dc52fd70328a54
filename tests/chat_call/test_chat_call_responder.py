"""The bot's side: which /_call to answer, and replies that quote the command and fit."""

from __future__ import annotations

from typing import Any

import pytest

from simplex_protocols import _wire
from simplex_protocols.chat_call import (
    CallCommand,
    CallDisposition,
    CallReply,
    build_reply,
    is_addressed_to,
    triage_call,
)
from simplex_protocols.chat_call.advanced import message_size, reply_budget
from simplex_protocols.errors import CallFormatError, MessageTooLargeError

ME = "Acme bot"


@pytest.mark.parametrize(
    ("text", "disposition", "protocol"),
    [
        ('/_call mcp {"id":1}', CallDisposition.ANSWER, "mcp"),
        ("/_call @'Acme bot' mcp {}", CallDisposition.ANSWER, "mcp"),
        ("/_call @Other mcp {}", CallDisposition.IGNORE, "mcp"),
        ("/_call @Other mcp {oops", CallDisposition.IGNORE, "mcp"),
        ("/_call @'Acme bot' mcp {oops", CallDisposition.ANSWER_ERROR, "mcp"),
        ("/_call mcp [1]", CallDisposition.ANSWER_ERROR, "mcp"),
        ("/_call mcp", CallDisposition.ANSWER_ERROR, "mcp"),
        ("/_call a2a\n{}", CallDisposition.ANSWER_ERROR, "a2a"),
        ("/_call MCP {}", CallDisposition.IGNORE, None),
        ("/_call", CallDisposition.IGNORE, None),
        ("/_call @ mcp {}", CallDisposition.IGNORE, None),
        ("/_call @acme mcp {}", CallDisposition.IGNORE, "mcp"),
    ],
)
@pytest.mark.requirement("CALL-BOT-1", "CALL-GRP-1", "CALL-GRP-2")
def test_triage(text: str, disposition: CallDisposition, protocol: str | None) -> None:
    incoming = triage_call(text, my_names=ME)
    assert incoming is not None
    assert (incoming.disposition, incoming.protocol) == (disposition, protocol)
    if disposition is CallDisposition.ANSWER:
        assert isinstance(incoming.command, CallCommand) and incoming.error is None
    else:
        assert incoming.error is not None or incoming.command is not None


def test_triage_keeps_the_raw_request_for_the_protocol_s_parse_error() -> None:
    incoming = triage_call('/_call mcp {"jsonrpc":"2.0",', my_names=ME)
    assert incoming is not None
    assert incoming.disposition is CallDisposition.ANSWER_ERROR
    assert incoming.request_text == '{"jsonrpc":"2.0",'
    assert incoming.error is not None and incoming.error.code == "request_not_json"


def test_triage_of_ordinary_text_is_none() -> None:
    assert triage_call("hello /_call mcp {}", my_names=ME) is None
    assert triage_call("/_callmcp {}", my_names=ME) is None


def test_several_names() -> None:
    assert (
        triage_call("/_call @acme mcp {}", my_names=[ME, "acme"]).disposition
        is CallDisposition.ANSWER
    )  # type: ignore[union-attr]


@pytest.mark.requirement("CALL-BOT-1")
def test_is_addressed_to() -> None:
    assert is_addressed_to(None, ME)
    assert is_addressed_to(ME, ME)
    assert not is_addressed_to("acme bot", ME)
    assert is_addressed_to("b", ["a", "b"])


# ---------------------------------------------------------------------------------- replies

COMMAND = '/_call mcp {"jsonrpc":"2.0","id":7,"method":"tools/call"}'


def oversize(message: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": message["id"],
        "error": {"code": -32603, "message": "too large"},
    }


@pytest.mark.requirement("CALL-REP-1", "CALL-REP-2")
def test_reply_quotes_the_command_and_is_compact_json() -> None:
    reply = build_reply(
        {"jsonrpc": "2.0", "id": 7, "result": {}},
        command_item_id=20,
        command_text=COMMAND,
        in_group=False,
    )
    assert reply == CallReply(
        '{"jsonrpc":"2.0","id":7,"result":{}}', 20, message_size(reply.text, quoted_text=COMMAND)
    )
    assert reply.composed_message() == {
        "msgContent": {"type": "text", "text": '{"jsonrpc":"2.0","id":7,"result":{}}'},
        "quotedItemId": 20,
    }


@pytest.mark.requirement("CALL-SIZE-3")
def test_reply_over_the_limit_is_replaced_by_the_binding_s_error() -> None:
    room = reply_budget(COMMAND, in_group=True)
    # the reply is a string in the message JSON: each of its quote characters takes 2 bytes
    wrapper = _wire.aeson_string_size('{"id":7,"result":""}')
    fits = {"id": 7, "result": "a" * (room - wrapper)}
    assert not build_reply(
        fits, command_item_id=20, command_text=COMMAND, in_group=True, oversize=oversize
    ).replaced
    over = {"id": 7, "result": "a" * (room - wrapper + 1)}
    reply = build_reply(
        over, command_item_id=20, command_text=COMMAND, in_group=True, oversize=oversize
    )
    assert reply.replaced
    assert reply.text == '{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"too large"}}'
    # the same reply fits in a direct chat, where the quote is shorter
    assert not build_reply(
        over, command_item_id=20, command_text=COMMAND, in_group=False, oversize=oversize
    ).replaced


def test_reply_over_the_limit_without_a_replacement_raises() -> None:
    with pytest.raises(MessageTooLargeError) as info:
        build_reply({"x": "a" * 16_000}, command_item_id=20, command_text=COMMAND, in_group=False)
    assert info.value.limit == 15_602
    with pytest.raises(MessageTooLargeError):
        build_reply(
            "a" * 16_000,
            command_item_id=20,
            command_text=COMMAND,
            in_group=False,
            oversize=oversize,
        )


def test_a_command_near_the_limit_leaves_no_room_even_for_the_error() -> None:
    command = "/_call mcp " + '{"id":1,"x":"' + "a" * 15_300 + '"}'
    with pytest.raises(MessageTooLargeError):
        build_reply(
            {"id": 1, "result": {}},
            command_item_id=20,
            command_text=command,
            in_group=False,
            oversize=oversize,
        )


def test_text_replies_are_sent_as_they_are() -> None:
    reply = build_reply(
        "I only speak MCP.", command_item_id=3, command_text=COMMAND, in_group=False
    )
    assert reply.text == "I only speak MCP."


def test_a_reply_that_is_not_json_cannot_be_built() -> None:
    with pytest.raises(CallFormatError) as info:
        build_reply({"x": float("nan")}, command_item_id=3, command_text=COMMAND, in_group=False)
    assert info.value.code == "reply_not_json"
