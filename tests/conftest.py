"""Shared fixtures: anyio on asyncio, and the spec loader."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
