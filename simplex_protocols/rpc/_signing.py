"""Signed Service RPC requests: Ed25519 keys, their encodings, signing and verification.

Spec "Service RPC transport" > "Signed requests": the requester's agent signs
``SHA3-256("SimpleXService" ‖ AD) ‖ payload`` with Ed25519, where AD is the associated data of
the request's double ratchet; the responder's agent verifies it and the core reports the key as
``signerKey``.

What the SimpleX sources say (simplexmq ``Simplex.Messaging.Agent``, ``serviceReqBinding``,
``signServiceReq``, ``verifyServiceReq``; ``plans/2026-07-24-signed-service-requests.md``):

- ``"SimpleXService"`` is the 14 ASCII bytes of that literal, with no length prefix or
  terminator;
- AD is the ratchet's ``rcAD``: the raw 56-byte X448 public key 1 of the requester (the party
  that joins) followed by the raw 56-byte X448 public key 1 of the responder's address, 112
  bytes, identical on both ratchets and fresh for every request;
- the payload is the request body the agent carries: the bytes of the envelope JSON as the chat
  core encodes it (see :func:`core_encode_json`);
- the signature is the plain 64-byte Ed25519 signature (RFC 8032, no pre-hash, no context).

``signerKey`` and ``requestKey`` are base64url, *with* ``=`` padding, of the 44-byte X.509
SubjectPublicKeyInfo DER of the key (simplexmq ``StrEncoding ByteString``: ``strEncode =
U.encode``, the padded URL alphabet ``A-Z a-z 0-9 - _``). ``sign_key=`` of
``/_service_request`` is base64url of the 48-byte PKCS#8 DER of the private key (crypton-x509
``newcurveToASN1``: version 0, OID 1.3.101.112, the 32-byte seed in an OCTET STRING).

Verification follows libsodium's strict rule (RFC 8032 plus: S < L, the key and R are
canonical and not of small order). The SimpleX agent verifies with crypton (ed25519-donna,
cofactorless, S must be canonical), which also accepts small-order keys and R and
non-canonical keys; the vectors flag those cases ``acceptable``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import os
import re
from collections.abc import Callable
from typing import Final

import nacl.bindings as _sodium
import nacl.exceptions
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from simplex_protocols.errors import SignatureError

__all__ = [
    "SERVICE_SIGNATURE_DOMAIN",
    "PublicKey",
    "SigningKey",
    "service_signature_input",
]

#: The domain string hashed with the ratchet's associated data (14 ASCII bytes).
SERVICE_SIGNATURE_DOMAIN: Final = b"SimpleXService"

_SIGNATURE_BYTES: Final = 64
_KEY_BYTES: Final = 32
#: SEQUENCE { SEQUENCE { OID 1.3.101.112 } BIT STRING (0 unused bits) } before the 32 key bytes.
_SPKI_PREFIX: Final = bytes.fromhex("302a300506032b6570032100")
#: SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET STRING } } (RFC 8410).
_PKCS8_PREFIX: Final = bytes.fromhex("302e020100300506032b657004220420")
_OID_ED25519: Final = bytes.fromhex("2b6570")
_URL_ALPHABET = re.compile(r"[A-Za-z0-9_-]*")
_ANY_ALPHABET = re.compile(r"[A-Za-z0-9_+/-]*")


def service_signature_input(associated_data: bytes, payload: bytes) -> bytes:
    """The bytes an agent signs for a Service RPC request (RPC-SIG-1).

    ``SHA3-256(b"SimpleXService" + associated_data) + payload``: a fixed 32-byte binding to the
    ratchet session, then the payload.

    Args:
        associated_data: the ratchet's associated data (``rcAD``, 112 bytes in the agent).
        payload: the request body, the envelope JSON as the core encodes it.
    """
    binding = hashlib.sha3_256(SERVICE_SIGNATURE_DOMAIN + bytes(associated_data)).digest()
    return binding + bytes(payload)


def _b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


def _b64url_decode(text: str, what: str) -> bytes:
    """Decode base64url as the core's parser does, refusing what it would not read the same way.

    Accepted: the URL alphabet with the correct ``=`` padding, or with none (the core writes
    padding; its parser accepts both). Refused, each with its own code: the standard alphabet
    (``+``, ``/``), wrong padding, other characters, non-zero unused bits.
    """
    if not isinstance(text, str):
        raise SignatureError(f"{what} is not a string", code="bad_base64")
    body = text.rstrip("=")
    padding = len(text) - len(body)
    if not body or _URL_ALPHABET.fullmatch(body) is None:
        if body and _ANY_ALPHABET.fullmatch(body) is not None:
            raise SignatureError(
                f"{what} uses the standard base64 alphabet; base64url uses - and _",
                code="bad_alphabet",
            )
        raise SignatureError(f"{what} is not base64url", code="bad_base64")
    if len(body) % 4 == 1:
        raise SignatureError(f"{what} has an impossible base64url length", code="bad_base64")
    expected = -len(body) % 4
    if padding not in (0, expected):
        raise SignatureError(
            f"{what} has {padding} padding characters, not {expected}", code="bad_padding"
        )
    try:
        data = base64.urlsafe_b64decode(body + "=" * expected)
    except (binascii.Error, ValueError):
        raise SignatureError(f"{what} is not base64url", code="bad_base64") from None
    if _b64url_encode(data).rstrip("=") != body:
        raise SignatureError(f"{what} has non-zero unused bits", code="non_canonical_base64")
    return data


def _der_header(data: bytes, offset: int) -> tuple[int, int, int]:
    """Read one DER tag and a minimal definite length: (tag, value offset, value length)."""
    if offset + 2 > len(data):
        raise SignatureError("truncated DER", code="not_spki")
    tag = data[offset]
    first = data[offset + 1]
    if first < 0x80:
        return tag, offset + 2, first
    count = first & 0x7F
    if count == 0 or count > 2 or offset + 2 + count > len(data):
        raise SignatureError("bad DER length", code="not_spki")
    length = int.from_bytes(data[offset + 2 : offset + 2 + count], "big")
    if length < 0x80 or (count == 2 and length < 0x100):
        raise SignatureError("non-minimal DER length", code="not_spki")
    return tag, offset + 2 + count, length


def _spki_to_raw(der: bytes) -> bytes:
    """The 32 key bytes of an Ed25519 SubjectPublicKeyInfo, with a precise error otherwise."""
    if der.startswith(_SPKI_PREFIX) and len(der) == len(_SPKI_PREFIX) + _KEY_BYTES:
        return der[len(_SPKI_PREFIX) :]
    if len(der) == _KEY_BYTES and der[0] != 0x30:
        raise SignatureError("a raw 32-byte key, not X.509 SubjectPublicKeyInfo", code="raw_key")
    tag, start, length = _der_header(der, 0)
    if tag != 0x30:
        raise SignatureError("not a DER SEQUENCE", code="not_spki")
    end = start + length
    if end > len(der):
        raise SignatureError("truncated DER", code="not_spki")
    if end < len(der):
        raise SignatureError("bytes after the SubjectPublicKeyInfo", code="trailing_bytes")
    tag, alg_start, alg_length = _der_header(der, start)
    if tag != 0x30:
        raise SignatureError("no AlgorithmIdentifier", code="not_spki")
    tag, oid_start, oid_length = _der_header(der, alg_start)
    if tag != 0x06:
        raise SignatureError("no algorithm OID", code="not_spki")
    oid = der[oid_start : oid_start + oid_length]
    if oid != _OID_ED25519:
        raise SignatureError(f"algorithm OID {oid.hex()} is not Ed25519", code="wrong_algorithm")
    if oid_start + oid_length != alg_start + alg_length:
        raise SignatureError("AlgorithmIdentifier has parameters", code="not_spki")
    tag, bits_start, bits_length = _der_header(der, alg_start + alg_length)
    if tag != 0x03 or bits_start + bits_length != end or bits_length < 1:
        raise SignatureError("no BIT STRING key", code="not_spki")
    if der[bits_start] != 0:
        raise SignatureError("BIT STRING has unused bits", code="not_spki")
    if bits_length - 1 != _KEY_BYTES:
        raise SignatureError(
            f"key is {bits_length - 1} bytes, not {_KEY_BYTES}", code="bad_key_length"
        )
    return der[bits_start + 1 : end]


@functools.lru_cache(maxsize=512)
def _decode_public_key_text(text: str) -> bytes:
    # The same few keys arrive again and again (every request of a requester carries its key):
    # decoding is pure, so remember the recent answers. Errors are not cached.
    return _spki_to_raw(_b64url_decode(text, "the key"))


class PublicKey:
    """An Ed25519 public key: a ``signerKey``, a ``requestKey``.

    Compare keys as objects (``==`` compares the 32 key bytes), never as strings.
    """

    __slots__ = ("_encoded", "_raw")

    def __init__(self, raw: bytes) -> None:
        raw = bytes(raw)
        if len(raw) != _KEY_BYTES:
            raise SignatureError(
                f"an Ed25519 key is {_KEY_BYTES} bytes, not {len(raw)}", code="bad_key_length"
            )
        self._raw = raw
        self._encoded: str | None = None

    @classmethod
    def from_raw(cls, raw: bytes) -> PublicKey:
        """The key from its 32 raw bytes (RFC 8032 encoding of the point).

        Raises:
            SignatureError: ``code="bad_key_length"`` when ``raw`` is not 32 bytes.
        """
        return cls(raw)

    @classmethod
    def decode(cls, text: str) -> PublicKey:
        """Decode ``signerKey`` / ``requestKey`` text (RPC-REQ-4).

        The encoding is base64url of the X.509 SubjectPublicKeyInfo DER of an Ed25519 key. The
        core writes it with ``=`` padding and reads it with or without; both are accepted.

        Raises:
            SignatureError: with ``code`` one of ``bad_base64``, ``bad_alphabet`` (``+`` or
                ``/``), ``bad_padding``, ``non_canonical_base64``, ``raw_key`` (32 raw bytes, no
                DER), ``not_spki``, ``wrong_algorithm`` (for example an X25519 key),
                ``trailing_bytes``, ``bad_key_length``.
        """
        if not isinstance(text, str):
            raise SignatureError("the key is not a string", code="bad_base64")
        return cls(_decode_public_key_text(text))

    @classmethod
    def from_spki_der(cls, der: bytes) -> PublicKey:
        """The key from its X.509 SubjectPublicKeyInfo DER.

        Raises:
            SignatureError: as :meth:`decode`, for the DER part.
        """
        return cls(_spki_to_raw(bytes(der)))

    @property
    def raw(self) -> bytes:
        """The 32 raw key bytes."""
        return self._raw

    @property
    def spki_der(self) -> bytes:
        """The 44-byte X.509 SubjectPublicKeyInfo DER."""
        return _SPKI_PREFIX + self._raw

    def encode(self) -> str:
        """The ``signerKey`` / ``requestKey`` text: padded base64url of the SPKI DER."""
        if self._encoded is None:
            self._encoded = _b64url_encode(self.spki_der)
        return self._encoded

    def verify_service_payload(
        self, associated_data: bytes, payload: bytes, signature: bytes
    ) -> None:
        """Verify a Service RPC request signature (RPC-SIG-1, RPC-SIG-2).

        Raises:
            SignatureError: ``code="bad_signature_length"`` when the signature is not 64 bytes,
                ``code="bad_signature"`` when it does not verify (another session's AD, another
                payload, another key, a non-canonical or small-order value).
        """
        signature = bytes(signature)
        if len(signature) != _SIGNATURE_BYTES:
            raise SignatureError(
                f"an Ed25519 signature is {_SIGNATURE_BYTES} bytes, not {len(signature)}",
                code="bad_signature_length",
            )
        message = service_signature_input(associated_data, payload)
        try:
            _sodium.crypto_sign_open(signature + message, self._raw)
        except nacl.exceptions.BadSignatureError:
            raise SignatureError("the signature does not verify", code="bad_signature") from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PublicKey):
            return NotImplemented
        return hmac.compare_digest(self._raw, other._raw)

    def __hash__(self) -> int:
        return hash(self._raw)

    def __repr__(self) -> str:
        return f"PublicKey({self.encode()!r})"


class SigningKey:
    """A requester's Ed25519 private key. Its ``repr`` never shows the key bytes.

    Signing runs on libsodium (pynacl), which measured faster than OpenSSL for Ed25519 here;
    Ed25519 signatures are deterministic, so both give the same bytes (the tests check it).
    """

    __slots__ = ("_public", "_secret", "_seed")

    def __init__(self, seed: bytes) -> None:
        seed = bytes(seed)
        if len(seed) != _KEY_BYTES:
            raise SignatureError(
                f"an Ed25519 seed is {_KEY_BYTES} bytes, not {len(seed)}", code="bad_private_key"
            )
        public, secret = _sodium.crypto_sign_seed_keypair(seed)
        self._seed = seed
        self._secret = secret
        self._public = PublicKey(public)

    @classmethod
    def generate(cls, random_bytes: Callable[[int], bytes] | None = None) -> SigningKey:
        """A new key from 32 random bytes.

        Args:
            random_bytes: the source of randomness, ``os.urandom`` by default; tests pass a
                deterministic one.
        """
        source = os.urandom if random_bytes is None else random_bytes
        return cls(source(_KEY_BYTES))

    @classmethod
    def from_seed(cls, seed: bytes) -> SigningKey:
        """The key from its 32-byte seed (RFC 8032 private key).

        Raises:
            SignatureError: ``code="bad_private_key"`` when ``seed`` is not 32 bytes.
        """
        return cls(seed)

    @classmethod
    def from_sign_key(cls, text: str) -> SigningKey:
        """Read the ``sign_key=`` text of ``/_service_request``.

        That is base64url of the PKCS#8 DER of the key, as simplexmq encodes private keys
        (version 0, no attributes, no public key). A version-1 PKCS#8 that carries the public key
        is read too, when the public key matches.

        Raises:
            SignatureError: ``code="bad_sign_key"`` for anything that is not an Ed25519 PKCS#8
                private key; the base64url codes of :meth:`PublicKey.decode`.
        """
        der = _b64url_decode(text, "the signing key")
        if der.startswith(_PKCS8_PREFIX) and len(der) == len(_PKCS8_PREFIX) + _KEY_BYTES:
            return cls(der[len(_PKCS8_PREFIX) :])
        try:
            key = serialization.load_der_private_key(der, password=None)
        except (ValueError, TypeError) as exc:
            raise SignatureError(f"not a PKCS#8 private key: {exc}", code="bad_sign_key") from None
        except Exception:  # an unsupported algorithm may surface as another error
            raise SignatureError("not a PKCS#8 Ed25519 private key", code="bad_sign_key") from None
        if not isinstance(key, ed25519.Ed25519PrivateKey):
            raise SignatureError("the private key is not Ed25519", code="bad_sign_key")
        return cls(key.private_bytes_raw())

    @property
    def public_key(self) -> PublicKey:
        """The public key, whose :meth:`PublicKey.encode` is the ``requestKey``."""
        return self._public

    def to_sign_key(self) -> str:
        """The ``sign_key=`` text: base64url of the 48-byte PKCS#8 DER."""
        return _b64url_encode(_PKCS8_PREFIX + self._seed)

    def to_seed(self) -> bytes:
        """The 32-byte seed. Handle with care: whoever has it can sign as this key."""
        return self._seed

    def sign_service_payload(self, associated_data: bytes, payload: bytes) -> bytes:
        """Sign a Service RPC request payload bound to a ratchet session (RPC-SIG-1).

        Returns:
            The 64-byte Ed25519 signature of :func:`service_signature_input`.
        """
        message = service_signature_input(associated_data, payload)
        signed: bytes = _sodium.crypto_sign(message, self._secret)
        return signed[:_SIGNATURE_BYTES]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SigningKey):
            return NotImplemented
        return hmac.compare_digest(self._seed, other._seed)

    def __hash__(self) -> int:
        return hash(self._public)

    def __repr__(self) -> str:
        return f"SigningKey(public_key={self._public.encode()!r})"

    __str__ = __repr__

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("a SigningKey is not pickled; store it with to_sign_key() in a key file")
