"""The stop, a crash and restarts (plan "Processing: Start and shutdown", "Outcomes", the "restart",
"crash" and "new token" rows of "Other scenarios", and the e2e rows "restart" and "host mode").

The stop: new actions refused with "The server is stopping.", HTTP closed, pending cards edited
to the cancelled form, performing ones to the interrupted form (in mode host, its card posted),
"Cancelled K actions.", the wait for the control chat's pending deliveries (at most 10 s), the
lock removed, "Stopped.". Time is a manual clock.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_fakes import scripted_api
from mcp_sim import Running, World, result_text, structured, text_of_item, world

from simplex_protocols.mcp_server.actions import ActionState
from simplex_protocols.mcp_server.agent import Agent, NoProgress, ToolError
from simplex_protocols.mcp_server.config import ApproveMode
from simplex_protocols.mcp_server.control import ControlChat

DIRECTORY_CARD = (
    "I want to connect to bot SimpleX Directory (@directory.simplex), as myself.\n"
    "`Find groups, channels, businesses and bots.`\n"
    "`Welcome to the directory! Send a search.`"
)


def start_call(
    tg: anyio.abc.TaskGroup, server: Running, tool: str, arguments: dict[str, Any]
) -> None:
    """A call whose end the test does not wait for (the stop ends it)."""

    async def run() -> None:
        try:
            await server.call(tool, arguments)
        except Exception:  # the stop closes the HTTP connection
            return

    tg.start_soon(run)


async def performing(server: Running, n: int) -> None:
    """Wait until action N performs and waits for its connection."""
    await server.log.wait_line(lambda line: line.startswith(f"Action {n}: "))
    agent = server.info.agent
    while True:
        action = agent.book.get(n)
        if (
            action is not None
            and action.state is ActionState.PERFORMING
            and action.deadline is not None
        ):
            return
        if action is None:
            raise AssertionError(f"action {n} is not in memory")
        await action.changed.wait()


class PollSleeps:
    """The agent's clock, counting the short sleeps between two delivery polls of the stop."""

    def __init__(self, agent: Agent) -> None:
        self.inner = agent.clock
        self.count = 0
        self.changed = anyio.Event()
        agent.clock = self

    def now(self) -> float:
        return self.inner.now()

    def wall(self) -> float:
        return self.inner.wall()

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0.1:
            self.count += 1
            self.changed.set()
            self.changed = anyio.Event()
        await self.inner.sleep(seconds)

    async def at_least(self, count: int) -> None:
        """Wait until the poller has gone to sleep ``count`` times (it sleeps now)."""
        while self.count < count:
            await self.changed.wait()


