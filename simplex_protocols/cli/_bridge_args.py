"""simplex-bridge's command line: options, help, exit statuses and its typed error.

Pure: nothing here starts a process or opens a core. The exit statuses are simplex-call's
(``docs/simplex-call.md``), those that apply to a program that serves.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, NoReturn

from simplex_protocols._docs_url import doc_url
from simplex_protocols.core import CoreKind, CoreOption, add_core_argument

from ._call_args import ExitCode

__all__ = ["BridgeError", "BridgeOptions", "build_parser", "parse_command_line"]

PROG: Final = "simplex-bridge"


class BridgeError(Exception):
    """A failure of simplex-bridge, with a stable code, its exit status and a message.

    Codes: ``bad_arguments`` (64), ``upstream_failed`` (69: the MCP server could not be
    started or reached), ``core_unavailable`` (70: the chat core cannot be used),
    ``bad_setting`` (64: a bot option the bot refused).
    """

    def __init__(self, code: str, exit_code: ExitCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.exit_code = exit_code
        self.message = message


@dataclass(frozen=True)
class BridgeOptions:
    """The parsed command line."""

    core: CoreOption | None
    command: tuple[str, ...] = ()
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    display_name: str | None = None
    description: str | None = None
    peer_type: str = "bot"
    transports: tuple[str, ...] = ("chat", "rpc")
    welcome: str | None = None
    data_dir: Path | None = None
    log_contents: bool = False
    demo: bool = False
    quiet: bool = False


_DESCRIPTION: Final = """\
Put an existing MCP server on SimpleX, unchanged: serve it to SimpleX callers over both
transports of "Agent protocols over SimpleX" (Service RPC and /_call mcp in conversations),
with the bot's profile, protocols declaration and contact address (as ResponderBot makes
them).

The MCP server is either a command that speaks MCP on stdin and stdout (everything after
--), which the bridge starts, stops with itself, and starts again when it exits; or a
Streamable HTTP endpoint (--url). Tools, resources, prompts, progress, cancellation and
input_required rounds pass through; the server's errors reach callers as it gave them.
"""

_EPILOG: Final = f"""\
examples:
  simplex-bridge --core ws://127.0.0.1:5225 --display-name Files \\
      -- npx -y @modelcontextprotocol/server-filesystem /srv/share
  simplex-bridge --core ws://127.0.0.1:5225 --url http://127.0.0.1:8000/mcp \\
      --header 'Authorization: Bearer TOKEN'
  simplex-bridge --core sim:notes --demo -- python my_stdio_server.py

While a stdio server restarts (after 1 s, doubling up to 60 s while it keeps failing), calls
are answered with a retryable error: over Service RPC the envelope error internal with
retryAfter, in a conversation JSON-RPC -32603 with data.retryAfter. Ctrl-C stops the bridge
and the server (exit 130).

exit status:
  0    stopped (SIGTERM), or --demo finished
  64   bad arguments, or a bot option the bot refused
  69   the MCP server could not be started or reached
  70   the chat core cannot be used (not installed, unreachable, lost)
  130  interrupted (Ctrl-C)

The details:
  {doc_url("docs/simplex-bridge.md")}
"""


class _Parser(argparse.ArgumentParser):
    """argparse that raises :class:`BridgeError` instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise BridgeError("bad_arguments", ExitCode.USAGE, message)


