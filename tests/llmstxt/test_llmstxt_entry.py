"""One Communications entry: the notes grammar, letter case, link checks and rendering."""

from __future__ import annotations

import pytest

from simplex_protocols.errors import LLMsTxtError
from simplex_protocols.links import LinkKind
from simplex_protocols.llmstxt import (
    MAX_ENTRY_LINE_CHARS,
    REQUIRED_LINK_KIND,
    SIMPLEX_NETWORK,
    AddressType,
    Audience,
    ChangeFrequency,
    CommunicationsEntry,
    parse_communications_entry,
    render_communications_entry,
    validate_entry,
)

KEY = "Q" * 42 + "A"
NEWS = f"https://smp12.simplex.im/c#{KEY}"
CUSTOMERS = f"https://smp12.simplex.im/g#{KEY}"
ASK = f"https://smp12.simplex.im/a#{KEY}"
INVITATION = f"https://smp12.simplex.im/i#{'I' * 32}/{KEY}"


@pytest.mark.requirement("LLMS-ITEM-1", "LLMS-NOTES-1", "LLMS-NOTES-4", "LLMS-TITLE-1")
def test_updates_entry_of_the_spec() -> None:
    line = f"- [Acme news]({NEWS}): SimpleX updates for people and agents, weekly. Product news and offers."
    assert parse_communications_entry(line) == CommunicationsEntry(
        title="Acme news",
        url=NEWS,
        network=SIMPLEX_NETWORK,
        type=AddressType.UPDATES,
        audience=Audience.PEOPLE_AND_AGENTS,
        frequency=ChangeFrequency.WEEKLY,
        info="Product news and offers.",
    )


@pytest.mark.requirement("LLMS-NOTES-1", "LLMS-NOTES-5")
def test_business_contact_entry_keeps_protocol_letter_case() -> None:
    entry = parse_communications_entry(
        f"- [Ask Acme]({ASK}): SimpleX business contact for agents, MCP, A2A. Orders."
    )
    assert entry.type is AddressType.BUSINESS_CONTACT
    assert entry.protocols == ("MCP", "A2A")
    assert entry.protocol_names == ("mcp", "a2a")
    assert entry.serves("mcp")
    assert entry.serves("A2A")
    assert not entry.serves("acp")


@pytest.mark.requirement("LLMS-OTHER-1")
def test_other_networks_are_kept() -> None:
    entry = parse_communications_entry(
        "- [Acme support](mailto:support@acme.example): Email contact for people."
    )
    assert (entry.network, entry.is_simplex, entry.info) == ("Email", False, "")
    assert validate_entry(entry) is None


@pytest.mark.requirement("LLMS-NOTES-3")
@pytest.mark.parametrize(
    ("words", "audience", "peer_types"),
    [
        ("people", Audience.PEOPLE, ("human",)),
        ("agents", Audience.AGENTS, ("agent",)),
        ("people and agents", Audience.PEOPLE_AND_AGENTS, ("human", "agent")),
        ("People  AND\tAgents", Audience.PEOPLE_AND_AGENTS, ("human", "agent")),
    ],
)
def test_audience_maps_to_peer_types(
    words: str, audience: Audience, peer_types: tuple[str, ...]
) -> None:
    entry = parse_communications_entry(f"- [A]({ASK}): SimpleX contact for {words}.")
    assert entry.audience is audience
    assert entry.peer_types == peer_types


def test_audience_from_peer_types() -> None:
    assert Audience.from_peer_types(["agent", "human", "bot"]) is Audience.PEOPLE_AND_AGENTS
    assert Audience.from_peer_types(["human"]) is Audience.PEOPLE
    assert Audience.from_peer_types({"agent"}) is Audience.AGENTS
    assert Audience.from_peer_types(["bot", "business"]) is None


@pytest.mark.requirement("LLMS-NOTES-2", "LLMS-NOTES-4")
def test_words_are_read_without_letter_case_and_written_as_in_the_spec() -> None:
    entry = parse_communications_entry(f"- [A]({NEWS}): simplex UPDATES for People, DAILY. x")
    assert (entry.network, entry.type, entry.audience, entry.frequency) == (
        "SimpleX",
        AddressType.UPDATES,
        Audience.PEOPLE,
        ChangeFrequency.DAILY,
    )
    assert (
        render_communications_entry(entry) == f"- [A]({NEWS}): SimpleX updates for people, daily. x"
    )


def test_info_is_everything_after_the_first_period() -> None:
    entry = parse_communications_entry(
        f"- [A]({CUSTOMERS}): SimpleX group for people. One. Two, three."
    )
    assert entry.info == "One. Two, three."


