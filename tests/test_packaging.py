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
