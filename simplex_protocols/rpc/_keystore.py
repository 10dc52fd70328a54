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
from collections.abc import Callable
from pathlib import Path
from typing import Final

from simplex_protocols._private_files import create_private, ensure_private_folder, read_private
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

    def _read_private(self, path: Path, limit: int) -> bytes:
        return read_private(path, limit, what="key file", error=KeyFileError)

    def _create_private(self, path: Path, data: bytes, *, exist_ok: bool = False) -> bool:
        """Write ``data`` to ``path`` with mode 0600; never replace an existing file."""
        return create_private(
            path, data, random_bytes=self._random, error=KeyFileError, exist_ok=exist_ok
        )

    def _salt_bytes(self) -> bytes:
        if self._salt is not None:
            return self._salt
        ensure_private_folder(self._folder, what="key folder", error=KeyFileError)
        path = self._folder / _SALT_FILE
        if not path.exists():  # exist_ok: another process made it first, use theirs
            salt_hex = self._random(_SALT_BYTES).hex()
            self._create_private(path, salt_hex.encode("ascii") + b"\n", exist_ok=True)
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
            if self._create_private(path, key.to_sign_key().encode("ascii") + b"\n", exist_ok=True):
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
