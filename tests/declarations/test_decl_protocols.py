"""The protocols key: parse, format, preferences helpers, commands check, typed values."""

from __future__ import annotations

from typing import Any

import pytest

from simplex_protocols.declarations import (
    ProtocolDeclaration,
    ProtocolDeclarations,
    ProtocolName,
    Scope,
    Transport,
    check_commands,
    check_preferences,
    format_protocols,
    is_protocol_name,
    parse_protocols,
    protocols_from_preferences,
    with_protocols,
)
from simplex_protocols.errors import DeclarationError, ParseError

MCP: dict[str, Any] = {"versions": ["2026-07-28"], "transports": {"chat": True, "rpc": True}}
A2A: dict[str, Any] = {"versions": ["1.0"], "transports": {"chat": True, "rpc": True}}
SPEC_EXAMPLE: dict[str, Any] = {"protocols": {"mcp": MCP, "a2a": A2A}}


def codes(problems: tuple[DeclarationError, ...]) -> list[tuple[str, str | None, Any]]:
    return [(p.code, p.requirement, p.position) for p in problems]


# --------------------------------------------------------------------------- parse


@pytest.mark.requirement("DECL-PROTO-1", "DECL-PROTO-3")
def test_spec_example_parses_to_two_declarations_served_on_both_transports() -> None:
    declared = protocols_from_preferences(SPEC_EXAMPLE)
    assert declared == ProtocolDeclarations(
        (
            ProtocolDeclaration("mcp", ("2026-07-28",), chat=True, rpc=True),
            ProtocolDeclaration("a2a", ("1.0",), chat=True, rpc=True),
        ),
        Scope.PREFERENCES,
    )
    assert declared.problems == ()
    assert list(declared) == ["mcp", "a2a"]
    assert declared.protocols_for(Transport.RPC) == ("mcp", "a2a")


@pytest.mark.requirement("DECL-PROTO-6")
def test_absent_transport_is_false() -> None:
    declared = parse_protocols({"mcp": {"versions": ["1"], "transports": {"chat": True}}})
    assert declared["mcp"].rpc is False
    assert declared.serves("mcp", "chat")
    assert not declared.serves("mcp", "rpc")


@pytest.mark.requirement("DECL-PROTO-7")
def test_rpc_in_group_preferences_is_reported_kept_and_not_served() -> None:
    declared = parse_protocols({"mcp": MCP}, scope="groupPreferences")
    assert codes(declared.problems) == [
        ("rpc_in_group_preferences", "DECL-PROTO-7", "/mcp/transports/rpc")
    ]
    assert declared["mcp"].rpc is True
    assert declared.serves("mcp", Transport.CHAT)
    assert not declared.serves("mcp", Transport.RPC)
    assert declared.protocols_for("rpc") == ()


@pytest.mark.requirement("DECL-PROTO-7")
def test_rpc_in_group_preferences_raises_in_strict_mode() -> None:
    with pytest.raises(DeclarationError) as info:
        parse_protocols({"mcp": MCP}, scope=Scope.GROUP_PREFERENCES, strict=True)
    assert info.value.code == "rpc_in_group_preferences"
    assert info.value.requirement == "DECL-PROTO-7"


@pytest.mark.requirement("DECL-PROTO-8", "DECL-PROTO-2")
def test_unknown_members_are_kept_and_ignored() -> None:
    value = {
        "mcp": {
            "versions": ["1"],
            "transports": {"chat": True, "stream": "yes"},
            "description": {"x": [1, None]},
        }
    }
    declared = parse_protocols(value)
    assert declared.problems == ()
    assert dict(declared["mcp"].extra) == {"description": {"x": [1, None]}}
    assert dict(declared["mcp"].transports_extra) == {"stream": "yes"}
    assert not declared.serves("mcp", "stream")
    assert format_protocols(declared) == value
    assert declared.raw is value


@pytest.mark.requirement("DECL-PROTO-8", "NAME-3")
def test_unknown_protocol_name_is_an_ordinary_entry() -> None:
    declared = parse_protocols({"openapi": {"versions": ["3.1"], "transports": {"chat": True}}})
    assert declared["openapi"].known is False
    assert declared.serves("openapi", "chat")
    assert parse_protocols({"mcp": MCP})["mcp"].known is True


@pytest.mark.requirement("NAME-1")
@pytest.mark.parametrize(
    "name",
    [
        "MCP",
        "Mcp",
        "my_proto",
        "my proto",
        "mcp.v2",
        "",
        "m\u0441p",
        "\u212acp",
        "mcp\n",
        "m\u200dcp",
    ],
)
def test_bad_protocol_names_are_reported_and_left_out(name: str) -> None:
    declared = parse_protocols({name: MCP, "a2a": A2A})
    assert list(declared) == ["a2a"]
    assert codes(declared.problems)[0][:2] == ("bad_protocol_name", "NAME-1")


