"""completion/complete: the tools' chat and target arguments and the chat templates' IDs, from
the agent's chats, over the simulated network with the ``mcp`` SDK's client."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp_chats import agent_with_directory, connect
from mcp_sim import World, structured

from simplex_protocols.mcp_server.resources import CONTACT_TEMPLATE, GROUP_TEMPLATE

pytestmark = pytest.mark.anyio


async def values(
    w: World, ref: types.PromptReference | types.ResourceTemplateReference, name: str, value: str
) -> list[str]:
    result = await w.server.mcp.complete(ref, {"name": name, "value": value})
    completion = result.completion
    assert completion.total == len(completion.values)
    assert completion.has_more is False
    return completion.values


def tool(name: str) -> types.PromptReference:
    return types.PromptReference(name=name)


async def test_the_chat_argument_completes_references_names_and_simplex_names(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, chat):
            business = await connect(w, w.vendor_link)
            chats = [c["chat"] for c in structured(await w.server.call("list"))["chats"]]
            for name in ("send", "receive", "leave"):
                assert await values(w, tool(name), "chat", "") == chats
            contacts = [c for c in chats if c.startswith("@")]
            assert await values(w, tool("send"), "chat", "@") == contacts
            assert await values(w, tool("send"), "chat", "#") == [business]
            # by the chat's name or its SimpleX name, case ignored
            assert await values(w, tool("receive"), "chat", "simplex d") == [chat]
            assert await values(w, tool("receive"), "chat", "@DIRECTORY") == [chat]
            assert await values(w, tool("leave"), "chat", "ridge") == [business]
            assert await values(w, tool("send"), "chat", "nobody") == []
            # the control chat is never offered
            control = w.server.info.agent.control
            assert control is not None
            assert str(control.ref) not in await values(w, tool("send"), "chat", "#")


async def test_the_connect_target_completes_simplex_names_and_this_runs_targets(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, _):
            assert await values(w, tool("connect"), "target", "@dir") == ["@directory.simplex"]
            assert await values(w, tool("connect"), "target", "") == ["@directory.simplex"]
            assert await values(w, tool("connect"), "target", "#") == []
            # the input of a connect action of this run is a known target
            await connect(w, "#ridgeline.simplex")
            assert "#ridgeline.simplex" in await values(w, tool("connect"), "target", "#r")


async def test_the_templates_complete_contact_and_group_ids(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, chat):
            business = await connect(w, w.vendor_link)
            contact = types.ResourceTemplateReference(uri=CONTACT_TEMPLATE)
            group = types.ResourceTemplateReference(uri=GROUP_TEMPLATE)
            contact_ids = await values(w, contact, "contact", "")
            assert chat[1:] in contact_ids
            assert all(text.isdecimal() for text in contact_ids)
            assert await values(w, contact, "contact", chat[1:]) == [chat[1:]]
            assert await values(w, group, "group", "") == [business[1:]]
            assert await values(w, group, "contact", "") == []


async def test_other_references_and_arguments_have_no_values(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, _):
            assert await values(w, tool("test_prompt_with_arguments"), "arg1", "test") == []
            assert await values(w, tool("send"), "text", "") == []
            other = types.ResourceTemplateReference(uri="test://template/{id}/data")
            assert await values(w, other, "id", "1") == []
