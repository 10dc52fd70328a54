"""Options of simplex-mcp: defaults, ranges, NAME, --display-name, --owners, rejected arguments, --help."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_mcp_cli_conventions import SERVE_OPTIONS

from simplex_protocols.mcp_server.cli import HELP, HelpRequested, main, mk_valid_name, parse_args
from simplex_protocols.mcp_server.config import (
    ApproveMode,
    OwnerEntry,
    RegisterOptions,
    ServeOptions,
    UsageError,
)

HOME = Path("/home/alice")


def serve(*args: str) -> ServeOptions:
    options = parse_args(["serve", *args], home=HOME)
    assert isinstance(options, ServeOptions)
    return options


def refused(*args: str) -> str:
    with pytest.raises(UsageError) as info:
        parse_args(list(args), home=HOME)
    return info.value.message


def test_serve_defaults() -> None:
    options = serve("my-agent")
    assert options == ServeOptions(name="my-agent", data=HOME / ".simplex-mcp" / "my-agent")
    assert options.approve is ApproveMode.REQUESTS
    assert options.expire_hours == 23
    assert options.port == 5226
    assert options.qr_code == "small"
    assert options.owners is None
    assert options.core == "lib"
    assert options.display_name is None


def test_serve_with_every_option() -> None:
    options = serve(
        "my-agent",
        "--data",
        "/tmp/x",
        "--display-name",
        "My Agent",
        "--approve=host",
        "--expire",
        "1",
        "--new-token",
        "--port",
        "5227",
        "--qr-code",
        "large",
        "--core",
        "ws://127.0.0.1:5225",
    )
    assert options.data == Path("/tmp/x")
    assert options.data_given
    assert options.display_name == "My Agent"
    assert options.approve is ApproveMode.HOST
    assert options.expire_hours == 1
    assert options.new_token
    assert options.port == 5227
    assert options.qr_code == "large"
    assert options.core == "ws://127.0.0.1:5225"


@pytest.mark.parametrize("name", ["a", "my-agent", "agent-2", "a-", "0x", "a" * 32])
def test_valid_names(name: str) -> None:
    assert serve(name).name == name


@pytest.mark.parametrize("name", ["a--b", "My-Agent", "a_b", "a" * 33, "a.b", "é"])
def test_invalid_names_exit_2_with_the_plan_message(name: str) -> None:
    assert (
        refused("serve", name)
        == "NAME: 1 to 32 lowercase letters, digits and single hyphens, starting with a letter or digit."
    )


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--port", "0"),
        ("--port", "65536"),
        ("--port", "x"),
        ("--expire", "0"),
        ("--expire", "24"),
        ("--expire", "1.5"),
    ],
)
def test_ranges(option: str, value: str) -> None:
    message = refused("serve", "a", option, value)
    assert message.startswith(f"{option}: ")
    assert message.endswith(f"expected, got {value}")


def test_range_edges_are_accepted() -> None:
    assert serve("a", "--port", "1").port == 1
    assert serve("a", "--port", "65535").port == 65535
    assert serve("a", "--expire", "23").expire_hours == 23


def test_owners_without_a_list() -> None:
    assert serve("a", "--owners").owners == ()
    assert serve("a", "--owners", "--port", "5227").owners == ()
    assert serve("--owners", "--new-token", "a").owners == ()


def test_owners_with_a_list() -> None:
    options = serve("a", "--owners", "3:Alice,7:Bob Smith")
    assert options.owners == (OwnerEntry(3, "Alice"), OwnerEntry(7, "Bob Smith"))
    assert str(options.owners[1]) == "7:Bob Smith"
    assert serve("a", "--owners=3:Alice").owners == (OwnerEntry(3, "Alice"),)


@pytest.mark.parametrize("entry", ["Alice", "3:", ":Alice", "x:Alice", "3Alice"])
def test_owner_entries_must_be_id_name(entry: str) -> None:
    assert (
        refused("serve", "a", "--owners", f"3:Alice,{entry}")
        == f"--owners: ID:NAME expected, got {entry}"
    )


def test_reset_owners_refuses_an_owners_list() -> None:
    assert refused("serve", "a", "--reset-owners", "--owners", "3:Alice") == (
        "--reset-owners takes --owners without a list: member IDs change in a new agent control chat."
    )
    options = serve("a", "--reset-owners", "--owners")
    assert options.reset_owners
    assert options.owners == ()


def test_display_name_is_a_valid_simplex_name() -> None:
    assert (
        refused("serve", "a", "--display-name", "My.Agent")
        == "--display-name: not a valid SimpleX name; try `MyAgent`."
    )
    assert (
        refused("serve", "a", "--display-name", "@") == "--display-name: not a valid SimpleX name."
    )
    assert refused("serve", "a", "--display-name", "x" * 51).startswith(
        "--display-name: not a valid SimpleX name; try `"
    )


def test_mk_valid_name() -> None:
    assert mk_valid_name(" My  Agent ") == "My Agent"
    assert mk_valid_name("#alice") == "alice"
    assert mk_valid_name("a\nb") == "a b"
    assert len(mk_valid_name("x" * 80)) == 50


def test_other_rejections() -> None:
    assert refused().startswith("A command is expected")
    assert refused("start", "a").startswith("Unknown command: start")
    assert refused("serve").startswith("NAME expected")
    assert refused("serve", "a", "b").startswith("One NAME expected")
    assert refused("serve", "a", "--nope").startswith("Unknown option: --nope")
    assert refused("serve", "a", "--port").startswith("--port needs a value")
    assert (
        refused("serve", "a", "--approve", "always")
        == "--approve: requests or host expected, got always"
    )
    assert (
        refused("serve", "a", "--qr-code", "huge") == "--qr-code: small or large expected, got huge"
    )
    assert (
        refused("register", "a", "--scope", "project")
        == "--scope: user or local expected, got project"
    )


def test_register_options() -> None:
    options = parse_args(["register", "my-agent"], home=HOME)
    assert options == RegisterOptions(name="my-agent", data=HOME / ".simplex-mcp" / "my-agent")
    options = parse_args(
        ["register", "my-agent", "--scope", "local", "--data", "/srv/a"], home=HOME
    )
    assert isinstance(options, RegisterOptions)
    assert options.scope == "local"
    assert options.data_given


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert isinstance(parse_args(["--help"]), HelpRequested)
    assert isinstance(parse_args(["serve", "-h"]), HelpRequested)
    assert main(["--help"]) == 0
    assert capsys.readouterr().out == HELP
    for option in [*SERVE_OPTIONS, "--scope"]:
        assert option in HELP


def test_main_exits_2_on_rejected_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "Bad"]) == 2
    assert (
        capsys.readouterr().err
        == "NAME: 1 to 32 lowercase letters, digits and single hyphens, starting with a letter or digit.\n"
    )
