"""The A2A binding in a conversation: every method through the SDK's JSON-RPC dispatcher."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from a2a.types.a2a_pb2 import AgentCard
from test_a2a_support import (
    ADDRESS,
    ScriptedExecutor,
    ask,
    ask_one,
    call,
    contact,
    kinds,
    make_card,
    send,
)

from simplex_protocols.bindings import Binding
from simplex_protocols.bindings.a2a import (
    A2A_BINDING_URI,
    A2ABinding,
    build_subscribe_to_task,
    is_final_message,
    task_id_of,
)

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def served(
    card: AgentCard | None = None, **kw: Any
) -> AsyncIterator[tuple[A2ABinding, ScriptedExecutor]]:
    executor = ScriptedExecutor()
    binding = A2ABinding(executor, card or make_card(), address=ADDRESS, **kw)
    async with binding:
        yield binding, executor


async def test_binding_is_a_binding() -> None:
    async with served() as (binding, _):
        assert isinstance(binding, Binding)
        assert binding.name == "a2a"
        assert binding.versions == ("1.0",)


@pytest.mark.requirement("A2A-MSG-3", "A2A-MSG-2")
async def test_send_message_is_one_reply_with_the_completed_task() -> None:
    async with served() as (binding, _):
        request = send("Price of two anvils", rid=7)
        reply = await ask_one(binding, request, contact())
        assert reply["id"] == 7 and reply["jsonrpc"] == "2.0"
        task = reply["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"] == [{"text": "echo: Price of two anvils"}]
        assert is_final_message(request, reply)


async def test_send_message_answered_by_a_message_only() -> None:
    async with served() as (binding, _):
        reply = await ask_one(binding, send("hello"), contact())
        message = reply["result"]["message"]
        assert message["role"] == "ROLE_AGENT"
        assert message["parts"] == [{"text": "hello yourself"}]


async def test_get_task_and_history_length() -> None:
    async with served() as (binding, _):
        task = (await ask_one(binding, send("one"), contact()))["result"]["task"]
        got = await ask_one(binding, call("GetTask", {"id": task["id"]}, rid=2), contact())
        assert got["result"]["id"] == task["id"]
        assert len(got["result"]["history"]) == 2  # the user's message and "working"
        trimmed = await ask_one(
            binding, call("GetTask", {"id": task["id"], "historyLength": 1}, rid=3), contact()
        )
        assert len(trimmed["result"]["history"]) == 1


async def test_history_length_option_applies_when_the_request_sets_none() -> None:
    async with served(history_length=0) as (binding, _):
        task = (await ask_one(binding, send("one"), contact()))["result"]["task"]
        assert "history" not in task
        got = await ask_one(binding, call("GetTask", {"id": task["id"]}), contact())
        assert "history" not in got["result"]
        explicit = await ask_one(
            binding, call("GetTask", {"id": task["id"], "historyLength": 5}), contact()
        )
        assert len(explicit["result"]["history"]) == 2


async def test_list_tasks_lists_the_callers_tasks() -> None:
    async with served() as (binding, _):
        first = (await ask_one(binding, send("one"), contact()))["result"]["task"]
        second = (await ask_one(binding, send("two", rid=2), contact()))["result"]["task"]
        listed = await ask_one(binding, call("ListTasks", {}, rid=3), contact())
        ids = {task["id"] for task in listed["result"]["tasks"]}
        assert ids == {first["id"], second["id"]}
        by_context = await ask_one(
            binding, call("ListTasks", {"contextId": first["contextId"]}, rid=4), contact()
        )
        assert [t["id"] for t in by_context["result"]["tasks"]] == [first["id"]]


async def test_cancel_task_of_a_waiting_task_and_of_a_completed_one() -> None:
    async with served() as (binding, executor):
        waiting = (await ask_one(binding, send("reserve an anvil"), contact()))["result"]["task"]
        assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        cancelled = await ask_one(
            binding, call("CancelTask", {"id": waiting["id"]}, rid=2), contact()
        )
        assert cancelled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
        again = await ask_one(binding, call("CancelTask", {"id": waiting["id"]}, rid=3), contact())
        assert again["error"]["code"] == -32002  # TaskNotCancelableError
        assert executor.cancelled == [waiting["id"]]


async def test_cancel_task_of_a_running_task_calls_the_agent() -> None:
    async with served() as (binding, executor):
        started = await ask_one(binding, send("wait for it", return_immediately=True), contact())
        task = started["result"]["task"]
        with anyio.fail_after(5):
            await executor.any_started.wait()
        cancelled = await ask_one(binding, call("CancelTask", {"id": task["id"]}, rid=2), contact())
        assert cancelled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
        assert executor.cancelled == [task["id"]]


@pytest.mark.requirement("A2A-STR-1", "A2A-STR-2", "A2A-STR-3", "A2A-STR-4")
async def test_send_streaming_message_one_reply_per_item_ending_at_completion() -> None:
    async with served() as (binding, _):
        request = send("hello there", rid="s-1", streaming=True)
        items = await ask(binding, request, contact())
        assert kinds(items) == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
        assert all(item["id"] == "s-1" and item["jsonrpc"] == "2.0" for item in items)
        states = [
            item["result"].get("statusUpdate", {}).get("status", {}).get("state") for item in items
        ]
        assert states[1:] == ["TASK_STATE_WORKING", None, "TASK_STATE_COMPLETED"]
        assert [is_final_message(request, item) for item in items] == [False, False, False, True]


@pytest.mark.requirement("A2A-STR-4")
async def test_stream_ends_at_input_required_and_nothing_follows() -> None:
    async with served() as (binding, _):
        request = send("reserve an anvil", rid=2, streaming=True)
        items = await ask(binding, request, contact())
        assert kinds(items) == ["task", "statusUpdate", "statusUpdate"]
        assert items[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert is_final_message(request, items[-1])


async def test_streamed_message_only_answer_is_one_final_reply() -> None:
    async with served() as (binding, _):
        request = send("hello", rid=3, streaming=True)
        items = await ask(binding, request, contact())
        assert kinds(items) == ["message"]
        assert is_final_message(request, items[0])


@pytest.mark.requirement("A2A-STR-5")
async def test_subscribe_to_task_resumes_a_stream() -> None:
    async with served() as (binding, executor):
        first = await ask(
            binding, send("wait then finish", rid=1, return_immediately=True), contact()
        )
        task_id = task_id_of(first[0])
        assert task_id is not None
        with anyio.fail_after(5):
            await executor.any_started.wait()
        collected: list[dict[str, Any]] = []
        snapshot = anyio.Event()

        async def emit(message: dict[str, Any]) -> None:
            collected.append(message)
            snapshot.set()

        request = build_subscribe_to_task(task_id, request_id=2)
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(binding.handle_chat, request, contact(), emit)
                # The snapshot arrives first; then the agent is let go and the rest follows.
                await snapshot.wait()
                executor.release[task_id].set()
        assert kinds(collected)[0] == "task"
        assert collected[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert all(item["id"] == 2 for item in collected)


async def test_subscribe_to_an_input_required_task_is_its_snapshot() -> None:
    async with served() as (binding, _):
        waiting = (await ask_one(binding, send("reserve"), contact()))["result"]["task"]
        items = await ask(binding, build_subscribe_to_task(waiting["id"], request_id=2), contact())
        assert kinds(items) == ["task"]
        assert items[0]["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        answered = await ask_one(
            binding,
            send("yes", rid=3, task_id=waiting["id"], context_id=waiting["contextId"]),
            contact(),
        )
        assert answered["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert answered["result"]["task"]["artifacts"][0]["parts"] == [{"text": "reserved: yes"}]


async def test_subscribe_to_a_completed_task_is_one_error_reply() -> None:
    async with served() as (binding, _):
        task = (await ask_one(binding, send("done"), contact()))["result"]["task"]
        reply = await ask_one(binding, build_subscribe_to_task(task["id"], request_id=2), contact())
        assert reply["error"]["code"] == -32004  # UnsupportedOperationError: terminal task


async def test_streaming_refused_when_the_card_does_not_stream() -> None:
    async with served(make_card(streaming=False)) as (binding, _):
        reply = await ask_one(binding, send("x", streaming=True), contact())
        assert reply["error"]["code"] == -32004


@pytest.mark.requirement("A2A-PUSH-1")
@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("CreateTaskPushNotificationConfig", {"taskId": "t-1", "url": "https://example.com/h"}),
        ("GetTaskPushNotificationConfig", {"taskId": "t-1", "id": "c-1"}),
        ("ListTaskPushNotificationConfigs", {"taskId": "t-1"}),
        ("DeleteTaskPushNotificationConfig", {"taskId": "t-1", "id": "c-1"}),
    ],
)
async def test_a2a_push_1_push_methods_not_supported(method: str, params: dict[str, Any]) -> None:
    async with served() as (binding, _):
        reply = await ask_one(binding, call(method, params, rid=9), contact())
        assert reply["id"] == 9
        assert reply["error"]["code"] == -32003


@pytest.mark.requirement("A2A-PUSH-1")
async def test_a2a_push_1_push_config_inside_send_message_refused_before_the_agent_runs() -> None:
    async with served() as (binding, executor):
        request = send("x")
        request["params"]["configuration"] = {
            "taskPushNotificationConfig": {"url": "https://example.com/hook"}
        }
        reply = await ask_one(binding, request, contact())
        assert reply["error"]["code"] == -32003
        streamed = dict(request, method="SendStreamingMessage")
        reply = await ask_one(binding, streamed, contact())
        assert reply["error"]["code"] == -32003
        assert executor.callers == []


@pytest.mark.requirement("A2A-CARD-2", "A2A-ID-2")
async def test_a2a_card_2_extended_card_is_the_public_card_with_the_simplex_interface() -> None:
    async with served() as (binding, _):
        reply = await ask_one(binding, call("GetExtendedAgentCard", {}), contact())
        card = reply["result"]
        assert card["name"] == "Anvil desk"
        assert card["supportedInterfaces"] == [
            {"url": ADDRESS, "protocolBinding": A2A_BINDING_URI, "protocolVersion": "1.0"}
        ]
        assert card["capabilities"]["pushNotifications"] is False
        assert card["capabilities"]["extendedAgentCard"] is True


async def test_set_address_changes_the_served_card() -> None:
    executor = ScriptedExecutor()
    async with A2ABinding(executor, make_card()) as binding:
        bare = await ask_one(binding, call("GetExtendedAgentCard", {}), contact())
        assert "supportedInterfaces" not in bare["result"]
        binding.set_address("https://simplex.chat/a#new")
        reply = await ask_one(binding, call("GetExtendedAgentCard", {}, rid=2), contact())
        assert reply["result"]["supportedInterfaces"][0]["url"] == "https://simplex.chat/a#new"
        assert binding.address == "https://simplex.chat/a#new"


@pytest.mark.requirement("A2A-CARD-2", "A2A-AUTHZ-3")
async def test_extended_card_for_a_caller_whose_credential_is_accepted() -> None:
    extended = make_card(secured=True)
    extended.name = "Anvil desk (members)"
    seen: list[dict[str, str]] = []

    def authenticate(caller: Any, params: Any) -> str | None:
        seen.append(dict(params))
        return "alice" if params.get("authorization") == "Bearer good" else None

    async with served(
        make_card(secured=True), extended_card=extended, authenticate=authenticate
    ) as (
        binding,
        executor,
    ):
        good = call("GetExtendedAgentCard", {}, service_parameters={"Authorization": "Bearer good"})
        bad = call("GetExtendedAgentCard", {}, service_parameters={"Authorization": "Bearer bad"})
        assert (await ask_one(binding, good, contact()))["result"]["name"] == "Anvil desk (members)"
        assert (await ask_one(binding, bad, contact()))["result"]["name"] == "Anvil desk"
        assert (await ask_one(binding, call("GetExtendedAgentCard", {}), contact()))["result"][
            "name"
        ] == "Anvil desk"
        assert seen[0]["authorization"] == "Bearer good"
        # The agent sees the credential as a header and the authenticated user.
        await ask_one(
            binding, send("hi", service_parameters={"Authorization": "Bearer good"}), contact()
        )
        assert executor.headers[-1]["authorization"] == "Bearer good"
        assert executor.authenticated[-1] is True


async def test_unknown_method_and_bad_params_are_the_sdks_errors() -> None:
    async with served() as (binding, _):
        unknown = await ask_one(binding, call("tasks/get", {"id": "x"}, rid=4), contact())
        assert unknown["error"]["code"] == -32601 and unknown["id"] == 4
        bad = call("SendMessage", {"message": {"parts": "nope"}}, rid=5)
        assert (await ask_one(binding, bad, contact()))["error"]["code"] == -32602
        no_jsonrpc = {
            k: v for k, v in call("GetTask", {"id": "x"}, rid=6).items() if k != "jsonrpc"
        }
        assert (await ask_one(binding, no_jsonrpc, contact()))["error"]["code"] == -32600


async def test_a_non_object_request_is_invalid_request_with_null_id() -> None:
    async with served() as (binding, _):
        reply = await ask_one(binding, [1, 2], contact())  # type: ignore[arg-type]
        assert reply["error"]["code"] == -32600 and reply["id"] is None


async def test_agent_failure_answers_internal_error_without_its_text() -> None:
    async with served() as (binding, _):
        reply = await ask_one(binding, send("boom", rid=8), contact())
        assert reply == {
            "jsonrpc": "2.0",
            "id": 8,
            "error": {"code": -32603, "message": "Internal error"},
        }
        streamed = await ask(binding, send("boom", rid=9, streaming=True), contact())
        assert streamed[-1]["error"]["code"] == -32603
        assert "secret" not in str(streamed) and "secret" not in str(reply)


async def test_a_notification_is_served_without_a_reply() -> None:
    async with served() as (binding, executor):
        request = send("quietly")
        del request["id"]
        assert await ask(binding, request, contact()) == []
        assert len(executor.callers) == 1  # the agent ran
        bad = dict(request, **{"a2a-service-parameters": "nope"})
        assert await ask(binding, bad, contact()) == []


async def test_agent_sees_its_caller() -> None:
    async with served() as (binding, executor):
        caller = contact(42, display_name="bob")
        await ask_one(binding, send("hi"), caller)
        assert executor.callers == [caller]
