"""End to end: the plan's sequence diagrams "Asking a vendor incognito" to "Standing approval and
leave", the lost result and attach, owner commands, and peer text in cards.

The owner, the vendor's business bot and the channel are scripted simulated users; the agent's
calls come from the ``mcp`` SDK's client over HTTP. Time is a manual clock.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_sim import Peer, World, formatted_lines, result_text, structured, text_of_item, world


class Call:
    """A tool call running in the background, its progress messages and its result."""

    def __init__(self) -> None:
        self.result: dict[str, Any] | None = None
        self.error: str | None = None
        self.done = anyio.Event()
        self.progress: list[str] = []
        self.progressed = anyio.Event()

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append(message or "")
        self.progressed.set()
        self.progressed = anyio.Event()

    async def wait_progress(self, count: int = 1) -> str:
        while len(self.progress) < count:
            await self.progressed.wait()
        return self.progress[count - 1]

    async def wait(self) -> dict[str, Any]:
        await self.done.wait()
        assert self.result is not None, self.error
        return self.result


def start(tg: anyio.abc.TaskGroup, w: World, tool: str, arguments: dict[str, Any]) -> Call:
    call = Call()

    async def run() -> None:
        result = await w.server.call(tool, arguments, progress_callback=call.on_progress)
        if result.is_error:
            call.error = result_text(result)
        else:
            call.result = structured(result)
        call.done.set()

    tg.start_soon(run)
    return call


async def approve_connect(w: World, n: int, *, arrived: str | None = None, idle: float = 5) -> None:
    """The owner approves connect N; once the agent has the expected message, idle passes."""
    await w.owner.wait_message(lambda t: f"/'approve {n}'" in t)
    await w.owner.say(f"/approve {n}")
    if arrived is not None:
        await w.server.seen.until(lambda: arrived in w.server.seen.received_texts())
    else:
        await w.server.seen.until(
            lambda: any(
                e["type"] in ("contactConnected", "userJoinedGroup") for e in w.server.seen.events
            )
        )
    await w.clock.advance(idle)


async def connect_vendor(w: World) -> dict[str, Any]:
    async with anyio.create_task_group() as tg:
        call = start(
            tg,
            w,
            "connect",
            {
                "target": w.vendor_link,
                "incognito": True,
                "message": "Do you have trail shoes under $150 in size 44?",
                "idle": 5,
            },
        )
        card = await w.owner.wait_message(lambda t: "/'approve 1'" in t)
        assert text_of_item(card) == (
            "I want to connect to business Ridgeline, incognito.\n"
            "With the message:\n"
            "`Do you have trail shoes under $150 in size 44?`\n"
            "/'approve 1' or /'reject 1'"
        )
        await approve_connect(w, 1, arrived="Yes: Talus Trail, $139, size 44 in stock.")
        result = await call.wait()
    return result


@pytest.mark.anyio
async def test_vendor_incognito_with_a_message_then_a_send_where_i_am_incognito(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            result = await connect_vendor(w)
            assert result["status"] == "done"
            assert result["type"] == "business"
            assert result["connected"] is True
            chat = result["chat"]
            assert chat.startswith("#")
            known_as = result["known_as"]
            assert known_as and known_as != "My Agent"
            request, answer = result["messages"]
            assert (request["text"], request["from"], request["from_type"], request["new"]) == (
                "Do you have trail shoes under $150 in size 44?",
                known_as,
                "agent",
                False,
            )
            assert (answer["text"], answer["from"], answer["new"]) == (
                "Yes: Talus Trail, $139, size 44 in stock.",
                "Ridgeline",
                True,
            )
            assert answer["reply_to"] == {"chat": chat, "item": request["item"]}
            await w.server.log.wait_line(
                lambda line: line == "Action 1: connect to business Ridgeline, incognito"
            )
            await w.owner.wait_message(
                lambda t: (
                    t.startswith("I connected to business Ridgeline, incognito.\nWith the message:")
                    and t.endswith("\nApproved by Alice.")
                )
            )

            async with anyio.create_task_group() as tg:
                call = start(
                    tg,
                    w,
                    "send",
                    {
                        "chat": chat,
                        "text": "Is the Talus Trail waterproof?",
                        "wait": 600,
                        "idle": 5,
                    },
                )
                card = await w.owner.wait_message(lambda t: f"/'approve {chat} 2'" in t)
                assert text_of_item(card) == (
                    "I want to send a message to business Ridgeline, where I am incognito:\n"
                    "`Is the Talus Trail waterproof?`\n"
                    f"/'approve {chat} 2', /'approve {chat} all' or /'reject {chat} 2'"
                )
                progress = await call.wait_progress()
                assert progress == "Action 2 waits for an approver until 2026-10-18 08:00 UTC."
                await w.owner.say(f"/approve {chat} 2")
                await w.server.seen.until(
                    lambda: (
                        "The Talus Trail has a waterproof membrane."
                        in w.server.seen.received_texts(chat)
                    )
                )
                await w.clock.advance(5)
                sent = await call.wait()
            assert sent["action"] == 2
            assert [r["text"] for r in sent["responses"]] == [
                "The Talus Trail has a waterproof membrane."
            ]
            assert sent["responses"][0]["item"] > sent["item"]
            await w.server.log.wait_line(lambda line: line == "Action 2 approved by Alice: sent.")


@pytest.mark.anyio
async def test_channel_follow_recent_posts_and_receive_a_later_post(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            await w.post_to_channel("Spring collection is out.")
            await w.post_to_channel("Talus Trail restocked.")
            async with anyio.create_task_group() as tg:
                call = start(
                    tg, w, "connect", {"target": "#ridgeline.simplex", "incognito": True, "idle": 5}
                )
                card = await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                assert text_of_item(card) == (
                    "I want to connect to channel Ridgeline News (#ridgeline.simplex), incognito.\n`New shoes first.`\n/'approve 1' or /'reject 1'"
                )
                await approve_connect(w, 1, arrived="Talus Trail restocked.")
                result = await call.wait()
            assert (
                result["type"],
                result["role"],
                result["connected"],
                result["simplex_name"],
            ) == ("channel", "observer", True, "#ridgeline.simplex")
            assert result["known_as"]
            assert [m["text"] for m in result["messages"]] == [
                "Spring collection is out.",
                "Talus Trail restocked.",
            ]
            assert all(m["from"] == "Ridgeline News" and m["new"] for m in result["messages"])
            chat = result["chat"]
            send = await w.server.call("send", {"chat": chat, "text": "hello"})
            assert result_text(send) == f"The agent has role observer in {chat} and can't post."

            async with anyio.create_task_group() as tg:
                call = start(tg, w, "receive", {"chat": chat, "wait": 3600})
                assert (await call.wait_progress()).startswith(
                    f"No new messages in {chat}; waiting until 2026-10-17 10:00"
                )
                await w.post_to_channel("New: Talus Trail GTX.")
                received = await call.wait()
            assert [m["text"] for m in received["messages"]] == ["New: Talus Trail GTX."]
            assert received["more"] == 0
            again = structured(await w.server.call("receive", {"chat": chat}))
            assert again == {"chat": chat, "messages": [], "more": 0}


@pytest.mark.anyio
async def test_standing_approval_then_revoke_then_leave(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            chat = (await connect_vendor(w))["chat"]
            async with anyio.create_task_group() as tg:
                call = start(
                    tg,
                    w,
                    "send",
                    {"chat": chat, "text": "Any discount for two pairs?", "wait": 600, "idle": 5},
                )
                await w.owner.wait_message(lambda t: f"/'approve {chat} 2'" in t)
                await w.owner.say(f"/approve {chat} all")
                await w.owner.wait_message(
                    lambda t: (
                        t == f"Approved for business Ridgeline ({chat}) by Alice. /'revoke {chat}'"
                    )
                )
                await w.server.seen.until(
                    lambda: "10% off the second pair." in w.server.seen.received_texts(chat)
                )
                await w.clock.advance(5)
                first = await call.wait()
            assert first["action"] == 2
            assert [r["text"] for r in first["responses"]] == ["10% off the second pair."]
            await w.owner.wait_message(
                lambda t: (
                    t
                    == "I sent a message to business Ridgeline, where I am incognito:\n`Any discount for two pairs?`\nApproved by Alice."
                )
            )
            listing = structured(await w.server.call("list"))
            assert next(c for c in listing["chats"] if c["chat"] == chat)["approved"] is True

            # a send under the standing approval is performed at once; its outcome card is posted
            async with anyio.create_task_group() as tg:
                call = start(
                    tg,
                    w,
                    "send",
                    {"chat": chat, "text": "Thanks, I'll order.", "wait": 600, "idle": 5},
                )
                await w.server.seen.until(lambda: "Thanks!" in w.server.seen.received_texts(chat))
                await w.clock.advance(5)
                second = await call.wait()
            assert second["action"] == 3
            await w.owner.wait_message(
                lambda t: (
                    t
                    == f"I sent a message to business Ridgeline, where I am incognito:\n`Thanks, I'll order.`\nApproved for this chat by Alice. /'revoke {chat}'"
                )
            )
            await w.server.log.wait_line(
                lambda line: line == "Action 3 approved for this chat by Alice: sent."
            )

            await w.owner.say(f"/revoke {chat}")
            await w.owner.wait_message(
                lambda t: t == f"Messages to business Ridgeline ({chat}) need approval again."
            )
            await w.owner.say(f"/revoke {chat}")
            await w.owner.wait_message(
                lambda t: t == f"Messages to {chat} have no standing approval."
            )
            listing = structured(await w.server.call("list"))
            assert "approved" not in next(c for c in listing["chats"] if c["chat"] == chat)

            async with anyio.create_task_group() as tg:
                call = start(tg, w, "leave", {"chat": chat})
                card = await w.owner.wait_message(lambda t: f"/'approve {chat} 4'" in t)
                assert (
                    text_of_item(card)
                    == f"I want to leave business Ridgeline ({chat}).\n/'approve {chat} 4' or /'reject {chat} 4'"
                )
                await w.owner.say(f"/approve {chat} 4")
                left = await call.wait()
            assert left == {"action": 4, "status": "done", "chat": chat}
            await w.owner.wait_message(
                lambda t: t == f"I left business Ridgeline ({chat}).\nApproved by Alice."
            )
            listing = structured(await w.server.call("list"))
            assert all(c["chat"] != chat for c in listing["chats"])
            gone = await w.server.call("receive", {"chat": chat})
            assert result_text(gone) == f"No chat {chat}. list shows the agent's chats."


@pytest.mark.anyio
async def test_reject_and_expire_with_a_manual_clock(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path, expire_hours=1) as w:
            await w.setup_owner()
            chat = (await connect_vendor(w))["chat"]
            async with anyio.create_task_group() as tg:
                call = start(tg, w, "send", {"chat": chat, "text": "first"})
                await w.owner.wait_message(lambda t: f"/'approve {chat} 2'" in t)
                await w.owner.say(f"/reject {chat} 2")
                assert await call.wait() == {"action": 2, "status": "rejected"}
            await w.owner.wait_message(
                lambda t: (
                    t
                    == "I want to send a message to business Ridgeline, where I am incognito:\n`first`\nRejected by Alice."
                )
            )
            await w.server.log.wait_line(lambda line: line == "Action 2 rejected by Alice.")

            # expiry at an owner command, on the wall clock
            async with anyio.create_task_group() as tg:
                call = start(tg, w, "send", {"chat": chat, "text": "second"})
                await w.owner.wait_message(lambda t: f"/'approve {chat} 3'" in t)
                await w.owner.say("/pending")
                reply = await w.owner.wait_message(lambda t: t.startswith("3  "))
                assert (
                    text_of_item(reply)
                    == "3  send to business Ridgeline  expires 17 October 2026 at 10:00 UTC"
                )
                await w.clock.advance(3600)
                await w.owner.say("/pending")
                assert await call.wait() == {"action": 3, "status": "expired"}
                await w.owner.wait_message(lambda t: t == "No pending actions.")
            await w.owner.wait_message(
                lambda t: (
                    t
                    == "I want to send a message to business Ridgeline, where I am incognito:\n`second`\nExpired."
                )
            )
            await w.server.log.wait_line(lambda line: line == "Action 3 expired.")

            # expiry by the 60 s timer
            async with anyio.create_task_group() as tg:
                call = start(tg, w, "send", {"chat": chat, "text": "third"})
                await w.owner.wait_message(lambda t: f"/'approve {chat} 4'" in t)
                await call.wait_progress()
                for _ in range(62):
                    await w.clock.advance(60)
                    if call.done.is_set():
                        break
                assert await call.wait() == {"action": 4, "status": "expired"}
            await w.owner.say(f"/approve {chat} 4")
            await w.owner.wait_message(lambda t: t == "Action 4 is not pending.")


@pytest.mark.anyio
async def test_lost_result_list_shows_the_action_and_the_repeat_attaches(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            chat = (await connect_vendor(w))["chat"]
            arguments = {
                "chat": chat,
                "text": "Is the Talus Trail waterproof?",
                "wait": 600,
                "idle": 5,
            }
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as tg:
                    call = start(tg, w, "send", arguments)
                    await w.owner.wait_message(lambda t: f"/'approve {chat} 2'" in t)
                    await call.wait_progress()
                    scope.cancel()
            agent = w.server.info.agent
            action = agent.book.get(2)
            assert action is not None
            listing = structured(await w.server.call("list"))
            while listing["actions"][0]["open"]:
                listing = structured(await w.server.call("list"))
            assert listing["actions"] == [
                {"action": 2, "tool": "send", "input": arguments, "state": "pending", "open": False}
            ]
            cards_before = len(w.owner.agent_messages())
            async with anyio.create_task_group() as tg:
                again = start(tg, w, "send", {**arguments, "idle": 3})
                assert (await again.wait_progress()).startswith(
                    "Action 2 waits for an approver until "
                )
                assert len(w.owner.agent_messages()) == cards_before  # no new card
                await w.owner.say(f"/approve {chat} 2")
                await w.server.seen.until(
                    lambda: (
                        "The Talus Trail has a waterproof membrane."
                        in w.server.seen.received_texts(chat)
                    )
                )
                await w.clock.advance(3)
                result = await again.wait()
            assert result["action"] == 2
            assert [r["text"] for r in result["responses"]] == [
                "The Talus Trail has a waterproof membrane."
            ]
            assert structured(await w.server.call("list"))["actions"] == []


@pytest.mark.anyio
async def test_two_identical_calls_at_once_share_one_action(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            chat = (await connect_vendor(w))["chat"]
            async with anyio.create_task_group() as tg:
                calls = [
                    start(tg, w, "send", {"chat": chat, "text": "Same?", "wait": 600, "idle": 5})
                    for _ in range(2)
                ]
                for call in calls:
                    await call.wait_progress()
                await w.owner.wait_message(lambda t: f"/'approve {chat} 2'" in t)
                listing = structured(await w.server.call("list"))
                assert [(a["action"], a["open"]) for a in listing["actions"]] == [(2, True)]
                await w.owner.say(f"/approve {chat} 2")
                await w.server.seen.until(lambda: "Thanks!" in w.server.seen.received_texts(chat))
                await w.clock.advance(5)
                results = [await call.wait() for call in calls]
            assert {r["action"] for r in results} == {2}
            assert (
                sum(
                    1
                    for m in w.owner.agent_messages()
                    if "/'approve" in text_of_item(m) or "Approved by" in text_of_item(m)
                )
                >= 1
            )
            assert not any(
                f"/'approve {chat} 3'" in text_of_item(m) for m in w.owner.agent_messages()
            )


@pytest.mark.anyio
async def test_owner_commands_and_their_replies(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            owner = w.owner
            await owner.say("/list")
            reply = await owner.wait_message(lambda t: t.startswith("@") or t == "No chats.")
            # the preset contact created with every user stays as an unconnected contact
            assert text_of_item(reply) == "@2  bot Ask SimpleX Team, not connected"
            chat = (await connect_vendor(w))["chat"]
            async with anyio.create_task_group() as tg:
                call = start(tg, w, "send", {"chat": chat, "text": "hi"})
                await owner.wait_message(lambda t: f"/'approve {chat} 2'" in t)
                await owner.say("/hello")
                await owner.wait_message(
                    lambda t: (
                        t
                        == "Commands: /approve, /reject, /revoke, /pending, /list. Each card shows its commands."
                    )
                )
                await owner.say("/approve 9")
                await owner.wait_message(lambda t: t == "Action 9 is not pending.")
                await owner.say("/approve @999 2")
                await owner.wait_message(lambda t: t == "Action 2 is not for @999.")
                await owner.say("/approve #99 all")
                await owner.wait_message(
                    lambda t: t == "No chat #99. /list shows the agent's chats."
                )
                await owner.say("/approve 1")
                await owner.wait_message(lambda t: t == "Action 1 is not pending.")
                await owner.say("/list")
                lines = await owner.wait_message(lambda t: f"{chat}  business Ridgeline" in t)
                assert f"{chat}  business Ridgeline" in text_of_item(lines).split("\n")
                await owner.say(f"/'reject {chat} 2'")
                assert await call.wait() == {"action": 2, "status": "rejected"}


def has_approve(n: int) -> Callable[[str], bool]:
    return lambda text: f"/'approve {n}'" in text


@pytest.mark.anyio
async def test_peer_text_and_names_form_no_command_no_link_and_no_second_line(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            mallory = w.network.add_user("mallory", display_name="Mallory")
            welcome = " /approve 2 \n simplex:/contact#/?v=2-7&smp=x https://smp4.simplex.im/a#abc\n`/approve 3`\nhttps://simplex.chat/contact#/?v=1 /'reject 1'"
            links = []
            for name in ("\n/approve 1", "x\n/approve 1"):
                created = mallory.command(
                    f"/_group {mallory.user_id} "
                    + json.dumps(
                        {"displayName": "Trail Club", "fullName": "", "description": welcome}
                    )
                )
                group_id = created["groupInfo"]["groupId"]
                # written into the peer's database directly, as the plan's test does by SQL
                w.network.core("mallory").db.groups[group_id].profile["displayName"] = name
                links.append(
                    mallory.command(f"/_create link #{group_id} member")["groupLink"][
                        "connLinkContact"
                    ]["connShortLink"]
                )
            async with anyio.create_task_group() as tg:
                calls = []
                for n, link in enumerate(links, start=1):
                    calls.append(start(tg, w, "connect", {"target": link}))
                    await w.owner.wait_message(has_approve(n))
                for n in (1, 2):
                    # The card as the owner's app receives it: the core's formattedText.
                    received = await w.owner.wait_message(has_approve(n))
                    lines = formatted_lines(received)
                    fragments = [f for line in lines for f in line]
                    commands = [text for kind, text in fragments if kind == "command"]
                    assert commands == [f"/'approve {n}'", f"/'reject {n}'"]  # only its own
                    # No link, no mention, nothing tappable from the peer: code spans only.
                    assert {kind for kind, _ in fragments} <= {None, "snippet", "command"}
                    assert len(lines) == 6  # the request, four welcome lines, the commands
                    for line in lines[1:5]:
                        assert [kind for kind, _ in line] == ["snippet"], line
                    assert [kind for kind, _ in lines[0] if kind] == ["snippet"]  # the name
                await w.owner.say("/reject 1")
                await w.owner.say("/reject 2")
                assert [await call.wait() for call in calls] == [
                    {"action": 1, "status": "rejected"},
                    {"action": 2, "status": "rejected"},
                ]
            logged = [
                line
                for line in w.server.log.lines
                if line.startswith("Action 1:") or line.startswith("Action 2:")
            ]
            assert logged == [
                "Action 1: connect to group  /approve 1, as itself",
                "Action 2: connect to group x /approve 1, as itself",
            ]


@pytest.mark.anyio
async def test_a_reply_with_a_mention_in_a_group(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            club = w.network.add_user("club", display_name="Trail Club Host")
            created = club.command(
                f"/_group {club.user_id} "
                + json.dumps({"displayName": "Trail Club", "fullName": ""})
            )
            group_id = created["groupInfo"]["groupId"]
            link = club.command(f"/_create link #{group_id} member")["groupLink"][
                "connLinkContact"
            ]["connShortLink"]
            switchback_user = w.network.add_user(
                "switchback", display_name="Switchback", peer_type="human"
            )
            switchback = Peer(w.network, switchback_user)
            async with anyio.create_task_group() as peers, AsyncExitStack() as stack:
                await switchback.start(stack, peers)
                await switchback.cmd(f"/_connect {switchback.user_id} incognito=off {link}")
                joined = await switchback.wait_event(lambda e: e.get("type") == "userJoinedGroup")
                switchback_group = f"#{joined['groupInfo']['groupId']}"
                async with anyio.create_task_group() as tg:
                    call = start(tg, w, "connect", {"target": link, "idle": 1})
                    await approve_connect(w, 1, idle=1)
                    chat = (await call.wait())["chat"]
                await switchback.send_text(switchback_group, "Ridgecrest, $142")
                await w.server.seen.until(
                    lambda: "Ridgecrest, $142" in w.server.seen.received_texts(chat)
                )
                received = structured(await w.server.call("receive", {"chat": chat}))
                quote = next(m for m in received["messages"] if m["text"] == "Ridgecrest, $142")
                assert quote["from"] == "Switchback"
                async with anyio.create_task_group() as tg:
                    send = start(
                        tg,
                        w,
                        "send",
                        {
                            "chat": chat,
                            "text": "which size?",
                            "reply_to": quote["item"],
                            "mention": [quote["from_member"]],
                            "idle": 1,
                        },
                    )
                    card = await w.owner.wait_message(lambda t: f"/'approve {chat} 2'" in t)
                    assert text_of_item(card) == (
                        "I want to send a message to group Trail Club:\n"
                        "`which size?`\n"
                        "replying to Switchback: `Ridgecrest, $142`\n"
                        "mentioning @Switchback\n"
                        f"/'approve {chat} 2', /'approve {chat} all' or /'reject {chat} 2'"
                    )
                    await w.owner.say(f"/approve {chat} 2")
                    got = await switchback.wait_event(
                        lambda e: (
                            e.get("type") == "newChatItems"
                            and any(
                                text_of_item(a["chatItem"]) == "@Switchback which size?"
                                for a in e["chatItems"]
                            )
                        )
                    )
                    await w.clock.advance(600)
                    assert (await send.wait())["status"] == "done"
                item = next(
                    a["chatItem"]
                    for a in got["chatItems"]
                    if text_of_item(a["chatItem"]) == "@Switchback which size?"
                )
                assert item["meta"]["userMention"] is True
                assert item["quotedItem"]["content"]["text"] == "Ridgecrest, $142"
                peers.cancel_scope.cancel()


@pytest.mark.anyio
async def test_a_connect_that_fails_after_approval(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            async with anyio.create_task_group() as tg:
                call = start(tg, w, "connect", {"target": w.vendor_link})
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                await w.vendor.cmd(f"/_delete_address {w.vendor.user_id}")
                await w.owner.say("/approve 1")
                result = await call.wait()
            assert result["action"] == 1
            assert result["status"] == "failed"
            error = result["error"]
            assert error
            card = await w.owner.wait_message(lambda t: "failed:" in t)
            assert (
                text_of_item(card)
                == f"I want to connect to business Ridgeline, as myself.\nApproved by Alice; failed: `{error}`."
            )
            await w.server.log.wait_line(
                lambda line: line == f"Action 1 approved by Alice: failed: {error}."
            )
            assert structured(await w.server.call("list"))["actions"] == []
