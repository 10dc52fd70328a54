"""``simplex-sim chat USER``: a small terminal chat client for one user of the simulated network.

It connects to a running ``simplex-sim serve`` at ``ws://127.0.0.1:PORT/USER`` (the CLI's
WebSocket API, through :class:`~simplex_protocols.core.ChatCore`), creates the user's profile
when the core has none, and then reads lines from the terminal:

=================  ==========================================================================
``/join LINK``     connect to a contact address, a one-time link, a group or a channel link
``/address``       show the user's contact address (created on first use, requests accepted)
``/chats``         list the chats, with their references (``@N`` contacts, ``#N`` groups)
``/open @N|#N``    open a chat: its recent messages are shown, and plain text goes to it
``/quit``          leave (end of input too)
any other text     sent to the open chat, ``/approve 1`` and other bot commands included
=================  ==========================================================================

Messages arrive live: those of the open chat as ``Sender: text``, others with the chat in
front, ``[#1 My Agent] Sender: text``; an edited message is shown again, marked ``(edited)``.
As the SimpleX apps do, a command written ``/'approve 1'`` outside code spans is shown as
``/approve 1``; code spans keep their backticks.

This is a test double's client, for playing a person (for example the owner of an agent run by
``simplex-mcp``) without writing code; it is not a SimpleX app.
"""

from __future__ import annotations

import codecs
import os
import re
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Final, cast

import anyio
from simplex_chat.types import CEvt, T

from simplex_protocols.core import (
    ChatAPI,
    ChatCore,
    ChatInfoView,
    ChatItemView,
    ChatRef,
    ConnectionPlanView,
    GroupRef,
    WebSocketBackend,
    chat_ref_of,
    event_type,
    parse_chat_ref,
)
from simplex_protocols.errors import (
    CommandArgumentError,
    CoreConnectionError,
    CoreError,
    CoreOptionError,
    UnexpectedResponseError,
)

__all__ = ["HELP", "ChatClient", "render_text", "run_chat"]

HELP: Final = (
    "Commands: /join LINK, /address, /chats, /open @N|#N, /quit. "
    "Other text goes to the open chat (/approve 1 too)."
)

#: Messages shown when a chat is opened.
HISTORY_ITEMS: Final = 20

_QUOTED_COMMAND: Final = re.compile(r"/'([A-Za-z0-9_][^'`\n]*)'")
_CHAT_REF: Final = re.compile(r"[@#][1-9][0-9]{0,14}")
#: The words of the client's input after its ``/`` (``/join LINK``, ``/address``, ``/chats``,
#: ``/open @N``, ``/quit``), named in ``simplex-sim chat --help``.
_CLIENT_WORDS: Final = frozenset({"quit", "join", "address", "chats", "open"})


def render_text(text: str) -> str:
    """The text as the app shows it: ``/'approve 1'`` outside code spans becomes ``/approve 1``."""
    lines = []
    for line in text.split("\n"):
        parts = line.split("`")
        for i in range(0, len(parts), 2):
            parts[i] = _QUOTED_COMMAND.sub(r"/\1", parts[i])
        lines.append("`".join(parts))
    return "\n".join(lines)


# ------------------------------------------------------------------ chats and items as shown


def chat_name(chat_info: T.ChatInfo) -> str:
    """The display name of a contact or group chat (``"?"`` for other chats)."""
    return ChatInfoView(chat_info).display_name or "?"


def _item_text(chat_item: T.ChatItem) -> tuple[str, bool] | None:
    """A message's text (``True``: a message), the text of an event item (``False``), or
    ``None`` for items not worth showing."""
    item = ChatItemView(chat_item)
    if item.is_message:
        return render_text(item.text or ""), True
    described = item.item_text
    return (described, False) if described else None


