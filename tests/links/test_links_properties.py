"""Property tests: links and names built by the library read back; any text parses or fails
with the library's own error."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from simplex_protocols.errors import LinkError
from simplex_protocols.links import (
    LinkKind,
    LinkScheme,
    format_short_link,
    format_simplex_name,
    is_simplex_link,
    parse_simplex_link,
    parse_simplex_name,
    parse_simplex_target,
)

_label = st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}", fullmatch=True)
_host = st.lists(_label, min_size=2, max_size=4).map(".".join)


@given(
    kind=st.sampled_from(list(LinkKind)),
    scheme=st.sampled_from(list(LinkScheme)),
    hosts=st.lists(_host, min_size=1, max_size=3),
    key=st.binary(min_size=32, max_size=32),
    link_id=st.binary(min_size=24, max_size=24),
    port=st.none() | st.integers(min_value=1, max_value=65535),
    key_hash=st.none() | st.binary(min_size=1, max_size=32),
)
def test_built_short_links_read_back(
    kind: LinkKind,
    scheme: LinkScheme,
    hosts: list[str],
    key: bytes,
    link_id: bytes,
    port: int | None,
    key_hash: bytes | None,
) -> None:
    text = format_short_link(
        kind,
        hosts,
        key,
        scheme=scheme,
        port=port,
        key_hash=key_hash,
        link_id=link_id if kind is LinkKind.INVITATION else None,
    )
    link = parse_simplex_link(text)
    assert link.kind is kind
    assert link.scheme is scheme
    assert link.hosts == tuple(hosts)
    assert link.port == (str(port) if port is not None else None)
    assert link.text == text


@given(
    sigil=st.sampled_from("@#"),
    labels=st.lists(
        st.from_regex(r"[A-Za-z0-9]{1,10}(-[A-Za-z0-9]{1,10})?", fullmatch=True),
        min_size=1,
        max_size=4,
    ),
    tld=st.sampled_from(["simplex", "testing", "com", "SimpleX"]),
)
def test_names_read_back_after_formatting(sigil: str, labels: list[str], tld: str) -> None:
    name = parse_simplex_name(sigil + ".".join([*labels, tld]))
    again = parse_simplex_name(format_simplex_name(name))
    assert (again.type, again.tld, again.domain, again.subdomains) == (
        name.type,
        name.tld,
        name.domain,
        name.subdomains,
    )
    assert format_simplex_name(again) == format_simplex_name(name) == again.text


_LINKISH = st.text(
    alphabet=st.sampled_from(list("https:/simplex#?&=;,.%@acgirA09-_+ \x00\u200b\u202e\u0430")),
    max_size=120,
)


def _mutations(valid: str) -> st.SearchStrategy[str]:
    """A valid link with characters cut out, repeated or replaced."""
    return st.tuples(
        st.integers(0, len(valid)),
        st.integers(0, len(valid)),
        st.text(max_size=5),
    ).map(lambda t: valid[: min(t[0], t[1])] + t[2] + valid[max(t[0], t[1]) :])


_VALID = [
    "https://smp12.simplex.im/a#" + "B" * 42 + "A",
    "simplex:/i#" + "C" * 32 + "/" + "D" * 42 + "A?h=smp.simplex.im%2Cx.onion&p=5223&c=1234-w",
    "https://simplex.chat/contact#/?v=2-7&smp=smp%3A%2F%2F1234-w%3D%3D%40smp.simplex.im%3A5223%2F3456-w%3D%3D%23%2F%3Fv%3D1-4&data=%7B%22type%22%3A%22group%22%7D",
    "simplex:/name@directory.simplex",
]


@given(st.one_of(st.text(), _LINKISH, *[_mutations(v) for v in _VALID]))
def test_any_text_is_a_link_or_a_link_error(text: str) -> None:
    for parse in (parse_simplex_link, parse_simplex_name, parse_simplex_target):
        try:
            parse(text)
        except LinkError as exc:
            assert exc.code
    assert isinstance(is_simplex_link(text), bool)
