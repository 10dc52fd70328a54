"""Profile declarations ("Agent protocols over SimpleX" rev 2, section "Profile declarations").

Sans-IO codecs for what a profile, a group and a contact address declare about themselves:

- the ``protocols`` key of ``preferences`` and ``groupPreferences``: which protocols a bot
  serves, in which versions, on which transports (:func:`parse_protocols`,
  :func:`format_protocols`, :func:`protocols_from_preferences`, :func:`with_protocols`);
- the public group record's ``audience`` and ``changeFrequency``
  (:func:`parse_public_group`, :func:`format_public_group`);
- the contact address link data's ``serves`` (:func:`parse_link_data`,
  :func:`format_link_data`);
- the precedence of these in-band values over a website's (:func:`effective_audience`,
  :func:`effective_change_frequency`);
- the business chat rule (:func:`business_group_preferences`, :func:`check_business_chat`)
  and ``/_call`` kept out of the command menu (:func:`check_commands`).

Parsers read a peer's data leniently: they never raise for the whole value, keep every valid
part and list the problems (each a :class:`~simplex_protocols.errors.DeclarationError` with a
stable ``code``, a ``requirement`` ID and a JSON-pointer ``position``). ``strict=True`` raises
the first problem instead. Format functions, for our own profiles, are strict.
"""

from __future__ import annotations

from simplex_protocols._exports import publish
from simplex_protocols._sitemaps import ChangeFrequency as ChangeFrequency

from ._business import business_group_preferences as business_group_preferences
from ._business import check_business_chat as check_business_chat
from ._model import DEFAULT_AUDIENCE as DEFAULT_AUDIENCE
from ._model import AddressLinkData as AddressLinkData
from ._model import DeclarationSource as DeclarationSource
from ._model import EffectiveValue as EffectiveValue
from ._model import PeerType as PeerType
from ._model import ProtocolDeclaration as ProtocolDeclaration
from ._model import ProtocolDeclarations as ProtocolDeclarations
from ._model import ProtocolName as ProtocolName
from ._model import PublicGroupDeclaration as PublicGroupDeclaration
from ._model import Scope as Scope
from ._model import Transport as Transport
from ._model import is_protocol_name as is_protocol_name
from ._model import peer_type as peer_type
from ._peers import audience_from_website as audience_from_website
from ._peers import change_frequency_from_website as change_frequency_from_website
from ._peers import effective_audience as effective_audience
from ._peers import effective_change_frequency as effective_change_frequency
from ._peers import format_link_data as format_link_data
from ._peers import format_public_group as format_public_group
from ._peers import parse_link_data as parse_link_data
from ._peers import parse_public_group as parse_public_group
from ._protocols import check_commands as check_commands
from ._protocols import check_preferences as check_preferences
from ._protocols import format_protocols as format_protocols
from ._protocols import parse_protocols as parse_protocols
from ._protocols import protocols_from_preferences as protocols_from_preferences
from ._protocols import with_protocols as with_protocols

__all__ = [
    "DEFAULT_AUDIENCE",
    "AddressLinkData",
    "ChangeFrequency",
    "DeclarationSource",
    "EffectiveValue",
    "PeerType",
    "ProtocolDeclaration",
    "ProtocolDeclarations",
    "ProtocolName",
    "PublicGroupDeclaration",
    "Scope",
    "Transport",
    "audience_from_website",
    "business_group_preferences",
    "change_frequency_from_website",
    "check_business_chat",
    "check_commands",
    "check_preferences",
    "effective_audience",
    "effective_change_frequency",
    "format_link_data",
    "format_protocols",
    "format_public_group",
    "is_protocol_name",
    "parse_link_data",
    "parse_protocols",
    "parse_public_group",
    "peer_type",
    "protocols_from_preferences",
    "with_protocols",
]

publish(globals(), __all__)
