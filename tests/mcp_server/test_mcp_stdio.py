"""``simplex-mcp serve NAME --stdio``: the server as the child process of an MCP host.

The server runs as ``python -m simplex_protocols.mcp_server serve NAME --stdio`` with
``--core ws://...`` against ``simplex-sim``'s WebSocket server in this process. One test is the
``mcp`` SDK's stdio client (the host); the other speaks JSON-RPC itself, to see every byte the
server writes on stdout.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import LATEST_PROTOCOL_VERSION

from simplex_protocols.mcp_server.cli import parse_args
from simplex_protocols.mcp_server.config import ServeOptions, UsageError
from simplex_protocols.sim import SimNetwork, SimServer


def serve_args(folder: Path, core: str) -> list[str]:
    return [
        "-m",
        "simplex_protocols.mcp_server",
        "serve",
        "my-agent",
        "--stdio",
        "--data",
        str(folder),
        "--core",
        core,
        "--display-name",
        "My Agent",
    ]


def child_env() -> dict[str, str]:
    # the child imports this checkout, as the test process does
    path = os.pathsep.join(p for p in sys.path if p)
    return {**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}


def test_stdio_option_parses_and_refuses_a_port() -> None:
    options = parse_args(["serve", "my-agent", "--stdio"], home=Path("/home/u"))
    assert isinstance(options, ServeOptions)
    assert options.stdio
    default = parse_args(["serve", "my-agent"], home=Path("/home/u"))
    assert isinstance(default, ServeOptions)
    assert not default.stdio
    with pytest.raises(UsageError) as caught:
        parse_args(["serve", "my-agent", "--stdio", "--port", "5300"], home=Path("/home/u"))
    assert caught.value.message == "--port: no HTTP port with --stdio"
    with pytest.raises(UsageError) as flag:
        parse_args(["serve", "my-agent", "--stdio=yes"], home=Path("/home/u"))
    assert flag.value.message == "--stdio takes no value"


# slow: runs a subprocess
@pytest.mark.slow
@pytest.mark.anyio
async def test_the_sdk_stdio_client_lists_tools_and_calls_list(tmp_path: Path) -> None:
    network = SimNetwork(seed=5)
    folder = tmp_path / "agent"
    errors_path = tmp_path / "stderr.txt"
    with anyio.fail_after(60), errors_path.open("w") as errors:
        async with SimServer(network) as sim:
            params = StdioServerParameters(
                command=sys.executable,
                args=serve_args(folder, sim.url("my-agent")),
                env=child_env(),
            )
            # the transport's errlog must be a real file: the child writes to it directly
            async with Client(stdio_client(params, errlog=errors)) as mcp:
                tools = await mcp.list_tools()
                listed = await mcp.call_tool("list", {})
                # the data folder's lock holds over stdio as over HTTP
                second = await anyio.run_process(
                    [sys.executable, *serve_args(folder, sim.url("my-agent"))],
                    env=child_env(),
                    check=False,
                )
    assert [tool.name for tool in tools.tools] == ["connect", "send", "receive", "list", "leave"]
    assert not listed.is_error
    assert listed.structured_content is not None
    # the simulated network's new user has the one contact the app creates
    assert [chat["name"] for chat in listed.structured_content["chats"]] == ["Ask SimpleX Team"]
    assert listed.structured_content["actions"] == []
    assert second.returncode == 1
    assert second.stdout == b""
    assert second.stderr.decode().startswith(f"Another server uses {folder} (PID ")
    log = errors_path.read_text()
    lines = log.splitlines()
    assert lines[0].startswith("SimpleX MCP server ")
    assert "Serving MCP on standard input and output." in lines
    # the owners' link and its QR code are on stderr, with the rest of the log
    assert any(line.startswith("https://") for line in lines)
    assert lines[-1] == "Stopped."
    # no token and no HTTP endpoint with --stdio
    assert not (folder / "token").exists()
    assert not (folder / "headers.json").exists()
    assert not (folder / "server.json").exists()


async def _read_message(stream: Any, buffer: bytearray) -> dict[str, Any]:
    while b"\n" not in buffer:
        buffer.extend(await stream.receive())
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    message: dict[str, Any] = json.loads(line)
    return message


@pytest.mark.slow
@pytest.mark.anyio
async def test_stdout_carries_only_json_rpc(tmp_path: Path) -> None:
    network = SimNetwork(seed=6)
    folder = tmp_path / "agent"
    errors_path = tmp_path / "stderr.txt"
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LATEST_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "test-host", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list"}},
    ]
    with anyio.fail_after(60), errors_path.open("wb") as errors:
        async with SimServer(network) as sim:
            process = await anyio.open_process(
                [sys.executable, *serve_args(folder, sim.url("my-agent"))],
                env=child_env(),
                stderr=errors,
            )
            assert process.stdin is not None
            assert process.stdout is not None
            buffer = bytearray()
            await process.stdin.send((json.dumps(requests[0]) + "\n").encode())
            initialized = await _read_message(process.stdout, buffer)
            for request in requests[1:]:
                await process.stdin.send((json.dumps(request) + "\n").encode())
            called = await _read_message(process.stdout, buffer)
            # the host ends the session by closing stdin: the server stops, exit 0
            await process.stdin.aclose()
            rest = b"".join([bytes(buffer), *[chunk async for chunk in process.stdout]])
            code = await process.wait()
    assert code == 0
    assert initialized["id"] == 1
    assert initialized["result"]["serverInfo"]["name"] == "simplex-my-agent"
    assert called["id"] == 2
    content = called["result"]["structuredContent"]
    assert [chat["name"] for chat in content["chats"]] == ["Ask SimpleX Team"]
    assert content["actions"] == []
    # nothing else was written on stdout: no log line, no QR code
    assert rest == b""
    log = errors_path.read_text()
    assert "Serving MCP on standard input and output." in log.splitlines()
    assert log.splitlines()[-1] == "Stopped."
