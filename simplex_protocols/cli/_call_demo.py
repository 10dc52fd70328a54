"""``simplex-call demo``: an offline tour over an in-process simulated network.

Everything runs in this process and on 127.0.0.1, with no setup and no internet:

1. a reference bot, "Acme Shop", starts on a simulated SimpleX network (seeded): it serves a
   small MCP tool server and an A2A agent through :class:`~simplex_protocols.bot.ResponderBot`,
   on both transports, and gets the SimpleX name ``@acme.simplex``;
2. a website on 127.0.0.1 publishes its address in llms.txt (and its Agent Card);
3. ``simplex-call`` commands run against them, each printed with its output: ``discover``, MCP
   ``tools/list`` and ``tools/call`` over signed Service RPC, the same call in a conversation
   with progress replies, an A2A one-shot task over Service RPC and a streamed task in the
   conversation.

The simulated network is a test double of SimpleX in this process, not SimpleX itself; the
same commands work against a real chat core with ``--core``.
"""

from __future__ import annotations

import argparse
import io
import logging
import shlex
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
from mcp.server.mcpserver import Context, MCPServer

from simplex_protocols._docs_url import doc_url

from ._call_args import ExitCode
from ._call_console import Console
from ._call_session import Environment
from ._call_site import LocalSite, Page

if TYPE_CHECKING:
    from a2a.server.agent_execution import AgentExecutor

__all__ = ["DEMO_STEPS", "make_agent", "make_tools", "run_demo"]

#: The whole demo must end within this many seconds (it takes about one).
DEMO_DEADLINE_S: Final = 60.0
BOT_NAME: Final = "Acme Shop"
SIMPLEX_NAME: Final = "acme.simplex"
CALLER: Final = "you"

#: The steps, as headings: what each shows.
DEMO_STEPS: Final = (
    "A bot starts",
    "A website publishes its address",
    "simplex-call finds the address and reads its declarations",
    "MCP over signed Service RPC: tools/list, then tools/call",
    "The same call in a conversation, with progress replies",
    "A2A: a one-shot task over Service RPC",
    "A2A: a streamed task in the conversation",
)


def make_tools() -> MCPServer[Any]:
    """The demo's MCP server: ``availability`` (with progress) and ``quote``."""
    tools: MCPServer[Any] = MCPServer(
        "acme", instructions="Stock and prices of Acme Shop.", subscriptions=False
    )

    @tools.tool(structured_output=False)
    async def availability(item: str, ctx: Context) -> str:
        """How many of an item are in stock."""
        await ctx.report_progress(1, 3, "checking the warehouse")
        await ctx.report_progress(2, 3, "checking the shop floor")
        await ctx.report_progress(3, 3, "counting")
        return f"12 {item}s are in stock."

    @tools.tool(structured_output=False)
    def quote(item: str, quantity: int = 1, city: str = "Lisbon") -> str:
        """The delivered price of an order."""
        total = 120 * quantity + 30
        return f"{quantity} {item}(s) delivered to {city}: EUR {total}."

    return tools


def make_agent() -> AgentExecutor:
    """The demo's A2A agent: it quotes delivered prices, reporting its work as it goes."""
    from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.tasks import TaskUpdater
    from a2a.types.a2a_pb2 import Role

    class QuoteAgent(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.message is not None
            text = context.get_user_input()
            task = context.current_task
            if task is None:
                task = new_task_from_user_message(context.message)
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.start_work(new_text_message("Looking up prices", role=Role.ROLE_AGENT))
            quote = f"Quote for “{text}”: 2 anvils at EUR 120, delivery EUR 30, total EUR 270."
            await updater.add_artifact([new_text_part(quote)], name="quote")
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.task_id and context.context_id
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

    return QuoteAgent()


def _agent_card() -> Any:
    from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentSkill

    return AgentCard(
        name="Acme quotes",
        description="Delivered prices of Acme Shop's goods.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(id="quote", name="Quote", description="Delivered prices", tags=["shop"])
        ],
    )


class _QuietLogs:
    """Keeps the SDKs' and the bot's log lines out of the tour (restored afterwards)."""

    def __enter__(self) -> None:
        self.handler = logging.NullHandler()
        self.root = logging.getLogger()
        self.root.addHandler(self.handler)
        self.levels: dict[str, int] = {}
        for name in ("simplex_protocols", "mcp", "a2a", "httpx", "sqlalchemy", "aiosqlite"):
            logger = logging.getLogger(name)
            self.levels[name] = logger.level
            logger.setLevel(logging.ERROR)

    def __exit__(self, *exc: object) -> None:
        self.root.removeHandler(self.handler)
        for name, level in self.levels.items():
            logging.getLogger(name).setLevel(level)


async def run_demo(options: argparse.Namespace, console: Console, env: Environment) -> int:
    """Run the tour; every step must work, or the demo stops with that step's exit status."""
    with _QuietLogs(), tempfile.TemporaryDirectory(prefix="simplex-call-demo-") as tmp:
        with anyio.fail_after(DEMO_DEADLINE_S):
            return await _tour(options.seed, console, Path(tmp))


