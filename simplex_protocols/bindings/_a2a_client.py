"""The caller's side of the A2A binding: requests to send and answers to read.

``simplex-call`` and the conformance suite build their A2A requests here, so that each one
carries ``a2a-service-parameters`` with ``A2A-Version`` (A2A-SP-1, A2A-SP-3), and read the
answers here: the result or a :class:`~simplex_protocols.errors.JSONRPCResponseError`, tasks
and messages as the SDK's protobuf types, and the task ID to resume a stream with
SubscribeToTask (A2A-STR-5).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from simplex_protocols.errors import CallFormatError, JSONRPCResponseError, ParseError

from ._a2a_card import card_credential_names
from ._a2a_wire import (
    DEFAULT_A2A_VERSION,
    SERVICE_PARAMETERS_MEMBER,
    VERSION_PARAMETER,
    ServiceParameterProblem,
    is_major_minor,
    service_parameters_of,
)

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import AgentCard, Message, StreamResponse, Task

__all__ = [
    "RequestID",
    "build_a2a_request",
    "build_send_message",
    "build_subscribe_to_task",
    "check_no_credentials_in_group",
    "read_result",
    "read_send_message_result",
    "read_stream_item",
    "read_task",
    "task_id_of",
    "text_of",
]

RequestID = str | int


def _format_error(reason: str, code: str, requirement: str | None = None) -> CallFormatError:
    return CallFormatError(reason, code=code, requirement=requirement)


def build_a2a_request(
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    request_id: RequestID,
    version: str = DEFAULT_A2A_VERSION,
    service_parameters: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One JSON-RPC request of the A2A JSON-RPC binding, for ``/_call a2a`` or an envelope.

    Args:
        method: the A2A method (``SendMessage``, ``GetTask`` ...), unchanged (A2A-MSG-1).
        params: the method's parameters, in A2A's JSON form.
        request_id: the JSON-RPC ``id`` (a string or an integer).
        version: the A2A version, Major.Minor; sent as ``A2A-Version`` (A2A-SP-3).
        service_parameters: other service parameters (``A2A-Extensions``, a credential such
            as ``Authorization`` ...), names as the card gives them.

    Returns:
        ``{"jsonrpc": "2.0", "id", "method", "params", "a2a-service-parameters"}``.

    Raises:
        CallFormatError: ``bad_method``, ``bad_request_id``, ``bad_version`` (not Major.Minor),
            ``bad_service_parameter`` (not a string, two spellings of one name, or a second
            ``A2A-Version``).
    """
    if not method:
        raise _format_error("the A2A method is empty", "bad_method", "A2A-MSG-1")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        raise _format_error("a request id is a string or an integer", "bad_request_id")
    if not is_major_minor(version):
        raise _format_error(
            f"an A2A version is written Major.Minor, such as 1.0, not {version!r}",
            "bad_version",
            "A2A-ID-3",
        )
    members: dict[str, str] = {VERSION_PARAMETER: version}
    seen = {VERSION_PARAMETER.lower()}
    for name, value in (service_parameters or {}).items():
        if not isinstance(value, str) or not name:
            raise _format_error(
                f"service parameter {name!r} needs a name and a string value",
                "bad_service_parameter",
                "A2A-SP-1",
            )
        if name.lower() in seen:
            # AMB-22: our callers never send two spellings of one name.
            raise _format_error(
                f"service parameter {name!r} is given twice (names are case-insensitive)",
                "bad_service_parameter",
                "A2A-SP-2",
            )
        seen.add(name.lower())
        members[name] = value
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    request["params"] = dict(params) if params is not None else {}
    request[SERVICE_PARAMETERS_MEMBER] = members
    return request


