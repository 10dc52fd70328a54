"""MCPBinding against small servers built with the mcp SDK: MCPServer decorators and a lowlevel
Server, over both transports. No network, no sleeping: waits are bounded with anyio.fail_after,
and time (the Service RPC budget) moves with a ManualClock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

import anyio
import pytest
from mcp.server import Server, ServerRequestContext
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.request_state import RequestStateBoundary
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    InputRequiredResult,
    ListToolsResult,
    NotificationParams,
    PaginatedRequestParams,
    TextContent,
    Tool,
)
from opentelemetry import trace
from pydantic import BaseModel

from simplex_protocols import _wire
from simplex_protocols._clock import ManualClock
from simplex_protocols.bindings import Binding, Caller, EnvelopeOutcome, TransportKind
from simplex_protocols.bindings._mcp_binding import records_traces
from simplex_protocols.bindings.mcp import (
    ConversationRequired,
    MCPBinding,
    build_request,
    caller_of,
    continue_request,
    needs_conversation,
    read_response,
    require_conversation,
)
from simplex_protocols.chat_call import build_reply
from simplex_protocols.errors import MessageTooLargeError
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES

REVISION = "2026-07-28"
SECRET = b"k" * 32
OTHER_SECRET = b"q" * 32

ALICE = Caller("chat:@17", TransportKind.CHAT, display_name="alice", contact_id=17)
BOB = Caller("chat:@42", TransportKind.CHAT, display_name="bob", contact_id=42)
MEMBER = Caller(
    "chat:#5/9",
    TransportKind.CHAT,
    display_name="carol",
    group_id=5,
    group_member_id=9,
    in_group=True,
    headers={"x-team": "ops"},
)
SIGNED = Caller("rpc:MCowBQYDK2VwAyEA-signed", TransportKind.RPC, signer_key="MCowBQYDK2VwAyEA")
SIGNED_2 = Caller("rpc:MCowBQYDK2VwAyEA-other", TransportKind.RPC, signer_key="MCowBQYDK2VwAyEB")
ANON_1 = Caller("rpc-anonymous:1111", TransportKind.RPC)
ANON_2 = Caller("rpc-anonymous:2222", TransportKind.RPC)
BUDGET_S = 170.0


# ---------------------------------------------------------------------------- servers


@dataclass
class Hooks:
    """Events shared between a test and the tools of its server."""

    started: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)
    finished: list[str] = field(default_factory=list)
    cancel_seen: list[bool] = field(default_factory=list)
    notified: list[Caller | None] = field(default_factory=list)
    lifespans: list[str] = field(default_factory=list)


class Confirm(BaseModel):
    confirm: bool


async def ask_confirm(item: str) -> Elicit[Confirm]:
    return Elicit(f"Reserve one {item}?", Confirm)


def acme(hooks: Hooks, *, subscriptions: bool = False) -> MCPServer[Any]:
    """An MCPServer with decorators, like the spec's example bot."""

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[dict[str, Any]]:
        hooks.lifespans.append("enter")
        yield {}
        hooks.lifespans.append("exit")

    server: MCPServer[Any] = MCPServer(
        "acme",
        version="1.0.0",
        instructions="Orders and availability.",
        cache_hints={"tools/list": CacheHint(ttl_ms=300_000, scope="public")},
        subscriptions=None if subscriptions else False,
        lifespan=lifespan,
    )

    @server.tool(description="Items in stock", structured_output=False)
    async def availability(item: str, ctx: Context) -> str:
        await ctx.report_progress(1, 3, f"counting {item}s")
        await ctx.report_progress(2, 3, "checking the shelves")
        return f"12 {item}s are in stock."

    @server.tool(description="Who is calling", structured_output=False)
    async def whoami(ctx: Context) -> str:
        caller = caller_of(ctx)
        assert caller is ctx.request_context.request
        team = (ctx.headers or {}).get("x-team", "-")
        return f"{caller.key if caller else 'nobody'} {team}"

    @server.tool(description="Track a delivery (needs a conversation)", structured_output=False)
    @needs_conversation
    async def track_delivery(order: str, ctx: Context) -> str:
        hooks.finished.append("track_delivery")
        await ctx.report_progress(1, 2, "packed")
        return f"Order {order} is on its way."

    @server.tool(description="Decides at run time", structured_output=False)
    async def maybe_long(order: str, ctx: Context) -> str:
        require_conversation(ctx, "long orders are tracked in a chat")
        hooks.finished.append("maybe_long")
        return f"Order {order} tracked."

    @server.tool(description="Waits until released", structured_output=False)
    async def slow(ctx: Context) -> str:
        hooks.started.set()
        try:
            await hooks.release.wait()
        finally:
            hooks.cancel_seen.append(ctx.request_context.session is not None)
        hooks.finished.append("slow")
        return "done"

    @server.tool(description="The whole catalogue (large)", structured_output=False)
    async def catalogue() -> str:
        return "\n".join(f'item {i}: anvil "model {i}"' for i in range(1000))

    @server.tool(description="A large progress message", structured_output=False)
    async def chatty(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "x" * (MAX_CHAT_MESSAGE_BYTES + 10))
        await ctx.report_progress(2, 2, "small")
        return "ok"

    @server.tool(description="Reserve an item (asks first)", structured_output=False)
    async def reserve(item: str, answer: Annotated[Confirm, Resolve(ask_confirm)]) -> str:
        return f"Reserved one {item}." if answer.confirm else "Nothing reserved."

    @server.tool(description="Changes the tool list", structured_output=False)
    async def poke(ctx: Context) -> str:
        await ctx.notify_tools_changed()
        return "poked"

    @server.tool(description="Fails", structured_output=False)
    async def broken() -> str:
        raise RuntimeError("secret internals")

    return server


