"""NativeBackend: the unavailable path, and the frame mapping over a fake libsimplex C ABI.

libsimplex cannot be downloaded here, so the tests replace the library object that the
``simplex-chat`` package loads (``simplex_chat._native``) with a fake whose functions return
C strings exactly as the real ones do; the package's own ``simplex_chat.core`` code then runs
unchanged on top of it.
"""

from __future__ import annotations

import ctypes
import json
import queue
from pathlib import Path
from typing import Any

import anyio
import pytest

from simplex_protocols.core import ChatCore, NativeBackend, open_core
from simplex_protocols.errors import BackendUnavailableError, CoreConnectionError, CoreError

pytestmark = pytest.mark.anyio

native = pytest.importorskip("simplex_chat._native")


class FakeLib:
    """libsimplex's C ABI: char* results, an out-parameter for the controller."""

    def __init__(self, migrate_result: dict[str, Any] | None = None) -> None:
        self.keep: list[ctypes.Array[ctypes.c_char]] = []
        self.commands: list[str] = []
        self.answers: dict[str, str] = {}
        self.events: queue.Queue[str] = queue.Queue()
        self.migrate_result = migrate_result or {"type": "ok"}
        self.init_args: tuple[str, str, str] | None = None
        self.closed: list[int] = []

    def _c(self, text: str) -> int:
        buf = ctypes.create_string_buffer(text.encode())
        self.keep.append(buf)
        return ctypes.addressof(buf)

    def chat_migrate_init(self, path: bytes, key: bytes, confirm: bytes, ctrl_ref: Any) -> int:
        self.init_args = (path.decode(), key.decode(), confirm.decode())
        if self.migrate_result.get("type") == "ok":
            ctrl_ref._obj.value = 4242
        return self._c(json.dumps(self.migrate_result))

    def chat_send_cmd(self, ctrl: int, cmd: bytes) -> int:
        assert ctrl == 4242
        text = cmd.decode()
        self.commands.append(text)
        return self._c(self.answers.get(text, json.dumps({"result": {"type": "cmdOk"}})))

    def chat_recv_msg_wait(self, ctrl: int, wait_us: int) -> int:
        try:
            return self._c(self.events.get(timeout=wait_us / 1_000_000))
        except queue.Empty:
            return self._c("")

    def chat_close_store(self, ctrl: int) -> int:
        self.closed.append(ctrl)
        return self._c("")


class FakeLibc:
    def free(self, ptr: Any) -> None:  # buffers are owned by FakeLib.keep
        pass


@pytest.fixture
def fake_lib(monkeypatch: pytest.MonkeyPatch) -> FakeLib:
    lib = FakeLib()
    monkeypatch.setattr(native, "_lib", lib)
    monkeypatch.setattr(native, "_libc", FakeLibc())
    monkeypatch.setattr(native, "_backend", "sqlite")
    return lib


