"""The chat core's Markdown: a message text parsed into ``formattedText`` fragments.

A port of ``Simplex.Chat.Markdown`` (``parseMaybeMarkdownList``, ``markdownP`` and the word, name
and link parsers it uses), so that a simulated core emits ``formattedText`` where the core does,
and so that anything that puts text in front of the apps can tell whether it forms a command, a
link or a mention. The rules, as the core applies them:

- A text is parsed line by line (lines end at ``\\n`` only; ``T.lines``); the fragments of the
  lines are joined with ``"\\n"`` and adjacent fragments of the same format merge. A text with no
  formatted fragment has no ``formattedText`` at all.
- A text of one line that starts (after U+0020 spaces) with ``/`` and has more after it is one
  ``command`` fragment: the whole line, ``commandStr`` the rest after ``/``.
- Within a line a fragment starts at the beginning, after a run of U+0020 spaces, or right after
  another fragment; a word runs to the next U+0020.
- ``*bold*``, ``_italic_``, ``~strikeThrough~`` and a `` `snippet` `` take the text up to the
  same character, spaces included, and nothing inside is parsed again; without the closing
  character the rest of the line is plain text, and a span that is empty or starts or ends with
  U+0020 is plain text with its delimiters (``formattedP``).
- ``#secret#`` (more ``#`` on either side stay in the secret), else ``#name`` is a SimpleX name
  (``simplexName``; a public group without a domain is ``<name>.simplex``), else plain.
- ``!1 red!`` / ``!red text!`` (red, green, blue, yellow, cyan, magenta or 1-6) is ``colored``,
  ``!- text!`` is ``small``.
- ``@name.domain`` is a SimpleX name; otherwise ``@name`` or ``@'name with spaces'`` is a
  ``mention`` (``displayNameTextP_``: punctuation at the end of an unquoted name is not part of
  it).
- ``/keyword ...`` is a ``command`` when the keyword is letters, digits and ``_``
  (``/'quoted command'`` too; ``commandTextP``); trailing punctuation is not part of it.
- ``[text](https://...)`` is a ``hyperLink``, or a ``simplexLink`` with ``showText`` for a short
  SimpleX link; text with punctuation must be the link itself (``sowLinkP``).
- A word of at least 10 characters starting ``http://``, ``https://`` or ``simplex:/`` is a
  ``simplexLink`` when it is a SimpleX link, else a ``uri`` when it is an http(s) URI with a
  dotted host (``parseUri``); ``name.tld`` / ``sub.name.tld`` is a ``uri`` (``isDomain``); a
  valid address is an ``email``; 7 to 22 characters of digits with ``+``, ``(code)`` and single
  separators is a ``phone`` (``phoneP``). Punctuation after a link (other than ``/``, ``)``,
  ``_``, ``!``) is not part of it.

Which words are SimpleX links and names is the grammar of the links themselves, which
``simplex_protocols.links`` implements; a :class:`Markdown` is made with its two parsers (any
callables that raise :class:`~simplex_protocols.errors.LinkError` for text that is not a link or
a name will do). The JSON is the core's: ``{"format": Format, "text": str}`` with ``format``
omitted for plain text, ``Format`` a tagged object (``{"type": "bold"}``, ``{"type":
"command", "commandStr": ...}``, ``{"type": "mention", "memberName": ...}``, ``{"type":
"simplexLink", "showText"?, "linkType", "simplexUri", "smpHosts"}``, ...), as
``simplex_chat.types`` ``FormattedText`` describes it.
"""

from __future__ import annotations

import marshal
import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Final, Protocol, cast
from urllib.parse import parse_qs, unquote

from simplex_protocols.errors import LinkError

from ._chars import is_digit, is_letter, is_punctuation, is_space
from ._mentions import read_display_name

__all__ = [
    "FormattedText",
    "Markdown",
    "SimplexLinkView",
    "SimplexNameView",
    "has_links",
    "mentioned_names",
]

