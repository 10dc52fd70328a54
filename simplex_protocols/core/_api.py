"""ChatAPI: typed async methods over :class:`ChatCore` for the commands the toolkit uses.

Each method builds its command with :mod:`simplex_protocols.core.commands`, sends it, checks
the response ``type`` and returns the part the toolkit reads. Every method can raise:

- :class:`~simplex_protocols.errors.CoreError`: the core refused the command;
- :class:`~simplex_protocols.errors.UnexpectedResponseError`: the core answered with another
  response type (the error names the expected and the received tags);
- :class:`~simplex_protocols.errors.CoreConnectionError`: the connection was lost;
- :class:`~simplex_protocols.errors.CommandArgumentError`: an argument was invalid (nothing
  was sent).

The API stays usable after each of them (after a lost connection, once
:meth:`ChatCore.reconnect` succeeded).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, cast

from simplex_protocols.errors import CoreError, UnexpectedResponseError

from . import _commands as cmds
from ._client import ChatCore
from ._commands import ChatRef, MemberRole

# The shapes are for the type checker only (the casts name them in quotes): importing
# simplex_chat.types imports the whole simplex_chat package, the embedded core's bindings too,
# which a program talking to a core over WebSocket never uses.
if TYPE_CHECKING:
    from simplex_chat.types import CR, T

    from ._types import (
        AChat,
        ContactInfo,
        NewPreparedChat,
        SentInvitationToContact,
        StartedConnectionToContact,
        StartedConnectionToGroup,
    )

__all__ = ["ChatAPI"]


class ChatAPI:
    """Typed commands over a :class:`ChatCore`.

    Args:
        core: an entered :class:`ChatCore`.
    """

    def __init__(self, core: ChatCore) -> None:
        self.core = core
        #: The core parses only ``/_groups<userId>`` (found by :meth:`list_groups`).
        self._groups_glued = False

    async def _send(self, cmd: str, *expected: str) -> dict[str, Any]:
        response = await self.core.command(cmd)
        tag = response.get("type")
        if tag not in expected:
            raise UnexpectedResponseError(
                expected, tag if isinstance(tag, str) else "", response=response, command=cmd
            )
        return response

    # ------------------------------------------------------------------ users

    async def active_user(self) -> T.User | None:
        """The active user, or ``None`` when there is none (``noActiveUser``)."""
        try:
            resp = await self._send(cmds.show_active_user(), "activeUser")
        except CoreError as exc:
            if exc.error_type == "noActiveUser":
                return None
            raise
        return cast("T.User", resp["user"])

    async def list_users(self) -> list[T.UserInfo]:
        """Every user with its unread count."""
        resp = await self._send(cmds.list_users(), "usersList")
        return cast("list[T.UserInfo]", resp["users"])

    async def create_active_user(self, profile: Mapping[str, Any]) -> T.User:
        """Create a user with ``profile`` and make it active."""
        resp = await self._send(cmds.create_active_user(profile), "activeUser")
        return cast("T.User", resp["user"])

    async def ensure_active_user(self, profile: Mapping[str, Any]) -> tuple[T.User, bool]:
        """The active user, or one created with ``profile`` when the core has none; and
        whether it was created now."""
        user = await self.active_user()
        if user is not None:
            return user, False
        return await self.create_active_user(profile), True

    async def set_active_user(self, user_id: int) -> T.User:
        """Make another user active."""
        resp = await self._send(cmds.set_active_user(user_id), "activeUser")
        return cast("T.User", resp["user"])

    async def update_profile(self, user_id: int, profile: Mapping[str, Any]) -> T.User:
        """Update the user's profile; returns the user (unchanged or updated)."""
        resp = await self._send(
            cmds.update_profile(user_id, profile), "userProfileUpdated", "userProfileNoChange"
        )
        return cast("T.User", resp["user"])

    async def set_contact_prefs(self, contact_id: int, preferences: Mapping[str, Any]) -> T.Contact:
        """Set preference overrides for one contact; returns the updated contact."""
        resp = await self._send(
            cmds.set_contact_prefs(contact_id, preferences), "contactPrefsUpdated"
        )
        return cast("T.Contact", resp["toContact"])

    # ------------------------------------------------------------------ controller

    async def start_chat(self, *, service_requests: bool = False, main: bool = True) -> bool:
        """Start the chat; ``True`` if it started now, ``False`` if it was running."""
        resp = await self._send(
            cmds.start_chat(main=main, service_requests=service_requests),
            "chatStarted",
            "chatRunning",
        )
        return bool(resp["type"] == "chatStarted")

    async def stop_chat(self) -> None:
        """Stop the chat."""
        await self._send(cmds.stop_chat(), "chatStopped")

    async def get_network_config(self) -> dict[str, Any]:
        """The network configuration."""
        resp = await self._send(cmds.get_network_config(), "networkConfig")
        return cast(dict[str, Any], resp.get("networkConfig", {}))

    async def set_network_config(self, **options: Any) -> dict[str, Any]:
        """Set the network configuration (see :func:`commands.set_network_config`)."""
        resp = await self._send(cmds.set_network_config(**options), "networkConfig")
        return cast(dict[str, Any], resp.get("networkConfig", {}))

    async def exec_chat_sql(self, query: str) -> list[str]:
        """Run SQL on the chat database; rows as strings."""
        resp = await self._send(cmds.exec_chat_sql(query), "sQLResult")
        return [str(r) for r in resp.get("rows", [])]

    async def exec_agent_sql(self, query: str) -> list[str]:
        """Run SQL on the agent database; rows as strings."""
        resp = await self._send(cmds.exec_agent_sql(query), "sQLResult")
        return [str(r) for r in resp.get("rows", [])]

    # ------------------------------------------------------------------ address

    async def create_address(
        self, user_id: int, *, pq_ratchet: bool | None = None
    ) -> T.CreatedConnLink:
        """Create the user's contact address."""
        resp = await self._send(
            cmds.create_my_address(user_id, pq_ratchet=pq_ratchet), "userContactLinkCreated"
        )
        return cast("T.CreatedConnLink", resp["connLinkContact"])

    async def add_address_short_link(
        self, user_id: int, *, pq_ratchet: bool | None = None
    ) -> T.UserContactLink:
        """Add a short link (and ratchet keys with ``pq_ratchet``) to the address."""
        resp = await self._send(
            cmds.add_my_address_short_link(user_id, pq_ratchet=pq_ratchet), "userContactLink"
        )
        return cast("T.UserContactLink", resp["contactLink"])

    async def show_address(self, user_id: int) -> T.UserContactLink | None:
        """The user's address, or ``None`` when it has none."""
        try:
            resp = await self._send(cmds.show_my_address(user_id), "userContactLink")
        except CoreError as exc:
            if exc.error_type == "userContactLinkNotFound":
                return None
            raise
        return cast("T.UserContactLink", resp["contactLink"])

    async def set_address_settings(
        self, user_id: int, settings: Mapping[str, Any], *, pq_ratchet: bool | None = None
    ) -> T.UserContactLink:
        """Set auto-accept, business and welcome settings (and ratchet keys)."""
        resp = await self._send(
            cmds.set_address_settings(user_id, settings, pq_ratchet=pq_ratchet),
            "userContactLinkUpdated",
        )
        return cast("T.UserContactLink", resp["contactLink"])

    async def set_profile_address(self, user_id: int, enable: bool) -> dict[str, Any]:
        """Show or hide the address in the profile; returns the response."""
        return await self._send(
            cmds.set_profile_address(user_id, enable), "userProfileUpdated", "userProfileNoChange"
        )

    async def delete_address(self, user_id: int) -> None:
        """Delete the user's address."""
        await self._send(cmds.delete_my_address(user_id), "userContactLinkDeleted")

    async def accept_contact(
        self, contact_request_id: int, *, incognito: bool | None = None
    ) -> T.Contact:
        """Accept a contact request."""
        resp = await self._send(
            cmds.accept_contact(contact_request_id, incognito=incognito), "acceptingContactRequest"
        )
        return cast("T.Contact", resp["contact"])

    async def reject_contact(
        self, contact_request_id: int, *, notify: bool | None = None
    ) -> dict[str, Any]:
        """Reject a contact request; returns the response."""
        return await self._send(
            cmds.reject_contact(contact_request_id, notify=notify), "contactRequestRejected"
        )

    async def set_auto_accept_member_contacts(self, user_id: int, enable: bool) -> None:
        """Accept contact requests from group members automatically, or not."""
        await self._send(cmds.set_auto_accept_member_contacts(user_id, enable), "cmdOk")

    async def set_auto_accept_group_invitations(self, user_id: int, enable: bool) -> None:
        """Accept the group invitations of contacts automatically, or not (newest cores only)."""
        await self._send(cmds.set_auto_accept_group_invitations(user_id, enable), "cmdOk")

    # ------------------------------------------------------------------ connecting

    async def connect_plan(self, user_id: int, target: str, **options: Any) -> CR.ConnectionPlan:
        """What connecting to a link or SimpleX name would do (``connectionPlan``)."""
        resp = await self._send(cmds.connect_plan(user_id, target, **options), "connectionPlan")
        return cast("CR.ConnectionPlan", resp)

    async def prepare_contact(
        self, user_id: int, full_link: str, link_data: Mapping[str, Any], **options: Any
    ) -> AChat:
        """Prepare a contact (or business) chat from address link data."""
        resp = await self._send(
            cmds.prepare_contact(user_id, full_link, link_data, **options), "newPreparedChat"
        )
        return cast("NewPreparedChat", resp)["chat"]

    async def prepare_group(
        self, user_id: int, full_link: str, link_data: Mapping[str, Any], **options: Any
    ) -> AChat:
        """Prepare a group or channel (``direct=False``) chat from group link data."""
        resp = await self._send(
            cmds.prepare_group(user_id, full_link, link_data, **options), "newPreparedChat"
        )
        return cast("NewPreparedChat", resp)["chat"]

    async def connect_prepared_contact(
        self, contact_id: int, **options: Any
    ) -> StartedConnectionToContact | CR.ContactAlreadyExists:
        """Connect a prepared contact chat; returns the response (``contact`` in both)."""
        resp = await self._send(
            cmds.connect_prepared_contact(contact_id, **options),
            "startedConnectionToContact",
            "contactAlreadyExists",
        )
        return cast("StartedConnectionToContact | CR.ContactAlreadyExists", resp)

    async def connect_prepared_group(
        self, group_id: int, **options: Any
    ) -> StartedConnectionToGroup:
        """Connect a prepared group or channel chat."""
        resp = await self._send(
            cmds.connect_prepared_group(group_id, **options), "startedConnectionToGroup"
        )
        return cast("StartedConnectionToGroup", resp)

    async def create_invitation(
        self, user_id: int, *, incognito: bool | None = None
    ) -> CR.Invitation:
        """Create a one-time invitation link (``connLinkInvitation``, ``connection``)."""
        resp = await self._send(cmds.add_contact(user_id, incognito=incognito), "invitation")
        return cast("CR.Invitation", resp)

    async def connect(
        self, user_id: int, full_link: str, **options: Any
    ) -> CR.SentConfirmation | CR.SentInvitation | CR.ContactAlreadyExists:
        """Connect via a one-time link or an address."""
        resp = await self._send(
            cmds.connect(user_id, full_link, **options),
            "sentConfirmation",
            "sentInvitation",
            "contactAlreadyExists",
        )
        return cast("CR.SentConfirmation | CR.SentInvitation | CR.ContactAlreadyExists", resp)

    async def connect_contact_via_address(
        self, user_id: int, contact_id: int, *, incognito: bool | None = None
    ) -> T.Contact:
        """Connect to a known contact through its address."""
        resp = await self._send(
            cmds.connect_contact_via_address(user_id, contact_id, incognito=incognito),
            "sentInvitationToContact",
        )
        return cast("T.Contact", resp["contact"])

    async def connect_via_address(
        self, user_id: int, contact_id: int, *, incognito: bool | None = None
    ) -> SentInvitationToContact:
        """:meth:`connect_contact_via_address`, returning the whole response: the contact and,
        when the connection is incognito, the profile used (``customUserProfile``)."""
        resp = await self._send(
            cmds.connect_contact_via_address(user_id, contact_id, incognito=incognito),
            "sentInvitationToContact",
        )
        return cast("SentInvitationToContact", resp)

    # ------------------------------------------------------------------ messages

    async def send_messages(
        self, send_ref: ChatRef, messages: Sequence[Mapping[str, Any]], **options: Any
    ) -> list[T.AChatItem]:
        """Send messages (see :func:`commands.composed_text`); returns the sent items."""
        resp = await self._send(cmds.send_messages(send_ref, messages, **options), "newChatItems")
        return cast("list[T.AChatItem]", resp["chatItems"])

    async def send_text(self, send_ref: ChatRef, text: str, **options: Any) -> list[T.AChatItem]:
        """Send one text message; returns the sent items."""
        resp = await self._send(cmds.send_text(send_ref, text, **options), "newChatItems")
        return cast("list[T.AChatItem]", resp["chatItems"])

    async def update_chat_item(
        self,
        chat_ref: ChatRef,
        item_id: int,
        updated: Mapping[str, Any] | str,
        *,
        live: bool = False,
    ) -> T.AChatItem:
        """Edit a sent item (an UpdatedMessage object, or plain text)."""
        cmd = (
            cmds.update_chat_item_text(chat_ref, item_id, updated, live=live)
            if isinstance(updated, str)
            else cmds.update_chat_item(chat_ref, item_id, updated, live=live)
        )
        resp = await self._send(cmd, "chatItemUpdated", "chatItemNotChanged")
        return cast("T.AChatItem", resp["chatItem"])

    async def delete_chat_items(
        self,
        chat_ref: ChatRef,
        item_ids: Sequence[int],
        mode: Literal["broadcast", "internal", "internalMark", "history"] = "broadcast",
    ) -> list[T.ChatItemDeletion]:
        """Delete items."""
        resp = await self._send(
            cmds.delete_chat_items(chat_ref, item_ids, mode), "chatItemsDeleted"
        )
        return cast("list[T.ChatItemDeletion]", resp["chatItemDeletions"])

    async def get_chat(self, chat_ref: ChatRef, **pagination: Any) -> AChat:
        """A chat with a page of items (see :func:`commands.get_chat` for the forms)."""
        resp = await self._send(cmds.get_chat(chat_ref, **pagination), "apiChat")
        return cast("AChat", resp["chat"])

    async def get_chats(
        self,
        user_id: int,
        *,
        pending_connections: bool | None = None,
        count: int | None = None,
        after: str | datetime | None = None,
        before: str | datetime | None = None,
        query: Mapping[str, Any] | None = None,
    ) -> list[AChat]:
        """Chat previews, newest first."""
        resp = await self._send(
            cmds.get_chats(
                user_id,
                pending_connections=pending_connections,
                count=count,
                after=after,
                before=before,
                query=query,
            ),
            "apiChats",
        )
        return cast("list[AChat]", resp["chats"])

    async def read_chat_items(self, chat_ref: ChatRef, item_ids: Sequence[int]) -> T.ChatInfo:
        """Mark items read; returns the chat's info."""
        resp = await self._send(cmds.chat_items_read(chat_ref, item_ids), "itemsReadForChat")
        return cast("T.ChatInfo", resp["chatInfo"])

    async def read_chat(self, chat_ref: ChatRef) -> None:
        """Mark the whole chat read."""
        await self._send(cmds.chat_read(chat_ref), "cmdOk")

    # ------------------------------------------------------------------ chats

    async def set_custom_data(self, chat_ref: ChatRef, data: Mapping[str, Any] | None) -> None:
        """Store (or clear, with ``None``) the chat's custom data."""
        await self._send(cmds.set_custom_data(chat_ref, data), "cmdOk")

    async def delete_chat(
        self,
        chat_ref: ChatRef,
        mode: Literal["full", "entity", "messages"] = "full",
        *,
        notify: bool | None = None,
    ) -> dict[str, Any]:
        """Delete a chat (the contact is notified by default); returns the response."""
        return await self._send(
            cmds.delete_chat(chat_ref, mode, notify=notify),
            "contactDeleted",
            "contactConnectionDeleted",
            "groupDeletedUser",
        )

    async def contact_info(self, contact_id: int) -> ContactInfo:
        """A contact with connection stats and the incognito profile used with it."""
        resp = await self._send(cmds.contact_info(contact_id), "contactInfo")
        return cast("ContactInfo", resp)

    async def group_info(self, group_id: int) -> T.GroupInfo:
        """A group's info."""
        resp = await self._send(cmds.group_info(group_id), "groupInfo")
        return cast("T.GroupInfo", resp["groupInfo"])

    async def list_contacts(self, user_id: int) -> list[T.Contact]:
        """Every contact of the user."""
        resp = await self._send(cmds.list_contacts(user_id), "contactsList")
        return cast("list[T.Contact]", resp["contacts"])

    async def list_groups(
        self, user_id: int, *, contact_id: int | None = None, search: str | None = None
    ) -> list[T.GroupInfo]:
        """The user's groups, optionally shared with a contact or matching a search.

        A core that refuses the documented ``/_groups <userId>`` as a command error is asked
        in the form its parser reads (``/_groups<userId>``, 6.4-era cores), and that form is
        kept for this core.
        """
        if not self._groups_glued:
            try:
                resp = await self._send(
                    cmds.list_groups(user_id, contact_id=contact_id, search=search), "groupsList"
                )
                return cast("list[T.GroupInfo]", resp["groups"])
            except CoreError as exc:
                if exc.error_type != "commandError":
                    raise
            self._groups_glued = True
        resp = await self._send(
            cmds.list_groups(user_id, contact_id=contact_id, search=search, glued=True),
            "groupsList",
        )
        return cast("list[T.GroupInfo]", resp["groups"])

    # ------------------------------------------------------------------ groups

    async def new_group(
        self, user_id: int, profile: Mapping[str, Any], *, incognito: bool = False
    ) -> T.GroupInfo:
        """Create a group."""
        resp = await self._send(
            cmds.new_group(user_id, profile, incognito=incognito), "groupCreated"
        )
        return cast("T.GroupInfo", resp["groupInfo"])

    async def update_group_profile(self, group_id: int, profile: Mapping[str, Any]) -> T.GroupInfo:
        """Update a group's profile; returns the updated group."""
        resp = await self._send(cmds.update_group_profile(group_id, profile), "groupUpdated")
        return cast("T.GroupInfo", resp["toGroup"])

    async def list_members(self, group_id: int) -> list[T.GroupMember]:
        """The group's members (without the user)."""
        resp = await self._send(cmds.list_members(group_id), "groupMembers")
        group = resp.get("group")
        members = group.get("members") if isinstance(group, Mapping) else None
        if not isinstance(members, list):
            raise UnexpectedResponseError(
                ("groupMembers",),
                "groupMembers",
                response=resp,
                command="/_members",
                code="malformed_frame",
            )
        return cast("list[T.GroupMember]", members)

    async def set_members_role(
        self, group_id: int, member_ids: Sequence[int], role: MemberRole
    ) -> list[T.GroupMember]:
        """Change members' role."""
        resp = await self._send(
            cmds.set_members_role(group_id, member_ids, role), "membersRoleUser"
        )
        return cast("list[T.GroupMember]", resp["members"])

    async def remove_members(
        self, group_id: int, member_ids: Sequence[int], *, with_messages: bool = False
    ) -> list[T.GroupMember]:
        """Remove members."""
        resp = await self._send(
            cmds.remove_members(group_id, member_ids, with_messages=with_messages),
            "userDeletedMembers",
        )
        return cast("list[T.GroupMember]", resp["members"])

    async def leave_group(self, group_id: int) -> T.GroupInfo:
        """Leave a group."""
        resp = await self._send(cmds.leave_group(group_id), "leftMemberUser")
        return cast("T.GroupInfo", resp["groupInfo"])

    async def join_group(self, group_id: int) -> T.GroupInfo:
        """Accept a group invitation."""
        resp = await self._send(cmds.join_group(group_id), "userAcceptedGroupSent")
        return cast("T.GroupInfo", resp["groupInfo"])

    async def add_member(self, group_id: int, contact_id: int, role: MemberRole) -> T.GroupMember:
        """Invite a contact into a group."""
        resp = await self._send(cmds.add_member(group_id, contact_id, role), "sentGroupInvitation")
        return cast("T.GroupMember", resp["member"])

    async def create_group_link(self, group_id: int, role: MemberRole = "member") -> T.GroupLink:
        """Create the group's link."""
        resp = await self._send(cmds.create_group_link(group_id, role), "groupLinkCreated")
        return cast("T.GroupLink", resp["groupLink"])

    async def set_group_link_role(self, group_id: int, role: MemberRole) -> T.GroupLink:
        """Change the role of members joining by the group's link."""
        resp = await self._send(cmds.set_group_link_role(group_id, role), "groupLink")
        return cast("T.GroupLink", resp["groupLink"])

    async def delete_group_link(self, group_id: int) -> None:
        """Delete the group's link."""
        await self._send(cmds.delete_group_link(group_id), "groupLinkDeleted")

    async def get_group_link(self, group_id: int) -> T.GroupLink | None:
        """The group's link, or ``None`` when it has none."""
        try:
            resp = await self._send(cmds.get_group_link(group_id), "groupLink")
        except CoreError as exc:
            if exc.error_type == "groupLinkNotFound":
                return None
            raise
        return cast("T.GroupLink", resp["groupLink"])

    # ------------------------------------------------------------------ service RPC

    async def send_service_request(
        self,
        user_id: int,
        target: str,
        request: Mapping[str, Any],
        *,
        timeout_s: float | None = None,
        sign_key: str | None = None,
    ) -> dict[str, Any]:
        """Send a Service RPC request and wait for the response; returns ``responseData``.

        The core waits ``timeout_s`` (default 30 s) and then fails with
        ``errorAgent AGENT A_SERVICE timeout``, raised as :class:`CoreError`.
        """
        resp = await self._send(
            cmds.send_service_request(
                user_id, target, request, timeout_s=timeout_s, sign_key=sign_key
            ),
            "serviceResponse",
        )
        data = resp.get("responseData")
        if not isinstance(data, dict):
            raise UnexpectedResponseError(
                ("serviceResponse",),
                "serviceResponse",
                response=resp,
                command="/_service_request",
                code="malformed_frame",
            )
        return data

    async def send_service_response(
        self, user_id: int, request_id: str, response: Mapping[str, Any]
    ) -> str:
        """Answer a ``serviceRequest`` event; returns the ``connectionId`` of the reply."""
        resp = await self._send(
            cmds.send_service_response(user_id, request_id, response), "serviceReplyAccepted"
        )
        return str(resp.get("connectionId", ""))

    # ------------------------------------------------------------------ the core itself

    async def show_version(self) -> dict[str, Any]:
        """The core's version (``versionInfo``: ``version``, ``simplexmqVersion``, ...)."""
        resp = await self._send(cmds.show_version(), "versionInfo")
        info = resp.get("versionInfo")
        return dict(info) if isinstance(info, Mapping) else {}
