"""KeyFileError carries a stable ``code`` like every error a caller branches on, and stays the
OSError it was (errno, strerror, filename, the builtin's catch)."""

from __future__ import annotations

import errno
import os
import pickle
from pathlib import Path

import pytest

from simplex_protocols.bindings.mcp import load_or_create_secret
from simplex_protocols.errors import KeyFileError, SimplexError
from simplex_protocols.rpc import KeyStore, SigningKey

ADDRESS = "https://smp12.simplex.im/a#" + "Q" * 42 + "A"


def test_the_code_is_a_keyword_and_the_oserror_arguments_are_unchanged() -> None:
    exc = KeyFileError(
        errno.EINVAL, "the file does not hold a signing key", "/k/x.key", code="malformed"
    )
    assert exc.code == "malformed"
    assert (exc.errno, exc.strerror, exc.filename) == (
        errno.EINVAL,
        "the file does not hold a signing key",
        "/k/x.key",
    )
    assert str(exc) == "[Errno 22] the file does not hold a signing key: '/k/x.key'"
    assert isinstance(exc, OSError) and isinstance(exc, SimplexError)
    with pytest.raises(OSError, match="signing key"):
        raise exc


@pytest.mark.parametrize(
    ("number", "code"),
    [
        (errno.ENOENT, "missing"),
        (errno.EEXIST, "exists"),
        (errno.EPERM, "unsafe_permissions"),
        (errno.EINVAL, "malformed"),
        (errno.EFBIG, "malformed"),
        (errno.ELOOP, "malformed"),
        (errno.ENOTDIR, "malformed"),
        (errno.EACCES, "unreadable"),
        (errno.EIO, "unusable"),
        (None, "unusable"),
    ],
)
def test_without_a_code_it_follows_from_errno(number: int | None, code: str) -> None:
    exc = KeyFileError(number, "what happened", "/k") if number is not None else KeyFileError("x")
    assert exc.code == code


def test_the_code_survives_pickling() -> None:
    exc = KeyFileError(errno.EINVAL, "bad", "/k", code="unsafe_permissions")
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is KeyFileError
    assert (back.code, back.errno, back.filename) == ("unsafe_permissions", errno.EINVAL, "/k")


# The key store and the MCP request-state secret raise it with codes a caller can branch on.


@pytest.fixture
def store(tmp_path: Path) -> KeyStore:
    return KeyStore(tmp_path / "keys", random_bytes=os.urandom)


def test_key_store_codes(store: KeyStore, tmp_path: Path) -> None:
    with pytest.raises(KeyFileError) as missing:
        store.load(store.folder / "nope.key")
    assert missing.value.code == "missing"

    store.key_for(ADDRESS)
    with pytest.raises(KeyFileError) as exists:
        store.save(ADDRESS, SigningKey.from_seed(bytes(32)))
    assert exists.value.code == "exists"

    store.path_for(ADDRESS).chmod(0o644)
    with pytest.raises(KeyFileError) as unsafe:
        store.key_for(ADDRESS)
    assert unsafe.value.code == "unsafe_permissions"

    path = store.path_for(ADDRESS)
    path.chmod(0o600)
    path.write_text("not a key\n")
    with pytest.raises(KeyFileError) as malformed:
        store.key_for(ADDRESS)
    assert malformed.value.code == "malformed"


def test_request_state_secret_codes(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"zz\n")
    os.close(fd)
    with pytest.raises(KeyFileError) as malformed:
        load_or_create_secret(path)
    assert malformed.value.code == "malformed"
    path.write_text("00" * 8 + "\n")
    with pytest.raises(KeyFileError) as short:
        load_or_create_secret(path)
    assert short.value.code == "malformed"
    path.chmod(0o640)
    with pytest.raises(KeyFileError) as unsafe:
        load_or_create_secret(path)
    assert unsafe.value.code == "unsafe_permissions"
