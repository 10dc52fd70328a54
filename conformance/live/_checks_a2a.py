"""Checks of the A2A binding: read-only probes (black-box profile) and the fixture behaviours
chosen by the ``messageId`` prefix."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simplex_protocols.conformance._model import Outcome

from ._context import Answer, CheckContext
from ._probes import (
    A2A_URI,
    UNSERVED_A2A_VERSION,
    a2a_request,
    describe,
    error_code,
    needs_a2a_fixture,
    random_task_id,
    result_of,
    send_message_params,
)
from ._registry import FIXTURE, check
from ._session import Reply

JSON = dict[str, Any]

_A2A = ("a2a",)

#: A2A's error codes (its JSON-RPC binding).
TASK_NOT_FOUND = -32001
PUSH_NOT_SUPPORTED = -32003
VERSION_NOT_SUPPORTED = -32009
_TERMINAL = frozenset(
    {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
)
_INTERRUPTED = frozenset({"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"})
_STREAM_KINDS = ("task", "message", "statusUpdate", "artifactUpdate")


def _parse(value: Mapping[str, Any], kind: str) -> str | None:
    """Read ``value`` into the SDK's protobuf ``kind``; the problem, or ``None``."""
    from a2a.types import a2a_pb2
    from google.protobuf.json_format import (  # type: ignore[import-untyped]
        ParseDict,
        ParseError,
    )

    try:
        ParseDict(dict(value), getattr(a2a_pb2, kind)())
    except (ParseError, ValueError, TypeError) as exc:
        return f"not an A2A {kind} in its JSON form ({str(exc)[:120]})"
    return None


