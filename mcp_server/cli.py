"""``simplex-mcp``: argument parsing, ``--help``, ``--version``, and the ``serve`` and
``register`` commands.

Parsing is pure (:func:`parse_args` returns options or raises :class:`UsageError`); rejected
arguments exit with code 2 and the plan's messages (plan "Options", "Rejected arguments").
Each command has an :mod:`argparse` parser, the parser the other console scripts use, so that
``simplex-mcp serve --help`` lists the serve options; what argparse would refuse with its own
wording and exit status is checked here first, in the plan's words. ``--owners`` takes a list
or nothing: it has no value when the next argument is absent or starts with ``--``.

Only the standard library and the small modules of the options are imported before the
arguments are parsed; the server's modules (the MCP SDK, the chat core) come with ``serve``.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, NoReturn

from simplex_protocols._exports import lazy_exports
from simplex_protocols._groups import run_interruptible
from simplex_protocols._stdio import OUTPUT_CLOSED_EXIT, guarded_stdout, is_output_closed

from .config import (
    DEFAULT_CORE,
    DEFAULT_EXPIRE_HOURS,
    DEFAULT_PORT,
    MAX_EXPIRE_HOURS,
    VERSION,
    ApproveMode,
    OwnerEntry,
    RegisterOptions,
    ServeOptions,
    UsageError,
)
from .host_names import HOSTS

if TYPE_CHECKING:
    from simplex_protocols.coretext import mk_valid_name as mk_valid_name

__all__ = [
    "HELP",
    "HelpRequested",
    "VersionRequested",
    "default_data_folder",
    "main",
    "mk_valid_name",
    "parse_args",
]

#: ``mk_valid_name`` is the core's rule (``coretext``), loaded on first use: the core's text
#: rules (markdown, links) cost more to import than the rest of this module, and only a
#: ``--display-name`` needs them, not ``--help`` or ``--version``.
__getattr__ = lazy_exports(globals(), {"mk_valid_name": "simplex_protocols.coretext"})

_NAME_RE: Final = re.compile(r"[a-z0-9](?:-?[a-z0-9])*-?")
_PROG: Final = "simplex-mcp"

NAME_MESSAGE: Final = (
    "NAME: 1 to 32 lowercase letters, digits and single hyphens, starting with a letter or digit."
)
RESET_OWNERS_MESSAGE: Final = (
    "--reset-owners takes --owners without a list: member IDs change in a new agent control chat."
)

#: ``--owners`` without a list. An argument can never hold a NUL character (the operating
#: system passes arguments as C strings), so this value cannot come from the command line.
_NO_LIST: Final = "\0"


@dataclass(frozen=True, slots=True)
class HelpRequested:
    """``-h`` or ``--help``: of every command, or (``command``) of one of them."""

    command: Literal["serve", "register"] | None = None


@dataclass(frozen=True, slots=True)
class VersionRequested:
    """``--version``."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises :class:`UsageError` (exit 2) instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        # Reached only by refusals the checks of this module do not make first.
        raise UsageError(f"{message}. {_PROG} --help shows the options.")


#: One width for the help, whatever the terminal, so that the text is the same everywhere.
_FORMATTER: Final = functools.partial(
    argparse.RawDescriptionHelpFormatter, width=100, max_help_position=26
)


def _new_parser(command: str, usage: str, description: str) -> _Parser:
    parser = _Parser(
        prog=f"{_PROG} {command}",
        usage=usage,
        description=description,
        formatter_class=_FORMATTER,
        add_help=False,
        # Options are spelled out: a prefix (--disp) is an unknown option, as in the plan.
        allow_abbrev=False,
        exit_on_error=False,
    )
    parser.add_argument("names", metavar="NAME", nargs="*", help="the agent's name")
    return parser


