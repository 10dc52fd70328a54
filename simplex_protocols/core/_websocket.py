"""WebSocketBackend: frames to and from ``simplex-chat -p PORT`` over its WebSocket API.

The CLI's WebSocket API has no authentication: whoever reaches the port can read every chat
and act as the profile. The CLI binds it to localhost, and this backend refuses to connect to
any other host unless the caller explicitly allows it (``allow_remote=True``), which only
makes sense behind a tunnel that authenticates and encrypts (SSH, WireGuard).

Exceptions of the ``websockets`` package never leave this module: they become
:class:`~simplex_protocols.errors.CoreConnectionError`, in one place (:func:`_mapped`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any, Final

from simplex_protocols._wire import WireJSONError, dumps, loads
from simplex_protocols.errors import CoreConnectionError

from ._options import CoreKind, parse_core_option

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "WebSocketBackend"]

#: Largest frame accepted from the core. ``/_get chats`` of a big profile can take tens of
#: megabytes; websockets' own default of 1 MiB is too small for it.
DEFAULT_MAX_FRAME_BYTES: Final = 64 * 1024 * 1024


@contextlib.contextmanager
def _mapped(description: str, doing: str) -> Iterator[None]:
    """Turn the exceptions of ``websockets`` and the socket layer into ours, once."""
    import websockets.exceptions as wsx

    try:
        yield
    except wsx.ConnectionClosed as exc:
        detail = f"code {exc.rcvd.code}" if exc.rcvd is not None else "no close frame"
        if exc.rcvd is not None and exc.rcvd.reason:
            detail += f", {exc.rcvd.reason}"
        raise CoreConnectionError(
            f"{description}: the connection was closed while {doing} ({detail})"
        ) from exc
    except wsx.InvalidURI as exc:
        raise CoreConnectionError(f"{description}: not a WebSocket URL ({exc})") from exc
    except wsx.InvalidStatus as exc:
        raise CoreConnectionError(
            f"{description}: the server refused the WebSocket handshake "
            f"(HTTP {exc.response.status_code}); is this a `simplex-chat -p PORT` endpoint?"
        ) from exc
    except (wsx.WebSocketException, OSError, TimeoutError) as exc:
        raise CoreConnectionError(
            f"{description}: failed while {doing}: {exc or type(exc).__name__}; "
            "is `simplex-chat -p PORT` running there?"
        ) from exc


class WebSocketBackend:
    """Moves frames to and from a ``simplex-chat -p PORT`` process over its WebSocket API.

    Each frame is one JSON text message: ``{"corrId", "cmd"}`` out, ``{"corrId", "resp"}``
    and ``{"resp"}`` in.

    Args:
        url: ``ws://HOST:PORT[/PATH]``.
        allow_remote: connect to a host that is not loopback. The CLI's API has no
            authentication; allow this only behind an authenticated, encrypted tunnel.
        open_timeout: seconds to wait for the connection and handshake.
        max_frame_bytes: largest incoming frame accepted.
        ping_interval: seconds between keepalive pings (``None``: no pings); a core that
            stops answering them is reported as a lost connection.

    Raises:
        CoreOptionError: the URL is malformed, or its host is not loopback and
            ``allow_remote`` is false.
    """

    def __init__(
        self,
        url: str,
        *,
        allow_remote: bool = False,
        open_timeout: float = 10.0,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        ping_interval: float | None = 20.0,
    ) -> None:
        option = parse_core_option(url, allow_remote=allow_remote)
        if option.kind is not CoreKind.WEBSOCKET or option.url is None:
            from simplex_protocols.errors import CoreOptionError

            raise CoreOptionError("not a ws:// URL", code="bad_url", value=url)
        self.url: str = option.url
        self._open_timeout = open_timeout
        self._max_frame_bytes = max_frame_bytes
        self._ping_interval = ping_interval
        self._ws: Any = None

    @property
    def description(self) -> str:
        """The URL of the core."""
        return self.url

    async def connect(self) -> None:
        """Open the WebSocket (closing the previous one, if any).

        Raises:
            CoreConnectionError: the core cannot be reached or refused the handshake.
        """
        from websockets.asyncio.client import connect

        await self.aclose()
        with _mapped(self.url, "connecting"):
            self._ws = await connect(
                self.url,
                open_timeout=self._open_timeout,
                max_size=self._max_frame_bytes,
                ping_interval=self._ping_interval,
                # Loopback: no proxy from the environment, no compression.
                proxy=None,
                compression=None,
            )

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        """Send one frame as a JSON text message.

        Raises:
            CoreConnectionError: not connected, or the connection was lost.
        """
        ws = self._ws
        if ws is None:
            raise CoreConnectionError(f"{self.url}: not connected")
        text = dumps(frame)
        with _mapped(self.url, "sending a command"):
            await ws.send(text)

    async def receive_frame(self) -> dict[str, Any]:
        """Wait for the next frame.

        A frame that is not a JSON object means the peer does not speak the CLI's API (or
        broke it); since it may have been the answer to any command in flight, the
        connection is closed and reported as lost rather than left to make a command wait
        forever.

        Raises:
            CoreConnectionError: the connection was closed or lost, or the core sent a frame
                that is not a JSON object.
        """
        ws = self._ws
        if ws is None:
            raise CoreConnectionError(f"{self.url}: not connected")
        with _mapped(self.url, "waiting for the core"):
            data = await ws.recv()
        try:
            frame = loads(data)
        except WireJSONError as exc:
            await self.aclose()
            raise CoreConnectionError(
                f"{self.url}: the core sent a frame that is not valid JSON ({exc}); "
                "the connection was closed"
            ) from exc
        if not isinstance(frame, dict):
            await self.aclose()
            raise CoreConnectionError(
                f"{self.url}: the core sent a JSON {type(frame).__name__}, not a frame object; "
                "the connection was closed"
            )
        return frame

    async def aclose(self) -> None:
        """Close the WebSocket. Idempotent."""
        ws, self._ws = self._ws, None
        if ws is None:
            return
        with contextlib.suppress(CoreConnectionError), _mapped(self.url, "closing"):
            await ws.close()
