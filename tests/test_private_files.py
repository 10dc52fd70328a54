"""Private folders, private files and lock files (``simplex_protocols._private_files``)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from simplex_protocols._private_files import (
    check_private,
    create_private,
    ensure_private_folder,
    lock_holder,
    pid_running,
    read_private,
    replace_private,
    take_lock,
)
from simplex_protocols.errors import DataFolderError, KeyFileError


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode)


# ---------------------------------------------------------------------------- folders


def test_a_new_folder_is_created_0700_with_its_parents(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"
    ensure_private_folder(folder, what="key folder", error=KeyFileError)
    assert mode(folder) == 0o700
    ensure_private_folder(folder, what="key folder", error=KeyFileError)  # again: fine


def test_a_folder_group_or_others_can_enter_is_refused_with_the_callers_error(
    tmp_path: Path,
) -> None:
    os.chmod(tmp_path, 0o750)
    with pytest.raises(DataFolderError) as raised:
        ensure_private_folder(tmp_path, what="data folder", error=DataFolderError)
    assert raised.value.errno == errno.EPERM
    assert raised.value.filename == str(tmp_path)
    assert raised.value.strerror == (
        "the data folder is accessible to group or others (mode 750); run chmod 700 on it"
    )


def test_a_file_where_the_folder_should_be_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_bytes(b"")
    with pytest.raises(KeyFileError) as raised:
        ensure_private_folder(path, what="key folder", error=KeyFileError)
    assert raised.value.errno == errno.EEXIST  # mkdir says so before the stat does
    assert raised.value.strerror.startswith("cannot use the key folder: ")


def test_a_link_to_a_folder_is_followed_only_when_asked(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    os.chmod(target, 0o700)
    link = tmp_path / "link"
    link.symlink_to(target)
    ensure_private_folder(link, what="key folder", error=KeyFileError)
    with pytest.raises(DataFolderError) as raised:
        ensure_private_folder(
            link, what="data folder", error=DataFolderError, follow_symlinks=False
        )
    assert raised.value.errno == errno.ENOTDIR


def test_check_private_names_the_chmod_that_fixes_a_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x")
    os.chmod(path, 0o604)
    with pytest.raises(KeyFileError) as raised:
        check_private(path, path.stat(), what="key file", error=KeyFileError)
    assert raised.value.errno == errno.EPERM
    assert "run chmod 600 on it" in str(raised.value)
    os.chmod(path, 0o600)
    check_private(path, path.stat(), what="key file", error=KeyFileError)


# ---------------------------------------------------------------------------- reading


def test_read_private_returns_the_contents(tmp_path: Path) -> None:
    path = tmp_path / "f"
    create_private(path, b"secret\n", random_bytes=os.urandom, error=KeyFileError)
    assert read_private(path, 7, what="key file", error=KeyFileError) == b"secret\n"


@pytest.mark.parametrize("file_mode", [0o640, 0o604, 0o660, 0o611])
def test_read_private_refuses_a_file_group_or_others_can_access(
    tmp_path: Path, file_mode: int
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x")
    os.chmod(path, file_mode)
    with pytest.raises(KeyFileError) as raised:
        read_private(path, 10, what="secret file", error=KeyFileError)
    assert raised.value.errno == errno.EPERM
    assert "the secret file is accessible to group or others" in str(raised.value)


def test_read_private_of_a_missing_file_is_enoent(tmp_path: Path) -> None:
    with pytest.raises(DataFolderError) as raised:
        read_private(tmp_path / "missing", 10, what="settings file", error=DataFolderError)
    assert raised.value.errno == errno.ENOENT
    assert raised.value.filename == str(tmp_path / "missing")


def test_read_private_does_not_follow_a_symbolic_link(tmp_path: Path) -> None:
    target = tmp_path / "target"
    create_private(target, b"x", random_bytes=os.urandom, error=KeyFileError)
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(KeyFileError) as raised:
        read_private(link, 10, what="key file", error=KeyFileError)
    assert raised.value.errno == errno.ELOOP


def test_read_private_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir(mode=0o700)
    with pytest.raises(KeyFileError) as raised:
        read_private(folder, 10, what="key file", error=KeyFileError)
    assert raised.value.errno == errno.EINVAL


def test_read_private_refuses_a_file_over_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    create_private(path, b"12345", random_bytes=os.urandom, error=KeyFileError)
    assert read_private(path, 5, what="key file", error=KeyFileError) == b"12345"
    with pytest.raises(KeyFileError) as raised:
        read_private(path, 4, what="key file", error=KeyFileError)
    assert raised.value.errno == errno.EFBIG
    assert raised.value.strerror == "the file is too large to be a key file"


# ---------------------------------------------------------------------------- writing


def test_create_private_writes_mode_0600_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "f"
    old = os.umask(0o000)
    try:
        assert create_private(path, b"data", random_bytes=os.urandom, error=KeyFileError)
    finally:
        os.umask(old)
    assert mode(path) == 0o600
    assert path.read_bytes() == b"data"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]  # no temporary file left


def test_create_private_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "f"
    create_private(path, b"first", random_bytes=os.urandom, error=KeyFileError)
    with pytest.raises(KeyFileError) as raised:
        create_private(path, b"second", random_bytes=os.urandom, error=KeyFileError)
    assert raised.value.errno == errno.EEXIST
    assert raised.value.filename == str(path)
    assert path.read_bytes() == b"first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_create_private_with_exist_ok_keeps_the_first_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    assert create_private(path, b"first", random_bytes=os.urandom, error=KeyFileError)
    assert not create_private(
        path, b"second", random_bytes=os.urandom, error=KeyFileError, exist_ok=True
    )
    assert path.read_bytes() == b"first"


def test_create_private_names_its_temporary_file_from_random_bytes(tmp_path: Path) -> None:
    path = tmp_path / "f"
    temp = tmp_path / f".f.{bytes(8).hex()}.tmp"
    temp.write_bytes(b"someone else's")
    with pytest.raises(KeyFileError) as raised:
        create_private(path, b"x", random_bytes=bytes, error=KeyFileError)
    assert raised.value.errno == errno.EEXIST
    assert raised.value.filename == str(temp)
    assert temp.read_bytes() == b"someone else's"  # not ours to remove
    assert not path.exists()


def test_create_private_in_a_missing_folder_raises_the_callers_error(tmp_path: Path) -> None:
    with pytest.raises(DataFolderError) as raised:
        create_private(
            tmp_path / "missing" / "f", b"x", random_bytes=os.urandom, error=DataFolderError
        )
    assert raised.value.errno == errno.ENOENT


def test_replace_private_replaces_the_file_whole_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"old contents")
    os.chmod(path, 0o644)
    replace_private(path, b"new", error=DataFolderError)
    assert path.read_bytes() == b"new"
    assert mode(path) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_replace_private_failure_raises_the_callers_error(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "f"
    with pytest.raises(DataFolderError) as raised:
        replace_private(path, b"x", error=DataFolderError)
    assert raised.value.errno == errno.ENOENT
    assert raised.value.filename == str(path)
    with pytest.raises(FileNotFoundError):  # a plain OSError becomes its errno's subclass
        replace_private(path, b"x", error=OSError)


# ---------------------------------------------------------------------------- locks


def test_a_lock_holds_the_pid_and_is_taken_once(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    held = take_lock(path, 4242, error=OSError)
    assert held is not None
    assert path.read_text() == "4242\n"
    assert mode(path) == 0o600
    assert lock_holder(path) == 4242
    assert take_lock(path, 1, error=OSError) is None  # held: another open file cannot take it
    assert lock_holder(path) == 4242
    held.release()
    assert not path.exists()
    again = take_lock(path, 7, error=OSError)
    assert again is not None and lock_holder(path) == 7
    again.release()


@pytest.mark.parametrize("text", ["", "abc\n", "-5\n", "12345678901\n", "\xff"])
def test_a_lock_without_a_pid_has_no_holder(tmp_path: Path, text: str) -> None:
    path = tmp_path / "lock"
    path.write_text(text, encoding="latin-1")
    assert lock_holder(path) is None


def test_a_missing_lock_has_no_holder(tmp_path: Path) -> None:
    assert lock_holder(tmp_path / "lock") is None


def test_pid_running() -> None:
    assert pid_running(os.getpid())
    assert not pid_running(0)
    assert not pid_running(-1)
    assert not pid_running(2**22 + 1)  # above Linux's highest PID
