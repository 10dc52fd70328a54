"""Key files: private modes, never overwritten, one key per responder (RPC-SIG-5)."""

from __future__ import annotations

import errno
import os
import random
import stat
from pathlib import Path

import pytest

from simplex_protocols import errors
from simplex_protocols.rpc import KeyStore, SigningKey
from simplex_protocols.rpc._keystore import responder_id

ADDRESS = "https://smp8.simplex.im/a#abcdefghijklmnopqrstuvwxyz0123456789"
OTHER = "simplex:/contact#/?v=2-7&smp=smp%3A%2F%2Fkey%40smp.example.com%2Fqueue"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def store(tmp_path: Path) -> KeyStore:
    return KeyStore(tmp_path / "keys", random_bytes=random.Random(1).randbytes)


@pytest.mark.requirement("RPC-SIG-5")
def test_key_for_creates_one_key_per_responder(store: KeyStore) -> None:
    first = store.key_for(ADDRESS)
    assert store.key_for(ADDRESS) == first
    assert store.key_for(" " + ADDRESS + "\n") == first
    assert store.key_for(OTHER) != first
    assert KeyStore(store.folder).key_for(ADDRESS) == first  # persisted


def test_folder_is_0700_and_files_0600(store: KeyStore) -> None:
    store.key_for(ADDRESS)
    assert _mode(store.folder) == 0o700
    files = sorted(store.folder.iterdir())
    assert [p.name for p in files if not p.name.endswith(".key")] == ["salt"]
    assert all(_mode(p) == 0o600 for p in files)


def test_folder_lists_no_addresses(store: KeyStore) -> None:
    store.key_for(ADDRESS)
    names = " ".join(p.name for p in store.folder.iterdir())
    contents = b" ".join(p.read_bytes() for p in store.folder.iterdir())
    for word in ("smp8", "simplex", "abcdefghij"):
        assert word not in names
        assert word.encode() not in contents


def test_responder_id_is_a_keyed_hash(store: KeyStore) -> None:
    salt = bytes(32)
    assert responder_id(ADDRESS, salt) == responder_id(ADDRESS, salt)
    assert responder_id(ADDRESS, salt) != responder_id(ADDRESS, bytes([1]) * 32)
    assert len(responder_id(ADDRESS, salt)) == 32
    assert store.path_for(ADDRESS).name == store.responder_id(ADDRESS) + ".key"


def test_key_file_holds_the_sign_key_text(store: KeyStore) -> None:
    key = store.key_for(ADDRESS)
    assert store.path_for(ADDRESS).read_text() == key.to_sign_key() + "\n"


def test_existing_key_file_is_never_overwritten(store: KeyStore) -> None:
    key = store.key_for(ADDRESS)
    with pytest.raises(errors.KeyFileError) as info:
        store.save(ADDRESS, SigningKey.from_seed(bytes(32)))
    assert info.value.errno == errno.EEXIST
    assert store.key_for(ADDRESS) == key
    assert [p for p in store.folder.iterdir() if p.name.endswith(".tmp")] == []


def test_save_stores_a_given_key(store: KeyStore) -> None:
    key = SigningKey.from_seed(bytes(32))
    path = store.save(OTHER, key)
    assert _mode(path) == 0o600
    assert store.key_for(OTHER) == key


def test_key_file_readable_by_others_is_refused(store: KeyStore) -> None:
    store.key_for(ADDRESS)
    path = store.path_for(ADDRESS)
    path.chmod(0o644)
    with pytest.raises(errors.KeyFileError) as info:
        store.key_for(ADDRESS)
    assert info.value.errno == errno.EPERM
    assert info.value.filename == str(path)


def test_folder_open_to_group_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o750)
    with pytest.raises(errors.KeyFileError) as info:
        KeyStore(folder).key_for(ADDRESS)
    assert info.value.errno == errno.EPERM


def test_malformed_key_file_is_refused(store: KeyStore) -> None:
    path = store.path_for(ADDRESS)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"not a key\n")
    os.close(fd)
    with pytest.raises(errors.KeyFileError) as info:
        store.key_for(ADDRESS)
    assert info.value.errno == errno.EINVAL


def test_missing_key_file_load_is_a_key_file_error(store: KeyStore) -> None:
    with pytest.raises(errors.KeyFileError) as info:
        store.load(store.folder / "nope.key")
    assert isinstance(info.value, OSError)


def test_folder_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(errors.KeyFileError):
        KeyStore(target).key_for(ADDRESS)


def test_malformed_salt_is_refused(store: KeyStore) -> None:
    store.key_for(ADDRESS)
    salt = store.folder / "salt"
    salt.chmod(0o600)
    salt.write_text("short\n")
    with pytest.raises(errors.KeyFileError):
        KeyStore(store.folder).key_for(ADDRESS)