JSON = dict[str, Any]

#: One fragment of a line: its format (``None`` for plain text) and its text.
Fragment = tuple[JSON | None, str]

#: A text's ``formattedText``: ``[{"format": Format, "text": str}, ...]``.
FormattedText = list[JSON]


class SimplexLinkView(Protocol):
    """What the Markdown reads from a parsed SimpleX link (``simplex_protocols.links.SimplexLink``)."""

    @property
    def kind(self) -> str:
        """The core's ``SimplexLinkType``: ``contact``, ``invitation``, ``group``, ..."""

    @property
    def form(self) -> str:
        """``short`` or ``full``."""

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts of the link's router."""

    @property
    def port(self) -> str | None:
        """The router's port, when the link names one."""


class SimplexNameView(Protocol):
    """What the Markdown reads from a parsed SimpleX name (``simplex_protocols.links.SimplexName``)."""

    def to_core_json(self) -> JSON:
        """The name as the core's ``SimplexNameInfo`` JSON object."""


_LINK_FORMATS: Final = frozenset({"uri", "hyperLink", "simplexLink", "simplexName"})

_COLORS: Final = {
    "r": ("red", "ed"),
    "g": ("green", "reen"),
    "b": ("blue", "lue"),
    "y": ("yellow", "ellow"),
    "c": ("cyan", "yan"),
    "m": ("magenta", "agenta"),
}
_COLOR_DIGITS: Final = {
    "1": "red",
    "2": "green",
    "3": "blue",
    "4": "yellow",
    "5": "cyan",
    "6": "magenta",
}

_SPANS: Final = {"*": "bold", "_": "italic", "~": "strikeThrough", "`": "snippet"}

# RFC 3986 pieces of an http(s) URI, ASCII only (the core's URI parser works on bytes).
_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = r"%[0-9A-Fa-f]{2}"
_PCHAR = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_URI_RE: Final = re.compile(
    # Possessive repeats: each part stops at a character its class does not hold, so no part can
    # give characters back to another, and a long word is read in linear time.
    rf"(?P<scheme>https?)://"
    rf"(?:(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*+@)?"
    rf"(?P<host>\[[0-9A-Fa-f:.vV]+\]|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*+)"
    rf"(?::[0-9]*+)?"
    rf"(?:/{_PCHAR}*+)*+"
    rf"(?:\?(?:{_PCHAR}|[/?\[\]])*+)?"
    rf"(?:#(?:{_PCHAR}|[/?])*+)?"
)
# Text.Email.Validate, the address syntax of RFC 5322 without comments and folding white space.
# The local part is atoms and quoted strings joined by dots, each read once (possessively): the
# form with a dot-atom inside the repeat reads "a.a.a" in exponentially many ways, so a peer's
# text "a.a.a...a@" would stall the parser.
_ATEXT = r"A-Za-z0-9!#$%&'*+/=?^_`{|}~\-"
_QUOTED = r'"(?:[\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*+"'
_EMAIL_RE: Final = re.compile(
    rf"(?:[{_ATEXT}]++|{_QUOTED})(?:\.(?:[{_ATEXT}]++|{_QUOTED}))*+"
    rf"@(?:[{_ATEXT}]++(?:\.[{_ATEXT}]++)*+|\[[\x21-\x5a\x5e-\x7e]*+\])"
)

_LINK_PREFIXES: Final = ("http://", "https://", "simplex:/")
_MIN_LINK_CHARS: Final = 10
_PHONE_CHARS: Final = range(7, 23)
_PHONE_SEPARATORS: Final = " -."
# phoneP, greedy as the core's parser is: an optional "+country", an optional "(code)" after an
# optional separator, then groups of digits, each after an optional separator (one left without
# digits after it is not read). The groups stop after 23 repeats of at most 23 digits: a match
# that long is past the 22 characters of a phone number, and no longer match can be shorter, so
# a line of "1 1 1 ..." is not read to its end from every digit. The code's digits are not
# bounded: a code that ends past the limit still decides whether the groups start after it.
_PHONE_RE: Final = re.compile(
    r"(?:\+[0-9]{1,23})?(?:[ \-.]?\([0-9]+\))?(?:[ \-.]?[0-9]{1,23}){0,23}"
)

