"""Vector operations: the bridge between ``spec/vectors/`` and an implementation's codecs.

Each vector file names an ``operation``. An operation takes the case's ``input`` (and optional
``args``) and returns a JSON value, or raises one of the library's typed errors. The same
operations serve our own tests (``tests/test_vectors.py``) and the conformance suite's driver
protocol, in which another implementation answers ``{"op", "id", "input", "args"}`` lines with
``{"ok": true, "value": ...}`` or ``{"ok": false, "error": {"code": ...}}``.

Operations are registered by the modules of this package, one per codec family.
"""

from __future__ import annotations

import base64
import importlib
import pkgutil
from collections.abc import Callable, Mapping
from typing import Any

from simplex_protocols.errors import (
    MessageTooLargeError,
    ParseError,
    RequestKeyMismatchError,
    ServiceError,
    SignatureError,
)

__all__ = ["OPS", "OpFunction", "load_all", "op", "run_op"]

OpFunction = Callable[[Any, Mapping[str, Any]], Any]

#: Every registered operation, by name.
OPS: dict[str, OpFunction] = {}


def op(name: str) -> Callable[[OpFunction], OpFunction]:
    """Register a vector operation under ``name``."""

    def register(fn: OpFunction) -> OpFunction:
        if name in OPS:
            raise ValueError(f"vector operation {name!r} registered twice")
        OPS[name] = fn
        return fn

    return register


_loaded = False


def load_all() -> dict[str, OpFunction]:
    """Import every operation module of this package (once) and return the registry."""
    global _loaded
    if not _loaded:
        for info in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{info.name}")
        _loaded = True
    return OPS


def decode_input(case: Mapping[str, Any]) -> Any:
    """The case's input: ``input`` as given, or the raw bytes of ``input_b64``."""
    if "input_b64" in case:
        return base64.b64decode(case["input_b64"])
    return case.get("input")


def run_op(name: str, value: Any, args: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Run an operation and answer in the driver protocol's shape.

    The library's typed errors become ``{"ok": false, "error": {"code", ...}}``; any other
    exception propagates, because it is a bug of the implementation, not an answer.
    """
    fn = load_all()[name]
    try:
        result = fn(value, args or {})
    except ParseError as exc:
        error: dict[str, Any] = {"code": exc.code}
        if exc.requirement:
            error["requirement"] = exc.requirement
        if exc.position is not None:
            error["position"] = exc.position
        return {"ok": False, "error": error}
    except SignatureError as exc:
        return {"ok": False, "error": {"code": exc.code}}
    except RequestKeyMismatchError as exc:
        return {"ok": False, "error": {"code": "bad_request", "requirement": exc.requirement}}
    except MessageTooLargeError as exc:
        return {"ok": False, "error": {"code": "too_large", "size": exc.size, "limit": exc.limit}}
    except ServiceError as exc:
        return {"ok": False, "error": {"code": exc.code}}
    return {"ok": True, "value": result}
