"""W3C trace context of the tool calls (docs/mcp_server.md "Beyond the plan"), through the
``mcp`` SDK's client: the result's ``_meta.traceparent`` names the call, invalid trace data
gives one fixed log line and never rejects the call, and the log lines of a traced call carry
its trace ID (never its ``tracestate``).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp_fakes import scripted_api
from mcp_sim import LogLines, structured, world
from test_mcp_http import ScriptedCore, client, scripted_agent

from simplex_protocols._clock import ManualClock
from simplex_protocols._trace_context import (
    TraceParent,
    parse_traceparent,
    parse_tracestate,
    request_trace_id,
)
from simplex_protocols.bindings.mcp import build_request
from simplex_protocols.mcp_server.agent import Agent
from simplex_protocols.mcp_server.http import HttpServer, bind_port, build_mcp_server
from simplex_protocols.mcp_server.trace import (
    INVALID_TRACEPARENT,
    INVALID_TRACESTATE,
    TracedLog,
    call_trace,
    current_trace,
    traced,
)

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
TRACESTATE = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
SECRET_STATE = "vendor=secret-value-never-logged"
#: Valid tracestates of 512 characters, the most, and of 513 (each member value at most 256).
STATE_512 = "a=" + "v" * 254 + ",b=" + "v" * 253
STATE_513 = STATE_512 + "v"


class CountingBytes:
    """A deterministic random source: byte values 1, 2, 3, ... in order."""

    def __init__(self) -> None:
        self._next = itertools.count(1)

    def __call__(self, size: int) -> bytes:
        return bytes(next(self._next) % 256 for _ in range(size))


def expected_ids(*sizes: int) -> list[str]:
    source = CountingBytes()
    return [source(size).hex() for size in sizes]


@asynccontextmanager
async def traced_server() -> AsyncIterator[tuple[HttpServer, Agent, LogLines]]:
    """The scripted agent's server, its trace IDs from :class:`CountingBytes`."""
    log = LogLines()
    async with scripted_api(ScriptedCore()) as (api, _):
        agent = scripted_agent(api, "My Agent", ManualClock())
        agent.state.log = log
        http = HttpServer(
            build_mcp_server(
                agent, name="a", display="My Agent", host_mode=False, random_bytes=CountingBytes()
            ),
            bind_port(0),
            "t" * 43,
        )
        async with anyio.create_task_group() as tg:
            await tg.start(agent.run)
            async with http.running():
                yield http, agent, log
            tg.cancel_scope.cancel()


def traceparent_of(result: types.CallToolResult) -> TraceParent:
    assert result.meta is not None
    parsed = parse_traceparent(result.meta["traceparent"])
    assert parsed is not None, result.meta
    return parsed


# ----------------------------------------------------------------------------- the values


@pytest.mark.parametrize(
    "value",
    [
        TRACEPARENT[:-1],  # 54 characters
        TRACEPARENT + "0",  # 56 characters, version 00
        TRACEPARENT.upper(),
        f"00-{TRACE_ID.upper()}-{PARENT_ID}-01",
        f"00-{'0' * 32}-{PARENT_ID}-01",
        f"00-{TRACE_ID}-{'0' * 16}-01",
        f"ff-{TRACE_ID}-{PARENT_ID}-01",
        f"00_{TRACE_ID}-{PARENT_ID}-01",
        f"00-{TRACE_ID}-{PARENT_ID}-0g",
        f"01-{TRACE_ID}-{PARENT_ID}-01x",  # a later version: a dash must follow
        "",
        None,
        55,
    ],
)
def test_invalid_traceparents_are_refused(value: Any) -> None:
    assert parse_traceparent(value) is None


def test_a_valid_traceparent_is_read_and_a_later_version_as_version_00() -> None:
    assert parse_traceparent(TRACEPARENT) == TraceParent(TRACE_ID, PARENT_ID, 1)
    assert parse_traceparent(f"00-{TRACE_ID}-{PARENT_ID}-00") == TraceParent(TRACE_ID, PARENT_ID, 0)
    later = parse_traceparent(f"cc-{TRACE_ID}-{PARENT_ID}-03-what-the-future-holds")
    assert later == TraceParent(TRACE_ID, PARENT_ID, 1)
    assert later.value == f"00-{TRACE_ID}-{PARENT_ID}-01"


