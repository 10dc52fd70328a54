"""What the examples share: their command-line options, and ``--demo`` on the simulated network.

With ``--core sim:NAME --demo`` an example bot starts on the in-process simulated network, a
simulated user connects to it, calls it once over Service RPC and once in a conversation,
prints both answers, and the bot stops. It shows the whole path without any setup.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from simplex_protocols.bot import ResponderBot
from simplex_protocols.core import (
    ChatAPI,
    ChatCore,
    ContactRef,
    CoreKind,
    CoreOption,
    add_core_argument,
)
from simplex_protocols.transports import ChatCaller, ServiceRPCRequester

#: The rule that says when an answer in a conversation has ended: (request, message) -> bool.
Final = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]


def parser(description: str, *, name: str) -> argparse.ArgumentParser:
    """The options every example takes."""
    p = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_core_argument(p)
    p.add_argument("--display-name", default=name, help=f"the bot's display name ({name})")
    p.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="the bot's private data folder (default: ~/.local/state/simplex-bot/NAME)",
    )
    p.add_argument(
        "--log-contents",
        action="store_true",
        help="also log requests and answers (for debugging: they are the callers' data)",
    )
    p.add_argument(
        "--demo",
        action="store_true",
        help="with --core sim:NAME: call the bot once over each transport, print, and stop",
    )
    return p


def check_demo(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    core: CoreOption | None = args.core
    if args.demo and (core is None or core.kind is not CoreKind.SIMULATOR):
        p.error("--demo needs --core sim:NAME (the in-process simulated network)")


def show(label: str, message: Any) -> None:
    print(f"{label}: {json.dumps(message, ensure_ascii=False)}", flush=True)


async def demo(
    bot: ResponderBot,
    *,
    protocol: str,
    rpc_request: Mapping[str, Any],
    chat_request: Mapping[str, Any],
    final: Final,
    caller: str = "demo-caller",
) -> None:
    """Call ``bot`` from a simulated user over both transports, print, then stop the bot."""
    from simplex_protocols.sim import default_network

    network = default_network()
    user = network.add_user(caller) if not network.has_core(caller) else network.user(caller)
    print(f"{bot.display_name} is at {bot.address}", flush=True)
    try:
        async with ChatCore(network.backend(caller)) as core:
            requester = ServiceRPCRequester(core, user_id=user.user_id)
            show("Service RPC request", rpc_request)
            show(
                "Service RPC response", await requester.request(bot.address, protocol, rpc_request)
            )
            async with core.events() as events:
                await ChatAPI(core).connect(user.user_id, bot.address)
                async for event in events:
                    if event.get("type") == "contactConnected":
                        contact = int(event["contact"]["contactId"])
                        break
            result = await ChatCaller(core).call(
                ContactRef(contact),
                protocol,
                chat_request,
                final=functools.partial(final, chat_request),
            )
            show(f"/_call {protocol}", chat_request)
            for reply in result.replies:
                show("reply", reply.message if reply.message is not None else reply.text)
    finally:
        await bot.shutdown()


def run_example(
    bot: ResponderBot,
    args: argparse.Namespace,
    on_demo: Callable[[ResponderBot], Awaitable[None]] | None,
) -> None:
    """Run the bot until Ctrl-C, or through the demo with ``--demo``."""
    bot.run(core=args.core, on_ready=on_demo if args.demo else None)
