"""The mutant bots: the reference bot with one requirement switched off each.

Each mutant is the reference bot behind a :class:`~simplex_protocols.conformance.live._proxy.RewritingBackend`
whose :class:`Rewrite` changes what passes between the bot and its chat core, the way a broken
implementation would behave on the wire. The bot's own code is untouched. The selftest runs the
live checks against every mutant (``LiveOptions(builtin=<mutant name>)``) and requires that a
check naming one of the mutant's requirements fails (or warns, for SHOULD-level ones).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from simplex_protocols._wire import dumps
from simplex_protocols.chat_call import format_call_command, parse_call_command
from simplex_protocols.conformance._model import Mutant
from simplex_protocols.errors import CallFramingError, SimplexError

from ._proxy import Outgoing, Rewrite, json_object

__all__ = ["MUTANTS", "MutantSpec", "mutant_spec", "mutants"]

JSON = dict[str, Any]

_STREAMING = frozenset({"SendStreamingMessage", "SubscribeToTask"})
_A2A_URI: Final = "https://simplex.chat/protocol/a2a/v1"


@dataclass(frozen=True, slots=True)
class MutantSpec:
    """A mutant and how to build its rewrite (a new one for every run: rewrites keep state)."""

    mutant: Mutant
    make: Callable[[], Rewrite]


# --------------------------------------------------------------------------- wire helpers


def _send_parts(command: str) -> tuple[str, list[JSON]] | None:
    """``/_send <ref>[ flags] json [ComposedMessage...]``: the head and the messages."""
    if not command.startswith("/_send "):
        return None
    at = command.find(" json ")
    if at < 0:
        return None
    from simplex_protocols._wire import loads

    try:
        value = loads(command[at + 6 :])
    except ValueError:
        return None
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        return None
    return command[: at + 6], value


def _text(composed: Mapping[str, Any]) -> str | None:
    content = composed.get("msgContent")
    text = content.get("text") if isinstance(content, Mapping) else None
    return text if isinstance(text, str) else None


def _json_of(composed: Mapping[str, Any]) -> JSON | None:
    """The JSON object a composed message's text holds, if it holds one."""
    text = _text(composed)
    return json_object(text) if text is not None else None


def _with_text(composed: Mapping[str, Any], text: str) -> JSON:
    out = copy.deepcopy(dict(composed))
    content = dict(out.get("msgContent") or {})
    content["text"] = text
    out["msgContent"] = content
    return out


def _service_response(command: str) -> tuple[str, JSON] | None:
    """``/_service_response <userId> <requestId> <json>``: the head and the envelope."""
    if not command.startswith("/_service_response "):
        return None
    parts = command.split(" ", 3)
    if len(parts) != 4:
        return None
    envelope = json_object(parts[3])
    if envelope is None:
        return None
    return " ".join(parts[:3]) + " ", envelope


def _json_tail(command: str, heads: tuple[str, ...]) -> tuple[str, JSON] | None:
    """A command of ``heads`` whose last argument is a JSON object."""
    if not command.startswith(heads):
        return None
    at = command.find("{")
    if at < 0:
        return None
    value = json_object(command[at:])
    return (command[:at], value) if value is not None else None


def _chat_items(event: Mapping[str, Any]) -> Iterator[JSON]:
    if event.get("type") != "newChatItems":
        return
    items = event.get("chatItems")
    if isinstance(items, list):
        for item in items:
            if isinstance(item, dict):
                yield item


def _item_text(a_chat_item: Mapping[str, Any]) -> str | None:
    item = a_chat_item.get("chatItem")
    content = item.get("content") if isinstance(item, Mapping) else None
    if not isinstance(content, Mapping) or content.get("type") != "rcvMsgContent":
        return None
    msg = content.get("msgContent")
    text = msg.get("text") if isinstance(msg, Mapping) else None
    return text if isinstance(text, str) else None


def _set_item_text(a_chat_item: JSON, text: str) -> None:
    a_chat_item["chatItem"]["content"]["msgContent"]["text"] = text


def _item_id(a_chat_item: Mapping[str, Any]) -> int | None:
    item = a_chat_item.get("chatItem")
    meta = item.get("meta") if isinstance(item, Mapping) else None
    value = meta.get("itemId") if isinstance(meta, Mapping) else None
    return value if isinstance(value, int) else None


def _in_group(a_chat_item: Mapping[str, Any]) -> bool:
    info = a_chat_item.get("chatInfo")
    return isinstance(info, Mapping) and info.get("type") == "group"


