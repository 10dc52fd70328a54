"""Reading addresses out of llms.txt, simplex.json, link relations and Agent Cards (no I/O)."""

from __future__ import annotations

import json

import pytest
from discovery_fixtures import (
    CHANNEL,
    CLEAN_LLMS,
    CONTACT,
    CONTACT2,
    GROUP,
    HOME,
    MESSY_LLMS,
    WELL_KNOWN,
    agent_card,
)
from hypothesis import given
from hypothesis import strategies as st

from simplex_protocols.discovery import (
    A2A_BINDING_URI,
    AddressSource,
    WebsiteAddress,
    WebsiteDiscovery,
    merge_addresses,
    read_agent_card,
    read_link_relations,
    read_llms_txt,
    read_simplex_json,
)
from simplex_protocols.links import LinkKind


def test_clean_llms_txt_gives_every_simplex_entry_with_the_website_values() -> None:
    addresses, problems = read_llms_txt(CLEAN_LLMS)
    assert problems == []
    assert [(a.address, a.kind) for a in addresses] == [
        (CHANNEL, LinkKind.CHANNEL),
        (GROUP, LinkKind.GROUP),
        (CONTACT, LinkKind.CONTACT),
    ]
    news, customers, ask = addresses
    assert news.audience == ("human", "agent") and news.frequency == "weekly"
    assert news.business is None and news.title == "Acme news" and news.info == "Product news."
    assert customers.audience == ("human",)
    assert ask.protocols == ("mcp", "a2a") and ask.business is True and ask.for_agents
    assert ask.sources == (AddressSource.LLMS_TXT,)
    assert ask.entry is not None and ask.entry.line == 9


@pytest.mark.requirement("LLMS-OTHER-1", "LLMS-TYPE-1", "LLMS-NOTES-3")
def test_messy_llms_txt_keeps_valid_entries_and_reports_the_rest() -> None:
    addresses, problems = read_llms_txt(MESSY_LLMS)
    assert [a.address for a in addresses] == [CONTACT]
    [ask] = addresses
    assert ask.audience == ("human", "agent") and ask.protocols == ("mcp",)
    assert ask.business is False
    codes = [(p.code, p.line) for p in problems]
    assert ("not_a_simplex_link", 11) in codes
    assert ("link_type_mismatch", 12) in codes
    assert ("bad_audience", 13) in codes
    assert ("nested_item", 14) in codes
    assert all(p.source is AddressSource.LLMS_TXT for p in problems)


def test_llms_txt_without_a_communications_section_has_no_addresses() -> None:
    assert read_llms_txt("# Site\n\n## Docs\n- [a](https://x.example): y\n") == ([], [])


def test_simplex_json_reads_each_list_and_reports_bad_items() -> None:
    addresses, problems = read_simplex_json(WELL_KNOWN)
    assert [(a.address, a.kind) for a in addresses] == [
        (CHANNEL, LinkKind.CHANNEL),
        (GROUP, LinkKind.GROUP),
        (CONTACT, LinkKind.CONTACT),
        ("@acme.simplex", LinkKind.CONTACT),
    ]
    channel, _group, contact, name = addresses
    assert channel.frequency == "daily" and channel.title == "Acme news"
    assert contact.audience == ("agent", "human") and contact.protocols == ("mcp",)
    assert contact.business is True and contact.title == "Ask Acme (well-known)"
    assert name.sources == (AddressSource.WELL_KNOWN,) and name.audience is None
    assert [(p.code, p.position) for p in problems] == [
        ("kind_mismatch", "/contacts/2"),
        ("not_published", "/contacts/3"),
        ("bad_address", "/contacts/4"),
        ("bad_entry", "/contacts/5"),
        ("bad_entry", "/contacts/6"),
    ]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("not json", "not_json"),
        ('{"a": 1, "a": 2}', "not_json"),
        ("[]", "not_an_object"),
        ('{"contacts": "x"}', "bad_entry"),
    ],
)
def test_simplex_json_that_cannot_be_read_is_a_problem(text: str, code: str) -> None:
    addresses, problems = read_simplex_json(text)
    assert addresses == []
    assert [p.code for p in problems] == [code]


def test_a_channel_name_fits_the_groups_list() -> None:
    addresses, problems = read_simplex_json(json.dumps({"groups": ["#acme"]}))
    assert problems == []
    assert [(a.address, a.kind) for a in addresses] == [("#acme", LinkKind.GROUP)]


def test_link_relations_take_simplex_links_of_any_relation_but_resource_ones() -> None:
    header = f'<{CHANNEL}>; rel="simplex-channel"; title="a, b", <https://x.example/>; rel=next'
    addresses, problems = read_link_relations(HOME, [header])
    assert [(a.address, a.kind) for a in addresses] == [
        (CHANNEL, LinkKind.CHANNEL),
        (CONTACT, LinkKind.CONTACT),
        (CHANNEL, LinkKind.CHANNEL),
    ]
    assert [p.code for p in problems] == ["not_published"]
    merged = merge_addresses(addresses)
    assert [a.address for a in merged] == [CHANNEL, CONTACT]


def test_link_headers_alone_are_read() -> None:
    addresses, _ = read_link_relations(None, [f"<{CONTACT}>; rel=me"])
    assert [a.address for a in addresses] == [CONTACT]
    assert read_link_relations(None, ["garbage", "<x>", f"<{CONTACT}>"]) == ([], [])


