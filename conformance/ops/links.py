"""Vector operations of the ``links`` family (spec/vectors/links/).

``links.parse`` takes a link's text and answers its canonical form::

    {"kind": "contact|invitation|group|channel|relay", "form": "short|full",
     "scheme": "https|simplex", "host": str, "hosts": [str], "port": str|null,
     "appHost": str|null}

``links.parse_name`` takes a SimpleX name's text and answers::

    {"type": "contact|publicGroup", "tld": "simplex|testing|web", "domain": str,
     "subDomain": [str], "fullDomain": str, "name": str}

``subDomain`` lists labels parent first, as the core's ``SimplexNameDomain`` does; ``name`` is
the canonical text (``@`` or ``#`` and the full lowercase domain). ``links.format_name`` takes
that object and answers the canonical text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simplex_protocols.conformance.ops import op
from simplex_protocols.errors import LinkError
from simplex_protocols.links import (
    NameType,
    SimplexName,
    SimplexTLD,
    format_simplex_name,
    parse_simplex_link,
    parse_simplex_name,
)

__all__ = ["link_json", "name_json"]


def link_json(text: Any) -> dict[str, Any]:
    """The canonical JSON form of a parsed link."""
    link = parse_simplex_link(text)
    return {
        "kind": link.kind.value,
        "form": link.form.value,
        "scheme": link.scheme.value,
        "host": link.host,
        "hosts": list(link.hosts),
        "port": link.port,
        "appHost": link.app_host,
    }


def name_json(name: SimplexName) -> dict[str, Any]:
    """The canonical JSON form of a parsed name."""
    return {
        "type": name.type.value,
        "tld": name.tld.value,
        "domain": name.domain,
        "subDomain": list(name.subdomains),
        "fullDomain": name.full_domain,
        "name": format_simplex_name(name),
    }


@op("links.parse")
def _parse(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    return link_json(value)


@op("links.parse_name")
def _parse_name(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    return name_json(parse_simplex_name(value))


@op("links.format_name")
def _format_name(value: Any, args: Mapping[str, Any]) -> str:
    try:
        name = SimplexName(
            type=NameType(value["type"]),
            tld=SimplexTLD(value["tld"]),
            domain=value["domain"],
            subdomains=tuple(value["subDomain"]),
            text="",
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise LinkError(f"not a name object: {exc}", code="bad_name_json") from None
    return format_simplex_name(name)
