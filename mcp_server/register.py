"""``simplex-mcp register NAME``: add the agent to Claude Code as the MCP server ``simplex-NAME``.

Reads ``DIR/server.json`` (written at each start), runs ``claude mcp remove`` (a missing entry
is ignored) and then ``claude mcp add-json`` with the entry: type http, the URL, a
``headersHelper`` that prints ``DIR/headers.json`` (so the token itself is in no configuration
file), and a timeout from the expiry hours (plan "Register").
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from simplex_protocols._wire import dumps

from .config import RegisterOptions
from .files import DataFolder
from .text import shell_quote

__all__ = ["claude_entry", "project_folder", "run_register", "shell_quote"]


def claude_entry(folder: Path, port: int, expire_hours: int) -> dict[str, Any]:
    """The Claude Code entry of the agent: ``timeout`` is ``(expireHours + 24) h + 10 min`` in ms."""
    return {
        "type": "http",
        "url": f"http://127.0.0.1:{port}/mcp",
        "headersHelper": f"cat {shell_quote(str(folder / 'headers.json'))}",
        "timeout": (expire_hours + 24) * 3_600_000 + 600_000,
    }


def project_folder(cwd: Path) -> Path:
    """The folder Claude Code keys local-scope servers by: the main git repository, or ``cwd``."""
    for candidate in [cwd, *cwd.parents]:
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return candidate
        if dot_git.is_file():
            text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                gitdir = Path(text[7:].strip())
                gitdir = gitdir if gitdir.is_absolute() else (candidate / gitdir).resolve()
                # a worktree: .git/worktrees/NAME -> the main repository
                if gitdir.parent.name == "worktrees":
                    return gitdir.parent.parent.parent
            return candidate
    return cwd


Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def _run(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, check=False)


def run_register(
    options: RegisterOptions,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    runner: Runner = _run,
    out: Callable[[str], None] = print,
) -> int:
    """Register the agent in Claude Code; return the exit code."""
    environ = dict(os.environ if env is None else env)
    server = DataFolder(options.data).read_server()
    port = server.get("port") if server is not None else None
    expire = server.get("expireHours") if server is not None else None
    if not isinstance(port, int) or not isinstance(expire, int):
        hint = f"simplex-mcp serve {options.name}"
        if options.data_given:
            hint += f" --data {shell_quote(str(options.data))}"
        out(f'Agent "{options.name}" was never started. Start it with: {hint}')
        return 1
    entry = claude_entry(options.data, port, expire)
    server_name = f"simplex-{options.name}"
    claude = shutil.which("claude", path=environ.get("PATH"))
    if claude is None:
        listing = dumps({server_name: entry})
        if options.scope == "user":
            out(f'Add this entry under "mcpServers" in ~/.claude.json: {listing}')
        else:
            folder = project_folder(cwd if cwd is not None else Path.cwd())
            out(
                f'Add this entry under "projects" > "{folder}" > "mcpServers" in ~/.claude.json: {listing}'
            )
        return 1
    runner([claude, "mcp", "remove", "--scope", options.scope, server_name])
    added = runner([claude, "mcp", "add-json", "--scope", options.scope, server_name, dumps(entry)])
    if added.returncode != 0:
        out((added.stderr or added.stdout or "claude mcp add-json failed").strip())
        return 1
    out(f"Added to Claude Code: scope {options.scope}, server {server_name}.")
    return 0
