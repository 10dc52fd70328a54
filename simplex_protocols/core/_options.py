"""Choosing a chat core backend, one way everywhere: ``--core`` and ``SIMPLEX_CORE``.

Accepted forms:

- ``ws://HOST:PORT[/PATH]``: a running ``simplex-chat -p PORT`` (the CLI's WebSocket API).
  HOST must be loopback (``127.0.0.1``, any ``127.x.y.z``, ``[::1]``, ``localhost``) unless
  remote hosts are explicitly allowed: the CLI's API has no authentication, so anyone who
  reaches the port controls the chat profile.
- ``lib`` or ``lib:DB_PREFIX``: the embedded libsimplex through the ``simplex-chat`` package,
  with its SQLite databases at ``DB_PREFIX_chat.db`` and ``DB_PREFIX_agent.db``.
- ``sim:USER``: USER's core in the in-process simulated network.

Parsing is here; :mod:`._open` turns a parsed value into a :class:`ChatCore`.

The environment variable ``SIMPLEX_CORE`` supplies the default; without it the default is
``lib``.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final
from urllib.parse import urlsplit

from simplex_protocols.errors import CoreOptionError

__all__ = [
    "CORE_ENV_VAR",
    "CORE_OPTION_FORMS",
    "CORE_OPTION_HELP",
    "DEFAULT_CORE",
    "DEFAULT_DB_PREFIX",
    "CoreKind",
    "CoreOption",
    "add_core_argument",
    "default_core_option",
    "parse_core_option",
]

#: The environment variable that supplies the default ``--core`` value.
CORE_ENV_VAR: Final = "SIMPLEX_CORE"

#: The built-in default when neither ``--core`` nor ``SIMPLEX_CORE`` is given.
DEFAULT_CORE: Final = "lib"

#: The database prefix of ``lib`` without ``:DB_PREFIX`` when the application gives none.
DEFAULT_DB_PREFIX: Final = "simplex"

#: The accepted forms, as listed in error messages and in the ``--core`` help.
CORE_OPTION_FORMS: Final = (
    "ws://HOST:PORT[/PATH] (a running `simplex-chat -p PORT`, loopback only)",
    "lib[:DB_PREFIX] (the embedded libsimplex)",
    "sim:USER (a user of the in-process simulated network)",
)

#: The help text of ``--core``, the same in every command-line tool.
CORE_OPTION_HELP: Final = (
    "the SimpleX chat core to use: ws://HOST:PORT[/PATH] for a running `simplex-chat -p PORT` "
    "(loopback only), lib[:DB_PREFIX] for the embedded libsimplex, or sim:USER for a user of "
    f"the in-process simulated network (default: ${CORE_ENV_VAR}, else {DEFAULT_CORE})"
)


class CoreKind(StrEnum):
    """The kinds of chat core backend."""

    WEBSOCKET = "ws"
    LIBRARY = "lib"
    SIMULATOR = "sim"


@dataclass(frozen=True, slots=True)
class CoreOption:
    """A parsed ``--core`` value. Build it with :func:`parse_core_option`.

    Attributes:
        kind: which backend.
        url: for ``ws``, the URL (``ws://127.0.0.1:5225``); else ``None``.
        host: for ``ws``, the host as written (without IPv6 brackets); else ``None``.
        port: for ``ws``, the port; else ``None``.
        db_prefix: for ``lib``, the database prefix when one was given; else ``None``.
        user: for ``sim``, the simulated user's name; else ``None``.
    """

    kind: CoreKind
    url: str | None = None
    host: str | None = None
    port: int | None = None
    db_prefix: str | None = None
    user: str | None = None

    def __str__(self) -> str:
        if self.kind is CoreKind.WEBSOCKET:
            return self.url or ""
        if self.kind is CoreKind.LIBRARY:
            return "lib" if self.db_prefix is None else f"lib:{self.db_prefix}"
        return f"sim:{self.user}"


def _forms() -> str:
    return "accepted forms: " + "; ".join(CORE_OPTION_FORMS)


def _refuse(reason: str, code: str, text: str, source: str | None) -> CoreOptionError:
    return CoreOptionError(f"{reason} ({_forms()})", code=code, value=text, source=source)


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` names this machine: ``localhost`` or a loopback IP address.

    Other names are not resolved (no DNS lookups): they count as remote.
    """
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _parse_ws(text: str, *, allow_remote: bool, source: str | None) -> CoreOption:
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise _refuse(f"not a valid URL: {exc}", "bad_url", text, source) from None
    if parts.username is not None or parts.password is not None:
        raise _refuse(
            "a user name or password in the URL is not supported", "bad_url", text, source
        )
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise _refuse("a query or fragment in the URL is not supported", "bad_url", text, source)
    host = parts.hostname
    if not host:
        raise _refuse("the URL has no host", "bad_url", text, source)
    if port is None:
        raise _refuse("the URL needs a port, as in ws://127.0.0.1:5225", "bad_port", text, source)
    if port == 0:
        raise _refuse("port 0 cannot be connected to", "bad_port", text, source)
    if any(ch.isspace() for ch in text):
        raise _refuse("the URL contains whitespace", "bad_url", text, source)
    if not allow_remote and not is_loopback_host(host):
        raise _refuse(
            f"{host} is not a loopback address; the CLI's WebSocket API has no authentication, "
            "so only a core on this machine is used unless remote hosts are explicitly allowed",
            "non_loopback_host",
            text,
            source,
        )
    return CoreOption(CoreKind.WEBSOCKET, url=text, host=host, port=port)


def parse_core_option(
    text: str, *, allow_remote: bool = False, source: str | None = None
) -> CoreOption:
    """Parse a ``--core`` / ``SIMPLEX_CORE`` value.

    Leading and trailing whitespace is ignored.

    Args:
        text: the value.
        allow_remote: accept a ``ws://`` host that is not loopback. The CLI's WebSocket API
            has no authentication: allow this only behind your own authenticated tunnel.
        source: where the text came from (``"--core"``, ``"SIMPLEX_CORE"``), for messages.

    Raises:
        CoreOptionError: the value is not one of the accepted forms; ``.code`` is
            ``"empty"``, ``"unknown_form"``, ``"bad_url"``, ``"bad_port"``,
            ``"non_loopback_host"``, ``"bad_db_prefix"`` or ``"bad_user"``.
    """
    value = text.strip()
    if not value:
        raise _refuse("no core given", "empty", text, source)
    if value.startswith(("ws://", "wss://")):
        return _parse_ws(value, allow_remote=allow_remote, source=source)
    if value == "lib":
        return CoreOption(CoreKind.LIBRARY)
    if value.startswith("lib:"):
        prefix = value[4:]
        if not prefix:
            raise _refuse(
                "lib: needs a database prefix after the colon", "bad_db_prefix", text, source
            )
        if any(not ch.isprintable() for ch in prefix):
            raise _refuse(
                "the database prefix has control characters", "bad_db_prefix", text, source
            )
        return CoreOption(CoreKind.LIBRARY, db_prefix=prefix)
    if value == "sim" or value.startswith("sim:"):
        user = value[4:]
        if not user:
            raise _refuse("sim needs a user, as in sim:alice", "bad_user", text, source)
        if any(not ch.isprintable() for ch in user) or user != user.strip():
            raise _refuse(
                "the user name has control characters or surrounding spaces",
                "bad_user",
                text,
                source,
            )
        return CoreOption(CoreKind.SIMULATOR, user=user)
    raise _refuse("not a chat core", "unknown_form", text, source)


def default_core_option(
    environ: Mapping[str, str] | None = None, *, allow_remote: bool = False
) -> CoreOption:
    """The default core: ``SIMPLEX_CORE`` when set and not empty, else ``lib``.

    Raises:
        CoreOptionError: ``SIMPLEX_CORE`` holds an invalid value (``.source`` names it).
    """
    env = os.environ if environ is None else environ
    value = env.get(CORE_ENV_VAR, "")
    if value.strip():
        return parse_core_option(value, allow_remote=allow_remote, source=CORE_ENV_VAR)
    return parse_core_option(DEFAULT_CORE)


def _argparse_type(text: str) -> CoreOption:
    try:
        return parse_core_option(text)
    except CoreOptionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_core_argument(parser: argparse.ArgumentParser, *, dest: str = "core") -> argparse.Action:
    """Add ``--core`` to a command-line parser, with the same help text in every tool.

    The parsed value is a :class:`CoreOption`, or ``None`` when ``--core`` was not given;
    pass it to :func:`open_core`, which then uses ``SIMPLEX_CORE`` or ``lib``.
    """
    return parser.add_argument(
        "--core",
        dest=dest,
        metavar="CORE",
        type=_argparse_type,
        default=None,
        help=CORE_OPTION_HELP,
    )