@pytest.mark.requirement("A2A-ID-2", "A2A-CARD-1")
def test_agent_card_gives_the_simplex_interfaces() -> None:
    addresses, problems = read_agent_card(agent_card())
    assert problems == []
    [address] = addresses
    assert address.address == CONTACT and address.kind is LinkKind.CONTACT
    assert address.a2a_versions == ("1.0",) and address.protocols == ("a2a",)
    assert address.title == "Acme agent" and address.info == "Orders and quotes"
    assert address.for_agents and address.audience is None


def test_agent_card_with_a_non_contact_simplex_interface_is_a_problem() -> None:
    addresses, problems = read_agent_card(agent_card(url=CHANNEL))
    assert addresses == [] and [p.code for p in problems] == ["bad_card"]
    assert problems[0].position == "/supportedInterfaces/1"


def test_agent_card_of_a2a_0_3_lists_additional_interfaces_by_transport() -> None:
    card = {
        "name": "old",
        "url": "https://x.example",
        "additionalInterfaces": [{"url": CONTACT2, "transport": A2A_BINDING_URI}],
    }
    addresses, problems = read_agent_card(json.dumps(card))
    assert problems == [] and [a.address for a in addresses] == [CONTACT2]


def test_merging_joins_sources_and_keeps_the_first_values() -> None:
    llms, _ = read_llms_txt(CLEAN_LLMS)
    card, _ = read_agent_card(agent_card())
    well, _ = read_simplex_json(WELL_KNOWN)
    merged = merge_addresses([*llms, *well, *card])
    ask = next(a for a in merged if a.address == CONTACT)
    assert ask.sources == (
        AddressSource.LLMS_TXT,
        AddressSource.WELL_KNOWN,
        AddressSource.AGENT_CARD,
    )
    assert ask.title == "Ask Acme" and ask.audience == ("agent", "human")
    assert ask.protocols == ("mcp", "a2a") and ask.a2a_versions == ("1.0",)
    assert ask.entry is not None


def test_names_are_merged_in_canonical_form() -> None:
    merged = merge_addresses(
        [
            WebsiteAddress("@Acme.simplex", LinkKind.CONTACT, (AddressSource.WELL_KNOWN,)),
            WebsiteAddress("@acme.simplex", LinkKind.CONTACT, (AddressSource.LINK_RELATION,)),
        ]
    )
    assert len(merged) == 1 and merged[0].sources == (
        AddressSource.WELL_KNOWN,
        AddressSource.LINK_RELATION,
    )


def test_agent_contacts_puts_addresses_listing_the_protocol_first() -> None:
    people = WebsiteAddress(
        CONTACT2, LinkKind.CONTACT, (AddressSource.LLMS_TXT,), audience=("human",)
    )
    a2a = WebsiteAddress(
        CONTACT2 + "x", LinkKind.CONTACT, (AddressSource.AGENT_CARD,), protocols=("a2a",)
    )
    mcp = WebsiteAddress(
        CONTACT,
        LinkKind.CONTACT,
        (AddressSource.LLMS_TXT,),
        audience=("agent",),
        protocols=("mcp",),
    )
    channel = WebsiteAddress(
        CHANNEL, LinkKind.CHANNEL, (AddressSource.LLMS_TXT,), audience=("agent",)
    )
    site = WebsiteDiscovery("https://x.example/", addresses=(people, a2a, mcp, channel))
    assert site.agent_contacts() == (a2a, mcp)
    assert site.agent_contacts("MCP") == (mcp, a2a)
    assert site.agent_contacts("a2a") == (a2a, mcp)


def test_website_address_to_json_omits_what_the_website_does_not_say() -> None:
    assert WebsiteAddress(CONTACT, LinkKind.CONTACT, (AddressSource.LINK_RELATION,)).to_json() == {
        "address": CONTACT,
        "kind": "contact",
        "sources": ["link"],
    }
    llms, _ = read_llms_txt(CLEAN_LLMS)
    assert llms[2].to_json() == {
        "address": CONTACT,
        "kind": "contact",
        "sources": ["llms.txt"],
        "title": "Ask Acme",
        "info": "Orders and availability.",
        "audience": ["agent"],
        "protocols": ["mcp", "a2a"],
        "business": True,
    }


@given(st.text(max_size=400))
def test_readers_are_total_over_text(text: str) -> None:
    for reader in (read_llms_txt, read_simplex_json, read_agent_card):
        addresses, problems = reader(text)
        assert isinstance(addresses, list) and isinstance(problems, list)
    addresses, problems = read_link_relations(text, [text])
    assert isinstance(addresses, list) and isinstance(problems, list)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "contacts",
                        "channels",
                        "groups",
                        "link",
                        "title",
                        "serves",
                        "supportedInterfaces",
                        "url",
                        "protocolBinding",
                    ]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=12,
    )
)
def test_json_readers_are_total_over_json_values(value: object) -> None:
    text = json.dumps(value)
    for reader in (read_simplex_json, read_agent_card):
        addresses, problems = reader(text)
        assert all(isinstance(a, WebsiteAddress) for a in addresses)
        assert all(p.code for p in problems)