def _parts(content: str | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    parts = [dict(part) for part in content]
    if not parts:
        raise _format_error("a message has at least one part", "empty_message")
    return parts


def build_send_message(
    content: str | Sequence[Mapping[str, Any]],
    *,
    request_id: RequestID,
    streaming: bool = False,
    message_id: str | None = None,
    context_id: str | None = None,
    task_id: str | None = None,
    return_immediately: bool = False,
    history_length: int | None = None,
    accepted_output_modes: Iterable[str] = (),
    metadata: Mapping[str, Any] | None = None,
    version: str = DEFAULT_A2A_VERSION,
    service_parameters: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A SendMessage (or SendStreamingMessage) request with a user message.

    Without ``context_id``, ``task_id`` and ``return_immediately`` it is a one-shot task, the
    only request Service RPC serves (A2A-RPC-1).

    Args:
        content: the text, or the message's parts in A2A's JSON form (``{"text": ...}``,
            ``{"raw": <base64>, "mediaType": ...}``, ``{"data": {...}}``, ``{"url": ...}``).
        request_id: the JSON-RPC ``id``.
        streaming: build SendStreamingMessage (conversations only).
        message_id: the message's ID; a random UUID by default.
        context_id: continue this context.
        task_id: continue this task (for example one waiting for input).
        return_immediately: ask for the task at once, before the work ends.
        history_length: how many history messages the answer's task carries.
        accepted_output_modes: media types the caller accepts.
        metadata: the request's metadata.
        version: the A2A version.
        service_parameters: other service parameters.

    Raises:
        CallFormatError: as :func:`build_a2a_request`; ``empty_message`` for no parts,
            ``bad_history_length`` for a negative one.
    """
    message: dict[str, Any] = {
        "messageId": message_id or str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": _parts(content),
    }
    if context_id:
        message["contextId"] = context_id
    if task_id:
        message["taskId"] = task_id
    params: dict[str, Any] = {"message": message}
    configuration: dict[str, Any] = {}
    if return_immediately:
        configuration["returnImmediately"] = True
    if history_length is not None:
        if history_length < 0:
            raise _format_error("historyLength cannot be negative", "bad_history_length")
        configuration["historyLength"] = history_length
    modes = list(accepted_output_modes)
    if modes:
        configuration["acceptedOutputModes"] = modes
    if configuration:
        params["configuration"] = configuration
    if metadata:
        params["metadata"] = dict(metadata)
    method = "SendStreamingMessage" if streaming else "SendMessage"
    return build_a2a_request(
        method,
        params,
        request_id=request_id,
        version=version,
        service_parameters=service_parameters,
    )


def build_subscribe_to_task(
    task_id: str,
    *,
    request_id: RequestID,
    version: str = DEFAULT_A2A_VERSION,
    service_parameters: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """SubscribeToTask: resume the stream of a task after missed replies (A2A-STR-5).

    The answer starts with the task as it stands, then its updates, until a terminal or
    interrupted state. The task ID comes from :func:`task_id_of` on any reply received.

    Raises:
        CallFormatError: ``bad_task_id`` for an empty ID; as :func:`build_a2a_request`.
    """
    if not task_id:
        raise _format_error("SubscribeToTask needs a task id", "bad_task_id", "A2A-STR-5")
    return build_a2a_request(
        "SubscribeToTask",
        {"id": task_id},
        request_id=request_id,
        version=version,
        service_parameters=service_parameters,
    )


def check_no_credentials_in_group(
    request: Mapping[str, Any],
    *,
    in_group: bool,
    card: AgentCard | None = None,
    credential_parameters: Iterable[str] = (),
) -> None:
    """Refuse to send a request that carries a credential in a group (A2A-AUTHZ-4).

    "A request with a credential MUST NOT be sent in a group." The chat transport's caller
    calls this before it sends ``/_call a2a`` to a group.

    Args:
        request: the A2A request about to be sent.
        in_group: whether it goes to a group.
        card: the callee's Agent Card, when known: the service parameters of its security
            schemes count as credentials (A2A-AUTHZ-3).
        credential_parameters: more parameter names to treat as credentials.

    Raises:
        CallFormatError: ``credential_in_group`` (requirement A2A-AUTHZ-4), naming the
            parameter; ``bad_service_parameter`` when the member is malformed. Nothing was sent.
    """
    if not in_group:
        return
    try:
        parameters = service_parameters_of(request)
    except ServiceParameterProblem as exc:
        raise _format_error(str(exc), "bad_service_parameter", "A2A-SP-1") from None
    names = card_credential_names(card) | {name.lower() for name in credential_parameters}
    found = sorted(name for name in parameters if name in names)
    if found:
        raise _format_error(
            f"a request with a credential ({', '.join(found)}) must not be sent in a group",
            "credential_in_group",
            "A2A-AUTHZ-4",
        )


def read_result(response: Mapping[str, Any]) -> Any:
    """The ``result`` of a JSON-RPC response.

    Raises:
        JSONRPCResponseError: the response is an error (``.jsonrpc_code``: -32001 task not
            found, -32009 version not supported ...).
        ParseError: ``not_a_response``: neither ``result`` nor ``error``.
    """
    if "error" in response:
        raise JSONRPCResponseError(response)
    if "result" not in response:
        raise ParseError(
            "the A2A answer is not a JSON-RPC response",
            code="not_a_response",
            requirement="A2A-MSG-2",
        )
    return response["result"]


def _parse(result: Any, message: Any, what: str) -> Any:
    from google.protobuf.json_format import ParseDict  # type: ignore[import-untyped]
    from google.protobuf.json_format import ParseError as ProtoParseError

    if not isinstance(result, Mapping):
        raise ParseError(
            f"the A2A {what} is not a JSON object", code="bad_result", requirement="A2A-MSG-2"
        )
    try:
        ParseDict(result, message, ignore_unknown_fields=True)
    except (ProtoParseError, ValueError, TypeError) as exc:
        raise ParseError(
            f"the A2A {what} is not valid: {exc}", code="bad_result", requirement="A2A-MSG-2"
        ) from None
    return message


def read_send_message_result(response: Mapping[str, Any]) -> Task | Message:
    """The task or the message that answers SendMessage (A2A-RPC-2).

    Raises:
        JSONRPCResponseError: the answer is an error.
        ParseError: ``not_a_response`` or ``bad_result``.
    """
    from a2a.types.a2a_pb2 import SendMessageResponse

    parsed = _parse(read_result(response), SendMessageResponse(), "SendMessage result")
    kind = parsed.WhichOneof("payload")
    if kind == "task":
        task: Task = parsed.task
        return task
    if kind == "message":
        message: Message = parsed.message
        return message
    raise ParseError("the SendMessage result has neither task nor message", code="bad_result")


def read_task(response: Mapping[str, Any]) -> Task:
    """The task that answers GetTask or CancelTask.

    Raises:
        JSONRPCResponseError: the answer is an error.
        ParseError: ``not_a_response`` or ``bad_result``.
    """
    from a2a.types.a2a_pb2 import Task

    task: Task = _parse(read_result(response), Task(), "task")
    return task


def read_stream_item(response: Mapping[str, Any]) -> StreamResponse:
    """One reply of a stream: a StreamResponse (task, message, status or artifact update).

    Raises:
        JSONRPCResponseError: the reply is an error (it ends the stream).
        ParseError: ``not_a_response`` or ``bad_result``.
    """
    from a2a.types.a2a_pb2 import StreamResponse

    item: StreamResponse = _parse(read_result(response), StreamResponse(), "stream item")
    return item


def task_id_of(response: Mapping[str, Any]) -> str | None:
    """The task a reply is about, if it names one: to resume its stream (A2A-STR-5)."""
    result = response.get("result")
    if not isinstance(result, Mapping):
        return None
    task = result.get("task")
    if isinstance(task, Mapping) and isinstance(task.get("id"), str):
        return str(task["id"])
    for key in ("statusUpdate", "artifactUpdate", "message"):
        holder = result.get(key)
        if isinstance(holder, Mapping) and isinstance(holder.get("taskId"), str):
            return str(holder["taskId"]) or None
    if isinstance(result.get("id"), str) and isinstance(result.get("status"), Mapping):
        return str(result["id"])  # a Task itself (GetTask, CancelTask)
    return None


def text_of(value: Task | Message | StreamResponse) -> str:
    """The readable text of a task (its artifacts, else its status message), a message or a
    stream item, text parts joined by newlines; ``""`` when there is none."""
    from a2a.helpers import get_artifact_text, get_message_text
    from a2a.types.a2a_pb2 import Message, StreamResponse

    if isinstance(value, StreamResponse):
        kind = value.WhichOneof("payload")
        if kind == "task":
            return text_of(value.task)
        if kind == "message":
            return text_of(value.message)
        if kind == "status_update":
            return get_message_text(value.status_update.status.message)
        if kind == "artifact_update":
            return get_artifact_text(value.artifact_update.artifact)
        return ""
    if isinstance(value, Message):
        return get_message_text(value)
    texts = [get_artifact_text(artifact) for artifact in value.artifacts]
    texts = [t for t in texts if t]
    if texts:
        return "\n".join(texts)
    return get_message_text(value.status.message)
