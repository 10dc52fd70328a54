"""``simplex-sim``: run the simulated SimpleX network.

``simplex-sim serve`` exposes each simulated user's chat core as a WebSocket endpoint that
speaks exactly the API of ``simplex-chat -p PORT``, one path per user
(``ws://127.0.0.1:PORT/alice``), so a program that works with the CLI works with it unchanged.
``simplex-sim chat USER`` is a small terminal chat client for one of those users.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from simplex_protocols._docs_url import doc_url
from simplex_protocols._groups import run_interruptible
from simplex_protocols._stdio import OUTPUT_CLOSED_EXIT, guarded_stdout, is_output_closed
from simplex_protocols.sim import CORE_PROFILES

# The network, its server and the event loop load when `serve` runs (in ._sim_serve):
# `--help` and `--version` need only the core profiles.

__all__ = ["build_parser", "main"]

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_OUTPUT_CLOSED = OUTPUT_CLOSED_EXIT

_DESCRIPTION = """\
A simulated SimpleX network for tests, demos and offline bot development: simulated
routers plus one chat core per user, in one process. It is a test double, not SimpleX:
what it gives clients is faithful to the SimpleX chat core (commands, responses, events,
IDs, errors and limits), but nothing leaves this machine.
"""

_SERVE_EPILOG = f"""\
Each user's core is the endpoint ws://127.0.0.1:PORT/NAME, created on demand when a client
connects (running, as the CLI's core is, with no user until a client creates one); NAME is
letters, digits, '.', '_' and '-'. ws://127.0.0.1:PORT/ is the core named by --default-user.
Point any program written for `simplex-chat -p PORT` at an endpoint.

--core-profile NAME makes every core behave as a real core of that version: spec (the newest,
as the seeds describe it; the default), v7.0 or v6.4. `simplex-call doctor` shows what each
lacks. The differences, and the core sources they come from:
  {doc_url("docs/sim.md")}

A USER of --name and --domain is a simulated user: one named by --user or --demo-bot, or saved
in the --state file. A name resolves to the user's contact address (a client's `/_connect plan
@acme.simplex` and `simplex-call @acme.simplex`), once the user has one: a demo bot makes its
own. The website answers for every --domain on one address, choosing the site by the request's
Host (the first --domain for any other), each document naming the owner's current address:
/llms.txt, /.well-known/simplex.json, the home page's <link rel="me">, and for a demo bot its
Agent Card at /.well-known/agent-card.json.

examples:
  simplex-sim serve --port 5225 --user alice --user bot
  simplex-sim serve --port 5225 --demo-bot acme --name acme.simplex=acme \\
      --domain acme.example=acme --website 127.0.0.1:8080
  simplex-sim serve --port 0 --state sim-state.json --seed 1
  simplex-sim serve --port 5225 --core-profile v6.4
