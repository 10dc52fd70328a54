"""The names ``simplex-mcp register --host`` accepts, apart from the code that edits each file.

``simplex-mcp --help`` and the argument parser need only these names; keeping them here lets the
parser check ``--host`` without importing :mod:`.hosts` (and with it ``json``, ``tomllib`` and
``shutil``) before a ``register`` command runs.
"""

from __future__ import annotations

from typing import Final

__all__ = ["HOSTS"]

#: ``--host`` values; ``claude-code`` (the plan's, through its CLI) is the default.
HOSTS: Final = ("claude-code", "claude-desktop", "cursor", "vscode", "codex", "json")
