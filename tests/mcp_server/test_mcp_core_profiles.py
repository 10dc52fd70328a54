"""simplex-mcp on the chat cores of each profile (issue "Meet real chat cores", section 1).

The agent's core behaves as a real core of one version (``simplex_protocols.sim`` core
profiles); the owner, the vendor and the channel run the spec's core. At start the server
probes what it uses, logs what the core lacks and what it does instead, and works on: on a
6.4-era core the control chat's state lives in the data folder (no ``/_set custom``), names
are not looked up, and a channel is joined as a group, which its card says.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp_sim import World, result_text, text_of_item, world
from test_mcp_flows import approve_connect, connect_vendor, start

from simplex_protocols.core import Capability
from simplex_protocols.mcp_server.cards import CHANNEL_AS_MEMBER
from simplex_protocols.mcp_server.serve import FALLBACKS

pytestmark = pytest.mark.anyio

#: The capabilities simplex-mcp uses that each profile lacks, in probe order.
LACKS = {
    "spec": [],
    "v7.0": [Capability.PREPARED_CHATS],
    "v6.4": [Capability.CUSTOM_DATA, Capability.PREPARED_CHATS, Capability.SIMPLEX_NAMES],
}


def start_lines(w: World) -> list[str]:
    """The log lines about the core's capabilities, up to the control chat."""
    lines = w.server.log.lines
    end = next(i for i, line in enumerate(lines) if line.startswith("Agent control chat"))
    return [line for line in lines[3:end] if not line.startswith("Data folder")]


async def send_approved(w: World, chat: str, n: int, text: str) -> dict[str, object]:
    async with anyio.create_task_group() as tg:
        call = start(tg, w, "send", {"chat": chat, "text": text, "idle": 5})
        card = await w.owner.wait_message(lambda t: f"/'approve {chat} {n}'" in t)
        assert text_of_item(card).startswith("I want to send a message to business Ridgeline")
        await w.owner.say(f"/approve {chat} {n}")
        await w.server.seen.until(lambda: "Thanks!" in w.server.seen.received_texts(chat))
        await w.clock.advance(5)
        return await call.wait()


@pytest.mark.parametrize("profile", list(LACKS))
async def test_an_owner_approves_a_connect_and_a_send_on_every_core(
    tmp_path: Path, profile: str
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path, core_profile=profile) as w:
            lacks = LACKS[profile]
            expected = []
            if lacks:
                version = "6.4.0" if profile == "v6.4" else "7.0.2"
                names = ", ".join(str(c) for c in lacks)
                expected.append(
                    f"Chat core {version} lacks {names} (simplex-call doctor tells more)."
                )
                expected += [FALLBACKS[c] for c in lacks]
            assert start_lines(w) == expected
            await w.setup_owner()
            result = await connect_vendor(w)
            assert (result["status"], result["type"], result["connected"]) == (
                "done",
                "business",
                True,
            )
            sent = await send_approved(w, result["chat"], 2, "Size 44, please.")
            assert sent["status"] == "done"
            assert [r["text"] for r in sent["responses"]] == ["Thanks!"]
            custom = tmp_path / "agent" / "custom.json"
            assert custom.exists() is (Capability.CUSTOM_DATA in lacks)


async def test_without_custom_data_the_data_folder_keeps_the_control_chat_and_approvals(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(40):
        async with world(tmp_path, core_profile="v6.4") as w:
            await w.setup_owner()
            chat = str((await connect_vendor(w))["chat"])
            await w.owner.say(f"/approve {chat} all")
            await w.owner.wait_message(lambda t: t.startswith("Approved for business Ridgeline"))
            custom = json.loads((tmp_path / "agent" / "custom.json").read_text())
            control = next(k for k, v in custom.items() if v["simplexMcp"].get("control"))
            assert custom[control]["simplexMcp"]["nextAction"] == 2
            assert custom[chat]["simplexMcp"]["approvedBy"] == "Alice"
            # the core keeps nothing of it
            core = w.network.core("my-agent")
            assert all(g.custom_data is None for g in core.db.groups.values())
            # (the probe asked once, of nobody: "/_set custom @…")
            assert not any(c.startswith("/_set custom #") for c in w.server.commands)

            server = await w.restart()
            assert not any(line.startswith("Agent control chat") for line in server.log.lines)
            # the standing approval still holds: action 2 is sent without a card
            async with anyio.create_task_group() as tg:
                call = start(tg, w, "send", {"chat": chat, "text": "And in blue?", "idle": 5})
                await server.seen.until(lambda: "Thanks!" in server.seen.received_texts(chat))
                await w.clock.advance(5)
                sent = await call.wait()
            assert (sent["action"], sent["status"]) == (2, "done")
            await w.owner.say(f"/revoke {chat}")
            await w.owner.wait_message(lambda t: t.startswith("Messages to business Ridgeline"))
            custom = json.loads((tmp_path / "agent" / "custom.json").read_text())
            assert chat not in custom


async def test_a_channel_is_joined_as_a_group_where_the_core_has_no_direct_off(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path, core_profile="v7.0") as w:
            await w.setup_owner()
            await w.post_to_channel("Spring collection is out.")
            async with anyio.create_task_group() as tg:
                call = start(tg, w, "connect", {"target": "#ridgeline.simplex", "idle": 5})
                card = await w.owner.wait_message(lambda t: "/'approve 1'" in t)
                assert text_of_item(card) == (
                    "I want to connect to channel Ridgeline News (#ridgeline.simplex), as myself.\n"
                    f"{CHANNEL_AS_MEMBER}\n"
                    "`New shoes first.`\n"
                    "/'approve 1' or /'reject 1'"
                )
                await approve_connect(w, 1, arrived="Spring collection is out.")
                result = await call.wait()
            assert result["connected"] is True
            # the agent's own (the probe's are of a user ID that nobody has)
            prepare = [c for c in w.server.commands if c.startswith("/_prepare group 1 ")]
            assert prepare and all("direct=" not in c and "domain=" not in c for c in prepare)


async def test_a_core_without_names_says_so_when_connect_names_one(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with world(tmp_path, core_profile="v6.4") as w:
            await w.setup_owner()
            result = await w.server.call("connect", {"target": "@directory.simplex"})
            assert result.is_error
            assert result_text(result) == (
                "The agent's chat core cannot look up SimpleX names such as "
                "@directory.simplex: connect with the link instead."
            )
            # the name was not sent to the core, which would not have parsed it
            assert not any(c.startswith("/_connect plan 1 @") for c in w.server.commands)
