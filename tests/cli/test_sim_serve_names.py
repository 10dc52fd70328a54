"""``simplex-sim serve --name / --names / --domain / --website / --demo-bot``.

The options are checked before the network starts (bad ones exit 2, an unreadable names file
1); a name resolves to its user's contact address through the core's own commands; the website
serves what discovery reads, naming the owner's current address.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.asyncio.client import connect

from simplex_protocols._clock import ManualClock
from simplex_protocols._wire import dumps, loads
from simplex_protocols.cli import _sim_serve
from simplex_protocols.cli._sim_serve import (
    Assignment,
    ServeError,
    contact_name,
    parse_website,
    read_names_file,
    web_domain,
)
from simplex_protocols.cli.sim import build_parser, main
from simplex_protocols.discovery import discover_website
from simplex_protocols.sim import SimNetwork
from simplex_protocols.sim._website import SimWebsite, site_pages

WAIT_S = 60.0


def _serve_args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["serve", *argv])


# ---------------------------------------------------------------------------- the options


def test_the_names_file_has_one_name_per_line_and_comments(tmp_path: Path) -> None:
    names = tmp_path / "names.txt"
    names.write_text("# the shop\nacme.simplex = acme\n\n@news.simplex=editor  # ours\n")
    assert read_names_file(names) == [
        Assignment("acme.simplex", "acme", f"{names}:2"),
        Assignment("@news.simplex", "editor", f"{names}:4"),
    ]


def test_a_names_file_line_without_a_user_is_a_usage_error_naming_its_line(
    tmp_path: Path,
) -> None:
    names = tmp_path / "names.txt"
    names.write_text("acme.simplex=acme\nshop.simplex\n")
    with pytest.raises(ServeError, match=r"names\.txt:2: 'shop\.simplex': expected NAME=USER") as e:
        read_names_file(names)
    assert e.value.status == 2


def test_an_unreadable_names_file_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--port", "0", "--names", str(tmp_path / "missing.txt")]) == 1
    assert "--names: cannot read" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("given", "full"),
    [
        ("acme.simplex", "acme.simplex"),
        ("@Acme.SimpleX", "acme.simplex"),
        ("shop.acme.simplex", "shop.acme.simplex"),
    ],
)
def test_a_contact_name_is_read_as_the_core_reads_names(given: str, full: str) -> None:
    assert contact_name(Assignment(given, "acme", "--name")) == full


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("#news.simplex", "only contact names"),
        ("acme", "top-level domain"),
        ("ac_me.simplex", "letters and digits"),
    ],
)
def test_a_name_that_cannot_be_registered_is_refused(given: str, why: str) -> None:
    with pytest.raises(ServeError, match=why):
        contact_name(Assignment(given, "acme", "--name"))


def test_domains_and_the_website_address_are_checked() -> None:
    assert web_domain(Assignment("Acme.Example.", "acme", "--domain")) == "acme.example"
    for bad in ("acme", "-acme.example", "acme..example", "acme_shop.example"):
        with pytest.raises(ServeError, match="not a domain name"):
            web_domain(Assignment(bad, "acme", "--domain"))
    assert parse_website("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert parse_website("[::1]:0") == ("::1", 0)
    with pytest.raises(ServeError, match="loopback only"):
        parse_website("0.0.0.0:8080")
    with pytest.raises(ServeError, match="HOST:PORT"):
        parse_website("127.0.0.1")


def test_a_domain_needs_the_website_and_the_website_a_domain() -> None:
    with pytest.raises(ServeError, match="--website HOST:PORT"):
        _sim_serve.plan(_serve_args("--domain", "acme.example=acme"))
    with pytest.raises(ServeError, match="--domain DOMAIN=USER"):
        _sim_serve.plan(_serve_args("--website", "127.0.0.1:0"))


@pytest.mark.parametrize(
    "argv",
    [
        ["--user", "acme", "--name", "acme.simplex=nobody"],
        ["--user", "acme", "--domain", "acme.example=nobody", "--website", "127.0.0.1:0"],
    ],
    ids=["name", "domain"],
)
def test_a_user_that_is_not_a_simulated_user_exits_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--port", "0", *argv]) == 2
    assert "no simulated user 'nobody'; add --user nobody" in capsys.readouterr().err


def test_users_of_the_state_file_and_demo_bots_are_simulated_users(tmp_path: Path) -> None:
    network = SimNetwork(seed=1, clock=ManualClock())
    network.add_user("saved")
    network.ensure_core("no-user-yet", started=True)
    serve_plan = _sim_serve.plan(
        _serve_args("--name", "a.simplex=saved", "--name", "b.simplex=bot", "--demo-bot", "bot")
    )
    _sim_serve.check_users(network, serve_plan)  # no error
    late = _sim_serve.plan(_serve_args("--name", "c.simplex=no-user-yet"))
    with pytest.raises(ServeError, match="no simulated user 'no-user-yet'"):
        _sim_serve.check_users(network, late)


# ---------------------------------------------------------------------------- the website


def _owner_with_address(network: SimNetwork) -> str:
    acme = network.add_user("acme", display_name="Acme", peer_type="bot")
    return acme.create_address(pq_ratchet=True, serves=["agent", "human"], business=True)


def test_a_user_without_an_address_has_a_site_of_404s() -> None:
    network = SimNetwork(seed=2, clock=ManualClock())
    network.add_user("acme")
    assert site_pages(network, "acme", "acme.example") == {}
    site = SimWebsite(network)
    site.add("acme.example", "acme")
    assert site.answer("GET", "/llms.txt", "acme.example")[0] == 404


def test_the_site_names_the_current_address_in_every_document() -> None:
    network = SimNetwork(seed=3, clock=ManualClock())
    address = _owner_with_address(network)
    pages = site_pages(network, "acme", "acme.example", lambda: {"name": "card"})
    assert set(pages) == {
        "/",
        "/llms.txt",
        "/.well-known/simplex.json",
        "/.well-known/agent-card.json",
    }
    llms = pages["/llms.txt"].body.decode()
    assert f"- [Acme]({address}): SimpleX business contact for people and agents" in llms
    contacts = loads(pages["/.well-known/simplex.json"].body.decode())["contacts"]
    assert contacts == [
        {"link": address, "title": "Acme", "business": True, "serves": ["agent", "human"]}
    ]
    assert f'<link rel="me" href="{address}">' in pages["/"].body.decode()
    assert loads(pages["/.well-known/agent-card.json"].body.decode()) == {"name": "card"}


def test_the_host_picks_the_site_and_other_hosts_get_the_first() -> None:
    network = SimNetwork(seed=4, clock=ManualClock())
    _owner_with_address(network)
    network.add_user("news", display_name="News").create_address()
    site = SimWebsite(network)
    site.add("acme.example", "acme")
    site.add("news.example", "news")
    assert b"[News]" in site.answer("GET", "/llms.txt", "news.example:8080")[1].body
    assert b"[Acme]" in site.answer("GET", "/llms.txt", "127.0.0.1:8080")[1].body
    assert b"[Acme]" in site.answer("GET", "/llms.txt?x=1", None)[1].body
    assert site.answer("POST", "/llms.txt", "acme.example")[0] == 405
    assert site.answer("GET", "/nothing", "acme.example")[0] == 404


def test_the_website_binds_loopback_only() -> None:
    with pytest.raises(ValueError, match="loopback"):
        SimWebsite(SimNetwork(seed=5), host="0.0.0.0")


@pytest.mark.anyio
async def test_discovery_reads_the_served_website() -> None:
    network = SimNetwork(seed=6)
    address = _owner_with_address(network)
    async with SimWebsite(network, port=0) as site:
        site.add("acme.example", "acme")
        async with httpx.AsyncClient() as client:
            head = await client.head(f"{site.url}/llms.txt")
            assert head.status_code == 200 and head.content == b""
            bad = await client.get(f"{site.url}/missing")
            assert bad.status_code == 404
        found = await discover_website(site.url)
    assert [a.address for a in found.addresses] == [address]
    assert {str(r.source): str(r.status) for r in found.documents} == {
        "llms.txt": "found",
        "simplex.json": "found",
        "link": "found",
        "agent-card": "absent",
    }


# ---------------------------------------------------------------------------- end to end


async def _command(url: str, cmd: str) -> dict[str, Any]:
    async with connect(url) as ws:
        await ws.send(dumps({"corrId": "1", "cmd": cmd}))
        while True:
            frame = loads(await ws.recv())
            if frame.get("corrId") == "1":
                resp: dict[str, Any] = frame["resp"]
                return resp


@pytest.mark.slow
@pytest.mark.anyio
async def test_serve_registers_the_names_and_announces_them(tmp_path: Path) -> None:
    names = tmp_path / "names.txt"
    names.write_text("shop.simplex=acme\n")
    script = os.path.join(os.path.dirname(sys.executable), "simplex-sim")
    argv = [script, "serve", "--port", "0", "--user", "acme", "--user", "you"]
    argv += ["--name", "acme.simplex=acme", "--names", str(names)]
    async with await anyio.open_process(argv) as proc:
        assert proc.stdout is not None
        buffer = b""
        with anyio.fail_after(WAIT_S):
            while b"@shop.simplex" not in buffer:
                buffer += await proc.stdout.receive()
        lines = buffer.decode().splitlines()
        assert "  @acme.simplex: the contact address of acme" in lines
        url = lines[0].rsplit(" ", 1)[-1]
        # No address yet: the name is registered but has no valid link, as in the core.
        early = await _command(f"{url}/you", "/_connect plan 1 @acme.simplex")
        assert early["type"] == "chatCmdError"
        assert early["chatError"]["errorType"]["type"] == "simplexDomainNotReady"
        created = await _command(f"{url}/acme", "/_address 1")
        link = created["connLinkContact"]["connShortLink"]
        for name in ("@acme.simplex", "@shop.simplex"):
            plan = await _command(f"{url}/you", f"/_connect plan 1 {name}")
            assert plan["type"] == "connectionPlan", plan
            assert plan["connLink"]["connShortLink"] == link
        proc.send_signal(signal.SIGTERM)
        with anyio.fail_after(WAIT_S):
            assert await proc.wait() == 0
