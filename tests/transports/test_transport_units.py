"""The transports' parts that need no network: rate limits, the core's failures as typed errors
(against a scripted core), answers worked out from crafted events, and argument checks."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import pytest
from transkit import (
    WAIT_S,
    EchoBinding,
    ScriptedBackend,
    agent_error,
    chat_error,
    rpc_request,
    service_error,
    until,
)

from simplex_protocols._clock import ManualClock
from simplex_protocols.bindings import EnvelopeOutcome
from simplex_protocols.core import ChatAPI, ChatCore, ContactRef, GroupRef
from simplex_protocols.core import commands as cmds
from simplex_protocols.errors import (
    CallTimeoutError,
    CoreConnectionError,
    CoreError,
    MessageTooLargeError,
    ServiceTransportError,
    UnexpectedResponseError,
)
from simplex_protocols.limits import SERVICE_PADDED_BYTES
from simplex_protocols.rpc import ErrorCode, SigningKey
from simplex_protocols.transports import (
    ChatCaller,
    ChatResponder,
    RateLimit,
    ServiceRPCRequester,
    ServiceRPCResponder,
    internal_error_for,
)
from simplex_protocols.transports._ratelimit import RateLimiter

pytestmark = pytest.mark.anyio

USER = {"userId": 1, "localDisplayName": "bot", "profile": {"displayName": "bot"}}


# --------------------------------------------------------------------- rate limits


def test_a_rate_limiter_admits_its_limit_in_any_window() -> None:
    limiter = RateLimiter(RateLimit(2, 10))
    assert limiter.check("k", 0.0) is None
    assert limiter.check("k", 4.0) is None
    assert limiter.check("k", 5.0) == 5  # the request at 0 leaves the window at 10
    assert limiter.check("k", 9.5) == 1  # never less than a second
    assert limiter.check("other", 9.5) is None
    assert limiter.check("k", 10.0) is None
    assert limiter.check("k", 10.1) == 4  # the one at 4 leaves at 14


def test_refused_requests_are_not_counted() -> None:
    limiter = RateLimiter(RateLimit(1, 10))
    assert limiter.check("k", 0.0) is None
    for t in range(1, 10):
        assert limiter.check("k", float(t)) is not None
    assert limiter.check("k", 10.0) is None


def test_a_rate_limiter_forgets_the_least_recently_seen_key_past_its_bound() -> None:
    # Keys below their limit are forgotten, least recently seen first (issue 13, item 9: a
    # key at its limit is not; see tests/transports/test_rpc_global_limit.py).
    limiter = RateLimiter(RateLimit(2, 60), max_keys=2)
    limiter.check("a", 0.0)
    limiter.check("b", 0.0)
    limiter.check("c", 0.0)
    assert len(limiter) == 2
    assert limiter.check("a", 1.0) is None  # forgotten: its count started again
    assert limiter.check("a", 2.0) is None
    assert limiter.check("a", 3.0) == 58  # the one at 1 leaves at 61


@pytest.mark.parametrize(
    ("requests", "per_s", "error"),
    [(0, 1, ValueError), (1, 0, ValueError), (1, float("inf"), ValueError), (True, 1, TypeError)],
)
def test_a_rate_limit_is_checked(requests: Any, per_s: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        RateLimit(requests, per_s)


# --------------------------------------------------------------------- the core's failures


async def _requester(
    handler: Any, clock: ManualClock | None = None
) -> tuple[ServiceRPCRequester, ScriptedBackend, ChatCore]:
    backend = ScriptedBackend(handler)
    core = ChatCore(backend)
    requester = ServiceRPCRequester(core, user_id=1, clock=clock or ManualClock())
    return requester, backend, core


async def test_the_core_timeout_is_a_call_timeout() -> None:
    requester, backend, core = await _requester(lambda cmd: service_error("timeout"))
    async with core:
        with anyio.fail_after(WAIT_S), pytest.raises(CallTimeoutError) as info:
            await requester.request("@shop.simplex", "echo", rpc_request(1), timeout_s=45)
    assert info.value.timeout == 45
    assert isinstance(info.value.__cause__, CoreError)
    assert backend.commands[0].startswith("/_service_request 1 @shop.simplex timeout=45 {")


@pytest.mark.parametrize("kind", ["notDRAddress", "badSignature", "rejected", "somethingNew"])
async def test_other_service_failures_are_service_transport_errors(kind: str) -> None:
    requester, _, core = await _requester(lambda cmd: service_error(kind))
    async with core:
        with anyio.fail_after(WAIT_S), pytest.raises(ServiceTransportError) as info:
            await requester.request("@shop.simplex", "echo", rpc_request(1))
    assert info.value.service_error == kind and info.value.error_type == kind


async def test_a_request_the_agent_cannot_pad_is_message_too_large() -> None:
    large = agent_error({"type": "CMD", "cmdErr": {"type": "LARGE"}, "errContext": "x"})
    requester, _, core = await _requester(lambda cmd: large)
    async with core:
        with anyio.fail_after(WAIT_S), pytest.raises(MessageTooLargeError) as info:
            await requester.request("@shop.simplex", "echo", rpc_request(1))
    assert info.value.limit == SERVICE_PADDED_BYTES and info.value.what == "service request"


async def test_other_core_errors_pass_through_unchanged() -> None:
    name = agent_error(
        {
            "type": "SMP",
            "serverAddress": "smp://x",
            "smpErr": {"type": "NAME", "nameErr": {"type": "NOT_FOUND"}},
        }
    )
    requester, _, core = await _requester(lambda cmd: name)
    async with core:
        with anyio.fail_after(WAIT_S), pytest.raises(CoreError) as info:
            await requester.request("@nobody.simplex", "echo", rpc_request(1))
    assert type(info.value) is CoreError and info.value.chain[-2:] == ["NAME", "NOT_FOUND"]


@pytest.mark.parametrize(
    ("resp", "code"),
    [
        ({"type": "cmdOk"}, "unexpected_response"),
        ({"type": "serviceResponse", "responseData": [1]}, "malformed_frame"),
    ],
)
async def test_an_unexpected_core_answer_is_an_unexpected_response(
    resp: dict[str, Any], code: str
) -> None:
    requester, _, core = await _requester(lambda cmd: resp)
    async with core:
        with anyio.fail_after(WAIT_S), pytest.raises(UnexpectedResponseError) as info:
            await requester.request("@shop.simplex", "echo", rpc_request(1))
    assert info.value.code == code


async def test_a_core_that_never_answers_times_out_on_the_requesters_clock() -> None:
    clock = ManualClock()
    requester, _, core = await _requester(lambda cmd: None, clock)
    errors: list[CallTimeoutError] = []

    async def run() -> None:
        try:
            await requester.request("@shop.simplex", "echo", rpc_request(1), timeout_s=20)
        except CallTimeoutError as exc:
            errors.append(exc)

    async with core:
        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await until(lambda: clock.pending_sleepers == 1)
                await clock.advance(29)
                assert errors == []
                await clock.advance(1)  # the core's 20 s and a 10 s guard
    assert errors[0].timeout == 20


async def test_the_active_user_is_asked_once() -> None:
    def handler(cmd: str) -> dict[str, Any]:
        if cmd == "/user":
            return {"type": "activeUser", "user": {**USER, "userId": 4}}
        return {"type": "serviceResponse", "responseData": {"response": {"ok": True}}}

    backend = ScriptedBackend(handler)
    async with ChatCore(backend) as core:
        requester = ServiceRPCRequester(ChatAPI(core), clock=ManualClock())  # a ChatAPI will do
        assert requester.core is core
        with anyio.fail_after(WAIT_S):
            assert await requester.request("@a.simplex", "echo", {}) == {"ok": True}
            assert await requester.request("@a.simplex", "echo", {}) == {"ok": True}
    assert backend.commands[0] == "/user"
    assert [c.split(" ")[1] for c in backend.commands[1:]] == ["4", "4"]


async def test_a_core_without_a_user_cannot_send_requests() -> None:
    no_user = chat_error(type="error", errorType={"type": "noActiveUser"})
    async with ChatCore(ScriptedBackend(lambda cmd: no_user)) as core:
        with anyio.fail_after(WAIT_S), pytest.raises(CoreError) as info:
            await ServiceRPCRequester(core).request("@a.simplex", "echo", {})
    assert info.value.error_type == "noActiveUser"


# --------------------------------------------------------------------- the responder's answers


def _event(data: Any, *, signer: str | None = None, user_id: int = 1) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "serviceRequest",
        "user": {**USER, "userId": user_id},
        "requestId": "req-1",
        "requestData": data,
    }
    if signer is not None:
        event["signerKey"] = signer
    return event


class _Odd(EchoBinding):
    """A binding that answers what a test sets in ``answer``."""

    answer: Any = None

    async def handle_rpc(self, request: Any, caller: Any, *, budget_s: float) -> Any:
        return self.answer


async def _answer(binding: Any, event: dict[str, Any], **options: Any) -> Any:
    async with ChatCore(ScriptedBackend(lambda cmd: None)) as core:
        responder = ServiceRPCResponder(core, [binding], clock=ManualClock(), **options)
        with anyio.fail_after(WAIT_S):
            return await responder.answer(event)


@pytest.mark.requirement("RPC-ERR-10")
async def test_a_response_that_is_not_json_is_internal() -> None:
    binding = _Odd()
    binding.answer = {"jsonrpc": "2.0", "id": 1, "result": {1, 2}}
    answer = await _answer(binding, _event({"protocol": "echo", "request": {}}))
    assert answer.outcome == "internal"


async def test_an_invalid_envelope_outcome_from_the_binding_is_internal() -> None:
    binding = _Odd()
    binding.answer = EnvelopeOutcome("rate_limited", "x", retry_after=-1)
    answer = await _answer(binding, _event({"protocol": "echo", "request": {}}))
    assert answer.outcome == "internal"


async def test_a_binding_outcome_is_passed_through_with_its_retry_after() -> None:
    binding = _Odd()
    binding.answer = EnvelopeOutcome("rate_limited", "slow down", retry_after=7)
    answer = await _answer(binding, _event({"protocol": "echo", "request": {}}))
    error = answer.response.error
    assert (error.code, error.message, error.retry_after) == (
        ErrorCode.RATE_LIMITED,
        "slow down",
        7,
    )


@pytest.mark.requirement("RPC-ERR-4")
@pytest.mark.parametrize("data", [None, "text", [1], 5])
async def test_request_data_that_is_not_an_object_is_bad_request(data: Any) -> None:
    answer = await _answer(EchoBinding(), _event(data))
    assert answer.outcome == "bad_request"


async def test_signed_and_unsigned_callers_are_told_apart() -> None:
    key = SigningKey.from_seed(bytes(32)).public_key.encode()
    signed = await _answer(EchoBinding(), _event({"protocol": "echo", "request": {}}, signer=key))
    unsigned = await _answer(EchoBinding(), _event({"protocol": "echo", "request": {}}))
    assert signed.caller.key == f"rpc:{key}" and signed.caller.signer_key == key
    assert unsigned.caller.key.startswith("rpc-anonymous:") and unsigned.caller.signer_key is None


async def test_events_for_another_user_and_without_a_request_id_are_not_answered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Another test's program may have set the transports' logger to warnings: ask for everything.
    caplog.set_level(logging.DEBUG, logger="simplex_protocols.transports")
    async with ChatCore(ScriptedBackend(lambda cmd: None)) as core:
        responder = ServiceRPCResponder(core, [EchoBinding()], user_id=1, clock=ManualClock())
        envelope = {"protocol": "echo", "request": {}}
        assert responder._accept(_event(envelope, user_id=2)) == []
        assert responder._accept({**_event(envelope), "requestId": 5}) == []
        assert responder._accept({"type": "newChatItems"}) == []
        assert len(responder._accept(_event(envelope))) == 1
    assert any("without a usable requestId" in r.getMessage() for r in caplog.records)


async def _serve_one(handler: Any) -> tuple[ScriptedBackend, list[Any]]:
    backend = ScriptedBackend(handler)
    records: list[Any] = []
    async with ChatCore(backend) as core:
        responder = ServiceRPCResponder(
            core, [EchoBinding()], clock=ManualClock(), on_call=records.append
        )
        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                await tg.start(responder.serve)
                backend.event(_event({"protocol": "echo", "request": rpc_request(1)}))
                await until(lambda: bool(records))
                await responder.shutdown()
    return backend, records


async def test_a_response_the_agent_cannot_pad_is_replaced_by_too_large() -> None:
    large = agent_error({"type": "CMD", "cmdErr": {"type": "LARGE"}, "errContext": "x"})

    def handler(cmd: str) -> dict[str, Any]:
        if '"response"' in cmd:
            return large
        return {"type": "serviceReplyAccepted", "user": USER, "connectionId": "c1"}

    backend, _ = await _serve_one(handler)
    assert len(backend.commands) == 2
    assert (
        backend.commands[1]
        == '/_service_response 1 req-1 {"error":{"code":"too_large","message":"the response is too large"}}'
    )


async def test_a_response_after_the_window_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="simplex_protocols.transports")
    backend, records = await _serve_one(lambda cmd: service_error("noPendingRequest"))
    assert len(backend.commands) == 1 and records[0].outcome == "response"
    assert any("window closed" in r.getMessage() for r in caplog.records)


async def test_a_lost_core_ends_serve_with_the_connection_error() -> None:
    backend = ScriptedBackend(lambda cmd: None)
    async with ChatCore(backend) as core:
        responder = ServiceRPCResponder(core, [EchoBinding()], clock=ManualClock())
        errors: list[Exception] = []

        async def serve(*, task_status: Any) -> None:
            try:
                await responder.serve(task_status=task_status)
            except CoreConnectionError as exc:
                errors.append(exc)

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                await tg.start(serve)
                backend.lose()
    assert isinstance(errors[0], CoreConnectionError)


async def test_a_responder_serves_once_and_a_shutdown_before_serving_ends_it_at_once() -> None:
    async with ChatCore(ScriptedBackend(lambda cmd: None)) as core:
        responder = ServiceRPCResponder(core, [EchoBinding()], clock=ManualClock())
        await responder.shutdown()
        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                await tg.start(responder.serve)
        with pytest.raises(RuntimeError):
            await responder.serve()


# --------------------------------------------------------------------- arguments


async def test_responders_check_their_arguments() -> None:
    async with ChatCore(ScriptedBackend(lambda cmd: None)) as core:
        with pytest.raises(ValueError, match="no binding"):
            ServiceRPCResponder(core, [EchoBinding()], protocols=["mcp"])
        with pytest.raises(ValueError, match="no binding"):
            ChatResponder(core, [EchoBinding()], protocols=["mcp"])
        with pytest.raises(ValueError, match="two bindings"):
            ChatResponder(core, [EchoBinding(), EchoBinding()])
        with pytest.raises(ValueError, match="another name"):
            ChatResponder(core, {"mcp": EchoBinding()})
        with pytest.raises(TypeError):
            ChatResponder(core, [object()])
        with pytest.raises(ValueError):
            ServiceRPCResponder(core, [EchoBinding()], response_margin_s=180)
        with pytest.raises(ValueError):
            ChatResponder(core, [EchoBinding()], max_concurrency=0)


async def test_the_caller_checks_its_arguments() -> None:
    async with ChatCore(ScriptedBackend(lambda cmd: None)) as core:
        caller = ChatCaller(core, clock=ManualClock())
        with pytest.raises(ValueError, match="group"):
            await caller.call(ContactRef(1), "echo", {}, member_id=3)
        with pytest.raises(ValueError, match="wait_s"):
            await caller.call(GroupRef(1), "echo", {}, wait_s=0)
        with pytest.raises(TypeError):
            await caller.call("@1", "echo", {})  # type: ignore[arg-type]


def test_internal_errors_follow_json_rpc_or_the_bindings_own_hook() -> None:
    binding = EchoBinding()
    assert internal_error_for(binding, {"jsonrpc": "2.0", "id": "a", "method": "m"}, "down") == {
        "jsonrpc": "2.0",
        "id": "a",
        "error": {"code": -32603, "message": "down"},
    }
    assert internal_error_for(binding, {"jsonrpc": "2.0", "method": "notify"}, "down") is None
    assert internal_error_for(binding, None, "down") is None

    class Hooked(EchoBinding):
        def internal_error(self, request: Any, reason: str) -> dict[str, Any]:
            return {"custom": reason}

    assert internal_error_for(Hooked(), {"id": 1}, "down") == {"custom": "down"}


async def test_a_failing_on_call_hook_is_logged_and_does_not_break_the_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)

    def hook(record: Any) -> None:
        raise RuntimeError("hook broke")

    backend = ScriptedBackend(
        lambda cmd: {"type": "serviceReplyAccepted", "user": USER, "connectionId": "c"}
    )
    async with ChatCore(backend) as core:
        responder = ServiceRPCResponder(core, [EchoBinding()], clock=ManualClock(), on_call=hook)
        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                await tg.start(responder.serve)
                backend.event(_event({"protocol": "echo", "request": rpc_request(1)}))
                await until(
                    lambda: any("on_call hook failed" in r.getMessage() for r in caplog.records)
                )
                await responder.shutdown()
    assert len(backend.commands) == 1


@asynccontextmanager
async def _responder(
    records: list[Any],
) -> AsyncIterator[tuple[ScriptedBackend, ChatCore, ServiceRPCResponder]]:
    """A Service RPC responder serving while the block runs (the block ends with its
    shutdown)."""
    backend = ScriptedBackend(
        lambda cmd: {"type": "serviceReplyAccepted", "user": USER, "connectionId": "c"}
    )
    async with ChatCore(backend) as core:
        responder = ServiceRPCResponder(
            core, [EchoBinding()], clock=ManualClock(), on_call=records.append
        )
        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                await tg.start(responder.serve)
                yield backend, core, responder
                await responder.shutdown()


async def test_a_burst_read_in_one_go_is_answered_whole() -> None:
    # Far more requests than any event buffer holds, read by the core before the responder's
    # tasks run: each call's task starts as its event arrives, so none is lost.
    records: list[Any] = []
    count = 1100  # more than the 1,000 events a subscription held by default
    async with _responder(records) as (backend, _, _):
        for n in range(count):
            event = _event({"protocol": "echo", "request": rpc_request(n)})
            event["requestId"] = f"req-{n}"
            backend.event(event)
        await until(lambda: len(records) == count)
    answered = {
        c.split()[2] for c in backend.commands if c.split()[0] == cmds.SERVICE_RESPONSE_VERB
    }
    assert answered == {f"req-{n}" for n in range(count)}
    assert {r.outcome for r in records} == {"response"}


async def test_a_responder_that_fails_on_an_event_stops_serving_with_its_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A bug in reading an event ends serve() with it (in the group of serve's task group), as
    # it did when serve's own task read the events; the core goes on reading for the others.
    backend = ScriptedBackend(lambda cmd: {"type": "cmdOk"})
    errors: list[RuntimeError] = []
    async with ChatCore(backend) as core:
        responder = ServiceRPCResponder(core, [EchoBinding()], clock=ManualClock())

        def broken(event: dict[str, Any]) -> list[Any]:
            raise RuntimeError("a bug in _accept")

        monkeypatch.setattr(responder, "_accept", broken)

        async def run(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            try:
                await responder.serve(task_status=task_status)
            except* RuntimeError as group:
                errors.extend(e for e in group.exceptions if isinstance(e, RuntimeError))

        with anyio.fail_after(WAIT_S):
            async with core.events(types=["serviceRequest"]) as others:
                async with anyio.create_task_group() as tg:
                    await tg.start(run)
                    backend.event(_event({"protocol": "echo", "request": rpc_request(1)}))
                await until(lambda: bool(errors))
                backend.event(_event({"protocol": "echo", "request": rpc_request(2)}))
                seen = [await others.__anext__(), await others.__anext__()]
    assert [str(e) for e in errors] == ["a bug in _accept"]
    assert [e["requestData"]["request"]["id"] for e in seen] == [1, 2]


async def test_events_a_responder_does_not_read_never_reach_its_subscription(
    caplog: pytest.LogCaptureFixture,
) -> None:
    records: list[Any] = []
    async with _responder(records) as (backend, _, _):
        # A chat's traffic, all read by the core in one go: none of it is queued for the
        # Service RPC responder, so its one-event buffer does not overflow.
        for n in range(50):
            backend.event({"type": "newChatItems", "n": n})
        backend.event(_event({"protocol": "echo", "request": rpc_request(1)}))
        await until(lambda: bool(records))
    assert [r.outcome for r in records] == ["response"]
    assert not any("subscribing again" in r.getMessage() for r in caplog.records)
