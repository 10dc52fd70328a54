"""simplex-bridge: any MCP server on SimpleX, over the simulated network.

The upstream servers are real: the SDK stdio server of tests/examples/stdio_server.py, the
npm package @modelcontextprotocol/server-everything (pinned in .ci/run, found through
SIMPLEX_TEST_MCP_EVERYTHING; skipped without it), and a FastMCP server over Streamable HTTP
on 127.0.0.1. Callers are simulated users calling over Service RPC and in conversations.
"""

from __future__ import annotations

import functools
import io
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_kit import free_port, over_http
from fastmcp import Context, FastMCP
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from simplex_protocols._clock import ManualClock
from simplex_protocols.bindings.mcp import build_request, is_final
from simplex_protocols.cli.bridge import (
    Backoff,
    Bridge,
    HTTPServer,
    StdioServer,
    open_bridge,
    run,
)
from simplex_protocols.core import ChatAPI, ChatCore, ContactRef
from simplex_protocols.errors import ServiceError
from simplex_protocols.sim import SimNetwork
from simplex_protocols.transports import ChatCaller, ServiceRPCRequester

ROOT = Path(__file__).resolve().parents[2]
STDIO_SERVER = ROOT / "tests" / "examples" / "stdio_server.py"
EVERYTHING = os.environ.get("SIMPLEX_TEST_MCP_EVERYTHING", "")
needs_everything = pytest.mark.skipif(
    not (EVERYTHING and Path(EVERYTHING).is_file()),
    reason="SIMPLEX_TEST_MCP_EVERYTHING does not name the entry script of "
    "@modelcontextprotocol/server-everything (.ci/run installs it with npm)",
)

#: Every wait is bounded by this many real seconds (a child process starts).
WAIT_S = 30.0


class Caller:
    """A simulated user that calls the bridge over both transports."""

    def __init__(self, network: SimNetwork, stack: AsyncExitStack, name: str = "you") -> None:
        self.network = network
        self.stack = stack
        self.user = network.add_user(name)
        self.name = name
        self.contact: ContactRef | None = None
        self._ids = 0

    async def open(self) -> Caller:
        self.core = await self.stack.enter_async_context(ChatCore(self.network.backend(self.name)))
        return self

    def request(self, method: str, params: Mapping[str, Any] | None = None, **kw: Any) -> Any:
        self._ids += 1
        return build_request(method, params, request_id=self._ids, **kw)

    async def rpc(self, address: str, request: Mapping[str, Any]) -> Any:
        with anyio.fail_after(WAIT_S):
            requester = ServiceRPCRequester(self.core, user_id=self.user.user_id)
            return await requester.request(address, "mcp", dict(request))

    async def chat(self, address: str, request: Mapping[str, Any]) -> list[Any]:
        with anyio.fail_after(WAIT_S):
            if self.contact is None:
                async with self.core.events() as events:
                    await ChatAPI(self.core).connect(self.user.user_id, address)
                    async for event in events:
                        if event.get("type") == "contactConnected":
                            self.contact = ContactRef(int(event["contact"]["contactId"]))
                            break
            assert self.contact is not None
            answer = await ChatCaller(self.core).call(
                self.contact, "mcp", dict(request), final=functools.partial(is_final, request)
            )
            return [r.message for r in answer.replies]


@asynccontextmanager
async def bridged(
    tmp_path: Path, server: StdioServer | HTTPServer, **options: Any
) -> AsyncIterator[tuple[Bridge, Caller]]:
    """The bridge serving ``server`` on a fresh network, and a caller."""
    network = SimNetwork(seed=5)
    async with AsyncExitStack() as stack:
        # No deadline around these: a cancel scope may not end while the task groups the
        # bridge opens stay open. The SDK bounds a child's start itself.
        bridge = await stack.enter_async_context(
            open_bridge(server, data_dir=tmp_path / "bridge", **options)
        )
        await stack.enter_async_context(bridge.bot.serving(network.backend("bridge")))
        yield bridge, await Caller(network, stack).open()


def python_server() -> StdioServer:
    return StdioServer([sys.executable, str(STDIO_SERVER)])


def texts(result: Mapping[str, Any]) -> list[str]:
    return [c["text"] for c in result["content"] if c.get("type") == "text"]


async def all_tools(caller: Caller, address: str, transport: str) -> list[str]:
    """Every tool name, following nextCursor over ``transport``."""
    names: list[str] = []
    cursor: str | None = None
    while True:
        request = caller.request("tools/list", {"cursor": cursor} if cursor else None)
        if transport == "rpc":
            response = await caller.rpc(address, request)
        else:
            response = (await caller.chat(address, request))[-1]
        result = response["result"]
        names += [t["name"] for t in result["tools"]]
        cursor = result.get("nextCursor")
        if not cursor:
            return names


