"""The A2A binding over Service RPC (spec "A2A binding" > "Service RPC")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from test_a2a_support import ScriptedExecutor, call, make_card, rpc_caller, send

from simplex_protocols._clock import ManualClock
from simplex_protocols.bindings import EnvelopeOutcome
from simplex_protocols.bindings._a2a_server import CANCEL_GRACE_S
from simplex_protocols.bindings.a2a import A2ABinding, build_subscribe_to_task

pytestmark = pytest.mark.anyio

BUDGET_S = 170.0


@asynccontextmanager
async def served(**kw: Any) -> AsyncIterator[tuple[A2ABinding, ScriptedExecutor]]:
    executor = ScriptedExecutor()
    async with A2ABinding(executor, make_card(), **kw) as binding:
        yield binding, executor


async def rpc(binding: A2ABinding, request: Any, **kw: Any) -> dict[str, Any] | EnvelopeOutcome:
    with anyio.fail_after(10):
        return await binding.handle_rpc(request, rpc_caller(**kw), budget_s=BUDGET_S)


def conversation_required(answer: object) -> bool:
    return isinstance(answer, EnvelopeOutcome) and answer.code == "conversation_required"


@pytest.mark.requirement("A2A-RPC-1", "A2A-RPC-2")
async def test_a2a_rpc_1_one_shot_send_message_answers_the_finished_task() -> None:
    async with served() as (binding, _):
        answer = await rpc(binding, send("Price of two anvils delivered to Lisbon", rid=1))
        assert isinstance(answer, dict) and answer["id"] == 1
        task = answer["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"] == [
            {"text": "echo: Price of two anvils delivered to Lisbon"}
        ]


@pytest.mark.requirement("A2A-RPC-2")
async def test_a2a_rpc_2_one_shot_answered_by_a_message_or_an_interrupted_task() -> None:
    async with served() as (binding, _):
        answer = await rpc(binding, send("hello"), signer_key="MCowBQYDK2VwAyEAkey")
        assert isinstance(answer, dict) and answer["result"]["message"]["parts"] == [
            {"text": "hello yourself"}
        ]
        answer = await rpc(binding, send("reserve"))
        assert isinstance(answer, dict)
        assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"


@pytest.mark.requirement("A2A-RPC-1", "A2A-RPC-4")
@pytest.mark.parametrize(
    "request_",
    [
        send("x", context_id="c-1"),
        send("x", task_id="t-1"),
        send("x", return_immediately=True),
        # The SDK also reads the protobuf field names: they count as well.
        {
            **send("x"),
            "params": {
                "message": {
                    "messageId": "m",
                    "role": "ROLE_USER",
                    "parts": [{"text": "x"}],
                    "context_id": "c-1",
                }
            },
        },
        {
            **send("x"),
            "params": {**send("x")["params"], "configuration": {"return_immediately": True}},
        },
    ],
)
async def test_a2a_rpc_1_send_message_that_is_not_one_shot_needs_a_conversation(
    request_: dict[str, Any],
) -> None:
    async with served() as (binding, executor):
        assert conversation_required(await rpc(binding, request_))
        assert executor.callers == []


@pytest.mark.requirement("A2A-STR-6", "A2A-RPC-4")
@pytest.mark.parametrize(
    "request_",
    [
        send("x", streaming=True),
        build_subscribe_to_task("t-1", request_id=1),
        call("GetTask", {"id": "t-1"}),
        call("ListTasks", {}),
        call("CancelTask", {"id": "t-1"}),
        call("NoSuchMethod", {}),
        # AMB-2, reading B: the card and the push methods are no exception
        call("GetExtendedAgentCard", {}),
        call("ListTaskPushNotificationConfigs", {"taskId": "t"}),
        call("CreateTaskPushNotificationConfig", {"taskId": "t", "url": "https://x.test/p"}),
    ],
)
async def test_a2a_rpc_4_other_requests_need_a_conversation(request_: dict[str, Any]) -> None:
    async with served() as (binding, executor):
        assert conversation_required(await rpc(binding, request_))
        assert executor.callers == []


@pytest.mark.requirement("A2A-RPC-4", "A2A-CARD-2", "A2A-PUSH-1")
async def test_amb_2_card_and_push_methods_are_answered_in_a_conversation_only() -> None:
    async with served(address="https://simplex.chat/a#x") as (binding, executor):
        card = await rpc(binding, call("GetExtendedAgentCard", {}, rid=4))
        assert conversation_required(card)
        push = await rpc(binding, call("ListTaskPushNotificationConfigs", {"taskId": "t"}, rid=5))
        assert conversation_required(push)
        assert executor.callers == []


async def test_version_checked_over_service_rpc_too() -> None:
    async with served() as (binding, executor):
        request = send("x", rid=6, version="1.1")
        answer = await rpc(binding, request)
        assert isinstance(answer, dict) and answer["error"]["code"] == -32009
        assert executor.callers == []


async def test_amb_30_notification_needs_a_conversation() -> None:
    async with served() as (binding, executor):
        request = send("x")
        del request["id"]
        assert conversation_required(await rpc(binding, request))
        assert executor.callers == []


@pytest.mark.parametrize(
    "request_",
    [
        [1],
        "SendMessage",
        {"jsonrpc": "1.0", "id": 1, "method": "GetTask", "params": {}},
        {"jsonrpc": "2.0", "id": True, "method": "GetTask", "params": {}},
        {"jsonrpc": "2.0", "id": 1.5, "method": "GetTask", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": []},
    ],
)
async def test_amb_28_invalid_json_rpc_gets_the_protocols_error(request_: Any) -> None:
    async with served() as (binding, _):
        answer = await rpc(binding, request_)
        assert isinstance(answer, dict) and answer["error"]["code"] == -32600


async def test_invalid_send_message_params_get_the_sdks_error() -> None:
    async with served() as (binding, executor):
        request = call("SendMessage", {"message": {"parts": "nope"}}, rid=2)
        answer = await rpc(binding, request)
        assert isinstance(answer, dict) and answer["error"]["code"] == -32602
        assert executor.callers == []


@pytest.mark.requirement("A2A-RPC-3")
async def test_a2a_rpc_3_task_over_budget_is_cancelled_and_needs_a_conversation() -> None:
    clock = ManualClock()
    async with served(clock=clock) as (binding, executor):
        answers: list[object] = []

        async def requester() -> None:
            answers.append(
                await binding.handle_rpc(send("wait a long time"), rpc_caller(), budget_s=BUDGET_S)
            )

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(requester)
                await executor.any_started.wait()
                await clock.advance(BUDGET_S - 1)
                assert answers == []  # still inside the budget
                await clock.advance(1)
        assert len(answers) == 1 and conversation_required(answers[0])
        task_id = next(iter(executor.started))
        assert executor.cancelled == [task_id]
        assert not executor.release[task_id].is_set()  # the agent was stopped, not let go


@pytest.mark.requirement("A2A-RPC-3")
async def test_a2a_rpc_3_task_finished_inside_the_budget_is_answered() -> None:
    clock = ManualClock()
    async with served(clock=clock) as (binding, executor):
        answers: list[object] = []

        async def requester() -> None:
            answers.append(
                await binding.handle_rpc(send("wait a little"), rpc_caller(), budget_s=BUDGET_S)
            )

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(requester)
                await executor.any_started.wait()
                await clock.advance(BUDGET_S - 1)
                next(iter(executor.release.values())).set()
        assert isinstance(answers[0], dict)
        assert answers[0]["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert executor.cancelled == []


async def test_an_agent_that_does_not_cancel_in_time_is_left_after_the_grace() -> None:
    clock = ManualClock()

    class Stubborn(ScriptedExecutor):
        async def cancel(self, context: Any, event_queue: Any) -> None:
            self.cancelled.append(str(context.task_id))
            await anyio.Event().wait()  # never returns

    executor = Stubborn()
    async with A2ABinding(executor, make_card(), clock=clock) as binding:
        answers: list[object] = []

        async def requester() -> None:
            answers.append(await binding.handle_rpc(send("wait"), rpc_caller(), budget_s=BUDGET_S))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(requester)
                await executor.any_started.wait()
                await clock.advance(BUDGET_S)
                while not executor.cancelled:
                    await anyio.lowlevel.checkpoint()
                assert answers == []
                await clock.advance(CANCEL_GRACE_S)
        assert len(answers) == 1 and conversation_required(answers[0])
        for event in executor.release.values():
            event.set()
