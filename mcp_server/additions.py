"""What the server offers beyond the plan's five tools, registered on the SDK's low-level server.

They only add (docs/mcp_server.md "Beyond the plan"), so they are always on:

==========================  =================================================================
capability                  requests, and the module that serves them
==========================  =================================================================
resources (subscribe,       resources/list, resources/templates/list, resources/read,
listChanged at 2026-07-28)  subscriptions/listen, resources/subscribe, resources/unsubscribe:
                            :mod:`simplex_protocols.mcp_server.resources`
completions                 completion/complete: :mod:`simplex_protocols.mcp_server.completion`
logging                     logging/setLevel, and each request's ``_meta`` level:
                            :mod:`simplex_protocols.mcp_server.mcp_logging`
cache hints                 ``ttlMs`` and ``cacheScope`` of the list results (below)
==========================  =================================================================

The SDK derives the capabilities of ``initialize`` and ``server/discover`` from the handlers
registered here.
"""

from __future__ import annotations

from typing import Any, Final

import mcp_types as types
from mcp.server.caching import CacheHint, validate_cache_hints
from mcp.server.lowlevel.server import Server

from .agent import Agent
from .completion import Completer
from .log import Log
from .mcp_logging import NotificationRelay, RelayLog, RelayMiddleware
from .resources import ChatResources, ChatWatch

__all__ = ["CACHE_HINTS", "install_additions"]

#: The cache hints of the list results (SnowLuma MCP's: private where the agent's state shows,
#: none for what changes with every message). The tools and templates are fixed for a run.
CACHE_HINTS: Final = {
    "tools/list": CacheHint(ttl_ms=300_000, scope="private"),
    "resources/templates/list": CacheHint(ttl_ms=300_000, scope="public"),
    "resources/list": CacheHint(ttl_ms=0, scope="private"),
    "resources/read": CacheHint(ttl_ms=0, scope="private"),
}


def _relay_of(log: Log) -> NotificationRelay | None:
    """The relay of a log that relays already (another server built for the same agent):
    one relay, so no line goes to a client twice. Wrapping logs keep theirs as ``inner``."""
    inner: object = log
    while isinstance(inner, Log):
        if isinstance(inner, RelayLog):
            return inner.relay
        inner = getattr(inner, "inner", None)
    return None


def install_additions(server: Server[Any], agent: Agent) -> None:
    """Register the resources, completion and logging handlers and the cache hints on
    ``server``; relay ``agent``'s log lines and follow its events for subscriptions."""
    state = agent.state
    relay = _relay_of(state.log)
    if relay is None:
        relay = NotificationRelay()
        state.log = RelayLog(state.log, relay)
    server.middleware.append(RelayMiddleware(relay))
    resources = ChatResources(state, agent.chats, agent.read_tools)
    watch = ChatWatch(state, relay)
    agent.events.observers.append(watch.on_event)
    completer = Completer(state, agent.read_tools)
    handlers: list[tuple[str, type[Any], Any]] = [
        ("resources/list", types.PaginatedRequestParams, resources.list_resources),
        ("resources/templates/list", types.PaginatedRequestParams, resources.list_templates),
        ("resources/read", types.ReadResourceRequestParams, resources.read_resource),
        ("subscriptions/listen", types.SubscriptionsListenRequestParams, watch.listen),
        ("resources/subscribe", types.SubscribeRequestParams, watch.subscribe),
        ("resources/unsubscribe", types.UnsubscribeRequestParams, watch.unsubscribe),
        ("completion/complete", types.CompleteRequestParams, completer.complete),
        ("logging/setLevel", types.SetLevelRequestParams, relay.set_level),
    ]
    for method, params_type, handler in handlers:
        server.add_request_handler(method, params_type, handler)
    server.cache_hints.update(validate_cache_hints(CACHE_HINTS))
