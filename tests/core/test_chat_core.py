"""ChatCore over a scripted backend: commands, concurrency, events, loss and reconnection."""

from __future__ import annotations

import random
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from core_fakes import FakeBackend

from simplex_protocols.core import ChatCore
from simplex_protocols.errors import (
    BackendUnavailableError,
    CallTimeoutError,
    CoreConnectionError,
    CoreError,
    EventOverflowError,
    UnexpectedResponseError,
)

pytestmark = pytest.mark.anyio

USER = {"type": "activeUser", "user": {"userId": 1, "localDisplayName": "bot"}}


def answer_user(cmd: str) -> dict[str, Any] | None:
    return USER if cmd == "/user" else None


async def test_command_returns_the_response_object_unchanged() -> None:
    backend = FakeBackend(responder=answer_user)
    async with ChatCore(backend) as core:
        with anyio.fail_after(5):
            resp = await core.command("/user")
    assert resp is USER
    assert backend.sent == [{"corrId": "1", "cmd": "/user"}]


async def test_chat_cmd_error_raises_core_error_keeping_the_chat_error() -> None:
    chat_error = {"type": "error", "errorType": {"type": "noActiveUser"}}
    backend = FakeBackend(responder=lambda cmd: {"type": "chatCmdError", "chatError": chat_error})
    async with ChatCore(backend) as core:
        with anyio.fail_after(5), pytest.raises(CoreError) as info:
            await core.command("/user")
    assert info.value.chat_error is chat_error
    assert info.value.error_type == "noActiveUser"
    assert info.value.chain == ["error", "noActiveUser"]
    assert info.value.command == "/user"
    assert "noActiveUser" in str(info.value)


async def test_chat_error_response_raises_core_error() -> None:
    chat_error = {"type": "errorStore", "storeError": {"type": "groupNotFound", "groupId": 13}}
    backend = FakeBackend(responder=lambda cmd: {"type": "chatError", "chatError": chat_error})
    async with ChatCore(backend) as core:
        with anyio.fail_after(5), pytest.raises(CoreError) as info:
            await core.command("/_info #13")
    assert info.value.chain == ["errorStore", "groupNotFound"]


async def test_hundred_commands_in_flight_answered_out_of_order() -> None:
    backend = FakeBackend()
    results: dict[int, dict[str, Any]] = {}
    async with ChatCore(backend) as core:

        async def run(i: int) -> None:
            results[i] = await core.command(f"/_info @{i}")

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for i in range(1, 101):
                    tg.start_soon(run, i)
                sent = await backend.wait_sent(100)
                order = list(sent)
                random.Random(7).shuffle(order)
                for frame in order:
                    contact_id = int(frame["cmd"].split("@")[1])
                    backend.respond(
                        frame["corrId"], {"type": "contactInfo", "contactId": contact_id}
                    )
    assert {i: r["contactId"] for i, r in results.items()} == {i: i for i in range(1, 101)}
    assert len({f["corrId"] for f in backend.sent}) == 100


async def test_injected_corr_ids_are_used_on_the_wire() -> None:
    ids = iter(["req-a", "req-b"])
    backend = FakeBackend(responder=answer_user)
    async with ChatCore(backend, corr_ids=lambda: next(ids)) as core:
        with anyio.fail_after(5):
            await core.command("/user")
            await core.command("/user")
    assert [f["corrId"] for f in backend.sent] == ["req-a", "req-b"]


async def test_several_subscribers_each_see_every_event_in_order() -> None:
    backend = FakeBackend()
    events = [{"type": "newChatItems", "n": i} for i in range(20)]
    async with ChatCore(backend) as core:
        early = core.events()
        backend.event({"type": "before-the-late-subscriber"})
        with anyio.fail_after(5):
            assert (await early.__anext__())["type"] == "before-the-late-subscriber"
            late = core.events()
            for ev in events:
                backend.event(ev)
            got_early = [await early.__anext__() for _ in events]
            got_late = [await late.__anext__() for _ in events]
        await early.aclose()
        await late.aclose()
    assert got_early == events
    assert got_late == events
    assert all(a is b for a, b in zip(got_early, events, strict=True))


