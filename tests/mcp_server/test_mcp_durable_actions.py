"""``serve --durable-actions``: actions survive a stop, a crash and a restart (docs/mcp_server.md,
"Beyond the plan").

The server ends as a crash would at each :class:`CrashPoint` of an action's way (a hook that
closes the journal, as the process's end would, and cancels the server with no stop sequence),
then starts again on the same data folder and the same simulated network. Each test checks the
card the owner sees, ``list``, what reached the peer (once or never, never twice) and the
journal's rows. Time is a manual clock.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_sim import (
    Owner,
    Running,
    World,
    structured,
    text_of_item,
    world,
)

from simplex_protocols.mcp_server.actions import (
    OUTCOME_UNKNOWN,
    START_TRANSITIONS,
    ActionBook,
    ActionEvent,
    ActionState,
    ActionTool,
    InvalidTransitionError,
)
from simplex_protocols.mcp_server.approvals import CrashPoint
from simplex_protocols.mcp_server.cards import Card
from simplex_protocols.mcp_server.cli import COMMAND_HELP, parse_args
from simplex_protocols.mcp_server.config import ApproveMode, ServeOptions, UsageError
from simplex_protocols.mcp_server.journal import ActionJournal, JournalError, action_of, row_of
from simplex_protocols.mcp_server.tools import instructions
from simplex_protocols.sim import SimNetwork

TEXT = "trail running shoes"
UNKNOWN_TAIL = (
    "outcome unknown: the server stopped while performing it, and never performs it again."
)


async def restart(w: World, *, approve: ApproveMode = ApproveMode.REQUESTS) -> Running:
    """Stop the agent's server (its stop sequence runs, unless it crashed) and start it with
    ``--durable-actions`` on the same data."""
    return await w.restart(approve=approve, durable_actions=True)


@asynccontextmanager
async def durable_world(
    tmp_path: Path, *, approve: ApproveMode = ApproveMode.REQUESTS
) -> AsyncIterator[World]:
    """The e2e world with the agent's server started with ``--durable-actions`` and Alice as
    its owner."""
    async with world(tmp_path, approve=approve, durable_actions=True) as w:
        await w.setup_owner()
        yield w


async def stopped(w: World) -> Running:
    """Stop the agent's server (its stop sequence runs); the stopped server."""
    server = w.server
    server.stop.set()
    await server.finished.wait()
    return server


def crash_at(server: Running, point: CrashPoint) -> None:
    """End ``server`` as a crash would when its next action reaches ``point``."""
    agent = server.info.agent

    def hook(reached: CrashPoint) -> None:
        if reached is point:
            journal = agent.state.journal
            assert journal is not None
            journal.close()  # the process is gone: nothing more reaches the disk
            server.crash_scope.cancel()
            # nothing after this point runs: the server unwinds as at Running.crash()
            raise anyio.get_cancelled_exc_class()(f"crash: {point.value}")

    agent.approvals.crash_point = hook


def journal_rows(w: World) -> list[tuple[Any, ...]]:
    """The journal's action rows, read as another program would: (n, tool, state, outcome, shown)."""
    assert w.folder is not None
    with sqlite3.connect(w.folder / "actions.db") as conn:
        return conn.execute(
            "SELECT n, tool, state, outcome, shown FROM actions ORDER BY n"
        ).fetchall()


def journal_cards(w: World) -> list[int | None]:
    """The card item IDs of the journal's action rows."""
    assert w.folder is not None
    with sqlite3.connect(w.folder / "actions.db") as conn:
        return [row[0] for row in conn.execute("SELECT card FROM actions ORDER BY n")]


def start_call(
    tg: anyio.abc.TaskGroup,
    server: Running,
    tool: str,
    arguments: dict[str, Any],
    results: list[Any] | None = None,
) -> None:
    """A call whose end the test does not wait for (a crash or the stop may end it)."""

    async def run() -> None:
        try:
            result = await server.call(tool, arguments)
        except Exception:
            return
        if results is not None:
            results.append(result)

    tg.start_soon(run)


async def connected_directory(w: World) -> str:
    """Action 1: the agent connects to the directory bot; its chat."""
    server = w.server
    results: list[Any] = []
    async with anyio.create_task_group() as tg:
        start_call(
            tg,
            server,
            "connect",
            {"target": "@directory.simplex", "wait": 30, "idle": 5},
            results,
        )
        await w.owner.wait_message(lambda t: "/'approve 1'" in t)
        await w.owner.say("/approve 1")
        await server.seen.until(
            lambda: any(e["type"] == "contactConnected" for e in server.seen.events)
        )
        await w.clock.advance(5)
    chat: str = structured(results[0])["chat"]
    return chat


