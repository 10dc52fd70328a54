"""The caller's side of the MCP binding: build a request, choose a revision, read the answer.

Plain functions over JSON objects, with no I/O and no server: ``simplex-call``, the conformance
suite and any agent use them with either transport (the request goes after ``/_call mcp`` in a
conversation, or in the envelope's ``request`` over Service RPC).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_MODERN_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)

from simplex_protocols._trace_context import (
    TRACEPARENT_KEY,
    TRACESTATE_KEY,
    parse_traceparent,
    parse_tracestate,
)
from simplex_protocols.errors import CallFormatError, ParseError

__all__ = [
    "DEFAULT_REVISION",
    "MCPResponse",
    "MCPResponseError",
    "Progress",
    "build_request",
    "choose_revision",
    "continue_request",
    "is_final",
    "progress_of",
    "read_response",
]

#: The revision a request names when none is chosen: the newest the installed SDK serves.
DEFAULT_REVISION: Final = LATEST_MODERN_VERSION

_MRTR_FIELDS: Final = ("inputResponses", "requestState")

#: MCP-MSG-1, MCP-VER-1: the first revision this binding carries. Earlier ones begin with an
#: ``initialize`` handshake, which a single request cannot hold.
_FIRST_REVISION: Final = "2026-07-28"
_DATE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _before_binding(revision: str) -> bool:
    """Whether ``revision`` is older than the binding: a handshake-era revision the SDK knows,
    or a date before 2026-07-28. Revisions are dates and compare as text; an identifier that is
    not a date (MCP does not promise dates forever) is not judged here: the bot answers -32022
    when it does not serve it."""
    if revision in HANDSHAKE_PROTOCOL_VERSIONS:
        return True
    return _DATE.fullmatch(revision) is not None and revision < _FIRST_REVISION


def _is_request_id(value: object) -> TypeGuard[str | int]:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _same_id(a: object, b: object) -> bool:
    # JSON-RPC ids are strings or numbers: True is not 1, and "1" is not 1.
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    return isinstance(a, int | float) and isinstance(b, int | float) and a == b


def build_request(
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    request_id: str | int,
    revision: str = DEFAULT_REVISION,
    client_capabilities: Mapping[str, Any] | None = None,
    client_info: Mapping[str, Any] | None = None,
    progress_token: str | int | None = None,
    traceparent: str | None = None,
    tracestate: str | None = None,
) -> dict[str, Any]:
    """Build one MCP JSON-RPC request with its ``_meta`` envelope (MCP-MSG-1, MCP-VER-2).

    Args:
        method: the MCP method (``"tools/call"``, ``"tools/list"``, ``"server/discover"``...).
        params: the method's params; a ``_meta`` in them is kept, the envelope keys added.
        request_id: the JSON-RPC id (a string or an integer).
        revision: the MCP revision, under ``io.modelcontextprotocol/protocolVersion``: 2026-07-28
            or later (MCP-MSG-1); use :func:`choose_revision` with the bot's declared
            ``versions``.
        client_capabilities: ``io.modelcontextprotocol/clientCapabilities`` (``{}`` when
            omitted; an ``input_required`` elicitation needs ``{"elicitation": {"form": {}}}``).
        client_info: ``io.modelcontextprotocol/clientInfo`` (``{"name": ..., "version": ...}``),
            which MCP asks clients to include.
        progress_token: ``progressToken``: in a conversation the bot may then send
            ``notifications/progress`` replies before the response (MCP-MSG-3).
        traceparent: a W3C ``traceparent`` (the span the request is sent from, such as a
            ``simplex-mcp`` tool call's), under ``traceparent``: the bot's log line for the call
            then names its trace ID.
        tracestate: the W3C ``tracestate`` that goes with ``traceparent``.

    Returns:
        The request as a JSON object.

    Raises:
        CallFormatError: a value cannot go into a request (``bad_method``, ``bad_request_id``,
            ``bad_params``, ``bad_progress_token``; ``bad_revision`` for an empty revision and
            for one before 2026-07-28, such as ``2025-11-25``: MCP-MSG-1; ``bad_trace_context``
            for an invalid ``traceparent`` or ``tracestate``, or a ``tracestate`` alone).
    """
    if not isinstance(method, str) or not method:
        raise CallFormatError("the method must be a non-empty string", code="bad_method")
    if not _is_request_id(request_id):
        raise CallFormatError(
            "the request id must be a string or an integer", code="bad_request_id"
        )
    if not isinstance(revision, str) or not revision:
        raise CallFormatError(
            "the revision must be a non-empty string", code="bad_revision", requirement="MCP-VER-2"
        )
    # MCP-MSG-1: "The request is one JSON-RPC request of MCP revision 2026-07-28 or later".
    if _before_binding(revision):
        raise CallFormatError(
            f"MCP revision {revision} begins with the initialize handshake; this binding "
            f"carries revisions from {_FIRST_REVISION} on",
            code="bad_revision",
            requirement="MCP-MSG-1",
        )
    if params is not None and not isinstance(params, Mapping):
        raise CallFormatError("params must be a JSON object", code="bad_params")
    if progress_token is not None and not _is_request_id(progress_token):
        raise CallFormatError(
            "a progress token is a string or an integer", code="bad_progress_token"
        )
    if traceparent is not None and parse_traceparent(traceparent) is None:
        raise CallFormatError(
            "traceparent is not a valid W3C traceparent", code="bad_trace_context"
        )
    if tracestate is not None and (traceparent is None or parse_tracestate(tracestate) is None):
        raise CallFormatError(
            "tracestate must be a valid W3C tracestate, sent with a traceparent",
            code="bad_trace_context",
        )
    body: dict[str, Any] = dict(params) if params is not None else {}
    given_meta = body.get("_meta")
    if given_meta is not None and not isinstance(given_meta, Mapping):
        raise CallFormatError("params._meta must be a JSON object", code="bad_params")
    meta: dict[str, Any] = dict(given_meta) if given_meta is not None else {}
    # MCP-VER-2: "Each request names its revision in _meta, under
    # io.modelcontextprotocol/protocolVersion."
    meta[PROTOCOL_VERSION_META_KEY] = revision
    meta[CLIENT_CAPABILITIES_META_KEY] = (
        dict(client_capabilities) if client_capabilities is not None else {}
    )
    if client_info is not None:
        meta[CLIENT_INFO_META_KEY] = dict(client_info)
    if progress_token is not None:
        meta["progressToken"] = progress_token
    if traceparent is not None:
        meta[TRACEPARENT_KEY] = traceparent
        if tracestate:
            meta[TRACESTATE_KEY] = tracestate
        else:
            # the state of another trace must not travel with this one
            meta.pop(TRACESTATE_KEY, None)
    body["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body}


def choose_revision(
    offered: Iterable[str], supported: Iterable[str] = MODERN_PROTOCOL_VERSIONS
) -> str | None:
    """The revision to use with a bot: the first it offers that the caller speaks.

    Args:
        offered: the bot's declared ``versions`` for ``mcp``, in its order of preference (or
            ``supportedVersions`` from ``server/discover``, or the ``supported`` list of a
            -32022 error).
        supported: the revisions this caller speaks (by default those the SDK serves on
            one-shot transports: 2026-07-28 and later, MCP-VER-1). Revisions before 2026-07-28
            in it are ignored: this binding never carries them (MCP-MSG-1).

    Returns:
        The revision, or ``None`` when there is none in common (the bot serves only revisions
        this caller does not know, or only handshake-era ones, which this binding excludes).
        Never a revision that :func:`build_request` refuses.
    """
    speaks = {v for v in supported if isinstance(v, str) and v and not _before_binding(v)}
    for version in offered:
        if isinstance(version, str) and version in speaks:
            return version
    return None


def is_final(request: Mapping[str, Any], message: Mapping[str, Any]) -> bool:
    """Whether ``message``, a reply to ``request``, ends the bot's answer.

    The answer ends with the JSON-RPC response: a result or an error whose ``id`` is the
    request's (MCP-MSG-2, MCP-MSG-4). A notification (a message with ``method``) never ends it.
    An error with ``"id": null`` ends it too: it answers a request whose id the bot could not
    read, and in a conversation replies are matched to the command by their quote, not by the
    id (MCP-MSG-9).
    """
    if not isinstance(message, Mapping) or "method" in message or "id" not in message:
        return False
    has_result, has_error = "result" in message, "error" in message
    if not (has_result or has_error):
        return False
    message_id = message["id"]
    if message_id is None:
        return has_error and not has_result and isinstance(message["error"], Mapping)
    request_id = request.get("id") if isinstance(request, Mapping) else None
    return _same_id(message_id, request_id)


@dataclass(frozen=True, slots=True)
class MCPResponseError:
    """A JSON-RPC error in an MCP response.

    Attributes:
        code: the JSON-RPC error code (-32022 unsupported revision, -32601 unknown method,
            -32602 invalid params, -32603 internal or too large, ...).
        message: the error's message.
        data: the error's ``data``, when present (for -32022, ``{"supported": [...],
            "requested": ...}``).
    """

    code: int
    message: str
    data: Any = None

    @property
    def supported_revisions(self) -> tuple[str, ...]:
        """For -32022, the revisions the bot serves (MCP-VER-4); otherwise empty."""
        if self.code != -32022 or not isinstance(self.data, Mapping):
            return ()
        supported = self.data.get("supported")
        if not isinstance(supported, list):
            return ()
        return tuple(v for v in supported if isinstance(v, str))


@dataclass(frozen=True, slots=True)
class MCPResponse:
    """The JSON-RPC response that ends an MCP answer, read by :func:`read_response`.

    Attributes:
        id: the response's id (``None`` for an error to a request the bot could not read).
        result: the result object, or ``None`` for an error.
        error: the error, or ``None`` for a result.
    """

    id: str | int | None
    result: Mapping[str, Any] | None
    error: MCPResponseError | None

    @property
    def ok(self) -> bool:
        """Whether the response is a result (a tool's own failure, ``isError``, is a result)."""
        return self.error is None

    @property
    def result_type(self) -> str | None:
        """``resultType``: ``"complete"``, ``"input_required"``..., ``None`` for an error."""
        if self.result is None:
            return None
        value = self.result.get("resultType", "complete")
        return value if isinstance(value, str) else None

    @property
    def input_required(self) -> bool:
        """Whether the bot asks for input before it can answer (MCP-MSG-6)."""
        return self.result_type == "input_required"

    @property
    def input_requests(self) -> Mapping[str, Any]:
        """``inputRequests`` of an ``input_required`` result, by key (empty otherwise)."""
        value = self.result.get("inputRequests") if self.result is not None else None
        return value if isinstance(value, Mapping) else {}

    @property
    def request_state(self) -> str | None:
        """``requestState`` of an ``input_required`` result: echoed unchanged by the next round."""
        value = self.result.get("requestState") if self.result is not None else None
        return value if isinstance(value, str) else None

    @property
    def is_tool_error(self) -> bool:
        """Whether a ``tools/call`` result reports the tool's failure (``isError: true``)."""
        return self.result is not None and self.result.get("isError") is True

    @property
    def text(self) -> str:
        """The text items of a result's ``content``, joined by newlines (``""`` if none)."""
        content = self.result.get("content") if self.result is not None else None
        if not isinstance(content, list):
            return ""
        return "\n".join(
            item["text"]
            for item in content
            if isinstance(item, Mapping)
            and item.get("type") == "text"
            and isinstance(item.get("text"), str)
        )


def read_response(message: Mapping[str, Any]) -> MCPResponse:
    """Read the JSON-RPC response that ends an MCP answer (MCP-MSG-2).

    Raises:
        ParseError: ``not_a_response``: ``message`` is not a JSON-RPC response (no ``id``,
            neither or both of ``result`` and ``error``, a malformed error object).
    """

    def refuse(reason: str) -> ParseError:
        return ParseError(reason, code="not_a_response", requirement="MCP-MSG-2")

    if not isinstance(message, Mapping) or "method" in message:
        raise refuse("the message is not a JSON-RPC response")
    if "id" not in message:
        raise refuse("the response has no id")
    response_id = message["id"]
    if response_id is not None and not _is_request_id(response_id):
        raise refuse("the response id is not a string, an integer or null")
    has_result, has_error = "result" in message, "error" in message
    if has_result == has_error:
        raise refuse("a response has exactly one of result and error")
    if has_result:
        result = message["result"]
        if not isinstance(result, Mapping):
            raise refuse("the result is not an object")
        return MCPResponse(response_id, result, None)
    error = message["error"]
    if not isinstance(error, Mapping):
        raise refuse("the error is not an object")
    code, text = error.get("code"), error.get("message")
    if not isinstance(code, int) or isinstance(code, bool) or not isinstance(text, str):
        raise refuse("the error needs an integer code and a string message")
    return MCPResponse(response_id, None, MCPResponseError(code, text, error.get("data")))


def continue_request(
    request: Mapping[str, Any],
    response: MCPResponse,
    input_responses: Mapping[str, Any],
    *,
    request_id: str | int,
) -> dict[str, Any]:
    """The next round of a multi-round-trip call, as MCP defines it (MCP-MSG-6).

    A new request (new id) with the same method and params, plus ``inputResponses`` (the
    answers to the result's ``inputRequests``, by key) and the result's ``requestState``
    unchanged. The state is bound to the caller: send the next round from the same contact,
    group member or signing key.

    Args:
        request: the request that got the ``input_required`` result.
        response: that result, from :func:`read_response`.
        input_responses: for each key of ``response.input_requests``, the answer (for an
            elicitation, ``{"action": "accept", "content": {...}}``).
        request_id: the new request's id.

    Raises:
        CallFormatError: ``not_input_required``: the response is not an ``input_required``
            result; ``bad_request_id``; ``bad_params``: ``request`` has no params object.
    """
    if not response.input_required:
        raise CallFormatError(
            "only an input_required result is continued with a new request",
            code="not_input_required",
            requirement="MCP-MSG-6",
        )
    if not _is_request_id(request_id):
        raise CallFormatError(
            "the request id must be a string or an integer", code="bad_request_id"
        )
    params = request.get("params")
    if not isinstance(params, Mapping):
        raise CallFormatError("the request has no params object", code="bad_params")
    body = {key: value for key, value in params.items() if key not in _MRTR_FIELDS}
    body["inputResponses"] = dict(input_responses)
    if response.request_state is not None:
        body["requestState"] = response.request_state
    return {"jsonrpc": "2.0", "id": request_id, "method": request.get("method"), "params": body}


@dataclass(frozen=True, slots=True)
class Progress:
    """A ``notifications/progress`` reply (MCP-MSG-3).

    Attributes:
        token: the request's progress token.
        progress: the progress so far.
        total: the total, when known.
        message: a description, when given.
    """

    token: str | int
    progress: float
    total: float | None = None
    message: str | None = None


def progress_of(message: Mapping[str, Any]) -> Progress | None:
    """The progress a reply reports, or ``None`` for any other message."""
    if not isinstance(message, Mapping) or message.get("method") != "notifications/progress":
        return None
    params = message.get("params")
    if not isinstance(params, Mapping):
        return None
    token, progress = params.get("progressToken"), params.get("progress")
    if not _is_request_id(token) or not _is_number(progress):
        return None
    total, text = params.get("total"), params.get("message")
    return Progress(
        token,
        float(progress),
        float(total) if _is_number(total) else None,
        text if isinstance(text, str) else None,
    )


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
