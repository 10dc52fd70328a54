"""Discovering the SimpleX addresses a website publishes."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import httpx

from simplex_protocols.errors import DiscoveryError

from ._documents import (
    Found,
    merge_addresses,
    read_agent_card,
    read_link_relations,
    read_llms_txt,
    read_simplex_json,
)
from ._fetch import Fetched, fetch, make_client, normalize_site
from ._model import (
    AddressSource,
    DiscoveryLimits,
    DiscoveryProblem,
    DocumentReport,
    DocumentStatus,
    WebsiteAddress,
    WebsiteDiscovery,
)

__all__ = ["discover_website", "document_urls"]

_TEXT = "text/plain, text/markdown;q=0.9, */*;q=0.1"
_HTML = "text/html, application/xhtml+xml;q=0.9, */*;q=0.1"
_JSON = "application/json, */*;q=0.1"


def document_urls(site: httpx.URL) -> dict[AddressSource, httpx.URL]:
    """The URL of each document for a website URL.

    ``llms.txt`` is read at the site's root, or at the URL itself when it names a file called
    ``llms.txt``; the well-known documents at the root (RFC 8615); the link relations from the
    page at the URL (the home page when the URL has no path).
    """
    root = site.copy_with(path="/", query=None, fragment=None)
    llms = site if site.path.endswith("/llms.txt") else root.join("/llms.txt")
    return {
        AddressSource.LLMS_TXT: llms,
        AddressSource.WELL_KNOWN: root.join("/.well-known/simplex.json"),
        AddressSource.LINK_RELATION: site if not site.path.endswith("/llms.txt") else root,
        AddressSource.AGENT_CARD: root.join("/.well-known/agent-card.json"),
    }


def _read(source: AddressSource, fetched: Fetched) -> Found:
    if fetched.body is None:
        return [], []
    if source is AddressSource.LLMS_TXT:
        return read_llms_txt(fetched.text())
    if source is AddressSource.WELL_KNOWN:
        return read_simplex_json(fetched.body)
    if source is AddressSource.AGENT_CARD:
        return read_agent_card(fetched.body)
    ctype = fetched.content_type.split(";")[0].strip().lower()
    html = fetched.text() if ctype in ("text/html", "application/xhtml+xml", "") else None
    return read_link_relations(html, fetched.link_headers)


async def discover_website(
    url: str,
    *,
    limits: DiscoveryLimits | None = None,
    client: httpx.AsyncClient | None = None,
    sources: tuple[AddressSource, ...] = tuple(AddressSource),
    on_document: Callable[[DocumentReport], None] | None = None,
) -> WebsiteDiscovery:
    """Find the SimpleX addresses a website publishes, without connecting to any of them.

    Reads, concurrently, ``/llms.txt`` (its ``## Communications`` section), the well-known
    ``/.well-known/simplex.json``, the link relations of the page at ``url`` (``<link>``
    elements and ``Link`` headers), and the A2A Agent Card at ``/.well-known/agent-card.json``.
    A document that is missing (404, 410) or cannot be read is reported in
    :attr:`WebsiteDiscovery.documents` and does not stop the others.

    Every request is bounded (:class:`DiscoveryLimits`): HTTPS only (``http://`` only for
    loopback hosts), at most ``max_redirects`` redirects, each checked the same way and never
    from a public host to a loopback one, a size cap per document after content decoding, a
    timeout per document, and no cookies.

    The website's values are hints: read each address's declarations from its link data with
    :func:`plan_address`, which applies the precedence rule (DECL-PREC-1).

    Args:
        url: the website: ``https://example.com``, ``example.com`` (``https://`` is added),
            or the URL of an llms.txt file.
        limits: bounds; the defaults of :class:`DiscoveryLimits` when ``None``.
        client: an ``httpx.AsyncClient`` to use (its redirect and cookie settings are not
            changed: make it with ``follow_redirects=False``); by default one is made and
            closed.
        sources: the documents to read.
        on_document: called with each document's report as soon as it is read (progress).

    Raises:
        DiscoveryError: ``bad_url`` or ``insecure_url`` for ``url`` itself. Failures of single
            documents are reported, not raised.
    """
    lim = limits if limits is not None else DiscoveryLimits()
    site = normalize_site(url, lim)
    urls = document_urls(site)
    results: dict[AddressSource, tuple[DocumentReport, Found]] = {}
    own_client = client is None
    http = client if client is not None else make_client(lim)
    try:
        async with anyio.create_task_group() as tg:
            for source in sources:
                tg.start_soon(_one, http, source, urls[source], lim, results, on_document)
    finally:
        if own_client:
            await http.aclose()
    addresses: list[WebsiteAddress] = []
    problems: list[DiscoveryProblem] = []
    reports: list[DocumentReport] = []
    for source in sources:
        report, (found, found_problems) = results[source]
        reports.append(report)
        addresses.extend(found)
        problems.extend(found_problems)
    return WebsiteDiscovery(
        url=str(site),
        addresses=merge_addresses(addresses),
        documents=tuple(reports),
        problems=tuple(problems),
    )


async def _one(
    client: httpx.AsyncClient,
    source: AddressSource,
    url: httpx.URL,
    limits: DiscoveryLimits,
    results: dict[AddressSource, tuple[DocumentReport, Found]],
    on_document: Callable[[DocumentReport], None] | None,
) -> None:
    is_json = source in (AddressSource.WELL_KNOWN, AddressSource.AGENT_CARD)
    try:
        fetched = await fetch(
            client,
            url,
            limits,
            max_bytes=limits.max_json_bytes if is_json else limits.max_text_bytes,
            accept=_JSON if is_json else _HTML if source is AddressSource.LINK_RELATION else _TEXT,
        )
    except DiscoveryError as exc:
        report = DocumentReport(source, str(url), DocumentStatus.FAILED, error=exc)
        results[source] = (report, ([], []))
    else:
        found = _read(source, fetched)
        status = DocumentStatus.ABSENT if fetched.body is None else DocumentStatus.FOUND
        report = DocumentReport(
            source,
            str(url),
            status,
            final_url=fetched.final_url,
            http_status=fetched.status,
            size=len(fetched.body or b""),
            addresses=len(found[0]),
        )
        results[source] = (report, found)
    if on_document is not None:
        on_document(report)
