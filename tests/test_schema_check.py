"""The yes-or-no schema checks accept exactly what the path-building validators accept.

``validate`` runs the check first and builds issues only for an instance it refused, so a check
that accepted too much would hide issues, and one that refused too much would only cost time;
both are differences, and these tests look for either.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simplex_protocols._schema import (
    SchemaIssue,
    compile_jtd,
    compile_jtd_check,
    is_valid,
    validate,
    validator_for,
)
from simplex_protocols._spec import load_json, spec_path

SPEC_SCHEMAS = sorted(
    p.name.removesuffix(".jtd.json") for p in spec_path("schemas").glob("*.jtd.json")
)

# Every form and type RFC 8927 has that the compiler supports, nullable and not, with a
# recursive definition.
EVERY_FORM: dict[str, Any] = {
    "definitions": {
        "node": {
            "properties": {"name": {"type": "string"}},
            "optionalProperties": {"children": {"elements": {"ref": "node"}}},
            "nullable": True,
        }
    },
    "properties": {
        "flag": {"type": "boolean"},
        "small": {"type": "int8"},
        "count": {"type": "uint32", "nullable": True},
        "ratio": {"type": "float64"},
        "when": {"type": "timestamp"},
        "kind": {"enum": ["a", "b"]},
        "tags": {"elements": {"type": "string"}},
        "scores": {"values": {"type": "uint8"}},
        "tree": {"ref": "node"},
        "shape": {
            "discriminator": "type",
            "mapping": {
                "circle": {"properties": {"r": {"type": "float32"}}},
                "box": {"optionalProperties": {"w": {"type": "int16"}}},
            },
        },
    },
    "optionalProperties": {"any": {}, "list": {"elements": {}}, "map": {"values": {}}},
}


def _member_names(schema: Any) -> set[str]:
    """Every member name a schema speaks of, at any depth (and discriminator tags)."""
    names: set[str] = set()
    if isinstance(schema, dict):
        for form in ("properties", "optionalProperties"):
            names.update(schema.get(form, {}))
        if isinstance(schema.get("discriminator"), str):
            names.add(schema["discriminator"])
        for child in schema.values():
            names |= _member_names(child)
    return names


# Names the schemas know, so that generated objects hit their members, and one they do not.
_KEYS = st.sampled_from(
    sorted(
        {"x"}.union(
            _member_names(EVERY_FORM),
            *(_member_names(load_json("schemas", f"{n}.jtd.json")) for n in SPEC_SCHEMAS),
        )
    )
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**33), 2**33),
    st.sampled_from([-129, -128, 127, 128, 255, 256, 2**32 - 1, 2**32, 3.0, 3.5, -0.0]),
    st.floats(allow_nan=False),
    st.sampled_from(["a", "b", "circle", "box", "agent", "weekly", "2026-10-21T12:00:00Z"]),
    st.sampled_from(["2026-02-30T12:00:00Z", "2016-12-31T23:59:60Z", "12:00"]),
    st.text(max_size=4),
)
_INSTANCES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=6),
    max_leaves=16,
)


def _issues(schema: dict[str, Any], instance: Any) -> list[SchemaIssue]:
    issues: list[SchemaIssue] = []
    compile_jtd(schema)(instance, "", "", issues)
    return issues


@settings(max_examples=500, deadline=None)
@given(name=st.sampled_from(SPEC_SCHEMAS), instance=_INSTANCES)
def test_check_agrees_with_the_validator_on_the_spec_schemas(name: str, instance: Any) -> None:
    issues: list[SchemaIssue] = []
    validator_for(name)(instance, "", "", issues)
    assert is_valid(name, instance) is (not issues)
    assert validate(name, instance) == issues


def _valid_every_form() -> dict[str, Any]:
    return {
        "flag": True,
        "small": -128,
        "count": None,
        "ratio": 0.5,
        "when": "2026-10-21T12:00:00Z",
        "kind": "a",
        "tags": ["x"],
        "scores": {"x": 255},
        "tree": {"name": "root", "children": [{"name": "leaf"}, None]},
        "shape": {"type": "circle", "r": 1.5},
    }


@st.composite
def _near_valid(draw: st.DrawFn) -> Any:
    """A valid instance with a few members replaced or removed, at the top or one level down."""
    instance = _valid_every_form()
    for _ in range(draw(st.integers(0, 2))):
        target = instance
        if draw(st.booleans()):
            inner = draw(st.sampled_from(["tree", "shape", "scores"]))
            if isinstance(instance.get(inner), dict):
                target = instance[inner] = dict(instance[inner])
        key = draw(_KEYS)
        if draw(st.booleans()):
            target.pop(key, None)
        else:
            target[key] = draw(_INSTANCES)
    return instance


@settings(max_examples=1000, deadline=None)
@given(instance=_INSTANCES | _near_valid())
def test_check_agrees_with_the_validator_on_every_form(instance: Any) -> None:
    assert compile_jtd_check(EVERY_FORM)(instance) is (not _issues(EVERY_FORM, instance))


@pytest.mark.parametrize(
    ("change", "valid"),
    [
        ({}, True),
        ({"small": 128}, False),
        ({"count": 2**32}, False),
        ({"count": 3.0}, True),
        ({"when": "2026-02-30T12:00:00Z"}, False),
        ({"kind": "c"}, False),
        ({"tags": ["x", 1]}, False),
        ({"scores": {"x": 256}}, False),
        ({"tree": {"name": "r", "children": [{"name": 1}]}}, False),
        ({"tree": None}, True),
        ({"shape": {"type": "box"}}, True),
        ({"shape": {"type": "box", "r": 1.0}}, False),
        ({"shape": {"type": "triangle"}}, False),
        ({"shape": {"r": 1.0}}, False),
        ({"any": {"whatever": [1]}, "list": [None], "map": {"k": []}}, True),
        ({"list": {}}, False),
        ({"extra": 1}, False),
    ],
)
def test_check_and_validator_on_chosen_instances(change: dict[str, Any], valid: bool) -> None:
    instance = _valid_every_form() | change
    assert compile_jtd_check(EVERY_FORM)(instance) is valid
    assert (not _issues(EVERY_FORM, instance)) is valid


def test_validate_still_reports_the_issues_of_a_refused_instance() -> None:
    # RPC-REQ-1: the request envelope's schema; the issues name the member and the keyword.
    issues = validate("service-request", {"protocol": 1})
    assert {(i.instance_path, i.schema_path) for i in issues} == {
        ("/protocol", "/properties/protocol/type"),
        ("", "/properties/request"),
    }
