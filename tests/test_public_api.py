"""The public API: what each package exports is a decision, and it shows up in review.

``tests/public_api.json`` snapshots every public namespace's ``__all__``. A change to an
``__all__`` fails this test until the snapshot is updated with
``SIMPLEX_UPDATE_API_SNAPSHOT=1 python -m pytest tests/test_public_api.py``. Each public name
has one definition: a namespace that exports a name another one exports too re-exports the same
object, and the object's ``__module__`` names the namespace of its definition.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import subprocess
import sys
from collections import defaultdict
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
    "simplex_protocols.chat_call.advanced",
    "simplex_protocols.rpc",
    "simplex_protocols.rpc.advanced",
    "simplex_protocols.core",
    "simplex_protocols.transports",
    "simplex_protocols.transports.chat",
    "simplex_protocols.transports.service_rpc",
    "simplex_protocols.bindings",
    "simplex_protocols.bindings.mcp",
    "simplex_protocols.bindings.a2a",
    "simplex_protocols.bot",
    "simplex_protocols.discovery",
    "simplex_protocols.sim",
    "simplex_protocols.sim.testing",
]


#: Public modules that are programs, not library API: the console scripts' entry points and the
#: two apps installed inside the package (simplex-mcp, and the conformance suite, whose Python
#: entry points docs/conformance.md describes with the suite).
PROGRAMS = (
    "simplex_protocols.cli",
    "simplex_protocols.mcp_server",
    "simplex_protocols.conformance",
)


def _exports() -> dict[str, list[str]]:
    return {name: sorted(importlib.import_module(name).__all__) for name in PACKAGES}


def _public_modules() -> set[str]:
    found = {"simplex_protocols"}
    for info in pkgutil.walk_packages(
        importlib.import_module("simplex_protocols").__path__, "simplex_protocols."
    ):
        parts = info.name.split(".")
        if any(part.startswith("_") for part in parts):
            continue
        if any(info.name == p or info.name.startswith(p + ".") for p in PROGRAMS):
            continue
        found.add(info.name)
    return found


def test_exports_match_the_snapshot() -> None:
    current = _exports()
    if os.environ.get("SIMPLEX_UPDATE_API_SNAPSHOT"):
        SNAPSHOT.write_text(json.dumps(current, indent=2) + "\n", encoding="utf-8")
    assert current == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_the_snapshot_covers_every_public_module() -> None:
    # A new public module (an ``advanced`` one, say) is API too: it belongs in the snapshot.
    assert _public_modules() == set(PACKAGES)


def test_a_name_exported_twice_is_one_object() -> None:
    # One definition of each public name: ``is_protocol_name`` in chat_call is coretext's, the
    # binding contract in bindings is transports'. Two objects under one name (two
    # ``ChangeFrequency`` enums, three ``caller_of`` functions) would compare unequal or take
    # different arguments depending on the import. No exception is needed today, modules and
    # type aliases included.
    exporters: dict[str, list[tuple[str, object]]] = defaultdict(list)
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            exporters[name].append((package, getattr(module, name)))
    different = {
        name: [package for package, _ in found]
        for name, found in exporters.items()
        if any(obj is not found[0][1] for _, obj in found)
    }
    assert different == {}


@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_names_the_public_module_of_its_definition(package: str) -> None:
    # publish() sets __module__ to the public module that defines a name; a re-export leaves
    # it alone, so the module it names exports the very object, under its own name.
    for module_name in PACKAGES:
        importlib.import_module(module_name)
    module = importlib.import_module(package)
    for name in module.__all__:
        obj = getattr(module, name)
        home = getattr(obj, "__module__", None)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)) or home == "typing":
            continue  # constants, modules, and type aliases (a ``typing`` object each)
        assert home in PACKAGES, f"{package}.{name} reports {home}"
        assert getattr(importlib.import_module(home), obj.__name__, None) is obj, name


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


@pytest.mark.slow
def test_bindings_caller_of_imports_no_sdk() -> None:
    # One caller_of serves MCP tools and A2A agents; importing it, or asking it about an object
    # of neither SDK, must not pull either SDK in (a bot may have installed only one).
    code = (
        "import sys\n"
        "from simplex_protocols.bindings import caller_of\n"
        "assert caller_of(object()) is None\n"
        "print(','.join(m for m in ('mcp', 'a2a') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"simplex_protocols.bindings imports {out.stdout.strip()}"