def test_tracestate_grammar_and_limits() -> None:
    assert parse_tracestate(TRACESTATE) == TRACESTATE
    assert parse_tracestate(" congo=t61rcWkgMzE ,\t,rojo=x") == "congo=t61rcWkgMzE,rojo=x"
    assert parse_tracestate("") == ""
    assert parse_tracestate("tenant@system=v") == "tenant@system=v"
    # 32 members fit, 33 do not; 512 characters fit, 513 do not
    assert parse_tracestate(",".join(f"k{i}=v" for i in range(32))) is not None
    assert parse_tracestate(",".join(f"k{i}=v" for i in range(33))) is None
    assert len(STATE_512) == 512
    assert parse_tracestate(STATE_512) == STATE_512
    assert parse_tracestate(STATE_513) is None
    assert parse_tracestate("k=" + "v" * 256) is not None
    assert parse_tracestate("k=" + "v" * 257) is None  # a value is at most 256 characters
    for bad in ("Congo=1", "congo", "congo=", "congo=a,b", "a=1,a=2", "k=\x7f", "k=v=w", "@s=v"):
        assert parse_tracestate(bad) is None, bad
    assert parse_tracestate(5) is None


def test_request_trace_id_reads_params_meta() -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    assert request_trace_id({**request, "params": {"_meta": {"traceparent": TRACEPARENT}}}) == (
        TRACE_ID
    )
    assert request_trace_id({**request, "params": {"_meta": {"traceparent": "bad"}}}) is None
    assert request_trace_id({**request, "params": {"_meta": "x"}}) is None
    assert request_trace_id(request) is None
    assert request_trace_id("not a request") is None


def test_all_zero_random_bytes_still_give_valid_ids() -> None:
    trace = call_trace(None, lambda size: bytes(size))
    assert parse_traceparent(trace.traceparent) is not None


def test_call_trace_keeps_the_trace_makes_a_span_and_checks_the_tracestate() -> None:
    span_id = expected_ids(8)[0]
    trace = call_trace({"traceparent": TRACEPARENT, "tracestate": TRACESTATE}, CountingBytes())
    assert trace.traceparent == f"00-{TRACE_ID}-{span_id}-01"
    assert trace.parent == TraceParent(TRACE_ID, PARENT_ID, 1)
    assert trace.tracestate == TRACESTATE
    assert trace.problem is None
    dropped = call_trace({"traceparent": TRACEPARENT, "tracestate": "k=v " * 200}, CountingBytes())
    assert (dropped.trace_id, dropped.tracestate, dropped.problem) == (
        TRACE_ID,
        None,
        INVALID_TRACESTATE,
    )
    # W3C: no valid traceparent, so the tracestate is not read; a new trace starts
    alone = call_trace({"tracestate": TRACESTATE}, CountingBytes())
    assert (alone.tracestate, alone.problem, alone.announced) == (None, INVALID_TRACEPARENT, True)
    assert call_trace({"progressToken": 1}).announced is False


def test_traced_log_marks_the_lines_of_a_traced_call_only() -> None:
    inner = LogLines()
    log = TracedLog(inner)
    log.line("before")
    with traced(call_trace({"traceparent": TRACEPARENT})) as trace:
        assert current_trace() is trace
        log.line("one\ntwo")
        log.error("bad")
    with traced(call_trace(None)):
        log.line("untraced call")
    assert current_trace() is None
    suffix = f" (trace {TRACE_ID})"
    assert inner.lines == [
        "before",
        "one" + suffix,
        "two" + suffix,
        "bad" + suffix,
        "untraced call",
    ]


# ----------------------------------------------------------------------------- over MCP


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_a_callers_trace_is_kept_with_a_new_span_id(mode: str) -> None:
    span_id = expected_ids(16, 8, 8)[2]  # the first call starts a trace: 16 and 8 bytes
    with anyio.fail_after(10):
        async with traced_server() as (http, _, log), client(http.url, mode) as mcp:
            plain = await mcp.call_tool("list", {})
            log_before = list(log.lines)
            result = await mcp.call_tool(
                "list", {}, meta={"traceparent": TRACEPARENT, "tracestate": TRACESTATE}
            )
            assert not result.is_error
            assert structured_of(result) == structured_of(plain)
            assert traceparent_of(result) == TraceParent(TRACE_ID, span_id, 1)
            assert log.lines == log_before  # list writes no log line, and nothing was wrong


def structured_of(result: types.CallToolResult) -> Any:
    return result.structured_content


