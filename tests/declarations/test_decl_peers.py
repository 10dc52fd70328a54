"""Public group audience and changeFrequency, link data serves, peer types, precedence."""

from __future__ import annotations

from typing import Any

import pytest

from simplex_protocols._spec import load_json
from simplex_protocols.declarations import (
    DEFAULT_AUDIENCE,
    AddressLinkData,
    ChangeFrequency,
    DeclarationSource,
    EffectiveValue,
    PeerType,
    PublicGroupDeclaration,
    audience_from_website,
    change_frequency_from_website,
    effective_audience,
    effective_change_frequency,
    format_link_data,
    format_public_group,
    parse_link_data,
    parse_public_group,
    peer_type,
)
from simplex_protocols.errors import DeclarationError

CHANNEL: dict[str, Any] = {
    "groupType": "channel",
    "groupLink": "https://smp12.simplex.im/c#abc",
    "publicGroupId": "pg1",
}
HUMAN, BOT, BUSINESS, AGENT = PeerType.HUMAN, PeerType.BOT, PeerType.BUSINESS, PeerType.AGENT


def codes(problems: tuple[DeclarationError, ...]) -> list[tuple[str, str | None, Any]]:
    return [(p.code, p.requirement, p.position) for p in problems]


# --------------------------------------------------------------------------- enums


def test_change_frequency_matches_the_schema_enum() -> None:
    schema = load_json("schemas", "public-group.jtd.json")
    assert [f.value for f in ChangeFrequency] == schema["optionalProperties"]["changeFrequency"][
        "enum"
    ]


@pytest.mark.requirement("DECL-AUD-1")
def test_peer_types_and_unknown_strings() -> None:
    assert [p.value for p in PeerType] == ["human", "bot", "business", "agent"]
    assert peer_type("agent") is AGENT
    unknown = peer_type("Agent")
    assert unknown == "Agent"
    assert not isinstance(unknown, PeerType)


# --------------------------------------------------------------------------- public group


@pytest.mark.requirement("DECL-AUD-1", "DECL-AUD-3")
def test_channel_record_parses_and_formats_back() -> None:
    record = {**CHANNEL, "audience": ["human", "agent"], "changeFrequency": "weekly"}
    declared = parse_public_group(record)
    assert declared == PublicGroupDeclaration(
        audience=(HUMAN, AGENT), change_frequency=ChangeFrequency.WEEKLY, extra=CHANNEL
    )
    assert declared.problems == ()
    assert declared.is_channel
    assert declared.effective_audience == {HUMAN, AGENT}
    assert declared.effective_change_frequency is ChangeFrequency.WEEKLY
    assert format_public_group(declared) == record
    assert list(format_public_group(declared)) == list(record)


@pytest.mark.requirement("DECL-AUD-2")
def test_absent_audience_is_human() -> None:
    declared = parse_public_group(CHANNEL)
    assert declared.audience is None
    assert declared.effective_audience == DEFAULT_AUDIENCE == {HUMAN}
    assert format_public_group(declared) == CHANNEL


@pytest.mark.requirement("DECL-AUD-5")
def test_unknown_audience_values_are_kept_and_ignored() -> None:
    declared = parse_public_group({**CHANNEL, "audience": ["robot", "agent", "Human"]})
    assert declared.audience == ("robot", AGENT, "Human")
    assert declared.effective_audience == {AGENT}
    assert declared.problems == ()
    assert format_public_group(declared)["audience"] == ["robot", "agent", "Human"]


@pytest.mark.requirement("DECL-AUD-5")
def test_audience_with_no_known_value_is_empty_in_effect() -> None:
    assert parse_public_group({"audience": ["robot"]}).effective_audience == frozenset()
    assert parse_public_group({"audience": []}).effective_audience == frozenset()


@pytest.mark.requirement("DECL-AUD-3")
def test_change_frequency_outside_a_channel_is_reported_and_ignored() -> None:
    record = {"groupType": "group", "changeFrequency": "daily"}
    declared = parse_public_group(record)
    assert codes(declared.problems) == [
        ("change_frequency_not_channel", "DECL-AUD-3", "/changeFrequency")
    ]
    assert declared.change_frequency is ChangeFrequency.DAILY
    assert declared.effective_change_frequency is None
    with pytest.raises(DeclarationError) as info:
        parse_public_group(record, strict=True)
    assert info.value.code == "change_frequency_not_channel"
    with pytest.raises(DeclarationError) as info:
        format_public_group(declared)
    assert info.value.code == "change_frequency_not_channel"


