"""A2A messages as the SimpleX binding carries them: service parameters, versions, stream ends.

Spec "A2A binding". Everything here works on plain JSON objects (the JSON forms of A2A's
data types), so that both sides share one reading of a message: the bot
(:class:`~simplex_protocols.bindings.a2a.A2ABinding`) and the callers (``simplex-call``, the
conformance suite).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "A2A_BINDING_URI",
    "A2A_PROTOCOL",
    "DEFAULT_A2A_VERSION",
    "INTERRUPTED_STATES",
    "PUSH_NOTIFICATION_METHODS",
    "SERVICE_PARAMETERS_MEMBER",
    "STREAMING_METHODS",
    "TERMINAL_STATES",
    "VERSION_PARAMETER",
    "ends_stream",
    "is_final_message",
    "stream_item_state",
]

#: The protocol name in ``protocols`` declarations and after ``/_call`` (spec "Protocol names").
A2A_PROTOCOL: Final = "a2a"

#: A2A-ID-1: "Binding URI: https://simplex.chat/protocol/a2a/v1."
A2A_BINDING_URI: Final = "https://simplex.chat/protocol/a2a/v1"

#: A2A-SP-1: the member of the JSON-RPC request object that carries the service parameters.
SERVICE_PARAMETERS_MEMBER: Final = "a2a-service-parameters"

#: A2A-SP-3: the service parameter every request carries.
VERSION_PARAMETER: Final = "A2A-Version"

#: The A2A version this toolkit speaks (the ``a2a-sdk`` 1.x serves A2A 1.0).
DEFAULT_A2A_VERSION: Final = "1.0"

#: The two streaming methods (spec "Streaming").
STREAMING_METHODS: Final = frozenset({"SendStreamingMessage", "SubscribeToTask"})

#: The push notification configuration methods of the A2A JSON-RPC binding (spec "Push
#: notifications").
PUSH_NOTIFICATION_METHODS: Final = frozenset(
    {
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
    }
)

#: A2A-STR-4: terminal task states, in their JSON form.
TERMINAL_STATES: Final = frozenset(
    {
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_REJECTED",
    }
)

#: A2A-STR-4: interrupted task states, in their JSON form.
INTERRUPTED_STATES: Final = frozenset({"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"})

_STREAM_END_STATES: Final = TERMINAL_STATES | INTERRUPTED_STATES

#: A2A-ID-3: "A2A versions in the Major.Minor form, for example 1.0."
_MAJOR_MINOR: Final = re.compile(r"(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})")


def is_major_minor(version: str) -> bool:
    """Whether ``version`` is written Major.Minor (``1.0``; not ``1``, ``v1.0`` or ``1.0.1``)."""
    return _MAJOR_MINOR.fullmatch(version) is not None


class ServiceParameterProblem(ValueError):
    """``a2a-service-parameters`` is not an object of names and string values (private)."""


def service_parameters_of(request: Mapping[str, Any]) -> dict[str, str]:
    """The request's service parameters as HTTP-style headers: lower-cased names.

    A2A-SP-2: names are case-insensitive. AMB-22 (reading A): two members whose names differ
    only in case are one parameter, their values joined with ``", "`` in member order, as
    HTTP joins repeated header fields.

    Raises:
        ValueError: the member is present but is not an object of non-empty names and string
            values (the bot answers that with JSON-RPC -32600).
    """
    value = request.get(SERVICE_PARAMETERS_MEMBER)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ServiceParameterProblem(f"{SERVICE_PARAMETERS_MEMBER} must be a JSON object")
    headers: dict[str, str] = {}
    for name, item in value.items():
        if not isinstance(name, str) or not name:
            raise ServiceParameterProblem("a service parameter name must be a non-empty string")
        if not isinstance(item, str):
            raise ServiceParameterProblem(f"service parameter {name!r} must have a string value")
        key = name.lower()
        headers[key] = f"{headers[key]}, {item}" if key in headers else item
    return headers


def without_service_parameters(request: Mapping[str, Any]) -> dict[str, Any]:
    """A2A-SP-5: the request as an HTTP interface receives it: the member removed."""
    return {k: v for k, v in request.items() if k != SERVICE_PARAMETERS_MEMBER}


def _result_of(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    result = message.get("result")
    return result if isinstance(result, Mapping) else None


def stream_item_state(message: Mapping[str, Any]) -> str | None:
    """The task state a stream item reports (``TASK_STATE_...``), if it reports one.

    A stream item is a JSON-RPC response whose ``result`` is a StreamResponse: exactly one of
    ``task``, ``message``, ``statusUpdate`` and ``artifactUpdate``.
    """
    result = _result_of(message)
    if result is None:
        return None
    for key in ("task", "statusUpdate"):
        holder = result.get(key)
        if isinstance(holder, Mapping):
            status = holder.get("status")
            if isinstance(status, Mapping):
                state = status.get("state")
                return state if isinstance(state, str) else None
    return None


def ends_stream(message: Mapping[str, Any]) -> bool:
    """Whether a stream item is the last one of its stream (A2A-STR-4).

    The stream ends with the item whose task or status update is in a terminal state
    (completed, failed, canceled, rejected) or an interrupted one (input required, auth
    required). An error ends it too, and so does a message (a message-only answer has no
    task), and anything that is not a StreamResponse.
    """
    result = _result_of(message)
    if result is None:
        return True
    if "message" in result:
        return True
    if "artifactUpdate" in result:
        return False
    if "task" in result or "statusUpdate" in result:
        return stream_item_state(message) in _STREAM_END_STATES
    return True


def _same_id(request: Mapping[str, Any], message: Mapping[str, Any]) -> bool:
    if "id" not in request:
        return True
    rid, mid = request.get("id"), message.get("id")
    return type(rid) is type(mid) and rid == mid


def is_final_message(request: Mapping[str, Any], message: Any) -> bool:
    """Caller side: whether ``message``, a reply to ``request``, ends the answer.

    - A JSON-RPC error ends every answer (the bot's parse errors carry ``id: null``).
    - For the non-streaming methods, the response with the request's ``id`` (A2A-MSG-3).
    - For ``SendStreamingMessage`` and ``SubscribeToTask``, the stream item with the request's
      ``id`` whose task or status update is in a terminal or interrupted state, or that
      carries a message (A2A-STR-4).

    Anything that is not a JSON object (a reply that is not a protocol message) ends nothing.
    """
    if not isinstance(message, Mapping):
        return False
    if "error" in message:
        return True
    if "result" not in message or not _same_id(request, message):
        return False
    if request.get("method") in STREAMING_METHODS:
        return ends_stream(message)
    return True


def credential_names(extra: Iterable[str] = ()) -> frozenset[str]:
    """Lower-cased service parameter names that carry credentials: ``authorization`` + extra."""
    return frozenset({"authorization", *(name.lower() for name in extra)})
