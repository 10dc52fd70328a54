"""SimpleX links: every form the core writes, their kinds, and the typed errors."""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import quote

import pytest

from simplex_protocols.errors import LinkError, ParseError
from simplex_protocols.links import (
    LinkForm,
    LinkKind,
    LinkScheme,
    SimplexLink,
    format_short_link,
    is_simplex_link,
    parse_simplex_link,
)


def _key(label: str, size: int = 32) -> str:
    digest = hashlib.sha256(label.encode()).digest()[:size]
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


KEY = _key("test key")
LINK_ID = _key("test link id", 24)
ONION = "jjbyvoemxysm7qxap7m5d5m35jzv5qq6gnlv7s4rsn7tdwwmuqciwpid.onion"
QUEUE = (
    "smp://1234-w==@smp.simplex.im:5223/3456-w==#/?v=1-4&dh="
    + quote("MCowBQYDK2VuAyEAjiswwI3O/NlS8Fk3HJUW870EY2bAwmttMBsvRB9eV3o=", safe="")
    + "&q=c"
)


@pytest.mark.requirement("LLMS-TYPE-1")
@pytest.mark.parametrize(
    ("letter", "kind"),
    [
        ("a", LinkKind.CONTACT),
        ("c", LinkKind.CHANNEL),
        ("g", LinkKind.GROUP),
        ("r", LinkKind.RELAY),
    ],
)
def test_short_link_type_letter_gives_the_kind(letter: str, kind: LinkKind) -> None:
    text = f"https://smp12.simplex.im/{letter}#{KEY}"
    assert parse_simplex_link(text) == SimplexLink(
        kind=kind,
        form=LinkForm.SHORT,
        scheme=LinkScheme.HTTPS,
        host="smp12.simplex.im",
        hosts=("smp12.simplex.im",),
        port=None,
        text=text,
    )


def test_invitation_short_link_has_link_id_and_key() -> None:
    link = parse_simplex_link(f"https://smp12.simplex.im/i#{LINK_ID}/{KEY}")
    assert link.kind is LinkKind.INVITATION
    assert link.form is LinkForm.SHORT


def test_short_link_router_hosts_port_and_key_hash_come_from_the_query() -> None:
    link = parse_simplex_link(f"https://smp.simplex.im/a#{KEY}?h={ONION}&p=5223&c=1234-w")
    assert link.hosts == ("smp.simplex.im", ONION)
    assert link.host == "smp.simplex.im"
    assert link.port == "5223"


def test_app_scheme_short_link_names_every_host_in_h() -> None:
    link = parse_simplex_link(f"simplex:/g#{KEY}?h=smp.simplex.im%2C{ONION}&p=5223")
    assert link.scheme is LinkScheme.SIMPLEX
    assert link.is_app_link
    assert link.kind is LinkKind.GROUP
    assert link.hosts == ("smp.simplex.im", ONION)
    assert link.app_host is None


def test_port_in_the_authority_is_the_router_port() -> None:
    assert parse_simplex_link(f"https://smp1.example.com:443/a#{KEY}").port == "443"


def test_link_str_is_the_original_text() -> None:
    text = f"https://smp12.simplex.im/c#{KEY}"
    assert str(parse_simplex_link(text)) == text


@pytest.mark.requirement("LLMS-TYPE-1")
def test_full_contact_link_host_is_the_router_not_the_website() -> None:
    link = parse_simplex_link("https://simplex.chat/contact#/?v=2-7&smp=" + quote(QUEUE, safe=""))
    assert (link.kind, link.form, link.scheme) == (
        LinkKind.CONTACT,
        LinkForm.FULL,
        LinkScheme.HTTPS,
    )
    assert link.host == "smp.simplex.im"
    assert link.port == "5223"
    assert link.app_host == "simplex.chat"


@pytest.mark.requirement("LLMS-TYPE-1")
def test_full_contact_link_with_group_data_is_a_group_link() -> None:
    data = quote('{"type":"group","groupLinkId":"abc"}', safe="")
    text = f"simplex:/contact#/?v=2-7&smp={quote(QUEUE, safe='')}&data={data}"
    assert parse_simplex_link(text).kind is LinkKind.GROUP


@pytest.mark.parametrize(
    "data", ['{"type":"group_link"}', "[1,2]", "{bad", '{"type":"group","type":"x"}']
)
def test_full_contact_link_with_other_data_stays_a_contact_link(data: str) -> None:
    text = f"simplex:/contact#/?v=2-7&smp={quote(QUEUE, safe='')}&data={quote(data, safe='')}"
    assert parse_simplex_link(text).kind is LinkKind.CONTACT


def test_full_invitation_link_needs_e2e() -> None:
    base = f"https://simplex.chat/invitation#/?v=2-7&smp={quote(QUEUE, safe='')}"
    assert parse_simplex_link(base + "&e2e=v%3D1").kind is LinkKind.INVITATION
    with pytest.raises(LinkError) as info:
        parse_simplex_link(base)
    assert info.value.code == "bad_full_link"


