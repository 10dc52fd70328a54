"""simplex-call demo, end to end: every step of the tour, checked in its output."""

from __future__ import annotations

import io
import re
import time

from simplex_protocols.cli._call_demo import DEMO_STEPS
from simplex_protocols.cli.call import main

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PORT = re.compile(r"127\.0\.0\.1:[0-9]+")


def run_demo(*argv: str) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    status = main(["demo", *argv], stdout=out, stderr=err, environ={})
    return status, out.getvalue(), err.getvalue(), time.monotonic() - started


def test_the_demo_shows_every_step_working() -> None:
    status, out, err, elapsed = run_demo()
    assert status == 0, out + err
    assert err == ""
    assert elapsed < 30
    lines = out.splitlines()
    for number, heading in enumerate(DEMO_STEPS, start=1):
        assert f"{number}. {heading}" in lines
    text = "\n".join(lines)
    # 1: the bot and what it declares.
    assert "  mcp 2026-07-28" in lines and "  a2a 1.0" in lines
    assert "  name     @acme.simplex" in lines
    # 2: the website's llms.txt entry.
    assert "SimpleX contact for people and agents, MCP, A2A." in text
    # 3: discovery and the declarations from the link data.
    assert "    llms.txt        found, 1 address" in lines
    assert "    link relations  found, 1 address" in lines
    assert "    agent card      found, 1 address" in lines
    assert "        mcp    2026-07-28     chat + rpc" in lines
    assert "      serves     agent, human (from the link data)" in lines
    # 4: tools/list and tools/call over signed Service RPC.
    assert "  → mcp tools/list to Acme Shop over Service RPC, signed" in lines
    assert "  ← 2 tools:" in lines
    assert "  → mcp tools/call to Acme Shop over Service RPC, signed" in lines
    # 5: the same call in a conversation, with progress replies.
    assert "  → mcp tools/call to Acme Shop in a conversation" in lines
    at = lines.index("  → mcp tools/call to Acme Shop in a conversation")
    assert lines[at + 2 : at + 6] == [
        "  ← progress 1/3: checking the warehouse",
        "  ← progress 2/3: checking the shop floor",
        "  ← progress 3/3: counting",
        "  ← 12 anvils are in stock.",
    ]
    assert lines.count("  ← 12 anvils are in stock.") == 2
    # 6: A2A one-shot over Service RPC.
    assert "  → a2a SendMessage to Acme Shop over Service RPC" in lines
    # 7: A2A streamed in the conversation.
    assert "  → a2a SendStreamingMessage to Acme Shop in a conversation" in lines
    at = lines.index("  → a2a SendStreamingMessage to Acme Shop in a conversation")
    assert lines[at + 2].endswith(": submitted")
    assert lines[at + 3 :][:2] == ["  ← status: working", "      Looking up prices"]
    assert "  ← status: completed" in lines[at:]
    assert lines[-1].startswith("Every step worked.")


def test_the_demo_is_deterministic_but_for_ports_and_the_sdk_ids() -> None:
    first = run_demo("--seed", "7")
    second = run_demo("--seed", "7")
    other = run_demo("--seed", "8")
    assert first[0] == second[0] == other[0] == 0

    def normal(text: str) -> str:
        return _PORT.sub("127.0.0.1:PORT", _UUID.sub("UUID", text))

    assert normal(first[1]) == normal(second[1])
    # Another seed gives the bot another address.
    assert normal(first[1]) != normal(other[1])
