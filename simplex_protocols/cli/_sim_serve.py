"""``simplex-sim serve``: the network, its users, their names and websites, and the endpoints.

What a *simulated user* is, for every option that names one: a core of the network that has a
user when the server starts, that is one named by ``--user`` or ``--demo-bot``, or one saved in
the ``--state`` file. (Cores that clients create later by connecting to
``ws://127.0.0.1:PORT/NAME`` start without a user, as the CLI's core does, so nothing can be
registered for them at start.)

The order of start-up is what makes the first line a promise: the demo bots serve, the names
are registered and the websites bound before the endpoints are announced, so a client that
reads the line can use all of them at once.
"""

from __future__ import annotations

import argparse
import errno
import signal
import sys
import tempfile
from collections.abc import Callable, Iterable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio

from simplex_protocols._groups import INTERRUPTED_EXIT
from simplex_protocols.errors import LinkError
from simplex_protocols.links import parse_simplex_name

if TYPE_CHECKING:
    from simplex_protocols.bot import ResponderBot
    from simplex_protocols.sim import SimNetwork, SimServer
    from simplex_protocols.sim._website import SimWebsite

__all__ = ["Assignment", "ServeError", "read_names_file", "run_serve"]

EXIT_OK: Final = 0
EXIT_RUNTIME: Final = 1
EXIT_USAGE: Final = 2

#: A web domain as a website has it: dot-separated labels of letters, digits and hyphens.
_DOMAIN_LABEL_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


