"""Lists that fit: MCP's list methods cut into pages that fit the transport they travel on.

MCP pages ``tools/list``, ``resources/list``, ``resources/templates/list`` and ``prompts/list``
with an opaque ``cursor`` param and a ``nextCursor`` result ("Pagination" in the MCP
specification). A server picks its own page size, which knows nothing of SimpleX: one page of
an ordinary server is often larger than the 10,000 bytes a Service RPC response should stay
under (RPC-LIM-3), or than the 15,602 bytes of a chat message (CALL-SIZE-2). So the binding
asks the server for its list (following the server's own cursors when it pages) and cuts the
items into pages of its own, each as large as the transport the request came on allows, with
its own cursor: base64url of ``{"v": 2, "m": METHOD, "u": UPSTREAM_CURSOR, "o": OFFSET,
"s": VERSION}``, the server's cursor of the page being read, how many of its items were
already sent, and a short hash of that server page (``null`` at the start of a page not read
yet).

A server that does not page returns its whole list on every request, and its SDK builds and
serializes all of it each time: asking it again for every page of ours made most of a page's
cost. So each server page read is kept for a short while (:class:`ListSnapshots`, on the
binding's clock), per caller, list method and server cursor, and the pages after the first are
cut from it. A snapshot is found only by the cursor of its owner and with the version the
cursor carries, so no caller reads another's list (a server may list different tools per
caller). A cursor whose snapshot is gone (expired, evicted, dropped because the server said the
list changed, or asked for by another transport's caller) is served from the server again: if
the server's page has the cursor's version the list goes on from there, else the list changed
and the cursor is invalid.

A cursor is read strictly (its one canonical form, the method it was made for, an offset
inside the server's page, the version of that page); anything else is "invalid params",
-32602, as MCP says for an invalid cursor. A cursor made over one transport is good on the
other: it names a position in the list, not a page size, so a caller may change transport in
the middle of a list.

Sizes are measured per item and added up (the items of a JSON array are written one after the
other, a comma between them, in both encodings), so a page costs one encoding of each of its
items and of a skeleton response, never a re-encoding of the page for each item added.

The module is sans-IO but for one awaited callable, ``fetch``, that returns a page of the
server's own list; time comes in as ``now``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping
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
    "SNAPSHOT_MAX_BYTES",
    "SNAPSHOT_MAX_ENTRIES",
    "SNAPSHOT_TTL_S",
    "CursorError",
    "ItemTooLarge",
    "ListSnapshots",
    "OwnerSnapshots",
    "Page",
    "PageCursor",
    "PageMeasure",
    "ServerPage",
    "UpstreamListError",
    "chat_measure",
    "decode_cursor",
    "encode_cursor",
    "next_page",
    "read_server_page",
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

#: How long a server page read for one page of ours is kept for the next ones, in seconds of
#: the binding's clock: long enough for a caller to follow ``nextCursor`` to the end, short
#: enough that a list read again later is the server's list of then.
SNAPSHOT_TTL_S: Final = 30.0

#: At most this many server pages are kept, of all callers and methods together.
SNAPSHOT_MAX_ENTRIES: Final = 256

#: At most this many bytes of server pages (their compact JSON) are kept, all together; a
#: server page larger than this on its own is not kept, and is read again for each page.
SNAPSHOT_MAX_BYTES: Final = 8_000_000

# Version 2 added "s", the version of the server page: a version 1 cursor is refused.
_CURSOR_VERSION: Final = 2
_CURSOR_KEYS: Final = frozenset({"v", "m", "u", "o", "s"})
_BASE64URL: Final = re.compile(r"[A-Za-z0-9_-]+")
_VERSION_BYTES: Final = 8
_SNAPSHOT_VERSION: Final = re.compile(f"[0-9a-f]{{{2 * _VERSION_BYTES}}}")


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
        snapshot: the version of that server page the offset counts in
            (:attr:`ServerPage.version`); ``None`` for a position the binding did not pin to a
            version: the start of a server page it has not read, or a position made by hand,
            which is counted in the server's page of the moment.
    """

    method: str
    upstream: str | None
    offset: int
    snapshot: str | None = None


def encode_cursor(cursor: PageCursor) -> str:
    """The opaque ``nextCursor`` text of a position (base64url without padding, ASCII only)."""
    body = {
        "v": _CURSOR_VERSION,
        "m": cursor.method,
        "u": cursor.upstream,
        "o": cursor.offset,
        "s": cursor.snapshot,
    }
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
    version, made_for, upstream, offset, snapshot = (body[k] for k in ("v", "m", "u", "o", "s"))
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
    if snapshot is not None and (
        not isinstance(snapshot, str) or _SNAPSHOT_VERSION.fullmatch(snapshot) is None
    ):
        raise CursorError("the cursor is not one this bot made")
    cursor = PageCursor(method, upstream, offset, snapshot)
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


# --------------------------------------------------------------------------- snapshots


