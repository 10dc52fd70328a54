"""A real FastMCP server (fastmcp 4.x) served by MCPBinding, in process and by a ResponderBot over
the simulated network: tools (structured output, progress, logging, ToolError, a failing tool),
a resource, a prompt, the caller, and the error for a server of a kind that is not served."""

from __future__ import annotations

import functools
import types
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from bot.botkit import World  # the bot tests' simulated callers (tests/ is on sys.path)
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.dependencies import get_http_headers
from mcp.server.lowlevel import Server
from mcp_types import LOG_LEVEL_META_KEY
from test_mcp_binding import MEMBER, call, chat, request, rpc

from simplex_protocols.bindings import EnvelopeOutcome
from simplex_protocols.bindings.mcp import (
    MCPBinding,
    caller_of,
    is_final,
    progress_of,
    require_conversation,
)
from simplex_protocols.bot import ResponderBot
from simplex_protocols.errors import BindingConfigError

pytestmark = pytest.mark.anyio

SECRET = b"f" * 32


def acme(lifespans: list[str] | None = None) -> FastMCP[Any]:
    """A FastMCP server as its tutorials write one."""

    @asynccontextmanager
    async def lifespan(_: FastMCP[Any]) -> AsyncIterator[dict[str, Any]]:
        if lifespans is not None:
            lifespans.append("enter")
        yield {"stock": 12}
        if lifespans is not None:
            lifespans.append("exit")

    server: FastMCP[Any] = FastMCP("acme", version="1.0.0", lifespan=lifespan)

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    async def availability(item: str, ctx: Context) -> str:
        """Items in stock, counted with progress."""
        await ctx.report_progress(1, 3, f"counting {item}s")
        await ctx.report_progress(2, 3, "checking the shelves")
        return f"{ctx.lifespan_context['stock']} {item}s are in stock."

    @server.tool
    async def audit(item: str, ctx: Context) -> str:
        """Logs what it does."""
        await ctx.info(f"counted the {item}s")
        return "audited"

    @server.tool
    def reserve(item: str) -> str:
        """Reserve an item."""
        raise ToolError(f"no {item}s left to reserve")

    @server.tool
    def broken() -> str:
        """Fails with an unexpected exception."""
        raise RuntimeError("disk on fire")

    @server.tool
    def whoami(ctx: Context) -> str:
        """Who is calling, and the team header a group member sent."""
        caller = caller_of(ctx)
        team = get_http_headers().get("x-team", "-")
        return f"{caller.key if caller else 'nobody'} {team}"

    @server.tool
    def track(order: str, ctx: Context) -> str:
        """Tracks an order: only in a conversation."""
        require_conversation(ctx, "tracking is answered in a chat")
        return f"order {order} is on its way"

    @server.resource("acme://catalogue", mime_type="text/plain")
    def catalogue() -> str:
        """The catalogue."""
        return "anvil\nrocket skates"

    @server.prompt
    def order_help(item: str) -> str:
        """How to order an item."""
        return f"Help me order one {item}."

    return server


@pytest.fixture
async def binding() -> AsyncIterator[MCPBinding]:
    async with MCPBinding(acme(), request_state_keys=[SECRET]) as b:
        yield b


# ---------------------------------------------------------------------------- in process


async def test_the_lifespan_of_a_fastmcp_server_is_entered_once_by_the_binding() -> None:
    lifespans: list[str] = []
    binding = MCPBinding(acme(lifespans))
    assert isinstance(binding.server, Server)
    async with binding:
        await chat(binding, call("add", {"a": 1, "b": 2}))
        await rpc(binding, call("add", {"a": 3, "b": 4}, rid=2))
        assert lifespans == ["enter"]
    assert lifespans == ["enter", "exit"]


async def test_tools_list_shows_the_fastmcp_tools_with_their_schemas(binding: MCPBinding) -> None:
    for answer in (
        (await chat(binding, request("tools/list")))[-1],
        await rpc(binding, request("tools/list")),
    ):
        tools = {tool["name"]: tool for tool in answer["result"]["tools"]}
        assert set(tools) == {
            "add",
            "availability",
            "audit",
            "reserve",
            "broken",
            "whoami",
            "track",
        }
        add = tools["add"]
        assert add["description"] == "Add two numbers."
        assert add["inputSchema"]["required"] == ["a", "b"]
        assert add["inputSchema"]["properties"]["a"]["type"] == "integer"
        assert add["outputSchema"]["properties"]["result"]["type"] == "integer"


async def test_a_tool_call_has_content_and_structured_content(binding: MCPBinding) -> None:
    [reply] = await chat(binding, call("add", {"a": 2, "b": 40}))
    over_rpc = await rpc(binding, call("add", {"a": 2, "b": 40}))
    for answer in reply, over_rpc:
        result = answer["result"]
        assert result["isError"] is False
        assert result["content"] == [{"type": "text", "text": "42"}]
        assert result["structuredContent"] == {"result": 42}


