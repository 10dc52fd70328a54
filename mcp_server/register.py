"""``simplex-mcp register NAME``: add the agent to Claude Code as the MCP server ``simplex-NAME``.

``--host`` (not the plan's) writes another host's configuration file instead
(:mod:`simplex_protocols.mcp_server.hosts`), and ``--dry-run`` prints the change.

Reads ``DIR/server.json`` (written at each start), runs ``claude mcp remove`` (a missing entry
is ignored) and then ``claude mcp add-json`` with the entry: type http, the URL, a
``headersHelper`` that prints ``DIR/headers.json`` (so the token itself is in no configuration
file), and a timeout from the expiry hours (plan "Register").
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from simplex_protocols._wire import dumps

from .config import RegisterOptions
from .files import DataFolder, TokenFileError
from .hosts import (
    HostConfigError,
    codex_table,
    config_path,
    edit_codex,
    edit_json,
    stdio_entry,
    write_config,
)
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
    """Register the agent in Claude Code (or ``--host``); return the exit code."""
    environ = dict(os.environ if env is None else env)
    server_name = f"simplex-{options.name}"
    if options.host == "json":
        out(dumps({server_name: stdio_entry(options.name, options.data, options.data_given)}))
        return 0
    if options.host == "claude-desktop":
        return _register_file(options, None, environ, cwd, out)
    server = DataFolder(options.data).read_server()
    port = server.get("port") if server is not None else None
    expire = server.get("expireHours") if server is not None else None
    if not isinstance(port, int) or not isinstance(expire, int):
        hint = f"simplex-mcp serve {options.name}"
        if options.data_given:
            hint += f" --data {shell_quote(str(options.data))}"
        out(f'Agent "{options.name}" was never started. Start it with: {hint}')
        return 1
    if options.host != "claude-code":
        return _register_file(options, port, environ, cwd, out)
    entry = claude_entry(options.data, port, expire)
    if options.dry_run:
        out(f"claude mcp remove --scope {options.scope} {server_name}")
        out(
            f"claude mcp add-json --scope {options.scope} {server_name} {shell_quote(dumps(entry))}"
        )
        return 0
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


def _register_file(
    options: RegisterOptions,
    port: int | None,
    env: Mapping[str, str],
    cwd: Path | None,
    out: Callable[[str], None],
) -> int:
    """Write the agent's entry into the configuration file of ``options.host``."""
    server = f"simplex-{options.name}"
    here = cwd if cwd is not None else Path.cwd()
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    path = config_path(options.host, options.scope, home=home, cwd=here, env=env)
    try:
        old = path.read_text(encoding="utf-8") if path.exists() else None
    except OSError as exc:
        out(f"{path}: {exc.strerror or exc}")
        return 1
    url = f"http://127.0.0.1:{port}/mcp"  # unused by claude-desktop, whose entry is stdio
    try:
        if options.host == "claude-desktop":
            entry = stdio_entry(options.name, options.data, options.data_given)
            new = edit_json(old, "mcpServers", server, entry)
        elif options.host == "vscode":
            token_input = f"{server}-token"
            new = edit_json(
                old,
                "servers",
                server,
                {
                    "type": "http",
                    "url": url,
                    "headers": {"Authorization": f"Bearer ${{input:{token_input}}}"},
                },
                inputs=[
                    {
                        "type": "promptString",
                        "id": token_input,
                        "description": f"The bearer token of {server}, in {options.data / 'token'}",
                        "password": True,
                    }
                ],
            )
        else:
            try:
                token = DataFolder(options.data).token()
            except TokenFileError as exc:
                out(f"Data folder {options.data}: {exc}")
                return 1
            headers = {"Authorization": f"Bearer {token}"}
            if options.host == "cursor":
                new = edit_json(old, "mcpServers", server, {"url": url, "headers": headers})
            else:
                new = edit_codex(old, server, codex_table(server, url, token))
    except HostConfigError as exc:
        out(f"{path}: {exc}")
        return 1
    if options.dry_run:
        diff = difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=str(path) if old is not None else "/dev/null",
            tofile=str(path),
        )
        out("".join(diff).rstrip("\n"))
        return 0
    try:
        backup = write_config(path, old, new)
    except OSError as exc:
        out(f"{path}: {exc.strerror or exc}")
        return 1
    saved = f" (the old file is {backup})" if backup is not None else ""
    out(f"Added to {options.host}: server {server} in {path}{saved}.")
    return 0
