"""Shared fixtures: anyio on asyncio, and the spec loader."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings


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
