"""The contract between the SimpleX transports and a protocol binding (public as
:mod:`simplex_protocols.transports`, re-exported by :mod:`simplex_protocols.bindings`).

A binding (MCP, A2A) is a thin adapter over an official SDK. It takes one JSON-RPC request
and yields the JSON-RPC messages to send back; it never knows about chat items, quotes or
envelopes. A transport (the chat transport's responder, the Service RPC responder) does the
framing around it:

- chat transport: each message the binding emits becomes one reply quoting the command, in
  order; the last one ends the answer (spec "Chat transport" > "Replies");
- Service RPC: the binding returns the response for the envelope's ``response``, or an
  :class:`EnvelopeOutcome` naming an envelope error code (``conversation_required`` ...).

The caller side uses :meth:`Binding.is_final` to know when an answer has ended.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "Binding",
    "Caller",
    "Emit",
    "EnvelopeOutcome",
    "TransportKind",
]


class TransportKind(StrEnum):
    """The two transports of the spec."""

    CHAT = "chat"
    RPC = "rpc"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request, as the transport knows it.

    In a conversation the caller is the contact, or the group member, that sent the command
    (A2A-AUTHZ-1); over Service RPC it is the verified signer key, or nobody for an unsigned
    request (each unsigned request then gets a fresh random ``key``, so two unsigned requests
    are never linked).

    Attributes:
        key: a stable, unique owner key for isolation: ``chat:@<contactId>``,
            ``chat:#<groupId>/<groupMemberId>``, ``rpc:<signerKey>``, or
            ``rpc-anonymous:<random>``. Bindings scope tasks, contexts and request states to it.
        transport: the transport the request arrived on.
        display_name: the sender's display name, when known (for logs only; never for checks).
        contact_id: the contact's chat ID in a direct chat.
        group_id: the group's chat ID in a group.
        group_member_id: the member's ID in a group.
        signer_key: the verified signer key of a signed Service RPC request.
        in_group: whether the request came in a group (A2A: credentials are refused there).
        peer_type: the sender profile's peer type, when known (human, bot, business, agent).
        headers: service parameters or other header-like metadata a binding wants to expose to
            handlers (MCP's ``Context.headers`` reads this).
    """

    key: str
    transport: TransportKind
    display_name: str | None = None
    contact_id: int | None = None
    group_id: int | None = None
    group_member_id: int | None = None
    signer_key: str | None = None
    in_group: bool = False
    peer_type: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def signed(self) -> bool:
        """Whether the request was signed (Service RPC) — a persistent identity."""
        return self.signer_key is not None


@dataclass(frozen=True, slots=True)
class EnvelopeOutcome:
    """A Service RPC answer that is an envelope error rather than a protocol response.

    Attributes:
        code: the envelope error code (``conversation_required``, ``too_large`` ...).
        message: an optional description for the requester's logs; never internals.
        retry_after: seconds, for ``rate_limited``.
    """

    code: str
    message: str | None = None
    retry_after: int | None = None


#: Sends one protocol message (a JSON object) as the next reply of the answer.
Emit = Callable[[dict[str, Any]], Awaitable[None]]


@runtime_checkable
class Binding(Protocol):
    """A protocol binding: the protocol's name, its versions, and how it answers requests.

    Besides the members below, a binding may define one optional method, which the
    transports call when it is there (``internal_error_for`` in
    :mod:`simplex_protocols.transports.chat`)::

        def internal_error(
            self, request: Mapping[str, Any] | None, reason: str
        ) -> dict[str, Any] | None: ...

    ``internal_error(request, reason)`` is the protocol's answer to a call the binding could
    not finish: ``handle_chat`` raised, or the bot is shutting down while the call runs. The
    transport sends it as the last reply, quoting the command, so the caller's wait ends
    with an error instead of running out. ``request`` is the request as read (``None`` when it
    could not be read, which :meth:`parse_error` has answered already); ``reason`` is the
    transport's own words ("internal error", "the bot is shutting down"), never a handler's
    exception text. Return ``None`` to send nothing, as for a JSON-RPC notification (AMB-30).
    Without the method, the transports send the JSON-RPC error -32603 with the request's
    ``id`` (and nothing for a request without one), which suits any JSON-RPC protocol; both
    bindings of this package (``MCPBinding``, ``A2ABinding``) define it. It is not a member of
    the protocol, so a binding without it still satisfies ``isinstance(b, Binding)``; a
    wrapper around another binding should pass it on when the inner binding has it.
    """

    @property
    def name(self) -> str:
        """The protocol name (``mcp``, ``a2a``): lowercase letters, digits and hyphens."""
        ...

    @property
    def versions(self) -> tuple[str, ...]:
        """The versions served, in order of preference, as declared in ``protocols``."""
        ...

    async def handle_chat(self, request: Mapping[str, Any], caller: Caller, emit: Emit) -> None:
        """Answer a request that arrived as ``/_call <protocol> <request>`` in a conversation.

        Every message to send is passed to ``emit`` in order; the last one ends the answer.
        Never raises for a bad request: the protocol's own error is emitted instead.
        """
        ...

    async def handle_rpc(
        self, request: Any, caller: Caller, *, budget_s: float
    ) -> dict[str, Any] | EnvelopeOutcome:
        """Answer a Service RPC envelope's ``request``: the response, or an envelope error.

        ``budget_s`` is how long the binding may take: the transport must answer within the
        core's 180 s response window. Work that cannot finish in time is answered with
        ``EnvelopeOutcome("conversation_required")`` where the binding says so (A2A-RPC-3).
        """
        ...

    def parse_error(self, raw_request: str, reason: str) -> dict[str, Any]:
        """The protocol's answer to a request text that is not valid JSON or not an object."""
        ...

    def oversize_error(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """The protocol's replacement for a reply over the size limit (JSON-RPC -32603).

        In a conversation the transport calls it from inside ``emit`` (in the task that runs
        ``handle_chat``), for the message being emitted: a binding may then end the answer
        there (A2A ends a stream at a replaced item, AMB-31).
        """
        ...

    def is_final(self, request: Mapping[str, Any], message: Mapping[str, Any]) -> bool:
        """Caller side: whether ``message``, a reply to ``request``, ends the answer."""
        ...
