"""Tool schemas, descriptions and server instructions."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from simplex_protocols.mcp_server.tools import TOOLS, instructions, validation_error

SPECS = {spec.name: spec for spec in TOOLS}


def test_the_five_tools() -> None:
    assert [spec.name for spec in TOOLS] == ["connect", "send", "receive", "list", "leave"]
    assert [spec.name for spec in TOOLS if spec.action] == ["connect", "send", "leave"]


def _fields_have_descriptions(schema: dict[str, Any], where: str) -> None:
    for name, field in schema.get("properties", {}).items():
        assert field.get("description"), f"{where}.{name}"
        if field.get("type") == "object":
            _fields_have_descriptions(field, f"{where}.{name}")
        items = field.get("items")
        if isinstance(items, dict) and items.get("type") == "object":
            _fields_have_descriptions(items, f"{where}.{name}[]")


@pytest.mark.parametrize("spec", TOOLS, ids=lambda s: s.name)
def test_every_field_has_a_description_and_schemas_are_valid(spec: Any) -> None:
    jsonschema.Draft202012Validator.check_schema(spec.input_schema)
    jsonschema.Draft202012Validator.check_schema(spec.output_schema)
    _fields_have_descriptions(dict(spec.input_schema), f"{spec.name}.input")
    _fields_have_descriptions(dict(spec.output_schema), f"{spec.name}.output")
    assert spec.output_schema["type"] == "object"
    assert len(spec.description) > 80


def test_input_rules_of_the_plan() -> None:
    connect = SPECS["connect"].input_schema["properties"]
    assert connect["message"]["minLength"] == 1
    assert connect["message"]["maxLength"] == 2000
    assert (connect["wait"]["minimum"], connect["wait"]["maximum"], connect["wait"]["default"]) == (
        0,
        86400,
        60,
    )
    assert (connect["idle"]["minimum"], connect["idle"]["maximum"], connect["idle"]["default"]) == (
        1,
        300,
        30,
    )
    assert connect["incognito"]["default"] is False
    send = SPECS["send"].input_schema["properties"]
    assert (send["text"]["minLength"], send["text"]["maxLength"]) == (1, 12000)
    assert (send["mention"]["minItems"], send["mention"]["maxItems"]) == (1, 3)
    assert (send["limit"]["minimum"], send["limit"]["maximum"], send["limit"]["default"]) == (
        1,
        100,
        50,
    )
    receive = SPECS["receive"].input_schema["properties"]
    assert receive["wait"]["default"] == 0
    assert SPECS["list"].input_schema["properties"] == {}
    assert SPECS["leave"].input_schema["required"] == ["chat"]


def test_validation_errors_are_worded_as_the_plan_quotes() -> None:
    assert (
        validation_error("send", {"chat": "@4", "text": ""})
        == "data/text must NOT have fewer than 1 characters"
    )
    assert validation_error("send", {"chat": "@4"}) == "data must have required property 'text'"
    assert (
        validation_error("send", {"chat": "@4", "text": "x", "mention": [1, 2, 3, 4]})
        == "data/mention must NOT have more than 3 items"
    )
    assert (
        validation_error("send", {"chat": "@4", "text": "x", "wait": -1})
        == "data/wait must be >= 0"
    )
    assert validation_error("receive", {"chat": "@4", "limit": 101}) == "data/limit must be <= 100"
    assert validation_error("receive", {"chat": 4}) == "data/chat must be string"
    assert (
        validation_error("leave", {"chat": "@4", "x": 1})
        == "data must NOT have additional properties ('x')"
    )
    assert (
        validation_error("connect", {"target": "t", "incognito": "yes"})
        == "data/incognito must be boolean"
    )
    assert (
        validation_error("send", {"chat": "@4", "text": "x", "reply_to": True})
        == "data/reply_to must be integer"
    )
    assert validation_error("list", {}) is None
    assert validation_error("list", None) is None
    assert (
        validation_error("connect", {"target": "@directory.simplex", "incognito": True, "wait": 0})
        is None
    )


def test_server_instructions_name_the_agent() -> None:
    text = instructions("My Agent")
    assert text.startswith("You act in SimpleX chats through these tools, as the agent My Agent.\n")
    assert (
        "as your profile My Agent or incognito with a new random name for that chat only." in text
    )
    assert text.endswith("Chat references are @N for contacts and #N for groups and channels.")
    assert len(text.split("\n")) == 9
