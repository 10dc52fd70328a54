"""The chat transport's vector files are what their generator writes, and name known IDs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from simplex_protocols._spec import spec_path

GENERATOR = Path(__file__).with_name("make_vectors.py")
KNOWN_IDS = {
    *(f"CALL-CMD-{i}" for i in (1, 2, 3, 4, 6)),
    *(f"CALL-SIZE-{i}" for i in range(1, 4)),
    *(f"CALL-CLR-{i}" for i in range(1, 6)),
    "CALL-REP-1",
    "CALL-REP-2",
    "CALL-BOT-1",
    "CALL-GRP-1",
    "CALL-GRP-2",
    "NAME-1",
}


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chat_call_make_vectors", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vector_files_are_up_to_date() -> None:
    gen = _generator()
    for name, data in gen.files().items():
        path = spec_path("vectors", "chat_call", name)
        assert path.read_text(encoding="utf-8") == gen.render(data), (
            f"{name} is stale: run python tests/chat_call/make_vectors.py"
        )


def test_vectors_cover_the_chat_transport_requirements() -> None:
    seen: set[str] = set()
    count = 0
    for path in sorted(spec_path("vectors", "chat_call").glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["tests"]:
            count += 1
            assert case["requirements"], case["id"]
            assert set(case["requirements"]) <= KNOWN_IDS, case["id"]
            seen.update(case["requirements"])
    assert count >= 80
    # CALL-SIZE-3 and CALL-REP-* are checked through the reply operation; CALL-CLR-* by collect.
    assert seen == KNOWN_IDS
