"""Reading llms.txt: the Communications section, its list items and their notes.

Spec: "Agent protocols over SimpleX", section "Addresses in llms.txt". The requirement IDs in
the comments are those of ``spec/requirements.json`` (LLMS-*).
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata

from simplex_protocols._sitemaps import ChangeFrequency
from simplex_protocols.errors import LinkError, LLMsTxtError
from simplex_protocols.links import LinkKind, SimplexLink, parse_simplex_link

from ._model import (
    MAX_ENTRY_LINE_CHARS,
    SIMPLEX_NETWORK,
    AddressType,
    Audience,
    CommunicationsEntry,
    CommunicationsSection,
    LLMsTxtDocument,
)

__all__ = [
    "PROTOCOL_NAME_RE",
    "REQUIRED_LINK_KIND",
    "parse_communications_entry",
    "parse_llms_txt",
    "validate_entry",
]

#: LLMS-TYPE-1: the kind of SimpleX link each address type needs.
REQUIRED_LINK_KIND: dict[AddressType, LinkKind] = {
    AddressType.UPDATES: LinkKind.CHANNEL,
    AddressType.GROUP: LinkKind.GROUP,
    AddressType.CONTACT: LinkKind.CONTACT,
    AddressType.BUSINESS_CONTACT: LinkKind.CONTACT,
}

_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# C0 controls except tab, DEL, C1 controls, and the Unicode line and paragraph separators.
# Bidi embeddings, overrides and isolates reorder what a reader sees ("Trojan Source").
_BIDI_RE = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
_UNSAFE_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# Invisible characters that can make two titles or networks look the same. ZWJ and ZWNJ
# (U+200C, U+200D) and the direction marks are left alone: scripts and emoji need them.
_INVISIBLE_RE = re.compile(r"[\u00ad\u115f\u1160\u180e\u200b\u2060-\u2064\u3164\ufeff\uffa0]")
_TYPE_RE = re.compile(
    r"[ \t]+(updates|group|business[ \t]+contact|contact)[ \t]+for(?![A-Za-z0-9])",
    re.IGNORECASE | re.ASCII,
)
_LEADING_TYPE_RE = re.compile(
    r"(updates|group|business[ \t]+contact|contact)[ \t]+for(?![A-Za-z0-9])",
    re.IGNORECASE | re.ASCII,
)
PROTOCOL_NAME_RE = re.compile(r"[A-Za-z0-9-]+")
_AUDIENCES = {a.value: a for a in Audience}
_FREQUENCIES = {f.value: f for f in ChangeFrequency}

# A link destination without escapes, parentheses, angle brackets or spaces: the usual case.
_PLAIN_URL_RE = re.compile(r"\(([^ \t()<\\]+)\)")
_ATX_RE = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_SETEXT_RE = re.compile(r" {0,3}(?:=+|-+)[ \t]*")
_THEMATIC_RE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_ITEM_RE = re.compile(r"([ \t]*)[-*+](?:[ \t]|$)")

# Characters that look like letters of "simplex" (a small confusables table: Cyrillic and
# Greek look-alikes, digits and symbols). Used only to flag a network name that imitates
# SimpleX (LLMS-NOTES-2).
_CONFUSABLES = str.maketrans(
    {
        "а": "a", "е": "e", "і": "l", "ӏ": "l", "ј": "j", "м": "m", "о": "o", "р": "p",
        "ѕ": "s", "х": "x", "к": "k", "с": "c", "ε": "e", "ι": "l", "ο": "o", "ρ": "p",
        "χ": "x", "μ": "m", "ı": "l", "i": "l", "1": "l", "|": "l", "!": "l", "0": "o",
        "5": "s", "$": "s", "3": "e", "€": "e", "×": "x",
    }
)  # fmt: skip
_SIMPLEX_SKELETON = "slmplex"


def _skeleton(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    visible = "".join(c for c in folded if unicodedata.category(c) != "Cf" and not c.isspace())
    return visible.translate(_CONFUSABLES)


class _Fail(Exception):
    """Internal: an entry problem before its line number and excerpt are attached."""

    def __init__(self, reason: str, code: str, requirement: str, position: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code
        self.requirement = requirement
        self.position = position


def _error(fail: _Fail, text: str, line: int | None) -> LLMsTxtError:
    return LLMsTxtError(
        fail.reason,
        code=fail.code,
        requirement=fail.requirement,
        position=fail.position,
        input_excerpt=text,
        line=line,
    )


# --------------------------------------------------------------------------- one entry


def parse_communications_entry(
    text: str, *, line: int | None = None, validate: bool = True, strict: bool = True
) -> CommunicationsEntry:
    """Parse one list item of a Communications section: ``- [title](url): notes``.

    The notes follow one of the spec's three forms (LLMS-NOTES-1)::

        <network> updates for <audience>[, <frequency>]. <info>
        <network> group for <audience>. <info>
        <network> [business ]contact for <audience>[, <protocol>]*. <info>

    Network, type words, audience and frequency are compared without regard to letter case;
    protocols keep theirs (LLMS-NOTES-5). When the info is empty the final period may be left
    out. With ``validate`` (the default), a SimpleX entry must have the link its type needs
    (LLMS-TYPE-1), and an entry of another network must not carry a SimpleX link
    (LLMS-NOTES-2).

    Three slips can be read without guessing, and ``strict`` (the default) refuses each while
    ``strict=False`` keeps the entry and reports the slip in
    :attr:`CommunicationsEntry.problems`:

    - info written right after the period, with no space (``... for agents.Ask.``; nothing
      before the period can hold one, so the info is plain): ``missing_space_before_info``
      (LLMS-NOTES-6, -7 or -8 by type); the info is what follows the period;
    - a protocol listed twice (``MCP, mcp``; names compare without letter case and the grammar
      does not forbid a repeat): ``duplicate_protocol`` (LLMS-NOTES-5); the entry lists it once,
      as first written;
    - with ``validate``, a SimpleX link whose key is not base64url of the right length:
      ``bad_link_key`` (LLMS-TYPE-1); the entry keeps the link as written, and its kind is not
      checked (it cannot be read without the key).

    Everything else that breaks the grammar or the link check is refused in both modes.

    Args:
        text: the item's line, without its line break.
        line: the line number to report in errors and to store in the entry.
        validate: check the link of SimpleX entries.
        strict: refuse the tolerable departures too, instead of reporting them on the entry.

    Returns:
        The entry.

    Raises:
        LLMsTxtError: the item is not a valid entry; ``code`` says why (see
            ``docs/llmstxt.md`` for the list) and ``line`` is ``line``.
    """
    if not isinstance(text, str):
        raise LLMsTxtError(
            f"an entry is text, not {type(text).__name__}", code="not_text", line=line
        )
    try:
        entry, tolerated = _parse_entry(text, line)
        if strict and tolerated:
            raise tolerated[0]
        if validate:
            try:
                _validate(entry, None)
            except _Fail as link_fail:
                if strict or link_fail.code not in _KEPT_LINK_PROBLEMS:
                    raise
                tolerated.append(link_fail)
    except _Fail as fail:
        if fail.position is None:
            fail.position = _url_position(text)
        raise _error(fail, text, line) from None
    if tolerated:
        for slip in tolerated:
            if slip.position is None:
                slip.position = _url_position(text)
        entry = dataclasses.replace(
            entry, problems=tuple(_error(slip, text, line) for slip in tolerated)
        )
    return entry


#: Link problems a lenient reading reports on a kept entry instead of dropping it: the item is
#: well formed and names a SimpleX address, only the link's key cannot be read.
_KEPT_LINK_PROBLEMS = frozenset({"bad_link_key"})


def _url_position(text: str) -> int:
    at = text.find("](")
    return at + 2 if at >= 0 else 0


def _parse_entry(text: str, line: int | None) -> tuple[CommunicationsEntry, list[_Fail]]:
    """The entry, and the departures from the grammar a lenient reader tolerates in it."""
    n = len(text)
    if n > MAX_ENTRY_LINE_CHARS:
        raise _Fail(
            f"the item is {n} characters, over {MAX_ENTRY_LINE_CHARS}",
            "line_too_long",
            "LLMS-ITEM-1",
            MAX_ENTRY_LINE_CHARS,
        )
    bad = _UNSAFE_RE.search(text)
    if bad is not None:
        if _BIDI_RE.match(bad.group()):
            raise _Fail(
                f"bidirectional control U+{ord(bad.group()):04X} in the item",
                "bidi_control",
                "LLMS-ITEM-1",
                bad.start(),
            )
        raise _Fail(
            f"control character U+{ord(bad.group()):04X} in the item",
            "control_character",
            "LLMS-ITEM-1",
            bad.start(),
        )

    # LLMS-ITEM-1: "The section is a file list: each item is a Markdown link, then a colon and
    # notes."
    i = 0
    while i < n and i < 3 and text[i] == " ":
        i += 1
    if i >= n or text[i] not in "-*+" or (i + 1 < n and text[i + 1] not in " \t"):
        raise _Fail("not a list item (- [title](url): notes)", "not_a_list_item", "LLMS-ITEM-1", i)
    i += 1
    while i < n and text[i] in " \t":
        i += 1
    if i >= n or text[i] != "[":
        raise _Fail(
            "the item does not begin with a [title](url) link", "not_a_link", "LLMS-ITEM-1", i
        )
    title_start = i
    title, i = _scan_title(text, i)
    if i >= n or text[i] != "(":
        raise _Fail(
            "the item does not begin with a [title](url) link", "not_a_link", "LLMS-ITEM-1", i
        )
    url, i = _scan_url(text, i)
    while i < n and text[i] in " \t":
        i += 1
    if i >= n or text[i] != ":":
        raise _Fail("a colon and the notes follow the link", "missing_colon", "LLMS-ITEM-1", i)
    i += 1
    notes_start = i
    while notes_start < n and text[notes_start] in " \t":
        notes_start += 1
    notes = text[notes_start:].rstrip(" \t")
    if not notes:
        raise _Fail("the notes after the colon are empty", "missing_notes", "LLMS-ITEM-1", i)

    # LLMS-TITLE-1: "The link text is the title of the address."
    if not title.strip(" \t"):
        raise _Fail("the link text (the title) is empty", "bad_title", "LLMS-TITLE-1", title_start)
    bad = _INVISIBLE_RE.search(title)
    if bad is not None:
        raise _Fail(
            f"invisible character U+{ord(bad.group()):04X} in the title",
            "invisible_character",
            "LLMS-TITLE-1",
            title_start,
        )
    tolerated: list[_Fail] = []
    network, address_type, audience, frequency, protocols, info = _parse_notes(
        notes, notes_start, tolerated
    )
    entry = CommunicationsEntry(
        title=title,
        url=url,
        network=network,
        type=address_type,
        audience=audience,
        frequency=frequency,
        protocols=protocols,
        info=info,
        line=line,
    )
    return entry, tolerated


def _scan_title(text: str, start: int) -> tuple[str, int]:
    """The link text from ``[`` to its matching ``]``: nested brackets and escapes allowed."""
    close = text.find("]", start + 1)
    if close > 0:
        plain = text[start + 1 : close]
        if "[" not in plain and "\\" not in plain:
            return plain, close + 1
    out: list[str] = []
    depth = 1
    j = start + 1
    n = len(text)
    while j < n:
        c = text[j]
        if c == "\\" and j + 1 < n and text[j + 1] in _ASCII_PUNCT:
            out.append(text[j + 1])
            j += 2
            continue
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return "".join(out), j + 1
        out.append(c)
        j += 1
    raise _Fail("the link text has no closing ]", "not_a_link", "LLMS-ITEM-1", start)


def _scan_url(text: str, start: int) -> tuple[str, int]:
    """The link destination from ``(`` to its closing ``)``; ``<...>`` form allowed."""
    plain = _PLAIN_URL_RE.match(text, start)
    if plain is not None:
        return plain.group(1), plain.end()
    n = len(text)
    j = start + 1
    if j < n and text[j] == "<":
        close = text.find(">", j + 1)
        if close < 0 or close + 1 >= n or text[close + 1] != ")":
            raise _Fail("the link destination <...> is not closed", "bad_url", "LLMS-ITEM-1", j)
        url = text[j + 1 : close]
        if not url or "<" in url or any(c in " \t" for c in url):
            raise _Fail("the link destination is empty or has spaces", "bad_url", "LLMS-ITEM-1", j)
        return url, close + 2
    out: list[str] = []
    depth = 0
    while j < n:
        c = text[j]
        if c == "\\" and j + 1 < n and text[j + 1] in _ASCII_PUNCT:
            out.append(text[j + 1])
            j += 2
            continue
        if c in " \t":
            raise _Fail("the link destination has a space", "bad_url", "LLMS-ITEM-1", j)
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                if not out:
                    raise _Fail("the link destination is empty", "bad_url", "LLMS-ITEM-1", j)
                return "".join(out), j + 1
            depth -= 1
        out.append(c)
        j += 1
    raise _Fail("the link destination has no closing )", "bad_url", "LLMS-ITEM-1", start)


#: The requirement that writes ". <info>" for each form of the notes.
_FORM_REQUIREMENT: dict[AddressType, str] = {
    AddressType.UPDATES: "LLMS-NOTES-6",
    AddressType.GROUP: "LLMS-NOTES-7",
    AddressType.CONTACT: "LLMS-NOTES-8",
    AddressType.BUSINESS_CONTACT: "LLMS-NOTES-8",
}


def _parse_notes(
    notes: str, offset: int, tolerated: list[_Fail]
) -> tuple[str, AddressType, Audience, ChangeFrequency | None, tuple[str, ...], str]:
    # LLMS-NOTES-1: "<network> updates for <audience>[, <frequency>]. <info>", "<network> group
    # for <audience>. <info>", "<network> [business ]contact for <audience>[, <protocol>]*. <info>"
    match = _TYPE_RE.search(notes)
    if match is None:
        if _LEADING_TYPE_RE.match(notes):
            raise _Fail(
                "the notes begin with the network, e.g. SimpleX",
                "missing_network",
                "LLMS-NOTES-1",
                offset,
            )
        raise _Fail(
            "the notes do not read '<network> updates|group|contact|business contact for "
            "<audience>'",
            "bad_notes",
            "LLMS-NOTES-1",
            offset,
        )
    network = _check_network(" ".join(notes[: match.start()].split()), offset)
    address_type = AddressType(" ".join(match.group(1).lower().split()))
    rest_start = match.end()
    rest = notes[rest_start:]
    dot = rest.find(".")
    if dot < 0:
        params_text, info = rest, ""
    else:
        params_text, info = rest[:dot], rest[dot + 1 :].strip(" \t")
        after = rest_start + dot + 1
        if info and notes[after] not in " \t":
            # LLMS-NOTES-6/7/8: the structured part ends with ". " and then the info. Without
            # the space the info is still plain (no earlier part can hold a period): a lenient
            # reader keeps it and reports this, a strict one refuses the entry.
            tolerated.append(
                _Fail(
                    "the info follows the period without a space ('. <info>')",
                    "missing_space_before_info",
                    _FORM_REQUIREMENT[address_type],
                    offset + after,
                )
            )
    params = params_text.split(",")
    audience_text = " ".join(params[0].split())
    audience = _AUDIENCES.get(audience_text.lower()) if audience_text.isascii() else None
    if audience is None:
        # LLMS-NOTES-3: "<audience>: people, agents, or people and agents."
        raise _Fail(
            f"audience {audience_text[:40]!r} is not people, agents, or people and agents",
            "bad_audience",
            "LLMS-NOTES-3",
            offset + rest_start,
        )
    extra = [p.strip(" \t") for p in params[1:]]
    frequency: ChangeFrequency | None = None
    protocols: tuple[str, ...] = ()
    position = offset + rest_start + len(params[0])
    if address_type is AddressType.UPDATES:
        if len(extra) > 1:
            raise _Fail(
                "updates take one frequency after the audience",
                "unexpected_parameter",
                "LLMS-NOTES-1",
                position,
            )
        if extra:
            value = extra[0]
            frequency = _FREQUENCIES.get(value.lower()) if value.isascii() else None
            if frequency is None:
                # LLMS-NOTES-4: "<frequency>: a changefreq value of the Sitemaps protocol."
                raise _Fail(
                    f"frequency {value[:40]!r} is not a Sitemaps changefreq value "
                    "(always, hourly, daily, weekly, monthly, yearly, never)",
                    "bad_frequency",
                    "LLMS-NOTES-4",
                    position,
                )
    elif address_type is AddressType.GROUP:
        if extra:
            raise _Fail(
                "a group takes nothing after the audience",
                "unexpected_parameter",
                "LLMS-NOTES-1",
                position,
            )
    else:
        protocols = _check_protocols(extra, position, tolerated)
    return network, address_type, audience, frequency, protocols, info


def _check_network(network: str, offset: int) -> str:
    if network.isascii() and network.lower() == "simplex":
        # LLMS-NOTES-2: "<network>: the name of the network, SimpleX for SimpleX links."
        return SIMPLEX_NETWORK
    if _skeleton(network) == _SIMPLEX_SKELETON:
        raise _Fail(
            f"network {network!r} imitates SimpleX with look-alike characters",
            "confusable_network",
            "LLMS-NOTES-2",
            offset,
        )
    for c in network:
        if unicodedata.category(c) == "Cf" or _INVISIBLE_RE.match(c):
            raise _Fail(
                f"invisible character U+{ord(c):04X} in the network name",
                "invisible_character",
                "LLMS-NOTES-2",
                offset,
            )
    return network


def _check_protocols(values: list[str], position: int, tolerated: list[_Fail]) -> tuple[str, ...]:
    kept: list[str] = []
    seen: set[str] = set()
    for value in values:
        if not value:
            raise _Fail(
                "an empty protocol in the list (a stray comma)",
                "empty_protocol",
                "LLMS-NOTES-5",
                position,
            )
        # LLMS-NOTES-5 and NAME-1: a protocol name is ASCII letters, digits and hyphens, in
        # any letter case in the notes.
        if PROTOCOL_NAME_RE.fullmatch(value) is None:
            raise _Fail(
                f"{value[:40]!r} is not a protocol name (letters, digits and hyphens)",
                "bad_protocol",
                "LLMS-NOTES-5",
                position,
            )
        lowered = value.lower()
        if lowered in seen:
            # LLMS-NOTES-5: the notes may write a name in any letter case, so "mcp, MCP" names
            # one protocol twice. The grammar ("[, <protocol>]*") does not forbid a repeat:
            # a lenient reader keeps the first spelling and reports the repeat, a strict one
            # refuses the entry.
            tolerated.append(
                _Fail(
                    f"protocol {value!r} is listed twice",
                    "duplicate_protocol",
                    "LLMS-NOTES-5",
                    position,
                )
            )
            continue
        seen.add(lowered)
        kept.append(value)
    return tuple(kept)


# --------------------------------------------------------------------------- validation


def validate_entry(entry: CommunicationsEntry) -> SimplexLink | None:
    """Check an entry's link against its network and type.

    LLMS-TYPE-1: "For SimpleX entries, the type updates requires a channel link, the type group
    a group link, and the types contact and business contact a contact address link."
    LLMS-NOTES-2: an entry of another network does not carry a SimpleX link. Link data (for
    example the ``business`` flag of a business contact) is not fetched here.

    Args:
        entry: the entry.

    Returns:
        The parsed SimpleX link of a SimpleX entry, ``None`` for an entry of another network.

    Raises:
        LLMsTxtError: ``not_a_simplex_link``, ``link_type_mismatch`` or ``network_mismatch``,
            with the entry's line.
    """
    try:
        return _validate(entry, None)
    except _Fail as fail:
        raise _error(fail, entry.url, entry.line) from None


def _validate(entry: CommunicationsEntry, position: int | None) -> SimplexLink | None:
    if not entry.is_simplex:
        if entry.url.startswith(("https://", "simplex:/")):
            try:
                parse_simplex_link(entry.url)
            except LinkError:
                return None
            raise _Fail(
                f"the entry links a SimpleX address but names the network {entry.network!r}",
                "network_mismatch",
                "LLMS-NOTES-2",
                position,
            )
        return None
    try:
        link = parse_simplex_link(entry.url)
    except LinkError as exc:
        if exc.code == "bad_link_key":
            # The link has the form of a SimpleX link and its type letter, but its key is not
            # base64url of the right length: a lenient reader keeps the entry with this problem
            # (see _KEPT_LINK_PROBLEMS); the link's kind cannot be confirmed without its key.
            raise _Fail(
                f"the SimpleX link's key is not valid: {exc.reason}",
                "bad_link_key",
                "LLMS-TYPE-1",
                position,
            ) from None
        raise _Fail(
            f"a SimpleX entry needs a SimpleX link: {exc.reason} ({exc.code})",
            "not_a_simplex_link",
            "LLMS-TYPE-1",
            position,
        ) from None
    needed = REQUIRED_LINK_KIND[entry.type]
    if link.kind is not needed:
        raise _Fail(
            f"SimpleX {entry.type.value} needs a {needed.value} link, not a {link.kind.value} link",
            "link_type_mismatch",
            "LLMS-TYPE-1",
            position,
        )
    return link


# --------------------------------------------------------------------------- a whole file


def _indent_width(prefix: str) -> int:
    width = 0
    for c in prefix:
        width = width + 4 - width % 4 if c == "\t" else width + 1
    return width


def parse_llms_txt(
    text: str | bytes, *, strict: bool = False, validate: bool = True
) -> LLMsTxtDocument:
    """Read an llms.txt file: its title, summary and Communications section.

    The Communications section starts at a level-2 heading ``Communications`` (LLMS-SEC-1; any
    letter case, ATX or setext) and runs to the next level-1 or level-2 heading; a file with
    several such sections gives the entries of all of them. Each top-level list item in it is
    parsed with :func:`parse_communications_entry`. Everything else is tolerated: other
    sections, text between items, blank lines, code blocks (never read as headings or items),
    a byte-order mark, CRLF or CR line ends, tabs. An item that is not a valid entry, a nested
    item and an over-indented item each become a problem with its line, and reading goes on.
    An entry read in spite of a tolerable departure (see :func:`parse_communications_entry`) is
    kept, and its problem listed too. So is an item whose paragraph goes on in indented lines
    right below it: the lines are joined with a space (Markdown reads the line break as one),
    so their text is part of the info, and the problem ``continued_item`` names the first
    continuation line.

    Args:
        text: the file, as text or as UTF-8 bytes (invalid bytes become U+FFFD).
        strict: raise the first problem instead of collecting it (entries are then read
            strictly too: a tolerable departure is raised like any other problem).
        validate: check the links of SimpleX entries (LLMS-TYPE-1).

    Returns:
        The document; ``document.entries`` and ``document.problems`` are the section's.

    Raises:
        LLMsTxtError: only with ``strict``: the first problem, with its ``line``.
    """
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        raise LLMsTxtError(f"llms.txt is text, not {type(text).__name__}", code="not_text")
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")

    title: str | None = None
    summary: str | None = None
    seen_section = False
    in_section = False
    section_line: int | None = None
    entries: list[CommunicationsEntry] = []
    problems: list[LLMsTxtError] = []
    fence: tuple[str, int] | None = None
    item_open = False
    # The item being read: its line number and its lines, the first one whole and the indented
    # continuation lines of its paragraph stripped. It is parsed when its paragraph ends.
    pending: tuple[int, list[str]] | None = None

    def problem(exc: LLMsTxtError) -> None:
        if strict:
            raise exc
        problems.append(exc)

    def flush() -> None:
        nonlocal pending
        if pending is None:
            return
        number, parts = pending
        pending = None
        continued: LLMsTxtError | None = None
        if len(parts) > 1:
            # LLMS-ITEM-1 and LLMS-NOTES-9: the item is one Markdown paragraph, so an indented
            # line right below it continues its notes (Markdown reads the line break as a
            # space) and its text belongs to the info. A lenient reader joins the lines and
            # reports it, since a reader that reads one line per item would lose that text; a
            # strict one refuses the item.
            continued = LLMsTxtError(
                "the item continues on the next line; its notes are read as one line",
                code="continued_item",
                requirement="LLMS-ITEM-1",
                position=0,
                input_excerpt=parts[1],
                line=number + 1,
            )
            if strict:
                raise continued
        try:
            item = " ".join([parts[0].rstrip(" \t"), *parts[1:]]) if continued else parts[0]
            entry = parse_communications_entry(item, line=number, validate=validate, strict=strict)
        except LLMsTxtError as exc:
            problem(exc)
            return
        if continued is not None:
            entry = dataclasses.replace(entry, problems=(*entry.problems, continued))
        entries.append(entry)
        problems.extend(entry.problems)

    count = len(lines)
    i = 0
    while i < count:
        raw = lines[i]
        number = i + 1
        i += 1
        stripped = raw.strip()
        if fence is not None:
            if (
                stripped[:1] == fence[0]
                and stripped.rstrip(fence[0]) == ""
                and len(stripped) >= fence[1]
            ):
                fence = None
            continue
        if not stripped:
            flush()  # a blank line ends the item's paragraph
            continue
        first = stripped[0]
        if first in "`~" and stripped[:3] in ("```", "~~~"):
            fence_match = _FENCE_RE.fullmatch(raw)
            if fence_match is not None and not (first == "`" and "`" in fence_match.group(2)):
                flush()
                fence = (first, len(fence_match.group(1)))
                continue

        heading: tuple[int, str] | None = None
        if first == "#":
            atx = _ATX_RE.fullmatch(raw)
            if atx is not None:
                heading = (len(atx.group(1)), (atx.group(2) or "").strip())
        elif (
            i < count
            and lines[i].strip()[:1] in ("=", "-")
            and _SETEXT_RE.fullmatch(lines[i]) is not None
            and _ITEM_RE.match(raw) is None
            and first != ">"
            and _indent_width(raw[: len(raw) - len(raw.lstrip())]) < 4
        ):
            heading = (1 if "=" in lines[i] else 2, stripped)
            i += 1  # the underline
        if heading is not None:
            level, heading_text = heading
            if level == 1 and title is None:
                title = heading_text
            if level <= 2:
                seen_section = seen_section or level == 2
                # LLMS-SEC-1: "An llms.txt file lists communication addresses in a section with
                # the heading ## Communications."
                in_section = (
                    level == 2
                    and heading_text.isascii()
                    and heading_text.lower() == "communications"
                )
                if in_section and section_line is None:
                    section_line = number
            flush()
            item_open = False
            continue

        if not in_section:
            if summary is None and first == ">" and not seen_section and title is not None:
                summary = stripped[1:].strip()
            continue
        if first in "-*_" and "[" not in raw and _THEMATIC_RE.fullmatch(raw) is not None:
            flush()
            item_open = False
            continue
        item = _ITEM_RE.match(raw)
        if item is None:
            if _indent_width(raw[: len(raw) - len(raw.lstrip())]) < 2:
                flush()
                item_open = False  # text between items ends the previous item
            elif pending is not None and first != ">":
                pending[1].append(stripped)
            else:
                flush()  # a block quote, or text after a nested item, is not the notes
            continue
        flush()
        indent = _indent_width(item.group(1))
        if indent >= 2 and item_open:
            problem(
                LLMsTxtError(
                    "a nested list item is not an entry of the section",
                    code="nested_item",
                    requirement="LLMS-ITEM-1",
                    position=indent,
                    input_excerpt=raw,
                    line=number,
                )
            )
            continue
        if indent >= 4:
            problem(
                LLMsTxtError(
                    "an item indented by 4 or more is code in Markdown, not a list item",
                    code="indented_item",
                    requirement="LLMS-ITEM-1",
                    position=indent,
                    input_excerpt=raw,
                    line=number,
                )
            )
            continue
        item_open = True
        pending = (number, [raw])
    flush()

    section = (
        CommunicationsSection(tuple(entries), tuple(problems), section_line)
        if section_line is not None
        else None
    )
    return LLMsTxtDocument(title=title, summary=summary, communications=section)
