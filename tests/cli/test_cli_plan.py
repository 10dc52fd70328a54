"""simplex-call plan and discover on the simulated network, with fixture websites."""

from __future__ import annotations

import io
import json
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from cli_kit import PROTOCOLS, environ

from simplex_protocols._clock import ManualClock
from simplex_protocols.cli._call_site import LocalSite, Page
from simplex_protocols.cli.call import main
from simplex_protocols.sim import SimNetwork


def network() -> SimNetwork:
    net = SimNetwork(seed=3, clock=ManualClock())
    shop = net.add_user(
        "acme",
        display_name="Acme Shop",
        peer_type="bot",
        preferences=PROTOCOLS,
        short_descr="Anvils",
    )
    shop.create_address(pq_ratchet=True, serves=["agent"], business=True)
    net.register_name("acme.simplex", shop)
    net.add_user("you")
    return net


def run(net: SimNetwork | None, tmp_path: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(
        [*argv, "--core", "sim:you"], network=net, stdout=out, stderr=err, environ=environ(tmp_path)
    )
    return status, out.getvalue(), err.getvalue()


def address(net: SimNetwork) -> str:
    link = net.user("acme").address
    assert link is not None
    return link


def test_plan_shows_the_declarations_without_connecting(tmp_path: Path) -> None:
    net = network()
    status, out, err = run(net, tmp_path, "plan", "@acme.simplex")
    assert status == 0 and err == ""
    assert out.splitlines() == [
        "Acme Shop (bot): Anvils",
        f"  address    {address(net)}",
        "  name       @acme.simplex",
        "  kind       business address; not connected",
        "  serves     agent (from the link data)",
        "  protocols",
        "    mcp    2026-07-28     chat + rpc",
        "    a2a    1.0            chat + rpc",
    ]
    contacts = net.user("you").command(f"/_contacts {net.user('you').user_id}")
    assert not [c for c in contacts["contacts"] if c["localDisplayName"].startswith("Acme")]


def test_plan_json(tmp_path: Path) -> None:
    net = network()
    status, out, _ = run(net, tmp_path, "plan", address(net), "--json")
    assert status == 0
    assert json.loads(out) == {
        "ok": True,
        "exitCode": 0,
        "status": "ok",
        "target": address(net),
        "link": address(net),
        "kind": "contact",
        "planStatus": "ok",
        "displayName": "Acme Shop",
        "peerType": "bot",
        "shortDescription": "Anvils",
        "business": True,
        "protocols": {
            "mcp": {"versions": ["2026-07-28"], "transports": {"chat": True, "rpc": True}},
            "a2a": {"versions": ["1.0"], "transports": {"chat": True, "rpc": True}},
        },
        "serves": {"value": ["agent"], "source": "linkData"},
        "notes": [],
    }


def test_the_cli_user_is_created_on_first_use_and_then_reused(tmp_path: Path) -> None:
    net = network()
    out, err = io.StringIO(), io.StringIO()
    args = ["plan", "@acme.simplex", "--core", "sim:fresh"]
    assert main(args, network=net, stdout=out, stderr=err, environ=environ(tmp_path)) == 0
    assert "created simplex-call's SimpleX user" in err.getvalue()
    profile = net.user("fresh").command("/user")["user"]["profile"]
    assert profile["displayName"] == "simplex-call" and profile["peerType"] == "agent"
    err2 = io.StringIO()
    assert (
        main(args, network=net, stdout=io.StringIO(), stderr=err2, environ=environ(tmp_path)) == 0
    )
    assert err2.getvalue() == ""


def test_simplex_core_from_the_environment_is_used(tmp_path: Path) -> None:
    net = network()
    out = io.StringIO()
    env = environ(tmp_path, SIMPLEX_CORE="sim:you")
    assert main(["plan", "@acme.simplex", "--json"], network=net, stdout=out, environ=env) == 0
    assert json.loads(out.getvalue())["displayName"] == "Acme Shop"


@pytest.mark.parametrize(
    ("target", "status"),
    [
        ("@nobody.simplex", 65),
        ("https://acme.example", 64),
        ("https://smp1.sim.test/a#AAAA", 64),
    ],
)
def test_plan_failures(tmp_path: Path, target: str, status: int) -> None:
    code, out, err = run(network(), tmp_path, "plan", target)
    assert code == status and out == "" and "simplex-call: error:" in err


def test_plan_of_a_deleted_address_is_not_found(tmp_path: Path) -> None:
    net = network()
    link = address(net)
    user = net.user("acme")
    user.command(f"/_delete_address {user.user_id}")
    code, out, _ = run(net, tmp_path, "plan", link, "--json")
    assert code == 65
    error = json.loads(out)["error"]
    assert error["code"] == "not_found" and error["chain"][-1] == "AUTH"


# --------------------------------------------------------------------------- discover


def site_pages(link: str) -> dict[str, Any]:
    llms = (
        "# Acme\n\n## Communications\n\n"
        f"- [Ask Acme]({link}): SimpleX contact for people, MCP, GraphQL. Orders.\n"
        "- [Broken](https://acme.example): SimpleX contact for agents. Not SimpleX.\n"
    )
    return {"/llms.txt": Page(llms)}


def test_discover_lists_addresses_with_their_declarations(tmp_path: Path) -> None:
    net = network()
    with LocalSite(site_pages(address(net))) as site:
        status, out, err = run(net, tmp_path, "discover", site.url)
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[:6] == [
        f"{site.url}/",
        "  llms.txt        found, 1 address",
        "  simplex.json    absent",
        "  link relations  absent",
        "  agent card      absent",
        "  skipped in llms.txt line 6: not_a_simplex_link",
    ]
    assert lines[7] == "Ask Acme: contact; for people; mcp, graphql  [llms.txt]"
    assert "  Acme Shop (bot): Anvils" in lines
    assert "    serves     agent (from the link data)" in lines
    notes = [line for line in lines if "note:" in line]
    assert len(notes) == 3
    assert "graphql" in notes[0] and "LLMS-NOTES-10" in notes[0]
    assert "LLMS-NOTES-11" in notes[1]
    assert "business address, which the website does not say" in notes[2]


def test_discover_json(tmp_path: Path) -> None:
    net = network()
    with LocalSite(site_pages(address(net))) as site:
        status, out, _ = run(net, tmp_path, "discover", site.url, "--json")
    assert status == 0
    result = json.loads(out)
    assert result["ok"] is True and result["url"] == site.url + "/"
    assert [d["status"] for d in result["documents"]] == ["found", "absent", "absent", "absent"]
    assert result["documents"][0] == {
        "source": "llms.txt",
        "url": site.url + "/llms.txt",
        "status": "found",
        "finalUrl": site.url + "/llms.txt",
        "httpStatus": 200,
        "addresses": 1,
    }
    [item] = result["addresses"]
    assert item["website"]["audience"] == ["human"]
    assert item["declarations"]["serves"] == {"value": ["agent"], "source": "linkData"}
    assert len(item["declarations"]["notes"]) == 3
    assert result["problems"] == [
        {
            "source": "llms.txt",
            "code": "not_a_simplex_link",
            "reason": result["problems"][0]["reason"],
            "line": 6,
        }
    ]


def test_discover_without_plan_needs_no_core(tmp_path: Path) -> None:
    with LocalSite(site_pages("@acme.simplex")) as site:
        out, err = io.StringIO(), io.StringIO()
        status = main(
            ["discover", site.url, "--no-plan", "--json", "--core", "ws://127.0.0.1:1"],
            stdout=out,
            stderr=err,
            environ=environ(tmp_path),
        )
    # "@acme.simplex" is not a link, so the llms.txt entry is refused: nothing is found.
    assert status == 65 and json.loads(out.getvalue())["addresses"] == []


def test_discover_reports_addresses_whose_link_data_cannot_be_read(tmp_path: Path) -> None:
    net = network()
    link = address(net)
    user = net.user("acme")
    user.command(f"/_delete_address {user.user_id}")
    with LocalSite(site_pages(link)) as site:
        status, out, _ = run(net, tmp_path, "discover", site.url, "--json")
        status2, text, _ = run(net, tmp_path, "discover", site.url)
    [item] = json.loads(out)["addresses"]
    assert status == status2 == 0
    assert item["declarations"] is None and "AUTH" in item["error"]
    assert "  link data not read:" in "\n".join(text.splitlines())


def test_discover_failures(tmp_path: Path) -> None:
    release = threading.Event()

    def stall(handler: BaseHTTPRequestHandler) -> None:
        release.wait(5)

    net = network()
    with LocalSite({"/llms.txt": Page("# nothing\n")}) as empty:
        nothing = run(net, tmp_path, "discover", empty.url)
    insecure = run(net, tmp_path, "discover", "http://acme.example")
    try:
        paths = ("/llms.txt", "/", "/.well-known/simplex.json", "/.well-known/agent-card.json")
        with LocalSite(dict.fromkeys(paths, stall)) as slow:
            timed_out = run(net, tmp_path, "discover", slow.url, "--timeout", "0.3", "--json")
    finally:
        release.set()
    assert nothing[0] == 65 and "No SimpleX address found." in nothing[1]
    assert insecure[0] == 64 and "plain HTTP is refused" in insecure[2]
    assert timed_out[0] == 68 and json.loads(timed_out[1])["status"] == "timed_out"


def test_discover_progress_lines(tmp_path: Path) -> None:
    net = network()
    with LocalSite(site_pages(address(net))) as site:
        status, _, err = run(net, tmp_path, "discover", site.url, "--progress")
    assert status == 0
    assert err.splitlines() == [
        f"simplex-call: reading {site.url}...",
        f"simplex-call: reading the link data of {address(net)}...",
    ]
