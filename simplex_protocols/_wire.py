"""The one place that encodes and decodes wire JSON and measures encoded sizes.

Sizes matter on both transports: the chat core counts a message's encoded JSON, in which the
text of a ``/_call`` command or of a reply is a string whose escapes count; Service RPC pads
the request or response JSON to a fixed size. Every size check in the library goes through
the functions here, so the rule is written once.

The chat core encodes JSON with Haskell's aeson: in a string it writes ``"``, ``\\``, newline,
carriage return and tab as two-byte escapes, every other character below U+0020 as a six-byte
``\\u00XX`` escape, and everything else as its UTF-8 bytes (no escaping of ``/``, of non-ASCII
characters, or of U+2028/U+2029). :func:`aeson_string_size` follows that rule exactly.

Decoding has two paths that accept and refuse exactly the same texts. :func:`reference_loads`
is the standard library's decoder with every check written out; :func:`loads` lets orjson (a
compiled decoder) read the text first and keeps its result only when nothing orjson lets
through could matter, else it asks the reference path, which then gives the verdict and the
error code. The property tests in ``tests/test_wire_fast_path.py`` hold the two together.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final

import orjson

from ._framing import MSG_NEW_ENVELOPE_BYTES, SERVICE_PAD_FRAMING_BYTES

__all__ = [
    "MAX_JSON_DEPTH",
    "WireJSONError",
    "aeson_string_size",
    "chat_message_size",
    "dumps",
    "json_size",
    "loads",
    "reference_loads",
    "service_padded_size",
]

#: Deeper JSON than this is refused by :func:`loads` (protection against stack exhaustion).
MAX_JSON_DEPTH: Final = 64


class WireJSONError(ValueError):
    """Text is not acceptable wire JSON. ``code`` says why, ``position`` where (or ``None``)."""

    def __init__(self, reason: str, code: str, position: int | None = None) -> None:
        super().__init__(reason if position is None else f"{reason} at {position}")
        self.reason = reason
        self.code = code
        self.position = position

    @property
    def syntax_code(self) -> str:
        """:attr:`code`, with ``trailing_data`` read as ``not_json``.

        For vocabularies that do not tell the two apart: the spec's vectors call any text that
        is not exactly one JSON value ``not_json``.
        """
        return "not_json" if self.code == "trailing_data" else self.code


def dumps(value: Any) -> str:
    """Encode a value as compact JSON text, UTF-8 characters unescaped, as the core writes it.

    Raises:
        ValueError: the value holds NaN or an infinity, which JSON cannot carry.
        TypeError: the value holds something that is not JSON.
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise WireJSONError(f"duplicate object key {key!r}", "duplicate_key")
            seen.add(key)
    return out


def _bad_constant(name: str) -> Any:
    raise WireJSONError(f"{name} is not JSON", "not_json")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise WireJSONError(f"number {text[:20]} is out of range", "bad_number")
    return value


def _check_depth(value: Any, limit: int) -> None:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > limit:
                raise WireJSONError(f"JSON nested deeper than {limit} levels", "too_deep")
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


# One decoder for each duplicate-key rule, built once: json.loads would build a new one on every
# call that passes hooks. raw_decode (public API) tells where the value ends, so text after it
# gets its own code instead of a message to match.
_STRICT_KEYS: Final = json.JSONDecoder(
    object_pairs_hook=_no_duplicates, parse_constant=_bad_constant, parse_float=_finite_float
)
_LENIENT_KEYS: Final = json.JSONDecoder(parse_constant=_bad_constant, parse_float=_finite_float)
# The whitespace JSON allows around a value (RFC 8259 section 2), as json.loads skips it.
_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")