@pytest.mark.requirement("NAME-1")
def test_non_string_key_is_a_bad_name_not_a_crash() -> None:
    declared = parse_protocols({1: MCP, "a2a": A2A})
    assert list(declared) == ["a2a"]
    assert codes(declared.problems) == [("bad_protocol_name", "NAME-1", "")]


@pytest.mark.parametrize(
    ("entry", "code", "requirement", "position"),
    [
        (None, "bad_declaration", "DECL-PROTO-3", "/mcp"),
        ({"transports": {}}, "missing_versions", "DECL-PROTO-4", "/mcp"),
        ({"versions": "1", "transports": {}}, "bad_versions", "DECL-PROTO-4", "/mcp/versions"),
        ({"versions": [1], "transports": {}}, "bad_versions", "DECL-PROTO-4", "/mcp/versions/0"),
        ({"versions": ["1"]}, "missing_transports", "DECL-PROTO-5", "/mcp"),
        (
            {"versions": ["1"], "transports": []},
            "bad_transports",
            "DECL-PROTO-5",
            "/mcp/transports",
        ),
        (
            {"versions": ["1"], "transports": {"chat": 1}},
            "bad_transport_value",
            "DECL-PROTO-3",
            "/mcp/transports/chat",
        ),
        (
            {"versions": ["1"], "transports": {"rpc": None}},
            "bad_transport_value",
            "DECL-PROTO-3",
            "/mcp/transports/rpc",
        ),
    ],
)
def test_schema_problems_carry_code_requirement_and_pointer(
    entry: Any, code: str, requirement: str, position: str
) -> None:
    declared = parse_protocols({"mcp": entry, "a2a": A2A})
    assert codes(declared.problems) == [(code, requirement, position)]
    assert list(declared) == ["a2a"]
    with pytest.raises(DeclarationError) as info:
        parse_protocols({"mcp": entry}, strict=True)
    assert (info.value.code, info.value.requirement, info.value.position) == (
        code,
        requirement,
        position,
    )


@pytest.mark.parametrize("value", [None, [], "mcp", 1, True])
def test_a_value_that_is_not_an_object_gives_one_problem(value: Any) -> None:
    declared = parse_protocols(value)
    assert len(declared) == 0
    assert codes(declared.problems) == [("not_an_object", "DECL-PROTO-3", "")]


def test_declaration_error_is_a_parse_error_and_a_value_error() -> None:
    with pytest.raises(ParseError):
        parse_protocols([], strict=True)
    with pytest.raises(ValueError, match="not an object"):
        parse_protocols([], strict=True)


def test_excerpt_describes_the_offending_value_briefly() -> None:
    declared = parse_protocols({"mcp": {"versions": ["1"], "transports": {"chat": "yes"}}})
    assert declared.problems[0].input_excerpt == "yes"
    declared = parse_protocols({"mcp": {"versions": list(range(10_000)), "transports": {}}})
    assert declared.problems[0].input_excerpt == "0"


def test_position_escapes_json_pointer_characters() -> None:
    declared = parse_protocols({"a/b~c": MCP})
    assert declared.problems[0].position == "/a~1b~0c"


def test_unknown_scope_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="scope"):
        parse_protocols({}, scope="group")


def test_mapping_input_that_is_not_a_dict_is_read() -> None:
    from types import MappingProxyType

    declared = parse_protocols(MappingProxyType({"mcp": MappingProxyType(MCP)}))
    assert declared.serves("mcp", "rpc")


# --------------------------------------------------------------------------- typed values


@pytest.mark.requirement("DECL-PROTO-4")
def test_preferred_version_follows_the_bots_order() -> None:
    declared = parse_protocols(
        {"mcp": {"versions": ["2026-07-28", "2025-11-25"], "transports": {"chat": True}}}
    )
    assert declared.preferred_version("mcp") == "2026-07-28"
    assert declared.preferred_version("mcp", ["2025-11-25", "2026-07-28"]) == "2026-07-28"
    assert declared.preferred_version("mcp", ["2025-11-25"]) == "2025-11-25"
    assert declared.preferred_version("mcp", ["1999"]) is None
    assert declared.preferred_version("a2a") is None
    empty = parse_protocols({"mcp": {"versions": [], "transports": {}}})
    assert empty.preferred_version("mcp") is None


