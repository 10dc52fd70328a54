"""simplex-call's command line: commands, options, help, call arguments, exit statuses."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import anyio
import pytest

from simplex_protocols.cli._call_args import (
    COMMANDS,
    CLIError,
    ExitCode,
    build_parsers,
    parse_call_arguments,
    parse_command_line,
    typed_value,
)
from simplex_protocols.cli._call_errors import exit_for_jsonrpc_error, failure_of
from simplex_protocols.cli._call_run import (
    answer_status,
    choose_transport,
    classify_target,
    method_protocol,
)
from simplex_protocols.cli.call import main
from simplex_protocols.declarations import ProtocolDeclaration
from simplex_protocols.errors import (
    BackendUnavailableError,
    BadRequestError,
    CallFormatError,
    CallTimeoutError,
    ConversationRequiredError,
    CoreConnectionError,
    CoreError,
    CoreOptionError,
    DiscoveryError,
    EnvelopeError,
    InternalServiceError,
    KeyFileError,
    LinkError,
    MessageTooLargeError,
    RateLimitedError,
    ServiceError,
    ServiceTransportError,
    TooLargeError,
    UnsupportedProtocolError,
    UnsupportedVersionError,
)
from simplex_protocols.links import LinkKind, format_short_link

ADDRESS = format_short_link(LinkKind.CONTACT, "smp12.simplex.im", bytes(range(32)))


def run_main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, environ={})
    return status, out.getvalue(), err.getvalue()


def test_exit_statuses_are_stable() -> None:
    assert {code.name: int(code) for code in ExitCode} == {
        "OK": 0,
        "USAGE": 64,
        "NOT_FOUND": 65,
        "NOT_SUPPORTED": 66,
        "REFUSED": 67,
        "TIMED_OUT": 68,
        "REMOTE_ERROR": 69,
        "UNAVAILABLE": 70,
        "INTERRUPTED": 130,
        "OUTPUT_CLOSED": 141,
    }
    assert [c.slug for c in ExitCode] == [
        "ok",
        "bad_arguments",
        "not_found",
        "not_supported",
        "refused",
        "timed_out",
        "remote_error",
        "unavailable",
        "interrupted",
        "output_closed",
    ]


def test_help_documents_every_command_option_and_exit_status() -> None:
    status, out, _ = run_main("--help")
    assert status == 0
    for code in ExitCode:
        if code is not ExitCode.OK:
            assert f"  {int(code)}  " in out
    for command in COMMANDS:
        assert f"  {command}" in out
    parsers = build_parsers()
    for name, parser in parsers.items():
        argv = ["--help"] if name == "call" else [name, "--help"]
        status, text, _ = run_main(*argv)
        assert status == 0 and text == parser.format_help()
        for action in parser._actions:
            for flag in action.option_strings:
                assert flag in text
            if action.help is not None:
                assert action.help.strip(), f"{name} {action.dest} has no help"
        assert "exit status:" in text


@pytest.mark.parametrize(
    ("argv", "command", "target"),
    [
        (["plan", "@a.simplex"], "plan", "@a.simplex"),
        (["--json", "plan", "@a.simplex"], "plan", "@a.simplex"),
        (["--core", "sim:plan", "plan", "@a.simplex"], "plan", "@a.simplex"),
        (["--timeout", "5", "discover", "https://x.example"], "discover", None),
        (["@a.simplex", "tools/list"], "call", "@a.simplex"),
        (["--core", "sim:x", "@a.simplex", "plan"], "call", "@a.simplex"),
        (["--", "plan", "tools/list"], "call", "plan"),
        (["demo"], "demo", None),
    ],
)
def test_the_command_is_the_first_word_that_is_not_an_option(
    argv: list[str], command: str, target: str | None
) -> None:
    invocation = parse_command_line(argv)
    assert invocation.command == command
    if target is not None:
        assert invocation.options.target == target


def test_options_can_come_after_the_arguments() -> None:
    options = parse_command_line(
        ["@a.simplex", "tool", "x", "k=v", "--json", "--transport", "chat", "--timeout", "2.5"]
    ).options
    assert options.method == "tool" and options.args == ["x", "k=v"]
    assert options.json and options.transport == "chat" and options.timeout == 2.5
    assert options.core is None and options.progress is None and not options.sign


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["@a.simplex"],
        ["@a.simplex", "tools/list", "--transport", "pigeon"],
        ["@a.simplex", "tools/list", "--protocol", "grpc"],
        ["@a.simplex", "tools/list", "--timeout", "0"],
        ["@a.simplex", "tools/list", "--timeout", "181"],
        ["@a.simplex", "tools/list", "--timeout", "soon"],
        ["@a.simplex", "tools/list", "--core", "carrier-pigeon"],
        ["@a.simplex", "tools/list", "--frobnicate"],
        ["@a.simplex", "tools/list", "--progress", "--no-progress"],
        ["plan"],
        ["discover"],
        ["demo", "--seed", "x"],
    ],
)
def test_bad_command_lines_exit_64(argv: list[str]) -> None:
    status, out, err = run_main(*argv)
    assert status == 64
    assert out == "" and "simplex-call: error:" in err


def test_bad_command_lines_in_json_mode_give_a_json_error() -> None:
    status, out, err = run_main("@a.simplex", "tools/list", "--json", "--transport", "x")
    assert status == 64 and err == ""
    assert '"status":"bad_arguments"' in out and '"exitCode":64' in out


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", 3),
        ("-2.5", -2.5),
        ("true", True),
        ("false", False),
        ("null", None),
        ('"3"', "3"),
        ("[1,2]", [1, 2]),
        ('{"a":1}', {"a": 1}),
        ("anvil", "anvil"),
        ("01234", "01234"),
        ("NaN", "NaN"),
        ("1e999", "1e999"),
        ("", ""),
        ("two words", "two words"),
        ('{"a":1,"a":2}', '{"a":1,"a":2}'),
    ],
)
def test_values_are_json_when_they_are_json_and_text_otherwise(text: str, value: Any) -> None:
    assert typed_value(text) == value


def test_pairs_are_typed_and_the_other_forms_are_read(tmp_path: Path) -> None:
    assert parse_call_arguments([]) == {}
    assert parse_call_arguments(
        ["item=anvil", "n=2", "ok=true", "zip==01234", "order==7", 'tags:=["a"]', "eq=a=b"]
    ) == {
        "item": "anvil",
        "n": 2,
        "ok": True,
        "zip": "01234",
        "order": "7",
        "tags": ["a"],
        "eq": "a=b",
    }
    assert parse_call_arguments(['{"name": "x", "n": [1]}']) == {"name": "x", "n": [1]}
    path = tmp_path / "args.json"
    path.write_text('{"from": "file"}', encoding="utf-8")
    assert parse_call_arguments([f"@{path}"]) == {"from": "file"}
    assert parse_call_arguments(["@-"], stdin=io.StringIO('{"from": "stdin"}')) == {"from": "stdin"}


@pytest.mark.parametrize(
    "tokens",
    [
        ["anvil"],
        ["=x"],
        [" k=x"],
        ["k=1", "k=2"],
        ['{"a": 1}', "b=2"],
        ["{not json"],
        ["[1, 2]"],
        ['{"a": NaN}'],
        ["k:=not json"],
        ["@/nonexistent/simplex-call-args.json"],
    ],
)
def test_bad_call_arguments_are_usage_errors(tokens: list[str]) -> None:
    with pytest.raises(CLIError) as info:
        parse_call_arguments(tokens)
    assert info.value.exit_code is ExitCode.USAGE


@pytest.mark.parametrize(
    ("text", "website"),
    [
        ("@acme.simplex", None),
        ("#news.simplex", None),
        (ADDRESS, None),
        ("https://acme.example", "https://acme.example"),
        ("acme.example", "acme.example"),
        ("acme.example/docs", "acme.example/docs"),
    ],
)
def test_targets_are_simplex_addresses_or_websites(text: str, website: str | None) -> None:
    assert classify_target(text).website == website


@pytest.mark.parametrize("text", ["", "acme.simplex", "hello", "@", "ftp://x.example"])
def test_other_targets_are_refused(text: str) -> None:
    with pytest.raises((CLIError, LinkError)) as info:
        classify_target(text)
    assert failure_of(info.value).exit_code is ExitCode.USAGE


@pytest.mark.parametrize(
    ("method", "protocol"),
    [
        ("tools/list", "mcp"),
        ("tool", "mcp"),
        ("ping", "mcp"),
        ("server/discover", "mcp"),
        ("SendMessage", "a2a"),
        ("GetTask", "a2a"),
        ("whatever", None),
    ],
)
def test_the_method_names_its_protocol(method: str, protocol: str | None) -> None:
    assert method_protocol(method) == protocol


def test_auto_transport_prefers_service_rpc_for_one_shot_requests() -> None:
    both = ProtocolDeclaration("mcp", ("2026-07-28",), chat=True, rpc=True)
    chat = ProtocolDeclaration("mcp", ("2026-07-28",), chat=True)
    rpc = ProtocolDeclaration("a2a", ("1.0",), rpc=True)
    assert choose_transport("auto", both, "mcp", "tools/list", True, "bot") == "rpc"
    assert choose_transport("auto", both, "a2a", "GetTask", False, "bot") == "chat"
    assert choose_transport("auto", chat, "mcp", "tools/list", True, "bot") == "chat"
    assert choose_transport("chat", None, "mcp", "tools/list", True, "bot") == "chat"
    assert choose_transport("rpc", None, "mcp", "tools/list", True, "bot") == "rpc"
    for args in (
        ("auto", rpc, "a2a", "GetTask", False, "bot"),
        ("rpc", chat, "mcp", "tools/list", True, "bot"),
        ("rpc", both, "a2a", "GetTask", False, "bot"),
        ("chat", rpc, "a2a", "SendMessage", True, "bot"),
    ):
        with pytest.raises(CLIError) as info:
            choose_transport(*args)  # type: ignore[arg-type]
        assert info.value.exit_code is ExitCode.NOT_SUPPORTED


def _core_error(*tags: str) -> CoreError:
    node: dict[str, Any] = {"type": tags[-1]}
    for tag in reversed(tags[:-1]):
        node = {"type": tag, "x": node}
    return CoreError(node)


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (CLIError(ExitCode.NOT_SUPPORTED, "x"), 66),
        (CoreOptionError("bad", code="unknown_form", value="x"), 64),
        (DiscoveryError("x", code="insecure_url"), 64),
        (DiscoveryError("x", code="bad_url"), 64),
        (DiscoveryError("x", code="timeout"), 68),
        (DiscoveryError("x", code="unreachable"), 65),
        (LinkError("x", code="bad_link_key"), 64),
        (CallTimeoutError("x", timeout=1), 68),
        (TimeoutError(), 68),
        (UnsupportedProtocolError("unsupported_protocol"), 66),
        (UnsupportedVersionError("unsupported_version"), 66),
        (ConversationRequiredError("conversation_required"), 66),
        (BadRequestError("bad_request"), 67),
        (TooLargeError("too_large"), 67),
        (RateLimitedError("rate_limited", retry_after=9), 67),
        (InternalServiceError("internal"), 69),
        (ServiceError("new_code"), 69),
        (ServiceTransportError({"type": "x"}, service_error="notDRAddress"), 66),
        (ServiceTransportError({"type": "x"}, service_error="badSignature"), 67),
        (ServiceTransportError({"type": "x"}, service_error="rejected"), 67),
        (ServiceTransportError({"type": "x"}, service_error="other"), 69),
        (MessageTooLargeError("service request", 20000, 11106), 64),
        (CallFormatError("x", code="bad_method"), 64),
        (KeyFileError(13, "unsafe", "/k"), 70),
        (CoreConnectionError("gone"), 70),
        (BackendUnavailableError("no lib"), 70),
        (_core_error("errorAgent", "SMP", "NAME", "NOT_FOUND"), 65),
        (_core_error("errorAgent", "SMP", "AUTH"), 65),
        (_core_error("error", "invalidConnReq"), 65),
        (_core_error("errorAgent", "BROKER", "TIMEOUT"), 68),
        (_core_error("error", "noActiveUser"), 70),
        (EnvelopeError("x", code="schema"), 69),
        (RuntimeError("boom"), 70),
    ],
)
def test_every_failure_has_its_exit_status(exc: BaseException, status: int) -> None:
    failure = failure_of(exc)
    assert int(failure.exit_code) == status
    assert failure.to_json()["code"] == failure.exit_code.slug
    assert failure.message


def test_a_key_file_failure_names_its_code() -> None:
    failure = failure_of(KeyFileError(1, "the key folder is accessible to others", "/k"))
    assert failure.to_json()["keyFile"] == "unsafe_permissions"


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (-32601, 66),
        (-32602, 64),
        (-32022, 66),
        (-32009, 66),
        (-32001, 65),
        (-32603, 69),
        (None, 69),
        (True, 69),
    ],
)
def test_jsonrpc_error_codes_have_their_statuses(code: Any, status: int) -> None:
    assert int(exit_for_jsonrpc_error(code)) == status


@pytest.mark.parametrize(
    ("protocol", "response", "status"),
    [
        ("mcp", None, 68),
        ("mcp", {"result": {"content": []}}, 0),
        ("mcp", {"result": {"isError": True}}, 69),
        ("mcp", {"error": {"code": -32601, "message": "x"}}, 66),
        ("mcp", {"result": 3}, 69),
        ("a2a", {"result": {"task": {"status": {"state": "TASK_STATE_COMPLETED"}}}}, 0),
        ("a2a", {"result": {"task": {"status": {"state": "TASK_STATE_FAILED"}}}}, 69),
        ("a2a", {"result": {"statusUpdate": {"status": {"state": "TASK_STATE_CANCELED"}}}}, 69),
        ("a2a", {"result": {"id": "t", "status": {"state": "TASK_STATE_REJECTED"}}}, 69),
        ("a2a", {"result": {"status": {"state": "TASK_STATE_INPUT_REQUIRED"}}}, 0),
        ("a2a", {"result": {"message": {"parts": []}}}, 0),
        ("a2a", {"error": {"code": -32001, "message": "x"}}, 65),
    ],
)
def test_the_answer_gives_the_status(protocol: str, response: Any, status: int) -> None:
    assert int(answer_status(protocol, "m", response)) == status


def test_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> int:
        raise KeyboardInterrupt

    # simplex-call imports anyio once the arguments are parsed, and runs anyio.run then.
    monkeypatch.setattr(anyio, "run", interrupted)
    err = io.StringIO()
    assert main(["demo"], stderr=err) == 130
    assert err.getvalue() == "simplex-call: interrupted\n"


def test_an_unusable_core_exits_70(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    status = main(
        ["plan", "@acme.simplex", "--json"],
        stdout=out,
        stderr=err,
        environ={"HOME": str(tmp_path), "SIMPLEX_CORE": "ws://127.0.0.1:1"},
    )
    assert status == 70 and '"status":"unavailable"' in out.getvalue()
    bad_env = main(
        ["plan", "@acme.simplex"], stdout=out, stderr=err, environ={"SIMPLEX_CORE": "bogus"}
    )
    assert bad_env == 64
