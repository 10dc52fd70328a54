"""The ``call`` tool (``serve NAME --call-tool``, docs/mcp_server.md "Beyond the plan"), end to
end over the simulated network: the agent's calls come from the ``mcp`` SDK's client, the owner
decides in the control chat, and the bots are ``ResponderBot`` instances serving MCP or A2A.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentSkill
from mcp.server.mcpserver import Context, MCPServer
from mcp_sim import (
    World,
    core_formatted_lines,
    formatted_lines,
    result_text,
    structured,
    text_of_item,
    world,
)

from simplex_protocols.bindings.mcp import caller_of
from simplex_protocols.bot import CALLS_LOGGER, ResponderBot
from simplex_protocols.mcp_server.tools import TOOLS
from simplex_protocols.rpc import KeyStore

pytestmark = pytest.mark.anyio

WAIT_S = 20
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
#: A peer's text that would be a link, a command and a bold word, were it not data.
HOSTILE = "See [the deal](https://evil.example) and /'approve 9' *now*"


def acme_tools() -> MCPServer[Any]:
    """The MCP bot: a tool that answers, one that reports progress, one with hostile text."""
    tools: MCPServer[Any] = MCPServer("acme", subscriptions=False)

    @tools.tool(structured_output=False)
    def availability(item: str) -> str:
        """Items in stock."""
        return f"12 {item}s are in stock."

    @tools.tool(structured_output=False)
    async def pack(item: str, ctx: Context) -> str:
        """Pack an item, reporting progress."""
        await ctx.report_progress(1, 2, f"packing {item}")
        await ctx.report_progress(2, 2, "packed")
        return f"{item} packed"

    @tools.tool(structured_output=False)
    def whoami(ctx: Context) -> str:
        """The caller key SimpleX gave this request."""
        caller = caller_of(ctx)
        return "nobody" if caller is None else caller.key

    @tools.tool(structured_output=False)
    def offer() -> str:
        """An offer with markdown and a link."""
        return HOSTILE

    return tools


def echo_card() -> AgentCard:
    return AgentCard(
        name="Acme echo",
        description="Echoes what you send.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes text", tags=["demo"])],
    )


@asynccontextmanager
async def calling_world(tmp_path: Path, **bot: Any) -> AsyncIterator[tuple[World, ResponderBot]]:
    """The world with ``--call-tool``, its owner joined, and an MCP bot (or ``bot`` options)."""
    options: dict[str, Any] = {"display_name": "Acme", "mcp": acme_tools(), **bot}
    async with world(tmp_path, call_tool=True) as w:
        await w.setup_owner()
        responder = ResponderBot(data_dir=tmp_path / "acme", clock=w.clock, **options)
        async with responder.serving(w.network.backend("acme")) as running:
            yield w, running


def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


async def card_of(w: World, n_before: int) -> tuple[int, str]:
    """The next call card the owner sees: its action number and text."""
    message = await w.owner.wait_message(lambda t: t.startswith("I want to call"))
    text = text_of_item(message)
    commands = text.splitlines()[-1]
    n = int(commands.split("'approve ")[1].split("'")[0])
    assert n > n_before
    return n, text


# ----------------------------------------------------------------------------- the tool's presence


async def test_the_call_tool_is_listed_and_in_the_instructions_only_with_the_option(
    tmp_path: Path,
) -> None:
    async with world(tmp_path / "off", mode="legacy") as w:
        names = [t.name for t in (await w.server.mcp.list_tools()).tools]
        assert names == [t.name for t in TOOLS]
        assert w.server.mcp.instructions is not None
        assert "\ncall " not in w.server.mcp.instructions
        assert (await w.server.call("call", {"target": "x", "protocol": "mcp"})).is_error
    async with world(tmp_path / "on", mode="legacy", call_tool=True) as w:
        names = [t.name for t in (await w.server.mcp.list_tools()).tools]
        assert names == [*(t.name for t in TOOLS), "call"]
        assert w.server.mcp.instructions is not None
        assert "\ncall calls another bot" in w.server.mcp.instructions


# ----------------------------------------------------------------------------- an action


async def test_first_call_waits_for_the_card_then_the_answer_comes_back_signed(
    tmp_path: Path,
) -> None:
    async with calling_world(tmp_path) as (w, bot):
        results: list[Any] = []

        async def agent() -> None:
            results.append(
                await w.server.call(
                    "call",
                    {
                        "target": bot.address,
                        "protocol": "mcp",
                        "method": "tools/call",
                        "params": {"name": "availability", "arguments": {"item": "kite"}},
                    },
                )
            )

        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent)
                n, card = await card_of(w, 0)
                assert card.splitlines()[0] == "I want to call bot Acme over MCP: `tools/call`."
                assert f"Address: `{bot.address}`" in card
                assert "Not verified: the address came as a link or from a website." in card
                assert "By Service RPC, signed with my key for this bot." in card
                assert '`{"name":"availability","arguments":{"item":"kite"}}`' in card
                assert (
                    card.splitlines()[-1]
                    == f"/'approve {n}', /'approve {n} calls' or /'reject {n}'"
                )
                await w.owner.say(f"/approve {n}")
        out = structured(results[0])
        assert out["status"] == "done" and out["action"] == n
        assert out["transport"] == "rpc" and out["signed"] is True
        assert out["answer"]["result"]["content"][0]["text"] == "12 kites are in stock."
        assert out["bot"]["name"] == "Acme" and out["bot"]["verified"] is False
        await w.owner.wait_message(lambda t: t.startswith("I called bot Acme"))
        # one key for this bot, private, kept in the data folder
        keys = [p for p in (tmp_path / "agent" / "keys").iterdir() if p.suffix != ".salt"]
        key_files = [p for p in keys if p.is_file() and "salt" not in p.name]
        assert len(key_files) == 1
        assert stat.S_IMODE(os.stat(key_files[0]).st_mode) == 0o600


async def next_card(w: World, before: int) -> dict[str, Any]:
    """The first call card among the agent's messages after the first ``before``."""
    found: dict[str, Any] = await w.owner.watch.until(
        lambda: next(
            (
                m
                for m in w.owner.agent_messages()[before:]
                if text_of_item(m).startswith("I want to call")
            ),
            None,
        )
    )
    return found


