"""The shapes the simulator emits, for its fidelity check.

``simplex_chat.types`` 7.0.2 (``T``, ``CR``, ``CEvt``) describes most responses and events;
``simplex_protocols.core.types`` adds the responses and events it lacks (Service RPC,
prepared chats, ``/_get chat``, ...) and the spec's newer fields. This module adds the few
shapes neither has, and :data:`SHAPE_OVERRIDES`, which widen 7.0.2's closed sets where newer
cores and the seeds add values (peer type ``agent``, contact status ``rejected``, the
``A_SERVICE`` agent errors) and swap in the records with the spec's keys (``protocols``,
``serves``, ``audience``, ``changeFrequency``). Sources: the core API reference, sections 4,
5 and 7.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any, Literal, NotRequired, TypedDict

from simplex_chat.types import CR, CEvt, T

from simplex_protocols.core import types as CT

__all__ = [
    "EVENT_SHAPES",
    "RESPONSE_SHAPES",
    "SHAPE_OVERRIDES",
    "AcceptingBusinessRequest",
    "AgentServiceError",
    "ChangeFrequency",
    "ChatPeerType",
    "ConnectionAliasUpdated",
    "ConnectionMode",
    "ContactAliasUpdated",
    "ContactRequestRejectedEvent",
    "ContactStatus",
    "GroupAliasUpdated",
    "GroupDeletedUser",
    "PublicGroupProfile",
    "SMPAgentErrorAService",
    "VersionInfo",
]

#: Peer types: the core's human, bot, business, and the seeds' agent.
ChatPeerType = Literal["human", "bot", "business", "agent"]

#: Contact status with ``rejected`` (newer cores).
ContactStatus = Literal["active", "deleted", "deletedByUser", "rejected"]

#: ConnectionMode as the core writes it: lower case (simplexmq ``Agent/Protocol.hs``, ``ToJSON
#: ConnectionMode`` lowers the text encoding), where simplex_chat 7.0.2's types say INV/CON.
ConnectionMode = Literal["inv", "con"]

#: A channel's update frequency (spec: Public group audience and update frequency).
ChangeFrequency = Literal["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"]


class AgentServiceErrorRejected(TypedDict):
    type: Literal["rejected"]
    rejectReason: str


class AgentServiceErrorTimeout(TypedDict):
    type: Literal["timeout"]


class AgentServiceErrorNoPendingRequest(TypedDict):
    type: Literal["noPendingRequest"]


class AgentServiceErrorNotDRAddress(TypedDict):
    type: Literal["notDRAddress"]


class AgentServiceErrorBadSignature(TypedDict):
    type: Literal["badSignature"]


AgentServiceError = (
    AgentServiceErrorRejected
    | AgentServiceErrorTimeout
    | AgentServiceErrorNoPendingRequest
    | AgentServiceErrorNotDRAddress
    | AgentServiceErrorBadSignature
)


class SMPAgentErrorAService(TypedDict):
    """``AGENT {agentErr: A_SERVICE {serviceError}}``: Service RPC failures."""

    type: Literal["A_SERVICE"]
    serviceError: AgentServiceError


SMPAgentError = (
    T.SMPAgentError_A_MESSAGE
    | T.SMPAgentError_A_PROHIBITED
    | T.SMPAgentError_A_VERSION
    | T.SMPAgentError_A_LINK
    | T.SMPAgentError_A_CRYPTO
    | T.SMPAgentError_A_DUPLICATE
    | T.SMPAgentError_A_QUEUE
    | SMPAgentErrorAService
)


class PublicGroupProfile(TypedDict):
    """The public group record with ``audience`` and ``changeFrequency``."""

    groupType: T.GroupType
    groupLink: str
    publicGroupId: str
    publicGroupAccess: NotRequired[T.PublicGroupAccess]
    audience: NotRequired[list[str]]
    changeFrequency: NotRequired[ChangeFrequency]


class ContactRequestRejectedEvent(TypedDict):
    """Event: the address owner rejected our request (with notification)."""

    type: Literal["contactRequestRejected"]
    user: T.User
    contact: T.Contact
    rejectionReason: NotRequired[str]


class AcceptingBusinessRequest(TypedDict):
    """Response to ``/_accept`` of a request on a business address (and the auto-accept
    event)."""

    type: Literal["acceptingBusinessRequest"]
    user: T.User
    groupInfo: T.GroupInfo


class CoreVersionInfo(TypedDict):
    """``CoreVersionInfo`` (``Simplex.Chat.Controller``)."""

    version: str
    simplexmqVersion: str
    simplexmqCommit: str


class VersionInfo(TypedDict):
    """Response to ``/version`` (``/v``): ``CRVersionInfo``."""

    type: Literal["versionInfo"]
    versionInfo: CoreVersionInfo
    chatMigrations: list[Any]
    agentMigrations: list[Any]


class ContactAliasUpdated(TypedDict):
    """Response to ``/_set alias @<contactId>``."""

    type: Literal["contactAliasUpdated"]
    user: T.User
    toContact: T.Contact


class GroupAliasUpdated(TypedDict):
    """Response to ``/_set alias #<groupId>``."""

    type: Literal["groupAliasUpdated"]
    user: T.User
    toGroup: T.GroupInfo


