"""Integration tests share the simulated network's test kit (tests/sim/simkit.py)."""

from __future__ import annotations

import sys
from pathlib import Path

_SIM_TESTS = str(Path(__file__).resolve().parent.parent / "sim")
if _SIM_TESTS not in sys.path:
    sys.path.insert(0, _SIM_TESTS)