def lowlevel(hooks: Hooks) -> Server[Any]:
    """The same kind of tools on a lowlevel Server."""
    schema = {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(
            tools=[
                Tool(name="availability", description="Items in stock", input_schema=schema),
                Tool(name="whoami", description="Who is calling", input_schema={"type": "object"}),
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        args = params.arguments or {}
        if params.name == "availability":
            await ctx.session.report_progress(1, 2, "counting")
            return text_result(f"12 {args.get('item')}s are in stock.")
        if params.name == "whoami":
            caller = caller_of(ctx)
            assert caller is ctx.request
            return text_result(caller.key if caller else "nobody")
        if params.name == "track":
            require_conversation(ctx)
            return text_result("tracked")
        if params.name == "confirm":
            if params.input_responses is None:
                return InputRequiredResult.model_validate(
                    {
                        "inputRequests": {
                            "confirm": {
                                "method": "elicitation/create",
                                "params": {
                                    "mode": "form",
                                    "message": "Sure?",
                                    "requestedSchema": {
                                        "type": "object",
                                        "properties": {"ok": {"type": "boolean"}},
                                    },
                                },
                            }
                        },
                        "requestState": "step-1",
                    }
                )
            # The handler sees the plaintext it minted: the boundary unsealed it.
            assert params.request_state == "step-1"
            return text_result("confirmed")
        if params.name == "wait":
            hooks.started.set()
            await hooks.release.wait()
            return text_result("released")
        return CallToolResult(
            content=[TextContent(type="text", text="no such tool")], is_error=True
        )

    async def poked(ctx: ServerRequestContext[Any, Any], params: NotificationParams) -> None:
        hooks.notified.append(caller_of(ctx))

    server: Server[Any] = Server(
        "acme-lowlevel", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool
    )
    server.add_notification_handler("acme/poke", NotificationParams, poked)
    return server


def text_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


# ---------------------------------------------------------------------------- helpers


def request(
    method: str,
    params: dict[str, Any] | None = None,
    *,
    rid: str | int = 1,
    revision: str = REVISION,
    token: str | int | None = None,
    caps: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return build_request(
        method,
        params,
        request_id=rid,
        revision=revision,
        progress_token=token,
        client_capabilities=caps,
        client_info={"name": "test-caller", "version": "0.1"},
    )


def call(name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    return request("tools/call", {"name": name, "arguments": arguments or {}}, **kw)


async def chat(binding: MCPBinding, req: Any, caller: Caller = ALICE) -> list[dict[str, Any]]:
    """The replies of one /_call, in order."""
    replies: list[dict[str, Any]] = []

    async def emit(message: dict[str, Any]) -> None:
        replies.append(message)

    with anyio.fail_after(5):
        await binding.handle_chat(req, caller, emit)
    return replies


async def rpc(
    binding: MCPBinding, req: Any, caller: Caller = SIGNED
) -> dict[str, Any] | EnvelopeOutcome:
    with anyio.fail_after(5):
        return await binding.handle_rpc(req, caller, budget_s=BUDGET_S)


def error_code(message: Mapping[str, Any]) -> int:
    return int(message["error"]["code"])


def text_of(message: Mapping[str, Any]) -> str:
    return read_response(message).text


@pytest.fixture
def hooks() -> Hooks:
    return Hooks()


@pytest.fixture(params=["mcpserver", "lowlevel"])
async def any_binding(request: pytest.FixtureRequest, hooks: Hooks) -> AsyncIterator[MCPBinding]:
    server = acme(hooks) if request.param == "mcpserver" else lowlevel(hooks)
    async with MCPBinding(server, request_state_keys=[SECRET]) as binding:
        yield binding


@pytest.fixture
async def binding(hooks: Hooks) -> AsyncIterator[MCPBinding]:
    async with MCPBinding(acme(hooks), request_state_keys=[SECRET]) as b:
        yield b


@pytest.fixture
async def low(hooks: Hooks) -> AsyncIterator[MCPBinding]:
    async with MCPBinding(lowlevel(hooks), request_state_keys=[SECRET]) as b:
        yield b


# ---------------------------------------------------------------------------- the contract


def test_binding_satisfies_the_contract(hooks: Hooks) -> None:
    binding = MCPBinding(acme(hooks))
    assert isinstance(binding, Binding)
    assert binding.name == "mcp"
    assert binding.versions == (REVISION,)


@pytest.mark.requirement("MCP-VER-1")
def test_mcp_ver_1_versions_are_modern_revisions_the_sdk_serves(hooks: Hooks) -> None:
    assert MCPBinding(acme(hooks), versions=[REVISION]).versions == (REVISION,)
    for bad in (["2025-11-25"], ["2027-01-01"], [], [REVISION, REVISION]):
        with pytest.raises(ValueError):
            MCPBinding(acme(hooks), versions=bad)
    with pytest.raises(TypeError):
        MCPBinding(object())  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_calls_before_the_binding_runs_are_a_usage_error(hooks: Hooks) -> None:
    binding = MCPBinding(acme(hooks))
    with pytest.raises(RuntimeError):
        await binding.handle_rpc(request("tools/list"), SIGNED, budget_s=1)


@pytest.mark.anyio
async def test_lifespan_is_entered_once_for_all_calls(hooks: Hooks) -> None:
    binding = MCPBinding(acme(hooks))
    async with binding:
        await chat(binding, request("tools/list"))
        await rpc(binding, request("tools/list", rid=2))
        assert hooks.lifespans == ["enter"]
        with pytest.raises(RuntimeError):
            await binding.__aenter__()
    assert hooks.lifespans == ["enter", "exit"]


def test_request_state_boundary_is_replaced_not_doubled(hooks: Hooks) -> None:
    server = acme(hooks)
    MCPBinding(server, request_state_keys=[SECRET])
    MCPBinding(server, request_state_keys=[OTHER_SECRET], telemetry=False)
    kinds = [type(m).__name__ for m in server.middleware]
    assert kinds == ["RequestStateBoundary"]
    low = lowlevel(hooks)
    MCPBinding(low)
    assert [type(m).__name__ for m in low.middleware] == [
        "OpenTelemetryMiddleware",
        "RequestStateBoundary",
    ]
    assert sum(isinstance(m, RequestStateBoundary) for m in low.middleware) == 1


def test_short_request_state_key_is_refused(hooks: Hooks) -> None:
    with pytest.raises(ValueError):
        MCPBinding(acme(hooks), request_state_keys=[b"short"])


# ---------------------------------------------------------------------------- discovery


@pytest.mark.anyio
@pytest.mark.requirement("MCP-CAP-1", "MCP-CAP-2", "MCP-MSG-5")
async def test_mcp_cap_1_server_discover_reports_revisions_and_capabilities(
    any_binding: MCPBinding,
) -> None:
    [reply] = await chat(any_binding, request("server/discover", rid="d-1"))
    assert reply["id"] == "d-1"
    result = reply["result"]
    assert result["resultType"] == "complete"
    # MCP-CAP-2: the revisions agree with the declaration.
    assert result["supportedVersions"] == list(any_binding.versions)
    assert result["capabilities"]["tools"] == {"listChanged": False}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"] == "1.0.0"


@pytest.mark.anyio
@pytest.mark.requirement("MCP-CAP-1")
async def test_mcp_cap_1_tools_list_with_cache_hints_as_the_spec_example(
    binding: MCPBinding,
) -> None:
    [reply] = await chat(binding, request("tools/list"))
    result = reply["result"]
    assert result["resultType"] == "complete"
    assert (result["ttlMs"], result["cacheScope"]) == (300_000, "public")
    tool = next(t for t in result["tools"] if t["name"] == "availability")
    assert tool["description"] == "Items in stock"
    schema = tool["inputSchema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["item"]
    assert schema["properties"]["item"]["type"] == "string"
    # structured_output=False: no outputSchema, so the output is not sent twice.
    assert "outputSchema" not in tool


@pytest.mark.anyio
@pytest.mark.requirement("MCP-CAP-1")
async def test_mcp_cap_1_lowlevel_tools_list(low: MCPBinding) -> None:
    [reply] = await chat(low, request("tools/list"))
    assert [t["name"] for t in reply["result"]["tools"]] == ["availability", "whoami"]


@pytest.mark.anyio
async def test_discover_lists_only_the_declared_subset(hooks: Hooks) -> None:
    async with MCPBinding(acme(hooks), versions=[REVISION]) as binding:
        [reply] = await chat(binding, request("server/discover"))
    assert reply["result"]["supportedVersions"] == [REVISION]


# ---------------------------------------------------------------------------- tools/call


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-2", "MCP-MSG-4", "MCP-MSG-5")
async def test_mcp_msg_2_tools_call_over_rpc_as_the_spec_example(any_binding: MCPBinding) -> None:
    answer = await rpc(any_binding, call("availability", {"item": "anvil"}, rid=7))
    assert isinstance(answer, dict)
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] == 7
    assert answer["result"]["resultType"] == "complete"
    assert answer["result"]["content"] == [{"type": "text", "text": "12 anvils are in stock."}]
    assert answer["result"]["isError"] is False


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-4")
async def test_mcp_msg_4_response_repeats_a_string_id(any_binding: MCPBinding) -> None:
    [reply] = await chat(any_binding, call("availability", {"item": "bolt"}, rid="req-9"))
    assert reply["id"] == "req-9"
    assert text_of(reply) == "12 bolts are in stock."


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-3")
async def test_mcp_msg_3_progress_replies_come_before_the_response_in_order(
    binding: MCPBinding,
) -> None:
    req = call("availability", {"item": "anvil"}, rid=2, token="p-2")
    replies = await chat(binding, req)
    assert [r.get("method") for r in replies] == [
        "notifications/progress",
        "notifications/progress",
        None,
    ]
    assert [r["params"]["progress"] for r in replies[:2]] == [1, 2]
    assert replies[0]["params"] == {
        "progressToken": "p-2",
        "progress": 1,
        "total": 3,
        "message": "counting anvils",
    }
    assert [binding.is_final(req, r) for r in replies] == [False, False, True]


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-3")
async def test_mcp_msg_3_lowlevel_progress_with_an_integer_token(low: MCPBinding) -> None:
    replies = await chat(low, call("availability", {"item": "nut"}, token=5))
    assert [r.get("method") for r in replies] == ["notifications/progress", None]
    assert replies[0]["params"]["progressToken"] == 5


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-3")
async def test_mcp_msg_3_no_progress_without_a_token(any_binding: MCPBinding) -> None:
    replies = await chat(any_binding, call("availability", {"item": "anvil"}))
    assert len(replies) == 1
    assert "result" in replies[0]


@pytest.mark.anyio
async def test_progress_over_rpc_is_dropped(any_binding: MCPBinding) -> None:
    answer = await rpc(any_binding, call("availability", {"item": "anvil"}, token="p"))
    assert isinstance(answer, dict)
    assert text_of(answer) == "12 anvils are in stock."


@pytest.mark.anyio
async def test_tool_failure_does_not_leak_internals(binding: MCPBinding) -> None:
    [reply] = await chat(binding, call("broken"))
    assert reply["result"]["isError"] is True
    assert "secret internals" not in _wire.dumps(reply)


@pytest.mark.anyio
async def test_lowlevel_handler_failure_is_internal_error_without_internals(hooks: Hooks) -> None:
    server = lowlevel(hooks)

    async def broken(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        raise RuntimeError("secret internals")

    server.add_request_handler("tools/call", CallToolRequestParams, broken)
    async with MCPBinding(server) as binding:
        [reply] = await chat(binding, call("anything", rid=4))
        answer = await rpc(binding, call("anything", rid=4))
    assert reply == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32603, "message": "Internal server error"},
    }
    assert answer == reply


# ---------------------------------------------------------------------------- errors of the ladder


@pytest.mark.anyio
async def test_unknown_method_is_method_not_found(any_binding: MCPBinding) -> None:
    [reply] = await chat(any_binding, request("nope/nothing", rid=3))
    assert (reply["id"], error_code(reply), reply["error"]["data"]) == (3, -32601, "nope/nothing")


@pytest.mark.anyio
@pytest.mark.requirement("MCP-VER-4")
async def test_mcp_ver_4_unsupported_revision_lists_the_served_ones(
    any_binding: MCPBinding,
) -> None:
    req = request("tools/list", rid=4, revision="2027-01-01")
    [reply] = await chat(any_binding, req)
    assert reply["id"] == 4
    assert error_code(reply) == -32022
    assert reply["error"]["data"] == {"supported": [REVISION], "requested": "2027-01-01"}
    over_rpc = await rpc(any_binding, req)
    assert over_rpc == reply  # a protocol error inside the response, not an envelope error


@pytest.mark.anyio
@pytest.mark.requirement("MCP-VER-4", "MCP-VER-5")
async def test_mcp_ver_4_legacy_initialize_gets_unsupported_version(
    any_binding: MCPBinding,
) -> None:
    legacy = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"},
        },
    }
    [reply] = await chat(any_binding, legacy)
    assert reply["id"] == 5
    assert error_code(reply) == -32022
    assert reply["error"]["data"] == {"supported": [REVISION], "requested": "2025-11-25"}
    answer = await rpc(any_binding, legacy)
    assert isinstance(answer, dict)
    assert error_code(answer) == -32022


@pytest.mark.anyio
@pytest.mark.requirement("MCP-VER-2")
async def test_mcp_ver_2_request_without_meta_envelope_is_invalid_params(
    any_binding: MCPBinding,
) -> None:
    [reply] = await chat(any_binding, {"jsonrpc": "2.0", "id": 6, "method": "tools/list"})
    assert (reply["id"], error_code(reply)) == (6, -32602)
    no_caps = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": REVISION}},
    }
    [reply] = await chat(any_binding, no_caps)
    assert (reply["id"], error_code(reply)) == (7, -32602)
    bad_version = request("tools/list", rid=8)
    bad_version["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = 20260728
    [reply] = await chat(any_binding, bad_version)
    assert (reply["id"], error_code(reply)) == (8, -32602)


@pytest.mark.anyio
async def test_invalid_jsonrpc_request_is_invalid_request(any_binding: MCPBinding) -> None:
    cases: list[tuple[Any, Any]] = [
        ({"jsonrpc": "2.0", "id": 9, "method": 5}, 9),
        ({"jsonrpc": "1.0", "id": "x", "method": "tools/list"}, "x"),
        ({"jsonrpc": "2.0", "id": True, "method": "tools/list"}, None),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, 1),  # a response sent to the bot
    ]
    for req, rid in cases:
        [reply] = await chat(any_binding, req)
        assert reply == {
            "jsonrpc": "2.0",
            "id": rid,
            "error": {"code": -32600, "message": "Invalid Request"},
        }
        assert await rpc(any_binding, req) == reply
    # AMB-28 (reading A): a request that is not an object, in a valid envelope.
    answer = await rpc(any_binding, [1, 2])
    assert isinstance(answer, dict)
    assert (answer["id"], error_code(answer)) == (None, -32600)
    [reply] = await chat(any_binding, "text")
    assert (reply["id"], error_code(reply)) == (None, -32600)


# ---------------------------------------------------------------------------- the caller


@pytest.mark.anyio
async def test_tool_sees_its_caller_contact_member_and_signer(binding: MCPBinding) -> None:
    [reply] = await chat(binding, call("whoami"), ALICE)
    assert text_of(reply) == "chat:@17 -"
    [reply] = await chat(binding, call("whoami"), MEMBER)
    assert text_of(reply) == "chat:#5/9 ops"  # Context.headers reads Caller.headers
    answer = await rpc(binding, call("whoami"), SIGNED)
    assert isinstance(answer, dict)
    assert text_of(answer) == f"{SIGNED.key} -"


@pytest.mark.anyio
async def test_lowlevel_handler_sees_its_caller(low: MCPBinding) -> None:
    [reply] = await chat(low, call("whoami"), BOB)
    assert text_of(reply) == "chat:@42"


def test_caller_of_outside_the_binding_is_none() -> None:
    assert caller_of(Context()) is None
    assert caller_of(object()) is None
    require_conversation(object())  # no caller: nothing to refuse


# ---------------------------------------------------------------------------- conversation only


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-8")
async def test_mcp_msg_8_decorated_tool_over_rpc_is_conversation_required_without_running(
    binding: MCPBinding, hooks: Hooks
) -> None:
    answer = await rpc(binding, call("track_delivery", {"order": "A-1"}, token="t"))
    assert isinstance(answer, EnvelopeOutcome)
    assert answer.code == "conversation_required"
    assert hooks.finished == []  # known before the tool runs
    replies = await chat(binding, call("track_delivery", {"order": "A-1"}, token="t"))
    assert [r.get("method") for r in replies] == ["notifications/progress", None]
    assert text_of(replies[-1]) == "Order A-1 is on its way."


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-8")
async def test_mcp_msg_8_require_conversation_inside_a_tool(
    binding: MCPBinding, hooks: Hooks
) -> None:
    answer = await rpc(binding, call("maybe_long", {"order": "B-2"}), ANON_1)
    assert answer == EnvelopeOutcome("conversation_required", "long orders are tracked in a chat")
    assert hooks.finished == []
    [reply] = await chat(binding, call("maybe_long", {"order": "B-2"}))
    assert text_of(reply) == "Order B-2 tracked."


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-8")
async def test_mcp_msg_8_lowlevel_tools_named_to_the_binding(hooks: Hooks) -> None:
    async with MCPBinding(lowlevel(hooks), conversation_tools={"availability"}) as binding:
        answer = await rpc(binding, call("availability", {"item": "x"}))
        assert isinstance(answer, EnvelopeOutcome)
        assert answer.code == "conversation_required"
        # the runtime check of a lowlevel handler
        answer = await rpc(binding, call("track"))
        assert isinstance(answer, EnvelopeOutcome)
        assert answer.code == "conversation_required"
        [reply] = await chat(binding, call("track"))
        assert text_of(reply) == "tracked"


@pytest.mark.anyio
async def test_conversation_required_raised_in_a_chat_is_an_internal_error(hooks: Hooks) -> None:
    server = lowlevel(hooks)

    async def always(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        raise ConversationRequired()

    server.add_request_handler("tools/call", CallToolRequestParams, always)
    async with MCPBinding(server) as binding:
        [reply] = await chat(binding, call("anything"))
    assert error_code(reply) == -32603


@pytest.mark.anyio
async def test_notifications_over_rpc_are_conversation_required(any_binding: MCPBinding) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    answer = await rpc(any_binding, note)
    assert isinstance(answer, EnvelopeOutcome)
    assert answer.code == "conversation_required"


@pytest.mark.anyio
async def test_subscriptions_listen_over_rpc_is_conversation_required(hooks: Hooks) -> None:
    async with MCPBinding(acme(hooks, subscriptions=True)) as binding:
        answer = await rpc(binding, request("subscriptions/listen", {"notifications": {}}))
    assert isinstance(answer, EnvelopeOutcome)
    assert answer.code == "conversation_required"


@pytest.mark.anyio
async def test_subscriptions_listen_in_a_conversation_streams_until_cancelled(
    hooks: Hooks,
) -> None:
    arrived: list[dict[str, Any]] = []
    acknowledged, changed = anyio.Event(), anyio.Event()

    async def emit(message: dict[str, Any]) -> None:
        arrived.append(message)
        (acknowledged if len(arrived) == 1 else changed).set()

    listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, rid=30)
    async with MCPBinding(acme(hooks, subscriptions=True)) as binding:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(binding.handle_chat, listen, ALICE, emit)
                await acknowledged.wait()
                assert binding.in_flight == 1
                [poked] = await chat(binding, call("poke", rid=31), BOB)
                assert text_of(poked) == "poked"
                await changed.wait()
                assert await chat(binding, cancelled(30), ALICE) == []
    assert [m["method"] for m in arrived] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]
    assert not any(binding.is_final(listen, m) for m in arrived)


