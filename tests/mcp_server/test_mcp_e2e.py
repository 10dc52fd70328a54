"""End to end over the simulated network: the owner, the directory, a vendor and a channel are
scripted simulated users; the agent's calls come from the ``mcp`` SDK's client over HTTP.

Plan "Tests: End to end" rows of part 1: setup, directory, vendor, channel, reject and expire,
lost result, peer text, alias.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_sim import result_text, structured, text_of_item, world


@pytest.mark.anyio
async def test_setup_owner_joins_gets_the_greeting_and_the_register_hint(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        async with world(tmp_path) as w:
            log = w.server.log
            assert log.lines[:4] == [
                'SimpleX MCP server 0.1.0, agent "my-agent"',
                f"Data folder: {tmp_path / 'agent'}",
                "Approval mode: requests",
                'Agent control chat "My Agent" created.',
            ]
            assert (
                log.lines[4]
                == "Join the agent control chat in the SimpleX app. The link works once:"
            )
            await w.setup_owner()
            index = log.lines.index(
                "Alice joined (member 2) and is now an owner. The link is deleted."
            )
            assert log.lines[index + 1 : index + 3] == [
                "Add the agent to Claude Code:",
                "  simplex-mcp register my-agent",
            ]
            # the link is deleted: nobody else joins by it
            assert log.lines[-1] == "  simplex-mcp register my-agent"
            chat = await w.owner.cmd(f"/_get chat {w.owner.control} count=0")
            assert chat["chat"]["chatInfo"]["groupInfo"]["membership"]["memberRole"] == "owner"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_directory_search_connect_card_approve_send_and_responses(
    tmp_path: Path, mode: str
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path, mode=mode) as w:
            await w.setup_owner()
            server, owner = w.server, w.owner
            async with anyio.create_task_group() as tg:
                results: dict[str, dict[str, Any]] = {}

                async def connect() -> None:
                    results["connect"] = structured(
                        await server.call(
                            "connect", {"target": "@directory.simplex", "wait": 30, "idle": 5}
                        )
                    )

                tg.start_soon(connect)
                card = await owner.wait_message(lambda t: "/'approve 1'" in t)
                assert text_of_item(card) == (
                    "I want to connect to bot SimpleX Directory (@directory.simplex), as myself.\n"
                    "`Find groups, channels, businesses and bots.`\n"
                    "`Welcome to the directory! Send a search.`\n"
                    "/'approve 1' or /'reject 1'"
                )
                await server.log.wait_line(
                    lambda line: line == "Action 1: connect to bot SimpleX Directory, as itself"
                )
                await owner.say("/approve 1")
                # the connection completes (the welcome is in the chat already); then idle passes
                await server.seen.until(
                    lambda: any(e["type"] == "contactConnected" for e in server.seen.events)
                )
                await w.clock.advance(5)
            result = results["connect"]
            assert result["action"] == 1
            assert result["status"] == "done"
            assert result["connected"] is True
            assert result["type"] == "contact"
            assert result["peer_type"] == "bot"
            assert result["name"] == "SimpleX Directory"
            assert result["simplex_name"] == "@directory.simplex"
            assert [m["text"] for m in result["messages"]] == [
                "Welcome to the directory! Send a search."
            ]
            assert [c.get("keyword") for c in result["commands"]] == ["new", "help", "list", None]
            chat = result["chat"]
            await owner.wait_message(
                lambda t: (
                    t.startswith(
                        "I connected to bot SimpleX Directory (@directory.simplex), as myself."
                    )
                    and t.endswith("Approved by Alice.")
                )
            )
            await server.log.wait_line(
                lambda line: line == "Action 1 approved by Alice: connected."
            )

            async with anyio.create_task_group() as tg:

                async def send() -> None:
                    results["send"] = structured(
                        await server.call(
                            "send", {"chat": chat, "text": "trail running shoes", "idle": 5}
                        )
                    )

                tg.start_soon(send)
                card = await owner.wait_message(lambda t: "/'approve " in t and " 2'" in t)
                assert text_of_item(card) == (
                    "I want to send a message to bot SimpleX Directory (@directory.simplex):\n"
                    "`trail running shoes`\n"
                    f"/'approve {chat} 2', /'approve {chat} all' or /'reject {chat} 2'"
                )
                await owner.say(f"/approve {chat} 2")
                await server.seen.until(
                    lambda: (
                        len([t for t in server.seen.received_texts(chat) if t.startswith("Found:")])
                        == 3
                    )
                )
                await w.clock.advance(5)
            sent = results["send"]
            assert sent["action"] == 2
            assert sent["status"] == "done"
            assert [r["text"] for r in sent["responses"]] == [
                "Found: trail running shoes 1",
                "Found: trail running shoes 2",
                "Found: trail running shoes 3",
            ]
            assert all(r["item"] > sent["item"] for r in sent["responses"])
            assert sent["more"] == 0
            listing = structured(await server.call("list"))
            entry = next(c for c in listing["chats"] if c["chat"] == chat)
            assert entry["unread"] == 0
            assert listing["actions"] == []


@pytest.mark.anyio
async def test_the_20_digit_alias_of_the_control_chat_is_refused(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        async with world(tmp_path) as w:
            await w.setup_owner()
            control = w.server.info.agent.control
            assert control is not None
            control_id = control.group_id
            alias = f"#{2**64 + control_id}"
            for tool, arguments in (
                ("receive", {"chat": alias}),
                ("send", {"chat": alias, "text": "hi"}),
                ("leave", {"chat": alias}),
                ("send", {"chat": f"#{control_id}", "text": "hi"}),
            ):
                result = await w.server.call(tool, arguments)
                assert result.is_error
                assert (
                    result_text(result)
                    == f"No chat {arguments['chat']}. list shows the agent's chats."
                )
            listing = structured(await w.server.call("list"))
            assert all(c["chat"] != f"#{control_id}" for c in listing["chats"])


@pytest.mark.anyio
async def test_connect_errors_before_any_action(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        async with world(tmp_path) as w:
            link = next(line for line in w.server.log.lines if line.startswith("https://"))
            cases = [
                ({"target": "hello"}, "Not a SimpleX link or name: hello"),
                (
                    {"target": "@nobody.simplex"},
                    "Name not found: This SimpleX name is not registered. Please check the name.",
                ),
                ({"target": link}, f"{link} can't be joined now: groupLink ownLink."),
                (
                    {"target": "#ridgeline.simplex", "message": "hi"},
                    "message: #ridgeline.simplex is not a contact or business address with short link data, or its contact exists without a connection.",
                ),
            ]
            for arguments, message in cases:
                result = await w.server.call("connect", arguments)
                assert result.is_error
                assert result_text(result) == message
            assert not any(line.startswith("Action ") for line in w.server.log.lines)


@pytest.mark.anyio
async def test_a_known_target_returns_known_without_an_action(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        async with world(tmp_path) as w:
            await w.setup_owner()
            async with anyio.create_task_group() as tg:
                results: dict[str, dict[str, Any]] = {}

                async def connect() -> None:
                    results["first"] = structured(
                        await w.server.call("connect", {"target": "@directory.simplex", "idle": 1})
                    )

                tg.start_soon(connect)
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                await w.owner.say("/approve 1")
                await w.server.seen.until(
                    lambda: any(e["type"] == "contactConnected" for e in w.server.seen.events)
                )
                await w.clock.advance(1)
            chat = results["first"]["chat"]
            known = structured(await w.server.call("connect", {"target": "@directory.simplex"}))
            assert "action" not in known
            assert (
                known["status"],
                known["chat"],
                known["connected"],
                known["type"],
                known["peer_type"],
            ) == ("known", chat, True, "contact", "bot")
            assert "messages" not in known
            assert not any(line.startswith("Action 2") for line in w.server.log.lines)
