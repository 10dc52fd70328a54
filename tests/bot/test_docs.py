"""The code in docs/bot.md that is marked ``# runs as a test`` runs, and does what it says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "bot.md"

pytestmark = pytest.mark.anyio


def marked_blocks() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    return [b for b in blocks if b.startswith("# runs as a test\n")]


def test_the_doc_has_a_runnable_example() -> None:
    assert len(marked_blocks()) == 1


async def test_the_offline_test_example_runs(tmp_path: Path) -> None:
    [block] = marked_blocks()
    namespace: dict[str, Any] = {}
    exec(compile(block, str(DOC), "exec"), namespace)
    await namespace["main"](str(tmp_path / "acme"))
