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

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Final, Protocol
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
    rf"(?P<scheme>https?)://"
    rf"(?:(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@)?"
    rf"(?P<host>\[[0-9A-Fa-f:.vV]+\]|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*)"
    rf"(?::[0-9]*)?"
    rf"(?:/{_PCHAR}*)*"
    rf"(?:\?(?:{_PCHAR}|[/?\[\]])*)?"
    rf"(?:#(?:{_PCHAR}|[/?])*)?"
)
# Text.Email.Validate, the address syntax of RFC 5322 without comments and folding white space.
_ATEXT = r"A-Za-z0-9!#$%&'*+/=?^_`{|}~\-"
_DOT_ATOM = rf"[{_ATEXT}]+(?:\.[{_ATEXT}]+)*"
_QUOTED = r'"(?:[\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"'
_EMAIL_RE: Final = re.compile(
    rf"(?:{_DOT_ATOM}|{_QUOTED})(?:\.(?:{_DOT_ATOM}|{_QUOTED}))*"
    rf"@(?:{_DOT_ATOM}|\[[\x21-\x5a\x5e-\x7e]*\])"
)

_LINK_PREFIXES: Final = ("http://", "https://", "simplex:/")
_MIN_LINK_CHARS: Final = 10
_PHONE_CHARS: Final = range(7, 23)
_PHONE_SEPARATORS: Final = " -."


# ---------------------------------------------------------------------------- characters


def _split_punctuation(s: str) -> tuple[str, str]:
    end = len(s)
    while end and is_punctuation(s[end - 1]):
        end -= 1
    return s[:end], s[end:]


def _is_link_punctuation(ch: str) -> bool:
    """Punctuation that is cut from the end of a link (``isPunctuation'``: not ``/ ) _ !``)."""
    return ch not in "/)_!" and is_punctuation(ch)


def _words(s: str) -> list[str]:
    """``T.words``: the runs of characters between space characters."""
    out: list[str] = []
    current: list[str] = []
    for ch in s:
        if is_space(ch):
            if current:
                out.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        out.append("".join(current))
    return out


def _till(s: str, i: int, stop: str) -> int:
    """The index of the next ``stop`` character at or after ``i`` (or the end)."""
    j = s.find(stop, i)
    return len(s) if j < 0 else j


# ---------------------------------------------------------------------------- words


def _is_http_uri(text: str) -> bool:
    """``parseUri``: an http(s) URI whose host has a dot."""
    match = _URI_RE.fullmatch(text)
    return match is not None and "." in match.group("host")


def _is_domain(s: str) -> bool:
    """``isDomain``: ``name.tld`` or ``sub.name.tld``, what is likely a domain, not every one."""
    parts = s.split(".")
    if len(parts) == 2:
        return _domain(parts[0], parts[1])
    if len(parts) == 3:
        return 3 <= len(parts[0]) <= 8 and _domain(parts[1], parts[2])
    return False


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


def _span(s: str, i: int, ch: str) -> tuple[list[Fragment], int]:
    j = s.find(ch, i + 1)
    if j < 0:
        return [(None, s[i:])], len(s)
    inner = s[i + 1 : j]
    if not inner or inner[0] == " " or inner[-1] == " ":
        return [(None, ch + inner + ch)], j + 1
    return [({"type": _SPANS[ch]}, inner)], j + 1


def _secret(s: str, i: int) -> tuple[list[Fragment], int] | None:
    """``secretP`` after the first ``#`` (at ``i``)."""
    k = i
    while k < len(s) and s[k] == "#":
        k += 1
    m = _till(s, k, "#")
    end = m
    while end < len(s) and s[end] == "#":
        end += 1
    inner = s[k:m]
    if end == m or not inner or inner[0] == " " or inner[-1] == " ":
        return None
    return [({"type": "secret"}, s[i : end - 1])], end


