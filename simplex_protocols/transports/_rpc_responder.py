"""Service RPC, responder side: answer each ``serviceRequest`` event with exactly one envelope.

Spec "Service RPC transport": the responder's core reports the request as the event
``serviceRequest`` with ``requestId``, ``signerKey`` and ``requestData``, and the responder
sends the response with ``/_service_response <userId> <requestId> <json>``; "the core accepts a
response within 180 seconds of receiving the request" (RPC-LIM-1).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, Literal

import anyio
import anyio.lowlevel

from simplex_protocols._clock import Clock
from simplex_protocols._trace_context import request_trace_id
from simplex_protocols.core import ChatAPI, ChatCore, event_type, event_user_id
from simplex_protocols.errors import (
    CoreConnectionError,
    CoreError,
    EnvelopeError,
    LocalProtocolError,
    MessageTooLargeError,
    RequestKeyMismatchError,
    SignatureError,
)
from simplex_protocols.limits import RESPONSE_WINDOW_S
from simplex_protocols.rpc import (
    ABSENT,
    ErrorCode,
    JSONValue,
    ServiceRequest,
    ServiceResponse,
    bad_request_for,
    check_request_key,
    check_service_size,
    error_response,
    parse_service_request,
    success_response,
)

from ._binding import Binding, Caller, EnvelopeOutcome, TransportKind
from ._common import (
    CallRecord,
    log_call,
    logger,
    method_of,
    real_clock,
    run_until,
    served_bindings,
    shielded,
)
from ._ratelimit import RateCounter, RateLimit, RateLimiter
from ._server import Call, EventResponder

__all__ = [
    "DEFAULT_RESPONSE_MARGIN_S",
    "HARD_STOP_MARGIN_S",
    "RPCAnswer",
    "ResponseLimit",
    "ServiceRPCResponder",
]

#: Seconds of the 180 s window kept back from the binding's budget: for a binding's own
#: clean-up after its budget (the A2A binding waits up to 5 s for a cancelled task), the send,
#: and the clocks.
DEFAULT_RESPONSE_MARGIN_S: Final = 15.0

#: A binding still running this many seconds before the window closes is cut short by the
#: transport, whatever its budget said, so that the answer still reaches the core in time.
HARD_STOP_MARGIN_S: Final = 5.0

#: Which size makes a response ``too_large``: ``"recommended"`` keeps every response at or
#: under 10,000 bytes of JSON (RPC-LIM-3); ``"padded"`` sends anything the agent can pad to
#: 11,106 bytes (RPC-LIM-2) and only refuses what would fail.
ResponseLimit = Literal["recommended", "padded"]

#: The members of a ``serviceRequest`` event that answering it reads.
_KEPT_EVENT_KEYS: Final = ("type", "requestId", "signerKey", "requestData")

_ANONYMOUS_KEY: Final = "\x00anonymous"
#: The one key of the limit for all signed requests together.
_SIGNED_KEY: Final = "\x00signed"


@dataclass(frozen=True, slots=True)
class RPCAnswer:
    """The answer to one service request, before it is sent.

    Attributes:
        response: the envelope to send.
        caller: who asked, as the binding saw it (or would have).
        protocol: the envelope's protocol, when the envelope could be read.
        method: the request's method name, for the log.
        trace_id: the trace ID of the request's ``params._meta.traceparent``, for the log.
    """

    response: ServiceResponse
    caller: Caller
    protocol: str | None = None
    method: str | None = None
    trace_id: str | None = None

    @property
    def outcome(self) -> str:
        """``response``, or the envelope error code."""
        error = self.response.error
        return "response" if error is None else str(error.code)


class ServiceRPCResponder(EventResponder):
    """Answers Service RPC requests for the protocols a bot serves, through its bindings.

    Each ``serviceRequest`` event gets exactly one envelope, sent with ``/_service_response``
    within the 180 s window (RPC-LIM-1):

    - ``rate_limited`` with ``retryAfter``: over ``rate_limit`` for its signer key, over
      ``signed_rate_limit`` for signed requests taken together, or over
      ``anonymous_rate_limit`` for unsigned requests taken together; also when every slot is
      busy until the window would close;
    - ``bad_request``: an invalid envelope (RPC-ERR-4), a ``requestKey`` that is not the
      verified signer key (RPC-SIG-3) or that comes on an unsigned request (RPC-SIG-4);
    - ``unsupported_protocol``: a protocol not served over Service RPC (RPC-ERR-2);
    - ``unsupported_version``: an envelope ``version`` not served, only for the protocols in
      ``envelope_versions`` (AMB-7); ``mcp`` and ``a2a`` ignore it (AMB-29);
    - the binding's answer: its response (RPC-ENV-3), or its envelope error
      (``conversation_required`` ...); a binding that runs past its budget gets
      ``conversation_required``: the request needs more time than Service RPC gives;
    - ``too_large``: the response is over the size limit (RPC-ERR-7; see ``response_limit``);
    - ``internal``: the binding raised (RPC-ERR-10); the details go to the log, never to the
      requester; also, with ``retryAfter``, for calls cut short by a shutdown.

    Args:
        core: an entered :class:`~simplex_protocols.core.ChatCore` (or a ``ChatAPI`` over one), started with
            ``service_requests=on``.
        bindings: the bindings, as a mapping by protocol name or an iterable.
        protocols: the protocols served over Service RPC (declared with ``transports.rpc``);
            default: every binding's.
        envelope_versions: for protocols whose messages carry no version, the envelope
            ``version`` values served (RPC-REQ-3, RPC-ERR-3).
        user_id: answer only requests to this user (default: any user of the core).
        clock: the responder's clock (windows, budgets, rate limits).
        rate_limit: the limit per signer key (signed requests).
        signed_rate_limit: the limit for all signed requests together, whatever their keys:
            keys cost a requester nothing, so the limit per key alone does not bound the
            work. A signed request is admitted only when both its key and this limit admit
            it, and it is counted by both only then: a key held at its own limit takes
            nothing from the others' share.
        anonymous_rate_limit: the limit for all unsigned requests together.
        rate_counter: where the three limits are counted instead of this process's memory:
            a counter shared by the processes that serve one service.
        max_concurrency: how many requests are handled at once; others wait for a slot.
        response_margin_s: seconds of the 180 s window kept back from the binding.
        response_limit: ``"recommended"`` (default: never more than 10,000 bytes of JSON) or
            ``"padded"`` (up to what the agent can pad to 11,106 bytes).
        busy_retry_after_s: ``retryAfter`` when no slot frees up in time.
        shutdown_grace_s: how long :meth:`shutdown` lets calls in flight go on.
        shutdown_retry_after_s: ``retryAfter`` of the ``internal`` error for calls cut short.
        random_bytes: randomness for ``rpc-anonymous:`` caller keys.
        on_call: called with a :class:`CallRecord` after each request (also logged).
    """

    def __init__(
        self,
        core: ChatCore | ChatAPI,
        bindings: Mapping[str, Binding] | Iterable[Binding],
        *,
        protocols: Collection[str] | None = None,
        envelope_versions: Mapping[str, Collection[JSONValue]] | None = None,
        user_id: int | None = None,
        clock: Clock | None = None,
        rate_limit: RateLimit | None = None,
        signed_rate_limit: RateLimit | None = None,
        anonymous_rate_limit: RateLimit | None = None,
        rate_counter: RateCounter | None = None,
        max_concurrency: int = 64,
        response_margin_s: float = DEFAULT_RESPONSE_MARGIN_S,
        response_limit: ResponseLimit = "recommended",
        busy_retry_after_s: int = 5,
        shutdown_grace_s: float = 10.0,
        shutdown_retry_after_s: int = 30,
        random_bytes: Callable[[int], bytes] = os.urandom,
        on_call: Callable[[CallRecord], None] | None = None,
    ) -> None:
        super().__init__(
            core,
            clock=clock,
            max_concurrency=max_concurrency,
            shutdown_grace_s=shutdown_grace_s,
        )
        if not 0 <= response_margin_s < RESPONSE_WINDOW_S:
            raise ValueError("response_margin_s must be between 0 and 180 s")
        if response_limit not in ("recommended", "padded"):
            raise ValueError("response_limit is 'recommended' or 'padded'")
        self.api = ChatAPI(self.core)
        self.bindings, self.protocols = served_bindings(bindings, protocols)
        self.envelope_versions = {k: list(v) for k, v in (envelope_versions or {}).items()}
        self.user_id = user_id
        self.response_margin_s = response_margin_s
        self.response_limit: ResponseLimit = response_limit
        self.busy_retry_after_s = busy_retry_after_s
        self.shutdown_retry_after_s = shutdown_retry_after_s
        self._signed_limiter = RateLimiter(rate_limit) if rate_limit is not None else None
        self._all_signed_limiter = (
            RateLimiter(signed_rate_limit) if signed_rate_limit is not None else None
        )
        self._anonymous_limiter = (
            RateLimiter(anonymous_rate_limit) if anonymous_rate_limit is not None else None
        )
        self._limits = (rate_limit, signed_rate_limit, anonymous_rate_limit)
        self._rate_counter = rate_counter
        self._random_bytes = random_bytes
        self._on_call = on_call

    # ------------------------------------------------------------------ events

    _event_types = frozenset({"serviceRequest"})

    def _accept(self, event: dict[str, Any]) -> list[Call]:
        if event_type(event) != "serviceRequest":
            return []
        user_id = event_user_id(event)
        if self.user_id is not None and user_id is not None and user_id != self.user_id:
            return []
        if user_id is None:
            user_id = self.user_id
        request_id = event.get("requestId")
        if not isinstance(request_id, str) or not request_id or user_id is None:
            logger.warning("a serviceRequest event without a usable requestId or user; skipped")
            return []
        arrived = self.clock.now()
        # The call keeps only what it reads of the event: the core puts a copy of the whole
        # user profile in every event, which would otherwise stay alive with each pending call.
        kept: dict[str, Any] = {k: event[k] for k in _KEPT_EVENT_KEYS if k in event}

        # A partial, not a closure: no coroutine frame of its own per pending call.
        return [partial(self._serve_request, kept, user_id, request_id, arrived)]

    async def _serve_request(
        self,
        event: Mapping[str, Any],
        user_id: int,
        request_id: str,
        arrived: float,
        scope: anyio.CancelScope,
    ) -> None:
        answer: RPCAnswer | None = None
        try:
            with scope:
                answer = await self.answer(event, arrived=arrived)
        finally:
            # Exactly one envelope per request, even for a call cut short by a shutdown or a
            # cancellation: never left to time out.
            if answer is None:
                answer = RPCAnswer(
                    error_response(
                        ErrorCode.INTERNAL,
                        "the responder is shutting down",
                        self.shutdown_retry_after_s,
                    ),
                    self._caller(event),
                )
            await self._send(user_id, request_id, answer)
            log_call(
                CallRecord(
                    TransportKind.RPC,
                    answer.caller.key,
                    answer.protocol,
                    answer.method,
                    answer.outcome,
                    self.clock.now() - arrived,
                    1,
                    answer.trace_id,
                ),
                self._on_call,
            )

    async def _send(self, user_id: int, request_id: str, answer: RPCAnswer) -> None:
        async def send(response: ServiceResponse) -> None:
            await self.api.send_service_response(user_id, request_id, response.to_json())

        try:
            await shielded(lambda: send(answer.response))
        except CoreError as exc:
            if exc.chain[-2:] == ["CMD", "LARGE"] and answer.response.error is None:
                # The agent could not pad it after all: still one answer, too_large.
                logger.warning("the core refused a response as too large; sending too_large")
                try:
                    await shielded(
                        lambda: send(
                            error_response(ErrorCode.TOO_LARGE, "the response is too large")
                        )
                    )
                except (CoreError, TimeoutError) as again:
                    logger.error("could not send too_large either: %s", again)
            elif "noPendingRequest" in exc.chain:
                logger.warning("the 180 s response window closed before the answer was sent")
            else:
                logger.error("the core refused the service response: %s", exc)
        except TimeoutError:
            logger.error("the core did not take the service response in time")
        except CoreConnectionError as exc:
            logger.error("could not send the service response: %s", exc)

    # ------------------------------------------------------------------ answering

    def _caller(self, event: Mapping[str, Any]) -> Caller:
        signer = event.get("signerKey")
        if isinstance(signer, str) and signer:
            return Caller(key=f"rpc:{signer}", transport=TransportKind.RPC, signer_key=signer)
        token = base64.urlsafe_b64encode(self._random_bytes(12)).decode("ascii")
        return Caller(key=f"rpc-anonymous:{token}", transport=TransportKind.RPC)

    def _rate_limited(self, caller: Caller, now: float) -> int | None:
        # RPC-ERR-5: rate_limited with the seconds after which a request will be admitted.
        if caller.signer_key is None:
            if self._anonymous_limiter is not None:
                return self._anonymous_limiter.check(_ANONYMOUS_KEY, now)
            return None
        # Both limits are asked before either counts, so a request one of them refuses is
        # counted by neither.
        limits = [
            (limiter, key)
            for limiter, key in (
                (self._signed_limiter, caller.signer_key),
                (self._all_signed_limiter, _SIGNED_KEY),
            )
            if limiter is not None
        ]
        for limiter, key in limits:
            retry_after = limiter.retry_after(key, now)
            if retry_after is not None:
                return retry_after
        for limiter, key in limits:
            limiter.record(key, now)
        return None

    async def _shared_rate_limited(self, counter: RateCounter, caller: Caller) -> int | None:
        # RPC-ERR-5 as _rate_limited, counted where every process of the service counts.
        per_key, signed, anonymous = self._limits
        checks: list[tuple[str, RateLimit | None]] = (
            [(_ANONYMOUS_KEY, anonymous)]
            if caller.signer_key is None
            else [(caller.signer_key, per_key), (_SIGNED_KEY, signed)]
        )
        kept = [(key, limit) for key, limit in checks if limit is not None]
        if not kept:
            return None
        return await counter.admit(kept, now=self.clock.now(), wall=self.clock.wall())

    async def answer(self, event: Mapping[str, Any], *, arrived: float | None = None) -> RPCAnswer:
        """Work out the envelope that answers one ``serviceRequest`` event (nothing is sent).

        Args:
            event: the core's ``serviceRequest`` event.
            arrived: when the request arrived, on the responder's clock (default: now); the
                binding's budget is counted from it.

        Never raises for anything the requester sent or the binding did: every outcome is an
        envelope.
        """
        start = self.clock.now() if arrived is None else arrived
        caller = self._caller(event)
        # Rate limits first: every request counts, good or bad.
        counter = self._rate_counter
        retry_after = (
            self._rate_limited(caller, self.clock.now())
            if counter is None
            else await self._shared_rate_limited(counter, caller)
        )
        if retry_after is not None:
            return RPCAnswer(
                error_response(ErrorCode.RATE_LIMITED, "too many requests", retry_after), caller
            )
        try:
            raw: Any = event.get("requestData")
            request = parse_service_request(raw)
        except EnvelopeError as exc:
            # RPC-ERR-4: bad_request for an invalid envelope.
            return RPCAnswer(bad_request_for(exc), caller)
        method, trace_id = method_of(request.request), request_trace_id(request.request)
        try:
            # RPC-SIG-3, RPC-SIG-4: requestKey must be the verified signer key, and an
            # unsigned request must not carry one.
            check_request_key(request, caller.signer_key)
        except (RequestKeyMismatchError, SignatureError) as exc:
            return RPCAnswer(bad_request_for(exc), caller, request.protocol, method, trace_id)
        early = self._check_protocol(request)
        if early is not None:
            return RPCAnswer(early, caller, request.protocol, method, trace_id)
        response = await self._run_binding(request, caller, start)
        return RPCAnswer(self._fit(response), caller, request.protocol, method, trace_id)

    def _check_protocol(self, request: ServiceRequest) -> ServiceResponse | None:
        if request.protocol not in self.protocols:
            # RPC-ERR-2: "the responder does not serve the protocol over Service RPC".
            return error_response(
                ErrorCode.UNSUPPORTED_PROTOCOL,
                f"the protocol {request.protocol} is not served over Service RPC",
            )
        versions = self.envelope_versions.get(request.protocol)
        if versions is not None:
            if request.version is ABSENT:
                # RPC-REQ-3: a protocol whose messages carry no version needs the envelope's.
                return error_response(
                    ErrorCode.BAD_REQUEST, f"{request.protocol} requests need version"
                )
            if not any(_same_json(request.version, v) for v in versions):
                # RPC-ERR-3: "the responder does not serve the requested version".
                return error_response(ErrorCode.UNSUPPORTED_VERSION, "this version is not served")
        return None

    async def _run_binding(
        self, request: ServiceRequest, caller: Caller, start: float
    ) -> ServiceResponse:
        binding = self.bindings[request.protocol]
        # RPC-LIM-1: "The core accepts a response within 180 seconds of receiving the request."
        deadline = start + RESPONSE_WINDOW_S - self.response_margin_s
        hard_stop = start + RESPONSE_WINDOW_S - min(self.response_margin_s, HARD_STOP_MARGIN_S)

        try:
            self._limiter.acquire_nowait()
            got_slot = True
        except anyio.WouldBlock:
            got_slot, _ = await run_until(self.clock, deadline, self._limiter.acquire)
        if not got_slot:
            return error_response(
                ErrorCode.RATE_LIMITED, "the responder is busy", self.busy_retry_after_s
            )
        try:
            budget = deadline - self.clock.now()
            try:
                if real_clock(self.clock):
                    # run_until's real-clock path in this frame: two coroutines fewer on the
                    # stack of each call in flight, which every resume of the call passes.
                    finished, result = False, None
                    with anyio.move_on_after(hard_stop - self.clock.now()):
                        result = await binding.handle_rpc(request.request, caller, budget_s=budget)
                        # A swallowed cancellation surfaces; an answer goes on without waiting
                        # a turn of the event loop.
                        await anyio.lowlevel.checkpoint_if_cancelled()
                        finished = True
                else:
                    finished, result = await run_until(
                        self.clock,
                        hard_stop,
                        _binding_answer,
                        binding,
                        request.request,
                        caller,
                        budget,
                    )
            except Exception:
                # RPC-ERR-10: internal; the details stay in our log.
                logger.exception(
                    "the %s binding failed on a Service RPC request from %s",
                    request.protocol,
                    caller.key,
                )
                return error_response(ErrorCode.INTERNAL, "the responder failed")
        finally:
            self._limiter.release()
        if not finished:
            logger.warning(
                "the %s binding did not answer within %.0f s; answering conversation_required",
                request.protocol,
                budget,
            )
            return error_response(
                ErrorCode.CONVERSATION_REQUIRED,
                "the request needs more time than Service RPC allows; use a conversation",
            )
        if isinstance(result, EnvelopeOutcome):
            try:
                return error_response(result.code, result.message, result.retry_after)
            except LocalProtocolError:
                logger.error("the %s binding returned an invalid envelope error", request.protocol)
                return error_response(ErrorCode.INTERNAL, "the responder failed")
        # RPC-ENV-3: the response is the protocol's response message.
        return success_response(result)

    def _fit(self, response: ServiceResponse) -> ServiceResponse:
        kind: Literal["response"] = "response"
        try:
            size = check_service_size(response, kind=kind)
        except MessageTooLargeError:
            # RPC-ERR-7: too_large takes the place of a response over the limit.
            return error_response(ErrorCode.TOO_LARGE, "the response is too large")
        except (LocalProtocolError, TypeError, ValueError):
            logger.error("the binding's response cannot be written as JSON")
            return error_response(ErrorCode.INTERNAL, "the responder failed")
        if self.response_limit == "recommended" and not size.within_recommended:
            # RPC-LIM-3: we never send more than 10,000 bytes of JSON by default.
            return error_response(ErrorCode.TOO_LARGE, "the response is too large")
        return response


async def _binding_answer(
    binding: Binding, request: JSONValue, caller: Caller, budget_s: float
) -> dict[str, Any] | EnvelopeOutcome:
    """The binding's answer to an envelope's ``request``, the work :func:`run_until` bounds on
    another clock than the real one."""
    answer = await binding.handle_rpc(request, caller, budget_s=budget_s)
    await anyio.lowlevel.checkpoint_if_cancelled()  # a swallowed cancellation surfaces here
    return answer


def _same_json(a: JSONValue, b: JSONValue) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)