async def call_approved(
    w: World, arguments: dict[str, Any], command: str = "/approve {n}", **kwargs: Any
) -> tuple[Any, int, str]:
    """Make a call, wait for its card, answer it with ``command``; the result, N and the card."""
    results: list[Any] = []
    seen: list[tuple[int, str]] = []
    before = len(w.owner.agent_messages())

    async def agent() -> None:
        results.append(await w.server.call("call", arguments, **kwargs))

    with anyio.fail_after(WAIT_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent)
            message = await next_card(w, before)
            text = text_of_item(message)
            n = int(text.splitlines()[-1].split("'approve ")[1].split("'")[0])
            seen.append((n, text))
            await w.owner.say(command.format(n=n))
    return results[0], *seen[0]


def availability(bot: ResponderBot, item: str = "kite", **more: Any) -> dict[str, Any]:
    return {
        "target": bot.address,
        "protocol": "mcp",
        "method": "tools/call",
        "params": tool_call("availability", item=item),
        **more,
    }


async def test_approve_n_calls_makes_later_calls_to_the_bot_standing_until_revoked(
    tmp_path: Path,
) -> None:
    async with calling_world(tmp_path) as (w, bot):
        first, n, _ = await call_approved(w, availability(bot), "/approve {n} calls")
        assert structured(first)["status"] == "done"
        await w.owner.wait_message(
            lambda t: t == f"Approved calls to bot Acme by Alice. /'revoke {n} calls'"
        )
        cards = len(w.owner.agent_messages())
        with anyio.fail_after(WAIT_S):
            second = structured(await w.server.call("call", availability(bot, "sail")))
        assert second["status"] == "done" and second["action"] > n
        assert second["answer"]["result"]["content"][0]["text"] == "12 sails are in stock."
        # no card asked: the outcome is posted once performed, and the log names it
        outcome = await w.owner.wait_message(
            lambda t: t.startswith("I called bot Acme") and "revoke" in t
        )
        assert text_of_item(outcome).splitlines()[-1] == (
            f"Approved for calls to this bot by Alice. /'revoke {n} calls'"
        )
        assert not any(
            text_of_item(m).startswith("I want to call") for m in w.owner.agent_messages()[cards:]
        )
        await w.server.log.wait_line(
            lambda line: (
                line
                == f"Action {second['action']} approved for calls to this bot by Alice: called."
            )
        )
        await w.owner.say(f"/revoke {n} calls")
        await w.owner.wait_message(
            lambda t: t == f"Calls to the bot of action {n} need approval again."
        )
        third, m, _ = await call_approved(w, availability(bot, "kayak"), "/reject {n}")
        assert structured(third) == {"action": m, "status": "rejected"}


