"""``register NAME --host HOST``: each host's file, checked against its documented shape.

The shapes are JSON Schemas written from the hosts' documentation
(``data/host_config_schemas.json``, each with its source); Codex's TOML is parsed and checked
against its schema as data.
"""

from __future__ import annotations

import json
import stat
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from simplex_protocols.mcp_server.cli import parse_args
from simplex_protocols.mcp_server.config import RegisterOptions, UsageError
from simplex_protocols.mcp_server.files import DataFolder
from simplex_protocols.mcp_server.hosts import HostConfigError, config_path, edit_codex
from simplex_protocols.mcp_server.register import run_register

SCHEMAS: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "host_config_schemas.json").read_text()
)


def started_agent(tmp_path: Path) -> tuple[Path, str]:
    folder = tmp_path / "agent"
    DataFolder(folder).prepare()
    DataFolder(folder).write_server("my-agent", 5227, 23)
    return folder, DataFolder(folder).token()


def register(
    tmp_path: Path, folder: Path, host: str, *, scope: str = "user", dry_run: bool = False
) -> tuple[int, list[str]]:
    out: list[str] = []
    options = RegisterOptions(
        name="my-agent",
        data=folder,
        data_given=True,
        scope="local" if scope == "local" else "user",
        host=host,
        dry_run=dry_run,
    )
    env = {"HOME": str(tmp_path / "home"), "PATH": ""}
    code = run_register(options, env=env, cwd=tmp_path / "project", out=out.append)
    return code, out


def host_file(tmp_path: Path, host: str, scope: str = "user") -> Path:
    env = {"HOME": str(tmp_path / "home")}
    return config_path(host, scope, home=tmp_path / "home", cwd=tmp_path / "project", env=env)


def check(host: str, document: Any) -> None:
    jsonschema.validate(document, SCHEMAS[host]["schema"])


def test_claude_desktop_gets_a_stdio_entry_and_keeps_the_rest(tmp_path: Path) -> None:
    folder, _token = started_agent(tmp_path)
    path = host_file(tmp_path, "claude-desktop")
    path.parent.mkdir(parents=True)
    old = {"globalShortcut": "Ctrl+Space", "mcpServers": {"other": {"command": "other-mcp"}}}
    path.write_text(json.dumps(old))
    code, out = register(tmp_path, folder, "claude-desktop")
    assert code == 0
    document = json.loads(path.read_text())
    check("claude-desktop", document)
    assert document["globalShortcut"] == "Ctrl+Space"
    assert document["mcpServers"]["other"] == {"command": "other-mcp"}
    assert document["mcpServers"]["simplex-my-agent"] == {
        "command": sys.executable,
        "args": [
            "-m",
            "simplex_protocols.mcp_server",
            "serve",
            "my-agent",
            "--stdio",
            "--data",
            str(folder),
        ],
    }
    assert json.loads((path.parent / (path.name + ".bak")).read_text()) == old
    assert out == [
        f"Added to claude-desktop: server simplex-my-agent in {path} (the old file is {path}.bak)."
    ]


def test_cursor_gets_http_with_the_bearer_header_in_a_private_new_file(tmp_path: Path) -> None:
    folder, token = started_agent(tmp_path)
    code, _out = register(tmp_path, folder, "cursor")
    assert code == 0
    path = host_file(tmp_path, "cursor")
    assert path == tmp_path / "home" / ".cursor" / "mcp.json"
    document = json.loads(path.read_text())
    check("cursor", document)
    assert document == {
        "mcpServers": {
            "simplex-my-agent": {
                "url": "http://127.0.0.1:5227/mcp",
                "headers": {"Authorization": f"Bearer {token}"},
            }
        }
    }
    # a new file holding the token is this user's only
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not (path.parent / "mcp.json.bak").exists()


