"""The mutant clients: the reference client with one requirement switched off each.

Each class overrides one method of :class:`~simplex_protocols.conformance.caller.reference_client.ReferenceClient`
with a plausible bug (the kind a client written in a hurry has). ``_mutants.MUTANTS`` is the
catalogue; :data:`MUTANT_CLIENTS` maps its names to these classes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio

from simplex_protocols import _wire
from simplex_protocols.chat_call import (
    CallState,
    CallTarget,
    ReplyCollector,
    format_call_command,
    format_mention,
)
from simplex_protocols.core import ChatAPI, ChatCore, ContactRef, GroupRef, event_type
from simplex_protocols.core import commands as cmds
from simplex_protocols.errors import CoreError, MessageTooLargeError, ServiceError
from simplex_protocols.limits import MAX_SERVICE_JSON_BYTES
from simplex_protocols.rpc import ServiceRequest, SigningKey, parse_service_response

from ._contract import CallSpec
from .reference_client import JSON, ReferenceClient, binding_helpers, outcome, reply_json

__all__ = ["MUTANT_CLIENTS"]

#: How long a watching mutant lets its event reader catch up after a call.
_CATCH_UP_S: Final = 0.1


@dataclass(frozen=True, slots=True)
class _Item:
    """A received message, as a client that reads raw events sees it."""

    in_group: bool
    chat_id: int
    sender: str
    item_id: int
    text: str
    quoted: int | None

    def reply(self) -> JSON:
        try:
            value = _wire.loads(self.text)
        except _wire.WireJSONError:
            value = None
        if isinstance(value, dict):
            return {"sender": self.sender, "message": value}
        return {"sender": self.sender, "text": self.text}

    def message(self) -> JSON | None:
        body = self.reply().get("message")
        return body if isinstance(body, dict) else None

    def message_id(self) -> Any:
        """The ``id`` of the protocol message, if it is one."""
        return (self.message() or {}).get("id")


def _items(events: list[JSON]) -> list[_Item]:
    out: list[_Item] = []
    for event in events:
        for aci in event.get("chatItems") or []:
            item = aci.get("chatItem") or {}
            info = aci.get("chatInfo") or {}
            direction = (item.get("chatDir") or {}).get("type")
            text = (item.get("content") or {}).get("msgContent", {}).get("text")
            if direction not in ("directRcv", "groupRcv") or not isinstance(text, str):
                continue
            quoted = (item.get("quotedItem") or {}).get("itemId")
            if direction == "directRcv":
                contact = info.get("contact") or {}
                out.append(
                    _Item(
                        False,
                        int(contact.get("contactId", 0)),
                        str(contact.get("localDisplayName", "")),
                        int(item["meta"]["itemId"]),
                        text,
                        quoted,
                    )
                )
            else:
                member = (item.get("chatDir") or {}).get("groupMember") or {}
                group = info.get("groupInfo") or {}
                out.append(
                    _Item(
                        True,
                        int(group.get("groupId", 0)),
                        str((member.get("memberProfile") or {}).get("displayName", "")),
                        int(item["meta"]["itemId"]),
                        text,
                        quoted,
                    )
                )
    return out


class _Watching(ReferenceClient):
    """Reads every event while the reference collection runs, then re-collects its own way."""

    async def send_and_collect(
        self, core: ChatCore, call: CallSpec, request: Mapping[str, Any], replies: list[JSON]
    ) -> Mapping[str, Any] | None:
        seen: list[JSON] = []
        async with core.events(buffer=100_000) as events, anyio.create_task_group() as tg:

            async def watch() -> None:
                async for event in events:
                    if event_type(event) == "newChatItems":
                        seen.append(event)

            tg.start_soon(watch)
            own: list[JSON] = []
            final = await super().send_and_collect(core, call, request, own)
            await anyio.sleep(_CATCH_UP_S)
            tg.cancel_scope.cancel()
        kept, final = self.recollect(call, request, own, final, _items(seen))
        replies.extend(kept)
        return final

    def recollect(
        self,
        call: CallSpec,
        request: Mapping[str, Any],
        replies: list[JSON],
        final: Mapping[str, Any] | None,
        items: list[_Item],
    ) -> tuple[list[JSON], Mapping[str, Any] | None]:
        """The replies are the items :meth:`takes`; the final one the first final among them."""
        taken = [i for i in items if self.takes(call, request, i)]
        return [i.reply() for i in taken], self.first_final(call, request, taken) or final

    def takes(self, call: CallSpec, request: Mapping[str, Any], item: _Item) -> bool:
        """Whether this client takes a received message as a reply (its bug)."""
        raise NotImplementedError

    def first_final(
        self, call: CallSpec, request: Mapping[str, Any], items: list[_Item]
    ) -> JSON | None:
        rule = self.final_rule(call, request)
        for item in items:
            message = item.message()
            if message is not None and rule(message):
                return message
        return None


class ThirdPartyReply(_Watching):
    """CALL-CLR-4 off: a message in any chat carrying the request's id is part of the answer."""

    def takes(self, call: CallSpec, request: Mapping[str, Any], item: _Item) -> bool:
        return item.message_id() == request.get("id") or item.quoted == self.last_command_item