# ------------------------------------------------------------------------- command line


async def cli(*argv: str, network: SimNetwork | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with anyio.fail_after(WAIT_S):
        status = await run(
            list(argv), network=network, stdout=out, stderr=err, handle_signals=False
        )
    return status, out.getvalue(), err.getvalue()


@pytest.mark.anyio
async def test_help_documents_both_kinds_of_server() -> None:
    status, out, _ = await cli("--help")
    assert status == 0
    assert "-- COMMAND" in out and "--url URL" in out and "--header" in out
    assert "exit status:" in out and "130" in out


@pytest.mark.anyio
async def test_version() -> None:
    status, out, _ = await cli("--version")
    assert status == 0
    assert out.startswith("simplex-bridge 0.")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ((), "give the MCP server"),
        (("--url", "http://127.0.0.1:1/mcp", "--", "x"), "not both"),
        (("--header", "A: b", "--", "x"), "--header goes with --url"),
        (("--url", "ftp://h/mcp"), "http:// or https://"),
        (("--url", "http://h/mcp", "--header", "no colon"), "'Name: value'"),
        (("--core", "ws://127.0.0.1:9", "--demo", "--", "x"), "--demo needs --core sim:NAME"),
        (("--no-such-option", "--", "x"), "unrecognized arguments"),
    ],
)
async def test_bad_arguments_exit_64_without_a_traceback(argv: tuple[str, ...], words: str) -> None:
    status, out, err = await cli(*argv)
    assert status == 64
    assert words in err
    assert "(bad_arguments)" in err
    assert "Traceback" not in err and out == ""


@pytest.mark.anyio
async def test_the_server_args_after_the_separator_are_not_ours(tmp_path: Path) -> None:
    # --help after -- belongs to the server's command, so this is not the bridge's help:
    # the command cannot run, which is exit 69.
    status, out, err = await cli(
        "--core", "sim:b", "--data-dir", str(tmp_path), "--", str(tmp_path / "nothing"), "--help"
    )
    assert status == 69, err
    assert "usage:" not in out
    assert "(upstream_failed)" in err and "could not be started" in err
    assert "Traceback" not in err


@pytest.mark.anyio
async def test_an_unreachable_http_server_exits_69(tmp_path: Path) -> None:
    port = free_port()
    status, _, err = await cli(
        "--core", "sim:b", "--data-dir", str(tmp_path), "--url", f"http://127.0.0.1:{port}/mcp"
    )
    assert status == 69, err
    assert f"http://127.0.0.1:{port}/mcp" in err and "Traceback" not in err


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_demo_calls_a_stdio_server_over_both_transports(tmp_path: Path) -> None:
    status, out, err = await cli(
        "--core",
        "sim:notes",
        "--demo",
        "--data-dir",
        str(tmp_path / "n"),
        "--",
        sys.executable,
        str(STDIO_SERVER),
        network=SimNetwork(seed=2),
    )
    assert status == 0, err
    assert out.startswith("stdio-notes is at https://")
    assert '"name":"shout"' in out
    assert "Notes kept by a stdio server." in out


# ------------------------------------------------------------------------- a stdio server


@pytest.mark.slow
@pytest.mark.anyio
async def test_tools_resources_and_prompts_over_both_transports(tmp_path: Path) -> None:
    async with bridged(tmp_path, python_server()) as (bridge, you):
        address = bridge.bot.address
        assert bridge.bot.display_name == "stdio-notes"
        assert await all_tools(you, address, "rpc") == ["shout", "count"]
        assert await all_tools(you, address, "chat") == ["shout", "count"]
        shouted = await you.rpc(
            address, you.request("tools/call", {"name": "shout", "arguments": {"text": "hi"}})
        )
        assert texts(shouted["result"]) == ["HI!"]
        read = await you.rpc(address, you.request("resources/read", {"uri": "notes://today"}))
        assert read["result"]["contents"][0]["text"] == "Buy more anvils."
        prompt = (
            await you.chat(
                address,
                you.request("prompts/get", {"name": "summarize", "arguments": {"topic": "x"}}),
            )
        )[-1]
        assert "Summarize x in one line." in str(prompt["result"]["messages"])


