#!/usr/bin/env python3
"""A complete vector driver for simplex-protocols, the Python library of this repository.

Run it through the suite::

    simplex-conformance vectors --impl "python conformance/examples/python_driver.py"

A driver speaks the line protocol of ``conformance/README.md`` on stdin and stdout: it answers
the suite's hello with the operations it supports, then answers every request line with exactly
one line. This one hands each request to the library's operation registry
(``simplex_protocols.conformance.ops``), which maps every vector operation to a codec call; a driver for
another language does the same with its own codecs.

The three answer shapes:

- ``{"ok": true, "value": ...}``: the operation succeeded;
- ``{"ok": false, "error": {"code": ...}}``: the input was refused with a typed error;
- ``{"exception": "..."}``: the implementation crashed on the input (a bug: ``ERROR``);
- ``{"skip": "..."}``: the driver cannot run this request (``UNTESTABLE``).
"""

from __future__ import annotations

import base64
import json
import sys
import traceback
from pathlib import Path
from typing import Any

try:
    from simplex_protocols.conformance.ops import load_all, run_op
except ImportError:  # run from a checkout without installing: the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from simplex_protocols.conformance.ops import load_all, run_op

PROTOCOL = "simplex-conformance/vectors/1"


def write(answer: dict[str, Any]) -> None:
    """One answer line: compact JSON, ASCII only (lone surrogates survive), flushed at once."""
    # Not wire JSON: the driver protocol's own lines, ASCII-escaped.
    line = json.dumps(answer, ensure_ascii=True, separators=(",", ":"))  # noqa: TID251
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def hello(request: dict[str, Any], operations: list[str]) -> dict[str, Any]:
    """Answer the suite's hello: who we are and what we can run."""
    from simplex_protocols import __version__

    if request.get("hello") != PROTOCOL:
        raise SystemExit(f"unsupported driver protocol {request.get('hello')!r}")
    return {
        "hello": PROTOCOL,
        "implementation": {
            "name": "simplex-protocols",
            "version": __version__,
            "language": "python",
        },
        "operations": operations,
    }


def answer(request: dict[str, Any], operations: set[str]) -> dict[str, Any]:
    """Answer one request line."""
    op = request.get("op")
    if op not in operations:
        return {"id": request.get("id"), "skip": f"operation {op!r} is not implemented"}
    value = (
        base64.b64decode(request["input_b64"]) if "input_b64" in request else request.get("input")
    )
    try:
        result = run_op(op, value, request.get("args") or {})
    except Exception as exc:  # not a typed error of the library: a crash, reported as such
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return {"id": request.get("id"), "exception": text}
    return {"id": request.get("id"), **result}


def main() -> int:
    operations = sorted(load_all())
    first = sys.stdin.readline()
    if not first:
        return 0
    write(hello(json.loads(first), operations))
    known = set(operations)
    for line in sys.stdin:
        if not line.strip():
            continue
        write(answer(json.loads(line), known))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