#: The longest SimpleX name in characters: its name part has at most 253 bytes (``links``).
_MAX_NAME_CHARS: Final = 253

# A run of words that no parser would format, and the spaces between them: a word whose first
# character starts no format (no span, secret, name, mention, command, link text, colour or
# phone number) and that has no ".", "@" or ":", without which it is no link, domain or address.
_PLAIN_RUN: Final = re.compile(r"(?:[^ *_~`#!@/\[+0-9.:][^ .@:]*+(?= |\Z)| ++)++")
# The same over a whole text, lines included: a text of such words has no formatted fragment.
_PLAIN_TEXT: Final = re.compile(r"(?:[^ \n*_~`#!@/\[+0-9.:][^ \n.@:]*+(?=[ \n]|\Z)|[ \n]++)*+")


# ---------------------------------------------------------------------------- characters


def _is_link_punctuation(ch: str) -> bool:
    """Punctuation that is cut from the end of a link (``isPunctuation'``: not ``/ ) _ !``)."""
    return ch not in "/)_!" and is_punctuation(ch)


def _first_word(s: str) -> str:
    """The first of ``T.words s``: the first run of characters between space characters."""
    start = 0
    while start < len(s) and is_space(s[start]):
        start += 1
    end = start
    while end < len(s) and not is_space(s[end]):
        end += 1
    return s[start:end]


class _Line:
    """One line being parsed, and the searches its parsers repeat.

    Several parsers look ahead for a character (the ``]`` of a link text, the space after a
    name) from positions that the next fragments start at again. A plain ``str.find`` from each
    of them reads the same stretch of a long line over and over, which makes a line of many
    ``[`` or ``@`` quadratic. Here each searched character's positions are listed once per line
    and looked up by bisection, so every search costs a logarithm, whatever the text.
    """

    __slots__ = ("_cuts", "_positions", "n", "s")

    def __init__(self, s: str) -> None:
        self.s = s
        self.n = len(s)
        self._positions: dict[str, list[int]] = {}
        self._cuts: dict[int, int] = {}

    def find(self, ch: str, start: int) -> int:
        """The index of the first ``ch`` at or after ``start``, or the line's length."""
        positions = self._positions.get(ch)
        if positions is None:
            positions = [m.start() for m in re.finditer(re.escape(ch), self.s)]
            self._positions[ch] = positions
        k = bisect_left(positions, start)
        return positions[k] if k < len(positions) else self.n

    def word_end(self, start: int) -> int:
        """The end of the word at ``start``: the next U+0020 (``A.takeTill (== ' ')``)."""
        return self.find(" ", start)

    def punctuation_start(self, start: int, end: int) -> int:
        """Where the trailing punctuation of ``s[start:end]`` starts (``end`` is a word's end).

        Worked out once per word and kept: every name that starts inside the word ends with
        the same punctuation.
        """
        cut = self._cuts.get(end)
        if cut is None:
            cut = end
            while cut > 0 and self.s[cut - 1] != " " and is_punctuation(self.s[cut - 1]):
                cut -= 1
            self._cuts[end] = cut
        return max(cut, start)


# ---------------------------------------------------------------------------- words


def _is_http_uri(text: str) -> bool:
    """``parseUri``: an http(s) URI whose host has a dot."""
    match = _URI_RE.fullmatch(text)
    return match is not None and "." in match.group("host")


def _is_domain(s: str) -> bool:
    """``isDomain``: ``name.tld`` or ``sub.name.tld``, what is likely a domain, not every one."""
    if s.count(".") not in (1, 2):
        return False
    parts = s.split(".")
    if len(parts) == 2:
        return _domain(parts[0], parts[1])
    return 3 <= len(parts[0]) <= 8 and _domain(parts[1], parts[2])