async def _tour(seed: int, console: Console, tmp: Path) -> int:
    from simplex_protocols.bot import ResponderBot
    from simplex_protocols.sim import SimNetwork

    say = console.line
    network = SimNetwork(seed=seed)
    environ = {"XDG_CONFIG_HOME": str(tmp / "config"), "HOME": str(tmp)}
    env = Environment(environ=environ, network=network)
    core = ["--core", f"sim:{CALLER}", "--no-progress"]
    network.add_user(CALLER, display_name="you", peer_type="agent")
    say("simplex-call demo: a tour over a simulated SimpleX network in this process")
    say("(a test double of SimpleX, seeded: no setup, no internet; the same commands work")
    say("against a real chat core with --core)")
    bot = ResponderBot(
        display_name=BOT_NAME,
        description="Anvils and more",
        mcp=make_tools(),
        a2a=make_agent(),
        agent_card=_agent_card(),
        serves=["agent", "human"],
        data_dir=tmp / "bot",
        shutdown_grace_s=1.0,
    )
    async with bot.serving(network.backend("acme")):
        network.register_name(SIMPLEX_NAME, network.user("acme"))
        address = bot.address
        _heading(console, 1)
        say(f"{BOT_NAME} serves, over Service RPC and in conversations:")
        for name, decl in bot.declarations.items():
            say(f"  {name} {', '.join(decl.versions)}")
        say(f"  address  {address}")
        say(f"  name     @{SIMPLEX_NAME}")
        llms = (
            "# Acme Shop\n\n> Anvils and more.\n\n## Communications\n\n"
            f"- [Ask Acme]({address}): SimpleX contact for people and agents, MCP, A2A. "
            "Stock, prices and quotes.\n"
        )
        card = bot.agent_card_json()
        from simplex_protocols._wire import dumps

        home = (
            "<!doctype html><html><head><title>Acme Shop</title>"
            f'<link rel="me" href="{address}"></head><body>Anvils and more.</body></html>'
        )
        pages = {
            "/": Page(home, headers=(("Content-Type", "text/html; charset=utf-8"),)),
            "/llms.txt": Page(llms, headers=(("Content-Type", "text/plain; charset=utf-8"),)),
            "/.well-known/agent-card.json": Page(
                dumps(card), headers=(("Content-Type", "application/json"),)
            ),
        }
        with LocalSite(pages) as site:
            _heading(console, 2)
            say(f"{site.url}/llms.txt:")
            for line in llms.splitlines():
                say(f"  {line}" if line else "")
            say('and in its home page\'s <link rel="me">, and its Agent Card at')
            say(f"{site.url}/.well-known/agent-card.json")
            steps: list[tuple[int | None, list[str]]] = [
                (3, ["discover", site.url, *core]),
                (4, [site.url, "tools/list", "--sign", *core]),
                (None, [site.url, "tool", "availability", "item=anvil", "--sign", *core]),
                (
                    5,
                    [
                        f"@{SIMPLEX_NAME}",
                        "tool",
                        "availability",
                        "item=anvil",
                        "--transport",
                        "chat",
                        *core,
                    ],
                ),
                (
                    6,
                    [
                        f"@{SIMPLEX_NAME}",
                        "SendMessage",
                        "text=Price of two anvils delivered to Lisbon",
                        *core,
                    ],
                ),
                (
                    7,
                    [
                        f"@{SIMPLEX_NAME}",
                        "SendStreamingMessage",
                        "text=Price of two anvils delivered to Lisbon",
                        *core,
                    ],
                ),
            ]
            for heading, argv in steps:
                if heading is not None:
                    _heading(console, heading)
                status = await _command(console, env, argv)
                if status != 0:
                    console.error(f"the demo step `{_shown(argv)}` ended with status {status}")
                    return status
    say("")
    say(f"Every step worked. Next: `simplex-call --help`, and {doc_url('docs/simplex-call.md')}")
    return int(ExitCode.OK)


def _heading(console: Console, number: int) -> None:
    console.line("")
    console.line(f"{number}. {DEMO_STEPS[number - 1]}")


def _shown(argv: Sequence[str]) -> str:
    shown = [a for a in argv if a not in ("--no-progress",)]
    if "--core" in shown:
        at = shown.index("--core")
        del shown[at : at + 2]
    return "simplex-call " + " ".join(shlex.quote(a) for a in shown)


async def _command(console: Console, env: Environment, argv: list[str]) -> int:
    from .call import run

    console.line(f"$ {_shown(argv)}")
    out, err = io.StringIO(), io.StringIO()
    status = await run(argv, network=env.network, stdout=out, stderr=err, environ=env.environ)
    for line in out.getvalue().splitlines():
        console.line(f"  {line}" if line else "")
    for line in err.getvalue().splitlines():
        console.line(f"  {line}")
    return status
