"""Replicas of one service: ResponderBots with the same ``service`` and PostgreSQL
``task_database``, each on its own simulated core with its own address (docs/bot.md, "Running
more than one process").

What a caller must find the same at every replica: a ``requestState`` sealed at one continues at
another (MCP-MSG-6), a signed key's rate limit is the service's, an A2A task of a caller who
proves a key is read at another replica (A2A-AUTHZ-2 still keeps everyone else out), and the
Agent Card and llms.txt entries list every live replica, a stopped or silent one dropping out.
The PostgreSQL tests need ``SIMPLEX_TEST_POSTGRES_DSN`` (``.ci/run`` starts a server).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from simplex_protocols.bindings.a2a import (
    A2A_BINDING_URI,
    add_identity,
    build_a2a_request,
    build_send_message,
    is_final_message,
)
from simplex_protocols.bot import ResponderBot
from simplex_protocols.bot._shared_state import HEARTBEAT_S, STALE_AFTER_S
from simplex_protocols.errors import BindingConfigError, BotConfigError, RateLimitedError
from simplex_protocols.rpc import SigningKey
from simplex_protocols.transports import CallRecord, RateLimit

from .botkit import (
    WAIT_S,
    Caller,
    EchoAgent,
    World,
    confirmed_reserve,
    echo_card,
    make_tools,
    tool_call,
    tool_text,
)

pytestmark = pytest.mark.anyio

UNKNOWN_TASK = -32001
INVALID_PARAMS = -32602


def replica(
    tmp_path: Path, world: World, name: str, database: str | None, **options: Any
) -> ResponderBot:
    """One replica of the service ``acme``, its data in ``tmp_path/name``."""
    options.setdefault("service", "acme")
    return ResponderBot(
        display_name=f"Acme {name}",
        mcp=make_tools(),
        a2a=EchoAgent(),
        agent_card=echo_card(),
        peer_type="agent",
        data_dir=tmp_path / name,
        task_database=database,
        clock=world.clock,
        **options,
    )


@asynccontextmanager
async def serving(bot: ResponderBot, world: World, core: str) -> AsyncIterator[ResponderBot]:
    async with bot.serving(world.network.backend(core)) as served:
        yield served


async def heartbeats_until(world: World, done: Callable[[], bool]) -> None:
    """Advance the clock a heartbeat at a time until ``done()`` (bounded in real time)."""
    with anyio.fail_after(WAIT_S):
        while not done():
            await world.clock.advance(HEARTBEAT_S)
            await anyio.sleep(0.05)


def card_addresses(bot: ResponderBot) -> list[str]:
    return [
        i.url for i in bot.agent_card.supported_interfaces if i.protocol_binding == A2A_BINDING_URI
    ]


def final(request: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    return functools.partial(is_final_message, request)


async def a2a_chat(caller: Caller, bot: ResponderBot, request: dict[str, Any]) -> dict[str, Any]:
    """The final answer of an A2A request sent in the caller's conversation with ``bot``."""
    contact = await caller.connect(bot.address)
    result = await caller.chat.call(contact, "a2a", request, final=final(request))
    answer = result.answers[0].final
    assert answer is not None, result
    return dict(answer)


