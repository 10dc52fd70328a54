"""ResponderBot: serve an MCP server and/or an A2A agent over SimpleX, in a few lines.

:class:`ResponderBot` creates or reuses the bot's SimpleX profile, declares what it serves
(the ``protocols`` preference), creates or reuses its contact address (ratchet keys, link data
with ``serves``, auto-accept), starts the core with service requests on, and answers calls on
both transports of "Agent protocols over SimpleX" through the MCP and A2A bindings::

    from mcp.server.mcpserver import MCPServer
    from simplex_protocols.bot import ResponderBot

    tools = MCPServer("acme")

    @tools.tool()
    def availability(item: str) -> str:
        return f"12 {item}s are in stock."

    ResponderBot(display_name="Acme", mcp=tools).run(core="ws://127.0.0.1:5225")

For offline tests on the simulated network use :meth:`ResponderBot.serving`. See
``docs/bot.md``.
"""

from __future__ import annotations

from simplex_protocols._exports import publish

from ._bot import CoreSpec as CoreSpec
from ._bot import OnReady as OnReady
from ._bot import ResponderBot as ResponderBot
from ._bot import configure_bot_logging as configure_bot_logging
from ._logging import BOT_LOGGER as BOT_LOGGER
from ._logging import CALLS_LOGGER as CALLS_LOGGER
from ._logging import CONTENTS_LOGGER as CONTENTS_LOGGER

__all__ = [
    "BOT_LOGGER",
    "CALLS_LOGGER",
    "CONTENTS_LOGGER",
    "CoreSpec",
    "OnReady",
    "ResponderBot",
    "configure_bot_logging",
]

publish(globals(), __all__)