@pytest.mark.anyio
async def test_rpc_call_over_its_budget_is_cancelled_and_conversation_required(
    hooks: Hooks,
) -> None:
    clock = ManualClock()
    async with MCPBinding(acme(hooks), clock=clock) as binding:
        outcome: list[Any] = []

        async def requester() -> None:
            outcome.append(await binding.handle_rpc(call("slow"), SIGNED, budget_s=BUDGET_S))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(requester)
                await hooks.started.wait()
                await clock.advance(BUDGET_S - 1)
                assert outcome == []
                await clock.advance(1)
    assert [o.code for o in outcome] == ["conversation_required"]
    assert hooks.finished == []  # the tool was cancelled
    assert hooks.cancel_seen == [True]


@pytest.mark.anyio
async def test_rpc_budget_on_the_system_clock_is_a_deadline(
    binding: MCPBinding, hooks: Hooks
) -> None:
    with anyio.fail_after(5):
        outcome = await binding.handle_rpc(call("slow"), SIGNED, budget_s=0)
    assert isinstance(outcome, EnvelopeOutcome)
    assert outcome.code == "conversation_required"
    assert hooks.finished == []


@pytest.mark.anyio
async def test_rpc_call_within_its_budget_is_answered(hooks: Hooks) -> None:
    clock = ManualClock()
    async with MCPBinding(acme(hooks), clock=clock) as binding:
        outcome: list[Any] = []

        async def requester() -> None:
            outcome.append(await binding.handle_rpc(call("slow"), SIGNED, budget_s=BUDGET_S))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(requester)
                await hooks.started.wait()
                await clock.advance(BUDGET_S - 1)
                hooks.release.set()
    assert text_of(outcome[0]) == "done"


