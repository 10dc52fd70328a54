"""``simplex-conformance bot --command CMD``: the live checks against a bot in any language,
started by the suite on a fresh simulated network.

The bot needs nothing but its chat core. The suite serves the network's user ``bot`` over
WebSocket, exactly as ``simplex-sim serve`` serves a core (the CLI's WebSocket API), and
passes the URL in ``SIMPLEX_CONFORMANCE_CORE``, the variable the caller harness gives a client.
The bot makes its user, profile and contact address with the core's own commands, as it would
on a real core. The suite reads the address the bot's user has on the network, and starts once
the bot's setup has settled: its profile, address, address settings and Service RPC switch
unchanged for :data:`SETTLE_S`. When the run ends the bot gets SIGTERM, then SIGKILL after
:data:`TERM_GRACE_S`. What it wrote on standard error is kept (:class:`BotOutput`) for the
report.

An external process cannot follow a manual clock, so such a run is on the system clock: the
waits are real (the fixture's rate limit costs its 60 s).
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.abc

from simplex_protocols._wire import dumps
from simplex_protocols.conformance._model import (
    ClockMode,
    LiveOptions,
    OptionsError,
    TargetUnreachableError,
)
from simplex_protocols.conformance.caller._contract import ENV_CORE
from simplex_protocols.conformance.caller._process import _drain, stop_group
from simplex_protocols.core import commands
from simplex_protocols.sim import SimServer

from ._environment import SimEnvironment

__all__ = [
    "BOT_USER",
    "ENV_CORE",
    "BotOutput",
    "BotStartError",
    "CommandEnvironment",
    "CommandOptions",
]

#: The simulated user (and core, and WebSocket path) the bot under test runs as.
BOT_USER: Final = "bot"
#: Real seconds the bot's setup must stay unchanged before the run starts.
SETTLE_S: Final = 0.5
#: How often the bot's setup is read while waiting for it.
_POLL_S: Final = 0.05
#: After SIGTERM, real seconds the bot has to exit before SIGKILL.
TERM_GRACE_S: Final = 5.0


@dataclass(slots=True)
class BotOutput:
    """What the bot's process did, filled in by the run (the command line reads it after).

    Attributes:
        argv: the command as split.
        exit_code: its exit status (negative: the signal that ended it); ``None`` while it runs
            or when it could not be started.
        exited_by_itself: it ended before the suite stopped it.
        stdout: what it printed on standard output (at most 1 MB, decoded as UTF-8).
        stderr: the same for standard error.
    """

    argv: tuple[str, ...] = ()
    exit_code: int | None = None
    exited_by_itself: bool = False
    stdout: str = ""
    stderr: str = ""

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """The last ``lines`` lines of standard error."""
        return self.stderr.rstrip("\n").splitlines()[-lines:] if self.stderr.strip() else []


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandOptions(LiveOptions):
    """:class:`LiveOptions` for a bot the suite starts itself (``--command``).

    Attributes:
        command: the bot's command line, split with :func:`shlex.split` and run without a
            shell; its environment has ``SIMPLEX_CONFORMANCE_CORE`` (:data:`ENV_CORE`).
        start_timeout_s: real seconds the bot has to make its contact address.
        output: filled in with what the bot's process did (see :class:`BotOutput`).
    """

    command: str = ""
    start_timeout_s: float = 30.0
    clock: ClockMode = ClockMode.SYSTEM
    output: BotOutput = field(default_factory=BotOutput, compare=False)

    def argv(self) -> list[str]:
        """The command, split.

        Raises:
            OptionsError: it is empty or does not split.
        """
        try:
            argv = shlex.split(self.command)
        except ValueError as exc:
            raise OptionsError(f"bot: the command does not parse: {exc}") from None
        if not argv:
            raise OptionsError("bot: the command is empty")
        return argv


class BotStartError(TargetUnreachableError):
    """The bot could not be checked at all: ``code`` says why (``cannot_start``,
    ``exited_early``, ``no_address``); nothing was measured."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def validate_command_options(options: CommandOptions) -> None:
    """Raise :class:`OptionsError` for what a ``--command`` run cannot do."""
    options.argv()
    if options.clock is ClockMode.MANUAL:
        raise OptionsError(
            "bot: a bot started with --command runs on real time; the manual clock cannot be used"
        )
    if options.start_timeout_s <= 0:
        raise OptionsError("bot: the start timeout must be positive")