def test_change_frequency_without_group_type_applies() -> None:
    declared = parse_public_group({"changeFrequency": "never"})
    assert declared.group_type is None
    assert not declared.is_channel
    assert declared.effective_change_frequency is ChangeFrequency.NEVER


@pytest.mark.requirement("DECL-AUD-3")
@pytest.mark.parametrize("value", ["Weekly", "biweekly", " weekly", None, 7, ["weekly"]])
def test_bad_change_frequency(value: Any) -> None:
    declared = parse_public_group({**CHANNEL, "changeFrequency": value})
    assert codes(declared.problems) == [("bad_change_frequency", "DECL-AUD-3", "/changeFrequency")]
    assert declared.change_frequency is None


@pytest.mark.requirement("DECL-AUD-1")
@pytest.mark.parametrize(
    ("audience", "expected_problems", "expected_audience"),
    [
        ("human", [("bad_audience", "DECL-AUD-1", "/audience")], None),
        (None, [("bad_audience", "DECL-AUD-1", "/audience")], None),
        ({"human": True}, [("bad_audience", "DECL-AUD-1", "/audience")], None),
        (
            [1, "agent", None],
            [
                ("bad_audience_value", "DECL-AUD-1", "/audience/0"),
                ("bad_audience_value", "DECL-AUD-1", "/audience/2"),
            ],
            (AGENT,),
        ),
    ],
)
def test_bad_audience(audience: Any, expected_problems: list[Any], expected_audience: Any) -> None:
    declared = parse_public_group({**CHANNEL, "audience": audience})
    assert codes(declared.problems) == expected_problems
    assert declared.audience == expected_audience
    with pytest.raises(DeclarationError) as info:
        parse_public_group({"audience": audience}, strict=True)
    assert info.value.code == expected_problems[0][0]


@pytest.mark.parametrize("value", [None, [], "x", 3])
def test_record_that_is_not_an_object(value: Any) -> None:
    declared = parse_public_group(value)
    assert codes(declared.problems) == [("not_an_object", "DECL-AUD-6", "")]
    assert declared.effective_audience == {HUMAN}
    with pytest.raises(DeclarationError):
        parse_public_group(value, strict=True)


def test_public_group_declaration_is_valid_by_construction() -> None:
    with pytest.raises(DeclarationError) as info:
        PublicGroupDeclaration(audience="human")  # type: ignore[arg-type]
    assert info.value.code == "bad_audience"
    with pytest.raises(DeclarationError) as info:
        PublicGroupDeclaration(audience=(1,))  # type: ignore[arg-type]
    assert info.value.code == "bad_audience_value"
    with pytest.raises(DeclarationError) as info:
        PublicGroupDeclaration(change_frequency="fortnightly")  # type: ignore[arg-type]
    assert info.value.code == "bad_change_frequency"
    with pytest.raises(DeclarationError) as info:
        PublicGroupDeclaration(extra={"audience": []})
    assert info.value.code == "bad_public_group"
    built = PublicGroupDeclaration(audience=["agent"], change_frequency="daily")  # type: ignore[arg-type]
    assert built.audience == (AGENT,)
    assert built.change_frequency is ChangeFrequency.DAILY


# --------------------------------------------------------------------------- link data


@pytest.mark.requirement("DECL-SERVES-1")
def test_link_data_serves_beside_business() -> None:
    data = {"profile": {"displayName": "Ask Acme"}, "business": True, "serves": ["agent"]}
    parsed = parse_link_data(data)
    assert parsed == AddressLinkData(
        serves=(AGENT,), extra={"profile": {"displayName": "Ask Acme"}, "business": True}
    )
    assert parsed.business
    assert parsed.effective_serves == {AGENT}
    assert format_link_data(parsed) == data


@pytest.mark.requirement("DECL-SERVES-1", "DECL-AUD-5")
def test_link_data_default_and_unknown_values() -> None:
    assert parse_link_data({}).effective_serves == {HUMAN}
    assert not parse_link_data({"business": "true"}).business
    parsed = parse_link_data({"serves": ["service", "bot"]})
    assert parsed.serves == ("service", BOT)
    assert parsed.effective_serves == {BOT}