class ConnectionAliasUpdated(TypedDict):
    """Response to ``/_set alias :<connId>``."""

    type: Literal["connectionAliasUpdated"]
    user: T.User
    toConnection: T.PendingContactConnection


class GroupDeletedUser(TypedDict):
    """Response to ``/_delete #<groupId>`` (the newest core adds ``localDeletion``)."""

    type: Literal["groupDeletedUser"]
    user: T.User
    groupInfo: T.GroupInfo
    msgSigned: bool
    localDeletion: NotRequired[bool]


#: Replacements applied wherever the checker meets the left-hand type.
SHAPE_OVERRIDES: tuple[tuple[Any, Any], ...] = (
    (T.ChatPeerType, ChatPeerType),
    (T.ContactStatus, ContactStatus),
    (T.SMPAgentError, SMPAgentError),
    (T.Preferences, CT.Preferences),
    (T.GroupPreferences, CT.GroupPreferences),
    (T.PublicGroupProfile, PublicGroupProfile),
    (T.ContactShortLinkData, CT.ContactShortLinkData),
    (T.ConnectionMode, ConnectionMode),
)


def _tagged(module: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for _, cls in inspect.getmembers(module, inspect.isclass):
        if not typing.is_typeddict(cls):
            continue
        hints = typing.get_type_hints(cls)
        tag = hints.get("type")
        if typing.get_origin(tag) is Literal:
            (value,) = typing.get_args(tag)
            out[str(value)] = cls
    return out


def _core_types(names: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        cls = getattr(CT, name)
        (value,) = typing.get_args(typing.get_type_hints(cls)["type"])
        out[str(value)] = cls
    return out


#: Shapes of responses (frames with ``corrId``), by ``type`` tag.
RESPONSE_SHAPES: dict[str, Any] = {
    **_tagged(CR),
    **_core_types(
        (
            "ApiChat",
            "ItemsReadForChat",
            "ContactInfo",
            "GroupInfoResponse",
            "NetworkConfigResponse",
            "SQLResult",
            "NewPreparedChat",
            "StartedConnectionToContact",
            "StartedConnectionToGroup",
            "SentInvitationToContact",
            "ServiceResponse",
            "ServiceReplyAccepted",
        )
    ),
    "acceptingBusinessRequest": AcceptingBusinessRequest,
    "groupDeletedUser": GroupDeletedUser,
    "versionInfo": VersionInfo,
    "contactAliasUpdated": ContactAliasUpdated,
    "groupAliasUpdated": GroupAliasUpdated,
    "connectionAliasUpdated": ConnectionAliasUpdated,
}

#: Shapes of events (frames without ``corrId``), by ``type`` tag.
EVENT_SHAPES: dict[str, Any] = {
    **_tagged(CEvt),
    **_core_types(("ServiceRequest", "ServiceReplySent", "ChatItemsStatusesUpdated")),
    "contactRequestRejected": ContactRequestRejectedEvent,
}
