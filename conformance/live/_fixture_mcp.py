"""The fixture's MCP server (see :mod:`simplex_protocols.conformance.live._fixture`).

Annotations are evaluated by the SDK when the tools are registered, so the types they name are
module globals here.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols.bindings.mcp import needs_conversation

from ._fixture_names import FIXTURE_OVERSIZE_CHARS

__all__ = ["Confirm", "fixture_mcp_server"]


class Confirm(BaseModel):
    """The answer ``conformance_input_required`` asks for."""

    confirm: bool


async def _ask_confirm() -> Elicit[Confirm]:
    return Elicit("Confirm the conformance check?", Confirm)


def fixture_mcp_server(clock: Clock | None = None, *, name: str = "conformance") -> MCPServer[Any]:
    """The fixture's MCP server (the ``mcp`` SDK's ``MCPServer``); ``clock`` times
    ``conformance_slow``."""
    timer: Clock = clock if clock is not None else SystemClock()
    server: MCPServer[Any] = MCPServer(name, subscriptions=False, log_level="WARNING")

    # Every tool is a coroutine: a plain function would run in a worker thread, which the
    # simulated run's clock driver cannot see.
    @server.tool(structured_output=False, description="Returns the text it is given.")
    async def conformance_echo(text: str) -> str:
        return text

    @server.tool(structured_output=False, description="Returns a text of `size` characters.")
    async def conformance_oversize(size: int = FIXTURE_OVERSIZE_CHARS) -> str:
        return "x" * max(0, min(size, 1_000_000))

    @server.tool(structured_output=False, description="Waits `seconds`, then answers.")
    async def conformance_slow(seconds: float) -> str:
        await timer.sleep(max(0.0, min(seconds, 3600.0)))
        return "slept"

    @server.tool(structured_output=False, description="Reports progress `steps` times.")
    async def conformance_progress(ctx: Context, steps: int = 3) -> str:
        steps = max(1, min(steps, 10))
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return "done"

    @server.tool(structured_output=False, description="Answers only in a conversation.")
    @needs_conversation
    async def conformance_needs_conversation() -> str:
        return "in a conversation"

    @server.tool(structured_output=False, description="Asks for a confirmation first.")
    async def conformance_input_required(answer: Annotated[Confirm, Resolve(_ask_confirm)]) -> str:
        return "confirmed" if answer.confirm else "declined"

    return server
