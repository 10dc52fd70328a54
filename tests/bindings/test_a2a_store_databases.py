"""The A2A task store on SQLite and on a real PostgreSQL server (issue 13, item 10).

The PostgreSQL cases need a server: ``.ci/run`` starts a throwaway one on 127.0.0.1 and sets
``SIMPLEX_TEST_POSTGRES_DSN`` (``postgresql://USER@127.0.0.1:PORT/DB``); each test gets a
database of its own there. Without the variable they skip and say so.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from test_a2a_support import ScriptedExecutor, ask_one, call, contact, make_card, send

from simplex_protocols.bindings.a2a import A2ABinding
from simplex_protocols.bot import ResponderBot
from simplex_protocols.errors import BindingConfigError
from simplex_protocols.sim import SimNetwork

pytestmark = pytest.mark.anyio

DSN_VARIABLE = "SIMPLEX_TEST_POSTGRES_DSN"
ALICE, BOB = contact(17), contact(42)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty task database URL of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tasks.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.mark.requirement("A2A-AUTHZ-2")
async def test_tasks_and_context_pins_survive_a_new_binding_on_the_same_database(
    database: str,
) -> None:
    async with A2ABinding(ScriptedExecutor(), make_card(), database=database) as first:
        waiting = (await ask_one(first, send("reserve an anvil"), ALICE))["result"]["task"]
        done = (await ask_one(first, send("echo me", rid=2), ALICE))["result"]["task"]
    if database.startswith("sqlite:///"):
        assert os.path.exists(database.removeprefix("sqlite:///"))  # noqa: ASYNC240

    # A restart: a new executor, a new binding, the same database.
    async with A2ABinding(ScriptedExecutor(), make_card(), database=database) as second:
        got = await ask_one(second, call("GetTask", {"id": done["id"]}), ALICE)
        assert got["result"]["artifacts"][0]["parts"] == [{"text": "echo: echo me"}]
        listed = await ask_one(second, call("ListTasks", {}), ALICE)
        assert {t["id"] for t in listed["result"]["tasks"]} == {waiting["id"], done["id"]}
        # Ownership survived: another caller sees nothing, and cannot enter the context.
        assert (await ask_one(second, call("GetTask", {"id": done["id"]}), BOB))["error"][
            "code"
        ] == -32001
        intruder = send("hi", context_id=waiting["contextId"])
        assert (await ask_one(second, intruder, BOB))["error"]["code"] == -32001
        # The task waiting for input is answered after the restart.
        answer = send("yes", task_id=waiting["id"], context_id=waiting["contextId"])
        finished = await ask_one(second, answer, ALICE)
        assert finished["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert finished["result"]["task"]["artifacts"][0]["parts"] == [{"text": "reserved: yes"}]


@pytest.mark.requirement("A2A-AUTHZ-2")
async def test_two_bots_sharing_one_database_keep_their_callers_tasks_apart(
    database: str,
) -> None:
    # Contact 17 of one bot is not contact 17 of the other: the same caller key in two bots'
    # own chat databases names two different people.
    async with (
        A2ABinding(ScriptedExecutor(), make_card(), database=database, owner_scope="desk") as a,
        A2ABinding(ScriptedExecutor(), make_card(), database=database, owner_scope="shop") as b,
    ):
        task = (await ask_one(a, send("echo me"), ALICE))["result"]["task"]
        other = (await ask_one(b, send("echo you"), ALICE))["result"]["task"]
        assert (await ask_one(b, call("GetTask", {"id": task["id"]}), ALICE))["error"][
            "code"
        ] == -32001
        listed = await ask_one(b, call("ListTasks", {}), ALICE)
        assert [t["id"] for t in listed["result"]["tasks"]] == [other["id"]]
        intruder = send("hi", context_id=task["contextId"])
        assert (await ask_one(b, intruder, ALICE))["error"]["code"] == -32001
        mine = await ask_one(a, call("GetTask", {"id": task["id"]}), ALICE)
        assert mine["result"]["id"] == task["id"]


def unusable_databases() -> list[str]:
    urls = ["postgresql://simplex:secret@127.0.0.1:1/tasks"]  # nothing listens on port 1
    dsn = os.environ.get(DSN_VARIABLE)
    if dsn:
        urls.append(dsn.rpartition("/")[0] + "/no_such_database")
    return urls


@pytest.mark.parametrize("url", unusable_databases())
def test_an_unusable_task_database_stops_run_with_one_line_before_the_profile(
    url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    network = SimNetwork(seed=5)
    bot = ResponderBot(
        display_name="Acme",
        a2a=ScriptedExecutor(),
        agent_card=make_card(),
        data_dir=tmp_path / "acme",
        task_database=url,
    )
    caplog.set_level(logging.INFO)
    with pytest.raises(SystemExit) as exited:
        bot.run(network.backend("acme"), handle_signals=False, configure_logging=False)
    assert exited.value.code == 1
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    line = errors[0].getMessage()
    assert "\n" not in line and "cannot be used" in line and "secret" not in line, line
    assert errors[0].exc_info is None
    # The core's profile was never touched: no user was created.
    assert network.core("acme").db.users == {}


async def test_an_unusable_database_is_a_binding_config_error_for_a_library_caller() -> None:
    with pytest.raises(BindingConfigError) as info:
        async with A2ABinding(
            ScriptedExecutor(), make_card(), database="postgresql://u:secret@127.0.0.1:1/x"
        ):
            pass
    assert info.value.code == "database_unavailable"
    assert "secret" not in str(info.value) and "u:***@127.0.0.1:1/x" in str(info.value)
