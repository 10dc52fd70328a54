"""Whole llms.txt files: finding the section, messy input, strict mode, sections written back."""

from __future__ import annotations

import pytest

from simplex_protocols.errors import LLMsTxtError
from simplex_protocols.llmstxt import (
    AddressType,
    Audience,
    ChangeFrequency,
    CommunicationsEntry,
    CommunicationsSection,
    LLMsTxtDocument,
    parse_llms_txt,
    render_communications_section,
)

KEY = "Q" * 42 + "A"
NEWS = f"https://smp12.simplex.im/c#{KEY}"
CUSTOMERS = f"https://smp12.simplex.im/g#{KEY}"
ASK = f"https://smp12.simplex.im/a#{KEY}"

SPEC_SECTION = f"""## Communications

- [Acme news]({NEWS}): SimpleX updates for people and agents, weekly. Product news and offers.
- [Acme customers]({CUSTOMERS}): SimpleX group for people. Questions and tips from customers.
- [Ask Acme]({ASK}): SimpleX business contact for agents, MCP, A2A. Orders and availability.
- [Acme support](mailto:support@acme.example): Email contact for people.
"""

SPEC_ENTRIES = (
    CommunicationsEntry(
        "Acme news",
        NEWS,
        "SimpleX",
        AddressType.UPDATES,
        Audience.PEOPLE_AND_AGENTS,
        ChangeFrequency.WEEKLY,
        info="Product news and offers.",
    ),
    CommunicationsEntry(
        "Acme customers",
        CUSTOMERS,
        "SimpleX",
        AddressType.GROUP,
        Audience.PEOPLE,
        info="Questions and tips from customers.",
    ),
    CommunicationsEntry(
        "Ask Acme",
        ASK,
        "SimpleX",
        AddressType.BUSINESS_CONTACT,
        Audience.AGENTS,
        protocols=("MCP", "A2A"),
        info="Orders and availability.",
    ),
    CommunicationsEntry(
        "Acme support", "mailto:support@acme.example", "Email", AddressType.CONTACT, Audience.PEOPLE
    ),
)


@pytest.mark.requirement("LLMS-SEC-1", "LLMS-ITEM-1", "LLMS-OTHER-1")
def test_spec_example_in_a_whole_file() -> None:
    text = (
        "# Acme\n\n> Anvils.\n\n## Docs\n\n- [API](https://a.example/api.md): API\n\n"
        + SPEC_SECTION
    )
    document = parse_llms_txt(text)
    assert document == LLMsTxtDocument(
        title="Acme",
        summary="Anvils.",
        communications=CommunicationsSection(SPEC_ENTRIES, (), 9),
    )
    assert document.problems == ()
    assert [e.line for e in document.entries] == [11, 12, 13, 14]
    assert document.communications is not None
    assert len(document.communications.simplex_entries) == 3


@pytest.mark.requirement("LLMS-SEC-1")
def test_render_section_reads_back() -> None:
    text = render_communications_section(SPEC_ENTRIES)
    assert text == SPEC_SECTION
    assert parse_llms_txt(text).entries == SPEC_ENTRIES


def test_a_file_without_the_section() -> None:
    document = parse_llms_txt("# Acme\n\n## Docs\n- [x](y): z\n")
    assert document.communications is None
    assert document.entries == ()
    assert document.problems == ()


@pytest.mark.requirement("LLMS-SEC-1")
@pytest.mark.parametrize(
    "heading",
    ["## Communications", "## Communications ##", "  ## communications", "Communications\n---"],
)
def test_heading_forms(heading: str) -> None:
    document = parse_llms_txt(f"{heading}\n- [A]({ASK}): SimpleX contact for agents.\n")
    assert len(document.entries) == 1


@pytest.mark.parametrize(
    "heading",
    ["### Communications", "# Communications", "##Communications", "## Communications and more"],
)
def test_other_headings_are_not_the_section(heading: str) -> None:
    assert (
        parse_llms_txt(f"{heading}\n- [A]({ASK}): SimpleX contact for agents.\n").communications
        is None
    )


def test_section_ends_at_the_next_level_1_or_2_heading_not_at_level_3() -> None:
    text = (
        f"## Communications\n### Bots\n- [A]({ASK}): SimpleX contact for agents.\n"
        f"# Appendix\n- [B]({ASK}): SimpleX contact for agents.\n"
        f"Setext\n======\n- [C]({ASK}): SimpleX contact for agents.\n"
    )
    assert [e.title for e in parse_llms_txt(text).entries] == ["A"]


def test_two_sections_are_merged() -> None:
    text = f"## Communications\n- [A]({ASK}): SimpleX contact for agents.\n## X\n## Communications\n- [B]({NEWS}): SimpleX updates for people.\n"
    document = parse_llms_txt(text)
    assert [e.title for e in document.entries] == ["A", "B"]
    assert document.communications is not None
    assert document.communications.line == 1


