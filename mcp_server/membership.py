"""The members of the agent control chat: owners joining and leaving, and the chat lost.

The events of the control chat's group (plan "Events in the agent control chat") keep its
member records current; a human joining by the link becomes an owner (no ``--owners``) or is
announced with the ``--owners`` to restart with; with ``--owners LIST`` an owner outside the
list, or an owner of the list who is no longer one, is announced; when no approver is left the
link is opened again; and the agent's profile removed, the group deleted or the agent below
owner lose the control chat.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from simplex_protocols.core import EventView, MemberView

from .approvals import Approvals
from .control import GREETING, owner_entries
from .log import CORE_FAILURES, failure_text
from .state import AgentState
from .text import code_span, fold, name_md

__all__ = ["MEMBERSHIP_EVENTS", "Membership"]

#: The events that change the control chat's members or the agent's place in it.
MEMBERSHIP_EVENTS: Final = frozenset(
    {
        "joinedGroupMember",
        "joinedGroupMemberConnecting",
        "connectedToGroupMember",
        "memberRole",
        "leftMember",
        "deletedMember",
        "deletedMemberUser",
        "groupDeleted",
    }
)

_GONE: Final = frozenset({"left", "removed", "deleted"})


def _by_member_id(members: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(members, key=lambda member: MemberView(member).member_id or 0)


class Membership:
    """Follows the agent control chat's members.

    Args:
        state: the agent's state.
        approvals: fails the pending actions when the control chat is lost.
        print_link: prints a new join link and its QR code (no ``--owners``).
    """

    def __init__(
        self,
        state: AgentState,
        approvals: Approvals,
        print_link: Callable[[str], None] | None,
    ) -> None:
        self._state = state
        self._approvals = approvals
        self._print_link = print_link
        self._had_approvers = bool(state.approvers())
        #: Members outside ``--owners LIST`` already announced as owners that can't approve.
        self._announced_outside: set[int] = set()

    def on_event(self, event: EventView) -> None:
        """A membership event (:data:`MEMBERSHIP_EVENTS`); long work is started, not awaited."""
        state = self._state
        control = state.control
        if control is None or state.lost or event.group_id != control.group_id:
            return
        kind = event.type
        if kind in ("deletedMemberUser", "groupDeleted"):
            self.lose_control_chat()
            return
        member = event.member
        member_id = member.member_id if member is not None else None
        if kind == "memberRole" and member_id == control.membership_id:
            if event.to_role != "owner":
                self.lose_control_chat()
            return
        before = self._had_approvers
        was_owner = member_id is not None and any(
            MemberView(m).member_id == member_id for m in control.human_owners()
        )
        if member is not None:
            record = dict(member.raw)
            if kind == "memberRole" and event.to_role is not None:
                record["memberRole"] = event.to_role
            if kind in ("leftMember", "deletedMember"):
                record["memberStatus"] = "left" if kind == "leftMember" else "removed"
            control.update_member(record)
        owners = state.config.owners
        if kind == "joinedGroupMember" and member is not None and member_id is not None:
            if owners is None:
                state.spawn(self._owner_joined, member_id)
                return
            if not owners:
                control.members.setdefault(member_id, dict(member.raw))["memberStatus"] = (
                    "connected"
                )
                state.spawn(self._observer_joined, member_id)
                return
        if owners and member_id is not None:
            self._listed_owner_change(member_id, was_owner=was_owner)
        after = bool(state.approvers())
        self._had_approvers = after
        if before and not after and owners is None:
            state.log.line("No owners in the agent control chat.")
            state.spawn(self._open_link)

    def _listed_owner_change(self, member_id: int, *, was_owner: bool) -> None:
        """--owners LIST: an owner outside the list appeared, or an owner in the list is gone."""
        control = self._state.control
        owners = self._state.config.owners
        assert control is not None and owners
        record = control.members.get(member_id, {})
        member = MemberView(record)
        name = member.display_name
        head = f"(member {member_id})"
        if member_id not in {entry.member_id for entry in owners}:
            # members added in the app: joinedGroupMemberConnecting, connectedToGroupMember,
            # memberRole; announced once, until the member stops being an owner
            if member.role == "owner" and member.status not in _GONE:
                if member_id in self._announced_outside:
                    return
                self._announced_outside.add(member_id)
                others = [m for m in control.human_owners() if MemberView(m).member_id != member_id]
                terminal, chat = owner_entries(_by_member_id([*others, record]))
                tail = "is now an owner and can't approve actions yet. Restart the server with"
                self._say(
                    f"{fold(name)} {head} {tail} {terminal}",
                    f"{name_md(name)} {head} {tail} {chat}",
                )
            else:
                self._announced_outside.discard(member_id)
            return
        if not was_owner or any(
            MemberView(m).member_id == member_id for m in control.human_owners()
        ):
            return
        remaining = _by_member_id(control.human_owners())
        head += " is no longer an owner."
        if remaining:
            terminal, chat = owner_entries(remaining)
            self._say(
                f"{fold(name)} {head} Restart the server with {terminal}",
                f"{name_md(name)} {head} Restart the server with {chat}",
            )
        else:
            tail = "No owners remain: restart the server with"
            self._say(
                f"{fold(name)} {head} {tail} --reset-owners --owners",
                f"{name_md(name)} {head} {tail} {code_span('--reset-owners --owners')}",
            )

    def _say(self, line: str, text: str) -> None:
        """Log a line now, and post its chat form in the agent control chat."""
        self._state.log.line(line)
        self._state.spawn(self._post_notice, text)

    async def _post_notice(self, text: str, *, when_lost: bool = False) -> None:
        """Post in the agent control chat (``when_lost``: even once it is lost); a refusal is
        logged."""
        state = self._state
        if state.control is None or (state.lost and not when_lost):
            return
        try:
            await state.control.post(text)
        except CORE_FAILURES as exc:
            state.log.error(f"Could not post in the agent control chat: {failure_text(exc)}")

    async def _owner_joined(self, member_id: int) -> None:
        """A human joined by the link (no --owners): the link is deleted, the member is an owner."""
        state = self._state
        control = state.control
        if control is None:
            return
        try:
            await control.delete_link()
            await control.set_role(member_id, "owner")
            member = control.members.get(member_id, {})
            if member.get("memberStatus") not in ("connected", "complete"):
                member["memberStatus"] = "connected"
            await control.post(GREETING)
        except CORE_FAILURES as exc:
            state.log.error(f"Could not make member {member_id} an owner: {failure_text(exc)}")
            return
        self._had_approvers = bool(state.approvers())
        name = fold(MemberView(control.members.get(member_id, {})).display_name)
        state.log.line(
            f"{name} joined (member {member_id}) and is now an owner. The link is deleted."
        )
        if state.config.register_hint:
            state.log.line(state.config.register_hint)

    async def announce_restart(
        self, member: Mapping[str, Any], humans: Sequence[Mapping[str, Any]]
    ) -> None:
        """--owners without a list: log and post which --owners to restart with."""
        if self._state.control is None:
            return
        terminal, chat = owner_entries(humans)
        view = MemberView(member)
        head = f"joined (member {view.member_id}). Restart the server with"
        self._state.log.line(f"{fold(view.display_name)} {head} {terminal}")
        await self._post_notice(f"{name_md(view.display_name)} {head} {chat}", when_lost=True)

    async def _observer_joined(self, member_id: int) -> None:
        """A human joined by the observer link (--owners without a list)."""
        control = self._state.control
        if control is None:
            return
        try:
            await control.delete_link()
        except CORE_FAILURES as exc:
            self._state.log.error(f"Could not delete the link: {failure_text(exc)}")
        member = control.members.get(member_id)
        if member is not None:
            await self.announce_restart(member, control.humans() or [member])

    async def _open_link(self) -> None:
        state = self._state
        control = state.control
        if control is None:
            return
        try:
            link = await control.create_link("member")
        except CORE_FAILURES as exc:
            state.log.error(
                f"Could not create the link of the agent control chat: {failure_text(exc)}"
            )
            return
        if self._print_link is not None:
            self._print_link(link)

    def lose_control_chat(self) -> None:
        """The agent's profile was removed, the group deleted, or the agent's role lowered."""
        state = self._state
        if state.lost:
            return
        state.lost = True
        self._approvals.fail_pending()
        state.log.line("The agent lost its control chat. Restart the server with --reset-owners.")