@pytest.mark.parametrize(
    ("notes", "requirement"),
    [
        ("SimpleX updates for people, daily.News.", "LLMS-NOTES-6"),
        ("SimpleX group for people.Tips.", "LLMS-NOTES-7"),
        ("SimpleX contact for agents.Ask.", "LLMS-NOTES-8"),
        ("SimpleX business contact for agents, mcp.Orders.", "LLMS-NOTES-8"),
    ],
)
def test_strict_refuses_info_without_the_space_after_the_period(
    notes: str, requirement: str
) -> None:
    url = {"LLMS-NOTES-6": NEWS, "LLMS-NOTES-7": CUSTOMERS}.get(requirement, ASK)
    line = f"- [A]({url}): {notes}"
    with pytest.raises(LLMsTxtError) as info:
        parse_communications_entry(line, line=7)
    assert info.value.code == "missing_space_before_info"
    assert info.value.requirement == requirement
    assert info.value.line == 7
    assert info.value.position == line.index(".", line.index("for ")) + 1


@pytest.mark.requirement("LLMS-NOTES-8")
def test_lenient_keeps_info_without_the_space_and_reports_it() -> None:
    line = f"- [Ask Acme]({ASK}): SimpleX contact for agents.Ask."
    entry = parse_communications_entry(line, line=3, strict=False)
    assert entry == CommunicationsEntry(
        "Ask Acme", ASK, SIMPLEX_NETWORK, AddressType.CONTACT, Audience.AGENTS, info="Ask."
    )
    [problem] = entry.problems
    assert (problem.code, problem.requirement, problem.line) == (
        "missing_space_before_info",
        "LLMS-NOTES-8",
        3,
    )
    # Written back, the entry has its space: the reader's tolerance is not the writer's form.
    assert render_communications_entry(entry).endswith("for agents. Ask.")


def test_an_entry_with_the_space_has_no_problems_in_either_mode() -> None:
    line = f"- [A]({ASK}): SimpleX contact for agents. Ask."
    for strict in (True, False):
        assert parse_communications_entry(line, strict=strict).problems == ()
    for bare in (
        "SimpleX contact for agents.",
        "SimpleX contact for agents",
        "Email contact for people.\tx",
    ):
        url = ASK if bare.startswith("SimpleX") else "mailto:a@example.com"
        assert parse_communications_entry(f"- [A]({url}): {bare}").problems == ()


def test_lenient_still_refuses_what_it_cannot_read() -> None:
    with pytest.raises(LLMsTxtError) as info:
        parse_communications_entry(f"- [A]({ASK}): SimpleX contact for robots.Ask.", strict=False)
    assert info.value.code == "bad_audience"


def test_final_period_may_be_left_out_when_there_is_no_info() -> None:
    entry = parse_communications_entry("- [A](mailto:a@example.com): Email contact for people")
    assert entry.info == ""
    assert (
        render_communications_entry(entry)
        == "- [A](mailto:a@example.com): Email contact for people."
    )


def test_the_type_is_the_first_type_word_followed_by_for() -> None:
    entry = parse_communications_entry(
        "- [A](https://acme.example/f): Acme group contact for people."
    )
    assert (entry.network, entry.type) == ("Acme group", AddressType.CONTACT)
    entry = parse_communications_entry(
        "- [A](https://acme.example/f): Acme business contact for people."
    )
    assert (entry.network, entry.type) == ("Acme", AddressType.BUSINESS_CONTACT)


@pytest.mark.requirement("LLMS-TITLE-1")
def test_title_brackets_and_escapes() -> None:
    entry = parse_communications_entry(
        f"- [Acme [beta] \\] \\\\ news]({NEWS}): SimpleX updates for people."
    )
    assert entry.title == "Acme [beta] ] \\ news"
    line = render_communications_entry(entry)
    assert line == f"- [Acme \\[beta\\] \\] \\\\ news]({NEWS}): SimpleX updates for people."
    assert parse_communications_entry(line) == entry


def test_url_forms() -> None:
    angle = parse_communications_entry(f"- [A](<{ASK}>): SimpleX contact for agents.")
    assert angle.url == ASK
    parens = parse_communications_entry("- [W](https://w.example/A_(b)): Wiki contact for people.")
    assert parens.url == "https://w.example/A_(b)"
    assert (
        render_communications_entry(parens)
        == "- [W](https://w.example/A_\\(b\\)): Wiki contact for people."
    )
    odd = CommunicationsEntry("W", "<odd\\(", "Web", AddressType.CONTACT, Audience.PEOPLE)
    assert parse_communications_entry(render_communications_entry(odd)) == odd


