"""Typed views of the chat core's JSON: the facts apps read, without walking dicts by hand.

Each view is a small frozen dataclass around one object of a response or an event, kept as it
arrived (never copied: a view costs one small object, however large the JSON), with properties
for what apps need: a chat's reference, kind and display name, our membership, a contact's
connection status, an item's sender and text, a connection plan's parts. The objects are those
``simplex_chat.types`` describes (``T.ChatInfo``, ``T.ChatItem``, ``T.GroupMember``,
``CR.ConnectionPlan``, ...); a view reads them without trusting their shape: a missing or
mistyped field reads as ``None``, ``""``, ``False`` or an empty mapping, never as an error.

The meanings follow the core's Haskell where it defines one (``memberCurrent'``,
``memberActive``, ``incognitoMembership``, the verified SimpleX names of profiles); wording
for people (tool results, cards, terminal lines) stays with the apps.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

from ._commands import ChatRef, ContactRef, GroupRef
from ._events import _positive_id as _chat_id

__all__ = [
    "AChatItemView",
    "ChatInfoView",
    "ChatItemView",
    "ChatView",
    "ConnectionPlanView",
    "EventView",
    "JoinResponseView",
    "MemberView",
    "first_item_id",
    "link_text",
]

_EMPTY: Final[Mapping[str, Any]] = {}
#: A part of a view not read yet.
_UNSET: Final = object()

#: Member statuses of ``memberCurrent'`` (Types.hs): the member may still post and read.
_CURRENT_STATUSES: Final = frozenset(
    {"introduced", "intro-inv", "accepted", "announced", "connected", "complete", "creator"}
)
#: Member statuses of ``memberPending`` (Types.hs): admitted once an admin approves or reviews.
_PENDING_STATUSES: Final = frozenset({"pending_approval", "pending_review"})
#: Member statuses of ``memberActive`` (Types.hs): connected to the group.
_ACTIVE_STATUSES: Final = frozenset({"connected", "complete", "creator"})
#: The directions of the items the user wrote (``CIDirection``).
_OWN_DIRECTIONS: Final = frozenset({"directSnd", "groupSnd", "localSnd"})
_MESSAGE_CONTENT: Final = frozenset({"rcvMsgContent", "sndMsgContent"})


def _obj(value: Any) -> Mapping[str, Any]:
    # the core's JSON is plain dicts, and absent parts are None: both are checked first, as
    # the Mapping check costs more (lists of a thousand chats read each chat many times)
    if type(value) is dict:
        return value
    if value is None or not isinstance(value, Mapping):
        return _EMPTY
    return value


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def link_text(conn_link: Any) -> str | None:
    """The link to show or print of a ``CreatedConnLink``: the short link, else the full one."""
    link = _obj(conn_link)
    return _str(link.get("connShortLink")) or _str(link.get("connFullLink"))


def first_item_id(a_chat_items: Any) -> int | None:
    """``meta.itemId`` of the first AChatItem of a list (the item a ``/_send`` created)."""
    if not isinstance(a_chat_items, Sequence) or isinstance(a_chat_items, str) or not a_chat_items:
        return None
    return ChatItemView(_obj(_obj(a_chat_items[0]).get("chatItem"))).item_id


@dataclass(frozen=True, slots=True)
class MemberView:
    """A group member (``T.GroupMember``): a member of a group, or our own ``membership``."""

    raw: Mapping[str, Any]

    @property
    def member_id(self) -> int | None:
        """``groupMemberId``: the member's row in our database (what commands take)."""
        return _int(self.raw.get("groupMemberId"))

    @property
    def profile(self) -> Mapping[str, Any]:
        """``memberProfile``: the profile the member shows in this group."""
        return _obj(self.raw.get("memberProfile"))

    @property
    def display_name(self) -> str:
        """The profile's display name, else the local one, else ``""``."""
        return _str(self.profile.get("displayName")) or _str(self.raw.get("localDisplayName")) or ""

    @property
    def peer_type(self) -> str | None:
        """The profile's ``peerType`` as it is (``human``, ``bot``, ``agent``, ... or newer)."""
        return _str(self.profile.get("peerType"))

    @property
    def role(self) -> str | None:
        """``memberRole``."""
        return _str(self.raw.get("memberRole"))

    @property
    def status(self) -> str | None:
        """``memberStatus``."""
        return _str(self.raw.get("memberStatus"))

    @property
    def current(self) -> bool:
        """The status is current (``memberCurrent'``): the member may still post and read."""
        return self.status in _CURRENT_STATUSES

    @property
    def pending(self) -> bool:
        """The member waits for an admin's approval or review (``memberPending``)."""
        return self.status in _PENDING_STATUSES

    @property
    def active(self) -> bool:
        """Connected to the group (``memberActive``: connected, complete or creator)."""
        return self.status in _ACTIVE_STATUSES

    @property
    def incognito(self) -> bool:
        """The member profile differs from the user's main profile (``incognitoMembership``)."""
        own = self.profile.get("profileId")
        base = self.raw.get("memberContactProfileId")
        return own is not None and base is not None and own != base

    @property
    def conn_id(self) -> int | None:
        """``activeConn.connId``: the member's connection (a joined link's pending one too)."""
        return _int(_obj(self.raw.get("activeConn")).get("connId"))


