"""MCP calls to a ResponderBot from a second simulated user, through the transports' caller
side: /_call in a conversation and Service RPC, signed and unsigned."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from simplex_protocols.bindings.mcp import is_final
from simplex_protocols.bot import ResponderBot
from simplex_protocols.rpc import SigningKey

from .botkit import World, confirmed_reserve, make_tools, tool_call, tool_text

pytestmark = pytest.mark.anyio


def new_bot(tmp_path: Path, world: World, name: str = "acme", **options: Any) -> ResponderBot:
    return ResponderBot(
        display_name="Acme",
        mcp=make_tools(),
        data_dir=tmp_path / name,
        clock=world.clock,
        **options,
    )


def final(request: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    """The caller's rule for the end of an MCP answer: the JSON-RPC response to ``request``."""
    return functools.partial(is_final, request)


@pytest.mark.requirement("DECL-PROTO-12")
async def test_a_tool_call_in_a_conversation_is_answered_with_a_quoting_reply(
    tmp_path: Path,
) -> None:
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            contact = await alice.connect(bot.address)
            request = tool_call("availability", {"item": "anvil"})
            result = await alice.chat.call(contact, "mcp", request, final=final(request))
    assert result.completed
    [answer] = result.answers
    assert answer.final is not None
    assert tool_text(answer.final) == "12 anvils are in stock."
    assert answer.final["id"] == 1


@pytest.mark.requirement("DECL-PROTO-13")
async def test_a_tool_call_over_unsigned_service_rpc(tmp_path: Path) -> None:
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            response = await alice.rpc.request(
                bot.address, "mcp", tool_call("availability", {"item": "anvil"})
            )
            who = await alice.rpc.request(bot.address, "mcp", tool_call("whoami", {}))
    assert isinstance(response, dict) and isinstance(who, dict)
    assert tool_text(response) == "12 anvils are in stock."
    # An unsigned requester is nobody in particular: a fresh key for each request.
    assert tool_text(who).startswith("rpc-anonymous:")


@pytest.mark.requirement("DECL-PROTO-13")
async def test_a_signed_request_reaches_the_tool_as_its_signer(tmp_path: Path) -> None:
    key = SigningKey.generate()
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            who = await alice.rpc.request(
                bot.address, "mcp", tool_call("whoami", {}), signing_key=key
            )
            again = await alice.rpc.request(
                bot.address, "mcp", tool_call("whoami", {}, rid=2), signing_key=key
            )
    assert isinstance(who, dict) and isinstance(again, dict)
    assert tool_text(who) == f"rpc:{key.public_key.encode()}" == tool_text(again)


async def test_the_caller_in_a_conversation_is_the_contact(tmp_path: Path) -> None:
    async with World() as world:
        alice = await world.caller("alice")
        bob = await world.caller("bob")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            keys = []
            for caller in (alice, bob):
                contact = await caller.connect(bot.address)
                request = tool_call("whoami", {})
                result = await caller.chat.call(contact, "mcp", request, final=final(request))
                assert result.answers[0].final is not None
                keys.append(tool_text(result.answers[0].final))
    assert keys[0].startswith("chat:@") and keys[1].startswith("chat:@")
    assert keys[0] != keys[1]


async def test_a_request_state_sealed_before_a_restart_is_accepted_after_it(
    tmp_path: Path,
) -> None:
    key = SigningKey.generate()
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            first = await alice.rpc.request(
                bot.address, "mcp", tool_call("reserve", {"item": "anvil"}), signing_key=key
            )
        follow_up = confirmed_reserve(first)
        # The same data folder: the same secret, so the state is still good.
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            second = await alice.rpc.request(bot.address, "mcp", follow_up, signing_key=key)
            # Another signer cannot continue it (the state is bound to its caller).
            stranger = await alice.rpc.request(
                bot.address, "mcp", follow_up, signing_key=SigningKey.generate()
            )
        secret = tmp_path / "acme" / "mcp-request-state.secret"
        assert secret.stat().st_mode & 0o777 == 0o600
    assert isinstance(second, dict) and isinstance(stranger, dict)
    assert tool_text(second) == "Reserved one anvil."
    assert stranger["error"]["code"] == -32602
