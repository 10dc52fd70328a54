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
  :func:`read_own` refuses one that another user owns, and sets its mode to 0600 through the
  open descriptor, never through a path a link could redirect;
- a lock file holds the PID of the process that created it exclusively (:func:`write_lock`),
  or of the process that holds an OS lock on it (:func:`take_lock`: ``flock``, which the system
  releases when the process ends however it ends, so a crash leaves nothing to clean up and a
  PID reused by another process blocks nothing).

Every failure raises the caller's own ``OSError`` subclass (``error(errno, message, filename)``,
for example :class:`~simplex_protocols.errors.KeyFileError`), so each caller keeps its error type.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Final

__all__ = [
    "ErrorFactory",
    "HeldLock",
    "check_private",
    "create_private",
    "ensure_private_folder",
    "lock_holder",
    "pid_running",
    "read_own",
    "read_private",
    "replace_private",
    "take_lock",
]

#: Builds the error to raise from ``(errno, message, filename)``: an ``OSError`` subclass.
ErrorFactory = Callable[[int | None, str, str], OSError]

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
# A FIFO put in a file's place would block a plain open for ever.
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
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


def read_own(path: Path, limit: int, *, what: str, error: ErrorFactory) -> bytes | None:
    """The contents of a file of this user's, at most ``limit`` bytes; its mode set to 0600.

    The file is opened without following a symbolic link and checked through the descriptor
    (a regular file, owned by this user), and its mode is set on the descriptor, so nothing
    another user placed at the path is read or has its mode changed.

    Returns:
        The contents, or ``None`` when the file does not exist.

    Raises:
        error: the path is a symbolic link (``ELOOP``), not a regular file (``EINVAL``), owned
            by another user (``EPERM``), larger than ``limit`` (``EFBIG``), or cannot be opened
            or read (the system's ``errno``).
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(errno.ELOOP, f"the {what} is a symbolic link", str(path)) from exc
        raise error(exc.errno, f"cannot open the {what}: {exc.strerror}", str(path)) from exc
    problem: tuple[int, str] | None = None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            problem = (errno.EINVAL, f"the {what} is not a regular file")
        elif hasattr(os, "getuid") and st.st_uid != os.getuid():
            problem = (errno.EPERM, f"the {what} belongs to another user (uid {st.st_uid})")
        else:
            if stat.S_IMODE(st.st_mode) != 0o600:
                os.fchmod(fd, 0o600)
            data = os.read(fd, limit + 1)
    except OSError as exc:
        raise error(exc.errno, f"cannot read the {what}: {exc.strerror}", str(path)) from exc
    finally:
        os.close(fd)
    if problem is not None:
        raise error(problem[0], problem[1], str(path))
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


class HeldLock:
    """An OS lock (``flock``) held on a lock file; the system drops it when the process ends.

    Attributes:
        path: the lock file.
    """

    __slots__ = ("_fd", "path")

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        """Remove the lock file and drop the lock (once; later calls do nothing).

        The file goes first, while the lock is still held: a process that opened it before
        finds it gone once it gets the lock, and takes the new file instead (:func:`take_lock`).
        """
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            if _same_file(self.path, os.fstat(self._fd)):
                self.path.unlink()
        os.close(self._fd)
        self._fd = None


def _same_file(path: Path, st: os.stat_result) -> bool:
    try:
        now = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)


def take_lock(path: Path, pid: int, *, error: ErrorFactory) -> HeldLock | None:
    """Take the OS lock on ``path`` (created with mode 0600) and write ``pid`` into it.

    The lock is ``flock(LOCK_EX | LOCK_NB)`` on the open file, which the system holds until
    the descriptor closes, so it ends with the process whatever ends it: a lock file left by a
    crash, or naming a PID that another process now has, blocks nothing.

    Returns:
        The held lock, or ``None`` when another process holds it (:func:`lock_holder` reads
        its PID).

    Raises:
        error: the lock file is a symbolic link or not a regular file, or cannot be created,
            locked or written (the system's ``errno``).
    """
    for _ in range(10):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o600)
        except OSError as exc:
            reason = "is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
            raise error(exc.errno, f"cannot open the lock file: {reason}", str(path)) from exc
        try:
            st = os.fstat(fd)
            regular = stat.S_ISREG(st.st_mode)
            if regular:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except OSError as exc:
            os.close(fd)
            raise error(exc.errno, f"cannot lock: {exc.strerror}", str(path)) from exc
        if not regular:
            os.close(fd)
            raise error(errno.EINVAL, "the lock file is not a regular file", str(path))
        if not _same_file(path, st):
            # its holder removed it while we opened it: lock the file now at the path
            os.close(fd)
            continue
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{pid}\n".encode("ascii"), 0)
            os.fchmod(fd, 0o600)
        except OSError as exc:
            os.close(fd)
            raise error(
                exc.errno, f"cannot write the lock file: {exc.strerror}", str(path)
            ) from exc
        return HeldLock(path, fd)
    raise error(errno.EAGAIN, "the lock file keeps being replaced", str(path))


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
