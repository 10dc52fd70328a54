"""Tasks and contexts survive a restart; database URLs (spec "A2A binding", issue: persistence)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_a2a_support import ScriptedExecutor, ask_one, call, contact, make_card, send

from simplex_protocols.bindings._a2a_store import CONTEXTS_TABLE, task_database_url
from simplex_protocols.bindings.a2a import A2ABinding
from simplex_protocols.errors import BindingConfigError

pytestmark = pytest.mark.anyio

ALICE, BOB = contact(17), contact(42)


# Tasks surviving a restart, on SQLite and PostgreSQL: test_a2a_store_databases.py.


async def test_the_pins_table_is_in_the_task_database(tmp_path: Path) -> None:
    import sqlite3

    database = tmp_path / "t.db"
    async with A2ABinding(ScriptedExecutor(), make_card(), database=database) as binding:
        task = (await ask_one(binding, send("x"), ALICE))["result"]["task"]
        assert binding.database_url == f"sqlite+aiosqlite:///{database}"
    with sqlite3.connect(database) as conn:
        rows = conn.execute(f"SELECT context_id, owner FROM {CONTEXTS_TABLE}").fetchall()
        owners = conn.execute("SELECT id, owner FROM tasks").fetchall()
    assert rows == [(task["contextId"], ALICE.key)]
    assert owners == [(task["id"], ALICE.key)]


async def test_in_memory_sqlite_url_uses_the_database_store() -> None:
    binding = A2ABinding(ScriptedExecutor(), make_card(), database="sqlite:///:memory:")
    async with binding:
        assert binding.database_url == "sqlite+aiosqlite:///:memory:"
        task = (await ask_one(binding, send("x"), ALICE))["result"]["task"]
        got = await ask_one(binding, call("GetTask", {"id": task["id"]}), ALICE)
        assert got["result"]["id"] == task["id"]
        assert (await ask_one(binding, send("y", context_id=task["contextId"]), BOB))["error"][
            "code"
        ] == -32001


async def test_tasks_in_memory_by_default() -> None:
    async with A2ABinding(ScriptedExecutor(), make_card()) as binding:
        assert binding.database_url is None


async def test_a_closed_binding_refuses_to_reopen() -> None:
    binding = A2ABinding(ScriptedExecutor(), make_card())
    async with binding:
        pass
    await binding.aclose()  # twice is fine
    with pytest.raises(BindingConfigError) as info:
        await binding.open()
    assert info.value.code == "closed"


@pytest.mark.parametrize(
    ("given", "url"),
    [
        (
            "postgresql://anvil:pw@db.example:5432/tasks",
            "postgresql+asyncpg://anvil:pw@db.example:5432/tasks",
        ),
        ("postgres://anvil@db/tasks", "postgresql+asyncpg://anvil@db/tasks"),
        ("postgresql+asyncpg://anvil@db/tasks", "postgresql+asyncpg://anvil@db/tasks"),
        ("postgresql+psycopg://anvil@db/tasks", "postgresql+psycopg://anvil@db/tasks"),
        ("sqlite:///relative.db", "sqlite+aiosqlite:///relative.db"),
        ("sqlite:////abs/tasks.db", "sqlite+aiosqlite:////abs/tasks.db"),
        ("sqlite+aiosqlite:///:memory:", "sqlite+aiosqlite:///:memory:"),
        ("mysql://u:p@h/d", "mysql+aiomysql://u:p@h/d"),
        # The examples docs/bindings-a2a.md gives in prose.
        (
            "postgresql://desk:secret@db.internal/anvils",
            "postgresql+asyncpg://desk:secret@db.internal/anvils",
        ),
        (
            "sqlite:////var/lib/anvil-desk/tasks.db",
            "sqlite+aiosqlite:////var/lib/anvil-desk/tasks.db",
        ),
    ],
)
def test_database_urls_get_the_sdk_extras_async_drivers(given: str, url: str) -> None:
    assert task_database_url(given) == url


def test_a_path_is_an_absolute_sqlite_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert task_database_url("tasks.db") == f"sqlite+aiosqlite:///{tmp_path / 'tasks.db'}"
    assert task_database_url(tmp_path / "x.db") == f"sqlite+aiosqlite:///{tmp_path / 'x.db'}"


@pytest.mark.parametrize(
    "given", ["", "   ", "oracle://u@h/d", "mongodb://h/d", "http://example.com/db", "://nope"]
)
def test_unusable_database_urls_are_refused(given: str) -> None:
    with pytest.raises(BindingConfigError) as info:
        task_database_url(given)
    assert info.value.code == "bad_database_url"


def test_postgresql_without_its_driver_says_which_extra_to_install() -> None:
    try:
        import asyncpg  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("asyncpg is installed here")
    with pytest.raises(BindingConfigError) as info:
        A2ABinding(ScriptedExecutor(), make_card(), database="postgresql://u:secret@db/tasks")
    assert info.value.code == "driver_missing"
    assert "simplex-protocols[postgresql]" in str(info.value)
    assert "secret" not in str(info.value)
