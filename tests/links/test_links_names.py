"""SimpleX names: the forms the core accepts, its lowercasing and its limits."""

from __future__ import annotations

import pytest

from simplex_protocols.errors import LinkError
from simplex_protocols.links import (
    LinkKind,
    NameType,
    SimplexLink,
    SimplexName,
    SimplexTLD,
    format_simplex_name,
    is_simplex_name,
    parse_simplex_name,
    parse_simplex_target,
)

pytestmark = pytest.mark.requirement("RPC-CMD-1")


def test_contact_name() -> None:
    assert parse_simplex_name("@directory.simplex") == SimplexName(
        type=NameType.CONTACT,
        tld=SimplexTLD.SIMPLEX,
        domain="directory",
        subdomains=(),
        text="@directory.simplex",
    )


def test_public_group_name_without_tld_is_a_simplex_name() -> None:
    name = parse_simplex_name("#Ridgeline")
    assert name.type is NameType.PUBLIC_GROUP
    assert name.full_domain == "ridgeline.simplex"
    assert str(name) == "#ridgeline.simplex"


def test_testing_and_web_top_level_domains() -> None:
    assert parse_simplex_name("@acme.testing").tld is SimplexTLD.TESTING
    web = parse_simplex_name("#News.Acme.Example")
    assert (web.tld, web.domain, web.full_domain) == (
        SimplexTLD.WEB,
        "news.acme.example",
        "news.acme.example",
    )


def test_subdomains_are_stored_parent_first_like_the_core() -> None:
    name = parse_simplex_name("@a.b.acme.simplex")
    assert name.subdomains == ("b", "a")
    assert name.full_domain == "a.b.acme.simplex"
    assert name.to_core_json() == {
        "nameType": "contact",
        "nameDomain": {"nameTLD": "simplex", "domain": "acme", "subDomain": ["b", "a"]},
    }


def test_uri_form_of_a_name() -> None:
    assert parse_simplex_name("simplex:/name@directory.simplex").type is NameType.CONTACT
    assert parse_simplex_name("simplex:/name#agents.simplex").sigil == "#"


def test_format_simplex_name_is_canonical() -> None:
    assert format_simplex_name(parse_simplex_name("@Directory.SIMPLEX")) == "@directory.simplex"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "empty"),
        ("directory.simplex", "bad_name_prefix"),
        ("simplex:/name", "bad_name_prefix"),
        ("@", "bad_name"),
        ("@directory", "name_requires_tld"),
        ("@-x.simplex", "bad_name"),
        ("@x-.simplex", "bad_name"),
        ("@x--y.simplex", "bad_name"),
        ("@x..simplex", "bad_name"),
        ("@x_y.simplex", "bad_name"),
        ("@\u0430cme.simplex", "bad_name"),
        ("#" + "a" * 64, "name_label_too_long"),
        ("@" + ".".join(["abcdefghi"] * 26), "name_too_long"),
        ("@x.simplex\n", "bad_character"),
        ("@x.sim\u00adplex", "bad_character"),
    ],
)
def test_bad_names_raise_link_error(text: str, code: str) -> None:
    with pytest.raises(LinkError) as info:
        parse_simplex_name(text)
    assert info.value.code == code


def test_is_simplex_name() -> None:
    assert is_simplex_name("#agents.simplex")
    assert not is_simplex_name("agents")
    assert not is_simplex_name(3)


def test_parse_simplex_target_dispatches_on_the_form() -> None:
    assert isinstance(parse_simplex_target("@directory.simplex"), SimplexName)
    assert isinstance(parse_simplex_target("simplex:/name#agents.simplex"), SimplexName)
    link = parse_simplex_target("https://smp12.simplex.im/a#" + "A" * 43)
    assert isinstance(link, SimplexLink)
    assert link.kind is LinkKind.CONTACT
    with pytest.raises(LinkError) as info:
        parse_simplex_target("@nope")
    assert info.value.code == "name_requires_tld"
    with pytest.raises(LinkError) as info:
        parse_simplex_target("nope")
    assert info.value.code == "not_simplex_link"
