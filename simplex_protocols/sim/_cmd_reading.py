"""Commands: reading chats and the chat list, marking items read."""

from __future__ import annotations

import bisect
from typing import Any

from . import _records as rec
from ._context import Args, CoreContext, json_object
from ._errors import command_error, store_error
from ._grammar import CommandGroup
from ._store import ChatIndex, ConnRow, ItemRow, UserRow

__all__ = ["COMMANDS"]

JSON = dict[str, Any]

#: The commands of this module, in matching order.
COMMANDS = CommandGroup("reading")


def _chat_ref(ctx: CoreContext, user: UserRow, ref: str) -> tuple[str, int]:
    kind, chat_id, scope = ctx.parse_ref(ref)
    if scope is not None:
        raise command_error("member support chats are not supported by the simulator")
    if kind == "direct":
        ctx.get_contact(user, chat_id)
    elif kind == "group":
        ctx.get_group(user, chat_id)
    elif kind == "local":
        folder = ctx.db.folders.get(chat_id)
        if folder is None or folder.user_id != user.user_id:
            raise store_error("noteFolderNotFound", noteFolderId=chat_id)
    else:
        raise command_error(f"{ref}: not supported in this command")
    return kind, chat_id


@COMMANDS.command(
    "/_get chat <ref:chatref>[ content=<content:contenttag>] <page:page>[ search=<search:text>]"
)
def get_chat(ctx: CoreContext, a: Args) -> JSON:
    """``/_get chat``: every paging form, as the core's queries page.

    ``count=N`` is the last N items; ``after=ID``/``before=ID`` the N items after/before
    an item of the chat (``chatItemNotFound`` otherwise); ``around=ID`` N before, the item,
    N after, with real stats and ``navInfo``; ``initial=N`` is ``around`` the first unread
    item, or the last N items when none is unread. ``content=`` and ``search=`` select the
    items around the pivot (the pivot itself is always returned). Only the page is read.
    """
    user = ctx.active_user()
    kind, chat_id = _chat_ref(ctx, user, a["ref"] or "")
    index = ctx.db.chat_index(kind, chat_id)
    items = index.items if index is not None else []
    tag = a.get("content")
    search = (a.get("search") or "").lower()
    page = a["page"] or ""
    parts = dict(p.split("=", 1) for p in page.split())
    count = max(0, int(parts.get("count", parts.get("initial", "0"))))

    def selected(item: ItemRow) -> bool:
        if tag is not None and (item.content.get("msgContent") or {}).get("type") != tag:
            return False
        return not search or search in item.item_text.lower()

    def after(pos: int) -> list[ItemRow]:
        if tag is None and not search:
            return items[pos + 1 : pos + 1 + count]
        out: list[ItemRow] = []
        for item in items[pos + 1 :]:
            if len(out) >= count:
                break
            if selected(item):
                out.append(item)
        return out

    def before(pos: int) -> list[ItemRow]:
        if tag is None and not search:
            return items[max(0, pos - count) : pos]
        out: list[ItemRow] = []
        for item in reversed(items[:pos]):
            if len(out) >= count:
                break
            if selected(item):
                out.append(item)
        return out[::-1]

    def pivot(text: str) -> tuple[ItemRow, int]:
        item_id = int(text)
        item = ctx.db.items.get(item_id)
        if index is None or item is None or (item.chat_type, item.chat_id) != (kind, chat_id):
            raise store_error("chatItemNotFound", itemId=item_id)
        return item, index.position(item)

    stats: JSON = dict(rec.EMPTY_STATS)
    around: tuple[ItemRow, int] | None = None
    if "after" in parts:
        sel = after(pivot(parts["after"])[1])
    elif "before" in parts:
        sel = before(pivot(parts["before"])[1])
    elif "around" in parts:
        around = pivot(parts["around"])
        stats = rec.chat_stats(ctx.db, kind, chat_id)
    elif "initial" in parts:
        if search:
            raise store_error(
                "internalError", message="initial chat pagination doesn't support search"
            )
        first = _first_unread(index, tag)
        if first is not None:
            around = first, index.position(first) if index is not None else 0
            stats = rec.chat_stats(ctx.db, kind, chat_id)
            stats["minUnreadItemId"] = first.item_id
        else:
            sel = before(len(items))
    else:
        sel = before(len(items))
    if around is not None:
        sel = [*before(around[1]), around[0], *after(around[1])]
    out: JSON = {
        "type": "apiChat",
        "user": ctx.user_json(user.user_id),
        "chat": rec.achat(ctx.db, kind, chat_id, sel, stats, ctx.now()),
    }
    if "around" in parts or "initial" in parts:
        nav = {"afterUnread": 0, "afterTotal": 0}
        if index is not None and sel and around is not None:
            last = sel[-1]
            nav = {
                "afterUnread": index.unread_after(last),
                "afterTotal": len(items) - index.position(last) - 1,
            }
        out["navInfo"] = nav
    return out