def delivered(w: World, text: str = TEXT) -> int:
    """How many times the directory bot received ``text``."""
    return sum(1 for _, item in w.directory.new_items("direct") if text_of_item(item) == text)


def cards(w: World, marker: str) -> list[str]:
    """The latest texts of the agent's messages that contain ``marker``."""
    return [text_of_item(m) for m in w.owner.agent_messages() if marker in text_of_item(m)]


async def list_actions(server: Running) -> list[dict[str, Any]]:
    actions: list[dict[str, Any]] = structured(await server.call("list", {}))["actions"]
    return actions


def send_card(chat: str, n: int) -> str:
    return (
        "I want to send a message to bot SimpleX Directory (@directory.simplex):\n"
        f"`{TEXT}`\n"
        f"/'approve {chat} {n}', /'approve {chat} all' or /'reject {chat} {n}'"
    )


async def pending_send(w: World, chat: str) -> None:
    """Action 2: the agent asks to send TEXT to the directory; its card is posted."""
    async with anyio.create_task_group() as tg:
        start_call(tg, w.server, "send", {"chat": chat, "text": TEXT})
        await w.owner.wait_message(lambda t: f"/'approve {chat} 2'" in t)
        await w.server.log.wait_line(lambda line: line.startswith("Action 2: send"))
        tg.cancel_scope.cancel()


async def send_result(w: World, chat: str) -> dict[str, Any]:
    """The agent's repeated call of action 2 (the same action fields), its wait moved on by the
    clock until it returns."""
    results: list[Any] = []
    async with anyio.create_task_group() as tg:
        start_call(
            tg, w.server, "send", {"chat": chat, "text": TEXT, "wait": 30, "idle": 5}, results
        )
        await advance_until(w, results)
    return structured(results[0])


async def advance_until(w: World, results: list[Any]) -> None:
    """Move the clock on until a call started with :func:`start_call` returned."""
    while not results:
        await w.clock.advance(5)
        # the result comes over HTTP, which no event of the test's own signals
        await anyio.sleep(0.01)


# ----------------------------------------------------------------------------- the option


def test_the_option_is_off_by_default_and_shows_in_serve_help() -> None:
    plain = parse_args(["serve", "my-agent"])
    durable = parse_args(["serve", "my-agent", "--durable-actions"])
    assert isinstance(plain, ServeOptions) and not plain.durable_actions
    assert isinstance(durable, ServeOptions) and durable.durable_actions
    assert re.search(r"^  --durable-actions\b", COMMAND_HELP["serve"], re.MULTILINE)
    with pytest.raises(UsageError, match=r"^--durable-actions takes no value$"):
        parse_args(["serve", "my-agent", "--durable-actions=yes"])


def test_the_instructions_say_what_a_restart_does() -> None:
    assert "A server restart cancels actions; a repeated call after it creates a new one." in (
        instructions("My Agent")
    )
    kept = instructions("My Agent", durable_actions=True)
    assert (
        "A server restart keeps actions; a repeated call after it attaches to the same action."
        in (kept)
    )
    assert "cancels actions" not in kept


def test_the_journal_is_private_and_never_followed_through_a_link(tmp_path: Path) -> None:
    path = tmp_path / "actions.db"
    journal = ActionJournal(path)
    assert os.stat(path).st_mode & 0o777 == 0o600
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    journal.close()
    os.chmod(path, 0o644)
    ActionJournal(path).close()
    assert os.stat(path).st_mode & 0o777 == 0o600
    target = tmp_path / "elsewhere.db"
    link = tmp_path / "linked.db"
    link.symlink_to(target)
    with pytest.raises(JournalError, match="symbolic link"):
        ActionJournal(link)
    assert not target.exists()
    (tmp_path / "folder.db").mkdir()
    with pytest.raises(JournalError):
        ActionJournal(tmp_path / "folder.db")


def test_a_closed_journal_writes_nothing(tmp_path: Path) -> None:
    journal = ActionJournal(tmp_path / "actions.db")
    journal.set_meta(control_item=5)
    journal.close()
    journal.set_meta(control_item=9)  # after the end of the process: nothing
    reopened = ActionJournal(tmp_path / "actions.db")
    assert reopened.meta("control_item") == 5
    reopened.close()


