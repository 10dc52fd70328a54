"""Test kit for ResponderBot: a simulated network on a manual clock, callers, and small SDK
servers and agents whose behaviour the tests control.

- ``World``: :class:`simplex_protocols.sim.testing.World` (a seeded network on a manual clock,
  a task group, and the simulated users of a test).
- ``Caller``: one of its scripted users, which connects to a bot's address and calls it
  through the transports' caller side (``ChatCaller``, ``ServiceRPCRequester``).
- ``make_tools()``: an ``MCPServer`` with an ``availability`` tool, a ``whoami`` tool that reads
  the caller from the request context, and a ``wait`` tool that blocks on a test's gate.
- ``EchoAgent``: an ``a2a-sdk`` ``AgentExecutor`` that echoes, or waits on a gate first.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import anyio
import anyio.abc
from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentSkill, Role
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel

from simplex_protocols.bindings.mcp import caller_of
from simplex_protocols.core import ChatCore, ContactRef
from simplex_protocols.core import commands as cmds
from simplex_protocols.sim import testing
from simplex_protocols.sim.testing import ScriptedUser
from simplex_protocols.transports import ChatCaller, ServiceRPCRequester

JSON = dict[str, Any]

#: Every wait in the tests is bounded by this many real seconds.
WAIT_S = 10.0

#: MCP revision the SDK serves per request.
REVISION = "2026-07-28"


class Gates:
    """Named events a tool or an agent waits on, and events saying it started waiting."""

    def __init__(self) -> None:
        self.opened: dict[str, anyio.Event] = {}
        self.reached: dict[str, anyio.Event] = {}

    def gate(self, key: str) -> anyio.Event:
        return self.opened.setdefault(key, anyio.Event())

    def arrived(self, key: str) -> anyio.Event:
        return self.reached.setdefault(key, anyio.Event())

    async def wait(self, key: str) -> None:
        self.arrived(key).set()
        await self.gate(key).wait()


class Confirm(BaseModel):
    confirm: bool


async def ask_confirm(item: str) -> Elicit[Confirm]:
    return Elicit(f"Reserve one {item}?", Confirm)


def make_tools(gates: Gates | None = None) -> MCPServer[Any]:
    """An MCP server as a bot author writes one."""
    tools: MCPServer[Any] = MCPServer("acme", subscriptions=False)
    gates = gates if gates is not None else Gates()

    @tools.tool(structured_output=False)
    def availability(item: str) -> str:
        """Items in stock."""
        return f"12 {item}s are in stock."

    @tools.tool(structured_output=False)
    def whoami(ctx: Context) -> str:
        """The caller key SimpleX gave this request."""
        caller = caller_of(ctx)
        return "nobody" if caller is None else caller.key

    @tools.tool(structured_output=False)
    async def wait(key: str) -> str:
        """Wait until the test opens the gate ``key``."""
        await gates.wait(key)
        return f"opened {key}"

    @tools.tool(structured_output=False)
    async def reserve(item: str, answer: Annotated[Confirm, Resolve(ask_confirm)]) -> str:
        """Reserve an item, once the caller confirms (a multi-round-trip result)."""
        return f"Reserved one {item}." if answer.confirm else "Nothing reserved."

    return tools


def tool_call(name: str, arguments: Mapping[str, Any], rid: int | str = 1, **params: Any) -> JSON:
    """A tools/call request of revision 2026-07-28 (``params`` added to its params)."""
    capabilities = {"elicitation": {"form": {}}}
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": dict(arguments),
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": REVISION,
                "io.modelcontextprotocol/clientCapabilities": capabilities,
            },
        },
    }


def confirmed_reserve(first: Any, rid: int | str = 2) -> JSON:
    """The follow-up of a ``reserve`` call that asked for confirmation (``first``, the answer
    with ``resultType`` ``input_required``): the same call, confirmed, with its
    ``requestState``."""
    assert isinstance(first, dict), first
    result = first["result"]
    assert result["resultType"] == "input_required", result
    [question] = result["inputRequests"]
    return tool_call(
        "reserve",
        {"item": "anvil"},
        rid=rid,
        inputResponses={question: {"action": "accept", "content": {"confirm": True}}},
        requestState=result["requestState"],
    )


def tools_list(rid: int | str = 1) -> JSON:
    """A tools/list request of revision 2026-07-28."""
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": REVISION,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }


def tool_text(response: Mapping[str, Any]) -> str:
    """The text of a tools/call result."""
    return str(response["result"]["content"][0]["text"])


class EchoAgent(AgentExecutor):
    """Echoes the user's text as an artifact. ``wait:<key> ...`` first waits on a gate."""

    def __init__(self, gates: Gates | None = None) -> None:
        self.gates = gates if gates is not None else Gates()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = context.get_user_input()
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work(new_text_message("working", role=Role.ROLE_AGENT))
        if text.startswith("wait:"):
            await self.gates.wait(text.split()[0][len("wait:") :])
        await updater.add_artifact([new_text_part(f"echo: {text}")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def echo_card() -> AgentCard:
    return AgentCard(
        name="Acme echo",
        description="Echoes what you send.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes text", tags=["demo"])],
    )


class Caller(ScriptedUser):
    """A simulated user on its own core that calls bots."""

    def __init__(self, world: testing.World, name: str, core: ChatCore) -> None:
        super().__init__(world, name, core)
        self.contacts: dict[str, int] = {}

    @functools.cached_property
    def chat(self) -> ChatCaller:
        return ChatCaller(self.core, clock=self.world.clock, default_wait_s=30)

    @functools.cached_property
    def rpc(self) -> ServiceRPCRequester:
        return ServiceRPCRequester(self.core, user_id=self.user_id, clock=self.world.clock)

    async def connect(self, address: str) -> ContactRef:
        """Connect to a bot's address (auto-accepted) and wait until the contact is ready."""
        if address in self.contacts:
            return ContactRef(self.contacts[address])
        since = len(self.events)
        with anyio.fail_after(WAIT_S):
            await self.api.connect(self.user_id, address)
        event = await self.first_event("contactConnected", since=since)
        contact_id = int(event["contact"]["contactId"])
        self.contacts[address] = contact_id
        return ContactRef(contact_id)

    async def plan(self, address: str) -> JSON:
        """What ``/_connect plan`` shows of the address, without connecting."""
        return await self.cmd(cmds.connect_plan(self.user_id, address))


class World(testing.World):
    """A seeded network on a manual clock, a task group, and the callers of a test."""

    user_class = Caller

    def __init__(self, seed: int = 7) -> None:
        super().__init__(seed, wait_s=WAIT_S)

    @property
    def tg(self) -> anyio.abc.TaskGroup:
        return self.task_group

    async def caller(self, name: str) -> Caller:
        """A new caller. Make callers outside a bot's ``serving`` block: their cores live as
        long as the world."""
        user = await self.user(name)
        assert isinstance(user, Caller)
        return user


def data_dir(tmp_path: Path, name: str = "bot") -> Path:
    return tmp_path / name
