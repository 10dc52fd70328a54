"""The A2A binding (spec "A2A binding"): serve and call ``a2a-sdk`` agents over SimpleX.

Bot side: :class:`A2ABinding` turns an ``a2a-sdk`` ``AgentExecutor`` into a
:class:`~simplex_protocols.bindings.Binding` for both transports, with a persistent task store
(SQLite by default, PostgreSQL by URL). Agents read their caller with :func:`caller_of` (the
same function as :func:`simplex_protocols.bindings.caller_of`).

Caller side: :func:`build_a2a_request`, :func:`build_send_message` and
:func:`build_subscribe_to_task` build requests with ``a2a-service-parameters``;
:func:`check_no_credentials_in_group` guards group calls; :func:`is_final_message`,
:func:`ends_stream` and :func:`stream_item_state` tell when an answer or a stream has ended
(:data:`STREAMING_METHODS` are the methods that stream); :func:`read_result`,
:func:`read_send_message_result`, :func:`read_task`, :func:`read_stream_item`,
:func:`task_id_of` and :func:`text_of` read the answers.

SDK client: :class:`SimplexA2ATransport` is a client transport of the ``a2a-sdk`` for the
card's SimpleX interface; register :func:`simplex_transport_producer` with its
``ClientFactory`` and the SDK's ``Client`` calls the agent over SimpleX.

Identities: :func:`add_identity` puts a ``SimpleX-Identity`` credential
(:data:`IDENTITY_PARAMETER`) into a request, :func:`make_identity` and :func:`verify_identity`
make and check one, and :func:`with_identity_scheme` declares it on a card (``A2ABinding(...,
identities=True)`` does that and accepts it).

Agent Card: :func:`simplex_interface`, :func:`with_simplex_interface` and
:func:`agent_card_json` (for a website's :data:`AGENT_CARD_WELL_KNOWN_PATH`).

Importing this module imports the ``a2a-sdk``.
"""

from __future__ import annotations

from simplex_protocols._exports import publish

from ._a2a_card import AGENT_CARD_WELL_KNOWN_PATH as AGENT_CARD_WELL_KNOWN_PATH
from ._a2a_card import agent_card_json as agent_card_json
from ._a2a_card import simplex_interface as simplex_interface
from ._a2a_card import with_simplex_interface as with_simplex_interface
from ._a2a_client import RequestID as RequestID
from ._a2a_client import build_a2a_request as build_a2a_request
from ._a2a_client import build_send_message as build_send_message
from ._a2a_client import build_subscribe_to_task as build_subscribe_to_task
from ._a2a_client import check_no_credentials_in_group as check_no_credentials_in_group
from ._a2a_client import read_result as read_result
from ._a2a_client import read_send_message_result as read_send_message_result
from ._a2a_client import read_stream_item as read_stream_item
from ._a2a_client import read_task as read_task
from ._a2a_client import task_id_of as task_id_of
from ._a2a_client import text_of as text_of
from ._a2a_identity import IDENTITY_PARAMETER as IDENTITY_PARAMETER
from ._a2a_identity import Identity as Identity
from ._a2a_identity import add_identity as add_identity
from ._a2a_identity import make_identity as make_identity
from ._a2a_identity import verify_identity as verify_identity
from ._a2a_identity import with_identity_scheme as with_identity_scheme
from ._a2a_server import A2ABinding as A2ABinding
from ._a2a_server import Authenticate as Authenticate
from ._a2a_transport import SimplexA2ATransport as SimplexA2ATransport
from ._a2a_transport import simplex_transport_producer as simplex_transport_producer
from ._a2a_wire import A2A_BINDING_URI as A2A_BINDING_URI
from ._a2a_wire import DEFAULT_A2A_VERSION as DEFAULT_A2A_VERSION
from ._a2a_wire import STREAMING_METHODS as STREAMING_METHODS
from ._a2a_wire import ends_stream as ends_stream
from ._a2a_wire import is_final_message as is_final_message
from ._a2a_wire import stream_item_state as stream_item_state
from ._caller import caller_of as caller_of

__all__ = [
    "A2A_BINDING_URI",
    "AGENT_CARD_WELL_KNOWN_PATH",
    "DEFAULT_A2A_VERSION",
    "IDENTITY_PARAMETER",
    "STREAMING_METHODS",
    "A2ABinding",
    "Authenticate",
    "Identity",
    "RequestID",
    "SimplexA2ATransport",
    "add_identity",
    "agent_card_json",
    "build_a2a_request",
    "build_send_message",
    "build_subscribe_to_task",
    "caller_of",
    "check_no_credentials_in_group",
    "ends_stream",
    "is_final_message",
    "make_identity",
    "read_result",
    "read_send_message_result",
    "read_stream_item",
    "read_task",
    "simplex_interface",
    "simplex_transport_producer",
    "stream_item_state",
    "task_id_of",
    "text_of",
    "verify_identity",
    "with_identity_scheme",
    "with_simplex_interface",
]

publish(globals(), __all__, defined_in="simplex_protocols.bindings._a2a_")
