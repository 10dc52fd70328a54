"""The public API: what each package exports is a decision, and it shows up in review.

``tests/public_api.json`` snapshots every package's ``__all__``. A change to an ``__all__``
fails this test until the snapshot is updated with
``SIMPLEX_UPDATE_API_SNAPSHOT=1 python -m pytest tests/test_public_api.py``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SNAPSHOT = Path(__file__).with_name("public_api.json")

PACKAGES = [
    "simplex_protocols",
    "simplex_protocols.errors",
    "simplex_protocols.limits",
    "simplex_protocols.coretext",
    "simplex_protocols.links",
    "simplex_protocols.llmstxt",
    "simplex_protocols.declarations",
    "simplex_protocols.chat_call",
    "simplex_protocols.rpc",
    "simplex_protocols.core",
    "simplex_protocols.transports",
    "simplex_protocols.bindings",
    "simplex_protocols.bindings.mcp",
    "simplex_protocols.bindings.a2a",
    "simplex_protocols.bot",
    "simplex_protocols.discovery",
    "simplex_protocols.sim",
    "simplex_protocols.sim.testing",
]


def _exports() -> dict[str, list[str]]:
    return {name: sorted(importlib.import_module(name).__all__) for name in PACKAGES}


def test_exports_match_the_snapshot() -> None:
    current = _exports()
    if os.environ.get("SIMPLEX_UPDATE_API_SNAPSHOT"):
        SNAPSHOT.write_text(json.dumps(current, indent=2) + "\n", encoding="utf-8")
    assert current == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_exists_and_is_documented(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):  # type aliases carry no docstring
            doc = getattr(obj, "__doc__", None)
            assert doc and doc.strip(), f"{package}.{name} has no docstring"


@pytest.mark.slow
@pytest.mark.parametrize(
    "package",
    [
        "simplex_protocols.coretext",
        "simplex_protocols.llmstxt",
        "simplex_protocols.links",
        "simplex_protocols.declarations",
        "simplex_protocols.chat_call",
        "simplex_protocols.rpc",
    ],
)
def test_codecs_import_no_io_or_sdk_packages(package: str) -> None:
    # Layer 0 is sans-IO: importing a codec must not pull in sockets, event loops or the SDKs.
    forbidden = ["websockets", "mcp", "a2a", "httpx", "anyio", "simplex_protocols.core"]
    code = (
        f"import sys, {package}\n"
        f"bad = [m for m in {forbidden!r} if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{package} imports {out.stdout.strip()}"