class ChatClient:
    """The chat client over one user's core.

    Args:
        core: the user's chat core (entered by the caller).
        out: where lines go (a terminal: ``print`` with flush).
        display_name: the profile's name, when the core has no user yet.
    """

    def __init__(self, core: ChatCore, out: Callable[[str], None], display_name: str) -> None:
        self._core = core
        self._api = ChatAPI(core)
        self._out = out
        self._display_name = display_name
        self.user_id = 0
        self.open: ChatRef | None = None
        self._names: dict[str, str] = {}
        self._joining = False

    async def start(self) -> str:
        """The user (created when the core has none), the core started; returns its name."""
        profile = {"displayName": self._display_name, "fullName": "", "peerType": "human"}
        user, _ = await self._api.ensure_active_user(profile)
        self.user_id = user["userId"]
        await self._api.start_chat()
        return user["profile"]["displayName"]

    async def run(self, lines: AsyncIterator[str]) -> int:
        """Show events and handle input lines until ``/quit`` or the end of input."""
        name = await self.start()
        self._out(f"You are {name}. {HELP}")
        events = self._core.events()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._show_events, events)
            async for line in lines:
                if not await self.handle(line):
                    break
            tg.cancel_scope.cancel()
        return 0

    # ------------------------------------------------------------------ input

    async def handle(self, line: str) -> bool:
        """Handle one input line; ``False`` to quit."""
        text = line.rstrip("\r\n")
        if not text.strip():
            return True
        word, _, rest = text.strip().partition(" ")
        # The client's own words (not core commands: each acts through ChatAPI); any other
        # text, commands of the core included, is a message to the open chat.
        action = word[1:] if word.startswith("/") and word[1:] in _CLIENT_WORDS else None
        if action == "quit":
            return False
        try:
            if action == "join":
                await self._join(rest.strip())
            elif action == "address":
                await self._address()
            elif action == "chats":
                await self._chats()
            elif action == "open":
                await self._open(rest.strip())
            else:
                await self._send(text)
        except (CoreError, UnexpectedResponseError, CommandArgumentError) as exc:
            # the core refused, or the input cannot be a command's argument: say so, go on
            self._joining = False
            self._out(f"error: {exc}")
        return True

    async def _join(self, link: str) -> None:
        if not link or " " in link:
            self._out("/join LINK: the link to join, as printed (https://... or simplex:/...).")
            return
        planned = await self._api.connect_plan(self.user_id, link)
        # the connection's event may come before the command's response is handled
        self._joining = True
        channel = ConnectionPlanView(planned).channel_link_data()
        if channel is not None:
            conn_link = planned["connLink"]
            chat = await self._api.prepare_group(
                self.user_id,
                conn_link["connFullLink"] or link,
                channel,
                short_link=conn_link.get("connShortLink") or None,
                direct=False,
            )
            ref = chat_ref_of(chat["chatInfo"])
            if not isinstance(ref, GroupRef):
                self._joining = False
                self._out("error: the core prepared no group chat for the channel")
                return
            await self._api.connect_prepared_group(ref.group_id, incognito=False)
        else:
            await self._api.connect(self.user_id, link, incognito=False)
        self._out("* connecting...")

    async def _address(self) -> None:
        """The contact address: shown, or created with auto-accept, so others can connect."""
        contact_link = await self._api.show_address(self.user_id)
        if contact_link is not None:
            conn_link = contact_link["connLinkContact"]
        else:
            conn_link = await self._api.create_address(self.user_id)
            settings = {"businessAddress": False, "autoAccept": {"acceptIncognito": False}}
            await self._api.set_address_settings(self.user_id, settings)
        link = conn_link.get("connShortLink") or conn_link["connFullLink"]
        self._out(f"Your address (whoever connects by it becomes a contact): {link}")

    async def _chats(self) -> None:
        chats = await self._api.get_chats(self.user_id, pending_connections=False, count=100)
        shown = 0
        for chat in chats:
            info = chat["chatInfo"]
            ref = chat_ref_of(info)
            if ref is None:
                continue
            unread = chat["chatStats"]["unreadCount"]
            line = f"{ref}  {chat_name(info)}"
            if self.open is not None and str(ref) == str(self.open):
                line += "  (open)"  # its messages are on the screen
            elif unread:
                line += f"  ({unread} unread)"
            self._out(line)
            shown += 1
        if not shown:
            self._out("No chats. /join LINK connects to one.")

    async def _open(self, text: str) -> None:
        if not _CHAT_REF.fullmatch(text):
            self._out("/open @N or #N: the chat's reference, as /chats shows it.")
            return
        try:
            chat = await self._api.get_chat(parse_chat_ref(text), count=HISTORY_ITEMS)
        except CoreError:
            self._out(f"No chat {text}. /chats lists the chats.")
            return
        info = chat["chatInfo"]
        ref = chat_ref_of(info)
        if ref is None:
            self._out(f"No chat {text}. /chats lists the chats.")
            return
        self.open = ref
        self._out(f"--- {ref} {chat_name(info)} ---")
        for item in chat["chatItems"]:
            self._show_item(info, item, edited=False)
        await self._api.read_chat(ref)

    async def _send(self, text: str) -> None:
        if self.open is None:
            self._out("No chat is open: /open @N or #N (/chats lists them).")
            return
        message = {"msgContent": {"type": "text", "text": text}}
        await self._api.send_messages(self.open, [message])

    # ------------------------------------------------------------------ output

    async def _show_events(self, events: AsyncIterator[dict[str, Any]]) -> None:
        try:
            async for event in events:
                self.show_event(event)
        except CoreConnectionError as exc:
            self._out(f"* the connection to the core was lost: {exc}")

    def show_event(self, event: Mapping[str, Any]) -> None:
        """Show one event of the core, when a person would see it in an app."""
        kind = event_type(event)
        if kind == "newChatItems":
            for a_item in cast("CEvt.NewChatItems", event)["chatItems"]:
                self._show_item(a_item["chatInfo"], a_item["chatItem"], edited=False)
        elif kind == "chatItemUpdated":
            a_item = cast("CEvt.ChatItemUpdated", event)["chatItem"]
            self._show_item(a_item["chatInfo"], a_item["chatItem"], edited=True)
        elif kind == "contactConnected":
            contact = cast("CEvt.ContactConnected", event)["contact"]
            self._show_joined("connected to", {"type": "direct", "contact": contact})
        elif kind == "userJoinedGroup":
            group_info = cast("CEvt.UserJoinedGroup", event)["groupInfo"]
            self._show_joined("joined", {"type": "group", "groupInfo": group_info})

    def _show_joined(self, verb: str, chat_info: T.ChatInfo) -> None:
        ref = chat_ref_of(chat_info)
        if ref is None:
            return
        self._out(f"* {verb} {ref} {chat_name(chat_info)}")
        if self._joining or self.open is None:
            self._joining = False
            self.open = ref
            self._out(f"--- {ref} {chat_name(chat_info)} --- (open: plain text goes here)")

    def _show_item(self, chat_info: T.ChatInfo, chat_item: T.ChatItem, *, edited: bool) -> None:
        ref = chat_ref_of(chat_info)
        shown = _item_text(chat_item)
        if ref is None or shown is None:
            return
        text, message = shown
        sender = ChatItemView(chat_item).sender_name(ChatInfoView(chat_info)) or "you"
        head = (
            ""
            if self.open is not None and str(ref) == str(self.open)
            else f"[{ref} {chat_name(chat_info)}] "
        )
        if not message:
            self._out(f"{head}* {sender} {text}")
            return
        if edited:
            sender += " (edited)"
        first, *more = text.split("\n")
        self._out(f"{head}{sender}: {first}")
        for line in more:
            self._out(f"    {line}")


