"""``simplex-mcp``: argument parsing, ``--help``, and the ``serve`` and ``register`` commands.

Parsing is pure (:func:`parse_args` returns options or raises :class:`UsageError`); rejected
arguments exit with code 2 and the plan's messages (plan "Options", "Rejected arguments").
``--owners`` takes a list or nothing: it has no value when the next argument is absent or starts
with ``--``.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from simplex_protocols._groups import run_interruptible
from simplex_protocols._stdio import OUTPUT_CLOSED_EXIT, guarded_stdout, is_output_closed
from simplex_protocols.coretext import mk_valid_name as mk_valid_name

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
from .text import is_valid_name

__all__ = [
    "HELP",
    "HelpRequested",
    "default_data_folder",
    "main",
    "mk_valid_name",
    "parse_args",
]

_NAME_RE: Final = re.compile(r"[a-z0-9](?:-?[a-z0-9])*-?")

HELP: Final = f"""\
SimpleX MCP server {VERSION}: an AI agent acts in SimpleX chats, and its owner approves each action.

Usage:
  simplex-mcp serve NAME [options]
  simplex-mcp register NAME [--scope user|local] [--data DIR]

serve NAME: start the agent NAME (1 to 32 lowercase letters, digits and single hyphens).
  --data DIR            data folder (default ~/.simplex-mcp/NAME)
  --display-name TEXT   the agent's name in SimpleX, 1 to 50 characters (default NAME at the first start)
  --approve MODE        requests: the owner approves connects, sends and leaves (default);
                        host: actions are performed at once, the host asks the user
  --owners [ID:NAME,...]  approve owners yourself: without a list, the link adds an observer;
                        with a list, these members of the agent control chat are the owners
  --expire HOURS        pending actions expire after 1 to 23 hours (default 23)
  --reset-owners        leave and delete the agent control chat, and create a new one
  --new-token           replace the bearer token in DIR/token
  --port N              HTTP port on 127.0.0.1 (default {DEFAULT_PORT})
  --qr-code SIZE        small (default) or large
  --core CORE           chat core: lib[:DB_PREFIX] (embedded, default), ws://HOST:PORT (a running
                        simplex-chat -p PORT), or a simulated network

register NAME: add the agent to Claude Code as the MCP server simplex-NAME.
  --scope SCOPE         user (default) or local
  --data DIR            data folder (default ~/.simplex-mcp/NAME)

  -h, --help            show this help
