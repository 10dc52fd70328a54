"""Each example bot on the simulated network (``--core sim:NAME``), called by a simulated user
over both transports."""

from __future__ import annotations

import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from simplex_protocols.bindings.a2a import build_send_message, is_final_message, stream_item_state
from simplex_protocols.bindings.mcp import is_final
from simplex_protocols.errors import ConversationRequiredError

from .exkit import STDIO_SERVER, Caller, fresh_default_network, load_example

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = [pytest.mark.anyio, pytest.mark.slow]

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def mcp_request(rid: int, method: str, progress: bool = False, **params: Any) -> dict[str, Any]:
    meta = {**META, "progressToken": rid} if progress else META
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": meta}}


def text_of(response: Any) -> str:
    return str(response["result"]["content"][0]["text"])


async def test_the_mcp_tool_bot(tmp_path: Path) -> None:
    example = load_example("mcp_tool_bot")
    args = example.parse_args(["--core", "sim:acme", "--data-dir", str(tmp_path / "acme")])
    with fresh_default_network() as network:
        async with AsyncExitStack() as stack:
            alice = await Caller(network, "alice", stack).open()
            async with example.build_bot(args).serving(args.core) as bot:
                availability = await alice.rpc(
                    bot.address,
                    "mcp",
                    mcp_request(1, "tools/call", name="availability", arguments={"item": "anvil"}),
                )
                track = mcp_request(
                    2, "tools/call", progress=True, name="track", arguments={"order": "A-17"}
                )
                with pytest.raises(ConversationRequiredError):
                    await alice.rpc(bot.address, "mcp", track)
                tracked = await alice.chat(bot.address, "mcp", track, is_final)
    assert text_of(availability) == "12 anvils are in stock."
    [answer] = tracked.answers
    *progress, response = answer.messages
    assert [p["params"]["message"] for p in progress] == ["packed", "shipped", "out for delivery"]
    assert text_of(response) == "Order A-17 is out for delivery."


async def test_the_a2a_agent_bot(tmp_path: Path) -> None:
    example = load_example("a2a_agent_bot")
    args = example.parse_args(["--core", "sim:quotes", "--data-dir", str(tmp_path / "q")])
    with fresh_default_network() as network:
        async with AsyncExitStack() as stack:
            alice = await Caller(network, "alice", stack).open()
            async with example.build_bot(args).serving(args.core) as bot:
                one_shot = await alice.rpc(
                    bot.address,
                    "a2a",
                    build_send_message("Price of two anvils delivered to Lisbon", request_id=1),
                )
                streamed = await alice.chat(
                    bot.address,
                    "a2a",
                    build_send_message("Price of 3 magnets", request_id=2, streaming=True),
                    is_final_message,
                )
                card = bot.agent_card_json()
    task = one_shot["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == (
        "2 x anvil: 240.00 EUR, delivery to Lisbon: 25.00 EUR; total 265.00 EUR"
    )
    states = [stream_item_state(m) for m in streamed.answers[0].messages]
    assert states[0] == "TASK_STATE_SUBMITTED" and states[-1] == "TASK_STATE_COMPLETED"
    assert card["skills"][0]["id"] == "quote"
    assert card["supportedInterfaces"][-1]["url"] == bot.address


async def test_the_stdio_bridge_forwards_to_an_unchanged_stdio_server(tmp_path: Path) -> None:
    example = load_example("mcp_stdio_bridge")
    args = example.parse_args(
        [
            "--core",
            "sim:notes",
            "--data-dir",
            str(tmp_path / "n"),
            sys.executable,
            str(STDIO_SERVER),
        ]
    )
    with fresh_default_network() as network:
        async with AsyncExitStack() as stack:
            alice = await Caller(network, "alice", stack).open()
            bridge = await stack.enter_async_context(
                example.open_bridge(args.command, display_name="Notes", data_dir=args.data_dir)
            )
            async with bridge.serving(args.core) as bot:
                listed = await alice.rpc(bot.address, "mcp", mcp_request(1, "tools/list"))
                shouted = await alice.rpc(
                    bot.address,
                    "mcp",
                    mcp_request(2, "tools/call", name="shout", arguments={"text": "hi"}),
                )
                counted = await alice.chat(
                    bot.address,
                    "mcp",
                    mcp_request(3, "tools/call", progress=True, name="count", arguments={"to": 2}),
                    is_final,
                )
                read = await alice.rpc(
                    bot.address, "mcp", mcp_request(4, "resources/read", uri="notes://today")
                )
                prompt = await alice.rpc(
                    bot.address,
                    "mcp",
                    mcp_request(5, "prompts/get", name="summarize", arguments={"topic": "anvils"}),
                )
                discovered = await alice.rpc(bot.address, "mcp", mcp_request(6, "server/discover"))
    assert [t["name"] for t in listed["result"]["tools"]] == ["shout", "count"]
    assert text_of(shouted) == "HI!"
    *progress, response = counted.answers[0].messages
    assert [p["params"]["progress"] for p in progress] == [1, 2]
    assert text_of(response) == "counted to 2"
    assert read["result"]["contents"][0]["text"] == "Buy more anvils."
    assert prompt["result"]["messages"][0]["content"]["text"] == "Summarize anvils in one line."
    capabilities = discovered["result"]["capabilities"]
    assert set(capabilities) == {"tools", "resources", "prompts"}
    assert discovered["result"]["instructions"] == "Notes kept by a stdio server."
