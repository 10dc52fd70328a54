"""The chat core's Markdown: a message text parsed into ``formattedText`` fragments.

A port of the chat core's parser (``Simplex.Chat.Markdown``: ``parseMaybeMarkdownList``,
``markdownP`` and the word, name and link parsers it uses), so that the simulator emits
``formattedText`` on every chat item and quote exactly where the core does, and reads
mentions the way the core reads them. The rules, as the core applies them:

- A text is parsed line by line (lines end at ``\\n`` only); the fragments of the lines are
  joined with ``"\\n"`` and adjacent fragments of the same format merge. A text with no
  formatted fragment has no ``formattedText`` at all.
- A text of one line that starts (after spaces) with ``/`` and has more after it is one
  ``command`` fragment: the whole line, ``commandStr`` the rest after ``/``.
- Within a line a fragment starts at the beginning, after a run of spaces, or right after
  another fragment; a word runs to the next space (``" "`` only).
- ``*bold*``, ``_italic_``, ``~strikeThrough~`` and a `` `snippet` `` take the text up to the
  same character, spaces included; without the closing character the rest of the line is
  plain text, and a span that is empty or starts or ends with a space is plain text with its
  delimiters.
- ``#secret#`` (more ``#`` on either side stay in the secret), else ``#name`` is a SimpleX
  name (``simplexName``, a public group without a domain is ``<name>.simplex``), else plain.
- ``!1 red!`` / ``!red text!`` (red, green, blue, yellow, cyan, magenta or 1-6) is
  ``colored``, ``!- text!`` is ``small``.
- ``@name.domain`` is a SimpleX name; otherwise ``@name`` or ``@'name with spaces'`` is a
  ``mention`` (punctuation at the end of an unquoted name is not part of it).
- ``/keyword ...`` is a ``command`` when the keyword is letters, digits and ``_``
  (``/'quoted command'`` too); trailing punctuation is not part of it.
- ``[text](https://...)`` is a ``hyperLink``, or a ``simplexLink`` with ``showText`` for a
  short SimpleX link; text with punctuation must be the link itself.
- A word of at least 10 characters starting ``http://``, ``https://`` or ``simplex:/`` is a
  ``simplexLink`` when it is a SimpleX link, else a ``uri`` when it is a valid http(s) URI with
  a dotted host; ``name.tld`` / ``sub.name.tld`` is a ``uri``; a valid address is an
  ``email``; 7 to 22 characters of digits with ``+``, ``(code)`` and single separators is a
  ``phone``. Punctuation after a link (other than ``/``, ``)``, ``_``, ``!``) is not part of it.

The JSON is the core's: ``{"format": Format, "text": str}`` with ``format`` omitted for plain
text, ``Format`` a tagged object (``{"type": "bold"}``, ``{"type": "command", "commandStr":
...}``, ``{"type": "mention", "memberName": ...}``, ``{"type": "simplexLink", "showText"?,
"linkType", "simplexUri", "smpHosts"}``, ...), as ``simplex_chat.types`` ``FormattedText``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qs, unquote

from simplex_protocols.errors import LinkError
from simplex_protocols.links import LinkForm, parse_simplex_link, parse_simplex_name

__all__ = ["has_links", "mentioned_names", "parse_markdown"]

JSON = dict[str, Any]
Fragment = tuple[JSON | None, str]

_LINK_FORMATS = frozenset({"uri", "hyperLink", "simplexLink", "simplexName"})

_COLORS = {
    "r": ("red", "ed"),
    "g": ("green", "reen"),
    "b": ("blue", "lue"),
    "y": ("yellow", "ellow"),
    "c": ("cyan", "yan"),
    "m": ("magenta", "agenta"),
}
_COLOR_DIGITS = {"1": "red", "2": "green", "3": "blue", "4": "yellow", "5": "cyan", "6": "magenta"}

_SPANS = {"*": "bold", "_": "italic", "~": "strikeThrough", "`": "snippet"}

# RFC 3986 pieces of an http(s) URI, ASCII only (the core's URI parser works on bytes).
_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = r"%[0-9A-Fa-f]{2}"
_PCHAR = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_URI_RE = re.compile(
    rf"(?P<scheme>https?)://"
    rf"(?:(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@)?"
    rf"(?P<host>\[[0-9A-Fa-f:.vV]+\]|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*)"
    rf"(?::[0-9]*)?"
    rf"(?:/{_PCHAR}*)*"
    rf"(?:\?(?:{_PCHAR}|[/?\[\]])*)?"
    rf"(?:#(?:{_PCHAR}|[/?])*)?"
)
_ATEXT = r"A-Za-z0-9!#$%&'*+/=?^_`{|}~\-"
_DOT_ATOM = rf"[{_ATEXT}]+(?:\.[{_ATEXT}]+)*"
_QUOTED = r'"(?:[\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"'
_EMAIL_RE = re.compile(
    rf"(?:{_DOT_ATOM}|{_QUOTED})(?:\.(?:{_DOT_ATOM}|{_QUOTED}))*"
    rf"@(?:{_DOT_ATOM}|\[[\x21-\x5a\x5e-\x7e]*\])"
)


# ---------------------------------------------------------------------------- characters


def _is_space(ch: str) -> bool:
    """Haskell's ``isSpace``: the ASCII controls ``\\t\\n\\r\\f\\v`` and Unicode spaces (Zs)."""
    return ch in "\t\n\r\f\v" or unicodedata.category(ch) == "Zs"


