"""simplex-bridge: put an existing MCP server on SimpleX, unchanged.

Commands::

    simplex-bridge [--core CORE] [options] -- COMMAND [ARGS...]     a stdio MCP server
    simplex-bridge [--core CORE] [options] --url URL [--header 'Name: value']...

The bridge starts (or connects to) the MCP server with the ``mcp`` SDK's client, and serves
what it offers as a :class:`~simplex_protocols.bot.ResponderBot`: the same profile,
``protocols`` declaration, contact address and logging, on both transports. See
``docs/simplex-bridge.md``.

From Python, :func:`open_bridge` gives the bot for a server (the library use);
:func:`main` and :func:`run` are the command, with the simulated network and the streams to
write to passed in by tests.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from simplex_protocols._exports import lazy_exports

from ._bridge_args import BridgeError, BridgeOptions, parse_command_line
from ._call_args import ExitCode

# The upstream side (the MCP SDK, HTTP) and the event loop load when a bridge opens, after the
# arguments are parsed: `--help`, `--version` and a usage error load none of it, not even
# anyio (with asyncio it is most of a bare start-up).
if TYPE_CHECKING:
    import anyio.abc

    from simplex_protocols._clock import Clock
    from simplex_protocols.bot import ResponderBot
    from simplex_protocols.sim import SimNetwork

    from ._bridge_upstream import Backoff, HTTPServer, StdioServer, Upstream, UpstreamSpec

__all__ = [
    "Backoff",
    "Bridge",
    "BridgeError",
    "HTTPServer",
    "StdioServer",
    "Upstream",
    "main",
    "open_bridge",
    "run",
]

__getattr__ = lazy_exports(
    globals(),
    dict.fromkeys(("Backoff", "HTTPServer", "StdioServer", "Upstream"), "._bridge_upstream"),
)

#: The ResponderBot's file for the MCP requestState secret, so that a bridge and a bot with
#: the same data folder accept each other's states (MCP-MSG-6).
_MCP_SECRET = "mcp-request-state.secret"


@dataclass(frozen=True)
class Bridge:
    """A bridge that is up: the bot to serve, and the upstream session it forwards to."""

    bot: ResponderBot
    upstream: Upstream


@asynccontextmanager
async def open_bridge(
    server: UpstreamSpec,
    *,
    display_name: str | None = None,
    description: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    clock: Clock | None = None,
    backoff: Backoff | None = None,
    **bot_options: Any,
) -> AsyncIterator[Bridge]:
    """Start or reach the MCP server ``server``, and make the bot that serves it over SimpleX.

    The server runs (and is started again when it exits) as long as the block; serve the bot
    inside it, for example with ``await bridge.bot.run_async(core)``. Leaving the block stops
    the server.

    Args:
        server: a :class:`StdioServer` (a command) or an :class:`HTTPServer` (a URL).
        display_name: the bot's display name (default: the server's title or name, made
            valid as the core's mkValidName does).
        description: the profile's description (default: "MCP server NAME, over SimpleX.").
        data_dir: the bot's data folder (default: ResponderBot's for the display name).
        clock: the clock of the bot and of the restart delays.
        backoff: the delays between restarts (default: 1 s doubling up to 60 s).
        **bot_options: more :class:`~simplex_protocols.bot.ResponderBot` options
            (``peer_type``, ``transports``, ``welcome``, ``log_contents`` ...).

    Raises:
        Exception: the server's first session could not start (the SDK's error: ``OSError``
            for a command that cannot run, ``MCPError`` for a failed handshake, ...).
        BotConfigError: a bot option the bot refuses.
    """
    import anyio

    from simplex_protocols.bindings.mcp import load_or_create_secret
    from simplex_protocols.bot import ResponderBot
    from simplex_protocols.bot._state import default_data_folder

    from ._bridge_forward import BridgeBinding, forwarding_server
    from ._bridge_upstream import Upstream

    upstream = Upstream(server, clock=clock, backoff=backoff)
    async with anyio.create_task_group() as tg:
        client = await tg.start(upstream.run)
        info = client.server_info
        server_name = info.name if info is not None and info.name else "MCP server"
        name = display_name if display_name is not None else _display_name(info)
        folder = data_dir if data_dir is not None else default_data_folder(name)
        forwarder = forwarding_server(
            upstream,
            client.server_capabilities,
            name=server_name,
            version=info.version if info is not None else None,
            instructions=client.instructions,
        )
        binding = BridgeBinding(
            forwarder,
            upstream,
            # MCP-MSG-6: a requestState sealed before a restart is still accepted after it.
            request_state_keys=[load_or_create_secret(os.path.join(folder, _MCP_SECRET))],
            clock=clock,
        )
        bot = ResponderBot(
            display_name=name,
            mcp=binding,
            description=(description if description is not None else _description(server_name)),
            data_dir=folder,
            clock=clock,
            **bot_options,
        )
        try:
            yield Bridge(bot, upstream)
        finally:
            tg.cancel_scope.cancel()


def _display_name(info: Any) -> str:
    """A display name the core accepts, from the server's title or name (the core refuses
    names with ``/`` and the like, as in ``mcp-servers/everything``)."""
    from simplex_protocols.coretext import mk_valid_name

    for text in (getattr(info, "title", None), getattr(info, "name", None)):
        if isinstance(text, str) and (valid := mk_valid_name(text)):
            return valid
    return "MCP server"


def _description(server_name: str) -> str:
    # A profile's description has at most 160 characters; a long server name is cut.
    return f"MCP server {server_name[:120]}, over SimpleX."


# ---------------------------------------------------------------------------------- command


async def run(
    argv: Sequence[str],
    *,
    network: SimNetwork | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    clock: Clock | None = None,
    backoff: Backoff | None = None,
    handle_signals: bool = True,
) -> int:
    """Run simplex-bridge with ``argv`` (without the program name); return its exit status.

    Args:
        argv: the arguments.
        network: the simulated network for ``--core sim:NAME`` (default: the process-wide one).
        stdout: where ``--help``, ``--version`` and the demo go (default ``sys.stdout``).
        stderr: where errors and the stop line go (default ``sys.stderr``).
        clock: the bot's and the restart delays' clock (tests pass a ``ManualClock``).
        backoff: the delays between restarts.
        handle_signals: stop on SIGINT (status 130) and SIGTERM (status 0).

    Never raises for a failure of the command: each ends in an exit status and one line.
    """
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    parsed = _parse(argv, out, err)
    if isinstance(parsed, int):
        return parsed
    return await _reporting(err, _serve(parsed, network, out, err, clock, backoff, handle_signals))


def _parse(argv: Sequence[str], out: TextIO, err: TextIO) -> BridgeOptions | int:
    """The options, or the exit status when parsing answered the command line already: the
    help or the version printed, or a usage error reported."""
    try:
        parsed = parse_command_line(argv)
    except BridgeError as exc:
        return _report(err, exc)
    if isinstance(parsed, str):
        out.write(parsed)
        out.flush()
        return int(ExitCode.OK)
    return parsed


async def _reporting(err: TextIO, serving: Awaitable[int]) -> int:
    """``serving``'s exit status, a :class:`BridgeError` reported as its one line and status."""
    try:
        return await serving
    except BridgeError as exc:
        return _report(err, exc)


