"""``simplex-sim chat``'s client in process: its commands, what it shows, and its rendering.

The client runs over the simulated network's in-process backend with scripted input lines;
the pseudo-terminal test (``test_sim_chat_pty.py``) runs it as a person would.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from simplex_protocols._clock import ManualClock
from simplex_protocols.cli._sim_chat import HELP, ChatClient, render_text
from simplex_protocols.cli.sim import main
from simplex_protocols.core import ChatCore
from simplex_protocols.sim import SimNetwork


def test_render_text_shows_quoted_commands_as_the_app_does() -> None:
    assert render_text("/'approve 1' or /'reject 1'") == "/approve 1 or /reject 1"
    assert render_text("/'approve @4 2', /'approve @4 all'") == "/approve @4 2, /approve @4 all"
    # code spans keep what is in them
    assert render_text("`/'approve 1'` and /'list'") == "`/'approve 1'` and /list"
    assert render_text("line one\n/'pending'") == "line one\n/pending"
    assert render_text("it's /'") == "it's /'"


class Screen:
    """The client's output lines, with a wait for a line."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.changed = anyio.Event()

    def write(self, line: str) -> None:
        self.lines.append(line)
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_for(self, line: str) -> int:
        while line not in self.lines:
            await self.changed.wait()
        return self.lines.index(line)


class Session:
    """A client for ``alice`` driven by input lines."""

    def __init__(self, network: SimNetwork) -> None:
        self.network = network
        self.screen = Screen()
        self.send: MemoryObjectSendStream[str]
        self.receive: MemoryObjectReceiveStream[str]
        self.send, self.receive = anyio.create_memory_object_stream[str](100)
        self.code: int | None = None
        self.done = anyio.Event()

    async def lines(self) -> AsyncIterator[str]:
        async with self.receive:
            async for line in self.receive:
                yield line

    async def run(self) -> None:
        async with ChatCore(self.network.backend("alice")) as core:
            self.code = await ChatClient(core, self.screen.write, "Alice").run(self.lines())
        self.done.set()

    def type(self, line: str) -> None:
        self.send.send_nowait(line)


def network_with_bob() -> tuple[SimNetwork, str]:
    network = SimNetwork(seed=5, clock=ManualClock())
    bob = network.add_user("bob", display_name="Bob", peer_type="human")
    return network, bob.create_address(welcome="Hello, I'm Bob.")


@pytest.mark.anyio
async def test_join_an_address_chat_and_quit() -> None:
    network, link = network_with_bob()
    session = Session(network)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            await session.screen.wait_for(f"You are Alice. {HELP}")
            session.type("hello?")
            await session.screen.wait_for("No chat is open: /open @N or #N (/chats lists them).")
            session.type(f"/join {link}")
            await session.screen.wait_for("* connected to @3 Bob")
            await session.screen.wait_for("Bob: Hello, I'm Bob.")
            session.type("hi Bob")
            session.type("/chats")
            await session.screen.wait_for("@3  Bob  (open)")
            session.type("/quit")
            await session.done.wait()
    assert session.code == 0
    bob_chat = network.user("bob").command("/_get chat @3 count=10")
    texts = [
        i["content"]["msgContent"]["text"]
        for i in bob_chat["chat"]["chatItems"]
        if i["content"]["type"] == "rcvMsgContent"
    ]
    assert texts == ["hi Bob"]


