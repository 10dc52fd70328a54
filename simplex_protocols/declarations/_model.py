"""Typed values of the spec's profile declarations ("Agent protocols over SimpleX", rev 2,
section "Profile declarations").

Values built here are valid by construction where the spec fixes a rule that does not depend
on context (protocol names, value types). Rules that depend on where a declaration sits (``rpc``
only in ``preferences``, ``changeFrequency`` only in a channel) are checked by the parsers and
the format functions, because a peer's declaration that breaks them is still read and reported.
"""

from __future__ import annotations

import enum
import types
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, NoReturn, TypeVar

from simplex_protocols._sitemaps import ChangeFrequency
from simplex_protocols.coretext import is_protocol_name
from simplex_protocols.errors import DeclarationError

__all__ = [
    "DEFAULT_AUDIENCE",
    "AddressLinkData",
    "DeclarationSource",
    "EffectiveValue",
    "PeerType",
    "ProtocolDeclaration",
    "ProtocolDeclarations",
    "ProtocolName",
    "PublicGroupDeclaration",
    "Scope",
    "Transport",
    "ascii_lower",
    "is_protocol_name",
    "peer_type",
]

_EMPTY: Mapping[str, Any] = types.MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return _EMPTY


_ASCII_UPPER_TO_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def ascii_lower(text: str) -> str:
    """Lower-case ASCII letters only.

    ``str.lower()`` would also fold look-alikes into ASCII (the Kelvin sign U+212A becomes
    ``k``), which would let ``"\\u212acp"``-style names match a declared protocol.
    """
    return text.translate(_ASCII_UPPER_TO_LOWER)


class PeerType(enum.StrEnum):
    """The peer types of a profile's ``peerType``, used by ``audience`` and ``serves``.

    Unknown peer types are legal on the wire and are kept as plain ``str`` (DECL-AUD-5).
    """

    HUMAN = "human"
    BOT = "bot"
    BUSINESS = "business"
    AGENT = "agent"


_PEER_TYPES = {p.value: p for p in PeerType}


def peer_type(value: str) -> PeerType | str:
    """The :class:`PeerType` for a wire string, or the string itself when it is unknown.

    Matching is exact: ``"Human"`` is an unknown value, as the spec lists lowercase values.
    """
    return _PEER_TYPES.get(value, value)


#: The audience or ``serves`` value when the field is absent (DECL-AUD-2, DECL-SERVES-1).
DEFAULT_AUDIENCE: frozenset[PeerType] = frozenset({PeerType.HUMAN})


class Transport(enum.StrEnum):
    """The transports of a ``protocols`` entry: ``chat`` (``/_call``) and ``rpc`` (Service RPC)."""

    CHAT = "chat"
    RPC = "rpc"


class Scope(enum.StrEnum):
    """Where a ``protocols`` key sits (DECL-PROTO-1).

    ``preferences`` is a user or contact profile's; ``groupPreferences`` a group profile's.
    ``transports.rpc`` is valid in ``preferences`` only (DECL-PROTO-7).
    """

    PREFERENCES = "preferences"
    GROUP_PREFERENCES = "groupPreferences"


class ProtocolName(enum.StrEnum):
    """The registered protocol names and their bindings (NAME-3). Other names are legal."""

    MCP = "mcp"
    A2A = "a2a"


_REGISTERED = frozenset(p.value for p in ProtocolName)


class DeclarationSource(enum.StrEnum):
    """Where an effective value came from (DECL-PREC-1)."""

    PUBLIC_GROUP = "publicGroup"
    LINK_DATA = "linkData"
    WEBSITE = "website"
    DEFAULT = "default"


