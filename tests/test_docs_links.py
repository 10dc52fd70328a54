"""What the package and its tools tell a user to read can be reached from an installed package.

The wheel carries no ``docs/`` folder and no README beside the code, so a console script that
says "see docs/sim.md" points at nothing, and a relative link of README.md (which is also the
package index's page) breaks there. The tools and the README give web addresses into the
project's repository instead, all from :data:`simplex_protocols._docs_url.REPOSITORY_URL`, and
these tests check both halves: no repository path in what the console scripts print, and every
address into the repository naming a file (and heading) that exists.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

import pytest

from simplex_protocols._docs_url import REPOSITORY_URL, doc_url

ROOT: Final = Path(__file__).resolve().parents[1]
PYPROJECT: Final = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
README: Final = (ROOT / "README.md").read_text(encoding="utf-8")

# The commands of each console script whose --help is read besides the script's own. A script
# or a command added later fails test_every_command_is_read until it is listed here.
COMMANDS: Final = {
    "simplex-call": ("plan", "discover", "doctor", "demo"),
    "simplex-sim": ("serve", "chat"),
    "simplex-bridge": (),
    "simplex-mcp": ("serve", "register"),
    "simplex-conformance": ("vectors", "bot", "caller", "coverage", "selftest"),
}

_URL: Final = re.compile(r"https?://[^\s<>()\"'`]+")
# A path of the repository as a user would be told to open it: a file or folder of the repository's
# documentation, examples or tools, or one of its top-level documents. A file name the tools write
# (report.md) or the spec's data they ship (spec/vectors) is not a place to read.
_REPOSITORY_PATH: Final = re.compile(
    r"(?<![\w/.-])(?:(?:docs|examples|bench|scripts|tests|conformance)/[\w./#-]*"
    r"|(?:README|CHANGELOG|CONTRIBUTING|LICENSE)(?:\.md)?\b)"
)
_REPOSITORY_LINK: Final = re.compile(
    re.escape(REPOSITORY_URL)
    + r"/(?:blob|tree)/main/(?P<path>[^\s#<>()\"'`]*)(?:#(?P<anchor>[\w-]+))?"
)
_MD_LINK: Final = re.compile(r"\]\(([^)\s]+)\)")


def repository_paths(text: str) -> list[str]:
    """The repository paths ``text`` names outside its web addresses."""
    return _REPOSITORY_PATH.findall(_URL.sub(" ", text))


def _slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation gone, '-' for spaces."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def _anchors(document: Path) -> set[str]:
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", document.read_text(encoding="utf-8"), re.M)
    return {_slug(h) for h in headings}


def dangling_links(text: str) -> list[str]:
    """The addresses into the repository, in ``text``, whose file or heading does not exist."""
    bad = []
    for match in _REPOSITORY_LINK.finditer(text):
        target = ROOT / match["path"]
        missing = not target.exists()
        if missing or (match["anchor"] and match["anchor"] not in _anchors(target)):
            bad.append(match[0])
    return bad


def test_the_repository_path_finder_finds_what_it_must_and_nothing_else() -> None:
    # The finder is what the console-script tests rest on: were it blind, they would pass.
    assert repository_paths("Next: docs/simplex-call.md, and `simplex-call --help`.") == [
        "docs/simplex-call.md"
    ]
    assert repository_paths("the driver protocol (conformance/README.md)") == [
        "conformance/README.md"
    ]
    assert repository_paths("see README.md and examples/") == ["README.md", "examples/"]
    assert repository_paths(f"Next: {doc_url('docs/simplex-call.md')}") == []
    assert repository_paths("writes report.md; default: the shipped spec/vectors") == []
    assert repository_paths("ws://127.0.0.1:5225/docs/x and ~/.simplex-mcp/docs/y") == []


def test_the_link_checker_finds_missing_files_and_headings() -> None:
    assert dangling_links(doc_url("docs/sim.md")) == []
    assert dangling_links(doc_url("docs/no-such-page.md")) == [doc_url("docs/no-such-page.md")]
    assert dangling_links(doc_url("conformance/README.md#the-driver-protocol")) == []
    assert dangling_links(doc_url("conformance/README.md#nothing-here")) != []


def test_the_project_urls_point_at_the_repository() -> None:
    urls = PYPROJECT["project"]["urls"]
    assert set(urls) >= {"Homepage", "Documentation", "Source", "Issues", "Changelog"}
    assert urls["Source"] == urls["Homepage"] == REPOSITORY_URL
    assert urls["Issues"] == f"{REPOSITORY_URL}/issues"
    assert urls["Documentation"] == f"{REPOSITORY_URL}/tree/main/docs"
    assert urls["Changelog"] == doc_url("CHANGELOG.md")
    # The spec is the SimpleX project's, not ours.
    assert urls["Specification"].startswith("https://github.com/simplex-chat/")
    assert dangling_links("\n".join(urls.values())) == []


def test_the_readme_links_work_on_the_package_index_page() -> None:
    # The index shows README.md without the repository around it: a relative link has nothing
    # to resolve against there.
    relative = [t for t in _MD_LINK.findall(README) if not t.startswith(("https://", "#"))]
    assert relative == []
    assert dangling_links(README) == []


def test_the_readme_starts_with_the_two_commands() -> None:
    # The Makefile and .ci/run follow these two; the users' install section comes after them.
    lines = README.splitlines()
    assert lines[0] == "```sh" and lines[3] == "```"
    assert lines[1].startswith("make demo ") and lines[2].startswith("make test ")
    assert README.index("\n## Install") > README.index("make test ")


def test_the_changelog_keeps_a_changelog() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n")
    versions = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert versions[0] == "Unreleased"
    assert "0.1.0" in versions
    for section in re.findall(r"^### (.+)$", text, re.M):
        assert section in {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
    assert dangling_links(text) == []


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name(argv[0])
    assert script.exists(), f"{argv[0]} is not installed beside {sys.executable}"
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    env.pop("SIMPLEX_CORE", None)
    return subprocess.run(
        [str(script), *argv[1:]], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.fixture(scope="module")
def outputs() -> dict[tuple[str, ...], subprocess.CompletedProcess[str]]:
    """Every console script's help, its commands' help and the demo, run side by side."""
    argvs = [(script, "--help") for script in COMMANDS]
    argvs += [(s, c, "--help") for s, commands in COMMANDS.items() for c in commands]
    argvs.append(("simplex-call", "demo"))
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = list(pool.map(lambda a: _run(list(a)), argvs))
    return dict(zip(argvs, done, strict=True))


@pytest.mark.slow
def test_every_command_is_read(outputs: Any) -> None:
    assert set(COMMANDS) == set(PYPROJECT["project"]["scripts"])
    for script, commands in COMMANDS.items():
        listed = outputs[(script, "--help")].stdout
        # argparse lists a parser's commands as {a,b} in the usage or one per line under the
        # COMMAND metavar; a usage written by hand names each after the program's name.
        found = set()
        name = re.escape(script)
        for group in re.findall(rf"{name} \{{([\w,-]+)\}}", listed):
            found.update(group.split(","))
        found.update(re.findall(rf"^(?:usage:)?\s+{name} ([a-z][\w-]*)(?=\s|$)", listed, re.M))
        if "\n  COMMAND\n" in listed:
            found.update(
                re.findall(r"^    ([a-z][\w-]*)\s", listed.split("\n  COMMAND\n")[1], re.M)
            )
        assert found == set(commands), (
            f"{script}: --help lists {sorted(found)}, COMMANDS {commands}"
        )


@pytest.mark.slow
def test_no_console_script_output_names_a_repository_path(outputs: Any) -> None:
    for argv, done in outputs.items():
        assert done.returncode == 0, (argv, done.stderr)
        assert done.stdout, argv
        printed = done.stdout + done.stderr
        assert repository_paths(printed) == [], argv
        assert dangling_links(printed) == [], argv


@pytest.mark.slow
def test_the_demo_ends_with_the_guide_s_address(outputs: Any) -> None:
    last = outputs[("simplex-call", "demo")].stdout.splitlines()[-1]
    assert last.startswith("Every step worked.")
    assert last.endswith(doc_url("docs/simplex-call.md"))
