"""``check_shape``: does a JSON value have the shape a TypedDict describes?

pydantic cannot validate ``typing.TypedDict`` on Python 3.11 and typeguard refuses extra keys,
while the core's JSON may always carry keys a client does not know. This checker walks the
annotations (resolved with :func:`typing.get_type_hints`, ``NotRequired`` honoured) and
reports every missing required key, wrong type, unknown union tag and unknown literal, and
allows extra keys.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any, Literal, NotRequired, Required, Union

__all__ = ["check_frame", "check_shape"]

_Overrides = tuple[tuple[Any, Any], ...]


def check_shape(
    value: Any,
    shape: Any,
    *,
    overrides: Iterable[tuple[Any, Any]] = (),
    path: str = "$",
) -> list[str]:
    """Check ``value`` against ``shape`` (a TypedDict, a union, a ``Literal``, ``list[...]``,
    ``dict[str, ...]`` or a plain type); return what is wrong, one message per problem.

    Extra keys are allowed. ``overrides`` are ``(old, new)`` pairs: wherever the checker meets
    ``old`` (a TypedDict class, a ``Literal`` or a union), it checks ``new`` instead; this is
    how newer values (a new peer type, a new error variant) are admitted into older shapes.

    Returns:
        An empty list when the value has the shape.
    """
    errors: list[str] = []
    _check(value, shape, tuple(overrides), path, errors)
    return errors


def _override(shape: Any, overrides: _Overrides) -> Any:
    for old, new in overrides:
        if shape is old:
            return new
        if not isinstance(shape, type) and not isinstance(old, type):
            try:
                if shape == old:
                    return new
            except TypeError:
                continue
    return shape


@cache
def _fields(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for name, hint in hints.items():
        required = True
        origin = typing.get_origin(hint)
        if origin is NotRequired:
            required = False
            hint = typing.get_args(hint)[0]
        elif origin is Required:
            hint = typing.get_args(hint)[0]
        out.append((name, hint, required))
    return tuple(out)


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def _tag_of(member: Any) -> str | None:
    if not typing.is_typeddict(member):
        return None
    for name, hint, _ in _fields(member):
        if name == "type" and typing.get_origin(hint) is Literal:
            args = typing.get_args(hint)
            if len(args) == 1 and isinstance(args[0], str):
                return args[0]
    return None


def _check(value: Any, shape: Any, overrides: _Overrides, path: str, errors: list[str]) -> None:
    shape = _override(shape, overrides)
    if shape is Any or shape is object:
        return
    origin = typing.get_origin(shape)
    if typing.is_typeddict(shape):
        _check_typeddict(value, shape, overrides, path, errors)
    elif origin is Literal:
        allowed = typing.get_args(shape)
        if value not in allowed or isinstance(value, bool) != any(
            isinstance(a, bool) for a in allowed
        ):
            errors.append(f"{path}: {value!r} is not one of {list(allowed)!r}")
    elif origin is Union or isinstance(shape, types.UnionType):
        _check_union(value, typing.get_args(shape), overrides, path, errors)
    elif origin is list:
        if not isinstance(value, list):
            errors.append(f"{path}: expected array, got {_describe(value)}")
            return
        (item,) = typing.get_args(shape) or (Any,)
        for i, element in enumerate(value):
            _check(element, item, overrides, f"{path}[{i}]", errors)
    elif origin is dict:
        if not isinstance(value, dict):
            errors.append(f"{path}: expected object, got {_describe(value)}")
            return
        args = typing.get_args(shape)
        item = args[1] if len(args) == 2 else Any
        for key, element in value.items():
            if not isinstance(key, str):
                errors.append(f"{path}: object key {key!r} is not a string")
            _check(element, item, overrides, f"{path}.{key}", errors)
    elif shape is type(None) or shape is None:
        if value is not None:
            errors.append(f"{path}: expected null, got {_describe(value)}")
    elif shape is bool:
        if not isinstance(value, bool):
            errors.append(f"{path}: expected boolean, got {_describe(value)}")
    elif shape is int:
        if not isinstance(value, int) or isinstance(value, bool):
            errors.append(f"{path}: expected integer, got {_describe(value)}")
    elif shape is float:
        if not isinstance(value, int | float) or isinstance(value, bool):
            errors.append(f"{path}: expected number, got {_describe(value)}")
    elif shape is str:
        if not isinstance(value, str):
            errors.append(f"{path}: expected string, got {_describe(value)}")
    elif isinstance(shape, type):
        if not isinstance(value, shape):
            errors.append(f"{path}: expected {shape.__name__}, got {_describe(value)}")
    else:
        errors.append(f"{path}: cannot check against {shape!r}")


def _check_typeddict(
    value: Any, cls: type, overrides: _Overrides, path: str, errors: list[str]
) -> None:
    if not isinstance(value, Mapping):
        errors.append(f"{path}: expected object ({cls.__name__}), got {_describe(value)}")
        return
    for name, hint, required in _fields(cls):
        if name in value:
            _check(value[name], hint, overrides, f"{path}.{name}", errors)
        elif required:
            errors.append(f"{path}: missing key {name!r} ({cls.__name__})")


def _check_union(
    value: Any, members: tuple[Any, ...], overrides: _Overrides, path: str, errors: list[str]
) -> None:
    resolved = [_override(m, overrides) for m in members]
    tags = {tag: m for m in resolved if (tag := _tag_of(m)) is not None}
    if tags and len(tags) == len(resolved):
        if not isinstance(value, Mapping):
            errors.append(f"{path}: expected a tagged object, got {_describe(value)}")
            return
        tag = value.get("type")
        member = tags.get(tag) if isinstance(tag, str) else None
        if member is None:
            errors.append(f"{path}.type: unknown tag {tag!r} (expected one of {sorted(tags)})")
            return
        _check(value, member, overrides, path, errors)
        return
    best: list[str] | None = None
    for member in resolved:
        attempt: list[str] = []
        _check(value, member, overrides, path, attempt)
        if not attempt:
            return
        if best is None or len(attempt) < len(best):
            best = attempt
    errors.extend(best or [f"{path}: matches no member of the union"])


def check_frame(frame: Mapping[str, Any]) -> list[str]:
    """Check one frame the simulator (or a core) sent, by its kind and ``type`` tag.

    A frame with ``corrId`` is a response, checked against the responses' shapes; one without
    is an event. The shapes are ``simplex_chat.types`` where it describes them, with the
    newer shapes and :data:`~simplex_protocols.sim._newer_types.SHAPE_OVERRIDES`.

    Returns:
        What is wrong (empty when the frame has its shape); an unknown ``type`` is reported.
    """
    from ._newer_types import EVENT_SHAPES, RESPONSE_SHAPES, SHAPE_OVERRIDES

    resp = frame.get("resp")
    if not isinstance(resp, Mapping):
        return ["$: the frame has no resp object"]
    kind = "response" if "corrId" in frame else "event"
    shapes = RESPONSE_SHAPES if kind == "response" else EVENT_SHAPES
    tag = resp.get("type")
    shape = shapes.get(tag) if isinstance(tag, str) else None
    if shape is None:
        return [f"$.resp.type: no known {kind} shape for {tag!r}"]
    return check_shape(resp, shape, overrides=SHAPE_OVERRIDES, path="$.resp")