def _serve_parser() -> _Parser:
    p = _new_parser(
        "serve",
        f"{_PROG} serve NAME [options]",
        "Start the agent NAME (1 to 32 lowercase letters, digits and single hyphens).",
    )
    p.add_argument("--data", metavar="DIR", help="data folder (default ~/.simplex-mcp/NAME)")
    p.add_argument(
        "--display-name",
        metavar="TEXT",
        help="the agent's name in SimpleX, 1 to 50 characters (default NAME at the first start)",
    )
    p.add_argument(
        "--approve",
        metavar="MODE",
        help="requests: the owner approves connects, sends and leaves (default); "
        "host: actions are performed at once, the host asks the user",
    )
    p.add_argument(
        "--owners",
        metavar="ID:NAME,...",
        nargs="?",
        const=_NO_LIST,
        help="approve owners yourself: without a list, the link adds an observer; "
        "with a list, these members of the agent control chat are the owners",
    )
    p.add_argument(
        "--expire",
        metavar="HOURS",
        help=f"pending actions expire after 1 to {MAX_EXPIRE_HOURS} hours "
        f"(default {DEFAULT_EXPIRE_HOURS})",
    )
    p.add_argument(
        "--reset-owners",
        action="store_true",
        help="leave and delete the agent control chat, and create a new one",
    )
    p.add_argument("--new-token", action="store_true", help="replace the bearer token in DIR/token")
    p.add_argument(
        "--durable-actions",
        action="store_true",
        help="keep actions in DIR/actions.db across stops, crashes and restarts: pending cards "
        "keep working, and an action cut off while performed is never performed again",
    )
    p.add_argument(
        "--call-tool",
        action="store_true",
        help="add the tool call: the agent calls other bots' MCP and A2A methods, each bot's "
        "first call approved by the owner",
    )
    p.add_argument("--port", metavar="N", help=f"HTTP port on 127.0.0.1 (default {DEFAULT_PORT})")
    p.add_argument(
        "--stdio",
        action="store_true",
        help="serve MCP on standard input and output (for hosts that start the server "
        "themselves): no HTTP port, no token, every log line on standard error",
    )
    p.add_argument("--qr-code", metavar="SIZE", help="small (default) or large")
    p.add_argument(
        "--core",
        metavar="CORE",
        help="chat core: lib[:DB_PREFIX] (embedded, default), ws://HOST:PORT (a running "
        "simplex-chat -p PORT), or a simulated network",
    )
    p.add_argument("-h", "--help", action="store_true", help="show this help")
    return p


def _register_parser() -> _Parser:
    p = _new_parser(
        "register",
        f"{_PROG} register NAME [--scope user|local] [--data DIR] [--host HOST] [--dry-run]",
        "Add the agent to Claude Code (or another host) as the MCP server simplex-NAME.",
    )
    p.add_argument("--scope", metavar="SCOPE", help="user (default) or local")
    p.add_argument(
        "--host",
        metavar="HOST",
        help="claude-code (default), claude-desktop, cursor, vscode, codex, "
        "or json (print the entry)",
    )
    p.add_argument("--dry-run", action="store_true", help="print the change instead of making it")
    p.add_argument("--data", metavar="DIR", help="data folder (default ~/.simplex-mcp/NAME)")
    p.add_argument("-h", "--help", action="store_true", help="show this help")
    return p


#: The plan's exit codes: 2 for rejected arguments ("Rejected arguments"), 1 for the errors of
#: serve and register ("Errors, exit code 1"), 0 for "Stopped.".
EXIT_TABLE: Final = f"""\
exit status:
  0    stopped (Ctrl-C or SIGTERM: "Stopped."), registered, or --help / --version
  1    an error of serve or register (another server on the data folder, a port in use,
       the chat core cannot be used, never started)
  2    rejected arguments
  130  interrupted before serve runs (Ctrl-C)
  141  standard output closed by its reader (`{_PROG} ... | head`)
"""

_PARSERS: Final = {"serve": _serve_parser, "register": _register_parser}

#: The help of one command, by name.
COMMAND_HELP: Final = {name: build().format_help() for name, build in _PARSERS.items()}

HELP: Final = (
    f"SimpleX MCP server {VERSION}: an AI agent acts in SimpleX chats, and its owner approves "
    "each action.\n\n"
    f"usage: {_PROG} serve NAME [options]\n"
    f"       {_PROG} register NAME [--scope user|local] [--data DIR] [--host HOST] [--dry-run]\n"
    f"       {_PROG} --help | --version\n\n"
    + "\n".join(COMMAND_HELP.values())
    + f"\n{_PROG} COMMAND --help shows the options of one command; "
    f"{_PROG} --version prints the version.\n\n" + EXIT_TABLE
)


