"""Reading SimpleX addresses out of website documents (sans-IO: text in, addresses out).

Four documents, as the spec's overview lists them ("reads the addresses from the website: link
relations, /.well-known/simplex.json or llms.txt"), plus the A2A Agent Card:

- ``/llms.txt``: the ``## Communications`` section ("Addresses in llms.txt"), read with
  :mod:`simplex_protocols.llmstxt`;
- ``/.well-known/simplex.json``: the well-known document of the convention the spec cites as
  [WEB] ("Publishing SimpleX addresses on websites"). That document is not available to us; the
  shape read here is our reading, documented in ``docs/discovery.md``: an object with the lists
  ``channels``, ``groups`` and ``contacts``, each item a link or name, or an object with one;
- link relations: ``<link>`` elements of the home page and ``Link`` header fields of its
  response whose target is a SimpleX link or name;
- ``/.well-known/agent-card.json`` (A2A's well-known URI): ``supportedInterfaces`` items whose
  ``protocolBinding`` is the SimpleX binding URI (A2A-ID-2, A2A-CARD-1).

Every reader is total over text: bad input becomes a :class:`DiscoveryProblem`, never an
exception.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from html.parser import HTMLParser
from typing import Any, Final, TypeVar

from simplex_protocols._wire import WireJSONError, loads
from simplex_protocols.bindings._a2a_wire import A2A_BINDING_URI
from simplex_protocols.errors import LinkError
from simplex_protocols.links import (
    MAX_LINK_CHARS,
    LinkKind,
    NameType,
    SimplexLink,
    SimplexName,
    parse_simplex_target,
)
from simplex_protocols.llmstxt import AddressType, parse_llms_txt

from ._model import AddressSource, DiscoveryProblem, WebsiteAddress

__all__ = [
    "merge_addresses",
    "read_agent_card",
    "read_link_relations",
    "read_llms_txt",
    "read_simplex_json",
]

_T = TypeVar("_T")

Found = tuple[list[WebsiteAddress], list[DiscoveryProblem]]

_TYPE_KINDS: Final[dict[AddressType, LinkKind]] = {
    AddressType.UPDATES: LinkKind.CHANNEL,
    AddressType.GROUP: LinkKind.GROUP,
    AddressType.CONTACT: LinkKind.CONTACT,
    AddressType.BUSINESS_CONTACT: LinkKind.CONTACT,
}

#: simplex.json lists and the kind of address each holds.
_LISTS: Final[dict[str, LinkKind]] = {
    "channels": LinkKind.CHANNEL,
    "groups": LinkKind.GROUP,
    "contacts": LinkKind.CONTACT,
}

#: At most this many items are read from one list of a JSON document.
MAX_LIST_ITEMS: Final = 256

#: Link relations that load a resource into the page; a SimpleX link in one is not published.
_RESOURCE_RELS: Final = frozenset(
    {
        "stylesheet",
        "icon",
        "apple-touch-icon",
        "mask-icon",
        "preload",
        "prefetch",
        "modulepreload",
        "preconnect",
        "dns-prefetch",
        "prerender",
        "manifest",
        "pingback",
    }
)

_PROTOCOL_RE = re.compile(r"[a-z0-9-]{1,64}")
_PEER_RE = re.compile(r"[a-z]{1,32}")


def _problem(
    source: AddressSource,
    code: str,
    reason: str,
    *,
    line: int | None = None,
    position: str | None = None,
) -> DiscoveryProblem:
    return DiscoveryProblem(source, code, reason, line=line, position=position)


def _target_kind(target: SimplexLink | SimplexName) -> LinkKind | None:
    """The kind of address a link or a name names; ``None`` for what is never published."""
    if isinstance(target, SimplexName):
        return LinkKind.CONTACT if target.type is NameType.CONTACT else LinkKind.CHANNEL
    if target.kind in (LinkKind.CONTACT, LinkKind.GROUP, LinkKind.CHANNEL):
        return target.kind
    return None


def _parse_target(text: str) -> SimplexLink | SimplexName | None:
    if len(text) > MAX_LINK_CHARS:
        return None
    try:
        return parse_simplex_target(text)
    except LinkError:
        return None


def _kind_fits(published: LinkKind, expected: LinkKind, target: SimplexLink | SimplexName) -> bool:
    if published is expected:
        return True
    # A "#" name names a channel or a public group: it fits either list.
    return isinstance(target, SimplexName) and target.type is NameType.PUBLIC_GROUP


# --------------------------------------------------------------------------- llms.txt


def read_llms_txt(text: str | bytes) -> Found:
    """The SimpleX addresses of an llms.txt ``## Communications`` section.

    Entries of other networks are legitimate and skipped (LLMS-OTHER-1). Items that break the
    grammar, and SimpleX entries whose link does not fit their type (LLMS-TYPE-1), become
    problems with their ``LLMsTxtError`` code and line.
    """
    doc = parse_llms_txt(text)
    addresses: list[WebsiteAddress] = []
    problems = [
        _problem(AddressSource.LLMS_TXT, p.code, p.reason, line=p.line) for p in doc.problems
    ]
    for entry in doc.entries:
        if not entry.is_simplex:
            continue
        addresses.append(
            WebsiteAddress(
                address=entry.url,
                kind=_TYPE_KINDS[entry.type],
                sources=(AddressSource.LLMS_TXT,),
                title=entry.title,
                info=entry.info or None,
                audience=entry.peer_types,
                frequency=entry.frequency.value if entry.frequency is not None else None,
                protocols=entry.protocol_names,
                business=entry.type is AddressType.BUSINESS_CONTACT
                if entry.type in (AddressType.CONTACT, AddressType.BUSINESS_CONTACT)
                else None,
                entry=entry,
            )
        )
    return addresses, problems


# --------------------------------------------------------------------------- simplex.json


def _json_object(text: str | bytes, source: AddressSource) -> tuple[Any, list[DiscoveryProblem]]:
    try:
        value = loads(text)
    except WireJSONError as exc:
        return None, [_problem(source, "not_json", f"not a JSON document ({exc.code})")]
    if not isinstance(value, dict):
        return None, [_problem(source, "not_an_object", "the document is not a JSON object")]
    return value, []


def _string(value: Any, limit: int = 512) -> str | None:
    if isinstance(value, str) and value.strip() and len(value) <= limit:
        return " ".join(value.split())
    return None


def _string_list(value: Any, pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    out: list[str] = []
    for item in value[:MAX_LIST_ITEMS]:
        if isinstance(item, str) and pattern.fullmatch(item.lower()):
            lowered = item.lower()
            if lowered not in out:
                out.append(lowered)
    return tuple(out)


def read_simplex_json(text: str | bytes) -> Found:
    """The addresses of a ``/.well-known/simplex.json`` document.

    The shape read (our reading of [WEB], see ``docs/discovery.md``)::

        {"channels": [ITEM, ...], "groups": [ITEM, ...], "contacts": [ITEM, ...]}

    where ITEM is a SimpleX link or name as a string, or an object with ``link`` (or
    ``address``, ``url``, ``name``) and the optional ``title``, ``description``,
    ``audience`` / ``serves`` (peer types), ``changeFrequency``, ``protocols`` and
    ``business``. Unknown members are ignored; an item whose link is of another kind than its
    list (a contact link among ``channels``) is a ``kind_mismatch`` problem.
    """
    source = AddressSource.WELL_KNOWN
    doc, problems = _json_object(text, source)
    addresses: list[WebsiteAddress] = []
    if doc is None:
        return addresses, problems
    for list_name, expected in _LISTS.items():
        items = doc.get(list_name)
        if items is None:
            continue
        if not isinstance(items, list):
            problems.append(
                _problem(
                    source, "bad_entry", f"{list_name} is not a list", position=f"/{list_name}"
                )
            )
            continue
        for index, item in enumerate(items[:MAX_LIST_ITEMS]):
            where = f"/{list_name}/{index}"
            found = _read_well_known_item(item, expected, where, problems)
            if found is not None:
                addresses.append(found)
    return addresses, problems


def _read_well_known_item(
    item: Any, expected: LinkKind, where: str, problems: list[DiscoveryProblem]
) -> WebsiteAddress | None:
    source = AddressSource.WELL_KNOWN
    fields: Mapping[str, Any] = {}
    if isinstance(item, str):
        text: Any = item
    elif isinstance(item, dict):
        fields = item
        text = next(
            (item[k] for k in ("link", "address", "url", "name") if isinstance(item.get(k), str)),
            None,
        )
    else:
        problems.append(_problem(source, "bad_entry", "not a link or an object", position=where))
        return None
    if not isinstance(text, str):
        problems.append(_problem(source, "bad_entry", "the item has no link", position=where))
        return None
    text = text.strip()
    target = _parse_target(text)
    if target is None:
        problems.append(
            _problem(source, "bad_address", "not a SimpleX link or name", position=where)
        )
        return None
    kind = _target_kind(target)
    if kind is None:
        problems.append(
            _problem(
                source,
                "not_published",
                "one-time invitation and relay links are not published addresses",
                position=where,
            )
        )
        return None
    if not _kind_fits(kind, expected, target):
        problems.append(
            _problem(
                source,
                "kind_mismatch",
                f"a {kind.value} address in the list of {expected.value} addresses",
                position=where,
            )
        )
        return None
    audience = _string_list(fields.get("audience", fields.get("serves")), _PEER_RE)
    frequency = _string(fields.get("changeFrequency"), 16)
    business = fields.get("business")
    return WebsiteAddress(
        address=text,
        kind=expected,
        sources=(source,),
        title=_string(fields.get("title")),
        info=_string(fields.get("description"), 2048),
        audience=audience,
        frequency=frequency.lower() if frequency and expected is LinkKind.CHANNEL else None,
        protocols=_string_list(fields.get("protocols"), _PROTOCOL_RE) or (),
        business=business if isinstance(business, bool) and expected is LinkKind.CONTACT else None,
    )


# --------------------------------------------------------------------------- link relations


class _LinkCollector(HTMLParser):
    """Collects ``(rel, href)`` of ``<link>`` elements, wherever they are in the page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "link" or len(self.links) >= MAX_LIST_ITEMS:
            return
        values = dict(attrs)
        rel, href = values.get("rel"), values.get("href")
        if rel and href:
            self.links.append((rel, href))

    handle_startendtag = handle_starttag