@pytest.mark.slow
@pytest.mark.anyio
async def test_progress_passes_through_in_a_conversation(tmp_path: Path) -> None:
    async with bridged(tmp_path, python_server()) as (bridge, you):
        replies = await you.chat(
            bridge.bot.address,
            you.request(
                "tools/call", {"name": "count", "arguments": {"to": 3}}, progress_token="p1"
            ),
        )
        progress = [r for r in replies if r.get("method") == "notifications/progress"]
        assert [p["params"]["progress"] for p in progress] == [1, 2, 3]
        assert {p["params"]["progressToken"] for p in progress} == {"p1"}
        assert progress[-1]["params"]["message"] == "counted 3"
        assert texts(replies[-1]["result"]) == ["counted to 3"]


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_upstream_servers_errors_reach_the_caller(tmp_path: Path) -> None:
    async with bridged(tmp_path, python_server()) as (bridge, you):
        address = bridge.bot.address
        unknown = await you.rpc(address, you.request("prompts/get", {"name": "nope"}))
        # The JSON-RPC error the server itself gives, with its code and message.
        async with Client(
            StdioServerParameters(command=sys.executable, args=[str(STDIO_SERVER)]), cache=None
        ) as client:
            with pytest.raises(MCPError) as direct:
                await client.get_prompt("nope")
        assert unknown["error"]["code"] == direct.value.code
        assert unknown["error"]["message"] == direct.value.message
        bad = await you.rpc(
            address, you.request("tools/call", {"name": "count", "arguments": {"to": "x"}})
        )
        # The server's own answer to bad arguments, as it gave it.
        assert bad["result"]["isError"] is True


