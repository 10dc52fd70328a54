"""simplex-call follows ``nextCursor``: an MCP list is shown whole, however many pages it took.

A bot's MCP binding cuts ``tools/list``, ``resources/list``, ``resources/templates/list`` and
``prompts/list`` into pages that fit the transport (docs/bindings-mcp.md, "Lists that fit"), so
one answer may hold only the first part of a list. Unless the user gave a ``cursor`` (then the
one page asked for is shown), simplex-call asks for each following page with the cursor of the
one before, and shows the pages as one answer: one response with every item, in order.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from simplex_protocols.bindings._mcp_pages import LIST_METHODS

from ._call_args import CLIError, ExitCode

__all__ = ["MAX_LIST_PAGES", "follows_pages", "join_pages", "with_cursor"]

#: simplex-call stops a list that has not ended after this many pages (a bot whose cursors
#: never end would otherwise keep it asking for ever).
MAX_LIST_PAGES: Final = 1000


def follows_pages(protocol: str, request: Mapping[str, Any]) -> bool:
    """Whether the answer to ``request`` is a list simplex-call reads to its end."""
    if protocol != "mcp" or request.get("method") not in LIST_METHODS:
        return False
    params = request.get("params")
    return not (isinstance(params, Mapping) and params.get("cursor") is not None)


def with_cursor(request: Mapping[str, Any], cursor: str) -> dict[str, Any]:
    """The same request asking for the page at ``cursor``."""
    out = copy.deepcopy(dict(request))
    params = out.get("params")
    out["params"] = {**(params if isinstance(params, dict) else {}), "cursor": cursor}
    return out


def next_cursor(response: Mapping[str, Any] | None) -> str | None:
    """The ``nextCursor`` of a list result, or ``None`` when the list ends (or it failed)."""
    result = response.get("result") if response is not None else None
    following = result.get("nextCursor") if isinstance(result, Mapping) else None
    return following if isinstance(following, str) else None


async def join_pages(
    method: str,
    first: Mapping[str, Any],
    ask: Callable[[str, int], Awaitable[Mapping[str, Any] | None]],
) -> tuple[dict[str, Any], int]:
    """Read a list to its end and join its pages into one response.

    Args:
        method: the list method.
        first: the response to the first request (a result with a ``nextCursor``).
        ask: makes the request for a cursor (the page's number, from 2, beside it) and
            returns its response; ``None`` when the answer was not a successful list page,
            which ends the list there (the caller keeps that answer to report).

    Returns:
        The joined response (the last page's result, with every item and no ``nextCursor``)
        and how many pages were asked for; when ``ask`` returned ``None`` the join stops at
        the page before, and the count includes the page that failed.

    Raises:
        CLIError: ``REMOTE_ERROR`` when the list does not end after :data:`MAX_LIST_PAGES`
            pages, or a cursor comes back that was followed already.
    """
    key = LIST_METHODS[method]
    items: list[Any] = list(_items(first, key))
    last: Mapping[str, Any] = first
    seen: set[str] = set()
    pages = 1
    cursor = next_cursor(first)
    while cursor is not None:
        if cursor in seen:
            raise CLIError(
                ExitCode.REMOTE_ERROR, f"the bot's {method} gave a cursor it gave before"
            )
        if pages >= MAX_LIST_PAGES:
            raise CLIError(
                ExitCode.REMOTE_ERROR, f"the bot's {method} did not end after {pages} pages"
            )
        seen.add(cursor)
        pages += 1
        response = await ask(cursor, pages)
        if response is None:
            break
        items.extend(_items(response, key))
        last = response
        cursor = next_cursor(response)
    result = last.get("result")
    joined: dict[str, Any] = {}
    if isinstance(result, Mapping):
        joined = {k: v for k, v in result.items() if k != "nextCursor"}
    joined[key] = items
    return {**last, "result": joined}, pages


def _items(response: Mapping[str, Any], key: str) -> list[Any]:
    result = response.get("result")
    found = result.get(key) if isinstance(result, Mapping) else None
    return list(found) if isinstance(found, list) else []
