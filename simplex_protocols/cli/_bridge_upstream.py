"""simplex-bridge's upstream: the MCP server it forwards to, kept connected.

An :class:`Upstream` holds one ``mcp`` SDK client session to the server (a stdio child
process, or a Streamable HTTP endpoint) and starts it again when it ends: a child that exits,
an HTTP stream that closes. Between two sessions it waits with a growing delay
(:class:`Backoff`), on an injected clock so tests do not sleep; calls that arrive meanwhile
get :class:`UpstreamRestarting`, which the bridge answers with a retryable error.
"""

from __future__ import annotations

import logging
import math
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Self, TextIO

import anyio
import anyio.abc
from mcp.client import Client
from mcp.shared.message import SessionMessage

from simplex_protocols._clock import Clock, SystemClock

# The SDK's names for a transport's streams live in private modules (mcp 2.3, the range
# pyproject.toml pins); only the type checker reads them.
if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams
    from mcp.shared._stream_protocols import ReadStream

__all__ = [
    "Backoff",
    "HTTPServer",
    "StdioServer",
    "Upstream",
    "UpstreamRestarting",
    "UpstreamSpec",
    "describe_failure",
]

logger = logging.getLogger("simplex_protocols.bot.bridge")


@dataclass(frozen=True)
class StdioServer:
    """An MCP server started as a child process that speaks MCP on its stdin and stdout.

    Attributes:
        command: the program and its arguments.
        env: extra environment variables for the child (merged over the SDK's defaults).
        errlog: where the child's standard error goes: a file with a descriptor (default
            ``sys.stderr``).
    """

    command: Sequence[str]
    env: Mapping[str, str] | None = None
    errlog: TextIO | None = None

    def __post_init__(self) -> None:
        if not self.command or not self.command[0]:
            raise ValueError("the MCP server's command is empty")

    @property
    def label(self) -> str:
        """The command, for log lines."""
        return " ".join(self.command)

    def transport(self) -> AbstractAsyncContextManager[TransportStreams]:
        """A new SDK transport that starts the child."""
        from mcp.client.stdio import StdioServerParameters, stdio_client

        # The SDK runs the program without a shell: look it up on PATH as a shell would.
        executable = shutil.which(self.command[0]) or self.command[0]
        params = StdioServerParameters(
            command=executable,
            args=list(self.command[1:]),
            env=dict(self.env) if self.env is not None else None,
        )
        return stdio_client(params, errlog=self.errlog if self.errlog is not None else sys.stderr)


@dataclass(frozen=True)
class HTTPServer:
    """An MCP server reached over Streamable HTTP.

    Attributes:
        url: the endpoint, ``http://HOST:PORT/mcp`` or ``https://...``.
        headers: HTTP headers sent with every request (for example ``Authorization``).
    """

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The URL, for log lines (the headers may hold secrets: never logged)."""
        return self.url

    def transport(self) -> AbstractAsyncContextManager[TransportStreams]:
        """A new SDK transport to the endpoint."""
        return _http_transport(self.url, dict(self.headers))


@asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[TransportStreams]:
    from mcp.client.streamable_http import streamable_http_client

    # Private (mcp 2.3, pinned in pyproject.toml): the SDK's own HTTP client settings
    # (timeouts, redirects) with our headers; mcp exports no public way to add headers to the
    # client streamable_http_client makes for itself.
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


#: Where an upstream is: a child process or an HTTP endpoint.
UpstreamSpec = StdioServer | HTTPServer


class UpstreamRestarting(Exception):
    """The upstream server is not connected now: it is being started again.

    Attributes:
        retry_after: whole seconds after which a repeated call can succeed (at least 1).
    """

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"the MCP server is restarting; try again in {retry_after} s")
        self.retry_after = retry_after


@dataclass
class Backoff:
    """The delays between restarts: doubling from ``first_s`` up to ``max_s``.

    A session that lasted ``stable_s`` or more counts as healthy, and the next restart starts
    from ``first_s`` again; a server that fails at once is started less and less often.
    """

    first_s: float = 1.0
    max_s: float = 60.0
    stable_s: float = 30.0
    _next_s: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        if not 0 < self.first_s <= self.max_s:
            raise ValueError("Backoff needs 0 < first_s <= max_s")
        self._next_s = self.first_s

    def delay(self, lasted_s: float | None) -> float:
        """The wait before the next start, after a session that lasted ``lasted_s`` seconds
        (``None``: the start itself failed)."""
        if lasted_s is not None and lasted_s >= self.stable_s:
            self._next_s = self.first_s
        delay = self._next_s
        self._next_s = min(self._next_s * 2, self.max_s)
        return delay


class _WatchedRead:
    """A transport's read stream that says when it has ended (the server has gone)."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], ended: anyio.Event) -> None:
        self._inner = inner
        self._ended = ended

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended.set()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