def _styled(s: str, i: int) -> tuple[list[Fragment], int] | None:
    """``coloredP`` and small text at ``s[i] == "!"``."""
    k = i + 1
    if k >= len(s):
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
    if k >= len(s) or not is_space(s[k]):
        return None
    k += 1
    if k >= len(s) or s[k] in " !":
        return None
    end = _till(s, k, "!")
    if end >= len(s):
        return None
    text = s[k:end]
    if text[-1] == " ":
        return None
    return [(fmt, text)], end + 1


def _prefixed(s: str, i: int, sigil: str, command: bool) -> tuple[list[Fragment], int] | None:
    """``prefixedStringP``: a mention (``@``) or a command (``/``) at ``s[i] == sigil``."""
    k = i + 1
    read = read_display_name(s, k)
    if read is None:
        return None
    text, punct, end = read
    if command:
        # commandTextP: the first word is letters, digits and "_".
        words = _words(text)
        if not words or not all(is_letter(ch) or is_digit(ch) or ch == "_" for ch in words[0]):
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
    n = len(s)
    k = i
    if s[k] == "+" and k + 1 < n and is_digit(s[k + 1]):
        k += 1
        while k < n and is_digit(s[k]):
            k += 1
    # an optional area code: a separator, "(", digits, ")"
    c = k + 1 if k < n and s[k] in _PHONE_SEPARATORS else k
    if c < n and s[c] == "(":
        d = c + 1
        while d < n and is_digit(s[d]):
            d += 1
        if d > c + 1 and d < n and s[d] == ")":
            k = d + 1
    # segments: a separator (or none) and digits
    while True:
        c = k + 1 if k < n and s[k] in _PHONE_SEPARATORS else k
        d = c
        while d < n and is_digit(s[d]):
            d += 1
        if d == c:
            break
        k = d
    if k - i not in _PHONE_CHARS:
        return None
    return [({"type": "phone"}, s[i:k])], k


def _merge(fragments: Sequence[Fragment]) -> list[Fragment]:
    """Adjacent fragments of the same format merge; empty ones drop (the core's Semigroup)."""
    out: list[Fragment] = []
    for fmt, text in fragments:
        if not text:
            continue
        if out and out[-1][0] == fmt:
            out[-1] = (fmt, out[-1][1] + text)
        else:
            out.append((fmt, text))
    return out


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


# ---------------------------------------------------------------------------- the parser


