"""Start-up: a console script's ``--help`` and ``--version`` import none of the heavy packages.

Each command runs as its console script runs it (``from MODULE import main; main()``), in a
fresh interpreter with a clean environment and ``-X importtime``, and the test reads the
imported modules from that output. The SDKs, the chat core's library, the web server and the
database layer load when a command that uses them runs, after the arguments are parsed. A test
of imports, not of time: ``bench/startup.py`` measures the time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

#: Top-level packages that a command's help or version must not import.
HEAVY = frozenset(
    {"mcp", "a2a", "simplex_chat", "uvicorn", "sqlalchemy", "fastmcp", "starlette", "httpx"}
)

#: Libraries that no help or version needs either, though the project uses them: the wire's JSON
#: codec, the schema validator, the event loop's library and the cryptography.
NOT_FOR_HELP = frozenset({"orjson", "jsonschema", "anyio", "cryptography", "nacl"})

#: Modules (and their submodules) that cost more to import than parsing the arguments, and that
#: a help loaded once through an eager import: the installed distributions' metadata (read for
#: a report's provenance), decimals and XML (reports), and the core's text rules (markdown,
#: links, the wire codec), which only a command's values need.
SLOW_FOR_HELP = (
    "importlib.metadata",
    "decimal",
    "xml",
    "simplex_protocols.coretext",
    "simplex_protocols.links",
    "simplex_protocols._wire",
)

#: (console script, its entry module, the arguments).
COMMANDS = [
    ("simplex-call", "simplex_protocols.cli.call", ["--help"]),
    ("simplex-call", "simplex_protocols.cli.call", ["--version"]),
    ("simplex-call", "simplex_protocols.cli.call", ["doctor", "--help"]),
    ("simplex-sim", "simplex_protocols.cli.sim", ["--help"]),
    ("simplex-sim", "simplex_protocols.cli.sim", ["--version"]),
    ("simplex-bridge", "simplex_protocols.cli.bridge", ["--help"]),
    ("simplex-bridge", "simplex_protocols.cli.bridge", ["--version"]),
    ("simplex-mcp", "simplex_protocols.mcp_server.cli", ["--help"]),
    ("simplex-mcp", "simplex_protocols.mcp_server.cli", ["--version"]),
    ("simplex-mcp", "simplex_protocols.mcp_server.cli", ["serve", "--help"]),
    ("simplex-conformance", "simplex_protocols.conformance.cli", ["--help"]),
    ("simplex-conformance", "simplex_protocols.conformance.cli", ["--version"]),
]


def _imported(
    module: str, argv: list[str], *, home: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    code = f"import sys; from {module} import main; sys.argv = {argv!r}; sys.exit(main())"
    # A clean environment: no PYTHONPATH, no SIMPLEX_CORE or other setting that could change
    # what a command loads; PATH only, for anything the interpreter looks up (and HOME for a
    # command that keeps files, as a call keeps its keys).
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if home is not None:
        env["HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    # importtime lines: "import time: SELF | CUMULATIVE | <indent>package.module"
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    return done, modules


def test_importtime_output_is_read() -> None:
    # The reader of -X importtime sees a package this test knows is imported: argparse.
    done, modules = _imported("simplex_protocols.cli.call", ["simplex-call", "--help"])
    assert done.returncode == 0, done.stderr[-2000:]
    assert "argparse" in modules
    assert "simplex_protocols.cli._call_args" in modules


@pytest.mark.slow
@pytest.mark.parametrize(
    ("script", "module", "args"), COMMANDS, ids=[" ".join([s, *a]) for s, _, a in COMMANDS]
)
def test_help_and_version_import_no_heavy_package(
    script: str, module: str, args: list[str]
) -> None:
    done, modules = _imported(module, [script, *args])
    assert done.returncode == 0, done.stderr[-2000:]
    assert script in done.stdout  # the help or the version was printed
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert heavy == [], f"{script} {' '.join(args)} imports {heavy}"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("script", "module", "args"), COMMANDS, ids=[" ".join([s, *a]) for s, _, a in COMMANDS]
)
def test_help_and_version_import_only_what_parsing_needs(
    script: str, module: str, args: list[str]
) -> None:
    done, modules = _imported(module, [script, *args])
    assert done.returncode == 0, done.stderr[-2000:]
    assert script in done.stdout
    unneeded = sorted(
        m
        for m in modules
        if m.split(".")[0] in NOT_FOR_HELP
        or any(m == slow or m.startswith(slow + ".") for slow in SLOW_FOR_HELP)
    )
    assert unneeded == [], f"{script} {' '.join(args)} imports {unneeded}"


# ------------------------------------------------------------------ a one-shot call over ws://

#: What no one-shot call over a WebSocket core loads: the embedded core's package, the web
#: server and the database layer (the bot's side of the SDKs), FastMCP, and an HTTP client
#: (the target is a SimpleX name, not a website).
NOT_FOR_A_CALL = frozenset(
    {"simplex_chat", "uvicorn", "starlette", "sse_starlette", "sqlalchemy", "fastmcp", "httpx"}
)

#: (the call's method and arguments, the SDK packages it must not load either).
CALLS = [
    (["tools/list"], {"a2a"}),
    (["SendMessage", "text=Two anvils"], {"mcp", "mcp_types"}),
]


@pytest.fixture(scope="module")
def demo_core() -> Iterator[str]:
    """``simplex-sim serve`` with the demo bot at @acme.simplex; the endpoint of a caller."""
    script = os.path.join(os.path.dirname(sys.executable), "simplex-sim")
    proc = subprocess.Popen(
        [
            script,
            "serve",
            "--port",
            "0",
            "--seed",
            "7",
            "--demo-bot",
            "acme",
            "--name",
            "acme.simplex=acme",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # "... listening on ws://127.0.0.1:PORT"
        port = int(first.rsplit(":", 1)[1])
        # The name is listed once the demo bot has its contact address.
        while not (line := proc.stdout.readline()).lstrip().startswith("@acme.simplex"):
            assert line, "simplex-sim serve ended before the demo bot was up"
        yield f"ws://127.0.0.1:{port}/caller"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.parametrize(("call", "other_sdk"), CALLS, ids=[c[0] for c, _ in CALLS])
def test_a_call_over_a_websocket_core_imports_only_what_it_uses(
    demo_core: str, tmp_path: Path, call: list[str], other_sdk: set[str]
) -> None:
    argv = ["simplex-call", "@acme.simplex", *call, "--core", demo_core, "--no-progress"]
    done, modules = _imported("simplex_protocols.cli.call", argv, home=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Acme Shop" in done.stdout  # the bot answered
    assert "websockets" in modules  # the call went over the WebSocket core
    loaded = sorted(m for m in modules if m.split(".")[0] in NOT_FOR_A_CALL | other_sdk)
    assert loaded == [], f"simplex-call {' '.join(call)} over ws:// imports {loaded}"
