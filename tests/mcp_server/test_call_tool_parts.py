"""The call tool's parts without I/O (``--call-tool``): targets, transports, envelope errors,
the owner's ``/approve N calls`` and the card."""

from __future__ import annotations

import re

import pytest

from simplex_protocols.declarations import ProtocolDeclaration
from simplex_protocols.errors import ServiceError, service_error_for_code
from simplex_protocols.mcp_server.call_flow import (
    PROGRESS_TOKEN,
    build_call,
    envelope_error,
    pick_transport,
    read_target,
)
from simplex_protocols.mcp_server.cards import Outcome, Subject, call_card
from simplex_protocols.mcp_server.cli import COMMAND_HELP, parse_args
from simplex_protocols.mcp_server.config import ServeOptions, UsageError
from simplex_protocols.mcp_server.control import OwnerCommand, parse_owner_command
from simplex_protocols.mcp_server.errors import CallToolError
from simplex_protocols.mcp_server.tools import TOOLS, ToolSpec, tool_specs

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_targets_are_read_by_kind() -> None:
    assert read_target("@3").kind == "chat"
    assert read_target("@acme.simplex").kind == "simplex"
    assert read_target("https://acme.example").kind == "website"
    assert read_target("acme.example").kind == "website"
    for bad in ("hello there", "@0", "ftp://x"):
        with pytest.raises(CallToolError) as caught:
            read_target(bad)
        assert caught.value.code == "bad_target"


def test_auto_prefers_service_rpc_for_one_shot_calls_and_a_conversation_otherwise() -> None:
    both = ProtocolDeclaration("mcp", ("2026-07-28",), chat=True, rpc=True)
    assert pick_transport("auto", both, "mcp", True, chat_only=False) == "rpc"
    assert pick_transport("auto", both, "a2a", False, chat_only=False) == "chat"
    assert pick_transport("auto", both, "mcp", True, chat_only=True) == "chat"
    rpc_only = ProtocolDeclaration("a2a", ("1.0",), rpc=True)
    with pytest.raises(CallToolError) as caught:
        pick_transport("rpc", rpc_only, "a2a", False, chat_only=False)
    assert caught.value.code == "transport_not_served"
    with pytest.raises(CallToolError) as caught:
        pick_transport("chat", rpc_only, "a2a", True, chat_only=False)
    assert caught.value.message == (
        "The bot does not serve a2a in a conversation; call with transport rpc."
    )


def test_an_mcp_request_carries_the_calls_traceparent_and_in_chat_a_progress_token() -> None:
    built = build_call(
        "mcp",
        "tools/call",
        {"name": "t", "arguments": {}},
        version="2026-07-28",
        chat=True,
        traceparent=TRACEPARENT,
    )
    meta = built.request["params"]["_meta"]
    assert meta["traceparent"] == TRACEPARENT
    assert meta["progressToken"] == PROGRESS_TOKEN
    rpc = build_call("mcp", "tools/list", None, version="2026-07-28", chat=False)
    assert "progressToken" not in rpc.request["params"]["_meta"]
    assert "traceparent" not in rpc.request["params"]["_meta"]


def test_only_a_plain_send_message_is_one_shot() -> None:
    message = {"role": "ROLE_USER", "messageId": "m", "parts": [{"text": "hi"}]}
    send = build_call("a2a", "SendMessage", {"message": message}, version="1.0", chat=False)
    assert send.one_shot
    threaded = {"message": {**message, "contextId": "c-1"}}
    assert not build_call("a2a", "SendMessage", threaded, version="1.0", chat=False).one_shot
    assert not build_call("a2a", "GetTask", {"id": "t"}, version="1.0", chat=False).one_shot


@pytest.mark.parametrize(
    ("error", "text", "extra"),
    [
        (
            service_error_for_code("rate_limited", retry_after=30),
            "rate_limited: call again after 30 s",
            {"error_code": "rate_limited", "retry_after": 30},
        ),
        (
            service_error_for_code("conversation_required"),
            "conversation_required: the bot answers this call only in a conversation: call "
            "again with transport chat",
            {"error_code": "conversation_required"},
        ),
        (
            service_error_for_code("timed_out"),
            "timed_out: the bot did not answer in time: call again later, or with a longer wait",
            {"error_code": "timed_out"},
        ),
        (
            service_error_for_code("x_custom"),
            "the bot answered x_custom",
            {"error_code": "x_custom"},
        ),
    ],
)
def test_envelope_errors_say_what_to_do(
    error: ServiceError, text: str, extra: dict[str, object]
) -> None:
    assert envelope_error(error) == (text, extra)


def test_approve_n_calls_and_revoke_n_calls_are_read() -> None:
    assert parse_owner_command("/'approve 5 calls'") == OwnerCommand("approve", n="5", calls=True)
    assert parse_owner_command("/revoke 5 calls") == OwnerCommand("revoke", n="5", calls=True)
    assert parse_owner_command("/reject 5 calls") == OwnerCommand("unknown")
    assert parse_owner_command("/approve @5 calls") == OwnerCommand("unknown")


def test_the_call_cards_peer_text_is_code_spans_and_its_standing_form_names_calls() -> None:
    card = call_card(
        7,
        Subject("bot", "Acme"),
        address="https://smp.example/a#x",
        verified=False,
        declares=["mcp 2026-07-28 (chat, rpc)"],
        protocol="mcp",
        method="tools/call",
        transport="rpc",
        params_json='{"a":"[x](https://evil.example)"}',
    )
    assert card.pending().splitlines() == [
        "I want to call bot Acme over MCP: `tools/call`.",
        "Address: `https://smp.example/a#x`",
        "Not verified: the address came as a link or from a website.",
        "It declares: `mcp 2026-07-28 (chat, rpc)`.",
        "By Service RPC, signed with my key for this bot.",
        "With the params:",
        '`{"a":"[x](https://evil.example)"}`',
        "/'approve 7', /'approve 7 calls' or /'reject 7'",
    ]
    assert card.outcome(Outcome.STANDING, by="Alice").splitlines()[-1] == (
        "Approved for calls to this bot by Alice. /'revoke 7 calls'"
    )


def test_the_option_is_off_by_default_and_shows_in_serve_help() -> None:
    plain = parse_args(["serve", "my-agent"])
    calling = parse_args(["serve", "my-agent", "--call-tool"])
    assert isinstance(plain, ServeOptions) and not plain.call_tool
    assert isinstance(calling, ServeOptions) and calling.call_tool
    assert re.search(r"^  --call-tool\b", COMMAND_HELP["serve"], re.MULTILINE)
    with pytest.raises(UsageError, match=r"^--call-tool takes no value$"):
        parse_args(["serve", "my-agent", "--call-tool=yes"])


def test_the_list_schema_has_call_actions_only_with_the_tool() -> None:
    def tools_enum(specs: tuple[ToolSpec, ...]) -> list[str]:
        spec = next(s for s in specs if s.name == "list")
        actions = spec.output_schema["properties"]["actions"]
        return list(actions["items"]["properties"]["tool"]["enum"])

    assert tools_enum(tool_specs()) == ["connect", "send", "leave"]
    assert tools_enum(tool_specs(call_tool=True)) == ["connect", "send", "leave", "call"]
    assert tool_specs() == TOOLS
