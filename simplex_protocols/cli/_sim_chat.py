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
from typing import Any, Final

import anyio

from simplex_protocols._wire import dumps
from simplex_protocols.core import ChatCore, ChatRef, WebSocketBackend, chat_ref_of
from simplex_protocols.errors import CoreConnectionError, CoreError, CoreOptionError

__all__ = ["HELP", "ChatClient", "render_text", "run_chat"]

HELP: Final = (
    "Commands: /join LINK, /address, /chats, /open @N|#N, /quit. "
    "Other text goes to the open chat (/approve 1 too)."
)

#: Messages shown when a chat is opened.
HISTORY_ITEMS: Final = 20

_QUOTED_COMMAND: Final = re.compile(r"/'([A-Za-z0-9_][^'`\n]*)'")
_CHAT_REF: Final = re.compile(r"[@#][1-9][0-9]{0,14}")


def render_text(text: str) -> str:
    """The text as the app shows it: ``/'approve 1'`` outside code spans becomes ``/approve 1``."""
    lines = []
    for line in text.split("\n"):
        parts = line.split("`")
        for i in range(0, len(parts), 2):
            parts[i] = _QUOTED_COMMAND.sub(r"/\1", parts[i])
        lines.append("`".join(parts))
    return "\n".join(lines)


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def chat_name(chat_info: Mapping[str, Any]) -> str:
    """The display name of a contact or group chat."""
    if chat_info.get("type") == "direct":
        profile = _obj(_obj(chat_info.get("contact")).get("profile"))
    else:
        profile = _obj(_obj(chat_info.get("groupInfo")).get("groupProfile"))
    name = profile.get("displayName")
    return name if isinstance(name, str) else "?"


def _sender(chat_info: Mapping[str, Any], chat_item: Mapping[str, Any]) -> str | None:
    """Who wrote an item: ``None`` for our own items."""
    direction = _obj(chat_item.get("chatDir"))
    kind = direction.get("type")
    if kind in ("directSnd", "groupSnd", "localSnd"):
        return None
    if kind == "groupRcv":
        profile = _obj(_obj(direction.get("groupMember")).get("memberProfile"))
        name = profile.get("displayName")
        return name if isinstance(name, str) else "?"
    return chat_name(chat_info)


def _item_text(chat_item: Mapping[str, Any]) -> tuple[str, bool] | None:
    """A message's text (``True``: a message), the text of an event item (``False``), or
    ``None`` for items not worth showing."""
    content = _obj(chat_item.get("content"))
    if content.get("type") in ("rcvMsgContent", "sndMsgContent"):
        text = _obj(content.get("msgContent")).get("text")
        return (render_text(text) if isinstance(text, str) else ""), True
    described = _obj(chat_item.get("meta")).get("itemText")
    if isinstance(described, str) and described:
        return described, False
    return None


