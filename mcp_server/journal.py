"""The action journal of ``--durable-actions``: the open actions in ``DIR/actions.db``.

The plan keeps actions in memory, so a stop cancels them and a crash forgets them. With
``--durable-actions`` each action of the run is also a row of this journal (SQLite, from the
standard library), written before its card is posted and at every change of its state, and
deleted when the action leaves memory; a start reads the rows back
(:meth:`simplex_protocols.mcp_server.approvals.Approvals.restore`).

=================  ===================================================================
table              contents
=================  ===================================================================
``actions``        one row per action: number, tool, input, state, the card's item ID
                   and texts, the approver, creation and expiry (absolute wall-clock
                   times, so expiry counts across a downtime), the perform's chat and
                   item, the error, and the outcome the card shows or is still to show
``meta``           ``control_group`` (the agent control chat the card IDs belong to) and
                   ``control_item`` (the last item of that chat whose owner command was
                   taken: a start reads the commands that arrived after it)
=================  ===================================================================

Durability: ``PRAGMA synchronous=FULL`` makes each commit wait until SQLite has synced the
database and its journal to disk, so a row is on disk when :meth:`ActionJournal.save` returns,
and a ``kill -9`` or a power cut right after it keeps it. The journal mode is SQLite's default
rollback journal (``DELETE``): with FULL sync it is as durable as WAL, it needs no shared-memory
file (WAL does, and network file systems, where a home folder may live, lack it), and the
journal writes a few small rows per action, so WAL's fewer syncs would buy nothing.

Writes are synchronous, in the caller's task: each is one small transaction, and writing it in
place keeps it in order with the state change it records (no other task runs in between), which
the rule "a restart never performs an action twice" depends on. A write that fails is logged
and the action goes on in memory (as a failed write of the action counter does in the plan).

The file follows the data folder's rules (:mod:`simplex_protocols._private_files`): created with
mode 0600, never through a symbolic link, and refused when it is not a regular file of this user.
SQLite creates its rollback journal beside it with the same mode, in the folder only this user
can write to (0700).

After :meth:`ActionJournal.close` nothing is written, as after the process has ended.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from simplex_protocols._wire import WireJSONError, dumps, loads
from simplex_protocols.errors import SimplexError

from .actions import Action, ActionState, ActionTool, action_key
from .cards import Card, Outcome
from .connect_flow import ConnectState
from .text import read_chat_ref

__all__ = [
    "JOURNAL_VERSION",
    "ActionJournal",
    "JournalError",
    "JournalRow",
    "action_of",
    "row_of",
]

#: The schema version, kept in ``PRAGMA user_version``.
JOURNAL_VERSION: Final = 1

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS actions (
    n INTEGER PRIMARY KEY,
    tool TEXT NOT NULL,
    input TEXT NOT NULL,
    state TEXT NOT NULL,
    standing INTEGER NOT NULL,
    created REAL NOT NULL,
    expires REAL NOT NULL,
    card INTEGER,
    card_texts TEXT,
    pending_text TEXT NOT NULL,
    decided_by TEXT,
    chat TEXT,
    item INTEGER,
    connected INTEGER NOT NULL,
    known_as TEXT,
    error TEXT,
    outcome TEXT,
    shown INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""

_COLUMNS: Final = (
    "n",
    "tool",
    "input",
    "state",
    "standing",
    "created",
    "expires",
    "card",
    "card_texts",
    "pending_text",
    "decided_by",
    "chat",
    "item",
    "connected",
    "known_as",
    "error",
    "outcome",
    "shown",
)


class JournalError(SimplexError, OSError):
    """``DIR/actions.db`` cannot be used: a symbolic link, not a regular file, another user's,
    not a journal of this version, or unreadable (exit code 1 at start)."""

    code = "journal"

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


@dataclass(frozen=True, slots=True)
class JournalRow:
    """One action as the journal keeps it.

    Attributes:
        n: the action number.
        tool: ``connect``, ``send`` or ``leave``.
        input: the call's input.
        state: the state's value (:class:`~simplex_protocols.mcp_server.actions.ActionState`).
        standing: performed under a standing approval.
        created: creation, wall-clock seconds.
        expires: expiry, wall-clock seconds.
        card: the card's item ID in the agent control chat, once posted.
        forms: the card's texts.
        pending_text: the /pending description.
        decided_by: the approver's display name.
        chat: the perform's chat reference (``@4``).
        item: the sent item of a done send.
        connected: a done connect whose chat is connected.
        known_as: a connect's incognito name.
        error: why it failed.
        outcome: the outcome the card takes once decided (an
            :class:`~simplex_protocols.mcp_server.cards.Outcome` value).
        shown: the card shows ``outcome`` (edited or posted).
    """

    n: int
    tool: str
    input: dict[str, Any]
    state: str
    standing: bool
    created: float
    expires: float
    card: int | None
    forms: Card | None
    pending_text: str
    decided_by: str | None = None
    chat: str | None = None
    item: int | None = None
    connected: bool = False
    known_as: str | None = None
    error: str | None = None
    outcome: str | None = None
    shown: bool = False


def _card_json(card: Card | None) -> str | None:
    if card is None:
        return None
    return dumps(
        {
            "want": card.want,
            "done": card.done,
            "asked": card.asked,
            "body": list(card.body),
            "commands": card.commands,
            "chat": card.chat,
        }
    )


def _card_of(text: str | None) -> Card | None:
    if text is None:
        return None
    value = loads(text)
    if not isinstance(value, dict):
        raise ValueError("card texts are not an object")
    body = value.get("body")
    chat = value.get("chat")
    return Card(
        want=str(value.get("want", "")),
        done=str(value.get("done", "")),
        body=tuple(str(line) for line in body) if isinstance(body, list) else (),
        commands=str(value.get("commands", "")),
        asked=str(value.get("asked", "")),
        chat=chat if isinstance(chat, str) else None,
    )


def _journal_error(exc: OSError | sqlite3.Error, message: str, path: Path) -> JournalError:
    err = exc.errno if isinstance(exc, OSError) and exc.errno is not None else errno.EIO
    return JournalError(err, f"{message}: {exc}", str(path))


def _check_file(path: Path) -> None:
    """Create ``path`` with mode 0600 when missing; refuse a link, a non-regular file or a file
    of another user; set an existing file's mode to 0600 through its descriptor."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise JournalError(
                errno.ELOOP, "the action journal is a symbolic link", str(path)
            ) from exc
        raise _journal_error(exc, "cannot open the action journal", path) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise JournalError(errno.EINVAL, "the action journal is not a regular file", str(path))
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            raise JournalError(
                errno.EPERM,
                f"the action journal belongs to another user (uid {st.st_uid})",
                str(path),
            )
        if stat.S_IMODE(st.st_mode) != 0o600:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