@asynccontextmanager
async def _watched(
    transport: AbstractAsyncContextManager[TransportStreams], ended: anyio.Event
) -> AsyncIterator[TransportStreams]:
    async with transport as (read, write):
        yield _WatchedRead(read, ended), write


class Upstream:
    """One MCP client session to ``spec``, started again whenever it ends.

    Run :meth:`run` in a task group with ``await tg.start(upstream.run)``: it returns once the
    first session is up (or raises what stopped it), then keeps a session up until cancelled,
    which stops the server (a child process is stopped as the SDK's stdio client does: its
    stdin closed, then terminated).

    Args:
        spec: where the server is.
        clock: the clock the restart delays are waited on (tests pass a ``ManualClock``).
        backoff: the delays between restarts.
        client_factory: makes the SDK client over a transport (tests may wrap it).
    """

    def __init__(
        self,
        spec: UpstreamSpec,
        *,
        clock: Clock | None = None,
        backoff: Backoff | None = None,
        client_factory: Callable[[AbstractAsyncContextManager[TransportStreams]], Client]
        | None = None,
    ) -> None:
        self.spec = spec
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._backoff = backoff if backoff is not None else Backoff()
        self._client_factory = client_factory if client_factory is not None else _client
        self._client: Client | None = None
        self._retry_at = 0.0
        #: How many sessions have started; a call that began in another session lost it.
        self.generation = 0
        #: How many times the server was started again after its first session.
        self.restarts = 0
        self._changed = anyio.Event()

    @property
    def connected(self) -> bool:
        """Whether a session is up now."""
        return self._client is not None

    def client(self) -> Client:
        """The current session's client.

        Raises:
            UpstreamRestarting: no session is up; ``retry_after`` says when to try again.
        """
        if self._client is None:
            raise UpstreamRestarting(self.retry_after())
        return self._client

    def retry_after(self) -> int:
        """Whole seconds until the next session should be up (at least 1)."""
        return max(1, math.ceil(self._retry_at - self._clock.now()))

    async def wait_changed(self) -> None:
        """Wait until a session starts or ends (for tests and the demo)."""
        await self._changed.wait()

    def _mark_changed(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[Client] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Keep a session up until cancelled (see the class).

        Raises:
            Exception: the first session could not start (the SDK's error: ``OSError`` for a
                command that cannot run, ``MCPError`` for a failed handshake, ...).
        """
        first = True
        while True:
            started_at: float | None = None
            try:
                ended = anyio.Event()
                async with self._client_factory(_watched(self.spec.transport(), ended)) as client:
                    started_at = self._clock.now()
                    self._client = client
                    self.generation += 1
                    self._mark_changed()
                    if first:
                        first = False
                        task_status.started(client)
                    else:
                        self.restarts += 1
                        logger.info("the MCP server %s is up again", self.spec.label)
                    await ended.wait()
                    logger.warning("the MCP server %s stopped", self.spec.label)
            except Exception as exc:
                if first:
                    raise
                logger.warning(
                    "the MCP server %s could not be started: %s",
                    self.spec.label,
                    describe_failure(exc),
                )
            finally:
                self._client = None
            lasted = None if started_at is None else self._clock.now() - started_at
            delay = self._backoff.delay(lasted)
            self._retry_at = self._clock.now() + delay
            self._mark_changed()
            logger.info("starting the MCP server %s again in %.0f s", self.spec.label, delay)
            await self._clock.sleep(delay)


def _client(transport: AbstractAsyncContextManager[TransportStreams]) -> Client:
    # No response cache: every call reaches the server, as it would without the bridge.
    return Client(transport, cache=None)


def describe_failure(exc: BaseException) -> str:
    """One line for a log or a message: the innermost error of a group, its type and text."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
