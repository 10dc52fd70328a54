"""docs/sim.md: its example marked ``# runs as a test`` (the scripted users of
``simplex_protocols.sim.testing``) runs, and its assertions hold."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "sim.md"


@pytest.mark.anyio
async def test_the_scripted_users_example_runs() -> None:
    text = DOC.read_text(encoding="utf-8")
    runnable = re.findall(r"```python\n# runs as a test\n(.*?)```", text, re.DOTALL)
    assert len(runnable) == 1, "docs/sim.md has one example that runs as a test"
    namespace: dict[str, Any] = {}
    exec(compile(runnable[0], str(DOC), "exec"), namespace)
    await namespace["main"]()
