"""Files only their owner may read: private folders, private files and lock files.

One set of rules for every secret the toolkit keeps on disk (requester signing keys, the MCP
request-state secret, a bot's data folder, the MCP server's data folder):

- a private folder is created with mode 0700 (missing parents with the default mode), and one
  that group or others can enter is refused;
- a private file is created with mode 0600, either never overwritten (:func:`create_private`:
  written to a temporary file, then linked into place, which fails when the name exists) or
  replaced whole (:func:`replace_private`: a temporary file renamed over it);
- reading one refuses a file that is not a regular file (symbolic links are not followed),
  that group or others can access, or that is larger than the caller expects;
- a lock file holds the PID of the process that created it exclusively.

Every failure raises the caller's own ``OSError`` subclass (``error(errno, message, filename)``,
for example :class:`~simplex_protocols.errors.KeyFileError`), so each caller keeps its error type.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Final

__all__ = [
    "ErrorFactory",
    "check_private",
    "create_private",
    "ensure_private_folder",
    "lock_holder",
    "pid_running",
    "read_private",
    "replace_private",
    "write_lock",
]

#: Builds the error to raise from ``(errno, message, filename)``: an ``OSError`` subclass.
ErrorFactory = Callable[[int | None, str, str], OSError]

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_MAX_PID_DIGITS: Final = 10


def check_private(path: Path, st: os.stat_result, *, what: str, error: ErrorFactory) -> None:
    """Refuse a folder or file (``st`` is its status) that group or others can access.

    Raises:
        error: ``errno.EPERM``, naming ``what`` and the ``chmod`` that fixes it.
    """
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        fix = "700" if stat.S_ISDIR(st.st_mode) else "600"
        raise error(
            errno.EPERM,
            f"the {what} is accessible to group or others (mode {stat.S_IMODE(st.st_mode):o}); "
            f"run chmod {fix} on it",
            str(path),
        )


def ensure_private_folder(
    path: Path, *, what: str, error: ErrorFactory, follow_symlinks: bool = True
) -> None:
    """Create a folder with mode 0700 (and any missing parents) or check an existing one.

    Args:
        path: the folder.
        what: its name in error messages ("key folder").
        error: the error to raise.
        follow_symlinks: whether a symbolic link to a folder is accepted.

    Raises:
        error: the folder cannot be created or read, is not a folder, or group or others can
            enter it.
    """
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(path, follow_symlinks=follow_symlinks)
    except OSError as exc:
        raise error(exc.errno, f"cannot use the {what}: {exc.strerror}", str(path)) from exc
    if not stat.S_ISDIR(st.st_mode):
        raise error(errno.ENOTDIR, f"the {what} is not a folder", str(path))
    check_private(path, st, what=what, error=error)


def read_private(path: Path, limit: int, *, what: str, error: ErrorFactory) -> bytes:
    """The contents of a private file of at most ``limit`` bytes.

    Raises:
        error: the file cannot be opened (``errno`` as the system gives it, ``ENOENT`` when it
            is missing), is not a regular file or is a symbolic link, is accessible to group
            or others, or is larger than ``limit`` (``errno.EFBIG``).
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError as exc:
        raise error(exc.errno, f"cannot open: {exc.strerror}", str(path)) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(errno.EINVAL, "not a regular file", str(path))
        check_private(path, st, what=what, error=error)
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise error(errno.EFBIG, f"the file is too large to be a {what}", str(path))
    return data


def _fill(fd: int, data: bytes) -> None:
    """Write ``data`` to a new file's descriptor with mode 0600, flush it to disk, close it."""
    try:
        os.fchmod(fd, 0o600)  # the umask may have taken bits off, never added them
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def create_private(
    path: Path,
    data: bytes,
    *,
    random_bytes: Callable[[int], bytes],
    error: ErrorFactory,
    exist_ok: bool = False,
) -> bool:
    """Write ``data`` to a new file ``path`` with mode 0600; never replace an existing file.

    The data goes to a temporary file first, which is then linked into place, so the file
    appears whole or not at all, and of two processes creating it at once one wins.

    Args:
        random_bytes: names the temporary file.
        exist_ok: an existing file (another process created it first) is not an error.

    Returns:
        Whether the file was created (``False`` only with ``exist_ok``).

    Raises:
        error: ``errno.EEXIST`` when the file exists and not ``exist_ok``; otherwise the
            system's ``errno``.
    """
    temp = path.with_name(f".{path.name}.{random_bytes(8).hex()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    except OSError as exc:
        raise error(exc.errno, f"cannot create: {exc.strerror}", str(temp)) from exc
    try:
        _fill(fd, data)
        os.link(temp, path)
    except FileExistsError:
        if exist_ok:
            return False
        raise error(errno.EEXIST, "the file exists; refusing to overwrite it", str(path)) from None
    except OSError as exc:
        raise error(exc.errno, f"cannot create: {exc.strerror}", str(path)) from exc
    finally:
        temp.unlink(missing_ok=True)
    return True


def replace_private(path: Path, data: bytes, *, error: ErrorFactory) -> None:
    """Write ``data`` to ``path`` with mode 0600, replacing the file whole (a temporary file
    renamed into place, so a reader sees the old contents or the new, never a part).

    Raises:
        error: the file cannot be written (the system's ``errno``).
    """
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        _fill(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, 0o600), data)
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise error(exc.errno, f"cannot write: {exc.strerror}", str(path)) from exc


def write_lock(path: Path, pid: int) -> None:
    """Create the lock file ``path`` (mode 0600) holding ``pid``.

    Raises:
        FileExistsError: the lock exists (see :func:`lock_holder`).
        OSError: it cannot be created.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        os.write(fd, f"{pid}\n".encode("ascii"))
    finally:
        os.close(fd)


def lock_holder(path: Path) -> int | None:
    """The PID in a lock file, or ``None`` when it is missing, unreadable or holds no PID."""
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and len(text) <= _MAX_PID_DIGITS else None


def pid_running(pid: int) -> bool:
    """Whether a process with this PID runs (signal 0; one of another user's counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True
