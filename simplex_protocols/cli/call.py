"""simplex-call: call MCP tools and A2A agents of SimpleX bots, and find them on websites.

Commands::

    simplex-call TARGET METHOD [ARGS]     call a bot (MCP or A2A, Service RPC or a conversation)
    simplex-call plan TARGET              what a link or name declares, without connecting
    simplex-call discover URL             the addresses a website publishes, with declarations
    simplex-call doctor                   what the chat core can do (run it before first use)
    simplex-call demo                     an offline tour over a simulated network

``simplex-call --help`` lists every option and the exit statuses (``docs/simplex-call.md``).

From Python, :func:`main` takes the arguments and, for tests and embedding, the simulated
network that ``--core sim:NAME`` uses and the streams to write to; :func:`run` is the same as a
coroutine, for callers already inside an event loop (for example a test that runs a bot).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TextIO

from simplex_protocols._groups import run_interruptible
from simplex_protocols._stdio import OutputClosedError, guard_output

from ._call_args import CLIError, ExitCode, Invocation, parse_command_line

# The commands import their parts (the event loop, the core, the SDKs, HTTP) when they run,
# after the arguments are parsed: `--help`, `--version` and a usage error load none of them,
# not even anyio (with asyncio it is most of a bare start-up).
if TYPE_CHECKING:
    from simplex_protocols.sim import SimNetwork

    from ._call_session import Environment

__all__ = ["ExitCode", "main", "run"]


async def run(
    argv: Sequence[str],
    *,
    network: SimNetwork | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Run simplex-call with ``argv`` (without the program name) and return its exit status.

    Args:
        argv: the arguments.
        network: the simulated network for ``--core sim:NAME``; the process-wide default
            network when ``None``.
        stdout: where results go (default ``sys.stdout``).
        stderr: where notes, errors and progress go (default ``sys.stderr``).
        stdin: where ``@-`` arguments are read from (default ``sys.stdin``).
        environ: environment variables (default ``os.environ``).

    Never raises for a failure of the command: each ends in an exit status and a message.
    When the reader of ``stdout`` closes it (a broken pipe, as after ``| head``), the command
    stops there and returns :attr:`ExitCode.OUTPUT_CLOSED` (141) without a message.
    """
    out = guard_output(stdout if stdout is not None else sys.stdout)
    err = stderr if stderr is not None else sys.stderr
    try:
        parsed = _parse(list(argv), out, err)
        if isinstance(parsed, int):
            return parsed
        return await _execute(parsed, out, err, _environment(network, stdin, environ))
    except OutputClosedError:
        return int(ExitCode.OUTPUT_CLOSED)


def _environment(
    network: SimNetwork | None, stdin: TextIO | None, environ: Mapping[str, str] | None
) -> Callable[[], Environment]:
    # A factory: the session module (the core and its backends) loads only for a command
    # that uses it.
    def environment() -> Environment:
        from ._call_session import Environment

        return Environment(
            environ=dict(environ) if environ is not None else dict(os.environ),
            network=network,
            stdin=stdin,
        )

    return environment


def _parse(argv: list[str], out: TextIO, err: TextIO) -> Invocation | int:
    """The parsed command line, or the exit status when parsing answered it already: the help
    or the version printed, or a usage error reported."""
    try:
        invocation = parse_command_line(argv)
    except CLIError as exc:
        return _report_usage_error(exc, argv, out, err)
    if invocation.help_text is not None:
        out.write(invocation.help_text)
        out.flush()
        return int(ExitCode.OK)
    return invocation


async def _execute(
    invocation: Invocation, out: TextIO, err: TextIO, environment: Callable[[], Environment]
) -> int:
    from simplex_protocols._groups import first_error
    from simplex_protocols._stdio import is_output_closed

    from ._call_console import Console
    from ._call_errors import failure_of
    from ._call_run import report_failure, run_call, run_discover, run_plan

    env = environment()
    options = invocation.options
    console = Console(
        out,
        err,
        json_mode=bool(getattr(options, "json", False)),
        progress=getattr(options, "progress", None),
    )
    try:
        if invocation.command == "plan":
            return await run_plan(options, console, env)
        if invocation.command == "discover":
            return await run_discover(options, console, env)
        if invocation.command == "doctor":
            from ._call_doctor import run_doctor

            return await run_doctor(options, console, env)
        if invocation.command == "demo":
            from ._call_demo import run_demo

            return await run_demo(options, console, env)
        return await run_call(options, console, env)
    except Exception as exc:
        if is_output_closed(exc):
            # Not a failure of the call: the reader has what it wanted (`| head`).
            raise OutputClosedError(out) from exc
        return report_failure(console, failure_of(first_error(exc)))


def _report_usage_error(exc: CLIError, argv: list[str], out: TextIO, err: TextIO) -> int:
    from ._call_console import Console
    from ._call_errors import failure_of
    from ._call_run import report_failure

    console = Console(out, err, json_mode="--json" in argv, progress=False)
    return report_failure(console, failure_of(exc))


def main(
    argv: Sequence[str] | None = None,
    *,
    network: SimNetwork | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Entry point of ``simplex-call``: the arguments parsed, then :func:`run`'s command in a
    new event loop.

    Returns the exit status (the console script exits with it). Ctrl-C gives 130.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    out = guard_output(stdout if stdout is not None else sys.stdout)
    err = stderr if stderr is not None else sys.stderr
    try:
        parsed = _parse(args, out, err)
    except OutputClosedError:
        return int(ExitCode.OUTPUT_CLOSED)
    if isinstance(parsed, int):
        return parsed
    invocation = parsed
    environment = _environment(network, stdin, environ)

    def execute() -> int:
        import anyio

        try:
            return anyio.run(lambda: _execute(invocation, out, err, environment), backend="asyncio")
        except OutputClosedError:
            return int(ExitCode.OUTPUT_CLOSED)

    return run_interruptible(execute, program="simplex-call", stderr=err)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
