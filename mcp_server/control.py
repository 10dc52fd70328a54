"""The agent control chat: its group, members and link, owner commands, cards and custom data.

The agent's profile owns a group, "the agent control chat", with the agent's display name;
owners join it by a link and approve the agent's actions there with commands (plan "What the
owner sees: the agent control chat" and "Processing: Owners"). This module holds:

- the owner commands' grammar (:func:`parse_owner_command`) and the replies that need no I/O
  (:func:`pending_lines`, :func:`list_reply`), as pure functions;
- :class:`CustomDataQueue`: custom data writes run one at a time, in the order asked;
- :class:`ControlChat`: the group itself over the chat core's :class:`ChatAPI`: its members,
  its link, posting and editing cards, and the deliveries still pending at a stop.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from simplex_protocols._clock import Clock
from simplex_protocols._wire import aeson_string_size
from simplex_protocols.core import (
    ChatAPI,
    ChatInfoView,
    ChatRef,
    GroupRef,
    MemberView,
    first_item_id,
    link_text,
)
from simplex_protocols.errors import CoreError

from .log import CORE_FAILURES, missing_in_response
from .text import code_span, fold, name_md, shell_quote, shows_bare

__all__ = [
    "COMMANDS_HELP",
    "COMMANDS_HELP_CALLS",
    "CONTROL_DESCRIPTION",
    "GREETING",
    "LIST_LINE_BYTES",
    "LIST_MAX_CHATS",
    "ControlChat",
    "CustomDataQueue",
    "CustomDataWrite",
    "ListEntry",
    "OwnerCommand",
    "chat_time",
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
#: The help with ``--call-tool`` (not the plan's): the command that makes calls standing.
COMMANDS_HELP_CALLS: Final = (
    "Commands: /approve, /reject, /revoke, /pending, /list. Each card shows its commands. "
    "/approve N calls approves call N and every later call to its bot, until /revoke N calls."
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


_MONTHS: Final = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def chat_time(wall: float) -> str:
    """``18 October 2026 at 09:15 UTC``: a time in the agent control chat.

    The plan's ``2026-10-18 09:15 UTC`` is a phone number to the core's Markdown (digits with
    single separators, 7 to 22 characters: ``2026-10-18 09``), which the apps make tappable;
    so is the ISO form ``2026-10-18T09:15Z`` (``2026-10-18``). In this form no two numbers are
    one separator apart. English month names, whatever the locale.
    """
    when = dt.datetime.fromtimestamp(wall, tz=dt.UTC)
    return f"{when.day} {_MONTHS[when.month - 1]} {when.year} at {when:%H:%M} UTC"


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
    action number as typed (digits), ``all`` marks ``/approve CHAT all``; ``calls`` marks
    ``/approve N calls`` and ``/revoke N calls`` (``--call-tool``, not the plan's: N is a call
    action, and the approval is for every call to its bot).
    """

    verb: str
    chat: str | None = None
    n: str | None = None
    all: bool = False
    calls: bool = False


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
    if (
        verb in ("approve", "revoke")
        and len(args) == 2
        and args[1] == "calls"
        and _N_RE.fullmatch(args[0])
    ):
        return OwnerCommand(verb, n=args[0], calls=True)
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
        name = fold(MemberView(member).display_name)
        entry = f"{member.get('groupMemberId')}:{name}"
        plain.append(entry)
        # an entry whose NAME has characters other than letters, digits, _ and - is quoted
        terminal.append(
            entry if shell_quote(name) == name else "'" + entry.replace("'", "'\\''") + "'"
        )
    return f"--owners {','.join(terminal)}", code_span(f"--owners {','.join(plain)}")


def pending_lines(entries: Sequence[tuple[int, str, float]]) -> str:
    """The reply to /pending: ``2  send to bot SimpleX Directory  expires 18 October 2026 at
    09:15 UTC``.

    ``entries`` are (action number, description made safe, expiry wall time). The time is
    written as :func:`chat_time` writes it, not as the plan's ``2026-10-18 09:15 UTC``, which
    the apps would show as a tappable phone number (docs/mcp_server.md, "Beyond the plan").
    """
    if not entries:
        return "No pending actions."
    return "\n".join(f"{n}  {what}  expires {chat_time(expires)}" for n, what, expires in entries)


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
        if shows_bare(folded):
            cut = _cut_text(folded, budget)
            # a cut name may form what the whole did not: 20 of 25 digits are a phone number
            if shows_bare(cut):
                return out + cut
        # a code span: two backticks around the cut content
        inner = _cut_text(folded.replace("`", "'"), budget - 2)
        return out + code_span(inner)
    return out


#: What stands for ``#`` in the names of a /list line that starts with a group's ``#N``.
FULLWIDTH_NUMBER_SIGN: Final = "\uff03"