class Calls(Rewrite):
    """A rewrite that knows the requests the bot received: by command item ID (chat) and by
    request ID (Service RPC), so that it can tell which reply answers what."""

    def __init__(self) -> None:
        self.chat_requests: dict[int, tuple[str, JSON]] = {}
        self.rpc_requests: dict[str, tuple[str, JSON]] = {}

    def incoming(self, event: JSON) -> JSON | None:
        event = copy.deepcopy(event)
        if event.get("type") == "serviceRequest":
            data = event.get("requestData")
            if isinstance(data, dict):
                changed = self.service_request(data, event)
                if changed is None:
                    return None
                event["requestData"] = changed
                request = changed.get("request")
                protocol = changed.get("protocol")
                if isinstance(request, dict) and isinstance(protocol, str):
                    self.rpc_requests[str(event.get("requestId"))] = (protocol, request)
            return event
        kept: list[JSON] = []
        items = list(_chat_items(event))
        if not items:
            return event
        for a_chat_item in items:
            text = _item_text(a_chat_item)
            if text is None:
                kept.append(a_chat_item)
                continue
            changed_text = self.chat_text(text, a_chat_item)
            if changed_text is None:
                continue
            _set_item_text(a_chat_item, changed_text)
            item_id = _item_id(a_chat_item)
            try:
                call = parse_call_command(changed_text)
            except CallFramingError:
                call = None
            if call is not None and item_id is not None:
                self.chat_requests[item_id] = (call.protocol, dict(call.request))
            kept.append(a_chat_item)
        if not kept:
            return None
        event["chatItems"] = kept
        return event

    def chat_text(self, text: str, a_chat_item: JSON) -> str | None:
        """The text the bot gets for a received message (``None``: the bot never sees it)."""
        return text

    def service_request(self, data: JSON, event: JSON) -> JSON | None:
        """The ``requestData`` the bot gets (``None``: the bot never sees the request)."""
        return data

    def request_for(self, composed: Mapping[str, Any]) -> tuple[str, JSON] | None:
        quoted = composed.get("quotedItemId")
        return self.chat_requests.get(quoted) if isinstance(quoted, int) else None

    def rpc_request_for(self, head: str) -> tuple[str, JSON] | None:
        """The request a ``/_service_response <userId> <requestId> `` head answers."""
        return self.rpc_requests.get(head.split(" ")[2])


def _rewrite_call(text: str, change: Callable[[str, JSON], JSON | None]) -> str:
    """A ``/_call`` text with its request changed by ``change(protocol, request)``."""
    try:
        call = parse_call_command(text)
    except CallFramingError:
        return text
    changed = change(call.protocol, dict(call.request))
    if changed is None:
        return text
    try:
        return format_call_command(call.protocol, changed, member=call.member, check_size=False)
    except SimplexError:
        return text


def _is_final(protocol: str, request: Mapping[str, Any], message: Mapping[str, Any]) -> bool:
    if protocol == "a2a":
        from simplex_protocols.bindings.a2a import is_final_message

        return is_final_message(request, message)
    from simplex_protocols.bindings.mcp import is_final

    return is_final(request, message)


# --------------------------------------------------------------------------- chat replies


class ReplyWithoutQuote(Rewrite):
    def outgoing(self, command: str) -> Outgoing:
        parts = _send_parts(command)
        if parts is None:
            return Outgoing(command)
        head, messages = parts
        for message in messages:
            message.pop("quotedItemId", None)
        return Outgoing(head + dumps(messages))


class ReplyNotJSON(Rewrite):
    def outgoing(self, command: str) -> Outgoing:
        parts = _send_parts(command)
        if parts is None:
            return Outgoing(command)
        head, messages = parts
        changed = [
            _with_text(m, "Answer: " + text) if (text := _text(m)) is not None else m
            for m in messages
        ]
        return Outgoing(head + dumps(changed))


class _ReplyJSON(Calls):
    """Changes the JSON of chat replies and of envelope responses."""

    def message(self, protocol: str | None, request: JSON | None, message: JSON) -> JSON:
        return message

    def envelope(self, protocol: str | None, request: JSON | None, envelope: JSON) -> JSON:
        response = envelope.get("response")
        if isinstance(response, dict):
            envelope["response"] = self.message(protocol, request, response)
        return envelope

    def outgoing(self, command: str) -> Outgoing:
        parts = _send_parts(command)
        if parts is not None:
            head, messages = parts
            changed: list[JSON] = []
            for composed in messages:
                value = _json_of(composed)
                if value is None:
                    changed.append(composed)
                    continue
                known = self.request_for(composed)
                protocol, request = known if known is not None else (None, None)
                changed.append(_with_text(composed, dumps(self.message(protocol, request, value))))
            return Outgoing(head + dumps(changed))
        response = _service_response(command)
        if response is not None:
            head, envelope = response
            known = self.rpc_request_for(head)
            protocol, request = known if known is not None else (None, None)
            return Outgoing(head + dumps(self.envelope(protocol, request, envelope)))
        return Outgoing(command)


class ResponseWrongId(_ReplyJSON):
    def message(self, protocol: str | None, request: JSON | None, message: JSON) -> JSON:
        value = message.get("id")
        if "id" in message and value is not None and ("result" in message or "error" in message):
            message["id"] = value + 1000 if isinstance(value, int) else f"{value}-other"
        return message


class OversizeNotReplaced(_ReplyJSON):
    def message(self, protocol: str | None, request: JSON | None, message: JSON) -> JSON:
        error = message.get("error")
        if isinstance(error, Mapping) and error.get("code") == -32603:
            text = "x" * 1000 + " (truncated)"
            return {
                "jsonrpc": "2.0",
                "id": message.get("id"),
                "result": {"content": [{"type": "text", "text": text}], "truncated": True},
            }
        return message

    def envelope(self, protocol: str | None, request: JSON | None, envelope: JSON) -> JSON:
        error = envelope.get("error")
        if isinstance(error, Mapping) and error.get("code") == "too_large":
            return {"error": {"code": "internal", "message": "the answer was too big"}}
        return envelope


