"""The plan summary of a connect's target, and the plan's checks of connect."""

from __future__ import annotations

from typing import Any

import pytest

from simplex_protocols.core import ConnectionPlanView, ContactRef, GroupRef
from simplex_protocols.mcp_server.errors import ToolError
from simplex_protocols.mcp_server.plans import check_plan, plan_summary

FULL, SHORT = "https://smp.example/a#full", "https://smp.example/a"


def plan(kind: str, details: dict[str, Any], **link: str) -> ConnectionPlanView:
    return ConnectionPlanView(
        {
            "type": "connectionPlan",
            "connLink": link or {"connFullLink": FULL, "connShortLink": SHORT},
            "connectionPlan": {"type": kind, f"{kind}Plan": details},
        }
    )


DIRECTORY = {
    "type": "ok",
    "contactSLinkData_": {
        "profile": {
            "displayName": "SimpleX Directory",
            "shortDescr": "Find groups.",
            "peerType": "bot",
            "preferences": {"commands": [{"type": "command", "keyword": "help", "label": "Help"}]},
        },
        "message": {"type": "text", "text": "Welcome!"},
        "business": False,
    },
}


def test_a_bot_address_is_summed_up_for_its_card() -> None:
    summary = plan_summary("@directory.simplex", plan("contactAddress", DIRECTORY))
    assert (summary.plan_type, summary.sub_type, summary.kind, summary.chat_type) == (
        "contactAddress",
        "ok",
        "bot",
        "contact",
    )
    assert (summary.name, summary.description, summary.welcome) == (
        "SimpleX Directory",
        "Find groups.",
        "Welcome!",
    )
    assert summary.simplex_name == "@directory.simplex" and summary.peer_type == "bot"
    assert summary.commands == [{"keyword": "help", "label": "Help"}]
    assert summary.link_data is not None and summary.known_chat is None
    assert summary.links("@directory.simplex") == (FULL, SHORT)
    assert check_plan("@directory.simplex", summary, "hello") is False


def test_a_business_address_and_a_known_contact() -> None:
    business = {
        "type": "ok",
        "contactSLinkData_": {"profile": {"displayName": "Ridgeline"}, "business": True},
    }
    summary = plan_summary(SHORT, plan("contactAddress", business))
    assert (summary.kind, summary.chat_type, summary.simplex_name) == ("business", "business", None)
    known = {"type": "known", "contact": {"contactId": 4, "profile": {"displayName": "Bob"}}}
    summary = plan_summary(SHORT, plan("contactAddress", known))
    assert (summary.known_chat, summary.contact_id, summary.name) == (ContactRef(4), 4, "Bob")
    assert check_plan(SHORT, summary, None) is True


def test_group_and_channel_links() -> None:
    club = {
        "type": "ok",
        "groupSLinkInfo_": {"direct": True},
        "groupSLinkData_": {"groupProfile": {"displayName": "Club", "description": "Hi all"}},
    }
    summary = plan_summary(SHORT, plan("groupLink", club))
    assert (summary.kind, summary.direct, summary.welcome) == ("group", True, "Hi all")
    channel = {
        "type": "known",
        "groupSLinkInfo_": {"direct": False},
        "groupInfo": {"groupId": 9, "groupProfile": {"displayName": "News"}},
    }
    summary = plan_summary(SHORT, plan("groupLink", channel))
    assert (summary.kind, summary.chat_type, summary.known_chat) == (
        "channel",
        "channel",
        GroupRef(9),
    )
    assert summary.link_data is None and summary.name == "News"


def test_links_without_a_full_link_fall_back_to_the_short_one_then_the_target() -> None:
    short_only = plan_summary("x", plan("contactAddress", DIRECTORY, connShortLink=SHORT))
    assert short_only.links("x") == (SHORT, None)
    none = plan_summary("x", ConnectionPlanView({"connectionPlan": {"type": "invitationLink"}}))
    assert none.links("x") == ("x", None)


def test_an_error_plan_is_a_tool_error_in_words() -> None:
    error = ConnectionPlanView(
        {
            "connectionPlan": {
                "type": "error",
                "chatError": {"type": "errorStore", "storeError": {"type": "groupNotFound"}},
            }
        }
    )
    with pytest.raises(ToolError) as refused:
        plan_summary(SHORT, error)
    assert refused.value.message == "Group not found! This group no longer exists."


@pytest.mark.parametrize("sub", ["connecting", "connectingProhibit", "noRelays", "ownLink"])
def test_targets_that_cant_be_joined_now(sub: str) -> None:
    summary = plan_summary(SHORT, plan("groupLink", {"type": sub}))
    with pytest.raises(ToolError) as refused:
        check_plan(SHORT, summary, None)
    assert refused.value.message == f"{SHORT} can't be joined now: groupLink {sub}."


@pytest.mark.parametrize(
    ("kind", "details"),
    [
        ("groupLink", {"type": "ok"}),
        ("contactAddress", {"type": "contactViaAddress", "contact": {"contactId": 4}}),
        ("contactAddress", {"type": "ok"}),  # no link data
        ("invitationLink", {"type": "ok", "contactSLinkData_": {"profile": {}}}),
    ],
)
def test_a_message_needs_an_address_with_link_data(kind: str, details: dict[str, Any]) -> None:
    summary = plan_summary(SHORT, plan(kind, details))
    assert check_plan(SHORT, summary, None) is False
    with pytest.raises(ToolError) as refused:
        check_plan(SHORT, summary, "hello")
    assert refused.value.message.startswith(f"message: {SHORT} is not a contact or business")
