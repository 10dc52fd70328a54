"""A2A rules that had no behaviour test: raw parts and the size limit, the auth challenge."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from a2a.helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Part, Role
from test_a2a_support import contact, make_card, send
from test_a2a_wire import ChatReplies

from simplex_protocols import _wire
from simplex_protocols.bindings._a2a_wire import is_final_message
from simplex_protocols.bindings.a2a import A2ABinding

pytestmark = pytest.mark.anyio


class RawOrChallenge(AgentExecutor):
    """``raw <n>`` answers with an artifact of one raw part of n bytes; ``secret`` asks for
    credentials (the task goes to auth required)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = context.get_user_input()
        task = new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if text == "secret":
            await updater.requires_auth(
                new_text_message("Send a bearer token", role=Role.ROLE_AGENT)
            )
            return
        size = int(text.split()[1])
        await updater.add_artifact([Part(raw=b"\xff" * size, media_type="image/png")])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def _answer(text: str, rid: int) -> ChatReplies:
    async with A2ABinding(RawOrChallenge(), make_card(streaming=False)) as binding:
        request = send(text, rid=rid)
        replies = ChatReplies(binding, "/_call a2a " + _wire.dumps(request))
        with anyio.fail_after(10):
            await binding.handle_chat(request, contact(), replies)
        return replies


@pytest.mark.requirement("A2A-MSG-4")
async def test_a2a_msg_4_raw_part_bytes_push_a_response_over_the_limit() -> None:
    # 6,000 raw bytes are 8,000 characters of base64 in the JSON: the answer fits.
    small = await _answer("raw 6000", 1)
    assert small.replaced == [False]
    answer: dict[str, Any] = _wire.loads(small.texts[0])
    assert answer["result"]["task"]["artifacts"][0]["parts"][0]["raw"]
    # 12,000 raw bytes are 16,000 characters: over the 15,602 bytes of a message, so the
    # response becomes the -32603 error with the request's id. The text of the request is the
    # same length in both, so only the raw part's bytes make the difference.
    big = await _answer("raw 12000", 2)
    assert big.replaced == [True]
    error = _wire.loads(big.texts[0])
    assert (error["id"], error["error"]["code"]) == (2, -32603)


@pytest.mark.requirement("A2A-AUTHZ-3")
async def test_a2a_authz_3_a_challenge_is_answered_with_task_state_auth_required() -> None:
    async with A2ABinding(RawOrChallenge(), make_card(secured=True)) as binding:
        request = send("secret", rid="s", streaming=True)
        replies = ChatReplies(binding, "/_call a2a " + _wire.dumps(request))
        with anyio.fail_after(10):
            await binding.handle_chat(request, contact(), replies)
    messages = [_wire.loads(t) for t in replies.texts]
    last = messages[-1]
    update = last["result"].get("statusUpdate") or last["result"].get("task")
    assert update["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
    # auth required is an interrupted state: the stream ends with that reply.
    assert is_final_message(request, last)
    assert not any("error" in m for m in messages)
