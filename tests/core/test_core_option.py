"""--core / SIMPLEX_CORE: every accepted form, every refusal, and open_core's backends."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import pytest
from core_fakes import FakeBackend

from simplex_protocols.core import (
    ChatCore,
    CoreKind,
    CoreOption,
    NativeBackend,
    WebSocketBackend,
    _open,
    add_core_argument,
    default_core_option,
    open_core,
    parse_core_option,
)
from simplex_protocols.core._options import CORE_OPTION_HELP
from simplex_protocols.errors import BackendUnavailableError, CoreOptionError

ACCEPTED: list[tuple[str, CoreOption]] = [
    (
        "ws://127.0.0.1:5225",
        CoreOption(CoreKind.WEBSOCKET, url="ws://127.0.0.1:5225", host="127.0.0.1", port=5225),
    ),
    (
        "ws://localhost:5225/api",
        CoreOption(CoreKind.WEBSOCKET, url="ws://localhost:5225/api", host="localhost", port=5225),
    ),
    ("ws://[::1]:80", CoreOption(CoreKind.WEBSOCKET, url="ws://[::1]:80", host="::1", port=80)),
    (
        "ws://127.8.9.10:65535",
        CoreOption(CoreKind.WEBSOCKET, url="ws://127.8.9.10:65535", host="127.8.9.10", port=65535),
    ),
    (
        "  ws://127.0.0.1:1\n",
        CoreOption(CoreKind.WEBSOCKET, url="ws://127.0.0.1:1", host="127.0.0.1", port=1),
    ),
    ("lib", CoreOption(CoreKind.LIBRARY)),
    ("lib:./bots/my bot", CoreOption(CoreKind.LIBRARY, db_prefix="./bots/my bot")),
    (
        "lib:/var/lib/agent/simplex",
        CoreOption(CoreKind.LIBRARY, db_prefix="/var/lib/agent/simplex"),
    ),
    ("sim:alice", CoreOption(CoreKind.SIMULATOR, user="alice")),
    ("sim:Alice Smith", CoreOption(CoreKind.SIMULATOR, user="Alice Smith")),
]


@pytest.mark.parametrize(("text", "expected"), ACCEPTED, ids=[t.strip() for t, _ in ACCEPTED])
def test_accepted_forms(text: str, expected: CoreOption) -> None:
    option = parse_core_option(text)
    assert option == expected
    assert parse_core_option(str(option)) == option


REFUSED: list[tuple[str, str]] = [
    ("", "empty"),
    ("   ", "empty"),
    ("tcp://127.0.0.1:5225", "unknown_form"),
    ("http://127.0.0.1:5225", "unknown_form"),
    ("library", "unknown_form"),
    ("simulator:alice", "unknown_form"),
    ("WS://127.0.0.1:5225", "unknown_form"),
    ("ws://127.0.0.1", "bad_port"),
    ("ws://127.0.0.1:0", "bad_port"),
    ("ws://127.0.0.1:99999", "bad_url"),
    ("ws://127.0.0.1:port", "bad_url"),
    ("ws://:5225", "bad_url"),
    ("ws://user:pw@127.0.0.1:5225", "bad_url"),
    ("ws://127.0.0.1:5225/?x=1", "bad_url"),
    ("ws://127.0.0.1:5225/#frag", "bad_url"),
    ("ws://10.0.0.5:5225", "non_loopback_host"),
    ("ws://0.0.0.0:5225", "non_loopback_host"),
    ("ws://example.com:5225", "non_loopback_host"),
    ("ws://[2001:db8::1]:5225", "non_loopback_host"),
    ("lib:", "bad_db_prefix"),
    ("lib:a\x00b", "bad_db_prefix"),
    ("sim", "bad_user"),
    ("sim:", "bad_user"),
    ("sim:bob\tx", "bad_user"),
]


@pytest.mark.parametrize(("text", "code"), REFUSED, ids=[repr(t) for t, _ in REFUSED])
def test_refused_forms_have_a_code_and_list_the_accepted_forms(text: str, code: str) -> None:
    with pytest.raises(CoreOptionError) as info:
        parse_core_option(text, source="--core")
    assert info.value.code == code
    message = str(info.value)
    assert message.startswith("--core=")
    for form in ("ws://HOST:PORT[/PATH]", "lib[:DB_PREFIX]", "sim:USER"):
        assert form in message
    assert isinstance(info.value, ValueError)


def test_remote_hosts_only_when_explicitly_allowed() -> None:
    option = parse_core_option("ws://192.0.2.7:5225", allow_remote=True)
    assert (option.host, option.port) == ("192.0.2.7", 5225)
    with pytest.raises(CoreOptionError) as info:
        WebSocketBackend("ws://192.0.2.7:5225")
    assert info.value.code == "non_loopback_host"
    assert (
        WebSocketBackend("ws://192.0.2.7:5225", allow_remote=True).description
        == "ws://192.0.2.7:5225"
    )


def test_default_is_simplex_core_then_lib() -> None:
    assert default_core_option({}) == CoreOption(CoreKind.LIBRARY)
    assert default_core_option({"SIMPLEX_CORE": "  "}) == CoreOption(CoreKind.LIBRARY)
    assert default_core_option({"SIMPLEX_CORE": "sim:bob"}) == CoreOption(
        CoreKind.SIMULATOR, user="bob"
    )
    with pytest.raises(CoreOptionError) as info:
        default_core_option({"SIMPLEX_CORE": "ws://10.0.0.1:5225"})
    assert (info.value.code, info.value.source) == ("non_loopback_host", "SIMPLEX_CORE")
    assert "SIMPLEX_CORE=" in str(info.value)


def test_add_core_argument_parses_to_a_core_option() -> None:
    parser = argparse.ArgumentParser(prog="tool")
    action = add_core_argument(parser)
    assert action.help == CORE_OPTION_HELP
    assert parser.parse_args([]).core is None
    assert parser.parse_args(["--core", "sim:carol"]).core == CoreOption(
        CoreKind.SIMULATOR, user="carol"
    )


def test_add_core_argument_refuses_bad_values_with_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = argparse.ArgumentParser(prog="tool")
    add_core_argument(parser)
    with pytest.raises(SystemExit) as info:
        parser.parse_args(["--core", "ws://127.0.0.1"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --core" in err
    assert "needs a port" in err


def test_open_core_builds_the_websocket_backend() -> None:
    core = open_core("ws://127.0.0.1:5225")
    assert isinstance(core, ChatCore)
    assert isinstance(core.backend, WebSocketBackend)
    assert core.description == "ws://127.0.0.1:5225"


def test_open_core_builds_the_native_backend_with_the_given_or_default_prefix() -> None:
    core = open_core("lib:./data/bot")
    assert isinstance(core.backend, NativeBackend)
    assert core.description == "lib:./data/bot"
    assert open_core("lib", db_prefix="/tmp/agent/simplex").description == "lib:/tmp/agent/simplex"
    assert open_core(None, environ={}).description == "lib:simplex"
    assert (
        open_core(None, environ={"SIMPLEX_CORE": "ws://localhost:1"}).description
        == "ws://localhost:1"
    )


def test_open_core_string_errors_name_the_option() -> None:
    with pytest.raises(CoreOptionError) as info:
        open_core("bogus")
    assert info.value.source == "--core"


def test_open_core_resolves_sim_lazily_through_the_registered_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[str] = []
    backend = FakeBackend("sim:dave")

    def factory(option: CoreOption) -> Any:
        assert option.user is not None
        made.append(option.user)
        return backend

    monkeypatch.setitem(_open._FACTORIES, CoreKind.SIMULATOR, factory)
    core = open_core("sim:dave")
    assert core.backend is backend
    assert made == ["dave"]


def test_open_core_sim_without_the_simulator_is_backend_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # nothing registered, and the simulator cannot be imported
    monkeypatch.delitem(_open._FACTORIES, CoreKind.SIMULATOR, raising=False)
    monkeypatch.setitem(sys.modules, "simplex_protocols.sim", None)
    with pytest.raises(BackendUnavailableError, match=r"ws://127\.0\.0\.1:5225"):
        open_core("sim:erin")
