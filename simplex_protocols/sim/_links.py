"""SimpleX links and names as the simulated routers hand them out.

Links have the real forms:

- short links ``https://<router host>/<type>#<key>``, where the type letter is ``a`` (contact
  address), ``c`` (channel), ``g`` (group link) or ``r`` (relay), and one-time invitations
  ``https://<router host>/i#<link ID>/<key>``; keys are base64url without padding;
- full links ``simplex:/contact#/?v=2-7&smp=<queue URI>`` and
  ``simplex:/invitation#/?v=2-7&smp=<queue URI>&e2e=<ratchet parameters>``, whose queue URI
  ``smp://<router key hash>@<router host>/<queue ID>#/?v=1-4&dh=<key>`` is percent-encoded.

The simulated routers are named ``smp<N>.sim.test`` (the ``.test`` domain is reserved for
testing), so a simulated link is never mistaken for one on a real router.
"""

from __future__ import annotations

import base64
import random
import urllib.parse
from dataclasses import dataclass
from typing import Any

from simplex_protocols.errors import LinkError
from simplex_protocols.links import (
    LinkForm,
    LinkKind,
    format_short_link,
    parse_simplex_link,
    parse_simplex_name,
)

__all__ = [
    "ROUTER_HOSTS",
    "LinkRef",
    "NameRef",
    "b64url",
    "make_contact_link",
    "make_invitation_link",
    "parse_link",
    "parse_name",
    "router_address",
    "router_key_hash",
]

#: The simulated SMP routers. Users are spread over them; a fault can take one down.
ROUTER_HOSTS: tuple[str, ...] = ("smp1.sim.test", "smp2.sim.test", "smp3.sim.test")


def b64url(data: bytes) -> str:
    """Base64url without padding, as SimpleX writes keys and IDs in links."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def router_key_hash(host: str) -> str:
    """The simulated router's identity (key hash), stable per host name."""
    digest = random.Random(f"router:{host}").randbytes(32)
    return b64url(digest)


def router_address(host: str) -> str:
    """The router as it appears in agent errors: ``smp://<key hash>@<host>``."""
    return f"smp://{router_key_hash(host)}@{host}"


def _queue_uri(host: str, queue_id: str, dh_key: str) -> str:
    return f"smp://{router_key_hash(host)}@{host}/{queue_id}#/?v=1-4&dh={dh_key}&q=c"


def make_contact_link(
    rng: random.Random, host: str, kind: str, *, group_link_id: str | None = None
) -> tuple[str, str, str, str]:
    """A new contact-type link: ``(full link, short link, short key, queue ID)``.

    ``kind`` is ``"contact"`` (address), ``"group"`` or ``"channel"``.
    """
    key_bytes = rng.randbytes(32)
    queue_id = b64url(rng.randbytes(24))
    dh_key = "MCowBQYDK2VuAyEA" + b64url(rng.randbytes(32))
    smp = urllib.parse.quote(_queue_uri(host, queue_id, dh_key), safe="")
    full = f"simplex:/contact#/?v=2-7&smp={smp}"
    if group_link_id is not None:
        data = urllib.parse.quote('{"type":"group","groupLinkId":"' + group_link_id + '"}', safe="")
        full += f"&data={data}"
    short = format_short_link(LinkKind(kind), host, key_bytes)
    return full, short, b64url(key_bytes), queue_id


def make_invitation_link(rng: random.Random, host: str) -> tuple[str, str, str, str]:
    """A new one-time invitation link: ``(full link, short link, short key, queue ID)``."""
    link_id = rng.randbytes(24)
    key_bytes = rng.randbytes(32)
    queue_id = b64url(rng.randbytes(24))
    dh_key = "MCowBQYDK2VuAyEA" + b64url(rng.randbytes(32))
    smp = urllib.parse.quote(_queue_uri(host, queue_id, dh_key), safe="")
    x3dh = "MEIwBQYDK2VvAzkA" + b64url(rng.randbytes(40))
    e2e = urllib.parse.quote(f"v=2-3&x3dh={x3dh},{x3dh}", safe="")
    full = f"simplex:/invitation#/?v=2-7&smp={smp}&e2e={e2e}"
    short = format_short_link(LinkKind.INVITATION, host, key_bytes, link_id=link_id)
    return full, short, b64url(key_bytes), queue_id


@dataclass(frozen=True)
class LinkRef:
    """What a link string names: its type and the key the network looks it up by."""

    link_type: str  # "contact" | "channel" | "group" | "relay" | "invitation"
    lookup_key: str
    host: str
    short: bool


def parse_link(text: str) -> LinkRef | None:
    """Parse a SimpleX link into its type and lookup key, or ``None`` if it is not one.

    The link forms are those of :mod:`simplex_protocols.links`; the lookup key is the short
    link's key, or the full link's first queue ID.
    """
    try:
        link = parse_simplex_link(text)
    except LinkError:
        return None
    if link.form is LinkForm.SHORT:
        fragment = text.split("#", 1)[1].split("?", 1)[0]
        key = fragment.split("/", 1)[1] if link.kind is LinkKind.INVITATION else fragment
        return LinkRef(link.kind.value, key, link.host, True)
    query = text.split("#", 1)[1][2:]
    smp = urllib.parse.parse_qs(query).get("smp", [""])[0].split(";")[0]
    queue_id = smp.split("/", 3)[-1].split("#", 1)[0] if "/" in smp else ""
    return LinkRef(link.kind.value, queue_id, link.host, False)


@dataclass(frozen=True)
class NameRef:
    """A SimpleX name such as ``@directory.simplex`` or ``#news.simplex``."""

    sigil: str  # "@" or "#"
    full: str  # "directory.simplex"
    name_info: dict[str, Any]  # SimplexNameInfo

    def simplex_domain(self) -> dict[str, Any]:
        """The name as the core's SimplexDomain record."""
        domain: dict[str, Any] = self.name_info["nameDomain"]
        return domain


def parse_name(text: str) -> NameRef | None:
    """Parse ``@name.simplex`` / ``#name.simplex`` (or a bare ``name.simplex`` domain, read as a
    contact name), else ``None``."""
    candidate = text if text[:1] in ("@", "#") or text.startswith("simplex:/name") else "@" + text
    try:
        name = parse_simplex_name(candidate)
    except LinkError:
        return None
    return NameRef(
        name.sigil if text[:1] in ("@", "#") else "", name.full_domain, name.to_core_json()
    )
