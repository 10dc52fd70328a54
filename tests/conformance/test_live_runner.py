"""How a live run decides what to run and what it may send: applicability from the bot's
declarations, missing fixtures, the message budget, the dry run, unreachable targets, and
the real-core path (a ``--core`` other than the built-in simulator)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols.bot import ResponderBot
from simplex_protocols.conformance._model import (
    LiveOptions,
    OptionsError,
    Profile,
    TargetUnreachableError,
    Verdict,
)
from simplex_protocols.conformance.live import (
    reference_bot,
    run_bot,
    run_bot_async,
    run_on_simulator,
)
from simplex_protocols.conformance.live._proxy import Rewrite, RewritingBackend
from simplex_protocols.core import parse_core_option
from simplex_protocols.sim import default_network

pytestmark = pytest.mark.anyio


class CountingRewrite(Rewrite):
    """Keeps the type of every event that would reach the bot about a peer."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def incoming(self, event: dict[str, Any]) -> dict[str, Any] | None:
        if event.get("type") in (
            "newChatItems",
            "serviceRequest",
            "receivedContactRequest",
            "contactConnected",
            "acceptingContactRequest",
        ):
            self.events.append(str(event["type"]))
        return event


async def test_a_bot_declaring_only_mcp_over_chat_gets_a2a_and_rpc_checks_na() -> None:
    def make(data_dir: Path, clock: Clock) -> ResponderBot:
        return reference_bot(
            data_dir=data_dir, clock=clock, protocols=("mcp",), transports=("chat",)
        )

    runs = await run_on_simulator(LiveOptions(builtin=None, target="-", seed=2), make)
    by_key = {r.key: r.outcome for r in runs}
    for key, outcome in by_key.items():
        spec_id, transport = key.split("@")
        if spec_id.startswith("a2a.") or transport == "rpc":
            assert outcome.verdict is Verdict.NA, (key, outcome.detail)
    assert by_key["a2a.stream-served@chat"].detail == "the bot does not declare a2a"
    assert "over rpc" in by_key["mcp.discover@rpc"].detail
    assert by_key["mcp.same-answer-both-transports@-"].verdict is Verdict.NA
    assert by_key["mcp.discover@chat"].verdict is Verdict.PASS
    assert by_key["mcp.progress@chat"].verdict is Verdict.PASS
    assert not [k for k, o in by_key.items() if o.verdict not in (Verdict.PASS, Verdict.NA)]


async def test_a_bot_without_the_fixture_is_untestable_not_failing() -> None:
    def make(data_dir: Path, clock: Clock) -> ResponderBot:
        tools: MCPServer[Any] = MCPServer("plain", subscriptions=False, log_level="WARNING")

        @tools.tool(structured_output=False)
        async def availability(item: str) -> str:
            return f"12 {item}s are in stock."

        return ResponderBot(display_name="plain", mcp=tools, data_dir=data_dir, clock=clock)

    runs = await run_on_simulator(LiveOptions(target="-", seed=2), make)
    by_key = {r.key: r.outcome for r in runs}
    assert by_key["mcp.oversize-chat@chat"].verdict is Verdict.UNTESTABLE
    assert "conformance_oversize" in by_key["mcp.oversize-chat@chat"].detail
    assert by_key["mcp.input-required@rpc"].verdict is Verdict.UNTESTABLE
    assert by_key["mcp.discover@rpc"].verdict is Verdict.PASS
    assert not [k for k, o in by_key.items() if o.verdict in (Verdict.FAIL, Verdict.ERROR)]


async def test_the_budget_caps_what_is_sent_and_the_rest_is_untestable() -> None:
    runs = await run_bot_async(LiveOptions(builtin="reference", seed=2, budget=12))
    sent = sum(1 for r in runs for e in r.outcome.transcript if e["dir"] == "out")
    assert 0 < sent <= 12
    over = [r for r in runs if r.outcome.verdict is Verdict.UNTESTABLE]
    assert over and all("budget" in r.outcome.detail for r in over)
    assert not [r for r in runs if r.outcome.verdict in (Verdict.FAIL, Verdict.ERROR)]