@dataclass(frozen=True, slots=True)
class ServerPage:
    """One page of the server's own list as read once, ready to be cut into pages of ours.

    Attributes:
        items: the page's items, as the server's SDK wrote them.
        following: the server's ``nextCursor``; ``None`` on its last page.
        rest: the result's other members (``_meta``, ``ttlMs`` ...).
        version: a short hash of ``items`` and ``following``: two reads of a server page with
            the same version put every item at the same position.
        size: the bytes of the page's compact JSON, what a snapshot of it is counted as.
    """

    items: tuple[Any, ...]
    following: str | None
    rest: Mapping[str, Any]
    version: str
    size: int


def read_server_page(result: Mapping[str, Any], key: str) -> ServerPage:
    """The page of a server's list ``result`` whose items are the member ``key``.

    The version leaves the other members out: a server may put something of the moment in
    ``_meta``, and that does not move an item.

    Raises:
        UpstreamListError: the result has no list, or a ``nextCursor`` that is not text or too
            long for our cursor to carry.
    """
    items = result.get(key)
    if not isinstance(items, list):
        raise UpstreamListError(f"the server's list result has no {key} list")
    following = result.get("nextCursor")
    if following is not None and not isinstance(following, str):
        raise UpstreamListError("the server's nextCursor is not a string")
    if following is not None and len(following) > MAX_UPSTREAM_CURSOR_CHARS:
        raise UpstreamListError("the server's nextCursor is too long to carry")
    rest = {k: v for k, v in result.items() if k not in (key, "nextCursor")}
    listed = _wire.dumps([items, following]).encode("utf-8")
    version = hashlib.blake2b(listed, digest_size=_VERSION_BYTES).hexdigest()
    size = len(listed) + len(_wire.dumps(rest).encode("utf-8"))
    return ServerPage(tuple(items), following, rest, version, size)


_SnapshotKey = tuple[Hashable, str, str | None]


class ListSnapshots:
    """Server pages kept for a short while, so that the pages of ours after the first are cut
    without asking the server again. Sans-IO: time comes in as ``now``.

    A page is kept per owner (the caller it was read for: never shared between callers, as a
    server may list different tools per caller), list method and server cursor, and is found
    only with the version a cursor carries. It is forgotten ``ttl_s`` after it was read, when
    the server says the list changed (:meth:`drop`), or to stay within ``max_entries`` pages
    and ``max_bytes`` bytes of their JSON, the least recently used first.

    Args:
        ttl_s: how long a page is kept, in seconds of ``now``.
        max_entries: the most pages kept.
        max_bytes: the most bytes kept (:attr:`ServerPage.size`); a larger page is not kept.

    Raises:
        ValueError: a bound is not positive.
    """

    def __init__(
        self,
        *,
        ttl_s: float = SNAPSHOT_TTL_S,
        max_entries: int = SNAPSHOT_MAX_ENTRIES,
        max_bytes: int = SNAPSHOT_MAX_BYTES,
    ) -> None:
        if ttl_s <= 0 or max_entries <= 0 or max_bytes <= 0:
            raise ValueError("the bounds of ListSnapshots must be positive")
        self._ttl_s = ttl_s
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._kept: OrderedDict[_SnapshotKey, tuple[ServerPage, float]] = OrderedDict()
        self._bytes = 0

    @property
    def entries(self) -> int:
        """How many pages are kept now (expired ones included until the next :meth:`put`)."""
        return len(self._kept)

    @property
    def size(self) -> int:
        """How many bytes the pages kept now count for."""
        return self._bytes

    def get(
        self, owner: Hashable, method: str, upstream: str | None, version: str, now: float
    ) -> ServerPage | None:
        """The kept page of ``owner`` at ``upstream``, if it is of ``version`` and not expired."""
        key = (owner, method, upstream)
        kept = self._kept.get(key)
        if kept is None:
            return None
        page, expires_at = kept
        if now >= expires_at:
            self._remove(key)
            return None
        if page.version != version:
            return None
        self._kept.move_to_end(key)
        return page

    def put(
        self, owner: Hashable, method: str, upstream: str | None, page: ServerPage, now: float
    ) -> None:
        """Keep ``page``, read now for ``owner``, in place of the one kept at ``upstream``."""
        key = (owner, method, upstream)
        if key in self._kept:
            self._remove(key)
        for stale in [k for k, (_, expires_at) in self._kept.items() if now >= expires_at]:
            self._remove(stale)
        if page.size > self._max_bytes:
            return
        self._kept[key] = (page, now + self._ttl_s)
        self._bytes += page.size
        while len(self._kept) > self._max_entries or self._bytes > self._max_bytes:
            self._remove(next(iter(self._kept)))

    def drop(self, methods: Iterable[str] | None = None) -> None:
        """Forget the pages of ``methods`` (of every method with ``None``), of all owners.

        For a server that said its list changed: the cursors of those pages are then served
        from the server again, and are invalid if the positions moved.
        """
        chosen = None if methods is None else frozenset(methods)
        for key in [k for k in self._kept if chosen is None or k[1] in chosen]:
            self._remove(key)

    def view(self, owner: Hashable, now: float) -> OwnerSnapshots:
        """The pages of one owner, at one moment: what :func:`next_page` reads and keeps."""
        return OwnerSnapshots(self, owner, now)

    def _remove(self, key: _SnapshotKey) -> None:
        page, _ = self._kept.pop(key)
        self._bytes -= page.size