@pytest.mark.anyio
async def test_stop_cancels_pending_cards_and_interrupts_performing_ones(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            server = w.server
            w.network.faults.offline("directory")
            async with anyio.create_task_group() as tg:
                start_call(tg, server, "connect", {"target": "@directory.simplex"})
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                await w.owner.say("/approve 1")
                await performing(server, 1)
                start_call(tg, server, "connect", {"target": w.vendor_link})
                await w.owner.wait_message(lambda t: "/'approve 2'" in t)
                lock = w.folder / "lock"  # type: ignore[operator]
                assert lock.exists()
                server.stop.set()
            await server.finished.wait()
            assert server.exit_code == [0]
            assert server.log.lines[-2:] == ["Cancelled 2 actions.", "Stopped."]
            assert not lock.exists()
            await w.owner.wait_message(
                lambda t: (
                    t == DIRECTORY_CARD + "\nApproved by Alice; interrupted: the server stopped."
                )
            )
            await w.owner.wait_message(
                lambda t: (
                    t == "I want to connect to business Ridgeline, as myself.\n"
                    "Cancelled: the server stopped."
                )
            )
            # the cards lost their commands; no other message was posted
            texts = [text_of_item(m) for m in w.owner.agent_messages()]
            assert not any("/'approve" in t for t in texts)
            # the interrupted perform's end posts nothing and logs no outcome
            assert not any(line.startswith("Action 1 approved") for line in server.log.lines)


@pytest.mark.anyio
async def test_new_actions_are_refused_once_the_server_stops(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            agent = w.server.info.agent
            agent.stopping = True
            with pytest.raises(ToolError) as refused:
                await agent.connect({"target": "@directory.simplex"}, NoProgress())
            assert refused.value.message == "The server is stopping."
            assert len(agent.book) == 0
            # and an owner command starts nothing
            await agent.owner_command({"groupMemberId": 2}, "/pending")
            assert not any(
                t == "No pending actions." for t in map(text_of_item, w.owner.agent_messages())
            )


@pytest.mark.anyio
async def test_mode_host_a_performing_action_gets_the_host_interrupted_card(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path, approve=ApproveMode.HOST) as w:
            await w.setup_owner()
            server = w.server
            w.network.faults.offline("directory")
            async with anyio.create_task_group() as tg:
                start_call(tg, server, "connect", {"target": "@directory.simplex"})
                await performing(server, 1)
                assert not any("/'approve" in text_of_item(m) for m in w.owner.agent_messages())
                server.stop.set()
            await server.finished.wait()
            assert server.log.lines[-2:] == ["Cancelled 1 action.", "Stopped."]
            await w.owner.wait_message(
                lambda t: (
                    t
                    == DIRECTORY_CARD
                    + "\nPerformed without approval (mode host); interrupted: the server stopped."
                )
            )


@pytest.mark.anyio
async def test_the_stop_waits_for_the_control_chats_deliveries(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            server = w.server
            polls = PollSleeps(server.info.agent)
            async with anyio.create_task_group() as tg:
                start_call(tg, server, "connect", {"target": "@directory.simplex"})
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                # the agent is off the network: the cancelled card waits to be sent
                w.network.faults.offline("my-agent")
                server.stop.set()
                await server.log.wait_line(lambda line: line == "Cancelled 1 action.")
            await polls.at_least(1)
            await w.clock.advance(5)
            await polls.at_least(2)
            assert "Stopped." not in server.log.lines
            w.network.faults.offline("my-agent", False)
            await w.network.settle()
            await w.clock.advance(0.1)
            await server.finished.wait()
            assert server.log.lines[-1] == "Stopped."
            await w.owner.wait_message(lambda t: t.endswith("\nCancelled: the server stopped."))


@pytest.mark.anyio
async def test_the_wait_for_deliveries_ends_after_10_s(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            server = w.server
            polls = PollSleeps(server.info.agent)
            async with anyio.create_task_group() as tg:
                start_call(tg, server, "connect", {"target": "@directory.simplex"})
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                w.network.faults.offline("my-agent")
                server.stop.set()
                await server.log.wait_line(lambda line: line == "Cancelled 1 action.")
            await polls.at_least(1)
            await w.clock.advance(9.9)
            await polls.at_least(2)
            assert "Stopped." not in server.log.lines
            await w.clock.advance(0.1)
            await server.finished.wait()
            assert server.log.lines[-1] == "Stopped."
            assert server.exit_code == [0]


async def pending_connect(w: World, n: int) -> None:
    """The agent asks to connect to the directory; the card of action N is posted."""
    async with anyio.create_task_group() as tg:
        start_call(tg, w.server, "connect", {"target": "@directory.simplex"})
        await w.owner.wait_message(lambda t: f"/'approve {n}'" in t)
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_after_a_crash_cards_keep_their_commands_and_numbers_never_repeat(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            await pending_connect(w, 1)
            await w.server.crash()
            assert "Stopped." not in w.server.log.lines
            await w.restart()
            card = await w.owner.wait_message(lambda t: "/'approve 1'" in t)
            assert text_of_item(card) == DIRECTORY_CARD + "\n/'approve 1' or /'reject 1'"
            await w.owner.say("/approve 1")
            await w.owner.wait_message(lambda t: t == "Action 1 is not pending.")
            await w.owner.say("/reject 1")
            await w.owner.wait_message(
                lambda t: (
                    t == "Action 1 is not pending."
                    and len([m for m in w.owner.agent_messages() if text_of_item(m) == t]) == 2
                )
            )
            await pending_connect(w, 2)
            # a normal stop and another start: the counter goes on
            await w.restart()
            await w.owner.wait_message(
                lambda t: t == DIRECTORY_CARD + "\nCancelled: the server stopped."
            )
            await pending_connect(w, 3)
            text = text_of_item(await w.owner.wait_message(lambda t: "/'approve 1'" in t))
            assert text.endswith("/'approve 1' or /'reject 1'")  # the crashed run's card


@pytest.mark.anyio
async def test_new_token_old_calls_fail_and_a_reconnection_reads_headers_json(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            await w.setup_owner()
            headers_path = tmp_path / "agent" / "headers.json"
            old = json.loads(headers_path.read_text())["Authorization"]
            assert old == f"Bearer {w.server.info.token}"
            server = await w.restart(new_token=True)
            new = json.loads(headers_path.read_text())["Authorization"]
            assert new != old
            assert new == f"Bearer {server.info.token}"
            assert (tmp_path / "agent" / "token").read_text().strip() == server.info.token
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
            async with httpx.AsyncClient() as client:
                refused = await client.post(
                    server.info.url,
                    json=body,
                    headers={"Authorization": old, "Accept": "application/json, text/event-stream"},
                )
            assert refused.status_code == 401
            # a client that reads headers.json at its connection, as headersHelper does
            headers = json.loads(headers_path.read_text())
            hc = create_mcp_http_client(headers=headers)
            async with hc, Client(streamable_http_client(server.info.url, http_client=hc)) as mcp:
                listing = await mcp.call_tool("list", {})
            assert structured(listing)["actions"] == []


@pytest.mark.anyio
async def test_a_restart_without_new_token_keeps_the_token(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path) as w:
            token = w.server.info.token
            server = await w.restart()
            assert server.info.token == token
            refused = await server.call("connect", {"target": "@directory.simplex"})
            assert result_text(refused).startswith("The agent has no owner.")


@pytest.mark.anyio
async def test_mode_host_an_action_whose_counter_is_being_written_at_the_stop_is_not_performed(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path, approve=ApproveMode.HOST) as w:
            await w.setup_owner()
            server = w.server
            agent = server.info.agent
            writing = anyio.Event()
            release = anyio.Event()
            write = agent.custom._run

            async def held(command: str) -> Any:
                writing.set()
                await release.wait()
                return await write(command)

            agent.custom._run = held  # type: ignore[method-assign]
            async with anyio.create_task_group() as tg:
                start_call(tg, server, "connect", {"target": "@directory.simplex"})
                await writing.wait()
                server.stop.set()
                while not agent.stopping:
                    await anyio.lowlevel.checkpoint()
                release.set()
            await server.finished.wait()
            assert server.log.lines[-2:] == ["Cancelled 1 action.", "Stopped."]
            await w.owner.wait_message(
                lambda t: t == DIRECTORY_CARD + "\nCancelled: the server stopped."
            )
            # never performed: the directory has no contact from the agent
            assert not any(e["type"] == "contactConnected" for e in w.directory.events)
            assert not any("performed without approval" in line for line in server.log.lines)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("conns", "count", "expected"),
    [
        (["hex(agent_conn_id)", "AB12", "CD34"], ["count(*)", "2"], 2),  # the core: a header row
        (["AB12", "CD34"], ["2"], 2),
        (["hex(agent_conn_id)", "AB12"], ["count(*)", "0"], 0),
        ([], None, 0),  # no member connection: no second query
    ],
)
async def test_the_delivery_queries_of_the_plan_and_their_rows(
    conns: list[str], count: list[str] | None, expected: int
) -> None:
    sent: list[str] = []

    def command(cmd: str) -> dict[str, Any]:
        sent.append(cmd)
        return {"type": "sQLResult", "rows": conns if cmd.startswith("/sql chat ") else count}

    async with scripted_api(command) as (api, _):
        assert await ControlChat(api, 10, 1).pending_deliveries() == expected
    assert sent[0] == (
        "/sql chat SELECT hex(agent_conn_id) FROM connections WHERE group_member_id IN "
        "(SELECT group_member_id FROM group_members WHERE group_id = 10)"
    )
    if count is None:
        assert len(sent) == 1
    else:
        ids = ",".join(f"'{c}'" for c in conns if c != "hex(agent_conn_id)")
        assert sent[1] == (
            "/sql agent SELECT count(*) FROM snd_message_deliveries WHERE failed = 0 AND "
            f"hex(conn_id) IN ({ids})"
        )
