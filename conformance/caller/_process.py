"""Running the client under test: one process per scenario, bounded in time.

The command is split with :func:`shlex.split` and never run through a shell. The process gets
its own session (process group), so that a client that hangs is killed with everything it
started, by the group's own ID. Its output is read while it runs (a chatty client cannot block
on a full pipe) and kept up to :data:`MAX_OUTPUT_BYTES`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import anyio
import anyio.abc
from anyio.abc import ByteReceiveStream

__all__ = ["MAX_OUTPUT_BYTES", "ProcessResult", "run_process", "stop_group"]

#: Output kept from each of stdout and stderr.
MAX_OUTPUT_BYTES: Final = 1_000_000
#: After SIGTERM, how long a client has to exit before SIGKILL.
TERM_GRACE_S: Final = 1.0


@dataclass(frozen=True, slots=True)
class ProcessResult:
    """How the client's process went.

    Attributes:
        exit_code: its exit status (negative: the signal that ended it); ``None`` when it
            could not be started.
        killed: the harness ended it because it ran past its bound.
        duration_s: real seconds from start to exit.
        stdout: what it printed on stdout (decoded as UTF-8, invalid bytes replaced).
        stderr: the same for stderr.
        start_error: why it could not be started (``None`` when it started).
    """

    exit_code: int | None
    killed: bool
    duration_s: float
    stdout: str
    stderr: str
    start_error: str | None = None

    @property
    def started(self) -> bool:
        return self.start_error is None

    def problem(self) -> str | None:
        """What went wrong with the process itself, in words (``None``: it exited 0)."""
        if self.start_error is not None:
            return f"the client could not be started: {self.start_error}"
        if self.killed:
            return f"the client did not finish within {self.duration_s:.1f} s and was killed"
        if self.exit_code != 0:
            return f"the client exited with status {self.exit_code}"
        return None


async def _drain(stream: ByteReceiveStream | None, into: bytearray) -> None:
    if stream is None:
        return
    async for chunk in stream:
        room = MAX_OUTPUT_BYTES - len(into)
        if room > 0:
            into.extend(chunk[:room])


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def stop_group(process: anyio.abc.Process, grace_s: float) -> None:
    """End a process started with ``start_new_session=True``: SIGTERM to its process group,
    SIGKILL when it has not exited after ``grace_s`` seconds; then SIGKILL to what is left of
    the group, since children that outlive the process keep its pipes open."""
    if process.returncode is None:
        _kill_group(process.pid, signal.SIGTERM)
        with anyio.move_on_after(grace_s):
            await process.wait()
        if process.returncode is None:
            _kill_group(process.pid, signal.SIGKILL)
            await process.wait()
    _kill_group(process.pid, signal.SIGKILL)


async def run_process(argv: Sequence[str], env: Mapping[str, str], bound_s: float) -> ProcessResult:
    """Run ``argv`` with ``env``; end it (and its process group) after ``bound_s`` seconds."""
    started = time.monotonic()
    try:
        process = await anyio.open_process(
            list(argv),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return ProcessResult(None, False, 0.0, "", "", start_error=f"{argv[0]}: {exc.strerror}")
    out, err = bytearray(), bytearray()
    killed = False
    async with process, anyio.create_task_group() as tg:
        tg.start_soon(_drain, process.stdout, out)
        tg.start_soon(_drain, process.stderr, err)
        with anyio.move_on_after(bound_s):
            await process.wait()
        killed = process.returncode is None
        await stop_group(process, TERM_GRACE_S)
    return ProcessResult(
        exit_code=process.returncode,
        killed=killed,
        duration_s=time.monotonic() - started,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
    )
