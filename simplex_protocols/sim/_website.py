"""Websites of simulated users, for discovery over llms.txt, simplex.json and Agent Cards.

``simplex-sim serve --domain acme.example=acme --website 127.0.0.1:8080`` makes the user
``acme`` the owner of the website ``acme.example``, served on the loopback address given: what
``simplex_protocols.discovery`` reads of a real site is there, each document naming the user's
contact address as it is when the document is asked for:

- ``/llms.txt``: a ``## Communications`` section with the address (written by
  :func:`~simplex_protocols.llmstxt.render_communications_section`), its type (business
  contact or contact), its audience (the address's ``serves``) and the protocols the user's
  profile declares;
- ``/.well-known/simplex.json``: the same address among ``contacts``;
- ``/``: a home page whose ``<link rel="me">`` is the address;
- ``/.well-known/agent-card.json``: the Agent Card, when the user runs an A2A agent that has
  one (the caller gives it: the simulator knows no agents).

One website serves every domain: the request's ``Host`` picks the domain, and any other host
(``127.0.0.1:8080`` itself) gets the first. A user without a contact address yet has a site
of 404s: a website publishes no address it does not have. The server speaks just enough
HTTP/1.1 for discovery and ``curl`` (``GET`` and ``HEAD``, one request per connection) and
binds the loopback interface only.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
import anyio.abc

from simplex_protocols import _wire
from simplex_protocols.declarations import protocols_from_preferences
from simplex_protocols.llmstxt import (
    AddressType,
    Audience,
    CommunicationsEntry,
    render_communications_section,
)

from ._network import SimNetwork

__all__ = ["Page", "SimWebsite", "site_pages"]

#: The longest request head read (request line and headers), and how long a client may take.
MAX_HEAD_BYTES: Final = 16_384
HEAD_TIMEOUT_S: Final = 10.0
_LOOPBACK: Final = frozenset({"127.0.0.1", "localhost", "::1"})

AgentCard = Callable[[], Mapping[str, Any] | None]


@dataclass(frozen=True, slots=True)
class Page:
    """One document of a site: its media type and its body."""

    content_type: str
    body: bytes


def site_pages(
    network: SimNetwork, user: str, domain: str, agent_card: AgentCard | None = None
) -> dict[str, Page]:
    """The documents of ``domain``, the website of the simulated user ``user``, as they are now.

    Args:
        network: the simulated network.
        user: the core of the user (its active user owns the site).
        domain: the website's domain, for the page titles.
        agent_card: gives the user's Agent Card, if it has one.

    Returns:
        Path to page; empty when the user has no contact address.
    """
    owner = network.user(user)
    db = owner.core.db
    row = db.users[owner.user_id]
    link_id = row.address_link_id
    if link_id is None:
        return {}
    link = db.links[link_id]
    address = link.short
    title = owner.display_name
    profile = db.profiles[row.profile_id].profile
    declared = protocols_from_preferences(profile.get("preferences") or {})
    protocols = tuple(d.name for d in declared.declarations)
    serves = link.settings.get("serves")
    audience = Audience.from_peer_types(serves if isinstance(serves, list) else ["human"])
    business = bool(link.settings.get("businessAddress", False))
    entry = CommunicationsEntry(
        title=title,
        url=address,
        network="SimpleX",
        type=AddressType.BUSINESS_CONTACT if business else AddressType.CONTACT,
        audience=audience or Audience.PEOPLE,
        protocols=protocols,
    )
    llms = f"# {title}\n\n> The website of {domain}.\n\n" + render_communications_section([entry])
    contact: dict[str, Any] = {"link": address, "title": title, "business": business}
    if protocols:
        contact["protocols"] = list(protocols)
    if isinstance(serves, list):
        contact["serves"] = list(serves)
    home = (
        f"<!doctype html><html><head><title>{html.escape(title)}</title>"
        f'<link rel="me" href="{html.escape(address)}"></head>'
        f"<body>{html.escape(title)}, at {html.escape(domain)}.</body></html>"
    )
    pages = {
        "/": Page("text/html; charset=utf-8", home.encode()),
        "/llms.txt": Page("text/plain; charset=utf-8", llms.encode()),
        "/.well-known/simplex.json": Page(
            "application/json", _wire.dumps({"contacts": [contact]}).encode()
        ),
    }
    card = agent_card() if agent_card is not None else None
    if card is not None:
        pages["/.well-known/agent-card.json"] = Page(
            "application/json", _wire.dumps(dict(card)).encode()
        )
    return pages


@dataclass(frozen=True, slots=True)
class _Site:
    user: str
    agent_card: AgentCard | None


class SimWebsite:
    """The websites of simulated users, on one loopback address.

    Use as an async context manager inside a task group's lifetime::

        async with SimWebsite(network, port=0) as site:
            site.add("acme.example", "acme")
            url = site.url   # http://127.0.0.1:<port>

    Args:
        network: the simulated network whose users own the sites.
        host: ``127.0.0.1``, ``localhost`` or ``::1``.
        port: the TCP port (0: any free port).

    Raises:
        ValueError: ``host`` is not a loopback address.
    """

    def __init__(self, network: SimNetwork, *, host: str = "127.0.0.1", port: int = 0) -> None:
        if host not in _LOOPBACK:
            raise ValueError("the simulated websites are served on the loopback interface only")
        self.network = network
        self.host = host
        self.requested_port = port
        self._sites: dict[str, _Site] = {}
        self._listener: anyio.abc.Listener[anyio.abc.SocketStream] | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self._port: int | None = None

    def add(self, domain: str, user: str, agent_card: AgentCard | None = None) -> None:
        """Make ``user`` the owner of the website ``domain`` (the first one added is the default)."""
        self._sites[domain.lower()] = _Site(user, agent_card)

    @property
    def domains(self) -> list[str]:
        return list(self._sites)

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the website is not started")
        return self._port

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def __aenter__(self) -> SimWebsite:
        listener = await anyio.create_tcp_listener(
            local_host=self.host, local_port=self.requested_port
        )
        self._listener = listener
        self._port = int(listener.extra(anyio.abc.SocketAttribute.local_port))
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(listener.serve, self._handle)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._group is not None:
            self._group.cancel_scope.cancel()
            await self._group.__aexit__(None, None, None)
            self._group = None
        if self._listener is not None:
            await self._listener.aclose()
            self._listener = None

    def answer(self, method: str, target: str, host: str | None) -> tuple[int, Page]:
        """The status and page for one request (no I/O; the server's whole logic)."""
        if method not in ("GET", "HEAD"):
            return 405, _text("only GET and HEAD\n")
        if not self._sites:
            return 404, _text("no website: start simplex-sim serve with --domain DOMAIN=USER\n")
        domain = _host_name(host or "")
        site_domain = domain if domain in self._sites else next(iter(self._sites))
        site = self._sites[site_domain]
        path = target.split("?", 1)[0].split("#", 1)[0] or "/"
        pages = site_pages(self.network, site.user, site_domain, site.agent_card)
        page = pages.get(path)
        if page is None:
            return 404, _text("not found\n")
        return 200, page

    async def _handle(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            try:
                with anyio.fail_after(HEAD_TIMEOUT_S):
                    head = await _read_head(stream)
            except (TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                return
            status, page, method = _respond(self, head)
            reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}
            lines = [
                f"HTTP/1.1 {status} {reason.get(status, 'Error')}",
                f"Content-Type: {page.content_type}",
                f"Content-Length: {len(page.body)}",
                "Connection: close",
                "",
                "",
            ]
            data = "\r\n".join(lines).encode("ascii")
            if method != "HEAD":
                data += page.body
            try:
                await stream.send(data)
            except (anyio.BrokenResourceError, OSError):
                return


def _respond(site: SimWebsite, head: bytes | None) -> tuple[int, Page, str]:
    if head is None:
        return 400, _text("request head too long or not HTTP\n"), "GET"
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return 400, _text("not an HTTP/1.x request\n"), "GET"
    method, target, _ = parts
    host = None
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep and name.strip().lower() == "host":
            host = value.strip()
    status, page = site.answer(method, target, host)
    return status, page, method


async def _read_head(stream: anyio.abc.SocketStream) -> bytes | None:
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        if len(buffer) > MAX_HEAD_BYTES:
            return None
        buffer += await stream.receive()
    return buffer.split(b"\r\n\r\n", 1)[0]


def _host_name(host: str) -> str:
    """The name of a ``Host`` value, without its port: ``acme.example:8080``, ``[::1]:8080``."""
    name = host.strip().lower()
    if name.startswith("["):
        return name[1:].split("]", 1)[0]
    return name.split(":", 1)[0]


def _text(body: str) -> Page:
    return Page("text/plain; charset=utf-8", body.encode())
