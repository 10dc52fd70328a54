"""Simulated network, in process: Service RPC as the spec's "Service RPC transport" describes."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from simkit import WAIT_S, Client, World

from simplex_protocols._wire import dumps
from simplex_protocols.errors import CoreError
from simplex_protocols.limits import SERVICE_PADDED_BYTES
from simplex_protocols.rpc import SigningKey
from simplex_protocols.rpc.advanced import (
    SERVICE_PAD_FRAMING_BYTES,
    reply_queue_info_size,
    request_framing_bytes,
)

pytestmark = pytest.mark.anyio

REQUEST = {"protocol": "mcp", "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}


class Outcome:
    """The result of a blocking command run in the background."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.response: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None

    async def wait(self) -> None:
        with anyio.fail_after(WAIT_S):
            await self.done.wait()


async def _run(client: Client, cmd: str, out: Outcome) -> None:
    try:
        out.response = await client.core.command(cmd)
    except CoreError as exc:
        out.error = dict(exc.chat_error)
    finally:
        out.done.set()


async def _until(w: World, predicate: Any) -> None:
    """Wait, on the network's change notifications, until ``predicate()`` holds."""
    with anyio.fail_after(WAIT_S):
        while not predicate():
            await w.network.wait_changed()


async def _responder(
    w: World, *, pq: str | None = "on", service_requests: bool = True
) -> tuple[Client, str]:
    bot = await w.user("bot", peer_type="bot", service_requests=service_requests)
    link = await w.address(bot, pq_ratchet=None if pq is None else pq == "on")
    return bot, link


def _timeout_error(kind: str) -> dict[str, Any]:
    return {
        "type": "errorAgent",
        "agentError": {
            "type": "AGENT",
            "agentErr": {"type": "A_SERVICE", "serviceError": {"type": kind}},
        },
        "agentConnId": "",
    }


@pytest.mark.requirement("RPC-CMD-1", "RPC-CMD-3", "RPC-SIG-2", "RPC-CONN-1", "RPC-CONN-2")
async def test_signed_service_request_and_its_response() -> None:
    async with World() as w:
        bot, link = await _responder(w)
        alice = await w.user("alice", peer_type="agent")
        key = SigningKey.generate(w.network.random.randbytes)
        out = Outcome()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _run,
                alice,
                f"/_service_request {alice.user_id} {link} timeout=60 sign_key={key.to_sign_key()} {dumps(REQUEST)}",
                out,
            )
            req = await bot.event("serviceRequest")
            assert req["requestData"] == REQUEST
            assert req["signerKey"] == key.public_key.encode()
            accepted = await bot.cmd_json(
                f"/_service_response {bot.user_id} {req['requestId']}",
                {"response": {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}},
            )
            assert accepted["type"] == "serviceReplyAccepted"
            sent = await bot.event("serviceReplySent")
            assert sent == {"type": "serviceReplySent", "connectionId": accepted["connectionId"]}
            await out.wait()
        assert out.response is not None
        assert out.response["type"] == "serviceResponse"
        assert out.response["responseData"] == {
            "response": {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
        }
        # RPC-CONN-2: no contact or connection is left behind on either side
        assert [
            c["chatInfo"]["contact"]["localDisplayName"]
            for c in (await alice.cmd(f"/_get chats {alice.user_id} pcc=on"))["chats"]
        ] == ["Ask SimpleX Team"]
        assert [
            c["chatInfo"]["contact"]["localDisplayName"]
            for c in (await bot.cmd(f"/_get chats {bot.user_id} pcc=on"))["chats"]
        ] == ["Ask SimpleX Team"]


@pytest.mark.requirement("RPC-SIG-7", "RPC-CONN-3")
async def test_unsigned_request_has_no_signer_key_and_each_call_is_a_new_connection() -> None:
    async with World() as w:
        bot, link = await _responder(w)
        alice = await w.user("alice")
        connections = []
        for n in range(2):
            out = Outcome()
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    _run, alice, f"/_service_request {alice.user_id} {link} {dumps(REQUEST)}", out
                )
                req = await bot.event("serviceRequest")
                assert "signerKey" not in req
                accepted = await bot.cmd_json(
                    f"/_service_response {bot.user_id} {req['requestId']}", {"response": n}
                )
                connections.append(accepted["connectionId"])
                await out.wait()
            assert out.response is not None and out.response["responseData"] == {"response": n}
        assert connections[0] != connections[1]


