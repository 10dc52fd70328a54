"""Owner commands, /pending and /list replies, the custom data queue, and the QR code."""

from __future__ import annotations

import re
import shlex
from typing import Any

import anyio
import pytest
from mcp_fakes import scripted_api
from mcp_sim import core_formatted_lines

from simplex_protocols._wire import aeson_string_size
from simplex_protocols.core import ContactRef, GroupRef
from simplex_protocols.mcp_server.control import (
    COMMANDS_HELP,
    CustomDataQueue,
    ListEntry,
    OwnerCommand,
    cut_line,
    list_reply,
    owner_entries,
    parse_owner_command,
    pending_lines,
    utc_minutes,
)
from simplex_protocols.mcp_server.qr import qr_lines, qr_modules
from simplex_protocols.mcp_server.text import fold

WALL = 1_792_227_600.0  # 2026-10-17 09:00 UTC


def test_owner_commands() -> None:
    assert parse_owner_command("/approve 1") == OwnerCommand("approve", n="1")
    assert parse_owner_command("/approve @4 2") == OwnerCommand("approve", chat="@4", n="2")
    assert parse_owner_command("/'approve @4 2'") == OwnerCommand("approve", chat="@4", n="2")
    assert parse_owner_command("/approve #9 all") == OwnerCommand("approve", chat="#9", all=True)
    assert parse_owner_command("/reject 3") == OwnerCommand("reject", n="3")
    assert parse_owner_command("/reject #9 12") == OwnerCommand("reject", chat="#9", n="12")
    assert parse_owner_command("/revoke #9") == OwnerCommand("revoke", chat="#9")
    assert parse_owner_command("/pending") == OwnerCommand("pending")
    assert parse_owner_command("/list") == OwnerCommand("list")
    assert parse_owner_command("  /list ") == OwnerCommand("list")


def test_other_one_line_commands_are_unknown_and_get_the_help() -> None:
    for text in [
        "/help",
        "/",
        "/approve",
        "/approve x",
        "/reject @4 all",
        "/approve 4 5",
        "/revoke 4",
        "/list all",
        "/approve @x 1",
    ]:
        assert parse_owner_command(text) == OwnerCommand("unknown"), text
    assert (
        COMMANDS_HELP
        == "Commands: /approve, /reject, /revoke, /pending, /list. Each card shows its commands."
    )


def test_multi_line_and_non_command_text_is_ignored() -> None:
    for text in ["/approve 1\n/approve 2", "hello", "approve 1", " x /approve 1", "/approve 1\r"]:
        assert parse_owner_command(text) is None, text


def test_numbers_and_references_are_kept_as_typed() -> None:
    # a number from an earlier run, or one too large for an action, is answered "not pending"
    assert parse_owner_command("/approve 123456789012345678901234") == OwnerCommand(
        "approve", n="123456789012345678901234"
    )
    # a 20-digit chat reference is kept as typed and matches no chat of an action
    assert parse_owner_command("/approve #18446744073709551626 3") == OwnerCommand(
        "approve", chat="#18446744073709551626", n="3"
    )


def test_pending_lines() -> None:
    assert pending_lines([]) == "No pending actions."
    assert (
        pending_lines([(2, "send to bot SimpleX Directory", WALL + 24.25 * 3600)])
        == "2  send to bot SimpleX Directory  expires 18 October 2026 at 09:15 UTC"
    )
    assert utc_minutes(WALL) == "2026-10-17 09:00 UTC"


def test_list_reply_lines() -> None:
    entries = [
        ListEntry("@4", "bot", "SimpleX Directory", None, True),
        ListEntry("#9", "business", "Ridgeline", "Alice", True),
        ListEntry("@2", "contact", "Ask SimpleX Team", None, False),
    ]
    assert list_reply(entries) == (
        "@4  bot SimpleX Directory\n#9  business Ridgeline, approved for this chat by Alice\n@2  contact Ask SimpleX Team, not connected"
    )
    assert list_reply([]) == "No chats."


def test_list_of_many_chats_shows_100_with_cut_lines_and_the_older_count() -> None:
    long_name = "Überlange Gruppe " * 10
    entries = [
        ListEntry(f"#{n}", "group", long_name.strip(), "Alice" * 5, n % 2 == 0)
        for n in range(1, 103)
    ]
    lines = list_reply(entries).split("\n")
    assert len(lines) == 101
    assert lines[-1] == "2 older chats are not shown."
    for line in lines[:100]:
        assert aeson_string_size(line) <= 100
        assert line.endswith(("…", "…`"))
    assert list_reply(entries[:101]).split("\n")[-1] == "1 older chat is not shown."
    assert len(list_reply(entries[:101])) < 15_602


