"""simplex-call's command line: commands, options, exit codes, and call arguments.

Pure functions: nothing here does I/O except reading ``@FILE`` arguments.
"""

from __future__ import annotations

import argparse
import enum
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NoReturn, TextIO

from simplex_protocols.core import add_core_argument
from simplex_protocols.limits import DEFAULT_REQUEST_TIMEOUT_S, RESPONSE_WINDOW_S

__all__ = [
    "COMMANDS",
    "CLIError",
    "ExitCode",
    "Invocation",
    "build_parsers",
    "parse_call_arguments",
    "parse_command_line",
    "typed_value",
]


class ExitCode(enum.IntEnum):
    """The exit statuses of simplex-call. They are stable: scripts may rely on them."""

    OK = 0
    """The call was answered (a tool's own failure is 69), or the command did its work."""
    USAGE = 64
    """Bad arguments: an unknown option, a malformed ``key=value`` or JSON argument, a TARGET
    that is neither a link, a name nor a website, a refused URL, invalid params (-32602)."""
    NOT_FOUND = 65
    """The target cannot be found: an unknown SimpleX name, a deleted link, a website that
    publishes no address for agents, a website that cannot be reached."""
    NOT_SUPPORTED = 66
    """The target does not serve what was asked: the protocol, the transport, the method
    (-32601), the version (-32022, -32009, ``unsupported_version``), Service RPC on an
    address without ratchet keys, ``conversation_required`` when ``--transport rpc``; or the
    chat core lacks what was asked (``--transport rpc`` on a core that cannot send Service RPC
    requests; ``doctor``: a capability is missing)."""
    REFUSED = 67
    """The bot refused the request: ``bad_request``, ``too_large``, ``rate_limited`` (after
    the allowed retries), a signature it could not verify, a connection it rejected."""
    TIMED_OUT = 68
    """No answer before ``--timeout``: the bot may still act on the request."""
    REMOTE_ERROR = 69
    """The bot answered with an error: a JSON-RPC error, a tool result with ``isError``, a
    failed or cancelled task, the envelope error ``internal`` or an unknown code, or an
    answer that breaks the protocol."""
    UNAVAILABLE = 70
    """The chat core cannot be used here (not installed, not reachable, connection lost, a
    command refused), or the key folder is unsafe."""
    INTERRUPTED = 130
    """Interrupted (Ctrl-C)."""
    OUTPUT_CLOSED = 141
    """The reader of standard output closed it (``simplex-call ... | head``): the command stopped
    there, quietly. 128 + SIGPIPE, the status a shell reports for a program that signal ends."""

    @property
    def slug(self) -> str:
        """The code's name in ``--json`` output (``timed_out``, ...)."""
        return _SLUGS[self]


_SLUGS: Final = {
    ExitCode.OK: "ok",
    ExitCode.USAGE: "bad_arguments",
    ExitCode.NOT_FOUND: "not_found",
    ExitCode.NOT_SUPPORTED: "not_supported",
    ExitCode.REFUSED: "refused",
    ExitCode.TIMED_OUT: "timed_out",
    ExitCode.REMOTE_ERROR: "remote_error",
    ExitCode.UNAVAILABLE: "unavailable",
    ExitCode.INTERRUPTED: "interrupted",
    ExitCode.OUTPUT_CLOSED: "output_closed",
}