"""


EXIT_TABLE = """\
exit status:
  0    serve stopped by SIGTERM (after saving --state), chat ended, or --version
  1    the state or names file cannot be read, a port cannot be listened on, or (chat) no
       simulated network at the endpoint
  2    bad arguments (a name, domain or website that cannot be used, a USER that is not a
       simulated user)
  130  interrupted (Ctrl-C; serve first closes its endpoints and saves --state)
  141  standard output closed by its reader (`simplex-sim serve | head`)
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="simplex-sim",
        description=_DESCRIPTION,
        epilog=EXIT_TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser(
        "serve",
        help="serve the simulated users' cores over WebSocket (the CLI's API)",
        description="Serve the simulated network: one WebSocket endpoint per user.",
        epilog=_SERVE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "--port",
        type=_port,
        default=5225,
        help="TCP port on 127.0.0.1 (0: any free port; default 5225)",
    )
    serve.add_argument(
        "--state",
        metavar="FILE",
        type=Path,
        help="load the network from FILE when it exists, and save it there while running and at exit",
    )
    serve.add_argument(
        "--seed",
        type=int,
        help="seed the network's randomness (keys, IDs, names) for repeatable runs",
    )
    serve.add_argument(
        "--user",
        metavar="NAME",
        action="append",
        default=[],
        help="create a user (and its core) named NAME at start; repeat for more users",
    )
    serve.add_argument(
        "--demo-bot",
        metavar="USER",
        action="append",
        default=[],
        help="run the bot of `simplex-call demo` (Acme Shop: MCP tools and an A2A agent, both "
        "transports) as the user USER; repeat for more",
    )
    serve.add_argument(
        "--name",
        metavar="NAME=USER",
        action="append",
        default=[],
        help="register the SimpleX name NAME (acme.simplex) for the contact address of USER; "
        "repeat for more names",
    )
    serve.add_argument(
        "--names",
        metavar="FILE",
        type=Path,
        help="more names: one NAME=USER per line (# starts a comment)",
    )
    serve.add_argument(
        "--domain",
        metavar="DOMAIN=USER",
        action="append",
        default=[],
        help="make USER the owner of the website DOMAIN (acme.example), served on --website; "
        "repeat for more",
    )
    serve.add_argument(
        "--website",
        metavar="HOST:PORT",
        help="serve the --domain websites (llms.txt, simplex.json, Agent Card) on this loopback "
        "address, e.g. 127.0.0.1:8080",
    )
    serve.add_argument(
        "--default-user",
        metavar="NAME",
        help="the core served at ws://127.0.0.1:PORT/ (default: the first --user, else 'default')",
    )
    serve.add_argument(
        "--core-profile",
        metavar="NAME",
        choices=sorted(CORE_PROFILES),
        default=None,
        help="the real core every simulated core behaves as: "
        + ", ".join(f"{name} ({p.summary.split(':')[0]})" for name, p in CORE_PROFILES.items())
        + "; default spec",
    )
    serve.add_argument(
        "--chaos",
        action="store_true",
        help="add an extra field to every response and event, and send an unknown event type after "
        "each command, to test that clients ignore what they do not know",
    )
    serve.add_argument(
        "--save-every",
        metavar="SECONDS",
        type=float,
        default=10.0,
        help="with --state, save at this interval too (default 10)",
    )
    chat = sub.add_parser(
        "chat",
        help="a terminal chat client for one user of a running `simplex-sim serve`",
        description="Chat as one simulated user, in the terminal: join links, see the chats "
        "and their messages live, and type messages and commands (for example /approve 1 in "
        "an agent control chat).",
        epilog=_CHAT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    chat.add_argument("user", metavar="USER", help="the user's core: ws://127.0.0.1:PORT/USER")
    chat.add_argument(
        "--port",
        type=_port,
        default=5225,
        help="the port of `simplex-sim serve` on 127.0.0.1 (default 5225)",
    )
    chat.add_argument(
        "--display-name",
        metavar="NAME",
        help="the profile's name when the user has none yet (default USER)",
    )
    return parser


_CHAT_EPILOG = """\
In the client:
  /join LINK      connect to a link (an address, a one-time link, a group or channel link)
  /address        your contact address (created on first use; connections are accepted)
  /chats          the chats, as @N (contacts) and #N (groups)
  /open @N|#N     open a chat: its recent messages, and where plain text goes
  /quit           leave (Ctrl-D too)
  other text      sent to the open chat: /approve 1 and bot commands included

example:
  simplex-sim serve --port 5225 &
  simplex-sim chat alice --display-name Alice
"""


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("a port is 0 to 65535")
    return value


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``simplex-sim``.

    When the reader of standard output closes it (``simplex-sim serve | head``), the command
    ends quietly with 141 (128 + SIGPIPE); ``serve`` first closes its endpoints and saves its
    state (``--state``), as when it is stopped.
    """
    with guarded_stdout():
        try:
            return run_interruptible(lambda: _main(argv), program="simplex-sim", stderr=sys.stderr)
        except Exception as exc:
            if is_output_closed(exc):
                return EXIT_OUTPUT_CLOSED
            raise


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.version:
        from simplex_protocols import __version__

        print(f"simplex-sim {__version__}")
        return EXIT_OK
    if args.command == "chat":
        return _chat(args)
    if args.command != "serve":
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    from ._sim_serve import run_serve

    return run_serve(args)


def _chat(args: argparse.Namespace) -> int:
    from ._sim_chat import run_chat

    if args.port == 0:
        print("simplex-sim chat: --port: the port of a running simplex-sim serve", file=sys.stderr)
        return EXIT_USAGE
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", args.user):
        print(
            "simplex-sim chat: USER: letters, digits, '.', '_' and '-' (the core's name)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return run_chat(args.user, args.port, args.display_name)