def _readonly(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if not mapping:
        return _EMPTY
    if isinstance(mapping, types.MappingProxyType):
        return mapping
    return types.MappingProxyType(dict(mapping))


def _invalid(reason: str, code: str, requirement: str | None, position: str = "") -> NoReturn:
    raise DeclarationError(reason, code=code, requirement=requirement, position=position)


@dataclass(frozen=True, slots=True)
class ProtocolDeclaration:
    """One entry of the ``protocols`` key: a protocol the profile serves, and how.

    Attributes:
        name: the protocol name (NAME-1), for example ``"mcp"``.
        versions: the versions served, in the bot's order of preference (DECL-PROTO-4).
        chat: ``transports.chat``: the bot answers ``/_call`` for the protocol (DECL-PROTO-12).
        rpc: ``transports.rpc``: the bot answers Service RPC requests for it (DECL-PROTO-13).
            An absent transport is false (DECL-PROTO-6).
        extra: unknown members of the entry, kept for the round trip, ignored by every check
            (DECL-PROTO-8). Read-only.
        transports_extra: unknown members of ``transports``, kept the same way.

    Raises:
        DeclarationError: on construction, when the name is not a protocol name
            (``bad_protocol_name``) or a field has the wrong type.
    """

    name: str
    versions: tuple[str, ...]
    chat: bool = False
    rpc: bool = False
    extra: Mapping[str, Any] = field(default_factory=_empty, hash=False)
    transports_extra: Mapping[str, Any] = field(default_factory=_empty, hash=False)

    def __post_init__(self) -> None:
        if not is_protocol_name(self.name):
            _invalid(
                f"{self.name!r} is not a protocol name (lowercase ASCII letters, digits, hyphens)",
                "bad_protocol_name",
                "NAME-1",
            )
        # Checked at run time: the values may come from untyped code.
        given: object = self.versions
        if isinstance(given, str) or not isinstance(given, Iterable):
            _invalid("versions is not a list of strings", "bad_versions", "DECL-PROTO-4")
        versions: tuple[object, ...] = tuple(given)
        if not all(isinstance(v, str) for v in versions):
            _invalid("versions is not a list of strings", "bad_versions", "DECL-PROTO-4")
        object.__setattr__(self, "versions", versions)
        for transport in ("chat", "rpc"):
            if not isinstance(getattr(self, transport), bool):
                _invalid(
                    f"transports.{transport} is not a boolean",
                    "bad_transport_value",
                    "DECL-PROTO-3",
                    f"/transports/{transport}",
                )
        extra = _readonly(self.extra)
        if "versions" in extra or "transports" in extra:
            _invalid(
                "extra members repeat versions or transports", "bad_declaration", "DECL-PROTO-3"
            )
        transports_extra = _readonly(self.transports_extra)
        if "chat" in transports_extra or "rpc" in transports_extra:
            _invalid("transports_extra repeats chat or rpc", "bad_transports", "DECL-PROTO-5")
        object.__setattr__(self, "extra", extra)
        object.__setattr__(self, "transports_extra", transports_extra)

    @property
    def known(self) -> bool:
        """Whether the name is registered with a binding in the spec (``mcp``, ``a2a``; NAME-3)."""
        return self.name in _REGISTERED

    def declares(self, transport: Transport | str) -> bool:
        """Whether the entry itself sets the transport to true (whatever its scope)."""
        if transport == Transport.CHAT:
            return self.chat
        if transport == Transport.RPC:
            return self.rpc
        return False


@dataclass(frozen=True, slots=True)
class ProtocolDeclarations(Mapping[str, ProtocolDeclaration]):
    """The ``protocols`` key of ``preferences`` or ``groupPreferences``, as a read-only mapping
    from protocol name to :class:`ProtocolDeclaration`, in declaration order.

    Attributes:
        declarations: the valid entries, in the order they were declared.
        scope: where the key sits; decides whether ``rpc`` counts (DECL-PROTO-7).
        problems: what a lenient parse found wrong; the entries it names are left out (or, for
            ``rpc`` in ``groupPreferences``, kept but not served). Not part of equality.
        raw: the value as received, for storing it unchanged (DECL-PROTO-2), or ``None`` for a
            value built in code. Not part of equality.

    Raises:
        DeclarationError: on construction, when two entries have the same name
            (``duplicate_protocol``).
    """

    declarations: tuple[ProtocolDeclaration, ...] = ()
    scope: Scope = Scope.PREFERENCES
    problems: tuple[DeclarationError, ...] = field(default=(), compare=False, hash=False)
    raw: Any = field(default=None, compare=False, hash=False, repr=False)
    _by_name: Mapping[str, ProtocolDeclaration] = field(
        default_factory=_empty, init=False, compare=False, hash=False, repr=False
    )

    def __post_init__(self) -> None:
        given: tuple[object, ...] = tuple(self.declarations)
        by_name: dict[str, ProtocolDeclaration] = {}
        for decl in given:
            if not isinstance(decl, ProtocolDeclaration):
                _invalid("not a ProtocolDeclaration", "bad_declaration", "DECL-PROTO-3")
            if decl.name in by_name:
                _invalid(
                    f"protocol {decl.name!r} is declared twice",
                    "duplicate_protocol",
                    "DECL-PROTO-3",
                    "/" + decl.name,
                )
            by_name[decl.name] = decl
        object.__setattr__(self, "declarations", tuple(by_name.values()))
        object.__setattr__(self, "scope", Scope(self.scope))
        object.__setattr__(self, "problems", tuple(self.problems))
        object.__setattr__(self, "_by_name", types.MappingProxyType(by_name))

    # Mapping interface -------------------------------------------------------------------

    def __getitem__(self, name: str) -> ProtocolDeclaration:
        return self._by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    # Queries ----------------------------------------------------------------------------

    def lookup(self, protocol: str) -> ProtocolDeclaration | None:
        """The entry for ``protocol``, matching ASCII letters in any case (LLMS-NOTES-5).

        Only ASCII letters are folded, so a look-alike such as ``"\\u212a"`` never matches.
        """
        return self._by_name.get(ascii_lower(protocol))

    def serves(self, protocol: str, transport: Transport | str) -> bool:
        """Whether the profile serves ``protocol`` on ``transport``, in effect.

        An absent transport is false (DECL-PROTO-6); ``rpc`` declared in ``groupPreferences``
        is ignored (DECL-PROTO-7); an unknown transport name is never served.
        """
        decl = self.lookup(protocol)
        if decl is None:
            return False
        if transport == Transport.RPC and self.scope is Scope.GROUP_PREFERENCES:
            return False
        return decl.declares(transport)

    def protocols_for(self, transport: Transport | str) -> tuple[str, ...]:
        """The names served on ``transport`` in effect, in declaration order."""
        return tuple(d.name for d in self.declarations if self.serves(d.name, transport))

    def preferred_version(
        self, protocol: str, supported: Iterable[str] | None = None
    ) -> str | None:
        """The version to use with ``protocol``.

        Returns:
            The first declared version, in the bot's order of preference (DECL-PROTO-4), that
            is also in ``supported`` (any declared version when ``supported`` is ``None``), or
            ``None`` when the protocol is not declared or no version matches.
        """
        decl = self.lookup(protocol)
        if decl is None:
            return None
        if supported is None:
            return decl.versions[0] if decl.versions else None
        wanted = set(supported)
        for version in decl.versions:
            if version in wanted:
                return version
        return None

    # Building ---------------------------------------------------------------------------

    def with_declaration(self, declaration: ProtocolDeclaration) -> ProtocolDeclarations:
        """A copy with ``declaration`` added, or replacing the entry of the same name in place."""
        items = list(self.declarations)
        for i, decl in enumerate(items):
            if decl.name == declaration.name:
                items[i] = declaration
                break
        else:
            items.append(declaration)
        return ProtocolDeclarations(tuple(items), self.scope)

    def without(self, name: str) -> ProtocolDeclarations:
        """A copy without the entry ``name`` (unchanged when there is none)."""
        return ProtocolDeclarations(
            tuple(d for d in self.declarations if d.name != name), self.scope
        )


def _effective_peers(declared: tuple[PeerType | str, ...] | None) -> frozenset[PeerType]:
    if declared is None:
        return DEFAULT_AUDIENCE
    # DECL-AUD-5: "Clients MUST ignore unknown values of audience and serves."
    return frozenset(p for p in declared if isinstance(p, PeerType))


def _peers(values: object, what: str, req: str) -> tuple[PeerType | str, ...] | None:
    if values is None:
        return None
    if isinstance(values, str) or not isinstance(values, Iterable):
        _invalid(f"{what} is not a list of strings", f"bad_{what}", req, f"/{what}")
    out: list[PeerType | str] = []
    for i, value in enumerate(values):
        if not isinstance(value, str):
            _invalid(
                f"{what} holds a value that is not a string",
                f"bad_{what}_value",
                req,
                f"/{what}/{i}",
            )
        out.append(peer_type(value))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PublicGroupDeclaration:
    """The declaration fields of a public group record (``publicGroup`` of a group profile).

    Attributes:
        audience: the peer types the channel or group is made for, as declared, unknown values
            kept as ``str`` (DECL-AUD-1, DECL-AUD-5); ``None`` when absent.
        change_frequency: the declared ``changeFrequency``, or ``None`` when absent.
        extra: every other member of the record (``groupType``, ``groupLink``, ...), in order,
            kept for the round trip. Read-only.
        problems: what a lenient parse found wrong. Not part of equality.
        raw: the record as received. Not part of equality.

    Raises:
        DeclarationError: on construction, when a field has the wrong type.
    """

    audience: tuple[PeerType | str, ...] | None = None
    change_frequency: ChangeFrequency | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty, hash=False)
    problems: tuple[DeclarationError, ...] = field(default=(), compare=False, hash=False)
    raw: Any = field(default=None, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "audience", _peers(self.audience, "audience", "DECL-AUD-1"))
        if self.change_frequency is not None:
            try:
                object.__setattr__(self, "change_frequency", ChangeFrequency(self.change_frequency))
            except ValueError:
                _invalid(
                    f"{self.change_frequency!r} is not a changefreq value",
                    "bad_change_frequency",
                    "DECL-AUD-3",
                    "/changeFrequency",
                )
        extra = _readonly(self.extra)
        if "audience" in extra or "changeFrequency" in extra:
            _invalid(
                "extra members repeat audience or changeFrequency", "bad_public_group", "DECL-AUD-6"
            )
        object.__setattr__(self, "extra", extra)
        object.__setattr__(self, "problems", tuple(self.problems))

    @property
    def group_type(self) -> str | None:
        """``groupType`` of the record (``"channel"`` or ``"group"``), when it is a string."""
        value = self.extra.get("groupType")
        return value if isinstance(value, str) else None

    @property
    def is_channel(self) -> bool:
        """Whether the record says the group is a channel."""
        return self.group_type == "channel"

    @property
    def effective_audience(self) -> frozenset[PeerType]:
        """The known peer types the group is made for: ``{human}`` when ``audience`` is absent
        (DECL-AUD-2); unknown values ignored (DECL-AUD-5)."""
        return _effective_peers(self.audience)

    @property
    def effective_change_frequency(self) -> ChangeFrequency | None:
        """``changeFrequency`` where it applies: in a channel, or a record without ``groupType``.

        In a group that is not a channel it is ignored (DECL-AUD-3; the parser reports it).
        """
        group_type = self.group_type
        if group_type is not None and group_type != "channel":
            return None
        return self.change_frequency