def list_reply(entries: Sequence[ListEntry]) -> str:
    """The reply to /list: the 100 most recent chats, then the count of older ones.

    On a line that starts with a group's reference (``#9``), a ``#`` in a name is shown as
    U+FF03 (``＃``): the core's Markdown reads ``#9 ... a#`` as one secret, which would swallow
    the opening backtick of the name's code span and leave the rest of the name live.
    """
    if not entries:
        return "No chats."
    lines: list[str] = []
    for entry in entries[:LIST_MAX_CHATS]:

        def shown(name: str, chat: str = entry.chat) -> str:
            return name.replace("#", FULLWIDTH_NUMBER_SIGN) if chat.startswith("#") else name

        parts: list[tuple[str, bool]] = [
            (f"{entry.chat}  {entry.kind} ", False),
            (shown(entry.name), True),
        ]
        if entry.approved_by is not None:
            parts += [(", approved for this chat by ", False), (shown(entry.approved_by), True)]
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


@dataclass(frozen=True, slots=True)
class CustomDataWrite:
    """One queued write: the chat and its new custom data (``None`` clears it)."""

    chat: ChatRef
    value: Mapping[str, Any] | None


class CustomDataFile(Protocol):
    """Where custom data is kept when the core has none (:class:`~simplex_protocols.mcp_server.files.DataFolder`)."""

    def read_custom(self) -> dict[str, dict[str, Any]]: ...

    def write_custom(self, values: dict[str, dict[str, Any]]) -> None: ...


class CustomDataQueue:
    """Runs custom data writes one at a time, in the order they were asked, and reads them.

    The core takes no lock when it writes a chat's custom data, so the server writes through
    one queue (plan "Data folder and state"). :meth:`write` returns once its write is done, and
    raises what the write raised.

    Args:
        api: the chat core.
        file: ``None`` (the core keeps custom data: ``/_set custom``, read back in the chat's
            ``customData``), or, for a core without capability ``custom-data``, the data
            folder, whose ``custom.json`` then keeps it instead.
    """

    def __init__(self, api: ChatAPI, file: CustomDataFile | None = None) -> None:
        self._api = api
        self._file = file
        self._values = file.read_custom() if file is not None else {}
        self._send: MemoryObjectSendStream[tuple[CustomDataWrite, anyio.Event, list[BaseException]]]
        self._receive: MemoryObjectReceiveStream[
            tuple[CustomDataWrite, anyio.Event, list[BaseException]]
        ]
        self._send, self._receive = anyio.create_memory_object_stream[
            tuple[CustomDataWrite, anyio.Event, list[BaseException]]
        ](10_000)

    async def write(self, chat: ChatRef, value: Mapping[str, Any] | None) -> None:
        """Set (or, with ``None``, clear) the custom data of ``chat``, after earlier writes.

        The write is queued synchronously, so writes asked with no await in between run in
        that order.
        """
        done = anyio.Event()
        errors: list[BaseException] = []
        self._send.send_nowait((CustomDataWrite(chat, value), done, errors))
        with anyio.CancelScope(shield=True):
            await done.wait()
        if errors:
            raise errors[0]

    async def write_now(self, chat: ChatRef, value: Mapping[str, Any] | None) -> None:
        """Write at once, not through the queue (at start, before :meth:`run` serves it)."""
        await self._run(CustomDataWrite(chat, value))

    @property
    def in_core(self) -> bool:
        """Whether the core keeps the custom data (else the data folder does)."""
        return self._file is None

    def of(self, chat: ChatInfoView) -> Mapping[str, Any]:
        """The custom data of ``chat`` (the core's, or the data folder's)."""
        if self._file is None:
            return chat.custom_data
        ref = chat.ref
        return self._values.get(str(ref), {}) if ref is not None else {}

    async def _run(self, write: CustomDataWrite) -> None:
        if self._file is None:
            await self._api.set_custom_data(write.chat, write.value)
            return
        values = dict(self._values)
        if write.value is None:
            values.pop(str(write.chat), None)
        else:
            values[str(write.chat)] = dict(write.value)
        self._file.write_custom(values)
        self._values = values

    async def run(self) -> None:
        """Serve the queue (run in the server's task group)."""
        async with self._receive:
            async for write, done, errors in self._receive:
                try:
                    await self._run(write)
                except Exception as exc:
                    errors.append(exc)
                finally:
                    done.set()


# ----------------------------------------------------------------------------- the group

#: The roles the server gives in the agent control chat: by its link, and to owners.
Role = Literal["observer", "member", "owner"]

#: The statuses of the members who are in the agent control chat (the agent's profile aside).
_PRESENT: Final = frozenset({"connected", "complete"})


