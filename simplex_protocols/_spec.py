"""One loader for the machine-readable spec shipped with the package.

The files live in ``spec/`` at the repository root. In an installed wheel they are copied to
``simplex_protocols/_spec/``; in an editable install or a checkout they are read in place. Tests,
the conformance suite and the codecs all read the same bytes through :func:`spec_path`.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

__all__ = ["load_json", "spec_path", "spec_root"]


@functools.cache
def spec_root() -> Path:
    """The folder that holds ``schemas/``, ``requirements.json`` and ``vectors/``."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_spec", here.parent / "spec"):
        if (candidate / "schemas").is_dir():
            return candidate
    raise FileNotFoundError(
        "the spec files are missing: expected simplex_protocols/_spec (wheel) or spec/ (checkout)"
    )


def spec_path(*parts: str) -> Path:
    """Path of a file or folder under the spec root, e.g. ``spec_path("schemas", "x.jtd.json")``."""
    return spec_root().joinpath(*parts)


@functools.cache
def load_json(*parts: str) -> Any:
    """Read and cache a JSON file of the spec. Do not mutate the result."""
    with spec_path(*parts).open(encoding="utf-8") as fh:
        return json.load(fh)