def _domain(name: str, tld: str) -> bool:
    def ascii_alpha(x: str) -> bool:
        return x.isascii() and x.isalpha()

    return 1 <= len(name) <= 24 and 2 <= len(tld) <= 8 and ascii_alpha(name) and ascii_alpha(tld)


def _is_email(s: str) -> bool:
    return "@" in s and _EMAIL_RE.fullmatch(s) is not None


def _full_link_hosts(path: str) -> list[str]:
    """The hosts of every queue of a full link (``smp=q1;q2``), in order."""
    query = path.partition("#")[2][2:]
    smp = parse_qs(query, keep_blank_values=True).get("smp", [""])[0]
    hosts: list[str] = []
    for queue in unquote(smp).split(";"):
        server = queue[6:].partition("@")[2].partition("/")[0]
        host_part = server.rsplit(":", 1)[0] if server.count(":") == 1 else server
        hosts.extend(h for h in host_part.split(",") if h)
    return hosts


def _simplex_link_json(text: str, link: SimplexLinkView, show_text: str | None) -> JSON:
    """``simplexUriFormat``: the ``simplexLink`` format, with the link in its ``simplex:`` form."""
    fmt: JSON = {"type": "simplexLink"}
    if show_text is not None:
        fmt["showText"] = show_text
    fmt["linkType"] = str(link.kind)
    path = text[text.index("/", 8) :] if text.startswith("https://") else text[8:]
    if link.form == "full":
        fmt["simplexUri"] = "simplex:" + path
        fmt["smpHosts"] = _full_link_hosts(path) or list(link.hosts)
        return fmt
    route, _, fragment = path.partition("#")
    key, _, query = fragment.partition("?")
    params = parse_qs(query, keep_blank_values=True)
    uri = f"simplex:{route}#{key}?h={','.join(link.hosts)}"
    if link.port:
        uri += f"&p={link.port}"
    if params.get("c"):
        uri += f"&c={params['c'][0]}"
    fmt["simplexUri"] = uri
    fmt["smpHosts"] = list(link.hosts)
    return fmt


# ---------------------------------------------------------------------------- spans and names


def _span(line: _Line, i: int, ch: str) -> tuple[list[Fragment], int]:
    s = line.s
    j = line.find(ch, i + 1)
    if j >= line.n:
        return [(None, s[i:])], line.n
    if j == i + 1 or s[i + 1] == " " or s[j - 1] == " ":
        return [(None, s[i : j + 1])], j + 1
    return [({"type": _SPANS[ch]}, s[i + 1 : j])], j + 1


def _secret(line: _Line, i: int) -> tuple[list[Fragment], int] | None:
    """``secretP`` after the first ``#`` (at ``i``)."""
    s, n = line.s, line.n
    k = i
    while k < n and s[k] == "#":
        k += 1
    m = line.find("#", k)
    end = m
    while end < n and s[end] == "#":
        end += 1
    if end == m or m == k or s[k] == " " or s[m - 1] == " ":
        return None
    return [({"type": "secret"}, s[i : end - 1])], end


def _styled(line: _Line, i: int) -> tuple[list[Fragment], int] | None:
    """``coloredP`` and small text at ``s[i] == "!"``."""
    s, n = line.s, line.n
    k = i + 1
    if k >= n:
        return None
    fmt: JSON
    if s[k] == "-":
        fmt, k = {"type": "small"}, k + 1
    elif s[k] in _COLORS:
        color, rest = _COLORS[s[k]]
        k += 1
        if s.startswith(rest, k):
            k += len(rest)
        fmt = {"type": "colored", "color": color}
    elif s[k] in _COLOR_DIGITS:
        fmt, k = {"type": "colored", "color": _COLOR_DIGITS[s[k]]}, k + 1
    else:
        return None
    if k >= n or not is_space(s[k]):
        return None
    k += 1
    if k >= n or s[k] in " !":
        return None
    end = line.find("!", k)
    if end >= n or s[end - 1] == " ":
        return None
    return [(fmt, s[k:end])], end + 1


