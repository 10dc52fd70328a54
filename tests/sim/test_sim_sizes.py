"""A text over the size limit is refused before the core reads its Markdown or its mentions."""

from __future__ import annotations

from typing import Any

import pytest
from simkit import World

from simplex_protocols._wire import dumps
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES
from simplex_protocols.sim import _records

pytestmark = pytest.mark.anyio


class _CountingMarkdown:
    """The simulator's Markdown, counting the texts over the limit it is asked to read."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.long_texts = 0

    def parse(self, text: str) -> Any:
        if len(text.encode("utf-8")) > MAX_CHAT_MESSAGE_BYTES:
            self.long_texts += 1
        return self.inner.parse(text)


async def test_a_long_text_with_mentions_is_refused_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    async with World() as w:
        alice = await w.user("alice", display_name="alice")
        bob = await w.user("bob", display_name="bob")
        ids = await w.group(alice, [bob], name="team")
        members = (await alice.cmd(f"/_members #{ids['alice']}"))["group"]["members"]
        bob_member = next(m for m in members if m["memberProfile"]["displayName"] == "bob")
        counting = _CountingMarkdown(_records.MARKDOWN)
        monkeypatch.setattr(_records, "MARKDOWN", counting)
        text = "@bob " + "*x* " * (MAX_CHAT_MESSAGE_BYTES // 4 + 10)
        message = {
            "msgContent": {"type": "text", "text": text},
            "mentions": {"bob": bob_member["groupMemberId"]},
        }
        failed = await alice.error(f"/_send #{ids['alice']} json " + _dumps([message]))
        assert failed["storeError"]["type"] == "largeMsg"
        sent = await alice.send(f"#{ids['alice']}", "short")
        edit = await alice.error(f"/_update item #{ids['alice']} {sent} text {text}")
        assert edit["storeError"]["type"] == "largeMsg"
        assert counting.long_texts == 0


def _dumps(value: Any) -> str:
    return dumps(value)