def _first_unread(index: ChatIndex | None, tag: str | None) -> ItemRow | None:
    """The first unread item in the chat's order (of the content type, when given)."""
    if index is None:
        return None
    if tag is None:
        return index.first_unread()
    for key in index.unread_keys:
        item = index.items[bisect.bisect_left(index.keys, key)]
        if (item.content.get("msgContent") or {}).get("type") == tag:
            return item
    return None


@COMMANDS.command("/_get chats <userId:int>[ pcc=<pcc:onoff>][ <page:timepage>][ <query:json>]")
def get_chats(ctx: CoreContext, a: Args) -> JSON:
    """``/_get chats``: the chat list newest first, filtered and paged by chat time.

    Every chat is ordered and filtered from its row and its index (no item is read);
    only the chats of the page are rendered, each with its last item and its stats.
    """
    user = ctx.user_by_id(a["userId"])
    query: JSON = {"type": "filters", "favorite": False, "unread": False}
    if a.get("query") is not None:
        query = json_object(a["query"], "ChatListQuery")
    search = str(query.get("search", "")).lower() if query.get("type") == "search" else None
    favorite = search is None and bool(query.get("favorite"))
    unread = search is None and bool(query.get("unread"))
    entries: list[tuple[tuple[str, int], str, Any]] = []
    for c in ctx.db.contacts.values():
        if c.user_id != user.user_id or c.is_user_contact or c.chat_deleted:
            continue
        prof = ctx.db.profiles[c.profile_id]
        names: tuple[str, ...] = (
            (c.local_display_name, *_profile_names(prof.profile), prof.local_alias)
            if search is not None
            else ()
        )
        if _chat_listed(
            ctx, "direct", c.contact_id, c.favorite, c.unread_chat, names, search, favorite, unread
        ):
            entries.append(((c.chat_ts or c.created_at, c.contact_id), "direct", c))
    for g in ctx.db.groups.values():
        if g.user_id != user.user_id:
            continue
        names = (
            (
                g.local_display_name,
                *_profile_names(g.profile),
                str(g.profile.get("description") or ""),
            )
            if search is not None
            else ()
        )
        if _chat_listed(
            ctx, "group", g.group_id, g.favorite, g.unread_chat, names, search, favorite, unread
        ):
            entries.append(((g.chat_ts or g.created_at, g.group_id), "group", g))
    if not favorite or unread or search is not None:
        for r in ctx.db.requests.values():
            if r.user_id != user.user_id:
                continue
            names = (
                r.local_display_name,
                *_profile_names(ctx.db.profiles[r.profile_id].profile),
            )
            if search is None or any(search in n.lower() for n in names):
                entries.append(((r.updated_at, r.contact_request_id), "contactRequest", r))
    if a.get("pcc") == "on" and not favorite and not unread:
        for conn in ctx.db.conns.values():
            if conn.user_id != user.user_id or not _is_pcc(conn):
                continue
            if search is None or search in conn.local_alias.lower():
                entries.append(((conn.updated_at, conn.conn_id), "contactConnection", conn))
    entries.sort(key=lambda entry: entry[0], reverse=True)
    page = a.get("page") or "count=5000"
    parts = dict(p.split("=", 1) for p in page.split())
    count = int(parts.get("count", "5000"))
    if "before" in parts:
        entries = [e for e in entries if e[0][0] < parts["before"]][:count]
    elif "after" in parts:
        entries = [e for e in entries if e[0][0] > parts["after"]][-count:] if count else []
    else:
        entries = entries[:count]
    now = ctx.now()
    return {
        "type": "apiChats",
        "user": ctx.user_json(user.user_id),
        "chats": [_chat_entry(ctx, kind, row, now) for _, kind, row in entries],
    }


