"""Every public parser of untrusted text returns its own typed error for any ``str``, and
every predicate returns a bool (issue 13, item 6): lone surrogates included, which a ``str``
holds after ``surrogateescape`` decoding (a command-line argument of invalid UTF-8) or a JSON
``\\udXXX`` escape."""

from __future__ import annotations

import contextlib
import functools
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from simplex_protocols import chat_call, coretext, declarations, links, llmstxt, rpc
from simplex_protocols.errors import (
    CallFramingError,
    DeclarationError,
    EnvelopeError,
    LinkError,
    LLMsTxtError,
    ParseError,
)

ROOT = Path(__file__).resolve().parents[1]

#: Every code point, lone surrogates (category Cs) and unassigned ones included.
ANY_CHAR = st.characters(exclude_categories=())
SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
ANY_TEXT = st.text(ANY_CHAR, max_size=40)
#: A surrogate (or other text) spliced into an otherwise valid form, so that it reaches the
#: inner rules of a parser and not only its first check.
HOLE = st.one_of(SURROGATE.map(str), ANY_TEXT)
KEY = "b" * 43


def spliced(*templates: str) -> st.SearchStrategy[str]:
    return st.one_of(
        ANY_TEXT,
        st.tuples(st.sampled_from(templates), HOLE, HOLE).map(lambda t: t[0].format(t[1], t[2])),
    )


NAMES = spliced("@{}acme.simplex", "#acme{}.simplex{}", "simplex:/name@{}.simplex", "@a.{}{}")
LINKS = spliced(
    "https://smp4.simplex.im/a#{}" + KEY,
    "simplex:/a#{}/" + KEY + "{}",
    "https://simplex.chat/contact#/?v=2-7&smp={}{}",
)
CALLS = spliced("/_call mcp {}{}", "/_call @{} mcp {{}}{}", '/_call {}mcp {{"a":"{}"}}')
ENTRIES = spliced(
    "- [Acme{}](simplex:/a#" + KEY + "): mcp{}",
    "# Acme\n\n## Communications\n\n- [x](https://smp4.simplex.im/a#{}" + KEY + "): {}\n",
)
JSON_TEXT = spliced(
    '{{"protocol":"mcp{}","request":{{"a":"{}"}}}}',
    '{{"protocol":"mcp","request":{{"jsonrpc":"2.0","id":1,"method":"{}"}},"x":"{}"}}',
    '{{"mcp":{{"versions":["{}"],"chat":true,"rpc":{}}}}}',
)


def must_raise_own(parse: Callable[[Any], Any], own: type[ParseError], text: Any) -> None:
    """``parse(text)`` returns, or raises the parser's own error (anything else fails)."""
    with contextlib.suppress(own):
        parse(text)


@given(NAMES)
@example("@ac\udcffme.simplex")
@example("@ac\udced\udcb3\udcbfme.simplex")
def test_simplex_name_parsers_raise_link_error_and_predicates_return_bools(text: str) -> None:
    must_raise_own(links.parse_simplex_name, LinkError, text)
    must_raise_own(links.parse_simplex_target, LinkError, text)
    assert isinstance(links.is_simplex_name(text), bool)
    assert isinstance(links.is_simplex_link(text), bool)


@given(LINKS)
def test_simplex_link_parser_raises_link_error(text: str) -> None:
    must_raise_own(links.parse_simplex_link, LinkError, text)
    must_raise_own(links.parse_simplex_target, LinkError, text)
    assert isinstance(links.is_simplex_link(text), bool)


@given(CALLS)
def test_chat_call_parsers_raise_call_framing_error(text: str) -> None:
    must_raise_own(chat_call.parse_call_command, CallFramingError, text)
    assert isinstance(chat_call.is_call_command(text), bool)
    chat_call.triage_call(text, my_names="Acme")  # None or a verdict, never an exception
    assert isinstance(chat_call.is_protocol_name(text), bool)


@given(ENTRIES)
def test_llms_txt_parsers_raise_llms_txt_error(text: str) -> None:
    llmstxt.parse_llms_txt(text)  # lenient: a document with its problems, for any text
    with contextlib.suppress(LLMsTxtError):
        llmstxt.parse_llms_txt(text, strict=True)
    with contextlib.suppress(LLMsTxtError):
        llmstxt.parse_communications_entry(text.splitlines()[0] if text else text)


@given(JSON_TEXT)
def test_service_rpc_envelope_parsers_raise_envelope_error(text: str) -> None:
    must_raise_own(rpc.parse_service_request, EnvelopeError, text)
    must_raise_own(rpc.parse_service_response, EnvelopeError, text)
    assert isinstance(rpc.is_protocol_name(text), bool)


@given(JSON_TEXT)
def test_declaration_parsers_raise_declaration_error(text: str) -> None:
    try:
        value: Any = json.loads(text)
    except ValueError:
        value = text
    parsers = (declarations.parse_protocols, declarations.parse_link_data)
    for parse in (*parsers, declarations.parse_public_group):
        for strict in (False, True):
            must_raise_own(functools.partial(parse, strict=strict), DeclarationError, value)
    assert isinstance(declarations.is_protocol_name(text), bool)


@given(ANY_TEXT)
def test_core_text_predicates_return_bools_for_any_text(text: str) -> None:
    assert isinstance(coretext.is_valid_display_name(text), bool)
    assert isinstance(coretext.is_protocol_name(text), bool)
    markdown = coretext.Markdown(
        parse_link=links.parse_simplex_link, parse_name=links.parse_simplex_name
    )
    markdown.parse(text)  # the core's Markdown parses any text
    for ch in text:
        assert isinstance(coretext.is_space(ch), bool)
        assert isinstance(coretext.is_punctuation(ch), bool)
    assert isinstance(coretext.mk_valid_name(text), str)
    assert isinstance(coretext.view_name(text), str)
    with contextlib.suppress(ParseError):
        coretext.parse_mention(text)


@pytest.mark.slow
def test_simplex_call_with_a_surrogate_in_a_name_is_a_usage_error() -> None:
    # What bash's $'@ac\udcffme.simplex' passes: the UTF-8 bytes of U+DCFF, invalid UTF-8,
    # decoded by Python with surrogateescape.
    target = b"@ac\xed\xb3\xbfme.simplex"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from simplex_protocols.cli.call import main; sys.exit(main())",
            "--core",
            "sim:me",
            target,  # type: ignore[list-item]
            "tools/list",
        ],
        capture_output=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 64, done.stderr
    assert b"not a SimpleX link or name" in done.stderr and b"bad_character" in done.stderr
