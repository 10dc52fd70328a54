"""plan_address on the simulated network, and read_plan on the core's plan shapes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from simplex_protocols._clock import ManualClock
from simplex_protocols.core import ChatAPI, ChatCore
from simplex_protocols.declarations import ChangeFrequency, DeclarationSource, PeerType
from simplex_protocols.discovery import (
    AddressPlan,
    AddressSource,
    WebsiteAddress,
    plan_address,
    read_plan,
)
from simplex_protocols.errors import CoreError
from simplex_protocols.links import LinkKind
from simplex_protocols.sim import SimNetwork

PROTOCOLS = {
    "protocols": {
        "mcp": {"versions": ["2026-07-28"], "transports": {"chat": True, "rpc": True}},
        "a2a": {"versions": ["1.0"], "transports": {"chat": True}},
        "Bad_Name": {"versions": ["1"], "transports": {"chat": True}},
    }
}


class Caller:
    def __init__(self, network: SimNetwork, api: ChatAPI, user_id: int) -> None:
        self.network = network
        self.api = api
        self.user_id = user_id

    async def plan(self, target: str, website: WebsiteAddress | None = None) -> AddressPlan:
        with anyio.fail_after(5):
            return await plan_address(self.api, self.user_id, target, website=website)


@pytest.fixture
async def caller() -> AsyncIterator[Caller]:
    network = SimNetwork(seed=11, clock=ManualClock())
    bot = network.add_user(
        "shop",
        display_name="Acme Shop",
        peer_type="bot",
        preferences=PROTOCOLS,
        short_descr="Anvils",
    )
    bot.create_address(pq_ratchet=True, serves=["agent", "robot"])
    network.register_name("acme.simplex", bot)
    me = network.add_user("me")
    async with ChatCore(network.backend("me")) as core:
        yield Caller(network, ChatAPI(core), me.user_id)


@pytest.mark.anyio
@pytest.mark.requirement("DECL-SERVES-1", "DECL-PREC-1")
async def test_plan_reads_protocols_serves_and_profile_from_the_link_data(caller: Caller) -> None:
    address = caller.network.user("shop").address
    assert address is not None
    plan = await caller.plan(address)
    assert plan.kind is LinkKind.CONTACT and plan.status == "ok"
    assert plan.link == address and plan.address == address
    assert plan.display_name == "Acme Shop" and plan.peer_type == "bot"
    assert plan.short_description == "Anvils" and plan.business is False
    assert list(plan.protocols) == ["mcp", "a2a"]
    assert plan.protocols.serves("mcp", "rpc") and not plan.protocols.serves("a2a", "rpc")
    assert plan.serves is not None
    assert plan.serves.value == {PeerType.AGENT}
    assert plan.serves.source is DeclarationSource.LINK_DATA
    assert [p.code for p in plan.problems] == ["bad_protocol_name"]
    assert plan.contact_id is None and plan.notes == ()
    assert plan.to_json() == {
        "target": address,
        "link": address,
        "kind": "contact",
        "planStatus": "ok",
        "displayName": "Acme Shop",
        "peerType": "bot",
        "shortDescription": "Anvils",
        "business": False,
        "protocols": {
            "mcp": {"versions": ["2026-07-28"], "transports": {"chat": True, "rpc": True}},
            "a2a": {"versions": ["1.0"], "transports": {"chat": True, "rpc": False}},
        },
        "serves": {"value": ["agent"], "source": "linkData"},
        "problems": [
            {
                "code": "bad_protocol_name",
                "requirement": "NAME-1",
                "position": "/protocols/Bad_Name",
            }
        ],
    }


@pytest.mark.anyio
async def test_a_simplex_name_is_resolved_to_its_address(caller: Caller) -> None:
    plan = await caller.plan("@acme.simplex")
    assert plan.simplex_name == "@acme.simplex"
    assert plan.link == caller.network.user("shop").address
    assert plan.target == "@acme.simplex" and plan.to_json()["simplexName"] == "@acme.simplex"


@pytest.mark.anyio
@pytest.mark.requirement("DECL-PREC-1", "LLMS-NOTES-10", "LLMS-NOTES-11")
async def test_the_link_data_wins_over_the_website_and_disagreements_are_noted(
    caller: Caller,
) -> None:
    address = caller.network.user("shop").address
    assert address is not None
    website = WebsiteAddress(
        address,
        LinkKind.CONTACT,
        (AddressSource.LLMS_TXT,),
        audience=("human",),
        protocols=("mcp", "graphql"),
        business=True,
    )
    plan = await caller.plan(address, website)
    assert plan.serves is not None and plan.serves.value == {PeerType.AGENT}
    assert plan.website is website
    assert len(plan.notes) == 3
    assert "graphql" in plan.notes[0] and "LLMS-NOTES-10" in plan.notes[0]
    assert "LLMS-NOTES-11" in plan.notes[1]
    assert "business" in plan.notes[2]


@pytest.mark.anyio
async def test_without_serves_the_website_audience_applies(caller: Caller) -> None:
    other = caller.network.add_user("other", preferences=PROTOCOLS)
    address = other.create_address(pq_ratchet=True)
    website = WebsiteAddress(
        address, LinkKind.CONTACT, (AddressSource.LLMS_TXT,), audience=("agent",)
    )
    plan = await caller.plan(address, website)
    assert plan.serves is not None
    assert plan.serves.value == {PeerType.AGENT}
    assert plan.serves.source is DeclarationSource.WEBSITE
    plan = await caller.plan(address)
    assert plan.serves is not None
    assert plan.serves.value == {PeerType.HUMAN}
    assert plan.serves.source is DeclarationSource.DEFAULT


@pytest.mark.anyio
async def test_unknown_names_and_deleted_links_are_core_errors(caller: Caller) -> None:
    with pytest.raises(CoreError) as info:
        await caller.plan("@nobody.simplex")
    assert info.value.chain[-2:] == ["NAME", "NOT_FOUND"]
    address = caller.network.user("shop").address
    assert address is not None
    caller.network.user("shop").command(f"/_delete_address {caller.network.user('shop').user_id}")
    with pytest.raises(CoreError) as info:
        await caller.plan(address)
    assert info.value.error_type == "AUTH"


def _group_response(**plan: Any) -> dict[str, Any]:
    return {
        "type": "connectionPlan",
        "connLink": {"connFullLink": "https://simplex.chat/contact#/?v=1", "connShortLink": "L"},
        "connectionPlan": {"type": "groupLink", "groupLinkPlan": {"type": "ok", **plan}},
    }


def test_a_channel_plan_reads_the_public_group_record() -> None:
    response = _group_response(
        groupSLinkInfo_={"direct": False, "groupRelays": []},
        groupSLinkData_={
            "groupProfile": {
                "displayName": "Acme news",
                "fullName": "",
                "publicGroup": {
                    "groupType": "channel",
                    "groupLink": "L",
                    "publicGroupId": "p",
                    "audience": ["agent"],
                    "changeFrequency": "daily",
                },
                "groupPreferences": {
                    "protocols": {"mcp": {"versions": ["2026-07-28"], "transports": {"chat": True}}}
                },
            }
        },
    )
    website = WebsiteAddress(
        "L", LinkKind.CHANNEL, (AddressSource.LLMS_TXT,), audience=("human",), frequency="weekly"
    )
    plan = read_plan("L", response, website=website)
    assert plan.kind is LinkKind.CHANNEL and plan.display_name == "Acme news"
    assert plan.audience is not None and plan.audience.value == {PeerType.AGENT}
    assert plan.change_frequency is not None
    assert plan.change_frequency.value is ChangeFrequency.DAILY
    assert plan.protocols.serves("mcp", "chat")
    assert len(plan.notes) == 2
    assert plan.to_json()["changeFrequency"] == {"value": "daily", "source": "publicGroup"}
    assert plan.to_json()["audience"] == {"value": ["agent"], "source": "publicGroup"}


def test_a_known_group_and_an_error_plan() -> None:
    response = _group_response(
        type="known", groupInfo={"groupId": 7, "groupProfile": {"displayName": "G"}}
    )
    plan = read_plan("L", response)
    assert plan.kind is LinkKind.GROUP and plan.status == "known" and plan.group_id == 7
    assert plan.change_frequency is None
    error = {
        "type": "connectionPlan",
        "connectionPlan": {
            "type": "error",
            "chatError": {"type": "error", "errorType": {"type": "invalidConnReq"}},
        },
    }
    with pytest.raises(CoreError) as info:
        read_plan("x", error)
    assert info.value.error_type == "invalidConnReq"


def test_an_invitation_plan_is_read_as_an_invitation() -> None:
    response = {
        "type": "connectionPlan",
        "connLink": {"connFullLink": "F"},
        "connectionPlan": {
            "type": "invitationLink",
            "invitationLinkPlan": {
                "type": "ok",
                "contactSLinkData_": {"profile": {"displayName": "X"}},
            },
        },
    }
    plan = read_plan("F", response)
    assert plan.kind is LinkKind.INVITATION and plan.link == "F" and plan.display_name == "X"
    assert plan.serves is None and plan.peers is None