@pytest.mark.requirement("LLMS-TYPE-1")
@pytest.mark.parametrize(
    ("address_type", "url", "kind"),
    [
        ("updates", NEWS, LinkKind.CHANNEL),
        ("group", CUSTOMERS, LinkKind.GROUP),
        ("contact", ASK, LinkKind.CONTACT),
        ("business contact", ASK, LinkKind.CONTACT),
    ],
)
def test_each_type_needs_its_link_kind(address_type: str, url: str, kind: LinkKind) -> None:
    entry = parse_communications_entry(f"- [A]({url}): SimpleX {address_type} for people.")
    link = validate_entry(entry)
    assert link is not None
    assert link.kind is kind is REQUIRED_LINK_KIND[entry.type]


@pytest.mark.requirement("LLMS-TYPE-1")
@pytest.mark.parametrize(
    ("address_type", "url"),
    [
        ("updates", ASK),
        ("updates", CUSTOMERS),
        ("group", NEWS),
        ("contact", NEWS),
        ("contact", INVITATION),
        ("business contact", CUSTOMERS),
    ],
)
def test_a_link_of_another_kind_is_a_type_mismatch(address_type: str, url: str) -> None:
    line = f"- [A]({url}): SimpleX {address_type} for people."
    with pytest.raises(LLMsTxtError) as info:
        parse_communications_entry(line, line=7)
    assert (info.value.code, info.value.requirement, info.value.line) == (
        "link_type_mismatch",
        "LLMS-TYPE-1",
        7,
    )
    unchecked = parse_communications_entry(line, validate=False)
    with pytest.raises(LLMsTxtError) as info:
        validate_entry(unchecked)
    assert info.value.code == "link_type_mismatch"


@pytest.mark.requirement("LLMS-TYPE-1")
def test_a_simplex_entry_needs_a_simplex_link() -> None:
    entry = CommunicationsEntry("A", "https://acme.example/", "SimpleX", "contact", "people")  # type: ignore[arg-type]
    with pytest.raises(LLMsTxtError) as info:
        validate_entry(entry)
    assert info.value.code == "not_a_simplex_link"


@pytest.mark.requirement("LLMS-NOTES-2")
def test_another_network_with_a_simplex_link_is_a_mismatch() -> None:
    with pytest.raises(LLMsTxtError) as info:
        parse_communications_entry(f"- [A]({ASK}): Matrix contact for people.")
    assert info.value.code == "network_mismatch"


@pytest.mark.parametrize(
    ("line", "code", "requirement"),
    [
        ("- [A](b)", "missing_colon", "LLMS-ITEM-1"),
        ("- [A](b) notes", "missing_colon", "LLMS-ITEM-1"),
        ("- [A](b): ", "missing_notes", "LLMS-ITEM-1"),
        ("- text", "not_a_link", "LLMS-ITEM-1"),
        ("- [A](b", "bad_url", "LLMS-ITEM-1"),
        ("- [A]( b): Web contact for people.", "bad_url", "LLMS-ITEM-1"),
        ("- [A](<b): Web contact for people.", "bad_url", "LLMS-ITEM-1"),
        ("- [A](< b>): Web contact for people.", "bad_url", "LLMS-ITEM-1"),
        ("- [A[x](b): Web contact for people.", "not_a_link", "LLMS-ITEM-1"),
        ("[A](b): Web contact for people.", "not_a_list_item", "LLMS-ITEM-1"),
        ("    - [A](b): Web contact for people.", "not_a_list_item", "LLMS-ITEM-1"),
        ("- [](b): Web contact for people.", "bad_title", "LLMS-TITLE-1"),
        ("- [A\ufeff](b): Web contact for people.", "invisible_character", "LLMS-TITLE-1"),
        ("- [A](b): contact for people.", "missing_network", "LLMS-NOTES-1"),
        ("- [A](b): Web chat.", "bad_notes", "LLMS-NOTES-1"),
        ("- [A](b): Web contact for robots.", "bad_audience", "LLMS-NOTES-3"),
        ("- [A](b): Web contact for ｐｅｏｐｌｅ.", "bad_audience", "LLMS-NOTES-3"),
        ("- [A](b): Web updates for people, often.", "bad_frequency", "LLMS-NOTES-4"),
        ("- [A](b): Web updates for people, \u212aeekly.", "bad_frequency", "LLMS-NOTES-4"),
        ("- [A](b): Web updates for people, daily, daily.", "unexpected_parameter", "LLMS-NOTES-1"),
        ("- [A](b): Web group for people, mcp.", "unexpected_parameter", "LLMS-NOTES-1"),
        ("- [A](b): Web contact for people, .", "empty_protocol", "LLMS-NOTES-5"),
        ("- [A](b): Web contact for people, m c p.", "bad_protocol", "LLMS-NOTES-5"),
        ("- [A](b): Web contact for people, mcp, MCP.", "duplicate_protocol", "LLMS-NOTES-5"),
        ("- [A](b): SimpIeX contact for people.", "confusable_network", "LLMS-NOTES-2"),
        ("- [A](b): 5impl3x contact for people.", "confusable_network", "LLMS-NOTES-2"),
        ("- [A](b): Web\u200b contact for people.", "invisible_character", "LLMS-NOTES-2"),
        ("- [A](b): Web contact for people.\x00", "control_character", "LLMS-ITEM-1"),
        ("- [A](b): Web contact for people.\n", "control_character", "LLMS-ITEM-1"),
        ("- [A](b): Web contact for people.\x85", "control_character", "LLMS-ITEM-1"),
        ("- [\u2067A\u2069](b): Web contact for people.", "bidi_control", "LLMS-ITEM-1"),
        (
            "- [A](b): Web contact for people. " + "x" * MAX_ENTRY_LINE_CHARS,
            "line_too_long",
            "LLMS-ITEM-1",
        ),
    ],
)
def test_bad_entries_raise_with_code_and_requirement(
    line: str, code: str, requirement: str
) -> None:
    with pytest.raises(LLMsTxtError) as info:
        parse_communications_entry(line, line=3)
    assert (info.value.code, info.value.requirement, info.value.line) == (code, requirement, 3)
    assert info.value.input_excerpt is not None