def _report(err: TextIO, exc: BridgeError) -> int:
    _say(err, f"{exc.message} ({exc.code})")
    if exc.exit_code is ExitCode.USAGE:
        _say(err, "see simplex-bridge --help")
    return int(exc.exit_code)


async def _serve(
    options: BridgeOptions,
    network: SimNetwork | None,
    out: TextIO,
    err: TextIO,
    clock: Clock | None,
    backoff: Backoff | None,
    handle_signals: bool,
) -> int:
    import anyio
    import anyio.abc

    from simplex_protocols.bot import configure_bot_logging
    from simplex_protocols.core import CoreKind
    from simplex_protocols.errors import BotConfigError, SimplexError

    from ._bridge_upstream import HTTPServer, StdioServer, describe_failure

    configure_bot_logging(30 if options.quiet else 20)
    server: UpstreamSpec = (
        HTTPServer(options.url, options.headers)
        if options.url is not None
        else StdioServer(options.command)
    )
    core: Any = options.core
    sim_network = network
    if options.core is not None and options.core.kind is CoreKind.SIMULATOR:
        if sim_network is None:
            from simplex_protocols.sim import default_network

            sim_network = default_network()
        core = sim_network.backend(options.core.user or "bridge")
    bot_options: dict[str, Any] = {
        "peer_type": options.peer_type,
        "transports": options.transports,
        "welcome": options.welcome,
        "log_contents": options.log_contents,
    }
    interrupted = False
    try:
        async with open_bridge(
            server,
            display_name=options.display_name,
            description=options.description,
            data_dir=options.data_dir,
            clock=clock,
            backoff=backoff,
            **bot_options,
        ) as bridge:
            bot = bridge.bot
            async with anyio.create_task_group() as tg:
                if handle_signals:

                    async def watch() -> None:
                        nonlocal interrupted
                        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                            async for signum in signals:
                                interrupted = signum == signal.SIGINT
                                # One line; the bot's own "stopping" log line is not needed.
                                _say(err, "interrupted, stopping" if interrupted else "stopping")
                                await bot.shutdown(grace_s=0)
                                return

                    tg.start_soon(watch)

                async def serve_then_stop(
                    *, task_status: anyio.abc.TaskStatus[Any] = anyio.TASK_STATUS_IGNORED
                ) -> None:
                    await bot.serve(core, task_status=task_status)
                    tg.cancel_scope.cancel()

                await tg.start(serve_then_stop)
                if options.demo:
                    from ._bridge_demo import run_demo

                    assert sim_network is not None
                    await run_demo(bot, sim_network, out)
                else:
                    out.write(f"{bot.display_name} is at {bot.address}\n")
                    out.flush()
    except BridgeError:
        raise
    except BotConfigError as exc:
        raise BridgeError("bad_setting", ExitCode.USAGE, str(exc)) from None
    except SimplexError as exc:
        raise BridgeError("core_unavailable", ExitCode.UNAVAILABLE, str(exc)) from None
    except (Exception, BaseExceptionGroup) as exc:
        inner = _innermost(exc)
        if isinstance(inner, BotConfigError):
            raise BridgeError("bad_setting", ExitCode.USAGE, str(inner)) from None
        if isinstance(inner, SimplexError):
            raise BridgeError("core_unavailable", ExitCode.UNAVAILABLE, str(inner)) from None
        raise BridgeError(
            "upstream_failed",
            ExitCode.REMOTE_ERROR,
            f"the MCP server {server.label} could not be started or reached: "
            f"{describe_failure(inner)}",
        ) from None
    return int(ExitCode.INTERRUPTED) if interrupted else int(ExitCode.OK)


def _innermost(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _say(err: TextIO, line: str) -> None:
    err.write(f"simplex-bridge: {line}\n")
    err.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``simplex-bridge``: the arguments parsed, then the bridge served in a new
    event loop.

    Returns the exit status (the console script exits with it).
    """
    parsed = _parse(list(sys.argv[1:] if argv is None else argv), sys.stdout, sys.stderr)
    if isinstance(parsed, int):
        return parsed
    options = parsed
    try:
        import anyio

        return anyio.run(
            lambda: _reporting(
                sys.stderr, _serve(options, None, sys.stdout, sys.stderr, None, None, True)
            ),
            backend="asyncio",
        )
    except KeyboardInterrupt:
        # Ctrl-C before the signal handler is in place (while the server starts).
        _say(sys.stderr, "interrupted")
        return int(ExitCode.INTERRUPTED)


if __name__ == "__main__":
    sys.exit(main())
