"""One caller across conversations and replicas: the ``SimpleX-Identity`` credential.

Two bindings (two replicas of one service: one task database, one owner scope) accept the
credential. A task created by a caller who proved key K in one conversation is read, listed,
continued and cancelled by K in another conversation at the other replica; with no credential,
with another key, or in a group it is unknown (A2A-AUTHZ-2's unknown-task answer). The SQLite
cases always run; the PostgreSQL ones need ``SIMPLEX_TEST_POSTGRES_DSN`` (``.ci/run`` starts a
server) and skip without it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.helpers import new_text_message
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from test_a2a_support import ScriptedExecutor, ask_one, call, contact, make_card, member, send

from simplex_protocols._clock import ManualClock
from simplex_protocols.bindings.a2a import (
    A2A_BINDING_URI,
    IDENTITY_PARAMETER,
    A2ABinding,
    SimplexA2ATransport,
    add_identity,
    make_identity,
    simplex_transport_producer,
)
from simplex_protocols.bot import ResponderBot
from simplex_protocols.core import ChatCore
from simplex_protocols.errors import BindingConfigError, CallFormatError, JSONRPCResponseError
from simplex_protocols.rpc import SigningKey
from simplex_protocols.sim import SimNetwork

pytestmark = pytest.mark.anyio

SCOPE = "anvil-desk"
#: make_card()'s name: the service a credential is made for.
SERVICE = "Anvil desk"
#: The bindings' clocks start at ManualClock's wall time, so credentials made at it are fresh.
NOW = int(ManualClock().wall())
K, K2 = SigningKey.generate(), SigningKey.generate()
#: Two conversations of one person: contact 17 at the first replica, contact 4 at the second.
AT_FIRST, AT_SECOND = contact(17), contact(4)
UNKNOWN_TASK = -32001


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty task database URL of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tasks.db'}"
    return str(request.getfixturevalue("postgres_url"))


def replica(database: str, **options: Any) -> A2ABinding:
    options.setdefault("owner_scope", SCOPE)
    return A2ABinding(
        ScriptedExecutor(),
        make_card(),
        database=database,
        identities=True,
        clock=ManualClock(),
        **options,
    )


def proved(request: dict[str, Any], key: SigningKey = K, **kw: Any) -> dict[str, Any]:
    return add_identity(request, key, kw.pop("service", SERVICE), kw.pop("time", NOW))


@pytest.mark.requirement("A2A-AUTHZ-2")
@pytest.mark.requirement("A2A-AUTHZ-3")
async def test_a_task_made_with_a_key_is_read_listed_continued_and_cancelled_at_another_replica(
    database: str,
) -> None:
    async with replica(database) as first, replica(database) as second:
        waiting = (await ask_one(first, proved(send("reserve an anvil")), AT_FIRST))["result"][
            "task"
        ]
        other = (await ask_one(first, proved(send("reserve a hammer", rid=2)), AT_FIRST))["result"][
            "task"
        ]
        assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"

        got = await ask_one(second, proved(call("GetTask", {"id": waiting["id"]})), AT_SECOND)
        assert got["result"]["id"] == waiting["id"]
        listed = await ask_one(second, proved(call("ListTasks", {}, rid=3)), AT_SECOND)
        assert {t["id"] for t in listed["result"]["tasks"]} == {waiting["id"], other["id"]}

        # Its context is the key's too: the answer to the question continues it there.
        answer = send("yes", rid=4, task_id=waiting["id"], context_id=waiting["contextId"])
        finished = await ask_one(second, proved(answer), AT_SECOND)
        assert finished["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

        cancelled = await ask_one(
            second, proved(call("CancelTask", {"id": other["id"]}, rid=5)), AT_SECOND
        )
        assert cancelled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
        again = await ask_one(first, proved(call("GetTask", {"id": other["id"]}, rid=6)), AT_FIRST)
        assert again["result"]["status"]["state"] == "TASK_STATE_CANCELED"


@pytest.mark.requirement("A2A-AUTHZ-2")
async def test_without_the_key_the_task_is_unknown_everywhere(database: str) -> None:
    async with replica(database) as first, replica(database) as second:
        task = (await ask_one(first, proved(send("reserve an anvil")), AT_FIRST))["result"]["task"]
        get = call("GetTask", {"id": task["id"]})
        # The same conversation without the credential is another caller: the conversation.
        assert (await ask_one(first, get, AT_FIRST))["error"]["code"] == UNKNOWN_TASK
        assert (await ask_one(second, get, AT_SECOND))["error"]["code"] == UNKNOWN_TASK
        assert (await ask_one(second, proved(get, K2), AT_SECOND))["error"]["code"] == UNKNOWN_TASK
        intruder = send("hi", rid=2, context_id=task["contextId"])
        assert (await ask_one(second, proved(intruder, K2), AT_SECOND))["error"][
            "code"
        ] == UNKNOWN_TASK
        # A task of the conversation stays the conversation's: the key does not see it.
        own = (await ask_one(second, send("reserve a file", rid=3), AT_SECOND))["result"]["task"]
        looked = await ask_one(second, proved(call("GetTask", {"id": own["id"]}, rid=4)), AT_SECOND)
        assert looked["error"]["code"] == UNKNOWN_TASK


@pytest.mark.requirement("A2A-AUTHZ-2")
async def test_replicas_with_scopes_of_their_own_share_only_the_proved_callers(
    database: str,
) -> None:
    # As ResponderBot(service=...) runs them: an owner scope per replica, one service scope.
    scopes = {"service_scope": "service:anvil-desk"}
    async with (
        replica(database, owner_scope="replica-1", **scopes) as first,
        replica(database, owner_scope="replica-2", **scopes) as second,
    ):
        task = (await ask_one(first, proved(send("reserve an anvil")), AT_FIRST))["result"]["task"]
        got = await ask_one(second, proved(call("GetTask", {"id": task["id"]})), AT_SECOND)
        assert got["result"]["id"] == task["id"]
        # Contact 17 of the first replica and contact 17 of the second are two people.
        plain = (await ask_one(first, send("reserve a file", rid=2), AT_FIRST))["result"]["task"]
        get = call("GetTask", {"id": plain["id"]}, rid=3)
        assert (await ask_one(second, get, AT_FIRST))["error"]["code"] == UNKNOWN_TASK
        assert (await ask_one(first, get, AT_FIRST))["result"]["id"] == plain["id"]
        intruder = send("hi", rid=4, context_id=plain["contextId"])
        assert (await ask_one(second, intruder, AT_FIRST))["error"]["code"] == UNKNOWN_TASK


@pytest.mark.parametrize(
    "scopes",
    [
        {"service_scope": "service:acme"},  # without a scope of the bot's own
        {"owner_scope": "same", "service_scope": "same"},
        {"owner_scope": "replica-1", "service_scope": "service|acme"},
        {"owner_scope": "replica-1", "service_scope": ""},
    ],
)
def test_scopes_that_cannot_work_are_refused(scopes: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(BindingConfigError) as refused:
        A2ABinding(
            ScriptedExecutor(),
            make_card(),
            database=tmp_path / "tasks.db",
            identities=True,
            **scopes,  # type: ignore[arg-type]
        )
    assert refused.value.code == "bad_setting"


@pytest.mark.requirement("A2A-AUTHZ-3")
@pytest.mark.parametrize(
    ("make", "code"),
    [
        # A credential copied from another request (another id) of the same caller.
        (
            lambda r: {
                **r,
                "a2a-service-parameters": {
                    **r["a2a-service-parameters"],
                    IDENTITY_PARAMETER: make_identity(K, SERVICE, NOW, {**r, "id": 99}),
                },
            },
            "bad_signature",
        ),
        (lambda r: proved(r, service="Another service"), "bad_signature"),
        (lambda r: proved(r, time=NOW - 301), "identity_expired"),
        (lambda r: proved(r, time=NOW + 301), "identity_expired"),
        (
            lambda r: {
                **r,
                "a2a-service-parameters": {
                    **r["a2a-service-parameters"],
                    IDENTITY_PARAMETER: "v1.not-a-key.1.x",
                },
            },
            "bad_base64",
        ),
        (
            lambda r: {
                **r,
                "a2a-service-parameters": {
                    **r["a2a-service-parameters"],
                    IDENTITY_PARAMETER: "v2.a.b.c",
                },
            },
            "bad_identity",
        ),
    ],
    ids=["another-request", "another-service", "too-old", "too-new", "bad-key", "bad-version"],
)
async def test_a_credential_that_does_not_hold_is_refused_and_nothing_is_done(
    tmp_path: Path, make: Any, code: str
) -> None:
    executor = ScriptedExecutor()
    async with A2ABinding(
        executor,
        make_card(),
        database=f"sqlite:///{tmp_path / 'tasks.db'}",
        identities=True,
        clock=ManualClock(),
    ) as binding:
        answer = await ask_one(binding, make(send("reserve an anvil")), AT_FIRST)
        assert answer["error"]["code"] == -32600
        # A2A 1.0's error details: a google.rpc.ErrorInfo whose metadata names the code.
        [info] = answer["error"]["data"]
        assert info["reason"] == "INVALID_REQUEST" and info["metadata"] == {"code": code}
        assert "The SimpleX-Identity credential is refused" in answer["error"]["message"]
        assert executor.callers == []
        # The window is the bot's clock: the same credential is good at its own time.
        if code == "identity_expired":
            return
        listed = await ask_one(binding, proved(call("ListTasks", {}, rid=2)), AT_FIRST)
        assert listed["result"]["tasks"] == []


@pytest.mark.requirement("A2A-AUTHZ-4")
async def test_in_a_group_the_credential_is_not_used(database: str) -> None:
    async with replica(database) as first, replica(database) as second:
        in_group = member(5, 2)
        task = (await ask_one(first, proved(send("reserve an anvil")), in_group))["result"]["task"]
        get = call("GetTask", {"id": task["id"]}, rid=2)
        # The member owns it (AMB-24, reading A), not the key.
        assert (await ask_one(first, get, in_group))["result"]["id"] == task["id"]
        assert (await ask_one(second, proved(get), AT_SECOND))["error"]["code"] == UNKNOWN_TASK


async def test_the_card_declares_the_identity_as_an_optional_scheme(tmp_path: Path) -> None:
    async with (
        replica(f"sqlite:///{tmp_path / 'a.db'}") as with_identities,
        A2ABinding(ScriptedExecutor(), make_card()) as without,
    ):
        card = with_identities.agent_card
        scheme = card.security_schemes["simplexIdentity"].api_key_security_scheme
        assert (scheme.location, scheme.name) == ("header", IDENTITY_PARAMETER)
        requirements = [dict(r.schemes) for r in card.security_requirements]
        assert requirements[0] == {} and list(requirements[1]) == ["simplexIdentity"]
        assert "simplexIdentity" not in without.agent_card.security_schemes
        # A binding without identities takes the parameter as any other header: the caller
        # stays the conversation.
        task = (await ask_one(without, proved(send("reserve an anvil")), AT_FIRST))["result"]
        got = await ask_one(without, call("GetTask", {"id": task["task"]["id"]}, rid=2), AT_FIRST)
        assert got["result"]["id"] == task["task"]["id"]


# ---------------------------------------------------------------- the SDK client, end to end


@contextlib.asynccontextmanager
async def two_replicas(tmp_path: Path) -> AsyncIterator[tuple[SimNetwork, list[ResponderBot]]]:
    network = SimNetwork(seed=21, clock=ManualClock())
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    bots = [
        ResponderBot(
            display_name=f"Anvil desk {n}",
            a2a=A2ABinding(
                ScriptedExecutor(),
                make_card(streaming=False),
                database=url,
                owner_scope=SCOPE,
                identities=True,
                clock=network.clock,
            ),
            serves=["agent"],
            transports=("chat", "rpc"),
            data_dir=tmp_path / f"desk{n}",
            shutdown_grace_s=0.5,
            clock=network.clock,
        )
        for n in (1, 2)
    ]
    network.add_user("you", display_name="you", peer_type="agent")
    async with bots[0].serving(network.backend("desk1")), bots[1].serving(network.backend("desk2")):
        yield network, bots


def reserve() -> SendMessageRequest:
    return SendMessageRequest(
        message=new_text_message("reserve an anvil", role=Role.ROLE_USER),
        configuration=SendMessageConfiguration(),
    )


@pytest.mark.requirement("A2A-AUTHZ-2")
async def test_the_sdk_client_with_one_key_reads_and_cancels_its_task_at_the_other_replica(
    tmp_path: Path,
) -> None:
    async with two_replicas(tmp_path) as (network, bots), ChatCore(network.backend("you")) as core:

        def client(bot: ResponderBot, key: SigningKey | None) -> Any:
            factory = ClientFactory(
                ClientConfig(supported_protocol_bindings=[A2A_BINDING_URI], streaming=False)
            )
            factory.register(
                A2A_BINDING_URI,
                simplex_transport_producer(
                    core=core, clock=network.clock, transport="chat", identity_key=key
                ),
            )
            return factory.create(bot.agent_card)

        with anyio.fail_after(30):
            async with client(bots[0], K) as first:
                items = [item async for item in first.send_message(reserve())]
            task = items[0].task
            assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            async with client(bots[1], K) as second:
                got = await second.get_task(GetTaskRequest(id=task.id))
                assert got.id == task.id
                done = await second.cancel_task(CancelTaskRequest(id=task.id))
                assert done.status.state == TaskState.TASK_STATE_CANCELED
            for key in (None, K2):
                async with client(bots[1], key) as stranger:
                    with pytest.raises(JSONRPCResponseError) as raised:
                        await stranger.get_task(GetTaskRequest(id=task.id))
                    assert raised.value.jsonrpc_code == UNKNOWN_TASK


@pytest.mark.requirement("A2A-AUTHZ-4")
async def test_the_transport_never_sends_an_identity_in_a_business_chat(tmp_path: Path) -> None:
    network = SimNetwork(seed=22, clock=ManualClock())
    calls: list[Any] = []
    bot = ResponderBot(
        display_name="Anvil shop",
        a2a=replica(f"sqlite:///{tmp_path / 'tasks.db'}"),
        business=True,
        transports=("chat",),
        data_dir=tmp_path / "shop",
        shutdown_grace_s=0.5,
        on_call=calls.append,
        clock=network.clock,
    )
    network.add_user("you", display_name="you", peer_type="agent")
    async with bot.serving(network.backend("shop")), ChatCore(network.backend("you")) as core:
        [interface] = bot.agent_card.supported_interfaces
        transport = SimplexA2ATransport(
            bot.agent_card,
            interface.url,
            core=core,
            transport="chat",
            identity_key=K,
            clock=network.clock,
        )
        with anyio.fail_after(30), pytest.raises(CallFormatError) as raised:
            await transport.get_task(GetTaskRequest(id="t"))
    assert raised.value.code == "credential_in_group"
    assert raised.value.requirement == "A2A-AUTHZ-4"
    # Nothing reached the shop: the credential is refused before the request is sent.
    assert calls == []
