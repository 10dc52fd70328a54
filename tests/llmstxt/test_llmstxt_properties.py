"""Property tests: parse(render(x)) == x for every valid entry and section; any text gives a
document (lenient) or the library's own error (strict, one entry)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simplex_protocols.errors import LLMsTxtError
from simplex_protocols.links import LinkKind, LinkScheme, format_short_link
from simplex_protocols.llmstxt import (
    REQUIRED_LINK_KIND,
    AddressType,
    Audience,
    ChangeFrequency,
    CommunicationsEntry,
    parse_communications_entry,
    parse_llms_txt,
    render_communications_entry,
    render_communications_section,
)

# Characters a title may not hold (the parser refuses them), and those no text field may hold.
_INVISIBLE = re.compile(r"[\u00ad\u115f\u1160\u180e\u200b\u2060-\u2064\u3164\ufeff\uffa0]")
_FREE_CHARS = st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp"))

_title = (
    st.text(_FREE_CHARS, min_size=1, max_size=40)
    .filter(lambda t: t.strip(" \t") != "")
    .filter(lambda t: _INVISIBLE.search(t) is None)
)
_info = st.text(_FREE_CHARS, max_size=80).map(lambda t: t.strip(" \t"))
_protocol = st.from_regex(r"[A-Za-z0-9-]{1,12}", fullmatch=True)
_TYPE_WORDS = {"updates", "group", "contact", "business", "for"}
_network_word = st.from_regex(r"[A-Z][a-z]{1,9}", fullmatch=True).filter(
    lambda w: w.lower() not in _TYPE_WORDS and w.lower() not in ("simplex", "simpiex", "slmplex")
)
_network = st.lists(_network_word, min_size=1, max_size=2).map(" ".join)
_other_url = st.text(
    st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp", "Zs")),
    min_size=1,
    max_size=40,
).filter(lambda u: not u.startswith(("https://", "simplex:/")))
_host = st.from_regex(r"smp[0-9]{1,2}\.[a-z]{3,8}\.(im|chat|example)", fullmatch=True)


@st.composite
def _entries(draw: st.DrawFn) -> CommunicationsEntry:
    address_type = draw(st.sampled_from(list(AddressType)))
    simplex = draw(st.booleans())
    if simplex:
        network = "SimpleX"
        kind: LinkKind = REQUIRED_LINK_KIND[address_type]
        url = format_short_link(
            kind,
            draw(st.lists(_host, min_size=1, max_size=2)),
            draw(st.binary(min_size=32, max_size=32)),
            scheme=draw(st.sampled_from(list(LinkScheme))),
        )
    else:
        network = draw(_network)
        url = draw(_other_url)
    frequency = (
        draw(st.none() | st.sampled_from(list(ChangeFrequency)))
        if address_type is AddressType.UPDATES
        else None
    )
    protocols: tuple[str, ...] = ()
    if address_type in (AddressType.CONTACT, AddressType.BUSINESS_CONTACT):
        protocols = tuple(draw(st.lists(_protocol, max_size=4, unique_by=str.lower)))
    return CommunicationsEntry(
        title=draw(_title),
        url=url,
        network=network,
        type=address_type,
        audience=draw(st.sampled_from(list(Audience))),
        frequency=frequency,
        protocols=protocols,
        info=draw(_info),
    )


@pytest.mark.requirement("LLMS-ITEM-1", "LLMS-NOTES-1", "LLMS-TITLE-1")
@given(_entries())
def test_parse_of_render_is_the_entry(entry: CommunicationsEntry) -> None:
    line = render_communications_entry(entry)
    assert parse_communications_entry(line) == entry
    assert render_communications_entry(parse_communications_entry(line)) == line


@pytest.mark.requirement("LLMS-SEC-1")
@given(st.lists(_entries(), max_size=6))
def test_parse_of_a_rendered_section_gives_the_entries(entries: list[CommunicationsEntry]) -> None:
    document = parse_llms_txt("# Site\n\n" + render_communications_section(entries))
    assert document.entries == tuple(entries)
    assert document.problems == ()


_FRAGMENTS = st.sampled_from(
    [
        "# Title",
        "## Communications",
        "## communications ##",
        "### Sub",
        "Communications",
        "---",
        "===",
        "```",
        "~~~~",
        "> quote",
        "",
        "   ",
        "\t- [x](y): Web contact for people.",
        "  - [n](https://smp1.example/a#" + "A" * 43 + "): SimpleX contact for agents.",
        "- [Acme](https://smp12.simplex.im/c#"
        + "B" * 42
        + "A): SimpleX updates for people, weekly. News.",
        "- [Ask](simplex:/a#"
        + "C" * 42
        + "A?h=smp.example): SimpleX business contact for agents, MCP. x",
        "- [a [b] \\] c](<u>): Matrix group for people.",
        "- [a](b) : Email contact for people",
        "- [bad](x): SimpIeX contact for people, mcp, MCP, .",
        "* [](): ",
        "+ [x](y",
        "- [x](y): z",
        "-",
        "* * *",
        "stray text",
    ]
)
_DOCUMENTS = st.lists(
    st.one_of(
        _FRAGMENTS,
        st.text(max_size=30),
        _FRAGMENTS.flatmap(lambda f: st.text(max_size=3).map(lambda t: f + t)),
    ),
    max_size=25,
).flatmap(lambda lines: st.sampled_from(["\n", "\r\n", "\r"]).map(lambda sep: sep.join(lines)))


@given(st.one_of(st.text(), _DOCUMENTS))
def test_any_text_gives_a_document_without_raising(text: str) -> None:
    document = parse_llms_txt(text)
    for problem in document.problems:
        assert isinstance(problem, LLMsTxtError)
        assert problem.code
        assert problem.line is not None
    for entry in document.entries:
        assert parse_communications_entry(render_communications_entry(entry)) == entry
    try:
        strict = parse_llms_txt(text, strict=True)
    except LLMsTxtError as exc:
        assert exc.line is not None
    else:
        assert strict.entries == document.entries


@given(st.binary(max_size=200))
def test_any_bytes_give_a_document(raw: bytes) -> None:
    assert isinstance(parse_llms_txt(raw).entries, tuple)


@given(
    st.one_of(
        st.text(),
        _FRAGMENTS,
        _FRAGMENTS.flatmap(lambda f: st.text(max_size=8).map(lambda t: f + t)),
    )
)
def test_any_line_is_an_entry_or_an_llms_txt_error(line: str) -> None:
    try:
        entry = parse_communications_entry(line)
    except LLMsTxtError as exc:
        assert exc.code
    else:
        assert parse_communications_entry(render_communications_entry(entry)) == entry