class UnmentionedMemberReply(_Watching):
    """CALL-CLR-5 off: every member's reply quoting the command counts, mention or not."""

    def takes(self, call: CallSpec, request: Mapping[str, Any], item: _Item) -> bool:
        return item.quoted == self.last_command_item


class MatchById(_Watching):
    """CALL-CLR-1 and MCP-MSG-9 off: in the chat, a message with the request's id is a reply."""

    def takes(self, call: CallSpec, request: Mapping[str, Any], item: _Item) -> bool:
        assert call.chat is not None
        chat_id = call.chat.contact_id if call.chat.kind == "direct" else call.chat.group_id
        return item.chat_id == chat_id and (
            item.quoted == self.last_command_item or item.message_id() == request.get("id")
        )


class DropTextReplies(ReferenceClient):
    """CALL-CLR-3 off: replies that are not protocol messages are dropped."""

    async def send_and_collect(
        self, core: ChatCore, call: CallSpec, request: Mapping[str, Any], replies: list[JSON]
    ) -> Mapping[str, Any] | None:
        own: list[JSON] = []
        final = await super().send_and_collect(core, call, request, own)
        replies.extend(r for r in own if "message" in r)
        return final


class DedupeReplies(ReferenceClient):
    """CALL-CLR-2 off: a reply identical to an earlier one of the same sender is dropped."""

    async def send_and_collect(
        self, core: ChatCore, call: CallSpec, request: Mapping[str, Any], replies: list[JSON]
    ) -> Mapping[str, Any] | None:
        own: list[JSON] = []
        final = await super().send_and_collect(core, call, request, own)
        seen: set[str] = set()
        for reply in own:
            key = _wire.dumps(reply)
            if key not in seen:
                seen.add(key)
                replies.append(reply)
        return final


class FirstAnswerOnly(ReferenceClient):
    """CALL-CLR-2 off for broadcasts: only the first member that answered is kept."""

    async def send_and_collect(
        self, core: ChatCore, call: CallSpec, request: Mapping[str, Any], replies: list[JSON]
    ) -> Mapping[str, Any] | None:
        own: list[JSON] = []
        final = await super().send_and_collect(core, call, request, own)
        if own:
            first = own[0]["sender"]
            replies.extend(r for r in own if r["sender"] == first)
        return final


class EarlyReturn(ReferenceClient):
    """CALL-CLR-2 off: the first protocol message ends the call."""

    def final_rule(
        self, call: CallSpec, request: Mapping[str, Any]
    ) -> Callable[[Mapping[str, Any]], bool]:
        return lambda message: True


# --------------------------------------------------------------------------- Service RPC


class _OwnRetries(ReferenceClient):
    """Repeats Service RPC requests by its own rule (:meth:`delay`)."""

    def delay(self, error: ServiceError) -> float | None:
        """Seconds to wait before repeating after ``error``; ``None``: do not repeat."""
        return None

    async def rpc_call(self, core: ChatCore, call: CallSpec) -> JSON:
        assert call.target is not None
        request = self.build_request(call, in_group=False)
        requester = self.requester(core)
        attempts = call.retry.max_attempts if call.retry is not None else 1
        for attempt in range(1, attempts + 1):
            try:
                response = await requester.request(
                    call.target, call.protocol, request, timeout_s=call.wait_s, sign=call.sign
                )
            except ServiceError as exc:
                wait = self.delay(exc)
                if wait is None or attempt == attempts:
                    return outcome(error=exc.error, attempts=attempt)
                await anyio.sleep(wait)
                continue
            return outcome(final=response if isinstance(response, dict) else None, attempts=attempt)
        return outcome(error={"code": "client_error"})


