"""What ``/_connect plan`` says about a connect's target, summed up for its card and result.

:func:`plan_summary` reads the core's ``connectionPlan`` response (plan "connect": the plan
summary: type, name, SimpleX name, description, welcome, commands, link, direct, link data);
:func:`check_plan` applies the plan's checks of connect. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from simplex_protocols.core import ChatRef, ConnectionPlanView, ContactRef, GroupRef

from .errors import ToolError
from .log import chat_error_text
from .messages import commands_of, known_peer_type
from .text import is_simplex_name

__all__ = ["PlanSummary", "check_plan", "plan_summary"]

#: Plans whose target can't be joined now (``connectionPlanProceed`` false, or the agent's own
#: link).
_NOT_JOINABLE: Final = frozenset(
    {"connecting", "connectingProhibit", "noRelays", "updateRequired", "ownLink"}
)


@dataclass
class PlanSummary:
    """What ``/_connect plan`` says about a target (plan "connect": the plan summary)."""

    plan_type: str
    sub_type: str
    kind: str
    chat_type: str
    name: str | None
    simplex_name: str | None
    description: str | None
    welcome: str | None
    commands: list[Any] | None
    peer_type: str | None
    full_link: str | None
    short_link: str | None
    direct: bool
    business: bool
    link_data: Mapping[str, Any] | None
    known_chat: ChatRef | None = None
    contact_id: int | None = None

    def links(self, target: str) -> tuple[str, str | None]:
        """The full link and the short link to prepare or connect with: the plan's, else the
        target itself."""
        if self.full_link is not None:
            return self.full_link, self.short_link
        return self.short_link or target, None


def plan_summary(target: str, plan: ConnectionPlanView) -> PlanSummary:
    """The summary of a target's plan.

    Raises:
        ToolError: the plan is of type ``error`` (a store error the core caught).
    """
    if plan.plan_type == "error":
        raise ToolError(chat_error_text(plan.chat_error))
    summary = PlanSummary(
        plan_type=plan.plan_type,
        sub_type=plan.sub_type,
        kind="contact",
        chat_type="contact",
        name=None,
        simplex_name=target if is_simplex_name(target) else None,
        description=None,
        welcome=None,
        commands=commands_of(plan.commands()),
        peer_type=None,
        full_link=plan.full_link,
        short_link=plan.short_link,
        direct=True,
        business=False,
        link_data=None,
    )
    if plan.plan_type in ("invitationLink", "contactAddress"):
        profile = plan.profile
        summary.link_data = plan.contact_link_data or None
        summary.business = plan.business
        summary.name = _str(profile.get("displayName"))
        summary.description = _str(profile.get("shortDescr"))
        summary.welcome = plan.link_message_text
        summary.peer_type = known_peer_type(_str(profile.get("peerType")))
        if summary.business:
            summary.kind = summary.chat_type = "business"
        elif summary.peer_type in ("bot", "agent", "business"):
            summary.kind = summary.peer_type
        summary.contact_id = plan.known_contact_id
        if summary.contact_id is not None:
            summary.known_chat = ContactRef(summary.contact_id)
    elif plan.plan_type == "groupLink":
        group_profile = plan.group_profile
        summary.link_data = plan.group_link_data or None
        summary.direct = plan.direct
        summary.kind = summary.chat_type = "group" if summary.direct else "channel"
        summary.name = _str(group_profile.get("displayName"))
        summary.description = _str(group_profile.get("shortDescr"))
        summary.welcome = _str(group_profile.get("description"))
        group_id = plan.known_group_id
        if group_id is not None:
            summary.known_chat = GroupRef(group_id)
    else:
        summary.commands = None
    return summary


def check_plan(target: str, summary: PlanSummary, message: str | None) -> bool:
    """The plan checks of connect; ``True`` when the target is known (no action).

    Raises:
        ToolError: the target can't be joined now, or ``message`` is not for this target.
    """
    sub = summary.sub_type
    if sub == "known":
        return True
    if sub in _NOT_JOINABLE:
        raise ToolError(f"{target} can't be joined now: {summary.plan_type} {sub}.")
    if message is not None and (
        summary.plan_type != "contactAddress"
        or sub == "contactViaAddress"
        or summary.link_data is None
    ):
        raise ToolError(
            f"message: {target} is not a contact or business address with short link data, or its contact exists without a connection."
        )
    return False


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