def _card_interfaces(card: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    interfaces = card.get("supportedInterfaces")
    if not isinstance(interfaces, list):
        return []
    return [i for i in interfaces if isinstance(i, Mapping) and i.get("protocolBinding") == A2A_URI]


def _addresses(ctx: CheckContext) -> set[str]:
    plan = ctx.facts.plan
    return {a for a in (plan.link, plan.full_link, ctx.facts.target) if a}


@check(
    "a2a.extended-card",
    "GetExtendedAgentCard returns the card with the SimpleX interface",
    ("A2A-CARD-2", "A2A-ID-2", "A2A-RPC-4"),
    protocols=_A2A,
)
async def extended_card(ctx: CheckContext) -> Outcome:
    answer = await ctx.call(a2a_request(ctx, "GetExtendedAgentCard", {}))
    if ctx.transport == "rpc":
        # A2A-RPC-4: over Service RPC only the one-shot SendMessage is served (AMB-2, reading
        # B); a bot that answers the card there takes reading A, which is acceptable.
        if answer.envelope_error == "conversation_required":
            return ctx.passed("GetExtendedAgentCard over Service RPC: conversation_required")
        if result_of(answer.message) is not None:
            return ctx.acceptable("AMB-2", "GetExtendedAgentCard answered over Service RPC")
        return ctx.breach(f"expected conversation_required, got {describe(answer)}")
    card = result_of(answer.message)
    if card is None:
        return ctx.breach(f"GetExtendedAgentCard got {describe(answer)}")
    problem = _parse(card, "AgentCard")
    if problem is not None:
        return ctx.breach(f"the result is {problem}")
    interfaces = _card_interfaces(card)
    if not interfaces:
        return ctx.breach(
            f"supportedInterfaces lists no interface with protocolBinding {A2A_URI}",
            requirements=("A2A-ID-2",),
        )
    addresses = _addresses(ctx)
    if not any(i.get("url") in addresses for i in interfaces):
        return ctx.breach(
            "no SimpleX interface has the bot's address as its url",
            requirements=("A2A-ID-2",),
        )
    if not all(isinstance(i.get("protocolVersion"), str) for i in interfaces):
        return ctx.breach("a SimpleX interface has no protocolVersion", requirements=("A2A-ID-2",))
    return ctx.passed(f"the card lists {len(interfaces)} SimpleX interfaces at the bot's address")


@check(
    "a2a.card-interface-version",
    "The SimpleX interface's protocolVersion is a declared version",
    ("A2A-ID-5",),
    transports=("chat",),
    protocols=_A2A,
)
async def card_interface_version(ctx: CheckContext) -> Outcome:
    answer = await ctx.call(a2a_request(ctx, "GetExtendedAgentCard", {}))
    card = result_of(answer.message)
    if card is None:
        return ctx.untestable(f"no card ({describe(answer)})")
    declared = set(ctx.facts.versions("a2a"))
    versions = {str(i.get("protocolVersion")) for i in _card_interfaces(card)}
    if not versions:
        return ctx.untestable("the card lists no SimpleX interface")
    if not versions <= declared:
        return ctx.breach(
            f"the SimpleX interfaces name versions {sorted(versions)}, the declaration "
            f"{sorted(declared)}"
        )
    return ctx.passed("versions " + ", ".join(sorted(versions)))


def _version_outcome(ctx: CheckContext, answer: Answer, *, missing: bool) -> Outcome:
    if answer.envelope_error is not None:
        return ctx.breach(
            f"the envelope error {answer.envelope_error} in place of VersionNotSupportedError "
            "inside response (AMB-7)"
        )
    message = answer.message
    if message is None:
        return ctx.breach(f"got {describe(answer)}")
    if error_code(message) == VERSION_NOT_SUPPORTED:
        return ctx.passed("VersionNotSupportedError (-32009)")
    if missing and error_code(message) is not None:
        return ctx.acceptable("AMB-3", f"JSON-RPC error {error_code(message)}")
    if "result" in message:
        # GetExtendedAgentCard is a method of A2A 1.x (A2A 0.3 has another name for it), so a
        # result means the request was served as a version it did not ask for.
        what = "no A2A-Version" if missing else f"A2A-Version {UNSERVED_A2A_VERSION}"
        return ctx.breach(f"a request with {what} was served")
    return ctx.breach(f"expected VersionNotSupportedError, got {describe(answer)}")


@check(
    "a2a.unserved-version",
    "An unserved A2A-Version gets VersionNotSupportedError",
    ("A2A-SP-4",),
    transports=("chat",),
    protocols=_A2A,
)
async def unserved_version(ctx: CheckContext) -> Outcome:
    request = a2a_request(ctx, "GetExtendedAgentCard", {}, version=UNSERVED_A2A_VERSION)
    return _version_outcome(ctx, await ctx.call(request), missing=False)


@check(
    "a2a.missing-version",
    "A request without A2A-Version is not served as if it had one",
    ("A2A-SP-4",),
    transports=("chat",),
    protocols=_A2A,
)
async def missing_version(ctx: CheckContext) -> Outcome:
    request = a2a_request(ctx, "GetExtendedAgentCard", {}, version=None)
    answer = await ctx.call(request)
    if answer.silent:
        return ctx.breach("no answer (AMB-3: silence fails CALL-BOT-1)")
    return _version_outcome(ctx, answer, missing=True)


@check(
    "a2a.unserved-version-rpc",
    "An unserved A2A-Version gets VersionNotSupportedError over Service RPC",
    ("A2A-SP-4",),
    transports=("rpc",),
    profiles=FIXTURE,
    protocols=_A2A,
    messages=2,
)
async def unserved_version_rpc(ctx: CheckContext) -> Outcome:
    await needs_a2a_fixture(ctx)
    params = send_message_params(f"tck-complete-{ctx.next_id()}", "version probe")
    request = a2a_request(ctx, "SendMessage", params, version=UNSERVED_A2A_VERSION)
    return _version_outcome(ctx, await ctx.call(request), missing=False)


@check(
    "a2a.push-not-supported",
    "Push notification config methods get PushNotificationNotSupportedError",
    ("A2A-PUSH-1", "A2A-RPC-4"),
    protocols=_A2A,
)
async def push_not_supported(ctx: CheckContext) -> Outcome:
    params = {"taskId": random_task_id(ctx), "id": "conformance"}
    answer = await ctx.call(a2a_request(ctx, "GetTaskPushNotificationConfig", params))
    if ctx.transport == "rpc":
        # A2A-RPC-4 (AMB-2, reading B); answering -32003 there is reading A, acceptable
        if answer.envelope_error == "conversation_required":
            return ctx.passed("a push method over Service RPC: conversation_required")
        if error_code(answer.message) == PUSH_NOT_SUPPORTED:
            return ctx.acceptable("AMB-2", "a push method answered -32003 over Service RPC")
        return ctx.breach(f"expected conversation_required, got {describe(answer)}")
    if error_code(answer.message) == PUSH_NOT_SUPPORTED:
        return ctx.passed("PushNotificationNotSupportedError (-32003)")
    return ctx.breach(f"expected -32003, got {describe(answer)}")


@check(
    "a2a.streaming-over-rpc",
    "Streaming methods get conversation_required over Service RPC",
    ("A2A-STR-6",),
    transports=("rpc",),
    protocols=_A2A,
)
async def streaming_over_rpc(ctx: CheckContext) -> Outcome:
    answer = await ctx.call(a2a_request(ctx, "SubscribeToTask", {"id": random_task_id(ctx)}))
    if answer.envelope_error == "conversation_required":
        return ctx.passed("conversation_required")
    return ctx.breach(f"SubscribeToTask over Service RPC got {describe(answer)}")


@check(
    "a2a.other-methods-over-rpc",
    "Requests other than one-shot SendMessage get conversation_required over Service RPC",
    ("A2A-RPC-4",),
    transports=("rpc",),
    protocols=_A2A,
    messages=2,
)
async def other_methods_over_rpc(ctx: CheckContext) -> Outcome:
    wrong: list[str] = []
    for method, params in (("GetTask", {"id": random_task_id(ctx)}), ("ListTasks", {})):
        answer = await ctx.call(a2a_request(ctx, method, params))
        if answer.envelope_error != "conversation_required":
            wrong.append(f"{method}: {describe(answer)}")
    if wrong:
        return ctx.breach("expected conversation_required; " + "; ".join(wrong))
    return ctx.passed("conversation_required for GetTask and ListTasks")


@check(
    "a2a.unknown-task",
    "GetTask of an unknown task gets TaskNotFoundError",
    ("A2A-MSG-2",),
    transports=("chat",),
    protocols=_A2A,
)
async def unknown_task(ctx: CheckContext) -> Outcome:
    answer = await ctx.call(a2a_request(ctx, "GetTask", {"id": random_task_id(ctx)}))
    if error_code(answer.message) == TASK_NOT_FOUND:
        return ctx.passed("TaskNotFoundError (-32001)")
    return ctx.breach(f"expected TaskNotFoundError (-32001), got {describe(answer)}")


@check(
    "a2a.one-response",
    "A non-streaming method gets exactly one reply",
    ("A2A-MSG-3",),
    transports=("chat",),
    protocols=_A2A,
)
async def one_response(ctx: CheckContext) -> Outcome:
    answer = await ctx.call(a2a_request(ctx, "GetExtendedAgentCard", {}))
    if answer.final_reply is None:
        return ctx.breach(f"no response ({describe(answer)})")
    if len(answer.messages) != 1:
        return ctx.breach(f"{len(answer.messages)} replies to one GetExtendedAgentCard")
    return ctx.passed("one reply")


# --------------------------------------------------------------------------- fixture


def _task_state(result: Mapping[str, Any]) -> str | None:
    task = result.get("task")
    status = task.get("status") if isinstance(task, Mapping) else None
    state = status.get("state") if isinstance(status, Mapping) else None
    return state if isinstance(state, str) else None


def _task_id(result: Mapping[str, Any]) -> str | None:
    for key in ("task", "statusUpdate", "artifactUpdate"):
        holder = result.get(key)
        if isinstance(holder, Mapping):
            value = holder.get("id") if key == "task" else holder.get("taskId")
            if isinstance(value, str):
                return value
    return None


def _context_id(result: Mapping[str, Any]) -> str | None:
    task = result.get("task")
    value = task.get("contextId") if isinstance(task, Mapping) else None
    return value if isinstance(value, str) else None


async def _send(ctx: CheckContext, prefix: str, text: str, **options: Any) -> Answer:
    params = send_message_params(f"{prefix}-{ctx.next_id()}", text)
    return await ctx.call(a2a_request(ctx, "SendMessage", params), **options)


@check(
    "a2a.send-message",
    "SendMessage gets one reply: the task in A2A's JSON form",
    ("A2A-MSG-2", "A2A-MSG-3"),
    transports=("chat",),
    profiles=FIXTURE,
    protocols=_A2A,
    messages=2,
)
async def send_message(ctx: CheckContext) -> Outcome:
    await needs_a2a_fixture(ctx)
    answer = await _send(ctx, "tck-complete", "hello")
    result = result_of(answer.message)
    if result is None:
        return ctx.breach(f"SendMessage got {describe(answer)}")
    if len(answer.messages) != 1:
        return ctx.breach(
            f"{len(answer.messages)} replies to one SendMessage", requirements=("A2A-MSG-3",)
        )
    if "task" not in result:
        return ctx.breach("the result carries no task", requirements=("A2A-MSG-2",))
    problem = _parse(result["task"], "Task")
    if problem is not None:
        return ctx.breach(f"the task is {problem}", requirements=("A2A-MSG-2",))
    if _task_state(result) != "TASK_STATE_COMPLETED":
        return ctx.breach(f"the task's state is {_task_state(result)}, not TASK_STATE_COMPLETED")
    return ctx.passed("one reply: a completed task")


@check(
    "a2a.one-shot-rpc",
    "One-shot SendMessage is served over Service RPC with the task at its end of work",
    ("A2A-RPC-1", "A2A-RPC-2"),
    transports=("rpc",),
    profiles=FIXTURE,
    protocols=_A2A,
    messages=3,
)
async def one_shot_rpc(ctx: CheckContext) -> Outcome:
    await needs_a2a_fixture(ctx)
    expected = {"tck-complete": _TERMINAL, "tck-input-required": _INTERRUPTED}
    for prefix, states in expected.items():
        answer = await _send(ctx, prefix, "one shot")
        result = result_of(answer.message)
        if result is None:
            return ctx.breach(f"{prefix}: one-shot SendMessage got {describe(answer)}")
        if "message" in result:
            continue
        state = _task_state(result)
        if state not in states:
            return ctx.breach(
                f"{prefix}: the task is in {state}, not at the end of its work",
                requirements=("A2A-RPC-2",),
            )
    return ctx.passed("tasks answered at the end of their work")


def _stream_problems(
    request: Mapping[str, Any], replies: list[Reply], *, first_kinds: tuple[str, ...]
) -> tuple[list[str], list[str]]:
    """Problems of a stream: (problems, the requirements they break)."""
    problems: list[str] = []
    reqs: list[str] = []
    kinds: list[str] = []
    for reply in replies:
        message = reply.message
        if reply.quoted_item_id is None:
            problems.append(f"reply {reply.item_id} does not quote the command")
            reqs.append("A2A-STR-2")
        if message is None or "result" not in message:
            problems.append(f"reply {reply.item_id} is not a JSON-RPC result")
            reqs.append("A2A-STR-2")
            continue
        if message.get("id") != request.get("id"):
            problems.append(f"reply {reply.item_id} has id {message.get('id')!r}")
            reqs.append("A2A-STR-2")
        result = message["result"]
        present = [k for k in _STREAM_KINDS if isinstance(result, Mapping) and k in result]
        if len(present) != 1:
            problems.append(f"reply {reply.item_id} is not one StreamResponse")
            reqs.append("A2A-STR-2")
            continue
        kinds.append(present[0])
        problem = _parse(result, "StreamResponse")
        if problem is not None:
            problems.append(f"reply {reply.item_id} is {problem}")
            reqs.append("A2A-MSG-2")
    if kinds and kinds[0] not in first_kinds:
        problems.append(f"the stream starts with {kinds[0]}, not {' or '.join(first_kinds)}")
        reqs.append("A2A-STR-3")
    return problems, reqs


def _chunk_order(replies: list[Reply]) -> list[str]:
    names: list[str] = []
    for reply in replies:
        result = result_of(reply.message)
        update = result.get("artifactUpdate") if result is not None else None
        artifact = update.get("artifact") if isinstance(update, Mapping) else None
        name = artifact.get("name") if isinstance(artifact, Mapping) else None
        if isinstance(name, str):
            names.append(name)
    return names


def _end_problems(answer: Answer) -> list[str]:
    """A2A-STR-4: the last reply ends the stream, and nothing follows it."""
    from simplex_protocols.bindings.a2a import ends_stream

    replies = answer.messages
    final = answer.final_reply
    if final is None:
        return ["no reply ends the stream at a terminal or interrupted state"]
    after = [r for r in replies if r.item_id > final.item_id or r.after_final]
    problems = [f"{len(after)} replies follow the reply that ends the stream"] if after else []
    if final.message is not None and not ends_stream(final.message):
        problems.append("the last reply is not terminal")
    return problems


async def _stream_of_three(ctx: CheckContext) -> tuple[JSON, Answer]:
    """SendStreamingMessage ``tck-stream-3``, sent once and judged by the stream checks."""
    await needs_a2a_fixture(ctx)

    async def send() -> tuple[JSON, Answer]:
        params = send_message_params(f"tck-stream-3-{ctx.next_id()}", "stream")
        request = a2a_request(ctx, "SendStreamingMessage", params)
        return request, await ctx.call(request)

    return await ctx.shared("a2a-stream-3", send)


def _not_a_stream(answer: Answer) -> str | None:
    replies = answer.messages
    if not replies:
        return "no reply to SendStreamingMessage"
    if len(replies) == 1 and error_code(replies[0].message) is not None:
        return f"SendStreamingMessage got JSON-RPC error {error_code(replies[0].message)}"
    return None


@check(
    "a2a.stream-served",
    "SendStreamingMessage is served in a conversation",
    ("A2A-STR-1",),
    transports=("chat",),
    profiles=FIXTURE,
    protocols=_A2A,
    messages=2,
)
async def stream_served(ctx: CheckContext) -> Outcome:
    _request, answer = await _stream_of_three(ctx)
    problem = _not_a_stream(answer)
    if problem is not None:
        return ctx.breach(problem)
    return ctx.passed(f"{len(answer.messages)} stream replies")


@check(
    "a2a.stream-replies",
    "Each StreamResponse is one reply quoting the command, with the request's id",
    ("A2A-STR-2",),
    transports=("chat",),
    profiles=FIXTURE,
    protocols=_A2A,
    messages=2,
)
async def stream_replies(ctx: CheckContext) -> Outcome:
    request, answer = await _stream_of_three(ctx)
    if _not_a_stream(answer) is not None:
        return ctx.untestable(f"no stream to judge ({describe(answer)})")
    problems, reqs = _stream_problems(request, answer.messages, first_kinds=_STREAM_KINDS)
    if problems:
        return ctx.breach("; ".join(problems[:4]), requirements=tuple(dict.fromkeys(reqs)))
    return ctx.passed(f"{len(answer.messages)} replies, each one quoting StreamResponse")


@check(
    "a2a.stream-order",
    "Stream replies keep the stream's order",
    ("A2A-STR-3",),
    transports=("chat",),
    profiles=FIXTURE,
    protocols=_A2A,
    messages=2,
)
async def stream_order(ctx: CheckContext) -> Outcome:
    _request, answer = await _stream_of_three(ctx)
    if _not_a_stream(answer) is not None:
        return ctx.untestable(f"no stream to judge ({describe(answer)})")
    problems: list[str] = []
    first = result_of(answer.messages[0].message)
    if first is None or not ({"task", "message"} & set(first)):
        problems.append("the stream does not start with the task (or a message)")
    chunks = _chunk_order(answer.messages)
    if chunks != sorted(chunks) or len(chunks) != 3:
        problems.append("artifacts arrive as " + ", ".join(chunks) + ", not chunk-1 to chunk-3")
    if problems:
        return ctx.breach("; ".join(problems))
    return ctx.passed("the task first, then chunk-1, chunk-2 and chunk-3 in order")


@check(
    "a2a.stream-end",
    "A stream ends with its terminal state, and nothing follows",
    ("A2A-STR-4",),
    transports=("chat",),
    profiles=FIXTURE,
    protocols=_A2A,
    messages=2,
)
async def stream_end(ctx: CheckContext) -> Outcome:
    _request, answer = await _stream_of_three(ctx)
    if _not_a_stream(answer) is not None:
        return ctx.untestable(f"no stream to judge ({describe(answer)})")
    end = _end_problems(answer)
    if end:
        return ctx.breach("; ".join(end))
    return ctx.passed("the last reply is the completed task; nothing follows")


@check(
    "a2a.stream-interrupted",
    "A stream ends at input-required, and the task goes on with the next message",
    ("A2A-STR-4",),
    transports=("chat",),
    profiles=FIXTURE,
    protocols=_A2A,
    messages=3,
)
async def stream_interrupted(ctx: CheckContext) -> Outcome:
    await needs_a2a_fixture(ctx)
    params = send_message_params(f"tck-input-required-{ctx.next_id()}", "interrupt")
    request = a2a_request(ctx, "SendStreamingMessage", params)
    answer = await ctx.call(request)
    end = _end_problems(answer)
    if end:
        return ctx.breach("; ".join(end))
    final = answer.final_reply
    assert final is not None and final.message is not None
    from simplex_protocols.bindings.a2a import stream_item_state

    state = stream_item_state(final.message)
    if state not in _INTERRUPTED:
        return ctx.breach(f"the stream ended at {state}, not input-required")
    task_id = None
    for reply in answer.messages:
        result = result_of(reply.message)
        task_id = task_id or (_task_id(result) if result is not None else None)
    if task_id is None:
        return ctx.untestable("the stream named no task to continue")
    follow = await ctx.call(
        a2a_request(
            ctx,
            "SendMessage",
            send_message_params(f"tck-continue-{ctx.next_id()}", "done", task_id=task_id),
        )
    )
    result = result_of(follow.message)
    if result is None or _task_state(result) not in _TERMINAL:
        return ctx.breach(f"the next message on the task got {describe(follow)}")
    return ctx.passed("the stream stopped at input-required; the next message completed the task")


@check(
    "a2a.subscribe",
    "SubscribeToTask picks up a running task's stream in a conversation",
    ("A2A-STR-1", "A2A-STR-4"),
    transports=("chat",),
    profiles=FIXTURE,
    protocols=_A2A,
    messages=3,
)
async def subscribe(ctx: CheckContext) -> Outcome:
    await needs_a2a_fixture(ctx)
    params = send_message_params(f"tck-slow-30-{ctx.next_id()}", "subscribe")
    request = a2a_request(ctx, "SendStreamingMessage", params)

    def working(exchange: Any) -> bool:
        return any(
            (r := result_of(m.message)) is not None and _task_id(r) is not None
            for m in exchange.answer()
        )

    started = await ctx.call(request, done=working, wait_s=20)
    task_id = None
    for reply in started.messages:
        result = result_of(reply.message)
        task_id = task_id or (_task_id(result) if result is not None else None)
    if task_id is None:
        return ctx.breach(
            f"the slow task did not start ({describe(started)})", requirements=("A2A-STR-1",)
        )
    sub_request = a2a_request(ctx, "SubscribeToTask", {"id": task_id})
    resumed = await ctx.call(sub_request, wait_s=120)
    if resumed.silent or (
        len(resumed.messages) == 1 and error_code(resumed.messages[0].message) is not None
    ):
        return ctx.breach(f"SubscribeToTask got {describe(resumed)}", requirements=("A2A-STR-1",))
    # How each reply is written is a2a.stream-replies's business; here: served, and ended.
    end = _end_problems(resumed)
    if end:
        return ctx.breach("; ".join(end), requirements=("A2A-STR-4",))
    return ctx.passed(f"SubscribeToTask streamed {len(resumed.messages)} replies to the end")


@check(
    "a2a.isolation",
    "Another caller cannot see or continue a caller's task or context",
    ("A2A-AUTHZ-1", "A2A-AUTHZ-2"),
    transports=("chat",),
    profiles=FIXTURE,
    protocols=_A2A,
    identities=("A", "B"),
    messages=5,
)
async def isolation(ctx: CheckContext) -> Outcome:
    await needs_a2a_fixture(ctx)
    await ctx.caller("B")
    created = await _send(ctx, "tck-input-required", "mine")
    result = result_of(created.message)
    task_id = _task_id(result) if result is not None else None
    context_id = _context_id(result) if result is not None else None
    if task_id is None or context_id is None:
        return ctx.untestable(f"no task was created ({describe(created)})")
    own = await ctx.call(a2a_request(ctx, "GetTask", {"id": task_id}))
    if result_of(own.message) is None:
        return ctx.breach(
            f"the caller that created the task cannot get it ({describe(own)})",
            requirements=("A2A-AUTHZ-1",),
        )
    leaks: list[str] = []
    other = await ctx.call(a2a_request(ctx, "GetTask", {"id": task_id}), who="B")
    if error_code(other.message) != TASK_NOT_FOUND:
        leaks.append(f"GetTask by another caller got {describe(other)}")
    cont = await ctx.call(
        a2a_request(
            ctx,
            "SendMessage",
            send_message_params(f"tck-continue-{ctx.next_id()}", "theirs", task_id=task_id),
        ),
        who="B",
    )
    if error_code(cont.message) is None:
        leaks.append(f"a message on the task by another caller got {describe(cont)}")
    ctx_answer = await ctx.call(
        a2a_request(
            ctx,
            "SendMessage",
            send_message_params(f"tck-complete-{ctx.next_id()}", "theirs", context_id=context_id),
        ),
        who="B",
    )
    if error_code(ctx_answer.message) is None:
        leaks.append(f"a message in the context by another caller got {describe(ctx_answer)}")
    if leaks:
        return ctx.breach("; ".join(leaks), requirements=("A2A-AUTHZ-2",))
    return ctx.passed("another caller gets TaskNotFoundError for the task and its context")


@check(
    "a2a.oversize-chat",
    "An oversize answer becomes JSON-RPC error -32603 in a conversation",
    ("A2A-MSG-4", "CALL-SIZE-3"),
    transports=("chat",),
    profiles=FIXTURE,
    protocols=_A2A,
    messages=2,
)
async def oversize_chat(ctx: CheckContext) -> Outcome:
    await needs_a2a_fixture(ctx)
    answer = await _send(ctx, "tck-oversize", "big")
    if error_code(answer.message) == -32603:
        return ctx.passed("-32603")
    return ctx.breach(f"expected -32603, got {describe(answer)}")


@check(
    "a2a.oversize-rpc",
    "An oversize answer becomes too_large over Service RPC",
    ("A2A-MSG-4", "RPC-ERR-7"),
    transports=("rpc",),
    profiles=FIXTURE,
    protocols=_A2A,
    messages=2,
)
async def oversize_rpc(ctx: CheckContext) -> Outcome:
    await needs_a2a_fixture(ctx)
    answer = await _send(ctx, "tck-oversize", "big")
    if answer.envelope_error == "too_large":
        return ctx.passed("too_large")
    return ctx.breach(f"expected too_large, got {describe(answer)}")


@check(
    "a2a.slow-task-rpc",
    "A task that cannot finish in 180 s gets conversation_required within the window",
    ("A2A-RPC-3", "RPC-LIM-1"),
    transports=("rpc",),
    profiles=FIXTURE,
    protocols=_A2A,
    messages=2,
)
async def slow_task_rpc(ctx: CheckContext) -> Outcome:
    await needs_a2a_fixture(ctx)
    answer = await _send(ctx, "tck-slow-200", "slow", wait_s=180)
    if answer.envelope_error == "conversation_required":
        return ctx.passed("conversation_required within the window")
    if answer.rpc is None or answer.rpc.response is None:
        return ctx.breach(f"no response within the 180 s window ({describe(answer)})")
    return ctx.breach(f"expected conversation_required, got {describe(answer)}")
