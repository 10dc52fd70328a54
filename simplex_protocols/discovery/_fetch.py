"""Fetching website documents with bounds: HTTPS only, redirects, size caps, timeouts, no cookies."""

from __future__ import annotations

import http.cookiejar
import ipaddress
from dataclasses import dataclass
from typing import Final

import anyio
import httpx

from simplex_protocols.errors import DiscoveryError

from ._model import DiscoveryLimits

__all__ = ["Fetched", "check_url", "fetch", "is_loopback_host", "make_client", "normalize_site"]

_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
USER_AGENT: Final = "simplex-protocols-discovery/0.1 (+https://github.com/simplex-chat)"


@dataclass(frozen=True, slots=True)
class Fetched:
    """One document as read: its final URL, status, body (``None`` for 404/410) and headers."""

    url: str
    final_url: str
    status: int
    body: bytes | None
    content_type: str
    link_headers: tuple[str, ...]

    def text(self) -> str:
        """The body as text: the charset of ``Content-Type``, else UTF-8 (bad bytes replaced)."""
        if self.body is None:
            return ""
        charset = "utf-8"
        for param in self.content_type.split(";")[1:]:
            name, _, value = param.strip().partition("=")
            if name.lower() == "charset" and value:
                charset = value.strip('"').strip()
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` is this machine: ``localhost`` or a loopback IP (no DNS lookups)."""
    host = host.strip("[]").lower()
    if host in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: httpx.URL | str, limits: DiscoveryLimits) -> httpx.URL:
    """Refuse a URL discovery must not fetch.

    Raises:
        DiscoveryError: ``bad_url`` (not an absolute http(s) URL, or with a user name or
            password) or ``insecure_url`` (``http://`` to a host that is not loopback).
    """
    text = str(url)
    try:
        parsed = url if isinstance(url, httpx.URL) else httpx.URL(text)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise DiscoveryError(f"not a valid URL ({exc})", code="bad_url", url=text) from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise DiscoveryError("not an http(s) URL with a host", code="bad_url", url=text)
    if parsed.userinfo:
        raise DiscoveryError("a user name or password in the URL", code="bad_url", url=text)
    if parsed.scheme == "http" and not (
        limits.allow_loopback_http and is_loopback_host(parsed.host)
    ):
        raise DiscoveryError(
            "plain HTTP is refused: use https:// (only loopback hosts may use http://)",
            code="insecure_url",
            url=text,
        )
    return parsed


def normalize_site(text: str, limits: DiscoveryLimits) -> httpx.URL:
    """The website URL for a user's text: ``https://`` is added to a bare host.

    Raises:
        DiscoveryError: as :func:`check_url`.
    """
    text = text.strip()
    if "://" not in text:
        text = "https://" + text
    url = check_url(text, limits)
    return url.copy_with(path=url.path or "/", fragment=None)


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    """A cookie policy that accepts and returns no cookie."""

    def set_ok(self, cookie: http.cookiejar.Cookie, request: object) -> bool:
        return False

    def return_ok(self, cookie: http.cookiejar.Cookie, request: object) -> bool:
        return False


def make_client(limits: DiscoveryLimits) -> httpx.AsyncClient:
    """An HTTP client for discovery: no redirects followed by itself, no cookies, our timeouts.

    Proxies are taken from the environment (``trust_env``) as usual for httpx.
    """
    return httpx.AsyncClient(
        follow_redirects=False,
        timeout=httpx.Timeout(limits.timeout_s),
        cookies=http.cookiejar.CookieJar(policy=_NoCookies()),
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"},
    )


async def fetch(
    client: httpx.AsyncClient,
    url: httpx.URL | str,
    limits: DiscoveryLimits,
    *,
    max_bytes: int,
    accept: str,
) -> Fetched:
    """GET one document, following at most ``limits.max_redirects`` redirects by hand.

    Each hop is checked with :func:`check_url`; a redirect from a host that is not loopback to
    a loopback host is refused (a public site must not steer us to local services). The body
    is read as a stream and abandoned past ``max_bytes``. Cookies are neither sent nor kept.

    Returns:
        The document; ``body`` is ``None`` when the website answered 404 or 410.

    Raises:
        DiscoveryError: ``bad_url``, ``insecure_url``, ``redirect_refused``,
            ``too_many_redirects``, ``too_large``, ``timeout`` (the whole fetch took longer
            than ``limits.timeout_s``), ``unreachable`` (connection or protocol failure),
            ``http_status`` (any other status than 2xx, 404, 410 and redirects).
    """
    first = check_url(url, limits)
    current = first
    try:
        with anyio.fail_after(limits.timeout_s):
            for _hop in range(limits.max_redirects + 1):
                request = client.build_request("GET", current, headers={"Accept": accept})
                response = await client.send(request, stream=True)
                try:
                    if response.status_code in _REDIRECTS:
                        location = response.headers.get("location")
                        if not location:
                            raise DiscoveryError(
                                f"redirect {response.status_code} without a Location",
                                code="http_status",
                                url=str(current),
                                status=response.status_code,
                            )
                        target = check_url(current.join(location), limits)
                        if is_loopback_host(target.host) and not is_loopback_host(current.host):
                            raise DiscoveryError(
                                "a redirect from a public host to a loopback host is refused",
                                code="redirect_refused",
                                url=str(target),
                            )
                        current = target.copy_with(fragment=None)
                        continue
                    links = tuple(response.headers.get_list("link"))
                    ctype = response.headers.get("content-type", "")
                    if response.status_code in (404, 410):
                        return Fetched(
                            str(first), str(current), response.status_code, None, ctype, links
                        )
                    if not 200 <= response.status_code < 300:
                        raise DiscoveryError(
                            f"HTTP status {response.status_code}",
                            code="http_status",
                            url=str(current),
                            status=response.status_code,
                        )
                    body = await _read_capped(response, max_bytes, str(current))
                    return Fetched(
                        str(first), str(current), response.status_code, body, ctype, links
                    )
                finally:
                    await response.aclose()
            raise DiscoveryError(
                f"more than {limits.max_redirects} redirects",
                code="too_many_redirects",
                url=str(first),
            )
    except TimeoutError:
        raise DiscoveryError(
            f"no complete answer within {limits.timeout_s:g} s", code="timeout", url=str(current)
        ) from None
    except httpx.TimeoutException:
        raise DiscoveryError(
            f"no complete answer within {limits.timeout_s:g} s", code="timeout", url=str(current)
        ) from None
    except httpx.HTTPError as exc:
        raise DiscoveryError(
            f"cannot be reached ({type(exc).__name__}: {exc})", code="unreachable", url=str(current)
        ) from None


async def _read_capped(response: httpx.Response, max_bytes: int, url: str) -> bytes:
    declared = response.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise DiscoveryError(
            f"the document is larger than {max_bytes} bytes", code="too_large", url=url
        )
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise DiscoveryError(
                f"the document is larger than {max_bytes} bytes", code="too_large", url=url
            )
        chunks.append(chunk)
    return b"".join(chunks)
