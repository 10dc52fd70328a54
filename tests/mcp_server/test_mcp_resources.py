"""The agent's chats as MCP resources: list (pages), templates, read, and subscriptions in both
eras, over the simulated network with the ``mcp`` SDK's client (docs/mcp_server.md "Beyond
the plan")."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp_chats import agent_with_directory, another_client, connect, peer_chat_of
from mcp_sim import World, structured

from simplex_protocols.mcp_server import resources
from simplex_protocols.mcp_server.resources import (
    CONTACT_TEMPLATE,
    GROUP_TEMPLATE,
    RESOURCE_NOT_FOUND,
    parse_chat_uri,
)

pytestmark = pytest.mark.anyio


def uri(chat: str) -> str:
    return f"simplex://chat/{chat}"


def body(result: types.ReadResourceResult) -> dict[str, Any]:
    (content,) = result.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.mime_type == "application/json"
    value: dict[str, Any] = json.loads(content.text)
    return value


def control_chat(w: World) -> str:
    control = w.server.info.agent.control
    assert control is not None
    return str(control.ref)


async def test_each_chat_is_a_resource_and_the_control_chat_is_never_one(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, chat):
            listed = await w.server.mcp.list_resources()
            chats = structured(await w.server.call("list"))["chats"]
            # the chats list shows, in its order; the control chat is not one of them
            assert [(r.uri, r.name, r.title) for r in listed.resources] == [
                (uri(c["chat"]), c["chat"], c["name"]) for c in chats
            ]
            assert uri(control_chat(w)) not in [r.uri for r in listed.resources]
            resource = next(r for r in listed.resources if r.uri == uri(chat))
            assert resource.title == "SimpleX Directory"
            assert resource.mime_type == "application/json"
            assert resource.description is not None
            assert "does not mark them read" in resource.description
            assert listed.next_cursor is None
            templates = (await w.server.mcp.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == [CONTACT_TEMPLATE, GROUP_TEMPLATE]
            assert all("does not mark them read" in (t.description or "") for t in templates)
            with pytest.raises(MCPError) as caught:
                await w.server.mcp.read_resource(uri(control_chat(w)))
            assert caught.value.error.code == RESOURCE_NOT_FOUND


async def test_reading_a_chat_gives_its_last_messages_in_receive_shape_and_marks_none_read(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, chat):
            sent = structured(
                await w.server.call("send", {"chat": chat, "text": "shoes", "idle": 1, "wait": 0})
            )
            assert sent["status"] == "done"
            directory_side = await peer_chat_of(w, "My Agent")
            for n in (1, 2, 3):
                await w.directory.send_text(directory_side, f"News {n}")
            await w.server.seen.until(lambda: "News 3" in w.server.seen.received_texts(chat))
            commands = len(w.server.commands)
            first = body(await w.server.mcp.read_resource(uri(chat)))
            assert not any(c.startswith("/_read") for c in w.server.commands[commands:])
            assert first["chat"] == chat
            texts = [(m["from"], m["text"], m["new"]) for m in first["messages"]]
            assert ("My Agent", "shoes", False) in texts
            assert texts[-3:] == [("SimpleX Directory", f"News {n}", True) for n in (1, 2, 3)]
            assert all(
                set(m) >= {"chat", "item", "from", "time", "text", "new", "mentions_me"}
                for m in first["messages"]
            )
            # the messages are still new: receive returns them, and marks them read
            received = structured(await w.server.call("receive", {"chat": chat}))
            assert [m["text"] for m in received["messages"]][-3:] == [
                f"News {n}" for n in (1, 2, 3)
            ]
            again = body(await w.server.mcp.read_resource(uri(chat), cache_mode="bypass"))
            assert not any(m["new"] for m in again["messages"])
            assert again["more"] == 0


async def test_a_uri_that_names_no_chat_of_the_agent_is_not_found(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, chat):
            for missing in (uri("@999"), uri("#999"), uri("3"), "simplex://other/@1", uri("@0")):
                with pytest.raises(MCPError) as caught:
                    await w.server.mcp.read_resource(missing)
                assert caught.value.error.code == RESOURCE_NOT_FOUND, missing
            # the percent-encoded reference names the same chat
            encoded = uri(chat.replace("@", "%40"))
            assert body(await w.server.mcp.read_resource(encoded))["chat"] == chat


def test_chat_uris_name_contacts_and_groups_in_either_form() -> None:
    assert str(parse_chat_uri("simplex://chat/@3")) == "@3"
    assert str(parse_chat_uri("simplex://chat/#5")) == "#5"
    assert str(parse_chat_uri("simplex://chat/%235")) == "#5"
    for bad in ("simplex://chat/", "simplex://chat/@", "simplex://chat/@x", "simplex://chats/@3"):
        assert parse_chat_uri(bad) is None, bad
    assert parse_chat_uri("simplex://chat/@" + "1" * 16) is None


async def test_resources_list_pages_with_its_cursor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resources, "RESOURCES_PAGE", 1)
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, chat):
            business = await connect(w, w.vendor_link)
            chats = [c["chat"] for c in structured(await w.server.call("list"))["chats"]]
            assert {chat, business} <= set(chats)
            pages = [await w.server.mcp.list_resources()]
            while pages[-1].next_cursor is not None:
                pages.append(await w.server.mcp.list_resources(cursor=pages[-1].next_cursor))
            assert [[r.uri for r in page.resources] for page in pages] == [[uri(c)] for c in chats]
            # a group's chat, by its URI as listed and with "#" percent-encoded
            for form in (uri(business), uri(business.replace("#", "%23"))):
                assert body(await w.server.mcp.read_resource(form))["chat"] == business
            for bad in ("x", "0", "99", "-1"):
                with pytest.raises(MCPError) as caught:
                    await w.server.mcp.list_resources(cursor=bad)
                assert caught.value.error.code == types.INVALID_PARAMS


async def test_the_list_results_carry_cache_hints(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, chat):
            mcp = w.server.mcp
            listed = await mcp.list_resources()
            assert (listed.ttl_ms, listed.cache_scope) == (0, "private")
            read = await mcp.read_resource(uri(chat))
            assert (read.ttl_ms, read.cache_scope) == (0, "private")
            templates = await mcp.list_resource_templates()
            assert (templates.ttl_ms, templates.cache_scope) == (300_000, "public")
            tools = await mcp.list_tools()
            assert (tools.ttl_ms, tools.cache_scope) == (300_000, "private")


async def test_server_discover_advertises_resources_with_subscriptions_completions_logging(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, _):
            raw = await w.server.mcp.session.send_discover("2026-07-28")
            discovered = types.DiscoverResult.model_validate(raw)
            caps = discovered.capabilities
            assert caps.tools is not None
            assert caps.resources is not None and caps.resources.subscribe is True
            assert caps.resources.list_changed is True
            assert caps.completions is not None
            assert caps.logging is not None
            assert caps.prompts is None
            async with another_client(w, mode="legacy") as legacy:
                caps = legacy.server_capabilities
                assert caps.resources is not None and caps.resources.subscribe is True
                assert caps.completions is not None and caps.logging is not None


async def test_listening_to_a_chat_sends_an_update_when_a_message_arrives_in_it(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, chat):
            business = await connect(w, w.vendor_link)
            directory_side = await peer_chat_of(w, "My Agent")
            encoded = uri(chat.replace("@", "%40"))
            async with w.server.mcp.listen(
                resource_subscriptions=[encoded], resources_list_changed=True
            ) as subscription:
                assert subscription.honored.resource_subscriptions == [uri(chat)]
                # a message in another chat is no update of this one
                await w.vendor.send_text(await vendor_side(w), "A message in the business chat.")
                await w.server.seen.until(
                    lambda: (
                        "A message in the business chat." in w.server.seen.received_texts(business)
                    )
                )
                await w.directory.send_text(directory_side, "New groups today.")
                event = await anext(subscription)
                assert event == ResourceUpdated(uri(chat))
                content = body(await w.server.mcp.read_resource(uri(chat)))
                assert content["messages"][-1]["text"] == "New groups today."
                # a new chat changes the list
                await connect(w, "#ridgeline.simplex")
                assert await anext(subscription) == ResourcesListChanged()


async def vendor_side(w: World) -> str:
    """The vendor's business chat with the agent, as ``#N``."""
    chats = await w.vendor.cmd(f"/_get chats {w.vendor.user_id} pcc=off count=10")
    group = next(c for c in chats["chats"] if c["chatInfo"]["type"] == "group")
    return f"#{group['chatInfo']['groupInfo']['groupId']}"


