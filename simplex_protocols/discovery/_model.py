"""Typed results of website discovery: where addresses were found and what the website says."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from simplex_protocols.errors import DiscoveryError
from simplex_protocols.links import LinkKind
from simplex_protocols.llmstxt import CommunicationsEntry

__all__ = [
    "AddressSource",
    "DiscoveryLimits",
    "DiscoveryProblem",
    "DocumentReport",
    "DocumentStatus",
    "WebsiteAddress",
    "WebsiteDiscovery",
]


class AddressSource(StrEnum):
    """Where on a website an address was published."""

    LLMS_TXT = "llms.txt"
    """The ``## Communications`` section of ``/llms.txt``."""
    WELL_KNOWN = "simplex.json"
    """The well-known document ``/.well-known/simplex.json``."""
    LINK_RELATION = "link"
    """A ``<link>`` element of the home page, or a ``Link`` header of its response."""
    AGENT_CARD = "agent-card"
    """A SimpleX interface of the A2A Agent Card at ``/.well-known/agent-card.json``."""


class DocumentStatus(StrEnum):
    """What came of fetching one document."""

    FOUND = "found"
    """The document was read (it may still hold no address)."""
    ABSENT = "absent"
    """The website has no such document (HTTP 404 or 410)."""
    FAILED = "failed"
    """The document could not be read: see :attr:`DocumentReport.error`."""


@dataclass(frozen=True, slots=True)
class DiscoveryLimits:
    """Bounds on what discovery fetches and holds.

    Attributes:
        timeout_s: the longest a document may take, redirects included.
        max_redirects: how many redirects one document may follow.
        max_text_bytes: the largest llms.txt or HTML page read, after content decoding.
        max_json_bytes: the largest well-known JSON document read, after content decoding.
        allow_loopback_http: accept ``http://`` for loopback hosts (``127.0.0.0/8``, ``::1``,
            ``localhost``); every other URL must be ``https://``.
    """

    timeout_s: float = 10.0
    max_redirects: int = 5
    max_text_bytes: int = 1_048_576
    max_json_bytes: int = 262_144
    allow_loopback_http: bool = True

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ValueError("timeout_s must be positive")
        if self.max_redirects < 0:
            raise ValueError("max_redirects cannot be negative")
        if self.max_text_bytes <= 0 or self.max_json_bytes <= 0:
            raise ValueError("size limits must be positive")


@dataclass(frozen=True, slots=True)
class DiscoveryProblem:
    """Something on the website that was left out, and why.

    Attributes:
        source: the document it was found in.
        code: a stable code: an ``LLMsTxtError`` code for llms.txt items, else one of
            ``not_json``, ``not_an_object``, ``bad_entry``, ``bad_address``,
            ``kind_mismatch``, ``not_published`` (an invitation or relay link), ``bad_card``.
        reason: what was wrong, in words.
        line: the llms.txt line, when known.
        position: a JSON pointer into a JSON document, when known.
    """

    source: AddressSource
    code: str
    reason: str
    line: int | None = None
    position: str | None = None


