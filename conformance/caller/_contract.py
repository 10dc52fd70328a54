"""The client contract: what the harness hands a client under test, and what it prints back.

A client under test is any program. For each scenario the harness runs it once, with four
environment variables (``ENV_*`` below); the context is a JSON object (:class:`CallSpec` for
each call). The client makes the calls in order on the core it was given, prints one JSON
line on stdout (:func:`parse_client_output` reads it) and exits 0. ``docs/conformance-caller.md``
is the reference for implementers; this module is its executable form, shared by the harness
(which writes contexts and reads results) and the reference client (which reads contexts and
writes results).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from simplex_protocols import _wire

__all__ = [
    "CONTEXT_SCHEMA",
    "ENV_CONTEXT",
    "ENV_CORE",
    "ENV_SCENARIO",
    "ENV_TARGET",
    "CallOutcome",
    "CallSpec",
    "ChatPlace",
    "ClientOutput",
    "ContractError",
    "ReportedReply",
    "RetryPolicy",
    "parse_client_output",
    "parse_context",
]

#: The scenario's ID (``chat-direct``, ``rpc-errors`` ...).
ENV_SCENARIO: Final = "SIMPLEX_CONFORMANCE_SCENARIO"
#: The WebSocket URL of the client's own core (the CLI's API: ``simplex-chat -p`` frames).
ENV_CORE: Final = "SIMPLEX_CONFORMANCE_CORE"
#: The first call's target: a contact address link (Service RPC), ``@<contactId>`` (a direct
#: chat) or ``#<groupId>`` (a group). Every call's own target is in the context.
ENV_TARGET: Final = "SIMPLEX_CONFORMANCE_TARGET"
#: The context: a JSON object (see :func:`parse_context`).
ENV_CONTEXT: Final = "SIMPLEX_CONFORMANCE_CONTEXT"

CONTEXT_SCHEMA: Final = "simplex-conformance/caller-context/1"


class ContractError(ValueError):
    """A context or a client's output does not follow the contract; ``str()`` says how."""


@dataclass(frozen=True, slots=True)
class ChatPlace:
    """Where a chat call goes: a direct chat, or a group (with the member to mention).

    Attributes:
        kind: ``direct`` or ``group``.
        contact_id: the contact's ID at the client's core (direct chats).
        group_id: the group's ID at the client's core (groups).
        name: the contact's or the group's display name.
        member_id: the ``groupMemberId`` of the member to call, at the client's core;
            ``None`` for a broadcast.
        member_name: that member's display name (written in the mention, CALL-CMD-4).
    """

    kind: str
    name: str
    contact_id: int | None = None
    group_id: int | None = None
    member_id: int | None = None
    member_name: str | None = None

    @property
    def ref(self) -> str:
        """``@<contactId>`` or ``#<groupId>``: the chat reference of the core's commands."""
        return f"@{self.contact_id}" if self.kind == "direct" else f"#{self.group_id}"

    def to_json(self) -> dict[str, Any]:
        if self.kind == "direct":
            return {"type": "direct", "contact_id": self.contact_id, "name": self.name}
        member = (
            {"group_member_id": self.member_id, "name": self.member_name}
            if self.member_id is not None
            else None
        )
        return {"type": "group", "group_id": self.group_id, "name": self.name, "member": member}

    @classmethod
    def from_json(cls, value: Any) -> ChatPlace:
        obj = _object(value, "chat")
        kind = obj.get("type")
        name = _string(obj.get("name"), "chat.name")
        if kind == "direct":
            return cls("direct", name, contact_id=_int(obj.get("contact_id"), "chat.contact_id"))
        if kind == "group":
            member = obj.get("member")
            if member is None:
                return cls("group", name, group_id=_int(obj.get("group_id"), "chat.group_id"))
            m = _object(member, "chat.member")
            return cls(
                "group",
                name,
                group_id=_int(obj.get("group_id"), "chat.group_id"),
                member_id=_int(m.get("group_member_id"), "chat.member.group_member_id"),
                member_name=_string(m.get("name"), "chat.member.name"),
            )
        raise ContractError(f"chat.type is 'direct' or 'group', not {kind!r}")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """May the client repeat a Service RPC request whose error allows it?

    Attributes:
        max_attempts: at most this many requests in all for the call.
        max_retry_after_s: do not wait for a ``retryAfter`` longer than this.
    """

    max_attempts: int
    max_retry_after_s: float


