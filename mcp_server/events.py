"""The event pump: each event of the chat core, in order, to the part of the agent it concerns.

=========================  ===============================================================
event                      goes to
=========================  ===============================================================
newChatItems               a received message in the agent control chat's main scope that
                           starts with ``/``: the owner commands; other chats' items: the
                           collectors of their chat (waiting sends, receives and connects)
chatItemUpdated            the collectors of the item's chat (live messages)
chatItemsDeleted           the collectors of the items' chats
contactConnected,          the connect actions waiting for that chat or connection
userJoinedGroup
group member events        the control chat's members (:mod:`simplex_protocols.mcp_server.membership`)
=========================  ===============================================================

The pump never awaits: long work is started in the agent's task group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from simplex_protocols.core import AChatItemView, ChatRef, EventView

from .membership import MEMBERSHIP_EVENTS, Membership
from .state import AgentState

__all__ = ["ChatConnected", "EventPump"]

#: A chat connected (a contact, or a joined group) and its peer's connection ID: the contact's
#: or the group host member's.
ChatConnected = Callable[[ChatRef, int | None], None]


class EventPump:
    """Dispatches the core's events.

    Args:
        state: the agent's state (the control chat, the collectors).
        owner_command: queues a command of an owner (the sender's member record, the text).
        chat_connected: completes the connects that wait for a chat.
        membership: follows the control chat's members.
    """

    def __init__(
        self,
        state: AgentState,
        *,
        owner_command: Callable[[Mapping[str, Any], str], None],
        chat_connected: ChatConnected,
        membership: Membership,
    ) -> None:
        self._state = state
        self._owner_command = owner_command
        self._chat_connected = chat_connected
        self._membership = membership
        #: Called with every event after the pump has handled it (the chat resources'
        #: subscriptions); an observer never awaits.
        self.observers: list[Callable[[EventView], None]] = []

    def handle_event(self, event: Mapping[str, Any]) -> None:
        """Handle one core event, in order; long work is started, not awaited."""
        view = EventView(event)
        kind = view.type
        collectors = self._state.collectors
        if kind == "newChatItems":
            for a_item in view.chat_items():
                self._on_new_item(a_item)
        elif kind == "chatItemUpdated":
            a_item = view.chat_item
            for collector in collectors.of(a_item.chat.ref):
                collector.update(a_item.chat.raw, a_item.item.raw)
        elif kind == "chatItemsDeleted":
            for a_item in view.deleted_items():
                item = a_item.item.item_id
                if item is not None:
                    for collector in collectors.of(a_item.chat.ref):
                        collector.delete(item)
        elif kind == "contactConnected":
            contact = view.contact
            if contact.ref is not None:
                self._chat_connected(contact.ref, contact.contact_conn_id)
        elif kind == "userJoinedGroup":
            group = view.group_info
            if group.ref is not None:
                self._chat_connected(group.ref, view.host_member.conn_id)
        if kind in MEMBERSHIP_EVENTS:
            self._membership.on_event(view)
        for observer in self.observers:
            observer(view)

    def _on_new_item(self, a_item: AChatItemView) -> None:
        state = self._state
        chat = a_item.chat
        ref = chat.ref
        if ref is None:
            return
        if state.is_control(ref):
            item = a_item.item
            if item.direction != "groupRcv" or chat.scoped:
                return
            text = item.text
            sender = item.sender
            # Once the server stops, no /approve starts a perform.
            if (
                text is not None
                and text.startswith("/")
                and sender is not None
                and not state.lost
                and not state.stopping
            ):
                self._owner_command(sender.raw, text)
            return
        for collector in state.collectors.of(ref):
            collector.add(chat.raw, a_item.item.raw)
