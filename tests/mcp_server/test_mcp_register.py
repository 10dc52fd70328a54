"""register: the entry, remove before add with a fake ``claude`` on PATH, and the errors."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from simplex_protocols.mcp_server.config import RegisterOptions
from simplex_protocols.mcp_server.files import DataFolder
from simplex_protocols.mcp_server.register import (
    claude_entry,
    project_folder,
    run_register,
    shell_quote,
)


def fake_claude(bin_dir: Path, log: Path, *, fail_add: bool = False) -> None:
    script = bin_dir / "claude"
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$*" >> {log}\n'
        + ('if [ "$2" = "add-json" ]; then echo "bad entry" >&2; exit 1; fi\n' if fail_add else "")
        + 'if [ "$2" = "remove" ]; then echo "No MCP server found" >&2; exit 1; fi\n'
        "exit 0\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_the_entry_has_a_headers_helper_and_no_token(tmp_path: Path) -> None:
    folder = tmp_path / "my agent"
    entry = claude_entry(folder, 5226, 23)
    assert entry == {
        "type": "http",
        "url": "http://127.0.0.1:5226/mcp",
        "headersHelper": f"cat '{folder}/headers.json'",
        "timeout": 169_800_000,
    }
    assert claude_entry(folder, 5227, 1)["timeout"] == 25 * 3_600_000 + 600_000


def test_shell_quote() -> None:
    assert shell_quote("my-agent") == "my-agent"
    assert shell_quote("3:Alice Smith") == "'3:Alice Smith'"
    assert shell_quote("O'Brien") == "'O'\\''Brien'"


def test_register_removes_then_adds(tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    DataFolder(folder).prepare()
    DataFolder(folder).write_server("my-agent", 5227, 23)
    token = DataFolder(folder).token()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    fake_claude(bin_dir, calls)
    out: list[str] = []
    code = run_register(
        RegisterOptions("my-agent", folder, data_given=True),
        env={**os.environ, "PATH": str(bin_dir)},
        out=out.append,
    )
    assert code == 0
    assert out == ["Added to Claude Code: scope user, server simplex-my-agent."]
    lines = calls.read_text().splitlines()
    assert lines[0] == "mcp remove --scope user simplex-my-agent"
    assert lines[1].startswith("mcp add-json --scope user simplex-my-agent ")
    entry = json.loads(lines[1].split(" ", 5)[5])
    assert entry == claude_entry(folder, 5227, 23)
    assert (
        token not in calls.read_text()
    )  # the entry reads headers.json; the token is in no configuration


def test_register_errors(tmp_path: Path) -> None:
    out: list[str] = []
    assert (
        run_register(
            RegisterOptions("my-agent", tmp_path / "none"), env={"PATH": ""}, out=out.append
        )
        == 1
    )
    assert out == ['Agent "my-agent" was never started. Start it with: simplex-mcp serve my-agent']
    folder = tmp_path / "agent"
    DataFolder(folder).prepare()
    DataFolder(folder).write_server("my-agent", 5226, 23)
    out.clear()
    assert (
        run_register(
            RegisterOptions("my-agent", folder), env={"PATH": str(tmp_path)}, out=out.append
        )
        == 1
    )
    entry = json.dumps(
        {"simplex-my-agent": claude_entry(folder, 5226, 23)},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert out == [f'Add this entry under "mcpServers" in ~/.claude.json: {entry}']
    out.clear()
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    assert (
        run_register(
            RegisterOptions("my-agent", folder, scope="local"),
            env={"PATH": str(tmp_path)},
            cwd=project / "src",
            out=out.append,
        )
        == 1
    )
    assert out == [
        f'Add this entry under "projects" > "{project}" > "mcpServers" in ~/.claude.json: {entry}'
    ]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_claude(bin_dir, tmp_path / "calls", fail_add=True)
    out.clear()
    assert (
        run_register(
            RegisterOptions("my-agent", folder), env={"PATH": str(bin_dir)}, out=out.append
        )
        == 1
    )
    assert out == ["bad entry"]


def test_project_folder_of_a_worktree_is_the_main_repository(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
    assert project_folder(worktree) == main
    assert project_folder(tmp_path / "plain") == tmp_path / "plain"