def test_code_fences_hide_headings_and_items() -> None:
    text = (
        "```\n## Communications\n```\n"
        "## Communications\n"
        "````md\n- [Hidden]({ASK}): SimpleX contact for agents.\n```\nstill code\n````\n"
        f"- [Shown]({ASK}): SimpleX contact for agents.\n"
    )
    document = parse_llms_txt(text)
    assert [e.title for e in document.entries] == ["Shown"]
    assert document.communications is not None
    assert document.communications.line == 4


@pytest.mark.requirement("LLMS-ITEM-1", "LLMS-TYPE-1")
def test_messy_file_gives_valid_entries_and_one_problem_per_bad_item() -> None:
    text = "\r\n".join(
        [
            "\ufeff# Acme",
            "## Communications",
            "Our addresses:",
            f"- [Good]({ASK}): SimpleX contact for agents.",
            f"  - [Nested]({ASK}): SimpleX contact for agents.",
            "- no link here",
            f"- [Mismatch]({NEWS}): SimpleX contact for agents.",
            "",
            "* * *",
            f"+\t[Tabbed]({ASK}):\tSimpleX\tcontact for agents.",
            f"- [Bidi\u202e]({ASK}): SimpleX contact for agents.",
            "",
            f"      - [Code]({ASK}): SimpleX contact for agents.",
            "## Next",
        ]
    )
    document = parse_llms_txt(text)
    assert document.title == "Acme"
    assert [(e.title, e.line) for e in document.entries] == [("Good", 4), ("Tabbed", 10)]
    assert [(p.line, p.code) for p in document.problems] == [
        (5, "nested_item"),
        (6, "not_a_link"),
        (7, "link_type_mismatch"),
        (11, "bidi_control"),
        (13, "nested_item"),
    ]
    assert all(isinstance(p, LLMsTxtError) for p in document.problems)


def test_strict_mode_raises_the_first_problem_with_its_line() -> None:
    text = f"## Communications\n- [Good]({ASK}): SimpleX contact for agents.\n- [Bad](x): Web chat.\n- nope\n"
    with pytest.raises(LLMsTxtError) as info:
        parse_llms_txt(text, strict=True)
    assert (info.value.code, info.value.line) == ("bad_notes", 3)
    assert "line 3" in str(info.value)


def test_validate_false_skips_link_checks() -> None:
    text = f"## Communications\n- [Mismatch]({NEWS}): SimpleX contact for agents.\n"
    assert parse_llms_txt(text).problems[0].code == "link_type_mismatch"
    assert len(parse_llms_txt(text, validate=False).entries) == 1


def test_bytes_input_and_invalid_utf8() -> None:
    raw = b"## Communications\n- [A\xff](" + ASK.encode() + b"): SimpleX contact for agents.\n"
    assert parse_llms_txt(raw).entries[0].title == "A\ufffd"
    assert parse_llms_txt(bytearray(raw)).entries[0].title == "A\ufffd"


def test_non_text_document_is_refused() -> None:
    with pytest.raises(LLMsTxtError) as info:
        parse_llms_txt(12)  # type: ignore[arg-type]
    assert info.value.code == "not_text"


def test_indented_item_without_a_parent_is_a_problem() -> None:
    document = parse_llms_txt(f"## Communications\n\n\t- [A]({ASK}): SimpleX contact for agents.\n")
    assert [p.code for p in document.problems] == ["indented_item"]


def test_summary_is_the_first_blockquote_after_the_title() -> None:
    assert parse_llms_txt("# T\n\n> One.\n> Two.\n").summary == "One."
    assert parse_llms_txt("> Before title\n# T\n").summary is None
    assert parse_llms_txt("# T\n## S\n> Late\n").summary is None


def test_many_entries() -> None:
    entries = [
        CommunicationsEntry(
            f"Bot {i}", ASK, "SimpleX", AddressType.CONTACT, Audience.AGENTS, protocols=("mcp",)
        )
        for i in range(2000)
    ]
    document = parse_llms_txt("# Big\n\n" + render_communications_section(entries))
    assert document.entries == tuple(entries)
    assert document.entries[-1].line == 2004


@pytest.mark.requirement("LLMS-NOTES-8")
def test_an_entry_without_the_space_before_its_info_is_kept_and_reported() -> None:
    text = f"""# Acme

## Communications

- [Ask Acme]({ASK}): SimpleX contact for agents.Ask about orders.
- [Acme customers]({CUSTOMERS}): SimpleX group for people. Tips.
"""
    document = parse_llms_txt(text)
    section = document.communications
    assert section is not None
    assert [e.info for e in section.entries] == ["Ask about orders.", "Tips."]
    assert [(p.line, p.code) for p in section.problems] == [(5, "missing_space_before_info")]
    assert section.entries[0].problems == section.problems
    with pytest.raises(LLMsTxtError) as info:
        parse_llms_txt(text, strict=True)
    assert (info.value.line, info.value.code) == (5, "missing_space_before_info")
