"""simplex-mcp's argparse parsers (``serve --help``, ``register --help``, ``--version``) and the
QR code without colour (``NO_COLOR``, output that is not a terminal)."""

from __future__ import annotations

import io
import re

import pytest

from simplex_protocols import __version__
from simplex_protocols.mcp_server.cli import (
    COMMAND_HELP,
    HELP,
    HelpRequested,
    VersionRequested,
    main,
    parse_args,
)
from simplex_protocols.mcp_server.config import VERSION, ServeOptions, UsageError
from simplex_protocols.mcp_server.log import Log
from simplex_protocols.mcp_server.qr import colours_wanted, qr_lines, qr_modules
from simplex_protocols.mcp_server.serve import print_link

LINK = "https://smp4.simplex.im/g#" + "A" * 43
ESCAPE = re.compile("\x1b")
SERVE_OPTIONS = [
    "--data",
    "--display-name",
    "--approve",
    "--owners",
    "--expire",
    "--reset-owners",
    "--new-token",
    "--port",
    "--qr-code",
    "--core",
    "--durable-actions",
]


def test_serve_help_lists_the_serve_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_args(["serve", "--help"]) == HelpRequested("serve")
    assert parse_args(["serve", "a", "--port", "x", "-h"]) == HelpRequested("serve")
    assert main(["serve", "--help"]) == 0
    out = capsys.readouterr().out
    assert out == COMMAND_HELP["serve"]
    assert out.startswith("usage: simplex-mcp serve NAME [options]\n")
    for option in SERVE_OPTIONS:
        assert re.search(rf"^  {option}\b", out, re.MULTILINE), option
    assert "--scope" not in out
    assert "--owners [ID:NAME,...]" in out
    assert "--port N " in out  # a value option shows its value as required


def test_register_help_lists_the_register_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["register", "-h"]) == 0
    out = capsys.readouterr().out
    assert out == COMMAND_HELP["register"]
    assert "--scope SCOPE" in out and "--data DIR" in out
    assert "--port" not in out


def test_the_whole_help_holds_both_commands_and_the_exit_codes() -> None:
    assert COMMAND_HELP["serve"] in HELP and COMMAND_HELP["register"] in HELP
    assert "exit status:\n  0 " in HELP
    assert "\n  2    rejected arguments\n" in HELP


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_args(["--version"]) == VersionRequested()
    assert __version__ == VERSION
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"simplex-mcp {__version__}\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["serve", "a", "--new-token=yes"], "--new-token takes no value"),
        (["serve", "a", "--help=yes"], "--help takes no value"),
        (["serve", "a", "--port", "--new-token"], "--port needs a value"),
        (["serve", "a", "--display-name"], "--display-name needs a value"),
        (
            ["serve", "a", "--disp", "x"],
            "Unknown option: --disp. simplex-mcp --help shows the options.",
        ),
        (
            ["register", "a", "--port", "1"],
            "Unknown option: --port. simplex-mcp --help shows the options.",
        ),
        (["serve", "a", "--port", "2", "b"], "One NAME expected, got: a b"),
        (
            ["serve", "a", "serve", "--version"],
            "Unknown option: --version. simplex-mcp --help shows the options.",
        ),
        (["register", "--data=", "a"], "--data needs a folder"),
    ],
)
def test_argparse_refusals_keep_the_plans_words(args: list[str], message: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_args(args)
    assert info.value.message == message


def test_options_mix_with_the_name_and_the_double_dash() -> None:
    options = parse_args(["serve", "--owners", "--new-token", "a", "--core=sim:x"])
    assert isinstance(options, ServeOptions)
    assert options.name == "a"
    assert options.owners == ()
    assert parse_args(["serve", "--", "a"]) == parse_args(["serve", "a"])


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colours_are_wanted_on_a_terminal_without_no_color() -> None:
    assert colours_wanted(_Terminal(), {})
    assert colours_wanted(_Terminal(), {"NO_COLOR": ""})  # an empty value does not count
    assert not colours_wanted(_Terminal(), {"NO_COLOR": "1"})
    assert not colours_wanted(_Terminal(), {"NO_COLOR": "yes"})
    assert not colours_wanted(io.StringIO(), {})


def test_a_closed_stream_wants_no_colour() -> None:
    stream = io.StringIO()
    stream.close()
    assert not colours_wanted(stream, {})


@pytest.mark.parametrize(("size", "lines", "columns"), [("small", 19, 37), ("large", 37, 74)])
def test_plain_qr_code_has_the_plans_layouts_without_escapes(
    size: str, lines: int, columns: int
) -> None:
    plain = qr_lines(LINK, "large" if size == "large" else "small", colour=False)
    assert len(plain) == lines
    assert all(len(line) == columns for line in plain)
    assert not any(ESCAPE.search(line) for line in plain)
    # The margin is light, and light modules are ink: the first line is all full blocks.
    assert set(plain[0]) == {"\u2588"}
    modules = qr_modules(LINK)
    if size == "large":
        for line, row in zip(plain, modules, strict=True):
            assert line == "".join("  " if dark else "\u2588\u2588" for dark in row)
    else:
        # 37 module rows: the last line pairs the bottom margin row with the light padding row.
        assert set(plain[-1]) == {"\u2588"}
        assert any("\u2580" in line for line in plain) and any("\u2584" in line for line in plain)


def _printed(monkeypatch: pytest.MonkeyPatch, stdout: io.StringIO, size: str) -> str:
    monkeypatch.setattr("sys.stdout", stdout)
    out = io.StringIO()
    print_link(Log(out, io.StringIO()), LINK, size)
    return out.getvalue()


@pytest.mark.parametrize("size", ["small", "large"])
def test_the_join_link_is_plain_when_stdout_is_not_a_terminal(
    monkeypatch: pytest.MonkeyPatch, size: str
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    text = _printed(monkeypatch, io.StringIO(), size)
    assert "\x1b" not in text
    assert "\u2588" in text and LINK in text


def test_the_join_link_is_plain_with_no_color_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    text = _printed(monkeypatch, _Terminal(), "small")
    assert "\x1b" not in text and LINK in text


def test_the_join_link_is_coloured_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    text = _printed(monkeypatch, _Terminal(), "small")
    assert "\x1b[47m" in text and text.count("\x1b[0m") == 19
