"""simplex-bridge's forwarding: a lowlevel MCP server that asks the upstream server.

:func:`forwarding_server` answers each request by making the same request of the upstream
server's current session: results, progress and ``input_required`` rounds pass through as
they came, and a JSON-RPC error of the upstream server is answered with the same code,
message and data. :class:`BridgeBinding` is the MCP binding over it that answers calls
arriving while the upstream server restarts with a retryable error.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, INTERNAL_ERROR

from simplex_protocols.bindings.mcp import MCPBinding
from simplex_protocols.rpc import ErrorCode
from simplex_protocols.transports import Caller, EnvelopeOutcome

from ._bridge_upstream import Upstream, UpstreamRestarting, describe_failure

__all__ = ["RETRY_DATA_KEY", "BridgeBinding", "forwarding_server", "restarting_error"]

logger = logging.getLogger("simplex_protocols.bot.bridge")

_T = TypeVar("_T")

#: The key of the JSON-RPC error's data that says when a repeat can succeed, in seconds: the
#: name the Service RPC envelope gives it (RPC-ENV-6), so both transports say it alike.
RETRY_DATA_KEY = "retryAfter"


def restarting_error(retry_after: int) -> MCPError:
    """The JSON-RPC error of a call the upstream server could not take: it is restarting."""
    return MCPError(
        INTERNAL_ERROR,
        f"the MCP server is restarting; try again in {retry_after} s",
        {RETRY_DATA_KEY: retry_after},
    )


async def _ask(upstream: Upstream, call: Callable[[Any], Awaitable[_T]]) -> _T:
    """Make one request of the upstream server's session, mapping how it can fail."""
    try:
        client = upstream.client()
    except UpstreamRestarting as exc:
        raise restarting_error(exc.retry_after) from None
    try:
        return await call(client)
    except MCPError as exc:
        if exc.code == CONNECTION_CLOSED:
            # The server went away during the call: it is being started again. Whether it
            # acted on the call is unknown, as after any lost connection.
            raise restarting_error(upstream.retry_after()) from None
        # The upstream server's own JSON-RPC error: answered with the same code, message and
        # data (the binding maps an MCPError to its error as it stands).
        raise
    except Exception as exc:
        # Not an answer of the server (a broken stream, an answer the SDK could not read):
        # the caller gets an internal error, the details go to our log only.
        logger.warning(
            "the MCP server %s failed a request: %s", upstream.spec.label, describe_failure(exc)
        )
        raise MCPError(INTERNAL_ERROR, "the MCP server failed the request") from None


def _cursor(params: types.PaginatedRequestParams | None) -> str | None:
    return params.cursor if params is not None else None


def forwarding_server(
    upstream: Upstream,
    capabilities: types.ServerCapabilities,
    *,
    name: str,
    version: str | None = None,
    instructions: str | None = None,
) -> Server[Any]:
    """A lowlevel MCP server that answers each request by asking ``upstream``.

    Only what ``capabilities`` (the upstream server's, from its first session) declares is
    served, so ``server/discover`` tells callers what the upstream server offers.
    """
    handlers: dict[str, Any] = {}

    if capabilities.tools is not None:

        async def list_tools(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return await _ask(upstream, lambda c: c.list_tools(cursor=_cursor(params)))

        async def call_tool(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult | types.InputRequiredResult:
            async def progress(value: float, total: float | None, message: str | None) -> None:
                # A no-op when the SimpleX caller asked for no progress.
                await ctx.session.report_progress(value, total, message)

            # The session's call, not Client.call_tool: the result goes back as it came
            # (no output-schema check here, input_required rounds left to the caller).
            return await _ask(
                upstream,
                lambda c: c.session.call_tool(
                    params.name,
                    params.arguments,
                    progress_callback=progress,
                    input_responses=params.input_responses,
                    request_state=params.request_state,
                    allow_input_required=True,
                ),
            )

        handlers |= {"on_list_tools": list_tools, "on_call_tool": call_tool}

    if capabilities.resources is not None:

        async def list_resources(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListResourcesResult:
            return await _ask(upstream, lambda c: c.list_resources(cursor=_cursor(params)))

        async def list_templates(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListResourceTemplatesResult:
            return await _ask(upstream, lambda c: c.list_resource_templates(cursor=_cursor(params)))

        async def read_resource(
            ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
        ) -> types.ReadResourceResult:
            return await _ask(upstream, lambda c: c.read_resource(str(params.uri)))

        handlers |= {
            "on_list_resources": list_resources,
            "on_list_resource_templates": list_templates,
            "on_read_resource": read_resource,
        }

    if capabilities.prompts is not None:

        async def list_prompts(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListPromptsResult:
            return await _ask(upstream, lambda c: c.list_prompts(cursor=_cursor(params)))

        async def get_prompt(
            ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
        ) -> types.GetPromptResult:
            return await _ask(upstream, lambda c: c.get_prompt(params.name, params.arguments))

        handlers |= {"on_list_prompts": list_prompts, "on_get_prompt": get_prompt}

    return Server(name, version=version or "", instructions=instructions, **handlers)


class BridgeBinding(MCPBinding):
    """The MCP binding of a bridge: while the upstream server restarts, calls get a
    retryable error instead of waiting.

    Over Service RPC that is the envelope error ``internal`` (RPC-ERR-10: the failure is the
    responder's) with ``retryAfter`` (RPC-ENV-6: "the number of seconds after which a repeated
    request can succeed"), which requesters such as simplex-call wait out and repeat. In a
    conversation, where no envelope exists, it is the JSON-RPC error -32603 with the same
    number under ``data.retryAfter``.
    """

    def __init__(self, server: Server[Any], upstream: Upstream, **options: Any) -> None:
        super().__init__(server, **options)
        self._upstream = upstream

    async def handle_rpc(
        self, request: Any, caller: Caller, *, budget_s: float
    ) -> dict[str, Any] | EnvelopeOutcome:
        """Answer a Service RPC envelope's ``request`` (see :class:`MCPBinding`), or the
        retryable envelope error when the upstream server is not there for it."""
        if isinstance(request, Mapping) and "id" in request and not self._upstream.connected:
            return self._retry_outcome()
        answer = await super().handle_rpc(request, caller, budget_s=budget_s)
        if isinstance(answer, dict) and _retry_after_of(answer) is not None:
            # The server went away during the call: the envelope says so, in the form that
            # requesters repeat (the response inside would read as the tool's own failure).
            return self._retry_outcome()
        return answer

    def _retry_outcome(self) -> EnvelopeOutcome:
        retry_after = self._upstream.retry_after()
        return EnvelopeOutcome(
            ErrorCode.INTERNAL,
            f"the MCP server is restarting; try again in {retry_after} s",
            retry_after=retry_after,
        )


def _retry_after_of(answer: Mapping[str, Any]) -> int | None:
    error = answer.get("error")
    if not isinstance(error, Mapping) or error.get("code") != INTERNAL_ERROR:
        return None
    data = error.get("data")
    value = data.get(RETRY_DATA_KEY) if isinstance(data, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None
