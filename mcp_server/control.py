"""The agent control chat: its group, members and link, owner commands, cards and custom data.

The agent's profile owns a group, "the agent control chat", with the agent's display name;
owners join it by a link and approve the agent's actions there with commands (plan "What the
owner sees: the agent control chat" and "Processing: Owners"). This module holds:

- the owner commands' grammar (:func:`parse_owner_command`) and the replies that need no I/O
  (:func:`pending_lines`, :func:`list_reply`), as pure functions;
- :class:`CustomDataQueue`: custom data writes run one at a time, in the order asked;
- :class:`ControlChat`: the group itself over the chat core: creating or finding it, its
  members and approvers, its link, posting and editing cards.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from simplex_protocols._wire import aeson_string_size, dumps
from simplex_protocols.errors import CoreError

from .text import code_span, fold, is_valid_name, name_md, shell_quote

__all__ = [
    "COMMANDS_HELP",
    "CONTROL_DESCRIPTION",
    "GREETING",
    "LIST_LINE_BYTES",
    "LIST_MAX_CHATS",
    "ControlChat",
    "CustomDataQueue",
    "ListEntry",
    "OwnerCommand",
    "control_menu",
    "cut_line",
    "list_reply",
    "owner_entries",
    "parse_owner_command",
    "pending_lines",
    "utc_minutes",
]

CONTROL_DESCRIPTION: Final = (
    "Supervise your AI agent here: approve or reject its connections and messages with one tap."
)
GREETING: Final = "I'm your agent. I ask here before I connect or send."
COMMANDS_HELP: Final = (
    "Commands: /approve, /reject, /revoke, /pending, /list. Each card shows its commands."
)

#: /list shows the most recent chats, this many ...
LIST_MAX_CHATS: Final = 100
#: ... each line cut to this many bytes as encoded in the message, "…" included.
LIST_LINE_BYTES: Final = 100


def control_menu() -> list[dict[str, str]]:
    """The command menu of the agent control chat: /pending and /list."""
    return [
        {"type": "command", "keyword": "pending", "label": "Pending actions"},
        {"type": "command", "keyword": "list", "label": "Chats and approvals"},
    ]


def utc_minutes(wall: float) -> str:
    """``2026-10-18 09:15 UTC``."""
    return dt.datetime.fromtimestamp(wall, tz=dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def iso_time(wall: float) -> str:
    """``2026-10-18T09:15:00.000Z``, as the core writes times."""
    return (
        dt.datetime.fromtimestamp(wall, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.")
        + f"{int(wall * 1000) % 1000:03d}Z"
    )


# ----------------------------------------------------------------------------- commands


@dataclass(frozen=True, slots=True)
class OwnerCommand:
    """One owner command.

    ``verb`` is ``approve``, ``reject``, ``revoke``, ``pending``, ``list``, or ``unknown`` for
    any other one-line text starting with ``/``. ``chat`` is the CHAT as typed, ``n`` the
    action number as typed (digits), ``all`` marks ``/approve CHAT all``.
    """

    verb: str
    chat: str | None = None
    n: str | None = None
    all: bool = False


_N_RE: Final = re.compile(r"[0-9]{1,30}")
_CHAT_RE: Final = re.compile(r"[@#][0-9]{1,30}")


def parse_owner_command(text: str) -> OwnerCommand | None:
    """Parse a message of the agent control chat; ``None`` when it is not a command.

    A command is one line starting with ``/``. The quoted form that the apps show as a
    tappable command, ``/'approve @4 2'``, is read as ``/approve @4 2``.
    """
    body = text.strip(" ")
    if not body.startswith("/") or "\n" in body or "\r" in body:
        return None
    inner = body[1:]
    if len(inner) >= 2 and inner.startswith("'") and inner.endswith("'"):
        inner = inner[1:-1]
    words = inner.split()
    if not words:
        return OwnerCommand("unknown")
    verb, args = words[0], words[1:]
    if verb in ("approve", "reject"):
        if len(args) == 1 and _N_RE.fullmatch(args[0]):
            return OwnerCommand(verb, n=args[0])
        if len(args) == 2 and _CHAT_RE.fullmatch(args[0]):
            if _N_RE.fullmatch(args[1]):
                return OwnerCommand(verb, chat=args[0], n=args[1])
            if verb == "approve" and args[1] == "all":
                return OwnerCommand(verb, chat=args[0], all=True)
    elif verb == "revoke":
        if len(args) == 1 and _CHAT_RE.fullmatch(args[0]):
            return OwnerCommand(verb, chat=args[0])
    elif verb in ("pending", "list") and not args:
        return OwnerCommand(verb)
    return OwnerCommand("unknown")


def owner_entries(members: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """The ``--owners`` value for these members: for the terminal and for the chat.

    ``ID:NAME`` entries joined by commas, names folded to one line; in the terminal an entry
    whose NAME has characters other than letters, digits, ``_`` and ``-`` is in single quotes
    (``'`` as ``'\\''``); in the chat the whole option is a code span.
    """
    terminal: list[str] = []
    plain: list[str] = []
    for member in members:
        name = fold(ControlChat.member_name(member))
        entry = f"{member.get('groupMemberId')}:{name}"
        plain.append(entry)
        # an entry whose NAME has characters other than letters, digits, _ and - is quoted
        terminal.append(
            entry if shell_quote(name) == name else "'" + entry.replace("'", "'\\''") + "'"
        )
    return f"--owners {','.join(terminal)}", code_span(f"--owners {','.join(plain)}")


def pending_lines(entries: Sequence[tuple[int, str, float]]) -> str:
    """The reply to /pending: ``2  send to bot SimpleX Directory  expires 2026-10-18 09:15 UTC``.

    ``entries`` are (action number, description made safe, expiry wall time).
    """
    if not entries:
        return "No pending actions."
    return "\n".join(f"{n}  {what}  expires {utc_minutes(expires)}" for n, what, expires in entries)


@dataclass(frozen=True, slots=True)
class ListEntry:
    """One chat for /list: reference, type, name, approver of a standing approval, connected."""

    chat: str
    kind: str
    name: str
    approved_by: str | None
    connected: bool


def _size(text: str) -> int:
    return aeson_string_size(text)


def _cut_text(text: str, budget: int) -> str:
    """The longest prefix of ``text`` plus "…" within ``budget`` encoded bytes."""
    out = ""
    for ch in text:
        if _size(out + ch + "…") > budget:
            break
        out += ch
    return out + "…"


def cut_line(parts: Sequence[tuple[str, bool]], limit: int = LIST_LINE_BYTES) -> str:
    """Join parts into one line of at most ``limit`` encoded bytes, "…" included.

    Each part is (text, is_name): a name is folded and made a code span unless valid, and when
    the line is cut inside a name, the name is cut and keeps its code span closed, so a cut
    never leaves peer text outside a code span.
    """
    rendered = [name_md(text) if is_name else text for text, is_name in parts]
    if _size("".join(rendered)) <= limit:
        return "".join(rendered)
    out = ""
    for (text, is_name), shown in zip(parts, rendered, strict=True):
        if _size(out + shown) <= limit - _size("…"):
            out += shown
            continue
        budget = limit - _size(out)
        if not is_name:
            return out + _cut_text(shown, budget)
        folded = fold(text)
        if is_valid_name(folded):
            cut = _cut_text(folded, budget)
            if is_valid_name(cut):
                return out + cut
        # a code span: two backticks around the cut content
        inner = _cut_text(folded.replace("`", "'"), budget - 2)
        return out + code_span(inner)
    return out


def list_reply(entries: Sequence[ListEntry]) -> str:
    """The reply to /list: the 100 most recent chats, then the count of older ones."""
    if not entries:
        return "No chats."
    lines: list[str] = []
    for entry in entries[:LIST_MAX_CHATS]:
        parts: list[tuple[str, bool]] = [
            (f"{entry.chat}  {entry.kind} ", False),
            (entry.name, True),
        ]
        if entry.approved_by is not None:
            parts += [(", approved for this chat by ", False), (entry.approved_by, True)]
        if not entry.connected:
            parts.append((", not connected", False))
        lines.append(cut_line(parts))
    older = len(entries) - LIST_MAX_CHATS
    if older == 1:
        lines.append("1 older chat is not shown.")
    elif older > 1:
        lines.append(f"{older} older chats are not shown.")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- custom data


class CustomDataQueue:
    """Runs custom data writes one at a time, in the order they were asked.

    The core takes no lock when it writes a chat's custom data, so the server writes through
    one queue (plan "Data folder and state"). :meth:`write` returns once its write is done, and
    raises what the write raised.
    """

    def __init__(self, run: Callable[[str], Awaitable[Any]]) -> None:
        self._run = run
        self._send: MemoryObjectSendStream[tuple[str, anyio.Event, list[BaseException]]]
        self._receive: MemoryObjectReceiveStream[tuple[str, anyio.Event, list[BaseException]]]
        self._send, self._receive = anyio.create_memory_object_stream[
            tuple[str, anyio.Event, list[BaseException]]
        ](10_000)

    async def write(self, chat: str, value: Mapping[str, Any] | None) -> None:
        """Set (or, with ``None``, clear) the custom data of ``chat``, after earlier writes.

        The write is queued synchronously, so writes asked with no await in between run in
        that order.
        """
        command = f"/_set custom {chat}" if value is None else f"/_set custom {chat} {dumps(value)}"
        done = anyio.Event()
        errors: list[BaseException] = []
        self._send.send_nowait((command, done, errors))
        with anyio.CancelScope(shield=True):
            await done.wait()
        if errors:
            raise errors[0]

    async def run(self) -> None:
        """Serve the queue (run in the server's task group)."""
        async with self._receive:
            async for command, done, errors in self._receive:
                try:
                    await self._run(command)
                except Exception as exc:
                    errors.append(exc)
                finally:
                    done.set()


# ----------------------------------------------------------------------------- the group


class ControlChat:
    """The agent control chat over the chat core.

    Args:
        command: sends a command to the chat core and returns its response (raises
            :class:`~simplex_protocols.errors.CoreError`).
        group_id: the group's ID.
        membership_id: the agent's own member ID in the group.
    """

    def __init__(
        self,
        command: Callable[[str], Awaitable[dict[str, Any]]],
        group_id: int,
        membership_id: int | None,
    ) -> None:
        self._command = command
        self.group_id = group_id
        self.membership_id = membership_id
        self.members: dict[int, dict[str, Any]] = {}

    @property
    def ref(self) -> str:
        return f"#{self.group_id}"

    # -- members -----------------------------------------------------------------------------

    async def load_members(self) -> None:
        """Read the members (``/_members``), so approvers are known before the first call."""
        response = await self._command(f"/_members {self.ref}")
        group = response.get("group")
        members = group.get("members") if isinstance(group, Mapping) else None
        self.members = {}
        for member in members if isinstance(members, list) else []:
            self.update_member(member)

    def update_member(self, member: Any) -> None:
        """Keep a member record from an event or a response."""
        if not isinstance(member, Mapping):
            return
        member_id = member.get("groupMemberId")
        if isinstance(member_id, int) and member_id != self.membership_id:
            self.members[member_id] = dict(member)

    def humans(self) -> list[dict[str, Any]]:
        """Members other than the agent's profile, with status connected or complete."""
        return [
            m for m in self.members.values() if m.get("memberStatus") in ("connected", "complete")
        ]

    def human_owners(self) -> list[dict[str, Any]]:
        return [m for m in self.humans() if m.get("memberRole") == "owner"]

    @staticmethod
    def member_name(member: Mapping[str, Any]) -> str:
        profile = member.get("memberProfile")
        name = profile.get("displayName") if isinstance(profile, Mapping) else None
        if not isinstance(name, str):
            name = member.get("localDisplayName")
        return name if isinstance(name, str) else ""

    # -- link --------------------------------------------------------------------------------

    async def delete_link(self) -> None:
        """Delete the group link; a missing link is not an error."""
        try:
            await self._command(f"/_delete link {self.ref}")
        except CoreError as exc:
            if exc.error_type != "groupLinkNotFound":
                raise

    async def create_link(self, role: str) -> str:
        """Create the group link with ``role`` (at most member); return the link to print."""
        await self.delete_link()
        response = await self._command(f"/_create link {self.ref} {role}")
        link = response.get("groupLink")
        conn = link.get("connLinkContact") if isinstance(link, Mapping) else None
        if isinstance(conn, Mapping):
            short = conn.get("connShortLink")
            if isinstance(short, str) and short:
                return short
            full = conn.get("connFullLink")
            if isinstance(full, str):
                return full
        raise _internal_error("no group link in the response", response)

    async def set_role(self, member_id: int, role: str) -> None:
        """Set one member's role (one member per call)."""
        response = await self._command(f"/_member role {self.ref} {member_id} {role}")
        members = response.get("members")
        for member in members if isinstance(members, list) else []:
            self.update_member(member)
        record = self.members.get(member_id)
        if record is not None:
            record["memberRole"] = role

    async def remove_member(self, member_id: int) -> None:
        """Remove one member (one member per call)."""
        await self._command(f"/_remove {self.ref} {member_id}")
        self.members.pop(member_id, None)

    # -- messages ----------------------------------------------------------------------------

    async def post(self, text: str) -> int:
        """Post a message as the agent's profile; return its item ID."""
        payload = [{"msgContent": {"type": "text", "text": text}}]
        response = await self._command(f"/_send {self.ref} json {dumps(payload)}")
        items = response.get("chatItems")
        if isinstance(items, list) and items:
            chat_item = items[0].get("chatItem") if isinstance(items[0], Mapping) else None
            meta = chat_item.get("meta") if isinstance(chat_item, Mapping) else None
            item = meta.get("itemId") if isinstance(meta, Mapping) else None
            if isinstance(item, int):
                return item
        raise _internal_error("no item in the response", response)

    async def edit(self, item: int, text: str) -> None:
        """Edit a card (the commands are removed by the new text)."""
        update = {"msgContent": {"type": "text", "text": text}, "mentions": {}}
        await self._command(f"/_update item {self.ref} {item} json {dumps(update)}")


def _internal_error(message: str, response: Mapping[str, Any]) -> CoreError:
    """The error for a core response that lacks what the command returns."""
    return CoreError(
        {"type": "error", "errorType": {"type": "internalError", "message": message}},
        response=response,
    )
