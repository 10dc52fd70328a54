"""Shared fixtures: anyio on asyncio, Hypothesis's profile, and fresh PostgreSQL databases."""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator

import pytest
from hypothesis import HealthCheck, settings

#: The test PostgreSQL server (``postgresql://USER@127.0.0.1:PORT/DB``; ``scripts/with-postgres``
#: starts one, as ``.ci/run`` does).
POSTGRES_DSN_VARIABLE = "SIMPLEX_TEST_POSTGRES_DSN"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# Hypothesis: no per-example deadline and no "generation is slow" health check. The suite runs
# on shared, loaded machines, where timing says nothing about the code under test.
settings.register_profile(
    "simplex",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("simplex")


@pytest.fixture
async def postgres_url(anyio_backend: str) -> AsyncIterator[str]:
    """The URL of a fresh, empty database on the test PostgreSQL server, dropped afterwards.

    Skips without a server (``SIMPLEX_TEST_POSTGRES_DSN`` unset). A fixture parametrized over
    database kinds asks for it with ``request.getfixturevalue("postgres_url")``.
    """
    dsn = os.environ.get(POSTGRES_DSN_VARIABLE)
    if not dsn:
        pytest.skip(
            f"no PostgreSQL server: set {POSTGRES_DSN_VARIABLE} (scripts/with-postgres starts one)"
        )
    import asyncpg  # type: ignore[import-untyped]

    name = f"test_{secrets.token_hex(6)}"
    admin = await asyncpg.connect(dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield f"{dsn.rpartition('/')[0]}/{name}"
    finally:
        admin = await asyncpg.connect(dsn)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
