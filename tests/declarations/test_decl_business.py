"""The business chat rule: protocols of the business profile copied into groupPreferences."""

from __future__ import annotations

from typing import Any

import pytest

from simplex_protocols.declarations import (
    Scope,
    business_group_preferences,
    check_business_chat,
    parse_protocols,
)
from simplex_protocols.errors import DeclarationError

HELP = {"type": "command", "keyword": "help", "label": "Help"}
BUSINESS: dict[str, Any] = {
    "timedMessages": {"allow": "yes"},
    "commands": [HELP],
    "protocols": {
        "mcp": {"versions": ["2026-07-28"], "transports": {"chat": True, "rpc": True}},
        "a2a": {"versions": ["1.0"], "transports": {"rpc": True, "x": 1}, "card": "/c"},
    },
}
COPY: dict[str, Any] = {
    "mcp": {"versions": ["2026-07-28"], "transports": {"chat": True}},
    "a2a": {"versions": ["1.0"], "transports": {"x": 1}, "card": "/c"},
}


def codes(problems: tuple[DeclarationError, ...]) -> list[tuple[str, str | None, Any]]:
    return [(p.code, p.requirement, p.position) for p in problems]


@pytest.mark.requirement("DECL-PROTO-10", "DECL-PROTO-7")
def test_business_chat_gets_the_protocols_and_commands_without_rpc() -> None:
    group = business_group_preferences(BUSINESS, {"history": {"enable": "on"}})
    assert group == {"history": {"enable": "on"}, "commands": [HELP], "protocols": COPY}
    assert BUSINESS["protocols"]["mcp"]["transports"]["rpc"] is True, "the input is not changed"
    declared = parse_protocols(group["protocols"], scope=Scope.GROUP_PREFERENCES, strict=True)
    assert declared.protocols_for("chat") == ("mcp",)
    assert check_business_chat(BUSINESS, group) == ()


@pytest.mark.requirement("DECL-PROTO-10")
def test_keys_the_business_profile_lacks_are_removed() -> None:
    group = business_group_preferences({}, {"protocols": COPY, "commands": [HELP], "voice": {}})
    assert group == {"voice": {}}
    assert business_group_preferences({"protocols": {}}) == {"protocols": {}}


@pytest.mark.requirement("DECL-PROTO-10", "DECL-PROTO-2")
def test_entries_are_copied_as_received() -> None:
    odd = {"MCP": {"versions": "1"}, "x": None, "y": {"transports": None}}
    assert business_group_preferences({"protocols": odd}) == {"protocols": odd}
    assert business_group_preferences({"protocols": "garbage"}) == {"protocols": "garbage"}


@pytest.mark.parametrize(("business", "group"), [(None, {}), ({}, []), ("x", None)])
def test_business_group_preferences_needs_objects(business: Any, group: Any) -> None:
    with pytest.raises(DeclarationError) as info:
        business_group_preferences(business, group)
    assert info.value.code == "not_an_object"


@pytest.mark.requirement("DECL-PROTO-10")
def test_verbatim_copy_is_accepted() -> None:
    assert check_business_chat(BUSINESS, {"protocols": BUSINESS["protocols"]}) == ()


@pytest.mark.requirement("DECL-PROTO-10")
@pytest.mark.parametrize(
    ("group", "expected"),
    [
        ({}, [("business_protocols_missing", "DECL-PROTO-10", "/protocols")]),
        ({"protocols": None}, [("business_protocols_missing", "DECL-PROTO-10", "/protocols")]),
        (
            {"protocols": {"mcp": COPY["mcp"]}},
            [("business_protocols_missing", "DECL-PROTO-10", "/protocols/a2a")],
        ),
        (
            {"protocols": {**COPY, "mcp": {"versions": ["1"], "transports": {"chat": True}}}},
            [("business_protocols_differ", "DECL-PROTO-10", "/protocols/mcp")],
        ),
        (
            {"protocols": {**COPY, "extra/one": {}}},
            [("business_protocols_differ", "DECL-PROTO-10", "/protocols/extra~1one")],
        ),
        ({"protocols": []}, [("business_protocols_differ", "DECL-PROTO-10", "/protocols")]),
    ],
)
def test_missing_or_different_copy_is_reported(group: Any, expected: list[Any]) -> None:
    assert codes(check_business_chat(BUSINESS, group)) == expected


def test_json_equality_tells_booleans_from_numbers() -> None:
    business = {"protocols": {"mcp": {"versions": ["1"], "transports": {"chat": True}}}}
    group = {"protocols": {"mcp": {"versions": ["1"], "transports": {"chat": 1}}}}
    assert codes(check_business_chat(business, group))[0][0] == "business_protocols_differ"
    group_float = {
        "protocols": {"mcp": {"versions": ["1"], "transports": {"chat": True}, "n": 1.0}}
    }
    business_int = {"protocols": {"mcp": {"versions": ["1"], "transports": {"chat": True}, "n": 1}}}
    assert check_business_chat(business_int, group_float) == ()


def test_nothing_declared_on_either_side() -> None:
    assert check_business_chat({}, {}) == ()
    assert check_business_chat({"protocols": {}}, {}) == ()
    assert check_business_chat({}, {"protocols": {}}) == ()
    assert codes(check_business_chat({"protocols": "x"}, {"protocols": "y"})) == [
        ("business_protocols_differ", "DECL-PROTO-10", "/protocols")
    ]
    assert check_business_chat({"protocols": "x"}, {"protocols": "x"}) == ()


@pytest.mark.parametrize(("business", "group"), [(None, {}), ({}, [])])
def test_check_of_values_that_are_not_objects(business: Any, group: Any) -> None:
    assert codes(check_business_chat(business, group)) == [("not_an_object", "DECL-PROTO-10", "")]


def test_deeply_nested_values_compare_without_recursion() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    business = {"protocols": {"mcp": {"versions": [], "transports": {}, "d": deep}}}
    assert check_business_chat(business, business_group_preferences(business)) == ()
