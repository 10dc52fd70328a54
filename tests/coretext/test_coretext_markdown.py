"""The core's Markdown parser (``formattedText``): ``coretext.Markdown``.

The cases follow the core's own tests (``tests/MarkdownTests.hs``), updated to the current
parser (``small``, SimpleX names, ``hyperLink``), plus the texts an approval card must keep
inert: commands, links and names written by a peer. The properties say when a command, a link,
a phone number and a code span form, and that the parser is total.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simplex_protocols.coretext import Markdown, has_links, mentioned_names
from simplex_protocols.links import parse_simplex_link, parse_simplex_name

JSON = dict[str, Any]

MD = Markdown(parse_link=parse_simplex_link, parse_name=parse_simplex_name)
parse_line = MD.parse_line
parse_markdown = MD.parse

INV = (
    "/invitation#/?v=1&smp=smp%3A%2F%2F1234-w%3D%3D%40smp.simplex.im%3A5223%2F3456-w%3D%3D%23%2F"
    "%3Fv%3D1-2%26dh%3DMCowBQYDK2VuAyEAjiswwI3O_NlS8Fk3HJUW870EY2bAwmttMBsvRB9eV3o%253D&e2e=v%3D2"
    "%26x3dh%3DMEIwBQYDK2VvAzkAmKuSYeQ_m0SixPDS8Wq8VBaTS1cW-Lp0n0h4Diu-kUpR-qXx4SDJ32YGEFoGFGSbGP"
    "ry5Ychr6U%3D%2CMEIwBQYDK2VvAzkAmKuSYeQ_m0SixPDS8Wq8VBaTS1cW-Lp0n0h4Diu-kUpR-qXx4SDJ32YGEFoGF"
    "GSbGPry5Ychr6U%3D"
)
CONTACT = (
    "/contact#/?v=2&smp=smp%3A%2F%2F1234-w%3D%3D%40smp.simplex.im%3A5223%2F3456-w%3D%3D%23%2F%3Fv"
    "%3D1-2%26dh%3DMCowBQYDK2VuAyEAjiswwI3O_NlS8Fk3HJUW870EY2bAwmttMBsvRB9eV3o%253D"
)
ADDRESS = "https://smp6.simplex.im/a#lrdvu2d8A1GumSmoKb2krQmtKhWXq-tyGpHuM7aMwsw"
ADDRESS_APP = "simplex:/a#lrdvu2d8A1GumSmoKb2krQmtKhWXq-tyGpHuM7aMwsw?h=smp6.simplex.im"


def line(text: str) -> list[tuple[Any, str]]:
    """One line's fragments as (format type, or the whole format when it has fields, text)."""
    out: list[tuple[Any, str]] = []
    for fmt, fragment in parse_line(text):
        if fmt is None:
            out.append((None, fragment))
        elif set(fmt) == {"type"}:
            out.append((fmt["type"], fragment))
        else:
            out.append((fmt, fragment))
    return out


def plain(text: str) -> list[tuple[Any, str]]:
    return [(None, text)]


def mention(name: str) -> JSON:
    return {"type": "mention", "memberName": name}


def command(cmd: str) -> JSON:
    return {"type": "command", "commandStr": cmd}


def name_info(kind: str, domain: str, tld: str = "simplex") -> JSON:
    return {
        "type": "simplexName",
        "nameInfo": {
            "nameType": kind,
            "nameDomain": {"nameTLD": tld, "domain": domain, "subDomain": []},
        },
    }


# ---------------------------------------------------------------------------- spans


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "this is *bold formatted* text",
            [(None, "this is "), ("bold", "bold formatted"), (None, " text")],
        ),
        ("*bold formatted* text", [("bold", "bold formatted"), (None, " text")]),
        ("   *bold* text", [(None, "   "), ("bold", "bold"), (None, " text")]),
        ("this is *bold*   ", [(None, "this is "), ("bold", "bold"), (None, "   ")]),
        ("this is _italic_", [(None, "this is "), ("italic", "italic")]),
        ("~struck~ out", [("strikeThrough", "struck"), (None, " out")]),
        ("run `ls -la` now", [(None, "run "), ("snippet", "ls -la"), (None, " now")]),
        (
            "this is *long _bold_ (not italic)* text",
            [(None, "this is "), ("bold", "long _bold_ (not italic)"), (None, " text")],
        ),
        (
            "snippet: `this is *bold text*`",
            [(None, "snippet: "), ("snippet", "this is *bold text*")],
        ),
        ("*this* is *unformatted text", [("bold", "this"), (None, " is *unformatted text")]),
        ("`a``b`", [("snippet", "ab")]),  # adjacent fragments of one format merge
    ],
)
def test_spans(text: str, expected: list[tuple[Any, str]]) -> None:
    assert line(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "this is * unformatted * text",
        "this is *unformatted * text",
        "this is * unformatted* text",
        "this is **unformatted** text",
        "this is*unformatted* text",
        "this is *unformatted text",
        # a code span with a space at an edge is not a snippet, and its content stays plain
        "` /approve 1 `",
        "`/approve 1 `",
        "` https://example.com`",
    ],
)
def test_spans_that_stay_plain(text: str) -> None:
    assert line(text) == plain(text)


