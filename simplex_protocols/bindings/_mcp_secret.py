"""A secret kept in a private file: the key that seals MCP ``requestState`` across restarts.

The SDK seals each multi-round-trip ``requestState`` with AES-256-GCM under a key derived from
an operator secret (``RequestStateSecurity(keys=[...])``). A random per-process key would make
every state minted before a restart unusable after it, so a bot keeps its secret in a file:
:func:`load_or_create_secret` reads it, or creates it on first use.

Rules: the file holds the secret as hex and a newline; it is created with mode 0600 and never
overwritten (written to a temporary file, then linked into place, so two processes starting at
once end up with one secret); a file that group or others can access, that is not a regular
file, or that holds fewer than 32 bytes of secret is refused.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

from simplex_protocols._private_files import create_private, read_private
from simplex_protocols.errors import KeyFileError

__all__ = ["MIN_SECRET_BYTES", "load_or_create_secret"]

#: The SDK's lower bound for a request-state key.
MIN_SECRET_BYTES: Final = 32
_MAX_FILE_BYTES: Final = 4096


def _read(path: Path) -> bytes:
    data = read_private(path, _MAX_FILE_BYTES, what="secret file", error=KeyFileError)
    try:
        secret = bytes.fromhex(data.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        raise KeyFileError(
            errno.EINVAL, "the file does not hold a hex secret", str(path), code="malformed"
        ) from None
    if len(secret) < MIN_SECRET_BYTES:
        raise KeyFileError(
            errno.EINVAL,
            f"the secret is {len(secret)} bytes; at least {MIN_SECRET_BYTES} are needed",
            str(path),
            code="malformed",
        )
    return secret


def load_or_create_secret(
    path: str | os.PathLike[str],
    *,
    nbytes: int = MIN_SECRET_BYTES,
    random_bytes: Callable[[int], bytes] | None = None,
) -> bytes:
    """Read the secret in ``path``, creating the file with a new random secret when missing.

    Pass the result to ``MCPBinding(request_state_keys=[secret])`` so that a ``requestState``
    minted before a restart is still accepted after it. To rotate, create a new file and pass
    ``[new, old]`` for one state lifetime (10 minutes by default), then ``[new]``.

    Args:
        path: the secret file. Missing parent folders are created with mode 0700.
        nbytes: the size of a new secret (at least 32).
        random_bytes: randomness for a new secret, ``os.urandom`` by default.

    Returns:
        The secret (``nbytes`` bytes for a new file; whatever the file holds otherwise).

    Raises:
        KeyFileError: the file is accessible to group or others (``code``
            ``unsafe_permissions``), is not a regular file or does not hold a hex secret of at
            least 32 bytes (``malformed``), or cannot be read or created (an ``OSError`` whose
            ``errno`` and ``filename`` say what and where).
        ValueError: ``nbytes`` is below 32.
    """
    if nbytes < MIN_SECRET_BYTES:
        raise ValueError(f"a request-state secret needs at least {MIN_SECRET_BYTES} bytes")
    rand = os.urandom if random_bytes is None else random_bytes
    path = Path(path)
    if not path.exists():
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise KeyFileError(
                exc.errno, f"cannot create the folder: {exc.strerror}", str(path.parent)
            ) from exc
        secret = rand(nbytes)
        if len(secret) != nbytes:
            raise ValueError("random_bytes returned the wrong number of bytes")
        # exist_ok: another process created it first, and its secret is the one
        create_private(
            path,
            secret.hex().encode("ascii") + b"\n",
            random_bytes=rand,
            error=KeyFileError,
            exist_ok=True,
        )
    return _read(path)
