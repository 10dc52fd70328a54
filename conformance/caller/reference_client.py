"""The reference client of the caller-side harness: ``python -m simplex_protocols.conformance.caller.reference_client``.

A small client built on the toolkit's transports that follows the client contract
(``docs/conformance-caller.md``): it reads the scenario from the environment, connects to the
core it was given (the CLI's WebSocket API), makes each call of the context in order and prints
one JSON result line. ``simplex-conformance caller`` runs against it in the selftest; it is
also the worked example for implementers writing an adapter for their own client.

What it does, call by call:

- **Chat calls** go through :class:`~simplex_protocols.transports.ChatCaller`: ``/_call`` with
  one space between the parts and the mention as the core writes it (CALL-CMD-1..4); replies
  matched by their quote, from the contact or the mentioned member only, kept with their
  sender in arrival order, text replies kept as text (CALL-CLR-1..5); the wait ends at the
  binding's final message or at ``wait_s`` (AMB-18, reading B). A command over the message
  limit is refused before it is sent (CALL-SIZE-1).
- **A2A streams** that end without their final reply are resumed with SubscribeToTask for the
  task they named (A2A-STR-5).
- **MCP ``input_required`` results** are continued by a fresh request with the answers the
  context gives and the ``requestState`` unchanged (MCP-MSG-6).
- **Service RPC calls** go through :class:`~simplex_protocols.transports.ServiceRPCRequester`:
  the request unchanged in the envelope (RPC-REQ-6), no envelope ``version`` for ``mcp`` and
  ``a2a`` (MCP-VER-3, A2A-SP-6), signed with a key kept for each responder (RPC-REQ-5,
  RPC-SIG-5); repeated only after ``retryAfter`` (RPC-ERR-5, RPC-ERR-6).
- **Requests**: MCP requests carry their revision in ``_meta`` (MCP-VER-2); A2A requests carry
  ``A2A-Version`` (A2A-SP-3) and credentials as service parameters, never in a group
  (A2A-AUTHZ-3, A2A-AUTHZ-4).
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from simplex_protocols import _wire
from simplex_protocols.chat_call import Reply
from simplex_protocols.core import ChatCore, ContactRef, GroupRef, open_core
from simplex_protocols.errors import (
    CallTimeoutError,
    MessageTooLargeError,
    ServiceError,
    SimplexError,
)
from simplex_protocols.rpc import KeyStore
from simplex_protocols.transports import ChatCaller, ServiceRPCRequester

from ._contract import ENV_CONTEXT, ENV_CORE, CallSpec, ContractError, parse_context

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["ReferenceClient", "main"]

JSON = dict[str, Any]

#: The A2A versions this client speaks.
A2A_VERSIONS = ("1.0",)


def binding_helpers(protocol: str) -> ModuleType:
    """The caller helpers of a binding, imported when a call first needs them (each binding
    brings its SDK along; a client process uses one)."""
    if protocol == "mcp":
        from simplex_protocols.bindings import mcp

        return mcp
    from simplex_protocols.bindings import a2a

    return a2a


def reply_json(reply: Reply) -> JSON:
    """A collected reply as the contract writes it: sender, then message or text."""
    sender: str | int
    if reply.sender.display_name:
        sender = reply.sender.display_name
    else:
        sender = reply.sender.group_member_id or reply.sender.contact_id or 0
    if reply.message is not None:
        return {"sender": sender, "message": dict(reply.message)}
    return {"sender": sender, "text": reply.text}


def outcome(
    *,
    replies: list[JSON] | None = None,
    final: Mapping[str, Any] | None = None,
    error: Mapping[str, Any] | None = None,
    attempts: int | None = None,
) -> JSON:
    """One call's entry of the result line."""
    out: JSON = {"replies": replies or [], "final": dict(final) if final is not None else None}
    out["error"] = dict(error) if error is not None else None
    if attempts is not None:
        out["attempts"] = attempts
    return out