def test_full_link_with_two_queues_reads_the_first_router() -> None:
    second = "smp://abcd@smp2.example.com/xyz#/?v=1"
    text = f"simplex:/contact#/?v=2-7&smp={quote(QUEUE + ';' + second, safe='')}"
    assert parse_simplex_link(text).host == "smp.simplex.im"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "empty"),
        (f"http://smp12.simplex.im/a#{KEY}", "not_simplex_link"),
        ("mailto:x@example.com", "not_simplex_link"),
        (f"https://smp12.simplex.im/x#{KEY}", "bad_link_type"),
        (f"https://smp12.simplex.im/ax#{KEY}", "bad_link_type"),
        ("https://smp12.simplex.im", "bad_link_type"),
        ("https://smp12.simplex.im/a", "bad_link_type"),
        (f"https://smp12.simplex.im/a#{KEY[:-1]}", "bad_link_key"),
        (f"https://smp12.simplex.im/a#{KEY}==", "bad_link_key"),
        (f"https://smp12.simplex.im/i#{KEY}", "bad_link_key"),
        (f"https://smp12.simplex.im/a#{LINK_ID}/{KEY}", "bad_link_key"),
        (f"https://bad_host/a#{KEY}", "bad_host"),
        (f"https://-bad.example/a#{KEY}", "bad_host"),
        (f"https://smp12.simplex.im:0/a#{KEY}", "bad_port"),
        (f"https://smp12.simplex.im:/a#{KEY}", "bad_port"),
        (f"https://smp12.simplex.im/a#{KEY}?p=abc", "bad_port"),
        (f"https://smp12.simplex.im/a#{KEY}?h", "bad_query"),
        (f"https://smp12.simplex.im/a#{KEY}?h=a.example&h=b.example", "bad_query"),
        (f"https://smp12.simplex.im/a#{KEY}?c=not+b64", "bad_query"),
        (f"https://smp12.simplex.im/a#{KEY}?h=%0a", "bad_query"),
        (f"simplex:/a#{KEY}", "missing_host"),
        (f"simplex:/a#{KEY}?p=5223", "missing_host"),
        ("simplex:/name#agents.simplex", "simplex_name"),
        (f" https://smp12.simplex.im/a#{KEY}", "bad_character"),
        (f"https://smp12.simplex.im/a#{KEY}\u200d", "bad_character"),
        (f"https://smp12.simplex.im/a#{KEY}\u2066", "bad_character"),
        ("https://simplex.chat/contact#/?v=2-7", "bad_full_link"),
        ("https://simplex.chat/contact#?v=2", "bad_full_link"),
        ("https://simplex.chat/contact#/?v=2&smp=smp%3A%2F%2Fnohash", "bad_smp_queue"),
        ("https://simplex.chat/contact#/?v=2&smp=smp%3A%2F%2Fk%40h.example", "bad_smp_queue"),
        ("https://simplex.chat/contact#/?v=2&smp=smp%3A%2F%2Fk%40bad_host%2Fs%23x", "bad_host"),
        ("https://simplex.chat/contact#/?v=2&smp=%C3%28", "bad_query"),
        ("x" * 20_000, "too_long"),
    ],
)
def test_bad_links_raise_link_error_with_a_stable_code(text: str, code: str) -> None:
    with pytest.raises(LinkError) as info:
        parse_simplex_link(text)
    assert info.value.code == code


def test_link_error_is_a_parse_error_and_a_value_error() -> None:
    with pytest.raises(LinkError) as info:
        parse_simplex_link("nope")
    assert isinstance(info.value, ParseError)
    assert isinstance(info.value, ValueError)
    assert info.value.input_excerpt == "nope"


def test_non_text_is_refused_with_not_text() -> None:
    with pytest.raises(LinkError) as info:
        parse_simplex_link(b"https://x/a#y")  # type: ignore[arg-type]
    assert info.value.code == "not_text"


def test_is_simplex_link() -> None:
    assert is_simplex_link(f"https://smp12.simplex.im/a#{KEY}")
    assert not is_simplex_link("https://acme.example/")
    assert not is_simplex_link(None)
    assert not is_simplex_link("@directory.simplex")


@pytest.mark.parametrize("kind", list(LinkKind))
@pytest.mark.parametrize("scheme", list(LinkScheme))
def test_format_short_link_reads_back(kind: LinkKind, scheme: LinkScheme) -> None:
    link_id = bytes(range(24)) if kind is LinkKind.INVITATION else None
    text = format_short_link(
        kind,
        ["smp.example.com", ONION],
        bytes(range(32)),
        scheme=scheme,
        port=5223,
        key_hash=b"\x01\x02\x03",
        link_id=link_id,
    )
    link = parse_simplex_link(text)
    assert (link.kind, link.scheme, link.hosts, link.port) == (
        kind,
        scheme,
        ("smp.example.com", ONION),
        "5223",
    )


def test_format_short_link_for_a_preset_router_is_short() -> None:
    text = format_short_link(LinkKind.CHANNEL, "smp12.simplex.im", bytes(32))
    assert text == "https://smp12.simplex.im/c#" + "A" * 43


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"kind": LinkKind.CONTACT, "hosts": "h.example", "link_key": bytes(31)}, "bad_link_key"),
        (
            {"kind": LinkKind.INVITATION, "hosts": "h.example", "link_key": bytes(32)},
            "bad_link_key",
        ),
        (
            {
                "kind": LinkKind.CONTACT,
                "hosts": "h.example",
                "link_key": bytes(32),
                "link_id": bytes(24),
            },
            "bad_link_key",
        ),
        ({"kind": LinkKind.CONTACT, "hosts": [], "link_key": bytes(32)}, "missing_host"),
        ({"kind": LinkKind.CONTACT, "hosts": "bad host", "link_key": bytes(32)}, "bad_host"),
        (
            {"kind": LinkKind.CONTACT, "hosts": "h.example", "link_key": bytes(32), "port": 70000},
            "bad_port",
        ),
    ],
)
def test_format_short_link_refuses_bad_parts(kwargs: dict[str, object], code: str) -> None:
    with pytest.raises(LinkError) as info:
        format_short_link(**kwargs)  # type: ignore[arg-type]
    assert info.value.code == code