def default_data_folder(name: str, home: Path | None = None) -> Path:
    """``~/.simplex-mcp/NAME``."""
    return (home if home is not None else Path.home()) / ".simplex-mcp" / name


def _check_name(name: str) -> str:
    if len(name) > 32 or _NAME_RE.fullmatch(name) is None:
        raise UsageError(NAME_MESSAGE)
    return name


def _check_display_name(value: str) -> str:
    # Imported here, not at the top: see ``__getattr__`` above.
    from simplex_protocols.coretext import is_valid_display_name as is_valid_name
    from simplex_protocols.coretext import mk_valid_name

    if not is_valid_name(value):
        suggestion = mk_valid_name(value)
        if suggestion and is_valid_name(suggestion):
            raise UsageError(f"--display-name: not a valid SimpleX name; try `{suggestion}`.")
        raise UsageError("--display-name: not a valid SimpleX name.")
    return value


def _int_in(option: str, value: str, low: int, high: int, what: str) -> int:
    if re.fullmatch(r"[0-9]{1,6}", value) is None or not low <= int(value) <= high:
        raise UsageError(f"{option}: {what} {low} to {high} expected, got {value}")
    return int(value)


def _owner_entries(value: str) -> tuple[OwnerEntry, ...]:
    entries: list[OwnerEntry] = []
    for entry in value.split(","):
        member, sep, name = entry.partition(":")
        if not sep or re.fullmatch(r"[0-9]{1,15}", member) is None or int(member) == 0 or not name:
            raise UsageError(f"--owners: ID:NAME expected, got {entry}")
        entries.append(OwnerEntry(int(member), name))
    return tuple(entries)


#: The options that take no value, by command: ``--new-token=x`` is refused in the plan's words.
_FLAGS: Final = {
    "serve": frozenset(
        {"--reset-owners", "--new-token", "--durable-actions", "--stdio", "--call-tool", "--help"}
    ),
    "register": frozenset({"--dry-run", "--help"}),
}


def _parse(command: Literal["serve", "register"], args: list[str]) -> argparse.Namespace | None:
    """The namespace of ``args``, or ``None`` for ``--help``.

    Raises:
        UsageError: in the plan's words, in the order of the arguments.
    """
    parser = _PARSERS[command]()
    flags = _FLAGS[command]
    words = args[: args.index("--")] if "--" in args else args
    if any(word in ("-h", "--help") for word in words):
        return None
    for word in words:
        option, eq, _value = word.partition("=")
        if eq and option in flags:
            raise UsageError(f"{option} takes no value")
    try:
        namespace, extra = parser.parse_known_intermixed_args(args)
    except argparse.ArgumentError as exc:
        # The only refusal argparse makes with these options (no types, no choices, no
        # required options): an option that takes a value was given none.
        raise UsageError(f"{exc.argument_name} needs a value") from None
    for word in extra:
        if word.startswith("-") and word != "-":
            option = word.partition("=")[0]
            raise UsageError(f"Unknown option: {option}. {_PROG} --help shows the options.")
    namespace.names = [*namespace.names, *extra]
    return namespace


def _one_name(names: list[str], command: str) -> str:
    if not names:
        raise UsageError(f"NAME expected: {_PROG} {command} NAME")
    if len(names) > 1:
        raise UsageError(f"One NAME expected, got: {' '.join(names)}")
    return _check_name(names[0])


def parse_args(
    argv: Sequence[str], *, home: Path | None = None
) -> ServeOptions | RegisterOptions | HelpRequested | VersionRequested:
    """Parse ``simplex-mcp`` arguments (without the program name).

    Raises:
        UsageError: the arguments are rejected; its message is printed and the exit code is 2.
    """
    if not argv:
        raise UsageError(
            f"A command is expected: serve or register. {_PROG} --help shows the options."
        )
    command, rest = argv[0], list(argv[1:])
    if command in ("-h", "--help"):
        return HelpRequested()
    if command == "--version":
        return VersionRequested()
    if command == "serve":
        serve = _parse("serve", rest)
        return HelpRequested("serve") if serve is None else _serve_options(serve, home)
    if command == "register":
        register = _parse("register", rest)
        return HelpRequested("register") if register is None else _register_options(register, home)
    raise UsageError(f"Unknown command: {command}. The commands are serve and register.")


