"""Action rules through the running server: the counter written before the card, the limit of
20 pending actions, and the card size limit measured with the current approvers' longest name
(plan "Actions", "Card size", "Errors"; unit rows "actions" and "commands")."""

from __future__ import annotations

import re
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_sim import World, add_in_the_app, result_text, structured, text_of_item, world

from simplex_protocols.mcp_server.cards import MAX_CARD_BYTES, Subject, largest_send_form, send_card


async def connected_directory(w: World) -> str:
    """The agent connects to the directory (approved); returns the chat."""
    result: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:

        async def connect() -> None:
            result.update(
                structured(
                    await w.server.call("connect", {"target": "@directory.simplex", "idle": 1})
                )
            )

        tg.start_soon(connect)
        card = await w.owner.wait_message(lambda t: "/'approve " in t and "connect" in t)
        n = re.search(r"/'approve (\d+)'", text_of_item(card))
        assert n is not None
        await w.owner.say(f"/approve {n.group(1)}")
        await w.server.seen.until(
            lambda: any(e["type"] == "contactConnected" for e in w.server.seen.events)
        )
        await w.clock.advance(1)
    return str(result["chat"])


@pytest.mark.anyio
async def test_the_counter_is_written_before_the_card_is_posted(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            core = w.network.core("my-agent")
            commands: list[str] = []
            handle = core.handle_command

            def recorded(session: Any, corr_id: str, cmd: str) -> None:
                commands.append(cmd)
                handle(session, corr_id, cmd)

            core.handle_command = recorded  # type: ignore[method-assign]
            async with anyio.create_task_group() as tg:
                for target in ("@directory.simplex", w.vendor_link):
                    tg.start_soon(w.server.call, "connect", {"target": target})
                await w.owner.wait_message(lambda t: "/'approve 2'" in t)
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                tg.cancel_scope.cancel()
            control = w.server.info.agent.control
            assert control is not None
            writes = [
                i for i, c in enumerate(commands) if c.startswith(f"/_set custom {control.ref} ")
            ]
            cards = [
                i
                for i, c in enumerate(commands)
                if c.startswith(f"/_send {control.ref} json") and "/'approve" in c
            ]
            assert len(writes) == len(cards) == 2
            # counter 2 written, then card 1; counter 3 written, then card 2
            assert '"nextAction":2' in commands[writes[0]]
            assert '"nextAction":3' in commands[writes[1]]
            assert writes[0] < cards[0] and writes[1] < cards[1]
            assert "/'approve 1'" in commands[cards[0]]
            # the counter is in the control chat's custom data
            group = (await w.owner.cmd(f"/_get chat {w.owner.control} count=0"))["chat"]
            assert group["chatInfo"]["groupInfo"].get("customData") is None  # only the agent's DB
            info = await w.server.info.agent.api.core.command(
                f"/_groups {w.server.info.agent.user_id}"
            )
            data = next(
                g["customData"]["simplexMcp"]
                for g in info["groups"]
                if g.get("customData", {}).get("simplexMcp", {}).get("control")
            )
            assert data == {"control": True, "nextAction": 3}


@pytest.mark.anyio
async def test_20_pending_actions_then_the_tool_error(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with world(tmp_path) as w:
            await w.setup_owner()
            chat = await connected_directory(w)
            async with anyio.create_task_group() as tg:
                for k in range(20):
                    tg.start_soon(w.server.call, "send", {"chat": chat, "text": f"search {k}"})
                await w.server.log.wait_line(lambda line: line.startswith("Action 21: "))
                await w.owner.wait_message(lambda t: f"/'approve {chat} 21'" in t)
                refused = await w.server.call("send", {"chat": chat, "text": "one more"})
                assert result_text(refused) == (
                    "20 actions are pending; wait for the owner's decisions."
                )
                # a call that attaches to a pending action is no new action: not refused
                listing = structured(await w.server.call("list"))
                assert [a["state"] for a in listing["actions"]] == ["pending"] * 20
                await w.owner.say("/pending")
                reply = await w.owner.wait_message(lambda t: t.startswith("2  send to bot"))
                lines = text_of_item(reply).split("\n")
                assert len(lines) == 20
                assert lines[0] == (
                    "2  send to bot SimpleX Directory  expires 18 October 2026 at 08:00 UTC"
                )
                # one decision makes room for one more
                await w.owner.say(f"/reject {chat} 2")
                await w.owner.wait_message(lambda t: t.endswith("\nRejected by Alice."))
                tg.start_soon(w.server.call, "send", {"chat": chat, "text": "one more"})
                await w.owner.wait_message(lambda t: f"/'approve {chat} 22'" in t)
                tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_the_card_size_limit_counts_the_longest_name_of_the_current_approvers(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with world(tmp_path) as w:
            await w.setup_owner()
            chat = await connected_directory(w)
            subject = Subject("bot", "SimpleX Directory", "@directory.simplex", chat, False)

            def size(text: str, approver: str) -> int:
                card = send_card(2, subject, chat, text)
                return largest_send_form(card, approver=approver, standing=False)

            def fitting(approver: str) -> str:
                """A text whose largest card form is exactly 15,000 bytes (three-byte characters
                keep it under the 12,000 characters of the input schema)."""
                budget = MAX_CARD_BYTES - (size("a", approver) - 1)
                wide = (budget - 1) // 3
                return "\u20ac" * wide + "a" * (budget - 3 * wide)

            text = fitting("Alice")
            assert size(text, "Alice") == MAX_CARD_BYTES
            refused = await w.server.call("send", {"chat": chat, "text": text + "a"})
            assert result_text(refused) == "text: too long for its approval card; shorten it."
            async with anyio.create_task_group() as tg:
                tg.start_soon(w.server.call, "send", {"chat": chat, "text": text})
                await w.owner.wait_message(lambda t: f"/'approve {chat} 2'" in t)
                tg.cancel_scope.cancel()
            # Alice adds an owner with a longer name: the same text no longer fits
            long_name = "Bartholomew Longname-Smith"
            async with anyio.create_task_group() as tg, AsyncExitStack() as stack:
                await add_in_the_app(w, stack, tg, "bart", long_name, "owner")
                assert sorted(
                    str(m["memberProfile"]["displayName"]) for m in w.server.info.agent.approvers()
                ) == ["Alice", long_name]
                other = text[:-1] + "b"  # another action, not an attach to action 2
                assert size(other, "Alice") <= MAX_CARD_BYTES < size(other, long_name)
                refused = await w.server.call("send", {"chat": chat, "text": other})
                assert result_text(refused) == ("text: too long for its approval card; shorten it.")
                tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_a_bot_command_is_sent_as_text_and_the_bot_answers_it(tmp_path: Path) -> None:
    """The "bot command" row of "Other scenarios": the card shows the command as text."""
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            chat = await connected_directory(w)
            result: dict[str, Any] = {}
            async with anyio.create_task_group() as tg:

                async def send() -> None:
                    result.update(
                        structured(
                            await w.server.call("send", {"chat": chat, "text": "/help", "idle": 1})
                        )
                    )

                tg.start_soon(send)
                card = await w.owner.wait_message(lambda t: f"/'approve {chat} 2'" in t)
                assert text_of_item(card) == (
                    "I want to send a message to bot SimpleX Directory (@directory.simplex):\n"
                    "`/help`\n"
                    f"/'approve {chat} 2', /'approve {chat} all' or /'reject {chat} 2'"
                )
                await w.owner.say(f"/approve {chat} 2")
                answer = "Send a search to find groups, channels, businesses and bots."
                await w.server.seen.until(lambda: answer in w.server.seen.received_texts(chat))
                await w.clock.advance(1)
            assert result["status"] == "done"
            assert [r["text"] for r in result["responses"]] == [answer]
            assert result["responses"][0]["from"] == "SimpleX Directory"
            assert result["more"] == 0
