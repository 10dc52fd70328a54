"""The bundled MCP server, ``simplex-mcp``: an AI agent acts in SimpleX chats, its owner approves.

``simplex-mcp serve NAME`` runs one agent: one SimpleX profile (peer type agent), one data
folder, one port. It serves MCP over Streamable HTTP at ``http://127.0.0.1:PORT/mcp`` with
five tools (``connect``, ``send``, ``receive``, ``list``, ``leave``); the agent's connects,
sends and leaves are actions that the owner approves in the agent control chat, a SimpleX
group the owner joins by the link the server prints. See ``docs/mcp_server.md``.

Public names:

- :func:`main`: the console script.
- :func:`parse_args`: the command line, as :class:`ServeOptions` or :class:`RegisterOptions`
  (:class:`UsageError`, exit code 2, for rejected arguments).
- :func:`serve`: run the server in the current event loop, with an injectable chat core,
  clock, log and random source (tests and embedding code); :class:`ServerInfo` is what it
  reports once it listens.
"""

from __future__ import annotations

from simplex_protocols._exports import publish

from .cli import main as main
from .cli import parse_args as parse_args
from .config import VERSION as VERSION
from .config import ApproveMode as ApproveMode
from .config import OwnerEntry as OwnerEntry
from .config import RegisterOptions as RegisterOptions
from .config import ServeOptions as ServeOptions
from .config import UsageError as UsageError
from .serve import ServerInfo as ServerInfo
from .serve import serve as serve

__all__ = [
    "VERSION",
    "ApproveMode",
    "OwnerEntry",
    "RegisterOptions",
    "ServeOptions",
    "ServerInfo",
    "UsageError",
    "main",
    "parse_args",
    "serve",
]

publish(globals(), __all__)