async def test_progress_reaches_a_caller_in_a_conversation_before_the_response(
    binding: MCPBinding,
) -> None:
    req = call("availability", {"item": "anvil"}, token="p-1")
    *notes, response = await chat(binding, req)
    assert [n["method"] for n in notes] == ["notifications/progress"] * 2
    assert [n["params"] for n in notes] == [
        {"progressToken": "p-1", "progress": 1.0, "total": 3.0, "message": "counting anvils"},
        {"progressToken": "p-1", "progress": 2.0, "total": 3.0, "message": "checking the shelves"},
    ]
    # The caller's reading of them.
    assert [(p.token, p.progress) for n in notes if (p := progress_of(n))] == [
        ("p-1", 1.0),
        ("p-1", 2.0),
    ]
    assert is_final(req, response)
    assert response["result"]["structuredContent"] == {"result": "12 anvils are in stock."}
    # Over Service RPC the same call is one response, its progress dropped.
    over_rpc = await rpc(binding, req)
    assert over_rpc["result"]["content"][0]["text"] == "12 anvils are in stock."


# The SDK warns that MCP 2026-07-28 deprecates logging, whatever the transport.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_ctx_info_is_sent_when_the_request_opts_in_to_logs(binding: MCPBinding) -> None:
    req = call("audit", {"item": "anvil"}, rid=7)
    req["params"]["_meta"][LOG_LEVEL_META_KEY] = "info"
    *notes, response = await chat(binding, req)
    [log] = [n for n in notes if n["method"] == "notifications/message"]
    assert log["params"]["level"] == "info"
    assert "counted the anvils" in str(log["params"]["data"])
    assert response["id"] == 7
    # Without the opt-in the server sends no log (MCP 2026-07-28: logs are per request).
    quiet = await chat(binding, call("audit", {"item": "anvil"}, rid=8))
    assert [m.get("method") for m in quiet] == [None]


async def test_tool_errors_are_results_with_is_error_as_fastmcp_answers_them(
    binding: MCPBinding,
) -> None:
    [refused] = await chat(binding, call("reserve", {"item": "anvil"}))
    assert refused["result"]["isError"] is True
    assert refused["result"]["content"][0]["text"] == "no anvils left to reserve"
    failed = await rpc(binding, call("broken"))
    assert failed["result"]["isError"] is True
    assert "disk on fire" in failed["result"]["content"][0]["text"]


async def test_a_masking_fastmcp_server_keeps_an_exception_s_text_to_itself() -> None:
    server = FastMCP("masked", mask_error_details=True)

    @server.tool
    def broken() -> str:
        raise RuntimeError("disk on fire")

    async with MCPBinding(server) as masked:
        [reply] = await chat(masked, call("broken"))
    assert reply["result"]["isError"] is True
    assert "disk on fire" not in str(reply)


async def test_unknown_tools_and_bad_arguments_are_errors_not_crashes(binding: MCPBinding) -> None:
    [unknown] = await chat(binding, call("nope"))
    [bad] = await chat(binding, call("add", {"a": "many", "b": 1}, rid=2))
    for answer in unknown, bad:
        assert ("error" in answer) or answer["result"]["isError"] is True
    assert "Internal" not in str(unknown) and "Internal" not in str(bad)


async def test_resources_read_and_prompts_get(binding: MCPBinding) -> None:
    [listed] = await chat(binding, request("resources/list"))
    assert [r["uri"] for r in listed["result"]["resources"]] == ["acme://catalogue"]
    read = await rpc(binding, request("resources/read", {"uri": "acme://catalogue"}))
    [contents] = read["result"]["contents"]
    assert contents == {
        "uri": "acme://catalogue",
        "mimeType": "text/plain",
        "text": "anvil\nrocket skates",
    }
    [prompt] = await chat(
        binding, request("prompts/get", {"name": "order_help", "arguments": {"item": "anvil"}})
    )
    [message] = prompt["result"]["messages"]
    assert message["role"] == "user"
    assert message["content"] == {"type": "text", "text": "Help me order one anvil."}
    [missing] = await chat(binding, request("resources/read", {"uri": "acme://nothing"}))
    assert "error" in missing


async def test_a_fastmcp_tool_sees_its_simplex_caller_and_a_member_s_headers(
    binding: MCPBinding,
) -> None:
    [alice] = await chat(binding, call("whoami"))
    [member] = await chat(binding, call("whoami", rid=2), MEMBER)
    signed = await rpc(binding, call("whoami", rid=3))
    texts = [a["result"]["content"][0]["text"] for a in (alice, member, signed)]
    assert texts == ["chat:@17 -", "chat:#5/9 ops", "rpc:MCowBQYDK2VwAyEA-signed -"]


@pytest.mark.requirement("MCP-MSG-8")
async def test_require_conversation_in_a_fastmcp_tool(binding: MCPBinding) -> None:
    outcome = await rpc(binding, call("track", {"order": "A-1"}))
    assert isinstance(outcome, EnvelopeOutcome)
    assert outcome.code == "conversation_required"
    [reply] = await chat(binding, call("track", {"order": "A-1"}))
    assert reply["result"]["content"][0]["text"] == "order A-1 is on its way"