def _skip_whitespace(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match is not None else pos


# A \uD800-\uDFFF escape in the text: only then is it worth walking the decoded value for lone
# surrogates (a valid pair decodes to one character and passes).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def loads(text: str | bytes, *, allow_duplicate_keys: bool = False) -> Any:
    """Decode wire JSON strictly.

    Accepts and refuses exactly what :func:`reference_loads` does, with the same value and the
    same error ``code``, at about the speed of ``json.loads``.

    Raises:
        WireJSONError: as :func:`reference_loads`.
    """
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        # Whatever orjson refuses, the reference path refuses too and says why (the code and
        # position), or accepts as json reads it.
        return reference_loads(text, allow_duplicate_keys=allow_duplicate_keys)
    kind = type(value)
    if kind is dict or kind is list:
        members = _members(value, 1)
        if members < 0:
            return reference_loads(text, allow_duplicate_keys=allow_duplicate_keys)
        if allow_duplicate_keys:
            return value
        colons = text.count(":") if isinstance(text, str) else text.count(b":")
        if colons != members and not _no_duplicate_keys(text, value, colons):
            return reference_loads(text)
    elif kind is float and not -_INT64_FLOAT < value < _INT64_FLOAT:
        return reference_loads(text, allow_duplicate_keys=allow_duplicate_keys)
    return value


# What orjson accepts that the reference path does not, or reads differently:
# - an object with a duplicate key (orjson keeps the last value, as json does when allowed);
# - nesting deeper than MAX_JSON_DEPTH (orjson allows 1,024 levels);
# - an integer literal outside the signed and unsigned 64-bit ranges, which orjson reads as a
#   float and json as an exact int: such a float is at least 2**63 in magnitude.
# Everything else orjson refuses (NaN, infinities and numbers that round to them, lone
# surrogates, text after the value, bytes that are not UTF-8) or reads as json does (floats are
# correctly rounded by both). _members and _no_duplicate_keys look for the three.
_INT64_FLOAT: Final = float(2**63)
# A container whose children have none of these types needs no look at each child.
_LOOK_CLOSER: Final = frozenset({dict, list, float})


def _members(node: dict[str, Any] | list[Any], depth: int) -> int:
    """Members of all objects in ``node``, or -1 when only the reference path can judge it.

    -1 for nesting deeper than :data:`MAX_JSON_DEPTH` or a float that may be an integer orjson
    could not hold. Recursion stops at that depth, so it cannot exhaust the stack.
    """
    if depth > MAX_JSON_DEPTH:
        return -1
    children: Any
    if type(node) is dict:
        count = len(node)
        children = node.values()
    else:
        count = 0
        children = node
    # Many scalars (a long array, a wide object) are passed over in C with one look at their
    # types; a few are cheaper to look at one by one.
    if len(children) > 4 and _LOOK_CLOSER.isdisjoint(map(type, children)):
        return count
    for child in children:
        kind = type(child)
        if kind is dict or kind is list:
            inner = _members(child, depth + 1)
            if inner < 0:
                return -1
            count += inner
        elif kind is float and not -_INT64_FLOAT < child < _INT64_FLOAT:
            return -1
    return count


def _no_duplicate_keys(text: str | bytes, value: Any, colons: int) -> bool:
    """Whether no key of ``text`` is written twice, when its colons outnumber the members.

    Every key in JSON text is followed by a colon, and a colon outside a string follows a key;
    so when the text's colons are as many as the value's members (the caller's test), no key
    was written twice. Otherwise colons inside strings are the usual cause (``https://``,
    ``12:00``): orjson writes the value back with every colon of a string as it is, so without
    a duplicate the text and that writing have the same colons, and with one the text has more.
    That holds unless the text wrote a colon as an escape (``\\u003a``), which only the
    reference path can judge.
    """
    escaped = "u003" in text if isinstance(text, str) else b"u003" in text
    return not escaped and colons == orjson.dumps(value).count(b":")


def reference_loads(text: str | bytes, *, allow_duplicate_keys: bool = False) -> Any:
    """Decode wire JSON strictly, with the standard library's decoder: the reference path.

    Refused, with a :class:`WireJSONError` whose ``code`` says why: text that is not JSON
    (``not_json``), a JSON value followed by more text (``trailing_data``), bytes that are not
    UTF-8 (``not_utf8``), ``NaN`` and infinities, lone surrogate escapes (``lone_surrogate``),
    duplicate object keys unless allowed (``duplicate_key``), nesting deeper than
    :data:`MAX_JSON_DEPTH` (``too_deep``), and numbers too large to represent (``bad_number``).

    The checks cost little on ordinary input: the depth walk runs only when the text has more
    opening brackets than the depth limit, and the surrogate walk only when the text contains a
    surrogate escape.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WireJSONError("not UTF-8", "not_utf8", exc.start) from None
    decoder = _LENIENT_KEYS if allow_duplicate_keys else _STRICT_KEYS
    try:
        value, end = decoder.raw_decode(text, _skip_whitespace(text, 0))
    except WireJSONError:
        raise
    except json.JSONDecodeError as exc:
        raise WireJSONError(f"not JSON: {exc.msg}", "not_json", exc.pos) from None
    except RecursionError:
        raise WireJSONError(
            f"JSON nested deeper than {MAX_JSON_DEPTH} levels", "too_deep"
        ) from None
    except ValueError as exc:
        raise WireJSONError(f"bad number or value: {exc}", "bad_number") from None
    end = _skip_whitespace(text, end)
    if end != len(text):
        raise WireJSONError("text after the JSON value", "trailing_data", end)
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH:
        _check_depth(value, MAX_JSON_DEPTH)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise WireJSONError("lone surrogate in the text", "lone_surrogate", exc.start) from None
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        _check_strings(value)
    return value


def _check_strings(value: Any) -> None:
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            _check_text(node)
        elif isinstance(node, dict):
            for key, child in node.items():
                _check_text(key)
                stack.append(child)
        elif isinstance(node, list):
            stack.extend(node)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise WireJSONError("lone surrogate in a string", "lone_surrogate") from exc


def aeson_string_size(text: str) -> int:
    """Bytes of ``text`` as a JSON string written by the core (aeson), without the quotes.

    ``"``, ``\\``, ``\\n``, ``\\r`` and ``\\t`` take two bytes, other characters below U+0020
    six bytes, and every other character its UTF-8 length.
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    size += text.count('"') + text.count("\\")
    if _CONTROL.search(text) is not None:
        size += text.count("\n") + text.count("\r") + text.count("\t")
        size += 5 * len(_OTHER_CONTROL.findall(text))
    return size


_CONTROL = re.compile(r"[\x00-\x1f]")
_OTHER_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


#: Characters of a shared message ID or a member ID in the core's message JSON: 12 random
#: bytes, base64-encoded when created (16 characters, ``encodedRandomBytes``), and base64-encoded
#: again when written to JSON (``strEncode``), which gives 24 characters with padding.
_SHARED_ID_CHARS: Final = 24

#: Longest ``UTCTime`` aeson writes: ``YYYY-MM-DDTHH:MM:SS`` + ``.`` + up to 12 digits of
#: fraction + ``Z`` (aeson drops trailing zero groups, so most stamps are shorter).
_MAX_UTC_TIME_CHARS: Final = 33

# The quote a reply carries in its x.msg.new params, as the core builds it (Protocol.hs
# ``MsgContainer`` MCQuote -> "quote": QuotedMsg {msgRef, content}; MsgRef {msgId, sentAt,
# sent, memberId}; the quoted text content is the quoted item's whole MsgContent when both
# messages are text, ``quoteContent`` in Library/Internal.hs). The placeholders are replaced by
# their lengths below; the quoted text itself is measured with :func:`aeson_string_size`.
_QUOTE_DIRECT: Final = (
    ',"quote":{"msgRef":{"msgId":"' + "I" * _SHARED_ID_CHARS + '","sentAt":"","sent":false},'
    '"content":{"type":"text","text":""}}'
)
_QUOTE_GROUP_MEMBER: Final = ',"memberId":"' + "M" * _SHARED_ID_CHARS + '"'


def chat_message_size(
    text: str,
    *,
    envelope_bytes: int = MSG_NEW_ENVELOPE_BYTES,
    quoted_text: str | None = None,
    in_group: bool = False,
    quote_sent_at: str | None = None,
) -> int:
    """Encoded size of a text chat message as the core counts it against 15,602 bytes.

    The model: the ``x.msg.new`` envelope measured with the core (``envelope_bytes``, which
    includes the quotes of the text) plus the text written as aeson writes a string. A reply
    that quotes a text message (``quoted_text``) also carries the quote: the message reference
    and the content object (117 bytes plus the quoted item's time; 38 more in a group, where the
    reference names the quoted member) and the quoted text, whole, written as aeson writes a
    string. The quoted item's time (``quote_sent_at``, the string aeson writes) counts at its
    longest, 33 characters, unless given, so the model never undercounts: the fixed part is then
    150 bytes in a direct chat and 188 in a group.

    The core refuses a message when this size exceeds ``limits.MAX_CHAT_MESSAGE_BYTES``
    (``encodeChatMessage`` in Protocol.hs: ``B.length body > maxSize``).
    """
    size = envelope_bytes + aeson_string_size(text)
    if quoted_text is not None:
        stamp = _MAX_UTC_TIME_CHARS if quote_sent_at is None else aeson_string_size(quote_sent_at)
        size += len(_QUOTE_DIRECT) + stamp + aeson_string_size(quoted_text)
        if in_group:
            size += len(_QUOTE_GROUP_MEMBER)
    return size


def json_size(value: Any) -> int:
    """UTF-8 bytes of ``value`` encoded with :func:`dumps`."""
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    return len(dumps(value).encode("utf-8"))


def service_padded_size(value: Mapping[str, Any] | str, *, extra_framing_bytes: int = 0) -> int:
    """Bytes a service request or response takes before padding, framing included.

    The JSON (``value``: the text as the core writes it, or a value encoded with :func:`dumps`)
    plus ``_framing.SERVICE_PAD_FRAMING_BYTES`` (the 2-byte length of ``C.pad`` and the 1-byte
    agent message tag) plus ``extra_framing_bytes`` (a request's reply queue address and
    signature field). The agent pads this to 11,106 bytes (``limits.SERVICE_PADDED_BYTES``); a
    longer one fails. ``simplex_protocols.rpc.check_service_size`` applies the whole rule.
    """
    return json_size(value) + SERVICE_PAD_FRAMING_BYTES + extra_framing_bytes