class UnknownErrorRetry(_OwnRetries):
    """RPC-ERR-6 off: every error is worth a repeat, after retryAfter or one second."""

    def delay(self, error: ServiceError) -> float | None:
        return float(error.retry_after) if error.retry_after is not None else 1.0


class IgnoreRetryAfter(_OwnRetries):
    """RPC-ERR-5 off: an error that allows a repeat (or rate_limited) is repeated at once."""

    def delay(self, error: ServiceError) -> float | None:
        if error.retry_after is not None or error.code == "rate_limited":
            return 0.0
        return None


async def _request_once(
    client: ReferenceClient,
    core: ChatCore,
    call: CallSpec,
    request: Mapping[str, Any],
    **options: Any,
) -> JSON:
    """One Service RPC request, not repeated; ``options`` go to the requester as they are."""
    assert call.target is not None
    try:
        response = await client.requester(core).request(
            call.target, call.protocol, request, timeout_s=call.wait_s, **options
        )
    except ServiceError as exc:
        return outcome(error=exc.error)
    return outcome(final=response if isinstance(response, dict) else None)


class EnvelopeVersion(ReferenceClient):
    """MCP-VER-3 and A2A-SP-6 off: the envelope carries the protocol's version."""

    async def rpc_call(self, core: ChatCore, call: CallSpec) -> JSON:
        request = self.build_request(call, in_group=False)
        version = call.versions[0] if call.versions else "1"
        return await _request_once(self, core, call, request, version=version, sign=call.sign)


class EnvelopeMemberInRequest(ReferenceClient):
    """RPC-REQ-6 off: the request sent over Service RPC gets the envelope's protocol member."""

    async def rpc_call(self, core: ChatCore, call: CallSpec) -> JSON:
        request = dict(self.build_request(call, in_group=False))
        request["protocol"] = call.protocol
        return await _request_once(self, core, call, request, sign=call.sign)


class OneKeyForAll(ReferenceClient):
    """RPC-SIG-5 off: one signing key for every responder."""

    shared = SigningKey.generate()

    async def rpc_call(self, core: ChatCore, call: CallSpec) -> JSON:
        request = self.build_request(call, in_group=False)
        key = self.shared if call.sign else None
        return await _request_once(self, core, call, request, signing_key=key)


class RequestKeyMismatch(ReferenceClient):
    """RPC-REQ-5 off: requestKey names one key, another key signs."""

    async def rpc_call(self, core: ChatCore, call: CallSpec) -> JSON:
        assert call.target is not None
        if not call.sign:
            return await super().rpc_call(core, call)
        named, signing = SigningKey.generate(), SigningKey.generate()
        envelope = ServiceRequest(
            protocol=call.protocol,
            request=self.build_request(call, in_group=False),
            request_key=named.public_key.encode(),
        )
        user_id = self.user_id if self.user_id is not None else 1
        command = cmds.send_service_request(
            user_id,
            call.target,
            envelope.to_json(),
            timeout_s=call.wait_s,
            sign_key=signing.to_sign_key(),
        )
        try:
            answer = await core.command(command)
        except CoreError as exc:
            return outcome(error={"code": "transport", "message": str(exc)})
        data = answer.get("responseData")
        response = parse_service_response(data if isinstance(data, dict) else {})
        if response.error is not None:
            return outcome(error={"code": response.error.code})
        return outcome(final=response.response if isinstance(response.response, dict) else None)


# --------------------------------------------------------------------------- requests


class NoMetaRevision(ReferenceClient):
    """MCP-VER-2 off: no revision in _meta."""

    def build_request(self, call: CallSpec, *, in_group: bool) -> JSON:
        request = super().build_request(call, in_group=in_group)
        if call.protocol == "mcp":
            request["params"]["_meta"].pop("io.modelcontextprotocol/protocolVersion", None)
        return request


class JSONRPCMissing(ReferenceClient):
    """MCP-MSG-1 off: no ``"jsonrpc": "2.0"``."""

    def build_request(self, call: CallSpec, *, in_group: bool) -> JSON:
        request = super().build_request(call, in_group=in_group)
        if call.protocol == "mcp":
            request.pop("jsonrpc", None)
        return request


class NoA2AVersion(ReferenceClient):
    """A2A-SP-3 off: no A2A-Version."""

    def build_request(self, call: CallSpec, *, in_group: bool) -> JSON:
        request = super().build_request(call, in_group=in_group)
        if call.protocol == "a2a":
            request["a2a-service-parameters"].pop("A2A-Version", None)
        return request

    def subscribe_request(self, call: CallSpec, task_id: str, *, in_group: bool) -> JSON:
        request = super().subscribe_request(call, task_id, in_group=in_group)
        request["a2a-service-parameters"].pop("A2A-Version", None)
        return request