def _data_folder(value: str | None, name: str, home: Path | None) -> Path:
    if value == "":
        raise UsageError("--data needs a folder")
    return Path(value).expanduser() if value is not None else default_data_folder(name, home)


def _serve_options(ns: argparse.Namespace, home: Path | None) -> ServeOptions:
    name = _one_name(ns.names, "serve")
    owners: tuple[OwnerEntry, ...] | None = None
    if ns.owners is not None:
        owners = _owner_entries(ns.owners) if ns.owners != _NO_LIST else ()
    if ns.reset_owners and owners:
        raise UsageError(RESET_OWNERS_MESSAGE)
    if ns.display_name is not None:
        _check_display_name(ns.display_name)
    approve_text = ns.approve if ns.approve is not None else ApproveMode.REQUESTS.value
    if approve_text not in (ApproveMode.REQUESTS.value, ApproveMode.HOST.value):
        raise UsageError(f"--approve: requests or host expected, got {approve_text}")
    qr = ns.qr_code if ns.qr_code is not None else "small"
    if qr not in ("small", "large"):
        raise UsageError(f"--qr-code: small or large expected, got {qr}")
    expire = (
        _int_in("--expire", ns.expire, 1, MAX_EXPIRE_HOURS, "hours,")
        if ns.expire is not None
        else DEFAULT_EXPIRE_HOURS
    )
    if ns.stdio and ns.port is not None:
        raise UsageError("--port: no HTTP port with --stdio")
    port = _int_in("--port", ns.port, 1, 65535, "a port,") if ns.port is not None else DEFAULT_PORT
    data = _data_folder(ns.data, name, home)
    core = ns.core if ns.core is not None else DEFAULT_CORE
    if not core:
        raise UsageError("--core needs a value")
    return ServeOptions(
        name=name,
        data=data,
        data_given=ns.data is not None,
        display_name=ns.display_name,
        approve=ApproveMode(approve_text),
        owners=owners,
        expire_hours=expire,
        reset_owners=ns.reset_owners,
        new_token=ns.new_token,
        port=port,
        qr_code="large" if qr == "large" else "small",
        core=core,
        durable_actions=ns.durable_actions,
        stdio=ns.stdio,
        call_tool=ns.call_tool,
    )


def _register_options(ns: argparse.Namespace, home: Path | None) -> RegisterOptions:
    name = _one_name(ns.names, "register")
    scope = ns.scope if ns.scope is not None else "user"
    if scope not in ("user", "local"):
        raise UsageError(f"--scope: user or local expected, got {scope}")
    host = ns.host if ns.host is not None else "claude-code"
    if host not in HOSTS:
        raise UsageError(f"--host: one of {', '.join(HOSTS)} expected, got {host}")
    if host == "claude-desktop" and scope == "local":
        raise UsageError("--scope: Claude Desktop has no local scope")
    return RegisterOptions(
        name=name,
        data=_data_folder(ns.data, name, home),
        data_given=ns.data is not None,
        scope="local" if scope == "local" else "user",
        host=host,
        dry_run=ns.dry_run,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """The ``simplex-mcp`` console script. Returns the exit code.

    When the reader of standard output closes it (``simplex-mcp ... | head``), the command ends
    there, quietly, with 141 (128 + SIGPIPE), as a program that signal stops.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    with guarded_stdout():
        try:
            # `serve` stops on SIGINT itself, as the plan says ("Stopped.", exit 0); Ctrl-C
            # anywhere else (start-up, register) ends with one line and 130.
            return run_interruptible(lambda: _main(args), program="simplex-mcp", stderr=sys.stderr)
        except Exception as exc:
            if is_output_closed(exc):
                return OUTPUT_CLOSED_EXIT
            raise


def _main(args: list[str]) -> int:
    try:
        options = parse_args(args)
    except UsageError as exc:
        sys.stderr.write(exc.message + "\n")
        return 2
    if isinstance(options, HelpRequested):
        sys.stdout.write(HELP if options.command is None else COMMAND_HELP[options.command])
        return 0
    if isinstance(options, VersionRequested):
        sys.stdout.write(f"{_PROG} {VERSION}\n")
        return 0
    if isinstance(options, RegisterOptions):
        from .register import run_register

        return run_register(options, env=dict(os.environ))
    from .serve import run_serve

    return run_serve(options)


if __name__ == "__main__":
    sys.exit(main())
