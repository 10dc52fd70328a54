"""Every third-party package the shipped code imports is a declared dependency.

A package that arrives only through another one (``starlette`` through ``mcp``, ``sqlalchemy``
through an ``a2a-sdk`` extra) disappears the day that package stops needing it, and the import
fails on a user's machine, not here. So the test reads every ``import`` statement of the code
the wheel ships (``simplex_protocols/``, ``mcp_server/``, ``conformance/``), finds the
installed distribution that provides each third-party module, and checks that pyproject.toml
names that distribution in ``[project] dependencies`` or in one of its optional extras (not in
``dev``, which users do not install).
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import os
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The folders the wheel ships. simplex_protocols/mcp_server and simplex_protocols/conformance
#: are symbolic links to the other two, read once through their real folders.
SHIPPED = ("simplex_protocols", "mcp_server", "conformance")

#: Our own top-level names.
OWN = frozenset({"simplex_protocols", "mcp_server", "conformance"})

#: Extras that are tools for working on the project, not features of it.
NOT_FOR_USERS = frozenset({"dev"})


def _normalize(name: str) -> str:
    """A distribution name as the packaging specs compare them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match is not None, requirement
    return _normalize(match.group(1))


def declared_distributions() -> dict[str, str]:
    """Each distribution pyproject.toml declares for users, and where (``dependencies`` or
    the extra's name)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {_requirement_name(r): "dependencies" for r in project["dependencies"]}
    for extra, requirements in project.get("optional-dependencies", {}).items():
        if extra in NOT_FOR_USERS:
            continue
        for requirement in requirements:
            declared.setdefault(_requirement_name(requirement), extra)
    return {**_meta_packages(declared), **declared}


def _meta_packages(declared: dict[str, str]) -> dict[str, str]:
    """The distributions a declared meta-package installs, with the same place.

    ``fastmcp`` is such a package: it ships no module of its own and requires
    ``fastmcp-slim``, whose files are the ``fastmcp`` import package. Users install the name we
    declare, so its code is declared too.
    """
    found: dict[str, str] = {}
    for name, where in declared.items():
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        if any(str(file).endswith(".py") for file in dist.files or ()):
            continue
        for requirement in dist.requires or ():
            if "extra ==" not in requirement:
                found.setdefault(_requirement_name(requirement), where)
    return found


def _python_files() -> Iterator[Path]:
    for folder in SHIPPED:
        # os.walk does not follow the symbolic links inside simplex_protocols.
        for directory, _dirs, files in os.walk(ROOT / folder):
            for name in files:
                if name.endswith(".py"):
                    yield Path(directory) / name


def imported_modules() -> dict[str, set[str]]:
    """Each absolute module name the shipped code imports (``google.protobuf.json_format``),
    with the files that import it; relative imports and ``__future__`` left out."""
    found: dict[str, set[str]] = {}
    for path in _python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def third_party(modules: dict[str, set[str]]) -> dict[str, set[str]]:
    """The modules of ``modules`` that are neither the standard library's nor ours."""
    return {
        name: files
        for name, files in modules.items()
        if name.split(".")[0] not in sys.stdlib_module_names
        and name.split(".")[0] not in OWN
        and name != "__future__"
    }


def providing_distribution(module: str) -> str | None:
    """The installed distribution whose files hold ``module`` (normalized), or ``None``.

    Most top-level names belong to one distribution; a namespace package (``google``) is
    shared by several, and then the module's own file tells which one provides it.
    """
    top = module.split(".")[0]
    candidates = importlib.metadata.packages_distributions().get(top, [])
    if len(set(candidates)) == 1:
        return _normalize(candidates[0])
    if not candidates:
        return None
    # A namespace package: the distribution that holds the first non-namespace level.
    parts = module.split(".")
    for depth in range(2, len(parts) + 1):
        spec = importlib.util.find_spec(".".join(parts[:depth]))
        if spec is not None and spec.origin not in (None, "namespace"):
            origin = Path(spec.origin).resolve()
            for name in candidates:
                dist = importlib.metadata.distribution(name)
                for file in dist.files or ():
                    if Path(str(dist.locate_file(file))).resolve() == origin:
                        return _normalize(name)
            return None
    return None


def test_the_reader_finds_imports_of_every_kind() -> None:
    # The walk sees a plain import, a from-import, an import inside a function and a
    # namespace package, all known to be in the shipped code.
    modules = third_party(imported_modules())
    assert "anyio" in modules
    assert "mcp_types.version" in modules
    assert "sqlalchemy.ext.asyncio" in modules  # imported inside a function
    assert "google.protobuf.json_format" in modules
    assert "json" not in modules and "simplex_protocols.errors" not in modules


def test_a_namespace_package_is_told_apart_by_its_module() -> None:
    assert providing_distribution("google.protobuf.json_format") == "protobuf"
    assert providing_distribution("sqlalchemy.engine") == "sqlalchemy"
    assert providing_distribution("nacl.signing") == "pynacl"


def test_an_undeclared_import_is_found() -> None:
    # The check itself: a module of a distribution pyproject.toml does not name is reported.
    declared = declared_distributions()
    assert providing_distribution("pygments") == "pygments"
    assert "pygments" not in declared


def test_the_optional_extras_are_declared() -> None:
    declared = declared_distributions()
    assert declared["fastmcp"] == "fastmcp"
    assert declared["fastmcp-slim"] == "fastmcp"  # what the fastmcp meta-package installs
    assert declared["a2a-sdk"] == "dependencies"
    assert "pytest" not in declared  # dev only


@pytest.mark.parametrize(
    "package", ["uvicorn", "starlette", "sse-starlette", "sqlalchemy", "mcp-types", "pydantic"]
)
def test_what_came_through_the_sdks_is_declared(package: str) -> None:
    assert declared_distributions().get(package) == "dependencies"


def test_every_third_party_import_is_a_declared_distribution() -> None:
    declared = declared_distributions()
    undeclared: dict[str, list[str]] = {}
    for module, files in sorted(third_party(imported_modules()).items()):
        dist = providing_distribution(module)
        if dist is None:
            # Not installed: a missing package of an extra would fail elsewhere too; say so.
            undeclared.setdefault(f"{module} (not installed)", []).extend(sorted(files))
        elif dist not in declared:
            undeclared.setdefault(f"{dist} (for {module})", []).extend(sorted(files))
    assert undeclared == {}, "imported but not declared in pyproject.toml: " + "; ".join(
        f"{what}: {', '.join(files[:3])}" for what, files in undeclared.items()
    )
