"""One async interface to a SimpleX chat core, over three kinds of backend.

- :class:`ChatCore`: send command strings, get response objects, subscribe to events.
- Backends (:class:`CoreBackend`): :class:`WebSocketBackend` (``simplex-chat -p PORT``),
  :class:`NativeBackend` (the embedded libsimplex), and the simulated network's backend
  (``simplex_protocols.sim``).
- Choosing one, the same way in every tool: :func:`parse_core_option`, :func:`open_core`,
  :func:`add_core_argument` (``--core`` / ``SIMPLEX_CORE``).
- Typed views of the core's JSON (:class:`ChatInfoView`, :class:`ChatItemView`,
  :class:`ChatView`, :class:`MemberView`, :class:`ConnectionPlanView`,
  :class:`JoinResponseView`, :class:`EventView`): what apps read of responses and events,
  without walking dicts.
- :func:`probe_core`: what this core can do (its version, and :class:`Capability` by
  capability), asked harmlessly once per core; ``simplex-call doctor`` prints it.
- :class:`CoreProtocol`: the sans-IO correlation of commands and responses under
  :class:`ChatCore`, for anyone writing another I/O layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simplex_protocols._exports import lazy_exports

if TYPE_CHECKING:
    from . import _commands as commands
    from . import _types as types
    from ._api import ChatAPI as ChatAPI
    from ._backend import CoreBackend as CoreBackend
    from ._client import ChatCore as ChatCore
    from ._client import EventListener as EventListener
    from ._client import EventSubscription as EventSubscription
    from ._commands import ChatRef as ChatRef
    from ._commands import ContactRef as ContactRef
    from ._commands import GroupRef as GroupRef
    from ._commands import mention as mention
    from ._commands import parse_chat_ref as parse_chat_ref
    from ._commands import quote_name as quote_name
    from ._events import ReceivedMessage as ReceivedMessage
    from ._events import chat_items as chat_items
    from ._events import chat_ref_of as chat_ref_of
    from ._events import event_type as event_type
    from ._events import event_user_id as event_user_id
    from ._events import received_messages as received_messages
    from ._native import NativeBackend as NativeBackend
    from ._open import open_core as open_core
    from ._options import CoreKind as CoreKind
    from ._options import CoreOption as CoreOption
    from ._options import add_core_argument as add_core_argument
    from ._options import default_core_option as default_core_option
    from ._options import parse_core_option as parse_core_option
    from ._probe import Capability as Capability
    from ._probe import CapabilityResult as CapabilityResult
    from ._probe import CapabilityStatus as CapabilityStatus
    from ._probe import CoreCapabilities as CoreCapabilities
    from ._probe import probe_core as probe_core
    from ._protocol import CoreProtocol as CoreProtocol
    from ._protocol import CoreProtocolEvent as CoreProtocolEvent
    from ._protocol import EventReceived as EventReceived
    from ._protocol import InvalidFrame as InvalidFrame
    from ._protocol import ResponseReceived as ResponseReceived
    from ._protocol import UnmatchedResponse as UnmatchedResponse
    from ._views import AChatItemView as AChatItemView
    from ._views import ChatInfoView as ChatInfoView
    from ._views import ChatItemView as ChatItemView
    from ._views import ChatView as ChatView
    from ._views import ConnectionPlanView as ConnectionPlanView
    from ._views import EventView as EventView
    from ._views import JoinResponseView as JoinResponseView
    from ._views import MemberView as MemberView
    from ._views import first_item_id as first_item_id
    from ._views import link_text as link_text
    from ._websocket import WebSocketBackend as WebSocketBackend

__all__ = [
    "AChatItemView",
    "Capability",
    "CapabilityResult",
    "CapabilityStatus",
    "ChatAPI",
    "ChatCore",
    "ChatInfoView",
    "ChatItemView",
    "ChatRef",
    "ChatView",
    "ConnectionPlanView",
    "ContactRef",
    "CoreBackend",
    "CoreCapabilities",
    "CoreKind",
    "CoreOption",
    "CoreProtocol",
    "CoreProtocolEvent",
    "EventListener",
    "EventReceived",
    "EventSubscription",
    "EventView",
    "GroupRef",
    "InvalidFrame",
    "JoinResponseView",
    "MemberView",
    "NativeBackend",
    "ReceivedMessage",
    "ResponseReceived",
    "UnmatchedResponse",
    "WebSocketBackend",
    "add_core_argument",
    "chat_items",
    "chat_ref_of",
    "commands",
    "default_core_option",
    "event_type",
    "event_user_id",
    "first_item_id",
    "link_text",
    "mention",
    "open_core",
    "parse_chat_ref",
    "parse_core_option",
    "probe_core",
    "quote_name",
    "received_messages",
    "types",
]

#: Each name is loaded from its submodule on first use (``lazy_exports``), so that a program
#: importing one light part of this package (an option parser) does not load the rest.
__getattr__ = lazy_exports(
    globals(),
    {
        "ChatAPI": "._api",
        "CoreBackend": "._backend",
        "ChatCore": "._client",
        "EventListener": "._client",
        "EventSubscription": "._client",
        "ChatRef": "._commands",
        "ContactRef": "._commands",
        "GroupRef": "._commands",
        "mention": "._commands",
        "parse_chat_ref": "._commands",
        "quote_name": "._commands",
        "ReceivedMessage": "._events",
        "chat_items": "._events",
        "chat_ref_of": "._events",
        "event_type": "._events",
        "event_user_id": "._events",
        "received_messages": "._events",
        "NativeBackend": "._native",
        "open_core": "._open",
        "CoreKind": "._options",
        "CoreOption": "._options",
        "add_core_argument": "._options",
        "default_core_option": "._options",
        "parse_core_option": "._options",
        "Capability": "._probe",
        "CapabilityResult": "._probe",
        "CapabilityStatus": "._probe",
        "CoreCapabilities": "._probe",
        "probe_core": "._probe",
        "CoreProtocol": "._protocol",
        "CoreProtocolEvent": "._protocol",
        "EventReceived": "._protocol",
        "InvalidFrame": "._protocol",
        "ResponseReceived": "._protocol",
        "UnmatchedResponse": "._protocol",
        "AChatItemView": "._views",
        "ChatInfoView": "._views",
        "ChatItemView": "._views",
        "ChatView": "._views",
        "ConnectionPlanView": "._views",
        "EventView": "._views",
        "JoinResponseView": "._views",
        "MemberView": "._views",
        "first_item_id": "._views",
        "link_text": "._views",
        "WebSocketBackend": "._websocket",
    },
    modules={"commands": "._commands", "types": "._types"},
)
