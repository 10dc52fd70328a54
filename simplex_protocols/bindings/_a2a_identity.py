"""A caller's persistent identity for A2A: the ``SimpleX-Identity`` credential (sans-IO).

A2A-AUTHZ-2 gives tasks to "that conversation", and SimpleX has no user identifiers, so a
caller talking to two replicas of one service is two unrelated callers. This credential lets
a caller prove an Ed25519 key instead, as a service parameter of an API-key security scheme of
the Agent Card (A2A-AUTHZ-3). It is never sent in a group (A2A-AUTHZ-4).

The credential is one string, four fields joined by ``.``::

    v1.<signerKey>.<time>.<signature>

- ``signerKey``: the caller's public key in the core's encoding (padded base64url of the X.509
  DER, as ``requestKey`` of Service RPC);
- ``time``: Unix seconds, a decimal integer without sign or leading zeros;
- ``signature``: padded base64url of the 64-byte Ed25519 signature of :func:`identity_digest`,
  which binds a fixed context with its version, the service the credential is meant for, the
  time and the request itself (method, id, params in canonical JSON). A credential therefore
  cannot be moved to another request, another service, or used outside the window.

Nothing here does I/O or reads a clock: the time is an argument.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import nacl.bindings as _sodium
import nacl.exceptions

from simplex_protocols.errors import SignatureError
from simplex_protocols.rpc import PublicKey, SigningKey

from ._a2a_wire import SERVICE_PARAMETERS_MEMBER

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import AgentCard

__all__ = [
    "IDENTITY_OWNER_PREFIX",
    "IDENTITY_PARAMETER",
    "IDENTITY_SCHEME",
    "IDENTITY_WINDOW_S",
    "Identity",
    "add_identity",
    "identity_digest",
    "make_identity",
    "verify_identity",
    "with_identity_scheme",
]

#: The service parameter (and API-key header name of the card's scheme) of the credential.
IDENTITY_PARAMETER: Final = "SimpleX-Identity"

#: How an owner proved by a credential starts (``key:`` and the key): the one kind of owner
#: that names the same caller at every replica of a service.
IDENTITY_OWNER_PREFIX: Final = "key:"

#: The name of the security scheme in the Agent Card's ``securitySchemes``.
IDENTITY_SCHEME: Final = "simplexIdentity"

#: How far the credential's time may be from the bot's clock, either way, in seconds.
IDENTITY_WINDOW_S: Final = 300

#: The domain of the digest: another protocol's signature never matches it.
_CONTEXT: Final = b"simplex-protocols a2a identity v1\x00"
_VERSION: Final = "v1"
_SIGNATURE_BYTES: Final = 64
_TIME: Final = re.compile(r"0|[1-9][0-9]{0,11}")
_B64URL: Final = re.compile(r"[A-Za-z0-9_-]+={0,2}")


@dataclass(frozen=True)
class Identity:
    """A verified credential: the key the caller proved, and the time it gave."""

    key: PublicKey
    time: int

    @property
    def owner(self) -> str:
        """The task owner of this caller: the same at every replica of the service."""
        return f"{IDENTITY_OWNER_PREFIX}{self.key.encode()}"


def _canonical(request: Mapping[str, Any]) -> bytes:
    """The request's method, id and params as canonical JSON (sorted keys, no spaces)."""
    part = {
        "method": request.get("method"),
        "id": request.get("id"),
        "params": request.get("params", {}),
    }
    try:
        # Canonical JSON needs sorted keys, which the wire encoder (_wire.dumps) never does:
        # this text is only hashed, never sent.
        text = json.dumps(  # noqa: TID251
            part, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError):
        raise SignatureError(
            "the request cannot be written as canonical JSON", code="bad_identity_request"
        ) from None
    return text.encode("utf-8", "surrogatepass")


def _field(value: bytes) -> bytes:
    # Length-prefixed, so that no two (service, time, request) triples share a digest input.
    return len(value).to_bytes(8, "big") + value


def identity_digest(service: str, time: int, request: Mapping[str, Any]) -> bytes:
    """The 32 bytes a caller signs: SHA3-256 of the context, service, time and request.

    Args:
        service: the name of the service the credential is for (the Agent Card's ``name``,
            which every replica of one service shares).
        time: Unix seconds.
        request: the JSON-RPC request (only ``method``, ``id`` and ``params`` count; the
            service parameters are not signed, the credential being one of them).

    Raises:
        SignatureError: ``bad_identity_request`` when the request is not JSON.
    """
    data = (
        _CONTEXT
        + _field(service.encode("utf-8", "surrogatepass"))
        + _field(str(time).encode())
        + _field(_canonical(request))
    )
    return hashlib.sha3_256(data).digest()


