"""The lock, the token file and the embedded core at start (issue 13, items 7, 8 and 12)."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_sim import LogLines

from simplex_protocols.mcp_server.config import ServeOptions
from simplex_protocols.mcp_server.files import DataFolder, LockHeldError, TokenFileError
from simplex_protocols.mcp_server.serve import serve

HOLDER = """
import sys, time
from pathlib import Path
from simplex_protocols.mcp_server.files import DataFolder
DataFolder(Path(sys.argv[1])).acquire_lock()
print("locked", flush=True)
time.sleep(60)
"""


def start_holder(folder: Path) -> subprocess.Popen[str]:
    """A process that takes the folder's lock and keeps it until it is killed."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "locked\n"
    return child


# --------------------------------------------------------------------------------- item 7


def test_a_lock_naming_a_running_unrelated_process_blocks_no_start(tmp_path: Path) -> None:
    # A crashed server's PID, now another process's: the start must not wait for it.
    unrelated = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / "lock").write_text(f"{unrelated.pid}\n")
        folder = DataFolder(tmp_path, pid=1234)
        folder.acquire_lock()
        assert folder.lock_path.read_text() == "1234\n"
        assert stat.S_IMODE(folder.lock_path.stat().st_mode) == 0o600
        folder.release_lock()
        assert not folder.lock_path.exists()
    finally:
        unrelated.kill()
        unrelated.wait()


def test_the_lock_dies_with_its_holder_however_it_ends(tmp_path: Path) -> None:
    holder = start_holder(tmp_path)
    try:
        with pytest.raises(LockHeldError) as info:
            DataFolder(tmp_path).acquire_lock()
        assert str(info.value) == f"Another server uses {tmp_path} (PID {holder.pid})."
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # killed: its lock file stays, with its PID, and blocks nothing
    assert (tmp_path / "lock").read_text() == f"{holder.pid}\n"
    folder = DataFolder(tmp_path)
    folder.acquire_lock()
    assert folder.lock_path.read_text() == f"{os.getpid()}\n"
    folder.release_lock()


def test_a_lock_file_that_is_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep\n")
    (tmp_path / "lock").symlink_to(target)
    with pytest.raises(OSError) as info:
        DataFolder(tmp_path).acquire_lock()
    assert info.value.errno == errno.ELOOP
    assert target.read_text() == "keep\n"


# --------------------------------------------------------------------------------- item 8


def test_a_token_file_that_is_a_symbolic_link_is_refused_and_its_target_untouched(
    tmp_path: Path,
) -> None:
    target = tmp_path / "secret"
    target.write_text("A" * 43 + "\n")
    os.chmod(target, 0o644)
    folder = DataFolder(tmp_path / "agent")
    folder.prepare()
    folder.token_path.symlink_to(target)
    with pytest.raises(TokenFileError) as info:
        folder.token()
    assert info.value.errno == errno.ELOOP
    assert info.value.code == "token_file"
    assert str(info.value) == f"{folder.token_path}: the token file is a symbolic link"
    # not read through the link, and its mode not set through it
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_a_token_path_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path)
    folder.token_path.mkdir()
    with pytest.raises(TokenFileError) as info:
        folder.token()
    assert info.value.errno == errno.EINVAL
    os.rmdir(folder.token_path)
    os.mkfifo(folder.token_path)
    with pytest.raises(TokenFileError) as info:  # and opening it does not wait for a writer
        folder.token()
    assert info.value.errno == errno.EINVAL


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_token_file_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path)
    token = folder.token()
    os.chown(folder.token_path, 65534, 65534)
    with pytest.raises(TokenFileError) as info:
        folder.token()
    assert info.value.errno == errno.EPERM
    assert "belongs to another user (uid 65534)" in str(info.value)
    assert token not in str(info.value)


def test_a_token_file_of_ours_gets_mode_0600_and_is_kept(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path)
    token = folder.token()
    os.chmod(folder.token_path, 0o644)
    assert folder.token() == token
    assert stat.S_IMODE(folder.token_path.stat().st_mode) == 0o600


@pytest.mark.anyio
async def test_serve_with_a_linked_token_file_exits_1_with_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    folder.mkdir(mode=0o700)
    (folder / "token").symlink_to(tmp_path / "anything")
    log = LogLines()
    with anyio.fail_after(10):
        code = await serve(ServeOptions(name="my-agent", data=folder, port=0), log=log)
    assert code == 1
    assert log.errors == [
        f"Data folder {folder}: {folder / 'token'}: the token file is a symbolic link"
    ]
    assert not (folder / "lock").exists()


# -------------------------------------------------------------------------------- item 12


@pytest.mark.anyio
async def test_serve_with_the_embedded_core_does_not_download_libsimplex(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    native = pytest.importorskip("simplex_chat._native")
    monkeypatch.setattr(native, "_lib", None)
    monkeypatch.delenv("SIMPLEX_LIBS_DIR", raising=False)
    monkeypatch.setattr(native, "_cache_root", lambda: str(tmp_path / "cache"))
    downloads: list[Any] = []

    def fetch(*args: Any) -> None:
        downloads.append(args)
        raise OSError("no network in this test")

    # lib_for finds the library, or downloads it when it is missing
    monkeypatch.setattr(native, "lib_for", fetch)
    monkeypatch.setattr(native, "_download", fetch)
    log = LogLines()
    with anyio.fail_after(20):
        code = await serve(ServeOptions(name="my-agent", data=tmp_path / "agent", port=0), log=log)
    assert downloads == []
    assert code == 1
    assert len(log.errors) == 1
    assert log.errors[0].startswith("Chat core: ")
    assert "`python -m simplex_chat install`" in log.errors[0]