@pytest.mark.requirement("DECL-SERVES-1")
def test_bad_serves() -> None:
    assert codes(parse_link_data({"serves": "agent"}).problems) == [
        ("bad_serves", "DECL-SERVES-2", "/serves")
    ]
    parsed = parse_link_data({"serves": [True, "agent"]})
    assert codes(parsed.problems) == [("bad_serves_value", "DECL-SERVES-2", "/serves/0")]
    assert parsed.serves == (AGENT,)
    with pytest.raises(DeclarationError) as info:
        parse_link_data({"serves": [True]}, strict=True)
    assert info.value.code == "bad_serves_value"
    assert codes(parse_link_data([]).problems) == [("not_an_object", "DECL-SERVES-2", "")]
    with pytest.raises(DeclarationError):
        parse_link_data(None, strict=True)
    with pytest.raises(DeclarationError) as info:
        AddressLinkData(extra={"serves": []})
    assert info.value.code == "bad_link_data"


# --------------------------------------------------------------------------- precedence


@pytest.mark.requirement("LLMS-NOTES-3")
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("people", {HUMAN}),
        ("agents", {AGENT}),
        ("people and agents", {HUMAN, AGENT}),
        ("People  AND agents", {HUMAN, AGENT}),
    ],
)
def test_audience_from_website(text: str, expected: set[PeerType]) -> None:
    assert audience_from_website(text) == expected


@pytest.mark.parametrize(
    "text", ["robots", "agents and people", "", "p\u0435ople", "people\tand agents"]
)
def test_unreadable_website_audience(text: str) -> None:
    with pytest.raises(DeclarationError) as info:
        audience_from_website(text)
    assert (info.value.code, info.value.requirement) == ("bad_website_audience", "LLMS-NOTES-3")


def test_change_frequency_from_website() -> None:
    assert change_frequency_from_website("Weekly") is ChangeFrequency.WEEKLY
    for bad in ("fortnightly", "", "week ly"):
        with pytest.raises(DeclarationError) as info:
            change_frequency_from_website(bad)
        assert info.value.code == "bad_website_frequency"


@pytest.mark.requirement("DECL-PREC-1")
def test_in_band_audience_wins_over_the_website() -> None:
    record = parse_public_group({**CHANNEL, "audience": ["agent"]})
    assert effective_audience(record, "people") == EffectiveValue(
        frozenset({AGENT}), DeclarationSource.PUBLIC_GROUP
    )
    link = parse_link_data({"serves": ["human", "agent"]})
    assert effective_audience(link, "agents") == EffectiveValue(
        frozenset({HUMAN, AGENT}), DeclarationSource.LINK_DATA
    )
    silent = parse_public_group({**CHANNEL, "audience": ["robot"]})
    assert effective_audience(silent, "agents").value == frozenset()


@pytest.mark.requirement("DECL-PREC-1", "DECL-AUD-2")
def test_website_then_default_when_in_band_is_absent() -> None:
    record = parse_public_group(CHANNEL)
    assert effective_audience(record, "people and agents") == EffectiveValue(
        frozenset({HUMAN, AGENT}), DeclarationSource.WEBSITE
    )
    assert effective_audience(record) == EffectiveValue(DEFAULT_AUDIENCE, DeclarationSource.DEFAULT)
    assert effective_audience(None, ["agent", "robot"]) == EffectiveValue(
        frozenset({AGENT}), DeclarationSource.WEBSITE
    )
    unreadable = effective_audience(parse_link_data({}), "robots")
    assert unreadable == EffectiveValue(DEFAULT_AUDIENCE, DeclarationSource.DEFAULT)
    assert [p.code for p in unreadable.problems] == ["bad_website_audience"]


