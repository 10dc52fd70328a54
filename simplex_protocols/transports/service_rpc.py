"""The Service RPC transport: one request envelope, one response envelope, over a chat core.

- requester: :class:`ServiceRPCRequester` sends ``/_service_request`` (optionally signed, one
  key per responder) and returns the response or raises the typed error of its code;
- responder: :class:`ServiceRPCResponder` answers each ``serviceRequest`` event with exactly
  one envelope through ``/_service_response``, within the 180 s window.
"""

from __future__ import annotations

from simplex_protocols._exports import publish

from ._common import CallRecord as CallRecord
from ._ratelimit import MemoryRateCounter as MemoryRateCounter
from ._ratelimit import RateCounter as RateCounter
from ._ratelimit import RateLimit as RateLimit
from ._rpc_requester import ServiceRPCRequester as ServiceRPCRequester
from ._rpc_responder import HARD_STOP_MARGIN_S as HARD_STOP_MARGIN_S
from ._rpc_responder import ResponseLimit as ResponseLimit
from ._rpc_responder import RPCAnswer as RPCAnswer
from ._rpc_responder import ServiceRPCResponder as ServiceRPCResponder

__all__ = [
    "HARD_STOP_MARGIN_S",
    "CallRecord",
    "MemoryRateCounter",
    "RPCAnswer",
    "RateCounter",
    "RateLimit",
    "ResponseLimit",
    "ServiceRPCRequester",
    "ServiceRPCResponder",
]

publish(globals(), __all__)
