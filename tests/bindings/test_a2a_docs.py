"""The Python examples of docs/bindings-a2a.md run as written, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "bindings-a2a.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 4


def test_examples_run_in_order() -> None:
    namespace: dict[str, object] = {"__name__": "bindings_a2a_doc"}
    for code in BLOCKS:
        exec(compile(code, str(DOC), "exec"), namespace)
