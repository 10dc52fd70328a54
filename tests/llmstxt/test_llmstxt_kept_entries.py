"""What a lenient reading keeps and reports: wrapped items, repeated protocols, broken keys.

Each of these once lost an entry or part of it without a word; a lenient reading now keeps the
entry and lists the slip, and a strict one refuses it.
"""

from __future__ import annotations

import pytest

from simplex_protocols.errors import LLMsTxtError
from simplex_protocols.llmstxt import (
    AddressType,
    Audience,
    CommunicationsEntry,
    parse_communications_entry,
    parse_llms_txt,
)

KEY = "Q" * 42 + "A"
ASK = f"https://smp12.simplex.im/a#{KEY}"
# 30 characters: the form of a short link, but not a 32-byte key.
BROKEN = "https://smp12.simplex.im/a#1GmEcoFCRQ2p8fNJqJGCnfwuROnyZ8"


def _codes(errors: tuple[LLMsTxtError, ...]) -> list[tuple[int | None, str]]:
    return [(e.line, e.code) for e in errors]


@pytest.mark.requirement("LLMS-NOTES-9", "LLMS-ITEM-1")
def test_llms_notes_9_continuation_line_is_kept_in_the_info() -> None:
    text = (
        "## Communications\n\n"
        f"- [Ask Acme]({ASK}): SimpleX contact for agents, MCP. Orders\n"
        "  and availability, in stock today.\n"
        "- [Acme support](mailto:support@acme.example): Email contact for people.\n"
    )
    doc = parse_llms_txt(text)
    assert doc.entries[0].info == "Orders and availability, in stock today."
    assert doc.entries[0].line == 3
    assert doc.entries[1].title == "Acme support"
    assert _codes(doc.entries[0].problems) == [(4, "continued_item")]
    assert _codes(doc.problems) == [(4, "continued_item")]
    with pytest.raises(LLMsTxtError) as caught:
        parse_llms_txt(text, strict=True)
    assert (caught.value.code, caught.value.line) == ("continued_item", 4)


@pytest.mark.requirement("LLMS-ITEM-1", "LLMS-NOTES-8")
def test_llms_item_1_wrapped_head_is_one_paragraph() -> None:
    # The line break is a space in Markdown, even inside the structured part.
    doc = parse_llms_txt(
        f"## Communications\n- [Ask Acme]({ASK}): SimpleX contact\n    for agents, A2A.\n"
    )
    assert doc.entries == (
        CommunicationsEntry(
            "Ask Acme", ASK, "SimpleX", AddressType.CONTACT, Audience.AGENTS, protocols=("A2A",)
        ),
    )


@pytest.mark.requirement("LLMS-NOTES-9")
def test_llms_notes_9_blank_line_and_nested_item_end_the_notes() -> None:
    text = (
        "## Communications\n"
        f"- [Ask Acme]({ASK}): SimpleX contact for agents. Orders.\n"
        "\n"
        "  A second paragraph of the item.\n"
        f"- [Ask Acme]({ASK}): SimpleX contact for people. Help.\n"
        f"  - [Nested]({ASK}): SimpleX contact for people.\n"
        "  Text of the nested item.\n"
    )
    doc = parse_llms_txt(text)
    assert [e.info for e in doc.entries] == ["Orders.", "Help."]
    assert _codes(doc.problems) == [(6, "nested_item")]


@pytest.mark.requirement("LLMS-ITEM-1")
def test_llms_item_1_continuation_line_is_checked_like_the_item() -> None:
    # The continuation is part of the notes: a bidi override in it is refused as on the line.
    doc = parse_llms_txt(
        f"## Communications\n- [Ask Acme]({ASK}): SimpleX contact for agents. Orders\n"
        "  and \u202eevil\u202c text.\n"
    )
    assert doc.entries == ()
    assert _codes(doc.problems) == [(2, "bidi_control")]


@pytest.mark.requirement("LLMS-NOTES-5")
def test_llms_notes_5_repeated_protocol_keeps_the_entry_once_per_name() -> None:
    item = f"- [Ask Acme]({ASK}): SimpleX contact for agents, MCP, a2a, mcp, A2A. Orders."
    entry = parse_communications_entry(item, line=7, strict=False)
    assert entry.protocols == ("MCP", "a2a")
    assert entry.protocol_names == ("mcp", "a2a")
    assert entry.info == "Orders."
    assert _codes(entry.problems) == [(7, "duplicate_protocol"), (7, "duplicate_protocol")]
    assert entry.problems[0].requirement == "LLMS-NOTES-5"
    with pytest.raises(LLMsTxtError) as caught:
        parse_communications_entry(item)
    assert caught.value.code == "duplicate_protocol"
    doc = parse_llms_txt(f"## Communications\n{item}\n")
    assert [e.protocols for e in doc.entries] == [("MCP", "a2a")]
    assert _codes(doc.problems) == [(2, "duplicate_protocol"), (2, "duplicate_protocol")]


@pytest.mark.requirement("LLMS-TYPE-1")
def test_llms_type_1_broken_link_key_keeps_the_entry_with_a_problem() -> None:
    item = f"- [Ask Acme]({BROKEN}): SimpleX contact for agents, MCP. Orders."
    entry = parse_communications_entry(item, strict=False)
    assert (entry.url, entry.protocols, entry.info) == (BROKEN, ("MCP",), "Orders.")
    [problem] = entry.problems
    assert (problem.code, problem.requirement) == ("bad_link_key", "LLMS-TYPE-1")
    assert problem.position == item.index("](") + 2
    with pytest.raises(LLMsTxtError) as caught:
        parse_communications_entry(item)
    assert caught.value.code == "bad_link_key"
    doc = parse_llms_txt(f"## Communications\n{item}\n")
    assert [e.url for e in doc.entries] == [BROKEN]
    assert _codes(doc.problems) == [(2, "bad_link_key")]


@pytest.mark.requirement("LLMS-TYPE-1")
def test_llms_type_1_other_link_faults_still_drop_the_entry() -> None:
    # Only the key is forgiven: a link of the wrong kind, or no SimpleX link, is still refused.
    for url, code in (
        (f"https://smp12.simplex.im/g#{KEY}", "link_type_mismatch"),
        ("https://acme.example/ask", "not_a_simplex_link"),
        (f"https://smp12.simplex.im/x#{KEY}", "not_a_simplex_link"),
    ):
        doc = parse_llms_txt(f"## Communications\n- [Ask]({url}): SimpleX contact for agents.\n")
        assert doc.entries == ()
        assert _codes(doc.problems) == [(2, code)]
