"""serve: the data folder at start, the second-server and port-in-use exits, the no-owner error,
the display name at a later start, the counter across restarts, the stop, and a new link when
no owner remains."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import anyio
import pytest
from mcp_sim import LogLines, join_link, result_text, structured, text_of_item, world

from simplex_protocols.core import ChatCore
from simplex_protocols.mcp_server.config import ServeOptions
from simplex_protocols.mcp_server.files import DataFolder
from simplex_protocols.mcp_server.http import bind_port
from simplex_protocols.mcp_server.serve import serve
from simplex_protocols.sim import SimNetwork


@pytest.mark.anyio
async def test_the_data_folder_and_its_files_at_start(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        async with world(tmp_path) as w:
            folder = tmp_path / "agent"
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700
            token = (folder / "token").read_text().strip()
            assert len(token) == 43
            assert w.server.info.token == token
            assert json.loads((folder / "headers.json").read_text()) == {
                "Authorization": f"Bearer {token}"
            }
            assert json.loads((folder / "server.json").read_text()) == {
                "name": "my-agent",
                "port": 0,
                "expireHours": 23,
            }
            assert (folder / "lock").read_text().strip() == str(os.getpid())
            for name in ("token", "headers.json", "server.json", "lock"):
                assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
        assert not (tmp_path / "agent" / "lock").exists()


@pytest.mark.anyio
async def test_a_second_server_on_the_folder_exits_1(tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    folder.mkdir()
    # The other server holds the OS lock on the file (a PID in the file alone blocks nothing).
    other = DataFolder(folder, pid=os.getppid())
    other.acquire_lock()
    try:
        log = LogLines()
        network = SimNetwork(seed=1)
        with anyio.fail_after(10):
            code = await serve(
                ServeOptions(name="my-agent", data=folder, port=0),
                core=ChatCore(network.backend("a")),
                log=log,
            )
        assert code == 1
        assert log.errors == [f"Another server uses {folder} (PID {os.getppid()})."]
        assert (folder / "lock").read_text() == f"{os.getppid()}\n"
    finally:
        other.release_lock()


@pytest.mark.anyio
async def test_a_port_in_use_exits_1_before_any_link_is_printed(tmp_path: Path) -> None:
    sock = bind_port(0)
    port = sock.getsockname()[1]
    log = LogLines()
    network = SimNetwork(seed=1)
    try:
        with anyio.fail_after(10):
            code = await serve(
                ServeOptions(name="my-agent", data=tmp_path / "agent", port=port),
                core=ChatCore(network.backend("a")),
                log=log,
            )
    finally:
        sock.close()
    assert code == 1
    assert log.errors == [f"Port {port} is in use. Start with --port N."]
    assert not any(line.startswith("https://") for line in log.lines)
    assert not (tmp_path / "agent" / "lock").exists()


@pytest.mark.anyio
async def test_actions_before_an_owner_joins_get_the_no_owner_error(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        async with world(tmp_path) as w:
            result = await w.server.call("connect", {"target": "@directory.simplex"})
            assert result.is_error
            assert (
                result_text(result)
                == "The agent has no owner. The person who runs it has to join its control chat with the link the server printed."
            )
            # a known target returns before the no-owner check; list works without an owner
            assert structured(await w.server.call("list"))["actions"] == []
            assert not any(line.startswith("Action ") for line in w.server.log.lines)


@pytest.mark.anyio
async def test_a_send_whose_card_is_too_long_is_refused(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            async with anyio.create_task_group() as tg:
                result: dict[str, object] = {}

                async def connect() -> None:
                    result.update(
                        structured(
                            await w.server.call("connect", {"target": w.vendor_link, "idle": 1})
                        )
                    )

                tg.start_soon(connect)
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                await w.owner.say("/approve 1")
                await w.server.seen.until(
                    lambda: any(e["type"] == "userJoinedGroup" for e in w.server.seen.events)
                )
                await w.clock.advance(1)
            chat = str(result["chat"])
            refused = await w.server.call("send", {"chat": chat, "text": "€" * 5000})
            assert result_text(refused) == "text: too long for its approval card; shorten it."
            assert structured(await w.server.call("list"))["actions"] == []


@pytest.mark.anyio
async def test_stop_cancels_pending_cards_and_a_restart_continues_the_counter(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            async with anyio.create_task_group() as tg:

                async def connect() -> None:
                    await w.server.call("connect", {"target": "@directory.simplex"})

                tg.start_soon(connect)
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                tg.cancel_scope.cancel()
            old = w.server
            await w.restart(display_name="Trail Agent")
            assert old.log.lines[-2:] == ["Cancelled 1 action.", "Stopped."]
            assert old.exit_code == [0]
            await w.owner.wait_message(
                lambda t: (
                    t.endswith("\nCancelled: the server stopped.")
                    and t.startswith("I want to connect to bot SimpleX Directory")
                )
            )
            # the profile and the control chat take the new display name; no new control chat
            new = w.server
            assert 'Agent control chat "Trail Agent" created.' not in new.log.lines
            assert new.log.lines[-2:] == [
                "  simplex-mcp register my-agent",
                f"Listening on {new.info.url}",
            ]
            assert new.info.display == "Trail Agent"
            user = await new.info.agent.api.core.command("/user")
            assert (
                user["user"]["profile"]["displayName"],
                user["user"]["profile"]["peerType"],
            ) == ("Trail Agent", "agent")
            info = await w.owner.cmd(f"/_get chat {w.owner.control} count=0")
            assert (
                info["chat"]["chatInfo"]["groupInfo"]["groupProfile"]["displayName"]
                == "Trail Agent"
            )
            # the old number is refused; the same call creates action 2
            await w.owner.say("/approve 1")
            await w.owner.wait_message(lambda t: t == "Action 1 is not pending.")
            async with anyio.create_task_group() as tg:

                async def again() -> None:
                    await w.server.call("connect", {"target": "@directory.simplex"})

                tg.start_soon(again)
                card = await w.owner.wait_message(lambda t: "/'approve 2'" in t)
                assert text_of_item(card).startswith("I want to connect to bot SimpleX Directory")
                tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_a_new_link_when_no_owner_remains(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            first = join_link(w.server.log)
            await w.owner.cmd(f"/_leave {w.owner.control}")
            await w.server.log.wait_line(
                lambda line: line == "No owners in the agent control chat."
            )
            index = w.server.log.lines.index("No owners in the agent control chat.")
            await w.server.log.wait_line(lambda line: line.startswith("https://") and line != first)
            assert (
                w.server.log.lines[index + 1]
                == "Join the agent control chat in the SimpleX app. The link works once:"
            )
            result = await w.server.call("send", {"chat": "@1", "text": "x"})
            assert result.is_error


@pytest.mark.anyio
async def test_open_calls_fail_when_the_server_stops(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            failed: list[BaseException] = []
            ended = anyio.Event()
            server = w.server

            async def connect() -> None:
                try:
                    await server.call("connect", {"target": "@directory.simplex"})
                except Exception as exc:
                    failed.append(exc)
                ended.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(connect)
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                assert server.info.agent.book.get(1) is not None
                http_stop = server.stop
                http_stop.set()
                await ended.wait()
            assert failed, "the open call ended without an error"
            await server.log.wait_line(lambda line: line == "Stopped.")
            assert "Cancelled 1 action." in server.log.lines
