"""The configuration of ``simplex-mcp``: the options of its commands and of the agent.

:mod:`simplex_protocols.mcp_server.cli` parses the command line into these types; the server's modules read them
and never import the parser.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from simplex_protocols import __version__
from simplex_protocols.errors import SimplexError

__all__ = [
    "DEFAULT_CORE",
    "DEFAULT_EXPIRE_HOURS",
    "DEFAULT_PORT",
    "MAX_EXPIRE_HOURS",
    "VERSION",
    "AgentConfig",
    "ApproveMode",
    "OwnerEntry",
    "RegisterOptions",
    "ServeOptions",
    "UsageError",
]

#: The distribution's version, from its one home (``simplex_protocols.__version__``, which the
#: build reads too).
VERSION: Final = __version__

DEFAULT_PORT: Final = 5226
DEFAULT_EXPIRE_HOURS: Final = 23
MAX_EXPIRE_HOURS: Final = 23
DEFAULT_CORE: Final = "lib"


class UsageError(SimplexError, ValueError):
    """The command line is not acceptable; the process exits with code 2 and :attr:`message`."""

    code = "usage"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ApproveMode(enum.StrEnum):
    """``--approve``: who approves the agent's actions."""

    REQUESTS = "requests"
    HOST = "host"


@dataclass(frozen=True, slots=True)
class OwnerEntry:
    """One ``ID:NAME`` of ``--owners``: a member of the agent control chat."""

    member_id: int
    name: str

    def __str__(self) -> str:
        return f"{self.member_id}:{self.name}"


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """The options of ``simplex-mcp serve NAME``.

    ``owners`` is ``None`` without ``--owners``, an empty tuple for ``--owners`` without a list,
    and the entries of the list otherwise.
    """

    name: str
    data: Path
    data_given: bool = False
    display_name: str | None = None
    approve: ApproveMode = ApproveMode.REQUESTS
    owners: tuple[OwnerEntry, ...] | None = None
    expire_hours: int = DEFAULT_EXPIRE_HOURS
    reset_owners: bool = False
    new_token: bool = False
    port: int = DEFAULT_PORT
    qr_code: Literal["small", "large"] = "small"
    core: str = DEFAULT_CORE
    #: ``--durable-actions``: actions kept in ``DIR/actions.db`` across stops, crashes and
    #: restarts (not the plan's, which cancels them at a stop).
    durable_actions: bool = False
    #: ``--stdio``: MCP over standard input and output instead of HTTP, for hosts that start
    #: the server as a child process (not the plan's); no port and no token.
    stdio: bool = False
    #: ``--call-tool``: the sixth tool, ``call``, which calls other bots' MCP and A2A methods
    #: (not the plan's).
    call_tool: bool = False


@dataclass(frozen=True, slots=True)
class RegisterOptions:
    """The options of ``simplex-mcp register NAME``."""

    name: str
    data: Path
    data_given: bool = False
    scope: Literal["user", "local"] = "user"
    #: ``--host`` (not the plan's, which registers in Claude Code only).
    host: str = "claude-code"
    #: ``--dry-run``: print the change instead of making it.
    dry_run: bool = False


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """The options the agent's processing depends on."""

    name: str
    display: str
    mode: ApproveMode = ApproveMode.REQUESTS
    owners: tuple[OwnerEntry, ...] | None = None
    expire_hours: int = 23
    register_hint: str = ""
    qr_code: str = "small"
    durable_actions: bool = False
    #: ``--call-tool``: the folder of the per-bot Service RPC signing keys (``DIR/keys``), or
    #: ``None`` without the tool.
    call_keys: Path | None = None

    @property
    def call_tool(self) -> bool:
        """``--call-tool``: the ``call`` tool is served."""
        return self.call_keys is not None