async def test_a_server_is_adapted_once_however_often_it_is_served() -> None:
    server = acme()
    first = MCPBinding(server)
    second = MCPBinding(server, telemetry=False)
    assert first.server is second.server
    kinds = [type(m).__name__ for m in first.server.middleware]
    assert kinds.count("_CallerAsRequest") == 1
    assert kinds.index("_CallerAsRequest") == 0
    assert kinds.count("RequestStateBoundary") == 1
    fastmcp_kinds = [type(m).__name__ for m in server.middleware]
    assert fastmcp_kinds.count("ConversationRequiredThrough") == 1


# ---------------------------------------------------------------------------- unsupported kinds


def fake_fastmcp_class() -> type:
    """A class named as fastmcp's server, from a module named as its, that is not it."""
    cls = types.new_class("FastMCP")
    cls.__module__ = "fastmcp.server.server"
    return cls


@pytest.mark.parametrize("server", [object(), "acme", FastMCP, Server])
def test_a_server_of_another_kind_is_refused_with_the_kinds_served(server: Any) -> None:
    with pytest.raises(BindingConfigError) as caught:
        MCPBinding(server)
    assert caught.value.code == "unsupported_server"
    for kind in ("MCPServer", "lowlevel Server", "fastmcp.FastMCP"):
        assert kind in str(caught.value)
    # Code written when this was a TypeError still catches it.
    assert isinstance(caught.value, TypeError)


def test_an_object_that_looks_like_fastmcp_but_is_not_one_is_refused() -> None:
    lookalike = fake_fastmcp_class()()
    with pytest.raises(BindingConfigError) as caught:
        MCPBinding(lookalike)
    assert caught.value.code == "unsupported_server"
    assert "fastmcp.server.server.FastMCP" in str(caught.value)


def test_a_fastmcp_of_another_major_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import fastmcp

    monkeypatch.setattr(fastmcp, "__version__", "5.0.0")
    with pytest.raises(BindingConfigError) as caught:
        MCPBinding(acme())
    assert caught.value.code == "unsupported_server"
    assert "fastmcp 5.0.0 is installed" in str(caught.value)


def test_a_responder_bot_refuses_an_unsupported_server_when_it_is_made(tmp_path: Path) -> None:
    with pytest.raises(BindingConfigError) as caught:
        ResponderBot(display_name="Acme", mcp=object(), data_dir=tmp_path)  # type: ignore[arg-type]
    assert "fastmcp.FastMCP" in str(caught.value)


# ---------------------------------------------------------------------------- over the network


def final(req: Mapping[str, Any]) -> Any:
    return functools.partial(is_final, req)


async def test_a_responder_bot_serves_a_fastmcp_server_over_both_transports(
    tmp_path: Path,
) -> None:
    async with World() as world:
        alice = await world.caller("alice")
        bot = ResponderBot(
            display_name="Acme", mcp=acme(), data_dir=tmp_path / "acme", clock=world.clock
        )
        async with bot.serving(world.network.backend("acme")) as served:
            listed = await alice.rpc.request(served.address, "mcp", request("tools/list"))
            added = await alice.rpc.request(
                served.address, "mcp", call("add", {"a": 20, "b": 22}, rid=2)
            )
            read = await alice.rpc.request(
                served.address,
                "mcp",
                request("resources/read", {"uri": "acme://catalogue"}, rid=3),
            )
            contact = await alice.connect(served.address)
            req = call("availability", {"item": "anvil"}, rid=4, token=4)
            counted = await alice.chat.call(contact, "mcp", req, final=final(req))
            req = call("reserve", {"item": "anvil"}, rid=5)
            refused = await alice.chat.call(contact, "mcp", req, final=final(req))
            req = request("prompts/get", {"name": "order_help", "arguments": {"item": "x"}})
            prompt = await alice.chat.call(contact, "mcp", req, final=final(req))
    assert isinstance(listed, dict) and isinstance(added, dict) and isinstance(read, dict)
    assert "add" in {t["name"] for t in listed["result"]["tools"]}
    assert added["result"]["structuredContent"] == {"result": 42}
    assert read["result"]["contents"][0]["text"] == "anvil\nrocket skates"
    [answer] = counted.answers
    *notes, response = answer.messages
    assert [n["params"]["message"] for n in notes] == ["counting anvils", "checking the shelves"]
    assert response["result"]["content"][0]["text"] == "12 anvils are in stock."
    [answer] = refused.answers
    assert answer.final is not None
    assert answer.final["result"]["isError"] is True
    assert answer.final["result"]["content"][0]["text"] == "no anvils left to reserve"
    [answer] = prompt.answers
    assert answer.final is not None
    assert answer.final["result"]["messages"][0]["content"]["text"] == "Help me order one x."
