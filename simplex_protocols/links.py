"""SimpleX links and SimpleX names: parse, classify and build, without I/O.

Every address that "Agent protocols over SimpleX" publishes or calls is one of these:

- a **short link**, ``https://<router host>[:<port>]/<type>#<key>[?h=<hosts>&p=<port>&c=<key hash>]``
  or the same with the app scheme ``simplex:/<type>#<key>?h=<hosts>...``, whose type letter says
  what the link is for: ``a`` contact address, ``i`` one-time invitation (``#<link id>/<key>``),
  ``g`` group, ``c`` channel, ``r`` chat relay;
- a **full link** (connection request), ``https://simplex.chat/contact#/?v=...&smp=...``,
  ``https://simplex.chat/invitation#/?v=...&smp=...&e2e=...``, or the same after
  ``simplex:``; a contact link whose ``data`` parameter is ``{"type": "group", ...}`` is a group
  link;
- a **SimpleX name**: ``@name.simplex`` for a contact address, ``#name.simplex`` (or ``#name``)
  for a channel or a public group, optionally after ``simplex:/name``; the top-level domains are
  ``simplex``, ``testing`` and any other (``web``).

``docs/llmstxt.md`` records which SimpleX source each rule comes from. The parsers here follow
the chat core's parsers and are stricter in a few documented places (no whitespace anywhere, the
type letter must be followed by ``#``, names need their ``@``/``#`` sigil).

Errors are :class:`~simplex_protocols.errors.LinkError` with a stable ``code``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import quote, unquote

from ._wire import loads as _wire_loads
from .errors import LinkError, ParseError

__all__ = [
    "MAX_LINK_CHARS",
    "LinkForm",
    "LinkKind",
    "LinkScheme",
    "NameType",
    "SimplexLink",
    "SimplexName",
    "SimplexTLD",
    "format_short_link",
    "format_simplex_name",
    "is_simplex_link",
    "is_simplex_name",
    "parse_simplex_link",
    "parse_simplex_name",
    "parse_simplex_target",
]

#: The longest link or name text accepted, in characters. A full invitation link with
#: post-quantum keys and two queues stays far below this.
MAX_LINK_CHARS = 16_384

_LINK_KEY_CHARS = 43  # 32 bytes, base64url without padding
_LINK_ID_CHARS = 32  # 24 bytes, base64url

# RPC-CMD-1 / LLMS-TYPE-1: the kinds below are the core's SimplexLinkType values.


class LinkKind(StrEnum):
    """What a SimpleX link connects to (the core's ``SimplexLinkType``)."""

    CONTACT = "contact"
    """A contact address: accepts conversations and Service RPC requests."""
    INVITATION = "invitation"
    """A one-time invitation link."""
    GROUP = "group"
    """A group link (short ``/g#`` link, or a full contact link with group data)."""
    CHANNEL = "channel"
    """A channel link (short ``/c#`` link)."""
    RELAY = "relay"
    """The address of a chat relay (short ``/r#`` link)."""


class LinkForm(StrEnum):
    """Short link (link data on the router) or full link (the connection request itself)."""

    SHORT = "short"
    FULL = "full"


class LinkScheme(StrEnum):
    """``https://`` (opens in a browser or the app) or the app scheme ``simplex:/``."""

    HTTPS = "https"
    SIMPLEX = "simplex"


_SHORT_TYPES: dict[str, LinkKind] = {
    "a": LinkKind.CONTACT,
    "i": LinkKind.INVITATION,
    "g": LinkKind.GROUP,
    "c": LinkKind.CHANNEL,
    "r": LinkKind.RELAY,
}
_SHORT_LETTERS: dict[LinkKind, str] = {kind: letter for letter, kind in _SHORT_TYPES.items()}


@dataclass(frozen=True, slots=True)
class SimplexLink:
    """A parsed SimpleX link.

    Attributes:
        kind: what the link connects to.
        form: short or full.
        scheme: ``https`` or the app scheme ``simplex``.
        host: the first host of the SMP router that hosts the address (for a full link, of its
            first queue). This is not the website: in ``https://simplex.chat/contact#/?...`` the
            host is the router inside the ``smp`` parameter.
        hosts: every host of that router (the first one, then the others, e.g. an onion host).
        port: the router's port when the link names one, else ``None``.
        app_host: for a full ``https`` link, the host before the path (usually ``simplex.chat``);
            ``None`` otherwise.
        text: the link exactly as given.
    """

    kind: LinkKind
    form: LinkForm
    scheme: LinkScheme
    host: str
    hosts: tuple[str, ...]
    port: str | None
    text: str
    app_host: str | None = None

    @property
    def is_app_link(self) -> bool:
        """Whether the link uses the app scheme ``simplex:/``."""
        return self.scheme is LinkScheme.SIMPLEX

    def __str__(self) -> str:
        return self.text


class NameType(StrEnum):
    """The type of a SimpleX name (the core's ``SimplexNameInfo.nameType``)."""

    CONTACT = "contact"
    """``@name``: a contact address."""
    PUBLIC_GROUP = "publicGroup"
    """``#name``: a channel or a public group."""


class SimplexTLD(StrEnum):
    """The top-level domain of a SimpleX name (the core's ``nameTLD``)."""

    SIMPLEX = "simplex"
    TESTING = "testing"
    WEB = "web"
    """Any other domain; the whole domain is then :attr:`SimplexName.domain`."""


@dataclass(frozen=True, slots=True)
class SimplexName:
    """A parsed SimpleX name, lowercased as the core stores it.

    Attributes:
        type: contact (``@``) or public group (``#``: a channel or a public group).
        tld: ``simplex``, ``testing`` or ``web``.
        domain: the registered label (``directory`` in ``@directory.simplex``); for ``web``
            names the whole domain (``example.com``).
        subdomains: labels below the domain, parent first, as the core orders them:
            ``("b", "a")`` for ``a.b.name.simplex``.
        text: the name exactly as given.
    """

    type: NameType
    tld: SimplexTLD
    domain: str
    subdomains: tuple[str, ...]
    text: str

    @property
    def full_domain(self) -> str:
        """The full domain name, e.g. ``directory.simplex`` (the core's ``fullDomainName``)."""
        parts = [*reversed(self.subdomains), self.domain]
        if self.tld is SimplexTLD.SIMPLEX:
            parts.append("simplex")
        elif self.tld is SimplexTLD.TESTING:
            parts.append("testing")
        return ".".join(parts)

    @property
    def sigil(self) -> str:
        """``@`` for a contact name, ``#`` for a public group name."""
        return "@" if self.type is NameType.CONTACT else "#"

    def to_core_json(self) -> dict[str, Any]:
        """The name as the core's ``SimplexNameInfo`` JSON object."""
        return {
            "nameType": self.type.value,
            "nameDomain": {
                "nameTLD": self.tld.value,
                "domain": self.domain,
                "subDomain": list(self.subdomains),
            },
        }

    def __str__(self) -> str:
        return format_simplex_name(self)


# --------------------------------------------------------------------------- helpers

_B64URL_RE = re.compile(r"[A-Za-z0-9_-]+")
_B64URL_INDEX = {
    c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
}
_HOST_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST_RE = re.compile(rf"(?:{_HOST_LABEL})(?:\.{_HOST_LABEL})*|\[[0-9A-Fa-f:.]{{2,45}}\]")
_PORT_RE = re.compile(r"[0-9]{1,5}")
_VERSION_RE = re.compile(r"[0-9]{1,5}(?:-[0-9]{1,5})?")
# A character that can never be part of a link or a name: whitespace, controls, and the
# invisible format characters that make two different links look the same.
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_HOST_PORT_RE = re.compile(r"(.*?)(?::([0-9]*))?", re.DOTALL)
# Lone surrogates (U+D800 to U+DFFF) too: they are no characters, a str holds them only when
# it was decoded with "surrogateescape" (a command line argument of invalid UTF-8), and they
# cannot be encoded to measure a name's bytes.
_BAD_CHAR_RE = re.compile(
    r"[\x00-\x20\x7f-\xa0\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]"
)


def _link_error(reason: str, code: str, text: str, position: int | None = None) -> LinkError:
    return LinkError(
        reason,
        code=code,
        requirement="LLMS-TYPE-1",
        position=position,
        input_excerpt=text,
    )


def _check_text(text: object, what: str) -> str:
    if not isinstance(text, str):
        raise LinkError(f"a {what} is text, not {type(text).__name__}", code="not_text")
    if not text:
        raise LinkError(f"the {what} is empty", code="empty")
    if len(text) > MAX_LINK_CHARS:
        raise LinkError(
            f"the {what} is {len(text)} characters, over {MAX_LINK_CHARS}",
            code="too_long",
            input_excerpt=text[:80],
        )
    bad = _BAD_CHAR_RE.search(text)
    if bad is not None:
        raise LinkError(
            f"a {what} has no whitespace, control or invisible characters "
            f"(U+{ord(bad.group()):04X} found)",
            code="bad_character",
            position=bad.start(),
            input_excerpt=text,
        )
    return text


def _is_b64url(s: str) -> bool:
    return _B64URL_RE.fullmatch(s) is not None


def _check_key(s: str, chars: int) -> bool:
    """Canonical unpadded base64url of ``chars`` characters (unused low bits zero)."""
    if len(s) == chars + 1 and s[-1] == "=" and chars % 4 == 3:
        s = s[:-1]
    if len(s) != chars or not _is_b64url(s):
        return False
    spare_bits = (6 * chars) % 8
    return spare_bits == 0 or _B64URL_INDEX[s[-1]] % (1 << spare_bits) == 0


def _check_host(host: str, text: str) -> str:
    if len(host) > 253 or _HOST_RE.fullmatch(host) is None:
        raise _link_error(f"{host!r} is not a router host name", "bad_host", text)
    return host


def _check_port(port: str, text: str) -> str:
    if _PORT_RE.fullmatch(port) is None or not 0 < int(port) <= 65535:
        raise _link_error(f"{port!r} is not a port number", "bad_port", text)
    return port


def _parse_query(query: str, text: str) -> dict[str, str]:
    """``k=v&k=v`` into a dict; a repeated key is an error, an unknown key is kept."""
    params: dict[str, str] = {}
    if not query:
        return params
    for part in query.split("&"):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise _link_error(f"query parameter {part[:40]!r} has no value", "bad_query", text)
        if key in params:
            raise _link_error(f"query parameter {key!r} appears twice", "bad_query", text)
        params[key] = value
    return params


def _unquote_strict(value: str, text: str) -> str:
    if "%" not in value:
        return value
    try:
        decoded = unquote(value, errors="strict")
    except UnicodeDecodeError:
        raise _link_error("a link parameter is not UTF-8", "bad_query", text) from None
    if _CONTROL_RE.search(decoded) is not None:
        raise _link_error("a link parameter decodes to a control character", "bad_query", text)
    return decoded


def _split_host_port(server: str, text: str) -> tuple[str, str]:
    """``host[:port]`` (a bracketed IPv6 host keeps its colons)."""
    match = _HOST_PORT_RE.fullmatch(server)
    if match is None:  # pragma: no cover - the pattern matches every non-empty string
        raise _link_error(f"{server!r} is not a host", "bad_host", text)
    port = match.group(2)
    return match.group(1), _check_port(port, text) if port is not None else ""


# --------------------------------------------------------------------------- links


def parse_simplex_link(text: str) -> SimplexLink:
    """Parse and classify a SimpleX link (short or full, ``https://`` or ``simplex:/``).

    Implements the link forms the spec's "Addresses in llms.txt" relies on for LLMS-TYPE-1 and
    the ``<target>`` of ``/_service_request`` (RPC-CMD-1). Nothing is fetched: the kind comes
    from the link's type letter (short links) or from its mode and ``data`` (full links).

    Args:
        text: the link, exactly; surrounding whitespace is not stripped.

    Returns:
        The parsed link.

    Raises:
        LinkError: the text is not a SimpleX link. ``code`` is one of ``not_text``, ``empty``,
            ``too_long``, ``bad_character``, ``not_simplex_link``, ``simplex_name``,
            ``bad_link_type``, ``bad_link_key``, ``bad_host``, ``bad_port``, ``missing_host``,
            ``bad_query``, ``bad_full_link``, ``bad_smp_queue``.
    """
    _check_text(text, "SimpleX link")
    if text.startswith("https://"):
        scheme = LinkScheme.HTTPS
        rest = text[8:]
        slash = rest.find("/")
        if slash < 0:
            raise _link_error("the link has no path", "bad_link_type", text)
        authority, path = rest[:slash], rest[slash:]
        app_host, app_port = _split_host_port(authority, text)
        _check_host(app_host, text)
    elif text.startswith("simplex:/"):
        scheme = LinkScheme.SIMPLEX
        authority, app_host, app_port = "", "", ""
        path = text[8:]
    else:
        raise _link_error(
            "a SimpleX link begins with https:// or simplex:/", "not_simplex_link", text
        )

    hash_at = path.find("#")
    if hash_at < 0:
        raise _link_error("the link has no # fragment", "bad_link_type", text)
    route = path[1:hash_at]
    if route.endswith("/"):
        route = route[:-1]
    fragment = path[hash_at + 1 :]
    if route in ("contact", "invitation"):
        return _parse_full_link(text, scheme, route, fragment, app_host or None)
    if scheme is LinkScheme.SIMPLEX and route == "name":
        raise _link_error(
            "this is a SimpleX name, not a link (use parse_simplex_name)", "simplex_name", text
        )
    kind = _SHORT_TYPES.get(route)
    if kind is None:
        raise _link_error(
            f"unknown link type {route[:20]!r} (a, i, g, c, r, contact or invitation)",
            "bad_link_type",
            text,
        )
    return _parse_short_link(text, scheme, kind, fragment, app_host, app_port)


def _parse_short_link(
    text: str, scheme: LinkScheme, kind: LinkKind, fragment: str, host: str, port: str
) -> SimplexLink:
    key_part, _, query = fragment.partition("?")
    if kind is LinkKind.INVITATION:
        link_id, sep, key = key_part.partition("/")
        if (
            not sep
            or not _check_key(link_id, _LINK_ID_CHARS)
            or not _check_key(key, _LINK_KEY_CHARS)
        ):
            raise _link_error(
                "an invitation link carries #<link id>/<key> (24 and 32 bytes, base64url)",
                "bad_link_key",
                text,
            )
    elif not _check_key(key_part, _LINK_KEY_CHARS):
        raise _link_error(
            "a short link carries a 32-byte key in base64url after #", "bad_link_key", text
        )
    params = _parse_query(query, text)
    extra_hosts: list[str] = []
    if "h" in params:
        extra_hosts = [_check_host(h, text) for h in _unquote_strict(params["h"], text).split(",")]
    if "p" in params:
        port = _check_port(_unquote_strict(params["p"], text), text)
    if "c" in params and not _is_b64url(_unquote_strict(params["c"], text).rstrip("=")):
        raise _link_error("the router key hash (c=) is not base64url", "bad_query", text)
    hosts = (host, *extra_hosts) if host else tuple(extra_hosts)
    if not hosts:
        raise _link_error("a simplex:/ short link names its router in h=", "missing_host", text)
    return SimplexLink(
        kind=kind,
        form=LinkForm.SHORT,
        scheme=scheme,
        host=hosts[0],
        hosts=hosts,
        port=port or None,
        text=text,
    )


def _parse_full_link(
    text: str, scheme: LinkScheme, mode: str, fragment: str, app_host: str | None
) -> SimplexLink:
    if not fragment.startswith("/?"):
        raise _link_error("a full link's fragment begins with /?", "bad_full_link", text)
    params = _parse_query(fragment[2:], text)
    version = params.get("v")
    if version is None or _VERSION_RE.fullmatch(version) is None:
        raise _link_error("a full link has a version range v=", "bad_full_link", text)
    smp = params.get("smp")
    if not smp:
        raise _link_error("a full link has its queues in smp=", "bad_full_link", text)
    if mode == "invitation" and not params.get("e2e"):
        raise _link_error("an invitation link has e2e= ratchet keys", "bad_full_link", text)
    queues = _unquote_strict(smp, text).split(";")
    hosts, port = _parse_smp_queue(queues[0], text)
    for queue in queues[1:]:
        _parse_smp_queue(queue, text)
    kind = LinkKind.INVITATION if mode == "invitation" else LinkKind.CONTACT
    if kind is LinkKind.CONTACT and "data" in params and _is_group_data(params["data"], text):
        kind = LinkKind.GROUP
    return SimplexLink(
        kind=kind,
        form=LinkForm.FULL,
        scheme=scheme,
        host=hosts[0],
        hosts=hosts,
        port=port,
        text=text,
        app_host=app_host if scheme is LinkScheme.HTTPS else None,
    )


def _parse_smp_queue(queue: str, text: str) -> tuple[tuple[str, ...], str | None]:
    """``smp://<key hash>@<host>[,<host>...][:<port>]/<sender id>#...``: its hosts and port."""
    if not queue.startswith("smp://"):
        raise _link_error("a queue address begins with smp://", "bad_smp_queue", text)
    key_hash, at, rest = queue[6:].partition("@")
    if not at or not _is_b64url(key_hash.rstrip("=")):
        raise _link_error(
            "a queue address begins with the router key hash and @", "bad_smp_queue", text
        )
    server, slash, sender = rest.partition("/")
    sender_id, hash_sign, _ = sender.partition("#")
    if not slash or not hash_sign or not _is_b64url(sender_id.rstrip("=")):
        raise _link_error("a queue address has /<sender id>#<keys>", "bad_smp_queue", text)
    host_part, port = _split_host_port(server, text)
    hosts = tuple(_check_host(h, text) for h in host_part.split(","))
    return hosts, port or None


def _is_group_data(value: str, text: str) -> bool:
    """Whether a full link's ``data`` is the chat's group link data ``{"type": "group", ...}``."""
    try:
        data = _wire_loads(_unquote_strict(value, text))
    except (ParseError, ValueError):
        # The core reads undecodable client data as "not a group" (a contact link).
        return False
    return isinstance(data, dict) and data.get("type") == "group"


def is_simplex_link(text: object) -> bool:
    """Whether ``text`` is a SimpleX link that :func:`parse_simplex_link` accepts."""
    if not isinstance(text, str):
        return False
    try:
        parse_simplex_link(text)
    except LinkError:
        return False
    return True


def format_short_link(
    kind: LinkKind,
    hosts: str | Sequence[str],
    link_key: bytes,
    *,
    scheme: LinkScheme = LinkScheme.HTTPS,
    port: int | str | None = None,
    key_hash: bytes | None = None,
    link_id: bytes | None = None,
) -> str:
    """Build a short link as the core writes it.

    Args:
        kind: what the link is for.
        hosts: the router's host, or its hosts (the first one goes before the path of an
            ``https`` link, the others into ``h=``).
        link_key: the 32-byte link key.
        scheme: ``https`` (default) or the app scheme.
        port: the router's port, when it is not the default.
        key_hash: the router's certificate key hash, when the router is not a preset one.
        link_id: the 24-byte link id, required for an invitation and refused otherwise.

    Returns:
        The link text; :func:`parse_simplex_link` gives back ``kind``, the hosts and the port.

    Raises:
        LinkError: a host, the port, the key or the link id is not valid.
    """
    import base64

    host_list = [hosts] if isinstance(hosts, str) else list(hosts)
    if not host_list:
        raise LinkError("a short link needs the router's host", code="missing_host")
    for host in host_list:
        _check_host(host, host)
    if len(link_key) != 32:
        raise LinkError("a link key is 32 bytes", code="bad_link_key")
    key = base64.urlsafe_b64encode(link_key).rstrip(b"=").decode("ascii")
    if kind is LinkKind.INVITATION:
        if link_id is None or len(link_id) != 24:
            raise LinkError("an invitation link needs a 24-byte link id", code="bad_link_key")
        key = base64.urlsafe_b64encode(link_id).decode("ascii") + "/" + key
    elif link_id is not None:
        raise LinkError("only an invitation link has a link id", code="bad_link_key")
    first, others = host_list[0], host_list[1:]
    params: list[str] = []
    h_hosts = host_list if scheme is LinkScheme.SIMPLEX else others
    if h_hosts:
        params.append("h=" + quote(",".join(h_hosts), safe=""))
    if port is not None:
        params.append("p=" + _check_port(str(port), str(port)))
    if key_hash:
        params.append("c=" + base64.urlsafe_b64encode(key_hash).rstrip(b"=").decode("ascii"))
    query = "?" + "&".join(params) if params else ""
    letter = _SHORT_LETTERS[kind]
    prefix = f"https://{first}" if scheme is LinkScheme.HTTPS else "simplex:"
    return f"{prefix}/{letter}#{key}{query}"


# --------------------------------------------------------------------------- names

_NAME_LABEL_RE = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
_MAX_NAME_BYTES = 253
_MAX_LABEL_CHARS = 63


def _name_error(reason: str, code: str, text: str) -> LinkError:
    return LinkError(reason, code=code, requirement="RPC-CMD-1", input_excerpt=text)


def parse_simplex_name(text: str) -> SimplexName:
    """Parse a SimpleX name: ``@name.simplex``, ``#name.simplex``, ``#name``, ``simplex:/name@...``.

    Follows the core's name parser: labels are ASCII letters and digits joined by single
    hyphens, at most 63 characters each and 253 in all; letters are lowercased; a contact name
    needs a top-level domain, a public group name without one is ``<name>.simplex``; a domain
    other than ``simplex`` and ``testing`` is a ``web`` name. Unlike the core, a bare name
    without ``@`` or ``#`` is refused: in free text it cannot be told from any other word.

    Args:
        text: the name, exactly.

    Returns:
        The parsed name.

    Raises:
        LinkError: ``code`` is one of ``not_text``, ``empty``, ``too_long``, ``bad_character``,
            ``bad_name_prefix``, ``bad_name``, ``name_label_too_long``, ``name_too_long``,
            ``name_requires_tld``.
    """
    _check_text(text, "SimpleX name")
    body = text[13:] if text.startswith("simplex:/name") else text
    if not body or body[0] not in "@#":
        raise _name_error("a SimpleX name begins with @ or #", "bad_name_prefix", text)
    name_type = NameType.CONTACT if body[0] == "@" else NameType.PUBLIC_GROUP
    token = body[1:]
    if len(token.encode("utf-8")) > _MAX_NAME_BYTES:
        raise _name_error(
            f"a SimpleX name has at most {_MAX_NAME_BYTES} bytes", "name_too_long", text
        )
    labels = token.split(".")
    for label in labels:
        if _NAME_LABEL_RE.fullmatch(label) is None:
            raise _name_error(
                "a name label is ASCII letters and digits, joined by single hyphens",
                "bad_name",
                text,
            )
        if len(label) > _MAX_LABEL_CHARS:
            raise _name_error(
                f"a name label has at most {_MAX_LABEL_CHARS} characters",
                "name_label_too_long",
                text,
            )
    lowered = [label.lower() for label in labels]
    if len(lowered) == 1:
        if name_type is NameType.CONTACT:
            raise _name_error(
                "a contact name needs a top-level domain, e.g. @name.simplex",
                "name_requires_tld",
                text,
            )
        return SimplexName(name_type, SimplexTLD.SIMPLEX, lowered[0], (), text)
    tld = lowered[-1]
    if tld in ("simplex", "testing"):
        sub = tuple(reversed(lowered[:-2]))
        tld_enum = SimplexTLD.SIMPLEX if tld == "simplex" else SimplexTLD.TESTING
        return SimplexName(name_type, tld_enum, lowered[-2], sub, text)
    return SimplexName(name_type, SimplexTLD.WEB, ".".join(lowered), (), text)


def format_simplex_name(name: SimplexName) -> str:
    """The canonical text of a name: ``@`` or ``#`` and the full lowercase domain."""
    return name.sigil + name.full_domain


def is_simplex_name(text: object) -> bool:
    """Whether ``text`` is a SimpleX name that :func:`parse_simplex_name` accepts."""
    if not isinstance(text, str):
        return False
    try:
        parse_simplex_name(text)
    except LinkError:
        return False
    return True


def parse_simplex_target(text: str) -> SimplexLink | SimplexName:
    """Parse what a user may give as an address: a SimpleX link or a SimpleX name.

    Raises:
        LinkError: neither; the error of the link parser, or of the name parser when the text
            looks like a name (it begins with ``@``, ``#`` or ``simplex:/name``).
    """
    if isinstance(text, str) and (text[:1] in ("@", "#") or text.startswith("simplex:/name")):
        return parse_simplex_name(text)
    return parse_simplex_link(text)
