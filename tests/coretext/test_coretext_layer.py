"""coretext is the bottom layer: the standard library and ``errors``, and no I/O."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import simplex_protocols.coretext as coretext

#: What importing coretext may load of ours: the package root (which loads ``errors``), the
#: helper that sets ``__module__`` on exports, and coretext itself.
ALLOWED = {"simplex_protocols", "simplex_protocols.errors", "simplex_protocols._exports"}


@pytest.mark.slow
def test_importing_coretext_loads_nothing_else_of_ours_and_no_io_library() -> None:
    code = "import sys, simplex_protocols.coretext\nprint('\\n'.join(sorted(sys.modules)))\n"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    ours = {m for m in loaded if m.split(".")[0] in ("simplex_protocols", "mcp_server")}
    assert {m for m in ours if not m.startswith("simplex_protocols.coretext")} <= ALLOWED
    forbidden = {"socket", "asyncio", "anyio", "websockets", "ctypes", "httpx", "selectors"}
    assert forbidden.isdisjoint(loaded)


def test_every_export_is_documented_and_reports_its_public_module() -> None:
    for name in coretext.__all__:
        obj = getattr(coretext, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__ and obj.__doc__.strip(), name
            assert obj.__module__ == "simplex_protocols.coretext", name
