"""``simplex-mcp register NAME --host HOST``: the agent's entry in each host's configuration file.

Each host keeps its MCP servers in its own documented file and shape:

- Claude Desktop: ``claude_desktop_config.json``, ``mcpServers`` > NAME > ``command``, ``args``.
  Its file configures local servers only (remote ones are added in its settings), so the entry
  starts the agent with ``--stdio``.
- Cursor: ``~/.cursor/mcp.json`` (``.cursor/mcp.json`` in the project with ``--scope local``),
  ``mcpServers`` > NAME > ``url``, ``headers``: HTTP, with the bearer token in ``headers``.
- VS Code: the user profile's ``mcp.json`` (``.vscode/mcp.json`` with ``--scope local``),
  ``servers`` > NAME > ``type: http``, ``url``, ``headers``; the token is an ``inputs`` entry
  of type ``promptString`` with ``password: true``, so VS Code asks for it once and keeps it
  in its secret storage rather than in the file.
- Codex: ``~/.codex/config.toml`` (``$CODEX_HOME``), a table ``[mcp_servers.NAME]`` with
  ``url`` and ``http_headers``.

The edits here are pure (old text in, new text out), so that ``--dry-run`` shows exactly what
a run would write.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .host_names import HOSTS

__all__ = [
    "HOSTS",
    "HostConfigError",
    "HostFile",
    "codex_table",
    "config_path",
    "edit_codex",
    "edit_json",
    "stdio_entry",
    "write_config",
]


class HostConfigError(Exception):
    """A host's configuration file cannot be read as its format (exit code 1)."""


@dataclass(frozen=True, slots=True)
class HostFile:
    """A configuration file before and after the edit."""

    path: Path
    old: str | None
    new: str


def stdio_entry(name: str, folder: Path, data_given: bool) -> dict[str, Any]:
    """``command`` and ``args`` that start the agent on stdio.

    The interpreter is named by its absolute path: a host started from a desktop menu often
    has a ``PATH`` without the virtual environment that holds ``simplex-mcp``.
    """
    args = ["-m", "simplex_protocols.mcp_server", "serve", name, "--stdio"]
    if data_given:
        args += ["--data", str(folder)]
    return {"command": sys.executable, "args": args}


def config_path(
    host: str,
    scope: str,
    *,
    home: Path,
    cwd: Path,
    env: Mapping[str, str],
    platform: str = sys.platform,
) -> Path:
    """Where ``host`` keeps its MCP servers for ``scope`` (``user`` or ``local``)."""
    if host == "claude-desktop":
        if platform == "darwin":
            return (
                home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
            )
        if platform == "win32":
            base = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
        else:
            base = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
        return base / "Claude" / "claude_desktop_config.json"
    if host == "cursor":
        return (cwd if scope == "local" else home) / ".cursor" / "mcp.json"
    if host == "vscode":
        if scope == "local":
            return cwd / ".vscode" / "mcp.json"
        if platform == "darwin":
            return home / "Library" / "Application Support" / "Code" / "User" / "mcp.json"
        if platform == "win32":
            return (
                Path(env.get("APPDATA") or home / "AppData" / "Roaming")
                / "Code"
                / "User"
                / "mcp.json"
            )
        return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "Code" / "User" / "mcp.json"
    if host == "codex":
        if scope == "local":
            return cwd / ".codex" / "config.toml"
        return Path(env.get("CODEX_HOME") or home / ".codex") / "config.toml"
    raise ValueError(f"no configuration file for host {host}")


def _format_json(document: Mapping[str, Any]) -> str:
    # A file people read and edit, so indented; not wire text, hence not _wire.dumps.
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"  # noqa: TID251


def edit_json(
    old: str | None,
    key: str,
    server: str,
    entry: Mapping[str, Any],
    *,
    inputs: list[dict[str, Any]] | None = None,
) -> str:
    """``old`` with ``key`` > ``server`` set to ``entry`` (and ``inputs`` merged by ``id``);
    every other member is kept.

    Raises:
        HostConfigError: ``old`` is not a JSON object, or ``key`` is not an object.
    """
    document: dict[str, Any] = {}
    if old is not None and old.strip():
        try:
            loaded = json.loads(old)
        except json.JSONDecodeError as exc:
            raise HostConfigError(f"not JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise HostConfigError("not a JSON object")
        document = loaded
    servers = document.setdefault(key, {})
    if not isinstance(servers, dict):
        raise HostConfigError(f'"{key}" is not an object')
    servers[server] = dict(entry)
    if inputs:
        listed = document.setdefault("inputs", [])
        if not isinstance(listed, list):
            raise HostConfigError('"inputs" is not an array')
        ids = {item["id"] for item in inputs}
        kept = [item for item in listed if not (isinstance(item, dict) and item.get("id") in ids)]
        document["inputs"] = [*kept, *inputs]
    return _format_json(document)


def _toml_string(value: str) -> str:
    # A TOML basic string: JSON's escapes are a subset TOML accepts.
    return json.dumps(value, ensure_ascii=False)  # noqa: TID251


def codex_table(server: str, url: str, token: str) -> str:
    """The ``[mcp_servers.SERVER]`` table: Streamable HTTP with the bearer token header."""
    return (
        f"[mcp_servers.{server}]\n"
        f"url = {_toml_string(url)}\n"
        f"http_headers = {{ Authorization = {_toml_string('Bearer ' + token)} }}\n"
    )


def edit_codex(old: str | None, server: str, table: str) -> str:
    """``old`` without its ``[mcp_servers.SERVER]`` table (and sub-tables), ``table`` appended.

    Raises:
        HostConfigError: ``old`` or the result is not TOML, or the result lacks the table.
    """
    text = old or ""
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HostConfigError(f"not TOML: {exc}") from None
    mine = re.compile(
        rf"""\s*\[\s*mcp_servers\s*\.\s*(?:{re.escape(server)}|"{re.escape(server)}")\s*[.\]]"""
    )
    kept: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("["):
            skipping = mine.match(line) is not None
        if not skipping:
            kept.append(line)
    body = "".join(kept).rstrip("\n")
    new = (body + "\n\n" if body else "") + table
    try:
        parsed = tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise HostConfigError(f"the edited file is not TOML: {exc}") from None
    if server not in parsed.get("mcp_servers", {}):
        raise HostConfigError(f"mcp_servers is not a table of tables; add [mcp_servers.{server}]")
    return new


def write_config(path: Path, old: str | None, new: str) -> Path | None:
    """Write ``new`` to ``path``, the old content kept in ``PATH.bak``; return the backup.

    A new file is created with mode 0600: Cursor's and Codex's entries hold the token.
    """
    backup: Path | None = None
    if old is not None:
        backup = path.with_name(path.name + ".bak")
        # copy2 keeps the file's mode: the old entry may hold a token too
        shutil.copy2(path, backup)
        path.write_text(new, encoding="utf-8")
        return backup
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(new)
    return backup
