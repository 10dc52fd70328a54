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

import sys
import types
from typing import TYPE_CHECKING, Any

from simplex_protocols._exports import lazy_exports, publish

from .cli import main as main
from .cli import parse_args as parse_args
from .config import VERSION as VERSION
from .config import ApproveMode as ApproveMode
from .config import OwnerEntry as OwnerEntry
from .config import RegisterOptions as RegisterOptions
from .config import ServeOptions as ServeOptions
from .config import UsageError as UsageError

if TYPE_CHECKING:
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

#: Each name is loaded from its submodule on first use (``lazy_exports``), so that a program
#: importing one light part of this package (an option parser) does not load the rest:
#: ``simplex-mcp --help`` loads neither the MCP SDK nor the web server.
__getattr__ = lazy_exports(
    globals(),
    {
        "ServerInfo": ".serve",
        "serve": ".serve",
    },
)


class _Package(types.ModuleType):
    """This package, whose ``serve`` stays the function when the ``serve`` module is imported.

    Importing the submodule ``simplex_protocols.mcp_server.serve`` binds it as the package's attribute ``serve``;
    an eager ``from .serve import serve`` used to replace it at once, and a lazy export must do
    the same whenever the submodule is imported, by whichever importer comes first.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "serve" and isinstance(value, types.ModuleType):
            value = value.serve
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
