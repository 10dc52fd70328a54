"""Service RPC as the spec's "Service RPC transport" section describes it.

Requester: ``/_service_request <userId> <target>[ timeout=<s>][ sign_key=<key>] <json>``
blocks until ``serviceResponse {user, responseData}`` or an error. Responder: the event
``serviceRequest {user, requestId, signerKey?, requestData}``, answered with
``/_service_response <userId> <requestId> <json>`` (``serviceReplyAccepted {user,
connectionId}``, then the event ``serviceReplySent {connectionId}``).

Failures, each as the core reports it:

- the address has no ratchet keys: ``errorAgent AGENT A_SERVICE notDRAddress`` at once;
- the responder's core runs without ``service_requests=on``: the request is dropped and the
  requester gets ``A_SERVICE timeout`` after its timeout (default 30 s, on the clock);
- a response later than 180 s after the request arrived, or to an unknown request:
  ``A_SERVICE noPendingRequest``;
- a request or response over 11,106 padded bytes: ``errorAgent CMD LARGE``;
- a signature that does not verify at the responder: ``A_SERVICE badSignature``.

Signed requests: the requester's core signs the request payload with ``sign_key``, bound to a
fresh random associated data (AD) per request, as the agent binds it to the ratchet session;
the responder's core verifies it with its own AD and reports ``signerKey``.
"""

from __future__ import annotations

from typing import Any

from simplex_protocols._wire import dumps
from simplex_protocols.errors import MessageTooLargeError
from simplex_protocols.limits import DEFAULT_REQUEST_TIMEOUT_S, RESPONSE_WINDOW_S
from simplex_protocols.rpc import check_service_size
from simplex_protocols.rpc.advanced import reply_queue_info_size

from ._context import DEFERRED, Args, CoreContext, json_arg
from ._delivery import Delivery, ServiceCall
from ._errors import ChatFailure, agent_error, command_error, service_error
from ._grammar import CommandGroup
from ._inbound import ReceiveTable
from ._links import parse_link, parse_name
from ._plans import resolve
from ._store import LinkRow, ServiceRequestRow

__all__ = ["COMMANDS", "RECEIVE", "on_service_sent", "service_call_timed_out"]

JSON = dict[str, Any]

#: The commands of this module, in matching order.
COMMANDS = CommandGroup("service")

#: The messages this module handles.
RECEIVE = ReceiveTable()


def _large(what: str) -> ChatFailure:
    return agent_error({"type": "CMD", "cmdErr": {"type": "LARGE"}, "errContext": what})


