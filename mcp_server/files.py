"""The data folder: ``token``, ``headers.json``, ``server.json`` and ``lock``.

=================  =============================================  ====
path               contents                                       mode
=================  =============================================  ====
DIR/               created at the first start                     0700, set at every start
DIR/token          32 random bytes, base64url                     0600
DIR/headers.json   ``{"Authorization": "Bearer <token>"}``         0600, written at every start
DIR/server.json    ``{name, port, expireHours}``                  0600
DIR/lock           PID of the running server, which holds an      0600
                   OS lock (``flock``) on it
DIR/custom.json    the chats' custom data, on a core without it   0600
DIR/actions.db     the action journal of ``--durable-actions``    0600
                   (:mod:`simplex_protocols.mcp_server.journal`)
=================  =============================================  ====

``custom.json`` exists only when the chat core cannot keep a chat's custom data (``/_set
custom``, capability ``custom-data``, 6.4-era cores): it then holds what the server would have
written there (the control chat's marker and action counter, the standing approvals), keyed by
chat reference (``#12``, ``@5``).

The lock is taken at start and removed at stop. It is an OS lock on the file, which the system
drops when the process ends however it ends: after a crash the next start takes it, even when
the PID in the file now belongs to another process. The chat database is opened without
exclusive locking, so the lock is the only guard against a second server on the same folder.

The token file is opened without following a symbolic link and must be a regular file of this
user's; its mode is set to 0600 through the open file (:class:`TokenFileError` otherwise).
"""

from __future__ import annotations

import base64
import errno
import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from simplex_protocols._private_files import (
    HeldLock,
    lock_holder,
    pid_running,
    read_own,
    replace_private,
    take_lock,
)
from simplex_protocols._wire import WireJSONError, dumps, loads
from simplex_protocols.errors import SimplexError

__all__ = [
    "FILE_MODE",
    "FOLDER_MODE",
    "DataFolder",
    "LockHeldError",
    "TokenFileError",
    "pid_running",
]

FOLDER_MODE: Final = 0o700
FILE_MODE: Final = 0o600
TOKEN_BYTES: Final = 32
# A token file is 43 characters and a newline; anything much larger is not one.
_TOKEN_FILE_LIMIT: Final = 4096
# How long a start waits for the PID of a server that has just taken the lock.
_HOLDER_WAIT_S: Final = 0.5


class LockHeldError(SimplexError):
    """Another server runs on this data folder (exit code 1)."""

    code = "lock_held"

    def __init__(self, folder: Path, pid: int | None) -> None:
        self.folder = folder
        self.pid = pid
        which = f" (PID {pid})" if pid is not None else ""
        super().__init__(f"Another server uses {folder}{which}.")


class TokenFileError(SimplexError, OSError):
    """``DIR/token`` is a symbolic link, not a regular file, another user's, or unreadable
    (exit code 1).

    An ``OSError`` with ``errno``, ``strerror`` (what is wrong) and ``filename``.
    """

    code = "token_file"

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def _token_error(err: int | None, message: str, filename: str) -> OSError:
    return TokenFileError(err if err is not None else errno.EINVAL, message, filename)


def _write_private(path: Path, text: str) -> None:
    """Write a file readable by its owner only (0600), replacing it atomically."""
    replace_private(path, text.encode("utf-8"), error=OSError)


