"""A `/_call` too long to be answered with a quote (issue "Hardening", item 14; AMB-33).

The core carries a quoted message whole in a reply (``quoteContent`` keeps the quoted item's
``MsgContent``; no truncation in the sources read), while the spec has replies carry a
truncated quote and a bot answer each ``/_call`` (CALL-BOT-1). A command longer than the
message limit less a reply's fixed part and a short answer therefore has no reply that quotes
it. So the caller refuses to send one, and a bot that receives one (from another
implementation) answers with the binding's error without the quote.
"""

from __future__ import annotations

import anyio
import pytest
from transkit import WAIT_S, EchoBinding, Net, rpc_request

from simplex_protocols._wire import dumps, loads
from simplex_protocols.chat_call import format_call_command
from simplex_protocols.chat_call.advanced import reply_budget
from simplex_protocols.core import ContactRef
from simplex_protocols.errors import MessageTooLargeError
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES
from simplex_protocols.transports import ChatCaller, ChatResponder
from simplex_protocols.transports._chat_caller import MIN_ANSWER_BYTES

pytestmark = pytest.mark.anyio


def _long_request(room: int) -> dict[str, object]:
    """An echo request whose command leaves ``room`` bytes (about) beside its quote."""
    request = rpc_request(7, text="")
    base = reply_budget(format_call_command("echo", request))
    request["params"] = {"text": "x" * (base - room)}
    return request


async def _bot(net: Net) -> tuple[int, object]:
    alice = await net.peer("alice", peer_type="agent")
    bot = await net.bot("bot")
    bot_id, _ = await net.connect(alice, bot)
    responder = ChatResponder(bot.core, [EchoBinding(clock=net.clock)], clock=net.clock)
    await net.start(responder.serve)
    return bot_id, alice


@pytest.mark.requirement("CALL-SIZE-1")
async def test_a_command_leaving_no_room_for_a_quoted_answer_is_refused_by_the_caller() -> None:
    async with Net() as net:
        bot_id, alice = await _bot(net)
        request = _long_request(MIN_ANSWER_BYTES - 40)
        text = format_call_command("echo", request)
        # the command itself fits in a message: only its answer would not
        assert len(text.encode()) < MAX_CHAT_MESSAGE_BYTES
        with anyio.fail_after(WAIT_S), pytest.raises(MessageTooLargeError) as caught:
            await ChatCaller(alice.core, clock=net.clock).call(ContactRef(bot_id), "echo", request)
        assert caught.value.what == "the shortest reply quoting this command"
        assert caught.value.size > caught.value.limit == MAX_CHAT_MESSAGE_BYTES
        assert "over the limit" in str(caught.value)
        assert alice.received() == []


@pytest.mark.requirement("CALL-BOT-1", "CALL-SIZE-3")
async def test_a_bot_answers_a_command_too_long_to_quote_with_an_unquoted_error() -> None:
    async with Net() as net:
        bot_id, alice = await _bot(net)
        # another implementation sends it: no room at all beside the quote
        request = _long_request(10)
        text = format_call_command("echo", request)
        await alice.send(f"@{bot_id}", text)
        with anyio.fail_after(WAIT_S):
            await alice.wait_for(lambda: len(alice.received()) >= 1)
        (answer,) = alice.received()
        assert answer["chatItem"].get("quotedItem") is None
        body = loads(answer["chatItem"]["content"]["msgContent"]["text"])
        assert body == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32603, "message": "response too large"},
        }


async def test_a_command_with_room_for_a_short_answer_is_still_answered_with_a_quote() -> None:
    async with Net() as net:
        bot_id, alice = await _bot(net)
        request = _long_request(MIN_ANSWER_BYTES + 40)
        with anyio.fail_after(WAIT_S):
            result = await ChatCaller(alice.core, clock=net.clock).call(
                ContactRef(bot_id), "echo", request, final=EchoBinding()
            )
        # the echo does not fit beside the quote: the binding's error does, quoted
        assert result.response == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32603, "message": "response too large"},
        }
        assert dumps(result.response)
