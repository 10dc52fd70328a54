"""The caller's side of the MCP binding (requests, revisions, responses, progress) and the
request-state secret file."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simplex_protocols.bindings.mcp import (
    DEFAULT_REVISION,
    MCPResponse,
    MCPResponseError,
    Progress,
    build_request,
    choose_revision,
    continue_request,
    is_final,
    load_or_create_secret,
    progress_of,
    read_response,
)
from simplex_protocols.errors import CallFormatError, KeyFileError, ParseError

REVISION = "2026-07-28"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
response_like = st.dictionaries(
    st.sampled_from(["jsonrpc", "id", "result", "error", "method", "params"]),
    json_values,
    max_size=5,
)


# ---------------------------------------------------------------------------- requests


@pytest.mark.requirement("MCP-MSG-1", "MCP-VER-2")
def test_mcp_ver_2_request_names_its_revision_in_meta() -> None:
    req = build_request("tools/list", request_id=1)
    assert req == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": DEFAULT_REVISION,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    assert DEFAULT_REVISION == REVISION


def test_spec_example_tools_call_request() -> None:
    req = build_request(
        "tools/call", {"name": "availability", "arguments": {"item": "anvil"}}, request_id=1
    )
    assert req["params"] == {
        "name": "availability",
        "arguments": {"item": "anvil"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": REVISION,
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }


def test_request_with_every_envelope_option() -> None:
    params = {"cursor": "c", "_meta": {"traceparent": "00-ab", "progressToken": "old"}}
    req = build_request(
        "resources/list",
        params,
        request_id="r-1",
        revision="2026-07-28",
        client_capabilities={"elicitation": {"form": {}}},
        client_info={"name": "simplex-call", "version": "0.1.0"},
        progress_token=7,
    )
    assert req["id"] == "r-1"
    assert req["params"]["cursor"] == "c"
    assert req["params"]["_meta"] == {
        "traceparent": "00-ab",
        "progressToken": 7,
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "simplex-call", "version": "0.1.0"},
    }
    assert params == {"cursor": "c", "_meta": {"traceparent": "00-ab", "progressToken": "old"}}


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"method": ""}, "bad_method"),
        ({"request_id": True}, "bad_request_id"),
        ({"request_id": 1.5}, "bad_request_id"),
        ({"revision": ""}, "bad_revision"),
        ({"params": [1]}, "bad_params"),
        ({"params": {"_meta": 3}}, "bad_params"),
        ({"progress_token": False}, "bad_progress_token"),
    ],
)
def test_request_that_cannot_be_built_is_refused(kwargs: dict[str, Any], code: str) -> None:
    args: dict[str, Any] = {"method": "tools/list", "request_id": 1} | kwargs
    method = args.pop("method")
    params = args.pop("params", None)
    with pytest.raises(CallFormatError) as info:
        build_request(method, params, **args)
    assert info.value.code == code


# ---------------------------------------------------------------------------- revisions


@pytest.mark.requirement("MCP-VER-1")
def test_mcp_ver_1_choose_revision_in_the_bots_order() -> None:
    assert choose_revision([REVISION]) == REVISION
    assert choose_revision(["2027-01-01", REVISION]) == REVISION
    assert choose_revision(["b", "a"], supported=["a", "b"]) == "b"
    assert choose_revision(["2025-11-25"]) is None  # handshake era: not on this binding
    assert choose_revision([]) is None


@pytest.mark.requirement("MCP-MSG-1")
@pytest.mark.requirement("MCP-VER-2")
@pytest.mark.parametrize("revision", ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-27"])
def test_mcp_msg_1_a_request_of_a_revision_before_2026_07_28_is_not_built(revision: str) -> None:
    with pytest.raises(CallFormatError) as info:
        build_request("tools/list", request_id=1, revision=revision)
    assert info.value.code == "bad_revision"
    assert info.value.requirement == "MCP-MSG-1"
    assert revision in info.value.reason and "2026-07-28" in info.value.reason


@pytest.mark.requirement("MCP-MSG-1")
@pytest.mark.parametrize("revision", [REVISION, "2026-07-29", "2027-01-01", "DRAFT-2027-v1"])
def test_mcp_msg_1_revisions_from_2026_07_28_on_are_built(revision: str) -> None:
    # A later revision, or an identifier that is not a date (MCP does not promise dates),
    # may be one the bot serves: it answers -32022 with its list when it does not.
    request = build_request("tools/list", request_id=1, revision=revision)
    assert request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == revision


@pytest.mark.requirement("MCP-VER-1")
def test_mcp_ver_1_choose_revision_never_picks_a_handshake_era_revision() -> None:
    everything = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", REVISION]
    assert choose_revision(["2025-11-25", REVISION], supported=everything) == REVISION
    assert choose_revision(["2025-06-18"], supported=["2025-06-18"]) is None
    assert choose_revision(
        ["2026-07-27", "2026-07-29"], supported=["2026-07-27", "2026-07-29"]
    ) == ("2026-07-29")


# ---------------------------------------------------------------------------- responses


@pytest.mark.requirement("MCP-MSG-2")
def test_mcp_msg_2_read_the_spec_example_result() -> None:
    response = read_response(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "resultType": "complete",
                "content": [{"type": "text", "text": "12 anvils are in stock."}],
                "isError": False,
            },
        }
    )
    assert response.ok
    assert response.id == 1
    assert response.result_type == "complete"
    assert not response.input_required
    assert not response.is_tool_error
    assert response.text == "12 anvils are in stock."
    assert response.input_requests == {}
    assert response.request_state is None


@pytest.mark.requirement("MCP-VER-4")
def test_mcp_ver_4_read_unsupported_revision_error() -> None:
    response = read_response(
        {
            "jsonrpc": "2.0",
            "id": 4,
            "error": {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": [REVISION], "requested": "2027-01-01"},
            },
        }
    )
    assert not response.ok
    assert response.result_type is None
    assert response.error == MCPResponseError(
        -32022, "Unsupported protocol version", {"supported": [REVISION], "requested": "2027-01-01"}
    )
    assert response.error.supported_revisions == (REVISION,)
    assert choose_revision(response.error.supported_revisions) == REVISION
    assert MCPResponseError(-32601, "Method not found").supported_revisions == ()


def test_tool_error_and_text_of_mixed_content() -> None:
    response = read_response(
        {
            "jsonrpc": "2.0",
            "id": "x",
            "result": {
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                    {"type": "text", "text": "b"},
                ],
                "isError": True,
            },
        }
    )
    assert response.is_tool_error
    assert response.result_type == "complete"  # absent means complete
    assert response.text == "a\nb"


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/progress"},
        {"jsonrpc": "2.0", "result": {}},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": ""}},
        {"jsonrpc": "2.0", "id": 1, "result": []},
        {"jsonrpc": "2.0", "id": 1, "error": "bad"},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": ""}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": ""}},
        {"jsonrpc": "2.0", "id": 1.5, "result": {}},
    ],
)
def test_mcp_msg_2_message_that_is_not_a_response_is_refused(message: dict[str, Any]) -> None:
    with pytest.raises(ParseError) as info:
        read_response(message)
    assert info.value.code == "not_a_response"
    assert info.value.requirement == "MCP-MSG-2"


@given(response_like)
def test_read_response_is_total(message: dict[str, Any]) -> None:
    try:
        response = read_response(message)
    except ParseError as exc:
        assert exc.code == "not_a_response"
    else:
        assert isinstance(response, MCPResponse)
        _ = (response.text, response.input_requests, response.request_state, response.result_type)


@given(response_like, st.one_of(st.integers(), st.text()))
def test_is_final_is_total_and_agrees_with_read_response(
    message: dict[str, Any], request_id: int | str
) -> None:
    final = is_final({"id": request_id}, message)
    assert final is (final and "method" not in message)
    try:
        response = read_response(message)
    except ParseError:
        return
    # every readable response to this request (or with a null id, an error) ends the answer
    assert final is (response.id == request_id or (response.id is None and not response.ok))


# ---------------------------------------------------------------------------- input_required


INPUT_REQUIRED = {
    "jsonrpc": "2.0",
    "id": 9,
    "result": {
        "resultType": "input_required",
        "inputRequests": {"k": {"method": "elicitation/create", "params": {"message": "Sure?"}}},
        "requestState": "v1.sealed",
    },
}


@pytest.mark.requirement("MCP-MSG-6")
def test_mcp_msg_6_continue_with_a_new_request() -> None:
    first = build_request(
        "tools/call", {"name": "reserve", "arguments": {"item": "anvil"}}, request_id=9
    )
    response = read_response(INPUT_REQUIRED)
    assert response.input_required
    assert response.request_state == "v1.sealed"
    nxt = continue_request(first, response, {"k": {"action": "accept"}}, request_id=10)
    assert nxt == {
        "jsonrpc": "2.0",
        "id": 10,
        "method": "tools/call",
        "params": {
            **first["params"],
            "inputResponses": {"k": {"action": "accept"}},
            "requestState": "v1.sealed",
        },
    }
    # a third round replaces the previous round's fields
    third = continue_request(nxt, response, {"k": {"action": "decline"}}, request_id=11)
    assert third["params"]["inputResponses"] == {"k": {"action": "decline"}}


@pytest.mark.requirement("MCP-MSG-6")
def test_mcp_msg_6_only_input_required_is_continued() -> None:
    first = build_request("tools/call", {"name": "t"}, request_id=1)
    complete = read_response({"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
    with pytest.raises(CallFormatError) as info:
        continue_request(first, complete, {}, request_id=2)
    assert info.value.code == "not_input_required"
    with pytest.raises(CallFormatError) as info:
        continue_request(first, read_response(INPUT_REQUIRED), {}, request_id=True)
    assert info.value.code == "bad_request_id"
    with pytest.raises(CallFormatError) as info:
        continue_request({"method": "tools/call"}, read_response(INPUT_REQUIRED), {}, request_id=3)
    assert info.value.code == "bad_params"


# ---------------------------------------------------------------------------- progress


@pytest.mark.requirement("MCP-MSG-3")
def test_mcp_msg_3_progress_of_a_reply() -> None:
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "p", "progress": 1, "total": 3, "message": "packed"},
    }
    assert progress_of(note) == Progress("p", 1.0, 3.0, "packed")
    assert progress_of(
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": 2, "progress": 0.5},
        }
    ) == Progress(2, 0.5)
    for other in (
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {}},
        {"jsonrpc": "2.0", "method": "notifications/progress"},
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": True, "progress": 1},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": 1, "progress": "1"},
        },
    ):
        assert progress_of(other) is None


# ---------------------------------------------------------------------------- the secret file


def counter_bytes() -> Any:
    state = {"n": 0}

    def random_bytes(n: int) -> bytes:
        state["n"] += 1
        return bytes([state["n"] % 256]) * n

    return random_bytes


def test_secret_file_is_created_private_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "state" / "request-state.key"
    secret = load_or_create_secret(path, random_bytes=counter_bytes())
    assert secret == b"\x01" * 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.read_text() == "01" * 32 + "\n"
    # a restart reads the same secret, and nothing is overwritten
    assert load_or_create_secret(path, random_bytes=counter_bytes()) == secret
    assert [p.name for p in path.parent.iterdir()] == ["request-state.key"]


def test_secret_file_created_by_someone_else_first_wins(tmp_path: Path) -> None:
    path = tmp_path / "request-state.key"
    theirs = b"\x07" * 40

    def racing_random(n: int) -> bytes:
        if not path.exists():  # the other process links its file in between
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, theirs.hex().encode() + b"\n")
            os.close(fd)
        return b"\x01" * n

    assert load_or_create_secret(path, random_bytes=racing_random) == theirs


@pytest.mark.parametrize(
    ("content", "mode"),
    [
        ("01" * 32 + "\n", 0o644),
        ("01" * 32 + "\n", 0o640),
        ("01" * 31 + "\n", 0o600),
        ("not hex\n", 0o600),
        ("é", 0o600),
        ("00" * 5000, 0o600),
    ],
)
def test_unsafe_or_malformed_secret_file_is_refused(
    tmp_path: Path, content: str, mode: int
) -> None:
    path = tmp_path / "request-state.key"
    path.write_text(content)
    path.chmod(mode)
    with pytest.raises(KeyFileError) as info:
        load_or_create_secret(path)
    assert info.value.filename == str(path)


def test_secret_path_that_is_a_folder_or_a_symlink_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(KeyFileError):
        load_or_create_secret(folder)
    target = tmp_path / "target"
    target.write_text("01" * 32 + "\n")
    target.chmod(0o600)
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(KeyFileError):
        load_or_create_secret(link)


def test_secret_size_below_the_sdk_minimum_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        load_or_create_secret(tmp_path / "k", nbytes=16)
    with pytest.raises(ValueError):
        load_or_create_secret(tmp_path / "k", random_bytes=lambda n: b"short")