@pytest.mark.anyio
async def test_without_a_traceparent_a_new_trace_starts_for_each_call() -> None:
    trace_id, span_id, trace_id_2, span_id_2 = expected_ids(16, 8, 16, 8)
    with anyio.fail_after(10):
        async with traced_server() as (http, _, log), client(http.url) as mcp:
            first = await mcp.call_tool("list", {})
            second = await mcp.call_tool("receive", {"chat": "@4"})
            assert first.meta is not None
            assert first.meta["traceparent"] == f"00-{trace_id}-{span_id}-01"
            assert traceparent_of(second) == TraceParent(trace_id_2, span_id_2, 1)
            assert not any("trace" in line.lower() for line in log.lines)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("meta", "diagnostic"),
    [
        ({"traceparent": TRACEPARENT[:-1]}, INVALID_TRACEPARENT),
        ({"traceparent": TRACEPARENT.upper()}, INVALID_TRACEPARENT),
        ({"traceparent": f"00-{'0' * 32}-{PARENT_ID}-01"}, INVALID_TRACEPARENT),
        ({"traceparent": f"00-{TRACE_ID}-{'0' * 16}-01"}, INVALID_TRACEPARENT),
        ({"traceparent": f"ff-{TRACE_ID}-{PARENT_ID}-01"}, INVALID_TRACEPARENT),
        ({"traceparent": {"not": "text"}}, INVALID_TRACEPARENT),
        ({"traceparent": "\x1b[31m<script>\nforged line"}, INVALID_TRACEPARENT),
        ({"tracestate": TRACESTATE}, INVALID_TRACEPARENT),
        ({"traceparent": TRACEPARENT, "tracestate": STATE_513}, INVALID_TRACESTATE),
        (
            {"traceparent": TRACEPARENT, "tracestate": ",".join(f"k{i}=v" for i in range(33))},
            INVALID_TRACESTATE,
        ),
        ({"traceparent": TRACEPARENT, "tracestate": "Bad Key=\x1b[0m"}, INVALID_TRACESTATE),
    ],
)
async def test_invalid_trace_data_gives_one_fixed_line_and_the_call_is_answered(
    meta: dict[str, Any], diagnostic: str
) -> None:
    with anyio.fail_after(10):
        async with traced_server() as (http, _, log), client(http.url) as mcp:
            result = await mcp.call_tool("list", {}, meta=meta)
            assert not result.is_error
            assert result.structured_content is not None
            assert "chats" in result.structured_content
            parent = traceparent_of(result)
            if diagnostic == INVALID_TRACESTATE:
                assert parent.trace_id == TRACE_ID  # the traceparent was fine: it is kept
            else:
                assert parent.trace_id != TRACE_ID
            assert log.lines == [f"{diagnostic} (trace {parent.trace_id})"]
            for value in meta.values():
                assert all(str(value) not in line for line in log.lines)


@pytest.mark.anyio
async def test_tool_errors_carry_the_calls_traceparent() -> None:
    with anyio.fail_after(10):
        async with traced_server() as (http, _, _), client(http.url) as mcp:
            for name, arguments in (("receive", {"chat": ""}), ("list", {"extra": 1})):
                result = await mcp.call_tool(name, arguments, meta={"traceparent": TRACEPARENT})
                assert result.is_error
                assert traceparent_of(result).trace_id == TRACE_ID
            # no trace context: the error still names a (new) trace
            result = await mcp.call_tool("receive", {"chat": "@x"})
            assert result.is_error
            assert traceparent_of(result).trace_id != TRACE_ID


@pytest.mark.anyio
async def test_the_log_lines_of_a_traced_call_carry_its_trace_id_never_its_tracestate(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            server, owner = w.server, w.owner
            results: dict[str, types.CallToolResult] = {}
            async with anyio.create_task_group() as tg:

                async def connect() -> None:
                    results["connect"] = await server.call(
                        "connect",
                        {"target": "@directory.simplex", "wait": 30, "idle": 5},
                        meta={"traceparent": TRACEPARENT, "tracestate": SECRET_STATE},
                    )

                tg.start_soon(connect)
                line = await server.log.wait_line(lambda line: line.startswith("Action 1: "))
                assert line == (
                    f"Action 1: connect to bot SimpleX Directory, as itself (trace {TRACE_ID})"
                )
                await owner.wait_message(lambda t: "/'approve 1'" in t)
                await owner.say("/approve 1")
                await server.seen.until(
                    lambda: any(e["type"] == "contactConnected" for e in server.seen.events)
                )
                await w.clock.advance(5)
            result = results["connect"]
            assert structured(result)["status"] == "done"
            assert traceparent_of(result).trace_id == TRACE_ID
            assert not any("secret-value" in line for line in server.log.lines)
            # the owner's card is the plan's, with no trace in it
            assert not any(TRACE_ID in str(m) for m in owner.agent_messages())


def test_a_calls_trace_goes_on_in_the_requests_made_for_it() -> None:
    """What the ``call`` tool sends a bot: the call's span as the request's traceparent."""
    with traced(call_trace({"traceparent": TRACEPARENT, "tracestate": TRACESTATE})):
        trace = current_trace()
        assert trace is not None
        request = build_request(
            "tools/call",
            {"name": "availability"},
            request_id=1,
            traceparent=trace.traceparent,
            tracestate=trace.tracestate,
        )
    meta = request["params"]["_meta"]
    assert request_trace_id(request) == TRACE_ID
    assert meta["traceparent"] == trace.traceparent != TRACEPARENT
    assert meta["tracestate"] == TRACESTATE
