"""Both transports end to end with the real bindings: an MCP server built with the ``mcp`` SDK
and an A2A agent built with ``a2a-sdk``, served on the simulated network and called from
another user's core."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from transkit import WAIT_S, Net, Peer, until

from simplex_protocols.bindings import Binding
from simplex_protocols.chat_call import CallState
from simplex_protocols.core import ContactRef, GroupRef
from simplex_protocols.errors import ConversationRequiredError
from simplex_protocols.transports import (
    CallRecord,
    ChatCaller,
    ChatResponder,
    ServiceRPCRequester,
    ServiceRPCResponder,
)

pytestmark = pytest.mark.anyio

mcp_server = pytest.importorskip("mcp.server.mcpserver")
mcp = pytest.importorskip("simplex_protocols.bindings.mcp")
a2a = pytest.importorskip("simplex_protocols.bindings.a2a")

PROTOCOLS = {
    "mcp": {"versions": ["2026-07-28"], "transports": {"chat": True, "rpc": True}},
    "a2a": {"versions": ["1.0"], "transports": {"chat": True, "rpc": True}},
}


def _mcp_server(name: str) -> Any:
    server = mcp_server.MCPServer(name, version="1.0.0", subscriptions=False)

    @server.tool(description="Items in stock", structured_output=False)
    async def availability(item: str, ctx: mcp_server.Context) -> str:
        await ctx.report_progress(1, 2, f"counting {item}s")
        who = mcp.caller_of(ctx)
        return f"{name}: 12 {item}s are in stock (for {who.key if who else '?'})."

    @server.tool(structured_output=False)
    @mcp.needs_conversation
    async def track_delivery(order: str, ctx: mcp_server.Context) -> str:
        return f"Order {order} is on its way."

    return server


def _a2a_agent() -> tuple[Any, Any]:
    from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.tasks import TaskUpdater
    from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentSkill, Role

    class Quotes(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            task = context.current_task or new_task_from_user_message(context.message)
            if context.current_task is None:
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.start_work(new_text_message("pricing", role=Role.ROLE_AGENT))
            who = a2a.caller_of(context)
            text = f"{context.get_user_input()}: 120 EUR each (for {who.key if who else '?'})"
            await updater.add_artifact([new_text_part(text)], name="quote")
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

    card = AgentCard(
        name="Anvil desk",
        description="Prices anvils.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="quote", name="Quote", description="Prices anvils", tags=["shop"])],
    )
    return Quotes(), card


@dataclass
class Served:
    bot: Peer
    link: str
    chat_records: list[CallRecord]
    rpc_records: list[CallRecord]


@contextlib.asynccontextmanager
async def _serve(net: Net, name: str, display_name: str | None = None) -> AsyncIterator[Served]:
    """A bot serving MCP and A2A on both transports, its responders running."""
    bot = await net.peer(
        name,
        display_name=display_name,
        peer_type="bot",
        preferences={"protocols": PROTOCOLS},
        service_requests=True,
    )
    link = await net.address(bot)
    executor, card = _a2a_agent()
    async with (
        mcp.MCPBinding(_mcp_server(display_name or name), clock=net.clock) as mcp_binding,
        a2a.A2ABinding(executor, card, address=link) as a2a_binding,
    ):
        bindings: list[Binding] = [mcp_binding, a2a_binding]
        served = Served(bot, link, [], [])
        chat = ChatResponder(
            bot.core, bindings, clock=net.clock, on_call=served.chat_records.append
        )
        rpc = ServiceRPCResponder(
            bot.core, bindings, clock=net.clock, on_call=served.rpc_records.append
        )
        await net.start(chat.serve)
        await net.start(rpc.serve)
        try:
            yield served
        finally:
            with anyio.fail_after(WAIT_S):
                await chat.shutdown(0)
                await rpc.shutdown(0)


def _mcp_final(request: dict[str, Any]) -> Any:
    return lambda message: mcp.is_final(request, message)


@pytest.mark.requirement("CALL-BOT-1", "CALL-REP-1", "RPC-ENV-3", "RPC-ERR-8")
async def test_an_mcp_tool_over_both_transports() -> None:
    async with Net() as net:
        alice = await net.peer("alice", peer_type="agent")
        async with _serve(net, "shop") as s:
            bot_id, alice_id = await net.connect(alice, s.bot, s.link)
            request = mcp.build_request(
                "tools/call",
                {"name": "availability", "arguments": {"item": "anvil"}},
                request_id=1,
                progress_token="p-1",
            )
            with anyio.fail_after(WAIT_S):
                result = await ChatCaller(alice.core, clock=net.clock).call(
                    ContactRef(bot_id), "mcp", request, final=_mcp_final(request)
                )
            assert result.completed
            first, last = result.replies
            assert mcp.progress_of(first.message).progress == 1
            answer = mcp.read_response(last.message)
            assert answer.text == f"shop: 12 anvils are in stock (for chat:@{alice_id})."

            requester = ServiceRPCRequester(alice.core, clock=net.clock)
            rpc_request = mcp.build_request(
                "tools/call", {"name": "availability", "arguments": {"item": "vice"}}, request_id=2
            )
            with anyio.fail_after(WAIT_S):
                response = await requester.request(s.link, "mcp", rpc_request)
            text = mcp.read_response(response).text
            assert text is not None and text.startswith(
                "shop: 12 vices are in stock (for rpc-anonymous:"
            )

            # a tool that needs a conversation: conversation_required over Service RPC, served in a chat
            track = mcp.build_request(
                "tools/call",
                {"name": "track_delivery", "arguments": {"order": "A-1"}},
                request_id=3,
            )
            with anyio.fail_after(WAIT_S), pytest.raises(ConversationRequiredError):
                await requester.request(s.link, "mcp", track)
            with anyio.fail_after(WAIT_S):
                tracked = await ChatCaller(alice.core, clock=net.clock).call(
                    ContactRef(bot_id), "mcp", track, final=_mcp_final(track)
                )
            assert mcp.read_response(tracked.response).text == "Order A-1 is on its way."
            await until(lambda: len(s.chat_records) == 2 and len(s.rpc_records) == 2)
            assert [r.outcome for r in s.rpc_records] == ["response", "conversation_required"]
            assert [r.method for r in s.chat_records] == ["tools/call", "tools/call"]


@pytest.mark.requirement("CALL-GRP-1", "CALL-GRP-2")
async def test_mcp_tools_list_in_a_group_with_two_bots() -> None:
    async with Net() as net:
        alice = await net.peer("alice", peer_type="agent")
        async with _serve(net, "shop", "Shop Bot") as shop, _serve(net, "desk") as desk:
            gids = await net.group(alice, [shop.bot, desk.bot])
            caller = ChatCaller(alice.core, clock=net.clock)
            request = mcp.build_request("tools/list", request_id=1)
            with anyio.fail_after(WAIT_S):
                mentioned = await caller.call(
                    GroupRef(gids["alice"]),
                    "mcp",
                    request,
                    member_name="desk",
                    final=_mcp_final(request),
                )
            tools = mentioned.response["result"]["tools"]
            assert sorted(t["name"] for t in tools) == ["availability", "track_delivery"]
            await shop.bot.settle()
            assert shop.chat_records == []
            shop_id = await net.member_id(alice, gids["alice"], "Shop Bot")
            desk_id = await net.member_id(alice, gids["alice"], "desk")
            with anyio.fail_after(WAIT_S):
                broadcast = await caller.call(
                    GroupRef(gids["alice"]),
                    "mcp",
                    mcp.build_request("tools/list", request_id=2),
                    final=_mcp_final(mcp.build_request("tools/list", request_id=2)),
                    expected_members=[shop_id, desk_id],
                )
            assert broadcast.state is CallState.COMPLETED and len(broadcast.answers) == 2


@pytest.mark.requirement("CALL-REP-1", "RPC-ENV-3")
async def test_an_a2a_task_streamed_in_a_chat_and_one_shot_over_service_rpc() -> None:
    async with Net() as net:
        alice = await net.peer("alice", peer_type="agent")
        async with _serve(net, "desk") as s:
            bot_id, alice_id = await net.connect(alice, s.bot, s.link)
            stream = a2a.build_send_message("one anvil", request_id=1, streaming=True)
            with anyio.fail_after(WAIT_S):
                result = await ChatCaller(alice.core, clock=net.clock).call(
                    ContactRef(bot_id),
                    "a2a",
                    stream,
                    final=lambda m: a2a.is_final_message(stream, m),
                )
            assert result.completed
            kinds = [next(iter(r.message["result"])) for r in result.replies]
            assert kinds == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
            artifact = a2a.read_stream_item(result.replies[2].message)
            assert a2a.text_of(artifact) == f"one anvil: 120 EUR each (for chat:@{alice_id})"

            requester = ServiceRPCRequester(alice.core, clock=net.clock)
            one_shot = a2a.build_send_message("two anvils", request_id=2)
            with anyio.fail_after(WAIT_S):
                response = await requester.request(s.link, "a2a", one_shot, sign=False)
            task = a2a.read_send_message_result(response)
            assert a2a.text_of(task).startswith("two anvils: 120 EUR each (for rpc-anonymous:")
            # streaming needs a conversation (A2A-STR-6)
            with anyio.fail_after(WAIT_S), pytest.raises(ConversationRequiredError):
                await requester.request(
                    s.link, "a2a", a2a.build_send_message("x", request_id=3, streaming=True)
                )


async def test_a_malformed_mcp_call_gets_the_bindings_parse_error() -> None:
    async with Net() as net:
        alice = await net.peer("alice")
        async with _serve(net, "shop") as s:
            bot_id, _ = await net.connect(alice, s.bot, s.link)
            await alice.send(f"@{bot_id}", "/_call mcp {oops")
            await alice.wait_for(lambda: len(alice.received()) == 1)
            (reply,) = alice.received()
            text = reply["chatItem"]["content"]["msgContent"]["text"]
            assert '"code":-32700' in text and '"id":null' in text