def make_identity(key: SigningKey, service: str, time: int, request: Mapping[str, Any]) -> str:
    """The ``SimpleX-Identity`` value proving ``key`` for ``request`` to ``service``.

    Raises:
        SignatureError: ``bad_identity_time`` for a negative time; as :func:`identity_digest`.
    """
    if isinstance(time, bool) or not isinstance(time, int) or time < 0:
        raise SignatureError(
            "the identity time is a non-negative integer", code="bad_identity_time"
        )
    _public, secret = _sodium.crypto_sign_seed_keypair(key.to_seed())
    signed: bytes = _sodium.crypto_sign(identity_digest(service, time, request), secret)
    signature = base64.urlsafe_b64encode(signed[:_SIGNATURE_BYTES]).decode("ascii")
    return ".".join((_VERSION, key.public_key.encode(), str(time), signature))


def add_identity(
    request: Mapping[str, Any], key: SigningKey, service: str, time: int
) -> dict[str, Any]:
    """A copy of an A2A JSON-RPC request whose service parameters carry the credential.

    Only for a direct conversation: a caller never sends a credential in a group
    (A2A-AUTHZ-4). A ``SimpleX-Identity`` already among the parameters is replaced.

    Raises:
        SignatureError: as :func:`make_identity`.
    """
    out = dict(request)
    members = out.get(SERVICE_PARAMETERS_MEMBER)
    parameters = {
        name: value
        for name, value in (members.items() if isinstance(members, Mapping) else ())
        if name.lower() != IDENTITY_PARAMETER.lower()
    }
    parameters[IDENTITY_PARAMETER] = make_identity(key, service, time, out)
    out[SERVICE_PARAMETERS_MEMBER] = parameters
    return out


def _signature_of(text: str) -> bytes:
    if _B64URL.fullmatch(text) is None:
        raise SignatureError("the identity signature is not base64url", code="bad_identity")
    try:
        body = text.rstrip("=")
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        raise SignatureError(
            "the identity signature is not base64url", code="bad_identity"
        ) from None
    if len(raw) != _SIGNATURE_BYTES:
        raise SignatureError(
            f"the identity signature is {len(raw)} bytes, not {_SIGNATURE_BYTES}",
            code="bad_identity",
        )
    return raw


def verify_identity(
    credential: str,
    *,
    service: str,
    request: Mapping[str, Any],
    now: float,
    window_s: float = IDENTITY_WINDOW_S,
) -> Identity:
    """Check a ``SimpleX-Identity`` value for ``request`` to ``service`` at time ``now``.

    Raises:
        SignatureError: with ``code`` one of ``bad_identity`` (not four fields, another
            version, a bad signature encoding), a key code of
            :meth:`~simplex_protocols.rpc.PublicKey.decode`, ``bad_identity_time`` (not a
            decimal time), ``identity_expired`` (outside the window), ``bad_identity_request``,
            ``bad_signature`` (another key, request, service or time).
    """
    if not isinstance(credential, str):
        raise SignatureError("the identity is not a string", code="bad_identity")
    fields = credential.strip(" \t").split(".")
    if len(fields) != 4:
        raise SignatureError(
            "the identity is v1.<signerKey>.<time>.<signature>", code="bad_identity"
        )
    version, key_text, time_text, signature_text = fields
    if version != _VERSION:
        raise SignatureError(f"identity version {version[:16]!r} is not v1", code="bad_identity")
    key = PublicKey.decode(key_text)
    if _TIME.fullmatch(time_text) is None:
        raise SignatureError("the identity time is not Unix seconds", code="bad_identity_time")
    time = int(time_text)
    signature = _signature_of(signature_text)
    if abs(now - time) > window_s:
        raise SignatureError(
            f"the identity time is more than {window_s:g} s from the bot's clock",
            code="identity_expired",
        )
    digest = identity_digest(service, time, request)
    try:
        _sodium.crypto_sign_open(signature + digest, key.raw)
    except nacl.exceptions.BadSignatureError:
        raise SignatureError(
            "the identity signature does not verify", code="bad_signature"
        ) from None
    return Identity(key=key, time=time)


def with_identity_scheme(card: AgentCard) -> AgentCard:
    """A copy of ``card`` that declares the identity as an optional API-key scheme.

    A2A-AUTHZ-3: the credential arrives as the scheme's service parameter, here the header
    :data:`IDENTITY_PARAMETER`. The scheme is optional: ``securityRequirements`` gets an empty
    alternative (no scheme at all, as OpenAPI writes ``{}``) beside the identity, so a caller
    without it is served as before. A card that already lists requirements keeps them, and
    gains the identity as one more alternative.
    """
    from a2a.types.a2a_pb2 import AgentCard, SecurityRequirement

    out = AgentCard()
    out.CopyFrom(card)
    scheme = out.security_schemes[IDENTITY_SCHEME].api_key_security_scheme
    scheme.location = "header"
    scheme.name = IDENTITY_PARAMETER
    scheme.description = (
        "Optional: v1.<signerKey>.<time>.<signature>, an Ed25519 key proved for one request, "
        "so that one caller owns its tasks across conversations and replicas"
    )
    existing = list(out.security_requirements)
    wanted = [SecurityRequirement()] if not existing else []
    identity = SecurityRequirement()
    identity.schemes[IDENTITY_SCHEME].SetInParent()
    if identity not in existing:
        wanted.append(identity)
    out.security_requirements.extend(wanted)
    return out
