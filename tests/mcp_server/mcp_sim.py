"""Scripted simulated users and a running agent server, for the MCP server's end-to-end tests.

The owner (a human in a SimpleX app), the directory bot, a vendor's business bot and a channel
are users of the simulated network, each driving its own chat core through ``ChatCore`` as an
app or a bot would. The agent's calls come from the ``mcp`` SDK's client over HTTP to the server
on 127.0.0.1 (port 0). Nothing here sleeps: waits are on events, bounded by the tests'
``anyio.fail_after``.
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from simplex_protocols._clock import Clock, ManualClock
from simplex_protocols.core import ChatCore
from simplex_protocols.mcp_server.config import ApproveMode, OwnerEntry, ServeOptions
from simplex_protocols.mcp_server.log import Log
from simplex_protocols.mcp_server.serve import ServerInfo, serve
from simplex_protocols.sim import SimNetwork, SimUser
from simplex_protocols.sim.testing import RecordingBackend

Event = dict[str, Any]


class Watch:
    """Something that changes over time, with an event to wait for the next change."""

    def __init__(self) -> None:
        self.changed = anyio.Event()

    def wake(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def until(self, check: Callable[[], Any]) -> Any:
        """Wait until ``check()`` returns something truthy; return it."""
        while True:
            value = check()
            if value:
                return value
            await self.changed.wait()


class LogLines(Log):
    """The server's log, kept line by line, with a watch for new lines."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        super().__init__(self.out, self.out)
        self.lines: list[str] = []
        self.errors: list[str] = []
        self.watch = Watch()

    def line(self, text: str) -> None:
        self.lines.extend(text.split("\n"))
        self.watch.wake()

    def error(self, text: str) -> None:
        self.errors.append(text)
        self.lines.append(text)
        self.watch.wake()

    async def wait_line(self, check: Callable[[str], bool]) -> str:
        """The first line (old or new) that passes ``check``."""
        value: str = await self.watch.until(
            lambda: next((line for line in self.lines if check(line)), None)
        )
        return value


def text_of_item(chat_item: Mapping[str, Any]) -> str:
    content = chat_item.get("content", {}).get("msgContent", {})
    text = content.get("text") if isinstance(content, Mapping) else None
    return text if isinstance(text, str) else ""


#: One formatted fragment of a received message: the ``format`` type (``None`` for plain text)
#: and the fragment's text.
Fragment = tuple[str | None, str]


def formatted_lines(chat_item: Mapping[str, Any]) -> list[list[Fragment]]:
    """The item's ``formattedText`` as the app receives it, line by line.

    The chat core parses every message text into ``formattedText`` (the simulator with the
    core's Markdown rules): the fragments an app renders, where a ``command`` is tappable and a
    ``simplexLink`` or ``uri`` opens something. A text without any formatting has none, and is
    one plain fragment per line. Fragments never span lines; the line breaks sit in plain ones.
    """
    text = text_of_item(chat_item)
    fragments = chat_item.get("formattedText")
    if fragments is None:
        return [[(None, line)] if line else [] for line in text.split("\n")]
    lines: list[list[Fragment]] = [[]]
    for fragment in fragments:
        fmt = fragment.get("format")
        kind = fmt.get("type") if isinstance(fmt, Mapping) else None
        for n, part in enumerate(str(fragment["text"]).split("\n")):
            if n:
                assert kind is None, f"a {kind} fragment spans lines"
                lines.append([])
            if part:
                lines[-1].append((kind, part))
    return lines


@functools.cache
def _notes() -> tuple[SimUser, int]:
    """A user alone in a group of a simulated network, to send texts in."""
    user = SimNetwork(seed=0).add_user("app")
    created = user.command(
        f"/_group {user.user_id} " + json.dumps({"displayName": "notes", "fullName": ""})
    )
    return user, int(created["groupInfo"]["groupId"])


def core_formatted_lines(text: str) -> list[list[Fragment]]:
    """The ``formattedText`` the chat core gives a message with ``text``, line by line.

    For unit tests of texts the server writes into chats: the text is sent in a group of one
    on a simulated network, whose chat item carries the core's ``formattedText`` (the same on
    every side of the chat), read with :func:`formatted_lines`.
    """
    user, group_id = _notes()
    message = [{"msgContent": {"type": "text", "text": text}}]
    sent = user.command(f"/_send #{group_id} json {json.dumps(message)}")
    item: dict[str, Any] = sent["chatItems"][0]["chatItem"]
    assert text_of_item(item) == text
    return formatted_lines(item)