def _is_punct(ch: str) -> bool:
    """Haskell's ``isPunctuation``: the Unicode punctuation categories (P*)."""
    return unicodedata.category(ch)[0] == "P"


def _is_digit(ch: str) -> bool:
    """Haskell's ``isDigit``: ASCII digits only."""
    return "0" <= ch <= "9"


def _ref_char(ch: str) -> bool:
    """A character that can start a name or a command."""
    return ch > " " and ch not in "#@'"


def _split_punctuation(s: str) -> tuple[str, str]:
    end = len(s)
    while end and _is_punct(s[end - 1]):
        end -= 1
    return s[:end], s[end:]


def _is_word_punct(ch: str) -> bool:
    """Punctuation that is cut from the end of a link (the core keeps ``/ ) _ !``)."""
    return ch not in "/)_!" and _is_punct(ch)


def _words(s: str) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    for ch in s:
        if _is_space(ch):
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


# ---------------------------------------------------------------------------- links


def parse_uri(text: str) -> bool:
    """Whether ``text`` is an http(s) URI with a host that has a dot (the core's ``parseUri``)."""
    match = _URI_RE.fullmatch(text)
    return match is not None and "." in match.group("host")


def _simplex_link_format(text: str, show_text: str | None) -> JSON | None:
    """The ``simplexLink`` format of a SimpleX link, or ``None`` if ``text`` is not one."""
    try:
        link = parse_simplex_link(text)
    except LinkError:
        return None
    fmt: JSON = {"type": "simplexLink"}
    if show_text is not None:
        fmt["showText"] = show_text
    fmt["linkType"] = link.kind.value
    path = text[text.index("/", 8) :] if text.startswith("https://") else text[8:]
    if link.form is LinkForm.FULL:
        fmt["simplexUri"] = "simplex:" + path
        fmt["smpHosts"] = _full_link_hosts(path) or list(link.hosts)
    else:
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


def _is_domain(s: str) -> bool:
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


# ---------------------------------------------------------------------------- one line


def _word(s: str, i: int) -> tuple[list[Fragment], int]:
    j = _till(s, i, " ")
    return _word_md(s[i:j]), j


