"""The fixture's A2A agent and card (see :mod:`simplex_protocols.conformance.live._fixture_names`)."""

from __future__ import annotations

from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentSkill, Role, TaskState

from simplex_protocols._clock import Clock, SystemClock

from ._fixture_names import FIXTURE_OVERSIZE_CHARS, REFERENCE_NAME, SLOW_PREFIX, STREAM_PREFIX

__all__ = ["FixtureAgent", "fixture_card"]


def fixture_card(name: str = REFERENCE_NAME) -> AgentCard:
    """The fixture agent's public card."""
    return AgentCard(
        name=name,
        description="The simplex-conformance fixture agent.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="conformance",
                name="Conformance fixture",
                description="Behaviours chosen by the messageId prefix (tck-...).",
                tags=["conformance"],
            )
        ],
    )


class FixtureAgent(AgentExecutor):
    """The fixture's behaviours, chosen by the user message's ``messageId`` prefix; ``clock``
    times ``tck-slow-<seconds>``."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock: Clock = clock if clock is not None else SystemClock()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        if message is None:
            return
        text = context.get_user_input()
        task = context.current_task
        if task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.add_artifact([new_text_part(f"got: {text}")], name="answer")
            await updater.complete()
            return
        prefix = message.message_id
        if prefix.startswith("tck-message"):
            await event_queue.enqueue_event(
                new_text_message(
                    f"echo: {text}", context_id=context.context_id, role=Role.ROLE_AGENT
                )
            )
            return
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work(new_text_message("working", role=Role.ROLE_AGENT))
        if prefix.startswith("tck-input-required"):
            await updater.requires_input(
                new_text_message("Say something to finish.", role=Role.ROLE_AGENT)
            )
            return
        stream = STREAM_PREFIX.match(prefix)
        if stream:
            for index in range(1, int(stream.group(1)) + 1):
                await updater.add_artifact(
                    [new_text_part(f"chunk {index} of {text}")], name=f"chunk-{index}"
                )
            await updater.complete()
            return
        slow = SLOW_PREFIX.match(prefix)
        if slow:
            await self.clock.sleep(float(slow.group(1)))
            await updater.add_artifact([new_text_part("slept")], name="result")
            await updater.complete()
            return
        if prefix.startswith("tck-oversize"):
            await updater.add_artifact(
                [new_text_part("x" * FIXTURE_OVERSIZE_CHARS)], name="oversize"
            )
            await updater.complete()
            return
        await updater.add_artifact([new_text_part(f"echo: {text}")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.task_id and context.context_id:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()