# ---------------------------------------------------------------------------- cancellation


def cancelled(rid: str | int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}


@pytest.mark.anyio
async def test_cancelled_by_the_same_caller_gets_no_response(
    binding: MCPBinding, hooks: Hooks
) -> None:
    replies: list[dict[str, Any]] = []

    async def emit(message: dict[str, Any]) -> None:
        replies.append(message)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(binding.handle_chat, call("slow", rid=12), ALICE, emit)
            await hooks.started.wait()
            assert binding.in_flight == 1
            assert await chat(binding, cancelled(12), ALICE) == []
    assert replies == []
    assert hooks.finished == []
    assert hooks.cancel_seen == [True]
    assert binding.in_flight == 0


@pytest.mark.anyio
async def test_cancellation_by_another_caller_is_ignored(binding: MCPBinding, hooks: Hooks) -> None:
    replies: list[dict[str, Any]] = []

    async def emit(message: dict[str, Any]) -> None:
        replies.append(message)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(binding.handle_chat, call("slow", rid=12), ALICE, emit)
            await hooks.started.wait()
            assert await chat(binding, cancelled(12), BOB) == []
            assert await chat(binding, cancelled(13), ALICE) == []  # another id
            hooks.release.set()
    assert [text_of(r) for r in replies] == ["done"]
    assert hooks.finished == ["slow"]


