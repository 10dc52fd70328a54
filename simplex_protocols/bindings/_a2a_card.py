"""The Agent Card's SimpleX interface (spec "A2A binding" > "Identification", "Agent Card")."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from simplex_protocols.errors import BindingConfigError

from ._a2a_wire import A2A_BINDING_URI, DEFAULT_A2A_VERSION, credential_names, is_major_minor

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import AgentCard, AgentInterface

__all__ = [
    "AGENT_CARD_WELL_KNOWN_PATH",
    "agent_card_json",
    "card_credential_names",
    "simplex_interface",
    "with_simplex_interface",
]

#: A2A-CARD-1: the well-known URI path of A2A [A2A, section 8.2] where a website publishes the
#: Agent Card.
AGENT_CARD_WELL_KNOWN_PATH: Final = "/.well-known/agent-card.json"


def _check_version(version: str) -> None:
    if not is_major_minor(version):
        raise BindingConfigError(
            f"an A2A version is written Major.Minor, such as 1.0, not {version!r} [A2A-ID-3]",
            code="bad_version",
        )


def simplex_interface(address: str, protocol_version: str = DEFAULT_A2A_VERSION) -> AgentInterface:
    """The SimpleX interface of an Agent Card (A2A-ID-2).

    Args:
        address: the bot's contact address link (``https://simplex.chat/a#...`` or the
            address's short link).
        protocol_version: the A2A version, Major.Minor.

    Returns:
        ``AgentInterface(url=address, protocol_binding=A2A_BINDING_URI,
        protocol_version=protocol_version)``; in JSON ``{"url", "protocolBinding",
        "protocolVersion"}``.

    Raises:
        BindingConfigError: ``bad_address`` (empty) or ``bad_version`` (not Major.Minor).
    """
    from a2a.types.a2a_pb2 import AgentInterface

    if not address.strip():
        raise BindingConfigError("the contact address link is empty", code="bad_address")
    _check_version(protocol_version)
    return AgentInterface(
        url=address, protocol_binding=A2A_BINDING_URI, protocol_version=protocol_version
    )


def with_simplex_interface(
    card: AgentCard, address: str, versions: Iterable[str] = (DEFAULT_A2A_VERSION,)
) -> AgentCard:
    """A copy of ``card`` whose ``supportedInterfaces`` list the bot's SimpleX interface.

    One interface per served version, after the card's other interfaces; a SimpleX interface
    the card already lists for the same address is replaced (A2A-ID-2, A2A-ID-5: its
    ``protocolVersion`` is among the declared versions, its ``url`` is the address).

    Raises:
        BindingConfigError: as :func:`simplex_interface`; ``bad_version`` for no versions.
    """
    from a2a.types.a2a_pb2 import AgentCard

    wanted = [simplex_interface(address, v) for v in versions]
    if not wanted:
        raise BindingConfigError("no A2A version to list", code="bad_version")
    out = AgentCard()
    out.CopyFrom(card)
    kept = [
        i
        for i in card.supported_interfaces
        if not (i.protocol_binding == A2A_BINDING_URI and i.url == address)
    ]
    del out.supported_interfaces[:]
    out.supported_interfaces.extend([*kept, *wanted])
    return out


def agent_card_json(card: AgentCard) -> dict[str, Any]:
    """The Agent Card as JSON, for a website's :data:`AGENT_CARD_WELL_KNOWN_PATH` (A2A-CARD-1).

    The JSON form of A2A 1.0 (camelCase names, enumerations as strings), written by the
    SDK's own protobuf mapping; serve it as ``application/json``.
    """
    from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]

    card_json: dict[str, Any] = MessageToDict(card, preserving_proto_field_name=False)
    return card_json


def card_credential_names(card: AgentCard | None) -> frozenset[str]:
    """Service parameter names (lower-cased) that carry credentials for ``card``'s schemes.

    A2A-AUTHZ-3: "An agent whose Agent Card declares security schemes receives the credential
    as the service parameter of the scheme, for example Authorization for an HTTP scheme."
    HTTP, OAuth 2 and OpenID Connect schemes use ``Authorization``; an API key scheme in a
    header uses its header name, in a cookie ``Cookie``. ``Authorization`` is always included.
    """
    names: list[str] = []
    if card is not None:
        for scheme in card.security_schemes.values():
            if scheme.WhichOneof("scheme") == "api_key_security_scheme":
                api_key = scheme.api_key_security_scheme
                location = api_key.location.lower()
                if location == "header" and api_key.name:
                    names.append(api_key.name)
                elif location == "cookie":
                    names.append("cookie")
    return credential_names(names)