class DiscoverOtherRevisions(_ReplyJSON):
    def message(self, protocol: str | None, request: JSON | None, message: JSON) -> JSON:
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("supportedVersions"), list):
            result["supportedVersions"] = [*result["supportedVersions"], "2099-01-01"]
        return message


class CardWithoutSimplexInterface(_ReplyJSON):
    def message(self, protocol: str | None, request: JSON | None, message: JSON) -> JSON:
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("supportedInterfaces"), list):
            result["supportedInterfaces"] = [
                i
                for i in result["supportedInterfaces"]
                if not (isinstance(i, Mapping) and i.get("protocolBinding") == _A2A_URI)
            ]
        return message


class CardVersionMismatch(_ReplyJSON):
    def message(self, protocol: str | None, request: JSON | None, message: JSON) -> JSON:
        result = message.get("result")
        interfaces = result.get("supportedInterfaces") if isinstance(result, dict) else None
        if isinstance(interfaces, list):
            for interface in interfaces:
                if isinstance(interface, dict) and interface.get("protocolBinding") == _A2A_URI:
                    interface["protocolVersion"] = "0.9"
        return message


class A2AJSONForms(_ReplyJSON):
    """Task states and error codes that are not A2A's JSON forms."""

    def message(self, protocol: str | None, request: JSON | None, message: JSON) -> JSON:
        if protocol != "a2a":
            return message
        error = message.get("error")
        if isinstance(error, dict) and error.get("code") == -32001:
            error["code"] = 404
        changed = _lower_states(message)
        return changed if isinstance(changed, dict) else message


