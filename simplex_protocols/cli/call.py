"""simplex-call: call MCP and A2A bots over SimpleX (placeholder entry until the CLI lands)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``simplex-call``."""
    args = sys.argv[1:] if argv is None else argv
    print(f"simplex-call is not built yet (got {args!r})", file=sys.stderr)
    return 64