class ActionJournal:
    """The rows of ``DIR/actions.db``.

    Args:
        path: the journal file.
        on_error: called with a line when a write fails (the server's error log).

    Raises:
        JournalError: the file cannot be used (see :class:`JournalError`).
    """

    def __init__(self, path: Path, *, on_error: Callable[[str], None] | None = None) -> None:
        self.path = path
        self._on_error = on_error
        _check_file(path)
        uri = f"file:{urllib.parse.quote(str(path))}?mode=rw"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise _journal_error(exc, "cannot open the action journal", path) from exc
        try:
            conn.execute("PRAGMA journal_mode=DELETE")
            conn.execute("PRAGMA synchronous=FULL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, JOURNAL_VERSION):
                raise JournalError(
                    errno.EINVAL,
                    f"the action journal has version {version}; this server reads version "
                    f"{JOURNAL_VERSION}",
                    str(path),
                )
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version={JOURNAL_VERSION}")
        except sqlite3.Error as exc:
            conn.close()
            raise _journal_error(exc, "not an action journal", path) from exc
        except JournalError:
            conn.close()
            raise
        self._conn: sqlite3.Connection | None = conn

    @property
    def closed(self) -> bool:
        return self._conn is None

    def close(self) -> None:
        """Close the file; later writes do nothing, and reads return nothing."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @contextmanager
    def _write(self, what: str) -> Iterator[sqlite3.Connection | None]:
        """One transaction, committed (and synced) at the end; a failure is reported, not raised."""
        conn = self._conn
        if conn is None:
            yield None
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if self._on_error is not None:
                self._on_error(f"Could not write the action journal ({what}): {exc}")

    # -- actions ------------------------------------------------------------------------------

    def save(self, row: JournalRow) -> None:
        """Write an action's row (inserted, or replacing the one before)."""
        values = (
            row.n,
            row.tool,
            dumps(row.input),
            row.state,
            int(row.standing),
            row.created,
            row.expires,
            row.card,
            _card_json(row.forms),
            row.pending_text,
            row.decided_by,
            row.chat,
            row.item,
            int(row.connected),
            row.known_as,
            row.error,
            row.outcome,
            int(row.shown),
        )
        marks = ", ".join("?" for _ in _COLUMNS)
        with self._write(f"action {row.n}") as conn:
            if conn is not None:
                conn.execute(
                    f"INSERT OR REPLACE INTO actions ({', '.join(_COLUMNS)}) VALUES ({marks})",
                    values,
                )

    def remove(self, n: int) -> None:
        """Delete action ``n``'s row (the action left memory)."""
        with self._write(f"action {n}") as conn:
            if conn is not None:
                conn.execute("DELETE FROM actions WHERE n = ?", (n,))

    def rows(self) -> list[JournalRow]:
        """Every row, by action number.

        Raises:
            JournalError: a row cannot be read (the file was changed by something else).
        """
        if self._conn is None:
            return []
        try:
            found = self._conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM actions ORDER BY n"
            ).fetchall()
            return [self._row(values) for values in found]
        except (sqlite3.Error, WireJSONError, ValueError, TypeError) as exc:
            raise JournalError(errno.EINVAL, f"unreadable row: {exc}", str(self.path)) from exc

    @staticmethod
    def _row(values: tuple[Any, ...]) -> JournalRow:
        record = dict(zip(_COLUMNS, values, strict=True))
        arguments = loads(record["input"])
        if not isinstance(arguments, dict):
            raise ValueError(f"action {record['n']}: the input is not an object")
        return JournalRow(
            n=int(record["n"]),
            tool=str(record["tool"]),
            input=arguments,
            state=str(record["state"]),
            standing=bool(record["standing"]),
            created=float(record["created"]),
            expires=float(record["expires"]),
            card=record["card"],
            forms=_card_of(record["card_texts"]),
            pending_text=str(record["pending_text"]),
            decided_by=record["decided_by"],
            chat=record["chat"],
            item=record["item"],
            connected=bool(record["connected"]),
            known_as=record["known_as"],
            error=record["error"],
            outcome=record["outcome"],
            shown=bool(record["shown"]),
        )

    # -- the control chat ---------------------------------------------------------------------

    def meta(self, key: str) -> int | None:
        """A value of the ``meta`` table."""
        if self._conn is None:
            return None
        found = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(found[0]) if found is not None else None

    def set_meta(self, **values: int) -> None:
        """Write values of the ``meta`` table, in one transaction."""
        with self._write("control chat") as conn:
            if conn is not None:
                for key, value in values.items():
                    conn.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value)
                    )


