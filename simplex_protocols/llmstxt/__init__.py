"""Addresses in llms.txt: the ``## Communications`` section.

"Agent protocols over SimpleX", section "Addresses in llms.txt": an llms.txt file lists
communication addresses under the heading ``## Communications``, one list item per address::

    - [Acme news](https://smp12.simplex.im/c#...): SimpleX updates for people and agents, weekly. Product news.

This package reads such a file into typed entries (never failing on the whole file: an item
that is wrong becomes a problem with its line), writes entries back, and checks that each
SimpleX entry carries the kind of link its type needs. It does no I/O; fetching llms.txt is
done elsewhere and hands the text here.

Public names:

- :func:`parse_llms_txt` → :class:`LLMsTxtDocument` (``.entries``, ``.problems``)
- :func:`parse_communications_entry` / :func:`render_communications_entry`
- :func:`render_communications_section`
- :func:`validate_entry`
- :class:`CommunicationsEntry`, :class:`CommunicationsSection`, :class:`AddressType`,
  :class:`Audience`, :class:`ChangeFrequency`, :data:`SIMPLEX_NETWORK`,
  :data:`REQUIRED_LINK_KIND`, :data:`MAX_ENTRY_LINE_CHARS`
"""

from __future__ import annotations

from simplex_protocols._exports import publish
from simplex_protocols._sitemaps import ChangeFrequency as ChangeFrequency

from ._model import MAX_ENTRY_LINE_CHARS as MAX_ENTRY_LINE_CHARS
from ._model import SIMPLEX_NETWORK as SIMPLEX_NETWORK
from ._model import AddressType as AddressType
from ._model import Audience as Audience
from ._model import CommunicationsEntry as CommunicationsEntry
from ._model import CommunicationsSection as CommunicationsSection
from ._model import LLMsTxtDocument as LLMsTxtDocument
from ._parser import REQUIRED_LINK_KIND as REQUIRED_LINK_KIND
from ._parser import parse_communications_entry as parse_communications_entry
from ._parser import parse_llms_txt as parse_llms_txt
from ._parser import validate_entry as validate_entry
from ._render import render_communications_entry as render_communications_entry
from ._render import render_communications_section as render_communications_section

__all__ = [
    "MAX_ENTRY_LINE_CHARS",
    "REQUIRED_LINK_KIND",
    "SIMPLEX_NETWORK",
    "AddressType",
    "Audience",
    "ChangeFrequency",
    "CommunicationsEntry",
    "CommunicationsSection",
    "LLMsTxtDocument",
    "parse_communications_entry",
    "parse_llms_txt",
    "render_communications_entry",
    "render_communications_section",
    "validate_entry",
]

publish(globals(), __all__)