def test_lookup_folds_ascii_case_only() -> None:
    declared = parse_protocols({"mcp": MCP})
    assert declared.lookup("MCP") is declared["mcp"]
    assert declared.serves("Mcp", "chat")
    kelvin = parse_protocols({"kcp": MCP})
    assert kelvin.lookup("KCP") is kelvin["kcp"]
    assert kelvin.lookup("\u212acp") is None, "U+212A KELVIN SIGN must not fold to k"
    assert not declared.serves("\uff4d\uff43\uff50", "chat")
    assert not declared.serves("mcp", "carrier-pigeon")


def test_mapping_interface() -> None:
    declared = parse_protocols({"mcp": MCP, "a2a": A2A})
    assert len(declared) == 2
    assert "mcp" in declared
    assert "MCP" not in declared
    assert declared.get("x") is None
    with pytest.raises(KeyError):
        declared["x"]


def test_with_declaration_replaces_in_place_and_appends() -> None:
    declared = parse_protocols({"mcp": MCP, "a2a": A2A})
    replaced = declared.with_declaration(ProtocolDeclaration("mcp", ("1",), chat=True))
    assert list(replaced) == ["mcp", "a2a"]
    assert replaced["mcp"].versions == ("1",)
    added = declared.with_declaration(ProtocolDeclaration("x", ("1",)))
    assert list(added) == ["mcp", "a2a", "x"]
    assert list(added.without("mcp")) == ["a2a", "x"]
    assert added.without("nope") == added


def test_values_are_hashable_and_compare_without_problems() -> None:
    lenient = parse_protocols({"mcp": MCP, "BAD": MCP})
    built = ProtocolDeclarations((ProtocolDeclaration("mcp", ("2026-07-28",), True, True),))
    assert lenient == built
    assert hash(lenient) == hash(built)
    assert len({lenient, built}) == 1


def test_extra_members_are_read_only() -> None:
    decl = ProtocolDeclaration("mcp", ("1",), extra={"a": 1})
    with pytest.raises(TypeError):
        decl.extra["b"] = 2  # type: ignore[index]


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"name": "MCP", "versions": ("1",)}, "bad_protocol_name"),
        ({"name": "mcp", "versions": "1"}, "bad_versions"),
        ({"name": "mcp", "versions": (1,)}, "bad_versions"),
        ({"name": "mcp", "versions": 7}, "bad_versions"),
        ({"name": "mcp", "versions": (), "chat": 1}, "bad_transport_value"),
        ({"name": "mcp", "versions": (), "extra": {"versions": []}}, "bad_declaration"),
        ({"name": "mcp", "versions": (), "transports_extra": {"rpc": True}}, "bad_transports"),
    ],
)
def test_protocol_declaration_is_valid_by_construction(kwargs: dict[str, Any], code: str) -> None:
    with pytest.raises(DeclarationError) as info:
        ProtocolDeclaration(**kwargs)
    assert info.value.code == code


def test_duplicate_names_are_refused() -> None:
    decl = ProtocolDeclaration("mcp", ("1",))
    with pytest.raises(DeclarationError) as info:
        ProtocolDeclarations((decl, decl))
    assert info.value.code == "duplicate_protocol"
    with pytest.raises(DeclarationError):
        ProtocolDeclarations(("mcp",))  # type: ignore[arg-type]


@pytest.mark.requirement("NAME-1")
def test_is_protocol_name() -> None:
    assert is_protocol_name("mcp")
    assert is_protocol_name("a2a-v2")
    assert is_protocol_name("-")
    for bad in ("", "MCP", "mcp\n", "mсp", "a_b", None, 1):
        assert not is_protocol_name(bad)


@pytest.mark.requirement("NAME-3")
def test_registered_names() -> None:
    assert [p.value for p in ProtocolName] == ["mcp", "a2a"]


# --------------------------------------------------------------------------- format


@pytest.mark.requirement("DECL-PROTO-6")
def test_format_writes_only_true_transports_then_unknown_members() -> None:
    declared = ProtocolDeclarations(
        (
            ProtocolDeclaration(
                "mcp", ("1",), chat=True, extra={"note": 1}, transports_extra={"ws": False}
            ),
            ProtocolDeclaration("a2a", ("1.0",), rpc=True),
        )
    )
    assert format_protocols(declared) == {
        "mcp": {"versions": ["1"], "transports": {"chat": True, "ws": False}, "note": 1},
        "a2a": {"versions": ["1.0"], "transports": {"rpc": True}},
    }


@pytest.mark.requirement("DECL-PROTO-7")
def test_format_refuses_rpc_in_group_preferences() -> None:
    declared = ProtocolDeclarations(
        (ProtocolDeclaration("mcp", ("1",), rpc=True),), Scope.GROUP_PREFERENCES
    )
    with pytest.raises(DeclarationError) as info:
        format_protocols(declared)
    assert info.value.code == "rpc_in_group_preferences"
    assert info.value.position == "/mcp/transports/rpc"