def proved(world: World, request: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    """``request`` with a SimpleX-Identity credential of ``key`` for the service's card."""
    return add_identity(request, key, echo_card().name, int(world.clock.wall()))


# ---------------------------------------------------------------- settings (no database)


def test_a_service_needs_a_postgresql_task_database(tmp_path: Path) -> None:
    world_clock = World().clock
    with pytest.raises(BotConfigError) as missing:
        ResponderBot(display_name="Acme", mcp=make_tools(), service="acme", clock=world_clock)
    assert (missing.value.code, missing.value.argument) == ("bad_setting", "task_database")
    with pytest.raises(BotConfigError) as sqlite:
        ResponderBot(
            display_name="Acme",
            mcp=make_tools(),
            service="acme",
            task_database=tmp_path / "tasks.db",
            clock=world_clock,
        )
    assert (sqlite.value.code, sqlite.value.argument) == ("bad_setting", "task_database")
    assert "PostgreSQL" in str(sqlite.value)


@pytest.mark.parametrize("name", ["", "Acme", "acme desk", "-acme", "a" * 64, "acme|x"])
def test_a_service_name_is_a_short_lower_case_name(name: str) -> None:
    with pytest.raises(BotConfigError) as refused:
        ResponderBot(
            display_name="Acme",
            mcp=make_tools(),
            service=name,
            task_database="postgresql://simplex@127.0.0.1:1/tasks",
        )
    assert (refused.value.code, refused.value.argument) == ("bad_setting", "service")


async def test_an_unreachable_shared_database_stops_the_bot_before_its_profile(
    tmp_path: Path,
) -> None:
    async with World() as world:
        bot = replica(tmp_path, world, "one", "postgresql://simplex:secret@127.0.0.1:1/tasks")
        with pytest.raises(BindingConfigError) as refused:
            async with serving(bot, world, "acme-one"):
                pass
        users = world.network.core("acme-one").db.users
    assert refused.value.code == "database_unavailable"
    assert "secret" not in str(refused.value) and "acme" in str(refused.value)
    assert "\n" not in str(refused.value)
    # Nothing was set up: the core has no user for the bot yet.
    assert users == {}


# ---------------------------------------------------------------- two replicas


async def test_replicas_list_each_other_and_a_stopped_one_drops_out(
    tmp_path: Path, postgres_url: str
) -> None:
    async with (
        World() as world,
        serving(replica(tmp_path, world, "one", postgres_url), world, "a1") as one,
    ):
        async with serving(replica(tmp_path, world, "two", postgres_url), world, "a2") as two:
            # The second sees both as it starts; the first at its next heartbeat.
            assert [r.address for r in two.replicas] == [two.address, one.address]
            await heartbeats_until(world, lambda: len(one.replicas) == 2)
            assert [r.display_name for r in one.replicas] == ["Acme one", "Acme two"]
            # Each card lists its own address first, then the other's (A2A-ID-2).
            assert card_addresses(one) == [one.address, two.address]
            assert card_addresses(two) == [two.address, one.address]
            entries = one.communications_entries("Stock and prices")
            assert len(entries) == 2
            assert entries[0] == one.communications_entry("Stock and prices")
            assert entries[1].startswith(f"- [Acme two]({two.address}):")
            assert "MCP" in entries[1] and "A2A" in entries[1]
        # The second stopped and left: the first drops it at its next heartbeat.
        await heartbeats_until(world, lambda: len(one.replicas) == 1)
        assert card_addresses(one) == [one.address]
        assert one.communications_entries() == [one.communications_entry()]


async def test_a_replica_that_stops_answering_drops_out_when_stale(
    tmp_path: Path, postgres_url: str
) -> None:
    async with (
        World() as world,
        serving(replica(tmp_path, world, "one", postgres_url), world, "a1") as one,
    ):
        two = replica(tmp_path, world, "two", postgres_url)
        async with anyio.create_task_group() as crash:
            await crash.start(two.serve, world.network.backend("a2"))
            await heartbeats_until(world, lambda: len(one.replicas) == 2)
            # Cut off without a goodbye, as a killed process would be.
            crash.cancel_scope.cancel()
        still_listed = len(one.replicas)
        started = world.clock.wall()
        await heartbeats_until(world, lambda: len(one.replicas) == 1)
        assert world.clock.wall() - started >= STALE_AFTER_S - HEARTBEAT_S
        assert card_addresses(one) == [one.address]
    assert still_listed == 2


async def test_a_request_state_sealed_at_one_replica_continues_at_another(
    tmp_path: Path, postgres_url: str
) -> None:
    key = SigningKey.generate()
    async with World() as world:
        alice = await world.caller("alice")
        async with (
            serving(replica(tmp_path, world, "one", postgres_url), world, "a1") as one,
            serving(replica(tmp_path, world, "two", postgres_url), world, "a2") as two,
            serving(replica(tmp_path, world, "solo", None, service=None), world, "solo") as solo,
        ):
            first = await alice.rpc.request(
                one.address, "mcp", tool_call("reserve", {"item": "anvil"}), signing_key=key
            )
            follow_up = confirmed_reserve(first)
            at_two = await alice.rpc.request(two.address, "mcp", follow_up, signing_key=key)
            # A bot that is no replica of the service has a key of its own (MCP-MSG-6 holds
            # per service, not across services).
            at_solo = await alice.rpc.request(solo.address, "mcp", follow_up, signing_key=key)
    assert isinstance(at_two, dict) and isinstance(at_solo, dict)
    assert tool_text(at_two) == "Reserved one anvil."
    assert at_solo["error"]["code"] == INVALID_PARAMS


async def test_a_signed_key_has_one_rate_limit_across_the_replicas(
    tmp_path: Path, postgres_url: str
) -> None:
    key = SigningKey.generate()
    limit = RateLimit(2, 60.0)
    async with World() as world:
        alice = await world.caller("alice")
        async with (
            serving(
                replica(tmp_path, world, "one", postgres_url, rate_limit=limit), world, "a1"
            ) as one,
            serving(
                replica(tmp_path, world, "two", postgres_url, rate_limit=limit), world, "a2"
            ) as two,
        ):
            listing = tool_call("availability", {"item": "anvil"})
            await alice.rpc.request(one.address, "mcp", listing, signing_key=key)
            await alice.rpc.request(two.address, "mcp", listing, signing_key=key)
            with pytest.raises(RateLimitedError) as limited:
                await alice.rpc.request(one.address, "mcp", listing, signing_key=key)
            # Another key has a limit of its own.
            other = await alice.rpc.request(
                two.address, "mcp", listing, signing_key=SigningKey.generate()
            )
    assert limited.value.retry_after is not None and 0 < limited.value.retry_after <= 60
    assert isinstance(other, dict) and tool_text(other) == "12 anvils are in stock."


async def test_a_task_of_a_proved_key_is_read_at_another_replica_and_only_by_that_key(
    tmp_path: Path, postgres_url: str
) -> None:
    key = SigningKey.generate()
    records: list[CallRecord] = []
    async with World() as world:
        alice = await world.caller("alice")
        carol = await world.caller("carol")
        async with (
            serving(
                replica(tmp_path, world, "one", postgres_url, on_call=records.append),
                world,
                "a1",
            ) as one,
            serving(
                replica(tmp_path, world, "two", postgres_url, on_call=records.append),
                world,
                "a2",
            ) as two,
        ):
            # carol is the first contact of the second replica, alice of the first.
            await carol.connect(two.address)
            sent = await a2a_chat(
                alice, one, proved(world, build_send_message("anvils", request_id=1), key)
            )
            task_id = sent["result"]["task"]["id"]
            get = build_a2a_request("GetTask", {"id": task_id}, request_id=2)
            at_two = await a2a_chat(alice, two, proved(world, get, key))
            unproved = await a2a_chat(alice, two, get)
            other_key = await a2a_chat(alice, two, proved(world, get, SigningKey.generate()))
            # A task of a contact without a credential stays at its replica: contact numbers
            # are each replica's own, so carol at the second replica may have alice's number
            # at the first.
            plain = await a2a_chat(alice, one, build_send_message("plain", request_id=3))
            plain_get = build_a2a_request(
                "GetTask", {"id": plain["result"]["task"]["id"]}, request_id=4
            )
            carol_at_two = await a2a_chat(carol, two, plain_get)
    assert at_two["result"]["id"] == task_id
    assert at_two["result"]["artifacts"][0]["parts"][0]["text"] == "echo: anvils"
    assert unproved["error"]["code"] == UNKNOWN_TASK
    assert other_key["error"]["code"] == UNKNOWN_TASK
    assert carol_at_two["error"]["code"] == UNKNOWN_TASK
    # The case that matters: carol is the same contact number at the second replica as alice
    # at the first (the first contact of each), and still finds nothing.
    alice_at_one = next(r.caller for r in records if r.method == "SendMessage")
    carol_at_two_key = [r.caller for r in records if r.method == "GetTask"][-1]
    assert alice_at_one == carol_at_two_key


async def test_a_stop_cut_short_still_takes_the_replica_out_of_the_registry(
    tmp_path: Path, postgres_url: str
) -> None:
    async with (
        World() as world,
        serving(replica(tmp_path, world, "one", postgres_url), world, "a1") as one,
    ):
        two = replica(tmp_path, world, "two", postgres_url)
        async with anyio.create_task_group() as run:
            await run.start(two.serve, world.network.backend("a2"))
            await heartbeats_until(world, lambda: len(one.replicas) == 2)
            run.start_soon(two.shutdown)
            # The stop has begun (no calls are taken): a second signal cuts it short now.
            await world.until(lambda: not two.running)
            run.cancel_scope.cancel()
        # Gone at the first replica's next heartbeat, not once stale (four heartbeats on).
        await world.clock.advance(HEARTBEAT_S)
        await world.until(lambda: len(one.replicas) == 1)
        assert card_addresses(one) == [one.address]