async def test_a_dry_run_lists_the_messages_and_sends_nothing(tmp_path: Path) -> None:
    network = default_network()
    bot_core = f"dry-bot-{uuid.uuid4().hex[:8]}"
    suite = f"dry-suite-{uuid.uuid4().hex[:8]}"
    network.add_user(suite, peer_type="agent")
    bot = reference_bot(data_dir=tmp_path / "bot")
    seen = CountingRewrite()
    backend = RewritingBackend(network.backend(bot_core), seen, SystemClock())
    async with bot.serving(backend):
        options = LiveOptions(
            target=bot.address,
            core=parse_core_option(f"sim:{suite}"),
            dry_run=True,
            seed=2,
        )
        runs = await run_bot_async(options)
    would_send = [r for r in runs if r.outcome.detail == "dry run"]
    assert len(would_send) >= 60
    assert all(r.outcome.verdict is Verdict.NA for r in would_send)
    for run in would_send:
        assert all(e["dir"] == "out" for e in run.outcome.transcript)
    assert all(run.outcome.transcript for run in would_send if run.transport != "-")
    texts = [e.get("text", "") for r in would_send for e in r.outcome.transcript]
    assert any(t.startswith("/_call mcp ") for t in texts)
    assert not any(bot.address in str(e) for r in runs for e in r.outcome.transcript)
    # The bot under test saw no contact request, no message and no Service RPC request.
    assert seen.events == []


async def test_the_real_core_path_runs_against_a_bot_at_an_address(tmp_path: Path) -> None:
    network = default_network()
    bot_core = f"real-bot-{uuid.uuid4().hex[:8]}"
    suite = f"real-suite-{uuid.uuid4().hex[:8]}"
    network.add_user(suite, peer_type="agent")
    bot = reference_bot(data_dir=tmp_path / "bot")
    async with bot.serving(network.backend(bot_core)):
        options = LiveOptions(
            target=bot.address,
            core=parse_core_option(f"sim:{suite}"),
            seed=2,
            timeout_s=5.0,
            checks=(
                "decl",
                "mcp.declared-chat",
                "rpc.request-key-mismatch",
                "mcp.request-state-other-caller",
                "group.broadcast",
            ),
        )
        with anyio.fail_after(60):
            runs = await run_bot_async(options)
    by_key = {r.key: r.outcome for r in runs}
    assert by_key["decl.protocols@-"].verdict is Verdict.PASS
    assert by_key["mcp.declared-chat@chat"].verdict is Verdict.PASS
    assert by_key["rpc.request-key-mismatch@rpc"].verdict is Verdict.PASS
    assert by_key["mcp.request-state-other-caller@rpc"].verdict is Verdict.PASS
    # The second caller is a second user of the same core.
    assert by_key["mcp.request-state-other-caller@chat"].verdict is Verdict.PASS
    # No test group was given.
    assert by_key["group.broadcast@chat"].verdict is Verdict.UNTESTABLE


async def test_an_unknown_address_is_unreachable() -> None:
    suite = f"lost-suite-{uuid.uuid4().hex[:8]}"
    default_network().add_user(suite)
    options = LiveOptions(
        target="https://smp1.sim.test/a#" + "A" * 43, core=parse_core_option(f"sim:{suite}")
    )
    with pytest.raises(TargetUnreachableError):
        await run_bot_async(options)


def test_a_core_that_cannot_be_reached_is_unreachable() -> None:
    options = LiveOptions(
        target="https://smp1.sim.test/a#" + "A" * 43,
        core=parse_core_option("ws://127.0.0.1:9"),
    )
    with pytest.raises(TargetUnreachableError):
        run_bot(options)


@pytest.mark.parametrize(
    "options",
    [
        LiveOptions(),
        LiveOptions(builtin="bot.no-such-mutant"),
        LiveOptions(builtin="reference", transports=("smoke",)),
        LiveOptions(builtin="reference", transports=()),
        LiveOptions(builtin="reference", budget=-1),
        LiveOptions(builtin="reference", timeout_s=0),
    ],
)
def test_options_that_cannot_run_are_refused_before_anything_is_sent(
    options: LiveOptions,
) -> None:
    with pytest.raises(OptionsError):
        run_bot(options)


async def test_filters_and_profiles_select_the_checks() -> None:
    runs = await run_bot_async(
        LiveOptions(builtin="reference", seed=2, checks=("rpc.*",), profile=Profile.BLACKBOX)
    )
    assert runs and all(r.spec.id.startswith("rpc.") for r in runs)
    assert "rpc.rate-limit@rpc" not in {r.key for r in runs}  # a fixture check
    assert all(r.transport == "rpc" for r in runs)


async def test_progress_sees_every_run_as_it_finishes() -> None:
    seen: list[str] = []
    runs = await run_bot_async(
        LiveOptions(
            builtin="reference",
            seed=2,
            checks=("mcp.discover", "decl"),
            progress=lambda run: seen.append(run.key),
        )
    )
    assert seen == [r.key for r in runs]