@pytest.mark.parametrize("state", list(ActionState))
@pytest.mark.parametrize("event", list(ActionEvent))
def test_each_state_and_event_at_a_start(state: ActionState, event: ActionEvent) -> None:
    action = ActionBook().create(
        1, ActionTool.SEND, {"chat": "@4", "text": "x"}, now=0, expire_s=60
    )
    action.state = state
    nxt = START_TRANSITIONS.get((state, event))
    if nxt is None:
        with pytest.raises(InvalidTransitionError):
            action.resume(event)
        assert action.state is state
    else:
        assert action.resume(event) is nxt
        assert action.settled.is_set()


def test_only_a_performing_action_changes_at_a_start_and_it_shows_as_failed() -> None:
    assert dict(START_TRANSITIONS) == {
        (ActionState.PERFORMING, ActionEvent.RESTARTED): ActionState.UNKNOWN
    }
    assert ActionState.UNKNOWN.decided
    assert ActionState.UNKNOWN.reported == "failed"
    assert [s.reported for s in ActionState if s is not ActionState.UNKNOWN] == [
        s.value for s in ActionState if s is not ActionState.UNKNOWN
    ]


def test_a_journal_row_gives_back_the_action(tmp_path: Path) -> None:
    book = ActionBook()
    action = book.create(
        7,
        ActionTool.SEND,
        {"chat": "#9", "text": "hi", "mention": [3]},
        now=1000.0,
        expire_s=3600.0,
    )
    action.forms = send_card_of(7)
    action.pending_text = "send to group `x`"
    action.card = 41
    journal = ActionJournal(tmp_path / "actions.db")
    journal.save(row_of(action))
    journal.close()
    (row,) = ActionJournal(tmp_path / "actions.db").rows()
    back = action_of(row)
    assert (back.n, back.tool, back.input, back.key, back.state) == (
        7,
        ActionTool.SEND,
        action.input,
        action.key,
        ActionState.PENDING,
    )
    assert (back.created, back.expires, back.card, back.forms, back.pending_text) == (
        1000.0,
        4600.0,
        41,
        action.forms,
        action.pending_text,
    )


def send_card_of(n: int) -> Card:
    return Card(
        want="I want to send a message to group `x`:",
        done="I sent a message to group `x`:",
        body=("`hi`", "mentioning @a"),
        commands=f"/'approve #9 {n}', /'approve #9 all' or /'reject #9 {n}'",
        chat="#9",
    )


# ----------------------------------------------------------------------------- stop and start


