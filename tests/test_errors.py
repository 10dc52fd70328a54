"""Every error class has a stable ``code``, documented in docs/errors.md."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import simplex_protocols
from simplex_protocols import conformance, errors, mcp_server
from simplex_protocols.errors import JSONRPCResponseError, SimplexError

DOC = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")


def _every_error_class() -> list[type[SimplexError]]:
    for package in (simplex_protocols, mcp_server, conformance):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            # a package's __main__ runs its program when imported (python -m)
            if info.name.rsplit(".", 1)[-1] != "__main__":
                importlib.import_module(info.name)
    found: list[type[SimplexError]] = []
    stack: list[type[SimplexError]] = [SimplexError]
    while stack:
        cls = stack.pop()
        found.append(cls)
        stack.extend(cls.__subclasses__())
    # Test modules may subclass errors for their own doubles; only the shipped packages count.
    shipped = ("simplex_protocols", "mcp_server", "conformance")
    return sorted(
        {c for c in found if c.__module__.split(".")[0] in shipped}, key=lambda c: c.__qualname__
    )


ERROR_CLASSES = _every_error_class()


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__qualname__)
def test_every_error_class_defines_its_own_snake_case_code(cls: type[SimplexError]) -> None:
    code = cls.__dict__.get("code")
    assert isinstance(code, str), f"{cls.__qualname__} has no code of its own"
    assert _SNAKE.fullmatch(code), code


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__qualname__)
def test_every_error_code_is_documented(cls: type[SimplexError]) -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert f"| `{cls.__qualname__}` | `{cls.__dict__['code']}` |" in doc


def test_class_codes_are_distinct_in_the_library() -> None:
    library = [c for c in ERROR_CLASSES if c.__module__ == errors.__name__]
    codes = [c.__dict__["code"] for c in library]
    assert len(codes) == len(set(codes))


def test_the_json_rpc_integer_is_jsonrpc_code_and_code_stays_a_string() -> None:
    exc = JSONRPCResponseError(
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "x"}}
    )
    assert (exc.code, exc.jsonrpc_code) == ("jsonrpc_error", -32001)
    assert JSONRPCResponseError({"error": {"code": True}}).jsonrpc_code is None


def test_instances_keep_their_precise_codes_over_the_class_code() -> None:
    service = errors.service_error_for_code("quota_exceeded")
    assert (type(service), service.code) == (errors.ServiceError, "quota_exceeded")
    assert errors.service_error_for_code("rate_limited", retry_after=3).code == "rate_limited"
    parse = errors.EnvelopeError("no protocol", code="missing_protocol")
    assert (parse.code, errors.EnvelopeError.code) == ("missing_protocol", "bad_envelope")
