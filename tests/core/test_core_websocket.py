"""WebSocketBackend against small `websockets` servers on 127.0.0.1 speaking the CLI framing."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from websockets.asyncio.server import ServerConnection, serve

from simplex_protocols.core import ChatCore, WebSocketBackend
from simplex_protocols.errors import CoreConnectionError, CoreError

pytestmark = pytest.mark.anyio

Handler = Callable[[ServerConnection], Awaitable[None]]

USER = {"type": "activeUser", "user": {"userId": 1, "localDisplayName": "bot", "futureField": [1]}}
NO_USER = {"type": "error", "errorType": {"type": "noActiveUser"}}


@asynccontextmanager
async def cli_server(handler: Handler) -> AsyncIterator[str]:
    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}"


def answer(cmd: str) -> dict[str, Any] | None:
    if cmd == "/user":
        return USER
    if cmd == "/fail":
        return {"type": "chatCmdError", "chatError": NO_USER}
    if cmd.startswith("/echo "):
        return {"type": "echo", "text": cmd[6:]}
    return None


async def cli_like(ws: ServerConnection) -> None:
    """Answers /user, /fail, /echo; /event sends an event (unknown type) before answering."""
    async for message in ws:
        frame = json.loads(message)
        cmd = frame["cmd"]
        if cmd == "/event":
            await ws.send(json.dumps({"resp": {"type": "brandNewEvent", "x": {"y": [1, 2]}}}))
            await ws.send(json.dumps({"corrId": frame["corrId"], "resp": {"type": "cmdOk"}}))
            continue
        resp = answer(cmd)
        if resp is not None:
            await ws.send(json.dumps({"corrId": frame["corrId"], "resp": resp}))


async def test_commands_responses_and_events_over_a_websocket() -> None:
    async with cli_server(cli_like) as url, ChatCore(WebSocketBackend(url)) as core:
        with anyio.fail_after(10):
            assert await core.command("/user") == USER
            async with core.events() as events:
                assert await core.command("/event") == {"type": "cmdOk"}
                assert await events.__anext__() == {"type": "brandNewEvent", "x": {"y": [1, 2]}}
            text = 'quotes " and \\ and ünïcode 🙂 and\nnewline'
            assert await core.command(f"/echo {text}") == {"type": "echo", "text": text}


async def test_many_concurrent_commands_over_a_websocket() -> None:
    results: dict[int, str] = {}
    async with cli_server(cli_like) as url, ChatCore(WebSocketBackend(url)) as core:

        async def run(i: int) -> None:
            results[i] = (await core.command(f"/echo {i}"))["text"]

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                for i in range(100):
                    tg.start_soon(run, i)
    assert results == {i: str(i) for i in range(100)}


async def test_chat_cmd_error_over_a_websocket_raises_core_error() -> None:
    async with cli_server(cli_like) as url, ChatCore(WebSocketBackend(url)) as core:
        with anyio.fail_after(10), pytest.raises(CoreError) as info:
            await core.command("/fail")
        assert info.value.error_type == "noActiveUser"
        assert info.value.chat_error == NO_USER
        with anyio.fail_after(10):
            assert await core.command("/user") == USER  # still usable


def dropping_server(abort: bool) -> tuple[Handler, anyio.Event]:
    """Answers /user; drops the connection once 5 other commands are waiting."""
    got_five = anyio.Event()
    connections = 0

    async def handler(ws: ServerConnection) -> None:
        nonlocal connections
        connections += 1
        first = connections == 1
        waiting = 0
        async for message in ws:
            frame = json.loads(message)
            resp = answer(frame["cmd"])
            if resp is not None:
                await ws.send(json.dumps({"corrId": frame["corrId"], "resp": resp}))
                continue
            waiting += 1
            if first and waiting == 5:
                got_five.set()
                if abort:
                    ws.transport.abort()
                else:
                    await ws.close(1011, "core restarting")
                return

    return handler, got_five


@pytest.mark.parametrize("abort", [False, True], ids=["close-frame", "tcp-abort"])
async def test_server_dropping_mid_flight_fails_every_command_then_reconnect_works(
    abort: bool,
) -> None:
    handler, got_five = dropping_server(abort)
    failures: list[BaseException] = []
    async with cli_server(handler) as url, ChatCore(WebSocketBackend(url)) as core:
        sub = core.events()

        async def run(i: int) -> None:
            try:
                await core.command(f"/_get chat @{i} count=10")
            except CoreConnectionError as exc:
                failures.append(exc)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                for i in range(1, 6):
                    tg.start_soon(run, i)
            assert got_five.is_set()
            assert len(failures) == 5
            with pytest.raises(CoreConnectionError):
                await sub.__anext__()
            assert not core.connected
            await core.reconnect()
            assert await core.command("/user") == USER


async def test_invalid_json_from_the_server_fails_the_connection_not_just_hangs() -> None:
    async def garbage(ws: ServerConnection) -> None:
        async for message in ws:
            frame = json.loads(message)
            if frame["cmd"] == "/user":
                await ws.send(json.dumps({"corrId": frame["corrId"], "resp": USER}))
            else:
                await ws.send("{this is not json")

    async with cli_server(garbage) as url, ChatCore(WebSocketBackend(url)) as core:
        sub = core.events()
        with anyio.fail_after(10):
            assert await core.command("/user") == USER
            with pytest.raises(CoreConnectionError, match="not valid JSON"):
                await core.command("/anything")
            with pytest.raises(CoreConnectionError):
                await sub.__anext__()
            await core.reconnect()
            assert await core.command("/user") == USER


async def test_a_json_array_frame_is_refused_like_invalid_json() -> None:
    async def arrays(ws: ServerConnection) -> None:
        async for _message in ws:
            await ws.send("[1, 2, 3]")

    async with cli_server(arrays) as url, ChatCore(WebSocketBackend(url)) as core:
        with anyio.fail_after(10), pytest.raises(CoreConnectionError, match="not a frame object"):
            await core.command("/user")


async def test_unreachable_core_is_a_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with anyio.fail_after(10), pytest.raises(CoreConnectionError, match="simplex-chat -p PORT"):
        async with ChatCore(WebSocketBackend(f"ws://127.0.0.1:{port}")):
            pass


async def test_http_server_refusing_the_handshake_is_a_connection_error() -> None:
    async def refuse(ws: ServerConnection) -> None:
        await ws.close()

    def reject(connection: ServerConnection, request: Any) -> Any:
        return connection.respond(404, "no websocket here\n")

    async with serve(refuse, "127.0.0.1", 0, process_request=reject) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        with anyio.fail_after(10), pytest.raises(CoreConnectionError, match="HTTP 404"):
            async with ChatCore(WebSocketBackend(f"ws://127.0.0.1:{port}")):
                pass


async def test_backend_used_directly_reports_not_connected() -> None:
    backend = WebSocketBackend("ws://127.0.0.1:5225")
    with pytest.raises(CoreConnectionError, match="not connected"):
        await backend.send_frame({"corrId": "1", "cmd": "/user"})
    with pytest.raises(CoreConnectionError, match="not connected"):
        await backend.receive_frame()
    await backend.aclose()
    await backend.aclose()