@pytest.mark.anyio
async def test_a_stop_keeps_pending_actions_and_their_cards_work_after_the_restart(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with durable_world(tmp_path) as w:
            chat = await connected_directory(w)
            await pending_send(w, chat)
            await restart(w)
            assert w.server.log.lines.count("Restarted: 1 action kept from the last run.") == 1
            await w.owner.wait_message(lambda t: t == "Restarted: 1 action kept from the last run.")
            # the stop kept the card's commands
            assert cards(w, f"/'approve {chat} 2'") == [send_card(chat, 2)]
            assert [(a["action"], a["state"], a["open"]) for a in await list_actions(w.server)] == [
                (2, "pending", False)
            ]
            await w.owner.say(f"/approve {chat} 2")
            result = await send_result(w, chat)
            assert result["action"] == 2 and result["status"] == "done"
            assert [r["text"] for r in result["responses"]][:1] == [f"Found: {TEXT} 1"]
            assert delivered(w) == 1
            assert journal_rows(w) == []  # the result was returned: the action left memory


@pytest.mark.anyio
async def test_the_stop_logs_the_kept_actions_and_cancels_none(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with durable_world(tmp_path) as w:
            chat = await connected_directory(w)
            await pending_send(w, chat)
            server = await stopped(w)
            assert server.log.lines[-2:] == ["Kept 1 action.", "Stopped."]
            assert not any(line.startswith("Cancelled") for line in server.log.lines)
            assert journal_rows(w) == [(2, "send", "pending", None, 0)]
            await restart(w)


@pytest.mark.anyio
async def test_an_approval_sent_while_the_server_was_down_is_performed_once_at_the_start(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with durable_world(tmp_path) as w:
            chat = await connected_directory(w)
            await pending_send(w, chat)
            await w.server.crash()
            await w.owner.say(f"/approve {chat} 2")
            await w.network.settle()
            await restart(w)
            await w.owner.wait_message(
                lambda t: t.startswith("I sent a message") and t.endswith("Approved by Alice.")
            )
            result = await send_result(w, chat)
            assert result["action"] == 2 and result["status"] == "done"
            assert delivered(w) == 1
            # a second start takes the command as seen: nothing is performed again
            await restart(w)
            await w.network.settle()
            assert delivered(w) == 1
            assert not cards(w, "is not pending")


@pytest.mark.anyio
async def test_expiry_counts_across_the_downtime(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with durable_world(tmp_path) as w:
            chat = await connected_directory(w)
            await pending_send(w, chat)
            await stopped(w)
            await w.clock.advance(23.5 * 3600)  # past the expiry, within the edit window
            await restart(w)
            await w.owner.wait_message(lambda t: t.endswith(f"`{TEXT}`\nExpired."))
            assert "Action 2 expired." in w.server.log.lines
            # expired with no call open, it leaves memory at once, as in the plan: the same call
            # now creates a new action
            assert await list_actions(w.server) == []
            assert journal_rows(w) == []
            async with anyio.create_task_group() as tg:
                start_call(tg, w.server, "send", {"chat": chat, "text": TEXT})
                await w.owner.wait_message(lambda t: t == send_card(chat, 3))
                tg.cancel_scope.cancel()
            assert delivered(w) == 0


# ----------------------------------------------------------------------------- crashes


@pytest.mark.anyio
@pytest.mark.parametrize("point", [CrashPoint.JOURNALED, CrashPoint.CARD_POSTED])
async def test_a_crash_around_the_card_post_leaves_one_working_card(
    tmp_path: Path, point: CrashPoint
) -> None:
    with anyio.fail_after(60):
        async with durable_world(tmp_path) as w:
            chat = await connected_directory(w)
            crash_at(w.server, point)
            async with anyio.create_task_group() as tg:
                start_call(tg, w.server, "send", {"chat": chat, "text": TEXT})
                await w.server.finished.wait()
            assert journal_rows(w) == [(2, "send", "pending", None, 0)]
            assert journal_cards(w) == [None]  # the journal has no item ID for the card
            await w.network.settle()
            posted = cards(w, f"/'approve {chat} 2'")
            assert posted == ([send_card(chat, 2)] if point is CrashPoint.CARD_POSTED else [])
            await restart(w)
            # the card is posted once: at the start when the crash came before the post, or
            # found among the control chat's items when it came after
            await w.owner.wait_message(lambda t: t == send_card(chat, 2))
            await w.network.settle()
            assert cards(w, f"/'approve {chat} 2'") == [send_card(chat, 2)]
            assert journal_cards(w) != [None]  # the start journaled the card it found or posted
            await w.owner.say(f"/approve {chat} 2")
            result = await send_result(w, chat)
            assert result["status"] == "done"
            assert delivered(w) == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("point", "times"), [(CrashPoint.PERFORMING, 0), (CrashPoint.PERFORMED, 1)]
)
async def test_a_crash_during_the_perform_marks_the_outcome_unknown_and_never_replays(
    tmp_path: Path, point: CrashPoint, times: int
) -> None:
    with anyio.fail_after(60):
        async with durable_world(tmp_path) as w:
            chat = await connected_directory(w)
            await pending_send(w, chat)
            crash_at(w.server, point)
            await w.owner.say(f"/approve {chat} 2")
            await w.server.finished.wait()
            await w.network.settle()
            assert delivered(w) == times
            assert journal_rows(w) == [(2, "send", "performing", None, 0)]
            await restart(w)
            unknown = (
                "I want to send a message to bot SimpleX Directory (@directory.simplex):\n"
                f"`{TEXT}`\nApproved by Alice; {UNKNOWN_TAIL}"
            )
            await w.owner.wait_message(lambda t: t == unknown)
            assert journal_rows(w) == [(2, "send", "unknown", "outcome unknown", 1)]
            assert "Action 2: outcome unknown, not performed again." in w.server.log.lines
            assert await list_actions(w.server) == [
                {
                    "action": 2,
                    "tool": "send",
                    "input": {"chat": chat, "text": TEXT},
                    "state": "failed",
                    "open": False,
                    "error": OUTCOME_UNKNOWN,
                }
            ]
            await w.owner.say(f"/approve {chat} 2")
            await w.owner.wait_message(lambda t: t == "Action 2 is not pending.")
            # the agent's repeated call attaches to the action and gets its outcome
            result = structured(await w.server.call("send", {"chat": chat, "text": TEXT}))
            assert result == {"action": 2, "status": "failed", "error": OUTCOME_UNKNOWN}
            await w.network.settle()
            assert delivered(w) == times
            assert journal_rows(w) == []
            # another start: nothing left to perform
            await restart(w)
            await w.network.settle()
            assert delivered(w) == times


@pytest.mark.anyio
async def test_a_crash_before_the_outcome_edit_edits_the_card_at_the_start(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with durable_world(tmp_path) as w:
            chat = await connected_directory(w)
            await pending_send(w, chat)
            crash_at(w.server, CrashPoint.DECIDED)
            await w.owner.say(f"/approve {chat} 2")
            await w.server.finished.wait()
            assert journal_rows(w) == [(2, "send", "done", "done", 0)]
            assert cards(w, f"/'approve {chat} 2'") == [send_card(chat, 2)]
            await restart(w)
            done = (
                "I sent a message to bot SimpleX Directory (@directory.simplex):\n"
                f"`{TEXT}`\nApproved by Alice."
            )
            await w.owner.wait_message(lambda t: t == done)
            assert journal_rows(w) == [(2, "send", "done", "done", 1)]
            assert [(a["action"], a["state"]) for a in await list_actions(w.server)] == [
                (2, "done")
            ]
            result = await send_result(w, chat)
            assert result["action"] == 2 and result["status"] == "done"
            assert isinstance(result["item"], int)
            assert delivered(w) == 1


@pytest.mark.anyio
async def test_a_crash_after_a_rejection_edits_the_card_at_the_start(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with durable_world(tmp_path) as w:
            chat = await connected_directory(w)
            await pending_send(w, chat)
            crash_at(w.server, CrashPoint.DECIDED)
            await w.owner.say(f"/reject {chat} 2")
            await w.server.finished.wait()
            assert journal_rows(w) == [(2, "send", "rejected", "rejected", 0)]
            await restart(w)
            await w.owner.wait_message(lambda t: t.endswith(f"`{TEXT}`\nRejected by Alice."))
            result = structured(await w.server.call("send", {"chat": chat, "text": TEXT}))
            assert result == {"action": 2, "status": "rejected"}
            assert delivered(w) == 0


@pytest.mark.anyio
async def test_mode_host_a_crash_during_the_perform_posts_the_unknown_card(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with durable_world(tmp_path, approve=ApproveMode.HOST) as w:
            crash_at(w.server, CrashPoint.PERFORMING)
            async with anyio.create_task_group() as tg:
                start_call(tg, w.server, "connect", {"target": "@directory.simplex"})
                await w.server.finished.wait()
            assert journal_rows(w) == [(1, "connect", "performing", None, 0)]
            await restart(w, approve=ApproveMode.HOST)
            await w.owner.wait_message(
                lambda t: t.endswith(f"Performed without approval (mode host); {UNKNOWN_TAIL}")
            )
            assert journal_rows(w) == [(1, "connect", "unknown", "host, outcome unknown", 1)]
            actions = await list_actions(w.server)
            assert [(a["action"], a["state"], a["error"]) for a in actions] == [
                (1, "failed", OUTCOME_UNKNOWN)
            ]
            # the connect never reached the directory
            await w.network.settle()
            assert not w.directory.new_items("direct")


@pytest.mark.anyio
async def test_a_performing_action_at_the_stop_is_interrupted_and_not_performed_again(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with durable_world(tmp_path) as w:
            w.network.faults.offline("directory")
            async with anyio.create_task_group() as tg:
                start_call(tg, w.server, "connect", {"target": "@directory.simplex"})
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                await w.owner.say("/approve 1")
                await w.server.log.wait_line(lambda line: line.startswith("Action 1: "))
                action = w.server.info.agent.book.get(1)
                assert action is not None
                while action.state is not ActionState.PERFORMING or action.deadline is None:
                    await action.changed.wait()
                w.server.stop.set()
                await w.server.finished.wait()
            assert w.server.log.lines[-3:] == [
                "Cancelled 1 action.",
                "Kept 1 action.",
                "Stopped.",
            ]
            await w.owner.wait_message(
                lambda t: t.endswith("Approved by Alice; interrupted: the server stopped.")
            )
            assert journal_rows(w) == [(1, "connect", "unknown", "interrupted", 1)]
            w.network.faults.offline("directory", False)
            await restart(w)
            result = structured(await w.server.call("connect", {"target": "@directory.simplex"}))
            assert result == {"action": 1, "status": "failed", "error": OUTCOME_UNKNOWN}
            assert journal_rows(w) == []


@pytest.mark.anyio
async def test_without_the_option_a_stop_cancels_as_the_plan_says(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with world(tmp_path) as w:
            await w.setup_owner()
            async with anyio.create_task_group() as tg:
                start_call(tg, w.server, "connect", {"target": "@directory.simplex"})
                await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                tg.cancel_scope.cancel()
            await w.restart()
            await w.owner.wait_message(lambda t: t.endswith("\nCancelled: the server stopped."))
            assert w.folder is not None and not (w.folder / "actions.db").exists()
            assert await list_actions(w.server) == []
            assert not any(line.startswith("Restarted:") for line in w.server.log.lines)


# ----------------------------------------------------------------------------- kill -9


@pytest.mark.slow
@pytest.mark.anyio
async def test_kill_9_keeps_the_pending_action_and_an_approval_made_meanwhile_performs_it(
    tmp_path: Path,
) -> None:
    """``simplex-mcp serve --durable-actions`` as a process against ``simplex-sim``'s WebSocket
    server: SIGKILL with a pending connect, the owner approves while no server runs, and the
    next start performs it once."""
    from test_mcp_signals import SERVE, Output, free_port

    from simplex_protocols.sim import SimServer

    network = SimNetwork(seed=5)
    alice = network.add_user("alice", display_name="Alice", peer_type="human")
    directory = network.add_user("directory", display_name="SimpleX Directory", peer_type="bot")
    directory.create_address()
    network.register_name("@directory.simplex", directory, "contact")
    port = free_port()
    folder = tmp_path / "agent"
    with anyio.fail_after(90), (tmp_path / "stderr.txt").open("wb") as errors:
        async with SimServer(network) as sim, anyio.create_task_group() as tg:
            owner = Owner(network, alice)
            stack = AsyncExitStack()
            await owner.start(stack, tg)

            async def start() -> tuple[anyio.abc.Process, Output]:
                process = await anyio.open_process(
                    [
                        sys.executable,
                        "-c",
                        SERVE,
                        "serve",
                        "my-agent",
                        "--data",
                        str(folder),
                        "--core",
                        sim.url("my-agent"),
                        "--port",
                        str(port),
                        "--display-name",
                        "My Agent",
                        "--durable-actions",
                    ],
                    env={**os.environ, "PYTHONUNBUFFERED": "1"},
                    stderr=errors,
                )
                out = Output(process)
                tg.start_soon(out.pump)
                await out.wait_line(
                    lambda line: line == f"Listening on http://127.0.0.1:{port}/mcp"
                )
                return process, out

            process, out = await start()
            link = await out.wait_line(lambda line: line.startswith("https://"))
            await owner.join(link)
            await out.wait_line(
                lambda line: line.endswith("and is now an owner. The link is deleted.")
            )

            url = f"http://127.0.0.1:{port}/mcp"

            async def connect() -> None:
                headers = json.loads((folder / "headers.json").read_text())
                hc = create_mcp_http_client(headers=headers)
                try:
                    async with hc, Client(streamable_http_client(url, http_client=hc)) as mcp:
                        await mcp.call_tool("connect", {"target": "@directory.simplex"})
                except Exception:  # the process is killed under the call
                    return

            tg.start_soon(connect)
            await owner.wait_message(lambda t: "/'approve 1'" in t)
            process.kill()
            await process.wait()
            assert process.returncode == -signal.SIGKILL
            await owner.say("/approve 1")
            await network.settle()

            process, out = await start()
            await out.wait_line(lambda line: line == "Restarted: 1 action kept from the last run.")
            await owner.wait_message(
                lambda t: (
                    t.startswith("I ") and "SimpleX Directory" in t and "Approved by Alice." in t
                )
            )
            await out.wait_line(lambda line: line.startswith("Action 1 approved by Alice: "))
            process.send_signal(signal.SIGINT)
            assert await process.wait() == 0
            tg.cancel_scope.cancel()
            await stack.aclose()
    # one connection request reached the directory: the action was performed once
    contacts = directory.command(f"/_get chats {directory.user_id} pcc=on")
    agents = [
        c
        for c in contacts["chats"]
        if c["chatInfo"]["type"] == "direct"
        and c["chatInfo"]["contact"]["profile"]["displayName"] == "My Agent"
    ]
    assert len(agents) == 1
