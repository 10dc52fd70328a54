"""The conventions every console script follows: ``--version``, exit codes in ``--help`` and one
table of them in the README, one version number."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from simplex_protocols import __version__
from simplex_protocols.cli.bridge import main as bridge_main
from simplex_protocols.cli.call import main as call_main
from simplex_protocols.cli.sim import main as sim_main
from simplex_protocols.conformance.cli import main as conformance_main
from simplex_protocols.mcp_server.cli import main as mcp_main

ROOT = Path(__file__).resolve().parents[2]

MAINS: dict[str, Callable[[list[str]], int]] = {
    "simplex-call": lambda argv: call_main(argv, environ={}),
    "simplex-bridge": bridge_main,
    "simplex-mcp": mcp_main,
    "simplex-sim": sim_main,
    "simplex-conformance": conformance_main,
}


def test_every_console_script_is_covered() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "scripts"
    ]
    assert set(scripts) == set(MAINS)


@pytest.mark.parametrize("script", sorted(MAINS))
def test_version_prints_name_and_version_and_exits_0(
    script: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert MAINS[script](["--version"]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"{script} {__version__}\n"
    assert captured.err == ""


def test_the_version_is_written_once() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "version" not in project
    assert "version" in project["dynamic"]
    # The installed metadata was built from the same source.
    assert importlib.metadata.version("simplex-protocols") == __version__
    written = sorted(
        path.relative_to(ROOT).as_posix()
        for folder in ("simplex_protocols", "mcp_server", "conformance")
        for path in (ROOT / folder).rglob("*.py")
        if f'"{__version__}"' in path.read_text(encoding="utf-8")
    )
    assert written == ["simplex_protocols/__init__.py"]


def _help(script: str, capsys: pytest.CaptureFixture[str]) -> str:
    try:
        status = MAINS[script](["--help"])
    except SystemExit as exc:  # simplex-sim's --help exits through argparse
        status = int(exc.code or 0)
    assert status == 0
    return capsys.readouterr().out


def _help_codes(text: str) -> set[int]:
    """The codes listed under ``exit status:`` in a help text."""
    section = text.split("exit status:\n", 1)[1]
    codes: set[int] = set()
    for line in section.splitlines():
        if not line.strip():
            break
        match = re.match(r"  (\d+)\s", line)
        if match:
            codes.add(int(match.group(1)))
    return codes


def _readme_table() -> dict[str, set[int]]:
    """The codes each tool's column of the README's exit code table fills."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert header[0] == "code"
    table: dict[str, set[int]] = {tool: set() for tool in header[1:]}
    for row in rows[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert len(cells) == len(header), row
        for tool, cell in zip(header[1:], cells[1:], strict=True):
            if cell:
                table[tool].add(int(cells[0]))
    return table


def test_the_readme_table_has_every_code_of_every_tool(
    capsys: pytest.CaptureFixture[str],
) -> None:
    table = _readme_table()
    assert set(table) == set(MAINS)
    for script in MAINS:
        assert table[script] == _help_codes(_help(script, capsys)), script


def test_the_help_tables_hold_the_implemented_codes() -> None:
    from simplex_protocols.cli import sim
    from simplex_protocols.cli._call_args import EXIT_CODES_HELP, ExitCode
    from simplex_protocols.conformance._report import ExitCode as ConformanceExit

    assert {int(code) for code in ExitCode} <= _help_codes(EXIT_CODES_HELP)
    assert {int(code) for code in ConformanceExit} <= _help_codes(conformance_exit_table())
    assert {sim.EXIT_OK, sim.EXIT_RUNTIME, sim.EXIT_USAGE, sim.EXIT_OUTPUT_CLOSED} <= (
        _help_codes(sim.EXIT_TABLE)
    )


def conformance_exit_table() -> str:
    from simplex_protocols.conformance.cli import EXIT_TABLE

    return EXIT_TABLE