# --------------------------------------------------------------------------- preferences


@pytest.mark.requirement("DECL-PROTO-1")
def test_preferences_without_the_key_declare_nothing() -> None:
    declared = protocols_from_preferences({"timedMessages": {"allow": "yes"}})
    assert len(declared) == 0
    assert declared.problems == ()


def test_problems_of_the_key_are_located_inside_preferences() -> None:
    declared = protocols_from_preferences({"protocols": {"MCP": MCP}})
    assert codes(declared.problems) == [("bad_protocol_name", "NAME-1", "/protocols/MCP")]
    declared = protocols_from_preferences({"protocols": None})
    assert codes(declared.problems) == [("not_an_object", "DECL-PROTO-3", "/protocols")]
    with pytest.raises(DeclarationError) as info:
        protocols_from_preferences({"protocols": {"MCP": MCP}}, strict=True)
    assert info.value.position == "/protocols/MCP"


def test_preferences_that_are_not_an_object() -> None:
    declared = protocols_from_preferences("x", scope="groupPreferences")
    assert declared.scope is Scope.GROUP_PREFERENCES
    assert codes(declared.problems) == [("not_an_object", "DECL-PROTO-1", "")]
    with pytest.raises(DeclarationError):
        protocols_from_preferences(None, strict=True)
    assert protocols_from_preferences({"protocols": {}}, strict=True) == ProtocolDeclarations()


@pytest.mark.requirement("DECL-PROTO-11")
def test_with_protocols_keeps_other_keys_and_commands() -> None:
    prefs = {
        "timedMessages": {"allow": "yes"},
        "protocols": {"old": MCP},
        "commands": [{"type": "command", "keyword": "help", "label": "Help"}],
    }
    declared = ProtocolDeclarations((ProtocolDeclaration("mcp", ("2026-07-28",), chat=True),))
    out = with_protocols(prefs, declared)
    assert out == {
        "timedMessages": {"allow": "yes"},
        "protocols": {"mcp": {"versions": ["2026-07-28"], "transports": {"chat": True}}},
        "commands": [{"type": "command", "keyword": "help", "label": "Help"}],
    }
    assert list(out) == ["timedMessages", "protocols", "commands"]
    assert prefs["protocols"] == {"old": MCP}, "the input is not changed"
    assert "protocols" not in with_protocols(prefs, ProtocolDeclarations())
    assert protocols_from_preferences(out) == declared


@pytest.mark.requirement("DECL-PROTO-11")
def test_with_protocols_refuses_call_in_commands() -> None:
    prefs = {"commands": [{"type": "command", "keyword": "_call", "label": "Call"}]}
    with pytest.raises(DeclarationError) as info:
        with_protocols(prefs, ProtocolDeclarations())
    assert info.value.code == "call_in_commands"


def test_with_protocols_refuses_what_is_not_an_object() -> None:
    with pytest.raises(DeclarationError) as info:
        with_protocols([], ProtocolDeclarations())
    assert info.value.code == "not_an_object"


@pytest.mark.requirement("DECL-PROTO-11")
def test_check_commands_searches_menus_in_document_order() -> None:
    prefs = {
        "commands": [
            {"type": "command", "keyword": "call", "label": "for people"},
            {
                "type": "menu",
                "label": "More",
                "commands": [
                    {"type": "command", "keyword": "/_call mcp", "label": "x"},
                    {"type": "menu", "label": "Deeper", "commands": [{"keyword": "_Call"}]},
                ],
            },
            {"type": "command", "keyword": " _call", "label": "y"},
            "not a command",
            {"keyword": 5},
        ]
    }
    assert codes(check_commands(prefs)) == [
        ("call_in_commands", "DECL-PROTO-11", "/commands/1/commands/0/keyword"),
        ("call_in_commands", "DECL-PROTO-11", "/commands/1/commands/1/commands/0/keyword"),
        ("call_in_commands", "DECL-PROTO-11", "/commands/2/keyword"),
    ]
    assert check_commands({"commands": "x"}) == ()
    assert check_commands(None) == ()
    assert check_commands({"commands": [{"keyword": ""}]}) == ()


def test_check_preferences_reports_protocols_then_commands() -> None:
    prefs = {
        "commands": [{"type": "command", "keyword": "_call", "label": "Call"}],
        "protocols": {"mcp": MCP},
    }
    assert codes(check_preferences(prefs, scope="groupPreferences")) == [
        ("rpc_in_group_preferences", "DECL-PROTO-7", "/protocols/mcp/transports/rpc"),
        ("call_in_commands", "DECL-PROTO-11", "/commands/0/keyword"),
    ]
    assert check_preferences(SPEC_EXAMPLE) == ()
