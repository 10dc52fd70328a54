"""JSON text as the SimpleX chat core writes it, for Service RPC payloads and their sizes.

The chat core receives ``/_service_request ... <json>`` and ``/_service_response ... <json>``,
parses ``<json>`` into an aeson ``Object`` and hands the agent ``J.encode`` of it
(simplex-chat ``APISendServiceRequest``/``APISendServiceResponse``). Those bytes are what the
agent pads to 11,106 bytes and, for a signed request, what it signs. So the exact text matters
twice: for the size limit and for the signature.

aeson (2.x, default ``ordered-keymap``) writes:

- object members sorted by key, in code point order, with no whitespace;
- strings with ``"`` and ``\\`` escaped, newline, carriage return and tab as ``\\n``, ``\\r``,
  ``\\t``, every other character below U+0020 as ``\\u00xx``, and everything else as raw
  UTF-8 (no escaping of ``/``, of non-ASCII characters, or of U+2028/U+2029);
- integers in decimal; other numbers as ``Data.Scientific`` formats them: fixed notation when
  the decimal exponent is between 0 and 7 (``1.5``, ``0.25``, ``3.0``), exponent notation
  otherwise (``1.0e-2``, ``1.23456789e7``).

A Python ``float`` has lost the digits of the text it came from, so a float is written from its
shortest round-trip digits; for integral values written with an exponent (``1e3``) aeson
prints the integer while this model prints the float form. Integers are exact.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

import orjson

__all__ = ["core_encode_json"]

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(ch: str) -> str:
    short = _SHORT_ESCAPES.get(ch)
    if short is not None:
        return short
    return f"\\u{ord(ch):04x}"


def _string(text: str) -> str:
    # Fast path: most strings need no escaping at all.
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out = []
    for ch in text:
        if ch < " " or ch in '"\\':
            out.append(_escape_char(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _float(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError("NaN and infinities are not JSON")
    if value == 0:
        return "0.0"
    sign = "-" if value < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    # value == 0.<digits> * 10**e, the form of Data.Scientific.toDecimalDigits
    e = len(digits) + exponent
    if 0 <= e <= 7:
        if e == 0:
            return f"{sign}0.{digits}"
        return f"{sign}{digits[:e].ljust(e, '0')}.{digits[e:] or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}e{e - 1}"


def core_encode_json(value: Any) -> str:
    """Encode a JSON value as the chat core (aeson) writes it: sorted keys, compact.

    Args:
        value: ``dict`` (string keys), ``list``, ``str``, ``int``, ``float``, ``bool`` or
            ``None``, nested.

    Returns:
        The JSON text. Its UTF-8 bytes are what the agent pads and signs.

    Raises:
        ValueError: a float is NaN or infinite.
        TypeError: the value holds something that is not JSON, or an object key that is not a
            string.
    """
    if _plain(value, 0):
        # orjson writes what aeson writes for these values: sorted keys (code point order is
        # UTF-8 byte order), no whitespace, raw UTF-8, "\\uXXXX" in lower case for control
        # characters. Only \b and \f differ (aeson: \u0008, \u000c), and a text with either
        # goes the reference way; so does what orjson refuses (an object key that is not
        # exactly a str, an integer past 64 bits, a lone surrogate, nesting past its limit).
        try:
            fast = orjson.dumps(value, option=_FAST_OPTIONS)
        except orjson.JSONEncodeError:
            pass
        else:
            if b"\\b" not in fast and b"\\f" not in fast:
                return fast.decode()
    return reference_core_encode_json(value)


def reference_core_encode_json(value: Any) -> str:
    """:func:`core_encode_json` written out in Python, character by character: the reference
    the fast path is held to (the property tests compare the two)."""
    parts: list[str] = []
    _encode(value, parts)
    return "".join(parts)


#: The types that the fast path writes as aeson does. A float is not among them (aeson writes
#: ``1.0e-2`` where orjson writes ``0.01``), nor any subclass, tuple or other mapping.
_PLAIN_TYPES: Final = frozenset({str, int, bool, type(None), dict, list})
#: Deeper than this, the reference path judges (orjson refuses past 255 levels).
_FAST_DEPTH: Final = 64


#: Sorted keys, and a key of a ``str`` subclass refused: the reference path judges it.
_FAST_OPTIONS: Final = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS


def _plain(value: Any, depth: int) -> bool:
    """Whether ``value`` holds only :data:`_PLAIN_TYPES`, nested at most :data:`_FAST_DEPTH`
    deep.

    Object keys are left to orjson, which refuses any that is not exactly a ``str``
    (:data:`_FAST_OPTIONS`). Each container's children are looked at in C, with one set of
    their types; only children that are containers are walked.
    """
    kind = type(value)
    if kind is dict:
        children: Any = value.values()
    elif kind is list:
        children = value
    else:
        return kind in _PLAIN_TYPES
    if depth >= _FAST_DEPTH:
        return False
    kinds = set(map(type, children))
    if not kinds <= _PLAIN_TYPES:
        return False
    if dict in kinds or list in kinds:
        for child in children:
            inner = type(child)
            if (inner is dict or inner is list) and not _plain(child, depth + 1):
                return False
    return True


def _encode(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_string(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, Mapping):
        keys = list(value)
        if any(not isinstance(key, str) for key in keys):
            raise TypeError("JSON object keys must be strings")
        out.append("{")
        first = True
        for key in sorted(keys):
            if not first:
                out.append(",")
            first = False
            out.append(_string(key))
            out.append(":")
            _encode(value[key], out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _encode(item, out)
        out.append("]")
    else:
        raise TypeError(f"{type(value).__name__} is not JSON")