@dataclass(frozen=True, slots=True)
class CallSpec:
    """One call the client makes, as the context gives it.

    Attributes:
        label: the call's name in the scenario (``main``, ``unknown-final`` ...).
        protocol: ``mcp`` or ``a2a``.
        transport: ``chat`` (``/_call`` in a conversation) or ``rpc`` (Service RPC).
        method: the protocol method (``tools/call``, ``SendMessage`` ...).
        params: the method's params, to send as given (for MCP the client adds ``_meta``).
        request_id: the JSON-RPC ``id`` to use.
        versions: the versions the callee declares, in its order of preference.
        wait_s: chat: how long to collect replies; rpc: the request's timeout.
        chat: where a chat call goes (``None`` for Service RPC).
        target: the responder's contact address link (``None`` for chat calls).
        sign: sign the Service RPC request (with a key kept for this responder).
        credentials: service parameters that carry credentials (A2A: ``Authorization``),
            for the client to send where the spec allows it.
        retry: ``None``: make one attempt; otherwise the retry policy.
        input_responses: MCP: the answers to give, by key, when the call's result is
            ``input_required`` (the client then continues with a new request).
    """

    label: str
    protocol: str
    transport: str
    method: str
    params: Mapping[str, Any]
    request_id: int | str
    versions: tuple[str, ...]
    wait_s: float
    chat: ChatPlace | None = None
    target: str | None = None
    sign: bool = False
    credentials: Mapping[str, str] = field(default_factory=dict)
    retry: RetryPolicy | None = None
    input_responses: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "label": self.label,
            "protocol": self.protocol,
            "transport": self.transport,
            "method": self.method,
            "params": dict(self.params),
            "id": self.request_id,
            "versions": list(self.versions),
            "wait_s": self.wait_s,
        }
        if self.chat is not None:
            out["chat"] = self.chat.to_json()
        if self.target is not None:
            out["target"] = self.target
        if self.transport == "rpc":
            out["sign"] = self.sign
        if self.credentials:
            out["credentials"] = dict(self.credentials)
        if self.retry is not None:
            out["retry"] = {
                "max_attempts": self.retry.max_attempts,
                "max_retry_after_s": self.retry.max_retry_after_s,
            }
        if self.input_responses is not None:
            out["input_responses"] = dict(self.input_responses)
        return out

    @classmethod
    def from_json(cls, value: Any) -> CallSpec:
        obj = _object(value, "call")
        transport = obj.get("transport")
        if transport not in ("chat", "rpc"):
            raise ContractError(f"call.transport is 'chat' or 'rpc', not {transport!r}")
        request_id = obj.get("id")
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            raise ContractError("call.id is a string or an integer")
        versions = obj.get("versions", [])
        if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
            raise ContractError("call.versions is a list of strings")
        wait = obj.get("wait_s")
        if isinstance(wait, bool) or not isinstance(wait, int | float) or wait <= 0:
            raise ContractError("call.wait_s is a positive number")
        credentials = obj.get("credentials", {})
        if not isinstance(credentials, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in credentials.items()
        ):
            raise ContractError("call.credentials maps names to strings")
        retry = None
        if obj.get("retry") is not None:
            r = _object(obj["retry"], "call.retry")
            retry = RetryPolicy(
                _int(r.get("max_attempts"), "call.retry.max_attempts"),
                float(_number(r.get("max_retry_after_s"), "call.retry.max_retry_after_s")),
            )
        input_responses = obj.get("input_responses")
        if input_responses is not None:
            input_responses = _object(input_responses, "call.input_responses")
        return cls(
            label=_string(obj.get("label"), "call.label"),
            protocol=_string(obj.get("protocol"), "call.protocol"),
            transport=transport,
            method=_string(obj.get("method"), "call.method"),
            params=_object(obj.get("params"), "call.params"),
            request_id=request_id,
            versions=tuple(versions),
            wait_s=float(wait),
            chat=ChatPlace.from_json(obj["chat"]) if transport == "chat" else None,
            target=_string(obj.get("target"), "call.target") if transport == "rpc" else None,
            sign=obj.get("sign") is True,
            credentials=dict(credentials),
            retry=retry,
            input_responses=input_responses,
        )


def parse_context(text: str) -> tuple[dict[str, Any], list[CallSpec]]:
    """The context object and its calls.

    Raises:
        ContractError: the text is not a context of this version.
    """
    try:
        value = _wire.loads(text)
    except _wire.WireJSONError as exc:
        raise ContractError(f"the context is not JSON: {exc.reason}") from None
    obj = _object(value, "context")
    if obj.get("schema") != CONTEXT_SCHEMA:
        raise ContractError(f"the context's schema is not {CONTEXT_SCHEMA!r}")
    calls = obj.get("calls")
    if not isinstance(calls, list) or not calls:
        raise ContractError("context.calls is a non-empty list")
    return obj, [CallSpec.from_json(c) for c in calls]


