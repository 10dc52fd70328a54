"""Service RPC, requester side: one request envelope, one response envelope.

Spec "Service RPC transport" > "Exchange": the requester's core sends the request with
``/_service_request <userId> <target> [timeout=<seconds>] [sign_key=<key>] <json>`` and the
command returns ``serviceResponse`` with ``responseData``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import anyio

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols.core import ChatAPI, ChatCore
from simplex_protocols.core import commands as cmds
from simplex_protocols.errors import (
    CallTimeoutError,
    CoreError,
    MessageTooLargeError,
    ServiceError,
    ServiceTransportError,
    UnexpectedResponseError,
)
from simplex_protocols.limits import (
    DEFAULT_REQUEST_TIMEOUT_S,
    MAX_SERVICE_JSON_BYTES,
    RESPONSE_WINDOW_S,
    SERVICE_PADDED_BYTES,
)
from simplex_protocols.rpc import (
    ABSENT,
    JSONValue,
    KeyStore,
    ServiceRequest,
    ServiceResponse,
    SigningKey,
    check_service_size,
    parse_service_response,
    raise_for_response,
)

from ._common import core_of, logger, real_clock, run_until

__all__ = ["DEFAULT_MAX_RETRY_AFTER_S", "ServiceRPCRequester"]

#: The longest ``retryAfter`` :meth:`ServiceRPCRequester.request_with_retry` waits by default.
DEFAULT_MAX_RETRY_AFTER_S: Final = 60

#: How long after the core's own timeout we stop waiting for the core's answer.
_GUARD_S: Final = 10.0


class ServiceRPCRequester:
    """Sends Service RPC requests through a chat core and returns the responses.

    Args:
        core: an entered :class:`~simplex_protocols.core.ChatCore` (or a ``ChatAPI`` over one).
        user_id: the requesting user; ``None`` uses the core's active user (asked once).
        clock: the clock for waits (``retryAfter``) and for the guard against a core that never
            answers; :class:`~simplex_protocols._clock.SystemClock` by default.
        key_store: where per-responder signing keys live, for ``sign=True`` (RPC-SIG-5).
        strict_size: refuse a request whose JSON exceeds 10,000 bytes (RPC-LIM-3, a SHOULD
            NOT) as well as one over the padded 11,106 bytes (RPC-LIM-2, always refused).

    The requester is stateless between requests and can be used by many tasks at once; each
    request opens a new connection in the core (RPC-CONN-3).
    """

    def __init__(
        self,
        core: ChatCore | ChatAPI,
        *,
        user_id: int | None = None,
        clock: Clock | None = None,
        key_store: KeyStore | None = None,
        strict_size: bool = True,
    ) -> None:
        self.core = core_of(core)
        self.api = ChatAPI(self.core)
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.key_store = key_store
        self.strict_size = strict_size
        self._user_id = user_id

    async def user_id(self) -> int:
        """The requesting user's ID (the active user's, asked once, unless given)."""
        if self._user_id is None:
            user = await self.api.active_user()
            if user is None:
                raise CoreError(
                    {"type": "error", "errorType": {"type": "noActiveUser"}},
                    command=cmds.show_active_user(),
                )
            self._user_id = int(user["userId"])
        return self._user_id

    def _key(self, target: str, sign: bool, signing_key: SigningKey | None) -> SigningKey | None:
        if signing_key is not None:
            return signing_key
        if not sign:
            return None
        if self.key_store is None:
            raise ValueError("sign=True needs a key_store (or pass signing_key)")
        # RPC-SIG-5: "A requester SHOULD use a separate key for each responder."
        return self.key_store.key_for(target)

    def build_request(
        self,
        protocol: str,
        request: JSONValue,
        *,
        version: JSONValue = ABSENT,
        signing_key: SigningKey | None = None,
        extra: Mapping[str, JSONValue] | None = None,
    ) -> ServiceRequest:
        """The request envelope, checked against both size limits.

        ``request`` goes into the envelope unchanged (RPC-REQ-6); with a key, ``requestKey``
        is its public key and the core signs with it (RPC-REQ-5).

        Raises:
            LocalProtocolError: the envelope breaks the spec (a bad protocol name ...).
            MessageTooLargeError: over 11,106 padded bytes (RPC-LIM-2) or, with
                ``strict_size``, over 10,000 bytes of JSON (RPC-LIM-3); nothing is sent.
        """
        envelope = ServiceRequest(
            protocol=protocol,
            request=request,
            version=version,
            request_key=signing_key.public_key.encode() if signing_key is not None else None,
            extra=dict(extra or {}),
        )
        size = check_service_size(envelope, kind="request", signed=signing_key is not None)
        if self.strict_size and not size.within_recommended:
            # RPC-LIM-3: "A request and a response SHOULD NOT exceed 10,000 bytes of JSON."
            raise MessageTooLargeError("service request", size.json_bytes, MAX_SERVICE_JSON_BYTES)
        return envelope

    async def request_envelope(
        self,
        target: str,
        protocol: str,
        request: JSONValue,
        *,
        version: JSONValue = ABSENT,
        timeout_s: float | None = None,
        sign: bool = False,
        signing_key: SigningKey | None = None,
        extra: Mapping[str, JSONValue] | None = None,
    ) -> ServiceResponse:
        """Send one request and return the response envelope as it came (an error included).

        Same arguments and failures as :meth:`request`, except that an envelope ``error`` is
        returned, not raised.
        """
        key = self._key(target, sign, signing_key)
        envelope = self.build_request(
            protocol, request, version=version, signing_key=key, extra=extra
        )
        wait_s = DEFAULT_REQUEST_TIMEOUT_S if timeout_s is None else timeout_s
        cmd = cmds.send_service_request(
            await self.user_id(),
            target,
            envelope.to_json(),
            # RPC-CMD-2: without timeout= the core waits its default 30 s.
            timeout_s=timeout_s,
            sign_key=key.to_sign_key() if key is not None else None,
        )
        verb = cmds.SERVICE_REQUEST_VERB
        deadline = self.clock.now() + wait_s + _GUARD_S
        try:
            if real_clock(self.clock):
                # run_until's real-clock path in this frame: a coroutine fewer per call waiting.
                finished, response = False, None
                with anyio.move_on_after(deadline - self.clock.now()):
                    response = await self.core.command(cmd)
                    finished = True
            else:
                finished, response = await run_until(self.clock, deadline, self.core.command, cmd)
        except CoreError as exc:
            mapped = _map_core_error(exc, wait_s, envelope, key is not None)
            if mapped is exc:
                raise
            raise mapped from exc
        if not finished or response is None:
            raise CallTimeoutError(
                f"the chat core did not answer {verb} within {wait_s + _GUARD_S:g} s",
                timeout=wait_s,
            )
        if response.get("type") != "serviceResponse":
            tag = response.get("type")
            raise UnexpectedResponseError(
                ("serviceResponse",),
                tag if isinstance(tag, str) else "",
                response=response,
                command=verb,
            )
        data = response.get("responseData")
        if not isinstance(data, dict):
            raise UnexpectedResponseError(
                ("serviceResponse",),
                "serviceResponse",
                response=response,
                command=verb,
                code="malformed_frame",
            )
        # A response that breaks the envelope schema raises EnvelopeError (RPC-ENV-1/2).
        return parse_service_response(data)

    async def request(
        self,
        target: str,
        protocol: str,
        request: JSONValue,
        *,
        version: JSONValue = ABSENT,
        timeout_s: float | None = None,
        sign: bool = False,
        signing_key: SigningKey | None = None,
        extra: Mapping[str, JSONValue] | None = None,
    ) -> JSONValue:
        """Send one request and return the protocol's response message.

        Args:
            target: the responder's contact address link or SimpleX name (RPC-CMD-1).
            protocol: the protocol name (``mcp``, ``a2a``).
            request: the protocol's request message, carried unchanged (RPC-REQ-6).
            version: the envelope ``version``, only for protocols whose messages carry none
                (omitted for ``mcp`` and ``a2a``).
            timeout_s: how long the responder may take; ``None`` is the core's default, 30 s
                (RPC-CMD-2). A slow responder may take up to 180 s (RPC-LIM-1).
            sign: sign with this responder's own key from ``key_store`` (RPC-SIG-5).
            signing_key: sign with this key instead.
            extra: extra envelope members (RPC-REQ-7).

        Returns:
            The envelope's ``response``: the protocol's response message (RPC-ENV-3).

        Raises:
            ServiceError: the responder answered with an envelope ``error``; the subclass names
                the code (``UnsupportedProtocolError``, ``RateLimitedError``, ...); an unknown
                code gives a plain ``ServiceError``, final unless it has ``retry_after``
                (RPC-ERR-6).
            CallTimeoutError: no response within the timeout (the core's ``A_SERVICE
                timeout``); the responder may still have acted on the request.
            ServiceTransportError: the core could not carry the request: ``notDRAddress``
                (the address takes no service requests), ``badSignature``, ``rejected``.
            MessageTooLargeError: the request is over the size limits (nothing was sent).
            EnvelopeError: the response envelope breaks the spec.
            CoreError: the core refused the command otherwise (an unknown SimpleX name ...).
            CoreConnectionError: the connection to the core was lost.
            ValueError: ``sign=True`` without a ``key_store``.
            KeyFileError: the key store is unusable.

        The requester stays usable after each of these.
        """
        response = await self.request_envelope(
            target,
            protocol,
            request,
            version=version,
            timeout_s=timeout_s,
            sign=sign,
            signing_key=signing_key,
            extra=extra,
        )
        raise_for_response(response)
        return response.response

    async def request_with_retry(
        self,
        target: str,
        protocol: str,
        request: JSONValue,
        *,
        max_attempts: int = 3,
        max_retry_after_s: int = DEFAULT_MAX_RETRY_AFTER_S,
        version: JSONValue = ABSENT,
        timeout_s: float | None = None,
        sign: bool = False,
        signing_key: SigningKey | None = None,
        extra: Mapping[str, JSONValue] | None = None,
    ) -> JSONValue:
        """:meth:`request`, repeated after ``retryAfter`` when the responder gives one.

        An error with ``retryAfter`` is repeated after exactly that many seconds on the
        requester's clock, never sooner (RPC-ERR-5, RPC-ENV-6); an error without it is final,
        ``rate_limited`` included (AMB-10) and unknown codes included (RPC-ERR-6). Timeouts are
        not repeated: the responder may have acted on the request.

        Args:
            max_attempts: at most this many requests in all (at least 1).
            max_retry_after_s: a ``retryAfter`` longer than this is not waited for: the error
                is raised instead.

        Raises:
            ServiceError: the last error, when it is final, when ``retryAfter`` is longer than
                ``max_retry_after_s``, or when the attempts are used up.
            Everything else :meth:`request` raises.
        """
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        attempt = 1
        while True:
            try:
                return await self.request(
                    target,
                    protocol,
                    request,
                    version=version,
                    timeout_s=timeout_s,
                    sign=sign,
                    signing_key=signing_key,
                    extra=extra,
                )
            except ServiceError as exc:
                wait = exc.retry_after
                if wait is None or attempt >= max_attempts or wait > max_retry_after_s:
                    raise
                logger.info(
                    "service error %s from a responder; repeating after %d s (attempt %d of %d)",
                    exc.code if isinstance(exc.code, str) else "?",
                    wait,
                    attempt + 1,
                    max_attempts,
                )
                await self.clock.sleep(wait)
                attempt += 1


def _map_core_error(
    exc: CoreError, wait_s: float, envelope: ServiceRequest, signed: bool
) -> Exception:
    """Turn the core's Service RPC failures into the toolkit's typed errors."""
    chain = exc.chain
    if "A_SERVICE" in chain:
        tag = chain[chain.index("A_SERVICE") + 1] if chain[-1] != "A_SERVICE" else "unknown"
        if tag == "timeout":
            return CallTimeoutError(
                f"no Service RPC response within {wait_s:g} s"
                + (
                    ""
                    if wait_s >= RESPONSE_WINDOW_S
                    else " (a slow responder may take up to 180 s)"
                ),
                timeout=wait_s,
            )
        return ServiceTransportError(
            exc.chat_error, service_error=tag, response=exc.response, command=exc.command
        )
    if chain[-2:] == ["CMD", "LARGE"]:
        # The agent refused to pad the request: the core counted more than we did.
        try:
            size = check_service_size(envelope, kind="request", signed=signed).padded_bytes
        except MessageTooLargeError as too_large:
            size = too_large.size
        return MessageTooLargeError("service request", size, SERVICE_PADDED_BYTES)
    return exc
