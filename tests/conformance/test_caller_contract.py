"""The client contract of the caller-side harness: contexts, result lines, the environment."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from simplex_protocols._spec import load_json
from simplex_protocols.conformance._model import CallerOptions, OptionsError, Verdict
from simplex_protocols.conformance.caller import (
    CONTEXT_SCHEMA,
    ENV_CONTEXT,
    ENV_CORE,
    ENV_SCENARIO,
    ENV_TARGET,
    all_checks,
    run_caller,
    scenario_ids,
)
from simplex_protocols.conformance.caller._checks import CHECKS
from simplex_protocols.conformance.caller._contract import (
    CallSpec,
    ChatPlace,
    ContractError,
    RetryPolicy,
    parse_client_output,
    parse_context,
)


def _context(calls: list[dict[str, object]]) -> str:
    return json.dumps({"schema": CONTEXT_SCHEMA, "scenario": "x", "calls": calls})


def _call(**extra: object) -> dict[str, object]:
    call: dict[str, object] = {
        "label": "main",
        "protocol": "mcp",
        "transport": "chat",
        "method": "tools/call",
        "params": {"name": "echo"},
        "id": 1,
        "versions": ["2026-07-28"],
        "wait_s": 2.5,
        "chat": {"type": "direct", "contact_id": 3, "name": "bot"},
    }
    call.update(extra)
    return call


def test_a_call_round_trips_through_its_json() -> None:
    spec = CallSpec(
        label="x",
        protocol="a2a",
        transport="chat",
        method="SendMessage",
        params={"message": {}},
        request_id="r-1",
        versions=("1.0",),
        wait_s=1.5,
        chat=ChatPlace("group", "team", group_id=4, member_id=2, member_name="Bob Smith"),
        credentials={"Authorization": "Bearer t"},
        retry=RetryPolicy(3, 5.0),
    )
    _, calls = parse_context(_context([spec.to_json()]))
    assert calls == [spec]
    rpc = CallSpec(
        "y",
        "mcp",
        "rpc",
        "tools/call",
        {},
        2,
        (),
        1.0,
        target="simplex:/x",
        sign=True,
        input_responses={"confirm": {"action": "accept"}},
    )
    assert parse_context(_context([rpc.to_json()]))[1] == [rpc]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("not json", "not JSON"),
        (json.dumps({"schema": "other", "calls": [_call()]}), "schema"),
        (_context([]), "non-empty list"),
        (_context([_call(transport="smoke")]), "transport"),
        (_context([_call(id=True)]), "call.id"),
        (_context([_call(wait_s=0)]), "wait_s"),
        (_context([_call(chat={"type": "channel", "name": "x"})]), "chat.type"),
        (_context([_call(credentials={"Authorization": 1})]), "credentials"),
    ],
)
def test_a_malformed_context_is_refused_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(ContractError, match=reason):
        parse_context(text)


def test_the_result_is_the_last_json_line_of_stdout() -> None:
    stdout = (
        'log line\n{"calls": [{"replies": [], "final": null, "error": {"code": "timeout"}}]}\n'
        '{"calls": [{"replies": [{"sender": "bot", "text": "hi"}, '
        '{"sender": 7, "message": {"id": 1}}], "final": {"id": 1}, "error": null}]}\n'
        "trailing words\n"
    )
    output = parse_client_output(stdout, 1)
    (call,) = output.calls
    assert [r.sender for r in call.replies] == ["bot", 7]
    assert call.replies[0].text == "hi" and call.replies[1].message == {"id": 1}
    assert call.final == {"id": 1} and call.error is None


@pytest.mark.parametrize(
    ("stdout", "reason"),
    [
        ("", "no JSON result line"),
        ("hello\n", "no JSON result line"),
        ("{not json\n", "not JSON"),
        ('{"calls": []}\n', "0 entries for 1 calls"),
        ('{"calls": [{"replies": [{"sender": "b"}]}]}\n', "exactly one of"),
        ('{"calls": [{"replies": [], "error": {"message": "x"}}]}\n', "string 'code'"),
        ('{"calls": [{"final": [1]}]}\n', "final is an object"),
        ('{"calls": [{"replies": [{"sender": true, "text": ""}]}]}\n', "sender"),
    ],
)
def test_a_result_that_breaks_the_contract_is_refused(stdout: str, reason: str) -> None:
    with pytest.raises(ContractError, match=reason):
        parse_client_output(stdout, 1)


def test_unsupported_scenarios_and_calls_are_read() -> None:
    assert parse_client_output('{"unsupported": "no groups"}', 3).unsupported == "no groups"
    output = parse_client_output('{"calls": [{"unsupported": "no rpc"}]}', 1)
    assert output.calls[0].unsupported == "no rpc"


def test_every_check_names_known_requirements_and_has_a_unique_id() -> None:
    known = {r["id"] for r in load_json("requirements.json")["requirements"]}
    specs = all_checks()
    assert len({s.id for s in specs}) == len(specs)
    for spec in specs:
        assert spec.kind == "caller" and spec.id.startswith("caller.")
        assert set(spec.requirements) <= known, spec.id
        assert set(spec.transports) <= {"chat", "rpc"}


_RECORDER = """
import json, os, sys
names = [{names}]
with open(sys.argv[1], "a") as f:
    f.write(json.dumps({{"argv": sys.argv[2:], "env": {{n: os.environ.get(n) for n in names}}}}) + "\\n")
