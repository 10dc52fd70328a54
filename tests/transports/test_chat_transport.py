"""The chat transport end to end on the simulated network: ChatCaller against ChatResponder,
and the caller against a scripted person who answers by hand."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from transkit import (
    WAIT_S,
    EchoBinding,
    Net,
    Peer,
    rpc_request,
    shut_down_while_held,
    until,
)

from simplex_protocols._clock import SystemClock
from simplex_protocols._wire import dumps
from simplex_protocols.chat_call import CallState, Sender, format_call_command
from simplex_protocols.core import ContactRef, GroupRef
from simplex_protocols.errors import (
    CallFormatError,
    CallTimeoutError,
    CoreError,
    MessageTooLargeError,
)
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES
from simplex_protocols.transports import (
    CallRecord,
    ChatCaller,
    ChatCallResult,
    ChatResponder,
)

pytestmark = pytest.mark.anyio


@dataclass
class Direct:
    net: Net
    alice: Peer
    bot: Peer
    bot_id: int  # the bot's contact ID at alice
    alice_id: int  # alice's contact ID at the bot
    binding: EchoBinding
    records: list[CallRecord]
    responder: ChatResponder

    def caller(self) -> ChatCaller:
        return ChatCaller(self.alice.core, clock=self.net.clock)


async def _direct(net: Net, *, bot_backend: Any = None, **options: Any) -> Direct:
    alice = await net.peer("alice", peer_type="agent")
    bot = await net.bot("bot", backend=bot_backend)
    bot_id, alice_id = await net.connect(alice, bot)
    binding = EchoBinding(clock=net.clock)
    records: list[CallRecord] = []
    responder = ChatResponder(
        bot.core, [binding], clock=net.clock, on_call=records.append, **options
    )
    await net.start(responder.serve)
    return Direct(net, alice, bot, bot_id, alice_id, binding, records, responder)


def _response(rid: int, **echo: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"echo": echo}}


async def _replies_at(peer: Peer, count: int) -> None:
    await peer.wait_for(lambda: len(peer.received()) >= count)


# --------------------------------------------------------------------- direct chats


@pytest.mark.requirement("CALL-BOT-1", "CALL-REP-1", "CALL-REP-2", "CALL-CLR-1", "CALL-CLR-2")
async def test_call_bot_1_direct_call_is_answered_with_quoting_replies_in_order() -> None:
    async with Net() as net:
        d = await _direct(net)
        with anyio.fail_after(WAIT_S):
            result = await d.caller().call(
                ContactRef(d.bot_id), "echo", rpc_request(7, notify=2), final=d.binding
            )
        assert result.state is CallState.COMPLETED and result.completed
        assert [r.message for r in result.replies] == [
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 0}},
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
            _response(7, notify=2),
        ]
        assert result.response == _response(7, notify=2)
        assert result.answer is not None and result.answer.sender == Sender(contact_id=d.bot_id)
        assert result.answer.completed and len(result.answer.messages) == 3
        # CALL-REP-1: every reply quotes the command, as the caller's core sees it.
        quoted = [r["chatItem"]["quotedItem"]["itemId"] for r in d.alice.received()]
        assert quoted == [result.command_item_id] * 3
        await until(lambda: bool(d.records))
        assert d.records == [
            CallRecord(
                d.records[0].transport, f"chat:@{d.alice_id}", "echo", "echo", "answered", 0.0, 3
            )
        ]


@pytest.mark.requirement("CALL-BOT-1")
async def test_call_bot_1_caller_is_the_contact_with_its_key_name_and_peer_type() -> None:
    async with Net() as net:
        d = await _direct(net)
        with anyio.fail_after(WAIT_S):
            await d.caller().call(ContactRef(d.bot_id), "echo", rpc_request(1), final=d.binding)
        caller = d.binding.callers[0]
        assert caller.key == f"chat:@{d.alice_id}"
        assert (caller.contact_id, caller.group_id, caller.in_group) == (d.alice_id, None, False)
        assert (caller.display_name, caller.peer_type) == ("alice", "agent")
        assert caller.transport == "chat" and not caller.signed


async def test_a_call_without_a_final_rule_waits_for_its_whole_wait() -> None:
    async with Net() as net:
        d = await _direct(net)
        results: list[ChatCallResult] = []

        async def run() -> None:
            results.append(
                await d.caller().call(ContactRef(d.bot_id), "echo", rpc_request(1), wait_s=10)
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await _replies_at(d.alice, 1)
            await d.alice.settle()
            assert results == []
            await net.clock.advance(10)
        (result,) = results
        assert result.state is CallState.TIMED_OUT
        assert [r.message for r in result.replies] == [_response(1)]
        assert result.answer is not None and not result.answer.completed


@pytest.mark.requirement("CALL-SIZE-1", "CALL-SIZE-2")
async def test_call_size_1_a_command_over_the_limit_is_refused_before_sending() -> None:
    async with Net() as net:
        d = await _direct(net)
        request = rpc_request(1, text="z" * MAX_CHAT_MESSAGE_BYTES)
        with anyio.fail_after(WAIT_S), pytest.raises(MessageTooLargeError) as info:
            await d.caller().call(ContactRef(d.bot_id), "echo", request, final=d.binding)
        assert info.value.limit == MAX_CHAT_MESSAGE_BYTES
        await d.bot.settle()
        assert d.bot.received() == [] and d.records == []


@pytest.mark.requirement("CALL-SIZE-3")
async def test_call_size_3_an_oversize_reply_is_replaced_by_the_bindings_error() -> None:
    async with Net() as net:
        d = await _direct(net)
        with anyio.fail_after(WAIT_S):
            result = await d.caller().call(
                ContactRef(d.bot_id), "echo", rpc_request(3, big=20_000), final=d.binding
            )
        assert result.response == {
            "jsonrpc": "2.0",
            "id": 3,
            "error": {"code": -32603, "message": "response too large"},
        }
        assert len(result.replies) == 1
        await until(lambda: bool(d.records))
        assert d.records[0].outcome == "replaced"


@pytest.mark.requirement("CALL-SIZE-3")
async def test_an_oversize_notification_is_replaced_by_the_error_which_ends_the_answer() -> None:
    # AMB-31 reading B: a notification is sent as a reply, and a reply over the limit is
    # replaced by the binding's error; the error answers the request (its id), so it ends
    # the answer and the response that would have followed is not sent.
    async with Net() as net:
        d = await _direct(net)
        with anyio.fail_after(WAIT_S):
            result = await d.caller().call(
                ContactRef(d.bot_id),
                "echo",
                rpc_request(4, notify=2, big_note=16_000),
                final=d.binding,
            )
            await d.bot.settle()
            await d.alice.settle()
        assert [r.message for r in result.replies] == [
            {"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "response too large"}}
        ]
        assert len(d.alice.received()) == 1
        await until(lambda: bool(d.records))
        assert d.records[0].outcome == "replaced"


async def test_messages_after_a_replacement_are_not_sent() -> None:
    # The replacement ends the answer (AMB-31 reading C for stream items).
    async with Net() as net:
        d = await _direct(net)
        with anyio.fail_after(WAIT_S):
            result = await d.caller().call(
                ContactRef(d.bot_id), "echo", rpc_request(5, big=20_000, after=2), final=d.binding
            )
            await d.bot.settle()
            await d.alice.settle()
        assert result.completed and len(d.alice.received()) == 1


class _LargeMsgOnce:
    """A backend wrapper whose core refuses the first reply as ``largeMsg``, as a real core
    would when its count is larger than ours."""

    def __init__(self, inner: Any, marker: str = '"quotedItemId"') -> None:
        self.inner = inner
        self.marker = marker
        self.refused: list[str] = []
        self._injected: list[dict[str, Any]] = []
        self._wake = anyio.Event()

    @property
    def description(self) -> str:
        return str(self.inner.description)

    async def connect(self) -> None:
        await self.inner.connect()

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        cmd = frame.get("cmd", "")
        if (
            isinstance(cmd, str)
            and cmd.startswith("/_send ")
            and self.marker in cmd
            and not self.refused
        ):
            self.refused.append(cmd)
            error = {"type": "errorStore", "storeError": {"type": "largeMsg"}}
            self._injected.append(
                {"corrId": frame["corrId"], "resp": {"type": "chatCmdError", "chatError": error}}
            )
            self._wake.set()
            return
        await self.inner.send_frame(frame)

    async def receive_frame(self) -> dict[str, Any]:
        result: list[dict[str, Any]] = []
        async with anyio.create_task_group() as tg:

            async def inner() -> None:
                result.append(await self.inner.receive_frame())
                tg.cancel_scope.cancel()

            async def injected() -> None:
                while not self._injected:
                    await self._wake.wait()
                    self._wake = anyio.Event()
                tg.cancel_scope.cancel()

            if self._injected:
                tg.cancel_scope.cancel()
            else:
                tg.start_soon(inner)
                tg.start_soon(injected)
        if result:
            return result[0]
        return self._injected.pop(0)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.requirement("CALL-SIZE-3")
async def test_call_size_3_a_reply_the_core_refuses_as_large_is_sent_as_the_replacement() -> None:
    async with Net() as net:
        wrapper = _LargeMsgOnce(net.network.backend("bot"))
        d = await _direct(net, bot_backend=wrapper)
        with anyio.fail_after(WAIT_S):
            result = await d.caller().call(
                ContactRef(d.bot_id), "echo", rpc_request(6), final=d.binding
            )
        await until(lambda: bool(d.records))
        assert len(wrapper.refused) == 1
        assert result.response == {
            "jsonrpc": "2.0",
            "id": 6,
            "error": {"code": -32603, "message": "response too large"},
        }
        assert d.records[0].outcome == "replaced"


@pytest.mark.requirement("CALL-SIZE-2")
async def test_call_size_2_a_command_the_core_refuses_as_large_is_message_too_large() -> None:
    async with Net() as net:
        alice_backend = _LargeMsgOnce(net.network.backend("alice"), marker="/_call")
        alice = await net.peer("alice", backend=alice_backend)
        bot = await net.bot("bot")
        bot_id, _ = await net.connect(alice, bot)
        with anyio.fail_after(WAIT_S), pytest.raises(MessageTooLargeError) as info:
            await ChatCaller(alice.core, clock=net.clock).call(
                ContactRef(bot_id), "echo", rpc_request(1)
            )
        assert info.value.limit == MAX_CHAT_MESSAGE_BYTES and alice_backend.refused
        await bot.settle()
        assert bot.received() == []


@pytest.mark.requirement("CALL-BOT-1", "CALL-CMD-2")
@pytest.mark.parametrize("request_text", ["{not json", "[1, 2]", '{"a": 1} trailing', ""])
async def test_call_bot_1_a_malformed_request_gets_the_bindings_parse_error(
    request_text: str,
) -> None:
    # AMB-27 reading A: answered with the protocol's parse error, quoting the command.
    async with Net() as net:
        d = await _direct(net)
        text = f"/_call echo {request_text}".rstrip()
        item_id = await d.alice.send(f"@{d.bot_id}", text)
        await _replies_at(d.alice, 1)
        (reply,) = d.alice.received()
        assert reply["chatItem"]["quotedItem"]["itemId"] == item_id
        body = reply["chatItem"]["content"]["msgContent"]["text"]
        assert body == dumps(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        )
        await d.bot.settle()
        assert [r.outcome for r in d.records] == ["parse_error"]
        assert d.binding.requests == []


async def test_a_call_for_a_protocol_the_bot_does_not_serve_gets_silence() -> None:
    # AMB-1 reading A; CALL-CMD-5 is the caller's side of it.
    async with Net() as net:
        d = await _direct(net)
        await d.alice.send(f"@{d.bot_id}", format_call_command("other", rpc_request(1)))
        await d.alice.send(f"@{d.bot_id}", format_call_command("echo", rpc_request(2)))
        await _replies_at(d.alice, 1)
        await d.alice.settle()
        texts = d.alice.received_texts()
        assert texts == [dumps(_response(2))]
        assert [r.protocol for r in d.records] == ["echo"]


@pytest.mark.requirement("CALL-CMD-6")
async def test_call_cmd_6_only_text_and_link_messages_carry_commands() -> None:
    # AMB-17 reading B: a caption of an image is not a command; a link message is.
    async with Net() as net:
        d = await _direct(net)
        image = {
            "type": "image",
            "text": format_call_command("echo", rpc_request(1)),
            "image": "data:image/png;base64,iVBORw0KGgo=",
        }
        await d.alice.send(f"@{d.bot_id}", "", content=image)
        link = {
            "type": "link",
            "text": format_call_command("echo", rpc_request(2, url="https://example.com")),
            "preview": {"uri": "https://example.com", "title": "x", "description": "", "image": ""},
        }
        await d.alice.send(f"@{d.bot_id}", "", content=link)
        # a command is the whole text, from its first character
        await d.alice.send(f"@{d.bot_id}", " " + format_call_command("echo", rpc_request(3)))
        await _replies_at(d.alice, 1)
        await d.alice.settle()
        assert d.alice.received_texts() == [dumps(_response(2, url="https://example.com"))]


async def test_the_bot_never_answers_its_own_messages() -> None:
    async with Net() as net:
        d = await _direct(net)
        await d.bot.send(f"@{d.alice_id}", format_call_command("echo", rpc_request(1)))
        await d.alice.wait_for(lambda: len(d.alice.received()) == 1)
        await d.bot.settle()
        assert d.records == [] and d.binding.requests == []


async def test_an_edited_command_is_not_a_new_call() -> None:
    async with Net() as net:
        d = await _direct(net)
        item_id = await d.alice.send(f"@{d.bot_id}", format_call_command("echo", rpc_request(1)))
        await _replies_at(d.alice, 1)
        new_text = format_call_command("echo", rpc_request(2))
        update = {"msgContent": {"type": "text", "text": new_text}, "mentions": {}}
        await d.alice.cmd(f"/_update item @{d.bot_id} {item_id} json {dumps(update)}")
        await d.bot.wait_for(lambda: any(e["type"] == "chatItemUpdated" for e in d.bot.events))
        await d.bot.settle()
        assert len(d.records) == 1


async def test_a_failing_binding_answers_with_its_internal_error_and_leaks_nothing() -> None:
    async with Net() as net:
        d = await _direct(net)
        with anyio.fail_after(WAIT_S):
            result = await d.caller().call(
                ContactRef(d.bot_id), "echo", rpc_request(8, notify=1, fail=True), final=d.binding
            )
        assert [r.message for r in result.replies][1] == {
            "jsonrpc": "2.0",
            "id": 8,
            "error": {"code": -32603, "message": "internal error"},
        }
        assert all("hunter2" not in r.text for r in result.replies)
        await until(lambda: bool(d.records))
        assert d.records[0].outcome == "failed"


async def test_calls_are_answered_concurrently_up_to_the_bound() -> None:
    async with Net() as net:
        d = await _direct(net, max_concurrency=1)
        caller = d.caller()
        results: dict[str, ChatCallResult] = {}

        async def run(key: str, rid: int) -> None:
            results[key] = await caller.call(
                ContactRef(d.bot_id), "echo", rpc_request(rid, gate=key), final=d.binding
            )

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run, "a", 1)
                await d.binding.start_signal("a").wait()
                tg.start_soon(run, "b", 2)
                await d.bot.wait_for(lambda: len(d.bot.received()) == 2)
                await d.bot.settle()
                assert "b" not in d.binding.started  # waiting for the one slot
                assert d.responder.in_flight == 2
                d.binding.gate("a").set()
                await d.binding.start_signal("b").wait()
                d.binding.gate("b").set()
        assert d.binding.max_running == 1
        assert results["a"].response == _response(1, gate="a")
        assert results["b"].response == _response(2, gate="b")


async def test_a_call_that_swallows_its_cancellation_is_still_answered_as_cut_short() -> None:
    # The responder on the real clock (the path a bot takes): shutdown(grace_s=0) cuts the
    # call at once, with no time to wait for.
    async with Net() as net:
        alice = await net.peer("alice", peer_type="agent")
        bot = await net.bot("bot")
        bot_id, _ = await net.connect(alice, bot)
        binding = EchoBinding()
        records: list[CallRecord] = []
        responder = ChatResponder(bot.core, [binding], clock=SystemClock(), on_call=records.append)
        await net.start(responder.serve)
        results: list[ChatCallResult] = []

        async def run() -> None:
            results.append(
                await ChatCaller(alice.core, clock=net.clock).call(
                    ContactRef(bot_id),
                    "echo",
                    rpc_request(1, gate="held", swallow=True),
                    final=binding,
                    wait_s=60,
                )
            )

        await shut_down_while_held(responder, binding, run)
        # The binding returned normally from the cancellation, with no response: the call is
        # cut short, not taken for answered.
        assert binding.swallowed == 1
        assert results[0].response == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32603, "message": "the bot is shutting down"},
        }
        assert [r.message for r in results[0].replies] == [results[0].response]
        await until(lambda: len(records) == 1)
        assert records[0].outcome == "shutdown"


async def test_graceful_shutdown_finishes_short_calls_and_cuts_long_ones() -> None:
    async with Net() as net:
        d = await _direct(net, shutdown_grace_s=5)
        caller = d.caller()
        results: dict[int, ChatCallResult] = {}

        async def run(rid: int, sleep: float) -> None:
            results[rid] = await caller.call(
                ContactRef(d.bot_id),
                "echo",
                rpc_request(rid, notify=1, sleep=sleep),
                final=d.binding,
                wait_s=60,
            )

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run, 1, 2)
                tg.start_soon(run, 2, 100)
                await _replies_at(d.alice, 2)  # both notifications: both calls are running
                tg.start_soon(d.responder.shutdown)
                await d.bot.settle()
                assert d.responder.closing
                # a call sent during the shutdown is not taken
                late = await d.alice.send(
                    f"@{d.bot_id}", format_call_command("echo", rpc_request(3))
                )
                await net.clock.advance(2)
                await _replies_at(d.alice, 3)
                await d.alice.settle()
                assert 1 in results and 2 not in results
                await net.clock.advance(3)
                await _replies_at(d.alice, 4)
        assert results[1].response == _response(1, notify=1, sleep=2)
        assert results[2].response == {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {"code": -32603, "message": "the bot is shutting down"},
        }
        assert results[2].replies[0].message == {  # the notification came first
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progress": 0},
        }
        await until(lambda: len(d.records) == 2)
        assert sorted((r.method, r.outcome) for r in d.records) == [
            ("echo", "answered"),
            ("echo", "shutdown"),
        ]
        quoted = {r["chatItem"]["quotedItem"]["itemId"] for r in d.alice.received()}
        assert late not in quoted


async def test_each_call_is_logged_without_its_contents(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="simplex_protocols.transports")
    async with Net() as net:
        d = await _direct(net)
        with anyio.fail_after(WAIT_S):
            await d.caller().call(
                ContactRef(d.bot_id), "echo", rpc_request(1, secret="s3cr3t-value"), final=d.binding
            )
        await d.bot.settle()
    lines = [r.getMessage() for r in caplog.records if r.name == "simplex_protocols.transports"]
    assert any(f"chat:@{d.alice_id}" in line and "echo echo -> answered" in line for line in lines)
    assert not any("s3cr3t-value" in line for line in lines)
    (record,) = [r for r in caplog.records if hasattr(r, "simplex_call")]
    assert record.simplex_call.outcome == "answered"


# --------------------------------------------------------------------- a person answering


@dataclass
class Manual:
    net: Net
    alice: Peer
    bob: Peer
    bob_id: int
    alice_id: int


async def _manual(net: Net) -> Manual:
    alice = await net.peer("alice")
    bob = await net.peer("bob")
    bob_id, alice_id = await net.connect(alice, bob)
    return Manual(net, alice, bob, bob_id, alice_id)


def _final(rid: int) -> Any:
    binding = EchoBinding()
    request = rpc_request(rid)
    return lambda message: binding.is_final(request, message)


async def _command_at(peer: Peer, text: str) -> int:
    """The item ID, at ``peer``, of the received message with ``text``."""
    await peer.wait_for(lambda: text in peer.received_texts())
    for aci in peer.received():
        if aci["chatItem"]["content"]["msgContent"]["text"] == text:
            return int(aci["chatItem"]["meta"]["itemId"])
    raise AssertionError("not received")


@pytest.mark.requirement("CALL-CLR-1", "CALL-CLR-3", "CALL-CLR-4")
async def test_call_clr_1_only_replies_quoting_the_command_are_collected() -> None:
    async with Net() as net:
        m = await _manual(net)
        carol = await net.peer("carol")
        alice_at_carol, _ = await net.connect(carol, m.alice)
        await m.alice.send(f"@{m.bob_id}", "hello")
        hello_at_bob = await _command_at(m.bob, "hello")
        request = rpc_request(1)
        text = format_call_command("echo", request)
        results: list[ChatCallResult] = []

        async def run() -> None:
            results.append(
                await ChatCaller(m.alice.core, clock=net.clock).call(
                    ContactRef(m.bob_id), "echo", request, final=_final(1)
                )
            )

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                cmd_at_bob = await _command_at(m.bob, text)
                await m.bob.send(f"@{m.alice_id}", dumps(_response(1, wrong="no quote")))
                await m.bob.send(
                    f"@{m.alice_id}", dumps(_response(1, wrong="other quote")), quoted=hello_at_bob
                )
                await carol.send(f"@{alice_at_carol}", dumps(_response(1, wrong="carol")))
                await m.bob.send(f"@{m.alice_id}", "working on it", quoted=cmd_at_bob)
                await m.bob.send(f"@{m.alice_id}", dumps(_response(1, ok=True)), quoted=cmd_at_bob)
        (result,) = results
        assert result.completed
        assert [(r.text, r.message) for r in result.replies] == [
            ("working on it", None),
            (dumps(_response(1, ok=True)), _response(1, ok=True)),
        ]
        # CALL-CLR-3: a reply that is not a protocol message comes back as text with its sender.
        (text_reply,) = result.text_replies
        assert text_reply.sender == Sender(contact_id=m.bob_id) and text_reply.is_text
        assert result.answer is not None and result.answer.texts == ("working on it",)


@pytest.mark.requirement("CALL-CLR-1", "CALL-CLR-2")
async def test_call_clr_1_replies_to_concurrent_calls_arriving_out_of_order_are_matched() -> None:
    async with Net() as net:
        m = await _manual(net)
        caller = ChatCaller(m.alice.core, clock=net.clock)
        results: dict[int, ChatCallResult] = {}

        async def run(rid: int) -> None:
            results[rid] = await caller.call(
                ContactRef(m.bob_id), "echo", rpc_request(rid), final=_final(rid)
            )

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run, 1)
                tg.start_soon(run, 2)
                first = await _command_at(m.bob, format_call_command("echo", rpc_request(1)))
                second = await _command_at(m.bob, format_call_command("echo", rpc_request(2)))
                await m.bob.send(f"@{m.alice_id}", "second, part 1", quoted=second)
                await m.bob.send(f"@{m.alice_id}", "first, part 1", quoted=first)
                await m.bob.send(f"@{m.alice_id}", dumps(_response(2)), quoted=second)
                await m.bob.send(f"@{m.alice_id}", dumps(_response(1)), quoted=first)
        assert [r.text for r in results[1].replies] == ["first, part 1", dumps(_response(1))]
        assert [r.text for r in results[2].replies] == ["second, part 1", dumps(_response(2))]


@pytest.mark.requirement("CALL-CLR-2")
async def test_call_clr_2_a_reply_after_the_wait_is_not_part_of_the_result() -> None:
    async with Net() as net:
        m = await _manual(net)
        request = rpc_request(1)
        errors: list[CallTimeoutError] = []

        async def run() -> None:
            try:
                await ChatCaller(m.alice.core, clock=net.clock).call(
                    ContactRef(m.bob_id), "echo", request, final=_final(1), wait_s=10
                )
            except CallTimeoutError as exc:
                errors.append(exc)

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                cmd = await _command_at(m.bob, format_call_command("echo", request))
                await m.bob.send(f"@{m.alice_id}", "on it", quoted=cmd)
                await m.alice.wait_for(lambda: "on it" in m.alice.received_texts())
                await m.alice.settle()
                await net.clock.advance(10)
            await m.bob.send(f"@{m.alice_id}", dumps(_response(1)), quoted=cmd)
            await m.alice.wait_for(lambda: len(m.alice.received()) == 2)
        (error,) = errors
        assert error.timeout == 10
        partial = error.partial
        assert isinstance(partial, ChatCallResult)
        assert partial.state is CallState.TIMED_OUT
        assert [r.text for r in partial.replies] == ["on it"]


async def test_a_timed_out_call_can_return_its_partial_result() -> None:
    async with Net() as net:
        m = await _manual(net)
        results: list[ChatCallResult] = []

        async def run() -> None:
            results.append(
                await ChatCaller(m.alice.core, clock=net.clock).call(
                    ContactRef(m.bob_id),
                    "echo",
                    rpc_request(1),
                    final=_final(1),
                    raise_on_timeout=False,
                )
            )

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await _command_at(m.bob, format_call_command("echo", rpc_request(1)))
                await net.clock.advance(30)  # the default wait (AMB-18)
        (result,) = results
        assert result.state is CallState.TIMED_OUT and result.replies == ()
        assert result.answer is None and result.response is None


# --------------------------------------------------------------------- groups


@dataclass
class Team:
    net: Net
    alice: Peer
    shop: Peer
    helper: Peer
    carol: Peer
    gids: dict[str, int]
    bindings: dict[str, EchoBinding]
    records: dict[str, list[CallRecord]]

    def caller(self) -> ChatCaller:
        return ChatCaller(self.alice.core, clock=self.net.clock)

    @property
    def gid(self) -> int:
        return self.gids["alice"]


async def _team(net: Net) -> Team:
    """alice owns a group with two bots that serve echo ("Shop Bot" and "helper") and carol,
    a person."""
    alice = await net.peer("alice", peer_type="agent")
    shop = await net.bot("shop", display_name="Shop Bot")
    helper = await net.bot("helper")
    carol = await net.peer("carol")
    gids = await net.group(alice, [shop, helper, carol])
    bindings: dict[str, EchoBinding] = {}
    records: dict[str, list[CallRecord]] = {}
    for bot in (shop, helper):
        bindings[bot.name] = EchoBinding(clock=net.clock)
        records[bot.name] = []
        responder = ChatResponder(
            bot.core, [bindings[bot.name]], clock=net.clock, on_call=records[bot.name].append
        )
        await net.start(responder.serve)
    return Team(net, alice, shop, helper, carol, gids, bindings, records)


@pytest.mark.requirement("CALL-GRP-1", "CALL-CLR-5", "CALL-CMD-4")
async def test_call_grp_1_the_mentioned_bot_answers_and_the_other_stays_silent() -> None:
    async with Net() as net:
        t = await _team(net)
        with anyio.fail_after(WAIT_S):
            result = await t.caller().call(
                GroupRef(t.gid),
                "echo",
                rpc_request(1),
                member_name="Shop Bot",
                final=t.bindings["shop"],
            )
        assert result.command_text.startswith("/_call @'Shop Bot' echo ")
        shop_id = await net.member_id(t.alice, t.gid, "Shop Bot")
        assert result.target.member_id == shop_id
        assert result.response == _response(1)
        assert [a.sender for a in result.answers] == [Sender(group_member_id=shop_id)]
        await t.helper.wait_for(lambda: result.command_text in t.helper.received_texts())
        await t.helper.settle()
        assert t.records["helper"] == [] and t.bindings["helper"].requests == []
        caller = t.bindings["shop"].callers[0]
        alice_at_shop = await net.member_id(t.shop, t.gids["shop"], "alice")
        assert caller.key == f"chat:#{t.gids['shop']}/{alice_at_shop}"
        assert (caller.in_group, caller.group_id, caller.group_member_id) == (
            True,
            t.gids["shop"],
            alice_at_shop,
        )
        assert (caller.display_name, caller.peer_type) == ("alice", "agent")


@pytest.mark.requirement("CALL-GRP-1")
async def test_call_grp_1_a_call_mentioning_a_person_is_ignored_by_both_bots() -> None:
    async with Net() as net:
        t = await _team(net)
        text = format_call_command("echo", rpc_request(1), member="carol")
        await t.alice.send(f"#{t.gid}", text)
        for bot in (t.shop, t.helper):
            await bot.wait_for(lambda bot=bot: text in bot.received_texts())
            await bot.settle()
        assert t.records == {"shop": [], "helper": []}


@pytest.mark.requirement("CALL-GRP-2", "CALL-CLR-2")
async def test_call_grp_2_a_broadcast_gets_each_serving_members_answer_apart() -> None:
    async with Net() as net:
        t = await _team(net)
        results: list[ChatCallResult] = []

        async def run() -> None:
            results.append(
                await t.caller().call(
                    GroupRef(t.gid),
                    "echo",
                    rpc_request(2, notify=1),
                    final=t.bindings["shop"],
                    wait_s=20,
                )
            )

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await t.alice.wait_for(lambda: len(t.alice.received()) == 4)
                await t.alice.settle()
                assert results == []  # a broadcast waits until its wait ends (AMB-18)
                await net.clock.advance(20)
        (result,) = results
        assert result.state is CallState.TIMED_OUT  # the normal end of a broadcast
        shop_id = await net.member_id(t.alice, t.gid, "Shop Bot")
        helper_id = await net.member_id(t.alice, t.gid, "helper")
        assert {a.sender for a in result.answers} == {
            Sender(group_member_id=shop_id),
            Sender(group_member_id=helper_id),
        }
        for answer in result.answers:
            assert answer.completed and answer.final == _response(2, notify=1)
            assert len(answer.replies) == 2
        assert result.answer is None  # a broadcast has answers, not one answer
        assert len(t.records["shop"]) == len(t.records["helper"]) == 1


@pytest.mark.requirement("CALL-GRP-2")
async def test_call_grp_2_a_broadcast_ends_early_once_every_expected_member_answered() -> None:
    async with Net() as net:
        t = await _team(net)
        shop_id = await net.member_id(t.alice, t.gid, "Shop Bot")
        helper_id = await net.member_id(t.alice, t.gid, "helper")
        with anyio.fail_after(WAIT_S):
            result = await t.caller().call(
                GroupRef(t.gid),
                "echo",
                rpc_request(3),
                final=t.bindings["shop"],
                expected_members=[shop_id, helper_id],
            )
        assert result.completed and len(result.answers) == 2


@pytest.mark.requirement("CALL-CLR-5")
async def test_call_clr_5_a_third_members_reply_to_a_mention_is_ignored() -> None:
    async with Net() as net:
        t = await _team(net)
        request = rpc_request(4, gate="g")
        results: list[ChatCallResult] = []

        async def run() -> None:
            results.append(
                await t.caller().call(
                    GroupRef(t.gid),
                    "echo",
                    request,
                    member_name="helper",
                    final=t.bindings["helper"],
                )
            )

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                text = format_call_command("echo", request, member="helper")
                at_carol = await _command_at(t.carol, text)
                await t.carol.send(
                    f"#{t.gids['carol']}", dumps(_response(4, by="carol")), quoted=at_carol
                )
                await t.alice.wait_for(lambda: len(t.alice.received()) >= 1)
                t.bindings["helper"].gate("g").set()
        (result,) = results
        assert [r.message for r in result.replies] == [_response(4, gate="g")]


@pytest.mark.requirement("CALL-CMD-4")
async def test_call_cmd_4_a_mentions_map_on_a_call_is_refused_as_the_core_refuses_it() -> None:
    # Off by default: the core's Markdown reads a one-line text starting with "/" as one
    # command with no mention in it, so a mentions map naming anyone is an invalid mention.
    async with Net() as net:
        t = await _team(net)
        with anyio.fail_after(WAIT_S), pytest.raises(CoreError) as info:
            await t.caller().call(
                GroupRef(t.gid),
                "echo",
                rpc_request(1),
                member_name="helper",
                final=t.bindings["helper"],
                mentions_map=True,
            )
        assert info.value.error_type == "invalidMention"
        assert not [r for r in t.helper.received() if r["chatItem"]["mentions"]]


async def test_a_member_is_found_by_id_or_name_and_an_unknown_one_is_refused() -> None:
    async with Net() as net:
        t = await _team(net)
        helper_id = await net.member_id(t.alice, t.gid, "helper")
        with anyio.fail_after(WAIT_S):
            result = await t.caller().call(
                GroupRef(t.gid),
                "echo",
                rpc_request(5),
                member_id=helper_id,
                final=t.bindings["helper"],
            )
            assert result.command_text.startswith("/_call @helper echo ")
            with pytest.raises(CallFormatError) as info:
                await t.caller().call(GroupRef(t.gid), "echo", rpc_request(6), member_name="nobody")
        assert info.value.code == "unknown_member"
