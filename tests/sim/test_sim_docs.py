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


def _command_rows(text: str) -> list[tuple[str, str, bool]]:
    section = text.split("#### The core's command list", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| ([^|`]+?) \| `(.+?)` \| (yes|no)\b", section, re.MULTILINE)
    return [(name, example, verdict == "yes") for name, example, verdict in rows]


def test_the_command_table_says_what_the_spec_grammar_parses() -> None:
    from simplex_protocols.sim import CORE_PROFILES
    from simplex_protocols.sim._core import profile_grammar

    text = DOC.read_text(encoding="utf-8")
    rows = _command_rows(text)
    grammar = profile_grammar(CORE_PROFILES["spec"])
    for name, example, supported in rows:
        parsed = not isinstance(grammar.parse(example), str)
        assert parsed is supported, (name, example)
    api = rows[:59]
    assert len({name for name, _, _ in api}) == 59
    prose = " ".join(text.split())
    assert f"the simulator runs **{sum(ok for _, _, ok in api)} of the 59**" in prose
    others = rows[59:]
    assert f"of the {len(others)} that bots and clients commonly send" in prose
    assert f"the simulator runs {sum(ok for _, _, ok in others)}." in prose
