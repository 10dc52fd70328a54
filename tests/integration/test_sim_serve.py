"""End to end over the WebSocket backend against `simplex-sim serve` (started in the test)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import anyio
import anyio.abc
import pytest
from simkit import WAIT_S, Client, World, text_item
from websockets.asyncio.client import connect

from simplex_protocols._wire import dumps, loads
from simplex_protocols.errors import CoreConnectionError, CoreError
from simplex_protocols.rpc import SigningKey

# slow: runs a subprocess, a console script or the conformance self-test
pytestmark = [pytest.mark.anyio, pytest.mark.slow]

REQUEST = {"protocol": "mcp", "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}


async def _background(client: Client, cmd: str, box: dict[str, Any], done: anyio.Event) -> None:
    try:
        box["response"] = await client.core.command(cmd)
    except (CoreError, CoreConnectionError) as exc:
        box["error"] = exc
    finally:
        done.set()


async def test_two_users_connect_by_address_and_exchange_a_quote_and_a_reply() -> None:
    async with World(websocket=True) as w:
        alice = await w.user("alice")
        bob = await w.user("bob", peer_type="bot")
        a_contact, b_contact = await w.connect(alice, bob, await w.address(bob))
        sent = await alice.cmd(f"/_send @{a_contact['contactId']} text hello bob")
        sent_id = sent["chatItems"][0]["chatItem"]["meta"]["itemId"]
        got = await bob.message("hello bob")
        rcv_id = got["chatItems"][0]["chatItem"]["meta"]["itemId"]
        await bob.cmd_json(
            f"/_send @{b_contact['contactId']} json",
            [{"msgContent": {"type": "text", "text": "hello alice"}, "quotedItemId": rcv_id}],
        )
        reply = await alice.message("hello alice")
        assert reply["chatItems"][0]["chatItem"]["quotedItem"]["itemId"] == sent_id


async def test_group_of_three_with_a_mention() -> None:
    async with World(websocket=True) as w:
        alice = await w.user("alice")
        bob = await w.user("bob")
        carol = await w.user("carol")
        gid = (
            await alice.cmd_json(
                f"/_group {alice.user_id}", {"displayName": "trail", "fullName": ""}
            )
        )["groupInfo"]["groupId"]
        link = (await alice.cmd(f"/_create link #{gid}"))["groupLink"]["connLinkContact"][
            "connShortLink"
        ]
        for joiner in (bob, carol):
            await joiner.cmd(f"/_connect {joiner.user_id} {link}")
            await joiner.event("userJoinedGroup")
        member = (await bob.event("connectedToGroupMember"))["member"]
        bob_gid = member["groupId"]
        await bob.cmd_json(
            f"/_send #{bob_gid} json",
            [
                {
                    "msgContent": {"type": "text", "text": "@carol hi"},
                    "mentions": {"carol": member["groupMemberId"]},
                }
            ],
        )
        got = await carol.message("@carol hi")
        assert got["chatItems"][0]["chatItem"]["meta"]["userMention"] is True
        assert (await alice.message("@carol hi"))["chatItems"][0]["chatItem"]["meta"][
            "userMention"
        ] is False


async def test_business_chat() -> None:
    async with World(websocket=True) as w:
        alice = await w.user("alice", peer_type="agent")
        shop = await w.user(
            "shop",
            peer_type="business",
            preferences={
                "protocols": {"mcp": {"versions": ["2026-07-28"], "transports": {"chat": True}}}
            },
        )
        link = await w.address(
            shop, settings={"businessAddress": True, "autoAccept": {"acceptIncognito": False}}
        )
        await alice.cmd(f"/_connect {alice.user_id} {link}")
        joined = await alice.event("userJoinedGroup")
        info = joined["groupInfo"]
        assert info["businessChat"]["chatType"] == "business"
        assert info["groupProfile"]["groupPreferences"]["protocols"]["mcp"]["transports"] == {
            "chat": True
        }
        accepted = await shop.event("acceptingBusinessRequest")
        await alice.cmd(f"/_send #{info['groupId']} text price?")
        assert text_item(await shop.message("price?"))[0][1] == "groupRcv"
        await shop.cmd(f"/_send #{accepted['groupInfo']['groupId']} text $142")
        await alice.message("$142")


async def test_channel_with_an_observer() -> None:
    async with World(websocket=True) as w:
        owner = await w.user("news")
        alice = await w.user("alice")
        created = await owner.cmd_json(
            f"/_public group {owner.user_id} 1",
            {"displayName": "news", "fullName": "", "publicGroup": {"changeFrequency": "daily"}},
        )
        link = created["groupLink"]["connLinkContact"]["connShortLink"]
        plan = await alice.cmd(f"/_connect plan {alice.user_id} {link}")
        ok = plan["connectionPlan"]["groupLinkPlan"]
        cl = plan["connLink"]
        prepared = await alice.cmd_json(
            f"/_prepare group {alice.user_id} {cl['connFullLink']} {cl['connShortLink']} direct=off",
            ok["groupSLinkData_"],
        )
        gid = prepared["chat"]["chatInfo"]["groupInfo"]["groupId"]
        await alice.cmd(f"/_connect group #{gid} incognito=on")
        joined = await alice.event("userJoinedGroup")
        assert joined["groupInfo"]["membership"]["memberRole"] == "observer"
        await owner.cmd(f"/_send #{created['groupInfo']['groupId']} text first post")
        post = await alice.message("first post")
        assert post["chatItems"][0]["chatItem"]["chatDir"] == {"type": "channelRcv"}


@pytest.mark.requirement("RPC-CMD-3", "RPC-SIG-2")
async def test_signed_service_request_and_response() -> None:
    async with World(websocket=True) as w:
        bot = await w.user("bot", service_requests=True)
        link = await w.address(bot)
        alice = await w.user("alice")
        key = SigningKey.generate(w.network.random.randbytes)
        box: dict[str, Any] = {}
        done = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _background,
                alice,
                f"/_service_request {alice.user_id} {link} sign_key={key.to_sign_key()} {dumps(REQUEST)}",
                box,
                done,
            )
            req = await bot.event("serviceRequest")
            assert req["signerKey"] == key.public_key.encode()
            await bot.cmd_json(
                f"/_service_response {bot.user_id} {req['requestId']}",
                {"response": {"jsonrpc": "2.0", "id": 1, "result": {}}},
            )
            with anyio.fail_after(WAIT_S):
                await done.wait()
        assert box["response"]["type"] == "serviceResponse"
        assert box["response"]["responseData"]["response"]["id"] == 1


async def test_faults_as_the_core_reports_them() -> None:
    async with World(websocket=True) as w:
        alice = await w.user("alice")
        bot = await w.user("bot", service_requests=True)
        a_contact, _ = await w.connect(alice, bot, await w.address(bot))
        cid = a_contact["contactId"]
        faults = w.network.faults
        # latency
        faults.latency(3, user="bot")
        await alice.cmd(f"/_send @{cid} text late")
        await w.clock.advance(3)
        await bot.message("late")
        faults.latency(0, user="bot")
        # peer offline, then back
        faults.offline("bot")
        await alice.cmd(f"/_send @{cid} text queued")
        await bot.settle()
        assert not any(t == "queued" for e in bot.all("newChatItems") for _, _, t in text_item(e))
        faults.offline("bot", False)
        await bot.message("queued")
        # a router down fails commands that need it
        faults.router_down(w.network.user("bot").router)
        err = await bot.error(f"/_connect {bot.user_id}")
        assert err["agentError"]["type"] == "BROKER"
        faults.router_down(w.network.user("bot").router, False)
        # loss
        faults.loss(1.0, link=("alice", "bot"))
        await alice.cmd(f"/_send @{cid} text gone")
        faults.loss(0.0, link=("alice", "bot"))
        await alice.cmd(f"/_send @{cid} text after")
        gap = await bot.event(
            "newChatItems",
            lambda e: e["chatItems"][0]["chatItem"]["content"]["type"] == "rcvIntegrityError",
        )
        assert gap["chatItems"][0]["chatItem"]["content"]["msgError"]["type"] == "msgSkipped"
        # a slow responder: the requester times out after its 30 s
        link = (await bot.cmd(f"/_show_address {bot.user_id}"))["contactLink"]["connLinkContact"][
            "connShortLink"
        ]
        faults.slow_responder("bot", 45)
        box: dict[str, Any] = {}
        done = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _background,
                alice,
                f"/_service_request {alice.user_id} {link} {dumps(REQUEST)}",
                box,
                done,
            )
            req = await bot.event("serviceRequest")
            await bot.cmd_json(
                f"/_service_response {bot.user_id} {req['requestId']}", {"response": 1}
            )
            await w.clock.advance(31)
            with anyio.fail_after(WAIT_S):
                await done.wait()
        error = box["error"]
        assert isinstance(error, CoreError)
        assert error.chain == ["errorAgent", "AGENT", "A_SERVICE", "timeout"]
        # a message over 15,602 bytes of JSON
        err = await alice.error(f"/_send @{cid} text {'x' * 15_600}")
        assert err == {"type": "errorStore", "storeError": {"type": "largeMsg"}}


async def test_dropped_websocket_fails_commands_in_flight_and_reconnects() -> None:
    async with World(websocket=True) as w:
        bot = await w.user("bot", service_requests=True)
        link = await w.address(bot)
        alice = await w.user("alice")
        box: dict[str, Any] = {}
        done = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _background,
                alice,
                f"/_service_request {alice.user_id} {link} {dumps(REQUEST)}",
                box,
                done,
            )
            await bot.event("serviceRequest")
            assert w.server is not None
            assert w.server.drop_connections("alice") == 1
            with anyio.fail_after(WAIT_S):
                await done.wait()
        assert isinstance(box["error"], CoreConnectionError)
        assert alice.lost
        await alice.reconnect()
        assert (await alice.cmd("/user"))["user"]["localDisplayName"] == "alice"
        # the network outlived the client: the user, its chats and its pending request are there
        assert w.network.core("alice").db.users[alice.user_id].local_display_name == "alice"


async def test_invalid_frames_over_the_wire() -> None:
    async with World(websocket=True) as w:
        assert w.server is not None
        async with connect(w.server.url("raw")) as ws:
            await ws.send("not json")
            frame = loads(await ws.recv())
            assert frame == {
                "resp": {
                    "type": "chatCmdError",
                    "chatError": {
                        "type": "error",
                        "errorType": {"type": "commandError", "message": "invalid request"},
                    },
                }
            }
            await ws.send(dumps({"corrId": "1", "cmd": "/_bogus 1"}))
            frame = loads(await ws.recv())
            assert frame["corrId"] == "1"
            assert frame["resp"]["chatError"]["errorType"]["type"] == "commandError"


async def test_simplex_sim_serve_console_script() -> None:
    script = os.path.join(os.path.dirname(sys.executable), "simplex-sim")
    async with await anyio.open_process(
        [script, "serve", "--port", "0", "--seed", "5", "--user", "alice"]
    ) as proc:
        assert proc.stdout is not None
        buffer = b""
        with anyio.fail_after(WAIT_S * 2):
            while b"\n" not in buffer:
                buffer += await proc.stdout.receive()
        first = buffer.split(b"\n", 1)[0].decode()
        assert "not SimpleX" in first
        url = first.rsplit(" ", 1)[-1]
        async with connect(url + "/alice") as ws:
            await ws.send(dumps({"corrId": "7", "cmd": "/user"}))
            frame = loads(await ws.recv())
        assert frame["corrId"] == "7"
        assert frame["resp"]["user"]["localDisplayName"] == "alice"
        proc.send_signal(signal.SIGTERM)
        with anyio.fail_after(WAIT_S * 2):
            code = await proc.wait()
        assert code == 0


async def _first_line(proc: anyio.abc.Process) -> str:
    assert proc.stdout is not None
    buffer = b""
    with anyio.fail_after(WAIT_S * 2):
        while b"\n" not in buffer:
            buffer += await proc.stdout.receive()
    return buffer.split(b"\n", 1)[0].decode()


async def test_serve_keeps_the_network_in_its_state_file(tmp_path: Any) -> None:
    script = os.path.join(os.path.dirname(sys.executable), "simplex-sim")
    state = tmp_path / "state.json"
    args = [script, "serve", "--port", "0", "--state", str(state)]
    async with await anyio.open_process(args) as proc:
        url = (await _first_line(proc)).rsplit(" ", 1)[-1]
        async with connect(url + "/carol") as ws:
            await ws.send(
                dumps(
                    {
                        "corrId": "1",
                        "cmd": '/_create user {"profile":{"displayName":"carol","fullName":""},"pastTimestamp":false}',
                    }
                )
            )
            assert loads(await ws.recv())["resp"]["type"] == "activeUser"
        proc.send_signal(signal.SIGTERM)
        with anyio.fail_after(WAIT_S * 2):
            assert await proc.wait() == 0
    assert state.exists()
    async with await anyio.open_process(args) as proc:
        url = (await _first_line(proc)).rsplit(" ", 1)[-1]
        async with connect(url + "/carol") as ws:
            await ws.send(dumps({"corrId": "2", "cmd": "/user"}))
            frame = loads(await ws.recv())
        assert frame["resp"]["user"]["localDisplayName"] == "carol"
        proc.send_signal(signal.SIGTERM)
        with anyio.fail_after(WAIT_S * 2):
            assert await proc.wait() == 0


def test_cli_help_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    from simplex_protocols.cli.sim import main

    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "not SimpleX" in out and "serve" in out
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--help"])
    assert exc.value.code == 0
    assert "ws://127.0.0.1:PORT/NAME" in capsys.readouterr().out
    assert main([]) == 2
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--port", "70000"])
    assert exc.value.code == 2
    assert "a port is 0 to 65535" in capsys.readouterr().err


def test_cli_refuses_a_bad_state_file(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from simplex_protocols.cli.sim import main

    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    assert main(["serve", "--state", str(bad)]) == 1
    assert "not a simplex-sim state file" in capsys.readouterr().err
