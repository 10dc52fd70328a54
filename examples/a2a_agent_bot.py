"""An A2A agent bot: quotes for delivered goods, served over SimpleX to other agents.

The agent is an ordinary ``a2a-sdk`` ``AgentExecutor`` with its Agent Card; ResponderBot makes
it a SimpleX bot. In a conversation it serves every A2A method (``/_call a2a ...``), streaming
included; over Service RPC it serves one-shot tasks. Tasks are kept in the bot's data folder
(SQLite), so they survive a restart. The card it serves lists its SimpleX address; print it
with ``--print-card`` to publish it at ``/.well-known/agent-card.json``.

Run it against a SimpleX chat core (the CLI's WebSocket API)::

    simplex-chat -p 5225 &
    python examples/a2a_agent_bot.py --core ws://127.0.0.1:5225

against the simulated network served over WebSocket::

    simplex-sim serve --port 5226 &
    python examples/a2a_agent_bot.py --core ws://127.0.0.1:5226/quotes

or in this process alone, calling itself once over each transport::

    python examples/a2a_agent_bot.py --core sim:quotes --demo

Stop it with Ctrl-C.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentSkill, Role

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _demo

from simplex_protocols.bindings.a2a import build_send_message, is_final_message
from simplex_protocols.bot import ResponderBot

PRICES = {"anvil": 120.0, "rocket": 999.0, "magnet": 4.5}
DELIVERY = {"lisbon": 25.0, "porto": 30.0, "paris": 45.0}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10}


def quote(text: str) -> str:
    """A quote for a request such as "Price of two anvils delivered to Lisbon"."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    quantity = 1
    item = None
    for i, word in enumerate(words):
        name = word.rstrip("s")
        if name in PRICES:
            item = name
            before = words[i - 1] if i > 0 else ""
            quantity = int(before) if before.isdigit() else NUMBERS.get(before, 1)
    if item is None:
        return "I quote anvils, rockets and magnets."
    total = PRICES[item] * quantity
    line = f"{quantity} x {item}: {total:.2f} EUR"
    city = next((w for w in words if w in DELIVERY), None)
    if city is not None:
        line += f", delivery to {city.title()}: {DELIVERY[city]:.2f} EUR"
        total += DELIVERY[city]
    return f"{line}; total {total:.2f} EUR"


class QuoteAgent(AgentExecutor):
    """Answers each message with a quote, reporting its steps as status updates."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work(new_text_message("Checking prices", role=Role.ROLE_AGENT))
        answer = quote(context.get_user_input())
        await updater.add_artifact([new_text_part(answer)], name="quote")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def agent_card() -> AgentCard:
    """The public card; the bot adds its SimpleX interface."""
    return AgentCard(
        name="Acme quotes",
        description="Quotes for Acme products delivered to your city.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="quote",
                name="Quote",
                description="The price of a quantity of a product, delivered",
                tags=["prices", "delivery"],
                examples=["Price of two anvils delivered to Lisbon"],
            )
        ],
    )


def parse_args(argv: Sequence[str] | None = None) -> Any:
    p = _demo.parser(__doc__.split("\n\n")[0] if __doc__ else "", name="Acme quotes")
    p.add_argument(
        "--print-card",
        action="store_true",
        help="print the Agent Card (JSON, for /.well-known/agent-card.json) once serving",
    )
    args = p.parse_args(argv)
    _demo.check_demo(p, args)
    return args


def build_bot(args: Any) -> ResponderBot:
    return ResponderBot(
        display_name=args.display_name,
        a2a=QuoteAgent(),
        agent_card=agent_card(),
        peer_type="agent",
        description="Quotes for delivered Acme products, for agents (A2A).",
        data_dir=args.data_dir,
        log_contents=args.log_contents,
    )


async def demo(bot: ResponderBot) -> None:
    await _demo.demo(
        bot,
        protocol="a2a",
        rpc_request=build_send_message("Price of two anvils delivered to Lisbon", request_id=1),
        chat_request=build_send_message(
            "Price of 3 magnets delivered to Porto", request_id=2, streaming=True
        ),
        final=is_final_message,
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    bot = build_bot(args)

    async def ready(bot: ResponderBot) -> None:
        if args.print_card:
            print(json.dumps(bot.agent_card_json(), indent=2), flush=True)
        if args.demo:
            await demo(bot)

    bot.run(core=args.core, on_ready=ready)


if __name__ == "__main__":
    main()