class CLIError(Exception):
    """A failure of the command, with its exit code and a message for people."""

    def __init__(self, exit_code: ExitCode, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.message = message
        self.hint = hint


EXIT_CODES_HELP: Final = """\
exit status:
  0    success
  64   bad arguments (unknown option, malformed key=value or JSON, refused URL,
       invalid params)
  65   not found (unknown SimpleX name, deleted link, no address for agents on the
       website, website unreachable)
  66   not supported (protocol, transport, method or version not served; Service RPC
       needs a conversation; doctor: the chat core lacks a capability)
  67   refused by the bot (bad_request, too_large, rate_limited, bad signature,
       connection rejected)
  68   timed out (no answer before --timeout)
  69   remote error (JSON-RPC error, tool error, failed task, internal or unknown
       envelope error, malformed answer)
  70   the chat core cannot be used (not installed, unreachable, lost), or the key
       folder is unsafe
  130  interrupted
  141  standard output closed by its reader (`simplex-call ... | head`)
"""

CALL_DESCRIPTION: Final = """\
Call a bot's MCP tools or A2A agent over SimpleX.

TARGET is a SimpleX contact address link, a SimpleX name (@name.simplex), or a website
(https://example.com, or example.com) whose llms.txt Communications section, well-known
simplex.json or A2A Agent Card names a SimpleX contact address for agents.

METHOD is, for MCP, a JSON-RPC method (tools/list, tools/call, server/discover, ...), or
`tool NAME` for tools/call of the tool NAME; for A2A, a method of the A2A JSON-RPC binding
(SendMessage, SendStreamingMessage, GetTask, CancelTask, ListTasks, SubscribeToTask,
GetExtendedAgentCard).

ARGS are key=value pairs or one JSON object (or @FILE / @- for a JSON object in a file
or on standard input). A value is read as JSON when it is valid JSON (numbers, true,
false, null, "strings", [arrays], {objects}), and as text otherwise; key==VALUE is
always text (order==7), and key:=VALUE must be valid JSON. For tools/call, name= is
the tool and the other pairs are its arguments. For SendMessage, text= is the message;
contextId=, taskId=, returnImmediately= and historyLength= are also read.
"""

CALL_EPILOG: Final = (
    """\
examples:
  simplex-call @acme.simplex tools/list
  simplex-call @acme.simplex tool availability item=anvil
  simplex-call https://acme.example tools/call name=availability item=anvil --sign
  simplex-call @acme.simplex SendMessage text="Price of two anvils" --json
  simplex-call @acme.simplex SendStreamingMessage text="Quote" --transport chat
  simplex-call plan @acme.simplex
  simplex-call discover https://acme.example
  simplex-call doctor --core ws://127.0.0.1:5225
  simplex-call demo

"""
    + EXIT_CODES_HELP
)

#: The commands other than calls, and their one-line help.
COMMANDS: Final = {
    "plan": "what a link or name declares, without connecting",
    "discover": "the SimpleX addresses a website publishes, with their declarations",
    "doctor": "what the chat core can do: its version and each capability the toolkit uses",
    "demo": "an offline tour over an in-process simulated network",
}


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= RESPONSE_WINDOW_S:
        raise argparse.ArgumentTypeError(
            f"the timeout is more than 0 and at most {RESPONSE_WINDOW_S:g} seconds (the core "
            "accepts a response within 180 s)"
        )
    return value


class _Parser(argparse.ArgumentParser):
    """An argument parser that raises :class:`CLIError` (exit 64) instead of exiting 2."""

    def error(self, message: str) -> NoReturn:
        raise CLIError(ExitCode.USAGE, message, hint=f"see `{self.prog} --help`")


def _common(parser: argparse.ArgumentParser, *, timeout: bool = True) -> None:
    add_core_argument(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object on standard output instead of readable text "
        "(errors too, with their exit code)",
    )
    if timeout:
        parser.add_argument(
            "--timeout",
            type=_positive_seconds,
            default=float(DEFAULT_REQUEST_TIMEOUT_S),
            metavar="SECONDS",
            help="how long to wait for each step: reading a website, connecting, and the "
            f"answer (default {DEFAULT_REQUEST_TIMEOUT_S:g}, at most {RESPONSE_WINDOW_S:g})",
        )
    progress = parser.add_mutually_exclusive_group()
    progress.add_argument(
        "--progress",
        dest="progress",
        action="store_const",
        const=True,
        default=None,
        help="show progress on standard error even when it is not a terminal (as plain lines)",
    )
    progress.add_argument(
        "--no-progress",
        dest="progress",
        action="store_const",
        const=False,
        help="never show progress (by default it is shown on a terminal, and never with --json)",
    )


def build_parsers(prog: str = "simplex-call") -> dict[str, argparse.ArgumentParser]:
    """The parser of calls and of each command, by name (``call``, ``plan``, ...)."""
    fmt = argparse.RawDescriptionHelpFormatter
    call = _Parser(
        prog=prog,
        usage=f"{prog} [options] TARGET METHOD [ARGS ...]\n"
        f"       {prog} {{plan,discover,doctor,demo}} [options] ...",
        description=CALL_DESCRIPTION,
        epilog="commands:\n"
        + "".join(f"  {name:<9} {text}\n" for name, text in COMMANDS.items())
        + "\n"
        + CALL_EPILOG,
        formatter_class=fmt,
    )
    call.add_argument(
        "target", metavar="TARGET", help="a contact address link, a SimpleX name, or a website"
    )
    call.add_argument("method", metavar="METHOD", help="the MCP or A2A method, or `tool NAME`")
    call.add_argument("--version", action="store_true", help="print the version and exit")
    call.add_argument("args", metavar="ARGS", nargs="*", help="key=value pairs, or one JSON object")
    call.add_argument(
        "--protocol",
        choices=("mcp", "a2a"),
        help="the protocol (default: the one the METHOD belongs to, among those the target "
        "declares)",
    )
    call.add_argument(
        "--transport",
        choices=("auto", "rpc", "chat"),
        default="auto",
        help="rpc: one Service RPC request; chat: /_call in a conversation (connecting "
        "first, or reusing the contact); auto (default): Service RPC when the target declares "
        "it for the protocol and the method can be answered in one shot, else a conversation",
    )
    call.add_argument(
        "--sign",
        action="store_true",
        help="sign Service RPC requests with a key kept for this responder only (created on "
        "first use in the key folder), so the bot can recognise you",
    )
    call.add_argument(
        "--key-dir",
        metavar="DIR",
        help="the folder of signing keys (default $XDG_CONFIG_HOME/simplex-call/keys, else "
        "~/.config/simplex-call/keys; created with mode 0700)",
    )
    call.add_argument(
        "--protocol-version",
        dest="protocol_version",
        metavar="VERSION",
        help="the protocol version to send (default: the first one the target declares that "
        "simplex-call speaks)",
    )
    _common(call)

    plan = _Parser(
        prog=f"{prog} plan",
        description="Show what a SimpleX link or name declares, read from its link data "
        "without connecting: the profile, the protocols with their versions and transports, "
        "the peers it serves (or a channel's audience and update frequency), and whether it "
        "is a business address.",
        epilog=EXIT_CODES_HELP,
        formatter_class=fmt,
    )
    plan.add_argument("target", metavar="TARGET", help="a SimpleX link or name")
    _common(plan)

    discover = _Parser(
        prog=f"{prog} discover",
        description="List the SimpleX addresses a website publishes (llms.txt Communications "
        "section, /.well-known/simplex.json, <link> relations of the home page, and the A2A "
        "Agent Card at /.well-known/agent-card.json), each with what its link data declares. "
        "Only https:// is fetched (http:// for loopback hosts); redirects, sizes and time are "
        "bounded, and no cookies are kept.",
        epilog=EXIT_CODES_HELP,
        formatter_class=fmt,
    )
    discover.add_argument("url", metavar="URL", help="the website (https://example.com)")
    discover.add_argument(
        "--no-plan",
        action="store_true",
        help="only read the website; do not read the addresses' link data (needs no chat core)",
    )
    _common(discover)

    doctor = _Parser(
        prog=f"{prog} doctor",
        description="Check the chat core before first use: its version, and one line per "
        "capability the toolkit relies on (ok, missing, unknown) with what a missing one "
        "affects. The probe asks the core harmlessly: command forms with a user that does not "
        "exist, and scratch values read back and removed at once; nothing is sent to anyone. "
        "Exit status 0 when nothing is missing, 66 when a capability is missing.",
        epilog=EXIT_CODES_HELP,
        formatter_class=fmt,
    )
    _common(doctor, timeout=False)

    demo = _Parser(
        prog=f"{prog} demo",
        description="An offline tour, with no setup: a reference bot serving MCP and A2A starts "
        "on an in-process simulated SimpleX network (a test double, not SimpleX itself), a "
        "website on 127.0.0.1 publishes its address in llms.txt, simplex-call discovers it, "
        "shows its declarations, and calls it: tools/list and tools/call over signed Service "
        "RPC, the same call in a conversation with progress replies, an A2A one-shot task and "
        "a streamed task.",
        epilog=EXIT_CODES_HELP,
        formatter_class=fmt,
    )
    demo.add_argument(
        "--seed", type=int, default=2026, help="the simulated network's seed (default 2026)"
    )
    return {"call": call, "plan": plan, "discover": discover, "doctor": doctor, "demo": demo}


@dataclass(frozen=True, slots=True)
class Invocation:
    """A parsed command line: the command (``call``, ``plan``, ``discover``, ``doctor``,
    ``demo``) and its options, or ``help_text`` when help (or the version) was asked for."""

    command: str
    options: argparse.Namespace
    help_text: str | None = None


#: Options that take a value, so that the value is not taken for the command word.
_VALUE_OPTIONS: Final = frozenset(
    {
        "--core",
        "--timeout",
        "--protocol",
        "--transport",
        "--key-dir",
        "--protocol-version",
        "--seed",
    }
)


def _command_word(argv: Sequence[str]) -> tuple[str, int | None]:
    skip = False
    for index, token in enumerate(argv):
        if skip:
            skip = False
            continue
        if token == "--":
            return "call", None
        if token.startswith("-"):
            if token in _VALUE_OPTIONS:
                skip = True
            continue
        return (token, index) if token in COMMANDS else ("call", None)
    return "call", None


def parse_command_line(argv: Sequence[str], prog: str = "simplex-call") -> Invocation:
    """Parse simplex-call's arguments.

    The command is the first word that is not an option or an option's value: ``plan``,
    ``discover``, ``doctor`` or ``demo``; anything else starts a call (``TARGET METHOD
    [ARGS]``).

    Raises:
        CLIError: ``USAGE`` for arguments the parsers refuse.
    """
    parsers = build_parsers(prog)
    command, index = _command_word(argv)
    rest = list(argv) if index is None else [*argv[:index], *argv[index + 1 :]]
    parser = parsers[command]
    words = rest[: rest.index("--") if "--" in rest else None]
    if any(t in ("-h", "--help") for t in words):
        return Invocation(command, argparse.Namespace(), parser.format_help())
    if "--version" in words:
        from simplex_protocols import __version__

        return Invocation(command, argparse.Namespace(), f"{prog} {__version__}\n")
    if command == "call" and not rest:
        raise CLIError(
            ExitCode.USAGE,
            "TARGET and METHOD are missing",
            hint=f"usage: {prog} TARGET METHOD [ARGS ...]; see `{prog} --help`",
        )
    options = parser.parse_args(rest)
    return Invocation(command, options)


# --------------------------------------------------------------------------- call arguments


def typed_value(text: str) -> Any:
    """A ``key=value`` value: the JSON value when ``text`` is valid JSON, else the text.

    ``3`` is a number, ``true`` a boolean, ``null`` null, ``"3"`` the string 3, ``[1,2]`` an
    array; ``anvil``, ``01``, ``NaN`` and ``1e999`` (not valid JSON here) stay text.
    """
    # The wire codec (and the compiled JSON library under it) loads with the first argument
    # read, not with the parser that `--help` builds.
    from simplex_protocols._wire import WireJSONError, loads

    try:
        return loads(text)
    except WireJSONError:
        return text


def _bad(message: str) -> CLIError:
    return CLIError(
        ExitCode.USAGE, message, hint="arguments are key=value pairs or one JSON object"
    )


def _json_object(text: str, where: str) -> dict[str, Any]:
    from simplex_protocols._wire import WireJSONError, loads

    try:
        value = loads(text)
    except WireJSONError as exc:
        raise _bad(f"{where} is not valid JSON ({exc.code})") from None
    if not isinstance(value, dict):
        raise _bad(f"{where} is not a JSON object")
    return value


def parse_call_arguments(tokens: Sequence[str], *, stdin: TextIO | None = None) -> dict[str, Any]:
    """The arguments of a call: ``key=value`` pairs, or one JSON object.

    Forms:
        ``key=value``: the value typed by :func:`typed_value`.
        ``key==text``: the value is the text as it is (``zip==01234``, ``order==7``).
        ``key:=JSON``: the value must be valid JSON.
        ``{...}``: one argument that is a whole JSON object.
        ``@FILE`` / ``@-``: one argument naming a file (or standard input) holding a JSON
            object.

    Raises:
        CLIError: ``USAGE``: a token of no known form, an empty key, a key given twice, a
            JSON object mixed with pairs, invalid JSON, a file that cannot be read.
    """
    if not tokens:
        return {}
    first = tokens[0]
    if first.lstrip().startswith("{") or (first.startswith("@") and "=" not in first):
        if len(tokens) > 1:
            raise _bad("a JSON object argument cannot be mixed with other arguments")
        if first.startswith("@"):
            source = first[1:]
            try:
                if source == "-":
                    text = (stdin if stdin is not None else sys.stdin).read()
                else:
                    text = Path(source).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise _bad(f"cannot read {source}: {exc}") from None
            return _json_object(text, source)
        return _json_object(first, "the argument")
    out: dict[str, Any] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep:
            raise _bad(f"{token!r} is not key=value")
        strict = key.endswith(":")
        if strict:
            key = key[:-1]
        if not key or key != key.strip():
            raise _bad(f"{token!r} has an empty key or spaces around it")
        if key in out:
            raise _bad(f"{key!r} is given twice")
        if not strict and value.startswith("="):
            out[key] = value[1:]
        elif strict:
            from simplex_protocols._wire import WireJSONError, loads

            try:
                out[key] = loads(value)
            except WireJSONError as exc:
                raise _bad(f"{key}:= needs valid JSON ({exc.code})") from None
        else:
            out[key] = typed_value(value)
    return out