def test_secret_and_names_after_hash() -> None:
    assert line("this is #black secret# text") == [
        (None, "this is "),
        ("secret", "black secret"),
        (None, " text"),
    ]
    assert line("##black_secret### text") == [("secret", "#black_secret##"), (None, " text")]
    for text in ("this is # unformatted # text", "this is ## unformatted ## text", "a#b# c"):
        assert line(text) == plain(text)
    # without a closing #, a word after # is a public group's SimpleX name
    assert line("join #news now") == [
        (None, "join "),
        (name_info("publicGroup", "news"), "#news"),
        (None, " now"),
    ]
    assert line("see #club.simplex.") == [
        (None, "see "),
        (name_info("publicGroup", "club"), "#club.simplex"),
        (None, "."),
    ]


def test_colors_and_small_text() -> None:
    red = {"type": "colored", "color": "red"}
    assert line("this is !1 red color! text") == [
        (None, "this is "),
        (red, "red color"),
        (None, " text"),
    ]
    assert line("!red also red!") == [(red, "also red")]
    assert line("!g green!") == [({"type": "colored", "color": "green"}, "green")]
    assert line("!- small print!") == [("small", "small print")]
    for text in ("this is !1 unformatted ! text", "this is !1  unformatted! text", "!x no!"):
        assert line(text) == plain(text)
    assert line("this is !1 long *red* (not bold)! text")[1] == (red, "long *red* (not bold)")


# ---------------------------------------------------------------------------- links


def test_web_links_and_domains() -> None:
    assert line("https://simplex.chat") == [("uri", "https://simplex.chat")]
    assert line("https://simplex.chat, hello") == [
        ("uri", "https://simplex.chat"),
        (None, ", hello"),
    ]
    assert line("SimpleX on GitHub: https://github.com/simplex-chat.") == [
        (None, "SimpleX on GitHub: "),
        ("uri", "https://github.com/simplex-chat"),
        (None, "."),
    ]
    assert line("https://en.m.wikipedia.org/wiki/Servo_(software)") == [
        ("uri", "https://en.m.wikipedia.org/wiki/Servo_(software)")
    ]
    assert line("example.com...") == [("uri", "example.com"), (None, "...")]
    assert line("www.example.com") == [("uri", "www.example.com")]
    assert line("x.com") == [("uri", "x.com")]
    for text in (
        "_https://simplex.chat",
        "this is https://",
        "example.c",
        "www.www.example.com",
        "www.example1.com",
        ".com",
        "example.academytoolong",
        "simplex:/example",
        "https://localhost/path",  # a host without a dot
        "ftp://example.com/file",
    ):
        assert line(text) == plain(text), text


def test_simplex_links() -> None:
    for text in ("https://simplex.chat" + INV, "simplex:" + INV):
        assert line(text) == [
            (
                {
                    "type": "simplexLink",
                    "linkType": "invitation",
                    "simplexUri": "simplex:" + INV,
                    "smpHosts": ["smp.simplex.im"],
                },
                text,
            )
        ]
    [(fmt, _)] = line("https://simplex.chat" + CONTACT)
    assert fmt["linkType"] == "contact" and fmt["simplexUri"] == "simplex:" + CONTACT
    assert line(ADDRESS) == [
        (
            {
                "type": "simplexLink",
                "linkType": "contact",
                "simplexUri": ADDRESS_APP,
                "smpHosts": ["smp6.simplex.im"],
            },
            ADDRESS,
        )
    ]
    # a short link with text after it: the whole word is not a link, so it is a web link
    assert line(ADDRESS + ".") == [("uri", ADDRESS), (None, ".")]


def test_hyperlinks() -> None:
    assert line("For details [click here](https://example.com)") == [
        (None, "For details "),
        (
            {"type": "hyperLink", "showText": "click here", "linkUri": "https://example.com"},
            "[click here](https://example.com)",
        ),
    ]
    assert line("[example.com/page](https://example.com/page)")[0][0]["type"] == "hyperLink"
    assert line(f"[Connect to me]({ADDRESS})") == [
        (
            {
                "type": "simplexLink",
                "showText": "Connect to me",
                "linkType": "contact",
                "simplexUri": ADDRESS_APP,
                "smpHosts": ["smp6.simplex.im"],
            },
            f"[Connect to me]({ADDRESS})",
        )
    ]
    for text in (
        "[https://example.com](https://another.com)",  # text that looks like another link
        "[example.com/page](https://another.com/page)",
        f"[Connect.to.me]({ADDRESS})",
        "[click here](example.com)",
        "[click here](https://example.com )",
        f"[full link](https://simplex.chat{CONTACT})",  # full SimpleX links have no link text
    ):
        assert not has_links(parse_markdown(text) or []), text


