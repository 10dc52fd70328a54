"""Graceful shutdown with calls in flight, and the call log (never contents by default)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from simplex_protocols.bindings.a2a import build_send_message, is_final_message, stream_item_state
from simplex_protocols.bindings.mcp import is_final
from simplex_protocols.bot import CALLS_LOGGER, CONTENTS_LOGGER, ResponderBot, configure_bot_logging
from simplex_protocols.errors import InternalServiceError
from simplex_protocols.transports import CallRecord

from .botkit import WAIT_S, EchoAgent, Gates, World, make_tools, tool_call, tool_text

pytestmark = pytest.mark.anyio


def new_bot(tmp_path: Path, world: World, gates: Gates, **options: Any) -> ResponderBot:
    return ResponderBot(
        display_name="Acme",
        mcp=make_tools(gates),
        a2a=EchoAgent(gates),
        data_dir=tmp_path / "acme",
        clock=world.clock,
        **options,
    )


async def advance_until(world: World, done: anyio.Event, *, step_s: float = 1.0) -> None:
    """Move the manual clock a step at a time until ``done`` is set (bounded)."""
    with anyio.fail_after(WAIT_S):
        while not done.is_set():
            await world.clock.advance(step_s)
            for _ in range(50):
                await anyio.lowlevel.checkpoint()


async def test_shutdown_answers_or_refuses_every_call_in_flight(tmp_path: Path) -> None:
    gates = Gates()
    records: list[CallRecord] = []
    outcomes: dict[str, Any] = {}
    async with World() as world:
        alice = await world.caller("alice")
        bot = new_bot(tmp_path, world, gates, shutdown_grace_s=5, on_call=records.append)
        async with bot.serving(world.network.backend("acme")):
            contact = await alice.connect(bot.address)
            chat_done, rpc_done, stream_done, stopped = (anyio.Event() for _ in range(4))

            async def chat_call() -> None:
                request = tool_call("wait", {"key": "quick"})
                outcomes["chat"] = await alice.chat.call(
                    contact, "mcp", request, final=functools.partial(is_final, request)
                )
                chat_done.set()

            async def rpc_call() -> None:
                try:
                    await alice.rpc.request(bot.address, "mcp", tool_call("wait", {"key": "slow"}))
                except InternalServiceError as exc:
                    outcomes["rpc"] = exc
                rpc_done.set()

            async def stream_call() -> None:
                request = build_send_message("wait:stuck now", request_id=9, streaming=True)
                outcomes["stream"] = await alice.chat.call(
                    contact, "a2a", request, final=functools.partial(is_final_message, request)
                )
                stream_done.set()

            async def stop() -> None:
                await bot.shutdown()
                stopped.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(chat_call)
                tg.start_soon(rpc_call)
                tg.start_soon(stream_call)
                with anyio.fail_after(WAIT_S):
                    for key in ("quick", "slow", "stuck"):
                        await gates.arrived(key).wait()
                tg.start_soon(stop)
                # A call that finishes within the grace period is answered as usual.
                gates.gate("quick").set()
                with anyio.fail_after(WAIT_S):
                    await chat_done.wait()
                # The others are cut short when the grace period ends, and refused.
                await advance_until(world, stopped)
                with anyio.fail_after(WAIT_S):
                    await rpc_done.wait()
                    await stream_done.wait()
            assert not bot.running
    chat = outcomes["chat"].answers[0].final
    assert tool_text(chat) == "opened quick"
    refused = outcomes["rpc"]
    assert refused.code == "internal" and refused.retry_after is not None
    # The stream's replies end with an error response: nothing is left half-sent.
    stream = outcomes["stream"]
    assert stream.completed
    *items, last = stream.answers[0].messages
    assert all(stream_item_state(item) is not None for item in items)
    assert last["id"] == 9 and last["error"]["code"] == -32603
    assert sorted(r.outcome for r in records) == sorted(["answered", "internal", "shutdown"])


async def test_each_call_is_logged_without_its_contents(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world, Gates()).serving(world.network.backend("acme")) as bot:
            contact = await alice.connect(bot.address)
            request = tool_call("availability", {"item": "zeppelin"})
            await alice.chat.call(
                contact, "mcp", request, final=functools.partial(is_final, request)
            )
            await alice.rpc.request(
                bot.address, "mcp", tool_call("availability", {"item": "zeppelin"})
            )
    lines = [r for r in caplog.records if r.name == CALLS_LOGGER]
    assert len(lines) == 2
    chat, rpc = (r.simplex_call for r in lines)  # type: ignore[attr-defined]
    assert (chat.transport.value, chat.protocol, chat.method, chat.outcome) == (
        "chat",
        "mcp",
        "tools/call",
        "answered",
    )
    assert chat.caller.startswith("chat:@")
    assert (rpc.transport.value, rpc.method, rpc.outcome) == ("rpc", "tools/call", "response")
    assert rpc.caller.startswith("rpc-anonymous:")
    assert "Acme: chat call from chat:@" in lines[0].getMessage()
    assert all("zeppelin" not in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if r.name == CONTENTS_LOGGER]


async def test_log_contents_logs_requests_and_answers_for_debugging(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with World() as world:
        alice = await world.caller("alice")
        bot = new_bot(tmp_path, world, Gates(), log_contents=True)
        async with bot.serving(world.network.backend("acme")):
            await alice.rpc.request(
                bot.address, "mcp", tool_call("availability", {"item": "zeppelin"})
            )
    contents = [r.getMessage() for r in caplog.records if r.name == CONTENTS_LOGGER]
    assert len(contents) == 2
    assert '"item":"zeppelin"' in contents[0]
    assert "12 zeppelins are in stock." in contents[1]


async def test_a_failing_serving_block_stops_at_once_and_still_answers(tmp_path: Path) -> None:
    gates = Gates()
    outcome: dict[str, Any] = {}
    answered = anyio.Event()
    async with World() as world:
        alice = await world.caller("alice")
        bot = new_bot(tmp_path, world, gates, shutdown_grace_s=600)
        with anyio.fail_after(WAIT_S), pytest.raises(LookupError):
            async with bot.serving(world.network.backend("acme")):

                async def call() -> None:
                    try:
                        await alice.rpc.request(
                            bot.address, "mcp", tool_call("wait", {"key": "never"})
                        )
                    except InternalServiceError as exc:
                        outcome["rpc"] = exc
                    answered.set()

                assert world.tg is not None
                world.tg.start_soon(call)
                await gates.arrived("never").wait()
                raise LookupError("the test's own failure")
        # The grace period (600 s on a clock that does not move) was not waited for.
        assert not bot.running
        with anyio.fail_after(WAIT_S):
            await answered.wait()
    assert outcome["rpc"].code == "internal"


def test_content_logging_keeps_the_bindings_internal_error_answer() -> None:
    from simplex_protocols.bot._logging import ContentLoggingBinding
    from simplex_protocols.transports import internal_error_for

    class WithHook:
        name = "x"
        versions = ("1",)

        def internal_error(self, request: Any, reason: str) -> dict[str, Any]:
            return {"custom": reason}

    class WithoutHook:
        name = "y"
        versions = ("1",)

    request = {"jsonrpc": "2.0", "id": 3, "method": "m"}
    wrapped = ContentLoggingBinding(WithHook())  # type: ignore[arg-type]
    assert internal_error_for(wrapped, request, "stop") == {"custom": "stop"}  # type: ignore[arg-type]
    plain = ContentLoggingBinding(WithoutHook())  # type: ignore[arg-type]
    assert not hasattr(plain, "internal_error")
    assert internal_error_for(plain, request, "stop") == {  # type: ignore[arg-type]
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32603, "message": "stop"},
    }


@contextmanager
def _bare_root_logger() -> Iterator[logging.Logger]:
    """The root logger with no handlers, as a program starts (pytest's own capture handlers
    included, which it adds while a test runs); restored afterwards."""
    root = logging.getLogger()
    kept_handlers, kept_level = root.handlers[:], root.level
    root.handlers.clear()
    try:
        yield root
    finally:
        root.handlers[:] = kept_handlers
        root.setLevel(kept_level)


def _own_line_handler(root: logging.Logger) -> logging.Handler:
    [handler] = root.handlers
    assert type(handler) is logging.StreamHandler
    assert handler.formatter is not None
    assert handler.formatter._fmt == "%(asctime)s %(levelname)s %(name)s: %(message)s"
    return handler


def test_the_handler_an_mcp_server_adds_by_itself_is_replaced() -> None:
    from mcp.server.mcpserver import MCPServer

    with _bare_root_logger() as root:
        MCPServer("acme")  # adds rich's handler to the bare root logger, wrapping at 80 columns
        assert [type(h).__name__ for h in root.handlers] == ["RichHandler"]
        configure_bot_logging()
        _own_line_handler(root)


def test_a_handler_the_program_chose_is_kept() -> None:
    from rich.logging import RichHandler

    with _bare_root_logger() as root:
        chosen = RichHandler()  # on standard output, without rich tracebacks: not the SDK's
        root.addHandler(chosen)
        configure_bot_logging()
        assert root.handlers == [chosen]
        root.handlers.clear()
        configure_bot_logging()
        _own_line_handler(root)
