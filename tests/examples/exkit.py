"""Test kit for the examples: load an example as a module, give ``--core sim:NAME`` a fresh
simulated network, and call a bot from a simulated user."""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

import simplex_protocols.sim._network as sim_network
from simplex_protocols.core import ChatCore, ContactRef
from simplex_protocols.sim import SimNetwork
from simplex_protocols.transports import ChatCaller, ChatCallResult, ServiceRPCRequester

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
STDIO_SERVER = Path(__file__).resolve().parent / "stdio_server.py"

#: Every wait is bounded by this many real seconds (the stdio bridge starts a process).
WAIT_S = 30.0


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` as a module."""
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@contextmanager
def fresh_default_network(seed: int = 3) -> Iterator[SimNetwork]:
    """The network ``--core sim:NAME`` resolves to, fresh for one test."""
    network = SimNetwork(seed=seed)
    saved = sim_network._default
    sim_network._default = network
    try:
        yield network
    finally:
        sim_network._default = saved


class Caller:
    """A simulated user that calls a bot over both transports."""

    def __init__(self, network: SimNetwork, name: str, stack: AsyncExitStack) -> None:
        self.network = network
        self.name = name
        self.stack = stack
        self.user = network.add_user(name)
        self.core: ChatCore | None = None
        self.contact: ContactRef | None = None

    async def open(self) -> Caller:
        self.core = await self.stack.enter_async_context(ChatCore(self.network.backend(self.name)))
        return self

    async def rpc(self, address: str, protocol: str, request: Mapping[str, Any]) -> Any:
        assert self.core is not None
        with anyio.fail_after(WAIT_S):
            return await ServiceRPCRequester(self.core, user_id=self.user.user_id).request(
                address, protocol, dict(request)
            )

    async def chat(
        self,
        address: str,
        protocol: str,
        request: Mapping[str, Any],
        final: Callable[[Mapping[str, Any], Mapping[str, Any]], bool],
    ) -> ChatCallResult:
        assert self.core is not None
        with anyio.fail_after(WAIT_S):
            if self.contact is None:
                async with self.core.events() as events:
                    await self.core.command(f"/_connect {self.user.user_id} {address}")
                    async for event in events:
                        if event.get("type") == "contactConnected":
                            self.contact = ContactRef(int(event["contact"]["contactId"]))
                            break
            assert self.contact is not None
            return await ChatCaller(self.core).call(
                self.contact, protocol, request, final=functools.partial(final, request)
            )
