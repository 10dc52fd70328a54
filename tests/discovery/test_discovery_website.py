"""discover_website against fixture sites on 127.0.0.1: documents, redirects and every limit."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import anyio
import httpx
import pytest
from discovery_fixtures import (
    CHANNEL,
    CLEAN_LLMS,
    CONTACT,
    GROUP,
    HOME,
    MESSY_LLMS,
    WELL_KNOWN,
    agent_card,
)

from simplex_protocols.cli._call_site import LocalSite, Page
from simplex_protocols.discovery import (
    AddressSource,
    DiscoveryLimits,
    DocumentReport,
    DocumentStatus,
    discover_website,
)
from simplex_protocols.discovery._fetch import check_url, normalize_site
from simplex_protocols.discovery._website import document_urls
from simplex_protocols.errors import DiscoveryError

HTML = (("Content-Type", "text/html; charset=utf-8"),)
JSON = (("Content-Type", "application/json"),)
FAST = DiscoveryLimits(timeout_s=2.0)


@pytest.fixture
def full_site() -> Iterator[LocalSite]:
    with LocalSite(
        {
            "/llms.txt": Page(CLEAN_LLMS),
            "/.well-known/simplex.json": Page(WELL_KNOWN, headers=JSON),
            "/": Page(HOME, headers=(*HTML, ("Link", f'<{GROUP}>; rel="simplex-group"'))),
            "/.well-known/agent-card.json": Page(agent_card(), headers=JSON),
        }
    ) as site:
        yield site


@pytest.mark.anyio
async def test_every_document_is_read_and_addresses_are_merged(full_site: LocalSite) -> None:
    seen: list[DocumentReport] = []
    with anyio.fail_after(5):
        result = await discover_website(full_site.url, limits=FAST, on_document=seen.append)
    assert result.url == full_site.url + "/"
    assert [d.source for d in result.documents] == list(AddressSource)
    assert all(d.status is DocumentStatus.FOUND for d in result.documents)
    assert {d.source for d in seen} == set(AddressSource)
    by_address = {a.address: a for a in result.addresses}
    assert list(by_address)[:3] == [CHANNEL, GROUP, CONTACT]
    ask = by_address[CONTACT]
    assert ask.sources == tuple(AddressSource)
    assert ask.title == "Ask Acme" and ask.a2a_versions == ("1.0",)
    assert ask.protocols == ("mcp", "a2a")
    assert "@acme.simplex" in by_address
    counts = {d.source: d.addresses for d in result.documents}
    assert counts == {
        AddressSource.LLMS_TXT: 3,
        AddressSource.WELL_KNOWN: 4,
        AddressSource.LINK_RELATION: 3,
        AddressSource.AGENT_CARD: 1,
    }
    assert {p.code for p in result.problems} >= {"kind_mismatch", "not_published"}
    assert result.agent_contacts("mcp")[0].address == CONTACT
    paths = sorted(r.path for r in full_site.requests)
    assert paths == ["/", "/.well-known/agent-card.json", "/.well-known/simplex.json", "/llms.txt"]


@pytest.mark.anyio
async def test_missing_documents_are_absent_not_failed() -> None:
    with LocalSite({"/llms.txt": Page(MESSY_LLMS)}) as site:
        result = await discover_website(site.url, limits=FAST)
    status = {d.source: d.status for d in result.documents}
    assert status[AddressSource.LLMS_TXT] is DocumentStatus.FOUND
    assert status[AddressSource.WELL_KNOWN] is DocumentStatus.ABSENT
    assert status[AddressSource.AGENT_CARD] is DocumentStatus.ABSENT
    assert status[AddressSource.LINK_RELATION] is DocumentStatus.ABSENT
    assert [a.address for a in result.addresses] == [CONTACT]
    assert result.failed == ()
    assert {p.code for p in result.problems} >= {"not_a_simplex_link", "bad_audience"}


@pytest.mark.anyio
async def test_an_llms_txt_url_is_read_itself_and_the_rest_at_the_root() -> None:
    with LocalSite({"/docs/llms.txt": Page(CLEAN_LLMS), "/": Page(HOME, headers=HTML)}) as site:
        urls = document_urls(normalize_site(site.url + "/docs/llms.txt", FAST))
        assert str(urls[AddressSource.LLMS_TXT]) == site.url + "/docs/llms.txt"
        assert str(urls[AddressSource.LINK_RELATION]) == site.url + "/"
        result = await discover_website(site.url + "/docs/llms.txt", limits=FAST)
    assert result.documents[0].status is DocumentStatus.FOUND
    assert CONTACT in {a.address for a in result.addresses}


@pytest.mark.anyio
async def test_redirects_are_followed_without_keeping_cookies() -> None:
    pages = {
        "/llms.txt": Page(
            "",
            status=301,
            headers=(("Location", "/a"), ("Set-Cookie", "track=1; Path=/")),
        ),
        "/a": Page("", status=302, headers=(("Location", "/docs/llms.txt"),)),
        "/docs/llms.txt": Page(CLEAN_LLMS),
    }
    with LocalSite(pages) as site:
        result = await discover_website(site.url, limits=FAST, sources=(AddressSource.LLMS_TXT,))
        requests = [r for r in site.requests if r.path != "/llms.txt"]
    [report] = result.documents
    assert report.status is DocumentStatus.FOUND
    assert report.final_url == site.url + "/docs/llms.txt" and report.http_status == 200
    assert len(result.addresses) == 3
    assert [r.path for r in requests] == ["/a", "/docs/llms.txt"]
    assert all("cookie" not in r.headers for r in requests)


@pytest.mark.anyio
async def test_too_many_redirects_fail_the_document() -> None:
    pages = {
        f"/r{i}": Page("", status=307, headers=(("Location", f"/r{i + 1}"),)) for i in range(9)
    }
    pages["/llms.txt"] = Page("", status=308, headers=(("Location", "/r0"),))
    with LocalSite(pages) as site:
        result = await discover_website(
            site.url,
            limits=DiscoveryLimits(timeout_s=2.0, max_redirects=3),
            sources=(AddressSource.LLMS_TXT,),
        )
        hops = len(site.requests)
    [report] = result.documents
    assert report.status is DocumentStatus.FAILED
    assert report.error is not None and report.error.code == "too_many_redirects"
    assert hops == 4


@pytest.mark.anyio
async def test_a_redirect_to_plain_http_elsewhere_is_refused_before_any_request() -> None:
    pages = {"/llms.txt": Page("", status=302, headers=(("Location", "http://acme.example/x"),))}
    with LocalSite(pages) as site:
        result = await discover_website(site.url, limits=FAST, sources=(AddressSource.LLMS_TXT,))
    [report] = result.documents
    assert report.error is not None and report.error.code == "insecure_url"
    assert report.error.url == "http://acme.example/x"


@pytest.mark.anyio
async def test_a_redirect_from_a_public_host_to_loopback_is_refused() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.host == "acme.example"
        return httpx.Response(302, headers={"Location": "http://127.0.0.1:9/llms.txt"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        result = await discover_website(
            "https://acme.example", client=client, sources=(AddressSource.LLMS_TXT,)
        )
    [report] = result.documents
    assert report.error is not None and report.error.code == "redirect_refused"


@pytest.mark.anyio
async def test_an_oversize_document_is_refused_by_its_length_or_while_streaming() -> None:
    def chunked(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        chunk = b"x" * 1000
        for _ in range(20):
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        handler.wfile.write(b"0\r\n\r\n")

    big_json = Page("[" + "0," * 3000 + "0]", headers=JSON)
    with LocalSite({"/llms.txt": chunked, "/.well-known/simplex.json": big_json}) as site:
        result = await discover_website(
            site.url,
            limits=DiscoveryLimits(timeout_s=2.0, max_text_bytes=5000, max_json_bytes=5000),
            sources=(AddressSource.LLMS_TXT, AddressSource.WELL_KNOWN),
        )
    codes = [d.error.code if d.error else None for d in result.documents]
    assert codes == ["too_large", "too_large"]


@pytest.mark.anyio
async def test_the_size_cap_applies_after_content_decoding() -> None:
    bomb = gzip.compress(b"#" * 200_000)
    page = Page(bomb, headers=(("Content-Type", "text/plain"), ("Content-Encoding", "gzip")))
    with LocalSite({"/llms.txt": page}) as site:
        result = await discover_website(
            site.url,
            limits=DiscoveryLimits(timeout_s=2.0, max_text_bytes=10_000),
            sources=(AddressSource.LLMS_TXT,),
        )
    assert len(bomb) < 10_000
    [report] = result.documents
    assert report.error is not None and report.error.code == "too_large"


@pytest.mark.anyio
async def test_a_slow_document_times_out_and_the_others_are_still_read() -> None:
    release = threading.Event()

    def stall(handler: BaseHTTPRequestHandler) -> None:
        release.wait(5)
        handler.send_response(200)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    pages = {"/llms.txt": Page(CLEAN_LLMS), "/.well-known/agent-card.json": stall}
    try:
        with LocalSite(pages) as site:
            result = await discover_website(site.url, limits=DiscoveryLimits(timeout_s=0.3))
    finally:
        release.set()
    status = {d.source: d for d in result.documents}
    card = status[AddressSource.AGENT_CARD]
    assert card.status is DocumentStatus.FAILED and card.error is not None
    assert card.error.code == "timeout"
    assert status[AddressSource.LLMS_TXT].status is DocumentStatus.FOUND
    assert len(result.addresses) == 3


@pytest.mark.anyio
async def test_server_errors_and_unreachable_hosts_fail_their_documents() -> None:
    with LocalSite({"/llms.txt": Page("oops", status=500)}) as site:
        result = await discover_website(site.url, limits=FAST, sources=(AddressSource.LLMS_TXT,))
        port = site.port
    [report] = result.documents
    assert report.error is not None and report.error.code == "http_status"
    assert report.error.status == 500
    # The site is gone: nothing listens on its port now.
    result = await discover_website(
        f"http://127.0.0.1:{port}", limits=FAST, sources=(AddressSource.LLMS_TXT,)
    )
    [report] = result.documents
    assert report.error is not None and report.error.code == "unreachable"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("http://acme.example", "insecure_url"),
        ("http://10.0.0.1/", "insecure_url"),
        ("ftp://acme.example/", "bad_url"),
        ("https://user:pw@acme.example/", "bad_url"),
        ("https://", "bad_url"),
    ],
)
async def test_urls_that_must_not_be_fetched_are_refused(url: str, code: str) -> None:
    with pytest.raises(DiscoveryError) as info:
        await discover_website(url)
    assert info.value.code == code


def test_plain_http_is_allowed_for_loopback_hosts_only_when_the_limits_allow_it() -> None:
    assert str(check_url("http://127.0.0.1:8080/", FAST)) == "http://127.0.0.1:8080/"
    assert str(check_url("http://[::1]/", FAST)) == "http://[::1]/"
    assert str(check_url("http://localhost/", FAST)) == "http://localhost/"
    strict = DiscoveryLimits(allow_loopback_http=False)
    with pytest.raises(DiscoveryError) as info:
        check_url("http://127.0.0.1/", strict)
    assert info.value.code == "insecure_url"


def test_a_bare_host_becomes_an_https_site() -> None:
    assert str(normalize_site("acme.example", FAST)) == "https://acme.example/"
    assert str(normalize_site(" https://acme.example/x#frag ", FAST)) == "https://acme.example/x"


def test_limits_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="timeout"):
        DiscoveryLimits(timeout_s=0)
    with pytest.raises(ValueError, match="redirects"):
        DiscoveryLimits(max_redirects=-1)
    with pytest.raises(ValueError, match="size"):
        DiscoveryLimits(max_json_bytes=0)
