"""Signed requests: the construction, two independent Ed25519 implementations, key encodings."""

from __future__ import annotations

import base64
import hashlib
import pickle
import random

import nacl.bindings
import nacl.exceptions
import nacl.signing
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, x25519

from simplex_protocols import errors
from simplex_protocols.rpc import (
    PublicKey,
    ServiceRequest,
    SigningKey,
    check_request_key,
    parse_service_request,
)
from simplex_protocols.rpc.advanced import SERVICE_SIGNATURE_DOMAIN, service_signature_input

SEED = bytes(range(32))
AD = bytes(range(112))
OTHER_AD = bytes(range(1, 113))
PAYLOAD = b'{"protocol":"mcp","request":{"id":1,"jsonrpc":"2.0","method":"tools/list"}}'


def _openssl_key(seed: bytes = SEED) -> ed25519.Ed25519PrivateKey:
    return ed25519.Ed25519PrivateKey.from_private_bytes(seed)


# --------------------------------------------------------------------------- construction


@pytest.mark.requirement("RPC-SIG-1")
def test_signature_input_is_sha3_256_of_domain_and_ad_then_payload() -> None:
    expected = hashlib.sha3_256(b"SimpleXService" + AD).digest() + PAYLOAD
    assert service_signature_input(AD, PAYLOAD) == expected
    assert SERVICE_SIGNATURE_DOMAIN == b"SimpleXService"
    assert len(SERVICE_SIGNATURE_DOMAIN) == 14


@pytest.mark.requirement("RPC-SIG-1")
def test_signature_is_plain_ed25519_of_the_signature_input() -> None:
    key = SigningKey.from_seed(SEED)
    signature = key.sign_service_payload(AD, PAYLOAD)
    assert signature == _openssl_key().sign(service_signature_input(AD, PAYLOAD))
    assert len(signature) == 64


# --------------------------------------------------------------------------- two implementations


@pytest.mark.requirement("RPC-SIG-1", "RPC-SIG-2")
@pytest.mark.parametrize("trial", range(8))
def test_libsodium_and_openssl_agree_both_ways(trial: int) -> None:
    rng = random.Random(trial)
    seed = rng.randbytes(32)
    ad = rng.randbytes(112)
    payload = rng.randbytes(rng.randrange(0, 3000))
    ours = SigningKey.from_seed(seed)
    openssl = _openssl_key(seed)
    message = service_signature_input(ad, payload)
    # Signed here (libsodium), verified by OpenSSL.
    signature = ours.sign_service_payload(ad, payload)
    openssl.public_key().verify(signature, message)
    # Signed by OpenSSL, verified here.
    ours.public_key.verify_service_payload(ad, payload, openssl.sign(message))
    # pynacl's high-level API, a third view of the same libsodium.
    assert nacl.signing.SigningKey(seed).sign(message).signature == signature


@pytest.mark.requirement("RPC-SIG-2")
def test_signature_moved_to_another_session_fails_in_both_libraries() -> None:
    key = SigningKey.from_seed(SEED)
    signature = key.sign_service_payload(AD, PAYLOAD)
    with pytest.raises(errors.SignatureError) as info:
        key.public_key.verify_service_payload(OTHER_AD, PAYLOAD, signature)
    assert info.value.code == "bad_signature"
    with pytest.raises(InvalidSignature):
        _openssl_key().public_key().verify(signature, service_signature_input(OTHER_AD, PAYLOAD))


@pytest.mark.requirement("RPC-SIG-1")
def test_signature_moved_to_another_payload_fails_in_both_libraries() -> None:
    key = SigningKey.from_seed(SEED)
    signature = key.sign_service_payload(AD, PAYLOAD)
    other = PAYLOAD.replace(b"tools/list", b"tools/call")
    with pytest.raises(errors.SignatureError):
        key.public_key.verify_service_payload(AD, other, signature)
    with pytest.raises(InvalidSignature):
        _openssl_key().public_key().verify(signature, service_signature_input(AD, other))


@pytest.mark.requirement("RPC-SIG-1")
def test_signature_over_the_payload_alone_fails() -> None:
    key = SigningKey.from_seed(SEED)
    unbound = _openssl_key().sign(PAYLOAD)
    with pytest.raises(errors.SignatureError):
        key.public_key.verify_service_payload(AD, PAYLOAD, unbound)


def test_signature_of_another_key_fails() -> None:
    signature = SigningKey.from_seed(bytes(32)).sign_service_payload(AD, PAYLOAD)
    with pytest.raises(errors.SignatureError):
        SigningKey.from_seed(SEED).public_key.verify_service_payload(AD, PAYLOAD, signature)


