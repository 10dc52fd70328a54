"""The example of docs/conformance-live.md runs as it is written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance-live.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_page_has_one_runnable_example() -> None:
    assert len(_python_blocks()) == 1


@pytest.mark.parametrize("block", _python_blocks())
def test_the_offline_check_example_runs(block: str) -> None:
    exec(compile(block, str(DOC), "exec"), {"__name__": "conformance_live_doc"})
