"""``simplex-bridge --demo``: call the bridge once over each transport, print, and stop.

On the in-process simulated network a simulated user lists the upstream server's tools over
Service RPC, following ``nextCursor`` through every page (the binding pages a list so each
answer fits the transport, whatever the server's own page size), then asks
``server/discover`` in a conversation. Each request and answer is one line of JSON.
"""

from __future__ import annotations

import functools
from typing import Any, TextIO

from simplex_protocols._wire import dumps
from simplex_protocols.bindings.mcp import build_request, is_final
from simplex_protocols.bot import ResponderBot
from simplex_protocols.core import ChatAPI, ChatCore, ContactRef
from simplex_protocols.sim import SimNetwork
from simplex_protocols.transports import ChatCaller, ServiceRPCRequester

__all__ = ["run_demo"]

_CALLER = "bridge-demo-caller"


def _show(out: TextIO, label: str, message: Any) -> None:
    out.write(f"{label}: {dumps(message)}\n")
    out.flush()


async def run_demo(bot: ResponderBot, network: SimNetwork, out: TextIO) -> None:
    """Call ``bot`` from a simulated user of ``network`` over both transports, then stop it."""
    user = network.user(_CALLER) if network.has_core(_CALLER) else network.add_user(_CALLER)
    out.write(f"{bot.display_name} is at {bot.address}\n")
    try:
        async with ChatCore(network.backend(_CALLER)) as core:
            requester = ServiceRPCRequester(core, user_id=user.user_id)
            cursor: str | None = None
            page = 0
            while True:
                page += 1
                params = {"cursor": cursor} if cursor is not None else None
                request = build_request("tools/list", params, request_id=page)
                _show(out, "Service RPC request", request)
                response = await requester.request(bot.address, "mcp", request)
                _show(out, "Service RPC response", response)
                result = response.get("result") if isinstance(response, dict) else None
                cursor = result.get("nextCursor") if isinstance(result, dict) else None
                if not isinstance(cursor, str):
                    break
            async with core.events() as events:
                await ChatAPI(core).connect(user.user_id, bot.address)
                contact: ContactRef | None = None
                async for event in events:
                    if event.get("type") == "contactConnected":
                        contact = ContactRef(int(event["contact"]["contactId"]))
                        break
            assert contact is not None
            discover = build_request("server/discover", request_id=page + 1)
            answer = await ChatCaller(core).call(
                contact, "mcp", discover, final=functools.partial(is_final, discover)
            )
            _show(out, "/_call mcp", discover)
            for reply in answer.replies:
                _show(out, "reply", reply.message if reply.message is not None else reply.text)
    finally:
        await bot.shutdown()