def _chat_listed(
    ctx: CoreContext,
    kind: str,
    chat_id: int,
    is_favorite: bool,
    unread_chat: bool,
    names: tuple[str, ...],
    search: str | None,
    favorite: bool,
    unread: bool,
) -> bool:
    """The core's chat list filters: a search in the names (given only with a search);
    favorite, unread (marked unread or with unread items), or either when both are asked."""
    if search is not None:
        return any(search in n.lower() for n in names)
    if not favorite and not unread:
        return True
    if favorite and is_favorite:
        return True
    if unread:
        index = ctx.db.chat_index(kind, chat_id)
        return unread_chat or (index is not None and bool(index.unread_keys))
    return False


def _chat_entry(ctx: CoreContext, kind: str, row: Any, now: float) -> JSON:
    if kind == "direct":
        return _preview(ctx, "direct", row.contact_id, now, unread_chat=row.unread_chat)
    if kind == "group":
        return _preview(ctx, "group", row.group_id, now, unread_chat=row.unread_chat)
    if kind == "contactRequest":
        info: JSON = {
            "type": "contactRequest",
            "contactRequest": rec.user_contact_request(ctx.db, row),
        }
    else:
        info = {"type": "contactConnection", "contactConnection": rec.pending_connection(row)}
    return {"chatInfo": info, "chatItems": [], "chatStats": dict(rec.EMPTY_STATS)}


def _is_pcc(conn: ConnRow) -> bool:
    return (
        conn.pending is not None
        and conn.contact_id is None
        and conn.member_id is None
        and conn.pending_group_id is None
        and conn.status != "ready"
    )


def _preview(
    ctx: CoreContext, kind: str, chat_id: int, now: float, *, unread_chat: bool = False
) -> JSON:
    """A chat of the chat list: its info, its last item, its stats (lowest unread ID)."""
    index = ctx.db.chat_index(kind, chat_id)
    last = index.items[-1:] if index is not None else []
    stats = rec.chat_stats(ctx.db, kind, chat_id, unread_chat=unread_chat, min_unread_by_id=True)
    return rec.achat(ctx.db, kind, chat_id, last, stats, now)


@COMMANDS.command("/_read chat items <ref:chatref> <ids:ids>")
def read_items(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    kind, chat_id = _chat_ref(ctx, user, a["ref"] or "")
    for item_id in {int(x) for x in (a["ids"] or "").split(",")}:
        item = ctx.db.items.get(item_id)
        if item is None or (item.chat_type, item.chat_id) != (kind, chat_id):
            continue
        if item.status.get("type") == "rcvNew":
            ctx.db.set_item_status(item, {"type": "rcvRead"})
    return {
        "type": "itemsReadForChat",
        "user": ctx.user_json(user.user_id),
        "chatInfo": rec.chat_info(ctx.db, kind, chat_id),
    }


@COMMANDS.command("/_read chat <ref:chatref>")
def read_chat(ctx: CoreContext, a: Args) -> JSON:
    user = ctx.active_user()
    kind, chat_id = _chat_ref(ctx, user, a["ref"] or "")
    index = ctx.db.chat_index(kind, chat_id)
    if index is not None:
        for key in list(index.unread_keys):
            item = index.items[bisect.bisect_left(index.keys, key)]
            ctx.db.set_item_status(item, {"type": "rcvRead"})
    return {"type": "cmdOk", "user_": ctx.user_json(user.user_id)}


def _profile_names(profile: JSON) -> tuple[str, str]:
    return str(profile.get("displayName") or ""), str(profile.get("fullName") or "")