async def test_a_rejected_call_reaches_no_bot_and_the_decision_line_names_the_trace(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with calling_world(tmp_path) as (w, bot):
        result, n, _ = await call_approved(
            w, availability(bot), "/reject {n}", meta={"traceparent": TRACEPARENT}
        )
        assert structured(result) == {"action": n, "status": "rejected"}
        await w.server.log.wait_line(
            lambda line: line == f"Action {n} rejected by Alice. (trace {TRACE_ID})"
        )
    assert not [r for r in caplog.records if r.name == CALLS_LOGGER]


async def test_the_trace_id_of_the_agents_call_reaches_the_bots_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with calling_world(tmp_path) as (w, bot):
        result, n, _ = await call_approved(w, availability(bot), meta={"traceparent": TRACEPARENT})
        assert structured(result)["status"] == "done"
        await w.server.log.wait_line(
            lambda line: line == f"Action {n} approved by Alice: called. (trace {TRACE_ID})"
        )
    lines = [r.getMessage() for r in caplog.records if r.name == CALLS_LOGGER]
    assert len(lines) == 1 and lines[0].endswith(f" (trace {TRACE_ID})")


async def test_without_method_the_tool_returns_what_the_target_declares_without_an_action(
    tmp_path: Path,
) -> None:
    async with calling_world(tmp_path) as (w, bot):
        cards = len(w.owner.agent_messages())
        with anyio.fail_after(WAIT_S):
            out = structured(
                await w.server.call("call", {"target": bot.address, "protocol": "mcp"})
            )
        assert out["status"] == "declared" and "action" not in out
        assert out["bot"]["name"] == "Acme"
        assert out["bot"]["protocols"]["mcp"]["transports"] == {"chat": True, "rpc": True}
        assert sorted(t["name"] for t in out["tools"]) == [
            "availability",
            "offer",
            "pack",
            "whoami",
        ]
        a2a = structured(await w.server.call("call", {"target": bot.address, "protocol": "a2a"}))
        assert a2a["notes"] == ["the target does not declare a2a"]
        listed = structured(await w.server.call("list"))
        assert listed["actions"] == []
        assert len(w.owner.agent_messages()) == cards
        # the look signs nothing, so no key is made for it
        assert not (tmp_path / "agent" / "keys").exists() or not [
            p for p in (tmp_path / "agent" / "keys").iterdir() if p.name.endswith(".key")
        ]


async def test_over_chat_the_bots_progress_reaches_the_sdk_client(tmp_path: Path) -> None:
    async with calling_world(tmp_path) as (w, bot):
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total, message))

        arguments = {
            "target": bot.address,
            "protocol": "mcp",
            "method": "tools/call",
            "params": tool_call("pack", item="kite"),
            "transport": "chat",
        }
        result, _n, card = await call_approved(w, arguments, progress_callback=on_progress)
        assert "In a conversation with it." in card
        out = structured(result)
        assert out["transport"] == "chat" and out["chat"].startswith("@")
        assert out["answer"]["result"]["content"][0]["text"] == "kite packed"
        messages = [m for _, _, m in progress]
        assert "progress 1/2: packing kite" in messages
        assert "progress 2/2: packed" in messages
        # the conversation is a chat of the agent now
        chats = structured(await w.server.call("list"))["chats"]
        assert any(c["chat"] == out["chat"] and c["name"] == "Acme" for c in chats)