@dataclass(frozen=True, slots=True)
class OwnerSnapshots:
    """The snapshots of one owner at one moment (:meth:`ListSnapshots.view`)."""

    snapshots: ListSnapshots
    owner: Hashable
    now: float

    def get(self, method: str, upstream: str | None, version: str) -> ServerPage | None:
        """The kept page at ``upstream`` of ``version``, or ``None``."""
        return self.snapshots.get(self.owner, method, upstream, version, self.now)

    def put(self, method: str, upstream: str | None, page: ServerPage) -> None:
        """Keep ``page``, read at ``upstream``."""
        self.snapshots.put(self.owner, method, upstream, page, self.now)


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


async def next_page(
    method: str,
    cursor: PageCursor | None,
    *,
    request_id: Any,
    fetch: Fetch,
    measure: PageMeasure,
    snapshots: OwnerSnapshots | None = None,
) -> Page | ItemTooLarge:
    """The page of ours that starts at ``cursor``, as large as ``measure`` allows.

    The server's pages are read from the one ``cursor`` names, as many as the page needs (at
    most :data:`MAX_UPSTREAM_PAGES`). The result's other members (``_meta``, ``ttlMs`` ...)
    are those of the first server page read.

    The server page a cursor of ours points into is taken from ``snapshots`` when it is kept
    there with the cursor's version, else read from the server again; every server page read
    is kept there. The start of the list (``cursor`` ``None``) is always read from the server.

    Args:
        method: one of :data:`LIST_METHODS`.
        cursor: where the page starts; ``None`` for the start of the list.
        request_id: the JSON-RPC id of the response.
        fetch: reads one page of the server's own list.
        measure: the transport's sizes and limit.
        snapshots: the caller's kept server pages; ``None`` to keep none.

    Returns:
        The page, or :class:`ItemTooLarge` when its first item does not fit on its own (the
        caller answers as for any response over the limit, MCP-MSG-7).

    Raises:
        CursorError: the server's page is not of the cursor's version (the list changed), or
            the cursor's offset is past its end (the list changed, or the cursor was made up).
        UpstreamListError: the server's result cannot be paged.
        Exception: whatever ``fetch`` raises.
    """
    key = LIST_METHODS[method]
    upstream = cursor.upstream if cursor is not None else None
    offset = cursor.offset if cursor is not None else 0
    pinned = cursor.snapshot if cursor is not None else None

    async def read(at: str | None, version: str | None) -> ServerPage:
        if version is not None and snapshots is not None:
            kept = snapshots.get(method, at, version)
            if kept is not None:
                return kept
        read_now = read_server_page(await fetch(at), key)
        if snapshots is not None:
            snapshots.put(method, at, read_now)
        return read_now

    page = await read(upstream, pinned)
    if pinned is not None and page.version != pinned:
        # Never a page of another version of the list without the caller knowing: its
        # positions may have moved, so the caller lists again from the start.
        raise CursorError("the list changed since the cursor was made: list it from the start")
    items, following, version = page.items, page.following, page.version
    if offset > len(items):
        raise CursorError("the cursor points past the end of the list")
    rest = dict(page.rest)
    skeleton: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": {**rest, key: []}}
    used = measure.size(skeleton)
    with_cursor = {**skeleton, "result": {**rest, key: [], "nextCursor": ""}}
    cursor_field = measure.size(with_cursor) - used

    def position_after(index: int) -> str | None:
        # The cursor of the position after items[index - 1] of the page being read.
        if index < len(items):
            return encode_cursor(PageCursor(method, upstream, index, version))
        if following is not None:
            return encode_cursor(PageCursor(method, following, 0))
        return None

    chosen: list[Any] = []
    next_cursor = position_after(offset)
    fitted = next_cursor  # the cursor counted with the last item chosen
    reads = 1
    while True:
        if offset == len(items):
            if following is None or reads == MAX_UPSTREAM_PAGES:
                break
            upstream = following
            page = await read(upstream, None)
            items, following, version = page.items, page.following, page.version
            offset = 0
            reads += 1
            if not items:
                # A server page of nothing: the position after it is the next one's start.
                next_cursor = position_after(0)
            # Else next_cursor stays the start of this server page, unpinned: the same
            # position, in the text whose size was counted (a pinned one is longer).
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
        next_cursor = fitted = after
    if (
        chosen
        and next_cursor is not None
        and used + cursor_field + len(next_cursor) > measure.limit
    ):
        # Server pages of nothing, read after the last item, moved the position on to a
        # longer server cursor; the position counted with that item is the same place.
        next_cursor = fitted
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
