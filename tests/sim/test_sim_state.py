"""Simulated network: saved state, the process-wide network, links in the real forms."""

from __future__ import annotations

from pathlib import Path

import pytest
from simkit import World, text_item

from simplex_protocols.core import CoreBackend, open_core
from simplex_protocols.links import LinkForm, LinkKind, parse_simplex_link
from simplex_protocols.sim import SimNetwork, default_network

pytestmark = pytest.mark.anyio


async def test_saved_network_loads_with_its_chats_links_names_and_queued_messages(
    tmp_path: Path,
) -> None:
    state = tmp_path / "sim.json"
    async with World(seed=3) as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        link = await w.address(bob)
        a_contact, _ = await w.connect(alice, bob, link)
        w.network.register_name("bob.simplex", w.network.user("bob"), "contact")
        await alice.cmd(f"/_send @{a_contact['contactId']} text before")
        await bob.message("before")
        w.network.faults.offline("bob")
        await alice.cmd(f"/_send @{a_contact['contactId']} text queued")
        last_item = max(w.network.core("alice").db.items)
        w.network.save(state)
    loaded = SimNetwork.load(state)
    assert loaded.seed == 3
    assert loaded.core_names == ["alice", "bob"]
    # the message queued for the offline user is still on its way (on the router: the
    # sender's agent has no pending delivery)
    assert loaded.messages_in_flight() == 1
    assert loaded.pending_deliveries() == 0
    async with World() as w2:
        w2.network = loaded
        bob2 = await w2.attach("bob")
        loaded.faults.offline("bob", False)
        got = await bob2.message("queued")
        assert text_item(got)[0][2] == "queued"
        alice2 = await w2.attach("alice")
        alice2.user_id = 1
        sent = await alice2.cmd(f"/_send @{a_contact['contactId']} text after")
        # IDs continue where they were
        assert sent["chatItems"][0]["chatItem"]["meta"]["itemId"] == last_item + 1
        plan = await alice2.cmd("/_connect plan 1 @bob.simplex")
        assert plan["connectionPlan"]["contactAddressPlan"]["type"] == "known"


def test_state_file_of_another_format_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(ValueError, match="not a simplex-sim state file"):
        SimNetwork.load(bad)


async def test_generated_links_parse_as_simplex_links() -> None:
    async with World() as w:
        alice = await w.user("alice")
        address = await w.address(alice)
        created = await alice.cmd(f"/_show_address {alice.user_id}")
        full = created["contactLink"]["connLinkContact"]["connFullLink"]
        inv = (await alice.cmd(f"/_connect {alice.user_id}"))["connLinkInvitation"]
        gid = (
            await alice.cmd_json(f"/_group {alice.user_id}", {"displayName": "g", "fullName": ""})
        )["groupInfo"]["groupId"]
        glink = (await alice.cmd(f"/_create link #{gid}"))["groupLink"]["connLinkContact"]
        channel = await alice.cmd_json(
            f"/_public group {alice.user_id} 1", {"displayName": "c", "fullName": ""}
        )
        cases = [
            (address, LinkKind.CONTACT, LinkForm.SHORT),
            (full, LinkKind.CONTACT, LinkForm.FULL),
            (inv["connShortLink"], LinkKind.INVITATION, LinkForm.SHORT),
            (inv["connFullLink"], LinkKind.INVITATION, LinkForm.FULL),
            (glink["connShortLink"], LinkKind.GROUP, LinkForm.SHORT),
            (glink["connFullLink"], LinkKind.GROUP, LinkForm.FULL),
            (
                channel["groupLink"]["connLinkContact"]["connShortLink"],
                LinkKind.CHANNEL,
                LinkForm.SHORT,
            ),
        ]
        for text, kind, form in cases:
            parsed = parse_simplex_link(text)
            assert (parsed.kind, parsed.form) == (kind, form), text
            assert parsed.host == w.network.user("alice").router
        # a full link and its short link name the same address
        bob = await w.user("bob")
        by_full = await bob.cmd(f"/_connect plan {bob.user_id} {full}")
        assert by_full["connLink"]["connShortLink"] == address


async def test_default_network_serves_the_sim_core_option() -> None:
    net = default_network()
    assert default_network() is net
    core = open_core("sim:state-test-user")
    assert isinstance(core.backend, CoreBackend)
    assert core.description == "sim:state-test-user"
    assert net.has_core("state-test-user")
    async with core:
        created = await core.command(
            '/_create user {"profile":{"displayName":"x","fullName":""},"pastTimestamp":false}'
        )
        assert created["type"] == "activeUser"
        assert (await core.command("/_start"))["type"] == "chatStarted"
