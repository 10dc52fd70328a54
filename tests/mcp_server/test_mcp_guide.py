"""docs/run-an-agent.md: the agent script of section 4 runs as written, against a server on the
simulated network, while the owner approves its connect and its send."""

from __future__ import annotations

import os
import re
import socket
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest
from mcp_sim import LogLines, Owner, agent_server, join_link, text_of_item

from simplex_protocols._clock import ManualClock
from simplex_protocols.sim import SimNetwork

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parents[2] / "docs" / "run-an-agent.md"


def doc_script() -> str:
    text = DOC.read_text(encoding="utf-8")
    marker = text.index("<!-- agent.py:")
    match = re.compile(r"```python\n(.*?)```", re.DOTALL).search(text, marker)
    assert match is not None
    return match.group(1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def advance_until(clock: ManualClock, log: LogLines, line: str) -> None:
    """Move the clock a second at a time until the server logs ``line``."""
    while line not in log.lines:
        await clock.advance(1)
        with anyio.move_on_after(0.05):
            await log.watch.changed.wait()


@pytest.mark.anyio
async def test_the_agent_script_of_the_guide_connects_and_sends_with_approval(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    network = SimNetwork(seed=21, clock=clock)
    alice = Owner(network, network.add_user("alice", display_name="Alice", peer_type="human"))
    bob = network.add_user("bob", display_name="Bob", peer_type="human")
    bob_link = bob.create_address()
    home = tmp_path / "home"
    script = tmp_path / "agent.py"
    script.write_text(doc_script(), encoding="utf-8")
    with anyio.fail_after(60):
        async with (
            agent_server(
                network, home / ".simplex-mcp" / "my-agent", clock=clock, port=free_port()
            ) as server,
            anyio.create_task_group() as tg,
            AsyncExitStack() as stack,
        ):
            await alice.start(stack, tg)
            await alice.join(join_link(server.log))
            await server.log.wait_line(lambda line: line.endswith("The link is deleted."))
            process = await anyio.open_process(
                [sys.executable, str(script), bob_link], env={**os.environ, "HOME": str(home)}
            )
            async with process:
                await alice.wait_message(lambda t: t.endswith("/'approve 1' or /'reject 1'"))
                await alice.say("/approve 1")
                await server.log.wait_line(
                    lambda line: line == "Action 1 approved by Alice: connected."
                )
                await advance_until(clock, server.log, "Action 2: send to contact Bob (@3)")
                card = await alice.wait_message(lambda t: "/'approve @3 2'" in t)
                assert text_of_item(card) == (
                    "I want to send a message to contact Bob:\n"
                    "`Hello Bob, I'm an agent.`\n"
                    "/'approve @3 2', /'approve @3 all' or /'reject @3 2'"
                )
                await alice.say("/approve @3 2")
                await server.log.wait_line(lambda line: line == "Action 2 approved by Alice: sent.")
                await alice.wait_message(
                    lambda t: (
                        t
                        == "I sent a message to contact Bob:\n`Hello Bob, I'm an agent.`\nApproved by Alice."
                    )
                )
                while process.returncode is None:
                    await clock.advance(1)
                    with anyio.move_on_after(0.05):
                        await process.wait()
                assert process.stdout is not None and process.stderr is not None
                out = b"".join([chunk async for chunk in process.stdout]).decode()
                assert process.returncode == 0, out
            tg.cancel_scope.cancel()
    first, second = out.strip().split("\n")
    assert first.startswith("{'action': 1, 'status': 'done', 'chat': '@3', 'connected': True,")
    assert "'name': 'Bob'" in first
    assert second.startswith("{'action': 2, 'status': 'done', 'chat': '@3', 'item': ")
    assert second.endswith("'responses': [], 'more': 0}")
    received = bob.command("/_get chat @3 count=5")["chat"]["chatItems"]
    assert [
        i["content"]["msgContent"]["text"] for i in received if "msgContent" in i["content"]
    ] == ["Hello Bob, I'm an agent."]
