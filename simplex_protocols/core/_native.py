"""NativeBackend: the embedded SimpleX chat library (libsimplex) through ``simplex-chat``.

The official ``simplex-chat`` package loads libsimplex with ctypes and wraps its C functions
(``chat_migrate_init``, ``chat_send_cmd``, ``chat_recv_msg_wait``, ``chat_close_store``) in
``simplex_chat.core``. Those return ``{"result": ...}`` or ``{"error": ...}`` per call, with
no correlation IDs; this backend turns them into the CLI's frame shapes so that
:class:`~simplex_protocols.core.ChatCore` treats every backend alike:

=====================================  =====================================================
library                                frame
=====================================  =====================================================
command result ``{"result": R}``       ``{"corrId": C, "resp": R}``
command error ``{"error": E}``         ``{"corrId": C, "resp": {"type": "chatCmdError", "chatError": E}}``
event ``{"result": V}``                ``{"resp": V}``
event error ``{"error": E}``           ``{"resp": {"type": "chatError", "chatError": E}}``
=====================================  =====================================================

The library is found where the package finds it: in the folder named by ``SIMPLEX_LIBS_DIR``,
or in the package's cache, where ``python -m simplex_chat install`` downloads it. This backend
does not download it unless asked to (``allow_download=True``): fetching a native library is
left to an explicit step.

The ``simplex-chat`` package runs the library's blocking calls in threads with asyncio, so
this backend works on anyio's asyncio backend only. Exceptions of the package and of ctypes
become ours where each call is made, with ``raise ... from``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import anyio

from simplex_protocols.errors import BackendUnavailableError, CoreConnectionError

__all__ = ["LIBS_DIR_ENV_VAR", "NativeBackend"]

#: The environment variable naming a folder that holds libsimplex (read by ``simplex-chat``).
LIBS_DIR_ENV_VAR: Final = "SIMPLEX_LIBS_DIR"

#: The package's own download command.
INSTALL_COMMAND: Final = "python -m simplex_chat install"

_OTHER_BACKENDS: Final = (
    "Or use another chat core: --core ws://127.0.0.1:5225 with `simplex-chat -p 5225` running "
    "(SIMPLEX_CORE=ws://127.0.0.1:5225), or --core sim:USER for the in-process simulated network."
)


def _import_package() -> tuple[ModuleType, ModuleType, str]:
    try:
        # Private parts of simplex-chat 7.0 (pyproject.toml pins 7.0.x): the library's file
        # name, platform tag and cache folder (_native) and the libsimplex release it loads
        # (_version), for the message that says where the library was looked for; the package
        # has no public API for them. A change in them degrades that message, nothing else.
        import simplex_chat._native as native
        import simplex_chat.core as core
        from simplex_chat._version import LIBS_VERSION
    except ImportError as exc:
        raise BackendUnavailableError(
            "the embedded chat core needs the simplex-chat package: pip install simplex-chat. "
            + _OTHER_BACKENDS
        ) from exc
    return core, native, str(LIBS_VERSION)


def _library_path(native: ModuleType, version: str) -> tuple[Path | None, str]:
    """Where the package would load libsimplex from, and how to say so in a message."""
    try:
        libname = str(native._libname())
        override = os.environ.get(LIBS_DIR_ENV_VAR)
        if override:
            return Path(override) / libname, f"{LIBS_DIR_ENV_VAR}={override}"
        native._platform_tag()
        path = Path(native._cache_root()) / f"v{version}" / "sqlite" / libname
        return path, "the simplex-chat cache"
    except (KeyError, RuntimeError, AttributeError, OSError) as exc:
        return None, f"this platform ({exc})"


def unavailable_message(path: Path | None, where: str, version: str) -> str:
    """The text of the error when libsimplex cannot be loaded: how to get it, what else to use."""
    if path is None:
        found = f"libsimplex v{version} is not available for {where}."
    else:
        found = f"libsimplex v{version} was not found at {path} ({where})."
    return (
        f"the embedded SimpleX chat core is unavailable: {found} "
        f"Get it with `{INSTALL_COMMAND}` (downloads it into the simplex-chat cache), or put "
        f"the simplex-chat-libs v{version} release for your platform in a folder and set "
        f"{LIBS_DIR_ENV_VAR} to that folder. " + _OTHER_BACKENDS
    )


class NativeBackend:
    """Moves frames to and from libsimplex, embedded in this process.

    Args:
        db_prefix: the database file prefix (``./bot`` gives ``./bot_chat.db`` and
            ``./bot_agent.db``).
        db_key: the database encryption key (empty: not encrypted).
        allow_download: let the ``simplex-chat`` package download libsimplex when it is not
            installed yet.
        poll_wait_s: how long one ``chat_recv_msg_wait`` call waits for an event; closing
            takes at most this long.
    """

    def __init__(
        self,
        db_prefix: str,
        *,
        db_key: str = "",
        allow_download: bool = False,
        poll_wait_s: float = 0.5,
    ) -> None:
        if not db_prefix:
            raise ValueError("db_prefix must not be empty")
        self.db_prefix = db_prefix
        self._db_key = db_key
        self._allow_download = allow_download
        self._wait_us = max(1, int(poll_wait_s * 1_000_000))
        self._core: ModuleType | None = None
        self._ctrl: int | None = None
        self._frames: collections.deque[dict[str, Any]] = collections.deque()
        self._wakeup = anyio.Event()
        self._failure: CoreConnectionError | None = None
        self._poller: asyncio.Task[None] | None = None

    @property
    def description(self) -> str:
        """``lib:<db_prefix>``."""
        return f"lib:{self.db_prefix}"

    async def connect(self) -> None:
        """Load libsimplex, open (and migrate) the databases, and start polling for events.

        Raises:
            BackendUnavailableError: the ``simplex-chat`` package or libsimplex is missing;
                the message says how to get it and which other backend to use.
            CoreConnectionError: the databases cannot be opened or migrated.
        """
        await self.aclose()
        core, native, version = _import_package()
        if getattr(native, "_lib", None) is None:
            path, where = _library_path(native, version)
            if path is None or (
                not path.exists() and (not self._allow_download or os.environ.get(LIBS_DIR_ENV_VAR))
            ):
                raise BackendUnavailableError(unavailable_message(path, where, version))
            try:
                await anyio.to_thread.run_sync(native.lib_for, "sqlite")
            except Exception as exc:  # ctypes OSError, download errors, unsupported platform
                raise BackendUnavailableError(
                    f"loading libsimplex failed: {exc}. "
                    + unavailable_message(path, where, version)
                ) from exc
        try:
            ctrl = await core.chat_migrate_init(
                self.db_prefix, self._db_key, core.MigrationConfirmation.YES_UP
            )
        except core.ChatInitError as exc:
            raise CoreConnectionError(
                f"{self.description}: the chat databases cannot be opened or migrated: "
                f"{exc.db_migration_error}"
            ) from exc
        except Exception as exc:
            raise CoreConnectionError(
                f"{self.description}: starting the embedded chat core failed: {exc}"
            ) from exc
        self._core = core
        self._ctrl = ctrl
        self._frames.clear()
        self._failure = None
        self._poller = asyncio.get_running_loop().create_task(self._poll(core, ctrl))

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        """Run one command in the library; its answer becomes the next response frame.

        Raises:
            CoreConnectionError: not connected, or the library failed.
        """
        core, ctrl = self._core, self._ctrl
        if core is None or ctrl is None:
            raise self._failure or CoreConnectionError(f"{self.description}: not connected")
        corr_id = frame.get("corrId")
        cmd = frame.get("cmd")
        if not isinstance(cmd, str):
            raise TypeError("a command frame needs a string cmd")
        try:
            resp: Any = await core.chat_send_cmd(ctrl, cmd)
        except core.ChatAPIError as exc:
            if not isinstance(exc.chat_error, dict):
                raise self._fail(f"the library returned an invalid result ({exc})", exc) from exc
            resp = {"type": "chatCmdError", "chatError": exc.chat_error}
        except Exception as exc:
            raise self._fail(f"the library failed on a command ({exc!r})", exc) from exc
        self._push({"corrId": corr_id, "resp": resp})

    async def receive_frame(self) -> dict[str, Any]:
        """Wait for the next response or event frame.

        Raises:
            CoreConnectionError: the backend was closed or the library failed.
        """
        while True:
            if self._frames:
                return self._frames.popleft()
            if self._failure is not None:
                raise CoreConnectionError(str(self._failure)) from self._failure.__cause__
            if self._ctrl is None:
                raise CoreConnectionError(f"{self.description}: not connected")
            self._wakeup = anyio.Event()
            await self._wakeup.wait()

    async def aclose(self) -> None:
        """Stop polling and close the databases. Idempotent."""
        core, ctrl, poller = self._core, self._ctrl, self._poller
        self._ctrl = None
        self._poller = None
        if self._failure is None:
            self._failure = CoreConnectionError(f"{self.description}: closed")
        self._wakeup.set()
        if poller is not None:
            # The poll call returns within poll_wait_s; the store must outlive it.
            with anyio.CancelScope(shield=True):
                await asyncio.wait({poller})
        if core is not None and ctrl is not None:
            with contextlib.suppress(Exception):
                await core.chat_close_store(ctrl)

    # ------------------------------------------------------------------ internals

    def _push(self, frame: dict[str, Any]) -> None:
        self._frames.append(frame)
        self._wakeup.set()

    def _fail(self, reason: str, cause: BaseException) -> CoreConnectionError:
        error = CoreConnectionError(f"{self.description}: {reason}")
        error.__cause__ = cause
        if self._failure is None:
            self._failure = error
        self._wakeup.set()
        return error

    async def _poll(self, core: ModuleType, ctrl: int) -> None:
        while self._ctrl == ctrl:
            try:
                event: Any = await core.chat_recv_msg_wait(ctrl, self._wait_us)
            except core.ChatAPIError as exc:
                if isinstance(exc.chat_error, dict):
                    self._push({"resp": {"type": "chatError", "chatError": exc.chat_error}})
                    continue
                self._fail(f"the library returned an invalid event ({exc})", exc)
                return
            except Exception as exc:
                self._fail(f"the library failed while waiting for events ({exc!r})", exc)
                return
            if event is not None and self._ctrl == ctrl:
                self._push({"resp": event})
