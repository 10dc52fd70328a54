"""The requester's private key never survives in an error, a log line or a repr (issue 13,
item 5): ``sign_key=<key>`` is part of the ``/_service_request`` command, and every error on
the signing path (the core's refusal, the mapped transport error, a timeout, an unexpected
response) keeps the command with the key's text replaced."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from transkit import WAIT_S, EchoBinding, Net, rpc_request

from simplex_protocols.core import ChatAPI
from simplex_protocols.errors import (
    CallTimeoutError,
    CoreError,
    ServiceTransportError,
    SimplexError,
    UnexpectedResponseError,
)
from simplex_protocols.rpc import SigningKey
from simplex_protocols.transports import ServiceRPCRequester, ServiceRPCResponder

pytestmark = pytest.mark.anyio


def chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and every error it was raised from or while handling."""
    out: list[BaseException] = []
    node: BaseException | None = exc
    while node is not None and node not in out:
        out.append(node)
        node = node.__cause__ or node.__context__
    return out


def assert_no_key(exc: BaseException, secret: str, logs: str) -> None:
    for err in chain(exc):
        assert secret not in repr(vars(err)), (type(err).__name__, vars(err))
        assert secret not in str(err) and secret not in repr(err)
        assert secret not in repr(err.args)
        assert secret.encode() not in pickle.dumps(err), type(err).__name__
    assert secret not in logs


async def test_the_signing_key_is_in_no_error_of_the_signing_path(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with Net() as net:
        alice = await net.peer("alice", peer_type="agent")
        bot = await net.bot("bot", service_requests=True)
        link = await net.address(bot)
        await net.start(ServiceRPCResponder(bot.core, [EchoBinding()], clock=net.clock).serve)
        key = SigningKey.generate(net.network.random.randbytes)
        secret = key.to_sign_key()
        requester = ServiceRPCRequester(alice.core, clock=net.clock)
        caught: list[SimplexError] = []

        async def attempt(target: str, **options: Any) -> None:
            with anyio.fail_after(WAIT_S):
                try:
                    await requester.request(
                        target, "echo", rpc_request(1), signing_key=key, **options
                    )
                except SimplexError as exc:
                    caught.append(exc)

        # An address without ratchet keys: the core's A_SERVICE notDRAddress, mapped. (A
        # signature the responder cannot verify is not reported to the requester: its agent
        # drops the request, so that case is the timeout below.)
        bare = await net.bot("bare", service_requests=True)
        await attempt(await net.address(bare, pq_ratchet=None))
        # A target the core refuses outright.
        await attempt("simplex:/contact#/?v=2&smp=nothing")
        # No answer within the timeout: the core's timeout error, mapped.
        net.network.faults.offline("bot")

        async def wait_out() -> None:
            await attempt(link, timeout_s=5)

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_out)
            for _ in range(40):
                await net.clock.advance(1)
                await anyio.lowlevel.checkpoint()
        net.network.faults.offline("bot", False)
        # ChatAPI's own path: the core's refusal of the command it built.
        try:
            await ChatAPI(alice.core).send_service_request(
                alice.user_id, "simplex:/contact#/?v=2&smp=nothing", {"x": 1}, sign_key=secret
            )
        except SimplexError as exc:
            caught.append(exc)

    kinds = {type(exc) for exc in caught}
    assert ServiceTransportError in kinds and CallTimeoutError in kinds, caught
    assert any(isinstance(e, CoreError | UnexpectedResponseError) for e in caught)
    assert len(caught) == 4
    for exc in caught:
        assert_no_key(exc, secret, caplog.text)
    # The commands are kept, the key's text replaced: the error still says what was sent.
    commands = [e.command for err in caught for e in chain(err) if isinstance(e, CoreError)]
    assert commands and all("sign_key=<redacted>" in c for c in commands if c), commands
