"""The chat core simplex-call works through, its own SimpleX user, and its folders."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols.core import (
    ChatAPI,
    ChatCore,
    CoreKind,
    CoreOption,
    default_core_option,
    open_core,
)

if TYPE_CHECKING:
    from simplex_protocols.sim import SimNetwork

__all__ = ["Environment", "Session", "data_prefix", "key_folder", "open_session"]

#: The profile simplex-call creates for itself on first use.
CLI_PROFILE: Final = {"displayName": "simplex-call", "fullName": "", "peerType": "agent"}


@dataclass
class Environment:
    """What simplex-call takes from the outside world; tests replace each part.

    Attributes:
        environ: environment variables (``SIMPLEX_CORE``, ``XDG_CONFIG_HOME``,
            ``XDG_DATA_HOME``, ``HOME``).
        network: the simulated network that ``--core sim:NAME`` uses; the process-wide
            default network when ``None``.
        stdin: where ``@-`` arguments are read from.
    """

    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    network: SimNetwork | None = None
    stdin: TextIO | None = None


@dataclass
class Session:
    """An entered chat core with simplex-call's user, started."""

    core: ChatCore
    api: ChatAPI
    user_id: int
    clock: Clock
    option: CoreOption
    created_user: bool = False


def _home(environ: Mapping[str, str]) -> Path:
    home = environ.get("HOME")
    return Path(home) if home else Path.home()


def key_folder(environ: Mapping[str, str], given: str | None = None) -> Path:
    """The folder of signing keys: ``--key-dir``, else ``$XDG_CONFIG_HOME/simplex-call/keys``,
    else ``~/.config/simplex-call/keys``."""
    if given:
        return Path(given).expanduser()
    base = environ.get("XDG_CONFIG_HOME")
    root = Path(base) if base else _home(environ) / ".config"
    return root / "simplex-call" / "keys"


def data_prefix(environ: Mapping[str, str]) -> Path:
    """The database prefix for ``--core lib`` without one: ``$XDG_DATA_HOME/simplex-call/simplex``,
    else ``~/.local/share/simplex-call/simplex``."""
    base = environ.get("XDG_DATA_HOME")
    root = Path(base) if base else _home(environ) / ".local" / "share"
    return root / "simplex-call" / "simplex"


@asynccontextmanager
async def open_session(option: CoreOption | None, env: Environment) -> AsyncIterator[Session]:
    """Open the chat core, make sure simplex-call has a user (created on first use, with peer
    type ``agent``), and start the chat.

    Raises:
        CoreOptionError: ``SIMPLEX_CORE`` holds an invalid value.
        CoreConnectionError: the core cannot be reached or used.
        CoreError: the core refused to create the user or to start.
    """
    chosen = option if option is not None else default_core_option(env.environ)
    clock: Clock = SystemClock()
    if chosen.kind is CoreKind.SIMULATOR and env.network is not None:
        assert chosen.user is not None
        core = ChatCore(env.network.backend(chosen.user))
        clock = env.network.clock
    else:
        prefix = data_prefix(env.environ)
        if chosen.kind is CoreKind.LIBRARY and chosen.db_prefix is None:
            prefix.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        core = open_core(chosen, db_prefix=str(prefix), environ=env.environ)
    async with core:
        api = ChatAPI(core)
        user, created = await api.ensure_active_user(CLI_PROFILE)
        user_id = int(user["userId"])
        await api.start_chat()
        yield Session(core, api, user_id, clock, chosen, created)
