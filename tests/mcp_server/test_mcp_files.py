"""The data folder: modes, token, headers.json, server.json and the lock."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

import pytest

from simplex_protocols.mcp_server.files import DataFolder, LockHeldError, pid_running


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_folder_is_created_0700_and_set_again_at_every_start(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path / "a" / "my-agent")
    folder.prepare()
    assert mode(folder.path) == 0o700
    os.chmod(folder.path, 0o755)
    folder.prepare()
    assert mode(folder.path) == 0o700


def test_token_is_32_random_bytes_base64url_0600_and_kept(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path, random_bytes=lambda n: b"\xfb" * n)
    token = folder.token()
    assert token == base64.urlsafe_b64encode(b"\xfb" * 32).decode().rstrip("=")
    assert "-" in token and "_" in token  # the URL-safe alphabet
    assert len(token) == 43
    assert mode(folder.token_path) == 0o600
    assert DataFolder(tmp_path, random_bytes=lambda n: b"\x00" * n).token() == token


def test_new_token_replaces_it(tmp_path: Path) -> None:
    DataFolder(tmp_path, random_bytes=lambda n: b"\x01" * n).token()
    new = DataFolder(tmp_path, random_bytes=lambda n: b"\x02" * n).token(new=True)
    assert new == DataFolder(tmp_path).token()
    assert new != DataFolder(tmp_path, random_bytes=lambda n: b"\x01" * n).token(new=True)


def test_headers_json_carries_the_bearer_token(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path)
    token = folder.token()
    folder.write_headers(token)
    assert json.loads(folder.headers_path.read_text()) == {"Authorization": f"Bearer {token}"}
    assert mode(folder.headers_path) == 0o600


def test_server_json(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path)
    folder.write_server("my-agent", 5226, 23)
    assert json.loads(folder.server_path.read_text()) == {
        "name": "my-agent",
        "port": 5226,
        "expireHours": 23,
    }
    assert mode(folder.server_path) == 0o600
    assert folder.read_server() == {"name": "my-agent", "port": 5226, "expireHours": 23}
    assert DataFolder(tmp_path / "none").read_server() is None


def test_lock_is_created_exclusively_with_the_pid(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path, pid=1234)
    folder.acquire_lock()
    assert folder.lock_path.read_text() == "1234\n"
    assert mode(folder.lock_path) == 0o600
    with pytest.raises(LockHeldError) as info:
        DataFolder(tmp_path, pid=999).acquire_lock()
    assert str(info.value) == f"Another server uses {tmp_path} (PID 1234)."
    folder.release_lock()
    assert not folder.lock_path.exists()


def test_a_stale_lock_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "lock").write_text("4321\n")
    folder = DataFolder(tmp_path, pid=1234)
    folder.acquire_lock()
    assert folder.lock_path.read_text() == "1234\n"


def test_a_garbled_lock_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "lock").write_text("not a pid")
    folder = DataFolder(tmp_path, pid=1234)
    folder.acquire_lock()
    assert folder.lock_path.read_text() == "1234\n"


def test_pid_running() -> None:
    assert pid_running(os.getpid())
    assert not pid_running(0)
    assert not pid_running(2**22 + 12345)


def test_custom_json_is_read_back_0600_and_a_bad_one_is_an_os_error(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path / "agent")
    folder.prepare()
    assert folder.read_custom() == {}
    values = {"#3": {"simplexMcp": {"control": True, "nextAction": 7}}}
    folder.write_custom(values)
    assert folder.read_custom() == values
    assert stat.S_IMODE(folder.custom_path.stat().st_mode) == 0o600
    for bad in ("[1]", '{"#3": 1}', "{"):
        folder.custom_path.write_text(bad)
        with pytest.raises(OSError, match=r"custom\.json"):
            folder.read_custom()