@dataclass(frozen=True, slots=True)
class AddressLinkData:
    """The declaration field of a contact address's link data: ``serves``, beside ``business``.

    Attributes:
        serves: the peer types the address is made for, as declared, unknown values kept as
            ``str`` (DECL-SERVES-1, DECL-AUD-5); ``None`` when absent.
        extra: every other member of the link data (``profile``, ``business``, ...), in order,
            kept for the round trip. Read-only.
        problems: what a lenient parse found wrong. Not part of equality.
        raw: the link data as received. Not part of equality.

    Raises:
        DeclarationError: on construction, when ``serves`` is not a list of strings.
    """

    serves: tuple[PeerType | str, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty, hash=False)
    problems: tuple[DeclarationError, ...] = field(default=(), compare=False, hash=False)
    raw: Any = field(default=None, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "serves", _peers(self.serves, "serves", "DECL-SERVES-2"))
        extra = _readonly(self.extra)
        if "serves" in extra:
            _invalid("extra members repeat serves", "bad_link_data", "DECL-SERVES-2")
        object.__setattr__(self, "extra", extra)
        object.__setattr__(self, "problems", tuple(self.problems))

    @property
    def business(self) -> bool:
        """Whether the link data marks a business address (``business: true``)."""
        return self.extra.get("business") is True

    @property
    def effective_serves(self) -> frozenset[PeerType]:
        """The known peer types the address serves: ``{human}`` when ``serves`` is absent, as
        for ``audience`` (DECL-SERVES-1); unknown values ignored (DECL-AUD-5)."""
        return _effective_peers(self.serves)


_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class EffectiveValue(Generic[_T]):
    """A value after applying the precedence rule (DECL-PREC-1), and where it came from.

    Attributes:
        value: the effective value.
        source: the public group record, the link data, the website, or the spec's default.
        problems: what was wrong with the inputs and therefore ignored (for example a website
            audience phrase that is not ``people``, ``agents`` or ``people and agents``).
    """

    value: _T
    source: DeclarationSource
    problems: tuple[DeclarationError, ...] = field(default=(), compare=False)
