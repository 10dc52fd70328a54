"""Vector operations of the ``llmstxt`` family (spec/vectors/llmstxt/).

An entry is written::

    {"title": str, "url": str, "network": str, "type": "updates|group|contact|business contact",
     "audience": "people|agents|people and agents", "frequency": str|null,
     "protocols": [str], "info": str}

``network`` is ``"SimpleX"`` for SimpleX entries whatever the file's letter case; protocols
keep the file's letter case.

- ``llmstxt.parse_entry``: one list item line → an entry. ``args.validate`` (default true)
  checks the links of SimpleX entries.
- ``llmstxt.render_entry``: an entry → the list item line.
- ``llmstxt.parse_document``: a whole llms.txt (text, or bytes in ``input_b64``) →
  ``{"title", "summary", "section"}``, where ``section`` is ``null`` without a Communications
  section, else ``{"line", "entries": [entry + "line"], "problems": [{"line", "code"}]}``.
  ``args.strict`` true makes the first problem the error.
- ``llmstxt.render_section``: a list of entries → the section text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simplex_protocols.conformance.ops import op
from simplex_protocols.errors import LLMsTxtError
from simplex_protocols.llmstxt import (
    AddressType,
    Audience,
    ChangeFrequency,
    CommunicationsEntry,
    parse_communications_entry,
    parse_llms_txt,
    render_communications_entry,
    render_communications_section,
)

__all__ = ["entry_from_json", "entry_json"]


def entry_json(entry: CommunicationsEntry) -> dict[str, Any]:
    """The canonical JSON form of an entry (without its line)."""
    return {
        "title": entry.title,
        "url": entry.url,
        "network": entry.network,
        "type": entry.type.value,
        "audience": entry.audience.value,
        "frequency": entry.frequency.value if entry.frequency is not None else None,
        "protocols": list(entry.protocols),
        "info": entry.info,
    }


def entry_from_json(value: Any) -> CommunicationsEntry:
    """Build an entry from its JSON form; a malformed object is ``bad_entry_json``."""
    try:
        frequency = value.get("frequency")
        protocols = value.get("protocols", [])
        if not isinstance(protocols, list) or not all(isinstance(p, str) for p in protocols):
            raise TypeError("protocols is a list of strings")
        fields = (value["title"], value["url"], value["network"], value.get("info", ""))
        if not all(isinstance(f, str) for f in fields):
            raise TypeError("title, url, network and info are strings")
        return CommunicationsEntry(
            title=value["title"],
            url=value["url"],
            network=value["network"],
            type=AddressType(value["type"]),
            audience=Audience(value["audience"]),
            frequency=ChangeFrequency(frequency) if frequency is not None else None,
            protocols=tuple(protocols),
            info=value.get("info", ""),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise LLMsTxtError(f"not an entry object: {exc}", code="bad_entry_json") from None


@op("llmstxt.parse_entry")
def _parse_entry(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    return entry_json(parse_communications_entry(value, validate=args.get("validate", True)))


@op("llmstxt.render_entry")
def _render_entry(value: Any, args: Mapping[str, Any]) -> str:
    return render_communications_entry(entry_from_json(value), validate=args.get("validate", True))


@op("llmstxt.parse_document")
def _parse_document(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    document = parse_llms_txt(
        value, strict=args.get("strict", False), validate=args.get("validate", True)
    )
    section = document.communications
    return {
        "title": document.title,
        "summary": document.summary,
        "section": None
        if section is None
        else {
            "line": section.line,
            "entries": [{**entry_json(e), "line": e.line} for e in section.entries],
            "problems": [{"line": p.line, "code": p.code} for p in section.problems],
        },
    }


@op("llmstxt.render_section")
def _render_section(value: Any, args: Mapping[str, Any]) -> str:
    if not isinstance(value, list):
        raise LLMsTxtError("a section is a list of entries", code="bad_entry_json")
    return render_communications_section(
        [entry_from_json(v) for v in value], validate=args.get("validate", True)
    )