class ReferenceClient:
    """Makes the calls of one context on one core and returns the result object.

    Args:
        context: the context object (see :func:`~simplex_protocols.conformance.caller._contract.parse_context`).
        calls: its calls.
        key_folder: where the per-responder signing keys are kept.

    The methods are small on purpose: the mutant clients of the selftest override one each.
    """

    def __init__(self, context: Mapping[str, Any], calls: list[CallSpec], key_folder: Path) -> None:
        self.context = context
        self.calls = calls
        self.key_store = KeyStore(key_folder)
        user_id = context.get("user_id")
        self.user_id = user_id if isinstance(user_id, int) else None
        #: The item ID of the last command sent (for the mutant clients' own collection).
        self.last_command_item: int | None = None

    async def run(self, core: ChatCore) -> JSON:
        """Make every call, in order; one entry per call."""
        results: list[JSON] = []
        for call in self.calls:
            try:
                results.append(await self.make_call(core, call))
            except SimplexError as exc:
                results.append(outcome(error={"code": "client_error", "message": str(exc)}))
        return {"calls": results}

    async def make_call(self, core: ChatCore, call: CallSpec) -> JSON:
        if call.protocol not in ("mcp", "a2a"):
            return {"unsupported": f"protocol {call.protocol}"}
        if call.transport == "chat":
            return await self.chat_call(core, call)
        return await self.rpc_call(core, call)

    # ------------------------------------------------------------------ requests

    def service_parameters(self, call: CallSpec, *, in_group: bool) -> dict[str, str]:
        """A2A service parameters besides ``A2A-Version``: the credentials, outside groups.

        A2A-AUTHZ-4: "A request with a credential MUST NOT be sent in a group."
        """
        if in_group:
            return {}
        return dict(call.credentials)

    def build_request(self, call: CallSpec, *, in_group: bool) -> JSON:
        """The protocol's request message for a call (MCP-VER-2, A2A-SP-3)."""
        if call.protocol == "mcp":
            mcp = binding_helpers("mcp")
            revision = mcp.choose_revision(call.versions) or mcp.DEFAULT_REVISION
            built: JSON = mcp.build_request(
                call.method,
                call.params,
                request_id=call.request_id,
                revision=revision,
            )
            return built
        a2a = binding_helpers("a2a")
        version = next((v for v in call.versions if v in A2A_VERSIONS), A2A_VERSIONS[0])
        request: JSON = a2a.build_a2a_request(
            call.method,
            call.params,
            request_id=call.request_id,
            version=version,
            service_parameters=self.service_parameters(call, in_group=in_group) or None,
        )
        a2a.check_no_credentials_in_group(
            request, in_group=in_group, credential_parameters=call.credentials.keys()
        )
        return request

    def final_rule(
        self, call: CallSpec, request: Mapping[str, Any]
    ) -> Callable[[Mapping[str, Any]], bool]:
        """When an answer ends: the binding's final message (AMB-18, reading B)."""
        helpers = binding_helpers(call.protocol)
        if call.protocol == "mcp":
            return lambda message: bool(helpers.is_final(request, message))
        return lambda message: bool(helpers.is_final_message(request, message))

    # ------------------------------------------------------------------ chat transport

    async def chat_call(self, core: ChatCore, call: CallSpec) -> JSON:
        place = call.chat
        assert place is not None
        in_group = place.kind == "group"
        request = self.build_request(call, in_group=in_group)
        replies: list[JSON] = []
        try:
            final = await self.send_and_collect(core, call, request, replies)
        except MessageTooLargeError:
            # CALL-SIZE-1: one command is one message; an oversize one is not sent at all.
            return outcome(replies=replies, error={"code": "too_large"}, attempts=0)
        if final is not None and call.protocol == "mcp" and call.input_responses is not None:
            final = await self.continue_input(core, call, request, final, replies)
        if (
            final is None
            and call.protocol == "a2a"
            and call.method in binding_helpers("a2a").STREAMING_METHODS
            and not (in_group and place.member_id is None)
        ):
            final = await self.resume_stream(core, call, replies, in_group=in_group)
        if final is None and not (in_group and place.member_id is None):
            return outcome(replies=replies, error={"code": "timeout"}, attempts=1)
        return outcome(replies=replies, final=final, attempts=1)

    async def send_and_collect(
        self, core: ChatCore, call: CallSpec, request: Mapping[str, Any], replies: list[JSON]
    ) -> Mapping[str, Any] | None:
        """Send one ``/_call`` and collect its replies into ``replies``; the final message."""
        place = call.chat
        assert place is not None
        chat = ContactRef(place.contact_id or 0) if place.kind == "direct" else None
        caller = ChatCaller(core)
        result = await caller.call(
            chat if chat is not None else GroupRef(place.group_id or 0),
            call.protocol,
            request,
            member_id=place.member_id,
            member_name=place.member_name,
            final=self.final_rule(call, request),
            wait_s=call.wait_s,
            raise_on_timeout=False,
        )
        self.last_command_item = result.command_item_id
        replies.extend(reply_json(r) for r in result.replies)
        return result.response

    def continuation_id(self, call: CallSpec, round_number: int) -> str | int:
        """The id of the ``round_number``-th continuation: a fresh one (MCP-MSG-6)."""
        return f"{call.request_id}-{round_number}"

    async def continue_input(
        self,
        core: ChatCore,
        call: CallSpec,
        request: Mapping[str, Any],
        final: Mapping[str, Any],
        replies: list[JSON],
    ) -> Mapping[str, Any] | None:
        """MCP-MSG-6: an ``input_required`` result is continued by a fresh request."""
        mcp = binding_helpers("mcp")
        answer: Mapping[str, Any] | None = final
        for round_number in range(1, 4):
            if answer is None or not mcp.read_response(answer).input_required:
                break
            assert call.input_responses is not None
            request = mcp.continue_request(
                request,
                mcp.read_response(answer),
                call.input_responses,
                request_id=self.continuation_id(call, round_number),
            )
            answer = await self.send_and_collect(core, call, request, replies)
        return answer

    async def resume_stream(
        self, core: ChatCore, call: CallSpec, replies: list[JSON], *, in_group: bool
    ) -> Mapping[str, Any] | None:
        """A2A-STR-5: a caller that lost stream replies resumes with SubscribeToTask."""
        a2a = binding_helpers("a2a")
        task_id = None
        for reply in replies:
            message = reply.get("message")
            if isinstance(message, dict):
                task_id = a2a.task_id_of(message) or task_id
        if task_id is None:
            return None
        request = self.subscribe_request(call, task_id, in_group=in_group)
        return await self.send_and_collect(core, call, request, replies)

    def subscribe_request(self, call: CallSpec, task_id: str, *, in_group: bool) -> JSON:
        """The SubscribeToTask request that resumes the task's stream (A2A-SP-3, A2A-AUTHZ-3)."""
        request: JSON = binding_helpers("a2a").build_subscribe_to_task(
            task_id,
            request_id=f"resume-{call.request_id}",
            service_parameters=self.service_parameters(call, in_group=in_group) or None,
        )
        return request

    # ------------------------------------------------------------------ Service RPC

    def requester(self, core: ChatCore) -> ServiceRPCRequester:
        return ServiceRPCRequester(core, user_id=self.user_id, key_store=self.key_store)

    async def rpc_call(self, core: ChatCore, call: CallSpec) -> JSON:
        assert call.target is not None
        request = self.build_request(call, in_group=False)
        requester = self.requester(core)
        try:
            if call.retry is not None:
                # RPC-ERR-5/6: repeated only after retryAfter; an error without it is final.
                response = await requester.request_with_retry(
                    call.target,
                    call.protocol,
                    request,
                    max_attempts=call.retry.max_attempts,
                    max_retry_after_s=int(call.retry.max_retry_after_s),
                    timeout_s=call.wait_s,
                    sign=call.sign,
                )
            else:
                response = await requester.request(
                    call.target, call.protocol, request, timeout_s=call.wait_s, sign=call.sign
                )
        except ServiceError as exc:
            return outcome(error=exc.error)
        except CallTimeoutError:
            return outcome(error={"code": "timeout"})
        except MessageTooLargeError:
            return outcome(error={"code": "too_large"}, attempts=0)
        if not isinstance(response, dict):
            return outcome(error={"code": "bad_response"})
        return outcome(final=response)


async def run_client(client_type: type[ReferenceClient] = ReferenceClient) -> int:
    """Read the environment, run the calls, print the result line; the exit status."""
    core_url = os.environ.get(ENV_CORE)
    context_text = os.environ.get(ENV_CONTEXT)
    if not core_url or not context_text:
        print(f"{ENV_CORE} and {ENV_CONTEXT} must be set", file=sys.stderr)
        return 2
    try:
        context, calls = parse_context(context_text)
    except ContractError as exc:
        print(f"bad context: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="simplex-conformance-keys-") as folder:
        client = client_type(context, calls, Path(folder) / "keys")
        async with open_core(core_url) as core:
            result = await client.run(core)
    sys.stdout.write(_wire.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


def main(client_type: type[ReferenceClient] = ReferenceClient) -> None:
    """The program: exit 0 with the result line, 1 on a failure outside any call."""
    try:
        status = anyio.run(run_client, client_type)
    except Exception:
        traceback.print_exc()
        status = 1
    raise SystemExit(status)


if __name__ == "__main__":
    main()