class Markdown:
    """The core's Markdown parser, reading SimpleX links and names with the given parsers.

    Results are cached by text (an LRU of ``cache_size`` texts); every call returns fresh
    objects that the caller may change.

    Args:
        parse_link: parses a SimpleX link (``simplex_protocols.links.parse_simplex_link``);
            raises :class:`~simplex_protocols.errors.LinkError` for any other text.
        parse_name: parses a SimpleX name with its ``@``/``#`` sigil
            (``simplex_protocols.links.parse_simplex_name``); raises
            :class:`~simplex_protocols.errors.LinkError` for any other text.
        cache_size: how many parsed texts to keep.
    """

    __slots__ = ("_cached", "_parse_link", "_parse_name")

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

    def parse(self, text: str) -> FormattedText | None:
        """The ``formattedText`` of a message text (``parseMaybeMarkdownList``).

        Returns:
            The fragments, each ``{"format": Format, "text": str}`` (``format`` omitted for
            plain text) and a fresh object, or ``None`` when nothing in the text is formatted.
            Parsing is total: every text gives one or the other.
        """
        parsed = self._cached(text)
        if parsed is None:
            return None
        out: FormattedText = []
        for fmt, fragment in parsed:
            item: JSON = {} if fmt is None else {"format": _copy(fmt)}
            item["text"] = fragment
            out.append(item)
        return out

    def parse_line(self, line: str) -> list[Fragment]:
        """The fragments of one line (the core's ``markdownP``), merged.

        Each fragment is ``(format, text)`` with ``format`` ``None`` for plain text. ``line``
        should hold no ``\\n``: the core parses each line of a text on its own.
        """
        out: list[Fragment] = []
        i = 0
        while i < len(line):
            fragments, i = self._fragment(line, i)
            out.extend(fragments)
        return _merge(out)

    # ------------------------------------------------------------------------ internals

    def _parse_text(self, text: str) -> tuple[Fragment, ...] | None:
        # Cached: the format objects in the result are shared, so parse() copies them.
        if not text:
            return None
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        if len(lines) == 1:
            stripped = lines[0].lstrip(" ")
            if len(stripped) <= 1:
                return None
            if stripped[0] == "/":
                return (({"type": "command", "commandStr": stripped[1:]}, lines[0]),)
        fragments: list[Fragment] = []
        for n, line in enumerate(lines):
            if n:
                fragments.append((None, "\n"))
            fragments.extend(self.parse_line(line))
        merged = _merge(fragments)
        if all(fmt is None for fmt, _ in merged):
            return None
        return tuple(merged)

    def _link(self, text: str) -> SimplexLinkView | None:
        try:
            return self._parse_link(text)
        except LinkError:
            return None

    def _fragment(self, s: str, i: int) -> tuple[list[Fragment], int]:
        ch = s[i]
        found: tuple[list[Fragment], int] | None = None
        if ch == " ":
            j = i
            while j < len(s) and s[j] == " ":
                j += 1
            return [(None, s[i:j])], j
        if ch in _SPANS:
            return _span(s, i, ch)
        if ch == "#":
            found = _secret(s, i + 1) or self._name_ref(s, i + 1, "#")
            if found is None:
                j = _till(s, i + 1, " ")
                return [(None, s[i:j])], j
            return found
        if ch == "!":
            found = _styled(s, i)
        elif ch == "@":
            found = self._name_ref(s, i + 1, "@") or _prefixed(s, i, "@", command=False)
        elif ch == "/":
            found = _prefixed(s, i, "/", command=True)
        elif ch == "[":
            found = self._hyperlink(s, i)
        elif ch == "+" or is_digit(ch):
            found = _phone(s, i)
        return found if found is not None else self._word(s, i)

    def _word(self, s: str, i: int) -> tuple[list[Fragment], int]:
        """``wordP``: the text up to the next U+0020, a link or an address or plain."""
        j = _till(s, i, " ")
        w = s[i:j]
        bare = w
        while bare and _is_link_punctuation(bare[-1]):
            bare = bare[:-1]
        punct = w[len(bare) :]
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
        if punct:
            out.append((None, punct))
        return out, j

    def _name_ref(self, s: str, i: int, sigil: str) -> tuple[list[Fragment], int] | None:
        """A SimpleX name after its sigil (``i`` is after it); ``@`` needs a domain."""
        j = _till(s, i, " ")
        name, punct = _split_punctuation(s[i:j])
        if sigil == "@" and "." not in name:
            return None
        full = sigil + name
        try:
            parsed = self._parse_name(full)
        except LinkError:
            return None
        out: list[Fragment] = [({"type": "simplexName", "nameInfo": parsed.to_core_json()}, full)]
        if punct:
            out.append((None, punct))
        return out, j

    def _hyperlink(self, s: str, i: int) -> tuple[list[Fragment], int] | None:
        """``sowLinkP``: ``[text](link)`` at ``s[i] == "["``."""
        t_end = _till(s, i + 1, "]")
        if t_end == i + 1 or t_end >= len(s) or not s.startswith("(", t_end + 1):
            return None
        l_start = t_end + 2
        l_end = _till(s, l_start, ")")
        if l_end == l_start or l_end >= len(s):
            return None
        text, link_text = s[i + 1 : t_end], s[l_start:l_end]
        has_punct = any(is_punctuation(ch) and ch not in "-_" for ch in text)
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