print(json.dumps({{"unsupported": "this client only records its environment"}}))
"""


@pytest.mark.slow
def test_the_client_gets_the_scenario_in_its_environment_and_placeholders(tmp_path: Path) -> None:
    script = tmp_path / "client.py"
    names = ", ".join(repr(n) for n in (ENV_SCENARIO, ENV_CORE, ENV_TARGET, ENV_CONTEXT))
    script.write_text(_RECORDER.format(names=names))
    log = tmp_path / "seen.jsonl"
    command = f"{sys.executable} {script} {log} {{core}} {{target}} {{scenario}}"
    runs = run_caller(
        CallerOptions(
            command=command, checks=("caller.every-reply-kept", "caller.unknown-error-final")
        )
    )
    assert {r.outcome.verdict for r in runs} == {Verdict.NA}
    assert all("only records its environment" in r.outcome.detail for r in runs)
    seen = {e["env"][ENV_SCENARIO]: e for e in map(json.loads, log.read_text().splitlines())}
    assert set(seen) == {"chat-direct", "rpc-errors"}
    direct, rpc = seen["chat-direct"], seen["rpc-errors"]
    assert direct["env"][ENV_CORE].startswith("ws://127.0.0.1:")
    assert direct["env"][ENV_CORE].endswith("/client")
    assert direct["argv"] == [direct["env"][ENV_CORE], direct["env"][ENV_TARGET], "chat-direct"]
    context, calls = parse_context(direct["env"][ENV_CONTEXT])
    assert context["scenario"] == "chat-direct" and context["core"] == direct["env"][ENV_CORE]
    assert isinstance(context["user_id"], int)
    assert calls[0].chat is not None and direct["env"][ENV_TARGET] == calls[0].chat.ref
    _, rpc_calls = parse_context(rpc["env"][ENV_CONTEXT])
    assert [c.label for c in rpc_calls] == [
        "unknown-final",
        "unknown-retry-after",
        "rate-limited",
        "rate-limited-bare",
    ]
    assert all(c.transport == "rpc" and c.retry is not None for c in rpc_calls)
    assert rpc["env"][ENV_TARGET] == rpc_calls[0].target


def test_options_that_cannot_run_are_refused_before_anything_starts() -> None:
    with pytest.raises(OptionsError, match="--command"):
        run_caller(CallerOptions())
    with pytest.raises(OptionsError, match="does not parse"):
        run_caller(CallerOptions(command="client 'unclosed"))
    with pytest.raises(OptionsError, match="protocol"):
        run_caller(CallerOptions(command="client", protocols=("grpc",)))
    with pytest.raises(OptionsError, match="no check matches"):
        run_caller(CallerOptions(command="client", checks=("caller.nothing-like-this",)))
    with pytest.raises(OptionsError, match="no reference client or mutant"):
        run_caller(CallerOptions(builtin="client.no-such-mutant"))


def test_a_dry_run_lists_the_selected_checks_and_runs_nothing() -> None:
    runs = run_caller(CallerOptions(command="does-not-exist", dry_run=True, protocols=("a2a",)))
    assert runs and all(r.outcome.verdict is Verdict.NA for r in runs)
    assert all(r.outcome.detail == "dry run" for r in runs)
    assert not any("mcp" in r.spec.protocols for r in runs)
    only_chat = run_caller(CallerOptions(command="x", dry_run=True, transports=("chat",)))
    assert {r.transport for r in only_chat} == {"chat"}


def test_the_scenarios_are_listed_in_a_stable_order() -> None:
    assert scenario_ids()[:2] == ["chat-direct", "chat-interleaved"]
    read = {sid for check in CHECKS for sid in check.scenarios}
    assert read <= set(scenario_ids())


def test_the_documentation_lists_every_check_mutant_and_scenario() -> None:
    import re

    from simplex_protocols.conformance.caller import mutants

    text = (Path(__file__).parents[2] / "docs" / "conformance-caller.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    first = {name for row in rows for name in re.findall(r"^\| `([^`]+)`", row)}
    assert {s.id for s in all_checks()} <= first
    assert {m.name for m in mutants()} <= first
    assert set(scenario_ids()) <= first
    documented_checks = {name for name in first if name.startswith("caller.")}
    assert documented_checks == {s.id for s in all_checks()}
    for mutant in mutants():
        row = next(r for r in rows if r.startswith(f"| `{mutant.name}`"))
        assert ", ".join(mutant.requirements) in row, mutant.name
    for spec in all_checks():
        row = next(r for r in rows if r.startswith(f"| `{spec.id}`"))
        assert f"| {', '.join(spec.requirements)} |" in row, spec.id
