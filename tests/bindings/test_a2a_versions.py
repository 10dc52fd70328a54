"""A2A-Version and the other service parameters (spec "A2A binding" > "Service parameters")."""

from __future__ import annotations

from typing import Any

import pytest
from test_a2a_support import ScriptedExecutor, ask_one, call, contact, make_card, send

from simplex_protocols.bindings._a2a_wire import SERVICE_PARAMETERS_MEMBER
from simplex_protocols.bindings.a2a import A2ABinding
from simplex_protocols.errors import BindingConfigError

pytestmark = pytest.mark.anyio


def with_parameters(request: dict[str, Any], parameters: Any) -> dict[str, Any]:
    out = dict(request)
    if parameters is None:
        out.pop(SERVICE_PARAMETERS_MEMBER, None)
    else:
        out[SERVICE_PARAMETERS_MEMBER] = parameters
    return out


async def answer(
    parameters: Any, *, versions: tuple[str, ...] = ("1.0",), streaming: bool = False
) -> tuple[dict[str, Any], ScriptedExecutor]:
    executor = ScriptedExecutor()
    async with A2ABinding(executor, make_card(), versions=versions) as binding:
        request = with_parameters(send("hi", rid=3, streaming=streaming), parameters)
        return await ask_one(binding, request, contact()), executor


@pytest.mark.requirement("A2A-SP-3", "A2A-SP-4")
async def test_a2a_sp_4_missing_version_is_version_not_supported() -> None:
    reply, executor = await answer(None)
    assert reply["error"]["code"] == -32009 and reply["id"] == 3
    assert executor.callers == []  # the agent never ran
    reply, _ = await answer({})
    assert reply["error"]["code"] == -32009


@pytest.mark.requirement("A2A-SP-4")
@pytest.mark.parametrize("version", ["1", "1.7", "v1.0", "1.0.1", "2.0", "0.3", "1.0, 1.0", ""])
async def test_a2a_sp_4_undeclared_versions_refused_exactly(version: str) -> None:
    # The SDK alone accepts any 1.x spelling ("1", "1.7", "v1.0"); the bot checks exactly.
    reply, executor = await answer({"A2A-Version": version})
    assert reply["error"]["code"] == -32009
    assert executor.callers == []


@pytest.mark.requirement("A2A-SP-4")
async def test_a2a_sp_4_streaming_method_with_bad_version_is_one_plain_error() -> None:
    reply, _ = await answer({"A2A-Version": "1.7"}, streaming=True)
    assert reply["error"]["code"] == -32009 and reply["id"] == 3


@pytest.mark.requirement("A2A-SP-2")
@pytest.mark.parametrize("name", ["A2A-Version", "a2a-version", "A2A-VERSION", "a2A-vErSiOn"])
async def test_a2a_sp_2_names_are_case_insensitive(name: str) -> None:
    reply, _ = await answer({name: "1.0"})
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_declared_version_served_and_another_declared_one_too() -> None:
    reply, _ = await answer({"A2A-Version": "1.1"}, versions=("1.0", "1.1"))
    assert "result" in reply
    reply, _ = await answer({"A2A-Version": "1.0"}, versions=("1.1",))
    assert reply["error"]["code"] == -32009
    assert "1.1" in reply["error"]["message"]


@pytest.mark.requirement("A2A-SP-2")
async def test_amb_22_two_spellings_of_one_name_are_joined_in_member_order() -> None:
    # Joined, "1.0, 1.0" is not a declared version: the request is refused, as HTTP would.
    reply, _ = await answer({"A2A-Version": "1.0", "a2a-version": "1.0"})
    assert reply["error"]["code"] == -32009
    assert "'1.0, 1.0'" in reply["error"]["message"]
    reply, executor = await answer(
        {"A2A-Version": "1.0", "X-Trace": "a", "x-trace": "b", "X-TRACE": "c"}
    )
    assert "result" in reply
    assert executor.headers[0]["x-trace"] == "a, b, c"


@pytest.mark.requirement("A2A-SP-1", "A2A-SP-5")
async def test_a2a_sp_5_parameters_become_lower_cased_headers_and_leave_the_request() -> None:
    reply, executor = await answer(
        {
            "A2A-Version": "1.0",
            "A2A-Extensions": "https://example.com/ext/a, https://example.com/ext/b",
        }
    )
    assert "result" in reply
    assert executor.headers[0] == {
        "a2a-version": "1.0",
        "a2a-extensions": "https://example.com/ext/a, https://example.com/ext/b",
    }


async def test_requested_extensions_reach_the_agent() -> None:
    seen: list[set[str]] = []

    class Recorder(ScriptedExecutor):
        async def execute(self, context: Any, event_queue: Any) -> None:
            seen.append(set(context.call_context.requested_extensions))
            await super().execute(context, event_queue)

    async with A2ABinding(Recorder(), make_card()) as binding:
        request = send("hi", service_parameters={"A2A-Extensions": "urn:a, urn:b"})
        assert "result" in await ask_one(binding, request, contact())
    assert seen == [{"urn:a", "urn:b"}]


@pytest.mark.requirement("A2A-SP-1")
@pytest.mark.parametrize(
    "parameters",
    ["1.0", ["A2A-Version", "1.0"], {"A2A-Version": 1.0}, {"A2A-Version": None}, {"": "1.0"}],
)
async def test_a2a_sp_1_malformed_member_is_invalid_request(parameters: Any) -> None:
    reply, executor = await answer(parameters)
    assert reply["error"]["code"] == -32600 and reply["id"] == 3
    assert executor.callers == []


async def test_version_error_comes_after_the_sdks_method_check() -> None:
    async with A2ABinding(ScriptedExecutor(), make_card()) as binding:
        unknown = with_parameters(call("NoSuchMethod", {}, rid=5), None)
        assert (await ask_one(binding, unknown, contact()))["error"]["code"] == -32601


@pytest.mark.requirement("A2A-ID-3")
@pytest.mark.parametrize("versions", [(), ("1",), ("v1.0",), ("2.0",), ("1.0.0",), ("0.3",)])
def test_a2a_id_3_binding_versions_are_1x_major_minor(versions: tuple[str, ...]) -> None:
    with pytest.raises(BindingConfigError) as info:
        A2ABinding(ScriptedExecutor(), make_card(), versions=versions)
    assert info.value.code == "bad_version"


def test_negative_history_length_refused() -> None:
    with pytest.raises(BindingConfigError) as info:
        A2ABinding(ScriptedExecutor(), make_card(), history_length=-1)
    assert info.value.code == "bad_setting"


@pytest.mark.parametrize("seconds", [0, -1.0])
def test_interrupted_task_timeout_must_be_positive(seconds: float) -> None:
    with pytest.raises(BindingConfigError) as info:
        A2ABinding(ScriptedExecutor(), make_card(), interrupted_task_timeout_s=seconds)
    assert info.value.code == "bad_setting"