def test_a_cut_inside_a_name_keeps_its_code_span_closed() -> None:
    line = cut_line([("#1  group ", False), ("x\n/approve 1 " + "y" * 200, True)])
    assert aeson_string_size(line) <= 100
    assert re.fullmatch(r"#1  group `x /approve 1 y+…`", line)
    plain = cut_line([("#1  group ", False), ("Short", True), (", not connected", False)])
    assert plain == "#1  group Short, not connected"


@pytest.mark.anyio
async def test_custom_data_writes_run_one_at_a_time_in_the_order_asked() -> None:
    running: list[str] = []
    done: list[str] = []
    gate = anyio.Event()

    async def run(command: str) -> dict[str, Any]:
        running.append(command)
        assert len(running) - len(done) == 1  # one at a time
        if len(done) == 0:
            await gate.wait()
        done.append(command)
        return {"type": "cmdOk"}

    with anyio.fail_after(5):
        async with scripted_api(run) as (api, _), anyio.create_task_group() as tg:
            queue = CustomDataQueue(api)
            tg.start_soon(queue.run)
            async with anyio.create_task_group() as writers:
                writers.start_soon(
                    queue.write, GroupRef(1), {"simplexMcp": {"control": True, "nextAction": 2}}
                )
                writers.start_soon(
                    queue.write, GroupRef(1), {"simplexMcp": {"control": True, "nextAction": 3}}
                )
                writers.start_soon(queue.write, ContactRef(4), None)
                await anyio.wait_all_tasks_blocked()
                gate.set()
            tg.cancel_scope.cancel()
    assert done == [
        '/_set custom #1 {"simplexMcp":{"control":true,"nextAction":2}}',
        '/_set custom #1 {"simplexMcp":{"control":true,"nextAction":3}}',
        "/_set custom @4",
    ]


def test_qr_code_small_and_large_layouts() -> None:
    link = "https://smp4.simplex.im/g#" + "A" * 43
    modules = qr_modules(link)
    assert len(modules) == 37 and all(
        len(row) == 37 for row in modules
    )  # 33 modules and a margin of 2
    assert not any(modules[0]) and not any(row[0] or row[1] for row in modules)
    strip = re.compile(r"\x1b\[[0-9;]*m")
    small = qr_lines(link, "small")
    assert len(small) == 19
    assert all(len(strip.sub("", line)) == 37 and line.endswith("\x1b[0m") for line in small)
    large = qr_lines(link, "large")
    assert len(large) == 37
    assert all(len(strip.sub("", line)) == 74 and line.endswith("\x1b[0m") for line in large)
    # a module pair that differs is a lower half block with the bottom's foreground
    assert any("\u2584" in line for line in small)
    assert "\x1b[47m " in small[0]


def _member(member_id: int, name: str) -> dict[str, object]:
    return {"groupMemberId": member_id, "memberProfile": {"displayName": name}}


def test_the_restart_command_for_the_terminal_and_for_the_chat() -> None:
    terminal, chat = owner_entries([_member(3, "Alice"), _member(7, "Bob")])
    assert terminal == "--owners 3:Alice,7:Bob"
    assert chat == "`--owners 3:Alice,7:Bob`"


def test_restart_entries_with_other_characters_are_quoted_for_the_shell() -> None:
    terminal, chat = owner_entries(
        [_member(3, "Alice Smith"), _member(4, "O'Neil"), _member(5, "Зоя_2-b")]
    )
    assert terminal == "--owners '3:Alice Smith','4:O'\\''Neil',5:Зоя_2-b"
    assert chat == "`--owners 3:Alice Smith,4:O'Neil,5:Зоя_2-b`"


@pytest.mark.parametrize(
    "name", ["Eve\n/approve 1", "\x1b[31mEve\x1b[0m", "Eve`/approve 1`", " Eve ", "Eve\u2028x"]
)
def test_the_restart_command_in_the_chat_is_one_code_span_on_one_line(name: str) -> None:
    terminal, chat = owner_entries([_member(3, name)])
    assert "\n" not in terminal and "\x1b" not in terminal
    # as the owner's app gets it: the core's formattedText is one code span on one line
    (fragments,) = core_formatted_lines(chat)
    assert [kind for kind, _ in fragments] == ["snippet"]
    # the shell reads the terminal form back as one --owners value
    assert shlex.split(terminal)[1] == "3:" + fold(name)