class ServeError(Exception):
    """An option of ``serve`` cannot be used; ``status`` is the exit status it ends with."""

    def __init__(self, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Assignment:
    """``KEY=USER`` as an option or a line of the names file gives it."""

    key: str
    user: str
    source: str  # "--name", "--domain" or "FILE:LINE", for messages


def split_assignment(text: str, source: str) -> Assignment:
    """``NAME=USER`` split at its first ``=``; both sides must be given."""
    key, sep, user = text.strip().partition("=")
    if not sep or not key.strip() or not user.strip():
        raise ServeError(f"{source}: {text.strip()!r}: expected NAME=USER")
    return Assignment(key.strip(), user.strip(), source)


def read_names_file(path: Path) -> list[Assignment]:
    """The names of ``--names FILE``: one ``NAME=USER`` per line; ``#`` starts a comment.

    Raises:
        ServeError: the file cannot be read (status 1), or a line is not ``NAME=USER``.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ServeError(f"--names: cannot read {path}: {exc}", EXIT_RUNTIME) from None
    found: list[Assignment] = []
    for number, line in enumerate(text.splitlines(), start=1):
        content = line.split("#", 1)[0].strip()
        if content:
            found.append(split_assignment(content, f"{path}:{number}"))
    return found


def contact_name(assignment: Assignment) -> str:
    """The full name (``acme.simplex``) of a contact name given as ``acme.simplex`` or ``@...``.

    Raises:
        ServeError: not a SimpleX contact name (a ``#group`` name is refused: it would name a
            group link, which these options do not create).
    """
    text = assignment.key if assignment.key.startswith(("@", "#")) else "@" + assignment.key
    try:
        name = parse_simplex_name(text)
    except LinkError as exc:
        raise ServeError(f"{assignment.source}: {assignment.key!r}: {exc.reason}") from None
    if name.sigil != "@":
        raise ServeError(
            f"{assignment.source}: {assignment.key!r}: only contact names (@name.simplex) are "
            "registered here: they resolve to the user's contact address"
        )
    return name.full_domain


def web_domain(assignment: Assignment) -> str:
    """A website's domain (``acme.example``), lowercased.

    Raises:
        ServeError: not a domain name.
    """
    domain = assignment.key.lower().rstrip(".")
    labels = domain.split(".")
    if (
        len(labels) < 2
        or len(domain) > 253
        or any(
            not label
            or len(label) > 63
            or label[0] == "-"
            or label[-1] == "-"
            or not set(label) <= _DOMAIN_LABEL_CHARS
            for label in labels
        )
    ):
        raise ServeError(f"{assignment.source}: {assignment.key!r} is not a domain name")
    return domain


def parse_website(text: str) -> tuple[str, int]:
    """``HOST:PORT`` of ``--website``: a loopback host and a port (0: any free port).

    Raises:
        ServeError: another host, or no port.
    """
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ServeError(f"--website: {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ServeError(
            f"--website: {host!r}: the websites are served on loopback only "
            "(127.0.0.1, localhost or ::1)"
        )
    return host, int(port)


@dataclass(frozen=True, slots=True)
class ServePlan:
    """The checked options: who gets which name and website, and where they are served."""

    names: tuple[tuple[str, str], ...]  # (full name, user)
    domains: tuple[tuple[str, str], ...]  # (domain, user)
    website: tuple[str, int] | None
    demo_bots: tuple[str, ...]


def plan(args: argparse.Namespace) -> ServePlan:
    """Check the options that do not need the network (names, domains, the website).

    Raises:
        ServeError: an option is wrong, or the names file cannot be read.
    """
    assignments = [split_assignment(t, "--name") for t in args.name]
    if args.names is not None:
        assignments += read_names_file(args.names)
    names = tuple((contact_name(a), a.user) for a in assignments)
    domains = tuple(
        (web_domain(a), a.user) for a in (split_assignment(t, "--domain") for t in args.domain)
    )
    website = parse_website(args.website) if args.website is not None else None
    if domains and website is None:
        raise ServeError("--domain: the websites need --website HOST:PORT to be served on")
    if website is not None and not domains:
        raise ServeError("--website: it serves the websites of --domain DOMAIN=USER; give one")
    return ServePlan(names, domains, website, tuple(dict.fromkeys(args.demo_bot)))


def check_users(network: SimNetwork, serve_plan: ServePlan) -> None:
    """Every user a name or a domain is for is a simulated user (see the module's docstring).

    Raises:
        ServeError: one is not.
    """
    known = set(serve_plan.demo_bots)
    known.update(n for n in network.core_names if network.core(n).db.active_user_id is not None)
    for option, pairs in (("--name", serve_plan.names), ("--domain", serve_plan.domains)):
        for key, user in pairs:
            if user not in known:
                raise ServeError(
                    f"{option} {key}={user}: no simulated user {user!r}; add --user {user} "
                    "(or --demo-bot)"
                )


def load(args: argparse.Namespace) -> SimNetwork:
    from simplex_protocols.sim import SimNetwork

    state: Path | None = args.state
    if state is not None and state.exists():
        network = SimNetwork.load(state, chaos=args.chaos, core_profile=args.core_profile)
    else:
        network = SimNetwork(seed=args.seed, chaos=args.chaos, core_profile=args.core_profile)
    for name in args.user:
        if not network.has_core(name):
            network.add_user(name)
    return network


def run_serve(args: argparse.Namespace) -> int:
    """Run ``serve`` to its end; return the exit status."""
    try:
        serve_plan = plan(args)
        network = load(args)
        check_users(network, serve_plan)
    except ServeError as exc:
        print(f"simplex-sim: {exc}", file=sys.stderr)
        return exc.status
    except (OSError, ValueError) as exc:
        print(f"simplex-sim: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
    # Ctrl-C before the server listens is the KeyboardInterrupt that main() reports.
    return anyio.run(_serve, network, args, serve_plan)


async def _serve(network: SimNetwork, args: argparse.Namespace, serve_plan: ServePlan) -> int:
    from simplex_protocols.sim import SimServer
    from simplex_protocols.sim._website import SimWebsite

    default = args.default_user or (args.user[0] if args.user else "default")
    server = SimServer(network, port=args.port, default_core=default)
    state: Path | None = args.state
    stopped_by = signal.SIGTERM
    async with AsyncExitStack() as stack:
        bots = await _start_demo_bots(stack, network, serve_plan.demo_bots)
        for name, user in serve_plan.names:
            network.register_name(name, user)
        website: SimWebsite | None = None
        try:
            if serve_plan.website is not None:
                host, port = serve_plan.website
                website = SimWebsite(network, host=host, port=port)
                for domain, user in serve_plan.domains:
                    bot = bots.get(user)
                    website.add(domain, user, _card_of(bot) if bot is not None else None)
                await stack.enter_async_context(website)
            await server.start()
        except OSError as exc:
            print(f"simplex-sim: {_listen_error(exc, args.port, serve_plan)}", file=sys.stderr)
            return EXIT_RUNTIME
        try:
            # The signals are received before the endpoints are announced: a client (or a test)
            # that stops the server as soon as it reads them gets the ordinary stop.
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                _announce(network, server, website, serve_plan)
                async with anyio.create_task_group() as tg:
                    if state is not None:
                        tg.start_soon(_save_loop, network, state, args.save_every)
                    async for signum in signals:
                        stopped_by = signal.Signals(signum)
                        break
                    tg.cancel_scope.cancel()
        finally:
            await server.aclose()
            if state is not None:
                network.save(state)
    print("simplex-sim: stopped", flush=True)
    # Ctrl-C ends with 130 as every console script's does; SIGTERM is an ordinary stop.
    return INTERRUPTED_EXIT if stopped_by == signal.SIGINT else EXIT_OK


def _announce(
    network: SimNetwork, server: SimServer, website: SimWebsite | None, serve_plan: ServePlan
) -> None:
    profile = (
        "" if network.core_profile.name == "spec" else f", cores as {network.core_profile.name}"
    )
    print(
        "simplex-sim: simulated SimpleX network (a test double, not SimpleX), seed "
        f"{network.seed}{profile}, listening on ws://127.0.0.1:{server.port}",
        flush=True,
    )
    for name in network.core_names:
        bot = " (demo bot)" if name in serve_plan.demo_bots else ""
        print(f"  {name}: {server.url(name)}{bot}", flush=True)
    for name, user in serve_plan.names:
        print(f"  @{name}: the contact address of {user}", flush=True)
    if website is not None:
        for domain, user in serve_plan.domains:
            default = " (the default site)" if domain == website.domains[0] else ""
            print(f"  {domain}: {website.url}, the website of {user}{default}", flush=True)


def _listen_error(exc: OSError, port: int, serve_plan: ServePlan) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"a port is in use (--port {port} or --website); choose another"
    where = f"127.0.0.1:{port}"
    if serve_plan.website is not None:
        where += f" or {serve_plan.website[0]}:{serve_plan.website[1]}"
    return f"cannot listen on {where}: {exc}"


async def _start_demo_bots(
    stack: AsyncExitStack, network: SimNetwork, users: Iterable[str]
) -> dict[str, ResponderBot]:
    users = list(users)
    if not users:
        return {}
    from ._sim_bot import demo_bot

    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="simplex-sim-bots-")))
    bots: dict[str, ResponderBot] = {}
    for user in users:
        bot = demo_bot(folder / user)
        bots[user] = await stack.enter_async_context(bot.serving(network.backend(user)))
    return bots


def _card_of(bot: ResponderBot) -> Callable[[], dict[str, Any]]:
    # read when a client asks for the card: it lists the bot's address as it is then
    return bot.agent_card_json


async def _save_loop(network: SimNetwork, state: Path, every: float) -> None:
    while True:
        await anyio.sleep(max(every, 0.5))
        network.save(state)