class DataFolder:
    """The files of one agent's data folder.

    Args:
        path: the folder, ``~/.simplex-mcp/NAME`` unless ``--data`` sets it.
        random_bytes: the random source for the token (``secrets.token_bytes``).
        pid: the PID written into the lock (this process's).
    """

    def __init__(
        self,
        path: Path,
        *,
        random_bytes: Callable[[int], bytes] = secrets.token_bytes,
        pid: int | None = None,
    ) -> None:
        self.path = path
        self._random_bytes = random_bytes
        self._pid = os.getpid() if pid is None else pid
        self._lock: HeldLock | None = None

    @property
    def token_path(self) -> Path:
        return self.path / "token"

    @property
    def headers_path(self) -> Path:
        return self.path / "headers.json"

    @property
    def server_path(self) -> Path:
        return self.path / "server.json"

    @property
    def lock_path(self) -> Path:
        return self.path / "lock"

    @property
    def custom_path(self) -> Path:
        return self.path / "custom.json"

    @property
    def journal_path(self) -> Path:
        """The action journal of ``--durable-actions`` (SQLite)."""
        return self.path / "actions.db"

    @property
    def keys_path(self) -> Path:
        """The folder of ``--call-tool``'s Service RPC signing keys, one per bot
        (:class:`~simplex_protocols.rpc.KeyStore`: 0700, each key file 0600)."""
        return self.path / "keys"

    @property
    def db_prefix(self) -> Path:
        """The prefix of the SimpleX databases: ``DIR/simplex`` (``simplex_chat.db``, ``simplex_agent.db``)."""
        return self.path / "simplex"

    def prepare(self) -> None:
        """Create the folder (and its parents) and set its mode to 0700, as at every start."""
        self.path.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
        if os.name != "nt":
            os.chmod(self.path, FOLDER_MODE)

    def acquire_lock(self) -> None:
        """Take the OS lock on ``DIR/lock`` and write this PID into it.

        Raises:
            LockHeldError: another process holds the lock (its PID, as its file says).
            OSError: the lock file cannot be used (a symbolic link, not a regular file).
        """
        lock = take_lock(self.lock_path, self._pid, error=OSError)
        if lock is None:
            raise LockHeldError(self.path, self._holder())
        self._lock = lock

    def _holder(self) -> int | None:
        """The PID in a lock another process holds; it writes it just after taking the lock."""
        deadline = time.monotonic() + _HOLDER_WAIT_S
        while (pid := lock_holder(self.lock_path)) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        return pid

    def release_lock(self) -> None:
        """Remove ``DIR/lock`` and drop the OS lock, if this process holds it."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def token(self, *, new: bool = False) -> str:
        """The bearer token: read from ``DIR/token``, created when missing or when ``new``.

        The token is 32 random bytes in base64url without padding (43 characters).

        Raises:
            TokenFileError: ``DIR/token`` is a symbolic link, not a regular file, another
                user's, or cannot be read or written.
        """
        if not new:
            data = read_own(
                self.token_path, _TOKEN_FILE_LIMIT, what="token file", error=_token_error
            )
            existing = data.decode("ascii", errors="replace").strip() if data is not None else ""
            if len(existing) >= 43 and all(c.isalnum() or c in "-_" for c in existing):
                return existing
        token = (
            base64.urlsafe_b64encode(self._random_bytes(TOKEN_BYTES)).rstrip(b"=").decode("ascii")
        )
        # the temporary file is renamed over the name: a link there is replaced, not followed
        replace_private(self.token_path, (token + "\n").encode("ascii"), error=_token_error)
        return token

    def write_headers(self, token: str) -> None:
        """Write ``DIR/headers.json`` with the ``Authorization`` header for the token."""
        _write_private(self.headers_path, dumps({"Authorization": f"Bearer {token}"}) + "\n")

    def write_server(self, name: str, port: int, expire_hours: int) -> None:
        """Write ``DIR/server.json``: ``{name, port, expireHours}``, read by ``register``."""
        _write_private(
            self.server_path,
            dumps({"name": name, "port": port, "expireHours": expire_hours}) + "\n",
        )

    def read_custom(self) -> dict[str, dict[str, Any]]:
        """``DIR/custom.json``: custom data by chat reference (empty when missing).

        Raises:
            OSError: the file exists and cannot be read, or is not a JSON object of objects.
        """
        try:
            value = loads(self.custom_path.read_bytes())
        except FileNotFoundError:
            return {}
        except WireJSONError as exc:
            raise OSError(f"{self.custom_path}: not JSON ({exc})") from None
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise OSError(f"{self.custom_path}: not a JSON object of objects")
        return value

    def write_custom(self, values: dict[str, dict[str, Any]]) -> None:
        """Write ``DIR/custom.json`` (replaced atomically, 0600)."""
        _write_private(self.custom_path, dumps(values) + "\n")

    def read_server(self) -> dict[str, Any] | None:
        """``DIR/server.json`` as written by the last start, or ``None`` when missing or unreadable."""
        try:
            value = loads(self.server_path.read_bytes())
        except (FileNotFoundError, WireJSONError, OSError):
            return None
        return value if isinstance(value, dict) else None
