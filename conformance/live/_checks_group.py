"""Opt-in group checks: mention routing and broadcasts, in a test group with the bot in it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from simplex_protocols.conformance._model import Outcome

from ._context import CheckContext, call_text, final_rule
from ._probes import probe_request
from ._registry import check
from ._session import ChatExchange


def _answered(
    exchange: ChatExchange, member: int, rule: Callable[[Mapping[str, Any]], bool]
) -> bool:
    return any(r.message is not None and rule(r.message) for r in exchange.answer(member))


@check(
    "group.mention-routing",
    "The mentioned bot answers; when another member is mentioned, it stays silent",
    ("CALL-GRP-1", "CALL-BOT-1"),
    transports=("chat",),
    group=True,
    messages=2,
)
async def mention_routing(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    setup = await ctx.environment.group()
    group = setup.groups["A"]
    target = setup.target_member["A"]
    request = probe_request(ctx, ctx.protocol)
    rule = final_rule(ctx.protocol, request)
    text = call_text(ctx.protocol, request, mention_name=setup.target_name)
    mentioned = await ctx.session.chat(
        "A", text, chat=group, done=lambda ex: _answered(ex, target, rule)
    )
    if not _answered(mentioned, target, rule):
        return ctx.breach(
            "the bot did not answer a /_call that mentions it", requirements=("CALL-BOT-1",)
        )
    request = probe_request(ctx, ctx.protocol)
    rule = final_rule(ctx.protocol, request)
    other = setup.other_member
    text = call_text(ctx.protocol, request, mention_name=setup.other_name)

    def other_done(exchange: ChatExchange) -> bool:
        return other is not None and _answered(exchange, other, rule)

    elsewhere = await ctx.session.chat("A", text, chat=group, done=other_done, wait_s=ctx.silence_s)
    # Silence means no answer to the command: a reply that quotes it, or a protocol message.
    wrong = [
        m
        for m in elsewhere.answer(target)
        if m.quoted_item_id is not None
        or (m.message is not None and ("result" in m.message or "error" in m.message))
    ]
    if wrong:
        return ctx.breach(
            f"the bot answered a /_call that mentions {setup.other_name} ({len(wrong)} replies)",
            requirements=("CALL-GRP-1",),
        )
    return ctx.passed("the mentioned bot answered; mentioned elsewhere, it stayed silent")


@check(
    "group.broadcast",
    "A /_call without a mention is answered by every member serving the protocol",
    ("CALL-GRP-2",),
    transports=("chat",),
    group=True,
)
async def broadcast(ctx: CheckContext) -> Outcome:
    assert ctx.protocol is not None
    setup = await ctx.environment.group()
    group = setup.groups["A"]
    target = setup.target_member["A"]
    request = probe_request(ctx, ctx.protocol)
    rule = final_rule(ctx.protocol, request)
    members = {target, *setup.serving_members}

    def everyone(exchange: ChatExchange) -> bool:
        return all(_answered(exchange, m, rule) for m in members)

    exchange = await ctx.session.chat(
        "A", call_text(ctx.protocol, request), chat=group, done=everyone
    )
    if not _answered(exchange, target, rule):
        return ctx.breach("the bot did not answer a broadcast /_call")
    missing = [m for m in setup.serving_members if not _answered(exchange, m, rule)]
    if missing:
        ctx.note(f"members {missing} did not answer either")
    return ctx.passed(f"answered by {len(members) - len(missing)} serving members")