def item_id(chat_item: Mapping[str, Any]) -> int:
    return int(chat_item["meta"]["itemId"])


class Peer:
    """A simulated user driving its core through ChatCore, keeping every event it receives."""

    def __init__(self, network: SimNetwork, user: SimUser) -> None:
        self.network = network
        self.user = user
        self.core = ChatCore(network.backend(user.name))
        self.events: list[Event] = []
        self.watch = Watch()

    @property
    def user_id(self) -> int:
        return self.user.user_id

    async def start(self, stack: AsyncExitStack, tg: anyio.abc.TaskGroup) -> None:
        await stack.enter_async_context(self.core)
        subscription = self.core.events()

        async def pump() -> None:
            async for event in subscription:
                self.events.append(event)
                self.watch.wake()
                await self.on_event(event)

        tg.start_soon(pump)

    async def on_event(self, event: Event) -> None:
        """A scripted reaction (bots override it)."""

    async def cmd(self, command: str) -> dict[str, Any]:
        return await self.core.command(command)

    async def wait_event(self, check: Callable[[Event], bool], *, start: int = 0) -> Event:
        value: Event = await self.watch.until(
            lambda: next((e for e in self.events[start:] if check(e)), None)
        )
        return value

    def new_items(
        self, chat_type: str | None = None
    ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Every (chatInfo, chatItem) of newChatItems events so far."""
        out: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for event in self.events:
            if event.get("type") == "newChatItems":
                for aci in event.get("chatItems", []):
                    if chat_type is None or aci["chatInfo"]["type"] == chat_type:
                        out.append((aci["chatInfo"], aci["chatItem"]))
        return out

    async def send_text(self, chat: str, text: str, *, quoted: int | None = None) -> int:
        message: dict[str, Any] = {"msgContent": {"type": "text", "text": text}}
        if quoted is not None:
            message["quotedItemId"] = quoted
        response = await self.cmd(f"/_send {chat} json {json.dumps([message])}")
        return item_id(response["chatItems"][0]["chatItem"])


class Owner(Peer):
    """The owner in the SimpleX app: joins the agent control chat and types commands."""

    group_id: int | None = None

    async def join(self, link: str) -> None:
        start = len(self.events)
        await self.cmd(f"/_connect plan {self.user_id} {link}")
        await self.cmd(f"/_connect {self.user_id} incognito=off {link}")
        joined = await self.wait_event(lambda e: e.get("type") == "userJoinedGroup", start=start)
        self.group_id = int(joined["groupInfo"]["groupId"])

    async def member_id_of(self, display_name: str) -> int:
        """The member ID, in this user's database, of the control chat's member with that name."""
        members = (await self.cmd(f"/_members {self.control}"))["group"]["members"]
        return next(
            int(m["groupMemberId"])
            for m in members
            if m["memberProfile"]["displayName"] == display_name
        )

    @property
    def control(self) -> str:
        assert self.group_id is not None
        return f"#{self.group_id}"

    def agent_messages(self) -> list[dict[str, Any]]:
        """The agent's messages in the control chat, each with its latest text."""
        latest: dict[int, dict[str, Any]] = {}
        for event in self.events:
            if event.get("type") == "newChatItems":
                acis = event.get("chatItems", [])
            elif event.get("type") == "chatItemUpdated":
                acis = [event.get("chatItem", {})]
            else:
                continue
            for aci in acis:
                info, item = aci.get("chatInfo", {}), aci.get("chatItem", {})
                if (
                    info.get("type") == "group"
                    and info.get("groupInfo", {}).get("groupId") == self.group_id
                    and item.get("chatDir", {}).get("type") == "groupRcv"
                ):
                    latest[item_id(item)] = item
        return [latest[k] for k in sorted(latest)]

    async def wait_message(self, check: Callable[[str], bool]) -> dict[str, Any]:
        """The agent's message (by its latest text) that passes ``check``."""

        def find() -> dict[str, Any] | None:
            return next((m for m in self.agent_messages() if check(text_of_item(m))), None)

        value: dict[str, Any] = await self.watch.until(find)
        return value

    async def say(self, text: str) -> int:
        return await self.send_text(self.control, text)


class Bot(Peer):
    """A bot that answers each received message with ``answer(text)`` (a list of replies)."""

    def __init__(
        self, network: SimNetwork, user: SimUser, answer: Callable[[str], list[str]]
    ) -> None:
        super().__init__(network, user)
        self.answer = answer

    async def on_event(self, event: Event) -> None:
        if event.get("type") != "newChatItems":
            return
        for aci in event.get("chatItems", []):
            info, item = aci["chatInfo"], aci["chatItem"]
            if item["content"]["type"] != "rcvMsgContent":
                continue
            if info["type"] == "direct":
                chat = f"@{info['contact']['contactId']}"
            elif info["type"] == "group":
                chat = f"#{info['groupInfo']['groupId']}"
            else:
                continue
            for reply in self.answer(text_of_item(item)):
                await self.send_text(chat, reply, quoted=item_id(item))


class AgentEvents:
    """The events the agent's server has handled, with a watch for the next one.

    It wraps the agent's event handler, so a test waits for what the agent has seen (a
    response arrived, a connection completed) before it moves the clock.
    """

    def __init__(self, agent: Any) -> None:
        self.events: list[Event] = []
        self.watch = Watch()
        handle = agent.handle_event

        def observed(event: Event) -> None:
            handle(event)
            self.events.append(event)
            self.watch.wake()

        agent.handle_event = observed

    def received_texts(self, chat: str | None = None) -> list[str]:
        out: list[str] = []
        for event in self.events:
            if event.get("type") != "newChatItems":
                continue
            for aci in event.get("chatItems", []):
                info, item = aci["chatInfo"], aci["chatItem"]
                ref = (
                    f"@{info['contact']['contactId']}"
                    if info["type"] == "direct"
                    else f"#{info.get('groupInfo', {}).get('groupId')}"
                )
                if (chat is None or ref == chat) and item["content"]["type"] == "rcvMsgContent":
                    out.append(text_of_item(item))
        return out

    async def until(self, check: Callable[[], Any]) -> Any:
        return await self.watch.until(check)


@dataclass
class Running:
    """A running agent server and its MCP client."""

    network: SimNetwork
    info: ServerInfo
    log: LogLines
    mcp: Client
    stop: anyio.Event
    seen: AgentEvents
    exit_code: list[int] = field(default_factory=list)
    crash_scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    finished: anyio.Event = field(default_factory=anyio.Event)
    #: Every command the server sent to its core.
    commands: list[str] = field(default_factory=list)

    async def crash(self) -> None:
        """End the server as a crash would: no stop sequence runs."""
        self.crash_scope.cancel()
        await self.finished.wait()

    async def call(
        self, tool: str, arguments: dict[str, Any] | None = None, **kwargs: Any
    ) -> types.CallToolResult:
        return await self.mcp.call_tool(tool, arguments or {}, **kwargs)


def result_text(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result_text(result)
    assert result.structured_content is not None
    assert json.loads(result_text(result)) == result.structured_content
    return dict(result.structured_content)


@asynccontextmanager
async def agent_server(
    network: SimNetwork,
    folder: Path,
    *,
    clock: Clock | None = None,
    display_name: str | None = "My Agent",
    expire_hours: int = 23,
    mode: str = "2026-07-28",
    name: str = "my-agent",
    owners: tuple[OwnerEntry, ...] | None = None,
    approve: ApproveMode = ApproveMode.REQUESTS,
    reset_owners: bool = False,
    new_token: bool = False,
    port: int = 0,
    durable_actions: bool = False,
    call_tool: bool = False,
) -> AsyncIterator[Running]:
    """Start ``simplex-mcp serve`` on the simulated network, with an MCP client connected to it."""
    log = LogLines()
    stop = anyio.Event()
    started = anyio.Event()
    holder: list[ServerInfo] = []
    exit_code: list[int] = []

    seen: list[AgentEvents] = []

    def on_started(info: ServerInfo) -> None:
        holder.append(info)
        seen.append(AgentEvents(info.agent))
        started.set()

    options = ServeOptions(
        name=name,
        data=folder,
        display_name=display_name,
        port=port,
        expire_hours=expire_hours,
        owners=owners,
        approve=approve,
        reset_owners=reset_owners,
        new_token=new_token,
        durable_actions=durable_actions,
        call_tool=call_tool,
    )
    crash_scope = anyio.CancelScope()
    finished = anyio.Event()
    backend = RecordingBackend(network.backend(name), keep_frames=False)
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            with crash_scope:
                exit_code.append(
                    await serve(
                        options,
                        core=ChatCore(backend),
                        clock=clock,
                        log=log,
                        started=on_started,
                        stop=stop,
                    )
                )
            started.set()
            finished.set()

        tg.start_soon(run)
        await started.wait()
        if not holder:
            raise AssertionError(f"the server exited with {exit_code}: {log.lines}")
        info = holder[0]
        hc = create_mcp_http_client(headers={"Authorization": f"Bearer {info.token}"})
        async with hc, Client(streamable_http_client(info.url, http_client=hc), mode=mode) as mcp:
            yield Running(
                network,
                info,
                log,
                mcp,
                stop,
                seen[0],
                exit_code,
                crash_scope,
                finished,
                backend.commands,
            )
        stop.set()


def join_link(log: LogLines) -> str:
    return next(line for line in log.lines if line.startswith("https://"))


# ----------------------------------------------------------------------------- the world

DIRECTORY_COMMANDS = [
    {"type": "command", "keyword": "new", "label": "Add a group to the directory"},
    {"type": "command", "keyword": "help", "label": "How to use the directory"},
    {"type": "command", "keyword": "list", "label": "Your groups"},
    {
        "type": "menu",
        "label": "Group settings",
        "commands": [
            {"type": "command", "keyword": "role", "label": "Member role", "params": "<ID>"}
        ],
    },
]


def directory_answer(text: str) -> list[str]:
    """The directory bot: /help explains, any other text is a search with three results."""
    if text.startswith("/help"):
        return ["Send a search to find groups, channels, businesses and bots."]
    return [f"Found: {text} {n}" for n in (1, 2, 3)]


def vendor_answer(text: str) -> list[str]:
    """Ridgeline's bot answers each message once."""
    if "trail shoes" in text:
        return ["Yes: Talus Trail, $139, size 44 in stock."]
    if "waterproof" in text:
        return ["The Talus Trail has a waterproof membrane."]
    if "discount" in text:
        return ["10% off the second pair."]
    return ["Thanks!"]


@dataclass
class World:
    """The simulated network with the owner, the directory, a vendor, a channel and the agent."""

    network: SimNetwork
    clock: ManualClock
    owner: Owner
    directory: Bot
    vendor: Bot
    vendor_link: str
    channel: Peer
    channel_group: int
    server: Running

    async def setup_owner(self) -> None:
        """The owner joins by the printed link and becomes an owner."""
        await self.owner.join(join_link(self.server.log))
        await self.owner.wait_message(
            lambda t: t == "I'm your agent. I ask here before I connect or send."
        )
        await self.server.log.wait_line(
            lambda line: line == "Alice joined (member 2) and is now an owner. The link is deleted."
        )

    async def post_to_channel(self, text: str) -> int:
        return await self.channel.send_text(f"#{self.channel_group}", text)

    folder: Path | None = None
    servers: AsyncExitStack | None = None

    async def restart(
        self,
        *,
        display_name: str = "My Agent",
        expire_hours: int = 23,
        owners: tuple[OwnerEntry, ...] | None = None,
        approve: ApproveMode = ApproveMode.REQUESTS,
        reset_owners: bool = False,
        new_token: bool = False,
        durable_actions: bool = False,
        call_tool: bool = False,
    ) -> Running:
        """Stop the agent's server (its stop sequence runs, unless it crashed) and start it
        again on the same data."""
        assert self.servers is not None and self.folder is not None
        await self.servers.aclose()
        self.servers = AsyncExitStack()
        self.server = await self.servers.enter_async_context(
            agent_server(
                self.network,
                self.folder,
                clock=self.clock,
                display_name=display_name,
                expire_hours=expire_hours,
                owners=owners,
                approve=approve,
                reset_owners=reset_owners,
                new_token=new_token,
                durable_actions=durable_actions,
                call_tool=call_tool,
            )
        )
        return self.server


@asynccontextmanager
async def world(
    tmp_path: Path,
    *,
    expire_hours: int = 23,
    mode: str = "2026-07-28",
    owners: tuple[OwnerEntry, ...] | None = None,
    approve: ApproveMode = ApproveMode.REQUESTS,
    core_profile: str | None = None,
    durable_actions: bool = False,
    call_tool: bool = False,
) -> AsyncIterator[World]:
    """Build the world, start every scripted user and the agent's server (its core behaves
    as the real core ``core_profile``; the others are the spec's)."""
    clock = ManualClock()
    network = SimNetwork(seed=7, clock=clock)
    if core_profile is not None:
        network.ensure_core("my-agent", started=False, profile=core_profile)
    alice = Owner(network, network.add_user("alice", display_name="Alice", peer_type="human"))
    directory_user = network.add_user(
        "directory",
        display_name="SimpleX Directory",
        peer_type="bot",
        preferences={"commands": DIRECTORY_COMMANDS},
        short_descr="Find groups, channels, businesses and bots.",
    )
    directory_user.create_address(welcome="Welcome to the directory! Send a search.")
    network.register_name("@directory.simplex", directory_user, "contact")
    directory = Bot(network, directory_user, directory_answer)
    vendor_user = network.add_user("ridgeline", display_name="Ridgeline", peer_type="business")
    vendor_link = vendor_user.create_address(business=True)
    vendor = Bot(network, vendor_user, vendor_answer)
    news_user = network.add_user("news", display_name="Ridgeline Team", peer_type="human")
    created = news_user.command(
        f"/_public group {news_user.user_id} "
        + json.dumps(
            {
                "displayName": "Ridgeline News",
                "fullName": "",
                "shortDescr": "New shoes first.",
                "groupPreferences": {"history": {"enable": "on"}},
            }
        )
    )
    channel_group = int(created["groupInfo"]["groupId"])
    network.register_name("#ridgeline.simplex", news_user, "publicGroup", group_id=channel_group)
    channel = Peer(network, news_user)
    async with anyio.create_task_group() as tg, AsyncExitStack() as stack:
        for peer in (alice, directory, vendor, channel):
            await peer.start(stack, tg)
        servers = AsyncExitStack()
        server = await servers.enter_async_context(
            agent_server(
                network,
                tmp_path / "agent",
                clock=clock,
                expire_hours=expire_hours,
                mode=mode,
                owners=owners,
                approve=approve,
                durable_actions=durable_actions,
                call_tool=call_tool,
            )
        )
        w = World(
            network, clock, alice, directory, vendor, vendor_link, channel, channel_group, server
        )
        w.folder = tmp_path / "agent"
        w.servers = servers
        try:
            yield w
        finally:
            await w.servers.aclose()
        tg.cancel_scope.cancel()


async def add_in_the_app(
    w: World, stack: AsyncExitStack, tg: anyio.abc.TaskGroup, name: str, display: str, role: str
) -> Owner:
    """Alice adds a contact of hers to the agent control chat in the app, with ``role``."""
    user = w.network.add_user(name, display_name=display, peer_type="human")
    link = user.create_address()
    person = Owner(w.network, user)
    await person.start(stack, tg)
    start = len(w.owner.events)
    await w.owner.cmd(f"/_connect {w.owner.user_id} incognito=off {link}")
    connected = await w.owner.wait_event(lambda e: e["type"] == "contactConnected", start=start)
    contact_id = connected["contact"]["contactId"]
    await w.owner.cmd(f"/_add {w.owner.control} {contact_id} {role}")
    invited = await person.wait_event(lambda e: e["type"] == "receivedGroupInvitation")
    person.group_id = int(invited["groupInfo"]["groupId"])
    await person.cmd(f"/_join #{person.group_id}")
    # the agent is introduced to the new member and connects to it
    await w.server.seen.until(
        lambda: any(
            e["type"] == "connectedToGroupMember"
            and e["member"]["memberProfile"]["displayName"] == display
            for e in w.server.seen.events
        )
    )
    return person