class ControlChat:
    """The agent control chat over the chat core.

    Args:
        api: the chat core (its methods raise :class:`~simplex_protocols.errors.CoreError`).
        group_id: the group's ID.
        membership_id: the agent's own member ID in the group.
    """

    def __init__(self, api: ChatAPI, group_id: int, membership_id: int | None) -> None:
        self._api = api
        self.group_id = group_id
        self.ref = GroupRef(group_id)
        self.membership_id = membership_id
        #: The member records, as the core sent them and updated from its events.
        self.members: dict[int, dict[str, Any]] = {}

    # -- members -----------------------------------------------------------------------------

    async def load_members(self) -> None:
        """Read the members (``/_members``), so approvers are known before the first call."""
        members = await self._api.list_members(self.group_id)
        self.members = {}
        for member in members:
            self.update_member(member)

    def update_member(self, member: Any) -> None:
        """Keep a member record from an event or a response."""
        if not isinstance(member, Mapping):
            return
        member_id = MemberView(member).member_id
        if member_id is not None and member_id != self.membership_id:
            self.members[member_id] = dict(member)

    def humans(self) -> list[dict[str, Any]]:
        """Members other than the agent's profile, with status connected or complete."""
        return [m for m in self.members.values() if MemberView(m).status in _PRESENT]

    def human_owners(self) -> list[dict[str, Any]]:
        return [m for m in self.humans() if MemberView(m).role == "owner"]

    # -- link --------------------------------------------------------------------------------

    async def delete_link(self) -> None:
        """Delete the group link; a missing link is not an error."""
        try:
            await self._api.delete_group_link(self.group_id)
        except CoreError as exc:
            if exc.error_type != "groupLinkNotFound":
                raise

    async def create_link(self, role: Role) -> str:
        """Create the group link with ``role`` (at most member); return the link to print."""
        await self.delete_link()
        group_link = await self._api.create_group_link(self.group_id, role)
        link = link_text(group_link.get("connLinkContact"))
        if link is None:
            raise missing_in_response("no group link in the response", group_link)
        return link

    async def set_role(self, member_id: int, role: Role) -> None:
        """Set one member's role (one member per call)."""
        for member in await self._api.set_members_role(self.group_id, [member_id], role):
            self.update_member(member)
        record = self.members.get(member_id)
        if record is not None:
            record["memberRole"] = role

    async def remove_member(self, member_id: int) -> None:
        """Remove one member (one member per call)."""
        await self._api.remove_members(self.group_id, [member_id])
        self.members.pop(member_id, None)

    # -- messages ----------------------------------------------------------------------------

    async def post(self, text: str) -> int:
        """Post a message as the agent's profile; return its item ID."""
        sent = await self._api.send_messages(
            self.ref, [{"msgContent": {"type": "text", "text": text}}]
        )
        item = first_item_id(sent)
        if item is None:
            raise missing_in_response("no item in the response", {"chatItems": sent})
        return item

    async def edit(self, item: int, text: str) -> None:
        """Edit a card (the commands are removed by the new text)."""
        update = {"msgContent": {"type": "text", "text": text}, "mentions": {}}
        await self._api.update_chat_item(self.ref, item, update)

    # -- deliveries --------------------------------------------------------------------------

    async def pending_deliveries(self) -> int:
        """The messages not yet delivered to the members: the agent connections of the
        members, then the messages queued on them (``/sql``)."""
        # ``/sql`` rows are text: the column names joined by "|" first (when there are rows),
        # then each row's values joined by "|" (execSQL, addSQLResultRow)
        rows = await self._api.exec_chat_sql(
            "SELECT hex(agent_conn_id) FROM connections WHERE group_member_id IN "
            f"(SELECT group_member_id FROM group_members WHERE group_id = {self.group_id})"
        )
        ids = [
            row.strip().strip("'\"") for row in rows if _HEX_ROW.fullmatch(row.strip().strip("'\""))
        ]
        if not ids:
            return 0
        listed = ",".join(f"'{conn_id}'" for conn_id in ids)
        rows = await self._api.exec_agent_sql(
            "SELECT count(*) FROM snd_message_deliveries WHERE failed = 0 AND "
            f"hex(conn_id) IN ({listed})"
        )
        counts = [int(row.strip()) for row in rows if _COUNT_ROW.fullmatch(row.strip())]
        return counts[0] if counts else 0

    async def wait_deliveries(self, clock: Clock, limit_s: float, *, poll_s: float = 0.1) -> None:
        """Wait until the pending deliveries are 0, polled, at most ``limit_s``.

        An edit of a received card emits no status event, so the server asks the databases.
        """
        deadline = clock.now() + limit_s
        with anyio.CancelScope(shield=True):
            while True:
                try:
                    pending = await self.pending_deliveries()
                except CORE_FAILURES:
                    return
                now = clock.now()
                if pending == 0 or now >= deadline:
                    return
                await clock.sleep(min(poll_s, deadline - now))


_HEX_ROW: Final = re.compile(r"[0-9A-Fa-f]{1,200}")
_COUNT_ROW: Final = re.compile(r"[0-9]{1,18}")
