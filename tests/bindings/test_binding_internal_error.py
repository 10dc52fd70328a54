"""The binding contract's internal error: what a transport sends when a binding could not
finish a call (it failed, or the bot is shutting down). Both bindings define
``internal_error(request, reason)``; the method stays optional for other bindings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from test_a2a_support import ADDRESS, ScriptedExecutor, make_card

from simplex_protocols.bindings import Binding, Caller, Emit, EnvelopeOutcome
from simplex_protocols.bindings.a2a import A2ABinding
from simplex_protocols.bindings.mcp import MCPBinding
from simplex_protocols.transports.chat import internal_error_for


@pytest.fixture(params=["mcp", "a2a"])
def binding(request: pytest.FixtureRequest) -> Any:
    if request.param == "mcp":
        return MCPBinding(MCPServer("acme"))
    return A2ABinding(ScriptedExecutor(), make_card(), address=ADDRESS)


@pytest.mark.parametrize("rid", [7, "call-7"])
def test_a_request_gets_a_json_rpc_internal_error_with_its_id(binding: Any, rid: Any) -> None:
    request = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {}}
    answer = binding.internal_error(request, "the bot is shutting down")
    assert answer["jsonrpc"] == "2.0" and answer["id"] == rid
    assert answer["error"]["code"] == -32603
    assert "shutting down" in answer["error"]["message"]
    assert "result" not in answer
    # the transports take the binding's own answer
    assert internal_error_for(binding, request, "the bot is shutting down") == answer
    # and the binding's caller side sees it as the end of the answer
    assert binding.is_final(request, answer)


def test_a_notification_or_an_unread_request_gets_no_internal_error(binding: Any) -> None:
    # AMB-30: a JSON-RPC notification is never answered.
    assert binding.internal_error({"jsonrpc": "2.0", "method": "notifications/x"}, "x") is None
    assert binding.internal_error(None, "x") is None
    assert internal_error_for(binding, None, "x") is None


def test_an_unusable_id_is_answered_with_a_null_id(binding: Any) -> None:
    answer = binding.internal_error({"jsonrpc": "2.0", "id": True, "method": "m"}, "internal error")
    assert answer["id"] is None and answer["error"]["code"] == -32603


def test_internal_error_stays_optional_in_the_contract() -> None:
    class Minimal:
        """A binding with only the required members."""

        name = "echo"
        versions = ("1",)

        async def handle_chat(self, request: Mapping[str, Any], caller: Caller, emit: Emit) -> None:
            await emit(dict(request))

        async def handle_rpc(
            self, request: Any, caller: Caller, *, budget_s: float
        ) -> dict[str, Any] | EnvelopeOutcome:
            return dict(request)

        def parse_error(self, raw_request: str, reason: str) -> dict[str, Any]:
            return {}

        def oversize_error(self, message: Mapping[str, Any]) -> dict[str, Any]:
            return {}

        def is_final(self, request: Mapping[str, Any], message: Mapping[str, Any]) -> bool:
            return True

    assert isinstance(Minimal(), Binding)
    assert internal_error_for(Minimal(), {"jsonrpc": "2.0", "id": 1}, "down") == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32603, "message": "down"},
    }
    assert "internal_error(request, reason)" in (Binding.__doc__ or "")