def build_parser() -> argparse.ArgumentParser:
    """simplex-bridge's parser (its ``--help`` is the command's help)."""
    p = _Parser(
        prog=PROG,
        usage=f"{PROG} [--core CORE] [options] (-- COMMAND [ARGS...] | --url URL [--header 'Name: value']...)",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="store_true", help="print the version and exit")
    add_core_argument(p)
    upstream = p.add_argument_group("the MCP server (one of)")
    upstream.add_argument(
        "--url",
        metavar="URL",
        help="a Streamable HTTP MCP endpoint (http://HOST:PORT/mcp, https://...)",
    )
    upstream.add_argument(
        "--header",
        metavar="'NAME: VALUE'",
        action="append",
        default=[],
        help="with --url: an HTTP header for every request; repeat for more",
    )
    bot = p.add_argument_group("the bot")
    bot.add_argument(
        "--display-name",
        metavar="NAME",
        help="the bot's display name (default: the MCP server's name)",
    )
    bot.add_argument(
        "--description",
        metavar="TEXT",
        help="the profile's short description, at most 160 characters "
        "(default: 'MCP server NAME, over SimpleX.')",
    )
    bot.add_argument(
        "--peer-type",
        choices=("bot", "agent"),
        default="bot",
        help="the profile's peer type (default bot)",
    )
    bot.add_argument(
        "--transport",
        dest="transports",
        choices=("chat", "rpc"),
        action="append",
        help="serve and declare only this transport; repeat for both (the default)",
    )
    bot.add_argument("--welcome", metavar="TEXT", help="the address's welcome message")
    bot.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="the bot's private data folder (default: ~/.local/state/simplex-bot/NAME)",
    )
    bot.add_argument(
        "--log-contents",
        action="store_true",
        help="also log requests and answers (for debugging: they are the callers' data)",
    )
    bot.add_argument(
        "--quiet", action="store_true", help="log warnings and errors only, not each call"
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help="with --core sim:NAME: call the bridge once over each transport, print, and stop",
    )
    return p


def parse_command_line(argv: Sequence[str]) -> BridgeOptions | str:
    """The options of ``argv``, or the text to print for ``--help`` / ``--version``.

    Raises:
        BridgeError: ``bad_arguments``.
    """
    args = list(argv)
    # Everything after the first "--" is the MCP server's command, untouched: its own
    # options are not ours.
    command: list[str] = []
    if "--" in args:
        at = args.index("--")
        args, command = args[:at], args[at + 1 :]
    parser = build_parser()
    if "-h" in args or "--help" in args:
        return parser.format_help()
    ns = parser.parse_args(args)
    if ns.version:
        from simplex_protocols import __version__

        return f"{PROG} {__version__}\n"
    if ns.url is not None and command:
        parser.error("give the MCP server as a command after -- or as --url, not both")
    if ns.url is None and not command:
        parser.error(
            "give the MCP server: its command after -- (simplex-bridge -- python server.py) "
            "or --url http://HOST:PORT/mcp"
        )
    if ns.header and ns.url is None:
        parser.error("--header goes with --url")
    if ns.url is not None and not ns.url.startswith(("http://", "https://")):
        parser.error(f"--url: an http:// or https:// URL, not {ns.url!r}")
    core: CoreOption | None = ns.core
    if ns.demo and (core is None or core.kind is not CoreKind.SIMULATOR):
        parser.error("--demo needs --core sim:NAME (the in-process simulated network)")
    return BridgeOptions(
        core=core,
        command=tuple(command),
        url=ns.url,
        headers=dict(_header(h, parser) for h in ns.header),
        display_name=ns.display_name,
        description=ns.description,
        peer_type=ns.peer_type,
        transports=tuple(dict.fromkeys(ns.transports)) if ns.transports else ("chat", "rpc"),
        welcome=ns.welcome,
        data_dir=ns.data_dir,
        log_contents=ns.log_contents,
        demo=ns.demo,
        quiet=ns.quiet,
    )


def _header(text: str, parser: argparse.ArgumentParser) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    name = name.strip()
    # RFC 9110 field names are tokens; a space or a missing colon is a typo worth naming.
    if not sep or not name or any(ch.isspace() or not ch.isprintable() for ch in name):
        parser.error(f"--header: 'Name: value', not {text!r}")
    if any(ch in "\r\n\0" for ch in value):
        parser.error("--header: the value has a line break or NUL")
    return name, value.strip()