"""

NAME_MESSAGE: Final = (
    "NAME: 1 to 32 lowercase letters, digits and single hyphens, starting with a letter or digit."
)
RESET_OWNERS_MESSAGE: Final = (
    "--reset-owners takes --owners without a list: member IDs change in a new agent control chat."
)


@dataclass(frozen=True, slots=True)
class HelpRequested:
    """``-h`` or ``--help``."""


def default_data_folder(name: str, home: Path | None = None) -> Path:
    """``~/.simplex-mcp/NAME``."""
    return (home if home is not None else Path.home()) / ".simplex-mcp" / name


def _check_name(name: str) -> str:
    if len(name) > 32 or _NAME_RE.fullmatch(name) is None:
        raise UsageError(NAME_MESSAGE)
    return name


def _check_display_name(value: str) -> str:
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


_SERVE_VALUED: Final = frozenset(
    {"--data", "--display-name", "--approve", "--expire", "--port", "--qr-code", "--core"}
)
_SERVE_FLAGS: Final = frozenset({"--reset-owners", "--new-token"})
_REGISTER_VALUED: Final = frozenset({"--scope", "--data"})


def _split(
    args: Sequence[str], valued: frozenset[str], flags: frozenset[str], *, owners: bool
) -> tuple[list[str], dict[str, str], set[str], str | None, bool]:
    """Split arguments into positionals, valued options, flags and ``--owners``."""
    positionals: list[str] = []
    values: dict[str, str] = {}
    seen_flags: set[str] = set()
    owners_value: str | None = None
    owners_given = False
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg in ("-h", "--help"):
            raise _Help
        if not arg.startswith("-") or arg == "-":
            positionals.append(arg)
            continue
        if arg == "--":
            positionals.extend(args[i:])
            break
        option, eq, inline = arg.partition("=")
        if owners and option == "--owners":
            owners_given = True
            if eq:
                owners_value = inline
            elif i < len(args) and not args[i].startswith("--"):
                owners_value = args[i]
                i += 1
            else:
                owners_value = None
            continue
        if option in flags:
            if eq:
                raise UsageError(f"{option} takes no value")
            seen_flags.add(option)
            continue
        if option in valued:
            if eq:
                values[option] = inline
            elif i < len(args):
                values[option] = args[i]
                i += 1
            else:
                raise UsageError(f"{option} needs a value")
            continue
        raise UsageError(f"Unknown option: {option}. simplex-mcp --help shows the options.")
    return positionals, values, seen_flags, owners_value, owners_given


class _Help(Exception):
    pass


def _one_name(positionals: list[str], command: str) -> str:
    if not positionals:
        raise UsageError(f"NAME expected: simplex-mcp {command} NAME")
    if len(positionals) > 1:
        raise UsageError(f"One NAME expected, got: {' '.join(positionals)}")
    return _check_name(positionals[0])


def parse_args(
    argv: Sequence[str], *, home: Path | None = None
) -> ServeOptions | RegisterOptions | HelpRequested:
    """Parse ``simplex-mcp`` arguments (without the program name).

    Raises:
        UsageError: the arguments are rejected; its message is printed and the exit code is 2.
    """
    try:
        if not argv:
            raise UsageError(
                "A command is expected: serve or register. simplex-mcp --help shows the options."
            )
        command, rest = argv[0], list(argv[1:])
        if command in ("-h", "--help"):
            return HelpRequested()
        if command == "serve":
            return _parse_serve(rest, home)
        if command == "register":
            return _parse_register(rest, home)
        raise UsageError(f"Unknown command: {command}. The commands are serve and register.")
    except _Help:
        return HelpRequested()


def _parse_serve(args: list[str], home: Path | None) -> ServeOptions:
    positionals, values, flags, owners_value, owners_given = _split(
        args, _SERVE_VALUED, _SERVE_FLAGS, owners=True
    )
    name = _one_name(positionals, "serve")
    owners: tuple[OwnerEntry, ...] | None = None
    if owners_given:
        owners = _owner_entries(owners_value) if owners_value is not None else ()
    reset_owners = "--reset-owners" in flags
    if reset_owners and owners:
        raise UsageError(RESET_OWNERS_MESSAGE)
    display_name = values.get("--display-name")
    if display_name is not None:
        _check_display_name(display_name)
    approve_text = values.get("--approve", ApproveMode.REQUESTS.value)
    if approve_text not in (ApproveMode.REQUESTS.value, ApproveMode.HOST.value):
        raise UsageError(f"--approve: requests or host expected, got {approve_text}")
    qr = values.get("--qr-code", "small")
    if qr not in ("small", "large"):
        raise UsageError(f"--qr-code: small or large expected, got {qr}")
    expire = (
        _int_in("--expire", values["--expire"], 1, MAX_EXPIRE_HOURS, "hours,")
        if "--expire" in values
        else DEFAULT_EXPIRE_HOURS
    )
    port = (
        _int_in("--port", values["--port"], 1, 65535, "a port,")
        if "--port" in values
        else DEFAULT_PORT
    )
    data_text = values.get("--data")
    if data_text == "":
        raise UsageError("--data needs a folder")
    core = values.get("--core", DEFAULT_CORE)
    if not core:
        raise UsageError("--core needs a value")
    return ServeOptions(
        name=name,
        data=Path(data_text).expanduser()
        if data_text is not None
        else default_data_folder(name, home),
        data_given=data_text is not None,
        display_name=display_name,
        approve=ApproveMode(approve_text),
        owners=owners,
        expire_hours=expire,
        reset_owners=reset_owners,
        new_token="--new-token" in flags,
        port=port,
        qr_code="large" if qr == "large" else "small",
        core=core,
    )


def _parse_register(args: list[str], home: Path | None) -> RegisterOptions:
    positionals, values, _flags, _owners, _given = _split(
        args, _REGISTER_VALUED, frozenset(), owners=False
    )
    name = _one_name(positionals, "register")
    scope = values.get("--scope", "user")
    if scope not in ("user", "local"):
        raise UsageError(f"--scope: user or local expected, got {scope}")
    data_text = values.get("--data")
    if data_text == "":
        raise UsageError("--data needs a folder")
    return RegisterOptions(
        name=name,
        data=Path(data_text).expanduser()
        if data_text is not None
        else default_data_folder(name, home),
        data_given=data_text is not None,
        scope="local" if scope == "local" else "user",
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
        sys.stdout.write(HELP)
        return 0
    if isinstance(options, RegisterOptions):
        from .register import run_register

        return run_register(options, env=dict(os.environ))
    from .serve import run_serve

    return run_serve(options)
