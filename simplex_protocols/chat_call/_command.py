"""``/_call`` commands: parse and format (spec "Chat transport" > "Commands").

A command is the text of a text message::

    /_call <protocol> <request>
    /_call @<member> <protocol> <request>

"One space separates its parts." We write exactly one space. We read a run of spaces (U+0020)
as one separator, and nothing else: a tab, a newline or any other space character between the
parts is an error (ambiguity AMB-6 in ``docs/chat_call.md``). The request is one JSON object,
decoded strictly (:func:`simplex_protocols._wire.loads`); whitespace inside the object and
after it is JSON's own and is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from simplex_protocols import _wire
from simplex_protocols._frozen import slot_builder
from simplex_protocols.coretext import format_mention, is_protocol_name, is_space, read_mention
from simplex_protocols.errors import CallFormatError, CallFramingError

from ._size import check_message_size

__all__ = [
    "CALL_PREFIX",
    "CallCommand",
    "format_call_command",
    "is_call_command",
    "parse_call_command",
]

#: The command word every ``/_call`` command starts with.
CALL_PREFIX: Final = "/_call"

# The common shape, read with one regular expression: the prefix, spaces, an optional mention
# (quoted, or bare up to a space), spaces, a protocol name, spaces. Anything the expression
# does not take goes to the careful reader below, which finds and names the problem; so the
# expression may only accept texts the careful reader accepts with the same result.
_FAST: Final = re.compile(
    r"/_call (?:@('[^'\x00-\x1f\x7f]+'|[^\s'#@\x00-\x1f\x7f][^\s\x00-\x1f\x7f]*) )?"
    r"([a-z0-9-]+) (?=\{)"
)

_WIRE_CODES: Final = {
    "not_json": "request_not_json",
    "duplicate_key": "request_duplicate_key",
    "too_deep": "request_too_deep",
    "lone_surrogate": "request_lone_surrogate",
    "bad_number": "request_bad_number",
    "not_utf8": "request_not_json",
    "trailing_data": "request_trailing_text",
}


@dataclass(frozen=True, slots=True)
class CallCommand:
    """A ``/_call`` command (CALL-CMD-1).

    Attributes:
        protocol: the protocol name (``mcp``, ``a2a``, ...; NAME-1).
        request: the protocol's request message, a JSON object (CALL-CMD-2).
        member: the mentioned member's name, or ``None`` for a command without a mention
            (in a group: a broadcast; CALL-CMD-4, CALL-GRP-2).
        request_text: the request exactly as written in the command.
    """

    protocol: str
    request: Mapping[str, Any]
    member: str | None
    request_text: str


#: Builds the command of each /_call a responder parses, at half the cost of its __init__.
_new_command: Final = slot_builder(CallCommand)


def is_call_command(text: str) -> bool:
    """Whether a message's text is a ``/_call`` command, well-formed or not.

    True when the text starts with ``/_call`` followed by a space character or nothing:
    ``/_callmcp`` is another command word, and ``" /_call"`` does not start with the command.
    A bot answers such a text (CALL-BOT-1) or, when it is malformed, gets the problem from
    :func:`parse_call_command`.
    """
    if not text.startswith(CALL_PREFIX):
        return False
    return len(text) == len(CALL_PREFIX) or text[len(CALL_PREFIX)].isspace()


def _error(
    reason: str,
    code: str,
    requirement: str,
    text: str,
    position: int,
    *,
    protocol: str | None = None,
    member: str | None = None,
    request_text: str | None = None,
) -> CallFramingError:
    exc = CallFramingError(
        reason, code=code, requirement=requirement, position=position, input_excerpt=text
    )
    exc.protocol = protocol
    exc.member = member
    exc.request_text = request_text
    return exc


def _decode_request(
    text: str, start: int, protocol: str, member: str | None
) -> tuple[dict[str, Any], str]:
    request_text = text[start:]
    try:
        value = _wire.loads(request_text)
    except _wire.WireJSONError as exc:
        code = _WIRE_CODES.get(exc.code, "request_not_json")
        position = start + exc.position if exc.position is not None else start
        raise _error(
            f"the request is not acceptable JSON: {exc.reason}",
            code,
            "CALL-CMD-2",
            text,
            position,
            protocol=protocol,
            member=member,
            request_text=request_text,
        ) from None
    if not isinstance(value, dict):
        raise _error(
            f"the request is JSON but not an object ({type(value).__name__})",
            "request_not_object",
            "CALL-CMD-2",
            text,
            start,
            protocol=protocol,
            member=member,
            request_text=request_text,
        )
    return value, request_text


def parse_call_command(text: str) -> CallCommand:
    """Parse the text of a message as a ``/_call`` command (spec "Chat transport").

    Args:
        text: the whole text of the message.

    Returns:
        The command. Its ``request_text`` is the request as written.

    Raises:
        CallFramingError: the text is not a well-formed command. ``code`` says why:
            ``not_a_call`` (the text does not start with the command word), ``bad_separator``
            (a character other than U+0020 between parts; CALL-CMD-3), ``missing_protocol``,
            ``bad_protocol_name`` (NAME-1), ``bad_mention`` (CALL-CMD-4),
            ``missing_request``, ``request_not_json``, ``request_trailing_text``,
            ``request_duplicate_key``, ``request_too_deep``, ``request_lone_surrogate``,
            ``request_bad_number``, ``request_not_object`` (CALL-CMD-2). The error keeps the
            parts read before the problem (``protocol``, ``member``, ``request_text``) so a
            responder can answer with the protocol's own parse error.
    """
    match = _FAST.match(text)
    if match is not None:
        quoted_or_bare, protocol = match.group(1, 2)
        member: str | None = None
        if quoted_or_bare is not None:
            if quoted_or_bare[0] == "'":
                member = quoted_or_bare[1:-1]
                if not member or member[0] <= " " or member[0] in "#@'":
                    return _parse_slowly(text)
            elif not _bare_name_ok(quoted_or_bare):
                return _parse_slowly(text)
            else:
                member = quoted_or_bare
        request, request_text = _decode_request(text, match.end(), protocol, member)
        return _new_command(protocol, request, member, request_text)
    return _parse_slowly(text)


def _bare_name_ok(name: str) -> bool:
    # The expression stops a bare name at Python's spaces; Haskell's differ outside ASCII, and
    # a trailing punctuation character is not part of a bare name. Let the careful reader judge
    # anything unusual.
    return name.isascii() and not _is_ascii_punctuation(name[-1])


def _is_ascii_punctuation(ch: str) -> bool:
    return ch in "!\"#%&'()*,-./:;?@[\\]_{}"


def _skip_separator(text: str, i: int, what: str) -> int:
    """Skip the space at ``text[i]``: the separator is exactly one U+0020 (CALL-CMD-3; AMB-6,
    reading A)."""
    n = len(text)
    start = i
    if i < n and text[i] == " ":
        i += 1
    if i < n and text[i] == " " and i > start:
        if not text[i:].strip(" "):
            return n  # only spaces to the end: the next part is missing, not misspaced
        raise _error(
            f"one space (U+0020) separates the parts of a command; found more {what}",
            "bad_separator",
            "CALL-CMD-3",
            text,
            i,
        )
    if i < n and (text[i].isspace() or is_space(text[i])):
        raise _error(
            f"only spaces (U+0020) separate the parts of a command; found {text[i]!r} {what}",
            "bad_separator",
            "CALL-CMD-3",
            text,
            i,
        )
    if i == start and i < n:
        raise _error(f"a space is missing {what}", "bad_separator", "CALL-CMD-3", text, i)
    return i


def _parse_slowly(text: str) -> CallCommand:
    n = len(text)
    if not is_call_command(text):
        raise _error(
            "the text does not start with the command /_call", "not_a_call", "CALL-CMD-1", text, 0
        )
    i = _skip_separator(text, len(CALL_PREFIX), "after /_call")
    if i >= n or text[i] == "{":
        raise _error("the protocol name is missing", "missing_protocol", "CALL-CMD-1", text, i)
    member: str | None = None
    if text[i] == "@":
        member, end = read_mention(text, i)
        if end < n and not (text[end] == " " or text[end].isspace() or is_space(text[end])):
            raise _error("text right after the mention", "bad_mention", "CALL-CMD-4", text, end)
        i = _skip_separator(text, end, "after the mention")
        if i >= n or text[i] == "{":
            raise _error(
                "the protocol name is missing",
                "missing_protocol",
                "CALL-CMD-1",
                text,
                i,
                member=member,
            )
    end = i
    while end < n and not (text[end].isspace() or is_space(text[end])):
        end += 1
    protocol = text[i:end]
    if not is_protocol_name(protocol):
        raise _error(
            f"{protocol!r} is not a protocol name (lowercase ASCII letters, digits, hyphens)",
            "bad_protocol_name",
            "NAME-1",
            text,
            i,
            member=member,
        )
    if end >= n:
        raise _error(
            "the request is missing",
            "missing_request",
            "CALL-CMD-2",
            text,
            end,
            protocol=protocol,
            member=member,
            request_text="",
        )
    try:
        i = _skip_separator(text, end, "before the request")
    except CallFramingError as exc:
        exc.protocol = protocol
        exc.member = member
        exc.request_text = text[end:].lstrip(" ")
        raise
    if i >= n:
        raise _error(
            "the request is missing",
            "missing_request",
            "CALL-CMD-2",
            text,
            i,
            protocol=protocol,
            member=member,
            request_text="",
        )
    request, request_text = _decode_request(text, i, protocol, member)
    return CallCommand(protocol, request, member, request_text)


def format_call_command(
    protocol: str,
    request: Mapping[str, Any] | str,
    *,
    member: str | None = None,
    check_size: bool = True,
) -> str:
    """Write a ``/_call`` command, with exactly one space between its parts.

    Args:
        protocol: the protocol name (NAME-1).
        request: the request message, a JSON object: a mapping (written as compact JSON) or
            the JSON text of an object (written as given).
        member: the display name of the member to mention in a group, or ``None``. Written as
            the core writes mentions (``@name``, ``@'name with spaces'``).
        check_size: refuse a command that cannot be sent as one message (CALL-SIZE-1/2).

    Returns:
        The text of the message.

    Raises:
        CallFormatError: ``bad_protocol_name``, ``bad_member_name``, ``request_not_object``
            (a mapping that is not JSON, or a text that is not a JSON object) or
            ``bad_separator`` (request text that starts with whitespace).
        MessageTooLargeError: with ``check_size``, the message would exceed 15,602 bytes of
            encoded JSON.
    """
    if not is_protocol_name(protocol):
        raise CallFormatError(
            f"{protocol!r} is not a protocol name (lowercase ASCII letters, digits, hyphens)",
            code="bad_protocol_name",
            requirement="NAME-1",
        )
    if isinstance(request, str):
        request_text = request
        if request_text[:1] != "{":
            code = "bad_separator" if request_text[:1].isspace() else "request_not_object"
            raise CallFormatError(
                "the request text must start with the JSON object's '{'",
                code=code,
                requirement="CALL-CMD-2",
            )
        try:
            value = _wire.loads(request_text)
        except _wire.WireJSONError as exc:
            raise CallFormatError(
                f"the request text is not acceptable JSON: {exc.reason}",
                code="request_not_object",
                requirement="CALL-CMD-2",
            ) from None
        if not isinstance(value, dict):
            raise CallFormatError(
                "the request is not a JSON object",
                code="request_not_object",
                requirement="CALL-CMD-2",
            )
    else:
        if not isinstance(request, Mapping):
            raise CallFormatError(
                "the request is not a JSON object",
                code="request_not_object",
                requirement="CALL-CMD-2",
            )
        try:
            request_text = _wire.dumps(dict(request))
        except (TypeError, ValueError) as exc:
            raise CallFormatError(
                f"the request cannot be written as JSON: {exc}",
                code="request_not_object",
                requirement="CALL-CMD-2",
            ) from None
    head = CALL_PREFIX if member is None else f"{CALL_PREFIX} {format_mention(member)}"
    text = f"{head} {protocol} {request_text}"
    if check_size:
        check_message_size(text)
    return text