def _word_md(w: str) -> list[Fragment]:
    bare = w
    while bare and _is_word_punct(bare[-1]):
        bare = bare[:-1]
    punct = w[len(bare) :]
    fmt: JSON | None = None
    if len(bare) >= 10 and bare.startswith(("http://", "https://", "simplex:/")):
        fmt = _simplex_link_format(w, None)
        if fmt is None:
            if not parse_uri(bare):
                return [(None, w)]
            fmt = {"type": "uri"}
    elif _is_domain(bare):
        fmt = {"type": "uri"}
    elif _is_email(bare):
        fmt = {"type": "email"}
    else:
        return [(None, w)]
    out: list[Fragment] = [(fmt, bare)]
    if punct:
        out.append((None, punct))
    return out


def _span(s: str, i: int, ch: str) -> tuple[list[Fragment], int]:
    j = s.find(ch, i + 1)
    if j < 0:
        return [(None, s[i:])], len(s)
    inner = s[i + 1 : j]
    if not inner or inner[0] == " " or inner[-1] == " ":
        return [(None, ch + inner + ch)], j + 1
    return [({"type": _SPANS[ch]}, inner)], j + 1


def _secret(s: str, i: int) -> tuple[list[Fragment], int] | None:
    """``i`` is after the first ``#``."""
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


def _name_ref(s: str, i: int, sigil: str) -> tuple[list[Fragment], int] | None:
    """A SimpleX name after its sigil (``i`` is after it)."""
    j = _till(s, i, " ")
    name, punct = _split_punctuation(s[i:j])
    if sigil == "@" and "." not in name:
        return None
    full = sigil + name
    try:
        parsed = parse_simplex_name(full)
    except LinkError:
        return None
    out: list[Fragment] = [({"type": "simplexName", "nameInfo": parsed.to_core_json()}, full)]
    if punct:
        out.append((None, punct))
    return out, j


def _styled(s: str, i: int) -> tuple[list[Fragment], int] | None:
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
    if k >= len(s) or not _is_space(s[k]):
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


def _display_name(s: str, k: int) -> tuple[str, str, int] | None:
    """A name at ``k``: quoted (``'...'``) or up to the next space, punctuation split off."""
    if k >= len(s):
        return None
    if s[k] == "'":
        if k + 1 < len(s) and _ref_char(s[k + 1]):
            end = _till(s, k + 1, "'")
            if end < len(s):
                return s[k + 1 : end], "", end + 1
        return None
    if not _ref_char(s[k]):
        return None
    end = k
    while end < len(s) and not _is_space(s[end]):
        end += 1
    name, punct = _split_punctuation(s[k:end])
    return name, punct, end


def _prefixed(s: str, i: int, sigil: str, command: bool) -> tuple[list[Fragment], int] | None:
    k = i + 1
    parsed = _display_name(s, k)
    if parsed is None:
        return None
    text, punct, end = parsed
    if command:
        words = _words(text)
        if not words or not all(ch.isalpha() or _is_digit(ch) or ch == "_" for ch in words[0]):
            return None
        fmt: JSON = {"type": "command", "commandStr": text}
    else:
        fmt = {"type": "mention", "memberName": text}
    shown = f"'{text}'" if s[k] == "'" else text
    out: list[Fragment] = [(fmt, sigil + shown)]
    if punct:
        out.append((None, punct))
    return out, end


def _hyperlink(s: str, i: int) -> tuple[list[Fragment], int] | None:
    t_end = _till(s, i + 1, "]")
    if t_end == i + 1 or t_end >= len(s) or not s.startswith("(", t_end + 1):
        return None
    l_start = t_end + 2
    l_end = _till(s, l_start, ")")
    if l_end == l_start or l_end >= len(s):
        return None
    text, link = s[i + 1 : t_end], s[l_start:l_end]
    has_punct = any(_is_punct(ch) and ch not in "-_" for ch in text)
    if has_punct and text != link and "https://" + text != link:
        return None
    fmt: JSON | None
    try:
        form = parse_simplex_link(link).form
    except LinkError:
        form = None
    if form is LinkForm.FULL:
        return None
    if form is LinkForm.SHORT:
        fmt = _simplex_link_format(link, text)
    elif parse_uri(link):
        fmt = {"type": "hyperLink", "showText": text, "linkUri": link}
    else:
        return None
    return [(fmt, f"[{text}]({link})")], l_end + 1