@pytest.mark.requirement("RPC-SIG-2")
async def test_signature_from_another_session_fails_verification() -> None:
    """The responder's agent drops a request whose signature does not verify and reports
    ``A_SERVICE badSignature`` to its own clients; the requester is not told and waits out its
    timeout (simplexmq: "invalid signature -> A_SERVICE ASEBadSignature (logs + ERR event), no
    invitation"). This test used to expect ``badSignature`` at the requester."""
    async with World() as w:
        bot, link = await _responder(w)
        alice = await w.user("alice")
        w.network.faults.tamper_signatures()
        key = SigningKey.generate(w.network.random.randbytes)
        out = Outcome()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _run,
                alice,
                f"/_service_request {alice.user_id} {link} timeout=5 "
                f"sign_key={key.to_sign_key()} {dumps(REQUEST)}",
                out,
            )
            error = await bot.event("chatError")
            assert not out.done.is_set()
            await w.clock.advance(5)
            await out.wait()
        assert error["chatError"]["agentError"] == _timeout_error("badSignature")["agentError"]
        assert error["chatError"]["agentConnId"] != ""
        assert out.error == _timeout_error("timeout")
        assert bot.all("serviceRequest") == []


@pytest.mark.requirement("RPC-CORE-2")
async def test_address_without_ratchet_keys_fails_at_once() -> None:
    async with World() as w:
        _bot, link = await _responder(w, pq=None)
        alice = await w.user("alice")
        err = await alice.error(f"/_service_request {alice.user_id} {link} {dumps(REQUEST)}")
        assert err == _timeout_error("notDRAddress")


@pytest.mark.requirement("RPC-CORE-2")
async def test_ratchet_keys_added_by_short_link_address_or_settings() -> None:
    async with World() as w:
        bot, link = await _responder(w, pq=None)
        alice = await w.user("alice")
        await bot.cmd(f"/_short_link_address {bot.user_id} pq_ratchet=off")
        out = Outcome()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _run, alice, f"/_service_request {alice.user_id} {link} {dumps(REQUEST)}", out
            )
            req = await bot.event("serviceRequest")
            await bot.cmd_json(
                f"/_service_response {bot.user_id} {req['requestId']}", {"response": "ok"}
            )
            await out.wait()
        assert out.response is not None


@pytest.mark.requirement("RPC-CORE-1", "RPC-CMD-2")
async def test_service_requests_off_drops_the_request_and_the_requester_waits_30_s() -> None:
    async with World() as w:
        bot, link = await _responder(w, service_requests=False)
        alice = await w.user("alice")
        out = Outcome()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _run, alice, f"/_service_request {alice.user_id} {link} {dumps(REQUEST)}", out
            )
            await _until(w, lambda: w.network.service_calls)
            await w.clock.advance(29.5)
            await bot.settle()
            assert not out.done.is_set()
            await w.clock.advance(1)
            await out.wait()
        assert out.error == _timeout_error("timeout")
        assert bot.all("serviceRequest") == []
        # turning service requests on with /_start on the running core makes it answer
        assert (await bot.cmd("/_start main=on service_requests=on"))["type"] == "chatRunning"
        out = Outcome()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _run, alice, f"/_service_request {alice.user_id} {link} {dumps(REQUEST)}", out
            )
            req = await bot.event("serviceRequest")
            await bot.cmd_json(
                f"/_service_response {bot.user_id} {req['requestId']}", {"response": 1}
            )
            await out.wait()
        assert out.response is not None