def _prefixed(s: str, i: int, sigil: str, command: bool) -> tuple[list[Fragment], int] | None:
    """``prefixedStringP``: a mention (``@``) or a command (``/``) at ``s[i] == sigil``."""
    k = i + 1
    read = read_display_name(s, k)
    if read is None:
        return None
    text, punct, end = read
    if command:
        # commandTextP: the first word is letters, digits and "_".
        word = _first_word(text)
        if not word or not all(is_letter(ch) or is_digit(ch) or ch == "_" for ch in word):
            return None
        fmt: JSON = {"type": "command", "commandStr": text}
    else:
        fmt = {"type": "mention", "memberName": text}
    shown = f"'{text}'" if s[k] == "'" else text
    out: list[Fragment] = [(fmt, sigil + shown)]
    if punct:
        out.append((None, punct))
    return out, end


def _phone(s: str, i: int) -> tuple[list[Fragment], int] | None:
    """``phoneP``: ``+country``, ``(code)`` and digit groups, each after an optional separator."""
    match = _PHONE_RE.match(s, i)
    k = match.end() if match is not None else i  # every part is optional: it always matches
    if k - i not in _PHONE_CHARS:
        return None
    return [({"type": "phone"}, s[i:k])], k


def _marshal(fragments: Sequence[Fragment]) -> bytes:
    """The ``formattedText`` JSON of merged fragments, marshalled for the cache."""
    return marshal.dumps(
        [
            {"text": text} if fmt is None else {"format": fmt, "text": text}
            for fmt, text in fragments
        ]
    )


def _merge(fragments: Sequence[Fragment]) -> list[Fragment]:
    """Adjacent fragments of the same format merge; empty ones drop (the core's Semigroup).

    The texts of a run are joined once at the end, not added to one another fragment by
    fragment, which would copy a long plain text once per fragment.
    """
    formats: list[JSON | None] = []
    texts: list[list[str]] = []
    for fmt, text in fragments:
        if not text:
            continue
        if formats and formats[-1] == fmt:
            texts[-1].append(text)
        else:
            formats.append(fmt)
            texts.append([text])
    return [(fmt, "".join(parts)) for fmt, parts in zip(formats, texts, strict=True)]


# ---------------------------------------------------------------------------- the parser


