"""The chat core's error objects, as the simulated core builds them.

A command handler raises :class:`ChatFailure` with a ChatError object; the core turns it into
``{"type": "chatCmdError", "chatError": ...}``. The builders below give the exact shapes of
the errors the simulator reports (``error``, ``errorStore`` and ``errorAgent``).
"""

from __future__ import annotations

from typing import Any

from ._links import router_address

__all__ = [
    "ChatFailure",
    "agent_error",
    "broker_timeout",
    "chat_error",
    "command_error",
    "service_error",
    "smp_error",
    "store_error",
]

JSON = dict[str, Any]


class ChatFailure(Exception):
    """A command failed; ``chat_error`` is the core's ChatError object."""

    def __init__(self, chat_error: JSON) -> None:
        super().__init__(chat_error.get("type", "error"))
        self.chat_error = chat_error


def chat_error(error_type: str, **fields: Any) -> ChatFailure:
    """``{"type": "error", "errorType": {"type": error_type, ...}}``."""
    return ChatFailure({"type": "error", "errorType": {"type": error_type, **fields}})


def command_error(message: str) -> ChatFailure:
    """The parser's refusal: ``error commandError {message}``."""
    return chat_error("commandError", message=message)


def store_error(error_type: str, **fields: Any) -> ChatFailure:
    """``{"type": "errorStore", "storeError": {"type": error_type, ...}}``."""
    return ChatFailure({"type": "errorStore", "storeError": {"type": error_type, **fields}})


def agent_error(agent_error_obj: JSON, agent_conn_id: str = "") -> ChatFailure:
    """``{"type": "errorAgent", "agentError": ..., "agentConnId": ...}``."""
    return ChatFailure(
        {"type": "errorAgent", "agentError": agent_error_obj, "agentConnId": agent_conn_id}
    )


def smp_error(host: str, smp_err: JSON) -> ChatFailure:
    """An error returned by a router: ``errorAgent SMP {serverAddress, smpErr}``."""
    return agent_error({"type": "SMP", "serverAddress": router_address(host), "smpErr": smp_err})


def broker_timeout(host: str) -> ChatFailure:
    """A router that does not answer: ``errorAgent BROKER {brokerAddress, brokerErr: TIMEOUT}``."""
    return agent_error(
        {"type": "BROKER", "brokerAddress": router_address(host), "brokerErr": {"type": "TIMEOUT"}}
    )


def service_error(kind: str) -> JSON:
    """The ChatError of a Service RPC failure: ``errorAgent AGENT A_SERVICE <kind>``."""
    return {
        "type": "errorAgent",
        "agentError": {
            "type": "AGENT",
            "agentErr": {"type": "A_SERVICE", "serviceError": {"type": kind}},
        },
        "agentConnId": "",
    }