def child_pids(marker: str) -> list[int]:
    """The processes started by this one whose command line contains ``marker``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            # Another program's command line may hold any bytes, not only UTF-8.
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and marker in cmdline:
            pids.append(int(entry.name))
    return pids


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.requirement("RPC-ENV-6", "RPC-ERR-10")
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the child process in /proc")
async def test_a_child_that_exits_is_restarted_and_calls_meanwhile_may_be_repeated(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    backoff = Backoff(first_s=2, max_s=8)
    async with bridged(tmp_path, python_server(), clock=clock, backoff=backoff) as (bridge, you):
        address = bridge.bot.address
        upstream = bridge.upstream
        assert await all_tools(you, address, "chat") == ["shout", "count"]
        [pid] = child_pids(str(STDIO_SERVER))
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(WAIT_S):
            while upstream.connected:
                await upstream.wait_changed()
        assert child_pids(str(STDIO_SERVER)) == []

        # Over Service RPC: the envelope error internal with retryAfter (RPC-ENV-6).
        with pytest.raises(ServiceError) as caught:
            await you.rpc(address, you.request("tools/list"))
        assert caught.value.code == "internal"
        assert caught.value.retry_after == 2
        assert caught.value.retryable
        # In a conversation: JSON-RPC -32603 with data.retryAfter.
        [answer] = await you.chat(address, you.request("tools/list"))
        assert answer["error"]["code"] == -32603
        assert answer["error"]["data"] == {"retryAfter": 2}

        await clock.advance(2)
        with anyio.fail_after(WAIT_S):
            while not upstream.connected:
                await upstream.wait_changed()
        assert upstream.restarts == 1
        assert len(child_pids(str(STDIO_SERVER))) == 1
        assert await all_tools(you, address, "rpc") == ["shout", "count"]
    # Leaving the bridge stops the child.
    assert child_pids(str(STDIO_SERVER)) == []


def test_backoff_doubles_to_its_limit_and_starts_over_after_a_stable_session() -> None:
    backoff = Backoff(first_s=1, max_s=5, stable_s=30)
    assert [backoff.delay(None) for _ in range(5)] == [1, 2, 4, 5, 5]
    assert backoff.delay(29) == 5
    assert backoff.delay(30) == 1
    assert backoff.delay(0.5) == 2
    with pytest.raises(ValueError):
        Backoff(first_s=0)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the child process in /proc")
def test_ctrl_c_stops_the_bridge_and_the_server_with_one_line(tmp_path: Path) -> None:
    bridge = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simplex_protocols.cli.bridge",
            "--core",
            "sim:ctrlc",
            "--quiet",
            "--data-dir",
            str(tmp_path / "d"),
            "--",
            sys.executable,
            str(STDIO_SERVER),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert bridge.stdout is not None
        line = bridge.stdout.readline()
        assert " is at https://" in line
        server = [
            p for p in Path("/proc").iterdir() if p.name.isdigit() and _parent(p) == bridge.pid
        ]
        assert len(server) == 1
        bridge.send_signal(signal.SIGINT)
        _, err = bridge.communicate(timeout=WAIT_S)
    finally:
        if bridge.poll() is None:
            bridge.kill()
    assert bridge.returncode == 130, err
    ours = [ln for ln in err.splitlines() if ln.startswith("simplex-bridge:")]
    assert ours == ["simplex-bridge: interrupted, stopping"]
    assert "Traceback" not in err
    assert not server[0].exists() or _parent(server[0]) != bridge.pid


def _parent(proc: Path) -> int | None:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


# ------------------------------------------------------------------------- a server from npm


@pytest.mark.slow
@needs_everything
@pytest.mark.anyio
async def test_the_npm_everything_server_over_both_transports(tmp_path: Path) -> None:
    server = StdioServer(["node", EVERYTHING, "stdio"])
    async with bridged(tmp_path, server) as (bridge, you):
        address = bridge.bot.address
        assert bridge.bot.display_name == "Everything Reference Server"
        rpc_tools = await all_tools(you, address, "rpc")
        assert {"echo", "get-sum", "trigger-long-running-operation"} <= set(rpc_tools)
        assert await all_tools(you, address, "chat") == rpc_tools
        echo = await you.rpc(
            address, you.request("tools/call", {"name": "echo", "arguments": {"message": "hi"}})
        )
        assert "hi" in texts(echo["result"])[0]
        replies = await you.chat(
            address,
            you.request(
                "tools/call",
                {
                    "name": "trigger-long-running-operation",
                    "arguments": {"duration": 1, "steps": 3},
                },
                progress_token=7,
            ),
        )
        progress = [r for r in replies if r.get("method") == "notifications/progress"]
        assert [p["params"]["progress"] for p in progress] == [1, 2, 3]
        assert "result" in replies[-1]
        resources = await you.rpc(address, you.request("resources/list"))
        uri = resources["result"]["resources"][0]["uri"]
        read = await you.rpc(address, you.request("resources/read", {"uri": uri}))
        assert read["result"]["contents"][0]["uri"] == uri
        prompt = await you.rpc(address, you.request("prompts/get", {"name": "simple-prompt"}))
        assert prompt["result"]["messages"]
        missing = await you.rpc(
            address, you.request("tools/call", {"name": "no-such-tool", "arguments": {}})
        )
        assert "error" in missing or missing["result"].get("isError") is True


# ------------------------------------------------------------------------- an HTTP server


shop = FastMCP("http-shop", instructions="An HTTP shop.")


@shop.tool
def availability(item: str) -> str:
    """Items in stock."""
    return f"12 {item}s are in stock."


@shop.tool
async def pack(boxes: int, ctx: Context) -> str:
    """Pack boxes, one step each."""
    for n in range(1, boxes + 1):
        await ctx.report_progress(n, boxes)
    return f"packed {boxes}"


@shop.tool
def fail() -> str:
    """Always fails."""
    raise ValueError("the shop is closed")


@shop.resource("shop://hours")
def hours() -> str:
    """Opening hours."""
    return "9 to 5"


def fastmcp_over_http() -> Any:
    """The FastMCP server ``shop`` over Streamable HTTP on 127.0.0.1; its URL."""
    return over_http(shop, wait_s=WAIT_S)


@pytest.mark.anyio
async def test_a_fastmcp_server_over_http(tmp_path: Path) -> None:
    async with (
        fastmcp_over_http() as url,
        bridged(tmp_path, HTTPServer(url, {"X-Test": "1"}), display_name="Shop") as (bridge, you),
    ):
        address = bridge.bot.address
        assert await all_tools(you, address, "rpc") == ["availability", "pack", "fail"]
        assert await all_tools(you, address, "chat") == ["availability", "pack", "fail"]
        answer = await you.rpc(
            address,
            you.request("tools/call", {"name": "availability", "arguments": {"item": "anvil"}}),
        )
        assert texts(answer["result"]) == ["12 anvils are in stock."]
        replies = await you.chat(
            address,
            you.request(
                "tools/call", {"name": "pack", "arguments": {"boxes": 2}}, progress_token="t"
            ),
        )
        assert [r["params"]["progress"] for r in replies[:-1]] == [1, 2]
        assert texts(replies[-1]["result"]) == ["packed 2"]
        failed = await you.rpc(address, you.request("tools/call", {"name": "fail"}))
        assert failed["result"]["isError"] is True
        assert "the shop is closed" in texts(failed["result"])[0]
        read = await you.rpc(address, you.request("resources/read", {"uri": "shop://hours"}))
        assert read["result"]["contents"][0]["text"] == "9 to 5"