def test_email_and_phone() -> None:
    assert line("test chat.chat+123@simplex.chat.") == [
        (None, "test "),
        ("email", "chat.chat+123@simplex.chat"),
        (None, "."),
    ]
    assert line("this is chat@ simplex.chat") == [
        (None, "this is chat@ "),
        ("uri", "simplex.chat"),
    ]
    assert line("test +44 (0) 7777.777.777 https://simplex.chat test") == [
        (None, "test "),
        ("phone", "+44 (0) 7777.777.777"),
        (None, " "),
        ("uri", "https://simplex.chat"),
        (None, " test"),
    ]
    assert line("07777 777 777") == [("phone", "07777 777 777")]
    assert line("test 077777 test") == plain("test 077777 test")
    assert line("*test* 07777  777  777 test") == [
        ("bold", "test"),
        (None, " 07777  777  777 test"),
    ]


# ---------------------------------------------------------------------------- mentions, names


def test_mentions() -> None:
    assert line("@alice") == [(mention("alice"), "@alice")]
    assert line("hello @alice...") == [
        (None, "hello "),
        (mention("alice"), "@alice"),
        (None, "..."),
    ]
    assert line("hello @alice@example.com") == [
        (None, "hello "),
        (mention("alice@example.com"), "@alice@example.com"),
    ]
    assert line("hello @'alice jones'!") == [
        (None, "hello "),
        (mention("alice jones"), "@'alice jones'"),
        (None, "!"),
    ]
    assert line("hello @'a.j.'!") == [(None, "hello "), (mention("a.j."), "@'a.j.'"), (None, "!")]
    for text in ("hello @'alice jones!", "hello @ alice!"):
        assert line(text) == plain(text)
    assert line("hello @bob @") == [(None, "hello "), (mention("bob"), "@bob"), (None, " @")]
    # a name with a dot is a SimpleX name, not a mention
    assert line("ask @directory.simplex") == [
        (None, "ask "),
        (name_info("contact", "directory"), "@directory.simplex"),
    ]
    assert mentioned_names(parse_markdown("hi @bob and @'carol k', not @x.simplex")) == [
        "bob",
        "carol k",
    ]


def test_commands() -> None:
    assert line("send /help!") == [(None, "send "), (command("help"), "/help"), (None, "!")]
    assert line("send /'filter 1'.") == [
        (None, "send "),
        (command("filter 1"), "/'filter 1'"),
        (None, "."),
    ]
    assert line("/filter 1") == [(command("filter"), "/filter"), (None, " 1")]
    for text in ("send /'filter 1", "send / help!", "send /he?lp", "a/b"):
        assert line(text) == plain(text)
    assert line("`code`/run") == [("snippet", "code"), (command("run"), "/run")]


# ---------------------------------------------------------------------------- whole texts


def test_a_one_line_text_starting_with_a_slash_is_one_command() -> None:
    assert parse_markdown("/link 1") == [{"format": command("link 1"), "text": "/link 1"}]
    assert parse_markdown("  /approve 1 now") == [
        {"format": command("approve 1 now"), "text": "  /approve 1 now"}
    ]
    # any text after the slash, even one the line parser would not call a command
    assert parse_markdown("/he?lp @bob") == [
        {"format": command("he?lp @bob"), "text": "/he?lp @bob"}
    ]
    assert parse_markdown("/") is None
    assert parse_markdown("   /") is None
    # on a line of a longer text, only the keyword is a command
    assert parse_markdown("x\n/approve 1") == [
        {"text": "x\n"},
        {"format": command("approve"), "text": "/approve"},
        {"text": " 1"},
    ]
    assert parse_markdown("/approve 1\n") == [
        {"format": command("approve 1"), "text": "/approve 1"}
    ]


def test_lines_join_and_plain_texts_have_none() -> None:
    assert parse_markdown("http://simplex.chat\ntext 1\ntext 2\nhttp://app.simplex.chat") == [
        {"format": {"type": "uri"}, "text": "http://simplex.chat"},
        {"text": "\ntext 1\ntext 2\n"},
        {"format": {"type": "uri"}, "text": "http://app.simplex.chat"},
    ]
    for text in ("", "\n", "a", "not a\nmarkdown", "hello bob", "* not bold *"):
        assert parse_markdown(text) is None, text
    assert parse_markdown("\n*a*\n\n*b*") == [
        {"text": "\n"},
        {"format": {"type": "bold"}, "text": "a"},
        {"text": "\n\n"},
        {"format": {"type": "bold"}, "text": "b"},
    ]


