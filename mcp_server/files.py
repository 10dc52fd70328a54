"""The data folder: ``token``, ``headers.json``, ``server.json`` and ``lock``.

=================  =============================================  ====
path               contents                                       mode
=================  =============================================  ====
DIR/               created at the first start                     0700, set at every start
DIR/token          32 random bytes, base64url                     0600
DIR/headers.json   ``{"Authorization": "Bearer <token>"}``         0600, written at every start
DIR/server.json    ``{name, port, expireHours}``                  0600
DIR/lock           PID of the running server                      0600
DIR/custom.json    the chats' custom data, on a core without it   0600
=================  =============================================  ====

``custom.json`` exists only when the chat core cannot keep a chat's custom data (``/_set
custom``, capability ``custom-data``, 6.4-era cores): it then holds what the server would have
written there (the control chat's marker and action counter, the standing approvals), keyed by
chat reference (``#12``, ``@5``).

The lock is created exclusively at start and removed at stop; a lock whose PID is not running
is replaced. The chat database is opened without exclusive locking, so the lock is the only
guard against a second server on the same folder.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from simplex_protocols._private_files import lock_holder, pid_running, replace_private, write_lock
from simplex_protocols._wire import WireJSONError, dumps, loads
from simplex_protocols.errors import SimplexError

__all__ = [
    "FILE_MODE",
    "FOLDER_MODE",
    "DataFolder",
    "LockHeldError",
    "pid_running",
]

FOLDER_MODE: Final = 0o700
FILE_MODE: Final = 0o600
TOKEN_BYTES: Final = 32


class LockHeldError(SimplexError):
    """Another server runs on this data folder (exit code 1)."""

    code = "lock_held"

    def __init__(self, folder: Path, pid: int) -> None:
        self.folder = folder
        self.pid = pid
        super().__init__(f"Another server uses {folder} (PID {pid}).")


def _write_private(path: Path, text: str) -> None:
    """Write a file readable by its owner only (0600), replacing it atomically."""
    replace_private(path, text.encode("utf-8"), error=OSError)


class DataFolder:
    """The files of one agent's data folder.

    Args:
        path: the folder, ``~/.simplex-mcp/NAME`` unless ``--data`` sets it.
        random_bytes: the random source for the token (``secrets.token_bytes``).
        is_running: whether a PID runs (for the stale-lock check).
        pid: this process's PID.
    """

    def __init__(
        self,
        path: Path,
        *,
        random_bytes: Callable[[int], bytes] = secrets.token_bytes,
        is_running: Callable[[int], bool] = pid_running,
        pid: int | None = None,
    ) -> None:
        self.path = path
        self._random_bytes = random_bytes
        self._is_running = is_running
        self._pid = os.getpid() if pid is None else pid
        self._locked = False

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
    def db_prefix(self) -> Path:
        """The prefix of the SimpleX databases: ``DIR/simplex`` (``simplex_chat.db``, ``simplex_agent.db``)."""
        return self.path / "simplex"

    def prepare(self) -> None:
        """Create the folder (and its parents) and set its mode to 0700, as at every start."""
        self.path.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
        if os.name != "nt":
            os.chmod(self.path, FOLDER_MODE)

    def acquire_lock(self) -> None:
        """Create ``DIR/lock`` exclusively with this PID; replace a lock whose PID is not running.

        Raises:
            LockHeldError: another running process holds the lock.
        """
        for _ in range(5):
            try:
                write_lock(self.lock_path, self._pid)
            except FileExistsError:
                pid = lock_holder(self.lock_path)
                if pid is not None and pid != self._pid and self._is_running(pid):
                    raise LockHeldError(self.path, pid) from None
                with contextlib.suppress(FileNotFoundError):
                    self.lock_path.unlink()
                continue
            self._locked = True
            return
        raise OSError(errno.EEXIST, "could not create the lock", str(self.lock_path))

    def release_lock(self) -> None:
        """Remove ``DIR/lock`` if this process created it."""
        if self._locked:
            with contextlib.suppress(FileNotFoundError):
                self.lock_path.unlink()
            self._locked = False

    def token(self, *, new: bool = False) -> str:
        """The bearer token: read from ``DIR/token``, created when missing or when ``new``.

        The token is 32 random bytes in base64url without padding (43 characters).
        """
        if not new:
            try:
                existing = self.token_path.read_text(encoding="ascii").strip()
            except (FileNotFoundError, UnicodeDecodeError):
                existing = ""
            if len(existing) >= 43 and all(c.isalnum() or c in "-_" for c in existing):
                if os.name != "nt":
                    os.chmod(self.token_path, FILE_MODE)
                return existing
        token = (
            base64.urlsafe_b64encode(self._random_bytes(TOKEN_BYTES)).rstrip(b"=").decode("ascii")
        )
        _write_private(self.token_path, token + "\n")
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