async def test_unknown_event_types_and_fields_pass_through() -> None:
    backend = FakeBackend()
    odd = {
        "type": "eventFromTheFuture",
        "user": {"userId": 1, "newField": True},
        "chatItems": [{"chatItem": {"meta": {"itemStatus": {"type": "rcvSomethingNew"}}}}],
    }
    async with ChatCore(backend) as core, core.events() as sub:
        backend.event(odd)
        with anyio.fail_after(5):
            assert await sub.__anext__() is odd


async def test_events_and_responses_interleave_without_confusion() -> None:
    backend = FakeBackend()
    async with ChatCore(backend) as core, core.events() as sub:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                result: list[dict[str, Any]] = []

                async def run() -> None:
                    result.append(await core.command("/user"))

                tg.start_soon(run)
                [frame] = await backend.wait_sent(1)
                backend.event({"type": "contactConnected"})
                backend.respond(frame["corrId"], USER)
                backend.event({"type": "contactSndReady"})
            assert result == [USER]
            assert [(await sub.__anext__())["type"] for _ in range(2)] == [
                "contactConnected",
                "contactSndReady",
            ]


async def test_slow_subscriber_overflows_without_losing_events_silently() -> None:
    backend = FakeBackend(responder=answer_user)
    async with ChatCore(backend) as core:
        slow = core.events(buffer=3)
        fast = core.events()
        for i in range(5):
            backend.event({"type": "newChatItems", "n": i})
        with anyio.fail_after(5):
            got_fast = [(await fast.__anext__())["n"] for _ in range(5)]
            got_slow = [(await slow.__anext__())["n"] for _ in range(3)]
            with pytest.raises(EventOverflowError) as info:
                await slow.__anext__()
            with pytest.raises(StopAsyncIteration):
                await slow.__anext__()
            assert await core.command("/user") is USER  # the core itself is unaffected
        assert got_fast == [0, 1, 2, 3, 4]
        assert got_slow == [0, 1, 2]
        assert info.value.buffer_size == 3
        await fast.aclose()


async def test_dropped_connection_fails_every_command_in_flight_and_ends_subscriptions() -> None:
    backend = FakeBackend()
    outcomes: list[BaseException] = []
    async with ChatCore(backend) as core:
        sub = core.events()
        backend.event({"type": "beforeTheDrop"})

        async def run(i: int) -> None:
            try:
                await core.command(f"/_info @{i}")
            except CoreConnectionError as exc:
                outcomes.append(exc)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for i in range(1, 11):
                    tg.start_soon(run, i)
                await backend.wait_sent(10)
                backend.drop()
            assert len(outcomes) == 10
            assert (await sub.__anext__())["type"] == "beforeTheDrop"
            with pytest.raises(CoreConnectionError):
                await sub.__anext__()
            with pytest.raises(StopAsyncIteration):
                await sub.__anext__()
        assert not core.connected
        with pytest.raises(CoreConnectionError, match="reconnect"):
            await core.command("/user")
    assert len({id(e) for e in outcomes}) == 10  # each caller gets its own exception


async def test_explicit_reconnection_after_a_drop() -> None:
    backend = FakeBackend(responder=answer_user)
    async with ChatCore(backend) as core:
        with anyio.fail_after(5):
            assert await core.command("/user") is USER
            backend.drop()
            while core.connected:
                await anyio.lowlevel.checkpoint()
            await core.reconnect()
            assert core.connected
            sub = core.events()
            backend.event({"type": "afterReconnect"})
            assert (await sub.__anext__())["type"] == "afterReconnect"
            assert await core.command("/user") is USER
    assert backend.connects == 2
    assert [f["corrId"] for f in backend.sent] == ["1", "2"]


