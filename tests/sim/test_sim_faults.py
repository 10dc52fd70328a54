"""Simulated network, in process: faults on the manual clock, observed as the core reports them."""

from __future__ import annotations

import pytest
from simkit import Client, World, text_item

from simplex_protocols.sim import ROUTER_HOSTS

pytestmark = pytest.mark.anyio


async def _pair(w: World) -> tuple[Client, Client, int, int]:
    alice = await w.user("alice")
    bob = await w.user("bob")
    a_contact, b_contact = await w.connect(alice, bob, await w.address(bob))
    return alice, bob, a_contact["contactId"], b_contact["contactId"]


def _status(event: dict[str, object]) -> str:
    items = event["chatItems"]
    assert isinstance(items, list)
    return str(items[0]["chatItem"]["meta"]["itemStatus"]["type"])


async def test_latency_delays_delivery_on_the_clock() -> None:
    async with World() as w:
        alice, bob, cid, _ = await _pair(w)
        w.network.faults.latency(2.5, link=("alice", "bob"))
        await alice.cmd(f"/_send @{cid} text slow")
        await bob.settle()
        assert bob.all("newChatItems") == []
        await w.clock.advance(2.0)
        await bob.settle()
        assert bob.all("newChatItems") == []
        await w.clock.advance(0.6)
        assert text_item(await bob.event("newChatItems"))[0][2] == "slow"


async def test_peer_offline_gets_messages_when_it_returns() -> None:
    async with World() as w:
        alice, bob, cid, _ = await _pair(w)
        w.network.faults.offline("bob")
        await alice.cmd(f"/_send @{cid} text one")
        await alice.cmd(f"/_send @{cid} text two")
        # the router took them (sndSent) but bob has not received them (no sndRcvd yet)
        assert [_status(await alice.event("chatItemsStatusesUpdated")) for _ in range(2)] == [
            "sndSent",
            "sndSent",
        ]
        await bob.settle()
        assert bob.all("newChatItems") == []
        w.network.faults.offline("bob", False)
        texts = [text_item(await bob.event("newChatItems"))[0][2] for _ in range(2)]
        assert texts == ["one", "two"]
        assert _status(await alice.event("chatItemsStatusesUpdated")) == "sndRcvd"


async def test_router_down_holds_messages_and_fails_commands_on_it() -> None:
    async with World() as w:
        alice, bob, cid, _ = await _pair(w)
        bob_router = w.network.user("bob").router
        assert bob_router in ROUTER_HOSTS
        w.network.faults.router_down(bob_router)
        await alice.cmd(f"/_send @{cid} text waiting")
        await alice.settle()
        # the router does not take it: the item stays sndNew, bob has nothing
        assert alice.all("chatItemsStatusesUpdated") == []
        page = await alice.cmd(f"/_get chat @{cid} count=1")
        assert page["chat"]["chatItems"][0]["meta"]["itemStatus"] == {"type": "sndNew"}
        assert bob.all("newChatItems") == []
        # a command that needs the router fails as the agent reports a router that does not answer
        err = await bob.error(f"/_connect {bob.user_id}")
        assert err["type"] == "errorAgent"
        assert err["agentError"]["type"] == "BROKER"
        assert err["agentError"]["brokerErr"] == {"type": "TIMEOUT"}
        w.network.faults.router_down(bob_router, False)
        assert text_item(await bob.event("newChatItems"))[0][2] == "waiting"


async def test_message_loss_shows_as_skipped_messages_at_the_receiver() -> None:
    async with World() as w:
        alice, bob, cid, _ = await _pair(w)
        w.network.faults.loss(1.0, user="alice")
        await alice.cmd(f"/_send @{cid} text lost")
        await bob.settle()
        assert bob.all("newChatItems") == []
        w.network.faults.loss(0.0, user="alice")
        await alice.cmd(f"/_send @{cid} text found")
        gap = (await bob.event("newChatItems"))["chatItems"][0]["chatItem"]
        assert gap["content"]["type"] == "rcvIntegrityError"
        assert gap["content"]["msgError"]["type"] == "msgSkipped"
        assert text_item(await bob.event("newChatItems"))[0][2] == "found"


async def test_seeded_networks_are_deterministic() -> None:
    links = []
    for _ in range(2):
        async with World(seed=42) as w:
            bob = await w.user("bob")
            links.append(await w.address(bob))
    assert links[0] == links[1]
    async with World(seed=43) as w:
        bob = await w.user("bob")
        assert await w.address(bob) != links[0]


async def test_stopped_core_receives_after_start() -> None:
    async with World() as w:
        alice, bob, cid, _ = await _pair(w)
        assert (await bob.cmd("/_stop"))["type"] == "chatStopped"
        err = await bob.error('/_profile 1 {"displayName":"bobby","fullName":""}')
        assert err == {"type": "error", "errorType": {"type": "chatNotStarted"}}
        await alice.cmd(f"/_send @{cid} text while stopped")
        await bob.settle()
        assert bob.all("newChatItems") == []
        assert (await bob.cmd("/_start"))["type"] == "chatStarted"
        assert text_item(await bob.event("newChatItems"))[0][2] == "while stopped"