class _BotProcess:
    """The bot's process: its own session (process group), so that stopping it stops what it
    started; its output read while it runs."""

    def __init__(self, argv: list[str], env: dict[str, str], output: BotOutput) -> None:
        self.argv = argv
        self.env = env
        self.output = output
        self.process: anyio.abc.Process | None = None
        self._out = bytearray()
        self._err = bytearray()
        self._drained = anyio.Event()

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        self.output.argv = tuple(self.argv)
        try:
            self.process = await anyio.open_process(
                self.argv,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise BotStartError(
                "cannot_start",
                f"the bot command could not be started: {self.argv[0]}: {exc.strerror or exc}",
            ) from None
        tg.start_soon(self._read)

    async def _read(self) -> None:
        assert self.process is not None
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_drain, self.process.stdout, self._out)
                tg.start_soon(_drain, self.process.stderr, self._err)
        finally:
            self._drained.set()

    @property
    def exit_code(self) -> int | None:
        return self.process.returncode if self.process is not None else None

    def _record(self) -> None:
        self.output.exit_code = self.exit_code
        self.output.stdout = self._out.decode("utf-8", "replace")
        self.output.stderr = self._err.decode("utf-8", "replace")

    async def stop(self) -> None:
        """SIGTERM to the bot's process group, SIGKILL after :data:`TERM_GRACE_S`."""
        process = self.process
        if process is None:
            return
        with anyio.CancelScope(shield=True):
            self.output.exited_by_itself = process.returncode is not None
            await stop_group(process, TERM_GRACE_S)
            with anyio.move_on_after(TERM_GRACE_S):
                await self._drained.wait()
            await process.aclose()
            self._record()

    async def early_exit_error(self, what: str) -> BotStartError:
        # The pipes close with the process (unless its children hold them): read them out.
        with anyio.move_on_after(TERM_GRACE_S):
            await self._drained.wait()
        self._record()
        tail = self.output.stderr_tail(1)
        said = f"; its last line on stderr: {tail[0][:300]}" if tail else ""
        return BotStartError(
            "exited_early", f"the bot exited with status {self.exit_code} {what}{said}"
        )


@dataclass(frozen=True, slots=True)
class _Setup:
    """The bot's setup as its core holds it: the address, and what must settle before the
    run reads the declarations."""

    address: str
    display_name: str
    fingerprint: str


class CommandEnvironment(SimEnvironment):
    """A fresh simulated network (system clock) whose user ``bot`` is served over WebSocket to
    the bot the command starts; the suite's callers, the group and the second reference bot are
    those of :class:`SimEnvironment`."""

    def __init__(self, options: CommandOptions, workdir: Path) -> None:
        super().__init__(options, "reference", workdir)
        self.command_options = options

    async def _serve_bot(self) -> tuple[str, str]:
        options = self.command_options
        server = await self._stack.enter_async_context(SimServer(self.network, port=0))
        env = dict(os.environ)
        env[ENV_CORE] = server.url(BOT_USER)
        bot = _BotProcess(options.argv(), env, options.output)
        assert self._tg is not None
        # Registered after the server, so the bot stops first and never sees its core vanish.
        self._stack.push_async_callback(bot.stop)
        await bot.start(self._tg)
        setup = await self._wait_for_setup(bot)
        return setup.address, setup.display_name

    def _read_setup(self) -> _Setup | None:
        if not self.network.has_core(BOT_USER):
            return None
        try:
            user = self.network.user(BOT_USER)
        except KeyError:
            return None
        address = user.address
        if address is None:
            return None
        # Read-only commands run on the bot's core, outside its session: it sees nothing.
        shown = user.command(commands.show_my_address(user.user_id))
        active = user.command(commands.show_active_user())
        profile = _dict(_dict(active.get("user")).get("profile"))
        name = profile.get("displayName")
        core = user.core
        fingerprint = dumps(
            [shown.get("contactLink"), profile, core.started, core.service_requests]
        )
        return _Setup(address, name if isinstance(name, str) else BOT_USER, fingerprint)

    async def _wait_for_setup(self, bot: _BotProcess) -> _Setup:
        timeout = self.command_options.start_timeout_s
        deadline = anyio.current_time() + timeout
        last: _Setup | None = None
        since = anyio.current_time()
        while True:
            if bot.exit_code is not None:
                raise await bot.early_exit_error("before it made its contact address")
            setup = self._read_setup()
            now = anyio.current_time()
            if setup != last:
                last, since = setup, now
            elif setup is not None and now - since >= SETTLE_S:
                return setup
            if now >= deadline:
                if setup is not None:
                    # An address that keeps changing is still an address: check what it is.
                    return setup
                raise BotStartError(
                    "no_address",
                    f"the bot made no contact address within {timeout:g} s (--start-timeout)",
                )
            await anyio.sleep(_POLL_S)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