def row_of(action: Action, *, state: ActionState | None = None) -> JournalRow:
    """The journal row of ``action`` (``state``: the state it is about to take)."""
    return JournalRow(
        n=action.n,
        tool=action.tool.value,
        input=action.input,
        state=(state or action.state).value,
        standing=action.standing,
        created=action.created,
        expires=action.expires,
        card=action.card,
        forms=action.forms,
        pending_text=action.pending_text,
        decided_by=action.decided_by,
        chat=str(action.chat) if action.chat is not None else None,
        item=action.item,
        connected=action.connected,
        known_as=action.known_as,
        error=action.error,
        outcome=action.outcome.value if action.outcome is not None else None,
        shown=action.shown,
    )


def action_of(row: JournalRow) -> Action:
    """The action of a journal row, as a start restores it.

    Raises:
        ValueError: the row names no tool, state or outcome of this server.
    """
    tool = ActionTool(row.tool)
    action = Action(
        n=row.n,
        tool=tool,
        input=dict(row.input),
        key=action_key(tool, row.input),
        created=row.created,
        expires=row.expires,
        state=ActionState(row.state),
        standing=row.standing,
        forms=row.forms,
        pending_text=row.pending_text,
        card=row.card,
        decided_by=row.decided_by,
        chat=read_chat_ref(row.chat) if row.chat is not None else None,
        item=row.item,
        known_as=row.known_as,
        error=row.error,
        outcome=Outcome(row.outcome) if row.outcome is not None else None,
        shown=row.shown,
    )
    if tool is ActionTool.CONNECT and action.state.decided:
        action.connect_state = ConnectState.CONNECTED if row.connected else ConnectState.REQUESTED
    if action.state.decided:
        action.settled.set()
    return action