def _split_outside(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside ``<...>`` and double quotes (RFC 8288 field values)."""
    parts: list[str] = []
    current: list[str] = []
    in_uri = in_quote = False
    escaped = False
    for ch in text:
        if in_quote:
            current.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_quote = False
            continue
        if in_uri:
            current.append(ch)
            if ch == ">":
                in_uri = False
            continue
        if ch == "<":
            in_uri = True
        elif ch == '"':
            in_quote = True
        elif ch == sep:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return parts


def _parse_link_header(value: str) -> list[tuple[str, str]]:
    """``(rel, target)`` pairs of one ``Link`` header field value (RFC 8288, section 3)."""
    out: list[tuple[str, str]] = []
    for link_value in _split_outside(value, ","):
        link_value = link_value.strip()
        if not link_value.startswith("<") or ">" not in link_value:
            continue
        target, _, rest = link_value[1:].partition(">")
        rel = None
        for param in _split_outside(rest, ";")[1:]:
            name, _, raw = param.strip().partition("=")
            if name.strip().lower() == "rel":
                raw = raw.strip()
                rel = raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] == '"' else raw
                break
        if rel:
            out.append((rel, target.strip()))
    return out


def read_link_relations(html: str | None, link_headers: Sequence[str] = ()) -> Found:
    """The addresses of the home page's link relations.

    Every ``<link>`` element of ``html`` and every link of the ``Link`` header fields whose
    target is a SimpleX link or name counts, whatever its relation type, except relations that
    load a resource (``stylesheet``, ``icon``, ``preload``, ...). The kind comes from the link
    itself. Targets that are not SimpleX links are other links of the page and are skipped
    silently; a SimpleX invitation or relay link is a ``not_published`` problem.
    """
    source = AddressSource.LINK_RELATION
    pairs: list[tuple[str, str]] = []
    for header in link_headers:
        pairs.extend(_parse_link_header(header))
    if html:
        collector = _LinkCollector()
        try:
            collector.feed(html)
            collector.close()
        except Exception:  # pragma: no cover - html.parser is lenient; keep what was read
            pass
        pairs.extend(collector.links)
    addresses: list[WebsiteAddress] = []
    problems: list[DiscoveryProblem] = []
    for rel, href in pairs[: MAX_LIST_ITEMS * 2]:
        tokens = {t.lower() for t in rel.split()}
        if tokens and tokens <= _RESOURCE_RELS:
            continue
        href = href.strip()
        target = _parse_target(href)
        if target is None:
            continue
        kind = _target_kind(target)
        if kind is None:
            problems.append(
                _problem(
                    source,
                    "not_published",
                    f"rel={rel!r}: one-time invitation and relay links are not published addresses",
                )
            )
            continue
        addresses.append(WebsiteAddress(address=href, kind=kind, sources=(source,)))
    return addresses, problems


# --------------------------------------------------------------------------- Agent Card


def _interfaces(card: Mapping[str, Any]) -> Iterable[tuple[str, Mapping[str, Any]]]:
    supported = card.get("supportedInterfaces")
    if isinstance(supported, list):
        for index, item in enumerate(supported[:MAX_LIST_ITEMS]):
            if isinstance(item, dict):
                yield f"/supportedInterfaces/{index}", item
    # A2A 0.3 cards list further interfaces as additionalInterfaces with a "transport".
    additional = card.get("additionalInterfaces")
    if isinstance(additional, list):
        for index, item in enumerate(additional[:MAX_LIST_ITEMS]):
            if isinstance(item, dict):
                yield f"/additionalInterfaces/{index}", item


def read_agent_card(text: str | bytes) -> Found:
    """The SimpleX contact addresses of an A2A Agent Card.

    An interface is a SimpleX interface when its ``protocolBinding`` (or, in A2A 0.3 cards,
    its ``transport``) is :data:`A2A_BINDING_URI`; its ``url`` is the bot's contact address
    link and its ``protocolVersion`` the A2A version (A2A-ID-2). Such an interface whose
    ``url`` is not a SimpleX contact address is a ``bad_card`` problem.
    """
    source = AddressSource.AGENT_CARD
    card, problems = _json_object(text, source)
    addresses: list[WebsiteAddress] = []
    if card is None:
        return addresses, problems
    title = _string(card.get("name"))
    info = _string(card.get("description"), 2048)
    for where, interface in _interfaces(card):
        binding = interface.get("protocolBinding", interface.get("transport"))
        if binding != A2A_BINDING_URI:
            continue
        url = interface.get("url")
        target = _parse_target(url.strip()) if isinstance(url, str) else None
        if target is None or _target_kind(target) is not LinkKind.CONTACT:
            problems.append(
                _problem(
                    source,
                    "bad_card",
                    "a SimpleX interface whose url is not a SimpleX contact address",
                    position=where,
                )
            )
            continue
        assert isinstance(url, str)
        version = _string(interface.get("protocolVersion"), 32)
        addresses.append(
            WebsiteAddress(
                address=url.strip(),
                kind=LinkKind.CONTACT,
                sources=(source,),
                title=title,
                info=info,
                protocols=("a2a",),
                a2a_versions=(version,) if version else (),
            )
        )
    return addresses, problems


# --------------------------------------------------------------------------- merging


def _key(address: str) -> str:
    target = _parse_target(address)
    if isinstance(target, SimplexName):
        return f"{target.sigil}{target.full_domain}"
    return address


def _union(a: tuple[_T, ...], b: tuple[_T, ...]) -> tuple[_T, ...]:
    return a + tuple(x for x in b if x not in a)


def merge_addresses(found: Iterable[WebsiteAddress]) -> tuple[WebsiteAddress, ...]:
    """One address per link or name, in first-seen order.

    The sources are joined, and so are audiences, protocols and A2A versions; for the other fields the
    first document that gives a value wins (llms.txt before simplex.json before link
    relations before the Agent Card, when given in that order).
    """
    merged: dict[str, WebsiteAddress] = {}
    for address in found:
        key = _key(address.address)
        first = merged.get(key)
        if first is None:
            merged[key] = address
            continue
        merged[key] = WebsiteAddress(
            address=first.address,
            kind=first.kind,
            sources=_union(first.sources, address.sources),
            title=first.title if first.title is not None else address.title,
            info=first.info if first.info is not None else address.info,
            audience=_union(first.audience, address.audience)
            if first.audience is not None and address.audience is not None
            else first.audience
            if first.audience is not None
            else address.audience,
            frequency=first.frequency if first.frequency is not None else address.frequency,
            protocols=_union(first.protocols, address.protocols),
            business=first.business if first.business is not None else address.business,
            a2a_versions=_union(first.a2a_versions, address.a2a_versions),
            entry=first.entry if first.entry is not None else address.entry,
        )
    return tuple(merged.values())