class ChatClient:
    """The chat client over one user's core.

    Args:
        core: the user's chat core (entered by the caller).
        out: where lines go (a terminal: ``print`` with flush).
        display_name: the profile's name, when the core has no user yet.
    """

    def __init__(self, core: ChatCore, out: Callable[[str], None], display_name: str) -> None:
        self._core = core
        self._out = out
        self._display_name = display_name
        self.user_id = 0
        self.open: ChatRef | None = None
        self._names: dict[str, str] = {}
        self._joining = False

    async def start(self) -> str:
        """The user (created when the core has none), the core started; returns its name."""
        try:
            user = _obj((await self._core.command("/user")).get("user"))
        except CoreError as exc:
            if exc.error_type != "noActiveUser":
                raise
            profile = {"displayName": self._display_name, "fullName": "", "peerType": "human"}
            created = await self._core.command(
                f"/_create user {dumps({'profile': profile, 'pastTimestamp': False})}"
            )
            user = _obj(created.get("user"))
        user_id = user.get("userId")
        self.user_id = user_id if isinstance(user_id, int) else 1
        await self._core.command("/_start")
        name = _obj(user.get("profile")).get("displayName")
        return name if isinstance(name, str) else self._display_name

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
        try:
            if word == "/quit":
                return False
            if word == "/join":
                await self._join(rest.strip())
            elif word == "/address":
                await self._address()
            elif word == "/chats":
                await self._chats()
            elif word == "/open":
                await self._open(rest.strip())
            else:
                await self._send(text)
        except CoreError as exc:
            self._joining = False
            self._out(f"error: {exc}")
        return True

    async def _join(self, link: str) -> None:
        if not link or " " in link:
            self._out("/join LINK: the link to join, as printed (https://... or simplex:/...).")
            return
        planned = await self._core.command(f"/_connect plan {self.user_id} {link}")
        plan = _obj(planned.get("connectionPlan"))
        # the connection's event may come before the command's response is handled
        self._joining = True
        group = _obj(plan.get("groupLinkPlan"))
        if (
            plan.get("type") == "groupLink"
            and _obj(group.get("groupSLinkInfo_")).get("direct") is False
        ):
            data = _obj(group.get("groupSLinkData_"))
            conn_link = _obj(planned.get("connLink"))
            links = [conn_link.get("connFullLink"), conn_link.get("connShortLink")]
            both = " ".join(x for x in links if isinstance(x, str) and x) or link
            prepared = await self._core.command(
                f"/_prepare group {self.user_id} {both} direct=off {dumps(data)}"
            )
            info = _obj(_obj(prepared.get("chat")).get("chatInfo"))
            ref = chat_ref_of(info)
            await self._core.command(f"/_connect group {ref} incognito=off")
        else:
            await self._core.command(f"/_connect {self.user_id} incognito=off {link}")
        self._out("* connecting...")

    async def _address(self) -> None:
        """The contact address: shown, or created with auto-accept, so others can connect."""
        try:
            shown = await self._core.command(f"/_show_address {self.user_id}")
            conn_link = _obj(_obj(shown.get("contactLink")).get("connLinkContact"))
        except CoreError as exc:
            if exc.error_type != "userContactLinkNotFound":
                raise
            created = await self._core.command(f"/_address {self.user_id}")
            conn_link = _obj(created.get("connLinkContact"))
            settings = {"businessAddress": False, "autoAccept": {"acceptIncognito": False}}
            await self._core.command(f"/_address_settings {self.user_id} {dumps(settings)}")
        link = conn_link.get("connShortLink") or conn_link.get("connFullLink")
        self._out(f"Your address (whoever connects by it becomes a contact): {link}")

    async def _chats(self) -> None:
        response = await self._core.command(f"/_get chats {self.user_id} pcc=off count=100")
        shown = 0
        for chat in response.get("chats") or []:
            info = _obj(_obj(chat).get("chatInfo"))
            ref = chat_ref_of(info)
            if ref is None:
                continue
            unread = _obj(_obj(chat).get("chatStats")).get("unreadCount")
            line = f"{ref}  {chat_name(info)}"
            if self.open is not None and str(ref) == str(self.open):
                line += "  (open)"  # its messages are on the screen
            elif isinstance(unread, int) and unread:
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
            response = await self._core.command(f"/_get chat {text} count={HISTORY_ITEMS}")
        except CoreError:
            self._out(f"No chat {text}. /chats lists the chats.")
            return
        chat = _obj(response.get("chat"))
        info = _obj(chat.get("chatInfo"))
        ref = chat_ref_of(info)
        if ref is None:
            self._out(f"No chat {text}. /chats lists the chats.")
            return
        self.open = ref
        self._out(f"--- {ref} {chat_name(info)} ---")
        for item in chat.get("chatItems") or []:
            self._show_item(info, _obj(item), edited=False)
        await self._core.command(f"/_read chat {ref}")

    async def _send(self, text: str) -> None:
        if self.open is None:
            self._out("No chat is open: /open @N or #N (/chats lists them).")
            return
        message = [{"msgContent": {"type": "text", "text": text}}]
        await self._core.command(f"/_send {self.open} json {dumps(message)}")

    # ------------------------------------------------------------------ output

    async def _show_events(self, events: AsyncIterator[dict[str, Any]]) -> None:
        try:
            async for event in events:
                self.show_event(event)
        except CoreConnectionError as exc:
            self._out(f"* the connection to the core was lost: {exc}")

    def show_event(self, event: Mapping[str, Any]) -> None:
        """Show one event of the core, when a person would see it in an app."""
        kind = event.get("type")
        if kind == "newChatItems":
            for a_item in event.get("chatItems") or []:
                a_item = _obj(a_item)
                self._show_item(
                    _obj(a_item.get("chatInfo")), _obj(a_item.get("chatItem")), edited=False
                )
        elif kind == "chatItemUpdated":
            a_item = _obj(event.get("chatItem"))
            self._show_item(_obj(a_item.get("chatInfo")), _obj(a_item.get("chatItem")), edited=True)
        elif kind in ("contactConnected", "userJoinedGroup"):
            info = (
                {"type": "direct", "contact": event.get("contact")}
                if kind == "contactConnected"
                else {"type": "group", "groupInfo": event.get("groupInfo")}
            )
            ref = chat_ref_of(info)
            if ref is None:
                return
            verb = "connected to" if kind == "contactConnected" else "joined"
            self._out(f"* {verb} {ref} {chat_name(info)}")
            if self._joining or self.open is None:
                self._joining = False
                self.open = ref
                self._out(f"--- {ref} {chat_name(info)} --- (open: plain text goes here)")

    def _show_item(
        self, chat_info: Mapping[str, Any], chat_item: Mapping[str, Any], *, edited: bool
    ) -> None:
        ref = chat_ref_of(chat_info)
        shown = _item_text(chat_item)
        if ref is None or shown is None:
            return
        text, message = shown
        sender = _sender(chat_info, chat_item) or "you"
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
    try:
        return anyio.run(_run, url, display_name or user)
    except KeyboardInterrupt:
        return 0
