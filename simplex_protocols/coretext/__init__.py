"""The chat core's text rules, in one place (no I/O; the standard library and ``errors`` only).

Whatever the toolkit writes for a chat core to read, or reads as the core would, follows these
rules, each cited to the Haskell definition of simplex-chat it follows. Nothing else in the
toolkit re-implements one (docs/coretext.md).

Characters (GHC's ``Data.Char``):
    :func:`is_space` (``isSpace``, not ``str.isspace``), :func:`is_punctuation`
    (``isPunctuation``).

Display names (``Simplex.Chat.Library.Commands``, ``Simplex.Chat.Markdown``):
    :func:`mk_valid_name` (``mkValidName``), :func:`is_valid_display_name` (the core's check of
    a profile's name), :data:`MAX_DISPLAY_NAME_CHARS`, :func:`view_name` (``viewName``: how the
    core quotes a name in text and commands).

Mentions (``displayNameTextP_``; the spec's ``/_call @<member>``, CALL-CMD-4):
    :func:`format_mention`, :func:`parse_mention`, :func:`read_mention`.

Protocol names (the spec, NAME-1):
    :func:`is_protocol_name`.

Markdown (``Simplex.Chat.Markdown``: ``parseMaybeMarkdownList``, ``markdownP``):
    :class:`Markdown` (what forms a command, a mention, a link, a phone number or a code span;
    ``formattedText``), :func:`mentioned_names`, :func:`has_links`.
"""

from __future__ import annotations

from simplex_protocols._exports import publish

from ._chars import is_punctuation as is_punctuation
from ._chars import is_space as is_space
from ._markdown import FormattedText as FormattedText
from ._markdown import Markdown as Markdown
from ._markdown import SimplexLinkView as SimplexLinkView
from ._markdown import SimplexNameView as SimplexNameView
from ._markdown import has_links as has_links
from ._markdown import mentioned_names as mentioned_names
from ._mentions import format_mention as format_mention
from ._mentions import parse_mention as parse_mention
from ._mentions import read_mention as read_mention
from ._names import MAX_DISPLAY_NAME_CHARS as MAX_DISPLAY_NAME_CHARS
from ._names import is_protocol_name as is_protocol_name
from ._names import is_valid_display_name as is_valid_display_name
from ._names import mk_valid_name as mk_valid_name
from ._names import view_name as view_name

__all__ = [
    "MAX_DISPLAY_NAME_CHARS",
    "FormattedText",
    "Markdown",
    "SimplexLinkView",
    "SimplexNameView",
    "format_mention",
    "has_links",
    "is_protocol_name",
    "is_punctuation",
    "is_space",
    "is_valid_display_name",
    "mentioned_names",
    "mk_valid_name",
    "parse_mention",
    "read_mention",
    "view_name",
]

publish(globals(), __all__)