class Markdown:
    """The core's Markdown parser, reading SimpleX links and names with the given parsers.

    Results are cached by text (an LRU of ``cache_size`` texts); every call returns fresh
    objects that the caller may change. Parsing takes time linear in the text's length,
    whatever the text: a megabyte is parsed in well under a second.

    Args:
        parse_link: parses a SimpleX link (``simplex_protocols.links.parse_simplex_link``);
            raises :class:`~simplex_protocols.errors.LinkError` for any other text.
        parse_name: parses a SimpleX name with its ``@``/``#`` sigil
            (``simplex_protocols.links.parse_simplex_name``); raises
            :class:`~simplex_protocols.errors.LinkError` for any other text. Names longer
            than 253 characters are never passed to it: the core's names are at most 253
            bytes.
        cache_size: how many parsed texts to keep.
    """

    __slots__ = ("_cached", "_name_json", "_parse_link", "_parse_name")

    def __init__(
        self,
        *,
        parse_link: Callable[[str], SimplexLinkView],
        parse_name: Callable[[str], SimplexNameView],
        cache_size: int = 4096,
    ) -> None:
        self._parse_link = parse_link
        self._parse_name = parse_name
        self._cached = lru_cache(maxsize=cache_size)(self._parse_text)
        # Names repeat in a text (#tags): each is parsed once; its JSON is shared by the
        # fragments and copied with them by parse().
        self._name_json = lru_cache(maxsize=1024)(self._parse_name_json)

    def parse(self, text: str) -> FormattedText | None:
        """The ``formattedText`` of a message text (``parseMaybeMarkdownList``).

        Returns:
            The fragments, each ``{"format": Format, "text": str}`` (``format`` omitted for
            plain text) and a fresh object, or ``None`` when nothing in the text is formatted.
            Parsing is total: every text gives one or the other.
        """
        parsed = self._cached(text)
        # The cache keeps the result marshalled: loading it makes fresh objects at C speed,
        # where a copy in Python would cost more than the parse of a long text.
        return None if parsed is None else cast(FormattedText, marshal.loads(parsed))

    def parse_line(self, line: str) -> list[Fragment]:
        """The fragments of one line (the core's ``markdownP``), merged.

        Each fragment is ``(format, text)`` with ``format`` ``None`` for plain text. ``line``
        should hold no ``\\n``: the core parses each line of a text on its own.
        """
        out: list[Fragment] = []
        current = _Line(line)
        n = len(line)
        i = 0
        while i < n:
            plain = _PLAIN_RUN.match(line, i)
            if plain is not None and plain.end() > i:
                # Words no parser would format, and the spaces between them, in one step.
                out.append((None, line[i : plain.end()]))
                i = plain.end()
                if i >= n:
                    break
            fragments, i = self._fragment(current, i)
            out.extend(fragments)
        return _merge(out)

    # ------------------------------------------------------------------------ internals

    def _parse_text(self, text: str) -> bytes | None:
        if not text or _PLAIN_TEXT.fullmatch(text) is not None:
            return None
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        if len(lines) == 1:
            stripped = lines[0].lstrip(" ")
            if len(stripped) <= 1:
                return None
            if stripped[0] == "/":
                return _marshal([({"type": "command", "commandStr": stripped[1:]}, lines[0])])
            merged = self.parse_line(lines[0])
        else:
            fragments: list[Fragment] = []
            for n, line in enumerate(lines):
                if n:
                    fragments.append((None, "\n"))
                fragments.extend(self.parse_line(line))
            merged = _merge(fragments)
        if all(fmt is None for fmt, _ in merged):
            return None
        return _marshal(merged)

    def _parse_name_json(self, full: str) -> JSON | None:
        try:
            return self._parse_name(full).to_core_json()
        except LinkError:
            return None

    def _link(self, text: str) -> SimplexLinkView | None:
        if "#" not in text:
            # Every SimpleX link, full or short, has a fragment: a word without one is none,
            # and most http(s) words are none (a refused parse costs an error object).
            return None
        try:
            return self._parse_link(text)
        except LinkError:
            return None

    def _fragment(self, line: _Line, i: int) -> tuple[list[Fragment], int]:
        s = line.s
        ch = s[i]
        found: tuple[list[Fragment], int] | None = None
        if ch == " ":
            j = i
            while j < line.n and s[j] == " ":
                j += 1
            return [(None, s[i:j])], j
        if ch in _SPANS:
            return _span(line, i, ch)
        if ch == "#":
            found = _secret(line, i + 1) or self._name_ref(line, i + 1, "#")
            if found is None:
                j = line.word_end(i + 1)
                return [(None, s[i:j])], j
            return found
        if ch == "!":
            found = _styled(line, i)
        elif ch == "@":
            found = self._name_ref(line, i + 1, "@") or _prefixed(s, i, "@", command=False)
        elif ch == "/":
            found = _prefixed(s, i, "/", command=True)
        elif ch == "[":
            found = self._hyperlink(line, i)
        elif ch == "+" or is_digit(ch):
            found = _phone(s, i)
        return found if found is not None else self._word(line, i)

    def _word(self, line: _Line, i: int) -> tuple[list[Fragment], int]:
        """``wordP``: the text up to the next U+0020, a link or an address or plain."""
        s = line.s
        j = line.word_end(i)
        w = s[i:j]
        cut = j
        while cut > i and _is_link_punctuation(s[cut - 1]):
            cut -= 1
        bare = s[i:cut]
        fmt: JSON | None
        if len(bare) >= _MIN_LINK_CHARS and bare.startswith(_LINK_PREFIXES):
            # The core decodes the whole word as a SimpleX link, punctuation included.
            link = self._link(w)
            if link is not None:
                fmt = _simplex_link_json(w, link, None)
            elif _is_http_uri(bare):
                fmt = {"type": "uri"}
            else:
                return [(None, w)], j
        elif _is_domain(bare):
            fmt = {"type": "uri"}
        elif _is_email(bare):
            fmt = {"type": "email"}
        else:
            return [(None, w)], j
        out: list[Fragment] = [(fmt, bare)]
        if cut < j:
            out.append((None, s[cut:j]))
        return out, j

    def _name_ref(self, line: _Line, i: int, sigil: str) -> tuple[list[Fragment], int] | None:
        """A SimpleX name after its sigil (``i`` is after it); ``@`` needs a domain."""
        s = line.s
        j = line.word_end(i)
        cut = line.punctuation_start(i, j)
        if cut - i > _MAX_NAME_CHARS:
            return None
        name = s[i:cut]
        if sigil == "@" and "." not in name:
            return None
        full = sigil + name
        info = self._name_json(full)
        if info is None:
            return None
        out: list[Fragment] = [({"type": "simplexName", "nameInfo": info}, full)]
        if cut < j:
            out.append((None, s[cut:j]))
        return out, j

    def _hyperlink(self, line: _Line, i: int) -> tuple[list[Fragment], int] | None:
        """``sowLinkP``: ``[text](link)`` at ``s[i] == "["``."""
        s, n = line.s, line.n
        t_end = line.find("]", i + 1)
        if t_end == i + 1 or t_end >= n or not s.startswith("(", t_end + 1):
            return None
        l_start = t_end + 2
        l_end = line.find(")", l_start)
        if l_end == l_start or l_end >= n:
            return None
        text_chars, link_chars = t_end - i - 1, l_end - l_start
        # Text with punctuation must be the link itself: compared by length before anything is
        # copied, since many "[" of a long line may share one "](...)".
        has_punct = any(is_punctuation(s[k]) and s[k] not in "-_" for k in range(i + 1, t_end))
        if has_punct and link_chars not in (text_chars, text_chars + 8):
            return None
        text, link_text = s[i + 1 : t_end], s[l_start:l_end]
        if has_punct and text != link_text and "https://" + text != link_text:
            return None
        link = self._link(link_text)
        fmt: JSON
        if link is not None:
            if link.form == "full":
                return None
            fmt = _simplex_link_json(link_text, link, text)
        elif _is_http_uri(link_text):
            fmt = {"type": "hyperLink", "showText": text, "linkUri": link_text}
        else:
            return None
        return [(fmt, f"[{text}]({link_text})")], l_end + 1


# ---------------------------------------------------------------------------- fragments


def mentioned_names(fragments: Sequence[JSON] | None) -> list[str]:
    """The member names of the ``mention`` fragments, in order (the core's ``mentionedNames``)."""
    names: list[str] = []
    for fragment in fragments or ():
        fmt = fragment.get("format")
        if isinstance(fmt, dict) and fmt.get("type") == "mention":
            names.append(str(fmt.get("memberName", "")))
    return names


def has_links(fragments: Sequence[JSON] | None) -> bool:
    """Whether any fragment is a link (the core's ``hasLinks``).

    A link is a ``uri``, ``hyperLink``, ``simplexLink`` or ``simplexName`` fragment.
    """
    for fragment in fragments or ():
        fmt = fragment.get("format")
        if isinstance(fmt, dict) and fmt.get("type") in _LINK_FORMATS:
            return True
    return False
