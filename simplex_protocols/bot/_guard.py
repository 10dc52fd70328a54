"""A guard around each binding: a call cut short stays cut short.

When the bot stops, the transports cancel the calls still running after the grace period, and
answer each with the binding's error. Some SDK code catches the cancellation and returns
normally (a stream generator that ends quietly when it is cancelled); the transport would then
take the call for answered, and the caller would wait for an end that never comes. A cancelled
anyio scope cancels again at the next checkpoint, so one checkpoint after the binding returns
brings the cancellation back where the transport handles it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio.lowlevel

from simplex_protocols.bindings import Binding, Caller, Emit, EnvelopeOutcome

__all__ = ["GuardedBinding"]


class GuardedBinding:
    """A binding that re-raises a cancellation its wrapped binding swallowed."""

    def __init__(self, inner: Binding) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def versions(self) -> tuple[str, ...]:
        return self.inner.versions

    async def handle_chat(self, request: Mapping[str, Any], caller: Caller, emit: Emit) -> None:
        await self.inner.handle_chat(request, caller, emit)
        await anyio.lowlevel.checkpoint()

    async def handle_rpc(
        self, request: Any, caller: Caller, *, budget_s: float
    ) -> dict[str, Any] | EnvelopeOutcome:
        answer = await self.inner.handle_rpc(request, caller, budget_s=budget_s)
        await anyio.lowlevel.checkpoint()
        return answer

    def parse_error(self, raw_request: str, reason: str) -> dict[str, Any]:
        return self.inner.parse_error(raw_request, reason)

    def oversize_error(self, message: Mapping[str, Any]) -> dict[str, Any]:
        return self.inner.oversize_error(message)

    def is_final(self, request: Mapping[str, Any], message: Mapping[str, Any]) -> bool:
        return self.inner.is_final(request, message)
