"""Where an A2A bot keeps its tasks and who owns each context.

Tasks live in a task store of the ``a2a-sdk``: its ``DatabaseTaskStore`` (SQLAlchemy asyncio)
on SQLite by default, or PostgreSQL when the bot gives a database URL, or its
``InMemoryTaskStore`` for tests. The SDK scopes tasks to an owner; it does not scope contexts,
so the binding pins each context ID to the caller that used it first (A2A-AUTHZ-2) in a small
table of the same database, ``simplex_a2a_contexts``, so that the pinning survives a restart
as the tasks do.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

import anyio

from simplex_protocols.errors import BindingConfigError

from ._a2a_identity import IDENTITY_OWNER_PREFIX

if TYPE_CHECKING:
    from a2a.server.context import ServerCallContext
    from a2a.server.tasks import TaskStore
    from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = [
    "CONTEXTS_TABLE",
    "MAX_ID_CHARS",
    "ContextPins",
    "DatabaseContextPins",
    "MemoryContextPins",
    "ScopedContextPins",
    "StoreParts",
    "open_store",
    "task_database_url",
]

#: The SDK's ``tasks`` table keeps task and context IDs as ``String(36)`` (a UUID); PostgreSQL
#: refuses a longer value, so the binding refuses a longer context ID before it reaches a table.
MAX_ID_CHARS: Final = 36

#: The table that pins context IDs to their first owner.
CONTEXTS_TABLE: Final = "simplex_a2a_contexts"

#: The async drivers that the ``a2a-sdk`` extras install, per database.
_ASYNC_DRIVERS: Final = {
    "sqlite": "aiosqlite",  # a2a-sdk[sqlite]
    "postgresql": "asyncpg",  # a2a-sdk[postgresql], simplex-protocols[postgresql]
    "mysql": "aiomysql",  # a2a-sdk[mysql], simplex-protocols[mysql]
}
_SCHEME_ALIASES: Final = {"postgres": "postgresql"}
#: The extra of simplex-protocols that installs each server database's driver.
_DRIVER_EXTRAS: Final = {"asyncpg": "postgresql", "aiomysql": "mysql"}


def task_database_url(database: str | os.PathLike[str]) -> str:
    """The SQLAlchemy asyncio URL for a bot's task database.

    Args:
        database: a file path (a SQLite database, created when missing), or a database URL:
            ``sqlite:///PATH``, ``postgresql://USER:PASSWORD@HOST/DB`` (also ``postgres://``),
            ``mysql://...``, or any of them with an explicit async driver
            (``postgresql+asyncpg://...``), which is kept as given.

    Returns:
        The URL with the async driver of the SDK's extras: ``sqlite+aiosqlite``,
        ``postgresql+asyncpg`` or ``mysql+aiomysql``. A relative SQLite path is made absolute.

    Raises:
        BindingConfigError: ``bad_database_url``: an empty value, a URL that SQLAlchemy cannot
            read, or a database other than SQLite, PostgreSQL and MySQL.
    """
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    text = os.fspath(database)
    if not text.strip():
        raise BindingConfigError("the task database is empty", code="bad_database_url")
    if "://" not in text:
        return "sqlite+aiosqlite:///" + str(Path(text).expanduser().absolute())
    try:
        url = make_url(text)
    except ArgumentError:
        raise BindingConfigError(
            "the task database URL cannot be read", code="bad_database_url"
        ) from None
    backend, _, driver = url.drivername.partition("+")
    backend = _SCHEME_ALIASES.get(backend, backend)
    if backend not in _ASYNC_DRIVERS:
        raise BindingConfigError(
            f"the task database must be SQLite, PostgreSQL or MySQL, not {backend!r}",
            code="bad_database_url",
        )
    # Only the scheme changes: the rest of the URL is kept as written.
    return f"{backend}+{driver or _ASYNC_DRIVERS[backend]}://{text.split('://', 1)[1]}"


def _create_engine(url: str) -> AsyncEngine:
    from sqlalchemy.engine import make_url
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import StaticPool

    parsed = make_url(url)
    options: dict[str, object] = {}
    if parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:"):
        # One in-memory database shared by every session of the engine.
        options["poolclass"] = StaticPool
    try:
        return create_async_engine(url, **options)
    except ImportError as exc:
        driver = parsed.get_driver_name()
        extra = _DRIVER_EXTRAS.get(driver)
        hint = f" (pip install 'simplex-protocols[{extra}]')" if extra else ""
        raise BindingConfigError(
            f"the database driver {driver!r} is not installed{hint}", code="driver_missing"
        ) from exc


def database_unavailable(what: str, url: str | None, exc: BaseException) -> BindingConfigError:
    """The error for a database that cannot be used: ``database_unavailable``, one line that
    names it (``what`` and its URL, the password hidden) and says what the driver said.

    Whatever the driver raises (OSError for a refused connection, its own errors for a missing
    database or bad credentials, SQLAlchemy's wrappers), the bot's owner needs that one line,
    not the driver's traceback. Raise it ``from exc``.
    """
    from sqlalchemy.engine import make_url

    shown = "(none)" if url is None else make_url(url).render_as_string(hide_password=True)
    return BindingConfigError(
        f"{what} {shown} cannot be used: {_one_line(exc)}", code="database_unavailable"
    )


def _one_line(exc: BaseException) -> str:
    """The first line of an error, with its type when the text alone says little."""
    text = " ".join(str(exc).strip().splitlines()[:1]) if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class ContextPins(Protocol):
    """Which caller owns each context ID (A2A-AUTHZ-2): the first one to use it."""

    async def claim(self, context_id: str, owner: str) -> str:
        """Pin ``context_id`` to ``owner`` unless it is pinned already; return its owner."""
        ...

    async def owner_of(self, context_id: str) -> str | None:
        """The owner of ``context_id``, or ``None`` when no caller has used it."""
        ...


class MemoryContextPins:
    """Context pins in memory: for a bot whose tasks are in memory too."""

    def __init__(self) -> None:
        self._owners: dict[str, str] = {}

    async def claim(self, context_id: str, owner: str) -> str:
        return self._owners.setdefault(context_id, owner)

    async def owner_of(self, context_id: str) -> str | None:
        return self._owners.get(context_id)


class DatabaseContextPins:
    """Context pins in the task database, table :data:`CONTEXTS_TABLE`."""

    def __init__(self, engine: AsyncEngine) -> None:
        from sqlalchemy import Column, MetaData, String, Table

        self._engine = engine
        self._metadata = MetaData()
        self._table = Table(
            CONTEXTS_TABLE,
            self._metadata,
            Column("context_id", String(MAX_ID_CHARS), primary_key=True),
            Column("owner", String(255), nullable=False),
        )
        self._ready = False
        self._lock = anyio.Lock()

    async def initialize(self) -> None:
        """Create the table when it is missing."""
        async with self._lock:
            if self._ready:
                return
            async with self._engine.begin() as conn:
                await conn.run_sync(self._metadata.create_all)
            self._ready = True

    async def owner_of(self, context_id: str) -> str | None:
        from sqlalchemy import select

        await self.initialize()
        async with self._engine.connect() as conn:
            row = (
                await conn.execute(
                    select(self._table.c.owner).where(self._table.c.context_id == context_id)
                )
            ).first()
        return None if row is None else str(row[0])

    async def claim(self, context_id: str, owner: str) -> str:
        from sqlalchemy.exc import IntegrityError

        current = await self.owner_of(context_id)
        if current is not None:
            return current
        try:
            async with self._engine.begin() as conn:
                await conn.execute(self._table.insert().values(context_id=context_id, owner=owner))
        except IntegrityError:
            # Another request pinned it between our read and our write: the first one wins.
            pass
        current = await self.owner_of(context_id)
        return owner if current is None else current


class ScopedContextPins:
    """Context pins whose owners are prefixed with a scope (see :func:`open_store`).

    The binding compares what :meth:`claim` returns with the caller's own key, so a context
    pinned by another bot's caller comes back as a key that matches no caller of this bot.
    """

    def __init__(self, pins: ContextPins, scopes: _Scopes) -> None:
        self.inner = pins
        self._scopes = scopes

    async def claim(self, context_id: str, owner: str) -> str:
        return self._scopes.unscoped(await self.inner.claim(context_id, self._scopes.scoped(owner)))

    async def owner_of(self, context_id: str) -> str | None:
        owner = await self.inner.owner_of(context_id)
        return None if owner is None else self._scopes.unscoped(owner)


class _Scopes:
    """Where each owner is kept: ``SCOPE|KEY``, with the bot's own scope, or the service's for
    an owner proved by a credential (``key:...``) when the bot is a replica of a service."""

    def __init__(self, owner_scope: str, service_scope: str | None) -> None:
        for name, scope in (("owner_scope", owner_scope), ("service_scope", service_scope)):
            if scope is not None and (not scope or "|" in scope):
                raise BindingConfigError(
                    f"{name} is a non-empty name without '|'", code="bad_setting"
                )
        if service_scope == owner_scope:
            raise BindingConfigError(
                "service_scope is the service's, owner_scope this bot's: they differ",
                code="bad_setting",
            )
        self._own = f"{owner_scope}|"
        self._service = None if service_scope is None else f"{service_scope}|"

    def scoped(self, owner: str) -> str:
        if self._service is not None and owner.startswith(IDENTITY_OWNER_PREFIX):
            return self._service + owner
        return self._own + owner

    def unscoped(self, owner: str) -> str:
        # An owner of another scope keeps its prefix: it is no key of a caller of this bot.
        for prefix in (self._own, self._service):
            if prefix is not None and owner.startswith(prefix):
                rest = owner[len(prefix) :]
                # Only a proved key is kept under the service's scope.
                if prefix == self._own or rest.startswith(IDENTITY_OWNER_PREFIX):
                    return rest
        return owner


class StoreParts:
    """The task store, the context pins, and what closes them."""

    def __init__(
        self,
        task_store: TaskStore,
        pins: ContextPins,
        engine: AsyncEngine | None,
        url: str | None,
    ) -> None:
        self.task_store = task_store
        self.pins = pins
        self.engine = engine
        self.url = url

    async def initialize(self) -> None:
        """Create the tables (tasks and context pins) when they are missing.

        Raises:
            BindingConfigError: ``database_unavailable``: the database cannot be reached or
                used (no server there, no such database, refused credentials, ...); the
                message is one line, with the URL's password hidden, and the driver's error
                is the ``__cause__``.
        """
        from a2a.server.tasks import DatabaseTaskStore

        try:
            if isinstance(self.task_store, DatabaseTaskStore):
                await self.task_store.initialize()
            pins = self.pins.inner if isinstance(self.pins, ScopedContextPins) else self.pins
            if isinstance(pins, DatabaseContextPins):
                await pins.initialize()
        except Exception as exc:
            if self.engine is not None:
                with anyio.CancelScope(shield=True):
                    await self.engine.dispose()
            raise database_unavailable("the task database", self.url, exc) from exc

    async def aclose(self) -> None:
        """Release the database connections."""
        if self.engine is not None:
            await self.engine.dispose()


def open_store(
    database: str | os.PathLike[str] | None,
    owner_resolver: Callable[[ServerCallContext], str],
    *,
    owner_scope: str | None = None,
    service_scope: str | None = None,
) -> StoreParts:
    """Build the task store and context pins for ``database`` (``None``: in memory).

    Args:
        database: the task database (see :func:`task_database_url`), or ``None``.
        owner_resolver: the caller's owner key of a request.
        owner_scope: a name of the bot, unique among the bots that share ``database``; every
            owner is kept as ``SCOPE|KEY``. Caller keys are the bot's own (``chat:@17`` is
            contact 17 of this bot's chat database), so two bots on one database would
            otherwise see each other's callers' tasks (A2A-AUTHZ-2).
        service_scope: the name of the service whose replicas share ``database`` (needs
            ``owner_scope``): an owner proved by a ``SimpleX-Identity`` credential (``key:...``)
            is kept as ``SERVICE|KEY`` instead, so that every replica finds that caller's tasks
            and contexts; every other owner stays in the bot's own scope.

    Raises:
        BindingConfigError: ``bad_database_url`` or ``driver_missing``; ``bad_setting`` for an
            empty scope or one with ``|``, a ``service_scope`` without an ``owner_scope``, or
            the two scopes the same.
    """
    scopes: _Scopes | None = None
    if service_scope is not None and owner_scope is None:
        raise BindingConfigError(
            "service_scope goes with the bot's own owner_scope", code="bad_setting"
        )
    if owner_scope is not None:
        scopes = _Scopes(owner_scope, service_scope)
        unscoped = owner_resolver
        scope_of = scopes.scoped

        def scoped(context: ServerCallContext) -> str:
            return scope_of(unscoped(context))

        owner_resolver = scoped
    if database is None:
        from a2a.server.tasks import InMemoryTaskStore

        return StoreParts(
            InMemoryTaskStore(owner_resolver=owner_resolver), MemoryContextPins(), None, None
        )
    from a2a.server.tasks import DatabaseTaskStore

    url = task_database_url(database)
    engine = _create_engine(url)
    store = DatabaseTaskStore(engine, create_table=True, owner_resolver=owner_resolver)
    pins: ContextPins = DatabaseContextPins(engine)
    if scopes is not None:
        pins = ScopedContextPins(pins, scopes)
    return StoreParts(store, pins, engine, url)
