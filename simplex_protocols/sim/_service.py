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
- a signature that does not verify at the responder (RPC-SIG-2): the responder's agent
  drops the request and its clients get the event ``chatError`` with ``errorAgent AGENT
  A_SERVICE badSignature``; the requester is not told, and gets ``A_SERVICE timeout`` after
  its timeout.

Signed requests, bound to a session (simplexmq ``plans/2026-07-24-signed-service-requests.md``):
each request opens a new double ratchet with the address, from a fresh key of the requester,
and the ratchet's associated data (AD) is the requester's key 1 followed by the address's key 1.
The requester's agent signs ``SHA3-256("SimpleXService" ‖ AD) ‖ payload`` and sends the public
key and the signature with the payload; the responder's agent computes AD from its own ratchet
and verifies. The message on the wire carries what the agent's does: the requester's ratchet
key, the optional ``(key, signature)`` pair and the payload bytes. So the signature's bytes,
copied into another request (another session with this address, or a session with another
address), meet another AD and fail, as on a real core. The simulator does no X448 arithmetic:
a key 1 is 56 bytes, random for the requester, derived from the link for an address.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

from simplex_protocols import _wire
from simplex_protocols.errors import MessageTooLargeError, SignatureError
from simplex_protocols.limits import DEFAULT_REQUEST_TIMEOUT_S, RESPONSE_WINDOW_S
from simplex_protocols.rpc import PublicKey, SigningKey, check_service_size
from simplex_protocols.rpc.advanced import core_encode_json, reply_queue_info_size

from ._context import DEFERRED, Args, CoreContext, json_arg
from ._delivery import Delivery, ServiceCall
from ._errors import ChatFailure, agent_error, command_error, service_error
from ._grammar import CommandGroup
from ._inbound import ReceiveTable
from ._links import b64url, parse_link, parse_name
from ._plans import resolve
from ._store import LinkRow, ServiceRequestRow

__all__ = [
    "COMMANDS",
    "RECEIVE",
    "address_ratchet_key",
    "on_service_sent",
    "service_call_timed_out",
    "session_associated_data",
]

JSON = dict[str, Any]

#: The commands of this module, in matching order.
COMMANDS = CommandGroup("service")

#: The messages this module handles.
RECEIVE = ReceiveTable()


#: Bytes of an X448 public key, each half of a ratchet's associated data.
_X448_KEY_BYTES = 56


def address_ratchet_key(link: LinkRow) -> bytes:
    """Key 1 of an address's ratchet keys, as the simulator stands it in.

    The requester learns it from the address's link data and the owner keeps it with the
    address, so both derive it from the link's key: 56 bytes, the same for every request to
    the address, different between addresses.
    """
    return hashlib.shake_256(b"simplex-sim address ratchet key 1|" + link.key.encode()).digest(
        _X448_KEY_BYTES
    )


def session_associated_data(requester_key: bytes, address_key: bytes) -> bytes:
    """The ratchet's associated data of one request: the requester's key 1, then the
    address's key 1 (``rcAD``, identical on both ratchets; RPC-SIG-1)."""
    return requester_key + address_key


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
    # The agent carries the request body as the chat core encodes it; those bytes are signed,
    # and measured.
    payload = core_encode_json(request)
    try:
        # RPC-LIM-2: "the agent pads a request ... its own framing included, to 11,106
        # bytes, and a longer one fails" (the reply queue is on the requester's router).
        check_service_size(
            payload,
            kind="request",
            signed=a["signKey"] is not None,
            reply_queue_info_bytes=reply_queue_info_size([user.router]),
        )
    except MessageTooLargeError:
        raise _large("service request") from None
    # A new ratchet with the address for this request, from a fresh key of the requester.
    requester_key = ctx.network.random.randbytes(_X448_KEY_BYTES)
    body: JSON = {"t": "x.svc.req", "ratchetKey": b64url(requester_key), "payload": payload}
    if a["signKey"] is not None:
        ad = session_associated_data(requester_key, address_ratchet_key(link))
        body["signature"] = _sign(a["signKey"], ad, payload.encode("utf-8"))
    session, corr_id = ctx.current
    call = ServiceCall(
        call_id=ctx.random_id(12),
        core=ctx.name,
        session=session,
        corr_id=corr_id,
        user_id=user.user_id,
        deadline=ctx.now() + timeout,
        router=user.router,
    )
    ctx.network.service_calls[call.call_id] = call
    body["callId"] = call.call_id  # the reply queue
    ctx.send_to_link(r.ref.lookup_key, r.target.router, r.target.core, body, f"svc:{call.call_id}")
    return DEFERRED


def _sign(sign_key: str, ad: bytes, payload: bytes) -> JSON:
    """The agent's ``RequestSignature``: the public key (as ``signerKey`` encodes it) and the
    signature of ``payload`` bound to the session's ``ad``."""
    try:
        key = SigningKey.from_sign_key(sign_key)
    except (ValueError, TypeError) as exc:
        raise command_error(f"invalid sign_key: {exc}") from None
    signature = key.sign_service_payload(ad, payload)
    return {"key": key.public_key.encode(), "signature": b64url(signature)}


def _b64url_decode(text: object) -> bytes:
    if not isinstance(text, str):
        raise ValueError("not a string")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("not base64url") from None


def _verified_signer(ctx: CoreContext, link: LinkRow, body: JSON, payload: str) -> PublicKey | None:
    """The signer's key of a signed request whose signature verifies in this request's session
    (RPC-SIG-2: "Verification happens in the responder's agent"); ``None`` if it does not."""
    signed = body.get("signature")
    try:
        if not isinstance(signed, dict):
            raise ValueError("no RequestSignature")
        requester_key = _b64url_decode(body.get("ratchetKey"))
        key = PublicKey.decode(str(signed.get("key")))
        signature = _b64url_decode(signed.get("signature"))
    except (ValueError, SignatureError):
        return None
    # AD from our own side of the ratchet: the address's key and the requester's key this
    # message was encrypted with, never anything the signer chose.
    ad = session_associated_data(requester_key, address_ratchet_key(link))
    if ctx.network.faults.tampered_signatures:
        ad = ctx.network.random.randbytes(len(ad))
    try:
        key.verify_service_payload(ad, payload.encode("utf-8"), signature)
    except SignatureError:
        return None
    return key


@RECEIVE.at_link("x.svc.req", "address")
def on_service_request(ctx: CoreContext, link: LinkRow, d: Delivery) -> None:
    """A service request at one of our addresses: reported to our clients, or dropped."""
    call_id = str(d.body.get("callId"))
    if not ctx.service_requests:
        # Spec: "Otherwise the core drops each request, and the requester waits until
        # its timeout."
        return
    payload = d.body.get("payload")
    if not isinstance(payload, str):
        return
    try:
        request = _wire.loads(payload)
    except ValueError:  # the wire refuses it (WireJSONError)
        return
    if not isinstance(request, dict):
        return
    signer_key: str | None = None
    if "signature" in d.body:
        signer = _verified_signer(ctx, link, d.body, payload)
        if signer is None:
            # The agent logs the error, reports ERR (AGENT (A_SERVICE badSignature)) on the
            # address's connection and makes no invitation: the request is not reported, and
            # nothing goes back to the requester.
            error = service_error("badSignature")
            conn = ctx.db.conns.get(link.conn_id)
            error["agentConnId"] = conn.agent_conn_id if conn is not None else ""
            ctx.emit({"type": "chatError", "chatError": error})
            return
        signer_key = signer.encode()
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
    resp: JSON = {
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