@pytest.mark.anyio
async def test_cancellation_matches_a_string_id_given_as_a_number(
    binding: MCPBinding, hooks: Hooks
) -> None:
    replies: list[dict[str, Any]] = []

    async def emit(message: dict[str, Any]) -> None:
        replies.append(message)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(binding.handle_chat, call("slow", rid="21"), ALICE, emit)
            await hooks.started.wait()
            await chat(binding, cancelled(21), ALICE)  # the SDK correlates "21" and 21
    assert replies == []


@pytest.mark.anyio
async def test_other_notifications_are_acted_on_without_a_reply(
    low: MCPBinding, hooks: Hooks
) -> None:
    note = {"jsonrpc": "2.0", "method": "acme/poke", "params": {}}
    assert await chat(low, note, MEMBER) == []
    assert hooks.notified == [MEMBER]
    unknown = {"jsonrpc": "2.0", "method": "notifications/whatever"}
    assert await chat(low, unknown) == []
    wrong_revision = {
        "jsonrpc": "2.0",
        "method": "acme/poke",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2020-01-01"}},
    }
    assert await chat(low, wrong_revision) == []
    assert hooks.notified == [MEMBER]


@pytest.mark.anyio
async def test_malformed_notification_is_invalid_request(any_binding: MCPBinding) -> None:
    [reply] = await chat(any_binding, {"jsonrpc": "2.0", "method": 7})
    assert (reply["id"], error_code(reply)) == (None, -32600)
    assert await rpc(any_binding, {"jsonrpc": "2.0", "method": 7}) == reply