@pytest.mark.parametrize("length", [0, 63, 65, 128])
def test_signature_of_wrong_length_has_its_own_code(length: int) -> None:
    key = SigningKey.from_seed(SEED).public_key
    with pytest.raises(errors.SignatureError) as info:
        key.verify_service_payload(AD, PAYLOAD, bytes(length))
    assert info.value.code == "bad_signature_length"


def test_non_canonical_s_is_refused_by_both_libraries() -> None:
    order = 2**252 + 27742317777372353535851937790883648493
    key = SigningKey.from_seed(SEED)
    signature = key.sign_service_payload(AD, PAYLOAD)
    s = int.from_bytes(signature[32:], "little") + order
    malleable = signature[:32] + s.to_bytes(32, "little")
    with pytest.raises(errors.SignatureError):
        key.public_key.verify_service_payload(AD, PAYLOAD, malleable)
    with pytest.raises(InvalidSignature):
        _openssl_key().public_key().verify(malleable, service_signature_input(AD, PAYLOAD))


def test_small_order_key_is_refused_here_although_openssl_accepts_it() -> None:
    """AMB-12: we verify strictly, as libsodium; OpenSSL and the agent's crypton accept."""
    identity = (1).to_bytes(32, "little")
    forged = identity + bytes(32)  # R = identity, S = 0 verifies any message cofactorless
    ed25519.Ed25519PublicKey.from_public_bytes(identity).verify(
        forged, service_signature_input(AD, PAYLOAD)
    )
    with pytest.raises(errors.SignatureError):
        PublicKey.from_raw(identity).verify_service_payload(AD, PAYLOAD, forged)


# --------------------------------------------------------------------------- key encodings