@pytest.fixture
def no_library(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No libsimplex loaded or cached, SIMPLEX_LIBS_DIR unset; downloads would fail loudly."""
    monkeypatch.setattr(native, "_lib", None)
    monkeypatch.delenv("SIMPLEX_LIBS_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def no_download(*args: Any) -> None:
        raise AssertionError("the backend must not download without allow_download")

    monkeypatch.setattr(native, "_download", no_download)
    return tmp_path


async def test_unavailable_library_says_how_to_get_it_and_what_else_to_use(
    no_library: Path,
) -> None:
    with anyio.fail_after(10), pytest.raises(BackendUnavailableError) as info:
        async with ChatCore(NativeBackend(str(no_library / "bot"))):
            pass
    message = str(info.value)
    assert "python -m simplex_chat install" in message
    assert "SIMPLEX_LIBS_DIR" in message
    assert "--core ws://127.0.0.1:5225" in message
    assert "simplex-chat -p 5225" in message
    assert "sim:USER" in message
    assert str(no_library / "cache" / "simplex-chat") in message
    assert isinstance(info.value, CoreConnectionError)


async def test_libs_dir_without_the_library_is_unavailable_and_names_the_folder(
    no_library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = no_library / "libs"
    folder.mkdir()
    monkeypatch.setenv("SIMPLEX_LIBS_DIR", str(folder))
    with anyio.fail_after(10), pytest.raises(BackendUnavailableError) as info:
        await NativeBackend("bot", allow_download=True).connect()
    assert f"SIMPLEX_LIBS_DIR={folder}" in str(info.value)


async def test_a_library_that_fails_to_load_is_unavailable(
    no_library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = no_library / "libs"
    folder.mkdir()
    (folder / native._libname()).write_bytes(b"not a shared object")
    monkeypatch.setenv("SIMPLEX_LIBS_DIR", str(folder))
    with (
        anyio.fail_after(10),
        pytest.raises(BackendUnavailableError, match="loading libsimplex failed") as info,
    ):
        await NativeBackend("bot").connect()
    assert isinstance(info.value.__cause__, OSError)


async def test_default_lib_core_is_unavailable_here_with_guidance(no_library: Path) -> None:
    core = open_core(None, environ={}, db_prefix=str(no_library / "simplex"))
    with anyio.fail_after(10), pytest.raises(BackendUnavailableError, match="simplex_chat install"):
        async with core:
            pass


async def test_results_errors_and_events_become_cli_frames(
    fake_lib: FakeLib, tmp_path: Path
) -> None:
    user = {"type": "activeUser", "user": {"userId": 1}}
    no_user = {"type": "error", "errorType": {"type": "noActiveUser"}}
    fake_lib.answers["/user"] = json.dumps({"result": user})
    fake_lib.answers["/_user 9"] = json.dumps({"error": no_user})
    backend = NativeBackend(str(tmp_path / "bot"), db_key="secret", poll_wait_s=0.01)
    async with ChatCore(backend) as core, core.events() as events:
        with anyio.fail_after(10):
            assert await core.command("/user") == user
            with pytest.raises(CoreError) as info:
                await core.command("/_user 9")
            assert info.value.chat_error == no_user
            assert info.value.response["type"] == "chatCmdError"
            assert await core.command("/_start main=on") == {"type": "cmdOk"}
            fake_lib.events.put(json.dumps({"result": {"type": "contactConnected", "new": 1}}))
            fake_lib.events.put(json.dumps({"error": no_user}))
            assert await events.__anext__() == {"type": "contactConnected", "new": 1}
            assert await events.__anext__() == {"type": "chatError", "chatError": no_user}
    assert fake_lib.init_args == (str(tmp_path / "bot"), "secret", "yesUp")
    assert fake_lib.commands == ["/user", "/_user 9", "/_start main=on"]
    assert fake_lib.closed == [4242]


async def test_migration_error_is_a_connection_error(fake_lib: FakeLib) -> None:
    fake_lib.migrate_result = {"type": "errorNotADatabase", "dbFile": "bot_chat.db"}
    with (
        anyio.fail_after(10),
        pytest.raises(CoreConnectionError, match="errorNotADatabase") as info,
    ):
        await NativeBackend("bot").connect()
    assert not isinstance(info.value, BackendUnavailableError)


async def test_invalid_library_output_fails_the_connection(fake_lib: FakeLib) -> None:
    fake_lib.answers["/bad"] = json.dumps({"neither": 1})
    backend = NativeBackend("bot", poll_wait_s=0.01)
    async with ChatCore(backend) as core:
        with anyio.fail_after(10):
            with pytest.raises(CoreConnectionError, match="invalid result"):
                await core.command("/bad")
            assert not core.connected


async def test_reconnect_reopens_the_store(fake_lib: FakeLib) -> None:
    backend = NativeBackend("bot", poll_wait_s=0.01)
    async with ChatCore(backend) as core:
        with anyio.fail_after(10):
            await core.reconnect()
            assert await core.command("/user") == {"type": "cmdOk"}
    assert fake_lib.closed == [4242, 4242]
