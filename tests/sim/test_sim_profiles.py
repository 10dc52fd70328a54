"""Core profiles: a simulated core that behaves as a real core of one version.

Each profile is a table of differences from the spec profile (``simplex_protocols/sim/
_profiles.py``): the commands it parses, the keys its records keep, the shapes it writes, its
version. These tests show each row through the API, and the capability probe's verdict on every
profile: exactly what the profile lacks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from simkit import World

from simplex_protocols._clock import ManualClock
from simplex_protocols.core import Capability, ChatAPI, ChatCore, probe_core
from simplex_protocols.sim import CORE_PROFILES, SimNetwork
from simplex_protocols.sim._core import GRAMMAR, profile_grammar

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]

#: What each profile lacks, as the probe must find it.
MISSING = {
    "spec": set(),
    "v7.0": {
        Capability.SERVICE_REQUEST_SEND,
        Capability.PROTOCOLS_PREFERENCE,
        Capability.GROUP_PROTOCOLS_PREFERENCE,
        Capability.ADDRESS_SERVES,
        Capability.PREPARED_CHATS,
    },
    "v6.4": {
        Capability.SERVICE_REQUESTS,
        Capability.SERVICE_REQUEST_SEND,
        Capability.PROTOCOLS_PREFERENCE,
        Capability.GROUP_PROTOCOLS_PREFERENCE,
        Capability.ADDRESS_SERVES,
        Capability.ADDRESS_PQ_RATCHET,
        Capability.CUSTOM_DATA,
        Capability.PREPARED_CHATS,
        Capability.SIMPLEX_NAMES,
        Capability.SIGNED_MESSAGES,
        Capability.GROUP_INVITATIONS,
    },
}

PROTOCOLS = {"mcp": {"versions": ["2026-07-28"], "transports": {"chat": True}}}


def test_every_profile_is_tested_and_its_rows_name_patterns_of_the_grammar() -> None:
    assert set(MISSING) == set(CORE_PROFILES)
    patterns = {c.pattern for c in GRAMMAR.commands}
    for profile in CORE_PROFILES.values():
        for change in profile.commands:
            assert change.pattern in patterns, (profile.name, change.pattern)
            assert change.source.file and change.source.commit and change.source.what
        for kept in profile.records:
            assert kept.source.file and kept.source.commit
        grammar = profile_grammar(profile)
        assert grammar is profile_grammar(profile)
    assert profile_grammar(CORE_PROFILES["spec"]) is GRAMMAR


@pytest.mark.parametrize("name", sorted(MISSING))
async def test_the_probe_finds_exactly_what_each_profile_lacks(name: str) -> None:
    network = SimNetwork(seed=3, clock=ManualClock(), core_profile=name)
    network.add_user("u")
    async with ChatCore(network.backend("u")) as core:
        api = ChatAPI(core)
        before = await api.get_chats(1)
        caps = await probe_core(api)
        after = await api.get_chats(1)
        address = await api.show_address(1)
    assert caps.version == CORE_PROFILES[name].version.version
    assert set(caps.missing) == MISSING[name]
    assert caps.unknown == ()
    # the probe leaves the user's chats and address as they were
    assert [c["chatInfo"]["type"] for c in after] == [c["chatInfo"]["type"] for c in before]
    assert address is None


@pytest.mark.parametrize(
    ("command", "parsed_by"),
    [
        ("/_start main=on service_requests=on", {"spec", "v7.0"}),
        ("/_start main=on large_link_data=on", {"spec", "v7.0", "v6.4"}),
        ("/_address 1 pq_ratchet=on", {"spec", "v7.0"}),
        ("/_short_link_address 1 pq_ratchet=on", {"spec"}),
        ("/_reject 1 notify=on", {"spec"}),
        ("/_set custom @1", {"spec", "v7.0"}),
        ("/_set accept group invitations 1 on", {"spec", "v7.0"}),
        ("/_groups 1", {"spec", "v7.0"}),
        ("/_groups1", {"v6.4"}),
        ("/_connect plan 1 @directory.simplex", {"spec", "v7.0"}),
        ("/_connect plan 1 https://smp1.sim.test/a#key resolve=never", {"spec"}),
        ("/_send @1 sign=on text hi", {"spec", "v7.0"}),
        ("/_send @1 live=on text hi", {"spec", "v7.0", "v6.4"}),
        ('/_service_request 1 @x.simplex {"a":1}', {"spec"}),
        ("/_service_response 1 abc {}", {"spec", "v7.0"}),
        ('/_public group 1 {"displayName":"c","fullName":""}', {"spec"}),
        ('/_public group 1 1 {"displayName":"c","fullName":""}', {"spec", "v7.0"}),
        ("/_prepare group 1 simplex:/contact#/?v=2 direct=off {}", {"spec"}),
        ("/version", {"spec", "v7.0", "v6.4"}),
        ("/u", {"spec", "v7.0", "v6.4"}),
    ],
)
def test_each_profile_parses_what_its_core_parses(command: str, parsed_by: set[str]) -> None:
    for name, profile in CORE_PROFILES.items():
        parsed = not isinstance(profile_grammar(profile).parse(command), str)
        assert parsed is (name in parsed_by), (name, command)


async def test_a_64_core_refuses_with_the_cores_error_and_starts_without_service_requests() -> None:
    async with World(core_profile="v6.4") as w:
        alice = await w.user("alice")
        failed = await alice.error("/_start main=on service_requests=on")
        assert failed["errorType"]["type"] == "commandError"
        assert (await alice.cmd("/_start main=on large_link_data=on"))["type"] == "chatRunning"
        groups = await alice.cmd(f"/_groups{alice.user_id}")
        assert groups["type"] == "groupsList"


async def test_a_64_core_writes_conn_status_as_a_string() -> None:
    async with World(core_profile="v6.4") as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        a_contact, _ = await w.connect(alice, bob)
        assert a_contact["activeConn"]["connStatus"] == "ready"
        invitation = await alice.cmd(f"/_connect {alice.user_id}")
        assert isinstance(invitation["connection"]["pccConnStatus"], str)
    async with World() as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        a_contact, _ = await w.connect(alice, bob)
        assert a_contact["activeConn"]["connStatus"] == {"type": "ready"}


@pytest.mark.parametrize("name", ["v7.0", "v6.4"])
async def test_records_drop_the_keys_the_cores_records_lack(name: str) -> None:
    async with World(core_profile=name) as w:
        bot = await w.user("bot", peer_type="bot", preferences={"protocols": PROTOCOLS})
        user = (await bot.cmd("/user"))["user"]
        assert "protocols" not in user["profile"].get("preferences", {})
        assert ("peerType" in user["profile"]) is (name == "v7.0")
        updated = await bot.cmd_json(
            f"/_profile {bot.user_id}",
            {
                "displayName": "bot",
                "fullName": "",
                "peerType": "bot",
                "preferences": {"protocols": PROTOCOLS},
            },
        )
        # the profile decoded is the one the core has: nothing to send
        assert updated["type"] == "userProfileNoChange"
        await bot.cmd(f"/_address {bot.user_id}")
        settings = await bot.cmd_json(
            f"/_address_settings {bot.user_id}", {"businessAddress": False, "serves": ["agent"]}
        )
        assert settings["contactLink"]["addressSettings"] == {"businessAddress": False}
        group = await bot.cmd_json(
            f"/_group {bot.user_id}",
            {"displayName": "g", "fullName": "", "groupPreferences": {"protocols": PROTOCOLS}},
        )
        assert "protocols" not in group["groupInfo"]["groupProfile"].get("groupPreferences", {})


async def test_a_newer_bot_seen_from_an_older_core_loses_its_declarations() -> None:
    network = SimNetwork(seed=4, clock=ManualClock())
    bot = network.add_user("bot", peer_type="bot", preferences={"protocols": PROTOCOLS})
    link = bot.create_address(pq_ratchet=True, serves=["agent"])
    network.add_user("old", core_profile="v6.4")
    network.add_user("new")
    assert network.core("old").profile.name == "v6.4"
    plans = {}
    for name in ("old", "new"):
        async with ChatCore(network.backend(name)) as core:
            plans[name] = await ChatAPI(core).connect_plan(1, link)
    new_data = plans["new"]["connectionPlan"]["contactAddressPlan"]["contactSLinkData_"]
    old_data = plans["old"]["connectionPlan"]["contactAddressPlan"]["contactSLinkData_"]
    assert new_data["serves"] == ["agent"]
    assert new_data["profile"]["preferences"]["protocols"] == PROTOCOLS
    assert "serves" not in old_data
    assert "protocols" not in old_data["profile"].get("preferences", {})
    assert "peerType" not in old_data["profile"]


async def test_version_answers_per_profile() -> None:
    for name, profile in CORE_PROFILES.items():
        async with World(core_profile=name) as w:
            alice = await w.user("alice")
            info = (await alice.cmd("/v"))["versionInfo"]
            assert info["version"] == profile.version.version
            assert info["simplexmqVersion"] == profile.version.simplexmq_version


def test_a_saved_network_keeps_each_cores_profile(tmp_path: Path) -> None:
    network = SimNetwork(seed=1, clock=ManualClock(), core_profile="v7.0")
    network.add_user("a")
    network.add_user("b", core_profile="v6.4")
    network.save(tmp_path / "state.json")
    loaded = SimNetwork.load(tmp_path / "state.json", clock=ManualClock())
    assert loaded.core("a").profile.name == "v7.0"
    assert loaded.core("b").profile.name == "v6.4"
    assert loaded.core_profile.name == "spec"


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown core profile 'v5'"):
        SimNetwork(core_profile="v5")


@pytest.mark.parametrize("name", ["spec", "v6.4"])
async def test_chat_api_lists_groups_in_the_form_each_core_parses(name: str) -> None:
    async with World(core_profile=name) as w:
        alice = await w.user("alice")
        await alice.api.new_group(alice.user_id, {"displayName": "Hikers", "fullName": ""})
        for _ in range(2):  # the second call goes straight to the form that worked
            groups = await alice.api.list_groups(alice.user_id)
            assert [g["groupProfile"]["displayName"] for g in groups] == ["Hikers"]
        assert alice.api._groups_glued is (name == "v6.4")
