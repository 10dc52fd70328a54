"""Lists that fit: MCP's list methods cut into pages that fit the transport they travel on.

MCP pages ``tools/list``, ``resources/list``, ``resources/templates/list`` and ``prompts/list``
with an opaque ``cursor`` param and a ``nextCursor`` result ("Pagination" in the MCP
specification). A server picks its own page size, which knows nothing of SimpleX: one page of
an ordinary server is often larger than the 10,000 bytes a Service RPC response should stay
under (RPC-LIM-3), or than the 15,602 bytes of a chat message (CALL-SIZE-2). So the binding
asks the server for its list (following the server's own cursors when it pages) and cuts the
items into pages of its own, each as large as the transport the request came on allows, with
its own cursor: base64url of ``{"v": 1, "m": METHOD, "u": UPSTREAM_CURSOR, "o": OFFSET}``,
the server's cursor of the page being read and how many of its items were already sent.

A cursor is read strictly (its one canonical form, the method it was made for, an offset
inside the server's page); anything else is "invalid params", -32602, as MCP says for an
invalid cursor. A cursor made over one transport is good on the other: it names a position in
the list, not a page size, so a caller may change transport in the middle of a list.

Sizes are measured per item and added up (the items of a JSON array are written one after the
other, a comma between them, in both encodings), so a page costs one encoding of each of its
items and of a skeleton response, never a re-encoding of the page for each item added.

The module is sans-IO but for one awaited callable, ``fetch``, that returns a page of the
server's own list.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from simplex_protocols import _wire
from simplex_protocols.chat_call.advanced import message_size
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES, MAX_SERVICE_JSON_BYTES
from simplex_protocols.rpc import success_response
from simplex_protocols.rpc.advanced import core_encode_json, service_json_size

__all__ = [
    "LIST_METHODS",
    "MAX_CURSOR_CHARS",
    "MAX_UPSTREAM_CURSOR_CHARS",
    "MAX_UPSTREAM_PAGES",
    "CursorError",
    "ItemTooLarge",
    "Page",
    "PageCursor",
    "PageMeasure",
    "UpstreamListError",
    "chat_measure",
    "decode_cursor",
    "encode_cursor",
    "next_page",
    "rpc_measure",
]

#: The paged list methods of MCP and the result member that holds each one's items.
LIST_METHODS: Final[Mapping[str, str]] = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}

#: A server's own cursor longer than this is refused (our cursor carries it, and a request
#: carrying our cursor must stay small beside the list it asks for).
MAX_UPSTREAM_CURSOR_CHARS: Final = 2048

#: The longest cursor of ours: base64url of the JSON around the longest server cursor.
MAX_CURSOR_CHARS: Final = 4 * ((MAX_UPSTREAM_CURSOR_CHARS * 6 + 200) // 3 + 1)

#: At most this many pages of the server are read for one page of ours: a server that answers
#: page after page of nothing cannot keep a request running for ever.
MAX_UPSTREAM_PAGES: Final = 64

_CURSOR_VERSION: Final = 1
_CURSOR_KEYS: Final = frozenset({"v", "m", "u", "o"})
_BASE64URL: Final = re.compile(r"[A-Za-z0-9_-]+")


class CursorError(ValueError):
    """A ``cursor`` param that is not one of ours, or no longer points into the list.

    The binding answers it with -32602, invalid params (MCP "Pagination": "Invalid cursors
    SHOULD result in an error with code -32602").

    Attributes:
        reason: what was wrong, for the error's ``data`` (never the cursor itself).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UpstreamListError(ValueError):
    """The server's own list result cannot be paged (a cursor that is not text, or too long)."""


@dataclass(frozen=True, slots=True)
class PageCursor:
    """A position in a list: the server's page being read and how many of its items are sent.

    Attributes:
        method: the list method the cursor was made for (``tools/list`` ...).
        upstream: the server's own cursor of that page; ``None`` for its first page.
        offset: how many items of that page came before this position.
    """

    method: str
    upstream: str | None
    offset: int


def encode_cursor(cursor: PageCursor) -> str:
    """The opaque ``nextCursor`` text of a position (base64url without padding, ASCII only)."""
    body = {"v": _CURSOR_VERSION, "m": cursor.method, "u": cursor.upstream, "o": cursor.offset}
    raw = _wire.dumps(body).encode("utf-8")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_cursor(text: object, method: str) -> PageCursor:
    """Read a ``cursor`` param that :func:`encode_cursor` made for ``method``.

    Only the exact text :func:`encode_cursor` writes is accepted: another spelling of the same
    JSON, padding, or a cursor of another list method is refused.

    Raises:
        CursorError: the cursor is not text, too long, not ours, or made for another method.
    """
    if not isinstance(text, str):
        raise CursorError("the cursor is not a string")
    if not text or len(text) > MAX_CURSOR_CHARS or _BASE64URL.fullmatch(text) is None:
        raise CursorError("the cursor is not one this bot made")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        body = _wire.loads(raw)
    except (binascii.Error, ValueError):
        raise CursorError("the cursor is not one this bot made") from None
    if not isinstance(body, dict) or set(body) != _CURSOR_KEYS:
        raise CursorError("the cursor is not one this bot made")
    version, made_for, upstream, offset = body["v"], body["m"], body["u"], body["o"]
    if type(version) is not int or version != _CURSOR_VERSION:
        raise CursorError("the cursor is of another version")
    if made_for != method:
        raise CursorError(f"the cursor was not made for {method}")
    if upstream is not None and (
        not isinstance(upstream, str) or len(upstream) > MAX_UPSTREAM_CURSOR_CHARS
    ):
        raise CursorError("the cursor is not one this bot made")
    if type(offset) is not int or offset < 0:
        raise CursorError("the cursor is not one this bot made")
    cursor = PageCursor(method, upstream, offset)
    if encode_cursor(cursor) != text:
        # One spelling per position: a cursor is compared, logged and cached as text.
        raise CursorError("the cursor is not one this bot made")
    return cursor


# --------------------------------------------------------------------------- sizes


@dataclass(frozen=True, slots=True)
class PageMeasure:
    """How one transport counts a response's bytes, and how many it takes.

    ``size(response)`` of a response whose list holds items ``x1 … xn`` and whose result has a
    ``nextCursor`` ``c`` equals ``size(skeleton) + Σ item(xi) + (n - 1) + cursor_field + len(c)``,
    where ``skeleton`` is the response with an empty list and no cursor, and ``cursor_field``
    the bytes ``"nextCursor":""`` and its comma add: the items of an array are written one after
    the other in both encodings, and a cursor is ASCII that neither encoding escapes.

    Attributes:
        transport: ``"chat"`` or ``"rpc"``, for logs and errors.
        limit: the most bytes a response may take.
        size: the bytes of a whole response as the transport counts them.
        item: the bytes one item of a list adds, without the comma before it.
    """

    transport: str
    limit: int
    size: Callable[[Mapping[str, Any]], int]
    item: Callable[[Any], int]


def rpc_measure() -> PageMeasure:
    """Service RPC: the JSON of the response envelope as the core writes it, at most 10,000
    bytes (RPC-LIM-3, a SHOULD NOT that the responder keeps by default)."""

    def size(response: Mapping[str, Any]) -> int:
        return service_json_size(success_response(dict(response)))

    def item(value: Any) -> int:
        return len(core_encode_json(value).encode("utf-8"))

    return PageMeasure("rpc", MAX_SERVICE_JSON_BYTES, size, item)


def chat_measure(quoted_text: str, *, in_group: bool) -> PageMeasure:
    """The chat transport: the reply, which quotes the command, as the core counts a message
    (CALL-SIZE-2), at most 15,602 bytes.

    Args:
        quoted_text: the command the reply quotes, or a text at least as large: the reply
            carries it whole (CALL-REP-1).
        in_group: whether the command came in a group (a group quote names the member).
    """

    def size(response: Mapping[str, Any]) -> int:
        return message_size(_wire.dumps(dict(response)), quoted_text=quoted_text, in_group=in_group)

    def item(value: Any) -> int:
        # The reply is the compact JSON written inside the message's JSON as a string, so each
        # character of the item counts as aeson writes it there (escapes included).
        return _wire.aeson_string_size(_wire.dumps(value))

    return PageMeasure("chat", MAX_CHAT_MESSAGE_BYTES, size, item)


# --------------------------------------------------------------------------- paging


@dataclass(frozen=True, slots=True)
class Page:
    """One page of ours: the JSON-RPC response to send, and its size as the transport counts it.

    Attributes:
        response: ``{"jsonrpc", "id", "result": {..., LIST: [...], "nextCursor"?}}``.
        size: its bytes, by the measure it was cut for (at most the measure's limit).
        items: how many items it carries.
    """

    response: dict[str, Any]
    size: int
    items: int


@dataclass(frozen=True, slots=True)
class ItemTooLarge:
    """The next item of the list does not fit in a page of this transport on its own.

    Attributes:
        size: the bytes the page with that item alone would take.
        limit: the transport's limit.
    """

    size: int
    limit: int


#: Returns the server's own list result for one of its cursors (``None``: its first page).
Fetch = Callable[[str | None], Awaitable[Mapping[str, Any]]]


def _split(result: Mapping[str, Any], key: str) -> tuple[list[Any], str | None]:
    items = result.get(key)
    if not isinstance(items, list):
        raise UpstreamListError(f"the server's list result has no {key} list")
    following = result.get("nextCursor")
    if following is not None and not isinstance(following, str):
        raise UpstreamListError("the server's nextCursor is not a string")
    if following is not None and len(following) > MAX_UPSTREAM_CURSOR_CHARS:
        raise UpstreamListError("the server's nextCursor is too long to carry")
    return items, following


async def next_page(
    method: str,
    cursor: PageCursor | None,
    *,
    request_id: Any,
    fetch: Fetch,
    measure: PageMeasure,
) -> Page | ItemTooLarge:
    """The page of ours that starts at ``cursor``, as large as ``measure`` allows.

    The server's pages are read from the one ``cursor`` names, as many as the page needs (at
    most :data:`MAX_UPSTREAM_PAGES`). The result's other members (``_meta``, ``ttlMs`` ...)
    are those of the first server page read.

    Args:
        method: one of :data:`LIST_METHODS`.
        cursor: where the page starts; ``None`` for the start of the list.
        request_id: the JSON-RPC id of the response.
        fetch: reads one page of the server's own list.
        measure: the transport's sizes and limit.

    Returns:
        The page, or :class:`ItemTooLarge` when its first item does not fit on its own (the
        caller answers as for any response over the limit, MCP-MSG-7).

    Raises:
        CursorError: the cursor's offset is past the end of the server's page (the list
            changed, or the cursor was made up).
        UpstreamListError: the server's result cannot be paged.
        Exception: whatever ``fetch`` raises.
    """
    key = LIST_METHODS[method]
    upstream = cursor.upstream if cursor is not None else None
    offset = cursor.offset if cursor is not None else 0
    result = await fetch(upstream)
    items, following = _split(result, key)
    if offset > len(items):
        raise CursorError("the cursor points past the end of the list")
    rest = {k: v for k, v in result.items() if k not in (key, "nextCursor")}
    skeleton: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": {**rest, key: []}}
    used = measure.size(skeleton)
    with_cursor = {**skeleton, "result": {**rest, key: [], "nextCursor": ""}}
    cursor_field = measure.size(with_cursor) - used

    def position_after(index: int) -> str | None:
        # The cursor of the position after items[index - 1] of the page being read.
        if index < len(items):
            return encode_cursor(PageCursor(method, upstream, index))
        if following is not None:
            return encode_cursor(PageCursor(method, following, 0))
        return None

    chosen: list[Any] = []
    next_cursor = position_after(offset)
    reads = 1
    while True:
        if offset == len(items):
            if following is None or reads == MAX_UPSTREAM_PAGES:
                break
            upstream = following
            items, following = _split(await fetch(upstream), key)
            offset = 0
            reads += 1
            next_cursor = position_after(0)
            continue
        cost = measure.item(items[offset]) + (1 if chosen else 0)
        after = position_after(offset + 1)
        total = used + cost + (cursor_field + len(after) if after is not None else 0)
        if total > measure.limit:
            if not chosen:
                return ItemTooLarge(total, measure.limit)
            break
        chosen.append(items[offset])
        used += cost
        offset += 1
        next_cursor = after
    page_result: dict[str, Any] = {**rest, key: chosen}
    if next_cursor is not None:
        page_result["nextCursor"] = next_cursor
        used += cursor_field + len(next_cursor)
    if used > measure.limit:
        # Only a page with no item gets here: the result's other members, or the position
        # after server pages of nothing, do not fit on their own.
        return ItemTooLarge(used, measure.limit)
    response = {"jsonrpc": "2.0", "id": request_id, "result": page_result}
    return Page(response, used, len(chosen))
