"""A small website on 127.0.0.1 for the demo (and for tests): fixed pages, served from a thread.

It serves what it is given and nothing else: each path maps to a :class:`Page` (a status,
headers and a body), or to a callable that answers the request itself. It never binds
anything but the loopback interface.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self

__all__ = ["LocalSite", "Page", "SiteRequest"]


@dataclass(frozen=True, slots=True)
class Page:
    """One answer: status, headers (in order) and body."""

    body: bytes | str = b""
    status: int = 200
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "text/plain; charset=utf-8"),)

    @property
    def data(self) -> bytes:
        return self.body.encode("utf-8") if isinstance(self.body, str) else self.body


@dataclass(frozen=True, slots=True)
class SiteRequest:
    """A request the site received: its path and headers (names lowercased)."""

    path: str
    headers: Mapping[str, str] = field(default_factory=dict)


Handler = Callable[[BaseHTTPRequestHandler], None]


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        # A client that closes a kept-alive connection is not an error worth a traceback.
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class LocalSite:
    """A website on ``http://127.0.0.1:<port>``, with a free port chosen by the system.

    Use as a context manager; :attr:`url` is the site's root URL once entered.

    Args:
        pages: path (with the leading ``/``, without the query) to a :class:`Page`, or to a
            function that writes the whole answer to the request handler.
    """

    def __init__(self, pages: Mapping[str, Page | Handler]) -> None:
        self.pages = dict(pages)
        self.requests: list[SiteRequest] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        """The port, once started (it stays known after :meth:`stop`)."""
        if self._port is None:
            raise RuntimeError("the site was never started")
        return self._port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        site = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                site.requests.append(
                    SiteRequest(path, {k.lower(): v for k, v in self.headers.items()})
                )
                page = site.pages.get(path)
                if page is None:
                    page = Page("not found", status=404)
                if not isinstance(page, Page):
                    page(self)
                    return
                data = page.data
                self.send_response(page.status)
                for name, value in page.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="simplex-call-site",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
