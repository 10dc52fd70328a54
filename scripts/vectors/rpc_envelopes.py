"""Generate the envelope, error-class and size vectors of spec/vectors/rpc/.

Writes request.json (rpc.parse_request), response.json (rpc.parse_response), error-class.json
(rpc.classify_error) and sizes.json (rpc.padded_size). Every input is written here as the exact
wire text; the expected values are written by hand, not computed by the library. Run from the
repository root:

    python scripts/vectors/rpc_envelopes.py
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[2] / "spec" / "vectors" / "rpc"
GENERATOR = "scripts/vectors/rpc_envelopes.py"
SPEC_REVISION = "2026-10-21"
KEY_A = "MCowBQYDK2VwAyEAA6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="


def write(name: str, data: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def case(
    family: str,
    name: str,
    reqs: list[str],
    text: str | None,
    result: str,
    *,
    expected: Any = None,
    error: str | None = None,
    flags: list[str] | None = None,
    comment: str | None = None,
    canonical: bool | None = None,
    raw: bytes | None = None,
    args: dict[str, Any] | None = None,
    strict: dict[str, Any] | None = None,
) -> dict[str, Any]:
    c: dict[str, Any] = {"id": f"{family}/{name}", "requirements": reqs}
    if flags:
        c["flags"] = flags
    if raw is not None:
        c["input_b64"] = base64.b64encode(raw).decode("ascii")
    else:
        c["input"] = text
    if args is not None:
        c["args"] = args
    c["result"] = result
    if expected is not None:
        c["expected"] = expected
    if error is not None:
        c["error"] = error
    if canonical is not None:
        c["canonical"] = canonical
    if strict is not None:
        c["strict"] = strict
    if comment:
        c["comment"] = comment
    return c


#: The spec's own error codes (Service RPC > Errors), in the spec's order.
KNOWN_CODES = (
    "unsupported_protocol",
    "unsupported_version",
    "bad_request",
    "conversation_required",
    "too_large",
    "rate_limited",
    "internal",
)

#: The strict profile's reading of a repeated member name: refused.
STRICT_DUPLICATE = {"result": "invalid", "error": "duplicate_key"}

COMMON_NOTES = {
    "DeepNesting": {
        "bug_class": "RESOURCE_LIMIT",
        "description": "JSON nested deeper than 64 levels.",
        "acceptable": "The spec sets no depth limit and aeson reads any depth; this library refuses past 64 levels to protect its stack (too_deep). Either outcome conforms.",
    },
    "HugeNumber": {
        "bug_class": "RESOURCE_LIMIT",
        "description": "A number beyond the range of a double (1e400).",
        "acceptable": "aeson keeps it as a Scientific; this library refuses it (bad_number). For retryAfter both refuse, with different codes. Either outcome conforms.",
    },
    "LoneSurrogate": {
        "bug_class": "INVALID_UNICODE",
        "description": "A string with an unpaired surrogate escape.",
        "acceptable": "aeson replaces it with U+FFFD; this library refuses it (lone_surrogate). Either outcome conforms.",
    },
    "DuplicateKey": {
        "bug_class": "AMBIGUOUS_INPUT",
        "description": "An object with the same key twice, as raw text.",
        "effect": "Two readers could see two different envelopes.",
        "acceptable": "JSON (RFC 8259) says names SHOULD be unique and leaves what a reader does with a repeated one open; the spec adds nothing. Refusing (this library: duplicate_key, the strict profile) and reading one of the values both conform.",
    },
    "NotJSON": {
        "bug_class": "MALFORMED_INPUT",
        "description": "Text that is not JSON.",
        "effect": "Refused with not_json; the responder answers bad_request.",
    },
    "UnknownMembers": {
        "bug_class": "FORWARD_COMPATIBILITY",
        "description": "Members the spec does not define.",
        "effect": "Allowed by the schema (additionalProperties); kept, never an error (RPC-REQ-7).",
    },
    "PeerText": {
        "bug_class": "UNTRUSTED_TEXT",
        "description": "Control characters or bidirectional marks in peer-supplied text.",
        "effect": "Valid JSON, kept as received; whoever shows it sanitises it.",
    },
    "NonCanonical": {
        "bug_class": "ENCODING_VARIANT",
        "description": "Valid JSON written otherwise than the core writes it (spaces, key order, number form).",
        "effect": "Read the same; written back in the core's form, so the round trip is not byte-exact.",
    },
}

# --------------------------------------------------------------------------- request.json

REQ = "rpc.request"
TOOLS_LIST = '{"id":1,"jsonrpc":"2.0","method":"tools/list"}'
TOOLS_LIST_V = {"id": 1, "jsonrpc": "2.0", "method": "tools/list"}


def req_expected(
    protocol: str,
    request: Any,
    *,
    version: Any = ...,
    request_key: str | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"protocol": protocol, "request": request}
    if version is not ...:
        out["version"] = version
    out["request_key"] = request_key
    out["extra"] = extra or {}
    return out


SPEC_MCP_REQUEST = """{
  "protocol": "mcp",
  "request": {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {
      "name": "availability",
      "arguments": {"item": "anvil"},
      "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
      }
    }
  }
}"""
SPEC_MCP_REQUEST_V = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {
        "name": "availability",
        "arguments": {"item": "anvil"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    },
}
A2A_REQUEST = '{"protocol":"a2a","request":{"a2a-service-parameters":{"A2A-Version":"1.0"},"id":1,"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"messageId":"m-1","parts":[{"text":"Price of two anvils delivered to Lisbon"}],"role":"ROLE_USER"}}}}'
A2A_REQUEST_V = json.loads(A2A_REQUEST)["request"]


def request_cases() -> list[dict[str, Any]]:
    def c(name: str, reqs: list[str], text: str | None, result: str, **kw: Any) -> dict[str, Any]:
        return case(REQ, name, reqs, text, result, **kw)

    r1 = ["RPC-REQ-1"]
    deep_ok = '{"protocol":"mcp","request":' + "[" * 63 + "]" * 63 + "}"
    deep_bad = '{"protocol":"mcp","request":' + "[" * 64 + "]" * 64 + "}"
    nested: Any = []
    for _ in range(62):
        nested = [nested]
    return [
        c(
            "minimal-mcp",
            ["RPC-REQ-1", "RPC-REQ-2", "RPC-REQ-6"],
            f'{{"protocol":"mcp","request":{TOOLS_LIST}}}',
            "valid",
            expected=req_expected("mcp", TOOLS_LIST_V),
        ),
        c(
            "spec-example-mcp-tools-call",
            ["RPC-REQ-1", "RPC-REQ-3"],
            SPEC_MCP_REQUEST,
            "valid",
            expected=req_expected("mcp", SPEC_MCP_REQUEST_V),
            canonical=False,
            flags=["NonCanonical"],
            comment="the spec's example, with its whitespace and key order",
        ),
        c(
            "spec-example-a2a-send-message",
            ["RPC-REQ-1", "RPC-REQ-6"],
            A2A_REQUEST,
            "valid",
            expected=req_expected("a2a", A2A_REQUEST_V),
        ),
        c(
            "version-number",
            ["RPC-REQ-1", "RPC-REQ-3"],
            '{"protocol":"x-proto","request":{},"version":1}',
            "valid",
            expected=req_expected("x-proto", {}, version=1),
        ),
        c(
            "version-string",
            ["RPC-REQ-3"],
            '{"protocol":"x-proto","request":{},"version":"2.1"}',
            "valid",
            expected=req_expected("x-proto", {}, version="2.1"),
        ),
        c(
            "version-null",
            ["RPC-REQ-3"],
            '{"protocol":"x-proto","request":{},"version":null}',
            "valid",
            expected=req_expected("x-proto", {}, version=None),
            comment="version has the empty schema: null is a present version, not an absent one",
        ),
        c(
            "version-object",
            ["RPC-REQ-3"],
            '{"protocol":"x-proto","request":{},"version":{"major":2,"minor":0}}',
            "valid",
            expected=req_expected("x-proto", {}, version={"major": 2, "minor": 0}),
        ),
        c(
            "request-null",
            r1,
            '{"protocol":"mcp","request":null}',
            "valid",
            expected=req_expected("mcp", None),
            comment="the envelope accepts any request; the binding decides",
        ),
        c(
            "request-array",
            r1,
            '{"protocol":"mcp","request":[1,2]}',
            "valid",
            expected=req_expected("mcp", [1, 2]),
        ),
        c(
            "request-string",
            r1,
            '{"protocol":"mcp","request":"tools/list"}',
            "valid",
            expected=req_expected("mcp", "tools/list"),
        ),
        c(
            "with-request-key",
            ["RPC-REQ-1", "RPC-REQ-4", "RPC-REQ-5"],
            f'{{"protocol":"mcp","request":{TOOLS_LIST},"requestKey":"{KEY_A}"}}',
            "valid",
            expected=req_expected("mcp", TOOLS_LIST_V, request_key=KEY_A),
        ),
        c(
            "unknown-members",
            ["RPC-REQ-7"],
            '{"extra":{"a":1},"protocol":"mcp","request":{},"zzz":true}',
            "valid",
            expected=req_expected("mcp", {}, extra={"extra": {"a": 1}, "zzz": True}),
            flags=["UnknownMembers"],
        ),
        c(
            "protocol-digits-hyphens",
            ["RPC-REQ-2"],
            '{"protocol":"my-proto-2","request":{}}',
            "valid",
            expected=req_expected("my-proto-2", {}),
        ),
        c(
            "protocol-leading-hyphen",
            ["RPC-REQ-2"],
            '{"protocol":"-x","request":{}}',
            "valid",
            expected=req_expected("-x", {}),
            comment="lowercase letters, digits and hyphens, in any order",
        ),
        c(
            "key-order-and-spaces",
            ["RPC-REQ-1"],
            '{ "request" : {} , "protocol" : "mcp" }',
            "valid",
            expected=req_expected("mcp", {}),
            canonical=False,
            flags=["NonCanonical"],
        ),
        c(
            "big-integer",
            r1,
            '{"protocol":"mcp","request":{"n":123456789012345678901234567890}}',
            "valid",
            expected=req_expected("mcp", {"n": 123456789012345678901234567890}),
        ),
        c(
            "escaped-control-characters",
            r1,
            '{"protocol":"mcp","request":{"t":"a\\u0000b\\u001fc\\n"}}',
            "valid",
            expected=req_expected("mcp", {"t": "a\u0000b\u001fc\n"}),
            flags=["PeerText"],
        ),
        c(
            "bidi-marks",
            r1,
            '{"protocol":"mcp","request":{"t":"\u202egnp.exe\u202c \u200f\u2066x\u2069"}}',
            "valid",
            expected=req_expected("mcp", {"t": "\u202egnp.exe\u202c \u200f\u2066x\u2069"}),
            flags=["PeerText"],
        ),
        c(
            "nesting-64",
            r1,
            deep_ok,
            "valid",
            expected=req_expected("mcp", nested),
            comment="64 levels: the envelope and 63 nested arrays",
        ),
        c(
            "protocol-uppercase",
            ["RPC-REQ-2"],
            '{"protocol":"MCP","request":{}}',
            "invalid",
            error="bad_protocol_name",
        ),
        c(
            "protocol-empty",
            ["RPC-REQ-2"],
            '{"protocol":"","request":{}}',
            "invalid",
            error="bad_protocol_name",
        ),
        c(
            "protocol-trailing-space",
            ["RPC-REQ-2"],
            '{"protocol":"mcp ","request":{}}',
            "invalid",
            error="bad_protocol_name",
        ),
        c(
            "protocol-underscore",
            ["RPC-REQ-2"],
            '{"protocol":"my_proto","request":{}}',
            "invalid",
            error="bad_protocol_name",
        ),
        c(
            "protocol-homoglyph",
            ["RPC-REQ-2"],
            '{"protocol":"m\u0441p","request":{}}',
            "invalid",
            error="bad_protocol_name",
            comment="Cyrillic es in place of c",
        ),
        c("protocol-number", r1, '{"protocol":1,"request":{}}', "invalid", error="schema"),
        c("protocol-null", r1, '{"protocol":null,"request":{}}', "invalid", error="schema"),
        c("protocol-missing", r1, '{"request":{}}', "invalid", error="schema"),
        c("request-missing", r1, '{"protocol":"mcp"}', "invalid", error="schema"),
        c(
            "request-key-number",
            ["RPC-REQ-1", "RPC-REQ-4"],
            '{"protocol":"mcp","request":{},"requestKey":1}',
            "invalid",
            error="schema",
        ),
        c(
            "request-key-null",
            ["RPC-REQ-1", "RPC-REQ-4"],
            '{"protocol":"mcp","request":{},"requestKey":null}',
            "invalid",
            error="schema",
            comment="requestKey is optional but not nullable",
        ),
        c(
            "request-key-malformed",
            ["RPC-REQ-4"],
            '{"protocol":"mcp","request":{},"requestKey":"abc"}',
            "invalid",
            error="bad_request_key",
        ),
        c(
            "request-key-standard-alphabet",
            ["RPC-REQ-4"],
            '{"protocol":"mcp","request":{},"requestKey":"' + KEY_A.replace("_", "/") + '"}',
            "invalid",
            error="bad_request_key",
        ),
        c("array", r1, "[]", "invalid", error="not_an_object"),
        c("string", r1, '"mcp"', "invalid", error="not_an_object"),
        c("null", r1, "null", "invalid", error="not_an_object"),
        c("not-json", r1, "/_call mcp {}", "invalid", error="not_json", flags=["NotJSON"]),
        c("empty", r1, "", "invalid", error="not_json", flags=["NotJSON"]),
        c(
            "trailing-text",
            r1,
            '{"protocol":"mcp","request":{}} x',
            "invalid",
            error="not_json",
            flags=["NotJSON"],
        ),
        c(
            "nan",
            r1,
            '{"protocol":"mcp","request":NaN}',
            "invalid",
            error="not_json",
            flags=["NotJSON"],
        ),
        c(
            "raw-control-character",
            r1,
            '{"protocol":"mcp","request":"a\u0001b"}',
            "invalid",
            error="not_json",
            flags=["NotJSON"],
            comment="control characters must be escaped inside JSON strings",
        ),
        c(
            "duplicate-protocol",
            r1,
            '{"protocol":"mcp","protocol":"a2a","request":{}}',
            "acceptable",
            strict=STRICT_DUPLICATE,
            flags=["DuplicateKey"],
        ),
        c(
            "duplicate-nested",
            r1,
            '{"protocol":"mcp","request":{"id":1,"id":2}}',
            "acceptable",
            strict=STRICT_DUPLICATE,
            flags=["DuplicateKey"],
        ),
        c(
            "byte-order-mark",
            r1,
            None,
            "invalid",
            raw=b'\xef\xbb\xbf{"protocol":"mcp","request":{}}',
            error="not_json",
            flags=["NotJSON"],
        ),
        c(
            "not-utf8",
            r1,
            None,
            "invalid",
            raw=b'{"protocol":"mcp","request":"\xff"}',
            error="not_utf8",
            flags=["NotJSON"],
        ),
        c("nesting-65", r1, deep_bad, "acceptable", flags=["DeepNesting"]),
        c(
            "huge-number",
            r1,
            '{"protocol":"mcp","request":{"n":1e400}}',
            "acceptable",
            flags=["HugeNumber"],
        ),
        c(
            "lone-surrogate",
            r1,
            '{"protocol":"mcp","request":{"t":"\\ud800"}}',
            "acceptable",
            flags=["LoneSurrogate"],
        ),
    ]


# --------------------------------------------------------------------------- response.json

RESP = "rpc.response"
SPEC_RESPONSE = """{
  "response": {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {
      "resultType": "complete",
      "content": [{"type": "text", "text": "12 anvils are in stock."}],
      "isError": false
    }
  }
}"""
SPEC_RESPONSE_V = {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {
        "resultType": "complete",
        "content": [{"type": "text", "text": "12 anvils are in stock."}],
        "isError": False,
    },
}


def ok(response: Any, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"response": response, "extra": extra or {}}


def err(
    code: str,
    *,
    message: str | None = None,
    retry_after: int | None = None,
    extra: dict[str, Any] | None = None,
    top: dict[str, Any] | None = None,
) -> dict[str, Any]:
    known = code in KNOWN_CODES
    body: dict[str, Any] = {"code": code, "known": known}
    if message is not None:
        body["message"] = message
    if retry_after is not None:
        body["retry_after"] = retry_after
    body["extra"] = extra or {}
    return {"error": body, "extra": top or {}}


def response_cases() -> list[dict[str, Any]]:
    def c(name: str, reqs: list[str], text: str | None, result: str, **kw: Any) -> dict[str, Any]:
        return case(RESP, name, reqs, text, result, **kw)

    e1, e2, err1 = ["RPC-ENV-1"], ["RPC-ENV-2"], ["RPC-ERR-1", "RPC-ENV-2"]
    out = [
        c(
            "spec-example",
            ["RPC-ENV-1", "RPC-ENV-2", "RPC-ENV-3"],
            SPEC_RESPONSE,
            "valid",
            expected=ok(SPEC_RESPONSE_V),
            canonical=False,
            flags=["NonCanonical"],
        ),
        c(
            "success-compact",
            ["RPC-ENV-1", "RPC-ENV-2"],
            '{"response":{"id":1,"jsonrpc":"2.0","result":{"tools":[]}}}',
            "valid",
            expected=ok({"id": 1, "jsonrpc": "2.0", "result": {"tools": []}}),
        ),
        c(
            "response-null",
            e1,
            '{"response":null}',
            "valid",
            expected=ok(None),
            flags=["NullResponse"],
        ),
        c("response-string", e1, '{"response":"done"}', "valid", expected=ok("done")),
        c("response-false", e1, '{"response":false}', "valid", expected=ok(False)),
    ]
    for code in KNOWN_CODES:
        out.append(
            c(
                f"code-{code.replace('_', '-')}",
                err1,
                f'{{"error":{{"code":"{code}"}}}}',
                "valid",
                expected=err(code),
            )
        )
    out += [
        c(
            "with-message",
            err1,
            '{"error":{"code":"internal","message":"the handler failed"}}',
            "valid",
            expected=err("internal", message="the handler failed"),
        ),
        c(
            "retry-after-zero",
            ["RPC-ENV-2", "RPC-ERR-5"],
            '{"error":{"code":"rate_limited","retryAfter":0}}',
            "valid",
            expected=err("rate_limited", retry_after=0),
        ),
        c(
            "retry-after-max-uint32",
            ["RPC-ENV-2", "RPC-ERR-5"],
            '{"error":{"code":"rate_limited","retryAfter":4294967295}}',
            "valid",
            expected=err("rate_limited", retry_after=4294967295),
        ),
        c(
            "retry-after-3.0",
            e2,
            '{"error":{"code":"rate_limited","retryAfter":3.0}}',
            "valid",
            expected=err("rate_limited", retry_after=3),
            canonical=False,
            flags=["NonCanonical"],
            comment="JTD: an integer type accepts a number with zero fraction",
        ),
        c(
            "retry-after-exponent",
            e2,
            '{"error":{"code":"rate_limited","retryAfter":1e2}}',
            "valid",
            expected=err("rate_limited", retry_after=100),
            canonical=False,
            flags=["NonCanonical"],
        ),
        c(
            "unknown-code",
            ["RPC-ERR-6", "RPC-ENV-2"],
            '{"error":{"code":"quota_exceeded"}}',
            "valid",
            expected=err("quota_exceeded"),
        ),
        c(
            "unknown-code-with-retry-after",
            ["RPC-ERR-6"],
            '{"error":{"code":"quota_exceeded","retryAfter":60}}',
            "valid",
            expected=err("quota_exceeded", retry_after=60),
        ),
        c("code-empty-string", ["RPC-ERR-6"], '{"error":{"code":""}}', "valid", expected=err("")),
        c(
            "code-other-case",
            ["RPC-ERR-1", "RPC-ERR-6"],
            '{"error":{"code":"BAD_REQUEST"}}',
            "valid",
            expected=err("BAD_REQUEST"),
            comment="codes are case-sensitive: this one is unknown",
        ),
        c(
            "unknown-members",
            ["RPC-ENV-2", "RPC-REQ-7"],
            '{"error":{"code":"internal","traceId":"t-1"},"v":2}',
            "valid",
            expected=err("internal", extra={"traceId": "t-1"}, top={"v": 2}),
            flags=["UnknownMembers"],
        ),
        c(
            "unknown-members-success",
            ["RPC-ENV-2"],
            '{"meta":{"ms":12},"response":{}}',
            "valid",
            expected=ok({}, {"meta": {"ms": 12}}),
            flags=["UnknownMembers"],
        ),
        c(
            "message-control-characters",
            e2,
            '{"error":{"code":"internal","message":"line1\\nline2\\u0007\\u001b[31m"}}',
            "valid",
            expected=err("internal", message="line1\nline2\u0007\u001b[31m"),
            flags=["PeerText"],
        ),
        c(
            "message-bidi",
            e2,
            '{"error":{"code":"bad_request","message":"\u202etxt.exe\u202c"}}',
            "valid",
            expected=err("bad_request", message="\u202etxt.exe\u202c"),
            flags=["PeerText"],
        ),
        c(
            "message-empty",
            e2,
            '{"error":{"code":"internal","message":""}}',
            "valid",
            expected=err("internal", message=""),
        ),
        c(
            "both",
            e1,
            '{"error":{"code":"internal"},"response":{}}',
            "invalid",
            error="both_response_and_error",
            flags=["BothFields"],
        ),
        c(
            "both-null-response",
            e1,
            '{"error":{"code":"internal"},"response":null}',
            "invalid",
            error="both_response_and_error",
            flags=["BothFields", "NullResponse"],
        ),
        c(
            "error-null",
            e2,
            '{"error":null,"response":{}}',
            "invalid",
            error="schema",
            comment="error is not nullable: the schema fails before the exactly-one rule",
        ),
        c(
            "neither",
            e1,
            "{}",
            "invalid",
            error="neither_response_nor_error",
            flags=["NeitherField"],
        ),
        c(
            "neither-extra-only",
            e1,
            '{"result":{}}',
            "invalid",
            error="neither_response_nor_error",
            flags=["NeitherField"],
            comment="a JSON-RPC result member is not the envelope's response",
        ),
        c(
            "retry-after-negative",
            e2,
            '{"error":{"code":"rate_limited","retryAfter":-1}}',
            "invalid",
            error="schema",
            flags=["Uint32"],
        ),
        c(
            "retry-after-2-pow-32",
            e2,
            '{"error":{"code":"rate_limited","retryAfter":4294967296}}',
            "invalid",
            error="schema",
            flags=["Uint32"],
        ),
        c(
            "retry-after-fraction",
            e2,
            '{"error":{"code":"rate_limited","retryAfter":3.5}}',
            "invalid",
            error="schema",
            flags=["Uint32"],
        ),
        c(
            "retry-after-true",
            e2,
            '{"error":{"code":"rate_limited","retryAfter":true}}',
            "invalid",
            error="schema",
            flags=["Uint32"],
        ),
        c(
            "retry-after-string",
            e2,
            '{"error":{"code":"rate_limited","retryAfter":"5"}}',
            "invalid",
            error="schema",
            flags=["Uint32"],
        ),
        c(
            "retry-after-null",
            e2,
            '{"error":{"code":"rate_limited","retryAfter":null}}',
            "invalid",
            error="schema",
            flags=["Uint32"],
        ),
        c(
            "retry-after-huge",
            e2,
            '{"error":{"code":"rate_limited","retryAfter":1e400}}',
            "acceptable",
            flags=["HugeNumber"],
        ),
        c("code-missing", e2, '{"error":{"message":"x"}}', "invalid", error="schema"),
        c("code-number", e2, '{"error":{"code":400}}', "invalid", error="schema"),
        c("code-null", e2, '{"error":{"code":null}}', "invalid", error="schema"),
        c(
            "message-number",
            e2,
            '{"error":{"code":"internal","message":1}}',
            "invalid",
            error="schema",
        ),
        c("error-string", e2, '{"error":"internal"}', "invalid", error="schema"),
        c("error-array", e2, '{"error":[{"code":"internal"}]}', "invalid", error="schema"),
        c(
            "duplicate-response",
            e2,
            '{"response":1,"response":2}',
            "acceptable",
            strict=STRICT_DUPLICATE,
            flags=["DuplicateKey"],
        ),
        c(
            "duplicate-code",
            e2,
            '{"error":{"code":"internal","code":"rate_limited"}}',
            "acceptable",
            strict=STRICT_DUPLICATE,
            flags=["DuplicateKey"],
        ),
        c("array", e2, '[{"response":{}}]', "invalid", error="not_an_object"),
        c("not-json", e2, "response: ok", "invalid", error="not_json", flags=["NotJSON"]),
        c(
            "raw-newline-in-message",
            e2,
            '{"error":{"code":"internal","message":"a\nb"}}',
            "invalid",
            error="not_json",
            flags=["NotJSON"],
        ),
        c(
            "nesting-65",
            e2,
            '{"response":' + "[" * 64 + "]" * 64 + "}",
            "acceptable",
            flags=["DeepNesting"],
        ),
    ]
    return out


RESPONSE_NOTES = COMMON_NOTES | {
    "BothFields": {
        "bug_class": "AMBIGUOUS_INPUT",
        "description": "A response with both response and error.",
        "effect": "The requester cannot tell which one is meant (RPC-ENV-1).",
    },
    "NeitherField": {
        "bug_class": "MISSING_FIELD",
        "description": "A response with neither response nor error.",
        "effect": "Nothing to return (RPC-ENV-1).",
    },
    "NullResponse": {
        "bug_class": "READING",
        "description": "response present with the value null.",
        "effect": 'Our reading: a member is present when its key is, so {"response": null} is a response (RFC 8927 treats present null as present; the response schema accepts null).',
    },
    "Uint32": {
        "bug_class": "RANGE",
        "description": "retryAfter outside the JTD uint32 type (0 to 4294967295, integer-valued numbers).",
        "effect": "Refused by the schema (RPC-ENV-2).",
    },
}


# --------------------------------------------------------------------------- error-class.json

CLS = "rpc.error_class"


def error_class_cases() -> list[dict[str, Any]]:
    def c(
        name: str,
        reqs: list[str],
        text: str,
        expected: dict[str, Any] | None,
        result: str = "valid",
        **kw: Any,
    ) -> dict[str, Any]:
        return case(CLS, name, reqs, text, result, expected=expected, **kw)

    # Which class a library raises for each code is that library's business, so the
    # expected values name none.
    out = [c("success", ["RPC-ENV-1"], '{"response":{}}', {"outcome": "response"})]
    for code in KNOWN_CODES:
        if code == "rate_limited":
            continue
        out.append(
            c(
                f"{code.replace('_', '-')}-final",
                ["RPC-ERR-1"],
                f'{{"error":{{"code":"{code}"}}}}',
                {
                    "outcome": "final",
                    "code": code,
                    "known": True,
                    "retry_after": None,
                },
            )
        )
    out += [
        c(
            "rate-limited-with-retry-after",
            ["RPC-ERR-5"],
            '{"error":{"code":"rate_limited","retryAfter":30}}',
            {
                "outcome": "retryable",
                "code": "rate_limited",
                "known": True,
                "retry_after": 30,
            },
        ),
        c(
            "rate-limited-retry-after-zero",
            ["RPC-ERR-5"],
            '{"error":{"code":"rate_limited","retryAfter":0}}',
            {
                "outcome": "retryable",
                "code": "rate_limited",
                "known": True,
                "retry_after": 0,
            },
        ),
        c(
            "rate-limited-without-retry-after",
            ["RPC-ERR-5", "RPC-ERR-6"],
            '{"error":{"code":"rate_limited"}}',
            None,
            result="acceptable",
            flags=["RateLimitedNoWait"],
        ),
        c(
            "internal-with-retry-after",
            ["RPC-ERR-6"],
            '{"error":{"code":"internal","retryAfter":5}}',
            {
                "outcome": "retryable",
                "code": "internal",
                "known": True,
                "retry_after": 5,
            },
        ),
        c(
            "unknown-code-final",
            ["RPC-ERR-6"],
            '{"error":{"code":"quota_exceeded"}}',
            {
                "outcome": "final",
                "code": "quota_exceeded",
                "known": False,
                "retry_after": None,
            },
        ),
        c(
            "unknown-code-with-message-final",
            ["RPC-ERR-6"],
            '{"error":{"code":"maintenance","message":"back soon"}}',
            {
                "outcome": "final",
                "code": "maintenance",
                "known": False,
                "retry_after": None,
            },
        ),
        c(
            "unknown-code-with-retry-after",
            ["RPC-ERR-6"],
            '{"error":{"code":"quota_exceeded","retryAfter":3600}}',
            {
                "outcome": "retryable",
                "code": "quota_exceeded",
                "known": False,
                "retry_after": 3600,
            },
        ),
        c(
            "unknown-code-retry-after-zero",
            ["RPC-ERR-6"],
            '{"error":{"code":"busy","retryAfter":0}}',
            {
                "outcome": "retryable",
                "code": "busy",
                "known": False,
                "retry_after": 0,
            },
        ),
        c(
            "unknown-code-retry-after-in-extra",
            ["RPC-ERR-6"],
            '{"error":{"code":"busy","retry_after":5}}',
            {
                "outcome": "final",
                "code": "busy",
                "known": False,
                "retry_after": None,
            },
            comment="only retryAfter counts; other spellings are unknown members",
        ),
        case(
            CLS,
            "unknown-code-retry-after-null",
            ["RPC-ERR-6", "RPC-ENV-2"],
            '{"error":{"code":"busy","retryAfter":null}}',
            "invalid",
            error="schema",
        ),
    ]
    return out


CLASS_NOTES = {
    "RateLimitedNoWait": {
        "bug_class": "READING",
        "description": "rate_limited without retryAfter.",
        "acceptable": "The spec says the requester repeats after retryAfter but gives none here. This library treats it as final (no wait is known; a retry loop could hammer the responder). Retrying with a backoff also conforms.",
    },
}


# --------------------------------------------------------------------------- sizes.json

SIZES = "rpc.sizes"


def _response_of(json_bytes: int, char: str = "x") -> str:
    head, tail = '{"response":"', '"}'
    room = json_bytes - len(head) - len(tail)
    unit = len(char.encode("utf-8"))
    assert room % unit == 0, (json_bytes, char)
    return head + char * (room // unit) + tail


def _request_of(json_bytes: int, *, key: str | None = None) -> str:
    head = '{"protocol":"mcp","request":"'
    tail = '"}' if key is None else f'","requestKey":"{key}"}}'
    return head + "x" * (json_bytes - len(head) - len(tail)) + tail


def size_cases() -> list[dict[str, Any]]:
    out = []
    resp = {"kind": "response"}

    def c(
        name: str,
        reqs: list[str],
        text: str,
        args: dict[str, Any],
        padded: int | None,
        within: bool | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        json_bytes = len(text.encode("utf-8"))
        if padded is None:
            return case(SIZES, name, reqs, text, "invalid", error="too_large", args=args, **kw)
        return case(
            SIZES,
            name,
            reqs,
            text,
            "valid",
            args=args,
            expected={
                "json_bytes": json_bytes,
                "padded_bytes": padded,
                "within_recommended": within,
            },
            **kw,
        )

    # RPC-LIM-3: 10,000 bytes of JSON, a SHOULD NOT: a warning, never an error.
    out.append(c("json-9999", ["RPC-LIM-3"], _response_of(9999), resp, 10002, True))
    out.append(c("json-10000", ["RPC-LIM-3"], _response_of(10000), resp, 10003, True))
    out.append(
        c(
            "json-10001",
            ["RPC-LIM-3"],
            _response_of(10001),
            resp,
            10004,
            False,
            comment="over the recommendation: a warning, still sent",
        )
    )
    # RPC-LIM-2, response: 3 bytes of framing (2-byte length, 'P').
    out.append(c("response-padded-11105", ["RPC-LIM-2"], _response_of(11102), resp, 11105, False))
    out.append(c("response-padded-11106", ["RPC-LIM-2"], _response_of(11103), resp, 11106, False))
    out.append(
        c("response-padded-11107", ["RPC-LIM-2", "RPC-ERR-7"], _response_of(11104), resp, None)
    )
    # Escapes and multi-byte characters count as the core writes them.
    out.append(
        c(
            "response-escapes-at-limit",
            ["RPC-LIM-2"],
            '{"response":"' + "\\u0001" * 1848 + '"}',
            resp,
            11106,
            False,
            comment="each \\u0001 is six bytes of JSON",
        )
    )
    out.append(
        c(
            "response-escapes-over",
            ["RPC-LIM-2"],
            '{"response":"' + "\\u0001" * 1848 + 'x"}',
            resp,
            None,
        )
    )
    out.append(
        c(
            "response-two-byte-characters-over",
            ["RPC-LIM-2"],
            _response_of(11105, "é"),
            resp,
            None,
            comment="é is two bytes",
        )
    )
    out.append(
        c(
            "response-two-byte-characters-at-limit",
            ["RPC-LIM-2"],
            _response_of(11103, "é"),
            resp,
            11106,
            False,
        )
    )
    # RPC-LIM-2, unsigned request: 3 + 1 (queue count) + 187 (preset reply queue) + 1 ('0').
    req = {"kind": "request", "signed": False}
    out.append(
        c("request-unsigned-padded-11105", ["RPC-LIM-2"], _request_of(10913), req, 11105, False)
    )
    out.append(
        c("request-unsigned-padded-11106", ["RPC-LIM-2"], _request_of(10914), req, 11106, False)
    )
    out.append(c("request-unsigned-padded-11107", ["RPC-LIM-2"], _request_of(10915), req, None))
    # Signed: the signature field takes 111 bytes instead of 1.
    sreq = {"kind": "request", "signed": True}
    out.append(
        c(
            "request-signed-padded-11105",
            ["RPC-LIM-2", "RPC-SIG-1"],
            _request_of(10803, key=KEY_A),
            sreq,
            11105,
            False,
        )
    )
    out.append(
        c(
            "request-signed-padded-11106",
            ["RPC-LIM-2", "RPC-SIG-1"],
            _request_of(10804, key=KEY_A),
            sreq,
            11106,
            False,
        )
    )
    out.append(
        c(
            "request-signed-padded-11107",
            ["RPC-LIM-2", "RPC-SIG-1"],
            _request_of(10805, key=KEY_A),
            sreq,
            None,
        )
    )
    # A reply queue on a one-host server with a port: 2 + (1 + 16 + 5 + 33) + 25 + 45 + 1 = 128.
    own = {"kind": "request", "signed": False, "reply_queue_info_bytes": 128}
    out.append(
        c(
            "request-own-server-padded-11106",
            ["RPC-LIM-2"],
            _request_of(10973),
            own,
            11106,
            False,
            comment="reply queue on smp.example.com:5223",
        )
    )
    out.append(c("request-own-server-padded-11107", ["RPC-LIM-2"], _request_of(10974), own, None))
    small = '{"protocol":"mcp","request":{}}'
    out.append(c("request-small", ["RPC-LIM-2", "RPC-LIM-3"], small, req, len(small) + 192, True))
    return out


SIZE_NOTES = {
    "Framing": {
        "description": "The agent pads the agent message to 11,106 bytes with a 2-byte length prefix (simplexmq C.pad, e2eEncConnInfoLength PQSupportOn). A response message is 'P' then the JSON; a request message is 'A', a 1-byte count and the reply queue address (SMPQueueInfo), '0' or '1' with the 44-byte key and 64-byte signature (each length-prefixed), then the JSON."
    },
}


def main() -> None:
    src = "Agent protocols over SimpleX, revision 2 (2026-10-21), Service RPC transport > "
    write(
        "request.json",
        {
            "schema": "simplex-protocols/vectors/1",
            "family": "rpc.request",
            "operation": "rpc.parse_request",
            "format_operation": "rpc.format_request",
            "source": src + "Request",
            "spec_revision": SPEC_REVISION,
            "generator": GENERATOR,
            "output": "The request's typed form: {protocol, request, version (only when present), request_key (or null), extra (unknown members)}. format_request writes it back as the core encodes it: keys sorted, no whitespace.",
            "notes": COMMON_NOTES,
            "tests": request_cases(),
        },
    )
    write(
        "response.json",
        {
            "schema": "simplex-protocols/vectors/1",
            "family": "rpc.response",
            "operation": "rpc.parse_response",
            "format_operation": "rpc.format_response",
            "source": src + "Response",
            "spec_revision": SPEC_REVISION,
            "generator": GENERATOR,
            "output": "The response's typed form: {response, extra} or {error: {code, known, message?, retry_after?, extra}, extra}. format_response writes it back as the core encodes it.",
            "notes": RESPONSE_NOTES,
            "tests": response_cases(),
        },
    )
    write(
        "error-class.json",
        {
            "schema": "simplex-protocols/vectors/1",
            "family": "rpc.error_class",
            "operation": "rpc.classify_error",
            "source": src
            + "Response (error codes; A requester treats an unknown code as final, unless the error has retryAfter)",
            "spec_revision": SPEC_REVISION,
            "generator": GENERATOR,
            "output": "How a requester treats the response: {outcome: response} or {outcome: final|retryable, code, known, retry_after}.",
            "notes": CLASS_NOTES,
            "tests": error_class_cases(),
        },
    )
    write(
        "sizes.json",
        {
            "schema": "simplex-protocols/vectors/1",
            "family": "rpc.sizes",
            "operation": "rpc.padded_size",
            "source": src
            + "Exchange (Before encryption, the agent pads a request or a response, its own framing included, to 11,106 bytes; SHOULD NOT exceed 10,000 bytes of JSON)",
            "spec_revision": SPEC_REVISION,
            "generator": GENERATOR,
            "output": "Input: the envelope JSON as the core writes it; args: kind (request or response), signed, reply_queue_info_bytes (default 187). Valid: {json_bytes, padded_bytes, within_recommended}. Invalid: too_large (over 11,106 padded bytes).",
            "notes": SIZE_NOTES,
            "tests": size_cases(),
        },
    )


if __name__ == "__main__":
    main()
