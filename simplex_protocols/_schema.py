"""Validation driven by the spec's JSON Type Definition schemas (RFC 8927).

The spec writes its schemas in JTD; they live in ``spec/schemas/*.jtd.json``. This module
compiles a JTD schema into a validator (a tree of small closures, fast enough for every
message on the hot path) and converts it into an equivalent JSON Schema (draft 2020-12), which
is written beside it as ``*.schema.json`` for implementers whose tools only speak JSON Schema.
The tests run both validators, ours and ``jsonschema`` on the converted schema, over every
vector and over generated input, and require them to agree.

Errors follow RFC 8927 section 3.3: each is an instance path and a schema path, both written
here as JSON pointers.
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


def validate(name: str, instance: Any) -> list[SchemaIssue]:
    """Validate an instance against the spec schema ``name``; an empty list means valid."""
    issues: list[SchemaIssue] = []
    validator_for(name)(instance, "", "", issues)
    return issues
