"""ResponderBot's settings checks, and its private data folder."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from simplex_protocols.bot import ResponderBot
from simplex_protocols.bot._state import DataFolder, default_data_folder
from simplex_protocols.errors import BotConfigError, DataFolderError

from .botkit import EchoAgent, World, echo_card, make_tools

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("options", "code", "argument"),
    [
        ({"mcp": None}, "nothing_served", "mcp"),
        ({"peer_type": "human"}, "bad_peer_type", "peer_type"),
        ({"peer_type": "business"}, "bad_peer_type", "peer_type"),
        ({"transports": []}, "bad_transports", "transports"),
        ({"transports": ["chat", "email"]}, "bad_transports", "transports"),
        ({"transports": "chat"}, "bad_transports", "transports"),
        ({"description": "x" * 161}, "bad_description", "description"),
        ({"serves": "agent"}, "bad_serves", "serves"),
        ({"serves": ["agent", ""]}, "bad_serves", "serves"),
        ({"agent_card": echo_card()}, "bad_setting", "agent_card"),
        ({"display_name": " "}, "bad_setting", "display_name"),
        ({"shutdown_grace_s": -1}, "bad_setting", "shutdown_grace_s"),
        ({"max_concurrent_calls": 0}, "bad_setting", "max_concurrent_calls"),
        ({"max_concurrent_calls": True}, "bad_setting", "max_concurrent_calls"),
        (
            {"commands": [{"type": "command", "keyword": "_call", "label": "Call"}]},
            "bad_commands",
            "commands",
        ),
        (
            {
                "commands": [
                    {
                        "type": "menu",
                        "label": "More",
                        "commands": [{"type": "command", "keyword": "_CALL", "label": "x"}],
                    }
                ]
            },
            "bad_commands",
            "commands",
        ),
    ],
)
def test_unusable_settings_are_refused_before_anything_is_sent(
    tmp_path: Path, options: dict[str, Any], code: str, argument: str
) -> None:
    settings: dict[str, Any] = {"display_name": "Acme", "mcp": make_tools(), "data_dir": tmp_path}
    settings.update(options)
    with pytest.raises(BotConfigError) as raised:
        ResponderBot(**settings)
    assert (raised.value.code, raised.value.argument) == (code, argument)
    assert isinstance(raised.value, ValueError)


@pytest.mark.requirement("DECL-PROTO-11")
def test_call_is_refused_in_the_menu_at_any_depth(tmp_path: Path) -> None:
    menu = [{"type": "command", "keyword": "_call", "label": "Call"}]
    with pytest.raises(BotConfigError) as raised:
        ResponderBot(display_name="Acme", mcp=make_tools(), commands=menu, data_dir=tmp_path)
    assert raised.value.code == "bad_commands"


def test_the_declarations_are_known_before_the_bot_starts(tmp_path: Path) -> None:
    bot = ResponderBot(
        display_name="Acme",
        mcp=make_tools(),
        a2a=EchoAgent(),
        transports=["rpc"],
        a2a_versions=["1.0"],
        data_dir=tmp_path,
    )
    assert list(bot.declarations) == ["mcp", "a2a"]
    assert bot.declarations["a2a"].versions == ("1.0",)
    assert bot.declarations.protocols_for("rpc") == ("mcp", "a2a")
    assert bot.declarations.protocols_for("chat") == ()
    with pytest.raises(BotConfigError) as raised:
        _ = bot.address
    assert raised.value.code == "not_running"


def test_the_default_data_folder_is_under_the_state_home(tmp_path: Path) -> None:
    folder = default_data_folder("Acme Stock/1", {"XDG_STATE_HOME": str(tmp_path)})
    assert folder == tmp_path / "simplex-bot" / "Acme_Stock_1"


def test_the_data_folder_is_private(tmp_path: Path) -> None:
    data = DataFolder(tmp_path / "a" / "b")
    data.open()
    try:
        assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o700
        data.save_settings({"userId": 3})
        assert data.load_settings() == {"format": "simplex-protocols/bot/1", "userId": 3}
        assert stat.S_IMODE(data.file("bot.json").stat().st_mode) == 0o600
    finally:
        data.close()
    assert not data.file("lock").exists()


def test_a_folder_open_to_others_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "open"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    with pytest.raises(DataFolderError) as raised:
        DataFolder(folder).open()
    assert raised.value.filename == str(folder)


def test_a_settings_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    data = DataFolder(tmp_path / "bot")
    data.open()
    try:
        data.save_settings({"userId": 3})
        os.chmod(data.file("bot.json"), 0o644)
        with pytest.raises(DataFolderError):
            data.load_settings()
        data.file("bot.json").write_text("[1, 2]")
        os.chmod(data.file("bot.json"), 0o600)
        with pytest.raises(DataFolderError):
            data.load_settings()
    finally:
        data.close()


def test_a_folder_in_use_is_refused_and_a_stale_lock_is_taken(tmp_path: Path) -> None:
    first = DataFolder(tmp_path / "bot")
    first.open()
    try:
        with pytest.raises(DataFolderError) as raised:
            DataFolder(tmp_path / "bot").open()
        assert raised.value.errno is not None
    finally:
        first.close()
    # A lock left by a process that has ended is stale.
    (tmp_path / "bot" / "lock").write_text("999999999\n")
    again = DataFolder(tmp_path / "bot")
    again.open()
    again.close()


async def test_two_bots_cannot_share_a_data_folder(tmp_path: Path) -> None:
    async with World() as world:
        first = ResponderBot(
            display_name="Acme", mcp=make_tools(), data_dir=tmp_path, clock=world.clock
        )
        second = ResponderBot(
            display_name="Other", mcp=make_tools(), data_dir=tmp_path, clock=world.clock
        )
        async with first.serving(world.network.backend("acme")):
            with pytest.raises(DataFolderError):
                async with second.serving(world.network.backend("other")):
                    pass


def test_a_lock_naming_a_running_unrelated_process_blocks_no_start(tmp_path: Path) -> None:
    # A lock file left by a crash whose PID now belongs to another program (PID 1 runs).
    data = DataFolder(tmp_path / "bot")
    data.open()
    data.close()
    data.file("lock").write_text("1\n")
    again = DataFolder(tmp_path / "bot")
    again.open()
    try:
        assert data.file("lock").read_text().strip() == str(os.getpid())
    finally:
        again.close()


def test_a_second_bot_on_the_folder_is_refused_while_the_first_holds_it(tmp_path: Path) -> None:
    first = DataFolder(tmp_path / "bot")
    first.open()
    try:
        with pytest.raises(DataFolderError) as raised:
            DataFolder(tmp_path / "bot").open()
        assert raised.value.errno == errno.EBUSY
        assert "another bot" in str(raised.value)
    finally:
        first.close()
    DataFolder(tmp_path / "bot").open()


def test_a_lock_file_that_is_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o700)
    target = tmp_path / "elsewhere"
    target.write_text("")
    (folder / "lock").symlink_to(target)
    with pytest.raises(DataFolderError):
        DataFolder(folder).open()
    assert target.read_text() == ""