@COMMANDS.command(
    "/_service_request <userId:int> <target:word>[ timeout=<timeout:num>]"
    "[ sign_key=<signKey:word>] <request:rest>"
)
def service_request(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    target = a["target"] or ""
    request = json_arg(a["request"], "service request")
    if not isinstance(request, dict):
        raise command_error("invalid service request: a JSON object expected")
    timeout = float(a["timeout"]) if a["timeout"] is not None else DEFAULT_REQUEST_TIMEOUT_S
    if parse_link(target) is None:
        name = parse_name(target)
        record = ctx.network.name_record(name.full) if name is not None else None
        if name is not None and (name.sigil == "#" or (record and record.kind != "contact")):
            raise command_error("a channel name is not a service request target")
    r = resolve(ctx, user, target)
    if r.target.kind != "address":
        raise command_error("service requests are sent to contact addresses")
    owner = ctx.peer(r.target.core)
    link: LinkRow = owner.db.links[r.target.row_id]
    if link.ratchet is None:
        # Spec: "A request to an address without ratchet keys fails at once."
        raise ChatFailure(service_error("notDRAddress"))
    try:
        # RPC-LIM-2: "the agent pads a request ... its own framing included, to 11,106
        # bytes, and a longer one fails" (the reply queue is on the requester's router).
        check_service_size(
            request,
            kind="request",
            signed=a["signKey"] is not None,
            reply_queue_info_bytes=reply_queue_info_size([user.router]),
        )
    except MessageTooLargeError:
        raise _large("service request") from None
    payload = dumps(request).encode("utf-8")
    ad = ctx.network.random.randbytes(32)
    signature = public_key = None
    if a["signKey"] is not None:
        signature, public_key = _sign(a["signKey"], ad, payload)
    session, corr_id = ctx.current
    call = ServiceCall(
        call_id=ctx.random_id(12),
        core=ctx.name,
        session=session,
        corr_id=corr_id,
        user_id=user.user_id,
        deadline=ctx.now() + timeout,
        router=user.router,
        ad=ad,
        payload=payload,
        signature=signature,
        public_key=public_key,
    )
    ctx.network.service_calls[call.call_id] = call
    ctx.send_to_link(
        r.ref.lookup_key,
        r.target.router,
        r.target.core,
        {"t": "x.svc.req", "callId": call.call_id, "requestData": request},
        f"svc:{call.call_id}",
    )
    return DEFERRED


def _sign(sign_key: str, ad: bytes, payload: bytes) -> tuple[Any, Any]:
    try:
        from simplex_protocols.rpc import SigningKey
    except ImportError:  # pragma: no cover - the rpc package ships with the library
        raise command_error("sign_key: signing is not available") from None
    try:
        key = SigningKey.from_sign_key(sign_key)
        return key.sign_service_payload(ad, payload), key.public_key
    except (ValueError, TypeError) as exc:
        raise command_error(f"invalid sign_key: {exc}") from None


@RECEIVE.at_link("x.svc.req", "address")
def on_service_request(ctx: CoreContext, link: LinkRow, d: Delivery) -> None:
    """A service request at one of our addresses: reported to our clients, or dropped."""
    call_id = str(d.body.get("callId"))
    if not ctx.service_requests:
        # Spec: "Otherwise the core drops each request, and the requester waits until
        # its timeout."
        return
    request = d.body.get("requestData")
    if not isinstance(request, dict):
        return
    call = ctx.network.service_calls.get(call_id)
    signer_key: str | None = None
    if call is not None and call.signature is not None:
        ad = call.ad
        if ctx.network.faults.tampered_signatures:
            ad = ctx.network.random.randbytes(32)
        try:
            call.public_key.verify_service_payload(ad, call.payload, call.signature)
        except Exception:
            _svc_reply(ctx, call_id, {"t": "x.svc.resp", "error": "badSignature"}, link)
            return
        signer_key = str(call.public_key.encode())
    user = ctx.db.users[link.user_id]
    row = ServiceRequestRow(
        request_id=ctx.random_id(9),
        user_id=user.user_id,
        received_at=ctx.now(),
        reply_to=call_id,
        connection_id=ctx.random_id(12),
    )
    ctx.db.service_requests[row.request_id] = row
    event: JSON = {
        "type": "serviceRequest",
        "user": ctx.user_json(user.user_id),
        "requestId": row.request_id,
    }
    if signer_key is not None:
        event["signerKey"] = signer_key
    event["requestData"] = request
    ctx.emit(event)


def _svc_reply(ctx: CoreContext, call_id: str, body: JSON, link: LinkRow) -> None:
    call = ctx.network.service_calls.get(call_id)
    if call is None:
        return
    ctx.network.send(ctx.name, call.core, f"svc:{call_id}", call.router, body, src_agent=None)


@COMMANDS.command("/_service_response <userId:int> <requestId:word> <response:rest>")
def service_response(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.user_by_id(a["userId"])
    row = ctx.db.service_requests.get(a["requestId"] or "")
    if row is None or row.user_id != user.user_id:
        raise ChatFailure(service_error("noPendingRequest"))
    if ctx.now() - row.received_at > RESPONSE_WINDOW_S:
        # Spec: "The core accepts a response within 180 seconds of receiving the request."
        del ctx.db.service_requests[row.request_id]
        raise ChatFailure(service_error("noPendingRequest"))
    response = json_arg(a["response"], "service response")
    if not isinstance(response, dict):
        raise command_error("invalid service response")
    try:
        check_service_size(response, kind="response")  # RPC-LIM-2
    except MessageTooLargeError:
        raise _large("service response") from None
    del ctx.db.service_requests[row.request_id]
    call = ctx.network.service_calls.get(row.reply_to)
    if call is not None:
        ctx.network.send(
            ctx.name,
            call.core,
            f"svc:{row.reply_to}",
            call.router,
            {"t": "x.svc.resp", "responseData": response, "connectionId": row.connection_id},
            src_agent=None,
        )
    return {
        "type": "serviceReplyAccepted",
        "user": ctx.user_json(user.user_id),
        "connectionId": row.connection_id,
    }


def on_service_sent(ctx: CoreContext, d: Delivery) -> None:
    """The router accepted our service response: report ``serviceReplySent``."""
    connection_id = d.body.get("connectionId")
    if isinstance(connection_id, str):
        ctx.emit({"type": "serviceReplySent", "connectionId": connection_id})


@RECEIVE.at_service_queue("x.svc.resp")
def on_service_response(ctx: CoreContext, d: Delivery) -> None:
    """The response to one of our service requests: the blocked command's answer."""
    call_id = d.dst[4:]
    call = ctx.network.service_calls.pop(call_id, None)
    if call is None:
        return  # the requester timed out already
    if "error" in d.body:
        resp: JSON = {"type": "chatCmdError", "chatError": service_error(str(d.body["error"]))}
    else:
        resp = {
            "type": "serviceResponse",
            "user": ctx.user_json(call.user_id),
            "responseData": d.body.get("responseData"),
        }
    ctx.events.reply(call.session, call.corr_id, resp)


def service_call_timed_out(ctx: CoreContext, call: ServiceCall) -> None:
    """A service request of ours got no response in time: ``A_SERVICE timeout``."""
    ctx.events.reply(
        call.session,
        call.corr_id,
        {"type": "chatCmdError", "chatError": service_error("timeout")},
    )
