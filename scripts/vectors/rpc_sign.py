"""Generate the signature and key vectors of spec/vectors/rpc/ (deterministic, fixed seeds).

Writes sign.json (rpc.verify_signature), sign-kat.json (rpc.sign_payload), keys.json
(rpc.decode_key) and request-key.json (rpc.check_request_key). Run from the repository root:

    python scripts/vectors/rpc_sign.py

Signatures are made with libsodium (pynacl) and checked with OpenSSL (cryptography); the edge
cases (small-order and non-canonical points, non-canonical S) are built with the small
Edwards-curve arithmetic below, so that the cases do not depend on either library.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import nacl.bindings as sodium
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed448, x448, x25519

from simplex_protocols.rpc import SigningKey
from simplex_protocols.rpc.advanced import core_encode_json

OUT = Path(__file__).resolve().parents[2] / "spec" / "vectors" / "rpc"
GENERATOR = "scripts/vectors/rpc_sign.py"
SOURCE = "Agent protocols over SimpleX, revision 2 (2026-10-21), Service RPC transport > Signed requests; simplexmq Simplex.Messaging.Agent (serviceReqBinding, signServiceReq, verifyServiceReq)"
SPEC_REVISION = "2026-10-21"

# --------------------------------------------------------------------------- curve arithmetic

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = (-121665 * pow(121666, P - 2, P)) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)

Point = tuple[int, int, int, int]
IDENTITY: Point = (0, 1, 1, 0)


def _add(a: Point, b: Point) -> Point:
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % P
    bb = (y1 + x1) * (y2 + x2) % P
    cc = 2 * t1 * t2 * D % P
    dd = 2 * z1 * z2 % P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _mul(s: int, p: Point) -> Point:
    q = IDENTITY
    while s:
        if s & 1:
            q = _add(q, p)
        p = _add(p, p)
        s >>= 1
    return q


def _encode(p: Point) -> bytes:
    x, y, z, _ = p
    zi = pow(z, P - 2, P)
    x, y = x * zi % P, y * zi % P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


def _decode(data: bytes) -> Point:
    y = int.from_bytes(data, "little") & ((1 << 255) - 1)
    sign = data[31] >> 7
    y %= P
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P:
        x = x * SQRT_M1 % P
    if (x * x - x2) % P:
        raise ValueError("not a point")
    if (x & 1) != sign:
        x = P - x
    return (x, y, 1, x * y % P)


BASE = _decode((4 * pow(5, P - 2, P) % P).to_bytes(32, "little"))
assert _encode(_mul(L, BASE)) == _encode(IDENTITY)


def _h(*parts: bytes) -> int:
    return int.from_bytes(hashlib.sha512(b"".join(parts)).digest(), "little") % L


def _secret_scalar(seed: bytes) -> int:
    h = bytearray(hashlib.sha512(seed).digest()[:32])
    h[0] &= 248
    h[31] &= 127
    h[31] |= 64
    return int.from_bytes(h, "little")


# --------------------------------------------------------------------------- fixed material


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


def _x448_public(label: str) -> bytes:
    private = x448.X448PrivateKey.from_private_bytes(hashlib.shake_256(label.encode()).digest(56))
    return private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )


# AD as the agent builds it: requester's X448 key 1 then the address's X448 key 1 (112 bytes).
REQUESTER_1 = _x448_public("rpc vectors: requester ratchet key 1")
RESPONDER_1 = _x448_public("rpc vectors: responder address ratchet key 1")
AD = REQUESTER_1 + RESPONDER_1
OTHER_AD = _x448_public("rpc vectors: requester ratchet key 1, second request") + RESPONDER_1

KEY_A = SigningKey.from_seed(bytes(range(32)))
KEY_B = SigningKey.from_seed(bytes(range(32, 64)))
assert "_" in KEY_A.public_key.encode()  # the standard-alphabet case needs a '_' or '-'


def key_group(key: SigningKey) -> dict[str, Any]:
    """One key in every form an implementation may want."""
    return {
        "seed_hex": key.to_seed().hex(),
        "public_hex": key.public_key.raw.hex(),
        "spki_der_hex": key.public_key.spki_der.hex(),
        "request_key": key.public_key.encode(),
        "sign_key": key.to_sign_key(),
    }


def raw_key_group(raw: bytes) -> dict[str, Any]:
    der = bytes.fromhex("302a300506032b6570032100") + raw
    return {
        "seed_hex": None,
        "public_hex": raw.hex(),
        "spki_der_hex": der.hex(),
        "request_key": _b64url(der),
    }


def envelope(key: SigningKey | None, request: dict[str, Any]) -> bytes:
    value: dict[str, Any] = {"protocol": "mcp", "request": request}
    if key is not None:
        value["requestKey"] = key.public_key.encode()
    return core_encode_json(value).encode("utf-8")


MCP_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {
        "name": "availability",
        "arguments": {"item": "anvil"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    },
}
PAYLOAD = envelope(KEY_A, MCP_CALL)
PAYLOAD_B = envelope(KEY_B, {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}})


def binding(ad: bytes, domain: bytes = b"SimpleXService") -> bytes:
    return hashlib.sha3_256(domain + ad).digest()


def sign_raw(key: SigningKey, message: bytes) -> bytes:
    _, secret = sodium.crypto_sign_seed_keypair(key.to_seed())
    return bytes(sodium.crypto_sign(message, secret)[:64])


def sign(key: SigningKey, ad: bytes, payload: bytes) -> bytes:
    return sign_raw(key, binding(ad) + payload)


def flip(data: bytes, index: int, bit: int = 0) -> bytes:
    out = bytearray(data)
    out[index] ^= 1 << bit
    return bytes(out)


# --------------------------------------------------------------------------- sign.json


def _case(
    name: str,
    reqs: list[str],
    result: str,
    key: dict[str, Any],
    ad: bytes,
    payload: bytes,
    signature: bytes,
    *,
    flags: list[str] | None = None,
    error: str | None = None,
    comment: str | None = None,
    expected: Any = None,
) -> dict[str, Any]:
    case: dict[str, Any] = {"id": f"rpc.sign/{name}", "requirements": reqs}
    if flags:
        case["flags"] = flags
    case["input"] = {
        "ad_hex": ad.hex(),
        "payload_hex": payload.hex(),
        "signature_hex": signature.hex(),
    }
    case["args"] = {"key": key}
    case["result"] = result
    if expected is not None:
        case["expected"] = expected
    if error is not None:
        case["error"] = error
    if comment:
        case["comment"] = comment
    return case


def sign_cases() -> list[dict[str, Any]]:
    a, b = key_group(KEY_A), key_group(KEY_B)
    sig = sign(KEY_A, AD, PAYLOAD)
    ok_a = {"signer_key": a["request_key"]}
    ok_b = {"signer_key": b["request_key"]}
    sig1 = ["RPC-SIG-1"]
    cases = [
        _case(
            "kat-signed-mcp-call",
            ["RPC-SIG-1", "RPC-SIG-2", "RPC-REQ-5"],
            "valid",
            a,
            AD,
            PAYLOAD,
            sig,
            expected=ok_a,
            comment='a tools/call envelope with its requestKey, signed over SHA3-256("SimpleXService" || AD) || payload',
        ),
        _case(
            "kat-key-b",
            ["RPC-SIG-1", "RPC-SIG-2"],
            "valid",
            b,
            OTHER_AD,
            PAYLOAD_B,
            sign(KEY_B, OTHER_AD, PAYLOAD_B),
            expected=ok_b,
        ),
        _case(
            "kat-empty-payload",
            sig1,
            "valid",
            a,
            AD,
            b"",
            sign(KEY_A, AD, b""),
            expected=ok_a,
            comment="the primitive allows an empty payload; the core never sends one",
        ),
        _case(
            "kat-empty-ad",
            sig1,
            "valid",
            a,
            b"",
            PAYLOAD,
            sign(KEY_A, b"", PAYLOAD),
            expected=ok_a,
            comment="the binding is SHA3-256 of the domain string alone",
        ),
        _case(
            "kat-non-ascii-payload",
            sig1,
            "valid",
            a,
            AD,
            envelope(KEY_A, {"text": "Grüße \u202eevil\u202c 🦊\n"}),
            sign(KEY_A, AD, envelope(KEY_A, {"text": "Grüße \u202eevil\u202c 🦊\n"})),
            expected=ok_a,
            comment="the payload is signed as UTF-8 bytes, bidi marks and escapes included",
        ),
        _case(
            "kat-large-payload",
            sig1,
            "valid",
            a,
            AD,
            envelope(KEY_A, {"blob": "x" * 9900}),
            sign(KEY_A, AD, envelope(KEY_A, {"blob": "x" * 9900})),
            expected=ok_a,
        ),
        _case(
            "other-session-ad",
            ["RPC-SIG-1", "RPC-SIG-2"],
            "invalid",
            a,
            OTHER_AD,
            PAYLOAD,
            sig,
            flags=["Replay"],
            error="bad_signature",
            comment="a signature copied into another session fails verification",
        ),
        _case(
            "ad-halves-swapped",
            ["RPC-SIG-1"],
            "invalid",
            a,
            RESPONDER_1 + REQUESTER_1,
            PAYLOAD,
            sig,
            flags=["Replay"],
            error="bad_signature",
            comment="AD is the requester's key then the responder's, not the other way round",
        ),
        _case(
            "ad-bit-flip",
            ["RPC-SIG-1", "RPC-SIG-2"],
            "invalid",
            a,
            flip(AD, 111, 7),
            PAYLOAD,
            sig,
            flags=["Replay"],
            error="bad_signature",
        ),
        _case(
            "ad-truncated",
            ["RPC-SIG-1"],
            "invalid",
            a,
            AD[:-1],
            PAYLOAD,
            sig,
            flags=["Replay"],
            error="bad_signature",
        ),
        _case(
            "payload-first-bit-flip",
            sig1,
            "invalid",
            a,
            AD,
            flip(PAYLOAD, 0),
            sig,
            flags=["ModifiedPayload"],
            error="bad_signature",
        ),
        _case(
            "payload-middle-bit-flip",
            sig1,
            "invalid",
            a,
            AD,
            flip(PAYLOAD, len(PAYLOAD) // 2, 3),
            sig,
            flags=["ModifiedPayload"],
            error="bad_signature",
        ),
        _case(
            "payload-last-bit-flip",
            sig1,
            "invalid",
            a,
            AD,
            flip(PAYLOAD, len(PAYLOAD) - 1, 6),
            sig,
            flags=["ModifiedPayload"],
            error="bad_signature",
        ),
        _case(
            "payload-appended-byte",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD + b" ",
            sig,
            flags=["ModifiedPayload"],
            error="bad_signature",
        ),
        _case(
            "payload-truncated",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD[:-1],
            sig,
            flags=["ModifiedPayload"],
            error="bad_signature",
        ),
        _case(
            "payload-reencoded",
            sig1,
            "invalid",
            a,
            AD,
            json.dumps(json.loads(PAYLOAD)).encode(),
            sig,
            flags=["ModifiedPayload"],
            error="bad_signature",
            comment="the same JSON with spaces is another payload: verifiers use the bytes the agent received",
        ),
        _case(
            "wrong-key",
            ["RPC-SIG-1", "RPC-SIG-3"],
            "invalid",
            a,
            AD,
            PAYLOAD,
            sign(KEY_B, AD, PAYLOAD),
            flags=["WrongKey"],
            error="bad_signature",
        ),
        _case(
            "wrong-primitive-sha256",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sign_raw(KEY_A, hashlib.sha256(b"SimpleXService" + AD).digest() + PAYLOAD),
            flags=["WrongPrimitive"],
            error="bad_signature",
        ),
        _case(
            "wrong-primitive-sha3-512",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sign_raw(KEY_A, hashlib.sha3_512(b"SimpleXService" + AD).digest() + PAYLOAD),
            flags=["WrongPrimitive"],
            error="bad_signature",
        ),
        _case(
            "wrong-primitive-sha3-512-truncated",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sign_raw(KEY_A, hashlib.sha3_512(b"SimpleXService" + AD).digest()[:32] + PAYLOAD),
            flags=["WrongPrimitive"],
            error="bad_signature",
        ),
        _case(
            "wrong-domain-case",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sign_raw(KEY_A, binding(AD, b"SimplexService") + PAYLOAD),
            flags=["WrongPrimitive"],
            error="bad_signature",
        ),
        _case(
            "wrong-domain-nul-terminated",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sign_raw(KEY_A, binding(AD, b"SimpleXService\x00") + PAYLOAD),
            flags=["WrongPrimitive"],
            error="bad_signature",
        ),
        _case(
            "wrong-domain-length-prefixed",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sign_raw(KEY_A, binding(AD, b"\x0eSimpleXService") + PAYLOAD),
            flags=["WrongPrimitive"],
            error="bad_signature",
        ),
        _case(
            "missing-domain",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sign_raw(KEY_A, hashlib.sha3_256(AD).digest() + PAYLOAD),
            flags=["MissingStep"],
            error="bad_signature",
        ),
        _case(
            "missing-binding",
            ["RPC-SIG-1", "RPC-SIG-2"],
            "invalid",
            a,
            AD,
            PAYLOAD,
            sign_raw(KEY_A, PAYLOAD),
            flags=["MissingStep"],
            error="bad_signature",
            comment="a signature over the payload alone is not bound to the session",
        ),
        _case(
            "binding-not-hashed",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sign_raw(KEY_A, b"SimpleXService" + AD + PAYLOAD),
            flags=["MissingStep"],
            error="bad_signature",
        ),
        _case(
            "payload-hashed-too",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sign_raw(KEY_A, binding(AD) + hashlib.sha3_256(PAYLOAD).digest()),
            flags=["WrongPrimitive"],
            error="bad_signature",
        ),
        _case(
            "ed25519ph",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            _ed25519ph(KEY_A, binding(AD) + PAYLOAD),
            flags=["WrongPrimitive"],
            error="bad_signature",
            comment="Ed25519ph (RFC 8032 pre-hash variant) is not Ed25519",
        ),
        _case(
            "signature-truncated",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sig[:63],
            flags=["SignatureLength"],
            error="bad_signature_length",
        ),
        _case(
            "signature-empty",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            b"",
            flags=["SignatureLength"],
            error="bad_signature_length",
        ),
        _case(
            "signature-extra-byte",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sig + b"\x00",
            flags=["SignatureLength"],
            error="bad_signature_length",
        ),
        _case(
            "signature-with-message",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sig + binding(AD) + PAYLOAD,
            flags=["SignatureLength"],
            error="bad_signature_length",
            comment="libsodium's combined form (signature || message) is not the signature",
        ),
        _case(
            "signature-zero",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            bytes(64),
            flags=["ModifiedSignature"],
            error="bad_signature",
        ),
        _case(
            "signature-r-s-swapped",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sig[32:] + sig[:32],
            flags=["ModifiedSignature"],
            error="bad_signature",
        ),
        _case(
            "signature-r-bit-flip",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            flip(sig, 5),
            flags=["ModifiedSignature"],
            error="bad_signature",
        ),
        _case(
            "signature-s-bit-flip",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            flip(sig, 40),
            flags=["ModifiedSignature"],
            error="bad_signature",
        ),
    ]
    # Non-canonical S: S + L still satisfies the equation; RFC 8032 and both libraries refuse it.
    s = int.from_bytes(sig[32:], "little")
    cases.append(
        _case(
            "non-canonical-s",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sig[:32] + (s + L).to_bytes(32, "little"),
            flags=["NonCanonicalS"],
            error="bad_signature",
            comment="S + L: the same signature made malleable",
        )
    )
    high = (s + 8 * L) % (1 << 256)
    cases.append(
        _case(
            "s-high-bits",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            sig[:32] + high.to_bytes(32, "little"),
            flags=["NonCanonicalS"],
            error="bad_signature",
        )
    )
    cases.extend(_edge_cases(a))
    return cases


def _ed25519ph(key: SigningKey, message: bytes) -> bytes:
    _, secret = sodium.crypto_sign_seed_keypair(key.to_seed())
    state = sodium.crypto_sign_ed25519ph_state()
    sodium.crypto_sign_ed25519ph_update(state, message)
    return bytes(sodium.crypto_sign_ed25519ph_final_create(state, secret))


def _edge_cases(a: dict[str, Any]) -> list[dict[str, Any]]:
    sig1 = ["RPC-SIG-1"]
    identity = _encode(IDENTITY)
    zero_s = bytes(32)
    message = binding(AD) + PAYLOAD
    out = []
    # Small-order key: the identity point. R = identity and S = 0 verify any message cofactorless.
    out.append(
        _case(
            "small-order-key-identity",
            sig1,
            "acceptable",
            raw_key_group(identity),
            AD,
            PAYLOAD,
            identity + zero_s,
            flags=["SmallOrderKey"],
            comment="crypton (the agent) accepts; libsodium refuses; any payload verifies",
        )
    )
    # Small-order key of order 2, (0, -1): valid when H(R || A || M) mod L is even.
    order2 = (P - 1).to_bytes(32, "little")
    payload = PAYLOAD
    nonce = 0
    while _h(identity, order2, binding(AD) + payload) % 2:
        nonce += 1
        payload = envelope(None, {"jsonrpc": "2.0", "id": nonce, "method": "tools/list"})
    out.append(
        _case(
            "small-order-key-order-2",
            sig1,
            "acceptable",
            raw_key_group(order2),
            AD,
            payload,
            identity + zero_s,
            flags=["SmallOrderKey"],
        )
    )
    # Small-order R with an honest key: R = identity, S = h * a.
    a_scalar = _secret_scalar(KEY_A.to_seed())
    h = _h(identity, KEY_A.public_key.raw, message)
    out.append(
        _case(
            "small-order-r",
            sig1,
            "acceptable",
            a,
            AD,
            PAYLOAD,
            identity + (h * a_scalar % L).to_bytes(32, "little"),
            flags=["SmallOrderR"],
        )
    )
    # Non-canonical key: the identity written with y = p + 1.
    non_canonical_identity = (P + 1).to_bytes(32, "little")
    out.append(
        _case(
            "non-canonical-key",
            sig1,
            "acceptable",
            raw_key_group(non_canonical_identity),
            AD,
            PAYLOAD,
            identity + zero_s,
            flags=["NonCanonicalKey"],
        )
    )
    # Non-canonical R: the identity written with y = p + 1, S = h * a over that R.
    h = _h(non_canonical_identity, KEY_A.public_key.raw, message)
    out.append(
        _case(
            "non-canonical-r",
            sig1,
            "invalid",
            a,
            AD,
            PAYLOAD,
            non_canonical_identity + (h * a_scalar % L).to_bytes(32, "little"),
            flags=["NonCanonicalR"],
            error="bad_signature",
        )
    )
    # Mixed-order key: A + T (T of order 8), valid cofactorless when h is a multiple of 8.
    torsion = _decode(
        bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
    )
    assert _encode(_mul(8, torsion)) == identity and _encode(_mul(4, torsion)) != identity
    mixed = _encode(_add(_mul(a_scalar, BASE), torsion))
    nonce = 0
    while True:
        payload = envelope(None, {"jsonrpc": "2.0", "id": nonce, "method": "tools/list"})
        r_scalar = _h(b"rpc vectors mixed order", payload)
        r_point = _encode(_mul(r_scalar, BASE))
        h = _h(r_point, mixed, binding(AD) + payload)
        if h % 8 == 0:
            break
        nonce += 1
    s_value = (r_scalar + h * a_scalar) % L
    out.append(
        _case(
            "mixed-order-key",
            sig1,
            "acceptable",
            raw_key_group(mixed),
            AD,
            payload,
            r_point + s_value.to_bytes(32, "little"),
            flags=["MixedOrderKey"],
        )
    )
    return out


SIGN_NOTES = {
    "Replay": {
        "bug_class": "SIGNATURE_REPLAY",
        "description": "A valid signature checked under another ratchet's associated data.",
        "effect": "A signature copied into another session would be accepted (RPC-SIG-2).",
    },
    "ModifiedPayload": {
        "bug_class": "MODIFIED_MESSAGE",
        "description": "The payload differs from the signed bytes.",
        "effect": "A changed request would pass as signed.",
    },
    "WrongKey": {
        "bug_class": "WRONG_KEY",
        "description": "Signed by another key.",
        "effect": "Any key could sign for a requestKey.",
    },
    "WrongPrimitive": {
        "bug_class": "WRONG_PRIMITIVE",
        "description": 'Another hash or encoding in place of SHA3-256("SimpleXService" || AD).',
        "effect": "Signatures would not interoperate with the SimpleX agent.",
    },
    "MissingStep": {
        "bug_class": "MISSING_STEP",
        "description": "A step of the construction left out (domain, hashing, or the whole binding).",
        "effect": "Signatures not bound to the session or not separated from other uses of the key.",
    },
    "SignatureLength": {
        "bug_class": "MALFORMED_SIGNATURE",
        "description": "A signature that is not 64 bytes.",
        "effect": "Truncation or trailing data accepted.",
    },
    "ModifiedSignature": {
        "bug_class": "MALFORMED_SIGNATURE",
        "description": "Bytes of the signature changed.",
        "effect": "Forgery.",
    },
    "NonCanonicalS": {
        "bug_class": "SIGNATURE_MALLEABILITY",
        "description": "S at or above the group order L.",
        "effect": "Malleable signatures. RFC 8032, libsodium, OpenSSL and current crypton (the SimpleX agent's library, which checks S by reducing it) refuse; old cryptonite builds checked only the top three bits of S.",
    },
    "NonCanonicalR": {
        "bug_class": "NON_CANONICAL_ENCODING",
        "description": "R written with y >= p.",
        "effect": "Both the agent (crypton compares the encoded R) and libsodium refuse; verifiers that compare decoded points accept.",
    },
    "SmallOrderKey": {
        "bug_class": "SMALL_ORDER_KEY",
        "description": "A public key of small order, with a signature that verifies cofactorless for any payload.",
        "acceptable": "The SimpleX agent (crypton, ed25519-donna) accepts such keys; libsodium, which this library uses, refuses them. A requester who offers such a key only hurts itself, so either outcome conforms.",
    },
    "SmallOrderR": {
        "bug_class": "SMALL_ORDER_R",
        "description": "R of small order (the identity) with an honest key.",
        "acceptable": "crypton accepts, libsodium refuses; either outcome conforms.",
    },
    "NonCanonicalKey": {
        "bug_class": "NON_CANONICAL_ENCODING",
        "description": "A public key written with y >= p (here the identity as p + 1).",
        "acceptable": "crypton reduces y and accepts; RFC 8032 decoding and libsodium refuse; either outcome conforms.",
    },
    "MixedOrderKey": {
        "bug_class": "MIXED_ORDER_KEY",
        "description": "An honest key plus a point of order 8, with a signature whose hash is a multiple of 8.",
        "acceptable": "Cofactorless verifiers (crypton, libsodium) accept; cofactored or stricter verifiers may refuse; either outcome conforms.",
    },
}


def write(name: str, data: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def header(
    family: str, operation: str, output: str, notes: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema": "simplex-protocols/vectors/1",
        "family": family,
        "operation": operation,
    }
    data.update(extra)
    data.update(
        {
            "source": SOURCE,
            "spec_revision": SPEC_REVISION,
            "generator": GENERATOR,
            "output": output,
            "notes": notes,
        }
    )
    return data


# --------------------------------------------------------------------------- sign-kat.json


def kat_cases() -> list[dict[str, Any]]:
    out = []
    for name, key, ad, payload in [
        ("key-a-mcp-call", KEY_A, AD, PAYLOAD),
        ("key-b-tools-list", KEY_B, OTHER_AD, PAYLOAD_B),
        ("key-a-empty-ad", KEY_A, b"", PAYLOAD),
        ("key-b-empty-payload", KEY_B, AD, b""),
    ]:
        out.append(
            {
                "id": f"rpc.sign_kat/{name}",
                "requirements": ["RPC-SIG-1", "RPC-REQ-4", "RPC-CMD-4"],
                "input": {
                    "seed_hex": key.to_seed().hex(),
                    "ad_hex": ad.hex(),
                    "payload_hex": payload.hex(),
                },
                "result": "valid",
                # No sign_key: its encoding is each library's choice (AMB-20), not a wire
                # property, so the known answers hold only what travels.
                "expected": {
                    "request_key": key.public_key.encode(),
                    "signature_hex": sign(key, ad, payload).hex(),
                },
                "comment": f"binding {binding(ad).hex()}",
            }
        )
    return out


# --------------------------------------------------------------------------- keys.json


def key_cases() -> list[dict[str, Any]]:
    a = KEY_A.public_key
    text = a.encode()
    der = a.spki_der
    ok = {"raw_hex": a.raw.hex(), "spki_der_hex": der.hex(), "canonical": text}
    x_key = (
        x25519.X25519PrivateKey.from_private_bytes(bytes(range(32)))
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    ed448_key = (
        ed448.Ed448PrivateKey.from_private_bytes(bytes(57))
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    req4 = ["RPC-REQ-4"]

    def case(
        name: str,
        value: str,
        result: str,
        *,
        error: str | None = None,
        flags: list[str] | None = None,
        expected: Any = None,
        comment: str | None = None,
        reqs: list[str] = req4,
    ) -> dict[str, Any]:
        c: dict[str, Any] = {"id": f"rpc.keys/{name}", "requirements": reqs}
        if flags:
            c["flags"] = flags
        c["input"] = value
        c["result"] = result
        if expected is not None:
            c["expected"] = expected
        if error:
            c["error"] = error
        if comment:
            c["comment"] = comment
        return c

    b = KEY_B.public_key
    last = text[-2]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    non_canonical_last = alphabet[alphabet.index(last) + 1]  # sets one of the two unused bits
    return [
        case(
            "canonical-padded",
            text,
            "valid",
            expected=ok,
            comment="the core writes signerKey exactly like this: base64url with = padding",
        ),
        case(
            "canonical-key-b",
            b.encode(),
            "valid",
            expected={
                "raw_hex": b.raw.hex(),
                "spki_der_hex": b.spki_der.hex(),
                "canonical": b.encode(),
            },
        ),
        case("unpadded", text.rstrip("="), "acceptable", flags=["UnpaddedKey"]),
        case(
            "small-order-point",
            _b64url(bytes.fromhex("302a300506032b6570032100") + _encode(IDENTITY)),
            "valid",
            expected={
                "raw_hex": _encode(IDENTITY).hex(),
                "spki_der_hex": "302a300506032b6570032100" + _encode(IDENTITY).hex(),
                "canonical": _b64url(bytes.fromhex("302a300506032b6570032100") + _encode(IDENTITY)),
            },
            comment="decoding checks the encoding, not the point; verification decides",
        ),
        case(
            "standard-alphabet",
            text.replace("_", "/").replace("-", "+"),
            "invalid",
            error="bad_alphabet",
            flags=["StandardAlphabet"],
        ),
        case(
            "standard-alphabet-unpadded",
            base64.b64encode(der).decode().rstrip("="),
            "invalid",
            error="bad_alphabet",
            flags=["StandardAlphabet"],
        ),
        case("double-padding", text + "=", "acceptable", flags=["ExtraPadding"]),
        case("padding-inside", text[:20] + "=" + text[20:], "invalid", error="bad_base64"),
        case("leading-space", " " + text, "invalid", error="bad_base64"),
        case("trailing-newline", text + "\n", "invalid", error="bad_base64"),
        case("empty", "", "invalid", error="bad_base64"),
        case(
            "impossible-length",
            text.rstrip("=")[:-2],
            "invalid",
            error="bad_base64",
            comment="57 characters: not a length base64 can have",
        ),
        case(
            "non-canonical-unused-bits",
            text[:-2] + non_canonical_last + "=",
            "acceptable",
            flags=["NonCanonicalBase64"],
        ),
        case("raw-32-bytes", _b64url(a.raw), "invalid", error="raw_key", flags=["RawKey"]),
        case(
            "raw-32-bytes-unpadded",
            _b64url(a.raw).rstrip("="),
            "invalid",
            error="raw_key",
            flags=["RawKey"],
        ),
        case(
            "x25519-key",
            _b64url(x_key),
            "invalid",
            error="wrong_algorithm",
            flags=["WrongAlgorithm"],
            comment="OID 1.3.101.110 (X25519) has the same length as Ed25519",
        ),
        case(
            "ed448-key",
            _b64url(ed448_key),
            "invalid",
            error="wrong_algorithm",
            flags=["WrongAlgorithm"],
        ),
        case(
            "trailing-der-byte",
            _b64url(der + b"\x00"),
            "invalid",
            error="trailing_bytes",
            flags=["TrailingBytes"],
        ),
        case(
            "trailing-der-object",
            _b64url(der + bytes.fromhex("0500")),
            "invalid",
            error="trailing_bytes",
            flags=["TrailingBytes"],
        ),
        case(
            "key-31-bytes",
            _b64url(bytes.fromhex("3029300506032b6570032000") + a.raw[:31]),
            "invalid",
            error="bad_key_length",
        ),
        case(
            "key-33-bytes",
            _b64url(bytes.fromhex("302b300506032b6570032200") + a.raw + b"\x00"),
            "invalid",
            error="bad_key_length",
        ),
        case(
            "null-parameters",
            _b64url(bytes.fromhex("302c300706032b65700500032100") + a.raw),
            "invalid",
            error="not_spki",
            comment="RFC 8410: the parameters are absent",
        ),
        case(
            "non-minimal-length",
            _b64url(bytes.fromhex("30812a300506032b6570032100") + a.raw),
            "invalid",
            error="not_spki",
            comment="DER lengths are minimal",
        ),
        case(
            "bit-string-unused-bits",
            _b64url(bytes.fromhex("302a300506032b6570032101") + a.raw),
            "invalid",
            error="not_spki",
        ),
        case(
            "outer-length-long",
            _b64url(bytes.fromhex("302b300506032b6570032100") + a.raw),
            "invalid",
            error="not_spki",
            comment="the SEQUENCE claims one byte more than there is",
        ),
        case(
            "pem",
            "-----BEGIN PUBLIC KEY-----\n"
            + base64.b64encode(der).decode()
            + "\n-----END PUBLIC KEY-----",
            "invalid",
            error="bad_base64",
        ),
        case(
            "hex-der",
            der.hex(),
            "invalid",
            error="not_spki",
            comment="hex digits are base64url characters: this decodes to 66 bytes that are not a key",
        ),
    ]


KEY_NOTES = {
    "UnpaddedKey": {
        "bug_class": "ENCODING_VARIANT",
        "description": "The key without its = padding.",
        "acceptable": "The core writes the padding (simplexmq strEncode of ByteString) and its parser (base64urlP) reads the key with or without it; this library reads both. Writers must pad.",
    },
    "ExtraPadding": {
        "bug_class": "ENCODING_VARIANT",
        "description": "Two = where one is due.",
        "acceptable": "Newer simplexmq parsers skip any number of = and decode the rest; older ones refuse. This library refuses.",
    },
    "NonCanonicalBase64": {
        "bug_class": "NON_CANONICAL_ENCODING",
        "description": "The last character sets unused bits.",
        "acceptable": "Strict decoders (this library, the base64 package) refuse; lenient ones read the same key.",
    },
    "StandardAlphabet": {
        "bug_class": "WRONG_ALPHABET",
        "description": "+ and / of standard base64 in place of - and _.",
        "effect": "The core's parser stops at the first such character: the key is refused.",
    },
    "RawKey": {
        "bug_class": "MISSING_ENCODING_STEP",
        "description": "The raw 32-byte key, not its X.509 SubjectPublicKeyInfo.",
        "effect": "The core's decodePubKey refuses it.",
    },
    "WrongAlgorithm": {
        "bug_class": "WRONG_ALGORITHM",
        "description": "A key of another algorithm in a valid SubjectPublicKeyInfo.",
        "effect": "A key that cannot sign would pass as requestKey.",
    },
    "TrailingBytes": {
        "bug_class": "TRAILING_DATA",
        "description": "Bytes after the DER object.",
        "effect": "The core's decodeKey refuses leftover ASN.1 objects.",
    },
}


# --------------------------------------------------------------------------- request-key.json


def request_key_cases() -> list[dict[str, Any]]:
    a, b = KEY_A.public_key.encode(), KEY_B.public_key.encode()
    x_key = (
        x25519.X25519PrivateKey.from_private_bytes(bytes(range(32)))
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )

    def env(request_key: str | None) -> str:
        value: dict[str, Any] = {
            "protocol": "mcp",
            "request": {"id": 1, "jsonrpc": "2.0", "method": "tools/list"},
        }
        if request_key is not None:
            value["requestKey"] = request_key
        return core_encode_json(value)

    def case(
        name: str,
        reqs: list[str],
        request_key: str | None,
        signer: str | None,
        result: str,
        *,
        error: str | None = None,
        flags: list[str] | None = None,
        comment: str | None = None,
    ) -> dict[str, Any]:
        c: dict[str, Any] = {"id": f"rpc.request_key/{name}", "requirements": reqs}
        if flags:
            c["flags"] = flags
        c["input"] = env(request_key)
        c["args"] = {"signer_key": signer}
        c["result"] = result
        if result == "valid":
            c["expected"] = {"request_key": request_key, "signed": signer is not None}
        if error:
            c["error"] = error
        if comment:
            c["comment"] = comment
        return c

    return [
        case("signed-matching", ["RPC-SIG-3", "RPC-REQ-5"], a, a, "valid"),
        case(
            "signed-matching-unpadded",
            ["RPC-SIG-3", "RPC-REQ-4"],
            a.rstrip("="),
            a,
            "valid",
            comment="keys are compared decoded, not as strings",
        ),
        case(
            "signed-without-request-key",
            ["RPC-SIG-3"],
            None,
            a,
            "valid",
            comment="a signed request need not claim its key in the envelope",
        ),
        case(
            "unsigned-without-request-key",
            ["RPC-SIG-7"],
            None,
            None,
            "valid",
            comment="an unsigned request has only the payload",
        ),
        case(
            "signed-other-key",
            ["RPC-SIG-3"],
            b,
            a,
            "invalid",
            error="bad_request",
            flags=["KeyMismatch"],
        ),
        case(
            "signed-other-key-reversed",
            ["RPC-SIG-3"],
            a,
            b,
            "invalid",
            error="bad_request",
            flags=["KeyMismatch"],
        ),
        case(
            "unsigned-with-request-key",
            ["RPC-SIG-4"],
            a,
            None,
            "invalid",
            error="bad_request",
            flags=["UnsignedClaim"],
        ),
        case(
            "malformed-request-key",
            ["RPC-REQ-4"],
            "not-a-key",
            a,
            "invalid",
            error="bad_request_key",
        ),
        case(
            "request-key-x25519",
            ["RPC-REQ-4"],
            _b64url(x_key),
            a,
            "invalid",
            error="bad_request_key",
        ),
        case(
            "request-key-standard-alphabet",
            ["RPC-REQ-4"],
            a.replace("_", "/").replace("-", "+"),
            a,
            "invalid",
            error="bad_request_key",
        ),
        case(
            "request-key-raw",
            ["RPC-REQ-4"],
            _b64url(KEY_A.public_key.raw),
            a,
            "invalid",
            error="bad_request_key",
        ),
    ]


RK_NOTES = {
    "KeyMismatch": {
        "bug_class": "IDENTITY_CONFUSION",
        "description": "requestKey names a key other than the one the agent verified.",
        "effect": "A requester could claim another's identity (RPC-SIG-3).",
    },
    "UnsignedClaim": {
        "bug_class": "IDENTITY_CONFUSION",
        "description": "An unsigned request that claims a key.",
        "effect": "Anyone could claim any key (RPC-SIG-4).",
    },
}


def main() -> None:
    write(
        "sign.json",
        header(
            "rpc.sign",
            "rpc.verify_signature",
            "Input {ad_hex, payload_hex, signature_hex}; args.key holds one Ed25519 key as seed, raw public key, SPKI DER and requestKey text. Valid: {signer_key}. Invalid: bad_signature or bad_signature_length.",
            SIGN_NOTES,
        )
        | {"tests": sign_cases()},
    )
    write(
        "sign-kat.json",
        header(
            "rpc.sign_kat",
            "rpc.sign_payload",
            'Input {seed_hex, ad_hex, payload_hex}; output {request_key, signature_hex}: the key\'s requestKey text and the Ed25519 signature of SHA3-256("SimpleXService" || AD) || payload.',
            {},
        )
        | {"tests": kat_cases()},
    )
    write(
        "keys.json",
        header(
            "rpc.keys",
            "rpc.decode_key",
            "Input: signerKey/requestKey text. Valid: {raw_hex, spki_der_hex, canonical}. Invalid: the decoding error code.",
            KEY_NOTES,
        )
        | {"tests": key_cases()},
    )
    write(
        "request-key.json",
        header(
            "rpc.request_key",
            "rpc.check_request_key",
            "Input: a request envelope; args.signer_key: the signerKey of the serviceRequest event, or null when unsigned. Valid: {request_key, signed}. Invalid: bad_request (the responder's answer) or bad_request_key (an envelope error, also answered with bad_request).",
            RK_NOTES,
        )
        | {"tests": request_key_cases()},
    )


if __name__ == "__main__":
    main()
