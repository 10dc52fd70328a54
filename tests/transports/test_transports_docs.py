"""The examples in docs/transports.md run and their assertions hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "transports.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 1


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example-{i}" for i in range(len(BLOCKS))])
def test_example_runs(block: str) -> None:
    exec(compile(block, str(DOC), "exec"), {"__name__": "docs_example"})
