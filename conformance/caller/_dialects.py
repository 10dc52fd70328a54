"""The messages the scripted peers send, in each protocol's words.

A scenario says *what* a peer does (a progress message, the final answer, a text, a forged
answer); the dialect of the call's protocol says how that looks on the wire: for MCP a
JSON-RPC notification and the ``tools/call`` response, for A2A the items of a stream and the
task at its end. Every message is built from the request the peer actually received, so it
carries the client's own JSON-RPC ``id`` (which is what makes a forged answer tempting to a
client that matches by ``id``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "A2A_VERSIONS",
    "FORGED_MARKER",
    "MCP_VERSIONS",
    "call_params",
    "final_message",
    "input_required_result",
    "progress_message",
    "resume_messages",
    "stream_item",
]

JSON = dict[str, Any]

#: Every forged message (a third party's, an unmentioned member's, a reply to another
#: command) carries this text, so a check finds it in a client's result wherever it is.
FORGED_MARKER: Final = "FORGED-BY-CONFORMANCE"

MCP_VERSIONS: Final = ("2026-07-28",)
A2A_VERSIONS: Final = ("1.0",)

TOOL_NAME: Final = "conformance_echo"


def call_params(protocol: str, transport: str, request_id: int, text: str) -> tuple[str, JSON]:
    """The method and params a context asks the client to send.

    MCP: ``tools/call`` of an echo tool. A2A: ``SendStreamingMessage`` in a conversation (so
    that an answer has several replies), ``SendMessage`` over Service RPC (the only request it
    serves, A2A-RPC-1).
    """
    if protocol == "mcp":
        return "tools/call", {"name": TOOL_NAME, "arguments": {"text": text}}
    method = "SendStreamingMessage" if transport == "chat" else "SendMessage"
    message = {"messageId": f"m-{request_id}", "role": "ROLE_USER", "parts": [{"text": text}]}
    return method, {"message": message}


def _request_id(request: Mapping[str, Any]) -> Any:
    return request.get("id")


def _progress_token(request: Mapping[str, Any]) -> Any:
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    return meta.get("progressToken") if isinstance(meta, Mapping) else None


def _task_id(label: str) -> str:
    return f"task-{label}"


def progress_message(protocol: str, request: Mapping[str, Any], label: str, step: int) -> JSON:
    """A message that does not end the answer: an MCP notification, an A2A ``working`` item."""
    if protocol == "mcp":
        token = _progress_token(request)
        if token is not None:
            return {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": step, "total": 3},
            }
        return {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": f"step {step}"},
        }
    return stream_item(request, label, "TASK_STATE_WORKING", f"step {step}")


def stream_item(request: Mapping[str, Any], label: str, state: str, text: str) -> JSON:
    """An A2A stream item: a status update of the call's task."""
    return {
        "jsonrpc": "2.0",
        "id": _request_id(request),
        "result": {
            "statusUpdate": {
                "taskId": _task_id(label),
                "contextId": f"ctx-{label}",
                "status": {
                    "state": state,
                    "message": {
                        "messageId": f"s-{label}-{text.replace(' ', '-')}",
                        "role": "ROLE_AGENT",
                        "parts": [{"text": text}],
                    },
                },
            }
        },
    }


def _task(label: str, state: str, text: str | None) -> JSON:
    task: JSON = {"id": _task_id(label), "contextId": f"ctx-{label}", "status": {"state": state}}
    if text is not None:
        task["artifacts"] = [{"artifactId": f"a-{label}", "parts": [{"text": text}]}]
    return task


def final_message(protocol: str, request: Mapping[str, Any], label: str, text: str) -> JSON:
    """The message that ends the answer, carrying ``text``: the MCP tool result, or the A2A
    task in state completed (the last item of a stream, or a SendMessage response)."""
    if protocol == "mcp":
        return {
            "jsonrpc": "2.0",
            "id": _request_id(request),
            "result": {
                "resultType": "complete",
                "content": [{"type": "text", "text": text}],
                "isError": False,
            },
        }
    return {
        "jsonrpc": "2.0",
        "id": _request_id(request),
        "result": {"task": _task(label, "TASK_STATE_COMPLETED", text)},
    }


def submitted_item(request: Mapping[str, Any], label: str) -> JSON:
    """The first item of an A2A stream: the task, submitted (it names the task to resume)."""
    return {
        "jsonrpc": "2.0",
        "id": _request_id(request),
        "result": {"task": _task(label, "TASK_STATE_SUBMITTED", None)},
    }


def resume_messages(request: Mapping[str, Any], label: str, text: str) -> list[JSON]:
    """The answer to SubscribeToTask: the task as it stands, then its completion."""
    working = {
        "jsonrpc": "2.0",
        "id": _request_id(request),
        "result": {"task": _task(label, "TASK_STATE_WORKING", text)},
    }
    done = {
        "jsonrpc": "2.0",
        "id": _request_id(request),
        "result": {
            "statusUpdate": {
                "taskId": _task_id(label),
                "contextId": f"ctx-{label}",
                "status": {"state": "TASK_STATE_COMPLETED"},
            }
        },
    }
    return [working, done]


#: The answers the context gives a client for the ``input_required`` scenario (MCP-MSG-6).
INPUT_RESPONSES: Final = {"confirm": {"action": "accept", "content": {"confirmed": True}}}


def request_state(label: str) -> str:
    """The ``requestState`` of a call's ``input_required`` result (opaque to the client)."""
    return f"conformance-state-{label}-5c1e"


def input_required_result(request: Mapping[str, Any], label: str) -> JSON:
    """An MCP ``input_required`` result asking one question (MCP-MSG-6): the client continues
    with a new request carrying ``inputResponses`` and this ``requestState`` unchanged."""
    return {
        "jsonrpc": "2.0",
        "id": _request_id(request),
        "result": {
            "resultType": "input_required",
            "inputRequests": {
                "confirm": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "Proceed?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"confirmed": {"type": "boolean"}},
                            "required": ["confirmed"],
                        },
                    },
                }
            },
            "requestState": request_state(label),
        },
    }
