"""decl.business-chat-answers (DECL-PROTO-16) against business bots: one whose owner answers
every protocol its business chats declare passes, and one that leaves ``a2a`` unanswered
fails, naming it."""

from __future__ import annotations

import pytest

from simplex_protocols.conformance._model import LiveOptions, Verdict
from simplex_protocols.conformance.live import run_bot_async

pytestmark = pytest.mark.anyio

CHECK = "decl.business-chat-answers@chat"


@pytest.mark.requirement("DECL-PROTO-16")
async def test_decl_proto_16_a_business_owner_answering_every_declared_protocol_passes() -> None:
    # This mutant only makes the reference bot's address a business address (its other change,
    # transports.rpc in the chats' preferences, is DECL-PROTO-7's): its owner answers both.
    runs = await run_bot_async(
        LiveOptions(builtin="bot.business-address-declaring-rpc", seed=2, checks=("DECL-PROTO-16",))
    )
    [run] = [r for r in runs if r.key == CHECK]
    assert run.outcome.verdict is Verdict.PASS, run.outcome.detail
    assert run.outcome.detail == "the owner answers a2a, mcp in the business chat"


@pytest.mark.requirement("DECL-PROTO-16")
async def test_decl_proto_16_a_declared_protocol_left_unanswered_fails() -> None:
    runs = await run_bot_async(
        LiveOptions(builtin="bot.business-chat-ignores-a2a", seed=2, checks=("DECL-PROTO-16",))
    )
    [run] = [r for r in runs if r.key == CHECK]
    assert run.outcome.verdict is Verdict.FAIL
    assert run.outcome.detail.startswith(
        "the business chat declares protocols its owner does not answer there: a2a ("
    )
    assert "mcp" not in run.outcome.detail
