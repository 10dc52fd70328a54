"""A2A tasks through a ResponderBot: a one-shot task over Service RPC, a streamed task in a
conversation, tasks that survive a restart, and the Agent Card with the SimpleX interface."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from simplex_protocols.bindings.a2a import (
    A2A_BINDING_URI,
    build_a2a_request,
    build_send_message,
    is_final_message,
    stream_item_state,
)
from simplex_protocols.bot import ResponderBot
from simplex_protocols.errors import BotConfigError, ConversationRequiredError
from simplex_protocols.rpc import SigningKey

from .botkit import EchoAgent, World, echo_card

pytestmark = pytest.mark.anyio


def new_bot(tmp_path: Path, world: World, **options: Any) -> ResponderBot:
    return ResponderBot(
        display_name="Acme",
        a2a=EchoAgent(),
        agent_card=echo_card(),
        peer_type="agent",
        data_dir=tmp_path / "acme",
        clock=world.clock,
        **options,
    )


def final(request: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    return functools.partial(is_final_message, request)


def artifact_text(task: Mapping[str, Any]) -> str:
    return str(task["artifacts"][0]["parts"][0]["text"])


async def test_a_one_shot_task_over_service_rpc(tmp_path: Path) -> None:
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            request = build_send_message("Price of two anvils", request_id=1)
            response = await alice.rpc.request(bot.address, "a2a", request)
    assert isinstance(response, dict)
    task = response["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert artifact_text(task) == "echo: Price of two anvils"


async def test_a_streamed_task_in_a_conversation(tmp_path: Path) -> None:
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            contact = await alice.connect(bot.address)
            request = build_send_message("stream it", request_id="s-1", streaming=True)
            result = await alice.chat.call(contact, "a2a", request, final=final(request))
    assert result.completed
    [answer] = result.answers
    states = [stream_item_state(m) for m in answer.messages]
    # One reply per stream response, in order, ending at the terminal state.
    assert len(answer.messages) >= 3
    assert states[0] == "TASK_STATE_SUBMITTED"
    assert states[-1] == "TASK_STATE_COMPLETED"
    assert all(m["id"] == "s-1" for m in answer.messages)


async def test_tasks_survive_a_restart(tmp_path: Path) -> None:
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            contact = await alice.connect(bot.address)
            send = build_send_message("remember me", request_id=1)
            sent = await alice.chat.call(contact, "a2a", send, final=final(send))
        assert sent.answers[0].final is not None
        task_id = sent.answers[0].final["result"]["task"]["id"]
        bob = await world.caller("bob")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            get = build_a2a_request("GetTask", {"id": task_id}, request_id=2)
            got = await alice.chat.call(contact, "a2a", get, final=final(get))
            # Another caller does not see it (A2A-AUTHZ-2).
            bob_contact = await bob.connect(bot.address)
            other = await bob.chat.call(bob_contact, "a2a", get, final=final(get))
        assert (tmp_path / "acme" / "a2a.sqlite").is_file()
    answer = got.answers[0].final
    assert answer is not None
    assert answer["result"]["id"] == task_id
    assert artifact_text(answer["result"]) == "echo: remember me"
    refused = other.answers[0].final
    assert refused is not None and refused["error"]["code"] == -32001


@pytest.mark.requirement("A2A-ID-2")
async def test_the_agent_card_lists_the_simplex_interface(tmp_path: Path) -> None:
    key = SigningKey.generate()
    async with World() as world:
        alice = await world.caller("alice")
        bot = new_bot(tmp_path, world)
        with pytest.raises(BotConfigError) as before:
            _ = bot.agent_card
        async with bot.serving(world.network.backend("acme")):
            card = bot.agent_card_json()
            contact = await alice.connect(bot.address)
            request = build_a2a_request("GetExtendedAgentCard", {}, request_id=3)
            answered = await alice.chat.call(contact, "a2a", request, final=final(request))
            # A2A-RPC-4 (AMB-2, reading B): over Service RPC the card needs a conversation
            with pytest.raises(ConversationRequiredError):
                await alice.rpc.request(bot.address, "a2a", request, signing_key=key)
            address = bot.address
    assert before.value.code == "not_running"
    assert card["name"] == "Acme echo"
    assert {
        "url": address,
        "protocolBinding": A2A_BINDING_URI,
        "protocolVersion": "1.0",
    } in card["supportedInterfaces"]
    final_card = answered.answers[0].final
    assert final_card is not None
    assert final_card["result"]["supportedInterfaces"] == card["supportedInterfaces"]


async def test_without_a_card_one_is_made_from_the_profile(tmp_path: Path) -> None:
    async with World() as world:
        bot = ResponderBot(
            display_name="Acme",
            description="Echo agent",
            a2a=EchoAgent(),
            data_dir=tmp_path / "acme",
            clock=world.clock,
        )
        async with bot.serving(world.network.backend("acme")):
            card = bot.agent_card_json()
    assert (card["name"], card["description"]) == ("Acme", "Echo agent")
    assert card["capabilities"]["streaming"] is True


async def test_a_first_start_logs_no_warning_about_the_card(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with World() as world:
        bot = new_bot(tmp_path, world)
        async with bot.serving(world.network.backend("acme")):
            assert bot.running
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
