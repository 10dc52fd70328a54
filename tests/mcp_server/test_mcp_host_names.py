"""``--host``'s names live in a small module, so that ``simplex-mcp --help`` loads no host code."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from simplex_protocols.mcp_server import host_names, hosts
from simplex_protocols.mcp_server.cli import parse_args


def test_the_host_editor_and_the_parser_share_one_list_of_names() -> None:
    assert hosts.HOSTS is host_names.HOSTS
    assert host_names.HOSTS[0] == "claude-code"


@pytest.mark.parametrize("host", host_names.HOSTS)
def test_every_host_name_is_accepted_by_register(host: str) -> None:
    options = parse_args(["register", "alice", "--host", host])
    assert getattr(options, "host", None) == host


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["serve", "--help"]])
def test_help_does_not_load_the_host_files_code(args: list[str]) -> None:
    # hosts.py brings json, tomllib and shutil; parsing needs only the names.
    code = (
        "import sys; from simplex_protocols.mcp_server.cli import main; "
        f"sys.argv = {['simplex-mcp', *args]!r}; "
        "code = main(); "
        "print(sorted(m for m in ('simplex_protocols.mcp_server.hosts', 'mcp_server.hosts', "
        "'tomllib', 'shutil') if m in sys.modules), file=sys.stderr); sys.exit(code)"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == "[]"
