"""``completion/complete``: chat references, IDs and SimpleX names from the agent's chats.

MCP completes the arguments of prompts and resource templates; it has no reference to a tool.
This server has no prompts, so a ``ref/prompt`` naming one of its tools completes that tool's
argument (a deviation the docs list):

=====================================  ================================================
reference, argument                    values
=====================================  ================================================
``ref/prompt`` send, receive or leave  the chats' references (``@3``, ``#5``) that
with ``chat``                          start with the value, or whose name or SimpleX
                                       name does
``ref/prompt`` connect, ``target``     the SimpleX names of the agent's chats, and the
                                       targets of this run's connect actions, that start
                                       with the value
``ref/resource`` contact template,     the contacts' IDs that start with the value
``contact``
``ref/resource`` group template,       the groups' (business chats', channels') IDs
``group``
anything else                          no values
=====================================  ================================================

Matching ignores case; values come in ``list`` order (most recent chat first), at most 100,
with ``total`` and ``hasMore``. The control chat is never offered (``list`` never shows it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext

from .actions import ActionTool
from .resources import CONTACT_TEMPLATE, GROUP_TEMPLATE
from .state import AgentState, NoProgress
from .tools_read import ReadTools

__all__ = ["MAX_COMPLETION_VALUES", "Completer"]

#: The most values a completion returns (the spec's limit).
MAX_COMPLETION_VALUES: Final = 100
_CHAT_TOOLS: Final = frozenset({"send", "receive", "leave"})


def _completion(candidates: Iterable[str]) -> types.CompleteResult:
    values = list(dict.fromkeys(candidates))
    shown = values[:MAX_COMPLETION_VALUES]
    return types.CompleteResult(
        completion=types.Completion(
            values=shown, total=len(values), has_more=len(values) > len(shown)
        )
    )


class Completer:
    """Completes tool arguments and template variables from the agent's chats.

    Args:
        state: the agent's state (this run's actions).
        read_tools: the list tool, whose chats are completed.
    """

    def __init__(self, state: AgentState, read_tools: ReadTools) -> None:
        self._state = state
        self._read_tools = read_tools

    async def complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """The values for one argument."""
        ref, name, value = params.ref, params.argument.name, params.argument.value.casefold()
        if isinstance(ref, types.PromptReference):
            if ref.name in _CHAT_TOOLS and name == "chat":
                return _completion(await self._chats(value))
            if ref.name == ActionTool.CONNECT.value and name == "target":
                return _completion(await self._targets(value))
        elif isinstance(ref, types.ResourceTemplateReference):
            if ref.uri == CONTACT_TEMPLATE and name == "contact":
                return _completion(await self._ids("@", value))
            if ref.uri == GROUP_TEMPLATE and name == "group":
                return _completion(await self._ids("#", value))
        return _completion(())

    async def _listed(self) -> list[dict[str, Any]]:
        chats: list[dict[str, Any]] = (await self._read_tools.list_chats({}, NoProgress()))["chats"]
        return chats

    async def _chats(self, value: str) -> list[str]:
        out = []
        for entry in await self._listed():
            names = (entry["chat"], entry["name"], entry.get("simplex_name") or "")
            if any(str(text).casefold().startswith(value) for text in names if text):
                out.append(str(entry["chat"]))
        return out

    async def _targets(self, value: str) -> list[str]:
        names = [
            str(entry["simplex_name"])
            for entry in await self._listed()
            if entry.get("simplex_name")
        ]
        targets = [
            str(action.input["target"])
            for action in self._state.book
            if action.tool is ActionTool.CONNECT and isinstance(action.input.get("target"), str)
        ]
        return [text for text in (*names, *targets) if text.casefold().startswith(value)]

    async def _ids(self, sigil: str, value: str) -> list[str]:
        ids = (
            str(entry["chat"])[1:]
            for entry in await self._listed()
            if str(entry["chat"]).startswith(sigil)
        )
        return [text for text in ids if text.startswith(value)]
