"""The MCP server's own errors: a tool error the model can correct, and a refused transition.

Both are :class:`~simplex_protocols.errors.SimplexError` classes with their own ``code``
(``docs/errors.md``). The errors of the command line, the port and the data folder live with
the modules that raise them (:mod:`simplex_protocols.mcp_server.config`, :mod:`simplex_protocols.mcp_server.http`,
:mod:`simplex_protocols.mcp_server.files`).
"""

from __future__ import annotations

from simplex_protocols.errors import SimplexError

__all__ = ["CallToolError", "InvalidTransitionError", "ToolError"]


class ToolError(SimplexError):
    """An error the model can correct: the call returns ``isError: true`` with :attr:`message`."""

    code = "tool_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CallToolError(ToolError):
    """A call of the ``call`` tool (``--call-tool``) refused before anything reached the bot:
    an argument the model can correct, or a target that does not serve what was asked.

    :attr:`code` names the reason (``docs/mcp_server.md`` lists them): ``bad_target``,
    ``unknown_chat``, ``not_declared``, ``transport_not_served``, ``no_common_version``,
    ``bad_request``, ``too_long_for_card``, ``target_unreachable``.
    """

    code = "call_refused"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class InvalidTransitionError(SimplexError):
    """An event that a state machine's state does not allow: an action's
    (:data:`simplex_protocols.mcp_server.actions.TRANSITIONS`) or a connect's
    (:data:`simplex_protocols.mcp_server.connect_flow.CONNECT_TRANSITIONS`). A bug in the caller, never input."""

    code = "invalid_transition"
