"""Requests the checks send, and what they read from the answers."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from simplex_protocols._wire import dumps
from simplex_protocols.limits import MAX_SERVICE_JSON_BYTES

from ._context import Answer, CheckContext, FixtureMissing
from ._fixture_names import MCP_TOOLS

__all__ = [
    "A2A_URI",
    "MCP_DEFAULT_REVISION",
    "UNKNOWN_PROTOCOL",
    "a2a_request",
    "a2a_version",
    "any_result",
    "describe",
    "error_code",
    "mcp_request",
    "mcp_revision",
    "needs_a2a_fixture",
    "needs_mcp_tool",
    "probe_request",
    "random_task_id",
    "result_of",
]

JSON = dict[str, Any]

#: The A2A binding's URI (A2A-ID-1).
A2A_URI: Final = "https://simplex.chat/protocol/a2a/v1"
#: The MCP revision the suite speaks when the bot declares none it knows.
MCP_DEFAULT_REVISION: Final = "2026-07-28"
#: A protocol name no bot serves.
UNKNOWN_PROTOCOL: Final = "conformance-unknown"

_MAJOR_MINOR = re.compile(r"^\d+\.\d+$")


def mcp_revision(ctx: CheckContext) -> str:
    """The MCP revision to send: the bot's first declared one the suite speaks."""
    from simplex_protocols.bindings.mcp import choose_revision

    chosen = choose_revision(list(ctx.facts.versions("mcp")))
    return chosen or MCP_DEFAULT_REVISION


def a2a_version(ctx: CheckContext) -> str:
    """The A2A version to send: the bot's first declared 1.x version, else 1.0."""
    for version in ctx.facts.versions("a2a"):
        if _MAJOR_MINOR.match(version) and version.startswith("1."):
            return version
    return "1.0"


def mcp_request(
    ctx: CheckContext,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    revision: str | None = None,
    progress_token: str | None = None,
    elicitation: bool = False,
) -> JSON:
    """An MCP request with its ``_meta`` envelope and a fresh id."""
    from simplex_protocols.bindings.mcp import build_request

    return build_request(
        method,
        params,
        request_id=ctx.next_id(),
        revision=revision or mcp_revision(ctx),
        client_capabilities={"elicitation": {"form": {}}} if elicitation else None,
        client_info={"name": "simplex-conformance", "version": "1"},
        progress_token=progress_token,
    )


def a2a_request(
    ctx: CheckContext,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    version: str | None = "",
) -> JSON:
    """An A2A request with a fresh id; ``version`` ``None`` leaves ``A2A-Version`` out, ``""``
    sends the suite's version."""
    request: JSON = {
        "jsonrpc": "2.0",
        "id": ctx.next_id(),
        "method": method,
        "params": dict(params) if params is not None else {},
    }
    if version is not None:
        request["a2a-service-parameters"] = {"A2A-Version": version or a2a_version(ctx)}
    return request


#: An A2A version no bot serves: a request with it gets VersionNotSupportedError (A2A-SP-4).
UNSERVED_A2A_VERSION: Final = "9.9"


def send_message_params(
    message_id: str,
    text: str,
    *,
    task_id: str | None = None,
    context_id: str | None = None,
) -> JSON:
    """SendMessage params with a user message."""
    message: JSON = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}
    if task_id is not None:
        message["taskId"] = task_id
    if context_id is not None:
        message["contextId"] = context_id
    return {"message": message}


def random_task_id(ctx: CheckContext) -> str:
    """A task ID no bot has (36 characters, as A2A IDs usually are)."""
    return f"00000000-0000-4000-8000-{ctx.next_id():012d}"


def probe_request(ctx: CheckContext, protocol: str) -> JSON:
    """A read-only request every bot serving ``protocol`` answers."""
    if protocol == "a2a":
        return a2a_request(ctx, "GetExtendedAgentCard", {})
    return mcp_request(ctx, "server/discover")


def result_of(message: Mapping[str, Any] | None) -> JSON | None:
    """The ``result`` of a JSON-RPC response, if it is a successful one."""
    if message is None:
        return None
    result = message.get("result")
    return result if isinstance(result, dict) else None


