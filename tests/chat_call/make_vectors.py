"""Write the chat transport's test vectors, ``spec/vectors/chat_call/*.json``.

Run ``python tests/chat_call/make_vectors.py`` after changing a case; ``test_chat_call_vectors``
fails while the files differ from what this script writes. Every expected value below is
written by hand (sizes are counted from the envelope and escape costs stated next to them), never
computed by the library under test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "spec" / "vectors" / "chat_call"
GENERATOR = "tests/chat_call/make_vectors.py"
REVISION = "2026-10-21"
SPEC = "Agent protocols over SimpleX rev 2 (2026-10-21)"


def case(
    family: str,
    name: str,
    requirements: list[str],
    value: Any,
    result: str,
    *,
    expected: Any = None,
    error: str | None = None,
    flags: list[str] | None = None,
    comment: str | None = None,
    args: dict[str, Any] | None = None,
    canonical: bool | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"id": f"{family}/{name}", "requirements": requirements}
    if flags:
        out["flags"] = flags
    out["input"] = value
    if args is not None:
        out["args"] = args
    out["result"] = result
    if expected is not None or (result == "valid" and family != "chat_call.collect"):
        out["expected"] = expected
    if error is not None:
        out["error"] = error
    if canonical is not None:
        out["canonical"] = canonical
    if comment:
        out["comment"] = comment
    return out


# ======================================================================== chat_call.parse

P = "chat_call.parse"
MCP_LIST_TEXT = (
    '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": '
    '{"io.modelcontextprotocol/protocolVersion": "2026-07-28", '
    '"io.modelcontextprotocol/clientCapabilities": {}}}}'
)
MCP_LIST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/list",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}
A2A_SEND_TEXT = (
    '{"jsonrpc":"2.0","id":"r-7","method":"SendMessage","a2a-service-parameters":'
    '{"A2A-Version":"1.0"},"params":{"message":{"messageId":"m-1","role":"ROLE_USER",'
    '"parts":[{"text":"Price of two anvils delivered to Lisbon"}]}}}'
)
A2A_SEND = {
    "jsonrpc": "2.0",
    "id": "r-7",
    "method": "SendMessage",
    "a2a-service-parameters": {"A2A-Version": "1.0"},
    "params": {
        "message": {
            "messageId": "m-1",
            "role": "ROLE_USER",
            "parts": [{"text": "Price of two anvils delivered to Lisbon"}],
        }
    },
}
DEEP_64_TEXT = '{"a":' * 63 + "[]" + "}" * 63
DEEP_65_TEXT = '{"a":' * 64 + "[]" + "}" * 64
HUGE_TEXT = '{"blob":"' + "x" * 15_000 + '"}'


def cmd(
    protocol: str, request: Any, request_text: str, member: str | None = None
) -> dict[str, Any]:
    return {
        "protocol": protocol,
        "member": member,
        "request": request,
        "request_text": request_text,
    }


def _nest(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = {"a": value}
    return value


PARSE_NOTES = {
    "SpecExample": {"description": "A command written in the spec."},
    "Mention": {"description": "A command with a mention of the called member (groups)."},
    "QuotedName": {
        "description": "A name with a space character, or ending with punctuation, in single quotes, as the core writes it (Markdown.hs viewName)."
    },
    "UnicodeName": {"description": "A name with non-ASCII letters."},
    "BidiName": {
        "bug_class": "SPOOFING",
        "description": "A name with bidirectional control characters; the core's grammar allows them.",
        "effect": "A name can look like another; matching compares the exact characters.",
    },
    "JsonWhitespace": {
        "description": "Whitespace inside the request object is JSON's own and is kept in request_text."
    },
    "ExtraSpaces": {
        "description": "A run of spaces (U+0020) between parts, where CALL-CMD-3 has one space (AMB-6, reading A).",
    },
    "TrailingWhitespace": {
        "description": "JSON whitespace after the request object.",
        "acceptable": "Accepting it as JSON's own whitespace, or refusing the text. We accept it and keep it in request_text.",
    },
    "DuplicateKey": {
        "bug_class": "AMBIGUOUS_JSON",
        "description": "An object with a repeated member name (RFC 8259: behaviour unpredictable).",
        "effect": "Two readers can see two different requests.",
        "acceptable": "Refusing the request (we do: request_duplicate_key), or reading it with any rule.",
    },
    "BigNumber": {
        "description": "An integer beyond 2^53.",
        "acceptable": "Keeping it exactly (we do), or refusing it; a reader that rounds it changes the request.",
    },
    "DeepNesting": {"description": "Nesting at and beyond our limit of 64 levels."},
    "Huge": {
        "description": "A request of 15,000 bytes: framing does not limit size (the core does)."
    },
    "NotACall": {
        "description": "Text that does not start with the command word /_call and a separator."
    },
    "BadSeparator": {
        "bug_class": "MODIFIED_SEPARATOR",
        "description": "A character other than U+0020 between parts: tab, newline, no-break or ideographic space.",
        "effect": "Readers that split differently see a different protocol or request.",
    },
    "ProtocolName": {
        "description": "The protocol name is lowercase ASCII letters, digits and hyphens (NAME-1)."
    },
    "NotJson": {"description": "The request is not JSON, or JSON with something after it."},
    "NotObject": {"description": "The request is JSON but not an object."},
    "BadMention": {
        "description": "A mention the core's syntax does not allow, or one the core would read differently."
    },
    "NeedsQuotes": {
        "bug_class": "AMBIGUOUS_NAME",
        "description": "A name that ends with punctuation written without quotes: the core reads the name without the punctuation.",
        "effect": "The caller and the core disagree on who is called.",
    },
    "ControlChar": {"description": "A control character where a command has none."},
    "LoneSurrogate": {"description": "A \\ud800 escape without its pair: not a Unicode string."},
}


def parse_cases() -> list[dict[str, Any]]:
    C: list[dict[str, Any]] = []

    def valid(name: str, reqs: list[str], text: str, expected: dict[str, Any], **kw: Any) -> None:
        C.append(case(P, name, reqs, text, "valid", expected=expected, **kw))

    def invalid(name: str, reqs: list[str], text: str, error: str, **kw: Any) -> None:
        C.append(case(P, name, reqs, text, "invalid", error=error, **kw))

    def acceptable(
        name: str, reqs: list[str], text: str, expected: Any, flags: list[str], **kw: Any
    ) -> None:
        C.append(case(P, name, reqs, text, "acceptable", expected=expected, flags=flags, **kw))

    cmd1 = ["CALL-CMD-1", "CALL-CMD-2", "CALL-CMD-3"]
    # -- valid
    valid(
        "mcp-tools-list-spec-example",
        cmd1,
        "/_call mcp " + MCP_LIST_TEXT,
        cmd("mcp", MCP_LIST, MCP_LIST_TEXT),
        flags=["SpecExample", "JsonWhitespace"],
    )
    valid(
        "a2a-send-message-compact",
        cmd1,
        "/_call a2a " + A2A_SEND_TEXT,
        cmd("a2a", A2A_SEND, A2A_SEND_TEXT),
    )
    valid("empty-object", cmd1, "/_call mcp {}", cmd("mcp", {}, "{}"))
    valid(
        "protocol-digits-hyphens",
        [*cmd1, "NAME-1"],
        '/_call x-proto-2 {"a":1}',
        cmd("x-proto-2", {"a": 1}, '{"a":1}'),
    )
    valid(
        "protocol-single-hyphen",
        [*cmd1, "NAME-1"],
        "/_call - {}",
        cmd("-", {}, "{}"),
        comment="a hyphen alone is a protocol name by the spec's definition",
    )
    valid(
        "mention-bare",
        [*cmd1, "CALL-CMD-4"],
        '/_call @Switchback mcp {"id":1}',
        cmd("mcp", {"id": 1}, '{"id":1}', "Switchback"),
        flags=["Mention"],
    )
    valid(
        "mention-quoted-space",
        [*cmd1, "CALL-CMD-4"],
        "/_call @'John Doe' mcp {}",
        cmd("mcp", {}, "{}", "John Doe"),
        flags=["Mention", "QuotedName"],
    )
    valid(
        "mention-quoted-trailing-period",
        [*cmd1, "CALL-CMD-4"],
        "/_call @'Acme Inc.' a2a {}",
        cmd("a2a", {}, "{}", "Acme Inc."),
        flags=["Mention", "QuotedName"],
    )
    valid(
        "mention-quoted-trailing-underscore",
        [*cmd1, "CALL-CMD-4"],
        "/_call @'bot_' mcp {}",
        cmd("mcp", {}, "{}", "bot_"),
        flags=["Mention", "QuotedName"],
        comment="_ is punctuation (Pc)",
    )
    valid(
        "mention-inner-period",
        [*cmd1, "CALL-CMD-4"],
        "/_call @J.Doe mcp {}",
        cmd("mcp", {}, "{}", "J.Doe"),
        flags=["Mention"],
    )
    valid(
        "mention-inner-apostrophe",
        [*cmd1, "CALL-CMD-4"],
        "/_call @O'Brien mcp {}",
        cmd("mcp", {}, "{}", "O'Brien"),
        flags=["Mention"],
    )
    valid(
        "mention-digit-suffix",
        [*cmd1, "CALL-CMD-4"],
        "/_call @bot_1 mcp {}",
        cmd("mcp", {}, "{}", "bot_1"),
        flags=["Mention"],
    )
    valid(
        "mention-cyrillic",
        [*cmd1, "CALL-CMD-4"],
        "/_call @\u0430\u043b\u0438\u0441\u0430 mcp {}",
        cmd("mcp", {}, "{}", "\u0430\u043b\u0438\u0441\u0430"),
        flags=["Mention", "UnicodeName"],
    )
    valid(
        "mention-cjk-quoted-space",
        [*cmd1, "CALL-CMD-4"],
        "/_call @'\u5c71\u7530 \u592a\u90ce' mcp {}",
        cmd("mcp", {}, "{}", "\u5c71\u7530 \u592a\u90ce"),
        flags=["Mention", "UnicodeName", "QuotedName"],
    )
    valid(
        "mention-no-break-space-quoted",
        [*cmd1, "CALL-CMD-4"],
        "/_call @'a\u00a0b' mcp {}",
        cmd("mcp", {}, "{}", "a\u00a0b"),
        flags=["Mention", "QuotedName"],
        comment="U+00A0 is a space to the core, so the name is quoted",
    )
    valid(
        "mention-line-separator-bare",
        [*cmd1, "CALL-CMD-4"],
        "/_call @a\u2028b mcp {}",
        cmd("mcp", {}, "{}", "a\u2028b"),
        flags=["Mention", "UnicodeName"],
        comment="U+2028 is not a space to the core (Haskell isSpace): it belongs to the bare name",
    )
    valid(
        "mention-bidi-override",
        [*cmd1, "CALL-CMD-4"],
        "/_call @\u202ebob\u202c mcp {}",
        cmd("mcp", {}, "{}", "\u202ebob\u202c"),
        flags=["Mention", "BidiName"],
    )
    valid(
        "mention-zero-width-space",
        [*cmd1, "CALL-CMD-4"],
        "/_call @bo\u200bb mcp {}",
        cmd("mcp", {}, "{}", "bo\u200bb"),
        flags=["Mention", "BidiName"],
        comment="U+200B is a format character (Cf), not a space",
    )
    valid(
        "mention-quoted-plain-name",
        [*cmd1, "CALL-CMD-4"],
        "/_call @'bob' mcp {}",
        cmd("mcp", {}, "{}", "bob"),
        flags=["Mention"],
        canonical=False,
        comment="the core writes @bob; the quoted form reads the same",
    )
    valid(
        "request-pretty-printed",
        cmd1,
        '/_call mcp {\n  "id": 1,\n  "method": "ping"\n}',
        cmd("mcp", {"id": 1, "method": "ping"}, '{\n  "id": 1,\n  "method": "ping"\n}'),
        flags=["JsonWhitespace"],
    )
    valid(
        "request-utf8-unescaped",
        cmd1,
        '/_call mcp {"q":"\u00e9\U0001f600"}',
        cmd("mcp", {"q": "\u00e9\U0001f600"}, '{"q":"\u00e9\U0001f600"}'),
    )
    valid(
        "request-escapes-kept-in-request-text",
        cmd1,
        '/_call mcp {"q":"\\u00e9\\n\\"x\\""}',
        cmd("mcp", {"q": '\u00e9\n"x"'}, '{"q":"\\u00e9\\n\\"x\\""}'),
    )
    valid(
        "request-depth-64",
        cmd1,
        "/_call mcp " + DEEP_64_TEXT,
        cmd("mcp", _nest(63), DEEP_64_TEXT),
        flags=["DeepNesting"],
    )
    valid(
        "request-huge",
        cmd1,
        "/_call mcp " + HUGE_TEXT,
        cmd("mcp", {"blob": "x" * 15_000}, HUGE_TEXT),
        flags=["Huge"],
    )
    # -- acceptable
    acceptable(
        "trailing-newline", cmd1, "/_call mcp {}\n", cmd("mcp", {}, "{}\n"), ["TrailingWhitespace"]
    )
    acceptable(
        "trailing-spaces", cmd1, "/_call mcp {}   ", cmd("mcp", {}, "{}   "), ["TrailingWhitespace"]
    )
    acceptable(
        "duplicate-keys",
        ["CALL-CMD-2"],
        '/_call mcp {"id":1,"id":2}',
        None,
        ["DuplicateKey"],
        comment="we refuse: request_duplicate_key",
    )
    acceptable(
        "big-integer",
        ["CALL-CMD-2"],
        '/_call mcp {"n":12345678901234567890}',
        cmd("mcp", {"n": 12345678901234567890}, '{"n":12345678901234567890}'),
        ["BigNumber"],
    )
    # -- not a call
    invalid("plain-text", ["CALL-CMD-1"], "hello", "not_a_call", flags=["NotACall"])
    invalid(
        "slash-call-without-underscore",
        ["CALL-CMD-1"],
        "/call mcp {}",
        "not_a_call",
        flags=["NotACall"],
        comment="/call is left to bots' commands for people",
    )
    invalid(
        "no-separator-after-prefix",
        ["CALL-CMD-1"],
        "/_callmcp {}",
        "not_a_call",
        flags=["NotACall"],
    )
    invalid("uppercase-prefix", ["CALL-CMD-1"], "/_CALL mcp {}", "not_a_call", flags=["NotACall"])
    invalid(
        "leading-space",
        ["CALL-CMD-1", "CALL-CMD-6"],
        " /_call mcp {}",
        "not_a_call",
        flags=["NotACall"],
        comment="a command is the whole text of the message, from its first character",
    )
    invalid(
        "command-inside-text",
        ["CALL-CMD-1", "CALL-CMD-6"],
        "please run /_call mcp {}",
        "not_a_call",
        flags=["NotACall"],
    )
    invalid("empty-text", ["CALL-CMD-1"], "", "not_a_call", flags=["NotACall"])
    # -- missing parts
    invalid("prefix-alone", ["CALL-CMD-1"], "/_call", "missing_protocol")
    invalid("prefix-and-space", ["CALL-CMD-1"], "/_call ", "missing_protocol")
    invalid("request-without-protocol", ["CALL-CMD-1"], "/_call {}", "missing_protocol")
    invalid(
        "mention-without-protocol",
        ["CALL-CMD-1", "CALL-CMD-4"],
        "/_call @bob {}",
        "missing_protocol",
    )
    invalid("protocol-without-request", ["CALL-CMD-2"], "/_call mcp", "missing_request")
    invalid(
        "protocol-and-spaces-without-request", ["CALL-CMD-2"], "/_call mcp  ", "missing_request"
    )
    # -- separators
    invalid(
        "tab-after-prefix",
        ["CALL-CMD-3"],
        "/_call\tmcp {}",
        "bad_separator",
        flags=["BadSeparator"],
    )
    invalid(
        "extra-spaces-between-parts",
        ["CALL-CMD-3"],
        '/_call   mcp  {"id":1}',
        "bad_separator",
        flags=["ExtraSpaces"],
    )
    invalid(
        "two-spaces-before-the-request",
        ["CALL-CMD-3"],
        "/_call mcp  {}",
        "bad_separator",
        flags=["ExtraSpaces"],
    )
    invalid(
        "extra-spaces-around-mention",
        ["CALL-CMD-3", "CALL-CMD-4"],
        "/_call  @bob   mcp {}",
        "bad_separator",
        flags=["ExtraSpaces"],
    )
    invalid(
        "newline-after-prefix",
        ["CALL-CMD-3"],
        "/_call\nmcp {}",
        "bad_separator",
        flags=["BadSeparator"],
    )
    invalid(
        "no-break-space-after-prefix",
        ["CALL-CMD-3"],
        "/_call\u00a0mcp {}",
        "bad_separator",
        flags=["BadSeparator"],
    )
    invalid(
        "tab-before-request",
        ["CALL-CMD-3"],
        "/_call mcp\t{}",
        "bad_separator",
        flags=["BadSeparator"],
    )
    invalid(
        "newline-before-request",
        ["CALL-CMD-3"],
        "/_call mcp\n{}",
        "bad_separator",
        flags=["BadSeparator"],
    )
    invalid(
        "space-then-newline-before-request",
        ["CALL-CMD-3"],
        "/_call mcp \n{}",
        "bad_separator",
        flags=["BadSeparator"],
    )
    invalid(
        "crlf-before-request",
        ["CALL-CMD-3"],
        "/_call mcp\r\n{}",
        "bad_separator",
        flags=["BadSeparator"],
    )
    invalid(
        "tab-after-mention",
        ["CALL-CMD-3", "CALL-CMD-4"],
        "/_call @bob\tmcp {}",
        "bad_separator",
        flags=["BadSeparator"],
    )
    invalid(
        "ideographic-space-after-mention",
        ["CALL-CMD-3", "CALL-CMD-4"],
        "/_call @bob\u3000mcp {}",
        "bad_separator",
        flags=["BadSeparator"],
    )
    invalid(
        "em-space-before-request",
        ["CALL-CMD-3"],
        "/_call mcp\u2003{}",
        "bad_separator",
        flags=["BadSeparator"],
    )
    # -- protocol names
    invalid(
        "protocol-uppercase",
        ["NAME-1", "CALL-CMD-1"],
        "/_call MCP {}",
        "bad_protocol_name",
        flags=["ProtocolName"],
    )
    invalid(
        "protocol-mixed-case",
        ["NAME-1", "CALL-CMD-1"],
        "/_call Mcp {}",
        "bad_protocol_name",
        flags=["ProtocolName"],
    )
    invalid(
        "protocol-underscore",
        ["NAME-1", "CALL-CMD-1"],
        "/_call m_cp {}",
        "bad_protocol_name",
        flags=["ProtocolName"],
    )
    invalid(
        "protocol-dot",
        ["NAME-1", "CALL-CMD-1"],
        "/_call mcp.v2 {}",
        "bad_protocol_name",
        flags=["ProtocolName"],
    )
    invalid(
        "protocol-non-ascii",
        ["NAME-1", "CALL-CMD-1"],
        "/_call mcp\u00e9 {}",
        "bad_protocol_name",
        flags=["ProtocolName"],
    )
    invalid(
        "protocol-glued-to-request",
        ["NAME-1", "CALL-CMD-3"],
        '/_call mcp{"id":1}',
        "bad_protocol_name",
        flags=["ProtocolName"],
    )
    invalid(
        "name-with-space-unquoted",
        ["CALL-CMD-4", "NAME-1"],
        "/_call @John Doe mcp {}",
        "bad_protocol_name",
        comment="unquoted, the name ends at the space and Doe is read as the protocol",
    )
    # -- requests
    invalid(
        "request-array",
        ["CALL-CMD-2"],
        "/_call mcp [1,2]",
        "request_not_object",
        flags=["NotObject"],
    )
    invalid(
        "request-number", ["CALL-CMD-2"], "/_call mcp 42", "request_not_object", flags=["NotObject"]
    )
    invalid(
        "request-string",
        ["CALL-CMD-2"],
        '/_call mcp "tools/list"',
        "request_not_object",
        flags=["NotObject"],
    )
    invalid(
        "request-null", ["CALL-CMD-2"], "/_call mcp null", "request_not_object", flags=["NotObject"]
    )
    invalid(
        "request-true", ["CALL-CMD-2"], "/_call mcp true", "request_not_object", flags=["NotObject"]
    )
    invalid(
        "request-unclosed",
        ["CALL-CMD-2"],
        '/_call mcp {"id":1',
        "request_not_json",
        flags=["NotJson"],
    )
    invalid(
        "request-single-quotes",
        ["CALL-CMD-2"],
        "/_call mcp {'id': 1}",
        "request_not_json",
        flags=["NotJson"],
    )
    invalid(
        "request-trailing-comma",
        ["CALL-CMD-2"],
        '/_call mcp {"id":1,}',
        "request_not_json",
        flags=["NotJson"],
    )
    invalid(
        "request-bare-keys",
        ["CALL-CMD-2"],
        "/_call mcp {id:1}",
        "request_not_json",
        flags=["NotJson"],
    )
    invalid(
        "request-nan", ["CALL-CMD-2"], '/_call mcp {"x":NaN}', "request_not_json", flags=["NotJson"]
    )
    invalid(
        "request-comment",
        ["CALL-CMD-2"],
        '/_call mcp {"id":1 /* one */}',
        "request_not_json",
        flags=["NotJson"],
    )
    invalid(
        "request-raw-control-char",
        ["CALL-CMD-2"],
        '/_call mcp {"q":"a\x01b"}',
        "request_not_json",
        flags=["NotJson", "ControlChar"],
    )
    invalid(
        "request-trailing-text",
        ["CALL-CMD-2"],
        "/_call mcp {} please",
        "request_trailing_text",
        flags=["NotJson"],
    )
    invalid(
        "request-two-objects",
        ["CALL-CMD-2"],
        "/_call mcp {}{}",
        "request_trailing_text",
        flags=["NotJson"],
    )
    invalid(
        "request-object-then-array",
        ["CALL-CMD-2"],
        "/_call mcp {} [1]",
        "request_trailing_text",
        flags=["NotJson"],
    )
    invalid(
        "request-depth-65",
        ["CALL-CMD-2"],
        "/_call mcp " + DEEP_65_TEXT,
        "request_too_deep",
        flags=["DeepNesting"],
    )
    invalid(
        "request-lone-surrogate",
        ["CALL-CMD-2"],
        '/_call mcp {"q":"\\ud800"}',
        "request_lone_surrogate",
        flags=["LoneSurrogate"],
    )
    invalid(
        "request-number-overflow",
        ["CALL-CMD-2"],
        '/_call mcp {"x":1e999}',
        "request_bad_number",
        flags=["NotJson"],
    )
    # -- mentions
    invalid(
        "mention-without-name",
        ["CALL-CMD-4"],
        "/_call @ mcp {}",
        "bad_mention",
        flags=["BadMention"],
    )
    invalid("mention-at-alone", ["CALL-CMD-4"], "/_call @", "bad_mention", flags=["BadMention"])
    invalid(
        "mention-empty-quotes",
        ["CALL-CMD-4"],
        "/_call @'' mcp {}",
        "bad_mention",
        flags=["BadMention"],
    )
    invalid(
        "mention-unclosed-quote",
        ["CALL-CMD-4"],
        "/_call @'John Doe mcp {}",
        "bad_mention",
        flags=["BadMention"],
    )
    invalid(
        "mention-text-after-quote",
        ["CALL-CMD-4"],
        "/_call @'John'Doe mcp {}",
        "bad_mention",
        flags=["BadMention"],
    )
    invalid(
        "mention-quoted-leading-space",
        ["CALL-CMD-4"],
        "/_call @' bob' mcp {}",
        "bad_mention",
        flags=["BadMention"],
    )
    invalid(
        "mention-hash", ["CALL-CMD-4"], "/_call @#bob mcp {}", "bad_mention", flags=["BadMention"]
    )
    invalid(
        "mention-double-at",
        ["CALL-CMD-4"],
        "/_call @@bob mcp {}",
        "bad_mention",
        flags=["BadMention"],
    )
    invalid(
        "mention-trailing-comma-unquoted",
        ["CALL-CMD-4"],
        "/_call @bob, mcp {}",
        "bad_mention",
        flags=["BadMention", "NeedsQuotes"],
    )
    invalid(
        "mention-trailing-period-unquoted",
        ["CALL-CMD-4"],
        "/_call @Acme.Inc. mcp {}",
        "bad_mention",
        flags=["BadMention", "NeedsQuotes"],
    )
    invalid(
        "mention-trailing-underscore-unquoted",
        ["CALL-CMD-4"],
        "/_call @bot_ mcp {}",
        "bad_mention",
        flags=["BadMention", "NeedsQuotes"],
    )
    invalid(
        "mention-control-char",
        ["CALL-CMD-4"],
        "/_call @bo\x01b mcp {}",
        "bad_mention",
        flags=["BadMention", "ControlChar"],
    )
    invalid(
        "mention-newline-in-quotes",
        ["CALL-CMD-4"],
        "/_call @'a\nb' mcp {}",
        "bad_mention",
        flags=["BadMention", "ControlChar"],
    )
    return C


# ======================================================================== mentions

M = "chat_call.mention"
MENTION_NOTES = {
    "Quoted": {
        "description": "A name the core writes in single quotes: it has a space character or ends with punctuation."
    },
    "NotCanonical": {"description": "Read as the core reads it, but the core writes it otherwise."},
}


def mention_cases() -> list[dict[str, Any]]:
    r = ["CALL-CMD-4"]
    C = [
        case(M, "bare-ascii", r, "@bob", "valid", expected="bob"),
        case(M, "bare-digits", r, "@bot_1", "valid", expected="bot_1"),
        case(M, "bare-inner-punctuation", r, "@J.Doe", "valid", expected="J.Doe"),
        case(
            M,
            "bare-symbol-last",
            r,
            "@a+b",
            "valid",
            expected="a+b",
            comment="+ is a math symbol (Sm), not punctuation",
        ),
        case(
            M, "bare-dollar", r, "@$", "valid", expected="$", comment="$ is a currency symbol (Sc)"
        ),
        case(M, "bare-apostrophe-inside", r, "@O'Brien", "valid", expected="O'Brien"),
        case(
            M,
            "bare-greek",
            r,
            "@\u0391\u03b8\u03b7\u03bd\u03ac",
            "valid",
            expected="\u0391\u03b8\u03b7\u03bd\u03ac",
        ),
        case(M, "quoted-space", r, "@'John Doe'", "valid", expected="John Doe", flags=["Quoted"]),
        case(M, "quoted-question-mark", r, "@'why?'", "valid", expected="why?", flags=["Quoted"]),
        case(M, "quoted-parentheses", r, "@'(x)'", "valid", expected="(x)", flags=["Quoted"]),
        case(
            M,
            "quoted-no-break-space",
            r,
            "@'x\u00a0y'",
            "valid",
            expected="x\u00a0y",
            flags=["Quoted"],
        ),
        case(
            M,
            "quoted-ideographic-space",
            r,
            "@'x\u3000y'",
            "valid",
            expected="x\u3000y",
            flags=["Quoted"],
        ),
        case(M, "quoted-trailing-space", r, "@'bob '", "valid", expected="bob ", flags=["Quoted"]),
        case(
            M,
            "quoted-plain",
            r,
            "@'bob'",
            "valid",
            expected="bob",
            flags=["NotCanonical"],
            canonical=False,
        ),
        case(M, "no-at", r, "bob", "invalid", error="bad_mention"),
        case(M, "at-alone", r, "@", "invalid", error="bad_mention"),
        case(M, "space-after-at", r, "@ bob", "invalid", error="bad_mention"),
        case(M, "unclosed-quote", r, "@'bob", "invalid", error="bad_mention"),
        case(M, "text-after-name", r, "@bob x", "invalid", error="bad_mention"),
        case(M, "text-after-quote", r, "@'bob'x", "invalid", error="bad_mention"),
        case(M, "trailing-punctuation-bare", r, "@bob.", "invalid", error="bad_mention"),
        case(M, "starts-with-quote-inside-quotes", r, "@''bob'", "invalid", error="bad_mention"),
    ]
    return C


F = "chat_call.format_mention"


def format_mention_cases() -> list[dict[str, Any]]:
    r = ["CALL-CMD-4"]
    return [
        case(F, "plain", r, "bob", "valid", expected="@bob"),
        case(F, "space", r, "John Doe", "valid", expected="@'John Doe'"),
        case(F, "trailing-period", r, "Acme Inc.", "valid", expected="@'Acme Inc.'"),
        case(F, "trailing-underscore", r, "bot_", "valid", expected="@'bot_'"),
        case(
            F,
            "trailing-closing-quote-mark",
            r,
            "say \u201chi\u201d",
            "valid",
            expected="@'say \u201chi\u201d'",
            comment="U+201D is final punctuation (Pf)",
        ),
        case(F, "inner-apostrophe", r, "O'Brien", "valid", expected="@O'Brien"),
        case(
            F,
            "tab-inside",
            r,
            "a\tb",
            "invalid",
            error="bad_member_name",
            comment="a control character cannot be in a one-line command",
        ),
        case(F, "empty", r, "", "invalid", error="bad_member_name"),
        case(F, "leading-space", r, " bob", "invalid", error="bad_member_name"),
        case(F, "leading-hash", r, "#bob", "invalid", error="bad_member_name"),
        case(F, "leading-at", r, "@bob", "invalid", error="bad_member_name"),
        case(F, "leading-apostrophe", r, "'bob", "invalid", error="bad_member_name"),
        case(F, "newline", r, "a\nb", "invalid", error="bad_member_name"),
        case(
            F,
            "apostrophe-and-space",
            r,
            "O'Brien Jr",
            "invalid",
            error="bad_member_name",
            comment="quoted, the name would end at its own apostrophe",
        ),
        case(F, "apostrophe-last", r, "x'", "invalid", error="bad_member_name"),
    ]


# ======================================================================== sizes

S = "chat_call.size"
LIMIT = 15_602
ENVELOPE = 114  # x.msg.new around a text, measured (MCP server plan, "Card size")
QUOTE_DIRECT = 150  # quote of a reply: 117 bytes + the longest quoted time (33), direct chat
QUOTE_GROUP = 188  # the same + ,"memberId":"<24 characters>" (38) in a group
# Escape costs (aeson): " \ newline tab: 2 bytes; other controls below U+0020: 6 (\u00XX);
# U+00E9: 2; U+1F600: 4; U+2028: 3 (not escaped by aeson).
TAILS = {
    "ascii": ("", 0),
    "escapes": ('"\\\n\t\x00\x1f', 2 + 2 + 2 + 2 + 6 + 6),
    "multibyte": ("\u00e9\U0001f600\u2028", 2 + 4 + 3),
}
SIZE_NOTES = {
    "Boundary": {"description": "One byte under, at, and over the 15,602-byte limit."},
    "Escapes": {"description": "Characters that JSON escapes count as their escaped length."},
    "Multibyte": {"description": "Non-ASCII characters count as their UTF-8 bytes, unescaped."},
    "Quote": {
        "description": "A reply quoting a command carries the command's whole text in its quote."
    },
}


def size_cases() -> list[dict[str, Any]]:
    reqs = ["CALL-SIZE-1", "CALL-SIZE-2"]
    C = [
        case(S, "empty-text", reqs, "", "valid", expected=ENVELOPE),
        case(S, "escape-quote", reqs, '"', "valid", expected=ENVELOPE + 2, flags=["Escapes"]),
        case(S, "escape-backslash", reqs, "\\", "valid", expected=ENVELOPE + 2, flags=["Escapes"]),
        case(S, "escape-newline", reqs, "\n", "valid", expected=ENVELOPE + 2, flags=["Escapes"]),
        case(S, "escape-nul", reqs, "\x00", "valid", expected=ENVELOPE + 6, flags=["Escapes"]),
        case(
            S,
            "escape-backspace",
            reqs,
            "\x08",
            "valid",
            expected=ENVELOPE + 6,
            flags=["Escapes"],
            comment="aeson writes \\u0008, not \\b",
        ),
        case(
            S,
            "delete-is-not-escaped",
            reqs,
            "\x7f",
            "valid",
            expected=ENVELOPE + 1,
            flags=["Escapes"],
        ),
        case(S, "slash-is-not-escaped", reqs, "/_call", "valid", expected=ENVELOPE + 6),
        case(
            S,
            "line-separator-is-not-escaped",
            reqs,
            "\u2028",
            "valid",
            expected=ENVELOPE + 3,
            flags=["Multibyte"],
        ),
        case(S, "emoji", reqs, "\U0001f600", "valid", expected=ENVELOPE + 4, flags=["Multibyte"]),
        case(
            S,
            "short-reply-direct",
            reqs,
            "{}",
            "valid",
            expected=ENVELOPE + 2 + QUOTE_DIRECT + 13,
            args={"quoted_text": "/_call mcp {}"},
            flags=["Quote"],
        ),
        case(
            S,
            "short-reply-group",
            reqs,
            "{}",
            "valid",
            expected=ENVELOPE + 2 + QUOTE_GROUP + 13,
            args={"quoted_text": "/_call mcp {}", "in_group": True},
            flags=["Quote"],
        ),
        case(
            S,
            "quoted-escapes-count",
            reqs,
            "{}",
            "valid",
            expected=ENVELOPE + 2 + QUOTE_DIRECT + 20 + 4,
            args={"quoted_text": '/_call mcp {"a":"b"}'},
            flags=["Quote", "Escapes"],
            comment="20 characters; the quoted command's 4 quote characters take 2 bytes each",
        ),
    ]
    for tail_name, (tail, cost) in TAILS.items():
        flags = (
            ["Boundary"]
            + (["Escapes"] if tail_name == "escapes" else [])
            + (["Multibyte"] if tail_name == "multibyte" else [])
        )
        for target in (LIMIT - 1, LIMIT, LIMIT + 1):
            text = "a" * (target - ENVELOPE - cost) + tail
            name = f"{tail_name}-{target}"
            if target <= LIMIT:
                C.append(case(S, name, reqs, text, "valid", expected=target, flags=flags))
            else:
                C.append(case(S, name, reqs, text, "invalid", error="too_large", flags=flags))
    # A reply quoting a long command: the quote takes the room.
    command = "/_call mcp " + '{"x":"' + "c" * 12_000 + '"}'
    command_cost = len(command) + 4  # four quote characters escaped
    for in_group, quote in ((False, QUOTE_DIRECT), (True, QUOTE_GROUP)):
        where = "group" if in_group else "direct"
        for target in (LIMIT, LIMIT + 1):
            reply = "r" * (target - ENVELOPE - quote - command_cost)
            args = {"quoted_text": command, "in_group": in_group}
            name = f"reply-quoting-long-command-{where}-{target}"
            if target <= LIMIT:
                C.append(
                    case(
                        S,
                        name,
                        reqs,
                        reply,
                        "valid",
                        expected=target,
                        args=args,
                        flags=["Boundary", "Quote"],
                    )
                )
            else:
                C.append(
                    case(
                        S,
                        name,
                        reqs,
                        reply,
                        "invalid",
                        error="too_large",
                        args=args,
                        flags=["Boundary", "Quote"],
                    )
                )
    return C


# ======================================================================== collect

K = "chat_call.collect"
FINAL_1 = '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'
PROGRESS_1 = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}'
FINAL_1_MSG = {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
PROGRESS_1_MSG = {
    "jsonrpc": "2.0",
    "method": "notifications/progress",
    "params": {"progressToken": "p", "progress": 1},
}


def d_item(
    item_id: int, text: str | None, quoted: int | None, *, contact: int = 4, own: bool = False
) -> dict[str, Any]:
    ci: dict[str, Any] = {
        "chatDir": {"type": "directSnd" if own else "directRcv"},
        "meta": {"itemId": item_id},
        "content": {"type": "rcvMsgContent", "msgContent": {"type": "text", "text": text}}
        if text is not None
        else {"type": "rcvDirectE2EEInfo", "e2eeInfo": {}},
    }
    if quoted is not None:
        ci["quotedItem"] = {"itemId": quoted, "content": {"type": "text", "text": "..."}}
    return {"chatInfo": {"type": "direct", "contact": {"contactId": contact}}, "chatItem": ci}


def g_item(
    item_id: int, member: int | None, text: str, quoted: int | None, *, group: int = 15
) -> dict[str, Any]:
    chat_dir: dict[str, Any] = (
        {"type": "groupSnd"}
        if member is None
        else {
            "type": "groupRcv",
            "groupMember": {
                "groupMemberId": member,
                "memberProfile": {"displayName": f"m{member}"},
            },
        }
    )
    ci: dict[str, Any] = {
        "chatDir": chat_dir,
        "meta": {"itemId": item_id},
        "content": {"type": "rcvMsgContent", "msgContent": {"type": "text", "text": text}},
    }
    if quoted is not None:
        ci["quotedItem"] = {"itemId": quoted}
    return {"chatInfo": {"type": "group", "groupInfo": {"groupId": group}}, "chatItem": ci}


def call(
    target: dict[str, Any],
    steps: list[dict[str, Any]],
    *,
    final: int | None = 1,
    deadline: float = 30,
    expected: list[int] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "commandItemId": 20,
        "target": target,
        "deadline": deadline,
        "final": {"jsonrpcId": final} if final is not None else None,
    }
    if expected is not None:
        out["expectedMembers"] = expected
    out["steps"] = steps
    return out


DIRECT = {"type": "direct", "contactId": 4}
C4 = {"contactId": 4}


def m(member: int) -> dict[str, int]:
    return {"groupMemberId": member}


def collect_cases() -> list[dict[str, Any]]:
    C: list[dict[str, Any]] = []

    def add(
        name: str,
        reqs: list[str],
        value: dict[str, Any],
        expected: list[dict[str, Any]],
        comment: str | None = None,
    ) -> None:
        C.append(case(K, name, reqs, value, "valid", expected=expected, comment=comment))

    add(
        "direct-notification-then-response",
        ["CALL-CLR-1", "CALL-CLR-2", "CALL-REP-1"],
        call(
            DIRECT,
            [
                {"at": 1, "item": d_item(21, PROGRESS_1, 20)},
                {"at": 2, "item": d_item(22, FINAL_1, 20)},
            ],
        ),
        [
            {
                "event": "reply",
                "itemId": 21,
                "sender": C4,
                "message": PROGRESS_1_MSG,
                "final": False,
            },
            {"event": "reply", "itemId": 22, "sender": C4, "message": FINAL_1_MSG, "final": True},
            {"event": "answer_completed", "sender": C4},
            {"event": "completed", "replies": [21, 22]},
        ],
    )
    add(
        "direct-other-traffic-is-ignored",
        ["CALL-CLR-1", "CALL-CLR-4"],
        call(
            DIRECT,
            [
                {"at": 1, "item": d_item(21, "hi", None)},
                {"at": 1, "item": d_item(22, FINAL_1, 19)},
                {"at": 1, "item": d_item(23, FINAL_1, 20, contact=5)},
                {"at": 1, "item": d_item(24, FINAL_1, 20, own=True)},
                {"at": 1, "item": d_item(25, None, 20)},
                {"at": 2, "item": d_item(26, FINAL_1, 20)},
            ],
        ),
        [
            {"event": "ignored", "itemId": 21, "reason": "not_a_reply"},
            {"event": "ignored", "itemId": 22, "reason": "other_quote"},
            {"event": "ignored", "itemId": 23, "reason": "other_chat"},
            {"event": "ignored", "itemId": 24, "reason": "own_item"},
            {"event": "ignored", "itemId": 25, "reason": "not_a_message"},
            {"event": "reply", "itemId": 26, "sender": C4, "message": FINAL_1_MSG, "final": True},
            {"event": "answer_completed", "sender": C4},
            {"event": "completed", "replies": [26]},
        ],
    )
    add(
        "direct-text-reply-kept-with-sender",
        ["CALL-CLR-3"],
        call(
            DIRECT,
            [
                {"at": 1, "item": d_item(21, "I only speak MCP.", 20)},
                {"at": 2, "item": d_item(22, "[1,2]", 20)},
                {"at": 30, "tick": True},
            ],
        ),
        [
            {"event": "text_reply", "itemId": 21, "sender": C4, "text": "I only speak MCP."},
            {"event": "text_reply", "itemId": 22, "sender": C4, "text": "[1,2]"},
            {"event": "timed_out", "replies": [21, 22]},
        ],
    )
    add(
        "direct-deadline-then-late-reply",
        ["CALL-CLR-2"],
        call(
            DIRECT,
            [
                {"at": 1, "item": d_item(21, PROGRESS_1, 20)},
                {"at": 29.5, "tick": True},
                {"at": 30, "tick": True},
                {"at": 31, "item": d_item(22, FINAL_1, 20)},
            ],
        ),
        [
            {
                "event": "reply",
                "itemId": 21,
                "sender": C4,
                "message": PROGRESS_1_MSG,
                "final": False,
            },
            {"event": "timed_out", "replies": [21]},
            {"event": "ignored", "itemId": 22, "reason": "call_ended"},
        ],
    )
    add(
        "direct-response-at-deadline-is-late",
        ["CALL-CLR-2"],
        call(DIRECT, [{"at": 30, "item": d_item(21, FINAL_1, 20)}]),
        [
            {"event": "timed_out", "replies": []},
            {"event": "ignored", "itemId": 21, "reason": "call_ended"},
        ],
        comment="an item at or after the deadline first ends the wait",
    )
    add(
        "direct-duplicate-delivery",
        ["CALL-CLR-2"],
        call(
            DIRECT,
            [
                {"at": 1, "item": d_item(21, PROGRESS_1, 20)},
                {"at": 1, "item": d_item(21, PROGRESS_1, 20)},
            ],
            deadline=5,
        ),
        [
            {
                "event": "reply",
                "itemId": 21,
                "sender": C4,
                "message": PROGRESS_1_MSG,
                "final": False,
            },
            {"event": "ignored", "itemId": 21, "reason": "duplicate"},
        ],
    )
    add(
        "direct-response-with-other-id-is-not-final",
        ["CALL-CLR-1"],
        call(
            DIRECT,
            [
                {"at": 1, "item": d_item(21, '{"jsonrpc":"2.0","id":2,"result":{}}', 20)},
                {"at": 30, "tick": True},
            ],
        ),
        [
            {
                "event": "reply",
                "itemId": 21,
                "sender": C4,
                "message": {"jsonrpc": "2.0", "id": 2, "result": {}},
                "final": False,
            },
            {"event": "timed_out", "replies": [21]},
        ],
    )
    add(
        "group-mention-only-that-member",
        ["CALL-CLR-5", "CALL-GRP-1"],
        call(
            {"type": "group", "groupId": 15, "groupMemberId": 44},
            [
                {"at": 1, "item": g_item(21, 45, FINAL_1, 20)},
                {"at": 1, "item": g_item(22, None, FINAL_1, 20)},
                {"at": 1, "item": g_item(23, 44, FINAL_1, 20, group=16)},
                {"at": 2, "item": g_item(24, 44, FINAL_1, 20)},
            ],
        ),
        [
            {"event": "ignored", "itemId": 21, "reason": "wrong_sender"},
            {"event": "ignored", "itemId": 22, "reason": "own_item"},
            {"event": "ignored", "itemId": 23, "reason": "other_chat"},
            {
                "event": "reply",
                "itemId": 24,
                "sender": m(44),
                "message": FINAL_1_MSG,
                "final": True,
            },
            {"event": "answer_completed", "sender": m(44)},
            {"event": "completed", "replies": [24]},
        ],
    )
    add(
        "group-broadcast-every-member-until-deadline",
        ["CALL-CLR-2", "CALL-GRP-2", "CALL-CLR-3"],
        call(
            {"type": "group", "groupId": 15},
            [
                {"at": 1, "item": g_item(21, 44, PROGRESS_1, 20)},
                {"at": 2, "item": g_item(22, 45, FINAL_1, 20)},
                {"at": 3, "item": g_item(23, 44, FINAL_1, 20)},
                {"at": 4, "item": g_item(24, 46, "what is this?", 20)},
                {"at": 5, "item": g_item(25, 45, PROGRESS_1, 20)},
                {"at": 30, "tick": True},
            ],
        ),
        [
            {
                "event": "reply",
                "itemId": 21,
                "sender": m(44),
                "message": PROGRESS_1_MSG,
                "final": False,
            },
            {
                "event": "reply",
                "itemId": 22,
                "sender": m(45),
                "message": FINAL_1_MSG,
                "final": True,
            },
            {"event": "answer_completed", "sender": m(45)},
            {
                "event": "reply",
                "itemId": 23,
                "sender": m(44),
                "message": FINAL_1_MSG,
                "final": True,
            },
            {"event": "answer_completed", "sender": m(44)},
            {"event": "text_reply", "itemId": 24, "sender": m(46), "text": "what is this?"},
            {
                "event": "reply",
                "itemId": 25,
                "sender": m(45),
                "message": PROGRESS_1_MSG,
                "final": False,
            },
            {"event": "timed_out", "replies": [21, 22, 23, 24, 25]},
        ],
        comment="a broadcast waits for the deadline; a member's late message after its final one is still collected",
    )
    add(
        "group-broadcast-expected-members-complete-early",
        ["CALL-CLR-2", "CALL-GRP-2"],
        call(
            {"type": "group", "groupId": 15},
            [
                {"at": 1, "item": g_item(21, 45, FINAL_1, 20)},
                {"at": 2, "item": g_item(22, 44, FINAL_1, 20)},
                {"at": 3, "item": g_item(23, 46, FINAL_1, 20)},
            ],
            expected=[44, 45],
        ),
        [
            {
                "event": "reply",
                "itemId": 21,
                "sender": m(45),
                "message": FINAL_1_MSG,
                "final": True,
            },
            {"event": "answer_completed", "sender": m(45)},
            {
                "event": "reply",
                "itemId": 22,
                "sender": m(44),
                "message": FINAL_1_MSG,
                "final": True,
            },
            {"event": "answer_completed", "sender": m(44)},
            {"event": "completed", "replies": [21, 22]},
            {"event": "ignored", "itemId": 23, "reason": "call_ended"},
        ],
    )
    add(
        "no-final-rule-collects-until-deadline",
        ["CALL-CLR-2"],
        call(
            DIRECT,
            [{"at": 1, "item": d_item(21, FINAL_1, 20)}, {"at": 10, "tick": True}],
            final=None,
            deadline=10,
        ),
        [
            {"event": "reply", "itemId": 21, "sender": C4, "message": FINAL_1_MSG, "final": False},
            {"event": "timed_out", "replies": [21]},
        ],
    )
    add(
        "unreadable-item-is-ignored",
        ["CALL-CLR-1"],
        call(
            DIRECT,
            [
                {"at": 1, "item": {"chatInfo": {"type": "direct"}, "chatItem": {}}},
                {"at": 2, "item": d_item(22, FINAL_1, 20)},
            ],
        ),
        [
            {"event": "ignored", "itemId": None, "reason": "unreadable"},
            {"event": "reply", "itemId": 22, "sender": C4, "message": FINAL_1_MSG, "final": True},
            {"event": "answer_completed", "sender": C4},
            {"event": "completed", "replies": [22]},
        ],
    )
    return C


# ======================================================================== triage

T = "chat_call.triage"


def triage_cases() -> list[dict[str, Any]]:
    me = {"my_names": ["Acme bot"]}

    def t(
        name: str, reqs: list[str], text: str, expected: dict[str, Any], comment: str | None = None
    ) -> dict[str, Any]:
        return case(T, name, reqs, text, "valid", expected=expected, args=me, comment=comment)

    def out(
        disposition: str,
        protocol: str | None = None,
        member: str | None = None,
        code: str | None = None,
    ) -> dict[str, Any]:
        return {"disposition": disposition, "protocol": protocol, "member": member, "code": code}

    return [
        t(
            "broadcast-is-answered",
            ["CALL-BOT-1", "CALL-GRP-2"],
            '/_call mcp {"id":1}',
            out("answer", "mcp"),
        ),
        t(
            "mention-of-us-is-answered",
            ["CALL-BOT-1", "CALL-GRP-1"],
            "/_call @'Acme bot' mcp {}",
            out("answer", "mcp", "Acme bot"),
        ),
        t(
            "mention-of-another-is-ignored",
            ["CALL-GRP-1"],
            "/_call @Other mcp {}",
            out("ignore", "mcp", "Other"),
        ),
        t(
            "mention-compares-exactly",
            ["CALL-GRP-1"],
            "/_call @'acme bot' mcp {}",
            out("ignore", "mcp", "acme bot"),
        ),
        t(
            "malformed-request-for-us-gets-the-protocol-error",
            ["CALL-BOT-1", "CALL-CMD-2"],
            "/_call mcp {oops",
            out("answer_error", "mcp", None, "request_not_json"),
        ),
        t(
            "malformed-request-for-another-is-ignored",
            ["CALL-GRP-1"],
            "/_call @Other mcp {oops",
            out("ignore", "mcp", "Other", "request_not_json"),
        ),
        t(
            "missing-request-gets-the-protocol-error",
            ["CALL-CMD-2"],
            "/_call a2a",
            out("answer_error", "a2a", None, "missing_request"),
        ),
        t(
            "non-object-request-gets-the-protocol-error",
            ["CALL-CMD-2"],
            "/_call mcp [1]",
            out("answer_error", "mcp", None, "request_not_object"),
        ),
        t(
            "unknown-protocol-shape-is-ignored",
            ["NAME-1"],
            "/_call MCP {}",
            out("ignore", None, None, "bad_protocol_name"),
            comment="no protocol's error format applies (AMB-1: silence is acceptable)",
        ),
        t(
            "bad-mention-is-ignored",
            ["CALL-CMD-4"],
            "/_call @bob, mcp {}",
            out("ignore", None, None, "bad_mention"),
        ),
        case(
            T,
            "ordinary-text-is-not-a-call",
            ["CALL-CMD-1"],
            "hello",
            "valid",
            expected={"disposition": "not_a_call"},
            args=me,
        ),
        case(
            T,
            "other-command-word-is-not-a-call",
            ["CALL-CMD-1"],
            "/_callmcp {}",
            "valid",
            expected={"disposition": "not_a_call"},
            args=me,
        ),
    ]


# ======================================================================== replies

R = "chat_call.reply"
CMD_TEXT = '/_call mcp {"jsonrpc":"2.0","id":7,"method":"tools/call"}'
ERROR_REPLY = {
    "jsonrpc": "2.0",
    "id": 7,
    "error": {"code": -32603, "message": "Response too large"},
}
ERROR_TEXT = '{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Response too large"}}'
RESULT_PREFIX = '{"id":7,"result":"'


def reply_cases() -> list[dict[str, Any]]:
    reqs = ["CALL-REP-1", "CALL-REP-2", "CALL-SIZE-3"]

    # Texts here have no escapes but quote characters (2 bytes each), so a text costs its
    # length plus its number of quote characters.
    def cost(text: str) -> int:
        return len(text) + text.count('"')

    cmd_cost = cost(CMD_TEXT)  # 57 characters, 10 quote characters
    # room for the reply text in a group: 15,602 - 114 - 188 - 67 = 15,233 bytes
    room_group = LIMIT - ENVELOPE - QUOTE_GROUP - cmd_cost
    fixed = cost(RESULT_PREFIX + '"}')  # the reply around its "a"s
    fits = {"id": 7, "result": "a" * (room_group - fixed)}
    over = {"id": 7, "result": "a" * (room_group - fixed + 1)}
    fits_text = RESULT_PREFIX + "a" * (room_group - fixed) + '"}'
    base = {"commandItemId": 20, "commandText": CMD_TEXT, "oversize": ERROR_REPLY}
    return [
        case(
            R,
            "small-direct",
            ["CALL-REP-1", "CALL-REP-2"],
            {**base, "message": {"jsonrpc": "2.0", "id": 7, "result": {}}, "inGroup": False},
            "valid",
            expected={
                "text": '{"jsonrpc":"2.0","id":7,"result":{}}',
                "quotedItemId": 20,
                "size": ENVELOPE + QUOTE_DIRECT + cmd_cost + 36 + 8,
                "replaced": False,
            },
            comment="36 characters, 8 quote characters",
        ),
        case(
            R,
            "at-limit-group",
            reqs,
            {**base, "message": fits, "inGroup": True},
            "valid",
            expected={"text": fits_text, "quotedItemId": 20, "size": LIMIT, "replaced": False},
        ),
        case(
            R,
            "over-limit-group-is-replaced",
            reqs,
            {**base, "message": over, "inGroup": True},
            "valid",
            expected={
                "text": ERROR_TEXT,
                "quotedItemId": 20,
                "size": ENVELOPE + QUOTE_GROUP + cmd_cost + cost(ERROR_TEXT),
                "replaced": True,
            },
        ),
        case(
            R,
            "same-reply-fits-direct",
            reqs,
            {**base, "message": over, "inGroup": False},
            "valid",
            expected={
                "text": RESULT_PREFIX + "a" * (room_group - fixed + 1) + '"}',
                "quotedItemId": 20,
                "size": LIMIT + 1 - (QUOTE_GROUP - QUOTE_DIRECT),
                "replaced": False,
            },
            comment="a direct chat's quote is 38 bytes shorter",
        ),
        case(
            R,
            "over-limit-without-replacement",
            reqs,
            {"commandItemId": 20, "commandText": CMD_TEXT, "message": over, "inGroup": True},
            "invalid",
            error="too_large",
        ),
    ]


# ======================================================================== files


def file(
    family: str,
    operation: str,
    source: str,
    output: str,
    notes: dict[str, Any],
    tests: list[dict[str, Any]],
    fmt: str | None = None,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema": "simplex-protocols/vectors/1",
        "family": family,
        "operation": operation,
    }
    if fmt:
        data["format_operation"] = fmt
    data.update(
        {
            "source": source,
            "spec_revision": REVISION,
            "generator": GENERATOR,
            "output": output,
            "notes": notes,
            "tests": tests,
        }
    )
    return data


def files() -> dict[str, dict[str, Any]]:
    return {
        "parse.json": file(
            P,
            "chat_call.parse",
            f"{SPEC}, Chat transport > Commands; Protocol names; mentions as in simplex-chat src/Simplex/Chat/Markdown.hs",
            'The command as {"protocol", "member" (null without a mention), "request" (the decoded JSON object), '
            '"request_text" (the request exactly as written)}. Formatting {"protocol", "member", "request_text"} back '
            'writes "/_call", then "@" and the mention, the protocol and the request text, one space between parts.',
            PARSE_NOTES,
            parse_cases(),
            fmt="chat_call.format",
        ),
        "mention.json": file(
            M,
            "chat_call.parse_mention",
            f"{SPEC}, Chat transport > Commands (@<member>); simplex-chat Markdown.hs displayNameTextP_ and viewName",
            "The member's name. Formatting the name back gives the mention as the core writes it.",
            MENTION_NOTES,
            mention_cases(),
            fmt="chat_call.format_mention",
        ),
        "format_mention.json": file(
            F,
            "chat_call.format_mention",
            f"{SPEC}, Chat transport > Commands (@<member>); simplex-chat Markdown.hs viewName",
            "The mention as the core writes it: @name, or @'name' when the name has a space character or ends with punctuation.",
            {},
            format_mention_cases(),
        ),
        "size.json": file(
            S,
            "chat_call.check_size",
            f"{SPEC}, Chat transport > Message size; simplex-chat Protocol.hs maxEncodedMsgLength and encodeChatMessage; x.msg.new envelope measured (MCP server plan, Card size); see docs/chat_call.md",
            "The encoded size in bytes of the x.msg.new message that carries the text (args.quoted_text: the text of the "
            "quoted command, for a reply; args.in_group: a group quote also names the quoted member); error too_large when "
            "it exceeds 15,602 bytes.",
            SIZE_NOTES,
            size_cases(),
        ),
        "collect.json": file(
            K,
            "chat_call.collect",
            f"{SPEC}, Chat transport > Replies",
            "The events of a caller collecting replies to the command with item ID commandItemId, sent to target; each step "
            'passes a received item (the core\'s AChatItem JSON) at time "at", or only the time. Events: '
            '{"event": "reply", "itemId", "sender", "message", "final"}, {"event": "text_reply", "itemId", "sender", "text"}, '
            '{"event": "ignored", "itemId", "reason"}, {"event": "answer_completed", "sender"}, '
            '{"event": "completed" | "timed_out", "replies": [item IDs in arrival order]}. '
            'A sender is {"contactId"} or {"groupMemberId"}. final: a message ends its sender\'s answer when it is a JSON-RPC '
            "response (result or error) whose id equals final.jsonrpcId. The wait ends at the deadline, or when every expected "
            "sender (the contact, the mentioned member, or expectedMembers) has sent a final message.",
            {},
            collect_cases(),
        ),
        "triage.json": file(
            T,
            "chat_call.triage",
            f"{SPEC}, Chat transport > Commands (CALL-BOT-1)",
            '{"disposition": "answer" | "answer_error" | "ignore", "protocol", "member", "code"} for a /_call addressed '
            'or not to a bot whose names are args.my_names; {"disposition": "not_a_call"} for other text.',
            {},
            triage_cases(),
        ),
        "reply.json": file(
            R,
            "chat_call.reply",
            f"{SPEC}, Chat transport > Replies and Message size",
            '{"text", "quotedItemId", "size", "replaced"}: the reply to send, quoting the command; a message over the limit is '
            "replaced by input.oversize (CALL-SIZE-3); error too_large when nothing fits.",
            {},
            reply_cases(),
        ),
    }


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=True, indent=1) + "\n"


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in files().items():
        (OUT / name).write_text(render(data), encoding="utf-8")
        print(f"wrote {OUT / name} ({len(data['tests'])} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
