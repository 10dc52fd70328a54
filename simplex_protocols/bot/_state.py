"""The bot's data folder: its own settings, its secrets and its task database, kept private.

Layout (every file is the bot's; nothing else is written there)::

    <folder>/                      mode 0700
        bot.json                   the bot's settings: the chat user it runs as, its address,
                                   and what it last declared (mode 0600)
        lock                       the PID of the process using the folder (mode 0600)
        mcp-request-state.secret   the key that seals MCP requestState across restarts
        a2a.sqlite                 the A2A task store and the context pins

A folder that group or others can enter, or a file in it they can read, is refused: the
secrets and the tasks (which hold the callers' messages) are as private as a chat database.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from simplex_protocols._private_files import (
    HeldLock,
    ensure_private_folder,
    lock_holder,
    read_private,
    replace_private,
    take_lock,
)
from simplex_protocols._wire import dumps
from simplex_protocols.errors import DataFolderError

__all__ = ["SETTINGS_FORMAT", "DataFolder", "default_data_folder"]

#: The ``format`` member of ``bot.json``.
SETTINGS_FORMAT: Final = "simplex-protocols/bot/1"

_SETTINGS_FILE: Final = "bot.json"
_LOCK_FILE: Final = "lock"
_MAX_SETTINGS_BYTES: Final = 1 << 20


def default_data_folder(display_name: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where a bot keeps its data when no folder is given.

    ``$XDG_STATE_HOME/simplex-bot/<name>``, or ``~/.local/state/simplex-bot/<name>``, where
    ``<name>`` is the display name with every character other than ASCII letters, digits,
    ``-`` and ``_`` replaced by ``_``.
    """
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    slug = "".join(
        ch if (ch.isascii() and (ch.isalnum() or ch in "-_")) else "_" for ch in display_name
    )
    return Path(base) / "simplex-bot" / (slug or "bot")


class DataFolder:
    """A bot's private data folder.

    Args:
        path: the folder. Created by :meth:`open` with mode 0700 (missing parents with the default mode).

    Every method raises :class:`~simplex_protocols.errors.DataFolderError` (an ``OSError``
    whose ``errno`` and ``filename`` say what and where) when the folder or a file is unsafe,
    unreadable or malformed.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock_held: HeldLock | None = None

    def __repr__(self) -> str:
        return f"DataFolder({str(self.path)!r})"

    def file(self, name: str) -> Path:
        """The path of a file in the folder."""
        return self.path / name

    def open(self) -> None:
        """Create the folder (mode 0700) or check an existing one, then take its lock.

        Raises:
            DataFolderError: the folder is open to group or others, is not a folder, or
                another running process holds its lock (``errno.EBUSY``).
        """
        ensure_private_folder(
            self.path, what="data folder", error=DataFolderError, follow_symlinks=False
        )
        self._lock()

    def close(self) -> None:
        """Release the lock (the folder and its files stay)."""
        if self._lock_held is not None:
            self._lock_held.release()
            self._lock_held = None

    def _lock(self) -> None:
        # An OS lock (flock) on the lock file: it ends with the process however the process
        # ends, so a crash or a PID reused by another program never blocks a start.
        path = self.file(_LOCK_FILE)
        if self._lock_held is not None:
            return
        held = take_lock(path, os.getpid(), error=DataFolderError)
        if held is None:
            holder = lock_holder(path)
            if holder == os.getpid():
                # Another bot of this process holds it (a test running two bots on one
                # folder would corrupt the task store).
                raise DataFolderError(
                    errno.EBUSY, "the data folder is in use by another bot", str(path)
                )
            who = f"process {holder}" if holder is not None else "another process"
            raise DataFolderError(
                errno.EBUSY,
                f"the data folder is in use by {who}; stop it first, or give this bot another "
                "data folder",
                str(path),
            )
        self._lock_held = held

    # ------------------------------------------------------------------ settings

    def load_settings(self) -> dict[str, Any]:
        """The settings written by :meth:`save_settings`, or ``{}`` when there are none.

        Raises:
            DataFolderError: ``bot.json`` is readable by group or others, or is not a settings
                file of this format.
        """
        path = self.file(_SETTINGS_FILE)
        try:
            data = read_private(
                path, _MAX_SETTINGS_BYTES, what="settings file", error=DataFolderError
            )
        except DataFolderError as exc:
            if exc.errno == errno.ENOENT:
                return {}
            raise
        try:
            value = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise DataFolderError(
                errno.EINVAL, "the settings file is not JSON", str(path)
            ) from None
        if not isinstance(value, dict) or value.get("format") != SETTINGS_FORMAT:
            raise DataFolderError(
                errno.EINVAL, f"not a bot settings file ({SETTINGS_FORMAT})", str(path)
            )
        return value

    def save_settings(self, settings: Mapping[str, Any]) -> None:
        """Write ``bot.json`` whole (a temporary file renamed into place, mode 0600)."""
        path = self.file(_SETTINGS_FILE)
        body = dumps({"format": SETTINGS_FORMAT, **settings}).encode("utf-8") + b"\n"
        replace_private(path, body, error=DataFolderError)
