"""``simplex-sim serve --demo-bot USER``: the bot of ``simplex-call demo``, as a simulated user.

It is the same bot as the tour's, so that the commands of the README and the docs have
something real to call: "Acme Shop", serving an MCP tool server (``availability``, with
progress, and ``quote``) and an A2A agent (delivered prices, streamed in a conversation), on
both transports, with a contact address for people and agents. It runs in the server's process,
on the network's in-process backend, and stops with the server. It logs warnings and errors
only: the server often runs in the background of the terminal a user types the calls in.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from simplex_protocols.bot import ResponderBot

__all__ = ["demo_bot"]


def demo_bot(data_dir: Path) -> ResponderBot:
    """A new demo bot keeping its data (keys, A2A tasks) in ``data_dir``."""
    from simplex_protocols.bot import ResponderBot, configure_bot_logging

    # Before the MCP server is made: the SDK configures logging (at INFO, to standard error)
    # only when nothing is configured yet.
    configure_bot_logging(logging.WARNING)

    from ._call_demo import BOT_NAME, make_agent, make_tools

    return ResponderBot(
        display_name=BOT_NAME,
        description="Anvils and more",
        mcp=make_tools(),
        a2a=make_agent(),
        serves=["agent", "human"],
        data_dir=data_dir,
        shutdown_grace_s=1.0,
    )