@pytest.mark.requirement("RPC-LIM-1")
async def test_response_later_than_180_s_is_refused() -> None:
    async with World() as w:
        bot, link = await _responder(w)
        alice = await w.user("alice")
        out = Outcome()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _run,
                alice,
                f"/_service_request {alice.user_id} {link} timeout=600 {dumps(REQUEST)}",
                out,
            )
            req = await bot.event("serviceRequest")
            await w.clock.advance(181)
            err = await bot.error(
                f'/_service_response {bot.user_id} {req["requestId"]} {{"response":1}}'
            )
            assert err == _timeout_error("noPendingRequest")
            await w.clock.advance(420)
            await out.wait()
        assert out.error == _timeout_error("timeout")


@pytest.mark.requirement("RPC-LIM-2")
async def test_padded_size_over_11106_bytes_fails() -> None:
    async with World() as w:
        bot, link = await _responder(w)
        alice = await w.user("alice")
        base = {"protocol": "mcp", "request": ""}
        router = w.network.user("alice").router
        framing = request_framing_bytes(reply_queue_info_bytes=reply_queue_info_size([router]))
        room = SERVICE_PADDED_BYTES - framing - len(dumps(base).encode())
        too_big = {"protocol": "mcp", "request": "x" * (room + 1)}
        err = await alice.error(f"/_service_request {alice.user_id} {link} {dumps(too_big)}")
        assert err["type"] == "errorAgent" and err["agentError"]["cmdErr"] == {"type": "LARGE"}
        fits = {"protocol": "mcp", "request": "x" * room}
        resp_room = (
            SERVICE_PADDED_BYTES - SERVICE_PAD_FRAMING_BYTES - len(dumps({"response": ""}).encode())
        )
        out = Outcome()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _run, alice, f"/_service_request {alice.user_id} {link} {dumps(fits)}", out
            )
            req = await bot.event("serviceRequest")
            err = await bot.error(
                f"/_service_response {bot.user_id} {req['requestId']} {dumps({'response': 'y' * (resp_room + 1)})}"
            )
            assert err["agentError"]["cmdErr"] == {"type": "LARGE"}
            # the request is still pending: a smaller response goes through
            await bot.cmd_json(
                f"/_service_response {bot.user_id} {req['requestId']}",
                {"error": {"code": "too_large"}},
            )
            await out.wait()
        assert out.response is not None and out.response["responseData"] == {
            "error": {"code": "too_large"}
        }


async def test_service_request_targets_names_and_refuses_bad_input() -> None:
    async with World() as w:
        bot, _link = await _responder(w)
        alice = await w.user("alice")
        w.network.register_name("bot.simplex", w.network.user("bot"), "contact")
        out = Outcome()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _run, alice, f"/_service_request {alice.user_id} @bot.simplex {dumps(REQUEST)}", out
            )
            req = await bot.event("serviceRequest")
            await bot.cmd_json(
                f"/_service_response {bot.user_id} {req['requestId']}", {"response": 2}
            )
            await out.wait()
        assert out.response is not None
        err = await alice.error(f"/_service_request {alice.user_id} #bot.simplex {dumps(REQUEST)}")
        assert err["errorType"]["type"] == "commandError"
        err = await alice.error(f"/_service_request {alice.user_id} @bot.simplex [1]")
        assert err["errorType"]["type"] == "commandError"
        err = await bot.error(f"/_service_response {bot.user_id} nope {{}}")
        assert err == _timeout_error("noPendingRequest")


async def test_slow_responder_makes_the_requester_time_out() -> None:
    async with World() as w:
        bot, link = await _responder(w)
        alice = await w.user("alice")
        w.network.faults.slow_responder("bot", 40)
        out = Outcome()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _run, alice, f"/_service_request {alice.user_id} {link} {dumps(REQUEST)}", out
            )
            req = await bot.event("serviceRequest")
            await bot.cmd_json(
                f"/_service_response {bot.user_id} {req['requestId']}", {"response": 3}
            )
            await w.clock.advance(31)
            await out.wait()
        assert out.error == _timeout_error("timeout")