def test_error_position_points_into_the_line() -> None:
    line = f"- [A]({ASK}): SimpleX contact for agents, m/c."
    with pytest.raises(LLMsTxtError) as info:
        parse_communications_entry(line)
    assert isinstance(info.value.position, int)
    assert line[info.value.position :].startswith(", m/c")


def test_non_text_entry_is_refused() -> None:
    with pytest.raises(LLMsTxtError) as info:
        parse_communications_entry(None)  # type: ignore[arg-type]
    assert info.value.code == "not_text"


def test_entries_accept_plain_strings_and_lists() -> None:
    entry = CommunicationsEntry(
        title="A",
        url=ASK,
        network="simplex",
        type="contact",  # type: ignore[arg-type]
        audience="agents",  # type: ignore[arg-type]
        protocols=["mcp"],  # type: ignore[arg-type]
    )
    assert entry.network == "SimpleX"
    assert entry.type is AddressType.CONTACT
    assert entry.protocols == ("mcp",)
    with pytest.raises(ValueError, match="newsletter"):
        CommunicationsEntry("A", ASK, "SimpleX", "newsletter", "agents")  # type: ignore[arg-type]


def test_line_is_not_compared() -> None:
    a = CommunicationsEntry("A", ASK, "SimpleX", AddressType.CONTACT, Audience.AGENTS, line=1)
    b = CommunicationsEntry("A", ASK, "SimpleX", AddressType.CONTACT, Audience.AGENTS, line=9)
    assert a == b


@pytest.mark.parametrize(
    ("entry", "code"),
    [
        (
            CommunicationsEntry(
                "A", ASK, "SimpleX", AddressType.CONTACT, Audience.AGENTS, info=" x"
            ),
            "not_representable",
        ),
        (CommunicationsEntry("A ", ASK, "SimpleX", AddressType.CONTACT, Audience.AGENTS), None),
        (
            CommunicationsEntry(
                "A", ASK, "SimpleX", AddressType.CONTACT, Audience.AGENTS, ChangeFrequency.DAILY
            ),
            "not_representable",
        ),
        (
            CommunicationsEntry(
                "A", ASK, "SimpleX", AddressType.CONTACT, Audience.AGENTS, protocols=("a,b",)
            ),
            "bad_protocol",
        ),
        (
            CommunicationsEntry(
                "A", ASK, "SimpleX", AddressType.CONTACT, Audience.AGENTS, info="x\ny"
            ),
            "control_character",
        ),
        (
            CommunicationsEntry(
                "A", ASK, "Foo updates for x", AddressType.CONTACT, Audience.AGENTS
            ),
            "bad_audience",
        ),
        (
            CommunicationsEntry("A", NEWS, "SimpleX", AddressType.CONTACT, Audience.AGENTS),
            "link_type_mismatch",
        ),
    ],
)
def test_render_refuses_what_would_not_read_back(
    entry: CommunicationsEntry, code: str | None
) -> None:
    if code is None:
        assert parse_communications_entry(render_communications_entry(entry)) == entry
        return
    with pytest.raises(LLMsTxtError) as info:
        render_communications_entry(entry)
    assert info.value.code == code


def test_render_without_validation_writes_a_mismatched_entry() -> None:
    entry = CommunicationsEntry("A", NEWS, "SimpleX", AddressType.CONTACT, Audience.AGENTS)
    assert (
        render_communications_entry(entry, validate=False)
        == f"- [A]({NEWS}): SimpleX contact for agents."
    )