def any_result(answer: Answer, member: str) -> JSON | None:
    """The first result in the answer that has ``member``, whichever reply carries it: the
    fixture is looked up this way, so that a bot that breaks the framing (a wrong id, a
    missing quote) is judged by the checks of the framing, not reported as lacking the
    fixture."""
    candidates = [answer.message] + [m.message for m in answer.messages]
    for message in candidates:
        result = result_of(message)
        if result is not None and member in result:
            return result
    return None


def error_code(message: Mapping[str, Any] | None) -> int | None:
    """The ``error.code`` of a JSON-RPC error response."""
    if message is None:
        return None
    error = message.get("error")
    code = error.get("code") if isinstance(error, Mapping) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def describe(answer: Answer) -> str:
    """What came back, in a few words, for an outcome's detail."""
    if answer.transport == "rpc":
        rpc = answer.rpc
        if rpc is None:
            return "nothing was sent"
        if rpc.response is not None:
            if rpc.error_code is not None:
                return f"the envelope error {rpc.error_code}"
            message = answer.message
            if message is None:
                return "an envelope without a JSON-RPC response"
            code = error_code(message)
            return f"JSON-RPC error {code}" if code is not None else "a JSON-RPC result"
        if rpc.core_error is not None:
            return "the core's error " + "/".join(rpc.core_error.chain)
        return "no response"
    chat = answer.chat
    if chat is None:
        return "nothing was sent"
    if chat.send_error is not None:
        return "the core refused the command: " + "/".join(chat.send_error.chain)
    messages = answer.messages
    if not messages:
        return "no reply"
    final = answer.final_reply
    if final is None:
        return f"{len(messages)} replies without a final JSON-RPC response"
    code = error_code(final.message)
    what = f"JSON-RPC error {code}" if code is not None else "a JSON-RPC result"
    return f"{len(messages)} replies ending with {what}"


def response_size(envelope: Mapping[str, Any]) -> int:
    """Bytes of an envelope's JSON as the suite writes it (compact, UTF-8)."""
    return len(dumps(dict(envelope)).encode("utf-8"))


#: The SHOULD NOT limit of a Service RPC request or response (RPC-LIM-3).
RECOMMENDED_JSON_BYTES: Final = MAX_SERVICE_JSON_BYTES


async def needs_mcp_tool(ctx: CheckContext, name: str) -> None:
    """Raise :class:`FixtureMissing` unless the bot lists the fixture tool ``name``."""
    tools = ctx.state.cache.get("mcp-tools")
    if tools is None:
        request = mcp_request(ctx, "tools/list")
        answer = await ctx.call(request, protocol="mcp")
        result = any_result(answer, "tools")
        listed = result.get("tools") if result is not None else None
        tools = (
            [t.get("name") for t in listed if isinstance(t, Mapping)]
            if isinstance(listed, list)
            else []
        )
        ctx.state.cache["mcp-tools"] = tools
    if name not in tools:
        raise FixtureMissing(
            f"the bot does not list the fixture tool {name} (fixture tools: "
            + ", ".join(MCP_TOOLS)
            + ")",
            name,
        )


async def needs_a2a_fixture(ctx: CheckContext) -> None:
    """Raise :class:`FixtureMissing` unless the bot's Agent Card lists the fixture skill
    ``conformance``."""
    present = ctx.state.cache.get("a2a-fixture")
    if present is None:
        transport = "chat" if ctx.facts.serves("a2a", "chat") else "rpc"
        answer = await ctx.call(
            a2a_request(ctx, "GetExtendedAgentCard", {}), protocol="a2a", transport=transport
        )
        result = any_result(answer, "skills") or {}
        skills = result.get("skills")
        present = isinstance(skills, list) and any(
            isinstance(s, Mapping) and s.get("id") == "conformance" for s in skills
        )
        ctx.state.cache["a2a-fixture"] = present
    if not present:
        raise FixtureMissing(
            "the bot's Agent Card lists no fixture skill with the id conformance",
            "a2a skill conformance",
        )
