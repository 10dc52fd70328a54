"""Agents, cards and callers shared by the A2A binding tests (no tests here).

``ScriptedExecutor`` is a small agent built with the ``a2a-sdk``: it echoes text, asks for
input on ``reserve ...``, answers with a message alone on ``hello``, waits for the test on
``wait ...`` (an ``anyio.Event`` per task, no sleeping), writes a large artifact on
``big ...`` and fails on ``boom``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    Role,
    SecurityScheme,
    TaskState,
)

from simplex_protocols.bindings import Caller, TransportKind
from simplex_protocols.bindings.a2a import build_a2a_request, build_send_message, caller_of

ADDRESS = "https://simplex.chat/a#bot-address-0123456789"


def make_card(*, streaming: bool = True, secured: bool = False) -> AgentCard:
    card = AgentCard(
        name="Anvil desk",
        description="Prices and reserves anvils.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes text", tags=["demo"])],
    )
    if secured:
        card.security_schemes["bearer"].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer"))
        )
        card.security_schemes["key"].CopyFrom(
            SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-Api-Key")
            )
        )
    return card


class ScriptedExecutor(AgentExecutor):
    """See the module docstring. Records what it saw, for the tests to check."""

    def __init__(self) -> None:
        self.started: dict[str, anyio.Event] = {}
        self.release: dict[str, anyio.Event] = {}
        self.cancelled: list[str] = []
        self.callers: list[Caller | None] = []
        self.headers: list[Mapping[str, Any]] = []
        self.authenticated: list[bool] = []
        self.any_started = anyio.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        self.callers.append(caller_of(context))
        self.headers.append(dict(context.call_context.state.get("headers", {})))
        self.authenticated.append(context.call_context.user.is_authenticated)
        text = context.get_user_input()
        if text == "boom":
            raise RuntimeError("secret database password in /srv/agent.conf")
        if text == "hello" and context.current_task is None:
            await event_queue.enqueue_event(
                new_text_message("hello yourself", role=Role.ROLE_AGENT)
            )
            return
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.add_artifact([new_text_part(f"reserved: {text}")], name="reservation")
            await updater.complete()
            return
        await updater.start_work(new_text_message("working", role=Role.ROLE_AGENT))
        if text.startswith("reserve"):
            await updater.requires_input(
                new_text_message("Confirm the reservation?", role=Role.ROLE_AGENT)
            )
            return
        if text.startswith("wait"):
            started = self.started.setdefault(task.id, anyio.Event())
            release = self.release.setdefault(task.id, anyio.Event())
            started.set()
            self.any_started.set()
            await release.wait()
        if text.startswith("big"):
            await updater.add_artifact([new_text_part("x" * 20_000)], name="big")
            await updater.complete()
            return
        await updater.add_artifact([new_text_part(f"echo: {text}")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        self.cancelled.append(context.task_id)
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def contact(contact_id: int = 17, **kw: Any) -> Caller:
    return Caller(
        key=f"chat:@{contact_id}", transport=TransportKind.CHAT, contact_id=contact_id, **kw
    )


def member(group_id: int, member_id: int) -> Caller:
    return Caller(
        key=f"chat:#{group_id}/{member_id}",
        transport=TransportKind.CHAT,
        group_id=group_id,
        group_member_id=member_id,
        in_group=True,
    )


def rpc_caller(signer_key: str | None = None) -> Caller:
    if signer_key is None:
        return Caller(key="rpc-anonymous:aaaa", transport=TransportKind.RPC)
    return Caller(key=f"rpc:{signer_key}", transport=TransportKind.RPC, signer_key=signer_key)


class Collector:
    """An ``emit`` that keeps what the binding sends."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    async def __call__(self, message: dict[str, Any]) -> None:
        self.messages.append(message)


def send(text: str, rid: int | str = 1, **kw: Any) -> dict[str, Any]:
    return build_send_message(text, request_id=rid, **kw)


def call(
    method: str, params: Mapping[str, Any] | None = None, rid: int | str = 1, **kw: Any
) -> dict[str, Any]:
    return build_a2a_request(method, params, request_id=rid, **kw)


async def ask(binding: Any, request: Mapping[str, Any], caller: Caller) -> list[dict[str, Any]]:
    """Every message the binding emits for one request in a conversation."""
    collector = Collector()
    with anyio.fail_after(10):
        await binding.handle_chat(request, caller, collector)
    return collector.messages


async def ask_one(binding: Any, request: Mapping[str, Any], caller: Caller) -> dict[str, Any]:
    messages = await ask(binding, request, caller)
    assert len(messages) == 1, messages
    return messages[0]


def kinds(items: list[dict[str, Any]]) -> list[str]:
    return [next(iter(item["result"])) if "result" in item else "error" for item in items]
