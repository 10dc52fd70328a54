"""``--core sim:USER``: the simulator registers its backend with the core client, which never
imports the simulator unless a ``sim:`` core is opened."""

from __future__ import annotations

import subprocess
import sys

import pytest

from simplex_protocols.core import CoreKind, open_core
from simplex_protocols.core._open import register_backend
from simplex_protocols.sim import SimBackend, default_network


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_core_client_imports_without_the_simulator() -> None:
    code = (
        "import sys\n"
        "import simplex_protocols.core\n"
        "simplex_protocols.core.parse_core_option('sim:alice')\n"
        "print('simplex_protocols.sim' in sys.modules)\n"
    )
    assert _run(code) == "False"


def test_a_sim_core_in_a_fresh_process_loads_the_simulator_on_first_use() -> None:
    code = (
        "import sys\n"
        "from simplex_protocols.core import open_core\n"
        "core = open_core('sim:alice')\n"
        "loaded = 'simplex_protocols.sim' in sys.modules\n"
        "print(core.description, type(core.backend).__name__, loaded)\n"
    )
    assert _run(code) == "sim:alice SimBackend True"


def test_the_registered_backend_is_a_user_of_the_default_network() -> None:
    core = open_core("sim:registry-test-user")
    assert isinstance(core.backend, SimBackend)
    assert core.description == "sim:registry-test-user"
    assert default_network().has_core("registry-test-user")


@pytest.mark.parametrize("kind", [CoreKind.WEBSOCKET, "lib"])
def test_only_the_simulator_backend_is_registered(kind: CoreKind | str) -> None:
    with pytest.raises(ValueError, match="built in"):
        register_backend(kind, lambda option: SimBackend(default_network(), "x"))
