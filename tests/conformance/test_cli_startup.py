"""``simplex-conformance --help`` builds its parser without the dataclasses of ``_model``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from simplex_protocols import conformance
from simplex_protocols.conformance import _model, _model_kinds


def test_the_model_re_exports_its_enumerations_and_errors_unchanged() -> None:
    for name in _model_kinds.__all__:
        assert getattr(_model, name) is getattr(_model_kinds, name)
        assert getattr(conformance, name) is getattr(_model_kinds, name)


@pytest.mark.parametrize(
    "name", ["CallerOptions", "CheckRun", "CheckSpec", "LiveOptions", "Outcome", "RunOptions"]
)
def test_the_package_still_gives_every_dataclass(name: str) -> None:
    assert getattr(conformance, name) is getattr(_model, name)


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_help_and_version_do_not_build_the_model(args: list[str]) -> None:
    code = (
        "import sys; from simplex_protocols.conformance.cli import main; "
        f"sys.argv = {['simplex-conformance', *args]!r}; "
        "code = main(); "
        "print('simplex_protocols.conformance._model' in sys.modules, file=sys.stderr); "
        "sys.exit(code)"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "simplex-conformance" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "False"
