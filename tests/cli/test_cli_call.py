"""simplex-call TARGET METHOD [ARGS] against the reference bot on the simulated network."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from cli_kit import shop

from simplex_protocols._clock import SystemClock
from simplex_protocols.cli._call_site import LocalSite, Page

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_tools_list_over_service_rpc_in_json(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        result = await s.cli(s.address, "tools/list", "--json")
    assert result.status == 0, result.err
    out = result.json()
    assert out["ok"] is True and out["exitCode"] == 0 and out["status"] == "ok"
    assert out["protocol"] == "mcp" and out["version"] == "2026-07-28"
    assert out["transport"] == "rpc" and out["signed"] is False
    assert out["method"] == "tools/list" and out["name"] == "Acme Shop"
    assert out["address"] == s.address and out["target"] == s.address
    assert out["request"]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == (
        "2026-07-28"
    )
    assert "progressToken" not in out["request"]["params"]["_meta"]
    names = [t["name"] for t in out["response"]["result"]["tools"]]
    assert names == ["availability", "quote", "whoami", "track", "broken"]
    assert "replies" not in out and out["notes"] == []


async def test_a_tool_call_by_shortcut_and_by_name_give_the_same_request(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        short = await s.cli("@acme.simplex", "tool", "quote", "item=anvil", "quantity=2", "--json")
        named = await s.cli(
            "@acme.simplex", "tools/call", "name=quote", "item=anvil", "quantity=2", "--json"
        )
        whole = await s.cli(
            "@acme.simplex",
            "tools/call",
            '{"name":"quote","arguments":{"item":"anvil","quantity":2}}',
            "--json",
        )
    for result in (short, named, whole):
        assert result.status == 0, result.err
        out = result.json()
        assert out["request"]["params"]["name"] == "quote"
        assert out["request"]["params"]["arguments"] == {"item": "anvil", "quantity": 2}
        assert (
            out["response"]["result"]["content"][0]["text"]
            == "2 anvil(s) delivered to Lisbon: EUR 270."
        )


@pytest.mark.requirement("RPC-SIG-5")
async def test_signed_calls_use_one_private_key_per_responder(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        first = await s.cli(s.address, "tool", "whoami", "--sign", "--json")
        second = await s.cli("@acme.simplex", "tool", "whoami", "--sign", "--json")
        anonymous = await s.cli(s.address, "tool", "whoami", "--json")
    assert first.status == second.status == anonymous.status == 0
    key = first.json()["response"]["result"]["content"][0]["text"]
    assert key.startswith("rpc:") and first.json()["signed"] is True
    # A name resolves to the same address, so the same key signs (one key per responder).
    assert second.json()["response"]["result"]["content"][0]["text"] == key
    assert anonymous.json()["response"]["result"]["content"][0]["text"].startswith("rpc-anonymous:")
    folder = tmp_path / "config" / "simplex-call" / "keys"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    keys = [p for p in folder.iterdir() if p.suffix == ".key"]
    assert len(keys) == 1 and stat.S_IMODE(keys[0].stat().st_mode) == 0o600


async def test_key_dir_option_chooses_the_folder(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        result = await s.cli(s.address, "tools/list", "--sign", "--key-dir", str(tmp_path / "k"))
    assert result.status == 0, result.err
    assert any(p.suffix == ".key" for p in (tmp_path / "k").iterdir())
    assert "over Service RPC, signed" in result.out


async def test_an_unsafe_key_folder_is_status_70(tmp_path: Path) -> None:
    folder = tmp_path / "open"
    folder.mkdir()
    os.chmod(folder, 0o777)
    async with shop(tmp_path) as s:
        result = await s.cli(s.address, "tools/list", "--sign", "--key-dir", str(folder), "--json")
    assert result.status == 70
    assert result.json()["error"]["code"] == "unavailable"


async def test_a_call_in_a_conversation_shows_progress_and_reuses_the_contact(
    tmp_path: Path,
) -> None:
    async with shop(tmp_path) as s:
        first = await s.cli(
            "@acme.simplex", "tool", "availability", "item=anvil", "--transport", "chat", "--json"
        )
        second = await s.cli(s.address, "tool", "whoami", "--transport", "chat", "--json")
        contacts = s.network.user("you").command(f"/_contacts {s.network.user('you').user_id}")
    assert first.status == 0, first.err
    out = first.json()
    assert out["transport"] == "chat"
    assert out["request"]["params"]["_meta"]["progressToken"] == "simplex-call-1"
    methods = [r["message"].get("method") for r in out["replies"]]
    assert methods == ["notifications/progress"] * 3 + [None]
    assert out["replies"][-1]["message"] == out["response"]
    assert out["response"]["result"]["content"][0]["text"] == "12 anvils are in stock."
    assert second.status == 0
    who = second.json()["response"]["result"]["content"][0]["text"]
    assert who.startswith("chat:@")
    shops = [c for c in contacts["contacts"] if c["localDisplayName"].startswith("Acme")]
    assert len(shops) == 1


async def test_readable_output_is_a_transcript(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        rpc = await s.cli(s.address, "tools/list")
        chat = await s.cli(s.address, "tool", "availability", "item=anvil", "--transport", "chat")
    assert rpc.out.splitlines()[:2] == [
        "→ mcp tools/list to Acme Shop over Service RPC",
        "← 5 tools:",
    ]
    assert chat.out.splitlines() == [
        "→ mcp tools/call to Acme Shop in a conversation",
        '  {"name":"availability","arguments":{"item":"anvil"}}',
        "← progress 1/3: checking the warehouse",
        "← progress 2/3: checking the shop floor",
        "← progress 3/3: counting",
        "← 12 anvils are in stock.",
    ]
    assert chat.err == ""


async def test_a2a_one_shot_goes_over_service_rpc_and_streams_go_to_a_conversation(
    tmp_path: Path,
) -> None:
    async with shop(tmp_path) as s:
        one_shot = await s.cli("@acme.simplex", "SendMessage", "text=two anvils", "--json")
        stream = await s.cli("@acme.simplex", "SendStreamingMessage", "text=two anvils", "--json")
        task_id = stream.json()["response"]["result"]["statusUpdate"]["taskId"]
        again = await s.cli("@acme.simplex", "GetTask", f"id={task_id}", "--json")
        other = await s.cli(
            "@acme.simplex",
            "GetTask",
            f"id={one_shot.json()['response']['result']['task']['id']}",
            "--json",
        )
    assert one_shot.status == 0, one_shot.err
    out = one_shot.json()
    assert out["protocol"] == "a2a" and out["transport"] == "rpc" and out["version"] == "1.0"
    assert out["request"]["a2a-service-parameters"] == {"A2A-Version": "1.0"}
    task = out["response"]["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert stream.status == 0
    sout = stream.json()
    assert sout["transport"] == "chat"
    kinds = [next(iter(r["message"]["result"])) for r in sout["replies"]]
    assert kinds == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    # GetTask needs a conversation; the task is this caller's.
    assert again.status == 0 and again.json()["transport"] == "chat"
    assert again.json()["response"]["result"]["id"] == task_id
    # The one-shot task belongs to an anonymous Service RPC requester: not ours (A2A-AUTHZ-2).
    assert other.status == 65 and other.json()["status"] == "not_found"


async def test_a2a_readable_transcripts(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        one_shot = await s.cli("@acme.simplex", "SendMessage", "text=two anvils")
        stream = await s.cli("@acme.simplex", "SendStreamingMessage", "text=two anvils")
    lines = one_shot.out.splitlines()
    assert lines[0] == "→ a2a SendMessage to Acme Shop over Service RPC"
    assert lines[1] == '  {"message":{"text":"two anvils"}}'
    assert lines[2].startswith("← task ") and lines[2].endswith(": completed")
    assert lines[3:] == [
        "    artifact quote:",
        "      Quote for “two anvils”: 2 anvils at EUR 120, delivery EUR 30, total EUR 270.",
    ]
    slines = stream.out.splitlines()
    assert slines[0] == "→ a2a SendStreamingMessage to Acme Shop in a conversation"
    assert slines[2].endswith(": submitted")
    assert slines[3:] == [
        "← status: working",
        "    Looking up prices",
        "← artifact quote:",
        "    Quote for “two anvils”: 2 anvils at EUR 120, delivery EUR 30, total EUR 270.",
        "← status: completed",
    ]


@pytest.mark.requirement("RPC-ERR-9", "MCP-MSG-8")
async def test_conversation_required_falls_back_to_a_conversation_in_auto_mode(
    tmp_path: Path,
) -> None:
    async with shop(tmp_path) as s:
        auto = await s.cli(s.address, "tool", "track", "order==7", "--json")
        rpc = await s.cli(s.address, "tool", "track", "order==7", "--transport", "rpc", "--json")
        readable = await s.cli(s.address, "tool", "track", "order==8")
    assert auto.status == 0, auto.err
    out = auto.json()
    assert out["transport"] == "chat"
    assert out["response"]["result"]["content"][0]["text"] == "order 7 is on its way"
    assert any("conversation_required" in n for n in out["notes"])
    assert rpc.status == 66
    assert rpc.json()["request"]["params"]["name"] == "track" and rpc.json()["transport"] == "rpc"
    err = rpc.json()["error"]
    assert err["code"] == "not_supported"
    assert err["envelopeError"]["code"] == "conversation_required"
    assert "--transport chat" in err["hint"]
    assert "note: Acme Shop answered conversation_required" in readable.err


async def test_remote_errors_and_unknown_methods_have_their_statuses(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        broken = await s.cli(s.address, "tool", "broken", "--json")
        unknown = await s.cli(s.address, "nothing/here", "--json")
        readable = await s.cli(s.address, "nothing/here")
    assert broken.status == 69 and broken.json()["status"] == "remote_error"
    assert broken.json()["response"]["result"]["isError"] is True
    assert unknown.status == 66
    assert unknown.json()["response"]["error"]["code"] == -32601
    assert readable.out.splitlines()[1].startswith("← error -32601")


async def test_what_the_target_does_not_serve_is_status_66(tmp_path: Path) -> None:
    async with shop(tmp_path, a2a=False, transports=("chat",)) as s:
        a2a = await s.cli(s.address, "SendMessage", "text=hi", "--json")
        rpc = await s.cli(s.address, "tools/list", "--transport", "rpc", "--json")
        auto = await s.cli(s.address, "tools/list", "--json")
        version = await s.cli(s.address, "tools/list", "--protocol-version", "2027-01-01", "--json")
        handshake = await s.cli(
            s.address, "tools/list", "--protocol-version", "2024-11-05", "--json"
        )
    assert a2a.status == 66 and "does not declare a2a" in a2a.json()["error"]["message"]
    failed = a2a.json()
    assert failed["ok"] is False and failed["exitCode"] == 66
    assert (failed["target"], failed["address"], failed["name"]) == (
        s.address,
        s.address,
        "Acme Shop",
    )
    assert failed["protocol"] == "a2a" and "request" not in failed
    sent = rpc.json()
    assert sent["protocol"] == "mcp" and sent["version"] == "2026-07-28" and "request" not in sent
    assert rpc.status == 66 and "Service RPC" in rpc.json()["error"]["message"]
    assert auto.status == 0 and auto.json()["transport"] == "chat"
    assert version.status == 66
    assert version.json()["response"]["error"]["code"] == -32022
    # MCP-MSG-1: a handshake-era revision is never sent; nothing reaches the bot.
    assert handshake.status == 64 and "request" not in handshake.json()
    assert "initialize handshake" in handshake.json()["error"]["message"]


async def test_a2a_over_service_rpc_serves_only_one_shot_messages(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        result = await s.cli(
            s.address, "SendMessage", "text=hi", "contextId=c1", "--transport", "rpc", "--json"
        )
        protocol = await s.cli(s.address, "tools/list", "--protocol", "a2a", "--json")
    assert result.status == 66 and "one-shot" in result.json()["error"]["message"]
    assert protocol.status == 64


async def test_a_website_target_names_the_contact_address_for_agents(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        llms = (
            "# Acme\n\n## Communications\n\n"
            f"- [Acme for people]({s.address}): SimpleX contact for people. Chat with us.\n"
            f"- [Ask Acme]({s.address}): SimpleX contact for agents, MCP. Stock.\n"
        )
        with LocalSite({"/llms.txt": Page(llms)}) as site:
            result = await s.cli(site.url, "tool", "availability", "item=bolt", "--json")
        with LocalSite({"/llms.txt": Page("# Nothing here\n")}) as empty:
            nothing = await s.cli(empty.url, "tools/list", "--json")
    assert result.status == 0, result.err
    assert result.json()["response"]["result"]["content"][0]["text"] == "12 bolts are in stock."
    assert (
        nothing.status == 65
        and "publishes no SimpleX contact address" in nothing.json()["error"]["message"]
    )


async def test_unknown_names_and_bad_targets(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        name = await s.cli("@nobody.simplex", "tools/list", "--json")
        bare = await s.cli("acme.simplex", "tools/list", "--json")
        junk = await s.cli("not a target", "tools/list", "--json")
        insecure = await s.cli("http://acme.example", "tools/list", "--json")
    assert name.status == 65 and name.json()["error"]["chain"][-2:] == ["NAME", "NOT_FOUND"]
    assert bare.status == 64 and "@acme.simplex" in bare.json()["error"]["hint"]
    assert junk.status == 64
    assert insecure.status == 64 and insecure.json()["error"]["discovery"] == "insecure_url"


@pytest.mark.requirement("RPC-SIG-1", "RPC-SIG-2")
async def test_a_signature_the_bot_cannot_verify_gets_no_answer(tmp_path: Path) -> None:
    """The responder's agent drops a request whose signature does not verify and tells only
    its own clients (simplexmq's signed service requests: "A_SERVICE ASEBadSignature (logs +
    ERR event), no invitation"), so the caller waits out its timeout. This test used to
    expect a ``badSignature`` error at the caller."""
    async with shop(tmp_path, clock=SystemClock()) as s:
        s.network.faults.tamper_signatures()
        result = await s.cli(s.address, "tools/list", "--sign", "--timeout", "0.3", "--json")
    assert result.status == 68 and result.json()["status"] == "timed_out"


async def test_no_answer_in_time_is_status_68_on_both_transports(tmp_path: Path) -> None:
    async with shop(tmp_path, clock=SystemClock()) as s:
        mute = s.network.add_user(
            "mute",
            preferences={
                "protocols": {
                    "mcp": {"versions": ["2026-07-28"], "transports": {"chat": True, "rpc": True}}
                }
            },
        )
        address = mute.create_address(pq_ratchet=True)
        rpc = await s.cli(address, "tools/list", "--timeout", "0.3", "--json")
        chat = await s.cli(
            address, "tools/list", "--transport", "chat", "--timeout", "0.3", "--json"
        )
        readable = await s.cli(address, "tools/list", "--transport", "chat", "--timeout", "0.3")
    assert rpc.status == 68 and rpc.json()["status"] == "timed_out"
    assert chat.status == 68 and chat.json()["transport"] == "chat"
    assert chat.json()["replies"] == [] and chat.json()["response"] is None
    assert "no final answer from mute within 0.3 s" in readable.err


async def test_a_requested_progress_line_is_written_to_stderr(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        quiet = await s.cli(s.address, "tools/list")
        shown = await s.cli(s.address, "tools/list", "--progress")
        json_mode = await s.cli(s.address, "tools/list", "--json")
    assert quiet.err == "" and json_mode.err == ""
    assert shown.err.splitlines() == [
        f"simplex-call: reading the link data of {s.address}...",
        "simplex-call: waiting for Acme Shop over Service RPC (timeout 30 s)...",
    ]


async def test_a_business_address_is_called_in_its_business_chat_which_is_reused(
    tmp_path: Path,
) -> None:
    from cli_kit import cli, environ, shop_tools

    from simplex_protocols._clock import ManualClock
    from simplex_protocols.bot import ResponderBot
    from simplex_protocols.sim import SimNetwork

    net = SimNetwork(seed=9, clock=ManualClock())
    net.add_user("you")
    bot = ResponderBot(
        display_name="Biz",
        mcp=shop_tools(),
        business=True,
        data_dir=tmp_path / "biz",
        shutdown_grace_s=0.5,
        clock=net.clock,
    )
    env = environ(tmp_path)
    async with bot.serving(net.backend("biz")):
        first = await cli(
            net, [bot.address, "tool", "whoami", "--transport", "chat", "--json"], env
        )
        second = await cli(
            net, [bot.address, "tool", "whoami", "--transport", "chat", "--json"], env
        )
    assert first.status == second.status == 0, first.err + second.err
    key = first.json()["response"]["result"]["content"][0]["text"]
    assert key.startswith("chat:#")
    assert second.json()["response"]["result"]["content"][0]["text"] == key
    you = net.user("you")
    groups = you.command(f"/_groups {you.user_id}")["groups"]
    assert len(groups) == 1


async def test_a_method_of_no_protocol_needs_protocol_when_both_are_served(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        both = await s.cli(s.address, "whatever", "--json")
        chosen = await s.cli(s.address, "whatever", "--protocol", "mcp", "--json")
    assert both.status == 64 and "give --protocol" in both.json()["error"]["message"]
    assert chosen.status == 66
    assert chosen.json()["response"]["error"]["code"] == -32601


async def test_a_protocol_not_declared_can_be_called_when_both_are_given(tmp_path: Path) -> None:
    async with shop(tmp_path, a2a=False) as s:
        result = await s.cli(
            s.address, "SendMessage", "text=hi", "--protocol", "a2a", "--transport", "rpc", "--json"
        )
    assert result.status == 66
    out = result.json()
    assert any("does not declare a2a; calling it anyway" in n for n in out["notes"])
    assert out["error"]["envelopeError"]["code"] == "unsupported_protocol"


async def test_arguments_from_standard_input(tmp_path: Path) -> None:
    async with shop(tmp_path) as s:
        result = await s.cli(
            s.address,
            "tools/call",
            "@-",
            "--json",
            stdin='{"name": "quote", "arguments": {"item": "nut"}}',
        )
        bad = await s.cli(s.address, "tools/call", "item=nut", "--json")
        send = await s.cli(s.address, "SendMessage", "--json")
        extra = await s.cli(s.address, "SendMessage", "text=hi", "colour=red", "--json")
    assert result.status == 0
    assert (
        result.json()["response"]["result"]["content"][0]["text"]
        == "1 nut(s) delivered to Lisbon: EUR 150."
    )
    assert bad.status == send.status == extra.status == 64
    assert "name=TOOL" in bad.json()["error"]["message"]
    assert "text=TEXT" in send.json()["error"]["message"]
    assert "colour" in extra.json()["error"]["message"]