def test_vscode_asks_for_the_token_instead_of_storing_it(tmp_path: Path) -> None:
    folder, token = started_agent(tmp_path)
    path = host_file(tmp_path, "vscode", "local")
    assert path == tmp_path / "project" / ".vscode" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "inputs": [
                    {"type": "promptString", "id": "simplex-my-agent-token", "description": "x"}
                ],
                "servers": {"simplex-my-agent": {"type": "http", "url": "http://127.0.0.1:1/mcp"}},
            }
        )
    )
    code, _out = register(tmp_path, folder, "vscode", scope="local")
    assert code == 0
    text = path.read_text()
    document = json.loads(text)
    check("vscode", document)
    assert token not in text
    assert document["servers"] == {
        "simplex-my-agent": {
            "type": "http",
            "url": "http://127.0.0.1:5227/mcp",
            "headers": {"Authorization": "Bearer ${input:simplex-my-agent-token}"},
        }
    }
    # the input of an earlier run is replaced, not repeated
    assert [item["id"] for item in document["inputs"]] == ["simplex-my-agent-token"]
    assert document["inputs"][0]["password"] is True


def test_codex_gets_a_toml_table_replacing_the_old_one(tmp_path: Path) -> None:
    folder, token = started_agent(tmp_path)
    path = host_file(tmp_path, "codex")
    assert path == tmp_path / "home" / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(
        'model = "o3"\n\n[mcp_servers.simplex-my-agent]\nurl = "http://127.0.0.1:1/mcp"\n\n'
        '[mcp_servers.simplex-my-agent.env]\nX = "1"\n\n[mcp_servers.other]\ncommand = "o"\n'
    )
    code, _out = register(tmp_path, folder, "codex")
    assert code == 0
    document = tomllib.loads(path.read_text())
    check("codex", document)
    assert document["model"] == "o3"
    assert document["mcp_servers"] == {
        "other": {"command": "o"},
        "simplex-my-agent": {
            "url": "http://127.0.0.1:5227/mcp",
            "http_headers": {"Authorization": f"Bearer {token}"},
        },
    }
    assert (path.parent / "config.toml.bak").read_text().startswith('model = "o3"')


def test_a_file_that_is_not_its_format_is_left_alone(tmp_path: Path) -> None:
    folder, _token = started_agent(tmp_path)
    path = host_file(tmp_path, "cursor")
    path.parent.mkdir(parents=True)
    path.write_text("[1, 2]")
    code, out = register(tmp_path, folder, "cursor")
    assert (code, out) == (1, [f"{path}: not a JSON object"])
    assert path.read_text() == "[1, 2]"
    with pytest.raises(HostConfigError, match="not TOML"):
        edit_codex("a = ", "simplex-my-agent", "")


def test_dry_run_prints_the_change_and_writes_nothing(tmp_path: Path) -> None:
    folder, _token = started_agent(tmp_path)
    code, out = register(tmp_path, folder, "claude-desktop", dry_run=True)
    path = host_file(tmp_path, "claude-desktop")
    assert code == 0
    assert not path.exists()
    diff = out[0].splitlines()
    assert diff[:2] == ["--- /dev/null", f"+++ {path}"]
    added = "".join(line[1:] for line in diff[3:])
    check("claude-desktop", json.loads(added))


def test_json_prints_the_stdio_entry(tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    code, out = register(tmp_path, folder, "json")
    assert code == 0
    entry = json.loads(out[0])
    check("claude-desktop", {"mcpServers": entry})
    assert entry["simplex-my-agent"]["args"][-3:] == ["--stdio", "--data", str(folder)]


def test_the_host_option_is_parsed_and_checked() -> None:
    home = Path("/home/u")
    options = parse_args(["register", "my-agent", "--host", "codex", "--dry-run"], home=home)
    assert isinstance(options, RegisterOptions)
    assert (options.host, options.dry_run) == ("codex", True)
    plain = parse_args(["register", "my-agent"], home=home)
    assert isinstance(plain, RegisterOptions)
    assert (plain.host, plain.dry_run) == ("claude-code", False)
    with pytest.raises(UsageError) as caught:
        parse_args(["register", "my-agent", "--host", "zed"], home=home)
    assert caught.value.message == (
        "--host: one of claude-code, claude-desktop, cursor, vscode, codex, json expected, got zed"
    )
