"""Shapes of the chat core's JSON that the official ``simplex_chat.types`` (7.0.2) lacks.

Where ``simplex_chat.types`` describes a shape, the toolkit uses it (``T.User``, ``T.Contact``,
``T.GroupInfo``, ``T.AChatItem``, ``CR.NewChatItems``, ``CEvt.ContactConnected``, ...). The
TypedDicts here add what newer cores and the spec "Agent protocols over SimpleX" rely on:
peer type ``agent``, the ``protocols`` preference, ``serves`` in contact address link data,
``audience`` and ``changeFrequency`` of public groups, Service RPC events and responses, and
responses that 7.0.2 does not list. They describe, they do not validate: unknown keys and
unknown enum strings are kept by the core client wherever they appear.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from simplex_chat.types import T

__all__ = [
    "KNOWN_PEER_TYPES",
    "AChat",
    "ApiChat",
    "ChatItemsStatusesUpdated",
    "ContactInfo",
    "ContactShortLinkData",
    "GroupInfoResponse",
    "GroupPreferences",
    "GroupProfile",
    "ItemsReadForChat",
    "NetworkConfigResponse",
    "NewPreparedChat",
    "Preferences",
    "Profile",
    "ProtocolDeclaration",
    "ProtocolTransports",
    "PublicGroupProfile",
    "SQLResult",
    "SentInvitationToContact",
    "ServiceReplyAccepted",
    "ServiceReplySent",
    "ServiceRequest",
    "ServiceResponse",
    "StartedConnectionToContact",
    "StartedConnectionToGroup",
]

#: Peer types the toolkit knows (``ChatPeerType``; ``agent`` is the seeds' addition). Others
#: may arrive and are kept as they are.
KNOWN_PEER_TYPES = ("human", "bot", "business", "agent")


class ProtocolTransports(TypedDict, total=False):
    """``transports`` of a protocol declaration: absent means false."""

    chat: bool
    rpc: bool


class ProtocolDeclaration(TypedDict):
    """One entry of the ``protocols`` preference (spec: Profile declarations)."""

    versions: list[str]
    transports: ProtocolTransports


class Preferences(T.Preferences):
    """User and contact preferences, with the spec's ``protocols`` key."""

    protocols: NotRequired[dict[str, ProtocolDeclaration]]


class GroupPreferences(T.GroupPreferences):
    """Group preferences, with the spec's ``protocols`` key (business chats copy it)."""

    protocols: NotRequired[dict[str, ProtocolDeclaration]]


class Profile(TypedDict):
    """A user or contact profile; ``peerType`` may be ``agent`` (or a newer value)."""

    displayName: str
    fullName: str
    shortDescr: NotRequired[str]
    description: NotRequired[str]
    image: NotRequired[str]
    contactLink: NotRequired[str]
    preferences: NotRequired[Preferences]
    peerType: NotRequired[str]
    badge: NotRequired[T.BadgeProof]
    contactDomain: NotRequired[T.SimplexDomainClaim]


class PublicGroupProfile(T.PublicGroupProfile):
    """A public group record with the spec's audience and update frequency.

    ``audience`` lists peer types (absent means ``["human"]``); ``changeFrequency`` is one of
    ``always``, ``hourly``, ``daily``, ``weekly``, ``monthly``, ``yearly``, ``never``
    (channels).
    """

    audience: NotRequired[list[str]]
    changeFrequency: NotRequired[str]


class GroupProfile(TypedDict):
    """A group profile whose public group record may carry audience and frequency."""

    displayName: str
    fullName: str
    shortDescr: NotRequired[str]
    description: NotRequired[str]
    image: NotRequired[str]
    publicGroup: NotRequired[PublicGroupProfile]
    groupPreferences: NotRequired[GroupPreferences]
    memberAdmission: NotRequired[T.GroupMemberAdmission]


