"""W3C trace context from a caller into the bot's log: the library's MCP callers put a
``traceparent`` in the request's ``_meta`` when given one, and ``ResponderBot``'s one line per
call names its trace ID (only a valid one; the ``tracestate`` is never logged).
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

import mcp
import pytest

from simplex_protocols.bindings.mcp import SimplexTransport, build_request, is_final
from simplex_protocols.bot import CALLS_LOGGER, ResponderBot
from simplex_protocols.errors import CallFormatError

from .botkit import REVISION, World, make_tools

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
TRACESTATE = "vendor=private-state-never-logged"


def call_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == CALLS_LOGGER]


def new_bot(tmp_path: Path, world: World) -> ResponderBot:
    return ResponderBot(
        display_name="Acme", mcp=make_tools(), data_dir=tmp_path / "acme", clock=world.clock
    )


def availability(**trace: Any) -> dict[str, Any]:
    return build_request(
        "tools/call",
        {"name": "availability", "arguments": {"item": "kite"}},
        request_id=1,
        revision=REVISION,
        client_capabilities={"elicitation": {"form": {}}},
        **trace,
    )


# ----------------------------------------------------------------------------- the caller


def test_build_request_puts_the_trace_context_in_meta() -> None:
    request = availability(traceparent=TRACEPARENT, tracestate=TRACESTATE)
    meta = request["params"]["_meta"]
    assert meta["traceparent"] == TRACEPARENT
    assert meta["tracestate"] == TRACESTATE
    assert meta["io.modelcontextprotocol/protocolVersion"] == REVISION
    assert "traceparent" not in availability()["params"]["_meta"]


def test_a_new_traceparent_replaces_the_trace_context_of_the_given_meta() -> None:
    params = {"name": "t", "_meta": {"traceparent": "00-old", "tracestate": "old=1"}}
    request = build_request("tools/call", params, request_id=1, traceparent=TRACEPARENT)
    assert request["params"]["_meta"]["traceparent"] == TRACEPARENT
    assert "tracestate" not in request["params"]["_meta"]
    assert params["_meta"] == {"traceparent": "00-old", "tracestate": "old=1"}


@pytest.mark.parametrize(
    "trace",
    [
        {"traceparent": TRACEPARENT.upper()},
        {"traceparent": TRACEPARENT[:-1]},
        {"traceparent": f"00-{'0' * 32}-00f067aa0ba902b7-01"},
        {"tracestate": TRACESTATE},
        {"traceparent": TRACEPARENT, "tracestate": "Bad=1"},
        {"traceparent": TRACEPARENT, "tracestate": ",".join(f"k{i}=v" for i in range(33))},
    ],
)
def test_build_request_refuses_invalid_trace_context(trace: dict[str, Any]) -> None:
    with pytest.raises(CallFormatError) as caught:
        availability(**trace)
    assert caught.value.code == "bad_trace_context"


# ----------------------------------------------------------------------------- the bot's log


async def test_the_bots_call_line_names_the_callers_trace_on_both_transports(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            contact = await alice.connect(bot.address)
            request = availability(traceparent=TRACEPARENT, tracestate=TRACESTATE)
            await alice.chat.call(
                contact, "mcp", request, final=functools.partial(is_final, request)
            )
            await alice.rpc.request(bot.address, "mcp", request)
            untraced = availability()
            await alice.rpc.request(bot.address, "mcp", untraced)
    traced_chat, traced_rpc, plain = call_lines(caplog)
    for line in (traced_chat, traced_rpc):
        assert line.getMessage().endswith(f" (trace {TRACE_ID})")
        assert line.simplex_call.trace_id == TRACE_ID  # type: ignore[attr-defined]
    assert "trace" not in plain.getMessage()
    assert plain.simplex_call.trace_id is None  # type: ignore[attr-defined]
    assert all("private-state" not in r.getMessage() for r in caplog.records)


async def test_an_invalid_traceparent_is_neither_logged_nor_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    forged = "00-" + "Z" * 32 + "-00f067aa0ba902b7-01 forged"
    request = availability()
    request["params"]["_meta"]["traceparent"] = forged
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            await alice.rpc.request(bot.address, "mcp", request)
    (line,) = call_lines(caplog)
    assert line.simplex_call.outcome == "response"  # type: ignore[attr-defined]
    assert line.simplex_call.trace_id is None  # type: ignore[attr-defined]
    assert all("forged" not in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("transport", ["rpc", "chat"])
async def test_the_sdk_client_over_simplex_carries_the_trace_into_the_bots_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, transport: str
) -> None:
    caplog.set_level(logging.INFO)
    async with World() as world:
        alice = await world.caller("alice")
        async with new_bot(tmp_path, world).serving(world.network.backend("acme")) as bot:
            sdk = SimplexTransport(
                bot.address,
                core=alice.core,
                transport=transport,  # type: ignore[arg-type]
                clock=world.clock,
            )
            async with mcp.Client(sdk) as client:
                result = await client.call_tool(
                    "availability", {"item": "kite"}, meta={"traceparent": TRACEPARENT}
                )
    assert not result.is_error
    lines = [r for r in call_lines(caplog) if r.simplex_call.method == "tools/call"]  # type: ignore[attr-defined]
    assert [r.simplex_call.trace_id for r in lines] == [TRACE_ID]  # type: ignore[attr-defined]
    assert lines[0].getMessage().endswith(f" (trace {TRACE_ID})")
