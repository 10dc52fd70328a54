"""Property tests: round trips of every codec, and totality of every parser."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from simplex_protocols._wire import dumps
from simplex_protocols.conformance.ops import run_op
from simplex_protocols.declarations import (
    AddressLinkData,
    ChangeFrequency,
    PeerType,
    ProtocolDeclaration,
    ProtocolDeclarations,
    PublicGroupDeclaration,
    Scope,
    audience_from_website,
    business_group_preferences,
    change_frequency_from_website,
    check_business_chat,
    check_commands,
    check_preferences,
    effective_audience,
    effective_change_frequency,
    format_link_data,
    format_protocols,
    format_public_group,
    parse_link_data,
    parse_protocols,
    parse_public_group,
    protocols_from_preferences,
    with_protocols,
)
from simplex_protocols.errors import DeclarationError

SETTINGS = settings(max_examples=100, deadline=None)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
versions = st.lists(st.text(max_size=12), max_size=4).map(tuple)


def extra_members(reserved: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(
        st.text(max_size=8).filter(lambda k: k not in reserved), json_values, max_size=2
    )


@st.composite
def protocol_declarations(draw: st.DrawFn, scope: Scope | None = None) -> ProtocolDeclarations:
    if scope is None:
        scope = draw(st.sampled_from(Scope))
    chosen = draw(st.lists(names, max_size=3, unique=True))
    entries = tuple(
        ProtocolDeclaration(
            name=name,
            versions=draw(versions),
            chat=draw(st.booleans()),
            rpc=draw(st.booleans()) if scope is Scope.PREFERENCES else False,
            extra=draw(extra_members(("versions", "transports"))),
            transports_extra=draw(extra_members(("chat", "rpc"))),
        )
        for name in chosen
    )
    return ProtocolDeclarations(entries, scope)


peer_values = st.sampled_from(list(PeerType)) | st.text(max_size=8)


@st.composite
def public_groups(draw: st.DrawFn) -> PublicGroupDeclaration:
    extra = draw(extra_members(("audience", "changeFrequency")))
    group_type = draw(st.sampled_from([None, "channel", "group"]))
    if group_type is not None:
        extra["groupType"] = group_type
    frequency = None
    if not isinstance(extra.get("groupType"), str) or extra["groupType"] == "channel":
        frequency = draw(st.none() | st.sampled_from(ChangeFrequency))
    audience = draw(st.none() | st.lists(peer_values, max_size=5).map(tuple))
    return PublicGroupDeclaration(audience=audience, change_frequency=frequency, extra=extra)


link_datas = st.builds(
    AddressLinkData,
    serves=st.none() | st.lists(peer_values, max_size=5).map(tuple),
    extra=extra_members(("serves",)),
)


# --------------------------------------------------------------------------- round trips


@SETTINGS
@given(protocol_declarations())
def test_protocols_round_trip(declared: ProtocolDeclarations) -> None:
    parsed = parse_protocols(format_protocols(declared), scope=declared.scope, strict=True)
    assert parsed == declared
    assert parsed.problems == ()


@SETTINGS
@given(protocol_declarations(), extra_members(("protocols", "commands")))
def test_protocols_round_trip_through_preferences(
    declared: ProtocolDeclarations, others: dict[str, Any]
) -> None:
    prefs = with_protocols(others, declared)
    assert {k: v for k, v in prefs.items() if k != "protocols"} == others
    assert protocols_from_preferences(prefs, scope=declared.scope, strict=True) == declared


@SETTINGS
@given(protocol_declarations())
def test_protocols_round_trip_through_wire_text_and_vector_ops(
    declared: ProtocolDeclarations,
) -> None:
    text = dumps(format_protocols(declared))
    args = {"scope": declared.scope.value}
    parsed = run_op("declarations.parse_protocols", text, args)
    assert parsed["ok"]
    assert run_op("declarations.format_protocols", parsed["value"], args) == {
        "ok": True,
        "value": text,
    }


@SETTINGS
@given(public_groups())
def test_public_group_round_trip(declared: PublicGroupDeclaration) -> None:
    parsed = parse_public_group(format_public_group(declared), strict=True)
    assert parsed == declared
    text = dumps(format_public_group(declared))
    answer = run_op("declarations.parse_public_group", text)
    assert run_op("declarations.format_public_group", answer["value"]) == {
        "ok": True,
        "value": text,
    }


@SETTINGS
@given(link_datas)
def test_link_data_round_trip(data: AddressLinkData) -> None:
    assert parse_link_data(format_link_data(data), strict=True) == data
    text = dumps(format_link_data(data))
    answer = run_op("declarations.parse_link_data", text)
    assert run_op("declarations.format_link_data", answer["value"]) == {"ok": True, "value": text}


@SETTINGS
@given(protocol_declarations(Scope.PREFERENCES), json_values)
def test_business_copy_passes_its_own_check(declared: ProtocolDeclarations, group: Any) -> None:
    business = {"protocols": format_protocols(declared)}
    group_prefs = group if isinstance(group, dict) else {}
    copied = business_group_preferences(business, group_prefs)
    assert check_business_chat(business, copied) == ()
    in_group = parse_protocols(copied["protocols"], scope=Scope.GROUP_PREFERENCES, strict=True)
    assert in_group.protocols_for("chat") == declared.protocols_for("chat")


# --------------------------------------------------------------------------- totality

shaped_entries = st.fixed_dictionaries(
    {},
    optional={
        "versions": json_values | st.lists(json_scalars, max_size=3),
        "transports": json_values
        | st.dictionaries(st.sampled_from(["chat", "rpc", "x"]), json_scalars, max_size=3),
    },
)
shaped_protocols = st.dictionaries(
    names | st.text(max_size=6), shaped_entries | json_values, max_size=4
)
anything = (
    json_values
    | shaped_protocols
    | st.dictionaries(
        st.sampled_from(
            ["protocols", "commands", "audience", "changeFrequency", "serves", "groupType"]
        ),
        json_values | shaped_protocols,
        max_size=4,
    )
)


@SETTINGS
@given(anything, st.sampled_from(Scope))
def test_lenient_parsers_never_raise(value: Any, scope: Scope) -> None:
    declared = parse_protocols(value, scope=scope)
    assert all(isinstance(p, DeclarationError) for p in declared.problems)
    assert declared.raw is value
    protocols_from_preferences(value, scope=scope)
    check_preferences(value, scope=scope)
    check_commands(value)
    group = parse_public_group(value)
    link = parse_link_data(value)
    effective_audience(group)
    effective_audience(link)
    effective_change_frequency(group)
    check_business_chat(value, value)


@SETTINGS
@given(anything, st.sampled_from(Scope))
def test_strict_parsers_raise_only_declaration_errors(value: Any, scope: Scope) -> None:
    for parse in (
        lambda: parse_protocols(value, scope=scope, strict=True),
        lambda: protocols_from_preferences(value, scope=scope, strict=True),
        lambda: parse_public_group(value, strict=True),
        lambda: parse_link_data(value, strict=True),
        lambda: business_group_preferences(value, value),
    ):
        with contextlib.suppress(DeclarationError):
            parse()


@SETTINGS
@given(st.text(max_size=30) | json_values)
def test_website_readers_raise_only_declaration_errors(value: Any) -> None:
    for read in (audience_from_website, change_frequency_from_website):
        with contextlib.suppress(DeclarationError):
            read(value)
    website = value if isinstance(value, str | list) else None
    effective_audience(None, website)
    effective_change_frequency(None, value if isinstance(value, str) else None)


PARSE_OPS = [
    "declarations.parse_protocols",
    "declarations.check_preferences",
    "declarations.parse_public_group",
    "declarations.parse_link_data",
    "declarations.business_group_preferences",
    "declarations.check_business_chat",
    "declarations.effective_audience",
    "declarations.effective_change_frequency",
]


@SETTINGS
@given(
    st.text(max_size=60) | anything.map(dumps),
    st.sampled_from(PARSE_OPS),
    st.fixed_dictionaries({}, optional={"lenient": st.booleans(), "scope": st.sampled_from(Scope)}),
)
def test_every_parse_operation_answers_text(text: str, name: str, args: dict[str, Any]) -> None:
    answer = run_op(name, text, args)
    assert isinstance(answer["ok"], bool)
    if not answer["ok"]:
        assert isinstance(answer["error"]["code"], str)