async def test_an_a2a_bot_answers_send_message_over_service_rpc(tmp_path: Path) -> None:
    from a2a.helpers import new_task_from_user_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.tasks import TaskUpdater

    class Echo(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.message is not None
            task = context.current_task or new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.add_artifact([new_text_part(f"echo: {context.get_user_input()}")])
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    async with calling_world(
        tmp_path, mcp=None, a2a=Echo(), agent_card=echo_card(), peer_type="agent"
    ) as (w, bot):
        arguments = {
            "target": bot.address,
            "protocol": "a2a",
            "method": "SendMessage",
            "params": {
                "message": {
                    "role": "ROLE_USER",
                    "messageId": "m-1",
                    "parts": [{"text": "hello"}],
                }
            },
        }
        result, _n, card = await call_approved(w, arguments)
        assert card.splitlines()[0] == "I want to call agent Acme over A2A: `SendMessage`."
        out = structured(result)
        assert out["transport"] == "rpc" and out["protocol"] == "a2a"
        task = out["answer"]["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"][0]["text"] == "echo: hello"


async def test_a_peers_markdown_stays_inert_on_the_card_and_is_data_in_the_result(
    tmp_path: Path,
) -> None:
    async with calling_world(tmp_path, display_name="Acme *deals* +1 (555) 123-4567") as (
        w,
        bot,
    ):
        arguments = {
            "target": bot.address,
            "protocol": "mcp",
            "method": "tools/call",
            "params": tool_call("offer", note=HOSTILE),
        }
        result, n, card = await call_approved(w, arguments)
        out = structured(result)
        assert out["answer"]["result"]["content"][0]["text"] == HOSTILE
        assert out["bot"]["name"] == "Acme *deals* +1 (555) 123-4567"
        message = next(
            m for m in w.owner.agent_messages() if text_of_item(m).startswith("I called")
        )
        pending = core_formatted_lines(card)
        live = [
            (kind, text)
            for line in pending + formatted_lines(message)
            for kind, text in line
            if kind not in (None, "snippet", "command")
        ]
        assert live == []
        commands = [text for line in pending for kind, text in line if kind == "command"]
        assert commands == [f"/'approve {n}'", f"/'approve {n} calls'", f"/'reject {n}'"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"target": "@name.simplex", "protocol": "xmpp"},
            "data/protocol must be equal to one of the allowed values",
        ),
        ({"target": "no target here", "protocol": "mcp"}, "target: a contact address link"),
        ({"target": "@77", "protocol": "mcp"}, "No chat @77. list shows the agent's chats."),
        (
            {"target": "x.example", "protocol": "mcp", "params": {}},
            "params: give method with params.",
        ),
        (
            {"target": "@a.simplex", "protocol": "mcp", "transport": "mail"},
            "data/transport must be equal to one of the allowed values",
        ),
    ],
)
async def test_argument_errors_are_tool_errors(
    tmp_path: Path, arguments: dict[str, Any], message: str
) -> None:
    async with world(tmp_path, call_tool=True) as w:
        result = await w.server.call("call", arguments)
        assert result.is_error
        assert result_text(result).startswith(message)


async def test_a_call_to_a_bot_that_does_not_serve_the_transport_is_refused_before_a_card(
    tmp_path: Path,
) -> None:
    async with calling_world(tmp_path, transports=("chat",)) as (w, bot):
        result = await w.server.call("call", availability(bot, transport="rpc"))
        assert result.is_error
        assert result_text(result) == (
            "The bot does not serve mcp over Service RPC; call with transport chat."
        )
        assert not any(
            text_of_item(m).startswith("I want to call") for m in w.owner.agent_messages()
        )


async def test_the_signing_key_is_one_per_bot_and_read_again_from_the_data_folder(
    tmp_path: Path,
) -> None:
    async with calling_world(tmp_path) as (w, bot):
        other = ResponderBot(
            display_name="Other", mcp=acme_tools(), data_dir=tmp_path / "other", clock=w.clock
        )
        async with other.serving(w.network.backend("other")) as second:
            whoami = {"method": "tools/call", "params": tool_call("whoami"), "protocol": "mcp"}
            first, _n, _ = await call_approved(
                w, {"target": bot.address, **whoami}, "/approve {n} calls"
            )
            keys = tmp_path / "agent" / "keys"
            files = {p.name: p.read_bytes() for p in keys.iterdir()}
            again = structured(await w.server.call("call", {"target": bot.address, **whoami}))
            elsewhere, _, _ = await call_approved(w, {"target": second.address, **whoami})
            seen = [
                structured(r)["answer"]["result"]["content"][0]["text"] for r in (first, elsewhere)
            ]
            seen.insert(1, again["answer"]["result"]["content"][0]["text"])
            # the same key for both calls to Acme, another one for Other
            assert seen[0] == seen[1] != seen[2]
            # a new store on the folder (what a restarted server makes) reads the same keys
            store = KeyStore(keys)
            for address, key in ((bot.address, seen[0]), (second.address, seen[2])):
                assert key == f"rpc:{store.key_for(address).public_key.encode()}"
            assert {p.name: p.read_bytes() for p in keys.iterdir() if p.name in files} == files
            for path in keys.iterdir():
                assert stat.S_IMODE(path.stat().st_mode) == 0o600
            assert stat.S_IMODE(keys.stat().st_mode) == 0o700


