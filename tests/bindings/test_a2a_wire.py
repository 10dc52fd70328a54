"""Sizes, parse errors, answer ends, the caller's helpers, the card and the SDK's logs."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from a2a.types.a2a_pb2 import AgentCard, AgentInterface, Message, StreamResponse, Task
from test_a2a_support import ADDRESS, ScriptedExecutor, ask, ask_one, call, contact, make_card, send

from simplex_protocols import _wire
from simplex_protocols.bindings._a2a_card import card_credential_names
from simplex_protocols.bindings._a2a_server import route_a2a_sdk_logs
from simplex_protocols.bindings._a2a_wire import service_parameters_of
from simplex_protocols.bindings.a2a import (
    A2A_BINDING_URI,
    AGENT_CARD_WELL_KNOWN_PATH,
    A2ABinding,
    agent_card_json,
    build_a2a_request,
    build_send_message,
    build_subscribe_to_task,
    check_no_credentials_in_group,
    ends_stream,
    is_final_message,
    read_result,
    read_send_message_result,
    read_stream_item,
    read_task,
    simplex_interface,
    task_id_of,
    text_of,
    with_simplex_interface,
)
from simplex_protocols.chat_call import build_reply
from simplex_protocols.errors import (
    BindingConfigError,
    CallFormatError,
    JSONRPCResponseError,
    ParseError,
)
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES

pytestmark = pytest.mark.anyio


def item(rid: Any, **result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def status(state: str) -> dict[str, Any]:
    return {"taskId": "t", "contextId": "c", "status": {"state": state}}


# ------------------------------------------------------------------ is_final


STREAM = send("x", rid=1, streaming=True)


@pytest.mark.requirement("A2A-STR-4")
@pytest.mark.parametrize(
    ("message", "final"),
    [
        (item(1, task={"id": "t", "status": {"state": "TASK_STATE_SUBMITTED"}}), False),
        (item(1, statusUpdate=status("TASK_STATE_WORKING")), False),
        (item(1, artifactUpdate={"taskId": "t", "artifact": {"parts": []}}), False),
        (item(1, statusUpdate=status("TASK_STATE_COMPLETED")), True),
        (item(1, statusUpdate=status("TASK_STATE_FAILED")), True),
        (item(1, statusUpdate=status("TASK_STATE_CANCELED")), True),
        (item(1, statusUpdate=status("TASK_STATE_REJECTED")), True),
        (item(1, statusUpdate=status("TASK_STATE_INPUT_REQUIRED")), True),
        (item(1, statusUpdate=status("TASK_STATE_AUTH_REQUIRED")), True),
        (item(1, task={"id": "t", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}), True),
        (item(1, message={"messageId": "m", "role": "ROLE_AGENT", "parts": []}), True),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "no"}}, True),
        ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}}, True),
        (item(2, statusUpdate=status("TASK_STATE_COMPLETED")), False),  # another request's
        (item("1", statusUpdate=status("TASK_STATE_COMPLETED")), False),  # id "1" is not 1
        ({"jsonrpc": "2.0", "id": 1}, False),
    ],
)
def test_is_final_for_streaming_methods(message: dict[str, Any], final: bool) -> None:
    assert is_final_message(STREAM, message) is final


def test_is_final_for_non_streaming_methods() -> None:
    request = call("GetTask", {"id": "t"}, rid=5)
    working = {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}
    assert is_final_message(request, {"jsonrpc": "2.0", "id": 5, "result": working})
    assert not is_final_message(request, {"jsonrpc": "2.0", "id": 6, "result": working})
    assert is_final_message(request, {"jsonrpc": "2.0", "id": 5, "error": {"code": -32001}})
    assert not is_final_message(request, "not a protocol message")
    delete = call("DeleteTaskPushNotificationConfig", {"taskId": "t", "id": "c"}, rid=7)
    assert is_final_message(delete, {"jsonrpc": "2.0", "id": 7, "result": None})


async def test_binding_is_final_agrees_with_what_the_binding_sends() -> None:
    async with A2ABinding(ScriptedExecutor(), make_card()) as binding:
        for request in (
            send("reserve", rid=1, streaming=True),
            send("plain", rid=2, streaming=True),
        ):
            items = await ask(binding, request, contact())
            assert [binding.is_final(request, m) for m in items] == [False] * (len(items) - 1) + [
                True
            ]


def test_ends_stream_for_anything_that_is_not_a_stream_response() -> None:
    assert ends_stream({"jsonrpc": "2.0", "id": 1, "result": {"weird": 1}})
    assert ends_stream({"jsonrpc": "2.0", "id": 1, "result": []})


# ------------------------------------------------------------------ sizes


@pytest.mark.requirement("A2A-MSG-4")
async def test_a2a_msg_4_oversize_error_is_32603_with_the_request_id() -> None:
    binding = A2ABinding(ScriptedExecutor(), make_card())
    big = item(9, task={"id": "t", "artifacts": [{"parts": [{"text": "x" * 20_000}]}]})
    assert binding.oversize_error(big) == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {
            "code": -32603,
            "message": "The answer is larger than a SimpleX message can carry",
        },
    }
    assert binding.oversize_error({"id": True})["id"] is None
    await binding.aclose()


class ChatReplies:
    """The chat transport's responder, as far as sizes go: ``build_reply`` with the binding's
    replacement, called inside ``emit``."""

    def __init__(self, binding: A2ABinding, command: str) -> None:
        self.binding = binding
        self.command = command
        self.texts: list[str] = []
        self.replaced: list[bool] = []

    async def __call__(self, message: dict[str, Any]) -> None:
        reply = build_reply(
            message,
            command_item_id=1,
            command_text=self.command,
            in_group=False,
            oversize=self.binding.oversize_error,
        )
        assert reply.size <= MAX_CHAT_MESSAGE_BYTES
        self.texts.append(reply.text)
        self.replaced.append(reply.replaced)


@pytest.mark.requirement("A2A-MSG-4")
async def test_a2a_msg_4_oversize_response_replaced_in_a_conversation() -> None:
    async with A2ABinding(ScriptedExecutor(), make_card()) as binding:
        request = send("big answer", rid=4)
        replies = ChatReplies(binding, "/_call a2a " + _wire.dumps(request))
        with anyio.fail_after(10):
            await binding.handle_chat(request, contact(), replies)
        assert replies.replaced == [True]
        assert _wire.loads(replies.texts[0])["error"]["code"] == -32603
        assert _wire.loads(replies.texts[0])["id"] == 4


@pytest.mark.requirement("A2A-MSG-4", "A2A-STR-4")
async def test_amb_31_oversize_stream_item_replaced_and_the_stream_ends() -> None:
    async with A2ABinding(ScriptedExecutor(), make_card()) as binding:
        request = send("big answer", rid="b", streaming=True)
        replies = ChatReplies(binding, "/_call a2a " + _wire.dumps(request))
        with anyio.fail_after(10):
            await binding.handle_chat(request, contact(), replies)
        # task, working, then the 20,000-character artifact: replaced, and nothing after it.
        assert replies.replaced == [False, False, True]
        last = _wire.loads(replies.texts[-1])
        assert last["error"]["code"] == -32603 and last["id"] == "b"
        assert is_final_message(request, last)
        # The replacement in one request does not end the next one's stream.
        request = send("small", rid="c", streaming=True)
        replies = ChatReplies(binding, "/_call a2a " + _wire.dumps(request))
        await binding.handle_chat(request, contact(), replies)
        assert replies.replaced == [False] * 4


# ------------------------------------------------------------------ parse errors


def test_parse_error_for_text_that_is_not_json_is_32700_with_null_id() -> None:
    binding = A2ABinding(ScriptedExecutor(), make_card())
    answer = binding.parse_error('{"jsonrpc": "2.0", "id": 1,', "unexpected end of text")
    assert answer["id"] is None and answer["jsonrpc"] == "2.0"
    assert answer["error"]["code"] == -32700
    assert "unexpected end of text" in answer["error"]["message"]


def test_parse_error_for_json_that_is_not_an_object_is_32600_with_null_id() -> None:
    binding = A2ABinding(ScriptedExecutor(), make_card())
    for raw in ("[1, 2]", '"SendMessage"', "42", "null"):
        answer = binding.parse_error(raw, "the request is not a JSON object")
        assert answer["id"] is None and answer["error"]["code"] == -32600


# ------------------------------------------------------------------ caller side


@pytest.mark.requirement("A2A-SP-1", "A2A-SP-3", "A2A-MSG-1")
def test_a2a_sp_3_requests_carry_a2a_version() -> None:
    request = build_a2a_request("GetTask", {"id": "t"}, request_id=3)
    assert request == {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "GetTask",
        "params": {"id": "t"},
        "a2a-service-parameters": {"A2A-Version": "1.0"},
    }
    extra = build_a2a_request(
        "GetTask",
        {"id": "t"},
        request_id="r",
        version="1.1",
        service_parameters={"A2A-Extensions": "urn:x"},
    )
    assert extra["a2a-service-parameters"] == {"A2A-Version": "1.1", "A2A-Extensions": "urn:x"}
    assert service_parameters_of(extra) == {"a2a-version": "1.1", "a2a-extensions": "urn:x"}


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"version": "1"}, "bad_version"),
        ({"version": "v1.0"}, "bad_version"),
        ({"service_parameters": {"a2a-version": "1.0"}}, "bad_service_parameter"),
        ({"service_parameters": {"X-A": "1", "x-a": "2"}}, "bad_service_parameter"),
        ({"service_parameters": {"X-A": 1}}, "bad_service_parameter"),
        ({"request_id": True}, "bad_request_id"),
        ({"request_id": 1.5}, "bad_request_id"),
    ],
)
def test_bad_requests_are_not_built(kwargs: dict[str, Any], code: str) -> None:
    args: dict[str, Any] = {"request_id": 1, **kwargs}
    with pytest.raises(CallFormatError) as info:
        build_a2a_request("GetTask", {"id": "t"}, **args)
    assert info.value.code == code


@pytest.mark.requirement("A2A-RPC-1")
def test_one_shot_send_message_has_no_context_task_or_return_immediately() -> None:
    request = build_send_message("Price of two anvils", request_id=1, message_id="m-1")
    assert request["method"] == "SendMessage"
    assert request["params"] == {
        "message": {
            "messageId": "m-1",
            "role": "ROLE_USER",
            "parts": [{"text": "Price of two anvils"}],
        }
    }
    full = build_send_message(
        [{"data": {"n": 2}}],
        request_id=2,
        streaming=True,
        context_id="c",
        task_id="t",
        return_immediately=True,
        history_length=0,
        accepted_output_modes=["text/plain"],
        metadata={"k": "v"},
    )
    assert full["method"] == "SendStreamingMessage"
    assert (
        full["params"]["message"]["contextId"] == "c" and full["params"]["message"]["taskId"] == "t"
    )
    assert full["params"]["configuration"] == {
        "returnImmediately": True,
        "historyLength": 0,
        "acceptedOutputModes": ["text/plain"],
    }
    assert full["params"]["metadata"] == {"k": "v"}
    with pytest.raises(CallFormatError):
        build_send_message([], request_id=3)
    with pytest.raises(CallFormatError):
        build_send_message("x", request_id=3, history_length=-1)


@pytest.mark.requirement("A2A-STR-5")
def test_a2a_str_5_resume_with_the_task_id_of_any_reply() -> None:
    replies = [
        item(1, task={"id": "t-1", "status": {"state": "TASK_STATE_SUBMITTED"}}),
        item(
            1,
            statusUpdate={
                "taskId": "t-1",
                "contextId": "c",
                "status": {"state": "TASK_STATE_WORKING"},
            },
        ),
        item(1, artifactUpdate={"taskId": "t-1", "contextId": "c", "artifact": {}}),
        {"jsonrpc": "2.0", "id": 1, "result": {"id": "t-1", "contextId": "c", "status": {}}},
    ]
    assert [task_id_of(r) for r in replies] == ["t-1"] * 4
    assert task_id_of({"jsonrpc": "2.0", "id": 1, "error": {}}) is None
    assert build_subscribe_to_task("t-1", request_id=9)["params"] == {"id": "t-1"}
    with pytest.raises(CallFormatError):
        build_subscribe_to_task("", request_id=9)


@pytest.mark.requirement("A2A-AUTHZ-4")
def test_a2a_authz_4_a_credential_is_not_sent_in_a_group() -> None:
    with_token = build_send_message(
        "x", request_id=1, service_parameters={"Authorization": "Bearer t"}
    )
    check_no_credentials_in_group(with_token, in_group=False)  # a direct chat is fine
    with pytest.raises(CallFormatError) as info:
        check_no_credentials_in_group(with_token, in_group=True)
    assert info.value.code == "credential_in_group" and info.value.requirement == "A2A-AUTHZ-4"
    with_key = build_send_message("x", request_id=1, service_parameters={"X-Api-Key": "k"})
    check_no_credentials_in_group(with_key, in_group=True)  # not a credential without the card
    with pytest.raises(CallFormatError):
        check_no_credentials_in_group(with_key, in_group=True, card=make_card(secured=True))
    with pytest.raises(CallFormatError):
        check_no_credentials_in_group(with_key, in_group=True, credential_parameters=["x-api-key"])
    check_no_credentials_in_group(build_send_message("x", request_id=1), in_group=True)


def test_card_credential_names() -> None:
    assert card_credential_names(None) == {"authorization"}
    assert card_credential_names(make_card(secured=True)) == {"authorization", "x-api-key"}


async def test_readers_of_real_answers() -> None:
    async with A2ABinding(ScriptedExecutor(), make_card()) as binding:
        task = read_send_message_result(await ask_one(binding, send("anvils"), contact()))
        assert isinstance(task, Task) and text_of(task) == "echo: anvils"
        message = read_send_message_result(await ask_one(binding, send("hello"), contact()))
        assert isinstance(message, Message) and text_of(message) == "hello yourself"
        got = read_task(await ask_one(binding, call("GetTask", {"id": task.id}), contact()))
        assert got.id == task.id
        items = [
            read_stream_item(m)
            for m in await ask(binding, send("reserve", streaming=True), contact())
        ]
        assert all(isinstance(i, StreamResponse) for i in items)
        assert [text_of(i) for i in items] == ["", "working", "Confirm the reservation?"]
        missing = await ask_one(binding, call("GetTask", {"id": "nope"}), contact())
        with pytest.raises(JSONRPCResponseError) as info:
            read_task(missing)
        assert info.value.jsonrpc_code == -32001


def test_readers_refuse_what_is_not_an_answer() -> None:
    with pytest.raises(ParseError) as info:
        read_result({"jsonrpc": "2.0", "id": 1})
    assert info.value.code == "not_a_response"
    with pytest.raises(ParseError) as info:
        read_task({"jsonrpc": "2.0", "id": 1, "result": {"id": 5}})
    assert info.value.code == "bad_result"
    with pytest.raises(ParseError):
        read_send_message_result({"jsonrpc": "2.0", "id": 1, "result": {}})
    with pytest.raises(ParseError):
        read_stream_item({"jsonrpc": "2.0", "id": 1, "result": [1]})


# ------------------------------------------------------------------ card


@pytest.mark.requirement("A2A-ID-1", "A2A-ID-2")
def test_a2a_id_2_simplex_interface() -> None:
    interface = simplex_interface(ADDRESS)
    assert interface == AgentInterface(
        url=ADDRESS, protocol_binding=A2A_BINDING_URI, protocol_version="1.0"
    )
    assert A2A_BINDING_URI == "https://simplex.chat/protocol/a2a/v1"
    for bad, code in (("", "bad_address"), ("  ", "bad_address")):
        with pytest.raises(BindingConfigError) as info:
            simplex_interface(bad)
        assert info.value.code == code
    with pytest.raises(BindingConfigError) as info:
        simplex_interface(ADDRESS, "1")
    assert info.value.code == "bad_version"


@pytest.mark.requirement("A2A-CARD-1", "A2A-ID-2", "A2A-ID-5")
def test_a2a_card_1_well_known_card_lists_the_simplex_interface() -> None:
    card = make_card()
    card.supported_interfaces.append(
        AgentInterface(
            url="https://agent.example/a2a", protocol_binding="JSONRPC", protocol_version="1.0"
        )
    )
    card.supported_interfaces.append(simplex_interface(ADDRESS, "0.9"))  # stale entry, replaced
    published = agent_card_json(with_simplex_interface(card, ADDRESS, ["1.0", "1.1"]))
    assert published["supportedInterfaces"] == [
        {
            "url": "https://agent.example/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        },
        {"url": ADDRESS, "protocolBinding": A2A_BINDING_URI, "protocolVersion": "1.0"},
        {"url": ADDRESS, "protocolBinding": A2A_BINDING_URI, "protocolVersion": "1.1"},
    ]
    assert published["name"] == "Anvil desk"
    assert AGENT_CARD_WELL_KNOWN_PATH == "/.well-known/agent-card.json"
    assert len(card.supported_interfaces) == 2  # the original is untouched
    with pytest.raises(BindingConfigError):
        with_simplex_interface(card, ADDRESS, [])


def test_binding_card_keeps_the_agents_fields() -> None:
    card = make_card()
    binding = A2ABinding(ScriptedExecutor(), card, address=ADDRESS, versions=("1.0", "1.1"))
    served = binding.agent_card
    assert served.name == card.name and served.skills == card.skills
    assert [i.protocol_version for i in served.supported_interfaces] == ["1.0", "1.1"]
    assert isinstance(served, AgentCard) and not card.supported_interfaces


# ------------------------------------------------------------------ the SDK's logs


async def test_client_errors_are_logged_at_debug_and_agent_failures_at_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    target = logging.getLogger("test.a2a.sdk")
    route_a2a_sdk_logs(target)
    try:
        with caplog.at_level(logging.DEBUG, logger="test.a2a.sdk"):
            async with A2ABinding(ScriptedExecutor(), make_card(), sdk_logger=target) as binding:
                await ask_one(
                    binding, call("SendMessage", {"message": {"parts": "nope"}}), contact()
                )
                await ask_one(binding, call("NoSuchMethod", {}), contact())
                await ask_one(
                    binding, call("ListTaskPushNotificationConfigs", {"taskId": "t"}), contact()
                )
                await ask_one(binding, send("x", version="1.7"), contact())
                client = [r for r in caplog.records if r.name.startswith("a2a.server.")]
                assert client and all(
                    r.levelno == logging.DEBUG and r.exc_info is None for r in client
                )
                caplog.clear()
                await ask_one(binding, send("boom"), contact())
                assert any(r.levelno == logging.ERROR for r in caplog.records)
    finally:
        route_a2a_sdk_logs()
