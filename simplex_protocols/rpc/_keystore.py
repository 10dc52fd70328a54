"""Requester signing keys on disk: one key per responder by default.

Spec "Signed requests": "All requests signed with one key are linkable to each other. A
requester SHOULD use a separate key for each responder" (RPC-SIG-5). :class:`KeyStore` keeps
one Ed25519 key per responder in a private folder and creates it on first use.

This is the one module of :mod:`simplex_protocols.rpc` that does file I/O. Its rules:

- the folder is created with mode 0700, and an existing folder that group or others can enter
  is refused;
- each key file is created with mode 0600 and never overwritten (written to a temporary file,
  then linked into place, which fails when the name exists);
- a key file that group or others can read is refused, as is a file that is not a key;
- file names are keyed hashes of the responder addresses (HMAC-SHA-256 with a random salt kept
  in the folder), so the folder lists no addresses and a known address cannot be tested
  against it without the salt.

A key file holds the ``sign_key=`` text of the key and a newline, so it can be passed to
``/_service_request ... sign_key=<key>`` as it is.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Final

from simplex_protocols.errors import KeyFileError, SignatureError

from ._signing import SigningKey

__all__ = ["KeyStore", "responder_id"]

_SALT_FILE: Final = "salt"
_SALT_BYTES: Final = 32
_KEY_SUFFIX: Final = ".key"
_ID_HEX_CHARS: Final = 32
_MAX_KEY_FILE_BYTES: Final = 4096


def responder_id(address: str, salt: bytes) -> str:
    """A stable name for a responder: hex of HMAC-SHA-256(salt, address), 32 characters.

    The address is used as written, apart from surrounding whitespace: use one form of each
    responder's address (its short link, or its SimpleX name) consistently, since two forms of
    one address give two IDs and two keys.
    """
    digest = hmac.new(salt, address.strip().encode("utf-8"), hashlib.sha256).hexdigest()
    return digest[:_ID_HEX_CHARS]


def _check_private(path: Path, st: os.stat_result, *, folder: bool) -> None:
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        what = "folder" if folder else "key file"
        raise KeyFileError(
            errno.EPERM,
            f"the {what} is accessible to group or others (mode {stat.S_IMODE(st.st_mode):o}); "
            f"run chmod {'700' if folder else '600'} on it",
            str(path),
        )


class KeyStore:
    """A folder of requester signing keys, one per responder.

    Args:
        folder: where the keys live. Created with mode 0700 when missing.
        random_bytes: randomness for new keys and the salt, ``os.urandom`` by default.

    All methods raise :class:`~simplex_protocols.errors.KeyFileError` (an ``OSError`` whose
    ``errno`` and ``filename`` say what and where) when the folder or a file is unsafe,
    unreadable or malformed; the store stays usable for other responders.
    """

    def __init__(
        self, folder: str | os.PathLike[str], *, random_bytes: Callable[[int], bytes] | None = None
    ) -> None:
        self._folder = Path(folder)
        self._random = os.urandom if random_bytes is None else random_bytes
        self._salt: bytes | None = None

    @property
    def folder(self) -> Path:
        """The folder of the store."""
        return self._folder

    def _ensure_folder(self) -> None:
        try:
            self._folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = self._folder.stat()
        except OSError as exc:
            raise KeyFileError(
                exc.errno, f"cannot use the key folder: {exc.strerror}", str(self._folder)
            ) from exc
        if not stat.S_ISDIR(st.st_mode):
            raise KeyFileError(errno.ENOTDIR, "the key folder is not a folder", str(self._folder))
        _check_private(self._folder, st, folder=True)

    def _read_private(self, path: Path, limit: int) -> bytes:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            raise KeyFileError(exc.errno, f"cannot open: {exc.strerror}", str(path)) from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise KeyFileError(errno.EINVAL, "not a regular file", str(path))
            _check_private(path, st, folder=False)
            data = os.read(fd, limit + 1)
        finally:
            os.close(fd)
        if len(data) > limit:
            raise KeyFileError(errno.EFBIG, "the file is too large to be a key file", str(path))
        return data

    def _create_private(self, path: Path, data: bytes) -> None:
        """Write ``data`` to ``path`` with mode 0600; never replace an existing file."""
        temp = path.with_name(f".{path.name}.{self._random(8).hex()}.tmp")
        try:
            fd = os.open(
                temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
            )
        except OSError as exc:
            raise KeyFileError(exc.errno, f"cannot create: {exc.strerror}", str(temp)) from exc
        try:
            try:
                os.fchmod(fd, 0o600)
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(temp, path)
            except FileExistsError:
                raise KeyFileError(
                    errno.EEXIST, "the file exists; refusing to overwrite it", str(path)
                ) from None
            except OSError as exc:
                raise KeyFileError(exc.errno, f"cannot create: {exc.strerror}", str(path)) from exc
        finally:
            temp.unlink(missing_ok=True)

    def _salt_bytes(self) -> bytes:
        if self._salt is not None:
            return self._salt
        self._ensure_folder()
        path = self._folder / _SALT_FILE
        if not path.exists():
            try:
                self._create_private(path, self._random(_SALT_BYTES).hex().encode("ascii") + b"\n")
            except KeyFileError as exc:
                if exc.errno != errno.EEXIST:  # another process made it first: use theirs
                    raise
        text = self._read_private(path, 256).decode("ascii", "replace").strip()
        try:
            salt = bytes.fromhex(text)
        except ValueError:
            salt = b""
        if len(salt) != _SALT_BYTES:
            raise KeyFileError(errno.EINVAL, "the salt file is malformed", str(path))
        self._salt = salt
        return salt

    def responder_id(self, address: str) -> str:
        """This store's name for a responder address (see :func:`responder_id`)."""
        return responder_id(address, self._salt_bytes())

    def path_for(self, address: str) -> Path:
        """The key file of a responder (which may not exist yet)."""
        return self._folder / f"{self.responder_id(address)}{_KEY_SUFFIX}"

    def key_for(self, address: str) -> SigningKey:
        """The signing key for a responder, created on first use (RPC-SIG-5).

        Raises:
            KeyFileError: the folder or the key file is unsafe or malformed.
        """
        path = self.path_for(address)
        if not path.exists():
            key = SigningKey.generate(self._random)
            try:
                self._create_private(path, key.to_sign_key().encode("ascii") + b"\n")
            except KeyFileError as exc:
                if exc.errno != errno.EEXIST:
                    raise
            else:
                return key
        return self.load(path)

    def load(self, path: str | os.PathLike[str]) -> SigningKey:
        """Read one key file.

        Raises:
            KeyFileError: the file is missing, readable by group or others, not a regular file,
                or does not hold a key.
        """
        path = Path(path)
        data = self._read_private(path, _MAX_KEY_FILE_BYTES)
        try:
            return SigningKey.from_sign_key(data.decode("ascii").strip())
        except (UnicodeDecodeError, SignatureError):
            raise KeyFileError(
                errno.EINVAL, "the file does not hold a signing key", str(path)
            ) from None

    def save(self, address: str, key: SigningKey) -> Path:
        """Store an existing key for a responder.

        Raises:
            KeyFileError: the responder already has a key file (it is never overwritten), or the
                folder is unsafe.
        """
        path = self.path_for(address)
        self._create_private(path, key.to_sign_key().encode("ascii") + b"\n")
        return path
