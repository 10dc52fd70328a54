"""Vector operations of the A2A binding (``spec/vectors/a2a/``).

- ``a2a.check_request``: the JSON text of a request a caller sends after ``/_call a2a`` (or in
  an envelope's ``request``) → ``{"method", "id", "version", "service_parameters"}`` (names
  lower-cased); refused when it is not one JSON-RPC request of A2A's JSON-RPC binding with its
  method name unchanged, with ``a2a-service-parameters`` carrying ``A2A-Version`` (Major.Minor).
- ``a2a.service_parameters``: a request object → its service parameters as HTTP headers
  (lower-cased names; two spellings of one name joined with ``", "``, AMB-22 reading A).
- ``a2a.http_proxy``: a request object → ``{"headers", "body"}``: what a proxy to an HTTP
  interface sends (every parameter a header, the member removed from the body).
- ``a2a.check_envelope``: a Service RPC request envelope (text) for ``a2a`` → as
  ``a2a.check_request``; refused when it carries a ``version``.
- ``a2a.check_declaration``: the JSON text of a ``protocols`` value → the ``a2a`` entry's
  ``versions``; refused when one is not written Major.Minor.
- ``a2a.simplex_interfaces``: an Agent Card (JSON text) → its SimpleX interfaces
  ``[{"url", "protocolVersions"}]`` (one per address); refused (``bad_card``, ``not_json``...) when a SimpleX
  interface's ``url`` is not a contact address or the card is not a JSON object.
- ``a2a.ends_stream``: a stream item (a JSON-RPC response) → whether it is the last one.
- ``a2a.is_final``: ``{"request", "message"}`` → whether the message ends the answer.

Error codes: ``not_an_object``, ``batch``, ``not_jsonrpc``, ``not_a_request``,
``bad_request_id``, ``bad_method``, ``unknown_method``, ``bad_params``,
``bad_service_parameters``, ``missing_a2a_version``, ``bad_a2a_version``, ``envelope_version``,
``wrong_protocol``, ``no_a2a_entry``, the wire decoder's and the declarations' codes, and the
discovery problem codes for cards.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from simplex_protocols.bindings._a2a_wire import (
    SERVICE_PARAMETERS_MEMBER,
    VERSION_PARAMETER,
    ServiceParameterProblem,
    ends_stream,
    is_final_message,
    is_major_minor,
    service_parameters_of,
    without_service_parameters,
)
from simplex_protocols.errors import ParseError

from . import op
from ._binding import check_jsonrpc_request, declared, envelope_request
from ._binding import decoded as _decoded
from ._binding import refuse as _refuse

__all__: list[str] = []

#: The methods of A2A 1.0's JSON-RPC binding, as the A2A service defines them (A2A-MSG-1).
A2A_METHODS: Final = frozenset(
    {
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard",
    }
)


def _headers(request: Mapping[str, Any]) -> dict[str, str]:
    try:
        return service_parameters_of(request)
    except ServiceParameterProblem as exc:
        raise _refuse(str(exc), "bad_service_parameters", requirement="A2A-SP-1") from exc


def check_request_value(value: Any) -> dict[str, Any]:
    """The checks of ``a2a.check_request`` on a decoded value."""
    method, rid = check_jsonrpc_request(value, call="an A2A call", requirement="A2A-MSG-1")
    if method not in A2A_METHODS:
        # A2A-MSG-1: method names as A2A's JSON-RPC binding has them, unchanged.
        raise _refuse(
            f"{method!r} is not a method of A2A's JSON-RPC binding", "unknown_method", "A2A-MSG-1"
        )
    if not isinstance(value.get("params", {}), dict):
        raise _refuse("params is a JSON object", "bad_params", requirement="A2A-MSG-1")
    headers = _headers(value)
    version = headers.get(VERSION_PARAMETER.lower())
    if version is None:
        # A2A-SP-3: every request includes the A2A-Version service parameter.
        raise _refuse(f"the request has no {VERSION_PARAMETER}", "missing_a2a_version", "A2A-SP-3")
    if not is_major_minor(version):
        raise _refuse(
            f"{VERSION_PARAMETER} {version!r} is not Major.Minor", "bad_a2a_version", "A2A-ID-3"
        )
    return {"method": method, "id": rid, "version": version, "service_parameters": headers}


@op("a2a.check_request")
def check_request(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """Whether a caller's request is one A2A call of this binding (A2A-MSG-1, A2A-SP-1/3)."""
    return check_request_value(_decoded(value))


@op("a2a.service_parameters")
def service_parameters(value: Any, args: Mapping[str, Any]) -> dict[str, str]:
    """The service parameters of a request object, as HTTP headers (A2A-SP-1, A2A-SP-2)."""
    request = _decoded(value)
    if not isinstance(request, dict):
        raise _refuse("a request is a JSON object", "not_an_object")
    return _headers(request)


@op("a2a.http_proxy")
def http_proxy(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """What a proxy to an HTTP interface sends for a request (A2A-SP-5)."""
    request = _decoded(value)
    if not isinstance(request, dict):
        raise _refuse("a request is a JSON object", "not_an_object")
    headers = _headers(request)
    body = without_service_parameters(request)
    assert SERVICE_PARAMETERS_MEMBER not in body
    return {"headers": headers, "body": body}


@op("a2a.check_envelope")
def check_envelope(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """A requester's envelope for ``a2a``: no ``version`` (A2A-SP-6), a valid request."""
    request = envelope_request(
        value,
        "a2a",
        versioned="an a2a envelope carries no version; A2A-Version travels as a service parameter",
        requirement="A2A-SP-6",
    )
    return check_request_value(request)


@op("a2a.check_declaration")
def check_declaration(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """The ``a2a`` entry of a ``protocols`` value: versions written Major.Minor (A2A-ID-3)."""
    entry = declared(value, "a2a")
    for version in entry.versions:
        if not is_major_minor(version):
            raise _refuse(
                f"A2A version {version!r} is not written Major.Minor",
                "bad_a2a_version",
                requirement="A2A-ID-3",
            )
    return {"versions": list(entry.versions)}


@op("a2a.simplex_interfaces")
def simplex_interfaces(value: Any, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The SimpleX interfaces of an Agent Card (A2A-ID-1, A2A-ID-2)."""
    from simplex_protocols.discovery import read_agent_card

    addresses, problems = read_agent_card(value)
    if problems:
        first = problems[0]
        raise ParseError(
            first.reason, code=first.code, requirement="A2A-ID-2", position=first.position
        )
    return [{"url": a.address, "protocolVersions": list(a.a2a_versions)} for a in addresses]


@op("a2a.ends_stream")
def ends_stream_(value: Any, args: Mapping[str, Any]) -> bool:
    """Whether a stream item is the last of its stream (A2A-STR-4)."""
    return ends_stream(value)


@op("a2a.is_final")
def is_final(value: Any, args: Mapping[str, Any]) -> bool:
    """Whether ``message`` ends the answer to ``request`` (A2A-MSG-3, A2A-STR-4)."""
    return is_final_message(value["request"], value["message"])
