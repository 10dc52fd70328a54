"""Writing Communications entries and sections, the inverse of ``_parser``."""

from __future__ import annotations

from collections.abc import Iterable

from simplex_protocols.errors import LLMsTxtError

from ._model import AddressType, CommunicationsEntry
from ._parser import PROTOCOL_NAME_RE, parse_communications_entry

__all__ = ["render_communications_entry", "render_communications_section"]

_TITLE_ESCAPES = str.maketrans({"\\": "\\\\", "[": "\\[", "]": "\\]"})
_URL_ESCAPES = str.maketrans({"\\": "\\\\", "(": "\\(", ")": "\\)", "<": "\\<"})


def _notes(entry: CommunicationsEntry) -> str:
    head = f"{entry.network} {entry.type.value} for {entry.audience.value}"
    if entry.type is AddressType.UPDATES and entry.frequency is not None:
        head += f", {entry.frequency.value}"
    for protocol in entry.protocols:
        head += f", {protocol}"
    return f"{head}. {entry.info}" if entry.info else f"{head}."


def render_communications_entry(entry: CommunicationsEntry, *, validate: bool = True) -> str:
    """Write an entry as a list item: ``- [title](url): <network> <type> for <audience>...``.

    The network, type words, audience and frequency are written as the spec writes them
    (``SimpleX``, lowercase words), protocols in their own letter case. The result parses back
    to an equal entry; an entry that would not (an empty title, a URL with a space, a protocol
    with a comma, info with a line break, ...) is refused.

    Args:
        entry: the entry.
        validate: also check the entry's link as :func:`parse_communications_entry` does.

    Returns:
        The item's line, without a line break.

    Raises:
        LLMsTxtError: the entry cannot be written so that it reads back the same; ``code`` is
            the parser's code for what is wrong, or ``not_representable``.
    """
    for protocol in entry.protocols:
        # LLMS-NOTES-5: checked here, because "mcp, a2a" would read back as two protocols.
        if PROTOCOL_NAME_RE.fullmatch(protocol) is None:
            raise LLMsTxtError(
                f"{protocol[:40]!r} is not a protocol name (letters, digits and hyphens)",
                code="bad_protocol",
                requirement="LLMS-NOTES-5",
                input_excerpt=protocol,
                line=entry.line,
            )
    title = entry.title.translate(_TITLE_ESCAPES)
    url = entry.url.translate(_URL_ESCAPES)
    text = f"- [{title}]({url}): {_notes(entry)}"
    back = parse_communications_entry(text, line=entry.line, validate=validate)
    if back != entry:
        raise LLMsTxtError(
            "the entry does not read back the same after writing it "
            "(surrounding spaces in the title or info, a frequency on a contact, ...)",
            code="not_representable",
            requirement="LLMS-ITEM-1",
            input_excerpt=text,
            line=entry.line,
        )
    return text


def render_communications_section(
    entries: Iterable[CommunicationsEntry], *, validate: bool = True
) -> str:
    """Write a whole ``## Communications`` section, ending with a line break.

    :func:`~simplex_protocols.llmstxt.parse_llms_txt` of the result gives back ``entries``.

    Raises:
        LLMsTxtError: an entry cannot be written (see :func:`render_communications_entry`).
    """
    items = [render_communications_entry(e, validate=validate) for e in entries]
    return "## Communications\n\n" + "".join(item + "\n" for item in items)