@dataclass(frozen=True, slots=True)
class ChatInfoView:
    """A chat (``T.ChatInfo``): a contact (``direct``), a group, or another kind of chat.

    The contact or group and its profile are looked up when the view is made, and our
    membership at its first use: a chat's facts read them several times, and a list reads a
    thousand chats.
    """

    raw: Mapping[str, Any]
    _entity: Mapping[str, Any] = field(init=False, repr=False, compare=False)
    _profile: Mapping[str, Any] = field(init=False, repr=False, compare=False)
    _membership: Any = field(default=_UNSET, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        kind = self.raw.get("type")
        if kind == "direct":
            entity = _obj(self.raw.get("contact"))
            profile = _obj(entity.get("profile"))
        elif kind == "group":
            entity = _obj(self.raw.get("groupInfo"))
            profile = _obj(entity.get("groupProfile"))
        else:
            entity = profile = _EMPTY
        # a frozen dataclass: the view keeps what it looked up
        object.__setattr__(self, "_entity", entity)
        object.__setattr__(self, "_profile", profile)

    @property
    def type(self) -> str:
        """``direct``, ``group``, ``local``, ``contactRequest``, ``contactConnection`` (or newer)."""
        return _str(self.raw.get("type")) or ""

    @property
    def ref(self) -> ChatRef | None:
        """``@contactId`` or ``#groupId``; ``None`` for other chats."""
        kind = self.raw.get("type")
        if kind == "direct":
            contact_id = _chat_id(self._entity.get("contactId"))
            return ContactRef(contact_id) if contact_id is not None else None
        if kind == "group":
            group_id = _chat_id(self._entity.get("groupId"))
            return GroupRef(group_id) if group_id is not None else None
        return None

    @property
    def is_direct(self) -> bool:
        return self.raw.get("type") == "direct"

    @property
    def is_group(self) -> bool:
        return self.raw.get("type") == "group"

    @property
    def contact(self) -> Mapping[str, Any]:
        """The contact of a direct chat (empty for other chats)."""
        return self._entity if self.raw.get("type") == "direct" else _EMPTY

    @property
    def group_info(self) -> Mapping[str, Any]:
        """The ``groupInfo`` of a group chat (empty for other chats)."""
        return self._entity if self.raw.get("type") == "group" else _EMPTY

    @property
    def entity(self) -> Mapping[str, Any]:
        """The contact or the group info: what holds the chat's custom data and times."""
        return self._entity

    @property
    def profile(self) -> Mapping[str, Any]:
        """The contact's ``profile`` or the group's ``groupProfile``."""
        return self._profile

    @property
    def display_name(self) -> str:
        """The contact's or group's display name, else the local one, else ``""``."""
        return (
            _str(self._profile.get("displayName"))
            or _str(self._entity.get("localDisplayName"))
            or ""
        )

    @property
    def peer_type(self) -> str | None:
        """A contact's ``peerType`` as its profile has it (``None`` for groups)."""
        return _str(self._profile.get("peerType")) if self.raw.get("type") == "direct" else None

    @property
    def custom_data(self) -> Mapping[str, Any]:
        """The chat's custom data (``/_set custom``), empty when it has none."""
        return _obj(self._entity.get("customData"))

    @property
    def chat_ts(self) -> str | None:
        """``chatTs`` (else ``updatedAt``): where the chat sorts in ``/_get chats`` pages."""
        return _str(self._entity.get("chatTs")) or _str(self._entity.get("updatedAt"))

    @property
    def membership(self) -> MemberView | None:
        """Our own member record in a group chat (``groupInfo.membership``)."""
        membership = self._membership
        if membership is _UNSET:
            member = self.group_info.get("membership")
            membership = MemberView(member) if isinstance(member, Mapping) else None
            # a frozen dataclass: the view keeps what it read
            object.__setattr__(self, "_membership", membership)
        return cast("MemberView | None", membership)

    @property
    def scoped(self) -> bool:
        """A group item's chat is a member-support scope, not the group's main chat."""
        return self.raw.get("groupChatScope") is not None

    @property
    def connection_status(self) -> str | None:
        """A contact's ``activeConn.connStatus`` (``ready`` once connected; ``None`` for groups)."""
        status = _obj(self.contact.get("activeConn")).get("connStatus")
        # a status with data is an object with a type; a plain one is its tag
        return _str(_obj(status).get("type")) or _str(status)

    @property
    def contact_conn_id(self) -> int | None:
        """A contact's ``activeConn.connId``."""
        return _int(_obj(self.contact.get("activeConn")).get("connId"))

    @property
    def connected(self) -> bool:
        """Contacts: the connection is ready; groups: our membership is active."""
        if self.is_direct:
            return self.connection_status == "ready"
        membership = self.membership
        return membership is not None and membership.active

    @property
    def incognito(self) -> bool:
        """We use an incognito profile in this chat: a contact's ``activeConn`` names one
        (``customUserProfileId``), or our membership profile is not our main one."""
        if self.is_direct:
            return _obj(self.contact.get("activeConn")).get("customUserProfileId") is not None
        membership = self.membership
        return membership is not None and membership.incognito

    @property
    def is_business(self) -> bool:
        """A business chat: a group with ``businessChat``."""
        return self.group_info.get("businessChat") is not None

    @property
    def is_channel(self) -> bool:
        """A channel: a public group of type channel, or a group served by relays."""
        if self.raw.get("type") != "group":
            return False
        public = _obj(self._profile.get("publicGroup"))
        return public.get("groupType") == "channel" or self._entity.get("useRelays") is True

    @property
    def simplex_name(self) -> str | None:
        """The verified SimpleX name: ``@`` + a contact's claimed domain, ``#`` + a group's."""
        if self.raw.get("type") == "direct":
            profile = self._profile
            domain = _str(_obj(profile.get("contactDomain")).get("domain"))
            verified = profile.get("contactDomainVerified") is True
            return f"@{domain}" if domain and verified else None
        access = _obj(_obj(self._profile.get("publicGroup")).get("publicGroupAccess"))
        domain = _str(_obj(access.get("groupDomainClaim")).get("domain"))
        verified = self.group_info.get("groupDomainVerified") is True
        return f"#{domain}" if domain and verified else None

    @property
    def commands(self) -> Any:
        """The bot commands the chat advertises, as the core has them (``ChatBotCommand`` list):
        a contact's profile preferences, a group's group preferences."""
        key = "preferences" if self.is_direct else "groupPreferences"
        return _obj(self.profile.get(key)).get("commands")


@dataclass(frozen=True, slots=True)
class ChatItemView:
    """An item of a chat (``T.ChatItem``): a message, or an event or feature item."""

    raw: Mapping[str, Any]

    @property
    def meta(self) -> Mapping[str, Any]:
        return _obj(self.raw.get("meta"))

    @property
    def item_id(self) -> int | None:
        """``meta.itemId``: the item's ID in our database."""
        return _int(self.meta.get("itemId"))

    @property
    def content_type(self) -> str | None:
        """``content.type``: ``rcvMsgContent``, ``sndMsgContent``, ``rcvGroupEvent``, ..."""
        return _str(_obj(self.raw.get("content")).get("type"))

    @property
    def is_message(self) -> bool:
        """A message someone wrote (``rcvMsgContent`` or ``sndMsgContent``)."""
        return self.content_type in _MESSAGE_CONTENT

    @property
    def is_received(self) -> bool:
        """A message someone sent us (``rcvMsgContent``)."""
        return self.content_type == "rcvMsgContent"

    @property
    def live(self) -> bool:
        """Still being written by its sender (``meta.itemLive``)."""
        return self.meta.get("itemLive") is True

    @property
    def unread(self) -> bool:
        """New to us: ``meta.itemStatus`` is ``rcvNew``."""
        return _obj(self.meta.get("itemStatus")).get("type") == "rcvNew"

    @property
    def direction(self) -> str | None:
        """``chatDir.type``: ``directRcv``, ``groupSnd``, ``channelRcv``, ..."""
        return _str(_obj(self.raw.get("chatDir")).get("type"))

    @property
    def own(self) -> bool:
        """We wrote it (a ``...Snd`` direction)."""
        return self.direction in _OWN_DIRECTIONS

    @property
    def sender(self) -> MemberView | None:
        """The member who sent a group item (``groupRcv``)."""
        direction = _obj(self.raw.get("chatDir"))
        if direction.get("type") != "groupRcv":
            return None
        return MemberView(_obj(direction.get("groupMember")))

    def sender_name(self, chat: ChatInfoView) -> str | None:
        """Who wrote a received item: the group member, else the contact or channel of ``chat``;
        ``None`` for our own items."""
        if self.own:
            return None
        member = self.sender
        return member.display_name if member is not None else chat.display_name

    @property
    def text(self) -> str | None:
        """A message's text (``content.msgContent.text``)."""
        return _str(_obj(_obj(self.raw.get("content")).get("msgContent")).get("text"))

    @property
    def item_text(self) -> str | None:
        """``meta.itemText``: the core's one-line description of any item."""
        return _str(self.meta.get("itemText"))

    @property
    def item_ts(self) -> str | None:
        """``meta.itemTs``: when the sender sent it."""
        return _str(self.meta.get("itemTs"))

    @property
    def quoted_item_id(self) -> int | None:
        """The ID of the item it replies to (``quotedItem.itemId``)."""
        return _int(_obj(self.raw.get("quotedItem")).get("itemId"))

    @property
    def mentions_user(self) -> bool:
        """It mentions us (``meta.userMention``)."""
        return self.meta.get("userMention") is True


@dataclass(frozen=True, slots=True)
class ChatView:
    """A chat with a page of items and its stats (``AChat``: ``apiChat``, ``apiChats``)."""

    raw: Mapping[str, Any]

    @property
    def info(self) -> ChatInfoView:
        """The chat."""
        return ChatInfoView(_obj(self.raw.get("chatInfo")))

    def items(self) -> Iterator[ChatItemView]:
        """The page's items, oldest first (entries that are not objects are skipped)."""
        items = self.raw.get("chatItems")
        for item in items if isinstance(items, list) else ():
            if isinstance(item, Mapping):
                yield ChatItemView(item)

    @property
    def stats(self) -> Mapping[str, Any]:
        return _obj(self.raw.get("chatStats"))

    @property
    def unread_count(self) -> int:
        """``chatStats.unreadCount`` (0 when absent)."""
        return _int(self.stats.get("unreadCount")) or 0

    @property
    def min_unread_item_id(self) -> int | None:
        """``chatStats.minUnreadItemId``: the oldest unread item."""
        return _int(self.stats.get("minUnreadItemId"))


@dataclass(frozen=True, slots=True)
class ConnectionPlanView:
    """What connecting to a link or name would do (the ``connectionPlan`` response)."""

    raw: Mapping[str, Any]

    @property
    def plan(self) -> Mapping[str, Any]:
        """``connectionPlan``."""
        return _obj(self.raw.get("connectionPlan"))

    @property
    def plan_type(self) -> str:
        """``invitationLink``, ``contactAddress``, ``groupLink`` or ``error``."""
        return _str(self.plan.get("type")) or ""

    @property
    def details(self) -> Mapping[str, Any]:
        """The plan of its type: ``invitationLinkPlan``, ``contactAddressPlan``, ``groupLinkPlan``."""
        return _obj(self.plan.get(f"{self.plan_type}Plan"))

    @property
    def sub_type(self) -> str:
        """The detailed plan's type: ``ok``, ``known``, ``ownLink``, ``connecting``, ..."""
        return _str(self.details.get("type")) or ""

    @property
    def chat_error(self) -> Mapping[str, Any]:
        """The ChatError of a plan of type ``error``."""
        return _obj(self.plan.get("chatError"))

    @property
    def full_link(self) -> str | None:
        """``connLink.connFullLink``: the link to prepare or connect with."""
        return _str(_obj(self.raw.get("connLink")).get("connFullLink")) or None

    @property
    def short_link(self) -> str | None:
        """``connLink.connShortLink``."""
        return _str(_obj(self.raw.get("connLink")).get("connShortLink")) or None

    @property
    def contact_link_data(self) -> Mapping[str, Any]:
        """A contact address's or invitation's link data (``contactSLinkData_``)."""
        return _obj(self.details.get("contactSLinkData_"))

    @property
    def contact(self) -> Mapping[str, Any]:
        """The contact a plan knows (``known``, ``contactViaAddress``)."""
        return _obj(self.details.get("contact"))

    @property
    def group_link_data(self) -> Mapping[str, Any]:
        """A group link's data (``groupSLinkData_``)."""
        return _obj(self.details.get("groupSLinkData_"))

    @property
    def group_info(self) -> Mapping[str, Any]:
        """The group a group link plan knows (``groupInfo``, or ``groupInfo_``)."""
        return _obj(self.details.get("groupInfo") or self.details.get("groupInfo_"))

    @property
    def business(self) -> bool:
        """A business address's link data (``business``)."""
        return self.contact_link_data.get("business") is True

    @property
    def profile(self) -> Mapping[str, Any]:
        """The profile behind a contact address or invitation: from the link data, else the
        known contact's."""
        return _obj(self.contact_link_data.get("profile")) or _obj(self.contact.get("profile"))

    @property
    def group_profile(self) -> Mapping[str, Any]:
        """The profile of a group link's group: from the link data, else the known group's."""
        return _obj(self.group_link_data.get("groupProfile")) or _obj(
            self.group_info.get("groupProfile")
        )

    @property
    def link_message_text(self) -> str | None:
        """The text of the message in a contact address's link data (its welcome message)."""
        return _str(_obj(self.contact_link_data.get("message")).get("text")) or None

    @property
    def known_contact_id(self) -> int | None:
        """The ID of the contact the plan knows, when a chat reference can name it."""
        return _chat_id(self.contact.get("contactId"))

    @property
    def known_group_id(self) -> int | None:
        """The ID of the group the plan knows, when a chat reference can name it."""
        return _chat_id(self.group_info.get("groupId"))

    def commands(self) -> Any:
        """The bot commands of the profile (contact plans) or the group profile (group links),
        as the core has them."""
        if self.plan_type == "groupLink":
            return _obj(self.group_profile.get("groupPreferences")).get("commands")
        return _obj(self.profile.get("preferences")).get("commands")

    @property
    def direct(self) -> bool:
        """A group link joins members directly; ``False`` for a channel's link."""
        return _obj(self.details.get("groupSLinkInfo_")).get("direct") is not False

    def channel_link_data(self) -> Mapping[str, Any] | None:
        """The link data of a channel's link that can be joined (a group link, plan ``ok``,
        ``direct`` off), which is prepared before it is joined; ``None`` for other links."""
        if self.plan_type != "groupLink" or self.sub_type != "ok" or self.direct:
            return None
        data = self.details.get("groupSLinkData_")
        return data if isinstance(data, Mapping) else {}


@dataclass(frozen=True, slots=True)
class JoinResponseView:
    """The response to a connecting command (``/_connect ...``): what it created.

    ``sentInvitation`` and ``sentConfirmation`` carry a pending connection;
    ``startedConnectionToContact``, ``sentInvitationToContact`` and ``contactAlreadyExists`` a
    contact; ``startedConnectionToGroup`` a group.
    """

    raw: Mapping[str, Any]

    @property
    def type(self) -> str:
        return _str(self.raw.get("type")) or ""

    @property
    def pending_conn_id(self) -> int | None:
        """``connection.pccConnId`` of a pending connection."""
        return _int(_obj(self.raw.get("connection")).get("pccConnId"))

    @property
    def contact_id(self) -> int | None:
        """``contact.contactId``, when it is an ID a chat reference can name."""
        return _chat_id(_obj(self.raw.get("contact")).get("contactId"))

    @property
    def group_id(self) -> int | None:
        """``groupInfo.groupId``, when it is an ID a chat reference can name."""
        return _chat_id(_obj(self.raw.get("groupInfo")).get("groupId"))

    @property
    def incognito_name(self) -> str | None:
        """The display name of the incognito profile used (``customUserProfile``)."""
        return _str(_obj(self.raw.get("customUserProfile")).get("displayName"))


@dataclass(frozen=True, slots=True)
class AChatItemView:
    """An item with its chat (``T.AChatItem``), as events and ``/_send`` carry them."""

    raw: Mapping[str, Any]

    @property
    def chat(self) -> ChatInfoView:
        return ChatInfoView(_obj(self.raw.get("chatInfo")))

    @property
    def item(self) -> ChatItemView:
        return ChatItemView(_obj(self.raw.get("chatItem")))


@dataclass(frozen=True, slots=True)
class EventView:
    """An event of the core: its type and the parts the toolkit's apps read.

    Which parts an event has depends on its type: ``newChatItems`` (:meth:`chat_items`),
    ``chatItemUpdated`` (:attr:`chat_item`), ``chatItemsDeleted`` (:meth:`deleted_items`),
    ``contactConnected`` (:attr:`contact`), ``userJoinedGroup`` (:attr:`group_info`,
    :attr:`host_member`), and the group events about a member (``joinedGroupMember``,
    ``memberRole``, ``leftMember``, ``deletedMember``, ...: :attr:`group_info`,
    :attr:`member`, :attr:`to_role`).
    """

    raw: Mapping[str, Any]

    @property
    def type(self) -> str:
        return _str(self.raw.get("type")) or ""

    def chat_items(self) -> Iterator[AChatItemView]:
        """The items of ``newChatItems`` (entries that are not objects are skipped)."""
        items = self.raw.get("chatItems")
        for item in items if isinstance(items, list) else ():
            if isinstance(item, Mapping):
                yield AChatItemView(item)

    @property
    def chat_item(self) -> AChatItemView:
        """The item of ``chatItemUpdated``."""
        return AChatItemView(_obj(self.raw.get("chatItem")))

    def deleted_items(self) -> Iterator[AChatItemView]:
        """The deleted items of ``chatItemsDeleted`` (``deletedChatItem`` of each deletion)."""
        deletions = self.raw.get("chatItemDeletions")
        for deletion in deletions if isinstance(deletions, list) else ():
            yield AChatItemView(_obj(_obj(deletion).get("deletedChatItem")))

    @property
    def contact(self) -> ChatInfoView:
        """The contact of ``contactConnected``, as its direct chat."""
        return ChatInfoView({"type": "direct", "contact": _obj(self.raw.get("contact"))})

    @property
    def group_info(self) -> ChatInfoView:
        """The group of a group event, as its group chat."""
        return ChatInfoView({"type": "group", "groupInfo": _obj(self.raw.get("groupInfo"))})

    @property
    def group_id(self) -> int | None:
        """``groupInfo.groupId``."""
        return _int(_obj(self.raw.get("groupInfo")).get("groupId"))

    @property
    def host_member(self) -> MemberView:
        """The host member of ``userJoinedGroup`` (the member whose link was joined)."""
        return MemberView(_obj(self.raw.get("hostMember")))

    @property
    def member(self) -> MemberView | None:
        """The member a group event is about (``member``, or ``deletedMember``)."""
        key = "deletedMember" if self.type == "deletedMember" else "member"
        member = self.raw.get(key)
        return MemberView(member) if isinstance(member, Mapping) and member else None

    @property
    def to_role(self) -> str | None:
        """The new role of ``memberRole``."""
        return _str(self.raw.get("toRole"))