@pytest.mark.requirement("RPC-REQ-4")
def test_request_key_is_padded_base64url_of_the_spki_der() -> None:
    key = SigningKey.from_seed(SEED).public_key
    der = (
        _openssl_key()
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    assert key.spki_der == der
    assert key.encode() == base64.urlsafe_b64encode(der).decode()
    assert key.encode().endswith("=") and len(key.encode()) == 60
    assert key.encode().startswith("MCowBQYDK2VwAyEA")


@pytest.mark.requirement("RPC-REQ-4")
def test_decode_reads_padded_and_unpadded_keys() -> None:
    key = SigningKey.from_seed(SEED).public_key
    assert PublicKey.decode(key.encode()) == key
    assert PublicKey.decode(key.encode().rstrip("=")) == key
    assert PublicKey.from_spki_der(key.spki_der) == key
    assert PublicKey.from_raw(key.raw) == key


@pytest.mark.requirement("RPC-REQ-4")
@pytest.mark.parametrize(
    ("transform", "code"),
    [
        (lambda t: t.replace("_", "/").replace("-", "+"), "bad_alphabet"),
        (lambda t: t + "=", "bad_padding"),
        (lambda t: " " + t, "bad_base64"),
        (lambda t: t + "\n", "bad_base64"),
        (lambda t: "", "bad_base64"),
        (lambda t: t[:10] + "=" + t[10:], "bad_base64"),
        (lambda t: t.rstrip("=")[:-2], "bad_base64"),
    ],
)
def test_malformed_text_is_refused_with_a_code(transform: object, code: str) -> None:
    text = SigningKey.from_seed(SEED).public_key.encode()
    with pytest.raises(errors.SignatureError) as info:
        PublicKey.decode(transform(text))  # type: ignore[operator]
    assert info.value.code == code


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode()


@pytest.mark.requirement("RPC-REQ-4")
def test_malformed_der_is_refused_with_a_code() -> None:
    key = SigningKey.from_seed(SEED).public_key
    x_der = (
        x25519.X25519PrivateKey.from_private_bytes(SEED)
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    cases = {
        _b64(key.raw): "raw_key",
        _b64(x_der): "wrong_algorithm",
        _b64(key.spki_der + b"\x00"): "trailing_bytes",
        _b64(bytes.fromhex("3029300506032b6570032000") + key.raw[:31]): "bad_key_length",
        _b64(bytes.fromhex("302c300706032b65700500032100") + key.raw): "not_spki",
        _b64(bytes.fromhex("30812a300506032b6570032100") + key.raw): "not_spki",
        _b64(b"\x04" * 44): "not_spki",
    }
    for text, code in cases.items():
        with pytest.raises(errors.SignatureError) as info:
            PublicKey.decode(text)
        assert info.value.code == code, text


def test_public_key_of_wrong_length_is_refused() -> None:
    with pytest.raises(errors.SignatureError) as info:
        PublicKey.from_raw(bytes(31))
    assert info.value.code == "bad_key_length"


@pytest.mark.requirement("RPC-CMD-4")
def test_sign_key_is_base64url_of_pkcs8_der() -> None:
    key = SigningKey.from_seed(SEED)
    der = _openssl_key().private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    assert key.to_sign_key() == base64.urlsafe_b64encode(der).decode()
    assert SigningKey.from_sign_key(key.to_sign_key()) == key


def test_sign_key_from_other_pkcs8_forms_and_refusals() -> None:
    openssl_v1 = _openssl_key().private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    assert SigningKey.from_sign_key(_b64(openssl_v1).rstrip("=")) == SigningKey.from_seed(SEED)
    x_der = x25519.X25519PrivateKey.from_private_bytes(SEED).private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    for text in (_b64(x_der), _b64(b"not a key"), _b64(SEED)):
        with pytest.raises(errors.SignatureError) as info:
            SigningKey.from_sign_key(text)
        assert info.value.code == "bad_sign_key"
    with pytest.raises(errors.SignatureError):
        SigningKey.from_sign_key("+++")


def test_seed_must_be_32_bytes() -> None:
    with pytest.raises(errors.SignatureError) as info:
        SigningKey.from_seed(bytes(31))
    assert info.value.code == "bad_private_key"


def test_generate_uses_the_injected_randomness() -> None:
    rng = random.Random(5)
    key = SigningKey.generate(rng.randbytes)
    assert key == SigningKey.from_seed(random.Random(5).randbytes(32))
    assert SigningKey.generate() != SigningKey.generate()


def test_private_key_never_shows_in_repr_or_pickles() -> None:
    key = SigningKey.from_seed(SEED)
    for text in (repr(key), str(key), f"{key}"):
        assert SEED.hex() not in text
        assert key.to_sign_key() not in text
        assert key.public_key.encode() in text
    with pytest.raises(TypeError):
        pickle.dumps(key)


def test_keys_compare_by_value_and_hash_alike() -> None:
    a, b = SigningKey.from_seed(SEED), SigningKey.from_seed(SEED)
    assert a == b and hash(a) == hash(b)
    assert a.public_key == b.public_key and {a.public_key, b.public_key} == {a.public_key}
    assert a != SigningKey.from_seed(bytes(32))
    assert a.public_key != "x"


# --------------------------------------------------------------------------- requestKey check


def _request(request_key: str | None) -> ServiceRequest:
    return ServiceRequest(protocol="mcp", request={}, request_key=request_key)


@pytest.mark.requirement("RPC-SIG-3")
def test_matching_request_key_passes() -> None:
    key = SigningKey.from_seed(SEED).public_key.encode()
    check_request_key(_request(key), key)
    check_request_key(_request(key.rstrip("=")), key)  # compared decoded, not as strings


@pytest.mark.requirement("RPC-SIG-3")
def test_request_key_differing_from_signer_key_is_a_mismatch() -> None:
    ours = SigningKey.from_seed(SEED).public_key.encode()
    theirs = SigningKey.from_seed(bytes(32)).public_key.encode()
    with pytest.raises(errors.RequestKeyMismatchError) as info:
        check_request_key(_request(theirs), ours)
    assert info.value.requirement == "RPC-SIG-3"
    assert (info.value.request_key, info.value.signer_key) == (theirs, ours)


@pytest.mark.requirement("RPC-SIG-4")
def test_unsigned_request_with_request_key_is_a_mismatch() -> None:
    key = SigningKey.from_seed(SEED).public_key.encode()
    with pytest.raises(errors.RequestKeyMismatchError) as info:
        check_request_key(_request(key), None)
    assert info.value.requirement == "RPC-SIG-4"


@pytest.mark.requirement("RPC-SIG-7")
def test_requests_without_request_key_pass_signed_or_not() -> None:
    check_request_key(_request(None), None)
    check_request_key(_request(None), SigningKey.from_seed(SEED).public_key.encode())


def test_malformed_signer_key_is_a_signature_error() -> None:
    key = SigningKey.from_seed(SEED).public_key.encode()
    with pytest.raises(errors.SignatureError):
        check_request_key(_request(key), "garbage")


@pytest.mark.requirement("RPC-REQ-5", "RPC-SIG-2")
def test_end_to_end_signed_request_as_the_agents_do_it() -> None:
    """Requester builds and signs; responder verifies, reports signerKey, checks requestKey."""
    key = SigningKey.from_seed(SEED)
    from simplex_protocols.rpc import format_service_request

    payload = format_service_request(
        ServiceRequest(protocol="mcp", request={"id": 1}, request_key=key.public_key.encode())
    ).encode()
    signature = key.sign_service_payload(AD, payload)
    # responder's agent
    nacl.bindings.crypto_sign_open(
        signature + service_signature_input(AD, payload), key.public_key.raw
    )
    signer_key = key.public_key.encode()
    # responder
    request = parse_service_request(payload)
    check_request_key(request, signer_key)
    with pytest.raises(nacl.exceptions.BadSignatureError):
        nacl.bindings.crypto_sign_open(
            signature + service_signature_input(OTHER_AD, payload), key.public_key.raw
        )
