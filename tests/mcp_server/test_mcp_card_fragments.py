"""No peer text forms a live fragment in the agent control chat (issue 13, items 3 and 4).

The owner's app shows a card through the core's Markdown, which makes phone numbers, addresses,
links, SimpleX links and names, mentions and commands tappable. The only live fragments of a
card, a /list or a /pending reply are the server's own (its commands, its chat references, the
mentions the agent asked for); whatever names and texts the peers chose, the same fragments
form. Each text here is read with :mod:`simplex_protocols.coretext`'s Markdown, which follows
the core's ``Simplex.Chat.Markdown``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from simplex_protocols.coretext import Markdown
from simplex_protocols.links import parse_simplex_link, parse_simplex_name
from simplex_protocols.mcp_server.cards import (
    Outcome,
    ReplyTo,
    Subject,
    connect_card,
    leave_card,
    send_card,
)
from simplex_protocols.mcp_server.control import ListEntry, list_reply, pending_lines
from simplex_protocols.mcp_server.text import fold, name_md

MD = Markdown(parse_link=parse_simplex_link, parse_name=parse_simplex_name)

WALL = 1_792_227_600.0  # 2026-10-17 09:00 UTC

PHONE_NAME = "+1 (555) 123-4567"

#: One of each fragment the core's Markdown can form, and text that breaks spans and lines.
HOSTILE_PIECES = [
    PHONE_NAME,
    "07777 777 777",
    "+44 (0) 7777.777.777",
    "2026-12-02 18:58",
    "alice@example.com",
    "a@b.co",
    "https://simplex.chat",
    "http://x.example/path?q=1",
    "example.com",
    "www.example.org",
    "simplex:/contact#/?v=2-7&smp=smp%3A%2F%2Fu2dS9sG8nMNURyZwqASV4yROM28Er0luVTx5X1CsMrU%3D%40smp4.simplex.im%2FKBCmxJ3-lEjpWLPPkI6OWPk-YJneU5uY%23%2Fwrong",
    "https://smp4.simplex.im/a#lrdvu2d8A1GumSmoKb2krQmtKhWXq-tyGpHuM7aMwsw",
    "[link](https://simplex.chat)",
    "@directory.simplex",
    "#ridgeline.simplex",
    "@alice",
    "@'Ann Lee'",
    "/approve 1",
    "/'approve 2'",
    "/reject @4 3",
    "*bold*",
    "_italic_",
    "~strike~",
    "`code`",
    "#secret#",
    "!1 red!",
    "!- small!",
    "(",
    ")",
    "`",
    " ",
    "\n",
    "\u202e",  # right-to-left override
    "\u2066",  # left-to-right isolate
    "\u200b",  # zero-width space
    "\u200d",  # zero-width joiner
    "\ufeff",
    "\u2028",
]

hostile = st.lists(
    st.one_of(
        st.sampled_from(HOSTILE_PIECES),
        st.text(alphabet=st.characters(codec="utf-8"), max_size=6),
    ),
    max_size=6,
).map("".join)
names = hostile.filter(lambda s: len(s) <= 120)

#: Cf characters that may appear in what the server writes: the joiner inside an emoji.
ZWJ = "\u200d"


def live(text: str) -> list[tuple[str, str]]:
    """The formatted fragments of ``text`` other than code spans, as (type, text)."""
    out = []
    for fragment in MD.parse(text) or []:
        fmt = fragment.get("format")
        if fmt is not None and fmt["type"] != "snippet":
            out.append((str(fmt["type"]), str(fragment["text"])))
    return out


def assert_same_live_fragments(shown: str, benign: str, mentions: Sequence[str] = ()) -> None:
    """``shown`` (with hostile peer strings) forms the live fragments of ``benign`` (with plain
    ones in their place), and its mentions are the agent's, of those names (a name that cannot
    be a mention is a code span, so there may be fewer)."""
    got = [f for f in live(shown) if f[0] != "mention"]
    want = [f for f in live(benign) if f[0] != "mention"]
    assert got == want, shown
    mentioned = mention_names(shown)
    # the server's own (a chat reference such as @4 reads as a mention) and the agent's
    allowed = (set(mention_names(benign)) - {"Bob"}) | {fold(m) for m in mentions}
    assert len(mentioned) <= len(mention_names(benign)), shown
    assert set(mentioned) <= allowed, shown


def mention_names(text: str) -> list[str]:
    return [
        str(fragment["format"]["memberName"])
        for fragment in MD.parse(text) or []
        if (fragment.get("format") or {}).get("type") == "mention"
    ]


def assert_clean(shown: str) -> None:
    """No control or format character but a newline and an emoji's joiner."""
    for ch in shown:
        if ch == "\n":
            continue
        assert unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp") or ch == ZWJ, repr(shown)


def card_texts(name: str, text: str, simplex_name: str) -> list[str]:
    """Every form of every card, a /list and a /pending reply with these peer strings."""
    subject = Subject("bot", name, simplex_name, "@4")
    group = Subject("group", name, None, "#9", incognito=True)
    cards = [
        connect_card(1, subject, incognito=False, description=text, welcome=text, message=text),
        send_card(
            2, group, "#9", text, reply_to=ReplyTo(name, text), mentions=[name, "Switchback"]
        ),
        send_card(3, subject, "@4", text, reply_to=ReplyTo(None, text)),
        leave_card(4, group, "#9"),
        leave_card(5, subject, "@4"),
    ]
    out = []
    for card in cards:
        out.append(card.pending())
        out.extend(card.outcome(outcome, by=name, error=text) for outcome in Outcome)
    out.append(
        list_reply(
            [
                ListEntry("@4", "bot", name, name, connected=False),
                ListEntry("#9", "group", name, None, connected=True),
            ]
        )
    )
    out.append(
        pending_lines(
            [
                (2, f"send to {group.phrase(with_simplex_name=False)}", WALL),
                (4, f"leave {group.phrase(with_simplex_name=False)} (#9)", WALL + 3600),
            ]
        )
    )
    out.append(pending_lines([(7, f"connect to {subject.phrase()}, as myself", WALL)]))
    return out


