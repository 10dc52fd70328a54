"""DECL-PROTO-15: a group member may serve a protocol without declaring it.

The core removes preferences from member profiles in groups, so a bot that declares a protocol
in its own profile shows no declaration as a member; a caller must not read that as "not
served". The simulated network strips member preferences as the core does, and ChatCaller
calls the member all the same.
"""

from __future__ import annotations

import anyio
import pytest
from transkit import WAIT_S, EchoBinding, Net, rpc_request

from simplex_protocols.core import GroupRef
from simplex_protocols.transports import ChatCaller, ChatResponder

pytestmark = pytest.mark.anyio


@pytest.mark.requirement("DECL-PROTO-15")
async def test_a_member_without_a_visible_declaration_is_called_and_answers() -> None:
    async with Net() as net:
        alice = await net.peer("alice", peer_type="agent")
        shop = await net.bot("shop", display_name="Shop Bot")
        own = (await shop.api.active_user()) or {}
        assert "protocols" in own["profile"]["preferences"]  # it declares echo itself
        gids = await net.group(alice, [shop])
        binding = EchoBinding(clock=net.clock)
        await net.start(ChatResponder(shop.core, [binding], clock=net.clock).serve)
        members = await alice.api.list_members(gids["alice"])
        (member,) = [m for m in members if m["memberProfile"]["displayName"] == "Shop Bot"]
        # in the group the core shows the member without preferences: no declaration
        assert "protocols" not in member["memberProfile"].get("preferences", {})
        with anyio.fail_after(WAIT_S):
            result = await ChatCaller(alice.core, clock=net.clock).call(
                GroupRef(gids["alice"]),
                "echo",
                rpc_request(1),
                member_name="Shop Bot",
                final=binding,
            )
        assert result.response == {"jsonrpc": "2.0", "id": 1, "result": {"echo": {}}}
