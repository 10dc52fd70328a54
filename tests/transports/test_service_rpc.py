"""The Service RPC transport end to end on the simulated network: ServiceRPCRequester against
ServiceRPCResponder, and each side against the other side done by hand."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
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
from simplex_protocols.bindings import TransportKind
from simplex_protocols.errors import (
    BadRequestError,
    CallTimeoutError,
    ConversationRequiredError,
    EnvelopeError,
    InternalServiceError,
    MessageTooLargeError,
    RateLimitedError,
    ServiceError,
    ServiceTransportError,
    TooLargeError,
    UnsupportedProtocolError,
    UnsupportedVersionError,
)
from simplex_protocols.limits import MAX_SERVICE_JSON_BYTES, SERVICE_PADDED_BYTES
from simplex_protocols.rpc import (
    KeyStore,
    ServiceRequest,
    SigningKey,
    check_service_size,
    success_response,
)
from simplex_protocols.transports import (
    CallRecord,
    RateLimit,
    ServiceRPCRequester,
    ServiceRPCResponder,
)

pytestmark = pytest.mark.anyio


@dataclass
class Rpc:
    net: Net
    alice: Peer
    bot: Peer
    link: str
    binding: EchoBinding
    records: list[CallRecord]
    responder: ServiceRPCResponder
    requester: ServiceRPCRequester

    async def request(self, request: Any, **options: Any) -> Any:
        with anyio.fail_after(WAIT_S):
            return await self.requester.request(self.link, "echo", request, **options)

    async def raw(self, envelope: Any, *, sign_key: str | None = None) -> dict[str, Any]:
        """Send an envelope by hand; return the response envelope's JSON."""
        opt = f" sign_key={sign_key}" if sign_key is not None else ""
        cmd = f"/_service_request {self.alice.user_id} {self.link}{opt} {dumps(envelope)}"
        response = await self.alice.cmd(cmd)
        assert response["type"] == "serviceResponse"
        data: dict[str, Any] = response["responseData"]
        return data


async def _rpc(net: Net, tmp_path: Path, **options: Any) -> Rpc:
    alice = await net.peer("alice", peer_type="agent")
    bot = await net.bot("bot", service_requests=True)
    link = await net.address(bot)
    binding = options.pop("binding", None) or EchoBinding(clock=net.clock)
    records: list[CallRecord] = []
    bindings = options.pop("bindings", None) or [binding]
    responder = ServiceRPCResponder(
        bot.core, bindings, clock=net.clock, on_call=records.append, **options
    )
    await net.start(responder.serve)
    keys = KeyStore(tmp_path / "keys", random_bytes=net.network.random.randbytes)
    requester = ServiceRPCRequester(alice.core, clock=net.clock, key_store=keys)
    return Rpc(net, alice, bot, link, binding, records, responder, requester)


def _response(rid: Any, **echo: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"echo": echo}}


def _service_requests(peer: Peer) -> list[dict[str, Any]]:
    return [e for e in peer.events if e.get("type") == "serviceRequest"]


# --------------------------------------------------------------------- requests and callers


@pytest.mark.requirement("RPC-CMD-1", "RPC-CMD-3", "RPC-ENV-3", "RPC-REQ-6", "RPC-SIG-7")
async def test_rpc_cmd_1_an_unsigned_request_gets_the_bindings_response(tmp_path: Path) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        request = rpc_request(1, item="anvil")
        assert await r.request(request) == _response(1, item="anvil")
        assert await r.request(rpc_request(2)) == _response(2)
        # RPC-REQ-6: the protocol's request arrives unchanged, without envelope members.
        assert r.binding.requests[0] == request
        first, second = r.binding.callers
        assert first.key.startswith("rpc-anonymous:") and second.key.startswith("rpc-anonymous:")
        assert first.key != second.key  # unsigned requests are never linked
        assert (first.transport, first.signed, first.signer_key) == (TransportKind.RPC, False, None)
        assert "signerKey" not in _service_requests(r.bot)[0]
        await until(lambda: len(r.records) == 2)
        assert [(c.protocol, c.method, c.outcome, c.replies) for c in r.records] == [
            ("echo", "echo", "response", 1)
        ] * 2


