"""The main flows on every core profile, and the degraded behaviour each one shows.

On each profile (the newest core, a v7.0 core, a 6.4-era core) the reference bot serves MCP and
A2A, ``simplex-call`` calls it, and a scripted user connects and sends ``/_call``: what works
on every core works, and what a core lacks is logged at the bot's start and taken around as
documented (no Service RPC responder, no declaration in the profile, a conversation instead of
Service RPC).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from cli_kit import shop

from simplex_protocols._wire import dumps
from simplex_protocols.bindings.mcp import build_request
from simplex_protocols.bot import ResponderBot
from simplex_protocols.cli._call_demo import make_tools
from simplex_protocols.core import Capability, ChatAPI, ChatCore, ContactRef, event_type
from simplex_protocols.declarations import Transport
from simplex_protocols.errors import BotConfigError
from simplex_protocols.llmstxt import parse_communications_entry
from simplex_protocols.sim import CORE_PROFILES, CoreProfile

pytestmark = pytest.mark.anyio

#: What the reference bot finds missing on each profile (of the capabilities it uses).
BOT_MISSING = {
    "spec": set(),
    "v7.0": {Capability.PROTOCOLS_PREFERENCE, Capability.ADDRESS_SERVES},
    "v6.4": {
        Capability.SERVICE_REQUESTS,
        Capability.ADDRESS_PQ_RATCHET,
        Capability.PROTOCOLS_PREFERENCE,
        Capability.ADDRESS_SERVES,
    },
}

TOOLS_LIST = build_request("tools/list", request_id=7)


@pytest.mark.parametrize("profile", sorted(BOT_MISSING))
async def test_the_bot_logs_each_missing_capability_once_at_start(
    tmp_path: Path, profile: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="simplex_protocols.bot")
    async with shop(tmp_path, core_profile=profile) as s:
        missing = set(s.bot.capabilities.missing)
        declarations = s.bot.declarations
    assert missing == BOT_MISSING[profile]
    lines = [r.getMessage() for r in caplog.records if "the chat core lacks" in r.getMessage()]
    assert sorted(line.split(" lacks ")[1].split(" ")[0] for line in lines) == sorted(missing)
    rpc = Capability.SERVICE_REQUESTS not in missing
    for name in ("mcp", "a2a"):
        assert declarations.serves(name, Transport.RPC) is rpc
        assert declarations.serves(name, Transport.CHAT)


@pytest.mark.parametrize("profile", sorted(BOT_MISSING))
async def test_a_user_connects_and_the_bot_answers_call_in_the_conversation(
    tmp_path: Path, profile: str
) -> None:
    async with shop(tmp_path, core_profile=profile) as s:
        s.network.add_user("alice")
        async with ChatCore(s.network.backend("alice")) as core:
            api = ChatAPI(core)
            async with core.events() as events:
                await api.connect(1, s.address)
                contact_id = None
                async for event in events:
                    if event_type(event) == "contactConnected":
                        contact_id = event["contact"]["contactId"]
                        break
                assert contact_id is not None
                sent = await api.send_text(
                    ContactRef(contact_id), "/_call mcp " + dumps(TOOLS_LIST)
                )
                sent_id = sent[0]["chatItem"]["meta"]["itemId"]
                async for event in events:
                    if event_type(event) != "newChatItems":
                        continue
                    item = event["chatItems"][0]["chatItem"]
                    if item.get("quotedItem", {}).get("itemId") == sent_id:
                        reply = item["content"]["msgContent"]["text"]
                        break
    assert '"tools"' in reply and '"availability"' in reply


@pytest.mark.parametrize("profile", sorted(BOT_MISSING))
async def test_simplex_call_calls_the_bot_on_every_profile(tmp_path: Path, profile: str) -> None:
    async with shop(tmp_path, core_profile=profile) as s:
        auto = await s.cli(s.address, "tools/list", "--json")
        chat = await s.cli(
            s.address, "tools/list", "--protocol", "mcp", "--transport", "chat", "--json"
        )
        a2a = await s.cli(
            s.address,
            "SendMessage",
            "text=Price of two anvils",
            "--protocol",
            "a2a",
            "--transport",
            "chat",
            "--json",
        )
        rpc = await s.cli(
            s.address, "tools/list", "--protocol", "mcp", "--transport", "rpc", "--json"
        )
    # In a conversation every core serves both protocols.
    assert chat.status == 0, chat.err
    assert chat.json()["transport"] == "chat"
    assert [t["name"] for t in chat.json()["response"]["result"]["tools"]][:2] == [
        "availability",
        "quote",
    ]
    assert a2a.status == 0, a2a.err
    if profile == "spec":
        # the bot's declaration is read from its link data: Service RPC, one shot
        assert auto.status == 0 and auto.json()["transport"] == "rpc"
        assert rpc.status == 0
        return
    # older cores drop the declaration: the caller finds none, and says how to call anyway
    assert auto.status == 66
    assert "does not declare mcp" in auto.json()["error"]["message"]
    # and cannot send Service RPC requests at all (v6.4 and v7.0 lack /_service_request)
    assert rpc.status == 66
    assert "cannot send Service RPC requests" in rpc.json()["error"]["message"]


async def test_simplex_call_falls_back_to_a_conversation_on_a_core_without_requests(
    tmp_path: Path,
) -> None:
    """A caller whose core keeps declarations but cannot send Service RPC requests: the target
    declares both transports, so ``--transport auto`` calls in a conversation, with a note."""
    spec = CORE_PROFILES["spec"]
    without = [c for c in CORE_PROFILES["v7.0"].commands if c.pattern.startswith("/_service_req")]
    no_requests = CoreProfile(
        "no-requests", "spec without /_service_request", spec.version, tuple(without)
    )
    async with shop(tmp_path) as s:
        s.network.add_user("old", display_name="old", core_profile=no_requests)
        result = await s.cli(s.address, "tools/list", "--json", core="sim:old")
    assert result.status == 0, result.err
    out = result.json()
    assert out["transport"] == "chat"
    assert any("cannot send Service RPC requests" in note for note in out["notes"])


async def test_a_bot_on_an_older_core_offers_its_llms_txt_entry(tmp_path: Path) -> None:
    async with shop(tmp_path, core_profile="v6.4") as s:
        line = s.bot.communications_entry("Orders and availability")
        address = s.address
    entry = parse_communications_entry(line)
    assert entry.url == address and entry.title == "Acme Shop"
    assert entry.protocol_names == ("mcp", "a2a")
    assert entry.peer_types == ("agent",)
    assert entry.info == "Orders and availability"


def test_the_capabilities_are_known_once_the_bot_started(tmp_path: Path) -> None:
    bot = ResponderBot(display_name="Idle", mcp=make_tools(), data_dir=tmp_path / "idle")
    with pytest.raises(BotConfigError) as caught:
        _ = bot.capabilities
    assert caught.value.code == "not_running"