@settings(max_examples=150, deadline=None)
@given(name=names, text=hostile, simplex_name=hostile)
# Found in CI: a name that forms nothing alone, whose `*` pairs with its next occurrence.
@example(name="0 *", text="", simplex_name="")
def test_no_peer_name_or_text_forms_a_live_fragment_in_any_card_list_or_pending(
    name: str, text: str, simplex_name: str
) -> None:
    shown = card_texts(name, text, simplex_name)
    benign = card_texts("Bob", "hello", "@directory.simplex")
    assert len(shown) == len(benign)
    for one, other in zip(shown, benign, strict=True):
        assert_same_live_fragments(one, other, mentions=[name, "Switchback"])
        assert_clean(one)


def test_a_name_that_reads_as_a_phone_number_is_a_code_span() -> None:
    assert live(PHONE_NAME) == [("phone", PHONE_NAME)]
    assert name_md(PHONE_NAME) == f"`{PHONE_NAME}`"
    subject = Subject("contact", PHONE_NAME, None, "@4")
    card = send_card(2, subject, "@4", "hi")
    assert card.want == f"I want to send a message to contact `{PHONE_NAME}`:"
    assert not [f for f in live(card.pending()) if f[0] == "phone"]
    listed = list_reply([ListEntry("@4", "contact", PHONE_NAME, PHONE_NAME, connected=True)])
    assert listed == f"@4  contact `{PHONE_NAME}`, approved for this chat by `{PHONE_NAME}`"
    assert not [f for f in live(listed) if f[0] == "phone"]
    # an address and a domain as names, too
    assert name_md("a@b.co") == "`a@b.co`"
    assert name_md("bob.com") == "`bob.com`"
    assert name_md("Bob 2") == "Bob 2"


def test_pending_expiry_is_not_a_phone_number() -> None:
    reply = pending_lines([(2, "send to bot SimpleX Directory", WALL + 24.25 * 3600)])
    assert reply == "2  send to bot SimpleX Directory  expires 18 October 2026 at 09:15 UTC"
    assert live(reply) == []
    # the plan's form is one
    assert live("expires 2026-10-18 09:15 UTC") == [("phone", "2026-10-18 09")]


def test_a_code_span_after_a_parenthesis_is_safe() -> None:
    # A SimpleX name that fails validation is shown as a code span in parentheses. Right after
    # "(" the core opens no span, so the content would be read: here a live /approve command.
    evil = "x /approve 3 y"
    assert live(f"bot Bob ({'`' + evil + '`'})") == [("command", "/approve")]
    subject = Subject("bot", "Bob", evil, "@4")
    phrase = subject.phrase()
    assert phrase == "bot Bob ( `x /approve 3 y` )"
    card = connect_card(3, subject, incognito=False)
    assert live(card.pending()) == [
        ("command", "/'approve 3'"),
        ("command", "/'reject 3'"),
    ]


def test_bidi_and_zero_width_characters_are_cleaned_from_peer_texts() -> None:
    text = "pay \u202etxt.exe\u202c now\u200b\u2066x\u2069 \ufeffok"
    card = connect_card(1, Subject("bot", "Bob"), incognito=False, description=text, welcome=text)
    for line in card.body:
        assert_clean(line)
    # each control or format character is a space, as in names
    assert card.body[0] == "`pay  txt.exe  now x   ok`"
    sent = send_card(2, Subject("contact", "Bob"), "@4", "a\u200fb")
    assert sent.body == ("`a b`",)


def test_an_emoji_sequence_keeps_its_joiner() -> None:
    card = send_card(
        2, Subject("contact", "Bob"), "@4", "hi \U0001f469\u200d\U0001f4bb and a\u200db"
    )
    assert card.body == ("`hi \U0001f469\u200d\U0001f4bb and a b`",)


def _example_types() -> set[str]:
    """The fragment types the hostile pieces form, to show the property test covers them."""
    types: set[str] = set()
    for piece in HOSTILE_PIECES:
        for fragment in MD.parse(piece) or []:
            fmt: dict[str, Any] | None = fragment.get("format")
            if fmt is not None:
                types.add(str(fmt["type"]))
    return types


def test_the_hostile_pieces_form_every_fragment_type_of_the_core() -> None:
    assert _example_types() >= {
        "phone",
        "email",
        "uri",
        "hyperLink",
        "simplexLink",
        "simplexName",
        "mention",
        "command",
        "bold",
        "italic",
        "strikeThrough",
        "snippet",
        "secret",
        "colored",
        "small",
    }


def test_a_hash_in_a_name_on_a_group_line_of_list_forms_no_secret() -> None:
    # "#9  group `x#y /approve 3`" is a secret from "#9" to the name's "#" for the core, which
    # swallows the code span's backtick and leaves " /approve 3" live; so the name's "#" is
    # shown as U+FF03 on such a line.
    assert ("command", "/approve") in live("#9  group `x#y /approve 3`")
    listed = list_reply([ListEntry("#9", "group", "x#y /approve 3", None, connected=True)])
    assert listed == "#9  group `x\uff03y /approve 3`"
    assert live(listed) == live("#9  group Bob")