async def test_reconnect_while_connected_fails_commands_in_flight() -> None:
    backend = FakeBackend()
    failures: list[BaseException] = []
    async with ChatCore(backend) as core:
        sub = core.events()

        async def run() -> None:
            try:
                await core.command("/_get chats 1")
            except CoreConnectionError as exc:
                failures.append(exc)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await backend.wait_sent(1)
                await core.reconnect()
            with pytest.raises(CoreConnectionError):
                await sub.__anext__()
        assert len(failures) == 1
        assert core.connected
    assert backend.connects == 2


async def test_failed_reconnect_leaves_the_core_disconnected_and_retryable() -> None:
    backend = FakeBackend(responder=answer_user)
    async with ChatCore(backend) as core:
        with anyio.fail_after(5):
            backend.drop()
            while core.connected:
                await anyio.lowlevel.checkpoint()
            backend.connect_error = CoreConnectionError("still down")
            with pytest.raises(CoreConnectionError, match="still down"):
                await core.reconnect()
            assert not core.connected
            backend.connect_error = None
            await core.reconnect()
            assert await core.command("/user") is USER


async def test_timeout_raises_and_a_late_response_is_discarded() -> None:
    backend = FakeBackend()
    async with ChatCore(backend) as core:
        with anyio.fail_after(5):
            with pytest.raises(CallTimeoutError) as info:
                await core.command("/_service_request 1 x {}", timeout=0)
            assert info.value.timeout == 0
            backend.respond("1", {"type": "serviceResponse"})
            backend.responder = answer_user
            assert await core.command("/user") is USER


async def test_malformed_response_frame_fails_only_its_command() -> None:
    backend = FakeBackend()
    async with ChatCore(backend) as core:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                errors: list[BaseException] = []

                async def run() -> None:
                    try:
                        await core.command("/user")
                    except UnexpectedResponseError as exc:
                        errors.append(exc)

                tg.start_soon(run)
                [frame] = await backend.wait_sent(1)
                backend.push({"corrId": frame["corrId"], "oops": True})
            assert [getattr(e, "code", None) for e in errors] == ["malformed_frame"]
            backend.push("not even an object")  # logged, not fatal
            backend.responder = answer_user
            assert await core.command("/user") is USER


async def test_close_fails_commands_and_ends_subscriptions_cleanly() -> None:
    backend = FakeBackend()
    failures: list[BaseException] = []
    async with ChatCore(backend) as core:
        sub = core.events()
        backend.event({"type": "one"})

        async def run() -> None:
            try:
                await core.command("/_stop")
            except CoreConnectionError as exc:
                failures.append(exc)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                await backend.wait_sent(1)
                await anyio.wait_all_tasks_blocked()  # the reader has delivered "one"
                await core.aclose()
            assert [ev["type"] async for ev in sub] == ["one"]
        with pytest.raises(CoreConnectionError):
            core.events()
        with pytest.raises(CoreConnectionError, match="closed"):
            await core.command("/user")
    assert len(failures) == 1
    assert backend.closes >= 1


async def test_command_outside_async_with_is_refused() -> None:
    core = ChatCore(FakeBackend())
    with pytest.raises(CoreConnectionError, match="async with"):
        await core.command("/user")


async def test_connect_errors_propagate_from_async_with() -> None:
    backend = FakeBackend()
    backend.connect_error = BackendUnavailableError("no libsimplex here")
    with anyio.fail_after(5), pytest.raises(BackendUnavailableError):
        async with ChatCore(backend):
            pass


async def test_an_error_in_the_block_propagates_unwrapped() -> None:
    with anyio.fail_after(5), pytest.raises(KeyError):
        async with ChatCore(FakeBackend()):
            raise KeyError("mine")


async def test_a_backend_breaking_its_contract_counts_as_a_lost_connection() -> None:
    backend = FakeBackend()
    async with ChatCore(backend) as core:
        sub = core.events()
        backend.push(RuntimeError("backend bug"))
        with anyio.fail_after(5), pytest.raises(CoreConnectionError, match="backend bug"):
            await sub.__anext__()
        assert not core.connected
