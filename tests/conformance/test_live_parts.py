"""The live runner's parts: the stepped clock and its driver, the rewriting backend of the
mutants, the recorder's redaction, the check catalogue and the reproducers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from simplex_protocols.conformance._model import Profile, requirement_levels
from simplex_protocols.conformance.live import all_checks
from simplex_protocols.conformance.live._clock import SteppedClock, drive_clock
from simplex_protocols.conformance.live._context import call_text, reproducer
from simplex_protocols.conformance.live._proxy import Outgoing, Rewrite, RewritingBackend
from simplex_protocols.conformance.live._session import Recorder, until

JSON = dict[str, Any]


@pytest.mark.anyio
async def test_the_driver_moves_the_clock_only_when_everything_waits() -> None:
    clock = SteppedClock()
    order: list[str] = []
    gate = anyio.Event()

    finished = anyio.Event()

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        order.append(f"{name}@{clock.now():g}")
        if len(order) == 3:
            finished.set()

    async def busy() -> None:
        # Work that is ready to run holds time still, however long the sleeps are.
        for _ in range(50):
            await anyio.lowlevel.checkpoint()
        order.append(f"busy@{clock.now():g}")
        gate.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(sleeper, "late", 180.0)
        tg.start_soon(sleeper, "early", 30.0)
        tg.start_soon(busy)
        await gate.wait()
        tg.start_soon(drive_clock, clock)
        with anyio.fail_after(5):
            await finished.wait()
        tg.cancel_scope.cancel()
    assert order == ["busy@0", "early@30", "late@180"]


@pytest.mark.anyio
async def test_until_gives_up_at_the_deadline_of_the_clock() -> None:
    clock = SteppedClock()

    async def never() -> int:
        await anyio.Event().wait()
        return 1

    async with anyio.create_task_group() as tg:
        tg.start_soon(drive_clock, clock)
        finished, value = await until(clock, 30.0, never)
        quick = await until(clock, 30.0, seven)
        tg.cancel_scope.cancel()
    assert (finished, value) == (False, None)
    assert quick == (True, 7)
    assert clock.now() == 30.0


async def seven() -> int:
    await anyio.lowlevel.checkpoint()
    return 7


def test_a_stepped_clock_forgets_cancelled_sleeps() -> None:
    clock = SteppedClock()

    async def main() -> None:
        with anyio.move_on_after(0.01):
            await clock.sleep(10.0)
        assert clock.next_deadline() is None

    anyio.run(main)


class _FakeBackend:
    """A core that answers every command with ``{"type": "ok", "cmd": ...}``."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.frames: list[JSON] = []

    @property
    def description(self) -> str:
        return "fake"

    async def connect(self) -> None:
        return None

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        self.sent.append(str(frame["cmd"]))
        self.frames.append({"corrId": frame["corrId"], "resp": {"type": "ok", "cmd": frame["cmd"]}})
        self.frames.append({"resp": {"type": "event", "n": len(self.sent)}})

    async def receive_frame(self) -> JSON:
        # Every frame is queued by send_frame, before the test reads.
        return self.frames.pop(0)

    async def aclose(self) -> None:
        return None


class _Doubler(Rewrite):
    def outgoing(self, command: str) -> Outgoing:
        if command == "/twice":
            return Outgoing("/once", extra=["/again"])
        return Outgoing(command)

    def incoming(self, event: JSON) -> JSON | None:
        return None if event.get("n") == 2 else {**event, "seen": True}


@pytest.mark.anyio
async def test_the_rewriting_backend_hides_what_the_mutant_adds() -> None:
    inner = _FakeBackend()
    backend = RewritingBackend(inner, _Doubler(), SteppedClock())
    await backend.send_frame({"corrId": "1", "cmd": "/twice"})
    await backend.send_frame({"corrId": "2", "cmd": "/plain"})
    frames = [await backend.receive_frame() for _ in range(4)]
    assert inner.sent == ["/once", "/again", "/plain"]
    # The bot gets the responses to its own commands and the events it may see: the extra
    # command's response is swallowed and the second event dropped.
    assert frames == [
        {"corrId": "1", "resp": {"type": "ok", "cmd": "/once"}},
        {"resp": {"type": "event", "n": 1, "seen": True}},
        {"corrId": "2", "resp": {"type": "ok", "cmd": "/plain"}},
        {"resp": {"type": "event", "n": 3, "seen": True}},
    ]