@pytest.mark.anyio
async def test_messages_of_other_chats_show_their_chat_and_open_shows_history() -> None:
    network, link = network_with_bob()
    carol = network.add_user("carol", display_name="Carol", peer_type="human")
    carol_link = carol.create_address()
    session = Session(network)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            await session.screen.wait_for(f"You are Alice. {HELP}")
            session.type(f"/join {link}")
            await session.screen.wait_for("* connected to @3 Bob")
            session.type(f"/join {carol_link}")
            await session.screen.wait_for("* connected to @4 Carol")
            carol.command(
                "/_send @3 json "
                + json.dumps([{"msgContent": {"type": "text", "text": "two\nlines /'list'"}}])
            )
            # Carol's chat is open now (the last join); Bob writes in another chat
            network.user("bob").command(
                "/_send @3 json " + json.dumps([{"msgContent": {"type": "text", "text": "ping"}}])
            )
            await session.screen.wait_for("[@3 Bob] Bob: ping")
            await session.screen.wait_for("Carol: two")
            await session.screen.wait_for("    lines /list")
            session.type("/open @3")
            at = await session.screen.wait_for("--- @3 Bob ---")
            assert session.screen.lines[at + 1 :][:2] == ["Bob: Hello, I'm Bob.", "Bob: ping"]
            session.type("/open #99")
            await session.screen.wait_for("No chat #99. /chats lists the chats.")
            session.type("/open nowhere")
            await session.screen.wait_for(
                "/open @N or #N: the chat's reference, as /chats shows it."
            )
            session.type("/join")
            await session.screen.wait_for(
                "/join LINK: the link to join, as printed (https://... or simplex:/...)."
            )
            session.send.close()  # the end of input quits
            await session.done.wait()
    assert session.code == 0


@pytest.mark.anyio
async def test_join_a_group_and_a_channel() -> None:
    network = SimNetwork(seed=9, clock=ManualClock())
    news = network.add_user("news", display_name="Trail Team", peer_type="human")
    channel = news.command(
        f"/_public group {news.user_id} "
        + json.dumps({"displayName": "Trail News", "fullName": ""})
    )
    channel_link = channel["groupLink"]["connLinkContact"]["connShortLink"]
    club = news.command(f"/_group {news.user_id} " + json.dumps({"displayName": "Trail Club"}))
    club_id = club["groupInfo"]["groupId"]
    club_link = news.command(f"/_create link #{club_id} member")["groupLink"]["connLinkContact"][
        "connShortLink"
    ]
    session = Session(network)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            await session.screen.wait_for(f"You are Alice. {HELP}")
            session.type(f"/join {club_link}")
            await session.screen.wait_for("* joined #1 Trail Club")
            session.type(f"/join {channel_link}")
            await session.screen.wait_for("* joined #2 Trail News")
            news.command(
                f"/_send #{channel['groupInfo']['groupId']} json "
                + json.dumps([{"msgContent": {"type": "text", "text": "New shoes."}}])
            )
            await session.screen.wait_for("Trail News: New shoes.")
            session.type("/quit")
            await session.done.wait()


def test_chat_refuses_port_0_and_a_bad_user(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chat", "alice", "--port", "0"]) == 2
    assert main(["chat", "a/b"]) == 2
    err = capsys.readouterr().err
    assert "--port: the port of a running simplex-sim serve" in err
    assert "USER: letters, digits" in err


def test_chat_without_a_server_says_how_to_start_one(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # nothing listens on the port: the client explains and exits 1
    assert main(["chat", "alice", "--port", str(port)]) == 1
    assert "start it with `simplex-sim serve` first" in capsys.readouterr().err


@pytest.mark.anyio
async def test_address_is_created_once_and_accepts_connections() -> None:
    network = SimNetwork(seed=4, clock=ManualClock())
    dave = network.add_user("dave", display_name="Dave", peer_type="human")
    session = Session(network)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            await session.screen.wait_for(f"You are Alice. {HELP}")
            session.type("/address")
            prefix = "Your address (whoever connects by it becomes a contact): "
            while not any(line.startswith(prefix) for line in session.screen.lines):
                await session.screen.changed.wait()
            first = next(line for line in session.screen.lines if line.startswith(prefix))
            session.type("/address")
            while sum(line.startswith(prefix) for line in session.screen.lines) < 2:
                await session.screen.changed.wait()
            assert [line for line in session.screen.lines if line.startswith(prefix)] == [first] * 2
            link = first.removeprefix(prefix)
            dave.command(f"/_connect {dave.user_id} incognito=off {link}")
            await session.screen.wait_for("* connected to @3 Dave")
            session.type("hi Dave")
            session.type("/quit")
            await session.done.wait()
    received = dave.command("/_get chat @3 count=5")["chat"]["chatItems"]
    assert [
        i["content"]["msgContent"]["text"] for i in received if "msgContent" in i["content"]
    ] == ["hi Dave"]