def test_results_are_fresh_objects() -> None:
    first = parse_markdown("see @directory.simplex")
    assert first is not None
    first[1]["format"]["nameInfo"]["nameType"] = "changed"
    again = parse_markdown("see @directory.simplex")
    assert again is not None and again[1]["format"]["nameInfo"]["nameType"] == "contact"


def test_has_links() -> None:
    assert has_links(parse_markdown("see example.com"))
    assert has_links(parse_markdown("join #news"))
    assert not has_links(parse_markdown("*bold* and /cmd"))
    assert not has_links(None)


# ---------------------------------------------------------------------------- properties

MARKUP = [
    *"*_~`#!@/[]()+ '\n.,?-:",
    "1",
    "7777",
    "!1 ",
    "!- ",
    "bob",
    "x.com",
    "https://simplex.chat",
    ADDRESS,
    "simplex:" + INV,
    "@directory.simplex",
    "\u3000",
    "\xa0",
    "\u2028",
    "é",
]
texts = st.text() | st.lists(st.sampled_from(MARKUP), max_size=16).map("".join)

DELIMITERS = {"bold": "*", "italic": "_", "strikeThrough": "~", "snippet": "`", "secret": "#"}


def _source(fragment: JSON) -> str | None:
    kind = fragment.get("format", {}).get("type")
    if kind in ("colored", "small"):
        return None
    around = DELIMITERS.get(kind, "")
    return around + fragment["text"] + around


@given(texts)
def test_the_parser_is_total_and_keeps_every_character(text: str) -> None:
    parsed = parse_markdown(text)
    if parsed is None:
        return
    assert all(set(fragment) <= {"format", "text"} and fragment["text"] for fragment in parsed)
    # With the delimiters a span drops put back (the core's markdownText), the fragments give
    # the text back; T.lines drops the empty line after a final "\n". Colors lose their
    # spelling ("!red " and "!1 " are one format), so they are left out; so are texts with a
    # doubled delimiter, where two spans of one format may touch and merge (the core's
    # Semigroup makes "*a**b*" one bold "ab").
    sources = [_source(fragment) for fragment in parsed]
    touching = any(d + d in text for d in DELIMITERS.values())
    if None not in sources and not touching:
        assert "".join(str(source) for source in sources) == text.removesuffix("\n")
    assert any("format" in fragment for fragment in parsed)
    formats = [fragment.get("format") for fragment in parsed]
    assert all(a != b for a, b in itertools.pairwise(formats))


@given(st.text(alphabet=st.characters(blacklist_characters="\n")))
def test_a_one_line_text_is_one_command_exactly_when_it_starts_with_a_slash(line: str) -> None:
    stripped = line.lstrip(" ")
    whole = [{"format": command(stripped[1:]), "text": line}]
    assert (parse_markdown(line) == whole) == (stripped.startswith("/") and len(stripped) > 1)


@given(
    st.lists(st.text(alphabet="0123456789", min_size=1, max_size=6), min_size=1, max_size=6),
    st.lists(st.sampled_from([" ", "-", ".", ""]), min_size=5, max_size=5),
)
def test_digit_groups_form_one_phone_number_of_7_to_22_characters(
    groups: list[str], separators: list[str]
) -> None:
    text = groups[0] + "".join(
        sep + group for sep, group in zip(separators, groups[1:], strict=False)
    )
    assert (line(text) == [("phone", text)]) == (7 <= len(text) <= 22)


@given(st.text(alphabet=st.characters(blacklist_characters="`\n")))
def test_a_code_span_forms_exactly_when_its_content_has_no_edge_space(content: str) -> None:
    text = f"`{content}`"
    if content and content[0] != " " and content[-1] != " ":
        # nothing inside a snippet is parsed again: no command, link or mention in it
        assert line(text) == [("snippet", content)]
    else:
        assert line(text) == plain(text)


@given(st.from_regex(r"[A-Za-z0-9]{1,26}\.[A-Za-z0-9]{1,10}", fullmatch=True))
def test_a_word_with_one_dot_is_a_link_when_it_looks_like_a_domain(word: str) -> None:
    name, tld = word.split(".")
    domain = name.isalpha() and tld.isalpha() and 1 <= len(name) <= 24 and 2 <= len(tld) <= 8
    assert (line(word) == [("uri", word)]) == domain
