"""Without the optional extras, every console script works and what needs an extra names it.

``pip install simplex-protocols`` leaves out the extras (``[postgresql]``, ``[mysql]``,
``[fastmcp]``). Each check runs in a fresh interpreter whose import system refuses the
extras' packages, as if they were not installed: a finder first on ``sys.meta_path`` raises
``ModuleNotFoundError`` for them. The console scripts' ``--help`` and ``--version`` then work
(status 0, no traceback), and a bot whose task database needs a missing driver gets one line
that says which extra to install.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: The import names of what the extras install: each extra's own packages.
EXTRA_PACKAGES = {
    "postgresql": ("asyncpg",),
    "mysql": ("aiomysql", "pymysql"),
    "fastmcp": ("fastmcp",),
}

BLOCKED = sorted(name for names in EXTRA_PACKAGES.values() for name in names)

#: Installed before the program runs: the extras' packages cannot be imported.
BLOCKER = f"""\
import importlib.abc
import sys

class _NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, _NotInstalled())
"""

#: (console script, its entry module).
SCRIPTS = [
    ("simplex-call", "simplex_protocols.cli.call"),
    ("simplex-sim", "simplex_protocols.cli.sim"),
    ("simplex-bridge", "simplex_protocols.cli.bridge"),
    ("simplex-mcp", "simplex_protocols.mcp_server.cli"),
    ("simplex-conformance", "simplex_protocols.conformance.cli"),
]


def run_without_extras(
    program: str, tmp_path: os.PathLike[str]
) -> subprocess.CompletedProcess[str]:
    """``program`` in a fresh interpreter without the extras, in ``tmp_path`` as HOME."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.fspath(tmp_path)}
    return subprocess.run(
        [sys.executable, "-c", BLOCKER + program],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )


def test_the_blocker_makes_an_installed_extra_unimportable(tmp_path: os.PathLike[str]) -> None:
    # fastmcp is installed here (the dev extra); under the blocker it is not importable.
    done = run_without_extras(
        "try:\n    import fastmcp\nexcept ModuleNotFoundError:\n    print('blocked')\n",
        tmp_path,
    )
    assert done.stdout == "blocked\n", done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("script", "module"), SCRIPTS, ids=[s for s, _ in SCRIPTS])
@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_console_scripts_run_without_the_extras(
    script: str, module: str, flag: str, tmp_path: os.PathLike[str]
) -> None:
    done = run_without_extras(
        f"from {module} import main\nsys.argv = [{script!r}, {flag!r}]\nsys.exit(main())\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert script in done.stdout
    assert "Traceback" not in done.stderr


def test_the_library_imports_without_the_extras(tmp_path: os.PathLike[str]) -> None:
    # The bindings and the bot load without fastmcp and the database drivers: each loads
    # only when a server or a database that needs it arrives.
    done = run_without_extras(
        "import simplex_protocols.bindings.mcp, simplex_protocols.bindings.a2a\n"
        "import simplex_protocols.bot\n"
        "print('ok')\n",
        tmp_path,
    )
    assert done.stdout == "ok\n", done.stderr[-2000:]


#: A bot program that opens an A2A binding on a task database and prints the error it gets.
A2A_ON_DATABASE = """\
from a2a.server.agent_execution import AgentExecutor
from a2a.types.a2a_pb2 import AgentCard

from simplex_protocols.bindings.a2a import A2ABinding
from simplex_protocols.errors import BindingConfigError


class Agent(AgentExecutor):
    async def execute(self, context, event_queue):
        pass

    async def cancel(self, context, event_queue):
        pass


try:
    A2ABinding(Agent(), AgentCard(name="t", version="1"), database=sys.argv[1])
except BindingConfigError as exc:
    print(exc.code)
    print(exc)
"""


@pytest.mark.parametrize(
    ("url", "extra"),
    [("postgresql://u:secret@127.0.0.1/tasks", "postgresql"), ("mysql://u@127.0.0.1/t", "mysql")],
)
def test_a_task_database_without_its_driver_names_the_extra(
    url: str, extra: str, tmp_path: os.PathLike[str]
) -> None:
    done = run_without_extras(f"sys.argv[1:] = [{url!r}]\n" + A2A_ON_DATABASE, tmp_path)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    code, message = done.stdout.splitlines()  # the code, then the message on one line
    assert code == "driver_missing"
    assert f"pip install 'simplex-protocols[{extra}]'" in message
    assert "secret" not in message
