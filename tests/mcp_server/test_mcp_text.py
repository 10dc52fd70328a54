"""Peer text safety: folding, code spans, valid names, chat references."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp_sim import core_formatted_lines

from simplex_protocols.core import ContactRef, GroupRef
from simplex_protocols.mcp_server.text import (
    code_span,
    error_md,
    fold,
    is_simplex_name,
    is_valid_name,
    mention_name,
    name_md,
    read_chat_ref,
    shell_quote,
    text_lines_md,
)


def test_fold_turns_each_run_of_control_format_and_separator_characters_into_one_space() -> None:
    assert fold("a\n\r\nb") == "a b"
    assert fold("x\u2028\u2029y") == "x y"
    assert fold("left\u202eright") == "left right"  # a bidi override (Cf)
    assert fold("\x1b[31mred") == " [31mred"
    assert fold("plain name") == "plain name"
    assert fold("a\tb") == "a b"


def test_valid_names_follow_the_core_rules() -> None:
    assert is_valid_name("Alice")
    assert is_valid_name("My Agent")
    assert is_valid_name("алиса")
    assert is_valid_name("7eleven")
    assert is_valid_name("€uro")
    for bad in [
        "",
        " Alice",
        "Alice ",
        "A  B",
        "a.b",
        "a,b",
        "a;b",
        "a/b",
        "a\\b",
        "#x",
        "@x",
        "'x",
        'a"b',
        "a~b",
        "a`b",
        "_x",
        "x\ny",
        "x" * 51,
    ]:
        assert not is_valid_name(bad), bad


def test_name_md_keeps_a_valid_name_and_makes_other_names_code_spans() -> None:
    assert name_md("SimpleX Directory") == "SimpleX Directory"
    assert name_md("\n/approve 1") == "` /approve 1`".replace(" /", "\u00a0/")
    assert name_md("x\n/approve 1") == "`x /approve 1`"
    assert name_md("a`b") == "`a'b`"


def test_code_span_replaces_backticks_and_edge_spaces() -> None:
    assert code_span("text") == "`text`"
    assert code_span(" x ") == "`\u00a0x\u00a0`"
    assert code_span("``") == "`''`"
    assert code_span(" ") == "`\u00a0`"


def test_text_lines_md_makes_every_line_a_code_span() -> None:
    assert text_lines_md("one\n/approve 1\n\n https://x.y/ ") == [
        "`one`",
        "`/approve 1`",
        "",
        "`\u00a0https://x.y/\u00a0`",
    ]
    assert text_lines_md("a\u2028b\rc") == ["`a`", "`b`", "`c`"]


def test_error_md_folds_the_error_to_one_code_span() -> None:
    assert error_md("bad\nthing `x`") == "`bad thing 'x'`"


def test_mention_name_quotes_names_with_spaces_or_final_punctuation() -> None:
    assert mention_name("Switchback") == "Switchback"
    assert mention_name("Bob Smith") == "'Bob Smith'"
    assert mention_name("Bob!") == "'Bob!'"


def test_simplex_names() -> None:
    assert is_simplex_name("@directory.simplex")
    assert is_simplex_name("#ridgeline.simplex")
    assert not is_simplex_name("directory.simplex")
    assert not is_simplex_name("@x")
    assert not is_simplex_name("@x.simplex /approve 1")


def test_chat_references_have_1_to_15_digits() -> None:
    assert read_chat_ref("@4") == ContactRef(4)
    assert read_chat_ref("#999999999999999") == GroupRef(999_999_999_999_999)
    assert str(read_chat_ref("#12")) == "#12"
    # 20 digits wrap around Int64 in the core and can name the agent control chat #10.
    assert read_chat_ref("#18446744073709551626") is None
    assert read_chat_ref("#1234567890123456") is None
    for bad in ["", "4", "@", "@-1", "@ 4", "@4 ", "*4", ":4", "@٣"]:
        assert read_chat_ref(bad) is None


@given(st.text())
def test_folded_text_is_one_line_and_name_md_never_forms_a_command(text: str) -> None:
    folded = fold(text)
    assert len(folded.splitlines()) <= 1
    shown = name_md(text)
    assert len(shown.splitlines()) <= 1
    if not shown.startswith("`"):
        assert "/" not in shown
        assert "@" not in shown
        assert "#" not in shown


@given(st.text())
def test_every_code_span_line_is_a_snippet_for_the_core_parser(text: str) -> None:
    lines = text_lines_md(text)
    for line in lines:
        if not line:
            continue
        assert line.startswith("`")
        assert line.endswith("`")
        content = line[1:-1]
        assert "`" not in content
        assert content[:1] != " "
        assert content[-1:] != " "
        assert "\n" not in content
    if any(lines):
        # in the chat core's formattedText of the card lines, each one is a single code span;
        # a card goes on after the text (the core's lines drop a trailing empty line)
        card = core_formatted_lines("\n".join([*lines, "Reply /approve 1"]))
        for line, formatted in zip(lines, card[:-1], strict=True):
            assert [kind for kind, _ in formatted] == (["snippet"] if line else [])


@pytest.mark.parametrize(
    "name", ["\n/approve 1", "x\n/approve 1", "https://simplex.chat/contact#/?v=1"]
)
def test_dangerous_names_become_code_spans(name: str) -> None:
    assert name_md(name).startswith("`")


def test_shell_quote_keeps_letters_digits_underscores_and_hyphens_of_any_script() -> None:
    assert shell_quote("Алиса_1-x") == "Алиса_1-x"
    assert shell_quote("") == "''"
    assert shell_quote("/home/alice/.simplex-mcp/my-agent") == "'/home/alice/.simplex-mcp/my-agent'"
    assert shell_quote("it's") == "'it'\\''s'"
    assert shlex.split(shell_quote("a 'b' $c")) == ["a 'b' $c"]
