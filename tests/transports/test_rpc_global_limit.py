"""Signed Service RPC requests are bounded as a whole, and a limited key stays limited (issue
13, item 9): keys cost a requester nothing, so a limit per key alone lets fresh keys through,
and a bounded table of keys must not forget the key that is over its limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from transkit import WAIT_S, EchoBinding, Net, ScriptedBackend, rpc_request

from simplex_protocols._clock import ManualClock
from simplex_protocols.core import ChatCore
from simplex_protocols.errors import RateLimitedError
from simplex_protocols.rpc import SigningKey
from simplex_protocols.transports import RateLimit, ServiceRPCRequester, ServiceRPCResponder
from simplex_protocols.transports._ratelimit import RateLimiter

pytestmark = pytest.mark.anyio

USER = {"userId": 1, "localDisplayName": "bot", "profile": {"displayName": "bot"}}


def _event(data: Any, *, signer: str) -> dict[str, Any]:
    """A ``serviceRequest`` event as the core reports a signed request."""
    return {
        "type": "serviceRequest",
        "user": USER,
        "requestId": "req-1",
        "signerKey": signer,
        "requestData": data,
    }


def test_a_limited_key_is_kept_past_10000_fresh_keys_and_released_when_its_window_ends() -> None:
    limiter = RateLimiter(RateLimit(20, 60), max_keys=10_000)
    for i in range(20):
        assert limiter.check("hammer", i * 0.01) is None
    assert limiter.check("hammer", 1.0) == 59
    for i in range(10_000):
        assert limiter.check(f"fresh-{i}", 2.0) is None
    assert len(limiter) <= 2 * 10_000
    assert limiter.is_limited("hammer", 3.0)
    assert limiter.check("hammer", 30.0) == 30  # still refused: not forgotten
    assert limiter.check("hammer", 60.0) is None  # the first request left the window


def test_when_every_remembered_key_is_limited_a_new_one_waits_for_a_release() -> None:
    limiter = RateLimiter(RateLimit(1, 60), max_keys=3)
    for key in "abc":
        assert limiter.check(key, 0.0) is None
    # A fourth key would be a fourth limited key: refused until "a" is released, at 60.
    assert limiter.check("d", 10.0) == 50
    assert limiter.check("a", 10.0) == 50  # the three are still held
    assert len(limiter) == 3
    assert limiter.check("d", 60.0) is None


async def test_rpc_err_5_a_key_over_its_limit_stays_limited_after_10000_fresh_keys() -> None:
    clock = ManualClock()
    async with ChatCore(ScriptedBackend(lambda cmd: None)) as core:
        responder = ServiceRPCResponder(
            core, [EchoBinding()], clock=clock, rate_limit=RateLimit(20, 60)
        )
        hammer = _event({"protocol": "echo", "request": {}}, signer="hammer-key")
        outcomes = [(await responder.answer(hammer)).outcome for _ in range(21)]
        assert outcomes[-1] == "rate_limited" and "rate_limited" not in outcomes[:-1]
        with anyio.fail_after(WAIT_S * 6):
            for i in range(10_000):
                # Each fresh key's request is counted (good or bad): a bad envelope is cheap.
                fresh = _event("not an envelope", signer=f"fresh-{i}")
                assert (await responder.answer(fresh)).outcome == "bad_request"
        await clock.advance(30)
        assert (await responder.answer(hammer)).outcome == "rate_limited"
        await clock.advance(30)
        assert (await responder.answer(hammer)).outcome != "rate_limited"


@pytest.mark.requirement("RPC-ERR-5")
async def test_rpc_err_5_signed_requests_with_fresh_keys_are_limited_together(
    tmp_path: Path,
) -> None:
    async with Net() as net:
        alice = await net.peer("alice", peer_type="agent")
        bot = await net.bot("bot", service_requests=True)
        link = await net.address(bot)
        binding = EchoBinding(clock=net.clock)
        responder = ServiceRPCResponder(
            bot.core,
            [binding],
            clock=net.clock,
            rate_limit=RateLimit(20, 60),
            signed_rate_limit=RateLimit(100, 60),
        )
        await net.start(responder.serve)
        requester = ServiceRPCRequester(alice.core, clock=net.clock)

        async def send(key: SigningKey) -> Any:
            with anyio.fail_after(WAIT_S):
                try:
                    return await requester.request(link, "echo", rpc_request(1), signing_key=key)
                except RateLimitedError as exc:
                    return exc

        def fresh() -> SigningKey:
            return SigningKey.generate(net.network.random.randbytes)

        # One key over its own limit: refused by it, and not counted by the common limit.
        hammer = fresh()
        first = [await send(hammer) for _ in range(25)]
        assert sum(isinstance(r, RateLimitedError) for r in first) == 5
        # Fresh keys: the common limit holds them to the 80 left of its 100.
        second = [await send(fresh()) for _ in range(100)]
        refused = [r for r in second if isinstance(r, RateLimitedError)]
        assert len(refused) == 20
        assert all(r.retry_after is not None and 1 <= r.retry_after <= 60 for r in refused)
        assert len(binding.requests) == 100
        await net.clock.advance(61)
        assert not isinstance(await send(fresh()), RateLimitedError)
        assert not isinstance(await send(hammer), RateLimitedError)
