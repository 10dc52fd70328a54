"""The fixture profile's names and numbers: the test tools and behaviours a bot implements to
be checked in depth (documented in ``docs/conformance-live.md``).

A bot under test that lacks a fixture gets ``UNTESTABLE`` for the checks that need it, never
``FAIL``.

MCP tools (``tools/call``):

- ``conformance_echo(text)``: the text, as one text content item.
- ``conformance_oversize(size=20000)``: a text of ``size`` characters (``x``), too large for a
  chat message and for a Service RPC response.
- ``conformance_slow(seconds)``: waits ``seconds`` of the bot's clock, then answers ``slept``.
- ``conformance_progress(steps=3)``: ``steps`` progress notifications (when the request has a
  progress token), then ``done``.
- ``conformance_needs_conversation()``: ``in a conversation``; over Service RPC the envelope
  error ``conversation_required``.
- ``conformance_input_required()``: first an ``input_required`` result asking for ``confirm``
  (a boolean); continued with the answer, ``confirmed`` or ``declined``.

A2A behaviours, chosen by the ``messageId`` prefix of the user message:

- ``tck-complete``: a task that completes at once with the artifact ``echo: <text>``.
- ``tck-message``: a message (no task) ``echo: <text>``.
- ``tck-input-required``: a task that stops in ``input-required``; the next message on the
  task completes it with the artifact ``got: <text>``.
- ``tck-stream-<n>``: a task that works, adds the artifacts ``chunk-1`` .. ``chunk-<n>`` one by
  one, then completes.
- ``tck-slow-<seconds>``: a task that works for ``seconds`` of the bot's clock, then completes.
- ``tck-oversize``: a task that completes with an artifact of 20,000 characters.

Rate limit: Service RPC requests signed with one key are limited to 5 in 60 s; the 6th gets
``rate_limited`` with ``retryAfter``.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "A2A_PREFIXES",
    "FIXTURE_OVERSIZE_CHARS",
    "FIXTURE_RATE_LIMIT",
    "MCP_TOOLS",
    "REFERENCE_NAME",
    "SLOW_PREFIX",
    "STREAM_PREFIX",
]

#: The fixture's MCP tools.
MCP_TOOLS: Final = (
    "conformance_echo",
    "conformance_oversize",
    "conformance_slow",
    "conformance_progress",
    "conformance_needs_conversation",
    "conformance_input_required",
)

#: The fixture's A2A ``messageId`` prefixes.
A2A_PREFIXES: Final = (
    "tck-complete",
    "tck-message",
    "tck-input-required",
    "tck-stream-<n>",
    "tck-slow-<seconds>",
    "tck-oversize",
)

#: ``tck-stream-<n>`` and ``tck-slow-<seconds>``, with what follows the number.
STREAM_PREFIX: Final = re.compile(r"^tck-stream-(\d{1,2})(?:-|$)")
SLOW_PREFIX: Final = re.compile(r"^tck-slow-(\d{1,4})(?:-|$)")

#: Characters of the oversize answers: over the 15,602-byte chat message and the 10,000 and
#: 11,106-byte Service RPC limits whatever the framing.
FIXTURE_OVERSIZE_CHARS: Final = 20_000

#: Service RPC requests signed with one key that the fixture admits in a window of seconds.
FIXTURE_RATE_LIMIT: Final = (5, 60.0)

#: The reference bot's display name.
REFERENCE_NAME: Final = "conformance-reference"
