"""Small JSON helpers shared by the declaration codecs: pointers, problems, equality, decoding."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simplex_protocols._wire import WireJSONError, loads
from simplex_protocols.errors import DeclarationError

__all__ = ["as_dict", "decode_json", "describe", "json_equal", "pointer", "problem"]


def pointer(*tokens: object) -> str:
    """A JSON pointer (RFC 6901) from raw tokens; non-string tokens are written with ``str``."""
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


def describe(value: Any) -> str:
    """A short description of a value for ``input_excerpt``; never encodes a whole container."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Mapping):
        return f"object with {len(value)} members"
    if isinstance(value, list | tuple):
        return f"array of {len(value)} values"
    return type(value).__name__


def problem(
    reason: str, code: str, requirement: str | None, position: str, value: Any = None
) -> DeclarationError:
    """Build (not raise) the :class:`DeclarationError` that reports one problem."""
    return DeclarationError(
        reason,
        code=code,
        requirement=requirement,
        position=position,
        input_excerpt=describe(value) if value is not None else None,
    )


def as_dict(value: Any) -> dict[Any, Any] | None:
    """``value`` as a plain dict when it is a JSON object (any mapping), else ``None``."""
    if isinstance(value, dict):
        return value
    if isinstance(value, Mapping):
        return dict(value)
    return None


def json_equal(a: Any, b: Any) -> bool:
    """Equality of two JSON values as JSON sees it: ``true`` is not ``1``, ``1`` is ``1.0``.

    Iterative, so that deeply nested input cannot exhaust the stack.
    """
    stack: list[tuple[Any, Any]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, bool) or isinstance(y, bool):
            if not (isinstance(x, bool) and isinstance(y, bool) and x == y):
                return False
        elif isinstance(x, Mapping) and isinstance(y, Mapping):
            if len(x) != len(y) or set(x) != set(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list | tuple) and isinstance(y, list | tuple):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, Mapping | list | tuple) or isinstance(y, Mapping | list | tuple):
            return False
        elif isinstance(x, int | float) and isinstance(y, int | float):
            if x != y:
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True


def decode_json(text: str | bytes, *, requirement: str | None = None) -> Any:
    """Decode JSON text strictly (:func:`simplex_protocols._wire.loads`).

    Raises:
        DeclarationError: the text is not acceptable JSON; ``code`` is the wire decoder's
            (``not_json``, ``duplicate_key``, ``too_deep``, ``lone_surrogate``, ...).
    """
    try:
        return loads(text)
    except WireJSONError as exc:
        raise DeclarationError(
            exc.reason,
            code=exc.syntax_code,
            requirement=requirement,
            position=exc.position,
            input_excerpt=text[:80] if isinstance(text, str) else None,
        ) from None
