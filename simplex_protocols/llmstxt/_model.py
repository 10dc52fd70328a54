"""Typed values of an llms.txt Communications section ("Addresses in llms.txt")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from simplex_protocols._sitemaps import ChangeFrequency
from simplex_protocols.errors import LLMsTxtError

__all__ = [
    "MAX_ENTRY_LINE_CHARS",
    "SIMPLEX_NETWORK",
    "AddressType",
    "Audience",
    "CommunicationsEntry",
    "CommunicationsSection",
    "LLMsTxtDocument",
]

#: The network name of SimpleX entries, as the spec writes it (LLMS-NOTES-2).
SIMPLEX_NETWORK = "SimpleX"

#: The longest list item line a reader accepts, in characters. The spec sets no limit; this
#: bounds what an untrusted file can make a reader hold per entry, and still fits a full
#: contact link with post-quantum keys.
MAX_ENTRY_LINE_CHARS = 8192


class AddressType(StrEnum):
    """The type of an address, the word(s) after the network in the notes."""

    UPDATES = "updates"
    """An address that publishes updates: for SimpleX, a channel."""
    GROUP = "group"
    """A group where members converse."""
    CONTACT = "contact"
    """An address that accepts conversations and requests."""
    BUSINESS_CONTACT = "business contact"
    """A business address."""


class Audience(StrEnum):
    """Who an address is for (LLMS-NOTES-3), with its peer types."""

    PEOPLE = "people"
    AGENTS = "agents"
    PEOPLE_AND_AGENTS = "people and agents"

    @property
    def peer_types(self) -> tuple[str, ...]:
        """The peer types of this audience, as ``audience`` and ``serves`` declare them.

        ``people`` is ``("human",)``, ``agents`` is ``("agent",)``, and ``people and agents``
        is ``("human", "agent")``.
        """
        return _PEER_TYPES[self]

    @classmethod
    def from_peer_types(cls, peer_types: Iterable[str]) -> Audience | None:
        """The audience for a set of peer types, or ``None`` when it has neither ``human`` nor
        ``agent`` (other peer types have no word in llms.txt notes)."""
        types = set(peer_types)
        human, agent = "human" in types, "agent" in types
        if human and agent:
            return cls.PEOPLE_AND_AGENTS
        if human:
            return cls.PEOPLE
        if agent:
            return cls.AGENTS
        return None


_PEER_TYPES: dict[Audience, tuple[str, ...]] = {
    Audience.PEOPLE: ("human",),
    Audience.AGENTS: ("agent",),
    Audience.PEOPLE_AND_AGENTS: ("human", "agent"),
}


@dataclass(frozen=True, slots=True)
class CommunicationsEntry:
    """One item of a ``## Communications`` section: ``- [title](url): notes``.

    Attributes:
        title: the link text, unescaped: the title of the address (LLMS-TITLE-1).
        url: the link destination: a SimpleX link for SimpleX entries, anything for others.
        network: ``"SimpleX"`` for SimpleX entries (however the file writes it), otherwise the
            network's name as written, with runs of spaces made single.
        type: updates, group, contact or business contact.
        audience: people, agents, or people and agents.
        frequency: for ``updates``, the update frequency when given.
        protocols: for contacts, the protocols the address serves, in the file's letter case
            (compare :attr:`protocol_names`).
        info: the free text after the first period, or ``""``.
        line: the line of the llms.txt file, when the entry came from one. Not compared.
        problems: what a lenient reading tolerated in the item (``missing_space_before_info``,
            ``duplicate_protocol``, ``bad_link_key``, ``continued_item``; see
            ``docs/llmstxt.md``), each an :class:`~simplex_protocols.errors.LLMsTxtError` with
            its ``line``. A strict reading raises them instead, so an entry it returns has
            none. Not compared.
    """

    title: str
    url: str
    network: str
    type: AddressType
    audience: Audience
    frequency: ChangeFrequency | None = None
    protocols: tuple[str, ...] = ()
    info: str = ""
    line: int | None = field(default=None, compare=False)
    problems: tuple[LLMsTxtError, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        # Accept plain strings and lists from callers; store the canonical forms.
        if self.network.isascii() and self.network.lower() == "simplex":
            object.__setattr__(self, "network", SIMPLEX_NETWORK)
        if type(self.type) is not AddressType:
            object.__setattr__(self, "type", AddressType(self.type))
        if type(self.audience) is not Audience:
            object.__setattr__(self, "audience", Audience(self.audience))
        if self.frequency is not None and type(self.frequency) is not ChangeFrequency:
            object.__setattr__(self, "frequency", ChangeFrequency(self.frequency))
        if type(self.protocols) is not tuple:
            object.__setattr__(self, "protocols", tuple(self.protocols))
        if type(self.problems) is not tuple:
            object.__setattr__(self, "problems", tuple(self.problems))

    @property
    def is_simplex(self) -> bool:
        """Whether this is a SimpleX entry (its network is SimpleX)."""
        return self.network == SIMPLEX_NETWORK

    @property
    def protocol_names(self) -> tuple[str, ...]:
        """The protocols in lowercase, for comparison with declarations (LLMS-NOTES-5)."""
        return tuple(p.lower() for p in self.protocols)

    @property
    def peer_types(self) -> tuple[str, ...]:
        """The peer types of the audience (``human``, ``agent``)."""
        return self.audience.peer_types

    def serves(self, protocol: str) -> bool:
        """Whether the notes list ``protocol``, in any letter case."""
        return protocol.lower() in self.protocol_names


@dataclass(frozen=True, slots=True)
class CommunicationsSection:
    """The entries of the ``## Communications`` section(s) of a file, and what was wrong.

    Attributes:
        entries: the entries read, in file order (with their tolerated problems, if any).
        problems: one :class:`~simplex_protocols.errors.LLMsTxtError` per item that was left
            out, and the problems of the entries that were kept in spite of them (see
            :attr:`CommunicationsEntry.problems`), each with its ``line`` and ``code``, in file
            order. Not compared.
        line: the line of the (first) ``## Communications`` heading.
    """

    entries: tuple[CommunicationsEntry, ...] = ()
    problems: tuple[LLMsTxtError, ...] = field(default=(), compare=False)
    line: int | None = None

    @property
    def simplex_entries(self) -> tuple[CommunicationsEntry, ...]:
        """The SimpleX entries only."""
        return tuple(e for e in self.entries if e.is_simplex)


@dataclass(frozen=True, slots=True)
class LLMsTxtDocument:
    """What a reader takes from an llms.txt file.

    Attributes:
        title: the text of the first ``#`` heading, or ``None``.
        summary: the text of the first blockquote line before any section, or ``None``.
        communications: the Communications section, or ``None`` when the file has none.
    """

    title: str | None = None
    summary: str | None = None
    communications: CommunicationsSection | None = None

    @property
    def entries(self) -> tuple[CommunicationsEntry, ...]:
        """The valid Communications entries (empty when there is no such section)."""
        return self.communications.entries if self.communications else ()

    @property
    def problems(self) -> tuple[LLMsTxtError, ...]:
        """The problems of the Communications section (empty when there is none)."""
        return self.communications.problems if self.communications else ()