class ContactShortLinkData(TypedDict):
    """Contact address link data, with the spec's ``serves`` (peer types served)."""

    profile: Profile
    message: NotRequired[T.MsgContent]
    business: bool
    serves: NotRequired[list[str]]
    localBadge: NotRequired[T.LocalBadge]


class AChat(TypedDict):
    """A chat with its items and stats (``apiChat``, ``newPreparedChat``, ``apiChats``)."""

    chatInfo: T.ChatInfo
    chatItems: list[T.ChatItem]
    chatStats: T.ChatStats


# --------------------------------------------------------------------------- responses


class ApiChat(TypedDict):
    """Response to ``/_get chat``."""

    type: Literal["apiChat"]
    user: T.User
    chat: AChat
    navInfo: NotRequired[dict[str, Any]]


class ItemsReadForChat(TypedDict):
    """Response to ``/_read chat items``."""

    type: Literal["itemsReadForChat"]
    user: T.User
    chatInfo: T.ChatInfo


class ContactInfo(TypedDict):
    """Response to ``/_info @<contactId>``; ``customUserProfile`` is the incognito profile."""

    type: Literal["contactInfo"]
    user: T.User
    contact: T.Contact
    connectionStats_: NotRequired[dict[str, Any]]
    customUserProfile: NotRequired[Profile]


class GroupInfoResponse(TypedDict):
    """Response to ``/_info #<groupId>``."""

    type: Literal["groupInfo"]
    user: T.User
    groupInfo: T.GroupInfo


class NetworkConfigResponse(TypedDict):
    """Response to ``/network``."""

    type: Literal["networkConfig"]
    networkConfig: dict[str, Any]


class SQLResult(TypedDict):
    """Response to ``/sql chat`` and ``/sql agent``."""

    type: Literal["sQLResult"]
    rows: list[str]


class NewPreparedChat(TypedDict):
    """Response to ``/_prepare contact`` and ``/_prepare group``."""

    type: Literal["newPreparedChat"]
    user: T.User
    chat: AChat


class StartedConnectionToContact(TypedDict):
    """Response to ``/_connect contact @<contactId>``."""

    type: Literal["startedConnectionToContact"]
    user: T.User
    contact: T.Contact
    customUserProfile: NotRequired[Profile]


class StartedConnectionToGroup(TypedDict):
    """Response to ``/_connect group #<groupId>``."""

    type: Literal["startedConnectionToGroup"]
    user: T.User
    groupInfo: T.GroupInfo
    customUserProfile: NotRequired[Profile]
    relayResults: NotRequired[list[dict[str, Any]]]


class SentInvitationToContact(TypedDict):
    """Response to ``/_connect contact <userId> <contactId>``."""

    type: Literal["sentInvitationToContact"]
    user: T.User
    contact: T.Contact
    customUserProfile: NotRequired[Profile]


class ServiceResponse(TypedDict):
    """Response to ``/_service_request``: the responder's answer."""

    type: Literal["serviceResponse"]
    user: T.User
    responseData: dict[str, Any]


class ServiceReplyAccepted(TypedDict):
    """Response to ``/_service_response``; ``connectionId`` matches ``serviceReplySent``."""

    type: Literal["serviceReplyAccepted"]
    user: T.User
    connectionId: str


# --------------------------------------------------------------------------- events


class ServiceRequest(TypedDict):
    """Event: a Service RPC request arrived on our address (core started with
    ``service_requests=on``). ``signerKey`` is present when the request was signed."""

    type: Literal["serviceRequest"]
    user: T.User
    requestId: str
    signerKey: NotRequired[str]
    requestData: dict[str, Any]


class ServiceReplySent(TypedDict):
    """Event: our ``/_service_response`` was delivered."""

    type: Literal["serviceReplySent"]
    connectionId: str


class ChatItemsStatusesUpdated(TypedDict):
    """Event: delivery statuses of our items changed."""

    type: Literal["chatItemsStatusesUpdated"]
    user: T.User
    chatItems: list[T.AChatItem]
