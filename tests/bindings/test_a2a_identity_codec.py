"""The SimpleX-Identity credential codec: round trip, and a typed error for every bad form."""

from __future__ import annotations

from typing import Any

import pytest

from simplex_protocols.bindings._a2a_card import card_credential_names
from simplex_protocols.bindings._a2a_identity import (
    IDENTITY_WINDOW_S,
    identity_digest,
    make_identity,
    verify_identity,
    with_identity_scheme,
)
from simplex_protocols.errors import SignatureError
from simplex_protocols.rpc import SigningKey

NOW = 1_800_000_000
SERVICE = "Anvil shop"
KEY = SigningKey.from_seed(bytes(range(32)))
OTHER = SigningKey.from_seed(bytes(range(1, 33)))


def _request(**changes: Any) -> dict[str, Any]:
    request: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": "r-1",
        "method": "GetTask",
        "params": {"id": "t-1", "historyLength": 2},
    }
    request.update(changes)
    return request


def _verify(credential: str, **kwargs: Any) -> Any:
    options: dict[str, Any] = {"service": SERVICE, "request": _request(), "now": NOW}
    options.update(kwargs)
    return verify_identity(credential, **options)


def test_round_trip_gives_the_key_and_an_owner_of_the_key() -> None:
    credential = make_identity(KEY, SERVICE, NOW, _request())
    identity = _verify(credential)
    assert identity.key == KEY.public_key
    assert identity.time == NOW
    assert identity.owner == f"key:{KEY.public_key.encode()}"
    assert _verify(make_identity(OTHER, SERVICE, NOW, _request())).owner != identity.owner


def test_params_order_and_service_parameters_do_not_change_the_digest() -> None:
    reordered = _request(params={"historyLength": 2, "id": "t-1"})
    with_parameters = {**_request(), "a2a-service-parameters": {"A2A-Version": "1.0"}}
    digest = identity_digest(SERVICE, NOW, _request())
    assert identity_digest(SERVICE, NOW, reordered) == digest
    assert identity_digest(SERVICE, NOW, with_parameters) == digest


@pytest.mark.parametrize(
    "kwargs",
    [
        {"request": _request(id="r-2")},
        {"request": _request(method="CancelTask")},
        {"request": _request(params={"id": "t-2", "historyLength": 2})},
        {"service": "Another shop"},
    ],
    ids=["other-id", "other-method", "other-params", "other-service"],
)
def test_a_credential_moved_elsewhere_is_refused(kwargs: dict[str, Any]) -> None:
    credential = make_identity(KEY, SERVICE, NOW, _request())
    with pytest.raises(SignatureError) as caught:
        _verify(credential, **kwargs)
    assert caught.value.code == "bad_signature"


@pytest.mark.parametrize("skew", [IDENTITY_WINDOW_S + 1, -(IDENTITY_WINDOW_S + 1)])
def test_outside_the_window_is_refused(skew: int) -> None:
    credential = make_identity(KEY, SERVICE, NOW + skew, _request())
    with pytest.raises(SignatureError) as caught:
        _verify(credential)
    assert caught.value.code == "identity_expired"


@pytest.mark.parametrize("skew", [IDENTITY_WINDOW_S, -IDENTITY_WINDOW_S, 0])
def test_inside_the_window_is_accepted(skew: int) -> None:
    assert _verify(make_identity(KEY, SERVICE, NOW + skew, _request())).time == NOW + skew


def _parts() -> list[str]:
    return make_identity(KEY, SERVICE, NOW, _request()).split(".")


def _with(index: int, value: str) -> str:
    parts = _parts()
    parts[index] = value
    return ".".join(parts)


@pytest.mark.parametrize(
    ("credential", "code"),
    [
        ("", "bad_identity"),
        ("v1.a.b", "bad_identity"),
        (".".join([*_parts(), "x"]), "bad_identity"),
        (_with(0, "v2"), "bad_identity"),
        (_with(1, "!!"), "bad_base64"),
        (_with(1, "ab+/cd"), "bad_alphabet"),
        (_with(2, "-5"), "bad_identity_time"),
        (_with(2, "0123"), "bad_identity_time"),
        (_with(2, "15e8"), "bad_identity_time"),
        (_with(3, "AAAA"), "bad_identity"),
        (_with(3, "not base64"), "bad_identity"),
        (_with(3, "A" * 86), "bad_signature"),
    ],
    ids=[
        "empty",
        "three-fields",
        "five-fields",
        "version",
        "key-not-base64",
        "key-standard-alphabet",
        "negative-time",
        "leading-zero",
        "exponent-time",
        "short-signature",
        "signature-not-base64",
        "forged-signature",
    ],
)
def test_every_malformed_form_has_a_typed_code(credential: str, code: str) -> None:
    with pytest.raises(SignatureError) as caught:
        _verify(credential)
    assert caught.value.code == code


def test_a_non_string_is_refused() -> None:
    with pytest.raises(SignatureError) as caught:
        _verify(42)  # type: ignore[arg-type]  # a peer sends any JSON value
    assert caught.value.code == "bad_identity"


def test_a_request_that_is_not_json_is_refused() -> None:
    with pytest.raises(SignatureError) as caught:
        identity_digest(SERVICE, NOW, _request(params={"x": float("nan")}))
    assert caught.value.code == "bad_identity_request"


def test_a_negative_time_cannot_be_signed() -> None:
    with pytest.raises(SignatureError) as caught:
        make_identity(KEY, SERVICE, -1, _request())
    assert caught.value.code == "bad_identity_time"


def test_the_card_declares_the_identity_as_an_optional_header_scheme() -> None:
    from a2a.types.a2a_pb2 import AgentCard

    from simplex_protocols.bindings.a2a import agent_card_json

    card = with_identity_scheme(AgentCard(name=SERVICE))
    shown = agent_card_json(card)
    scheme = shown["securitySchemes"]["simplexIdentity"]["apiKeySecurityScheme"]
    assert scheme["location"] == "header"
    assert scheme["name"] == "SimpleX-Identity"
    # The empty alternative: a caller without the credential meets a requirement too.
    assert [r.get("schemes", {}) for r in shown["securityRequirements"]] == [
        {},
        {"simplexIdentity": {}},
    ]
    # A2A-AUTHZ-3 / A2A-AUTHZ-4: the parameter counts as a credential (never sent in a group).
    assert "simplex-identity" in card_credential_names(card)
    # Applying it twice changes nothing.
    assert with_identity_scheme(card) == card
