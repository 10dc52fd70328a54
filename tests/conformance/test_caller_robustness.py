"""Clients that crash, hang, print garbage or cannot start: verdicts, never a hung harness."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest

from simplex_protocols.conformance._model import CallerOptions, TargetUnreachableError, Verdict
from simplex_protocols.conformance.caller import run_caller

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = pytest.mark.slow

CHECKS = ("caller.every-reply-kept", "caller.command-format", "caller.unknown-error-final")


def _python(code: str) -> str:
    return shlex.join([sys.executable, "-c", code])


def test_a_client_that_crashes_fails_the_checks_it_could_not_pass() -> None:
    runs = run_caller(CallerOptions(command=_python("import sys; sys.exit(3)"), checks=CHECKS))
    assert {r.outcome.verdict for r in runs} == {Verdict.FAIL}
    details = " ".join(r.outcome.detail for r in runs)
    assert "exited with status 3" in details or "no command arrived" in details
    assert all(r.outcome.reproduce and "--filter" in r.outcome.reproduce for r in runs)


def test_a_client_that_hangs_is_killed_after_its_bound() -> None:
    started = time.monotonic()
    runs = run_caller(
        CallerOptions(command=_python("import time; time.sleep(60)"), checks=CHECKS, timeout_s=1.0)
    )
    assert time.monotonic() - started < 20
    assert {r.outcome.verdict for r in runs} == {Verdict.FAIL}
    result_checks = [r for r in runs if r.spec.id != "caller.command-format"]
    assert all("killed" in r.outcome.detail for r in result_checks)


def test_a_client_that_prints_garbage_breaks_the_contract() -> None:
    runs = run_caller(
        CallerOptions(command=_python("print('hello, world'); print('{oops')"), checks=CHECKS)
    )
    assert {r.outcome.verdict for r in runs} == {Verdict.FAIL}
    every = next(r for r in runs if r.spec.id == "caller.every-reply-kept")
    assert "not JSON" in every.outcome.detail
    assert any(
        e.get("text", "").startswith("the client broke the contract")
        for e in every.outcome.transcript
    )


def test_a_client_that_cannot_be_started_is_unreachable(tmp_path: Path) -> None:
    with pytest.raises(TargetUnreachableError, match="could not be started"):
        run_caller(CallerOptions(command=str(tmp_path / "no-such-client"), checks=CHECKS))


def test_a_client_that_supports_nothing_gets_na_not_green() -> None:
    runs = run_caller(
        CallerOptions(command=_python('print(\'{"unsupported": "not yet"}\')'), checks=CHECKS)
    )
    assert {r.outcome.verdict for r in runs} == {Verdict.NA}
    assert all("not yet" in r.outcome.detail for r in runs)


_DIRECT_ONLY = """
from simplex_protocols.conformance.caller.reference_client import ReferenceClient, main


class DirectOnly(ReferenceClient):
    async def make_call(self, core, call):
        if call.chat is not None and call.chat.kind == "group":
            return {"unsupported": "no groups"}
        return await super().make_call(core, call)


main(DirectOnly)
"""


def test_a_client_without_groups_is_measured_in_direct_chats_and_na_in_groups(
    tmp_path: Path,
) -> None:
    script = tmp_path / "direct_only.py"
    script.write_text(_DIRECT_ONLY)
    runs = run_caller(
        CallerOptions(
            command=shlex.join([sys.executable, str(script)]),
            checks=("CALL-CLR-3", "CALL-CLR-5", "CALL-CMD-4"),
            protocols=("mcp",),
        )
    )
    verdicts = {r.spec.id: r.outcome.verdict for r in runs}
    assert verdicts == {
        "caller.text-replies-kept": Verdict.PASS,
        "caller.mention-sender-only": Verdict.NA,
        "caller.mention-form": Verdict.NA,
    }
