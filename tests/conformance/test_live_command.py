"""``simplex-conformance bot --command CMD``: the suite starts a bot in any language against a
simulated core, waits for its address, runs the checks and stops it; the fixture profile's gate
on UNTESTABLE checks whose fixture tools are missing (``--allow-untestable``)."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from simplex_protocols.conformance._model import ClockMode, LiveOptions, OptionsError, Verdict
from simplex_protocols.conformance.caller._contract import ENV_CORE
from simplex_protocols.conformance.cli import main
from simplex_protocols.conformance.live import (
    BotStartError,
    CommandOptions,
    _command,
    missing_fixture,
    run_bot,
)

# slow: each test starts a Python bot process (a few seconds of imports)
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
ECHO_BOT = shlex.join([sys.executable, str(HERE / "command_bot.py")])


def _python(code: str) -> str:
    return shlex.join([sys.executable, "-c", code])


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err, progress=False)
    return code, out.getvalue(), err.getvalue()


def _result_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("result: "))


# ------------------------------------------------------------------ the bot's start


def test_a_command_that_cannot_start_is_one_line_and_exit_3() -> None:
    code, out, _ = _cli("bot", "--command", "simplex-no-such-bot --serve")
    assert code == 3
    assert _result_line(out).endswith(
        "the bot command could not be started: simplex-no-such-bot: No such file or directory"
    )


def test_a_bot_that_exits_before_its_address_is_exit_3_with_its_stderr() -> None:
    bot = _python("import sys; print('cannot open the core', file=sys.stderr); sys.exit(7)")
    code, out, _ = _cli("bot", "--command", bot)
    assert code == 3
    assert "the bot exited with status 7 before it made its contact address" in _result_line(out)
    assert "    | cannot open the core" in out


def test_a_bot_without_an_address_is_exit_3_after_the_start_timeout() -> None:
    options = CommandOptions(command=_python("import time; time.sleep(60)"), start_timeout_s=0.5)
    with pytest.raises(BotStartError) as caught:
        run_bot(options)
    assert caught.value.code == "no_address"
    assert str(caught.value) == "the bot made no contact address within 0.5 s (--start-timeout)"
    # It was stopped: SIGTERM ended it.
    assert options.output.exit_code == -15 and not options.output.exited_by_itself
    code, out, _ = _cli(
        "bot", "--command", _python("import time; time.sleep(60)"), "--start-timeout", "0.5"
    )
    assert code == 3
    assert _result_line(out).endswith("within 0.5 s (--start-timeout)")


_ONE_BOT = "give either TARGET or --builtin NAME, or the bot's --command CMD"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["https://example.invalid/a#x"], _ONE_BOT),
        (["--builtin", "reference"], _ONE_BOT),
        (["--core", "ws://127.0.0.1:5225"], "--command runs the bot on a simulated core"),
        (["--clock", "manual"], "a bot started with --command runs on real time"),
        (["--start-timeout", "0"], "--start-timeout must be more than 0 seconds"),
    ],
)
def test_options_that_cannot_go_with_a_command_are_usage_errors(
    extra: list[str], message: str
) -> None:
    code, _, err = _cli("bot", "--command", ECHO_BOT, *extra)
    assert code == 64
    assert message in err


def test_the_python_api_refuses_the_same_options() -> None:
    with pytest.raises(OptionsError, match="real time"):
        run_bot(CommandOptions(command=ECHO_BOT, clock=ClockMode.MANUAL))
    with pytest.raises(OptionsError, match="the command is empty"):
        run_bot(CommandOptions(command="  "))
    with pytest.raises(OptionsError, match="one of a target"):
        run_bot(CommandOptions(command=ECHO_BOT, target="https://example.invalid/a#x"))


# ------------------------------------------------------------------ a run


def test_the_bot_gets_the_core_url_and_is_checked_then_stopped() -> None:
    options = CommandOptions(
        command=ECHO_BOT + " --print-core", checks=("mcp.discover",), transports=("chat",)
    )
    runs = run_bot(options)
    assert [(r.key, r.outcome.verdict) for r in runs] == [("mcp.discover@chat", Verdict.PASS)]
    # The same variable as the caller harness gives a client, naming the bot's core.
    assert ENV_CORE == "SIMPLEX_CONFORMANCE_CORE"
    assert "core: ws://127.0.0.1:" in options.output.stderr
    assert options.output.stderr.split("core: ", 1)[1].split()[0].endswith("/bot")
    assert options.output.exit_code is not None and not options.output.exited_by_itself


def test_a_bot_that_ignores_sigterm_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_command, "TERM_GRACE_S", 0.5)
    options = CommandOptions(
        command=ECHO_BOT + " --ignore-sigterm", checks=("decl.serves",), transports=("chat",)
    )
    runs = run_bot(options)
    assert [r.outcome.verdict for r in runs] == [Verdict.PASS]
    assert options.output.exit_code == -9


FIXTURE_CHECKS = ("mcp.discover", "mcp.oversize-chat", "mcp.progress")


def test_missing_fixture_tools_fail_the_fixture_profile_unless_allowed(tmp_path: Path) -> None:
    argv = ["bot", "--command", ECHO_BOT, "--transport", "chat", "--timeout", "10"]
    for check in FIXTURE_CHECKS:
        argv += ["--filter", check]
    code, out, _ = _cli(*argv, "-o", str(tmp_path / "strict"), "--format", "json")
    assert code == 1
    report: dict[str, Any] = json.loads((tmp_path / "strict" / "report.json").read_text())
    verdicts = {r["key"]: r["verdict"] for r in report["runs"]}
    assert verdicts == {
        "mcp.discover@chat": "PASS",
        "mcp.oversize-chat@chat": "UNTESTABLE",
        "mcp.progress@chat": "UNTESTABLE",
    }
    assert report["failed_parts"] == [
        "2 check run(s) UNTESTABLE because the bot lacks fixture tools or behaviours "
        "(conformance_oversize, conformance_progress): implement them, check with --profile "
        "blackbox, or accept them with --allow-untestable"
    ]
    # The bot's standard error is kept beside the reports.
    assert (tmp_path / "strict" / "bot-stderr.txt").read_text(encoding="utf-8")
    assert "the bot's standard error ends:" in out

    code, out, _ = _cli(*argv, "--allow-untestable")
    assert code == 0, out
    assert "result: exit 0" in out


def test_missing_fixture_names_the_runs_of_missing_tools_only() -> None:
    options = LiveOptions(builtin="bot.mcp-methods-missing", checks=("mcp.oversize-chat",))
    runs = run_bot(options)
    assert [r.outcome.verdict for r in runs] == [Verdict.UNTESTABLE]
    assert [r.outcome.evidence["missingFixture"] for r in missing_fixture(runs)] == [
        "conformance_oversize"
    ]
    # UNTESTABLE for another reason (the message budget) is not a missing fixture.
    over_budget = run_bot(LiveOptions(builtin="reference", checks=("mcp.oversize-chat",), budget=0))
    assert [r.outcome.verdict for r in over_budget] == [Verdict.UNTESTABLE]
    assert missing_fixture(over_budget) == []


def test_a_dry_run_reads_the_started_bot_and_sends_it_nothing() -> None:
    options = CommandOptions(
        command=ECHO_BOT, dry_run=True, checks=("mcp.progress",), transports=("chat",)
    )
    [run] = run_bot(options)
    # The bot declares MCP over chat, so the check applies; the rehearsal lists its messages.
    assert run.outcome.verdict is Verdict.NA and run.outcome.detail == "dry run"
    assert [e["dir"] for e in run.outcome.transcript] == ["out", "out"]
    assert options.output.argv and not options.output.exited_by_itself