# ---------------------------------------------------------------------------- input_required


ELICIT_CAPS: dict[str, Any] = {"elicitation": {"form": {}}}
ACCEPT = {"action": "accept", "content": {"confirm": True}}


async def first_round(
    binding: MCPBinding, caller: Caller, *, over_rpc: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    req = call("reserve", {"item": "anvil"}, rid=9, caps=ELICIT_CAPS)
    if over_rpc:
        answer = await rpc(binding, req, caller)
        assert isinstance(answer, dict)
    else:
        [answer] = await chat(binding, req, caller)
    response = read_response(answer)
    assert response.input_required
    [key] = response.input_requests
    assert response.input_requests[key]["method"] == "elicitation/create"
    assert response.request_state is not None
    return req, answer


def second(req: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    response = read_response(answer)
    [key] = response.input_requests
    return continue_request(req, response, {key: ACCEPT}, request_id=10)


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-6")
async def test_mcp_msg_6_input_required_round_trip_in_a_conversation(binding: MCPBinding) -> None:
    req, answer = await first_round(binding, ALICE)
    [reply] = await chat(binding, second(req, answer), ALICE)
    assert reply["id"] == 10
    assert text_of(reply) == "Reserved one anvil."


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-6")
async def test_mcp_msg_6_input_required_round_trip_over_signed_rpc(binding: MCPBinding) -> None:
    req, answer = await first_round(binding, SIGNED, over_rpc=True)
    final = await rpc(binding, second(req, answer), SIGNED)
    assert isinstance(final, dict)
    assert text_of(final) == "Reserved one anvil."


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-6")
async def test_mcp_msg_6_lowlevel_input_required_state_is_sealed(low: MCPBinding) -> None:
    req = call("confirm", caps=ELICIT_CAPS)
    [answer] = await chat(low, req, BOB)
    response = read_response(answer)
    assert response.input_required
    assert response.request_state is not None
    assert response.request_state.startswith("v1.")  # sealed, not the plaintext "step-1"
    [reply] = await chat(
        low,
        continue_request(
            req, response, {"confirm": {"action": "accept", "content": {"ok": True}}}, request_id=2
        ),
        BOB,
    )
    assert text_of(reply) == "confirmed"


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-6")
async def test_mcp_msg_6_request_state_replayed_by_another_caller_is_refused(
    binding: MCPBinding,
) -> None:
    req, answer = await first_round(binding, ALICE)
    nxt = second(req, answer)
    for other in (BOB, MEMBER):
        [reply] = await chat(binding, nxt, other)
        assert (reply["id"], error_code(reply)) == (10, -32602)
        assert reply["error"]["message"] == "Invalid or expired requestState"
    for other in (SIGNED, ANON_1):
        refused = await rpc(binding, nxt, other)
        assert isinstance(refused, dict)
        assert error_code(refused) == -32602
    req, answer = await first_round(binding, SIGNED, over_rpc=True)
    refused = await rpc(binding, second(req, answer), SIGNED_2)
    assert isinstance(refused, dict)
    assert error_code(refused) == -32602


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-6")
async def test_mcp_msg_6_unsigned_requesters_state_is_a_bearer_token(binding: MCPBinding) -> None:
    req, answer = await first_round(binding, ANON_1, over_rpc=True)
    nxt = second(req, answer)
    # another unsigned request holding the state continues it
    final = await rpc(binding, nxt, ANON_2)
    assert isinstance(final, dict)
    assert text_of(final) == "Reserved one anvil."
    # a contact or a signed requester cannot
    [reply] = await chat(binding, nxt, ALICE)
    assert error_code(reply) == -32602
    refused = await rpc(binding, nxt, SIGNED)
    assert isinstance(refused, dict)
    assert error_code(refused) == -32602


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-6")
async def test_mcp_msg_6_request_state_survives_a_restart_with_the_same_secret(
    hooks: Hooks,
) -> None:
    async with MCPBinding(acme(hooks), request_state_keys=[SECRET]) as before:
        req, answer = await first_round(before, ALICE)
    nxt = second(req, answer)
    # A new process: a new server object and a new binding, the same secret.
    async with MCPBinding(acme(Hooks()), request_state_keys=[SECRET]) as after:
        [reply] = await chat(after, nxt, ALICE)
    assert text_of(reply) == "Reserved one anvil."
    # Rotation: the new key first, the old one still unseals.
    async with MCPBinding(acme(Hooks()), request_state_keys=[OTHER_SECRET, SECRET]) as rotated:
        [reply] = await chat(rotated, nxt, ALICE)
    assert text_of(reply) == "Reserved one anvil."
    async with MCPBinding(acme(Hooks()), request_state_keys=[OTHER_SECRET]) as other:
        [reply] = await chat(other, nxt, ALICE)
    assert error_code(reply) == -32602
    async with MCPBinding(acme(Hooks())) as ephemeral:
        [reply] = await chat(ephemeral, nxt, ALICE)
    assert error_code(reply) == -32602


@pytest.mark.anyio
async def test_input_required_without_the_client_capability_is_refused(binding: MCPBinding) -> None:
    [reply] = await chat(binding, call("reserve", {"item": "anvil"}))
    assert error_code(reply) == -32021


# ---------------------------------------------------------------------------- sizes and parse errors


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-7")
async def test_mcp_msg_7_oversize_response_is_replaced_with_internal_error(
    binding: MCPBinding,
) -> None:
    req = call("catalogue", rid=21)
    command = "/_call mcp " + _wire.dumps(req)
    sent: list[str] = []

    async def emit(message: dict[str, Any]) -> None:
        reply = build_reply(
            message,
            command_item_id=1,
            command_text=command,
            in_group=False,
            oversize=binding.oversize_error,
        )
        sent.append(reply.text)

    with anyio.fail_after(5):
        await binding.handle_chat(req, ALICE, emit)
    [text] = sent
    reply = _wire.loads(text)
    assert reply == {
        "jsonrpc": "2.0",
        "id": 21,
        "error": {
            "code": -32603,
            "message": "The response is larger than a SimpleX message can carry",
        },
    }
    assert binding.is_final(req, reply)


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-3", "MCP-MSG-7")
async def test_mcp_msg_7_oversize_notification_is_replaced_and_ends_the_answer(
    binding: MCPBinding,
) -> None:
    req = call("chatty", token="c")
    command = "/_call mcp " + _wire.dumps(req)
    sent: list[dict[str, Any]] = []

    async def emit(message: dict[str, Any]) -> None:
        # what the chat transport does (AMB-31, reading B): a notification is a reply, an
        # oversize reply is replaced by the error for the request, which ends the answer
        if sent and "error" in sent[-1]:
            return
        reply = build_reply(
            message,
            command_item_id=1,
            command_text=command,
            in_group=True,
            oversize=lambda m: binding.oversize_error(req if "method" in m else m),
        )
        sent.append(_wire.loads(reply.text))

    with anyio.fail_after(5):
        await binding.handle_chat(req, MEMBER, emit)
    # the large progress comes first: its replacement is the whole answer
    assert len(sent) == 1
    assert sent[0]["id"] == req["id"] and sent[0]["error"]["code"] == -32603


def test_oversize_error_keeps_a_valid_id_only(hooks: Hooks) -> None:
    binding = MCPBinding(acme(hooks))
    assert binding.oversize_error({"jsonrpc": "2.0", "id": "a", "result": {}})["id"] == "a"
    assert binding.oversize_error({"jsonrpc": "2.0", "id": True, "result": {}})["id"] is None
    note = binding.oversize_error({"jsonrpc": "2.0", "method": "notifications/progress"})
    assert (note["id"], error_code(note)) == (None, -32603)


@pytest.mark.anyio
async def test_a_notification_the_transport_refuses_as_too_large_is_dropped(
    binding: MCPBinding,
) -> None:
    sent: list[dict[str, Any]] = []

    async def emit(message: dict[str, Any]) -> None:
        if "method" in message and len(_wire.dumps(message)) > MAX_CHAT_MESSAGE_BYTES:
            raise MessageTooLargeError("reply", len(_wire.dumps(message)), MAX_CHAT_MESSAGE_BYTES)
        sent.append(message)

    with anyio.fail_after(5):
        await binding.handle_chat(call("chatty", token="c"), ALICE, emit)
    assert [m.get("method") for m in sent] == ["notifications/progress", None]


def test_parse_errors_have_a_null_id(hooks: Hooks) -> None:
    binding = MCPBinding(acme(hooks))
    assert binding.parse_error('{"jsonrpc": "2.0", "id": 1', "unterminated object") == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error", "data": "unterminated object"},
    }
    for not_an_object in ("[1, 2]", "42", '"text"', "null"):
        answer = binding.parse_error(not_an_object, "not an object")
        assert (answer["id"], error_code(answer)) == (None, -32600)
    long = binding.parse_error("{", "x" * 1000)
    assert len(long["error"]["data"]) == 200
    assert "data" not in binding.parse_error("{", "")["error"]


# ---------------------------------------------------------------------------- is_final


@pytest.mark.requirement("MCP-MSG-4", "MCP-MSG-9")
def test_mcp_msg_9_is_final_only_for_the_response_to_the_request(hooks: Hooks) -> None:
    binding = MCPBinding(acme(hooks))
    req = call("availability", {"item": "x"}, rid=1)
    assert binding.is_final(req, {"jsonrpc": "2.0", "id": 1, "result": {}})
    assert binding.is_final(req, {"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": ""}})
    assert binding.is_final(req, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700}})
    not_finals: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call"},
        {"jsonrpc": "2.0", "id": 2, "result": {}},
        {"jsonrpc": "2.0", "id": "1", "result": {}},
        {"jsonrpc": "2.0", "id": True, "result": {}},
        {"jsonrpc": "2.0", "id": None, "result": {}},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "result": {}},
    ]
    for not_final in not_finals:
        assert not binding.is_final(req, not_final), not_final
    notification = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
    assert not binding.is_final(notification, {"jsonrpc": "2.0", "id": 1, "result": {}})


