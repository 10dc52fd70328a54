"""The two transports of "Agent protocols over SimpleX", over a chat core, both sides each.

Chat transport (:mod:`simplex_protocols.transports.chat`, spec "Chat transport"):
    :class:`ChatCaller` / :func:`call` send ``/_call`` and collect the replies that quote it
    (:class:`ChatCallResult`, :class:`Answer`); :class:`ChatResponder` answers ``/_call`` for
    the protocols a bot serves, passing its bindings the :class:`Caller` of each command
    (:func:`message_caller`).

Service RPC transport (:mod:`simplex_protocols.transports.service_rpc`, spec "Service RPC
transport"):
    :class:`ServiceRPCRequester` sends one request envelope and returns the response or raises
    the typed error of its code; :class:`ServiceRPCResponder` answers each service request with
    exactly one envelope (:class:`RateLimit` for its rate limits, counted by a :class:`RateCounter`).

The contract a protocol binding fulfils for both responders is :class:`Binding` (with
:class:`Caller`, :class:`Emit`, :class:`EnvelopeOutcome` and :class:`TransportKind`); it lives
here, below the bindings, and :mod:`simplex_protocols.bindings` re-exports it.

Both responders log each call (:class:`CallRecord`: who, protocol, method, outcome, duration;
never contents), run their calls with a concurrency bound on an injectable clock, and shut down
gracefully.
"""

from __future__ import annotations

from simplex_protocols._exports import publish

from ._binding import Binding as Binding
from ._binding import Caller as Caller
from ._binding import Emit as Emit
from ._binding import EnvelopeOutcome as EnvelopeOutcome
from ._binding import TransportKind as TransportKind
from .chat import Answer as Answer
from .chat import CallRecord as CallRecord
from .chat import ChatCaller as ChatCaller
from .chat import ChatCallResult as ChatCallResult
from .chat import ChatResponder as ChatResponder
from .chat import FinalRule as FinalRule
from .chat import call as call
from .chat import internal_error_for as internal_error_for
from .chat import message_caller as message_caller
from .service_rpc import HARD_STOP_MARGIN_S as HARD_STOP_MARGIN_S
from .service_rpc import MemoryRateCounter as MemoryRateCounter
from .service_rpc import RateCounter as RateCounter
from .service_rpc import RateLimit as RateLimit
from .service_rpc import ResponseLimit as ResponseLimit
from .service_rpc import RPCAnswer as RPCAnswer
from .service_rpc import ServiceRPCRequester as ServiceRPCRequester
from .service_rpc import ServiceRPCResponder as ServiceRPCResponder

__all__ = [
    "HARD_STOP_MARGIN_S",
    "Answer",
    "Binding",
    "CallRecord",
    "Caller",
    "ChatCallResult",
    "ChatCaller",
    "ChatResponder",
    "Emit",
    "EnvelopeOutcome",
    "FinalRule",
    "MemoryRateCounter",
    "RPCAnswer",
    "RateCounter",
    "RateLimit",
    "ResponseLimit",
    "ServiceRPCRequester",
    "ServiceRPCResponder",
    "TransportKind",
    "call",
    "internal_error_for",
    "message_caller",
]

publish(globals(), __all__)
