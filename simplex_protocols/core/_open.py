"""Opening a chat core for a ``--core`` value, and the registry of backends from other packages.

The WebSocket and library backends are built in and imported only when used, so that parsing
``--core`` needs neither ``websockets`` nor ``simplex_chat``. The simulated network lives above
the core client: its module ``simplex_protocols.sim._register`` registers its backend with
:func:`register_backend` when imported, and :func:`open_core` imports it on first use of
``sim:``; ``core`` itself never imports ``sim``, and importing ``sim`` (for its core profiles,
say) does not load the core client.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Final, TypeAlias

from simplex_protocols.errors import BackendUnavailableError

from ._backend import CoreBackend
from ._client import DEFAULT_EVENT_BUFFER, ChatCore
from ._options import (
    DEFAULT_DB_PREFIX,
    CoreKind,
    CoreOption,
    default_core_option,
    parse_core_option,
)

__all__ = ["BackendFactory", "open_core", "register_backend"]


#: Builds the backend of a parsed ``--core`` value (of a kind registered with it).
BackendFactory: TypeAlias = Callable[[CoreOption], CoreBackend]

#: The kinds whose backend another package provides, and the module that registers it when it
#: is imported.
_PROVIDERS: Final[Mapping[CoreKind, str]] = {CoreKind.SIMULATOR: "simplex_protocols.sim._register"}

_FACTORIES: dict[CoreKind, BackendFactory] = {}

_NOT_AVAILABLE = (
    "the simulated network is not available ({reason}); use --core ws://127.0.0.1:5225 with "
    "`simplex-chat -p 5225`, or --core lib"
)


def register_backend(kind: CoreKind | str, factory: BackendFactory) -> None:
    """Make :func:`open_core` build the backends of ``kind`` with ``factory``.

    The simulated network registers its backend (``sim:USER``) this way when
    ``simplex_protocols.sim._register`` is imported; registering again replaces the factory.

    Args:
        kind: ``CoreKind.SIMULATOR`` (``"sim"``): the WebSocket and library backends are
            built in.
        factory: called with the parsed option (``option.user`` for ``sim``) each time a core
            of that kind is opened.

    Raises:
        ValueError: ``kind`` is not a kind whose backend is registered.
    """
    parsed = CoreKind(kind)
    if parsed not in _PROVIDERS:
        raise ValueError(f"the {parsed.value} backend is built in; only sim is registered")
    _FACTORIES[parsed] = factory


def _registered_backend(option: CoreOption) -> CoreBackend:
    factory = _FACTORIES.get(option.kind)
    if factory is None:
        try:
            # importing the provider registers its factory
            importlib.import_module(_PROVIDERS[option.kind])
        except ImportError as exc:
            raise BackendUnavailableError(_NOT_AVAILABLE.format(reason=exc)) from exc
        factory = _FACTORIES.get(option.kind)
    if factory is None:
        reason = f"{_PROVIDERS[option.kind]} registered no backend"
        raise BackendUnavailableError(_NOT_AVAILABLE.format(reason=reason))
    backend = factory(option)
    if not isinstance(backend, CoreBackend):
        raise BackendUnavailableError(
            f"the {option.kind.value} backend factory returned {type(backend).__name__}, "
            "not a CoreBackend"
        )
    return backend


def open_core(
    option: CoreOption | str | None = None,
    *,
    db_prefix: str = DEFAULT_DB_PREFIX,
    db_key: str = "",
    allow_remote: bool = False,
    allow_download: bool = False,
    corr_ids: Callable[[], str] | None = None,
    event_buffer: int = DEFAULT_EVENT_BUFFER,
    environ: Mapping[str, str] | None = None,
) -> ChatCore:
    """Make a :class:`ChatCore` for a ``--core`` value; use it with ``async with``.

    Args:
        option: a parsed option, a ``--core`` string, or ``None`` for the default
            (``SIMPLEX_CORE``, else ``lib``).
        db_prefix: the database prefix for ``lib`` when the option names none.
        db_key: the database encryption key for ``lib`` (empty: not encrypted).
        allow_remote: accept a non-loopback ``ws://`` host (see :func:`parse_core_option`).
        allow_download: let ``lib`` download libsimplex when it is not installed yet.
        corr_ids: the correlation ID source (see :class:`ChatCore`).
        event_buffer: the default subscription buffer (see :class:`ChatCore`).
        environ: the environment to read ``SIMPLEX_CORE`` from (default: ``os.environ``).

    Raises:
        CoreOptionError: the option (or ``SIMPLEX_CORE``) is invalid.
        BackendUnavailableError: ``sim:`` was asked for and the simulated network cannot be
            imported. (An unavailable libsimplex is reported when the core is entered.)
    """
    if option is None:
        parsed = default_core_option(environ, allow_remote=allow_remote)
    elif isinstance(option, str):
        parsed = parse_core_option(option, allow_remote=allow_remote, source="--core")
    else:
        parsed = option
    backend: CoreBackend
    if parsed.kind is CoreKind.WEBSOCKET:
        from ._websocket import WebSocketBackend

        assert parsed.url is not None
        backend = WebSocketBackend(parsed.url, allow_remote=allow_remote)
    elif parsed.kind is CoreKind.LIBRARY:
        from ._native import NativeBackend

        backend = NativeBackend(
            parsed.db_prefix if parsed.db_prefix is not None else db_prefix,
            db_key=db_key,
            allow_download=allow_download,
        )
    else:
        backend = _registered_backend(parsed)
    return ChatCore(backend, corr_ids=corr_ids, event_buffer=event_buffer)