def _phone(s: str, i: int) -> tuple[list[Fragment], int] | None:
    n = len(s)
    k = i
    if s[k] == "+" and k + 1 < n and _is_digit(s[k + 1]):
        k += 1
        while k < n and _is_digit(s[k]):
            k += 1
    # an optional area code: a separator, "(", digits, ")"
    c = k + 1 if k < n and s[k] in " -." else k
    if c < n and s[c] == "(":
        d = c + 1
        while d < n and _is_digit(s[d]):
            d += 1
        if d > c + 1 and d < n and s[d] == ")":
            k = d + 1
    # segments: a separator (or none) and digits
    while True:
        c = k + 1 if k < n and s[k] in " -." else k
        d = c
        while d < n and _is_digit(s[d]):
            d += 1
        if d == c:
            break
        k = d
    if not 7 <= k - i <= 22:
        return None
    return [({"type": "phone"}, s[i:k])], k


def _fragment(s: str, i: int) -> tuple[list[Fragment], int]:
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
        found = _secret(s, i + 1) or _name_ref(s, i + 1, "#")
        if found is None:
            j = _till(s, i + 1, " ")
            return [(None, s[i:j])], j
        return found
    if ch == "!":
        found = _styled(s, i)
    elif ch == "@":
        found = _name_ref(s, i + 1, "@") or _prefixed(s, i, "@", command=False)
    elif ch == "/":
        found = _prefixed(s, i, "/", command=True)
    elif ch == "[":
        found = _hyperlink(s, i)
    elif ch == "+" or _is_digit(ch):
        found = _phone(s, i)
    return found if found is not None else _word(s, i)


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


def parse_line(line: str) -> list[Fragment]:
    """The fragments of one line (the core's ``markdownP``), merged."""
    out: list[Fragment] = []
    i = 0
    while i < len(line):
        fragments, i = _fragment(line, i)
        out.extend(fragments)
    return _merge(out)


# ---------------------------------------------------------------------------- texts


@lru_cache(maxsize=4096)
def _parse(text: str) -> tuple[Fragment, ...] | None:
    # Cached; the format objects in it are shared, so callers copy them (parse_markdown does).
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
        fragments.extend(parse_line(line))
    merged = _merge(fragments)
    if all(fmt is None for fmt, _ in merged):
        return None
    return tuple(merged)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def parse_markdown(text: str) -> list[JSON] | None:
    """The ``formattedText`` of a message text, or ``None`` when it has no formatting.

    Each fragment is ``{"format": Format, "text": str}`` (``format`` omitted for plain text),
    a fresh object the caller may change.
    """
    parsed = _parse(text)
    if parsed is None:
        return None
    out: list[JSON] = []
    for fmt, fragment in parsed:
        item: JSON = {"format": _copy(fmt), "text": fragment} if fmt is not None else {}
        if fmt is None:
            item["text"] = fragment
        out.append(item)
    return out


def mentioned_names(fragments: Sequence[JSON] | None) -> list[str]:
    """The member names of the ``mention`` fragments, in order (the core's ``mentionedNames``)."""
    names: list[str] = []
    for fragment in fragments or ():
        fmt = fragment.get("format")
        if isinstance(fmt, dict) and fmt.get("type") == "mention":
            names.append(str(fmt.get("memberName", "")))
    return names


def has_links(fragments: Sequence[JSON] | None) -> bool:
    """Whether any fragment is a link (``uri``, ``hyperLink``, ``simplexLink``,
    ``simplexName``), as the core's ``hasLinks``."""
    for fragment in fragments or ():
        fmt = fragment.get("format")
        if isinstance(fmt, dict) and fmt.get("type") in _LINK_FORMATS:
            return True
    return False