class ParamsServiceParameters(ReferenceClient):
    """A2A-SP-1 off: the service parameters go inside params."""

    def build_request(self, call: CallSpec, *, in_group: bool) -> JSON:
        request = super().build_request(call, in_group=in_group)
        if call.protocol == "a2a":
            request["params"]["a2a-service-parameters"] = request.pop("a2a-service-parameters")
        return request


_OLD_NAMES: Final = {
    "SendMessage": "message/send",
    "SendStreamingMessage": "message/stream",
    "SubscribeToTask": "tasks/resubscribe",
}


class MethodRenamed(ReferenceClient):
    """A2A-MSG-1 off: A2A 0.3 method names."""

    def build_request(self, call: CallSpec, *, in_group: bool) -> JSON:
        request = super().build_request(call, in_group=in_group)
        if call.protocol == "a2a":
            request["method"] = _OLD_NAMES.get(request["method"], request["method"])
        return request


class CredentialInGroup(ReferenceClient):
    """A2A-AUTHZ-4 off: the credential goes everywhere, groups included."""

    def service_parameters(self, call: CallSpec, *, in_group: bool) -> dict[str, str]:
        return dict(call.credentials)

    def build_request(self, call: CallSpec, *, in_group: bool) -> JSON:
        if call.protocol != "a2a":
            return super().build_request(call, in_group=in_group)
        request: JSON = binding_helpers("a2a").build_a2a_request(
            call.method,
            call.params,
            request_id=call.request_id,
            service_parameters=self.service_parameters(call, in_group=in_group) or None,
        )
        return request


class CredentialInMetadata(ReferenceClient):
    """A2A-AUTHZ-3 off: the credential travels in the message's metadata."""

    def service_parameters(self, call: CallSpec, *, in_group: bool) -> dict[str, str]:
        return {}

    def build_request(self, call: CallSpec, *, in_group: bool) -> JSON:
        request = super().build_request(call, in_group=in_group)
        if call.protocol == "a2a" and call.credentials and not in_group:
            params = request.setdefault("params", {})
            params["metadata"] = {k.lower(): v for k, v in call.credentials.items()}
        return request


class InputRequiredReusedId(ReferenceClient):
    """MCP-MSG-6 off: the continuation of an ``input_required`` result reuses the request id."""

    def continuation_id(self, call: CallSpec, round_number: int) -> str | int:
        return call.request_id


class NoStreamResume(ReferenceClient):
    """A2A-STR-5 off: a stream that stopped is given up."""

    async def resume_stream(
        self, core: ChatCore, call: CallSpec, replies: list[JSON], *, in_group: bool
    ) -> Mapping[str, Any] | None:
        return None


# --------------------------------------------------------------------------- commands


async def _raw_call(
    client: ReferenceClient,
    core: ChatCore,
    call: CallSpec,
    request: Mapping[str, Any],
    texts: list[str],
    replies: list[JSON],
) -> Mapping[str, Any] | None:
    """Send ``texts`` as messages and collect replies to the last one, as the reference does."""
    place = call.chat
    assert place is not None
    chat = (
        ContactRef(place.contact_id or 0)
        if place.kind == "direct"
        else GroupRef(place.group_id or 0)
    )
    target = (
        CallTarget.direct(place.contact_id or 0)
        if place.kind == "direct"
        else CallTarget.group(place.group_id or 0, place.member_id)
    )
    api = ChatAPI(core)
    rule = client.final_rule(call, request)
    async with core.events(buffer=100_000) as events:
        sent: list[Any] = []
        for text in texts:
            sent = await api.send_messages(chat, [cmds.composed_text(text)])
        item_id = int(sent[0]["chatItem"]["meta"]["itemId"])
        client.last_command_item = item_id
        start = anyio.current_time()
        collector = ReplyCollector(item_id, target, deadline=start + call.wait_s, is_final=rule)
        with anyio.move_on_after(call.wait_s):
            async for event in events:
                if event_type(event) != "newChatItems":
                    continue
                for item in event.get("chatItems") or []:
                    collector.receive_item(item, anyio.current_time())
                while collector.next_event() is not None:
                    pass
                if collector.state is not CallState.WAITING:
                    break
    collector.check_deadline(max(anyio.current_time(), collector.deadline))
    result = collector.result()
    final = None
    for reply in result.replies:
        replies.append(reply_json(reply))
        if reply.final and reply.message is not None and final is None:
            final = reply.message
    return final


