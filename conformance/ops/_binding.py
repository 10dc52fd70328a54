"""What the operations of the MCP and A2A bindings share: the JSON-RPC request checks, the
envelope and declaration reading, and the refusal (a :class:`ParseError` with a code)."""

from __future__ import annotations

from typing import Any

from simplex_protocols import _wire
from simplex_protocols.declarations import ProtocolDeclaration, parse_protocols
from simplex_protocols.errors import ParseError
from simplex_protocols.rpc import ABSENT, parse_service_request

__all__ = ["check_jsonrpc_request", "declared", "decoded", "envelope_request", "refuse"]


def refuse(reason: str, code: str, requirement: str | None = None) -> ParseError:
    """The error an operation raises for a refused input."""
    return ParseError(reason, code=code, requirement=requirement)


def decoded(value: Any) -> Any:
    """A JSON text decoded (strictly, as the wire is read); any other value as it is."""
    if isinstance(value, str | bytes):
        try:
            return _wire.loads(value)
        except _wire.WireJSONError as exc:
            raise refuse(exc.reason, exc.syntax_code) from exc
    return value


def check_jsonrpc_request(value: Any, *, call: str, requirement: str) -> tuple[str, str | int]:
    """The method and id of one JSON-RPC request (``call`` names it: "an MCP call").

    Raises:
        ParseError: ``batch``, ``not_an_object``, ``not_jsonrpc``, ``bad_method``,
            ``not_a_request`` or ``bad_request_id``, naming ``requirement``.
    """
    if isinstance(value, list):
        # "a single JSON-RPC request", never a batch.
        raise refuse("a JSON-RPC batch is not one request", "batch", requirement=requirement)
    if not isinstance(value, dict):
        raise refuse(f"{call} is a JSON object", "not_an_object", requirement=requirement)
    if value.get("jsonrpc") != "2.0":
        raise refuse('a JSON-RPC request has "jsonrpc": "2.0"', "not_jsonrpc", requirement)
    method = value.get("method")
    if not isinstance(method, str) or not method:
        raise refuse("a request has a method", "bad_method", requirement=requirement)
    if "id" not in value:
        raise refuse("a message without id is a notification", "not_a_request", requirement)
    rid = value["id"]
    if isinstance(rid, bool) or not isinstance(rid, str | int):
        raise refuse("a request id is a string or an integer", "bad_request_id", requirement)
    return method, rid


def envelope_request(value: Any, protocol: str, *, versioned: str, requirement: str) -> Any:
    """The request of a requester's envelope for ``protocol``, which carries no ``version``
    (``versioned`` says why, naming ``requirement``).

    Raises:
        ParseError: the envelope's codes, ``wrong_protocol`` or ``envelope_version``.
    """
    envelope = parse_service_request(value)
    if envelope.protocol != protocol:
        raise refuse(f"the envelope is for {envelope.protocol!r}", "wrong_protocol")
    if envelope.version is not ABSENT:
        raise refuse(versioned, "envelope_version", requirement=requirement)
    return envelope.request


def declared(value: Any, protocol: str) -> ProtocolDeclaration:
    """The ``protocol`` entry of a ``protocols`` value (JSON text or decoded).

    Raises:
        ParseError: the declarations' codes, or ``no_<protocol>_entry``.
    """
    entry = parse_protocols(decoded(value), strict=True).get(protocol)
    if entry is None:
        raise refuse(f"the value declares no {protocol}", f"no_{protocol}_entry")
    return entry