async def _terminal_lines() -> AsyncIterator[str]:
    """Lines typed in the terminal (standard input), read without a thread."""
    fd = sys.stdin.fileno()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    while True:
        await anyio.wait_readable(fd)
        chunk = os.read(fd, 4096)
        if not chunk:
            if pending:
                yield pending
            return
        pending += decoder.decode(chunk)
        *complete, pending = pending.split("\n")
        for line in complete:
            yield line


def _print(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def _run(url: str, display_name: str) -> int:
    try:
        backend = WebSocketBackend(url)
    except CoreOptionError as exc:
        _print(f"simplex-sim chat: {exc}")
        return 2
    try:
        async with ChatCore(backend) as core:
            return await ChatClient(core, _print, display_name).run(_terminal_lines())
    except CoreConnectionError as exc:
        sys.stderr.write(
            f"simplex-sim chat: no simulated network at {url} ({exc}); start it with "
            "`simplex-sim serve` first\n"
        )
        return 1


def run_chat(user: str, port: int, display_name: str | None = None) -> int:
    """Run the client for ``user`` of the ``simplex-sim serve`` on ``port``; the exit code."""
    url = f"ws://127.0.0.1:{port}/{user}"
    # Ctrl-C: the KeyboardInterrupt that simplex-sim's main reports (one line, 130).
    return anyio.run(_run, url, display_name or user)