async def test_the_control_chat_is_never_announced(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, chat):
            directory_side = await peer_chat_of(w, "My Agent")
            control = uri(control_chat(w))
            async with w.server.mcp.listen(resource_subscriptions=[control, uri(chat)]) as sub:
                await w.owner.say("Hello agent")
                await w.server.seen.until(
                    lambda: any(
                        e["type"] == "newChatItems" and "Hello agent" in json.dumps(e)
                        for e in w.server.seen.events
                    )
                )
                await w.directory.send_text(directory_side, "After the owner.")
                assert await anext(sub) == ResourceUpdated(uri(chat))


async def test_a_2025_client_subscribes_and_gets_updates_on_its_requests_in_flight(
    tmp_path: Path,
) -> None:
    notifications: list[types.ServerNotification] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            notifications.append(message)

    with anyio.fail_after(30):
        async with agent_with_directory(tmp_path) as (w, chat):
            directory_side = await peer_chat_of(w, "My Agent")
            async with another_client(w, mode="legacy", message_handler=on_message) as legacy:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    await legacy.subscribe_resource(uri(chat))
                structured(await legacy.call_tool("receive", {"chat": chat}))
                async with anyio.create_task_group() as tg:
                    result: dict[str, Any] = {}
                    waiting = anyio.Event()

                    async def on_progress(*_: Any) -> None:
                        waiting.set()

                    async def receive() -> None:
                        result.update(
                            structured(
                                await legacy.call_tool(
                                    "receive",
                                    {"chat": chat, "wait": 600},
                                    progress_callback=on_progress,
                                )
                            )
                        )

                    tg.start_soon(receive)
                    await waiting.wait()
                    await w.directory.send_text(directory_side, "While you wait.")
                assert [m["text"] for m in result["messages"]] == ["While you wait."]
                updates = [
                    n.params.uri
                    for n in notifications
                    if isinstance(n, types.ResourceUpdatedNotification)
                ]
                assert updates == [uri(chat)]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    await legacy.unsubscribe_resource(uri(chat))
                await w.directory.send_text(directory_side, "Not announced.")
                await w.server.seen.until(
                    lambda: "Not announced." in w.server.seen.received_texts(chat)
                )
                structured(await legacy.call_tool("receive", {"chat": chat}))
                assert (
                    len(
                        [
                            n
                            for n in notifications
                            if isinstance(n, types.ResourceUpdatedNotification)
                        ]
                    )
                    == 1
                )


async def test_the_2025_subscriptions_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resources, "MAX_LEGACY_SUBSCRIPTIONS", 2)
    with anyio.fail_after(30):
        async with (
            agent_with_directory(tmp_path) as (w, chat),
            another_client(w, mode="legacy") as legacy,
        ):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await legacy.subscribe_resource(uri(chat))
                await legacy.subscribe_resource("test://watched-resource")
                # the same URI again (in either form) takes no more room
                await legacy.subscribe_resource(uri(chat.replace("@", "%40")))
                with pytest.raises(MCPError) as caught:
                    await legacy.subscribe_resource("test://another")
                assert caught.value.error.code == types.INTERNAL_ERROR
                await legacy.unsubscribe_resource("test://watched-resource")
                await legacy.subscribe_resource("test://another")
