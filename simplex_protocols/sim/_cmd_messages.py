"""Commands: sending, editing and deleting messages, reading and listing chats."""

from __future__ import annotations

import bisect
import copy
from typing import TYPE_CHECKING, Any

from simplex_protocols._wire import chat_message_size, json_size
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES, MSG_UPDATE_ENVELOPE_BYTES

from . import _records as rec
from ._cmd_users import UserCommands, json_arg, json_object
from ._corebase import parse_int
from ._errors import chat_error, command_error, store_error
from ._markdown import mentioned_names, parse_markdown
from ._store import ChatIndex, ConnRow, GroupRow, ItemRow, MemberRow, UserRow

if TYPE_CHECKING:
    from ._network import Delivery

__all__ = ["MAX_RCV_MENTIONS", "MAX_SND_MENTIONS", "MessageCommands"]

JSON = dict[str, Any]
Args = dict[str, str | None]

#: At most this many members can be mentioned in one message (the core's maxSndMentions).
MAX_SND_MENTIONS = 3

#: At most this many mentions of a received message are kept (the core's maxRcvMentions).
MAX_RCV_MENTIONS = 5

#: Items a new member receives from the group's history, when history is on.
HISTORY_ITEMS = 100


class MessageCommands(UserCommands):
    # ------------------------------------------------------------------ sizes

    def check_size(self, mc: JSON, *, update: bool = False, extra: int = 0) -> None:
        """Refuse a message whose encoded JSON exceeds 15,602 bytes (``errorStore largeMsg``)."""
        text = mc.get("text", "")
        text = text if isinstance(text, str) else ""
        if update:
            size = chat_message_size(text, envelope_bytes=MSG_UPDATE_ENVELOPE_BYTES) + extra
        else:
            size = chat_message_size(text) + extra
        others = {k: v for k, v in mc.items() if k not in ("type", "text")}
        if others:
            size += json_size(others)
        if size > MAX_CHAT_MESSAGE_BYTES:
            raise store_error("largeMsg")

    # ------------------------------------------------------------------ chats and recipients

    def chat_of_conn(self, conn: ConnRow) -> tuple[str, int] | None:
        if conn.contact_id is not None and conn.contact_id in self.db.contacts:
            return "direct", conn.contact_id
        if conn.member_id is not None and conn.member_id in self.db.members:
            return "group", self.db.members[conn.member_id].group_id
        return None

    def contact_conn(self, contact_id: int) -> ConnRow | None:
        c = self.db.contacts.get(contact_id)
        if c is None or c.conn_id is None:
            return None
        return self.db.conns.get(c.conn_id)

    def member_conns(self, g: GroupRow, *, exclude: int | None = None) -> list[ConnRow]:
        """Connections to the current, connected members of a group."""
        out = []
        for m in self.db.group_members(g.group_id):
            if m.category == "user" or m.group_member_id == exclude:
                continue
            if m.status not in ("connected", "complete") or m.conn_id is None:
                continue
            conn = self.db.conns.get(m.conn_id)
            if conn is not None and conn.peer is not None:
                out.append(conn)
        return out

    def _send_target(self, user: UserRow, ref: str) -> tuple[str, int, bool]:
        kind, chat_id, scope = self.parse_ref(ref.split("(as_group")[0])
        as_group = "(as_group=on)" in ref
        if scope is not None and scope.startswith("(_support"):
            raise command_error("member support chats are not supported by the simulator")
        if kind == "direct":
            c = self.get_contact(user, chat_id)
            if c.status != "active":
                raise chat_error("contactNotActive", contact=self.contact_json(c))
            conn = self.contact_conn(chat_id)
            if conn is None or conn.status != "ready":
                raise chat_error("contactNotReady", contact=self.contact_json(c))
            return kind, chat_id, False
        if kind == "group":
            g = self.get_group(user, chat_id)
            m = self.membership(g)
            if m.status not in ("connected", "complete", "creator"):
                raise chat_error("groupNotJoined", groupInfo=self.group_json(g))
            if not rec.role_at_least(m.role, "author"):
                raise chat_error(
                    "groupUserRole", groupInfo=self.group_json(g), requiredRole="author"
                )
            return kind, chat_id, as_group
        if kind == "local":
            if chat_id not in self.db.folders or self.db.folders[chat_id].user_id != user.user_id:
                raise store_error("noteFolderNotFound", noteFolderId=chat_id)
            return kind, chat_id, False
        raise command_error(f"cannot send to {ref}")

    # ------------------------------------------------------------------ sending

    def _quote_for(self, chat_type: str, chat_id: int, item_id: Any) -> ItemRow:
        if not isinstance(item_id, int) or isinstance(item_id, bool):
            raise store_error("invalidQuote")
        item = self.db.items.get(item_id)
        if (
            item is None
            or item.chat_type != chat_type
            or item.chat_id != chat_id
            or item.content.get("type") not in ("sndMsgContent", "rcvMsgContent")
        ):
            raise store_error("invalidQuote")
        return item

    def quote_json(self, item: ItemRow) -> JSON:
        direction: JSON = {"type": item.dir_type}
        if item.dir_type == "groupRcv" and item.sender_member_id is not None:
            direction["groupMember"] = self.member_json(self.db.members[item.sender_member_id])
        out: JSON = {"chatDir": direction, "itemId": item.item_id}
        if item.shared_msg_id is not None:
            out["sharedMsgId"] = item.shared_msg_id
        out["sentAt"] = item.item_ts
        out["content"] = copy.deepcopy(item.content["msgContent"])
        return out

    def mention_json(self, m: MemberRow) -> JSON:
        ref: JSON = {
            "groupMemberId": m.group_member_id,
            "displayName": str(self.db.profiles[m.profile_id].profile.get("displayName", "")),
        }
        alias = self.db.profiles[m.profile_id].local_alias
        if alias:
            ref["localAlias"] = alias
        ref["memberRole"] = m.role
        return {"memberId": m.member_id, "memberRef": ref}

    def post_message(
        self,
        user: UserRow,
        chat_type: str,
        chat_id: int,
        mc: JSON,
        *,
        quote: ItemRow | None = None,
        mentions: dict[str, MemberRow] | None = None,
        live: bool = False,
        ttl: int | None = None,
        as_group: bool = False,
    ) -> ItemRow:
        """Create a sent item and send the message to the chat's peers."""
        dir_type = {"direct": "directSnd", "group": "groupSnd", "local": "localSnd"}[chat_type]
        shared = self.random_id() if chat_type != "local" else None
        timed = None
        if ttl is not None:
            timed = {"ttl": ttl, "deleteAt": rec.iso(self.network.clock.wall() + ttl)}
        item = self.new_item(
            user,
            chat_type,
            chat_id,
            dir_type,
            {"type": "sndMsgContent", "msgContent": copy.deepcopy(mc)},
            shared_msg_id=shared,
            live=True if live else None,
            quote=self.quote_json(quote) if quote is not None else None,
            mentions={n: self.mention_json(m) for n, m in (mentions or {}).items()},
            timed=timed,
            show_group_as_sender=as_group,
            status={"type": "sndSent", "sndProgress": "complete"} if chat_type == "local" else None,
        )
        if chat_type == "local":
            return item
        body: JSON = {
            "t": "x.msg.new",
            "sharedMsgId": shared,
            "content": copy.deepcopy(mc),
            "sentAt": item.item_ts,
        }
        if quote is not None:
            body["quote"] = self._quote_wire(quote)
        if mentions:
            body["mentions"] = {n: m.member_id for n, m in mentions.items()}
        if live:
            body["live"] = True
        if ttl is not None:
            body["ttl"] = ttl
        if as_group:
            body["asGroup"] = True
        conns = self._recipients(chat_type, chat_id)
        for conn in conns:
            self.send_on(conn, body, receipt=[item.item_id])
        if not conns:
            self.db.set_item_status(item, {"type": "sndSent", "sndProgress": "complete"})
        return item

    def _quote_wire(self, quote: ItemRow) -> JSON:
        out: JSON = {
            "sharedMsgId": quote.shared_msg_id,
            "sentAt": quote.item_ts,
            "content": copy.deepcopy(quote.content["msgContent"]),
        }
        if quote.chat_type == "group":
            if quote.dir_type == "groupSnd":
                g = self.db.groups[quote.chat_id]
                out["memberId"] = self.membership(g).member_id
            elif quote.sender_member_id is not None:
                out["memberId"] = self.db.members[quote.sender_member_id].member_id
        return out

    def _recipients(self, chat_type: str, chat_id: int) -> list[ConnRow]:
        if chat_type == "direct":
            conn = self.contact_conn(chat_id)
            return [conn] if conn is not None and conn.status == "ready" else []
        return self.member_conns(self.db.groups[chat_id])

    def _composed(self, user: UserRow, a: Args, messages: list[Any]) -> JSON:
        kind, chat_id, as_group = self._send_target(user, a["ref"] or "")
        live = a.get("live") == "on"
        ttl = None
        if a.get("ttl") not in (None, "default"):
            ttl = parse_int(a.get("ttl"))
        if not messages:
            raise command_error("no messages to send")
        prepared: list[tuple[JSON, ItemRow | None, dict[str, MemberRow]]] = []
        for msg in messages:
            if not isinstance(msg, dict) or not isinstance(msg.get("msgContent"), dict):
                raise command_error("ComposedMessage: msgContent expected")
            mc = msg["msgContent"]
            if not isinstance(mc.get("type"), str) or not isinstance(mc.get("text", ""), str):
                raise command_error("MsgContent: type and text expected")
            quote = None
            if msg.get("quotedItemId") is not None:
                quote = self._quote_for(kind, chat_id, msg["quotedItemId"])
            mentions = self._mentions(kind, chat_id, msg.get("mentions") or {}, mc)
            extra = json_size(self._quote_wire(quote)) + 9 if quote is not None else 0
            if mentions:
                extra += json_size({n: m.member_id for n, m in mentions.items()}) + 12
            self.check_size(mc, extra=extra)
            prepared.append((mc, quote, mentions))
        items = [
            self.post_message(
                user, kind, chat_id, mc, quote=q, mentions=mn, live=live, ttl=ttl, as_group=as_group
            )
            for mc, q, mn in prepared
        ]
        return {
            "type": "newChatItems",
            "user": self.user_json(user.user_id),
            "chatItems": [self.a_item(i) for i in items],
        }

    def _mentions(self, kind: str, chat_id: int, raw: Any, mc: JSON) -> dict[str, MemberRow]:
        """The mentions of a sent or edited message, checked as the core checks them.

        The core reads the text's Markdown: a text without formatting keeps no mentions (they
        are dropped, not refused); otherwise every name must be a ``mention`` fragment of the
        text (a one-line text starting with ``/`` is one command and has none), at most 3,
        each a different member of the group (``errorStore invalidMention``).
        """
        if not isinstance(raw, dict):
            raise command_error("mentions must be an object")
        if not raw:
            return {}
        if kind != "group":
            raise store_error("invalidMention")
        for gm_id in raw.values():
            if not isinstance(gm_id, int) or isinstance(gm_id, bool):
                raise command_error("mentions: a group member ID (a number) for each name")
        text = mc.get("text", "")
        formatted = parse_markdown(text) if isinstance(text, str) else None
        if not formatted:
            return {}
        names = set(mentioned_names(formatted))
        if (
            len(raw) > MAX_SND_MENTIONS
            or not set(raw) <= names
            or len(set(raw.values())) != len(raw)
        ):
            raise store_error("invalidMention")
        out: dict[str, MemberRow] = {}
        for name, gm_id in raw.items():
            m = self.db.members.get(gm_id)
            if m is None or m.group_id != chat_id:
                raise store_error("groupMemberNotFound", groupMemberId=gm_id)
            out[str(name)] = m
        return out

    def cmd_send_messages(self, a: Args) -> JSON:
        user = self.active_user()
        messages = json_arg(a["messages"], "ComposedMessage list")
        if isinstance(messages, dict):
            messages = [messages]
        if not isinstance(messages, list):
            raise command_error("a JSON list of ComposedMessage expected")
        return self._composed(user, a, messages)

    def cmd_send_text(self, a: Args) -> JSON:
        user = self.active_user()
        return self._composed(user, a, [{"msgContent": {"type": "text", "text": a["text"] or ""}}])

    # ------------------------------------------------------------------ editing and deleting

    def _own_item(self, user: UserRow, ref: str, item_id: int) -> tuple[str, int, ItemRow]:
        kind, chat_id, _ = self.parse_ref(ref)
        if kind == "direct":
            self.get_contact(user, chat_id)
        elif kind == "group":
            self.get_group(user, chat_id)
        item = self.db.items.get(item_id)
        if item is None or item.chat_type != kind or item.chat_id != chat_id:
            raise store_error("chatItemNotFound", itemId=item_id)
        return kind, chat_id, item

    def cmd_update_item(self, a: Args) -> JSON:
        updated = json_object(a["updated"], "UpdatedMessage")
        if not isinstance(updated.get("msgContent"), dict):
            raise command_error("UpdatedMessage: msgContent expected")
        return self._update(a, updated["msgContent"], updated.get("mentions") or {})

    def cmd_update_item_text(self, a: Args) -> JSON:
        return self._update(a, {"type": "text", "text": a["text"] or ""}, {})

    def _update(self, a: Args, mc: JSON, raw_mentions: Any) -> JSON:
        user = self.active_user()
        kind, chat_id, item = self._own_item(user, a["ref"] or "", parse_int(a["itemId"]))
        editable = (
            item.dir_type in ("directSnd", "groupSnd", "localSnd")
            and item.content.get("type") == "sndMsgContent"
            and item.deleted is None
            and self.now() - item.created_seq < rec.EDIT_WINDOW_S
        )
        if not editable:
            raise chat_error("invalidChatItemUpdate")
        live = a.get("live") == "on"
        mentions = self._mentions(kind, chat_id, raw_mentions, mc)
        self.check_size(mc, update=True)
        old = item.content.get("msgContent")
        was_live = bool(item.live)
        if old == mc and not (was_live and not live) and not live:
            return {
                "type": "chatItemNotChanged",
                "user": self.user_json(user.user_id),
                "chatItem": self.a_item(item),
            }
        item.content = {"type": "sndMsgContent", "msgContent": copy.deepcopy(mc)}
        item.item_text = str(mc.get("text", ""))
        item.has_link = rec.has_link(item.item_text)
        item.mentions = {n: self.mention_json(m) for n, m in mentions.items()}
        item.updated_at = self.ts()
        if was_live:
            item.live = live
        if not (was_live or live):
            item.edited = True
        body: JSON = {
            "t": "x.msg.update",
            "sharedMsgId": item.shared_msg_id,
            "content": copy.deepcopy(mc),
        }
        if mentions:
            body["mentions"] = {n: m.member_id for n, m in mentions.items()}
        if item.live is not None:
            body["live"] = bool(item.live)
        if kind != "local":
            for conn in self._recipients(kind, chat_id):
                self.send_on(conn, body)
        return {
            "type": "chatItemUpdated",
            "user": self.user_json(user.user_id),
            "chatItem": self.a_item(item),
        }

    def cmd_delete_items(self, a: Args) -> JSON:
        user = self.active_user()
        mode = a["mode"] or "internal"
        ids = [int(x) for x in (a["ids"] or "").split(",")]
        found = [self._own_item(user, a["ref"] or "", i) for i in ids]
        if mode == "broadcast":
            for _, _, item in found:
                if (
                    item.dir_type not in ("directSnd", "groupSnd")
                    or item.content.get("type") != "sndMsgContent"
                ):
                    raise chat_error("invalidChatItemDelete")
        deletions = []
        for kind, chat_id, item in found:
            before = self.a_item(item)
            if mode in ("broadcast", "internalMark"):
                item.deleted = {"type": "deleted", "deletedTs": self.ts(), "chatType": kind}
                item.updated_at = self.ts()
                deletions.append({"deletedChatItem": before, "toChatItem": self.a_item(item)})
                if mode == "broadcast":
                    for conn in self._recipients(kind, chat_id):
                        self.send_on(conn, {"t": "x.msg.del", "sharedMsgId": item.shared_msg_id})
            else:
                self.db.remove_item(item.item_id)
                deletions.append({"deletedChatItem": before})
        return {
            "type": "chatItemsDeleted",
            "user": self.user_json(user.user_id),
            "chatItemDeletions": deletions,
            "byUser": True,
            "timed": False,
        }

    # ------------------------------------------------------------------ reading

    def _chat_ref(self, user: UserRow, ref: str) -> tuple[str, int]:
        kind, chat_id, scope = self.parse_ref(ref)
        if scope is not None:
            raise command_error("member support chats are not supported by the simulator")
        if kind == "direct":
            self.get_contact(user, chat_id)
        elif kind == "group":
            self.get_group(user, chat_id)
        elif kind == "local":
            folder = self.db.folders.get(chat_id)
            if folder is None or folder.user_id != user.user_id:
                raise store_error("noteFolderNotFound", noteFolderId=chat_id)
        else:
            raise command_error(f"{ref}: not supported in this command")
        return kind, chat_id

    def cmd_get_chat(self, a: Args) -> JSON:
        """``/_get chat``: every paging form, as the core's queries page.

        ``count=N`` is the last N items; ``after=ID``/``before=ID`` the N items after/before
        an item of the chat (``chatItemNotFound`` otherwise); ``around=ID`` N before, the item,
        N after, with real stats and ``navInfo``; ``initial=N`` is ``around`` the first unread
        item, or the last N items when none is unread. ``content=`` and ``search=`` select the
        items around the pivot (the pivot itself is always returned). Only the page is read.
        """
        user = self.active_user()
        kind, chat_id = self._chat_ref(user, a["ref"] or "")
        index = self.db.chat_index(kind, chat_id)
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
            item = self.db.items.get(item_id)
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
            stats = rec.chat_stats(self.db, kind, chat_id)
        elif "initial" in parts:
            if search:
                raise store_error(
                    "internalError", message="initial chat pagination doesn't support search"
                )
            first = self._first_unread(index, tag)
            if first is not None:
                around = first, index.position(first) if index is not None else 0
                stats = rec.chat_stats(self.db, kind, chat_id)
                stats["minUnreadItemId"] = first.item_id
            else:
                sel = before(len(items))
        else:
            sel = before(len(items))
        if around is not None:
            sel = [*before(around[1]), around[0], *after(around[1])]
        out: JSON = {
            "type": "apiChat",
            "user": self.user_json(user.user_id),
            "chat": rec.achat(self.db, kind, chat_id, sel, stats, self.now()),
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

    @staticmethod
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

    def cmd_get_chats(self, a: Args) -> JSON:
        """``/_get chats``: the chat list newest first, filtered and paged by chat time.

        Every chat is ordered and filtered from its row and its index (no item is read);
        only the chats of the page are rendered, each with its last item and its stats.
        """
        user = self.user_by_id(a["userId"])
        query: JSON = {"type": "filters", "favorite": False, "unread": False}
        if a.get("query") is not None:
            query = json_object(a["query"], "ChatListQuery")
        search = str(query.get("search", "")).lower() if query.get("type") == "search" else None
        favorite = search is None and bool(query.get("favorite"))
        unread = search is None and bool(query.get("unread"))
        entries: list[tuple[tuple[str, int], str, Any]] = []
        for c in self.db.contacts.values():
            if c.user_id != user.user_id or c.is_user_contact or c.chat_deleted:
                continue
            prof = self.db.profiles[c.profile_id]
            names: tuple[str, ...] = (
                c.local_display_name,
                *_profile_names(prof.profile),
                prof.local_alias,
            )
            if self._chat_listed(
                "direct", c.contact_id, c.favorite, c.unread_chat, names, search, favorite, unread
            ):
                entries.append(((c.chat_ts or c.created_at, c.contact_id), "direct", c))
        for g in self.db.groups.values():
            if g.user_id != user.user_id:
                continue
            names = (
                g.local_display_name,
                *_profile_names(g.profile),
                str(g.profile.get("description") or ""),
            )
            if self._chat_listed(
                "group", g.group_id, g.favorite, g.unread_chat, names, search, favorite, unread
            ):
                entries.append(((g.chat_ts or g.created_at, g.group_id), "group", g))
        if not favorite or unread or search is not None:
            for r in self.db.requests.values():
                if r.user_id != user.user_id:
                    continue
                names = (
                    r.local_display_name,
                    *_profile_names(self.db.profiles[r.profile_id].profile),
                )
                if search is None or any(search in n.lower() for n in names):
                    entries.append(((r.updated_at, r.contact_request_id), "contactRequest", r))
        if a.get("pcc") == "on" and not favorite and not unread:
            for conn in self.db.conns.values():
                if conn.user_id != user.user_id or not self._is_pcc(conn):
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
        now = self.now()
        return {
            "type": "apiChats",
            "user": self.user_json(user.user_id),
            "chats": [self._chat_entry(kind, row, now) for _, kind, row in entries],
        }

    def _chat_listed(
        self,
        kind: str,
        chat_id: int,
        is_favorite: bool,
        unread_chat: bool,
        names: tuple[str, ...],
        search: str | None,
        favorite: bool,
        unread: bool,
    ) -> bool:
        """The core's chat list filters: a search in the names; favorite, unread (marked
        unread or with unread items), or either when both are asked."""
        if search is not None:
            return any(search in n.lower() for n in names)
        if not favorite and not unread:
            return True
        if favorite and is_favorite:
            return True
        if unread:
            index = self.db.chat_index(kind, chat_id)
            return unread_chat or (index is not None and bool(index.unread_keys))
        return False

    def _chat_entry(self, kind: str, row: Any, now: float) -> JSON:
        if kind == "direct":
            return self._preview("direct", row.contact_id, now, unread_chat=row.unread_chat)
        if kind == "group":
            return self._preview("group", row.group_id, now, unread_chat=row.unread_chat)
        if kind == "contactRequest":
            info: JSON = {
                "type": "contactRequest",
                "contactRequest": rec.user_contact_request(self.db, row),
            }
        else:
            info = {"type": "contactConnection", "contactConnection": rec.pending_connection(row)}
        return {"chatInfo": info, "chatItems": [], "chatStats": dict(rec.EMPTY_STATS)}

    def _is_pcc(self, conn: ConnRow) -> bool:
        return (
            conn.pending is not None
            and conn.contact_id is None
            and conn.member_id is None
            and conn.pending_group_id is None
            and conn.status != "ready"
        )

    def _preview(self, kind: str, chat_id: int, now: float, *, unread_chat: bool = False) -> JSON:
        """A chat of the chat list: its info, its last item, its stats (lowest unread ID)."""
        index = self.db.chat_index(kind, chat_id)
        last = index.items[-1:] if index is not None else []
        stats = rec.chat_stats(
            self.db, kind, chat_id, unread_chat=unread_chat, min_unread_by_id=True
        )
        return rec.achat(self.db, kind, chat_id, last, stats, now)

    def cmd_read_items(self, a: Args) -> JSON:
        user = self.active_user()
        kind, chat_id = self._chat_ref(user, a["ref"] or "")
        for item_id in {int(x) for x in (a["ids"] or "").split(",")}:
            item = self.db.items.get(item_id)
            if item is None or (item.chat_type, item.chat_id) != (kind, chat_id):
                continue
            if item.status.get("type") == "rcvNew":
                self.db.set_item_status(item, {"type": "rcvRead"})
        return {
            "type": "itemsReadForChat",
            "user": self.user_json(user.user_id),
            "chatInfo": rec.chat_info(self.db, kind, chat_id),
        }

    def cmd_read_chat(self, a: Args) -> JSON:
        user = self.active_user()
        kind, chat_id = self._chat_ref(user, a["ref"] or "")
        index = self.db.chat_index(kind, chat_id)
        if index is not None:
            for key in list(index.unread_keys):
                item = index.items[bisect.bisect_left(index.keys, key)]
                self.db.set_item_status(item, {"type": "rcvRead"})
        return {"type": "cmdOk", "user_": self.user_json(user.user_id)}

    # ------------------------------------------------------------------ delivery receipts

    def on_sent(self, d: Delivery) -> None:
        """The router accepted a message: its items become ``sndSent``."""
        changed = []
        for item_id in d.receipt or []:
            item = self.db.items.get(item_id)
            if item is not None and item.status.get("type") == "sndNew":
                self.db.set_item_status(item, {"type": "sndSent", "sndProgress": "complete"})
                changed.append(item)
        self._statuses(changed)

    def on_delivered(self, d: Delivery) -> None:
        """The recipient received a direct message: its items become ``sndRcvd``."""
        changed = []
        for item_id in d.receipt or []:
            item = self.db.items.get(item_id)
            if (
                item is not None
                and item.chat_type == "direct"
                and item.status.get("type") in ("sndNew", "sndSent")
            ):
                self.db.set_item_status(
                    item, {"type": "sndRcvd", "msgRcptStatus": "ok", "sndProgress": "complete"}
                )
                changed.append(item)
        self._statuses(changed)

    def _statuses(self, items: list[ItemRow]) -> None:
        if not items:
            return
        user = self.db.users.get(items[0].user_id)
        if user is None:
            return
        self.emit(
            {
                "type": "chatItemsStatusesUpdated",
                "user": self.user_json(user.user_id),
                "chatItems": [self.a_item(i) for i in items],
            }
        )


def _profile_names(profile: JSON) -> tuple[str, str]:
    return str(profile.get("displayName") or ""), str(profile.get("fullName") or "")