def _lower_states(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (
                v.removeprefix("TASK_STATE_").lower()
                if k == "state" and isinstance(v, str)
                else _lower_states(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_lower_states(v) for v in value]
    return value


class PushOtherError(_ReplyJSON):
    def message(self, protocol: str | None, request: JSON | None, message: JSON) -> JSON:
        error = message.get("error")
        if isinstance(error, dict) and error.get("code") == -32003:
            error["code"] = -32601
            error["message"] = "Method not found"
        return message


class RPCAnswerDiffers(_ReplyJSON):
    """Service RPC responses that differ from the conversation's last reply."""

    def envelope(self, protocol: str | None, request: JSON | None, envelope: JSON) -> JSON:
        response = envelope.get("response")
        result = response.get("result") if isinstance(response, dict) else None
        if isinstance(result, dict):
            result["x-rpc-only"] = True
        return envelope


class ReplyAfterResponse(Calls):
    """The final reply is sent twice."""

    def outgoing(self, command: str) -> Outgoing:
        parts = _send_parts(command)
        if parts is None:
            return Outgoing(command)
        _head, messages = parts
        for composed in messages:
            known = self.request_for(composed)
            value = _json_of(composed)
            if known is not None and value is not None and _is_final(known[0], known[1], value):
                return Outgoing(command, extra=[command])
        return Outgoing(command)


class StreamContinuesAfterTerminal(Calls):
    """A status update follows the reply that ends a stream."""

    def outgoing(self, command: str) -> Outgoing:
        parts = _send_parts(command)
        if parts is None:
            return Outgoing(command)
        head, messages = parts
        for composed in messages:
            known = self.request_for(composed)
            value = _json_of(composed)
            if known is None or value is None or known[1].get("method") not in _STREAMING:
                continue
            if not _is_final(known[0], known[1], value):
                continue
            result = value.get("result")
            holder = None
            if isinstance(result, Mapping):
                holder = result.get("statusUpdate") or result.get("task")
            if not isinstance(holder, Mapping):
                continue
            task_id = holder.get("taskId") or holder.get("id")
            extra = {
                "jsonrpc": "2.0",
                "id": value.get("id"),
                "result": {
                    "statusUpdate": {
                        "taskId": task_id,
                        "contextId": holder.get("contextId"),
                        "status": {"state": "TASK_STATE_WORKING"},
                    }
                },
            }
            return Outgoing(command, extra=[head + dumps([_with_text(composed, dumps(extra))])])
        return Outgoing(command)


class StreamOutOfOrder(_ReplyJSON):
    """The first two artifacts of a stream change places."""

    def message(self, protocol: str | None, request: JSON | None, message: JSON) -> JSON:
        result = message.get("result")
        update = result.get("artifactUpdate") if isinstance(result, dict) else None
        artifact = update.get("artifact") if isinstance(update, dict) else None
        if isinstance(artifact, dict) and artifact.get("name") in ("chunk-1", "chunk-2"):
            swap = {"chunk-1": "chunk-2", "chunk-2": "chunk-1"}
            artifact["name"] = swap[artifact["name"]]
        return message


# --------------------------------------------------------------------------- envelopes


class _Envelopes(Calls):
    def response(self, request: tuple[str, JSON] | None, envelope: JSON) -> Outgoing | JSON:
        return envelope

    def outgoing(self, command: str) -> Outgoing:
        parsed = _service_response(command)
        if parsed is None:
            return Outgoing(command)
        head, envelope = parsed
        changed = self.response(self.rpc_request_for(head), envelope)
        if isinstance(changed, Outgoing):
            sent = changed.command if changed.command is not None else command
            return Outgoing(sent, changed.extra, changed.delay_s)
        return Outgoing(head + dumps(changed))


def _error_code(envelope: Mapping[str, Any]) -> str | None:
    error = envelope.get("error")
    code = error.get("code") if isinstance(error, Mapping) else None
    return code if isinstance(code, str) else None


class ResponseAndError(_Envelopes):
    def response(self, request: tuple[str, JSON] | None, envelope: JSON) -> JSON:
        if "response" in envelope:
            envelope["error"] = {"code": "internal"}
        return envelope


class ErrorMessageNotText(_Envelopes):
    def response(self, request: tuple[str, JSON] | None, envelope: JSON) -> JSON:
        error = envelope.get("error")
        if isinstance(error, dict):
            error["message"] = {"text": str(error.get("message", ""))}
        return envelope


class WrongCodeUnsupportedProtocol(_Envelopes):
    def response(self, request: tuple[str, JSON] | None, envelope: JSON) -> JSON:
        if _error_code(envelope) == "unsupported_protocol":
            envelope["error"]["code"] = "bad_request"
        return envelope


class ProtocolErrorAsEnvelope(_Envelopes):
    def response(self, request: tuple[str, JSON] | None, envelope: JSON) -> JSON:
        response = envelope.get("response")
        if isinstance(response, Mapping) and "error" in response:
            return {"error": {"code": "bad_request", "message": "the request was refused"}}
        return envelope


class PadsResponses(_Envelopes):
    #: Bytes of JSON the padded envelope has: over RPC-LIM-3's 10,000, under the agent's 11,106.
    TARGET_BYTES: Final = 10_400

    def response(self, request: tuple[str, JSON] | None, envelope: JSON) -> JSON:
        if "response" not in envelope:
            return envelope
        size = len(dumps(envelope).encode("utf-8"))
        if size < self.TARGET_BYTES:
            envelope["x-padding"] = "p" * (self.TARGET_BYTES - size - 15)
        return envelope


class RateLimitWithoutRetryAfter(_Envelopes):
    def response(self, request: tuple[str, JSON] | None, envelope: JSON) -> JSON:
        if _error_code(envelope) == "rate_limited":
            envelope["error"].pop("retryAfter", None)
        return envelope


class ConversationRequiredAnswered(_Envelopes):
    """Requests that need a conversation get a JSON-RPC response over Service RPC."""

    def response(self, request: tuple[str, JSON] | None, envelope: JSON) -> JSON:
        if _error_code(envelope) != "conversation_required":
            return envelope
        request_id = request[1].get("id") if request is not None else None
        return {
            "response": {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": -32603, "message": "Internal error"},
            }
        }


class LateConversationRequired(_Envelopes):
    """``conversation_required`` is sent after the core's 180 s window."""

    def response(self, request: tuple[str, JSON] | None, envelope: JSON) -> Outgoing | JSON:
        if _error_code(envelope) == "conversation_required":
            return Outgoing(None, delay_s=181.0)
        return envelope


# --------------------------------------------------------------------------- requests the bot sees


class AcceptsMalformedEnvelope(Calls):
    def service_request(self, data: JSON, event: JSON) -> JSON | None:
        if not isinstance(data.get("protocol"), str):
            data["protocol"] = "mcp" if "method" in (data.get("request") or {}) else "a2a"
        return data


class AcceptsMismatchedKey(Calls):
    def service_request(self, data: JSON, event: JSON) -> JSON | None:
        signer = event.get("signerKey")
        if isinstance(signer, str) and "requestKey" in data and data["requestKey"] != signer:
            data["requestKey"] = signer
        return data


class AcceptsUnsignedKey(Calls):
    def service_request(self, data: JSON, event: JSON) -> JSON | None:
        if "signerKey" not in event:
            data.pop("requestKey", None)
        return data


class RejectsSignedRequests(Calls):
    def service_request(self, data: JSON, event: JSON) -> JSON | None:
        signer = event.get("signerKey")
        if isinstance(signer, str):
            data["requestKey"] = "A" + signer
        return data


class RejectsExtraMembers(Calls):
    def service_request(self, data: JSON, event: JSON) -> JSON | None:
        if set(data) - {"protocol", "request", "version", "requestKey"}:
            data.pop("protocol", None)
        return data


class _RequestRewrite(Calls):
    """Changes the requests the bot gets (:meth:`change`), in ``/_call`` commands and in
    Service RPC envelopes, over the transports in ``TRANSPORTS``."""

    TRANSPORTS: ClassVar[tuple[str, ...]] = ("chat", "rpc")

    def change(self, protocol: str, request: JSON) -> JSON | None:
        """The changed request (``request`` itself, changed, or a new one); ``None``: as it is."""
        return None

    def chat_text(self, text: str, a_chat_item: JSON) -> str | None:
        return _rewrite_call(text, self.change) if "chat" in self.TRANSPORTS else text

    def service_request(self, data: JSON, event: JSON) -> JSON | None:
        request = data.get("request")
        if "rpc" in self.TRANSPORTS and isinstance(request, dict):
            changed = self.change(str(data.get("protocol")), request)
            if changed is not None:
                data["request"] = changed
        return data


class IgnoresMCPRevision(_RequestRewrite):
    def change(self, protocol: str, request: JSON) -> JSON | None:
        params = request.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        key = "io.modelcontextprotocol/protocolVersion"
        if protocol == "mcp" and isinstance(meta, dict) and meta.get(key) != "2026-07-28":
            meta[key] = "2026-07-28"
            return request
        return None


class AnswersInitialize(_RequestRewrite):
    """A legacy ``initialize`` is served as ``server/discover``: a result, not -32022."""

    def change(self, protocol: str, request: JSON) -> JSON | None:
        if protocol != "mcp" or request.get("method") != "initialize":
            return None
        return {
            "jsonrpc": "2.0",
            "id": request.get("id"),
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        }


class _RenameMethods(_RequestRewrite):
    RENAMES: ClassVar[Mapping[str, str]] = {}

    def change(self, protocol: str, request: JSON) -> JSON | None:
        method = request.get("method")
        if isinstance(method, str) and method in self.RENAMES:
            request["method"] = self.RENAMES[method]
            return request
        return None


class MCPMethodsMissing(_RenameMethods):
    RENAMES: ClassVar[Mapping[str, str]] = {
        "server/discover": "server/discover-missing",
        "tools/list": "tools/list-missing",
    }


class StreamingRefusedInChat(_RenameMethods):
    RENAMES: ClassVar[Mapping[str, str]] = {
        "SendStreamingMessage": "SendStreamingMessageMissing",
        "SubscribeToTask": "SubscribeToTaskMissing",
    }
    TRANSPORTS: ClassVar[tuple[str, ...]] = ("chat",)


class OneShotRefused(_RenameMethods):
    RENAMES: ClassVar[Mapping[str, str]] = {"SendMessage": "SendStreamingMessage"}
    TRANSPORTS: ClassVar[tuple[str, ...]] = ("rpc",)


class IgnoresA2AVersion(_RequestRewrite):
    def change(self, protocol: str, request: JSON) -> JSON | None:
        if protocol != "a2a":
            return None
        request["a2a-service-parameters"] = {"A2A-Version": "1.0"}
        return request


class RequestStateCorrupted(_RequestRewrite):
    def change(self, protocol: str, request: JSON) -> JSON | None:
        params = request.get("params")
        if not isinstance(params, dict):
            return None
        state = params.get("requestState")
        if isinstance(state, str) and state:
            params["requestState"] = state[:-1] + ("A" if state[-1] != "A" else "B")
            return request
        return None


class MergedCallers(Calls):
    """Every contact is the first contact, and every signer the first signer, as far as the
    bot knows: tasks and requestState become visible across callers."""

    def __init__(self) -> None:
        super().__init__()
        self.first_contact: int | None = None
        self.first_signer: str | None = None
        self.real_contact: dict[int, int] = {}

    def chat_text(self, text: str, a_chat_item: JSON) -> str | None:
        info = a_chat_item.get("chatInfo")
        contact = info.get("contact") if isinstance(info, dict) else None
        if not isinstance(contact, dict):
            return text
        contact_id = contact.get("contactId")
        item_id = _item_id(a_chat_item)
        if isinstance(contact_id, int) and item_id is not None:
            if self.first_contact is None:
                self.first_contact = contact_id
            self.real_contact[item_id] = contact_id
            contact["contactId"] = self.first_contact
        return text

    def service_request(self, data: JSON, event: JSON) -> JSON | None:
        signer = event.get("signerKey")
        if isinstance(signer, str):
            if self.first_signer is None:
                self.first_signer = signer
            event["signerKey"] = self.first_signer
            if "requestKey" in data:
                data["requestKey"] = self.first_signer
        return data

    def outgoing(self, command: str) -> Outgoing:
        parts = _send_parts(command)
        if parts is None or self.first_contact is None:
            return Outgoing(command)
        head, messages = parts
        quoted = messages[0].get("quotedItemId") if messages else None
        real = self.real_contact.get(quoted) if isinstance(quoted, int) else None
        if real is not None and head.startswith(f"/_send @{self.first_contact} "):
            head = head.replace(f"/_send @{self.first_contact} ", f"/_send @{real} ", 1)
            return Outgoing(head + dumps(messages))
        return Outgoing(command)


# --------------------------------------------------------------------------- calls the bot sees


class IgnoresCalls(Calls):
    def chat_text(self, text: str, a_chat_item: JSON) -> str | None:
        return None if text.startswith("/_call") else text


class AnswersMentionOfOther(Calls):
    def chat_text(self, text: str, a_chat_item: JSON) -> str | None:
        if not _in_group(a_chat_item):
            return text
        try:
            call = parse_call_command(text)
        except CallFramingError:
            return text
        if call.member is None:
            return text
        return format_call_command(call.protocol, call.request_text, check_size=False)


class IgnoresBroadcast(Calls):
    def chat_text(self, text: str, a_chat_item: JSON) -> str | None:
        if (
            _in_group(a_chat_item)
            and text.startswith("/_call ")
            and not text.startswith("/_call @")
        ):
            return None
        return text


class CommandAnywhere(Calls):
    def chat_text(self, text: str, a_chat_item: JSON) -> str | None:
        at = text.find("/_call ")
        return text[at:] if at > 0 else text


class AnswersUnservedProtocol(Calls):
    def chat_text(self, text: str, a_chat_item: JSON) -> str | None:
        try:
            call = parse_call_command(text)
        except CallFramingError:
            return text
        if call.protocol in ("mcp", "a2a"):
            return text
        return format_call_command("mcp", call.request_text, member=call.member, check_size=False)


class SilentOnMalformed(Calls):
    def chat_text(self, text: str, a_chat_item: JSON) -> str | None:
        if not text.startswith("/_call"):
            return text
        try:
            parse_call_command(text)
        except CallFramingError:
            return None
        return text


# --------------------------------------------------------------------------- setup commands


class _Profile(Rewrite):
    """Changes the profile the bot publishes.

    The bot reads its profile back when it starts and refuses one it would not write, so the
    change is not made to its own profile commands: once its setup is done (its address
    settings, the last setup command), one more ``/_profile`` publishes the changed profile.
    """

    def __init__(self) -> None:
        self.last: JSON | None = None

    def profile(self, profile: JSON) -> None:
        return None

    def outgoing(self, command: str) -> Outgoing:
        parsed = _json_tail(command, ("/_create user ", "/_profile "))
        if parsed is not None:
            value = parsed[1]
            profile = value.get("profile") if command.startswith("/_create user ") else value
            if isinstance(profile, dict):
                self.last = copy.deepcopy(profile)
            return Outgoing(command)
        if command.startswith("/_address_settings ") and self.last is not None:
            user_id = command.split(" ")[1]
            changed = copy.deepcopy(self.last)
            self.profile(changed)
            return Outgoing(command, extra=[f"/_profile {user_id} {dumps(changed)}"])
        return Outgoing(command)


def _protocols(profile: JSON) -> dict[str, Any]:
    prefs = profile.setdefault("preferences", {})
    protocols = prefs.setdefault("protocols", {})
    return protocols if isinstance(protocols, dict) else {}


class DeclarationWithoutTransports(_Profile):
    def profile(self, profile: JSON) -> None:
        for decl in _protocols(profile).values():
            if isinstance(decl, dict):
                decl.pop("transports", None)


class CallInCommandsMenu(_Profile):
    def profile(self, profile: JSON) -> None:
        prefs = profile.setdefault("preferences", {})
        menu = prefs.get("commands")
        menu = list(menu) if isinstance(menu, list) else []
        menu.append({"type": "command", "keyword": "_call", "label": "Call a protocol"})
        prefs["commands"] = menu


class MCPLegacyRevisionDeclared(_Profile):
    def profile(self, profile: JSON) -> None:
        decl = _protocols(profile).get("mcp")
        if isinstance(decl, dict):
            decl["versions"] = [*decl.get("versions", []), "2025-06-18"]


class A2AVersionNotMajorMinor(_Profile):
    def profile(self, profile: JSON) -> None:
        decl = _protocols(profile).get("a2a")
        if isinstance(decl, dict):
            decl["versions"] = ["1"]


class _AddressSettings(Rewrite):
    def settings(self, settings: JSON) -> None:
        return None

    def outgoing(self, command: str) -> Outgoing:
        parsed = _json_tail(command, ("/_address_settings ",))
        if parsed is None:
            return Outgoing(command)
        head, value = parsed
        self.settings(value)
        return Outgoing(head + dumps(value))


class ServesUnknownPeerType(_AddressSettings):
    def settings(self, settings: JSON) -> None:
        settings["serves"] = ["agent", "robot"]


class BusinessDeclaringRPC(_AddressSettings):
    def settings(self, settings: JSON) -> None:
        settings["businessAddress"] = True


class BusinessChatIgnoresA2A(BusinessDeclaringRPC, Calls):
    """A business address whose chats declare what the profile does (``a2a`` among it), while
    the owner never answers ``/_call a2a`` in them."""

    def chat_text(self, text: str, a_chat_item: JSON) -> str | None:
        if not _in_group(a_chat_item):
            return text
        try:
            call = parse_call_command(text)
        except CallFramingError:
            return text
        # In a business chat the caller mentions the business member: /_call @name a2a ...
        return None if call.protocol == "a2a" else text


class ServiceRequestsOff(Rewrite):
    def outgoing(self, command: str) -> Outgoing:
        if command.startswith("/_start"):
            return Outgoing(command.replace("service_requests=on", "service_requests=off"))
        return Outgoing(command)


class NoRatchetKeys(Rewrite):
    def outgoing(self, command: str) -> Outgoing:
        if command.startswith(("/_address ", "/_short_link_address ", "/_address_settings ")):
            return Outgoing(command.replace(" pq_ratchet=on", ""))
        return Outgoing(command)


# --------------------------------------------------------------------------- the catalogue


def _m(
    name: str, requirements: tuple[str, ...], description: str, make: Callable[[], Rewrite]
) -> MutantSpec:
    return MutantSpec(Mutant(name, requirements, description), make)


MUTANTS: Final[tuple[MutantSpec, ...]] = (
    _m(
        "bot.declaration-without-transports",
        ("DECL-PROTO-5", "DECL-PROTO-3"),
        "declares protocols without their transports member",
        DeclarationWithoutTransports,
    ),
    _m(
        "bot.call-in-commands-menu",
        ("DECL-PROTO-11",),
        "adds /_call to the commands menu",
        CallInCommandsMenu,
    ),
    _m(
        "bot.serves-unknown-peer-type",
        ("DECL-SERVES-1",),
        "publishes a value that is not a peer type in serves",
        ServesUnknownPeerType,
    ),
    _m(
        "bot.mcp-legacy-revision-declared",
        ("MCP-VER-1",),
        "declares an MCP revision older than 2026-07-28",
        MCPLegacyRevisionDeclared,
    ),
    _m(
        "bot.a2a-version-not-major-minor",
        ("A2A-ID-3",),
        "declares the A2A version 1 instead of 1.0",
        A2AVersionNotMajorMinor,
    ),
    _m(
        "bot.business-address-declaring-rpc",
        ("DECL-PROTO-7",),
        "a business address whose chats copy transports.rpc into groupPreferences",
        BusinessDeclaringRPC,
    ),
    _m(
        "bot.business-chat-ignores-a2a",
        ("DECL-PROTO-16",),
        "a business address whose chats declare a2a, and which never answers it there",
        BusinessChatIgnoresA2A,
    ),
    _m(
        "bot.ignores-calls",
        ("DECL-PROTO-12", "CALL-BOT-1"),
        "never sees /_call commands: declares the chat transport and stays silent",
        IgnoresCalls,
    ),
    _m(
        "bot.service-requests-off",
        ("DECL-PROTO-13", "RPC-CORE-1"),
        "starts its core without service_requests=on",
        ServiceRequestsOff,
    ),
    _m(
        "bot.address-without-ratchet-keys",
        ("DECL-PROTO-13", "RPC-CORE-2"),
        "creates its address without ratchet keys",
        NoRatchetKeys,
    ),
    _m(
        "bot.reply-without-quote",
        ("CALL-REP-1",),
        "replies without quoting the command",
        ReplyWithoutQuote,
    ),
    _m(
        "bot.reply-not-json",
        ("CALL-REP-2",),
        "replies with text that is not a JSON object",
        ReplyNotJSON,
    ),
    _m(
        "bot.command-anywhere-in-text",
        ("CALL-CMD-6",),
        "answers /_call found anywhere in a message's text",
        CommandAnywhere,
    ),
    _m(
        "bot.answers-unserved-protocol",
        ("DECL-PROTO-12",),
        "answers a /_call for a protocol it does not serve as if it were MCP",
        AnswersUnservedProtocol,
    ),
    _m(
        "bot.silent-on-malformed-request",
        ("CALL-BOT-1",),
        "stays silent on a /_call whose request is not JSON",
        SilentOnMalformed,
    ),
    _m(
        "bot.answers-mention-of-other",
        ("CALL-GRP-1",),
        "answers a group /_call that mentions another member",
        AnswersMentionOfOther,
    ),
    _m(
        "bot.ignores-broadcast",
        ("CALL-GRP-2",),
        "stays silent on a group /_call without a mention",
        IgnoresBroadcast,
    ),
    _m(
        "bot.response-and-error",
        ("RPC-ENV-1",),
        "sends envelopes with both response and error",
        ResponseAndError,
    ),
    _m(
        "bot.error-message-not-text",
        ("RPC-ENV-2",),
        "sends envelope errors whose message is not a string",
        ErrorMessageNotText,
    ),
    _m(
        "bot.wrong-code-for-unsupported-protocol",
        ("RPC-ERR-2",),
        "answers bad_request for a protocol it does not serve",
        WrongCodeUnsupportedProtocol,
    ),
    _m(
        "bot.accepts-malformed-envelope",
        ("RPC-ERR-4",),
        "serves envelopes without a valid protocol",
        AcceptsMalformedEnvelope,
    ),
    _m(
        "bot.accepts-mismatched-request-key",
        ("RPC-SIG-3",),
        "accepts a requestKey that is not the signer's key",
        AcceptsMismatchedKey,
    ),
    _m(
        "bot.accepts-unsigned-request-key",
        ("RPC-SIG-4",),
        "accepts an unsigned request that carries requestKey",
        AcceptsUnsignedKey,
    ),
    _m(
        "bot.rejects-signed-requests",
        ("DECL-PROTO-13",),
        "answers bad_request to correctly signed requests",
        RejectsSignedRequests,
    ),
    _m(
        "bot.rejects-extra-envelope-members",
        ("RPC-REQ-7",),
        "treats unknown envelope members as an invalid envelope",
        RejectsExtraMembers,
    ),
    _m(
        "bot.protocol-error-as-envelope-error",
        ("RPC-ENV-4",),
        "sends protocol errors as the envelope error bad_request",
        ProtocolErrorAsEnvelope,
    ),
    _m(
        "bot.pads-responses",
        ("RPC-LIM-3",),
        "sends responses of more than 10,000 bytes of JSON",
        PadsResponses,
    ),
    _m(
        "bot.rate-limited-without-retry-after",
        ("RPC-ENV-6",),
        "sends rate_limited without retryAfter",
        RateLimitWithoutRetryAfter,
    ),
    _m(
        "bot.rpc-answer-differs",
        ("NAME-2", "RPC-ENV-3"),
        "answers differently over Service RPC than in a conversation",
        RPCAnswerDiffers,
    ),
    _m(
        "bot.mcp-methods-missing",
        ("MCP-MSG-5", "MCP-CAP-1"),
        "does not serve server/discover and tools/list",
        MCPMethodsMissing,
    ),
    _m(
        "bot.discover-lists-other-revisions",
        ("MCP-CAP-2",),
        "lists in server/discover a revision it does not declare",
        DiscoverOtherRevisions,
    ),
    _m(
        "bot.response-wrong-id",
        ("MCP-MSG-4", "A2A-STR-2"),
        "answers with another JSON-RPC id than the request's",
        ResponseWrongId,
    ),
    _m(
        "bot.reply-after-response",
        ("MCP-MSG-2", "A2A-MSG-3", "A2A-STR-4"),
        "sends the final reply twice",
        ReplyAfterResponse,
    ),
    _m(
        "bot.ignores-mcp-revision",
        ("MCP-VER-4",),
        "serves any MCP revision as 2026-07-28 (no -32022)",
        IgnoresMCPRevision,
    ),
    _m(
        "bot.answers-initialize",
        ("MCP-VER-4",),
        "answers a legacy initialize with a result",
        AnswersInitialize,
    ),
    _m(
        "bot.oversize-not-replaced",
        ("MCP-MSG-7", "CALL-SIZE-3", "RPC-ERR-7", "A2A-MSG-4"),
        "sends a cut answer instead of -32603, and internal instead of too_large",
        OversizeNotReplaced,
    ),
    _m(
        "bot.request-state-corrupted",
        ("MCP-MSG-6",),
        "loses the requestState of an input_required continuation",
        RequestStateCorrupted,
    ),
    _m(
        "bot.merged-callers",
        ("A2A-AUTHZ-2", "MCP-MSG-6"),
        "takes every contact and signer for the first one: tasks and states across callers",
        MergedCallers,
    ),
    _m(
        "bot.answers-when-conversation-required",
        ("MCP-MSG-8", "RPC-ERR-8", "A2A-STR-6", "A2A-RPC-4"),
        "answers over Service RPC what needs a conversation",
        ConversationRequiredAnswered,
    ),
    _m(
        "bot.late-conversation-required",
        ("RPC-LIM-1", "A2A-RPC-3"),
        "sends conversation_required after the 180 s window",
        LateConversationRequired,
    ),
    _m(
        "bot.ignores-a2a-version",
        ("A2A-SP-4",),
        "serves any A2A-Version, or none, as 1.0",
        IgnoresA2AVersion,
    ),
    _m(
        "bot.push-other-error",
        ("A2A-PUSH-1",),
        "answers push config methods with method not found",
        PushOtherError,
    ),
    _m(
        "bot.card-without-simplex-interface",
        ("A2A-ID-2", "A2A-CARD-2"),
        "serves an Agent Card without the SimpleX interface",
        CardWithoutSimplexInterface,
    ),
    _m(
        "bot.card-interface-version-mismatch",
        ("A2A-ID-5",),
        "names an undeclared version in the card's SimpleX interface",
        CardVersionMismatch,
    ),
    _m(
        "bot.a2a-json-forms",
        ("A2A-MSG-2",),
        "writes task states and errors in forms other than A2A's JSON binding",
        A2AJSONForms,
    ),
    _m(
        "bot.one-shot-refused",
        ("A2A-RPC-1", "A2A-RPC-2"),
        "answers one-shot SendMessage over Service RPC with conversation_required",
        OneShotRefused,
    ),
    _m(
        "bot.stream-continues-after-terminal",
        ("A2A-STR-4",),
        "sends a status update after the reply that ends a stream",
        StreamContinuesAfterTerminal,
    ),
    _m(
        "bot.stream-out-of-order",
        ("A2A-STR-3",),
        "sends a stream's first two artifacts in the wrong order",
        StreamOutOfOrder,
    ),
    _m(
        "bot.streaming-refused-in-chat",
        ("A2A-STR-1",),
        "does not serve the streaming methods in a conversation",
        StreamingRefusedInChat,
    ),
)


def mutants() -> list[Mutant]:
    """Every mutant bot, in a stable order."""
    return [spec.mutant for spec in MUTANTS]


def mutant_spec(name: str) -> MutantSpec | None:
    """The mutant named ``name``, if there is one."""
    for spec in MUTANTS:
        if spec.mutant.name == name:
            return spec
    return None
