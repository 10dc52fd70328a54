"""Vector operations of the equivalence of both transports (``spec/vectors/transports/``).

NAME-2: both transports carry a binding's messages untouched, so the request after
``/_call <protocol>`` is the envelope's ``request``, and the last reply of an answer is the
envelope's ``response``. Messages compare as JSON values (member order and spacing aside).

- ``transports.equivalent_request``: ``{"command", "envelope"}`` (the ``/_call`` text and the
  request envelope text) → ``{"protocol", "request"}``; refused with ``protocol_mismatch`` or
  ``not_equivalent``.
- ``transports.equivalent_response``: ``{"reply", "envelope"}`` (the text of the last reply
  and the response envelope text) → the response message; refused with ``not_equivalent``, or
  ``envelope_error`` when the envelope carries ``error`` (the protocol never saw the request).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simplex_protocols import _wire
from simplex_protocols.chat_call import parse_call_command
from simplex_protocols.conformance._vectors import json_equal
from simplex_protocols.errors import ParseError
from simplex_protocols.rpc import parse_service_request, parse_service_response

from . import op

__all__: list[str] = []


@op("transports.equivalent_request")
def equivalent_request(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """The ``/_call`` request and the envelope ``request`` are one message (NAME-2)."""
    command = parse_call_command(value["command"])
    envelope = parse_service_request(value["envelope"])
    if command.protocol != envelope.protocol:
        raise ParseError(
            f"/_call names {command.protocol!r}, the envelope {envelope.protocol!r}",
            code="protocol_mismatch",
            requirement="NAME-2",
        )
    if not json_equal(dict(command.request), envelope.request):
        raise ParseError(
            "the envelope's request differs from the request after /_call",
            code="not_equivalent",
            requirement="NAME-2",
        )
    return {"protocol": envelope.protocol, "request": envelope.request}


@op("transports.equivalent_response")
def equivalent_response(value: Any, args: Mapping[str, Any]) -> Any:
    """The last reply and the envelope ``response`` are one message (NAME-2, RPC-ENV-3)."""
    try:
        reply = _wire.loads(value["reply"])
    except _wire.WireJSONError as exc:
        raise ParseError(exc.reason, code=exc.syntax_code) from exc
    envelope = parse_service_response(value["envelope"])
    if envelope.error is not None:
        raise ParseError(
            "the envelope carries an error: the protocol never saw the request",
            code="envelope_error",
            requirement="RPC-ENV-4",
        )
    if not json_equal(reply, envelope.response):
        raise ParseError(
            "the envelope's response differs from the last reply",
            code="not_equivalent",
            requirement="NAME-2",
        )
    return envelope.response