# --------------------------------------------------------------------------- output


@dataclass(frozen=True, slots=True)
class ReportedReply:
    """One reply as the client reported it: its sender and its protocol message or text."""

    sender: str | int
    message: Mapping[str, Any] | None
    text: str | None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"sender": self.sender}
        if self.message is not None:
            body["message"] = dict(self.message)
        else:
            body["text"] = self.text
        return body


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What the client reported for one call.

    Attributes:
        unsupported: the client's reason for not making this call, or ``None``.
        replies: the replies it kept (chat calls), in arrival order.
        final: the message that ended the answer (chat) or the envelope's ``response``.
        error: the error it ended with (``{"code": ...}``), or ``None``.
        attempts: how many requests it says it sent (informational).
    """

    unsupported: str | None = None
    replies: tuple[ReportedReply, ...] = ()
    final: Mapping[str, Any] | None = None
    error: Mapping[str, Any] | None = None
    attempts: int | None = None


@dataclass(frozen=True, slots=True)
class ClientOutput:
    """The client's result line, read: one :class:`CallOutcome` per call of the context."""

    unsupported: str | None
    calls: tuple[CallOutcome, ...]


def _reply(value: Any, where: str) -> ReportedReply:
    obj = _object(value, where)
    sender = obj.get("sender")
    if isinstance(sender, bool) or not isinstance(sender, str | int):
        raise ContractError(f"{where}.sender is a name or an ID")
    has_message, has_text = "message" in obj, "text" in obj
    if has_message == has_text:
        raise ContractError(f"{where} has exactly one of 'message' and 'text'")
    if has_message:
        return ReportedReply(sender, _object(obj["message"], f"{where}.message"), None)
    return ReportedReply(sender, None, _string(obj["text"], f"{where}.text", empty=True))


def _call_outcome(value: Any, where: str) -> CallOutcome:
    obj = _object(value, where)
    if obj.get("unsupported") is not None:
        return CallOutcome(unsupported=str(obj["unsupported"]))
    replies = obj.get("replies", [])
    if not isinstance(replies, list):
        raise ContractError(f"{where}.replies is a list")
    final = obj.get("final")
    if final is not None and not isinstance(final, dict):
        raise ContractError(f"{where}.final is an object or null")
    error = obj.get("error")
    if error is not None and not (isinstance(error, dict) and isinstance(error.get("code"), str)):
        raise ContractError(f"{where}.error is null or an object with a string 'code'")
    attempts = obj.get("attempts")
    if attempts is not None and (isinstance(attempts, bool) or not isinstance(attempts, int)):
        raise ContractError(f"{where}.attempts is an integer")
    return CallOutcome(
        replies=tuple(_reply(r, f"{where}.replies[{i}]") for i, r in enumerate(replies)),
        final=final,
        error=error,
        attempts=attempts,
    )


def parse_client_output(stdout: str, calls: int) -> ClientOutput:
    """Read a client's result: the last line of ``stdout`` that is a JSON object.

    Other lines (logs a client prints by mistake) are ignored. The object is
    ``{"calls": [<one outcome per call of the context>]}`` or ``{"unsupported": "<reason>"}``.

    Raises:
        ContractError: no such line, or the object breaks the contract (the message says how).
    """
    candidate: str | None = None
    for line in reversed(stdout.splitlines()):
        if line.strip().startswith("{"):
            candidate = line.strip()
            break
    if candidate is None:
        raise ContractError("no JSON result line on stdout")
    try:
        value = _wire.loads(candidate)
    except _wire.WireJSONError as exc:
        raise ContractError(f"the result line is not JSON: {exc.reason}") from None
    obj = _object(value, "result")
    if obj.get("unsupported") is not None and "calls" not in obj:
        return ClientOutput(str(obj["unsupported"]), ())
    items = obj.get("calls")
    if not isinstance(items, list):
        raise ContractError("result.calls is a list")
    if len(items) != calls:
        raise ContractError(f"result.calls has {len(items)} entries for {calls} calls")
    return ClientOutput(None, tuple(_call_outcome(c, f"calls[{i}]") for i, c in enumerate(items)))


# --------------------------------------------------------------------------- small readers


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ContractError(f"{where} is a JSON object")
    return value


def _string(value: Any, where: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value):
        raise ContractError(f"{where} is a {'' if empty else 'non-empty '}string")
    return value


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ContractError(f"{where} is an integer")
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ContractError(f"{where} is a number")
    return float(value)