@dataclass(frozen=True, slots=True)
class DocumentReport:
    """What happened to one document.

    Attributes:
        source: which document.
        url: the URL requested first.
        status: found, absent or failed.
        final_url: the URL that answered, after redirects.
        http_status: the final HTTP status, when a response arrived.
        size: bytes read (after content decoding).
        addresses: how many addresses it published.
        error: why it failed (``status`` is ``failed``).
    """

    source: AddressSource
    url: str
    status: DocumentStatus
    final_url: str | None = None
    http_status: int | None = None
    size: int = 0
    addresses: int = 0
    error: DiscoveryError | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class WebsiteAddress:
    """A SimpleX address a website publishes, with what the website says about it.

    The website's values are hints: the link data and the public group record take
    precedence over them (DECL-PREC-1). Read those with
    :func:`~simplex_protocols.discovery.plan_address`.

    Attributes:
        address: the SimpleX link or SimpleX name, as published.
        kind: the kind of address: ``contact``, ``group`` or ``channel`` (for a ``#`` name
            published without a kind, ``channel``).
        sources: every document that publishes it, in the order they were read.
        title: a title from the website (the llms.txt link text, the well-known ``title``, or
            the Agent Card's ``name``).
        info: free text from the website (llms.txt info, the well-known ``description``, the
            Agent Card's ``description``).
        audience: the peer types the website says the address is for (``human``, ``agent``,
            ...), or ``None`` when it says nothing.
        frequency: for a channel, the update frequency the website gives.
        protocols: protocol names the website lists for it, lowercase.
        business: whether the website calls it a business contact (``None``: not said).
        a2a_versions: A2A versions of the Agent Card's SimpleX interfaces naming it.
        entry: the llms.txt entry, when it came from llms.txt. Not compared.
    """

    address: str
    kind: LinkKind
    sources: tuple[AddressSource, ...]
    title: str | None = None
    info: str | None = None
    audience: tuple[str, ...] | None = None
    frequency: str | None = None
    protocols: tuple[str, ...] = ()
    business: bool | None = None
    a2a_versions: tuple[str, ...] = ()
    entry: CommunicationsEntry | None = field(default=None, compare=False)

    @property
    def for_agents(self) -> bool:
        """Whether the website offers this address to agents: its audience names agents, or
        an Agent Card lists it as a SimpleX interface."""
        return (self.audience is not None and "agent" in self.audience) or (
            AddressSource.AGENT_CARD in self.sources
        )

    def lists_protocol(self, protocol: str) -> bool:
        """Whether the website lists ``protocol`` for this address (any letter case)."""
        return protocol.lower() in self.protocols

    def to_json(self) -> dict[str, Any]:
        """The address as a JSON object (``simplex-call discover --json``)."""
        out: dict[str, Any] = {
            "address": self.address,
            "kind": self.kind.value,
            "sources": [s.value for s in self.sources],
        }
        if self.title is not None:
            out["title"] = self.title
        if self.info:
            out["info"] = self.info
        if self.audience is not None:
            out["audience"] = list(self.audience)
        if self.frequency is not None:
            out["frequency"] = self.frequency
        if self.protocols:
            out["protocols"] = list(self.protocols)
        if self.business is not None:
            out["business"] = self.business
        if self.a2a_versions:
            out["a2aVersions"] = list(self.a2a_versions)
        return out


@dataclass(frozen=True, slots=True)
class WebsiteDiscovery:
    """Everything discovery found on one website.

    Attributes:
        url: the website, as normalised (scheme, host, port, path).
        addresses: the addresses found, each once, in the order of the documents
            (llms.txt, simplex.json, link relations, Agent Card) and of their entries.
        documents: a report per document fetched.
        problems: entries that were left out, and why.
    """

    url: str
    addresses: tuple[WebsiteAddress, ...] = ()
    documents: tuple[DocumentReport, ...] = ()
    problems: tuple[DiscoveryProblem, ...] = ()

    def agent_contacts(self, protocol: str | None = None) -> tuple[WebsiteAddress, ...]:
        """The contact addresses offered to agents, those listing ``protocol`` first.

        An address is offered to agents when its audience names agents or an Agent Card lists
        it. With ``protocol``, addresses whose website entry lists it come before the others
        (the website's list is only a hint: the link data decides).
        """
        found = [a for a in self.addresses if a.kind is LinkKind.CONTACT and a.for_agents]
        if protocol is None:
            return tuple(found)
        listed = [a for a in found if a.lists_protocol(protocol)]
        return tuple(listed + [a for a in found if not a.lists_protocol(protocol)])

    @property
    def failed(self) -> tuple[DocumentReport, ...]:
        """The documents that could not be read."""
        return tuple(d for d in self.documents if d.status is DocumentStatus.FAILED)