class DoubleSpace(ReferenceClient):
    """CALL-CMD-3 off: two spaces between the parts."""

    async def send_and_collect(
        self, core: ChatCore, call: CallSpec, request: Mapping[str, Any], replies: list[JSON]
    ) -> Mapping[str, Any] | None:
        member = call.chat.member_name if call.chat is not None else None
        mention = f"{format_mention(member)}  " if member is not None else ""
        text = f"/_call  {mention}{call.protocol}  {_wire.dumps(dict(request))}"
        return await _raw_call(self, core, call, request, [text], replies)


class MentionUnquoted(ReferenceClient):
    """CALL-CMD-4 off: the mention is written without quotes, whatever the name."""

    async def send_and_collect(
        self, core: ChatCore, call: CallSpec, request: Mapping[str, Any], replies: list[JSON]
    ) -> Mapping[str, Any] | None:
        assert call.chat is not None
        member = call.chat.member_name
        if member is None:
            return await super().send_and_collect(core, call, request, replies)
        text = f"/_call @{member} {call.protocol} {_wire.dumps(dict(request))}"
        return await _raw_call(self, core, call, request, [text], replies)


class SplitCommand(ReferenceClient):
    """CALL-SIZE-1 off: a command too large for one message goes in several."""

    async def send_and_collect(
        self, core: ChatCore, call: CallSpec, request: Mapping[str, Any], replies: list[JSON]
    ) -> Mapping[str, Any] | None:
        try:
            return await super().send_and_collect(core, call, request, replies)
        except MessageTooLargeError:
            text = format_call_command(call.protocol, request, check_size=False)
            pieces = [text[i : i + 8_000] for i in range(0, len(text), 8_000)]
            return await _raw_call(self, core, call, request, pieces, replies)


class DropLargeReplies(ReferenceClient):
    """CALL-SIZE-1 and RPC-LIM-3 off: replies and responses over 10,000 bytes are dropped."""

    async def send_and_collect(
        self, core: ChatCore, call: CallSpec, request: Mapping[str, Any], replies: list[JSON]
    ) -> Mapping[str, Any] | None:
        own: list[JSON] = []
        final = await super().send_and_collect(core, call, request, own)
        for reply in own:
            if len(_wire.dumps(reply).encode()) <= MAX_SERVICE_JSON_BYTES:
                replies.append(reply)
        if final is not None and len(_wire.dumps(dict(final)).encode()) > MAX_SERVICE_JSON_BYTES:
            return None
        return final

    async def rpc_call(self, core: ChatCore, call: CallSpec) -> JSON:
        result = await super().rpc_call(core, call)
        final = result.get("final")
        if final is not None and len(_wire.dumps(final).encode()) > MAX_SERVICE_JSON_BYTES:
            return outcome(error={"code": "too_large"})
        return result


MUTANT_CLIENTS: Final[Mapping[str, type[ReferenceClient]]] = {
    "client.third-party-reply": ThirdPartyReply,
    "client.unmentioned-member-reply": UnmentionedMemberReply,
    "client.drop-text-replies": DropTextReplies,
    "client.match-by-id": MatchById,
    "client.dedupe-replies": DedupeReplies,
    "client.first-answer-only": FirstAnswerOnly,
    "client.early-return": EarlyReturn,
    "client.unknown-error-retry": UnknownErrorRetry,
    "client.ignore-retry-after": IgnoreRetryAfter,
    "client.no-a2a-version": NoA2AVersion,
    "client.credential-in-group": CredentialInGroup,
    "client.envelope-version": EnvelopeVersion,
    "client.envelope-member-in-request": EnvelopeMemberInRequest,
    "client.one-key-for-all": OneKeyForAll,
    "client.request-key-mismatch": RequestKeyMismatch,
    "client.no-meta-revision": NoMetaRevision,
    "client.jsonrpc-missing": JSONRPCMissing,
    "client.params-service-parameters": ParamsServiceParameters,
    "client.method-renamed": MethodRenamed,
    "client.credential-in-metadata": CredentialInMetadata,
    "client.no-stream-resume": NoStreamResume,
    "client.input-required-reused-id": InputRequiredReusedId,
    "client.split-command": SplitCommand,
    "client.double-space": DoubleSpace,
    "client.mention-unquoted": MentionUnquoted,
    "client.drop-large-replies": DropLargeReplies,
}
