"""The spec's JTD schemas: our compiled validator, the converted JSON Schema and jsonschema agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simplex_protocols._schema import compile_jtd, jtd_to_json_schema, validate
from simplex_protocols._spec import spec_path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_NAMES = sorted(
    p.name.removesuffix(".jtd.json") for p in spec_path("schemas").glob("*.jtd.json")
)


def test_every_spec_schema_is_present() -> None:
    assert SCHEMA_NAMES == [
        "address-link-data",
        "protocols",
        "public-group",
        "service-request",
        "service-response",
    ]


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_committed_json_schema_matches_the_jtd_schema(name: str) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen", ROOT / "scripts" / "gen_json_schemas.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    committed = spec_path("schemas", f"{name}.schema.json").read_text(encoding="utf-8")
    assert committed == gen.render(spec_path("schemas", f"{name}.jtd.json")), (
        "run python scripts/gen_json_schemas.py"
    )


def _json_schema_valid(name: str, instance: Any) -> bool:
    schema = json.loads(spec_path("schemas", f"{name}.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


CASES: list[tuple[str, Any, bool]] = [
    ("service-request", {"protocol": "mcp", "request": {}}, True),
    ("service-request", {"protocol": "mcp"}, False),
    ("service-request", {"protocol": 1, "request": {}}, False),
    ("service-request", {"protocol": "mcp", "request": None, "requestKey": 5}, False),
    ("service-request", {"protocol": "mcp", "request": [], "extra": True}, True),
    ("service-request", [], False),
    ("service-response", {"error": {"code": "internal", "retryAfter": 4294967295}}, True),
    ("service-response", {"error": {"code": "internal", "retryAfter": 4294967296}}, False),
    ("service-response", {"error": {"code": "internal", "retryAfter": -1}}, False),
    ("service-response", {"error": {"code": "internal", "retryAfter": 3.0}}, True),
    ("service-response", {"error": {"code": "internal", "retryAfter": 3.5}}, False),
    ("service-response", {"error": {"code": "internal", "retryAfter": True}}, False),
    ("service-response", {"error": {}}, False),
    ("service-response", {}, True),
    ("protocols", {"mcp": {"versions": ["2026-07-28"], "transports": {"chat": True}}}, True),
    ("protocols", {"mcp": {"versions": ["2026-07-28"]}}, False),
    ("protocols", {"mcp": {"versions": [1], "transports": {}}}, False),
    ("protocols", {"mcp": {"versions": [], "transports": {"rpc": "yes"}}}, False),
    ("public-group", {"audience": ["agent", "robot"], "changeFrequency": "weekly"}, True),
    ("public-group", {"changeFrequency": "fortnightly"}, False),
    ("address-link-data", {"serves": "agent"}, False),
    ("address-link-data", {"serves": ["agent"], "business": True}, True),
]


@pytest.mark.parametrize(("name", "instance", "valid"), CASES)
def test_both_validators_give_the_expected_verdict(name: str, instance: Any, valid: bool) -> None:
    assert (validate(name, instance) == []) is valid
    assert _json_schema_valid(name, instance) is valid


def test_issue_paths_follow_rfc8927() -> None:
    issues = validate("service-response", {"error": {"code": 7, "retryAfter": -1}})
    assert {(i.instance_path, i.schema_path) for i in issues} == {
        ("/error/code", "/optionalProperties/error/properties/code/type"),
        ("/error/retryAfter", "/optionalProperties/error/optionalProperties/retryAfter/type"),
    }


def test_additional_properties_false_reports_the_member() -> None:
    check = compile_jtd({"properties": {"a": {"type": "string"}}})
    issues: list[Any] = []
    check({"a": "x", "b": 1}, "", "", issues)
    assert [(i.instance_path, i.schema_path) for i in issues] == [("/b", "")]


def test_converter_refuses_unknown_types() -> None:
    with pytest.raises(ValueError, match="unknown JTD type"):
        jtd_to_json_schema({"type": "int64"})


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "protocol",
                    "request",
                    "version",
                    "requestKey",
                    "response",
                    "error",
                    "code",
                    "message",
                    "retryAfter",
                    "versions",
                    "transports",
                    "chat",
                    "rpc",
                    "mcp",
                    "audience",
                    "changeFrequency",
                    "serves",
                    "x",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(SCHEMA_NAMES), instance=json_values)
def test_compiled_validator_agrees_with_jsonschema(name: str, instance: Any) -> None:
    assert (validate(name, instance) == []) == _json_schema_valid(name, instance)