# ---------------------------------------------------------------------------- pitfalls


def test_telemetry_can_be_switched_off(hooks: Hooks) -> None:
    server = lowlevel(hooks)
    MCPBinding(server, telemetry=False)
    assert [type(m).__name__ for m in server.middleware] == ["RequestStateBoundary"]


class _SetUpProvider(trace.TracerProvider):
    """A tracer provider an application set up (a real one would record and export)."""

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return trace.NoOpTracer()


def test_only_a_provider_that_was_set_up_records_traces() -> None:
    assert not records_traces(trace.ProxyTracerProvider())
    assert not records_traces(trace.NoOpTracerProvider())
    assert records_traces(_SetUpProvider())


def _telemetry_kept(binding: MCPBinding) -> bool:
    return any(type(m).__name__ == "OpenTelemetryMiddleware" for m in binding.server.middleware)


@pytest.mark.anyio
async def test_telemetry_by_default_is_kept_only_with_a_tracer_provider(
    hooks: Hooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No provider set up (the API's stand-in): the SDK's spans would record nothing.
    monkeypatch.setattr(trace, "get_tracer_provider", trace.ProxyTracerProvider)
    binding = MCPBinding(lowlevel(hooks))
    assert _telemetry_kept(binding)  # decided when the binding starts, not when it is made
    async with binding:
        assert not _telemetry_kept(binding)
        [reply] = await chat(binding, request("tools/list"))
        assert "result" in reply
    # Told to keep it: kept without a provider.
    forced = MCPBinding(lowlevel(hooks), telemetry=True)
    async with forced:
        assert _telemetry_kept(forced)
    # A provider set up before the bot starts: kept.
    monkeypatch.setattr(trace, "get_tracer_provider", _SetUpProvider)
    traced = MCPBinding(lowlevel(hooks))
    async with traced:
        assert _telemetry_kept(traced)
