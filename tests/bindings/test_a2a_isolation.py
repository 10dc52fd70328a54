"""Callers and authorization (spec "A2A binding" > "Callers and authorization")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from a2a.server.context import ServerCallContext
from a2a.utils.errors import TaskNotFoundError
from test_a2a_support import (
    ScriptedExecutor,
    ask,
    ask_one,
    call,
    contact,
    make_card,
    member,
    rpc_caller,
    send,
)

from simplex_protocols.bindings import Caller, TransportKind
from simplex_protocols.bindings.a2a import A2ABinding, build_subscribe_to_task, caller_of

pytestmark = pytest.mark.anyio

ALICE, BOB = contact(17), contact(42)
CAROL, DAVE = member(5, 1), member(5, 2)
CAROL_DIRECT = contact(99)  # the same person, in a direct chat: another caller


@asynccontextmanager
async def served(**kw: Any) -> AsyncIterator[tuple[A2ABinding, ScriptedExecutor]]:
    executor = ScriptedExecutor()
    async with A2ABinding(executor, make_card(secured=True), **kw) as binding:
        yield binding, executor


def not_found(reply: dict[str, Any]) -> bool:
    return reply.get("error", {}).get("code") == -32001


@pytest.mark.requirement("A2A-AUTHZ-1", "A2A-AUTHZ-2")
@pytest.mark.parametrize(("owner", "other"), [(ALICE, BOB), (CAROL, DAVE), (CAROL, CAROL_DIRECT)])
async def test_a2a_authz_2_tasks_are_visible_only_to_their_caller(
    owner: Caller, other: Caller
) -> None:
    async with served() as (binding, _):
        task = (await ask_one(binding, send("reserve an anvil"), owner))["result"]["task"]
        assert "result" in await ask_one(binding, call("GetTask", {"id": task["id"]}), owner)
        # Every way another caller can name the task is answered as an unknown task.
        assert not_found(await ask_one(binding, call("GetTask", {"id": task["id"]}), other))
        assert not_found(await ask_one(binding, call("CancelTask", {"id": task["id"]}), other))
        subscribe = build_subscribe_to_task(task["id"], request_id=3)
        assert not_found(await ask_one(binding, subscribe, other))
        continued = send("yes", task_id=task["id"], context_id=task["contextId"])
        assert not_found(await ask_one(binding, continued, other))
        assert not_found(await ask_one(binding, send("yes", task_id=task["id"]), other))
        assert (await ask_one(binding, call("ListTasks", {}), other))["result"]["tasks"] == []
        listed = await ask_one(binding, call("ListTasks", {"contextId": task["contextId"]}), other)
        assert listed["result"]["tasks"] == []
        # ... and the task is untouched: its owner still finishes it.
        done = await ask_one(binding, continued, owner)
        assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.requirement("A2A-AUTHZ-2")
@pytest.mark.parametrize(("owner", "other"), [(ALICE, BOB), (CAROL, DAVE)])
async def test_a2a_authz_2_contexts_are_pinned_to_their_first_caller(
    owner: Caller, other: Caller
) -> None:
    async with served() as (binding, executor):
        task = (await ask_one(binding, send("one"), owner))["result"]["task"]
        context_id = task["contextId"]
        intruder = await ask_one(binding, send("me too", context_id=context_id), other)
        assert not_found(intruder)
        streamed = await ask(binding, send("me too", context_id=context_id, streaming=True), other)
        assert len(streamed) == 1 and not_found(streamed[0])
        assert len(executor.callers) == 1  # the agent never saw the intruder
        again = await ask_one(binding, send("two", context_id=context_id), owner)
        assert again["result"]["task"]["contextId"] == context_id


@pytest.mark.requirement("A2A-AUTHZ-2")
async def test_a2a_authz_2_a_context_named_first_by_a_caller_is_theirs() -> None:
    async with served() as (binding, _):
        mine = await ask_one(binding, send("x", context_id="ctx-chosen-by-alice"), ALICE)
        assert mine["result"]["task"]["contextId"] == "ctx-chosen-by-alice"
        assert not_found(await ask_one(binding, send("y", context_id="ctx-chosen-by-alice"), BOB))


async def test_context_ids_longer_than_the_database_column_are_invalid_params() -> None:
    async with served() as (binding, _):
        reply = await ask_one(binding, send("x", context_id="c" * 37), ALICE)
        assert reply["error"]["code"] == -32602
        ok = await ask_one(binding, send("x", context_id="c" * 36), ALICE)
        assert "result" in ok


@pytest.mark.requirement("A2A-AUTHZ-2")
async def test_amb_23_one_shot_tasks_belong_to_nobody() -> None:
    async with served() as (binding, _):
        signed = rpc_caller("MCowBQYDK2VwAyEAsignerkey")
        answer = await binding.handle_rpc(send("one shot"), signed, budget_s=60)
        assert isinstance(answer, dict)
        task = answer["result"]["task"]
        for who in (ALICE, CAROL):
            assert not_found(await ask_one(binding, call("GetTask", {"id": task["id"]}), who))
            assert not_found(await ask_one(binding, send("x", context_id=task["contextId"]), who))
        # Not even the same signer key, in a conversation.
        same_key = Caller(key=signed.key, transport=TransportKind.CHAT, contact_id=3)
        assert not_found(await ask_one(binding, call("GetTask", {"id": task["id"]}), same_key))


@pytest.mark.requirement("A2A-AUTHZ-4")
async def test_amb_24_credentials_received_in_a_group_are_not_used() -> None:
    accepted: list[str] = []

    def authenticate(caller: Caller, params: Any) -> str | None:
        accepted.append(caller.key)
        return "alice"

    async with served(authenticate=authenticate) as (binding, executor):
        credentials = {"Authorization": "Bearer t", "X-Api-Key": "k", "X-Other": "kept"}
        await ask_one(binding, send("hi", service_parameters=credentials), CAROL)
        assert executor.headers[-1] == {"a2a-version": "1.0", "x-other": "kept"}
        assert executor.authenticated[-1] is False
        assert accepted == []
        # In a direct chat the same credentials are passed on and checked.
        await ask_one(binding, send("hi", service_parameters=credentials), ALICE)
        assert executor.headers[-1]["authorization"] == "Bearer t"
        assert executor.headers[-1]["x-api-key"] == "k"
        assert accepted == [ALICE.key]


async def test_owner_resolver_fails_closed_without_a_simplex_call() -> None:
    from simplex_protocols.bindings._a2a_server import _owner_of

    with pytest.raises(TaskNotFoundError):
        _owner_of(ServerCallContext())
    assert caller_of(ServerCallContext()) is None


async def test_a_caller_without_a_key_is_refused() -> None:
    async with served() as (binding, executor):
        nobody = Caller(key="", transport=TransportKind.CHAT)
        reply = await ask_one(binding, send("hi"), nobody)
        assert reply["error"]["code"] == -32603
        assert executor.callers == []


@pytest.mark.requirement("A2A-AUTHZ-2")
async def test_a2a_authz_2_referred_tasks_are_the_callers_own_only() -> None:
    related: list[list[str]] = []

    class Recorder(ScriptedExecutor):
        async def execute(self, context: Any, event_queue: Any) -> None:
            related.append([task.id for task in context.related_tasks])
            await super().execute(context, event_queue)

    async with A2ABinding(Recorder(), make_card(), populate_referred_tasks=True) as binding:
        alices = (await ask_one(binding, send("a"), ALICE))["result"]["task"]
        bobs = (await ask_one(binding, send("b"), BOB))["result"]["task"]
        referring = send("c")
        referring["params"]["message"]["referenceTaskIds"] = [alices["id"], bobs["id"]]
        await ask_one(binding, referring, ALICE)
        assert related[-1] == [alices["id"]]


async def test_a_request_that_is_not_json_is_invalid_request() -> None:
    async with served() as (binding, executor):
        request = send("x")
        request["params"]["metadata"] = {"n": float("nan")}
        reply = await ask_one(binding, request, ALICE)
        assert reply["error"]["code"] == -32600
        assert executor.callers == []
