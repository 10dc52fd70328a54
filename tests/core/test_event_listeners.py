"""ChatCore listeners: events handed to a function as they arrive (``core.listen``)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from core_fakes import FakeBackend

from simplex_protocols.core import ChatCore
from simplex_protocols.errors import CoreConnectionError

pytestmark = pytest.mark.anyio


async def test_a_listener_gets_every_event_of_its_types_in_order_with_no_buffer() -> None:
    backend = FakeBackend()
    got: list[dict[str, Any]] = []
    async with ChatCore(backend) as core:
        count = 5000  # far more than a subscription's default buffer holds
        async with core.listen(got.append, types=["serviceRequest"]):
            sent = [
                {"type": "serviceRequest" if n % 2 else "newChatItems", "n": n}
                for n in range(count)
            ]
            for event in sent:
                backend.event(event)
            with anyio.fail_after(5):
                await anyio.wait_all_tasks_blocked()
    assert got == [e for e in sent if e["type"] == "serviceRequest"]
    assert all(a is b for a, b in zip(got, sent[1::2], strict=True))  # not copies


async def test_a_listener_of_every_type_sees_events_without_a_type() -> None:
    backend = FakeBackend()
    got: list[dict[str, Any]] = []
    typed: list[dict[str, Any]] = []
    async with ChatCore(backend) as core:
        every, some = core.listen(got.append), core.listen(typed.append, types=["x"])
        backend.event({"no": "type"})
        backend.event({"type": "x"})
        with anyio.fail_after(5):
            await anyio.wait_all_tasks_blocked()
        await every.aclose()
        await some.aclose()
    assert got == [{"no": "type"}, {"type": "x"}]
    assert typed == [{"type": "x"}]


async def test_a_failing_handler_ends_its_listener_with_the_error_and_nothing_else() -> None:
    backend = FakeBackend()
    seen: list[int] = []

    def handler(event: dict[str, Any]) -> None:
        seen.append(event["n"])
        if event["n"] == 1:
            raise ValueError("the handler's bug")

    async with ChatCore(backend) as core, core.events() as others:
        listener = core.listen(handler)
        for n in range(3):
            backend.event({"type": "t", "n": n})
        with anyio.fail_after(5):
            with pytest.raises(ValueError, match="the handler's bug"):
                await listener.wait()
            # The core read on: the subscription has all three.
            assert [(await others.__anext__())["n"] for _ in range(3)] == [0, 1, 2]
        assert listener.ended
        assert core.connected
    assert seen == [0, 1]  # nothing after the error


async def test_a_lost_connection_ends_a_listener_with_the_connection_error() -> None:
    backend = FakeBackend()
    got: list[dict[str, Any]] = []
    async with ChatCore(backend) as core:
        listener = core.listen(got.append)
        backend.event({"type": "beforeTheDrop"})
        backend.drop()
        with anyio.fail_after(5), pytest.raises(CoreConnectionError, match="dropped"):
            await listener.wait()
    assert got == [{"type": "beforeTheDrop"}]


async def test_closing_ends_a_listener_quietly_and_it_takes_nothing_after() -> None:
    backend = FakeBackend()
    got: list[dict[str, Any]] = []
    async with ChatCore(backend) as core:
        async with core.listen(got.append) as listener:
            backend.event({"type": "a"})
            with anyio.fail_after(5):
                await anyio.wait_all_tasks_blocked()
        await listener.wait()  # returns: closed, not failed
        backend.event({"type": "b"})
        with anyio.fail_after(5):
            await anyio.wait_all_tasks_blocked()
        closing = core.listen(got.append)
    with anyio.fail_after(5):
        await closing.wait()  # the core's close ends it
    assert got == [{"type": "a"}]
    with pytest.raises(CoreConnectionError, match="closed"):
        core.listen(got.append)


async def test_listen_refuses_one_string_for_types() -> None:
    async with ChatCore(FakeBackend()) as core:
        with pytest.raises(TypeError, match="not one string"):
            core.listen(print, types="serviceRequest")
