"""Checks of the MCP binding: read-only probes (black-box profile) and the fixture tools."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simplex_protocols.conformance._model import Outcome
from simplex_protocols.rpc import SigningKey

from ._context import Answer, CheckContext
from ._fixture_names import FIXTURE_OVERSIZE_CHARS
from ._probes import describe, error_code, mcp_request, needs_mcp_tool, result_of
from ._registry import FIXTURE, check

JSON = dict[str, Any]

_UNSERVED_REVISION = "2099-12-31"
_MCP = ("mcp",)


def _is_response(message: Mapping[str, Any]) -> bool:
    return "id" in message and ("result" in message or "error" in message)


@check(
    "mcp.discover",
    "server/discover is answered with revisions and capabilities",
    ("MCP-MSG-5", "MCP-CAP-1"),
    protocols=_MCP,
)
async def discover(ctx: CheckContext) -> Outcome:
    answer = await ctx.call(mcp_request(ctx, "server/discover"))
    result = result_of(answer.message)
    if result is None:
        return ctx.breach(f"server/discover got {describe(answer)}")
    versions = result.get("supportedVersions")
    capabilities = result.get("capabilities")
    if not isinstance(versions, list) or not isinstance(capabilities, Mapping):
        return ctx.breach("the result lacks supportedVersions or capabilities")
    ctx.state.cache["mcp-capabilities"] = dict(capabilities)
    return ctx.passed(
        "revisions " + ", ".join(str(v) for v in versions), capabilities=sorted(capabilities)
    )


@check(
    "mcp.discover-revisions",
    "The revisions of server/discover agree with the declared versions",
    ("MCP-CAP-2",),
    protocols=_MCP,
)
async def discover_revisions(ctx: CheckContext) -> Outcome:
    answer = await ctx.call(mcp_request(ctx, "server/discover"))
    result = result_of(answer.message)
    versions = result.get("supportedVersions") if result is not None else None
    if not isinstance(versions, list):
        return ctx.untestable(f"server/discover gave no revisions ({describe(answer)})")
    declared = set(ctx.facts.versions("mcp"))
    if set(versions) != declared:
        return ctx.breach(
            f"server/discover lists {sorted(map(str, versions))}, the declaration "
            f"{sorted(declared)}"
        )
    return ctx.passed("they agree: " + ", ".join(sorted(declared)))


@check(
    "mcp.tools-list",
    "A bot with the tools capability answers tools/list",
    ("MCP-CAP-1", "MCP-MSG-5"),
    protocols=_MCP,
    messages=2,
)
async def tools_list(ctx: CheckContext) -> Outcome:
    capabilities = ctx.state.cache.get("mcp-capabilities")
    if capabilities is None:
        found = result_of((await ctx.call(mcp_request(ctx, "server/discover"))).message)
        caps = found.get("capabilities") if found is not None else None
        if isinstance(caps, Mapping):
            capabilities = dict(caps)
            ctx.state.cache["mcp-capabilities"] = capabilities
    # Without server/discover (which mcp.discover judges) the tools capability is unknown,
    # and tools/list is tried all the same.
    if capabilities is not None and "tools" not in capabilities:
        return ctx.not_applicable("server/discover declares no tools capability")
    answer = await ctx.call(mcp_request(ctx, "tools/list"))
    result = result_of(answer.message)
    if result is None or not isinstance(result.get("tools"), list):
        return ctx.breach(f"tools/list got {describe(answer)}")
    return ctx.passed(f"{len(result['tools'])} tools")


@check(
    "mcp.response-id",
    "The JSON-RPC response carries the request's id",
    ("MCP-MSG-4",),
    protocols=_MCP,
)
async def response_id(ctx: CheckContext) -> Outcome:
    request = mcp_request(ctx, "tools/list")
    answer = await ctx.call(request, final=lambda m: _is_response(m) and m.get("id") is not None)
    message = answer.message
    if message is None:
        return ctx.breach(f"no JSON-RPC response ({describe(answer)})")
    if message.get("id") != request["id"] or type(message.get("id")) is not type(request["id"]):
        return ctx.breach(
            f"the response's id is {message.get('id')!r}, the request's {request['id']!r}"
        )
    return ctx.passed(f"id {request['id']!r}")


@check(
    "mcp.answer-ends-with-response",
    "The answer ends with the JSON-RPC response; nothing follows it",
    ("MCP-MSG-2",),
    protocols=_MCP,
)
async def answer_ends_with_response(ctx: CheckContext) -> Outcome:
    answer = await ctx.call(mcp_request(ctx, "tools/list"))
    return _ends_with_response(ctx, answer)


def _ends_with_response(ctx: CheckContext, answer: Answer) -> Outcome:
    if answer.transport == "rpc":
        message = answer.message
        if message is None or not _is_response(message):
            return ctx.breach(
                f"the envelope's response is not a JSON-RPC response ({describe(answer)})"
            )
        return ctx.passed("the envelope carries the JSON-RPC response")
    final = answer.final_reply
    if final is None:
        return ctx.breach(f"no JSON-RPC response ends the answer ({describe(answer)})")
    after = [m for m in answer.messages if m.t >= final.t and m is not final]
    after += [m for m in answer.messages if m.after_final and m not in after]
    if after:
        return ctx.breach(f"{len(after)} replies came after the JSON-RPC response")
    return ctx.passed(f"{len(answer.messages)} replies, the last the JSON-RPC response")


@check(
    "mcp.unknown-method",
    "An unknown method gets a JSON-RPC error with the request's id",
    ("MCP-MSG-2", "MCP-MSG-4"),
    protocols=_MCP,
)
async def unknown_method(ctx: CheckContext) -> Outcome:
    request = mcp_request(ctx, "conformance/unknown-method")
    answer = await ctx.call(request)
    message = answer.message
    if answer.envelope_error is not None:
        return ctx.breach(
            f"an unknown method got the envelope error {answer.envelope_error}",
            requirements=("RPC-ENV-4",),
        )
    if message is None or error_code(message) is None:
        return ctx.breach(f"expected a JSON-RPC error, got {describe(answer)}")
    if message.get("id") != request["id"]:
        return ctx.breach(f"the error's id is {message.get('id')!r}, not {request['id']!r}")
    return ctx.passed(f"JSON-RPC error {error_code(message)}")


@check(
    "mcp.unserved-revision",
    "An unserved revision gets -32022 listing the served revisions",
    ("MCP-VER-4",),
    protocols=_MCP,
)
async def unserved_revision(ctx: CheckContext) -> Outcome:
    answer = await ctx.call(mcp_request(ctx, "tools/list", revision=_UNSERVED_REVISION))
    if answer.envelope_error is not None:
        return ctx.breach(
            f"the envelope error {answer.envelope_error} in place of -32022 inside response "
            "(AMB-7: the version is the binding's)"
        )
    message = answer.message
    if error_code(message) != -32022:
        return ctx.breach(f"revision {_UNSERVED_REVISION} got {describe(answer)}, not -32022")
    assert message is not None
    data = message["error"].get("data")
    supported = data.get("supported") if isinstance(data, Mapping) else None
    if not isinstance(supported, list) or not supported:
        return ctx.breach("-32022 without the list of served revisions (data.supported)")
    return ctx.passed("-32022, supported: " + ", ".join(map(str, supported)))


@check(
    "mcp.legacy-initialize",
    "A legacy initialize gets an error, never a session",
    ("MCP-VER-4",),
    protocols=_MCP,
)
async def legacy_initialize(ctx: CheckContext) -> Outcome:
    request = {
        "jsonrpc": "2.0",
        "id": ctx.next_id(),
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "simplex-conformance", "version": "1"},
        },
    }
    answer = await ctx.call(request)
    message = answer.message
    if answer.envelope_error is not None:
        return ctx.acceptable("AMB-21", f"the envelope error {answer.envelope_error}")
    if message is None:
        return ctx.breach(f"initialize got {describe(answer)}")
    if "result" in message:
        return ctx.breach(
            "initialize was answered with a result: a revision the bot does not declare"
        )
    if error_code(message) == -32022:
        return ctx.passed("-32022 (AMB-21, reading A)")
    return ctx.acceptable("AMB-21", f"JSON-RPC error {error_code(message)}")


# --------------------------------------------------------------------------- fixture


def _tool_call(ctx: CheckContext, name: str, arguments: Mapping[str, Any], **options: Any) -> JSON:
    return mcp_request(ctx, "tools/call", {"name": name, "arguments": dict(arguments)}, **options)


@check(
    "mcp.oversize-chat",
    "An oversize response becomes JSON-RPC error -32603 in a conversation",
    ("MCP-MSG-7", "CALL-SIZE-3"),
    transports=("chat",),
    profiles=FIXTURE,
    protocols=_MCP,
    messages=2,
)
async def oversize_chat(ctx: CheckContext) -> Outcome:
    await needs_mcp_tool(ctx, "conformance_oversize")
    request = _tool_call(ctx, "conformance_oversize", {"size": FIXTURE_OVERSIZE_CHARS})
    answer = await ctx.call(request)
    message = answer.message
    if error_code(message) == -32603:
        assert message is not None
        if message.get("id") != request["id"]:
            return ctx.breach("-32603 without the request's id")
        return ctx.passed("-32603 with the request's id")
    return ctx.breach(f"expected -32603, got {describe(answer)}")


@check(
    "mcp.oversize-rpc",
    "An oversize response becomes too_large over Service RPC",
    ("MCP-MSG-7", "RPC-ERR-7"),
    transports=("rpc",),
    profiles=FIXTURE,
    protocols=_MCP,
    messages=2,
)
async def oversize_rpc(ctx: CheckContext) -> Outcome:
    await needs_mcp_tool(ctx, "conformance_oversize")
    answer = await ctx.call(
        _tool_call(ctx, "conformance_oversize", {"size": FIXTURE_OVERSIZE_CHARS})
    )
    if answer.envelope_error == "too_large":
        return ctx.passed("too_large")
    return ctx.breach(f"expected too_large, got {describe(answer)}")


@check(
    "mcp.progress",
    "Progress notifications come before the response, each quoting the command",
    ("MCP-MSG-3", "MCP-MSG-2"),
    transports=("chat",),
    profiles=FIXTURE,
    protocols=_MCP,
    messages=2,
)
async def progress(ctx: CheckContext) -> Outcome:
    await needs_mcp_tool(ctx, "conformance_progress")
    token = f"conformance-{ctx.next_id()}"
    request = _tool_call(ctx, "conformance_progress", {"steps": 3}, progress_token=token)
    answer = await ctx.call(request)
    final = answer.final_reply
    if final is None:
        return ctx.breach(f"no response ({describe(answer)})", requirements=("MCP-MSG-2",))
    notes = [m for m in answer.messages if m.message is not None and "method" in m.message]
    late = [m for m in notes if m.after_final or m.item_id > final.item_id]
    if late or any(m.after_final for m in answer.messages):
        return ctx.breach("replies came after the response", requirements=("MCP-MSG-2",))
    unquoted = [m for m in notes if m.quoted_item_id is None]
    if unquoted:
        return ctx.breach("progress notifications that do not quote the command")
    wrong = [
        m
        for m in notes
        if not isinstance(m.message, Mapping)
        or m.message.get("method") != "notifications/progress"
        or not isinstance(m.message.get("params"), Mapping)
        or m.message["params"].get("progressToken") != token
    ]
    if wrong:
        return ctx.breach("notifications before the response that are not about this request")
    if not notes:
        return ctx.passed("no notification (a bot may send none), then the response")
    return ctx.passed(f"{len(notes)} progress notifications, then the response")


async def _input_required_round(
    ctx: CheckContext, *, first_who: str, second_who: str, first_key: Any, second_key: Any
) -> tuple[Answer, Answer | None, str]:
    from simplex_protocols.bindings.mcp import continue_request, read_response

    request = _tool_call(ctx, "conformance_input_required", {}, elicitation=True)
    first = await ctx.call(request, who=first_who, sign=first_key)
    message = first.message
    if message is None or result_of(message) is None:
        return first, None, f"the first round got {describe(first)}"
    try:
        reading = read_response(message)
    except Exception:  # any malformed answer is reported, not raised
        return first, None, "the first round's answer is not a JSON-RPC response"
    if not reading.input_required or not reading.input_requests:
        return first, None, "the first round is not an input_required result with inputRequests"
    responses = {
        key: {"action": "accept", "content": {"confirm": True}} for key in reading.input_requests
    }
    follow = continue_request(request, reading, responses, request_id=ctx.next_id())
    second = await ctx.call(follow, who=second_who, sign=second_key)
    return first, second, ""


@check(
    "mcp.input-required",
    "An input_required result is continued with a new request",
    ("MCP-MSG-6",),
    profiles=FIXTURE,
    protocols=_MCP,
    messages=2,
)
async def input_required(ctx: CheckContext) -> Outcome:
    await needs_mcp_tool(ctx, "conformance_input_required")
    key = ctx.new_key() if ctx.transport == "rpc" else None
    _first, second, problem = await _input_required_round(
        ctx, first_who="A", second_who="A", first_key=key, second_key=key
    )
    if second is None:
        return ctx.breach(problem)
    result = result_of(second.message)
    content = result.get("content") if result is not None else None
    text = (
        content[0].get("text")
        if isinstance(content, list) and content and isinstance(content[0], Mapping)
        else None
    )
    if text != "confirmed":
        return ctx.breach(f"the continuation got {describe(second)}, not the tool's answer")
    return ctx.passed("input_required, then the answer to the continuation")


@check(
    "mcp.request-state-other-caller",
    "Another caller cannot continue an input_required call with its requestState",
    ("MCP-MSG-6",),
    profiles=FIXTURE,
    protocols=_MCP,
    identities=("A", "B"),
    messages=2,
)
async def request_state_other_caller(ctx: CheckContext) -> Outcome:
    await needs_mcp_tool(ctx, "conformance_input_required")
    keys: tuple[SigningKey | None, SigningKey | None] = (None, None)
    who = ("A", "B")
    if ctx.transport == "rpc":
        keys = (ctx.new_key(), ctx.new_key())
        who = ("A", "A")
    else:
        await ctx.caller("B")
    _first, second, problem = await _input_required_round(
        ctx, first_who=who[0], second_who=who[1], first_key=keys[0], second_key=keys[1]
    )
    if second is None:
        return ctx.untestable(problem)
    result = result_of(second.message)
    if result is not None and result.get("resultType", "complete") == "complete":
        # Derived from MCP-MSG-6 and the binding's caller-bound state: never worse than WARN.
        return ctx.warn("another caller completed the call with the first caller's requestState")
    return ctx.passed(f"refused: {describe(second)}")


@check(
    "mcp.needs-conversation",
    "A tool that needs a conversation gets conversation_required over Service RPC",
    ("MCP-MSG-8", "RPC-ERR-8"),
    transports=("rpc",),
    profiles=FIXTURE,
    protocols=_MCP,
    messages=2,
)
async def needs_conversation(ctx: CheckContext) -> Outcome:
    await needs_mcp_tool(ctx, "conformance_needs_conversation")
    answer = await ctx.call(_tool_call(ctx, "conformance_needs_conversation", {}))
    if answer.envelope_error == "conversation_required":
        return ctx.passed("conversation_required")
    return ctx.breach(f"expected conversation_required, got {describe(answer)}")


@check(
    "mcp.slow-call-rpc",
    "A call that cannot finish in the 180 s window is answered within it",
    ("RPC-LIM-1", "RPC-ERR-8"),
    transports=("rpc",),
    profiles=FIXTURE,
    protocols=_MCP,
    messages=2,
)
async def slow_call(ctx: CheckContext) -> Outcome:
    await needs_mcp_tool(ctx, "conformance_slow")
    answer = await ctx.call(_tool_call(ctx, "conformance_slow", {"seconds": 200}), wait_s=180)
    if answer.rpc is None or answer.rpc.response is None:
        return ctx.breach(
            f"no response within the 180 s window ({describe(answer)})",
            requirements=("RPC-LIM-1",),
        )
    if answer.envelope_error == "conversation_required":
        return ctx.passed("conversation_required within the window")
    return ctx.passed(f"answered within the window: {describe(answer)}")
