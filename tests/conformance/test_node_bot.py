"""The Node.js bot of conformance/examples/: a bot in a second language, started by
``simplex-conformance bot --command`` on the simulated network, passes every live check that
applies to it (MCP over both transports, the fixture tools and rate limit, the group checks),
with every report written, as an implementer's CI runs it."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from simplex_protocols.conformance.cli import main

# slow: the run is on real time (an external process cannot follow a manual clock), and the
# fixture's rate limit alone waits its 60 s
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js) is not installed"),
]

ROOT = Path(__file__).resolve().parents[2]
COMMAND = "node conformance/examples/bot.js"


def test_the_node_bot_passes_every_check_that_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    argv = ["bot", "--command", COMMAND, "--timeout", "10", "-o", str(tmp_path)]
    code = main(argv, stdout=out, stderr=io.StringIO(), progress=False)
    report: dict[str, Any] = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    verdicts = {run["key"]: run["verdict"] for run in report["runs"]}
    not_green = {key: v for key, v in verdicts.items() if v not in ("PASS", "NA")}
    assert code == 0, out.getvalue()
    assert not_green == {}
    # It declares MCP only: every A2A check is NA, and what it serves is measured.
    assert all(v == "NA" for key, v in verdicts.items() if key.startswith("a2a."))
    measured = {key for key, v in verdicts.items() if v == "PASS"}
    assert {
        "decl.protocols@-",
        "mcp.declared-chat@chat",
        "mcp.declared-rpc@rpc",
        "chat.reply-quotes-command@chat",
        "chat.command-is-whole-text@chat",
        "chat.malformed-request@chat",
        "rpc.request-key-mismatch@rpc",
        "rpc.rate-limit@rpc",
        "mcp.oversize-chat@chat",
        "mcp.oversize-rpc@rpc",
        "mcp.progress@chat",
        "mcp.input-required@chat",
        "mcp.request-state-other-caller@rpc",
        "mcp.slow-call-rpc@rpc",
        "mcp.same-answer-both-transports@-",
        "group.mention-routing@chat",
        "group.broadcast@chat",
    } <= measured
    assert report["provenance"]["target"] == f"command:{COMMAND}"
    assert (
        (tmp_path / "bot-stderr.txt")
        .read_text(encoding="utf-8")
        .startswith("node bot: serving MCP at ")
    )
