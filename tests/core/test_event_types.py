"""ChatCore subscriptions that take only some event types (``core.events(types=...)``)."""

from __future__ import annotations

import anyio
import pytest
from core_fakes import FakeBackend

from simplex_protocols.core import ChatCore
from simplex_protocols.errors import EventOverflowError

pytestmark = pytest.mark.anyio


async def test_a_typed_subscription_sees_only_its_types_in_order() -> None:
    backend = FakeBackend()
    async with ChatCore(backend) as core:
        typed = core.events(types=["serviceRequest", "contactConnected"])
        every = core.events()
        kinds = ["newChatItems", "serviceRequest", "chatItemsStatusesUpdated", "contactConnected"]
        sent = [{"type": kind, "n": n} for n, kind in enumerate(kinds * 3)]
        for event in sent:
            backend.event(event)
        with anyio.fail_after(5):
            got_every = [await every.__anext__() for _ in sent]
            got_typed = [await typed.__anext__() for _ in range(6)]
        await typed.aclose()
        await every.aclose()
    assert got_every == sent
    assert got_typed == [e for e in sent if e["type"] in ("serviceRequest", "contactConnected")]
    assert all(a is b for a, b in zip(got_every, sent, strict=True))


async def test_events_of_other_types_do_not_fill_a_typed_buffer() -> None:
    backend = FakeBackend()
    async with ChatCore(backend) as core:
        typed = core.events(buffer=2, types={"serviceRequest"})
        for n in range(50):
            backend.event({"type": "newChatItems", "n": n})
        backend.event({"type": "serviceRequest", "n": 50})
        backend.event({"type": "serviceRequest", "n": 51})
        backend.event({"type": "serviceRequest", "n": 52})
        with anyio.fail_after(5):
            await anyio.wait_all_tasks_blocked()  # every frame was dispatched
            got = [(await typed.__anext__())["n"] for _ in range(2)]
            # The third one of its own type is one more than its buffer holds.
            with pytest.raises(EventOverflowError):
                await typed.__anext__()
    assert got == [50, 51]


async def test_events_without_a_type_reach_only_untyped_subscriptions() -> None:
    backend = FakeBackend()
    async with ChatCore(backend) as core, core.events() as every:
        typed = core.events(types=["newChatItems"])
        backend.event({"no": "type"})
        backend.event({"type": "newChatItems"})
        with anyio.fail_after(5):
            assert await every.__anext__() == {"no": "type"}
            assert await typed.__anext__() == {"type": "newChatItems"}
        await typed.aclose()


async def test_types_must_be_a_collection_not_one_string() -> None:
    async with ChatCore(FakeBackend()) as core:
        with pytest.raises(TypeError):
            core.events(types="newChatItems")
