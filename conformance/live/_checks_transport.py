"""Checks of the two transports, whatever the protocol: declared means answered, replies quote
the command and are JSON objects, envelopes are well formed, signatures and ``requestKey`` are
checked, and both transports carry the same answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simplex_protocols._schema import validate
from simplex_protocols.conformance._model import Outcome

from ._context import Answer, CheckContext, FixtureMissing, call_text, raw_reproducer
from ._fixture_names import FIXTURE_RATE_LIMIT
from ._probes import (
    RECOMMENDED_JSON_BYTES,
    UNKNOWN_PROTOCOL,
    UNSERVED_A2A_VERSION,
    a2a_request,
    describe,
    error_code,
    mcp_request,
    needs_a2a_fixture,
    needs_mcp_tool,
    probe_request,
    response_size,
    send_message_params,
)
from ._registry import BOTH, FIXTURE, check

JSON = dict[str, Any]


# --------------------------------------------------------------------------- declared => answers


def _declared_answers_chat(protocol: str) -> Any:
    async def run(ctx: CheckContext) -> Outcome:
        answer = await ctx.call(probe_request(ctx, protocol), protocol=protocol)
        if answer.message is None:
            return ctx.breach(
                f"the bot declares {protocol} over chat, and a /_call {protocol} got "
                + describe(answer)
            )
        return ctx.passed(f"answered: {describe(answer)}")

    return run


def _declared_answers_rpc(protocol: str) -> Any:
    async def run(ctx: CheckContext) -> Outcome:
        answer = await ctx.call(probe_request(ctx, protocol), protocol=protocol)
        rpc = answer.rpc
        assert rpc is not None
        if rpc.response is None:
            chain = rpc.core_error.chain if rpc.core_error is not None else []
            if "notDRAddress" in chain:
                return ctx.breach(
                    "the address takes no Service RPC requests (A_SERVICE notDRAddress): it "
                    "has no ratchet keys (RPC-CORE-2)",
                    requirements=("DECL-PROTO-13", "RPC-CORE-2"),
                )
            if rpc.timed_out:
                return ctx.breach(
                    "no response before the timeout: the bot's core may run without "
                    "service_requests=on (RPC-CORE-1)",
                    requirements=("DECL-PROTO-13", "RPC-CORE-1"),
                )
            return ctx.breach(f"the request failed: {describe(answer)}")
        if rpc.error_code == "unsupported_protocol":
            return ctx.breach(
                f"the bot declares {protocol} over rpc but answers unsupported_protocol"
            )
        return ctx.passed(f"answered: {describe(answer)}")

    return run


for _protocol in ("mcp", "a2a"):
    check(
        f"{_protocol}.declared-chat",
        f"Declaring {_protocol} over chat means /_call {_protocol} is answered",
        ("DECL-PROTO-12", "CALL-BOT-1"),
        transports=("chat",),
        protocols=(_protocol,),
    )(_declared_answers_chat(_protocol))
    check(
        f"{_protocol}.declared-rpc",
        f"Declaring {_protocol} over rpc means Service RPC requests are answered",
        ("DECL-PROTO-13", "RPC-CORE-1", "RPC-CORE-2"),
        transports=("rpc",),
        protocols=(_protocol,),
    )(_declared_answers_rpc(_protocol))


# --------------------------------------------------------------------------- chat


@check(
    "chat.reply-quotes-command",
    "Every reply quotes the command",
    ("CALL-REP-1",),
    transports=("chat",),
)
async def replies_quote(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    answer = await ctx.call(probe_request(ctx, ctx.protocol))
    if answer.silent:
        return ctx.untestable("no reply came back to judge")
    assert answer.chat is not None
    unquoted = [m.item_id for m in answer.messages if m.quoted_item_id is None]
    if unquoted:
        return ctx.breach(
            f"{len(unquoted)} of {len(answer.messages)} replies do not quote the command",
            items=unquoted,
        )
    return ctx.passed(f"{len(answer.messages)} replies, each quoting the command")


@check(
    "chat.reply-is-json-object",
    "Every reply's text is one JSON object",
    ("CALL-REP-2",),
    transports=("chat",),
)
async def replies_are_objects(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    answer = await ctx.call(probe_request(ctx, ctx.protocol))
    if answer.silent:
        return ctx.untestable("no reply came back to judge")
    texts = [m for m in answer.messages if m.message is None]
    if texts:
        return ctx.breach(
            f"{len(texts)} of {len(answer.messages)} replies are not a JSON object "
            f"(first: {texts[0].text[:80]!r})"
        )
    return ctx.passed(f"{len(answer.messages)} replies, each a JSON object")


@check(
    "chat.command-is-whole-text",
    "A message that only contains /_call later in its text is not a command",
    ("CALL-CMD-6",),
    transports=("chat",),
)
async def command_whole_text(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    text = "conformance check, please ignore: " + call_text(
        ctx.protocol, probe_request(ctx, ctx.protocol)
    )
    answer = await ctx.send_text(text, wait_s=ctx.silence_s)
    # A bot may talk to people (a help text); answering the call inside the text is the fault.
    answered = [m for m in answer.messages if _is_protocol_answer(m.message)]
    if answered:
        return ctx.breach(
            "the bot answered the /_call inside a message whose text does not start with "
            f"/_call ({len(answered)} protocol replies)"
        )
    if answer.messages:
        return ctx.passed(f"no protocol answer ({len(answer.messages)} text replies)")
    return ctx.passed(f"no reply within {ctx.silence_s:g} s")


def _is_protocol_answer(message: Mapping[str, Any] | None) -> bool:
    return message is not None and ("result" in message or "error" in message)


@check(
    "chat.unserved-protocol",
    "A /_call for a protocol the bot does not serve gets no protocol answer",
    ("DECL-PROTO-12",),
    transports=("chat",),
)
async def unserved_protocol(ctx: CheckContext) -> Outcome:
    request = {"jsonrpc": "2.0", "id": ctx.next_id(), "method": "ping", "params": {}}
    answer = await ctx.send_text(
        call_text(UNKNOWN_PROTOCOL, request), wait_s=ctx.silence_s, protocol=UNKNOWN_PROTOCOL
    )
    if not answer.messages:
        return ctx.passed(f"no reply within {ctx.silence_s:g} s (AMB-1, reading A)")
    if all(m.message is None for m in answer.messages):
        return ctx.acceptable("AMB-1", "the bot replied with text that is not a protocol message")
    return ctx.warn(
        f"the bot answered a /_call {UNKNOWN_PROTOCOL} with a protocol message, as if it served "
        "the protocol (AMB-1)"
    )


@check(
    "chat.malformed-request",
    "A /_call whose request is not JSON gets the binding's error",
    ("CALL-BOT-1",),
    transports=("chat",),
)
async def malformed_request(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    text = f'/_call {ctx.protocol} {{"jsonrpc": "2.0", "id": 1, "method":'
    answer = await ctx.send_text(
        text, final=lambda m: "error" in m or "result" in m, protocol=ctx.protocol
    )
    if not answer.messages:
        return ctx.warn("the bot stayed silent (AMB-27: silence is reported WARN)")
    final = answer.final_reply
    if final is not None and error_code(final.message) in (-32700, -32600):
        if final.quoted_item_id is None:
            return ctx.breach(
                "the parse error does not quote the command", requirements=("CALL-REP-1",)
            )
        return ctx.passed(f"JSON-RPC error {error_code(final.message)}, quoting the command")
    if all(m.message is None for m in answer.messages):
        return ctx.acceptable("AMB-27", "the bot replied with text that is not a protocol message")
    return ctx.acceptable("AMB-27", "the bot replied with another protocol message")


# --------------------------------------------------------------------------- Service RPC


def _envelope_problems(envelope: Mapping[str, Any]) -> list[str]:
    problems = [
        f"breaks the response schema at {issue.instance_path or '/'}"
        for issue in validate("service-response", dict(envelope))
    ]
    has_response = "response" in envelope
    has_error = "error" in envelope
    if has_response and has_error:
        problems.append("has both response and error")
    elif not has_response and not has_error:
        problems.append("has neither response nor error")
    return problems


@check(
    "rpc.envelope-shape",
    "Response envelopes have exactly one of response and error and match their schema",
    ("RPC-ENV-1", "RPC-ENV-2"),
    transports=("rpc",),
    messages=2,
)
async def envelope_shape(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    good = await ctx.call(probe_request(ctx, ctx.protocol))
    bad = await ctx.call(probe_request(ctx, ctx.protocol), protocol=UNKNOWN_PROTOCOL)
    problems: list[str] = []
    seen = 0
    for what, answer in (("the response", good), ("the error", bad)):
        rpc = answer.rpc
        if rpc is None or rpc.response is None:
            continue
        seen += 1
        problems += [f"{what} {p}" for p in _envelope_problems(rpc.response)]
    if seen == 0:
        return ctx.untestable("no response envelope came back")
    if problems:
        only_one = any("both" in p or "neither" in p for p in problems)
        reqs = ("RPC-ENV-1",) if only_one else ("RPC-ENV-2",)
        return ctx.breach("; ".join(problems), requirements=reqs)
    return ctx.passed(f"{seen} envelopes, each well formed")


@check(
    "rpc.unsupported-protocol",
    "A protocol not served over Service RPC gets unsupported_protocol",
    ("RPC-ERR-2",),
    transports=("rpc",),
)
async def unsupported_protocol(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    answer = await ctx.call(probe_request(ctx, ctx.protocol), protocol=UNKNOWN_PROTOCOL)
    if answer.envelope_error == "unsupported_protocol":
        return ctx.passed("unsupported_protocol")
    return ctx.breach(f"expected unsupported_protocol, got {describe(answer)}")


@check(
    "rpc.malformed-envelope",
    "An invalid envelope gets bad_request",
    ("RPC-ERR-4",),
    transports=("rpc",),
    messages=2,
)
async def malformed_envelope(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    request = probe_request(ctx, ctx.protocol)
    cases: list[tuple[str, JSON]] = [
        ("no protocol", {"request": request}),
        ("a protocol that is not a string", {"protocol": 7, "request": request}),
    ]
    wrong: list[str] = []
    for what, envelope in cases:
        answer = await ctx.call(request, envelope=envelope)
        if answer.envelope_error != "bad_request":
            wrong.append(f"{what}: {describe(answer)}")
            ctx.reproduce = raw_reproducer("rpc", _text(envelope))
    if wrong:
        return ctx.breach("expected bad_request; " + "; ".join(wrong))
    return ctx.passed("bad_request for each invalid envelope")


def _text(value: Any) -> str:
    from simplex_protocols._wire import dumps

    return dumps(value)


@check(
    "rpc.request-key-mismatch",
    "A requestKey that is not the signer's key gets bad_request",
    ("RPC-SIG-3", "RPC-ERR-4"),
    transports=("rpc",),
)
async def request_key_mismatch(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    signer, other = ctx.new_key(), ctx.new_key()
    request = probe_request(ctx, ctx.protocol)
    answer = await ctx.call(request, sign=signer, request_key=other.public_key.encode())
    ctx.reproduce = raw_reproducer(
        "rpc",
        "signed with one key, requestKey of another: "
        + _text(answer.rpc.envelope if answer.rpc else {}),
    )
    if answer.envelope_error == "bad_request":
        return ctx.passed("bad_request")
    return ctx.breach(f"expected bad_request, got {describe(answer)}")


@check(
    "rpc.unsigned-request-key",
    "An unsigned request that carries requestKey gets bad_request",
    ("RPC-SIG-4", "RPC-ERR-4"),
    transports=("rpc",),
)
async def unsigned_request_key(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    request = probe_request(ctx, ctx.protocol)
    answer = await ctx.call(request, request_key=ctx.new_key().public_key.encode())
    ctx.reproduce = raw_reproducer(
        "rpc", "unsigned: " + _text(answer.rpc.envelope if answer.rpc else {})
    )
    if answer.envelope_error == "bad_request":
        return ctx.passed("bad_request")
    return ctx.breach(f"expected bad_request, got {describe(answer)}")


@check(
    "rpc.signed-request",
    "A request signed with the key in requestKey is served",
    ("DECL-PROTO-13",),
    transports=("rpc",),
)
async def signed_request(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    answer = await ctx.call(probe_request(ctx, ctx.protocol), sign=ctx.new_key())
    if answer.rpc is None or answer.rpc.response is None:
        return ctx.breach(f"a signed request got {describe(answer)}")
    if answer.envelope_error in ("bad_request", "unsupported_protocol"):
        return ctx.breach(f"a correctly signed request got {answer.envelope_error}")
    return ctx.passed(f"served: {describe(answer)}")


@check(
    "rpc.extra-members",
    "Unknown envelope members do not make a request invalid",
    ("RPC-REQ-7",),
    transports=("rpc",),
)
async def extra_members(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    request = probe_request(ctx, ctx.protocol)
    envelope = {"protocol": ctx.protocol, "request": request, "x-conformance": {"probe": True}}
    answer = await ctx.call(request, envelope=envelope)
    ctx.reproduce = raw_reproducer("rpc", _text(envelope))
    if answer.envelope_error == "bad_request":
        return ctx.breach("an envelope with an extra member got bad_request")
    if answer.rpc is None or answer.rpc.response is None:
        return ctx.breach(f"an envelope with an extra member got {describe(answer)}")
    return ctx.passed(f"served: {describe(answer)}")


@check(
    "rpc.protocol-error-in-response",
    "A protocol error travels inside response, not as an envelope error",
    ("RPC-ENV-4",),
    transports=("rpc",),
)
async def protocol_error_in_response(ctx: CheckContext) -> Outcome:
    if ctx.protocol == "a2a":
        if ctx.options.profile.value != "fixture":
            return ctx.untestable(
                "over Service RPC, A2A answers every read-only request but the card with "
                "conversation_required; the probe needs the fixture profile"
            )
        await needs_a2a_fixture(ctx)
        request = a2a_request(
            ctx,
            "SendMessage",
            send_message_params(f"tck-complete-{ctx.next_id()}", "probe"),
            version="9.9",
        )
    else:
        request = mcp_request(ctx, "conformance/unknown-method")
    answer = await ctx.call(request)
    if answer.envelope_error is not None:
        return ctx.breach(
            f"a request the protocol refuses got the envelope error {answer.envelope_error}"
        )
    if error_code(answer.message) is None:
        return ctx.breach(f"expected a JSON-RPC error inside response, got {describe(answer)}")
    return ctx.passed(f"JSON-RPC error {error_code(answer.message)} inside response")


@check(
    "rpc.response-size",
    "Responses stay within 10,000 bytes of JSON",
    ("RPC-LIM-3",),
    transports=("rpc",),
)
async def response_size_check(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    answer = await ctx.call(probe_request(ctx, ctx.protocol))
    if answer.rpc is None or answer.rpc.response is None:
        return ctx.untestable(f"no response to measure ({describe(answer)})")
    size = response_size(answer.rpc.response)
    if size > RECOMMENDED_JSON_BYTES:
        return ctx.breach(f"the response has {size} bytes of JSON", bytes=size)
    return ctx.passed(f"{size} bytes", bytes=size)


@check(
    "rpc.rate-limit",
    "rate_limited carries retryAfter, and a repeat after it is served",
    ("RPC-ENV-6",),
    transports=("rpc",),
    profiles=FIXTURE,
    messages=FIXTURE_RATE_LIMIT[0] + 3,
)
async def rate_limit(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    key = ctx.new_key()
    if ctx.protocol == "mcp":
        await needs_mcp_tool(ctx, "conformance_echo")

        def request() -> JSON:
            return mcp_request(
                ctx, "tools/call", {"name": "conformance_echo", "arguments": {"text": "rate"}}
            )
    else:
        await needs_a2a_fixture(ctx)

        def request() -> JSON:
            return a2a_request(
                ctx, "SendMessage", send_message_params(f"tck-complete-{ctx.next_id()}", "rate")
            )

    limited: Answer | None = None
    for _ in range(FIXTURE_RATE_LIMIT[0] + 1):
        body = request()
        envelope = {
            "protocol": ctx.protocol,
            "request": body,
            "requestKey": key.public_key.encode(),
        }
        exchange = await ctx.session.rpc("A", envelope, sign=key, respect_retry=False)
        answer = Answer("rpc", ctx.protocol, body, lambda _m: True, rpc=exchange)
        if answer.envelope_error == "rate_limited":
            limited = answer
            break
    if limited is None or limited.rpc is None or limited.rpc.response is None:
        raise FixtureMissing(
            f"no rate_limited after {FIXTURE_RATE_LIMIT[0] + 1} signed requests (the fixture "
            f"limits one key to {FIXTURE_RATE_LIMIT[0]} per {FIXTURE_RATE_LIMIT[1]:g} s)",
            "rate limit",
        )
    error = limited.rpc.response.get("error")
    retry = error.get("retryAfter") if isinstance(error, Mapping) else None
    if not isinstance(retry, int) or isinstance(retry, bool):
        return ctx.warn("rate_limited without retryAfter (AMB-10)")
    ctx.note(f"waiting retryAfter {retry} s before repeating")
    await ctx.session.clock.sleep(float(retry))
    body = request()
    envelope = {"protocol": ctx.protocol, "request": body, "requestKey": key.public_key.encode()}
    exchange = await ctx.session.rpc("A", envelope, sign=key, respect_retry=False)
    if exchange.error_code == "rate_limited":
        return ctx.warn(f"a repeat after retryAfter ({retry} s) was refused again")
    return ctx.passed(f"rate_limited with retryAfter {retry}; served again after it")


# --------------------------------------------------------------------------- equivalence


def _equivalence(protocol: str) -> Any:
    async def run(ctx: CheckContext) -> Outcome:
        if protocol == "mcp":
            request = mcp_request(ctx, "tools/list")
        else:
            # Over Service RPC an A2A bot serves only the one-shot SendMessage (A2A-RPC-4),
            # whose task is new on each call: a SendMessage of a version nobody serves gets
            # the same VersionNotSupportedError on both transports.
            params = send_message_params(f"tck-complete-{ctx.next_id()}", "version probe")
            request = a2a_request(ctx, "SendMessage", params, version=UNSERVED_A2A_VERSION)
        chat = await ctx.call(request, protocol=protocol, transport="chat")
        rpc = await ctx.call(request, protocol=protocol, transport="rpc")
        if chat.message is None:
            return ctx.untestable(f"no final reply in the conversation ({describe(chat)})")
        if rpc.message is None:
            return ctx.breach(f"no response over Service RPC ({describe(rpc)})")
        if chat.message != rpc.message:
            differing = sorted(_differences(chat.message, rpc.message))[:5]
            return ctx.breach(
                "the last reply and the envelope's response differ at " + ", ".join(differing),
                paths=differing,
            )
        return ctx.passed("the last reply equals the envelope's response")

    return run


def _differences(a: Any, b: Any, path: str = "") -> set[str]:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        out: set[str] = set()
        for key in set(a) | set(b):
            if key not in a or key not in b:
                out.add(f"{path}/{key}")
            else:
                out |= _differences(a[key], b[key], f"{path}/{key}")
        return out
    return set() if a == b else {path or "/"}


for _protocol in ("mcp", "a2a"):
    check(
        f"{_protocol}.same-answer-both-transports",
        "The same request gets the same answer over /_call and over Service RPC",
        ("NAME-2", "RPC-ENV-3"),
        transports=("-",),
        protocols=(_protocol,),
        profiles=BOTH,
        messages=2,
        needs=("chat", "rpc"),
        mutation_exempt=(
            None
            if _protocol == "mcp"
            else "an A2A request answered over both transports with a result (the one-shot "
            "SendMessage) gets a new task each time, so it is compared on an error answer, "
            "which the result-changing mutant leaves alone; mcp's variant is killed by it"
        ),
    )(_equivalence(_protocol))
