"""The ``a2a-sdk``'s own ``Client``, through :class:`SimplexA2ATransport`, sends messages,
streams tasks and gets tasks of a SimpleX agent on the simulated network."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.helpers import new_text_message
from a2a.types.a2a_pb2 import GetTaskRequest, Role, SendMessageRequest, TaskState

from simplex_protocols._clock import ManualClock
from simplex_protocols.bindings.a2a import (
    A2A_BINDING_URI,
    SimplexA2ATransport,
    simplex_transport_producer,
    text_of,
)
from simplex_protocols.bot import ResponderBot
from simplex_protocols.cli._call_demo import _agent_card, make_agent
from simplex_protocols.core import ChatCore
from simplex_protocols.errors import JSONRPCResponseError
from simplex_protocols.sim import SimNetwork


@contextlib.asynccontextmanager
async def agent(tmp_path: Path, *, streaming: bool, **options: Any) -> AsyncIterator[Any]:
    network = SimNetwork(seed=11, clock=ManualClock())
    bot = ResponderBot(
        display_name="Acme",
        a2a=make_agent(),
        agent_card=_agent_card(),
        serves=["agent"],
        transports=("chat", "rpc"),
        data_dir=tmp_path / "bot",
        shutdown_grace_s=0.5,
        clock=network.clock,
    )
    network.add_user("you", display_name="you", peer_type="agent")
    async with bot.serving(network.backend("acme")), ChatCore(network.backend("you")) as core:
        factory = ClientFactory(
            ClientConfig(supported_protocol_bindings=[A2A_BINDING_URI], streaming=streaming)
        )
        factory.register(
            A2A_BINDING_URI,
            simplex_transport_producer(core=core, clock=network.clock, **options),
        )
        with anyio.fail_after(20):
            async with factory.create(bot.agent_card) as client:
                yield client


def ask(text: str) -> SendMessageRequest:
    return SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER))


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["rpc", "chat"])
async def test_send_message_returns_the_finished_task(tmp_path: Path, transport: str) -> None:
    async with agent(tmp_path, streaming=False, transport=transport) as client:
        items = [item async for item in client.send_message(ask("2 chairs"))]
    assert len(items) == 1
    task = items[0].task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert "chairs" in text_of(task)


@pytest.mark.anyio
async def test_streaming_yields_the_task_then_its_updates_to_the_end(tmp_path: Path) -> None:
    async with agent(tmp_path, streaming=True) as client:
        items = [item async for item in client.send_message(ask("3 lamps"))]
    kinds = [item.WhichOneof("payload") for item in items]
    assert kinds[0] == "task"
    assert len(kinds) > 1
    last = items[-1]
    assert last.WhichOneof("payload") == "status_update"
    assert last.status_update.status.state == TaskState.TASK_STATE_COMPLETED


@pytest.mark.anyio
async def test_get_task_finds_the_task_of_an_earlier_message(tmp_path: Path) -> None:
    async with agent(tmp_path, streaming=True) as client:
        items = [item async for item in client.send_message(ask("1 desk"))]
        task_id = items[0].task.id
        task = await client.get_task(GetTaskRequest(id=task_id))
    assert task.id == task_id
    assert task.status.state == TaskState.TASK_STATE_COMPLETED


@pytest.mark.anyio
async def test_an_unknown_task_is_the_agents_error_with_its_code(tmp_path: Path) -> None:
    async with agent(tmp_path, streaming=False) as client:
        with pytest.raises(JSONRPCResponseError) as raised:
            await client.get_task(GetTaskRequest(id="no-such-task"))
    assert raised.value.jsonrpc_code == -32001


@pytest.mark.anyio
async def test_rpc_only_refuses_a_stream_with_conversation_required(tmp_path: Path) -> None:
    async with agent(tmp_path, streaming=False, transport="rpc") as client:
        with pytest.raises(Exception) as raised:
            await client.get_task(GetTaskRequest(id="x"))
    assert getattr(raised.value, "code", None) == "conversation_required"


def test_a_core_string_is_refused() -> None:
    with pytest.raises(ValueError, match="ChatCore"):
        SimplexA2ATransport(_agent_card(), "@acme.testing", core="ws://127.0.0.1:1")  # type: ignore[arg-type]