@pytest.mark.requirement("RPC-REQ-5", "RPC-REQ-4", "RPC-SIG-2", "RPC-CMD-4")
async def test_rpc_req_5_a_signed_request_carries_its_key_and_the_caller_is_the_signer(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        assert await r.request(rpc_request(1), sign=True) == _response(1)
        key = r.requester.key_store.key_for(r.link)  # type: ignore[union-attr]
        public = key.public_key.encode()
        (event,) = _service_requests(r.bot)
        assert event["requestData"]["requestKey"] == public
        assert event["signerKey"] == public
        (caller,) = r.binding.callers
        assert caller.key == f"rpc:{public}" and caller.signer_key == public and caller.signed


@pytest.mark.requirement("RPC-SIG-5")
async def test_rpc_sig_5_one_key_per_responder(tmp_path: Path) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        other = await net.bot("other", service_requests=True)
        other_link = await net.address(other)
        other_binding = EchoBinding()
        await net.start(ServiceRPCResponder(other.core, [other_binding], clock=net.clock).serve)
        with anyio.fail_after(WAIT_S):
            await r.requester.request(r.link, "echo", rpc_request(1), sign=True)
            await r.requester.request(r.link, "echo", rpc_request(2), sign=True)
            await r.requester.request(other_link, "echo", rpc_request(3), sign=True)
        here = {c.signer_key for c in r.binding.callers}
        there = {c.signer_key for c in other_binding.callers}
        assert len(here) == 1 and len(there) == 1 and here != there


async def test_an_explicit_signing_key_is_used_as_given(tmp_path: Path) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        key = SigningKey.generate(net.network.random.randbytes)
        await r.request(rpc_request(1), signing_key=key)
        assert r.binding.callers[0].signer_key == key.public_key.encode()


async def test_sign_without_a_key_store_is_refused(tmp_path: Path) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        requester = ServiceRPCRequester(r.alice.core, clock=net.clock)
        with pytest.raises(ValueError, match="key_store"):
            await requester.request(r.link, "echo", rpc_request(1), sign=True)


# --------------------------------------------------------------------- every envelope error


@pytest.mark.requirement("RPC-ERR-2", "RPC-ERR-1")
async def test_rpc_err_2_a_protocol_not_served_over_rpc_is_unsupported_protocol(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        with anyio.fail_after(WAIT_S), pytest.raises(UnsupportedProtocolError) as info:
            await r.requester.request(r.link, "other", rpc_request(1))
        assert info.value.code == "unsupported_protocol" and not info.value.retryable
        assert r.binding.requests == []


@pytest.mark.requirement("RPC-ERR-2")
async def test_rpc_err_2_a_protocol_served_only_in_conversations_is_unsupported(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        echo = EchoBinding()
        chat_only = EchoBinding("chat-only")
        r = await _rpc(net, tmp_path, bindings=[echo, chat_only], protocols=["echo"])
        with anyio.fail_after(WAIT_S), pytest.raises(UnsupportedProtocolError):
            await r.requester.request(r.link, "chat-only", rpc_request(1))
        assert chat_only.requests == []


@pytest.mark.requirement("RPC-ERR-3", "RPC-REQ-3")
async def test_rpc_err_3_an_envelope_version_not_served_is_unsupported_version(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path, envelope_versions={"echo": ["1", 2]})
        assert await r.request(rpc_request(1), version="1") == _response(1)
        assert await r.request(rpc_request(2), version=2) == _response(2)
        with pytest.raises(UnsupportedVersionError):
            await r.request(rpc_request(3), version="2")
        with pytest.raises(UnsupportedVersionError):
            await r.request(rpc_request(4), version=True)
        with pytest.raises(BadRequestError):  # the protocol needs the envelope's version
            await r.request(rpc_request(5))
        assert len(r.binding.requests) == 2


async def test_an_envelope_version_on_a_protocol_that_carries_its_own_is_ignored(
    tmp_path: Path,
) -> None:
    # AMB-29 reading A (as for mcp and a2a): the version inside the message rules.
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        assert await r.request(rpc_request(1), version="2099") == _response(1)


@pytest.mark.requirement("RPC-ERR-4", "RPC-REQ-1", "RPC-REQ-2")
@pytest.mark.parametrize(
    "envelope",
    [
        {"protocol": "echo"},
        {"request": {}},
        {"protocol": 7, "request": {}},
        {"protocol": "Echo", "request": {}},
        {"protocol": "echo", "request": {}, "requestKey": 5},
        {"protocol": "echo", "request": {}, "requestKey": "not-a-key"},
    ],
)
async def test_rpc_err_4_an_invalid_envelope_is_bad_request(
    tmp_path: Path, envelope: dict[str, Any]
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        with anyio.fail_after(WAIT_S):
            data = await r.raw(envelope)
        assert data["error"]["code"] == "bad_request" and "response" not in data
        assert r.binding.requests == []


@pytest.mark.requirement("RPC-REQ-7")
async def test_rpc_req_7_extra_envelope_members_do_not_make_a_request_invalid(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        assert await r.request(rpc_request(1), extra={"trace": "abc"}) == _response(1)


@pytest.mark.requirement("RPC-SIG-3", "RPC-ERR-4")
async def test_rpc_sig_3_a_request_key_other_than_the_signer_is_bad_request(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        signer = SigningKey.generate(net.network.random.randbytes)
        other = SigningKey.generate(net.network.random.randbytes)
        envelope = ServiceRequest("echo", rpc_request(1), request_key=other.public_key.encode())
        with anyio.fail_after(WAIT_S):
            data = await r.raw(envelope.to_json(), sign_key=signer.to_sign_key())
            same = ServiceRequest("echo", rpc_request(2), request_key=signer.public_key.encode())
            good = await r.raw(same.to_json(), sign_key=signer.to_sign_key())
        assert data["error"]["code"] == "bad_request"
        assert good == {"response": _response(2)}
        assert len(r.binding.requests) == 1


@pytest.mark.requirement("RPC-SIG-4", "RPC-ERR-4")
async def test_rpc_sig_4_a_request_key_on_an_unsigned_request_is_bad_request(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        key = SigningKey.generate(net.network.random.randbytes)
        envelope = ServiceRequest("echo", rpc_request(1), request_key=key.public_key.encode())
        with anyio.fail_after(WAIT_S):
            data = await r.raw(envelope.to_json())
        assert data["error"]["code"] == "bad_request"
        assert r.binding.requests == []


@pytest.mark.requirement("RPC-ERR-8")
async def test_rpc_err_8_a_request_that_needs_a_conversation_is_conversation_required(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        with pytest.raises(ConversationRequiredError) as info:
            await r.request(rpc_request(1, conversation=True))
        assert info.value.message == "this needs a conversation"
        await until(lambda: bool(r.records))
        assert r.records[0].outcome == "conversation_required"


def _padding_for(json_bytes: int) -> int:
    """The ``big`` that makes the echo response envelope exactly ``json_bytes`` of JSON."""
    base = check_service_size(
        success_response({"jsonrpc": "2.0", "id": 1, "result": {"echo": {}, "padding": ""}}),
        kind="response",
    ).json_bytes
    return json_bytes - base


@pytest.mark.requirement("RPC-ERR-7", "RPC-LIM-3")
async def test_rpc_err_7_a_response_over_10000_bytes_is_too_large_by_default(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        fits = _padding_for(MAX_SERVICE_JSON_BYTES)
        answer = await r.request(rpc_request(1, big=fits))
        assert len(answer["result"]["padding"]) == fits
        with pytest.raises(TooLargeError):
            await r.request(rpc_request(1, big=fits + 1))
        await until(lambda: len(r.records) == 2)
        assert [c.outcome for c in r.records] == ["response", "too_large"]


@pytest.mark.requirement("RPC-ERR-7", "RPC-LIM-2")
async def test_rpc_err_7_with_the_padded_limit_only_what_cannot_be_padded_is_too_large(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path, response_limit="padded")
        fits = _padding_for(SERVICE_PADDED_BYTES - 3)  # 'P' and the 2-byte length
        answer = await r.request(rpc_request(1, big=fits))
        assert len(answer["result"]["padding"]) == fits
        with pytest.raises(TooLargeError):
            await r.request(rpc_request(1, big=fits + 1))


@pytest.mark.requirement("RPC-ERR-5", "RPC-ENV-6")
async def test_rpc_err_5_requests_over_the_limit_per_signer_are_rate_limited(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path, rate_limit=RateLimit(2, 60))
        key = SigningKey.generate(net.network.random.randbytes)
        await r.request(rpc_request(1), signing_key=key)
        await net.clock.advance(20)
        await r.request(rpc_request(2), signing_key=key)
        with pytest.raises(RateLimitedError) as info:
            await r.request(rpc_request(3), signing_key=key)
        assert info.value.retry_after == 40 and info.value.retryable
        # another signer, and unsigned requests, have their own limits
        await r.request(
            rpc_request(4), signing_key=SigningKey.generate(net.network.random.randbytes)
        )
        await r.request(rpc_request(5))
        await net.clock.advance(40)
        await r.request(rpc_request(6), signing_key=key)
        assert len(r.binding.requests) == 5


@pytest.mark.requirement("RPC-ERR-5")
async def test_rpc_err_5_unsigned_requests_share_one_limit(tmp_path: Path) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path, anonymous_rate_limit=RateLimit(1, 10))
        await r.request(rpc_request(1))
        with pytest.raises(RateLimitedError) as info:
            await r.request(rpc_request(2))
        assert info.value.retry_after == 10
        await r.request(rpc_request(3), sign=True)  # a signed request is not anonymous


@pytest.mark.requirement("RPC-ERR-5", "RPC-ENV-6")
async def test_rpc_err_5_the_requester_repeats_only_after_retry_after(tmp_path: Path) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path, anonymous_rate_limit=RateLimit(1, 10))
        await r.request(rpc_request(1))
        results: list[Any] = []

        async def run() -> None:
            results.append(await r.requester.request_with_retry(r.link, "echo", rpc_request(2)))

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await until(lambda: len(_service_requests(r.bot)) == 2)
                await until(lambda: len(r.records) == 2)
                await r.alice.settle()  # the requester has the error and waits
                await net.clock.advance(9)
                await r.bot.settle()
                assert len(_service_requests(r.bot)) == 2  # not repeated before retryAfter
                await net.clock.advance(1)
        assert results == [_response(2)]
        assert len(_service_requests(r.bot)) == 3


async def test_a_retry_after_longer_than_the_requester_waits_is_raised(tmp_path: Path) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path, anonymous_rate_limit=RateLimit(1, 600))
        await r.request(rpc_request(1))
        with anyio.fail_after(WAIT_S), pytest.raises(RateLimitedError):
            await r.requester.request_with_retry(
                r.link, "echo", rpc_request(2), max_retry_after_s=60
            )
        assert len(_service_requests(r.bot)) == 2


@pytest.mark.requirement("RPC-ERR-6")
async def test_rpc_err_6_an_unknown_code_is_final_unless_it_has_retry_after(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        with anyio.fail_after(WAIT_S), pytest.raises(ServiceError) as info:
            await r.requester.request_with_retry(
                r.link, "echo", rpc_request(1, outcome="payment_required")
            )
        assert type(info.value) is ServiceError and info.value.code == "payment_required"
        assert not info.value.retryable
        assert len(_service_requests(r.bot)) == 1  # final: not repeated
        results: list[Any] = []

        async def run() -> None:
            try:
                await r.requester.request_with_retry(
                    r.link,
                    "echo",
                    rpc_request(2, outcome="payment_required", retry_after=5),
                    max_attempts=2,
                )
            except ServiceError as exc:
                results.append(exc)

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await until(lambda: len(_service_requests(r.bot)) == 2)
                await until(lambda: len(r.records) == 2)
                await r.alice.settle()
                await net.clock.advance(5)
        assert len(_service_requests(r.bot)) == 3  # repeated once, after 5 s
        assert results[0].code == "payment_required" and results[0].retry_after == 5


@pytest.mark.requirement("RPC-ERR-10")
async def test_rpc_err_10_a_failing_binding_is_internal_and_leaks_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="simplex_protocols.transports")
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        with pytest.raises(InternalServiceError) as info:
            await r.request(rpc_request(1, fail=True))
        assert "hunter2" not in str(info.value) and "hunter2" not in dumps(info.value.error)
        await until(lambda: bool(r.records))
    # the details are in the responder's log, for its operator
    assert any("hunter2" in (rec.exc_text or "") for rec in caplog.records)


# --------------------------------------------------------------------- time


@pytest.mark.requirement("RPC-LIM-1")
async def test_rpc_lim_1_the_binding_gets_a_budget_inside_the_180_s_window(tmp_path: Path) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        await r.request(rpc_request(1))
        assert r.binding.budgets == [165.0]


@pytest.mark.requirement("RPC-LIM-1", "RPC-ERR-8")
async def test_rpc_lim_1_a_binding_past_its_budget_is_answered_within_the_window(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path)
        errors: list[ServiceError] = []
        answered_at: list[float] = []

        async def run() -> None:
            try:
                await r.requester.request(r.link, "echo", rpc_request(1, sleep=500), timeout_s=180)
            except ServiceError as exc:
                answered_at.append(net.clock.now())
                errors.append(exc)

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await until(lambda: r.binding.running == 1)
                await net.clock.advance(174)
                await r.bot.settle()
                assert errors == []
                await net.clock.advance(1)
        # the binding ignored its 165 s budget: the transport cut it short 5 s before the
        # window closes
        assert r.binding.budgets == [165.0]
        assert isinstance(errors[0], ConversationRequiredError)
        assert answered_at == [175.0]


@pytest.mark.requirement("RPC-CMD-2")
async def test_rpc_cmd_2_without_a_timeout_the_requester_waits_30_s(tmp_path: Path) -> None:
    async with Net() as net:
        alice = await net.peer("alice")
        bot = await net.bot("bot", service_requests=False)  # the core drops every request
        link = await net.address(bot)
        requester = ServiceRPCRequester(alice.core, clock=net.clock)
        errors: list[CallTimeoutError] = []

        async def run() -> None:
            try:
                await requester.request(link, "echo", rpc_request(1))
            except CallTimeoutError as exc:
                errors.append(exc)

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await until(lambda: bool(net.network.service_calls))
                await net.clock.advance(29)
                await alice.settle()
                assert errors == []
                await net.clock.advance(1)
        assert errors[0].timeout == 30


async def test_an_address_without_ratchet_keys_is_a_service_transport_error(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        alice = await net.peer("alice")
        bot = await net.bot("bot", service_requests=True)
        link = await net.address(bot, pq_ratchet=None)
        requester = ServiceRPCRequester(alice.core, clock=net.clock)
        with anyio.fail_after(WAIT_S), pytest.raises(ServiceTransportError) as info:
            await requester.request(link, "echo", rpc_request(1))
        assert info.value.service_error == "notDRAddress"


@pytest.mark.requirement("RPC-LIM-2", "RPC-LIM-3")
async def test_a_request_over_the_size_limits_is_refused_before_sending(tmp_path: Path) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path, response_limit="padded")
        over_recommended = rpc_request(1, text="x" * MAX_SERVICE_JSON_BYTES)
        with pytest.raises(MessageTooLargeError) as info:
            await r.request(over_recommended)
        assert info.value.limit == MAX_SERVICE_JSON_BYTES
        lenient = ServiceRPCRequester(r.alice.core, clock=net.clock, strict_size=False)
        with anyio.fail_after(WAIT_S):
            answer = await lenient.request(r.link, "echo", rpc_request(2, text="y" * 10_200))
        assert answer["result"]["echo"]["text"] == "y" * 10_200
        with pytest.raises(MessageTooLargeError) as info:
            await lenient.request(r.link, "echo", rpc_request(3, text="z" * SERVICE_PADDED_BYTES))
        assert info.value.limit == SERVICE_PADDED_BYTES
        assert len(_service_requests(r.bot)) == 1


@pytest.mark.requirement("RPC-ENV-1", "RPC-ENV-2")
async def test_rpc_env_1_a_response_envelope_that_breaks_the_spec_is_an_envelope_error(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        alice = await net.peer("alice")
        bot = await net.bot("bot", service_requests=True)
        link = await net.address(bot)
        requester = ServiceRPCRequester(alice.core, clock=net.clock)
        errors: list[EnvelopeError] = []

        async def run() -> None:
            try:
                await requester.request(link, "echo", rpc_request(1))
            except EnvelopeError as exc:
                errors.append(exc)

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                event = await bot.event("serviceRequest")
                both = {"response": 1, "error": {"code": "internal"}}
                await bot.cmd(
                    f"/_service_response {bot.user_id} {event['requestId']} {dumps(both)}"
                )
        assert errors[0].code == "both_response_and_error"


# --------------------------------------------------------------------- concurrency, shutdown


async def test_a_request_that_finds_no_free_slot_in_time_is_rate_limited(tmp_path: Path) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path, max_concurrency=1)
        errors: list[ServiceError] = []

        async def run(rid: int, gate: str | None) -> None:
            params = {"gate": gate} if gate else {}
            try:
                await r.requester.request(r.link, "echo", rpc_request(rid, **params), timeout_s=180)
            except ServiceError as exc:
                errors.append(exc)

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run, 1, "forever")
                await r.binding.start_signal("forever").wait()
                tg.start_soon(run, 2, None)
                await until(lambda: len(_service_requests(r.bot)) == 2)
                await net.clock.advance(165)
                await until(lambda: len(errors) == 1)
                assert errors[0].code == "rate_limited"
                await net.clock.advance(10)
        assert [e.code for e in errors] == ["rate_limited", "conversation_required"]
        busy = next(e for e in errors if e.code == "rate_limited")
        assert busy.retry_after == 5
        assert r.binding.max_running == 1


async def test_a_call_that_swallows_its_cancellation_is_still_answered_as_cut_short() -> None:
    # The responder on the real clock (the path a bot takes): shutdown(grace_s=0) cuts the
    # call at once, with no time to wait for.
    async with Net() as net:
        alice = await net.peer("alice")
        bot = await net.bot("bot", service_requests=True)
        link = await net.address(bot)
        binding = EchoBinding()
        records: list[CallRecord] = []
        responder = ServiceRPCResponder(
            bot.core, [binding], clock=SystemClock(), on_call=records.append
        )
        await net.start(responder.serve)
        requester = ServiceRPCRequester(alice.core, clock=net.clock)
        outcome: list[Any] = []

        async def run() -> None:
            request = rpc_request(1, gate="held", swallow=True)
            try:
                outcome.append(await requester.request(link, "echo", request, timeout_s=60))
            except ServiceError as exc:
                outcome.append(exc)

        await shut_down_while_held(responder, binding, run)
        # The binding returned normally from the cancellation; its answer is not sent.
        assert binding.swallowed == 1
        cut = outcome[0]
        assert isinstance(cut, InternalServiceError) and cut.retry_after == 30
        await until(lambda: len(records) == 1)
        assert records[0].outcome == "internal"


async def test_graceful_shutdown_answers_every_request_in_flight(tmp_path: Path) -> None:
    async with Net() as net:
        r = await _rpc(net, tmp_path, shutdown_grace_s=5)
        outcomes: dict[int, Any] = {}

        async def run(rid: int, sleep: float) -> None:
            try:
                outcomes[rid] = await r.requester.request(
                    r.link, "echo", rpc_request(rid, sleep=sleep), timeout_s=120
                )
            except ServiceError as exc:
                outcomes[rid] = exc

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run, 1, 2)
                tg.start_soon(run, 2, 100)
                await until(lambda: r.binding.running == 2)
                tg.start_soon(r.responder.shutdown)
                await until(lambda: r.responder.closing)
                await net.clock.advance(2)
                await until(lambda: 1 in outcomes)
                assert 2 not in outcomes
                await net.clock.advance(3)
        assert outcomes[1] == _response(1, sleep=2)
        cut = outcomes[2]
        assert isinstance(cut, InternalServiceError) and cut.retry_after == 30
        await until(lambda: len(r.records) == 2)
        assert sorted(c.outcome for c in r.records) == ["internal", "response"]
        replies = [e for e in r.bot.events if e.get("type") == "serviceReplySent"]
        assert len(replies) == 2  # exactly one envelope each
