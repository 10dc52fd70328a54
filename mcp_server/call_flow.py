"""The ``call`` tool's parts that do no I/O (``--call-tool``, not the plan's).

=====================  =====================================================================
part                   what
=====================  =====================================================================
:func:`read_target`    what ``target`` names: a SimpleX link or name, a website, or ``@N``
:func:`bot_of`         the bot as its address's plan declares it (``bot`` of the result)
:func:`pick_version`   the protocol version to send: the first declared one this side speaks
:func:`pick_transport` ``auto``, ``rpc`` or ``chat`` against what the bot declares
:func:`build_call`     the JSON-RPC request, built by the library's caller-side helpers, with
                       the call's ``traceparent`` in an MCP request's ``_meta``
:func:`envelope_error` a Service RPC envelope error as the result's ``error`` and codes
=====================  =====================================================================

The rules follow ``simplex-call`` (``docs/simplex-call.md``); they are written here again only
where its helpers raise its command line's errors (an app may not import another app).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from simplex_protocols.bindings._a2a_client import build_a2a_request
from simplex_protocols.bindings._a2a_wire import DEFAULT_A2A_VERSION
from simplex_protocols.bindings._mcp_caller import DEFAULT_REVISION, build_request, choose_revision
from simplex_protocols.core import ContactRef
from simplex_protocols.declarations import ProtocolDeclaration
from simplex_protocols.discovery import AddressPlan
from simplex_protocols.errors import CallFormatError, LinkError, ServiceError
from simplex_protocols.links import parse_simplex_link, parse_simplex_target

from .config import VERSION
from .errors import CallToolError
from .text import read_chat_ref

__all__ = [
    "PROGRESS_TOKEN",
    "REQUEST_ID",
    "RPC_WAIT_S",
    "BuiltCall",
    "CallTarget",
    "bot_of",
    "build_call",
    "declared_lines",
    "envelope_error",
    "pick_transport",
    "pick_version",
    "read_target",
]

#: The JSON-RPC id of every request the tool sends (one request per call).
REQUEST_ID: Final = 1
#: The progress token of an MCP request sent in a conversation (MCP-MSG-3).
PROGRESS_TOKEN: Final = "simplex-mcp-call"
#: The longest wait for a Service RPC answer: the core's response window (180 s).
RPC_WAIT_S: Final = 180.0
_CLIENT_INFO: Final = {"name": "simplex-mcp", "version": VERSION}

TargetKind = Literal["simplex", "website", "chat"]


@dataclass(frozen=True, slots=True)
class CallTarget:
    """What ``target`` names.

    Attributes:
        text: the target as given, trimmed.
        kind: ``simplex`` (a link or a SimpleX name), ``website`` (an ``https://`` URL or a
            bare host), ``chat`` (``@N``, a contact of the agent).
        contact: the contact of a ``chat`` target.
    """

    text: str
    kind: TargetKind
    contact: ContactRef | None = None


def read_target(text: str) -> CallTarget:
    """Read ``target``.

    Raises:
        CallToolError: ``bad_target``: not a SimpleX link, a SimpleX name, a website or ``@N``.
    """
    value = text.strip()
    if value.startswith("@") and value[1:].isdigit():
        ref = read_chat_ref(value)
        if not isinstance(ref, ContactRef):
            raise CallToolError("bad_target", f"target: {value} is not a contact reference.")
        return CallTarget(value, "chat", ref)
    if value.startswith(("@", "#", "simplex:")):
        try:
            parse_simplex_target(value)
        except LinkError as exc:
            raise CallToolError("bad_target", f"target: {exc}") from None
        return CallTarget(value, "simplex")
    try:
        parse_simplex_link(value)
        return CallTarget(value, "simplex")
    except LinkError:
        pass
    if value.startswith("https://") or (
        "://" not in value and "." in value and not any(c.isspace() for c in value)
    ):
        return CallTarget(value, "website")
    raise CallToolError(
        "bad_target",
        "target: a contact address link, a SimpleX name (@name.simplex), a website "
        "(https://example.com) or @N, a contact of the agent.",
    )


def bot_of(plan: AddressPlan) -> dict[str, Any]:
    """The result's ``bot``: who the address says it is (written by the bot) and whether it
    is verified (found by its SimpleX name, which the core resolved)."""
    bot: dict[str, Any] = {
        "address": plan.address,
        "verified": plan.simplex_name is not None,
        "protocols": plan.to_json()["protocols"],
    }
    if plan.display_name is not None:
        bot["name"] = plan.display_name
    if plan.simplex_name is not None:
        bot["simplex_name"] = plan.simplex_name
    if plan.peer_type is not None:
        bot["peer_type"] = plan.peer_type
    if plan.short_description is not None:
        bot["description"] = plan.short_description
    return bot


def declared_lines(plan: AddressPlan) -> list[str]:
    """What the bot declares, one entry per protocol: ``mcp 2026-07-28 (chat, rpc)``."""
    out = []
    for name, decl in plan.protocols.items():
        transports = [t for t, on in (("chat", decl.chat), ("rpc", decl.rpc)) if on]
        out.append(f"{name} {' '.join(decl.versions)} ({', '.join(transports) or 'no transport'})")
    return out


def pick_version(protocol: str, declared: ProtocolDeclaration) -> str:
    """The version to send: the first declared one this side speaks.

    Raises:
        CallToolError: ``no_common_version``.
    """
    if protocol == "mcp":
        chosen = choose_revision(declared.versions)
        if chosen is not None:
            return chosen
        ours = DEFAULT_REVISION
    else:
        if DEFAULT_A2A_VERSION in declared.versions:
            return DEFAULT_A2A_VERSION
        ours = DEFAULT_A2A_VERSION
    raise CallToolError(
        "no_common_version",
        f"The bot serves {protocol} {', '.join(declared.versions) or '(no version)'}; "
        f"this server speaks {ours}.",
    )


def pick_transport(
    requested: str, declared: ProtocolDeclaration, protocol: str, one_shot: bool, *, chat_only: bool
) -> str:
    """``rpc`` or ``chat`` for ``transport`` (``auto``: Service RPC when the bot declares it
    for the protocol and the call is one request and answer, else a conversation).

    ``chat_only``: the target is ``@N``, whose profile gives no address to send Service RPC to.

    Raises:
        CallToolError: ``transport_not_served``.
    """
    rpc_ok = declared.rpc and one_shot and not chat_only
    if requested == "rpc":
        if chat_only:
            raise CallToolError(
                "transport_not_served",
                "transport rpc needs the bot's address: give its link or SimpleX name as target.",
            )
        if not declared.rpc:
            raise CallToolError(
                "transport_not_served",
                f"The bot does not serve {protocol} over Service RPC; call with transport chat.",
            )
        if not one_shot:
            raise CallToolError(
                "transport_not_served",
                "Over Service RPC, A2A serves only a SendMessage without contextId, taskId and "
                "returnImmediately (A2A-RPC-1); call with transport chat.",
            )
        return "rpc"
    if requested == "chat" or not rpc_ok:
        if not declared.chat:
            raise CallToolError(
                "transport_not_served",
                f"The bot does not serve {protocol} in a conversation"
                + ("; call with transport rpc." if declared.rpc and not chat_only else "."),
            )
        return "chat"
    return "rpc"


@dataclass(frozen=True, slots=True)
class BuiltCall:
    """A request to send: the JSON-RPC object, and whether Service RPC can answer it."""

    request: dict[str, Any]
    one_shot: bool


def _one_shot_a2a(method: str, params: Mapping[str, Any]) -> bool:
    if method != "SendMessage":
        return False
    message = params.get("message")
    config = params.get("configuration")
    return (
        isinstance(message, Mapping)
        and not message.get("contextId")
        and not message.get("taskId")
        and not (isinstance(config, Mapping) and config.get("returnImmediately") is True)
    )


def build_call(
    protocol: str,
    method: str,
    params: Mapping[str, Any] | None,
    *,
    version: str,
    chat: bool,
    traceparent: str | None = None,
    tracestate: str | None = None,
) -> BuiltCall:
    """The request of a call, built by the binding's caller-side helpers.

    An MCP request carries the call's ``traceparent`` (and ``tracestate``) in its ``_meta``,
    so the bot's log line names the agent's trace ID; in a conversation it asks for progress
    (MCP-MSG-3).

    Raises:
        CallToolError: ``bad_request``: the helpers refuse the method or the params.
    """
    given = dict(params or {})
    try:
        if protocol == "mcp":
            request = build_request(
                method,
                given,
                request_id=REQUEST_ID,
                revision=version,
                client_info=_CLIENT_INFO,
                progress_token=PROGRESS_TOKEN if chat else None,
                traceparent=traceparent,
                tracestate=tracestate if traceparent is not None else None,
            )
            return BuiltCall(request, True)
        request = build_a2a_request(method, given, request_id=REQUEST_ID, version=version)
    except CallFormatError as exc:
        raise CallToolError("bad_request", f"params: {exc.reason}") from None
    return BuiltCall(request, _one_shot_a2a(method, given))


#: What the agent can do about an envelope error, by its code.
_ENVELOPE_HINTS: Final = {
    "conversation_required": "the bot answers this call only in a conversation: call again "
    "with transport chat",
    "timed_out": "the bot did not answer in time: call again later, or with a longer wait",
    "too_large": "the answer is too large for Service RPC: call again with transport chat",
    "unsupported_protocol": "the bot does not serve this protocol over Service RPC",
}


def envelope_error(exc: ServiceError) -> tuple[str, dict[str, Any]]:
    """A Service RPC envelope error as the result's ``error`` text and its ``error_code`` and
    ``retry_after`` fields (the bot's message is not repeated: it is the bot's text)."""
    extra: dict[str, Any] = {"error_code": exc.code}
    if exc.code == "rate_limited" and exc.retry_after is not None:
        extra["retry_after"] = exc.retry_after
        return f"rate_limited: call again after {exc.retry_after} s", extra
    hint = _ENVELOPE_HINTS.get(exc.code)
    return (f"{exc.code}: {hint}" if hint else f"the bot answered {exc.code}"), extra