@pytest.mark.requirement("DECL-PREC-1", "DECL-AUD-3")
def test_effective_change_frequency() -> None:
    weekly = parse_public_group({**CHANNEL, "changeFrequency": "weekly"})
    assert effective_change_frequency(weekly, "daily") == EffectiveValue(
        ChangeFrequency.WEEKLY, DeclarationSource.PUBLIC_GROUP
    )
    assert effective_change_frequency(parse_public_group(CHANNEL), "daily") == EffectiveValue(
        ChangeFrequency.DAILY, DeclarationSource.WEBSITE
    )
    group = parse_public_group({"groupType": "group", "changeFrequency": "daily"})
    assert effective_change_frequency(group, "hourly") == EffectiveValue(
        None, DeclarationSource.PUBLIC_GROUP
    )
    assert effective_change_frequency(None) == EffectiveValue(None, DeclarationSource.DEFAULT)
    bad = effective_change_frequency(None, "fortnightly")
    assert bad.value is None
    assert [p.code for p in bad.problems] == ["bad_website_frequency"]


# DECL-PREC-1 with lenient parsing: a field the in-band record has decides, readable or not;
# what could not be read is reported with the result, never dropped silently.


@pytest.mark.requirement("DECL-PREC-1", "DECL-AUD-1")
@pytest.mark.parametrize("bad", ["agent", 5, {"agent": True}, None])
def test_an_unreadable_record_audience_still_takes_precedence_and_is_reported(bad: Any) -> None:
    record = parse_public_group({**CHANNEL, "audience": bad})
    result = effective_audience(record, "agents")
    assert result == EffectiveValue(DEFAULT_AUDIENCE, DeclarationSource.PUBLIC_GROUP)
    assert result.value == record.effective_audience  # the record's own lenient reading
    assert codes(result.problems) == [("bad_audience", "DECL-AUD-1", "/audience")]


@pytest.mark.requirement("DECL-PREC-1", "DECL-AUD-1")
def test_an_unreadable_audience_value_is_reported_with_the_readable_ones() -> None:
    record = parse_public_group({**CHANNEL, "audience": ["agent", 5], "changeFrequency": "x"})
    result = effective_audience(record, "people")
    assert result == EffectiveValue(frozenset({AGENT}), DeclarationSource.PUBLIC_GROUP)
    # Only the problems of the field that decided: changeFrequency is another question.
    assert codes(result.problems) == [("bad_audience_value", "DECL-AUD-1", "/audience/1")]


@pytest.mark.requirement("DECL-PREC-1", "DECL-SERVES-2")
def test_unreadable_link_data_serves_still_takes_precedence_and_is_reported() -> None:
    link = parse_link_data({"business": False, "serves": "agent"})
    result = effective_audience(link, "agents")
    assert result == EffectiveValue(DEFAULT_AUDIENCE, DeclarationSource.LINK_DATA)
    assert codes(result.problems) == [("bad_serves", "DECL-SERVES-2", "/serves")]


@pytest.mark.requirement("DECL-PREC-1")
def test_a_record_that_is_not_an_object_has_no_field_and_is_reported() -> None:
    result = effective_audience(parse_public_group("agents"), "agents")
    assert result == EffectiveValue(frozenset({AGENT}), DeclarationSource.WEBSITE)
    assert codes(result.problems) == [("not_an_object", "DECL-AUD-6", "")]
    frequency = effective_change_frequency(parse_public_group([]), "daily")
    assert frequency == EffectiveValue(ChangeFrequency.DAILY, DeclarationSource.WEBSITE)
    assert codes(frequency.problems) == [("not_an_object", "DECL-AUD-6", "")]


@pytest.mark.requirement("DECL-PREC-1", "DECL-AUD-3")
@pytest.mark.parametrize("bad", ["sometimes", "Weekly", 7, None])
def test_an_unreadable_change_frequency_still_takes_precedence_and_is_reported(bad: Any) -> None:
    record = parse_public_group({**CHANNEL, "changeFrequency": bad})
    result = effective_change_frequency(record, "daily")
    assert result == EffectiveValue(None, DeclarationSource.PUBLIC_GROUP)
    assert result.value == record.effective_change_frequency
    assert codes(result.problems) == [("bad_change_frequency", "DECL-AUD-3", "/changeFrequency")]


@pytest.mark.requirement("DECL-AUD-3")
def test_a_change_frequency_outside_a_channel_is_reported_with_the_result() -> None:
    group = parse_public_group({"groupType": "group", "changeFrequency": "daily"})
    result = effective_change_frequency(group, "hourly")
    assert result == EffectiveValue(None, DeclarationSource.PUBLIC_GROUP)
    assert codes(result.problems) == [
        ("change_frequency_not_channel", "DECL-AUD-3", "/changeFrequency")
    ]