def test_the_recorder_redacts_the_target_and_cuts_long_texts() -> None:
    recorder = Recorder(SteppedClock(), {"https://smp.example/a#secret": "<target>"})
    recorder.add("out", text="/_connect 1 https://smp.example/a#secret", n=1)
    recorder.add("in", text="x" * 5000, nested={"link": "https://smp.example/a#secret"})
    first, second = recorder.entries
    assert first == {"t": 0.0, "dir": "out", "text": "/_connect 1 <target>", "n": 1}
    assert len(second["text"]) == 2000 and second["textChars"] == 5000
    assert second["nested"] == {"link": "<target>"}


def test_reproducers_are_simplex_call_lines() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {
            "name": "conformance_echo",
            "arguments": {"text": "it's"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
        },
    }
    line = reproducer("@bot.simplex", "mcp", "rpc", request, signed=True)
    assert line == (
        "simplex-call @bot.simplex tools/call "
        '\'{"name":"conformance_echo","arguments":{"text":"it\'"\'"\'s"}}\' '
        "--protocol mcp --transport rpc --protocol-version 2026-07-28 --sign"
    )
    assert (
        call_text("mcp", {"id": 1}, mention_name="Acme Shop")
        == "/_call @'Acme Shop' mcp {\"id\":1}"
    )


def test_the_catalogue_is_well_formed() -> None:
    levels = requirement_levels()
    specs = all_checks()
    ids = [s.id for s in specs]
    assert len(ids) == len(set(ids))
    for spec in specs:
        assert spec.kind == "live"
        assert spec.requirements and all(r in levels for r in spec.requirements), spec.id
        assert set(spec.transports) <= {"chat", "rpc"} or spec.transports == ("-",)
        assert spec.profiles and set(spec.profiles) <= set(Profile)
        assert spec.id.split(".")[0] in ("decl", "chat", "rpc", "mcp", "a2a", "group")
        assert spec.messages >= 0
    assert sum(1 for s in specs if Profile.BLACKBOX in s.profiles) >= 40


@pytest.mark.anyio
async def test_a_bot_that_refuses_connections_is_asked_once_per_run() -> None:
    from simplex_protocols.conformance._model import LiveOptions
    from simplex_protocols.conformance.live._context import (
        CheckContext,
        GroupSetup,
        RunState,
        Untestable,
    )
    from simplex_protocols.conformance.live._registry import CHECKS
    from simplex_protocols.conformance.live._session import Identity, Session
    from simplex_protocols.rpc import SigningKey

    class Refusing:
        mentions: dict[str, str] = {}  # noqa: RUF012
        attempts = 0

        async def connect(self, identity: Identity) -> None:
            self.attempts += 1
            raise Untestable("the bot did not accept the connection within 60 s")

        async def group(self) -> GroupSetup:
            raise Untestable("no group")

    assert all_checks()  # the catalogue is registered
    clock = SteppedClock()
    key = SigningKey.generate()
    identity = Identity("A", None, 1, key)  # type: ignore[arg-type]
    session = Session(
        clock=clock,
        identities={"A": identity},
        target="@bot.simplex",
        recorder=Recorder(clock, {}),
        budget=None,
        timeout_s=30.0,
        after_final_s=1.0,
    )
    environment = Refusing()
    state = RunState()
    for _ in range(3):
        ctx = CheckContext(
            check=CHECKS[0],
            transport="chat",
            protocol="mcp",
            session=session,
            facts=None,  # type: ignore[arg-type]
            options=LiveOptions(),
            state=state,
            environment=environment,
            keys=SigningKey.generate,
        )
        with pytest.raises(Untestable, match="did not accept"):
            await ctx.caller("A")
    assert environment.attempts == 1
