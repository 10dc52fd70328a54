"""Validation driven by the spec's JSON Type Definition schemas (RFC 8927).

The spec writes its schemas in JTD; they live in ``spec/schemas/*.jtd.json``. This module
compiles a JTD schema into a validator (a tree of small closures, fast enough for every
message on the hot path) and converts it into an equivalent JSON Schema (draft 2020-12), which
is written beside it as ``*.schema.json`` for implementers whose tools only speak JSON Schema.
The tests run both validators, ours and ``jsonschema`` on the converted schema, over every
vector and over generated input, and require them to agree.

Errors follow RFC 8927 section 3.3: each is an instance path and a schema path, both written
here as JSON pointers. Building those paths is most of a validator's cost, and almost every
message is valid; so each schema is also compiled into a check that only says yes or no
(:func:`compile_jtd_check`), and :func:`validate` builds paths only for an instance that check
refused.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._spec import load_json

__all__ = [
    "SchemaIssue",
    "compile_jtd",
    "compile_jtd_check",
    "is_valid",
    "jtd_to_json_schema",
    "validate",
    "validator_for",
]


@dataclass(frozen=True, slots=True)
class SchemaIssue:
    """One validation error: where in the instance, and which schema keyword it broke."""

    instance_path: str
    schema_path: str


_Validator = Callable[[Any, str, str, list[SchemaIssue]], None]

_INT_RANGES: dict[str, tuple[int, int]] = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "uint16": (0, 65535),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
}

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2}|60)(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def _ptr(token: str) -> str:
    return "/" + token.replace("~", "~0").replace("/", "~1")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_timestamp(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    m = _RFC3339.match(value)
    if not m:
        return False
    sec = m.group(6)
    try:
        _dt.datetime(
            int(m.group(1)),
            int(m.group(2)),
            int(m.group(3)),
            int(m.group(4)),
            int(m.group(5)),
            59 if sec == "60" else int(sec),
        )
    except ValueError:
        return False
    return True


def _type_check(name: str) -> Callable[[Any], bool]:
    if name == "boolean":
        return lambda v: isinstance(v, bool)
    if name == "string":
        return lambda v: isinstance(v, str)
    if name == "timestamp":
        return _is_timestamp
    if name in ("float32", "float64"):
        return lambda v: _is_number(v) and math.isfinite(v)
    if name in _INT_RANGES:
        lo, hi = _INT_RANGES[name]

        def check(v: Any) -> bool:
            if not _is_number(v) or not math.isfinite(v) or v != int(v):
                return False
            return lo <= int(v) <= hi

        return check
    raise ValueError(f"unknown JTD type {name!r}")


def compile_jtd(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> _Validator:
    """Compile a JTD schema into ``validate(instance, instance_path, schema_path, issues)``.

    Raises:
        ValueError: the schema is not a JTD schema this module supports.
    """
    root = schema if root is None else root
    definitions: Mapping[str, Any] = root.get("definitions", {})
    nullable = bool(schema.get("nullable", False))
    inner = _compile_form(schema, definitions, root)
    if not nullable:
        return inner

    def nullable_validator(v: Any, ip: str, sp: str, out: list[SchemaIssue]) -> None:
        if v is not None:
            inner(v, ip, sp, out)

    return nullable_validator


def _compile_form(
    schema: Mapping[str, Any], definitions: Mapping[str, Any], root: Mapping[str, Any]
) -> _Validator:
    if "ref" in schema:
        name = schema["ref"]
        if name not in definitions:
            raise ValueError(f"JTD ref to unknown definition {name!r}")
        cache: list[_Validator] = []

        def ref_validator(v: Any, ip: str, sp: str, out: list[SchemaIssue]) -> None:
            if not cache:
                cache.append(compile_jtd(definitions[name], root))
            cache[0](v, ip, f"/definitions{_ptr(name)}", out)

        return ref_validator
    if "type" in schema:
        check = _type_check(schema["type"])

        def type_validator(v: Any, ip: str, sp: str, out: list[SchemaIssue]) -> None:
            if not check(v):
                out.append(SchemaIssue(ip, sp + "/type"))

        return type_validator
    if "enum" in schema:
        allowed = frozenset(schema["enum"])

        def enum_validator(v: Any, ip: str, sp: str, out: list[SchemaIssue]) -> None:
            if not isinstance(v, str) or v not in allowed:
                out.append(SchemaIssue(ip, sp + "/enum"))

        return enum_validator
    if "elements" in schema:
        item = compile_jtd(schema["elements"], root)

        def elements_validator(v: Any, ip: str, sp: str, out: list[SchemaIssue]) -> None:
            if not isinstance(v, list):
                out.append(SchemaIssue(ip, sp + "/elements"))
                return
            for i, element in enumerate(v):
                item(element, f"{ip}/{i}", sp + "/elements", out)

        return elements_validator
    if "values" in schema:
        value_validator = compile_jtd(schema["values"], root)

        def values_validator(v: Any, ip: str, sp: str, out: list[SchemaIssue]) -> None:
            if not isinstance(v, dict):
                out.append(SchemaIssue(ip, sp + "/values"))
                return
            for key, element in v.items():
                value_validator(element, ip + _ptr(key), sp + "/values", out)

        return values_validator
    if "properties" in schema or "optionalProperties" in schema:
        return _compile_properties(schema, root)
    if "discriminator" in schema:
        return _compile_discriminator(schema, root)

    def empty_validator(v: Any, ip: str, sp: str, out: list[SchemaIssue]) -> None:
        return None

    return empty_validator


def _compile_properties(
    schema: Mapping[str, Any], root: Mapping[str, Any], tag: str | None = None
) -> _Validator:
    required = {k: compile_jtd(s, root) for k, s in schema.get("properties", {}).items()}
    optional = {k: compile_jtd(s, root) for k, s in schema.get("optionalProperties", {}).items()}
    additional = bool(schema.get("additionalProperties", False))
    form = "properties" if "properties" in schema else "optionalProperties"

    def properties_validator(v: Any, ip: str, sp: str, out: list[SchemaIssue]) -> None:
        if not isinstance(v, dict):
            out.append(SchemaIssue(ip, sp + "/" + form))
            return
        for key, check in required.items():
            if key in v:
                check(v[key], ip + _ptr(key), sp + "/properties" + _ptr(key), out)
            else:
                out.append(SchemaIssue(ip, sp + "/properties" + _ptr(key)))
        for key, check in optional.items():
            if key in v:
                check(v[key], ip + _ptr(key), sp + "/optionalProperties" + _ptr(key), out)
        if not additional:
            for key in v:
                if key not in required and key not in optional and key != tag:
                    out.append(SchemaIssue(ip + _ptr(key), sp))

    return properties_validator


def _compile_discriminator(schema: Mapping[str, Any], root: Mapping[str, Any]) -> _Validator:
    tag = schema["discriminator"]
    mapping = {k: _compile_properties(s, root, tag) for k, s in schema["mapping"].items()}

    def discriminator_validator(v: Any, ip: str, sp: str, out: list[SchemaIssue]) -> None:
        if not isinstance(v, dict):
            out.append(SchemaIssue(ip, sp + "/discriminator"))
            return
        if tag not in v:
            out.append(SchemaIssue(ip, sp + "/discriminator"))
            return
        if not isinstance(v[tag], str):
            out.append(SchemaIssue(ip + _ptr(tag), sp + "/discriminator"))
            return
        check = mapping.get(v[tag])
        if check is None:
            out.append(SchemaIssue(ip + _ptr(tag), sp + "/mapping"))
            return
        check(v, ip, sp + "/mapping" + _ptr(v[tag]), out)

    return discriminator_validator


def jtd_to_json_schema(schema: Mapping[str, Any], *, top: bool = True) -> dict[str, Any]:
    """Convert a JTD schema into an equivalent JSON Schema (draft 2020-12).

    Raises:
        ValueError: the schema uses a form this converter does not support.
    """
    out: dict[str, Any]
    if "ref" in schema:
        out = {"$ref": f"#/$defs/{schema['ref']}"}
    elif "type" in schema:
        name = schema["type"]
        if name == "boolean":
            out = {"type": "boolean"}
        elif name == "string":
            out = {"type": "string"}
        elif name == "timestamp":
            out = {"type": "string", "format": "date-time"}
        elif name in ("float32", "float64"):
            out = {"type": "number"}
        elif name in _INT_RANGES:
            lo, hi = _INT_RANGES[name]
            # JTD accepts 3.0 as an integer, so "multipleOf": 1 rather than "type": "integer".
            out = {"type": "number", "multipleOf": 1, "minimum": lo, "maximum": hi}
        else:
            raise ValueError(f"unknown JTD type {name!r}")
    elif "enum" in schema:
        out = {"type": "string", "enum": list(schema["enum"])}
    elif "elements" in schema:
        out = {"type": "array", "items": jtd_to_json_schema(schema["elements"], top=False)}
    elif "values" in schema:
        out = {
            "type": "object",
            "additionalProperties": jtd_to_json_schema(schema["values"], top=False),
        }
    elif "properties" in schema or "optionalProperties" in schema:
        props: dict[str, Any] = {}
        for key, sub in schema.get("properties", {}).items():
            props[key] = jtd_to_json_schema(sub, top=False)
        for key, sub in schema.get("optionalProperties", {}).items():
            props[key] = jtd_to_json_schema(sub, top=False)
        out = {"type": "object", "properties": props}
        required = list(schema.get("properties", {}))
        if required:
            out["required"] = required
        if not schema.get("additionalProperties", False):
            out["additionalProperties"] = False
    elif "discriminator" in schema:
        raise ValueError("discriminator schemas are not used by the spec and not converted")
    else:
        out = {}
    if schema.get("nullable"):
        out = {"anyOf": [{"type": "null"}, out]}
    if top:
        out = {"$schema": "https://json-schema.org/draft/2020-12/schema", **out}
        defs = schema.get("definitions")
        if defs:
            out["$defs"] = {k: jtd_to_json_schema(v, top=False) for k, v in defs.items()}
    return out


@functools.cache
def validator_for(name: str) -> _Validator:
    """The compiled validator of ``spec/schemas/<name>.jtd.json``."""
    schema = load_json("schemas", f"{name}.jtd.json")
    return compile_jtd(schema)


@functools.cache
def _check_for(name: str) -> _Check:
    return compile_jtd_check(load_json("schemas", f"{name}.jtd.json"))


def is_valid(name: str, instance: Any) -> bool:
    """Whether an instance is valid against the spec schema ``name`` (no issues are built)."""
    return _check_for(name)(instance)


def validate(name: str, instance: Any) -> list[SchemaIssue]:
    """Validate an instance against the spec schema ``name``; an empty list means valid."""
    if _check_for(name)(instance):
        return []
    issues: list[SchemaIssue] = []
    validator_for(name)(instance, "", "", issues)
    return issues


# --------------------------------------------------------------------------- yes-or-no checks

_Check = Callable[[Any], bool]


def _accept_any(v: Any) -> bool:
    return True


def compile_jtd_check(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> _Check:
    """Compile a JTD schema into ``check(instance) -> bool``: valid or not, no issues.

    It accepts exactly the instances for which :func:`compile_jtd`'s validator reports no issue
    (the tests compare the two over every spec schema and generated input).

    Raises:
        ValueError: the schema is not a JTD schema this module supports.
    """
    root = schema if root is None else root
    inner = _compile_check_form(schema, root)
    if not schema.get("nullable", False) or inner is _accept_any:
        return inner
    return lambda v: v is None or inner(v)


def _compile_check_form(schema: Mapping[str, Any], root: Mapping[str, Any]) -> _Check:
    if "ref" in schema:
        definitions: Mapping[str, Any] = root.get("definitions", {})
        name = schema["ref"]
        if name not in definitions:
            raise ValueError(f"JTD ref to unknown definition {name!r}")
        # Compiled on first use, as the validator does: a definition may refer to itself.
        cache: list[_Check] = []

        def ref_check(v: Any) -> bool:
            if not cache:
                cache.append(compile_jtd_check(definitions[name], root))
            return cache[0](v)

        return ref_check
    if "type" in schema:
        return _type_check(schema["type"])
    if "enum" in schema:
        allowed = frozenset(schema["enum"])
        return lambda v: isinstance(v, str) and v in allowed
    if "elements" in schema:
        item = compile_jtd_check(schema["elements"], root)
        if item is _accept_any:
            return lambda v: isinstance(v, list)
        return lambda v: isinstance(v, list) and all(map(item, v))
    if "values" in schema:
        value = compile_jtd_check(schema["values"], root)
        if value is _accept_any:
            return lambda v: isinstance(v, dict)
        return lambda v: isinstance(v, dict) and all(map(value, v.values()))
    if "properties" in schema or "optionalProperties" in schema:
        return _compile_properties_check(schema, root)
    if "discriminator" in schema:
        tag = schema["discriminator"]
        mapping = {k: _compile_properties_check(s, root, tag) for k, s in schema["mapping"].items()}

        def discriminator_check(v: Any) -> bool:
            if not isinstance(v, dict) or not isinstance(v.get(tag), str):
                return False
            check = mapping.get(v[tag])
            return check is not None and check(v)

        return discriminator_check
    return _accept_any


_PLAIN_TYPES: dict[str, type] = {"string": str, "boolean": bool}


def _compile_properties_check(
    schema: Mapping[str, Any], root: Mapping[str, Any], tag: str | None = None
) -> _Check:
    # Members whose schema is the empty form only need to be present (or may be absent); a
    # string or boolean member is checked in line, without a call (most envelope members).
    required = tuple(schema.get("properties", {}))
    members = [
        (key, sub)
        for form in ("properties", "optionalProperties")
        for key, sub in schema.get(form, {}).items()
    ]
    typed = tuple(
        (key, _PLAIN_TYPES[sub["type"]])
        for key, sub in members
        if set(sub) <= {"type", "metadata"} and sub.get("type") in _PLAIN_TYPES
    )
    plain = {key for key, _ in typed}
    checked = tuple(
        (key, check)
        for key, sub in members
        if key not in plain and (check := compile_jtd_check(sub, root)) is not _accept_any
    )
    known = frozenset(required) | frozenset(schema.get("optionalProperties", {}))
    if tag is not None:
        known |= {tag}
    additional = bool(schema.get("additionalProperties", False))

    def properties_check(v: Any) -> bool:
        if not isinstance(v, dict):
            return False
        for key in required:
            if key not in v:
                return False
        for key, kind in typed:
            if key in v and not isinstance(v[key], kind):
                return False
        for key, check in checked:
            if key in v and not check(v[key]):
                return False
        return additional or known.issuperset(v)

    return properties_check
