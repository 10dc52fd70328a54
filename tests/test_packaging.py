"""The wheel and the sdist carry the licence text, as the AGPL requires of every copy.

Both are built here, offline, with the hatchling of the environment (the build backend named in
pyproject.toml), into a temporary folder.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-t", "sdist", "-d", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out


def _licence() -> bytes:
    return (ROOT / "LICENSE").read_bytes()


def test_the_licence_is_the_agpl_v3_text() -> None:
    text = _licence().decode("utf-8")
    assert text.lstrip().startswith("GNU AFFERO GENERAL PUBLIC LICENSE")
    assert "Version 3, 19 November 2007" in text
    assert text.rstrip().endswith("<https://www.gnu.org/licenses/>.")


def test_the_wheel_carries_the_licence(built: Path) -> None:
    (wheel,) = built.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.endswith("/LICENSE")]
        assert names and all(".dist-info/licenses/" in n for n in names)
        assert z.read(names[0]) == _licence()
        metadata = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA")))
    assert b"License-Expression: AGPL-3.0-only" in metadata
    assert b"License-File: LICENSE" in metadata


def test_the_sdist_carries_the_licence(built: Path) -> None:
    (sdist,) = built.glob("*.tar.gz")
    with tarfile.open(sdist) as t:
        (member,) = [m for m in t.getmembers() if m.name.endswith("/LICENSE")]
        extracted = t.extractfile(member)
        assert extracted is not None and extracted.read() == _licence()


def test_the_sdist_carries_the_changelog_and_the_wheel_the_project_urls(built: Path) -> None:
    (sdist,) = built.glob("*.tar.gz")
    with tarfile.open(sdist) as t:
        (member,) = [m for m in t.getmembers() if m.name.endswith("/CHANGELOG.md")]
        extracted = t.extractfile(member)
        assert extracted is not None
        assert extracted.read() == (ROOT / "CHANGELOG.md").read_bytes()
    (wheel,) = built.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        metadata = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA")))
    labels = {
        line.split(b",")[0] for line in metadata.splitlines() if line.startswith(b"Project-URL:")
    }
    names = {b"Homepage", b"Documentation", b"Source", b"Issues", b"Changelog", b"Specification"}
    assert labels == {b"Project-URL: " + name for name in names}


def test_the_sdist_carries_what_the_makefile_runs(built: Path) -> None:
    # make bench and the CI script run scripts/with-postgres beside the Makefile.
    (sdist,) = built.glob("*.tar.gz")
    with tarfile.open(sdist) as t:
        names = {m.name.split("/", 1)[1]: m for m in t.getmembers() if "/" in m.name}
    assert "Makefile" in names
    assert "scripts/with-postgres" in names
    assert names["scripts/with-postgres"].mode & 0o111


def test_the_apps_are_installed_inside_the_package_under_no_generic_top_level_name(
    built: Path,
) -> None:
    # Issue 14 item 7: PyPI has projects named mcp-server and conformance; a wheel that installs
    # top-level mcp_server/ or conformance/ would overwrite their files (and they ours).
    (wheel,) = built.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        entry_points = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt")))
    tops = {n.split("/")[0] for n in names}
    assert tops == {"simplex_protocols", next(t for t in tops if t.endswith(".dist-info"))}
    assert len(names) == len(set(names))
    for app in ("mcp_server", "conformance"):
        in_wheel = {n.split("/", 2)[2] for n in names if n.startswith(f"simplex_protocols/{app}/")}
        in_repo = {
            p.relative_to(ROOT / app).as_posix()
            for p in (ROOT / app).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
        assert in_wheel == in_repo
    assert b"simplex-mcp = simplex_protocols.mcp_server.cli:main" in entry_points
    assert b"simplex-conformance = simplex_protocols.conformance.cli:main" in entry_points
    # Built from the sdist (as pip does), the wheel has the same layout: the sdist keeps the two
    # folders where the repository has them, not the links to them inside simplex_protocols.
    (sdist,) = built.glob("*.tar.gz")
    with tarfile.open(sdist) as t:
        members = [m.name.split("/", 1)[1] for m in t.getmembers() if "/" in m.name]
    assert any(m.startswith("mcp_server/") for m in members)
    assert not any(
        m.startswith(("simplex_protocols/mcp_server", "simplex_protocols/conformance"))
        for m in members
    )


def test_no_code_imports_the_apps_by_a_top_level_name() -> None:
    # In a checkout the repository root is on sys.path, so `import mcp_server` would still work
    # there and load a second copy of every module beside simplex_protocols.mcp_server.
    import ast

    found = []
    for folder in (
        "simplex_protocols",
        "mcp_server",
        "conformance",
        "tests",
        "bench",
        "examples",
        "scripts",
    ):
        for path in (ROOT / folder).rglob("*.py"):
            if path.is_relative_to(
                ROOT / "simplex_protocols" / "mcp_server"
            ) or path.is_relative_to(ROOT / "simplex_protocols" / "conformance"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom) and node.level == 0
                    else []
                )
                found += [
                    f"{path.relative_to(ROOT)}:{node.lineno}"
                    for name in names
                    if name.split(".")[0] in ("mcp_server", "conformance")
                ]
    assert found == []
