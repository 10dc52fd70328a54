"""RPC-SIG-2: "Verification happens in the responder's agent, and the core hands the key up as
``signerKey``; a signature replayed in another session fails."

A signed request is captured on the wire in one session (the requester's ratchet with the
address) and its bytes are copied into another session: a request of another user to the same
address, or to another address. The original is answered with the signer's key; every replay is
dropped by the responder's agent, which reports ``A_SERVICE badSignature`` to its own clients,
and the replaying requester gets nothing until its timeout.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from transkit import WAIT_S, EchoBinding, Net, rpc_request

from simplex_protocols._wire import dumps
from simplex_protocols.errors import CoreError
from simplex_protocols.rpc import SigningKey
from simplex_protocols.sim import SimNetwork
from simplex_protocols.sim.testing import ScriptedUser
from simplex_protocols.transports import ServiceRPCRequester, ServiceRPCResponder

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]

#: The replaying requester's timeout, in seconds of the network's clock.
REPLAY_TIMEOUT_S = 5


class Wire:
    """The service requests the network carries: each one is kept as sent, and the next one a
    given core sends can be rewritten first (the attacker's copy of captured bytes)."""

    def __init__(self, network: SimNetwork, monkeypatch: pytest.MonkeyPatch) -> None:
        self.requests: list[JSON] = []
        self._rewrites: dict[str, Callable[[JSON], JSON]] = {}
        send = network.send

        def tapped(
            src_core: str, dst_core: str, dst: str, router: str, body: JSON, **kw: Any
        ) -> None:
            if body.get("t") == "x.svc.req":
                rewrite = self._rewrites.pop(src_core, None)
                if rewrite is not None:
                    body = rewrite(body)
                self.requests.append(copy.deepcopy(body))
            send(src_core, dst_core, dst, router, body, **kw)

        monkeypatch.setattr(network, "send", tapped)

    def rewrite_next(self, core: str, rewrite: Callable[[JSON], JSON]) -> None:
        self._rewrites[core] = rewrite


def copy_into(captured: JSON, fields: tuple[str, ...]) -> Callable[[JSON], JSON]:
    """A rewrite that puts the captured request's ``fields`` into another request."""

    def rewrite(body: JSON) -> JSON:
        out = dict(body)
        for name in fields:
            out[name] = copy.deepcopy(captured[name])
        return out

    return rewrite


async def replay(
    net: Net, wire: Wire, mallory: ScriptedUser, target: str, rewrite: Callable[[JSON], JSON]
) -> JSON:
    """Mallory sends a request to ``target`` whose wire bytes ``rewrite`` replaces; returns
    the core's error (the request must fail)."""
    wire.rewrite_next(mallory.name, rewrite)
    outcome: list[JSON] = []

    async def send() -> None:
        try:
            await mallory.core.command(
                f"/_service_request {mallory.user_id} {target} timeout={REPLAY_TIMEOUT_S} "
                + dumps({"protocol": "echo", "request": rpc_request(99)})
            )
        except CoreError as exc:
            outcome.append(dict(exc.chat_error))

    async with anyio.create_task_group() as tg:
        tg.start_soon(send)
        with anyio.fail_after(WAIT_S):
            while not net.network.service_calls:
                await net.network.wait_changed()
        await net.clock.advance(REPLAY_TIMEOUT_S)
    assert len(outcome) == 1, "the replayed request must fail"
    return outcome[0]


def a_service(kind: str) -> JSON:
    return {"type": "AGENT", "agentErr": {"type": "A_SERVICE", "serviceError": {"type": kind}}}


@pytest.mark.requirement("RPC-SIG-2")
@pytest.mark.parametrize(
    ("where", "fields"),
    [
        ("the same address", ("signature", "payload")),
        ("another address", ("signature", "payload")),
        ("another address", ("signature", "payload", "ratchetKey")),
    ],
    ids=["same-address", "other-address", "other-address-with-ratchet-key"],
)
async def test_rpc_sig_2_a_signature_replayed_in_another_session_fails(
    monkeypatch: pytest.MonkeyPatch, where: str, fields: tuple[str, ...]
) -> None:
    async with Net() as net:
        wire = Wire(net.network, monkeypatch)
        alice = await net.peer("alice", peer_type="agent")
        mallory = await net.peer("mallory", peer_type="agent")
        shop = await net.bot("shop", service_requests=True)
        other = await net.bot("other", service_requests=True)
        shop_link, other_link = await net.address(shop), await net.address(other)
        shop_echo, other_echo = EchoBinding(), EchoBinding()
        await net.start(ServiceRPCResponder(shop.core, [shop_echo], clock=net.clock).serve)
        await net.start(ServiceRPCResponder(other.core, [other_echo], clock=net.clock).serve)
        key = SigningKey.generate(net.network.random.randbytes)

        # The original, in its own session: answered, with the signer's key handed up.
        requester = ServiceRPCRequester(alice.core, clock=net.clock)
        with anyio.fail_after(WAIT_S):
            answer = await requester.request(
                shop_link, "echo", rpc_request(1, n=1), signing_key=key
            )
        assert answer == {"jsonrpc": "2.0", "id": 1, "result": {"echo": {"n": 1}}}
        [event] = shop.all("serviceRequest")
        assert event["signerKey"] == key.public_key.encode()
        assert [c.signer_key for c in shop_echo.callers] == [key.public_key.encode()]
        [captured] = wire.requests
        assert "signature" in captured

        # The same bytes in another session.
        victim, victim_echo = (
            (shop, shop_echo) if where == "the same address" else (other, other_echo)
        )
        target = shop_link if victim is shop else other_link
        served_before = len(victim_echo.callers)
        error = await replay(net, wire, mallory, target, copy_into(captured, fields))
        await victim.settle()

        # The requester is not told: it waits out its timeout.
        assert error["agentError"] == a_service("timeout")
        # The responder's agent refused it and said so to its own clients only ...
        refusals = victim.all("chatError")
        assert [r["chatError"]["agentError"] for r in refusals] == [a_service("badSignature")]
        # ... and no request reached the bot: no serviceRequest, no call of the binding.
        assert len(victim.all("serviceRequest")) == (1 if victim is shop else 0)
        assert len(victim_echo.callers) == served_before
        # The replay carried the original's signature and payload, in Mallory's session.
        replayed = wire.requests[-1]
        assert all(replayed[name] == captured[name] for name in fields)
        if "ratchetKey" not in fields:
            assert replayed["ratchetKey"] != captured["ratchetKey"]


@pytest.mark.requirement("RPC-SIG-2")
async def test_rpc_sig_2_every_request_is_a_new_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two signed requests of one requester to one address are two sessions: each carries its
    own ratchet key, so each signature is different, and a signature of one does not verify
    in the other (the second request made with the first one's signature is refused)."""
    async with Net() as net:
        wire = Wire(net.network, monkeypatch)
        alice = await net.peer("alice", peer_type="agent")
        shop = await net.bot("shop", service_requests=True)
        link = await net.address(shop)
        echo = EchoBinding()
        await net.start(ServiceRPCResponder(shop.core, [echo], clock=net.clock).serve)
        key = SigningKey.generate(net.network.random.randbytes)
        requester = ServiceRPCRequester(alice.core, clock=net.clock)
        with anyio.fail_after(WAIT_S):
            for n in (1, 2):
                await requester.request(link, "echo", rpc_request(n), signing_key=key)
        first, second = wire.requests
        assert first["ratchetKey"] != second["ratchetKey"]
        assert first["signature"]["key"] == second["signature"]["key"]
        assert first["signature"]["signature"] != second["signature"]["signature"]
        assert len(shop.all("serviceRequest")) == 2

        # Alice's own next request, carrying the first request's signature and payload.
        error = await replay(net, wire, alice, link, copy_into(first, ("signature", "payload")))
        await shop.settle()
        assert error["agentError"] == a_service("timeout")
        assert [r["chatError"]["agentError"] for r in shop.all("chatError")] == [
            a_service("badSignature")
        ]
        assert len(shop.all("serviceRequest")) == 2 and len(echo.callers) == 2
