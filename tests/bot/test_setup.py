"""ResponderBot's setup: the profile, the protocols declaration, the address and its link data,
and the start of the core, as commands sent and as a peer reads them with /_connect plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from simplex_protocols.bot import ResponderBot
from simplex_protocols.core import ChatAPI, ChatCore
from simplex_protocols.declarations import (
    Transport,
    parse_link_data,
    protocols_from_preferences,
)
from simplex_protocols.sim.testing import RecordingBackend

from .botkit import (
    REVISION,
    EchoAgent,
    World,
    echo_card,
    make_tools,
    tools_list,
)

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]

#: Commands the responders send for themselves (the chat responder reads the user's names).
_RESPONDER_COMMANDS = ("/users",)

#: The capability probe at start (simplex_protocols.core.probe_core): /version, and command
#: forms naming a user, contact or group that no core has, which set nothing up.
_PROBE_COMMANDS = ("/version",)
_PROBE_ID = "999999999999999"


def setup_commands(backend: RecordingBackend) -> list[str]:
    return [
        c
        for c in backend.commands
        if not c.startswith(_RESPONDER_COMMANDS + _PROBE_COMMANDS) and _PROBE_ID not in c
    ]


def link_data(plan: JSON) -> JSON:
    assert plan["type"] == "connectionPlan"
    connection_plan = plan["connectionPlan"]
    assert connection_plan["type"] == "contactAddress"
    address_plan = connection_plan["contactAddressPlan"]
    assert address_plan["type"] == "ok"
    data: JSON = address_plan["contactSLinkData_"]
    return data


def new_bot(tmp_path: Path, world: World, **options: Any) -> ResponderBot:
    settings: dict[str, Any] = {
        "display_name": "Acme",
        "mcp": make_tools(),
        "description": "Stock levels and orders",
        "data_dir": tmp_path / "acme",
        "clock": world.clock,
    }
    settings.update(options)
    return ResponderBot(**settings)


@pytest.mark.requirement("DECL-PROTO-1", "DECL-PROTO-3", "RPC-CORE-1", "RPC-CORE-2")
async def test_first_start_sends_the_setup_commands_in_order(tmp_path: Path) -> None:
    async with World() as world:
        backend = RecordingBackend(world.network.backend("acme"))
        async with new_bot(tmp_path, world, welcome="Ask me about stock.").serving(backend):
            pass
    protocols = {"mcp": {"versions": [REVISION], "transports": {"chat": True, "rpc": True}}}
    profile = {
        "displayName": "Acme",
        "fullName": "",
        "shortDescr": "Stock levels and orders",
        "preferences": {"protocols": protocols},
        "peerType": "bot",
    }
    settings = {
        "businessAddress": False,
        "autoAccept": {"acceptIncognito": False},
        "autoReply": {"type": "text", "text": "Ask me about stock."},
        "serves": ["agent"],
    }
    sent = setup_commands(backend)
    assert sent[:6] == [
        "/user",
        "/_create user "
        + json.dumps({"profile": profile, "pastTimestamp": False}, separators=(",", ":")),
        # RPC-CORE-1: the responder's core runs with service requests on.
        "/_start main=on service_requests=on",
        "/_show_address 1",
        # RPC-CORE-2: the address gets ratchet keys when it is created ...
        "/_address 1 pq_ratchet=on",
        # ... and whenever its settings are written.
        "/_address_settings 1 pq_ratchet=on " + json.dumps(settings, separators=(",", ":")),
    ]
    assert sent[6:] == []


@pytest.mark.requirement(
    "DECL-PROTO-1", "DECL-PROTO-4", "DECL-PROTO-5", "DECL-SERVES-1", "DECL-SERVES-2"
)
async def test_a_peer_reads_the_declarations_from_the_link_data(tmp_path: Path) -> None:
    async with World() as world:
        bot = new_bot(
            tmp_path,
            world,
            a2a=EchoAgent(),
            agent_card=echo_card(),
            peer_type="agent",
            welcome="Hello",
            serves=["human", "agent"],
            business=False,
        )
        alice = await world.caller("alice")
        async with bot.serving(world.network.backend("acme")):
            plan = await alice.plan(bot.address)
            assert bot.declarations.serves("mcp", Transport.RPC)
    data = link_data(plan)
    profile = data["profile"]
    assert (profile["displayName"], profile["peerType"], profile["shortDescr"]) == (
        "Acme",
        "agent",
        "Stock levels and orders",
    )
    declared = protocols_from_preferences(profile["preferences"])
    assert declared == bot.declarations
    assert declared.problems == ()
    assert profile["preferences"]["protocols"] == {
        "mcp": {"versions": [REVISION], "transports": {"chat": True, "rpc": True}},
        "a2a": {"versions": ["1.0"], "transports": {"chat": True, "rpc": True}},
    }
    peers = parse_link_data(data)
    assert peers.problems == ()
    assert (peers.business, list(peers.serves or ())) == (False, ["human", "agent"])
    assert data["message"] == {"type": "text", "text": "Hello"}


@pytest.mark.requirement("DECL-PROTO-12", "DECL-PROTO-13")
async def test_transports_chosen_are_the_transports_declared(tmp_path: Path) -> None:
    async with World() as world:
        backend = RecordingBackend(world.network.backend("acme"))
        bot = new_bot(tmp_path, world, transports=["chat"], serves=None, business=True)
        alice = await world.caller("alice")
        async with bot.serving(backend):
            plan = await alice.plan(bot.address)
    data = link_data(plan)
    assert data["profile"]["preferences"]["protocols"] == {
        "mcp": {"versions": [REVISION], "transports": {"chat": True}}
    }
    assert data["business"] is True
    assert "serves" not in data
    # Without Service RPC the core is started without service requests.
    assert "/_start main=on" in backend.commands


@pytest.mark.requirement("DECL-PROTO-11")
async def test_commands_for_people_stay_and_call_is_never_added(tmp_path: Path) -> None:
    menu = [{"type": "command", "keyword": "help", "label": "Help"}]
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world, commands=menu).serving(
            world.network.backend("acme")
        ) as bot:
            prefs = link_data(await alice.plan(bot.address))["profile"]["preferences"]
        assert prefs["commands"] == menu
        assert set(prefs) == {"commands", "protocols"}
        # A later start without a menu keeps the one the profile has.
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            prefs = link_data(await alice.plan(bot.address))["profile"]["preferences"]
        assert prefs["commands"] == menu


async def test_a_restart_reuses_the_profile_and_the_address(tmp_path: Path) -> None:
    async with World() as world:
        first = RecordingBackend(world.network.backend("acme"))
        async with new_bot(tmp_path, world).serving(first) as bot:
            address = bot.address
            user_id = bot.user_id
        second = RecordingBackend(world.network.backend("acme"))
        async with new_bot(tmp_path, world).serving(second) as bot:
            assert (bot.address, bot.user_id) == (address, user_id)
        sent = setup_commands(second)
    assert not any(c.startswith(("/_create user", "/_address ", "/_profile")) for c in sent)
    # The core kept running between the two starts: it is started again with service
    # requests on, since a running core does not take the option (RPC-CORE-1).
    assert sent[:4] == ["/user", "/_start main=on service_requests=on", "/_stop", sent[3]]
    assert sent[3] == "/_start main=on service_requests=on"
    settings = json.loads((tmp_path / "acme" / "bot.json").read_text())
    assert (settings["userId"], settings["address"]) == (user_id, address)


async def test_a_later_start_with_other_values_updates_the_profile(tmp_path: Path) -> None:
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")):
            pass
        backend = RecordingBackend(world.network.backend("acme"))
        renamed = new_bot(
            tmp_path,
            world,
            display_name="Acme Stock",
            description=None,
            peer_type="agent",
            transports=["rpc"],
        )
        async with renamed.serving(backend) as bot:
            profile = link_data(await alice.plan(bot.address))["profile"]
    [update] = [c for c in backend.commands if c.startswith("/_profile ")]
    assert update.startswith("/_profile 1 ")
    assert json.loads(update.split(" ", 2)[2]) == profile | {"preferences": profile["preferences"]}
    assert (profile["displayName"], profile["peerType"]) == ("Acme Stock", "agent")
    assert "shortDescr" not in profile
    assert profile["preferences"]["protocols"] == {
        "mcp": {"versions": [REVISION], "transports": {"rpc": True}}
    }


async def test_an_address_made_without_ratchet_keys_gets_them(tmp_path: Path) -> None:
    async with World() as world:
        user = world.network.add_user("acme", display_name="Acme", peer_type="bot")
        old = user.create_address(pq_ratchet=None)
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            assert bot.address == old
            response = await alice.rpc.request(bot.address, "mcp", tools_list())
    assert isinstance(response, dict)
    names = [t["name"] for t in response["result"]["tools"]]
    assert names == ["availability", "whoami", "wait", "reserve"]


async def test_a_chat_core_given_entered_is_used_and_left_open(tmp_path: Path) -> None:
    async with World() as world, ChatCore(world.network.backend("acme")) as core:
        async with new_bot(tmp_path, world).serving(core) as bot:
            assert bot.running
        assert core.connected
        user = await ChatAPI(core).active_user()
        assert user is not None and user["profile"]["displayName"] == "Acme"


async def test_an_unentered_chat_core_is_entered_and_closed(tmp_path: Path) -> None:
    async with World() as world:
        core = ChatCore(world.network.backend("acme"))
        async with new_bot(tmp_path, world).serving(core):
            assert core.connected
        assert not core.connected


async def test_a_core_option_string_names_a_simulated_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with World() as world:
        import simplex_protocols.sim._network as network_module

        monkeypatch.setattr(network_module, "_default", world.network)
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving("sim:acme") as bot:
            plan = await alice.plan(bot.address)
    assert link_data(plan)["profile"]["displayName"] == "Acme"


async def test_shutdown_before_serving_returns_at_once(tmp_path: Path) -> None:
    async with World() as world:
        bot = new_bot(tmp_path, world)
        with anyio.fail_after(1):
            await bot.shutdown()
        assert not bot.running


async def test_join_groups_sets_the_auto_accept_of_group_invitations(tmp_path: Path) -> None:
    async with World() as world:
        first = RecordingBackend(world.network.backend("acme"))
        async with new_bot(tmp_path, world, join_groups=True).serving(first):
            pass
        again = RecordingBackend(world.network.backend("acme"))
        async with new_bot(tmp_path, world, join_groups=True).serving(again):
            pass
        off = RecordingBackend(world.network.backend("acme"))
        async with new_bot(tmp_path, world).serving(off):
            pass
    assert "/_set accept group invitations 1 on" in first.commands
    # Sent only when the core's setting differs.
    assert not [c for c in again.commands if c.startswith("/_set accept group invitations")]
    assert "/_set accept group invitations 1 off" in off.commands