class Hold:
    """A tool that holds until released, and records whether it was cancelled."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.cancelled = anyio.Event()
        self.calls = 0

    def tools(self) -> MCPServer[Any]:
        tools = acme_tools()

        @tools.tool(structured_output=False)
        async def hold() -> str:
            """Hold until the test releases it."""
            self.calls += 1
            self.started.set()
            try:
                await self.release.wait()
            except anyio.get_cancelled_exc_class():
                self.cancelled.set()
                raise
            return "released"

        return tools


def hold_call(bot: ResponderBot, transport: str) -> dict[str, Any]:
    return {
        "target": bot.address,
        "protocol": "mcp",
        "method": "tools/call",
        "params": tool_call("hold"),
        "transport": transport,
    }


async def test_the_agent_cancelling_a_call_in_a_conversation_cancels_the_bots_tool(
    tmp_path: Path,
) -> None:
    hold = Hold()
    async with calling_world(tmp_path, mcp=hold.tools()) as (w, bot):
        before = len(w.owner.agent_messages())
        with anyio.fail_after(WAIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(w.server.call, "call", hold_call(bot, "chat"))
                message = await next_card(w, before)
                n = int(text_of_item(message).splitlines()[-1].split("'approve ")[1].split("'")[0])
                await w.owner.say(f"/approve {n}")
                await hold.started.wait()
                tg.cancel_scope.cancel()
            await hold.cancelled.wait()
            failed = await w.owner.wait_message(
                lambda t: t.startswith("I want to call") and "failed" in t
            )
        assert text_of_item(failed).splitlines()[-1] == (
            "Approved by Alice; failed: `cancelled by the agent`."
        )
        assert not hold.release.is_set()


async def test_a_call_cut_off_by_a_crash_is_never_sent_again_after_the_restart(
    tmp_path: Path,
) -> None:
    hold = Hold()
    bot = ResponderBot(
        display_name="Acme", mcp=hold.tools(), data_dir=tmp_path / "acme", clock=None
    )
    async with anyio.create_task_group() as outer:
        async with world(tmp_path, call_tool=True, durable_actions=True) as w:
            await w.setup_owner()
            bot = ResponderBot(
                display_name="Acme", mcp=hold.tools(), data_dir=tmp_path / "acme", clock=w.clock
            )
            await outer.start(bot.serve, w.network.backend("acme"))
            before = len(w.owner.agent_messages())
            with anyio.fail_after(WAIT_S):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(w.server.call, "call", hold_call(bot, "rpc"))
                    message = await next_card(w, before)
                    card = text_of_item(message)
                    n = int(card.splitlines()[-1].split("'approve ")[1].split("'")[0])
                    await w.owner.say(f"/approve {n}")
                    await hold.started.wait()
                    await w.server.crash()
                    tg.cancel_scope.cancel()
            server = await w.restart(durable_actions=True, call_tool=True)
            with anyio.fail_after(WAIT_S):
                listed = structured(await server.call("list"))["actions"]
                assert [(a["action"], a["tool"], a["state"]) for a in listed] == [
                    (n, "call", "failed")
                ]
                again = structured(await server.call("call", hold_call(bot, "rpc")))
                assert again["action"] == n and again["status"] == "failed"
                assert again["error"].startswith("outcome unknown")
                await w.owner.wait_message(
                    lambda t: t.startswith("I want to call") and "outcome unknown" in t
                )
            # the bot got the call once: the restart did not send it again
            assert hold.calls == 1
            hold.release.set()
            await bot.shutdown(grace_s=0)
        outer.cancel_scope.cancel()


async def test_approve_chat_all_for_the_bots_contact_makes_its_calls_standing(
    tmp_path: Path,
) -> None:
    async with calling_world(tmp_path) as (w, bot):
        first, _, _ = await call_approved(w, availability(bot, transport="chat"))
        chat = structured(first)["chat"]
        await w.owner.say(f"/approve {chat} all")
        await w.owner.wait_message(lambda t: t.startswith("Approved for bot Acme"))
        cards = len(w.owner.agent_messages())
        with anyio.fail_after(WAIT_S):
            second = structured(await w.server.call("call", availability(bot, "sail")))
        assert second["status"] == "done"
        assert not any(
            text_of_item(m).startswith("I want to call") for m in w.owner.agent_messages()[cards:]
        )
        outcome = await w.owner.wait_message(
            lambda t: t.startswith("I called bot Acme") and "revoke" in t
        )
        assert text_of_item(outcome).splitlines()[-1] == (
            f"Approved for this chat by Alice. /'revoke {chat}'"
        )


async def test_the_owners_help_names_approve_n_calls_only_with_the_option(tmp_path: Path) -> None:
    async with world(tmp_path / "off") as w:
        await w.setup_owner()
        await w.owner.say("/approve 5 calls")
        await w.owner.wait_message(
            lambda t: (
                t
                == "Commands: /approve, /reject, /revoke, /pending, /list. Each card shows its commands."
            )
        )
    async with world(tmp_path / "on", call_tool=True) as w:
        await w.setup_owner()
        await w.owner.say("/help")
        await w.owner.wait_message(lambda t: "/approve N calls approves call N" in t)
        await w.owner.say("/approve 5 calls")
        await w.owner.wait_message(lambda t: t == "Action 5 is not a pending call.")
