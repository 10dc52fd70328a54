"""``simplex-mcp serve NAME``: the start sequence, the events, and the stop.

The plan's "Processing: Start and shutdown": the data folder and its lock, the agent's profile
(peer type agent), network settings, the agent control chat found by its custom data or
created, the action counter, the control chat's name and menu kept current, the members loaded
before the first call, the HTTP listener (a port in use exits before any link is printed), the
owners' start (the join link and its QR code), ``Listening on http://127.0.0.1:PORT/mcp``, and
the events, handled in order.
"""

from __future__ import annotations

import secrets
import signal
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
import anyio.abc

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols._wire import dumps
from simplex_protocols.core import ChatCore, open_core
from simplex_protocols.errors import (
    CoreConnectionError,
    CoreError,
    CoreOptionError,
    EventOverflowError,
    SimplexError,
)

from .agent import Agent, AgentConfig
from .cli import VERSION, ApproveMode, ServeOptions, UsageError
from .control import CONTROL_DESCRIPTION, ControlChat, control_menu
from .files import DataFolder, LockHeldError
from .http import HttpServer, PortInUseError, bind_port, build_mcp_server
from .log import Log, chat_error_text
from .qr import qr_lines
from .register import shell_quote
from .text import fold

__all__ = ["ServerInfo", "run_serve", "serve", "shell_quote"]

#: Events buffered while the server starts, and at most unread by the event loop later.
EVENT_BUFFER: Final = 1_000_000
#: At a stop, the wait for the control chat's pending deliveries.
DELIVERY_WAIT_S: Final = 10.0


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What a started server tells its caller (tests, embedding code)."""

    url: str
    port: int
    token: str
    display: str
    agent: Agent


def register_hint(options: ServeOptions) -> str:
    """``Add the agent to Claude Code:`` and the register command."""
    command = f"simplex-mcp register {options.name}"
    if options.data_given:
        command += f" --data {shell_quote(str(options.data))}"
    return f"Add the agent to Claude Code:\n  {command}"


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


_PROFILE_KEYS: Final = (
    "displayName",
    "fullName",
    "shortDescr",
    "description",
    "image",
    "contactLink",
    "preferences",
    "peerType",
    "badge",
    "contactDomain",
)


class _Start:
    """The start sequence and the run of one server."""

    def __init__(
        self, options: ServeOptions, core: ChatCore, folder: DataFolder, clock: Clock, log: Log
    ) -> None:
        self.options = options
        self.core = core
        self.folder = folder
        self.clock = clock
        self.log = log

    async def command(self, cmd: str) -> dict[str, Any]:
        return await self.core.command(cmd)

    async def profile(self) -> tuple[int, str]:
        """The user, or created with peer type agent; updated when --display-name differs."""
        try:
            user = _obj((await self.command("/user")).get("user"))
        except CoreError as exc:
            if exc.error_type != "noActiveUser":
                raise
            display = self.options.display_name or self.options.name
            new_user = {
                "profile": {"displayName": display, "fullName": "", "peerType": "agent"},
                "pastTimestamp": False,
            }
            user = _obj((await self.command(f"/_create user {dumps(new_user)}")).get("user"))
        user_id = user.get("userId")
        if not isinstance(user_id, int):
            raise CoreError({"type": "error", "errorType": {"type": "noActiveUser"}})
        return user_id, str(_obj(user.get("profile")).get("displayName", self.options.name))

    async def update_profile(self, user_id: int) -> str:
        user = _obj((await self.command("/user")).get("user"))
        local = _obj(user.get("profile"))
        display = str(local.get("displayName", self.options.name))
        wanted = self.options.display_name or display
        if wanted != display or local.get("peerType") != "agent":
            profile = {key: local[key] for key in _PROFILE_KEYS if key in local}
            profile.update(displayName=wanted, peerType="agent")
            profile.setdefault("fullName", "")
            await self.command(f"/_profile {user_id} {dumps(profile)}")
        return wanted

    async def control_chat(self, user_id: int, display: str) -> tuple[Mapping[str, Any], int, bool]:
        """The agent control chat: the group with ``customData.simplexMcp.control``, or a new one.

        Returns the group, the action counter, and whether the group was created now.
        """
        groups = (await self.command(f"/_groups {user_id}")).get("groups")
        for group in groups if isinstance(groups, list) else []:
            data = _obj(_obj(_obj(group).get("customData")).get("simplexMcp"))
            if data.get("control") is True:
                n = data.get("nextAction")
                return _obj(group), n if isinstance(n, int) and n > 0 else 1, False
        return await self.create_control_chat(user_id, display, 1), 1, True

    async def reset_control_chat(
        self, user_id: int, display: str, group: Mapping[str, Any], next_action: int
    ) -> Mapping[str, Any]:
        """--reset-owners: leave the control chat if needed, delete it (members notified), and
        create a new one that keeps the action counter."""
        group_ref = f"#{group.get('groupId')}"
        membership = _obj(group.get("membership"))
        # only an owner or a former member deletes a group
        if (
            membership.get("memberStatus") in _CURRENT_STATUSES
            and membership.get("memberRole") != "owner"
        ):
            await self.command(f"/_leave {group_ref}")
        await self.command(f"/_delete {group_ref} full notify=on")
        return await self.create_control_chat(user_id, display, next_action)

    async def create_control_chat(self, user_id: int, display: str, n: int) -> Mapping[str, Any]:
        profile = {
            "displayName": display,
            "fullName": "",
            "description": CONTROL_DESCRIPTION,
            "groupPreferences": {"history": {"enable": "on"}, "commands": control_menu()},
        }
        group = _obj((await self.command(f"/_group {user_id} {dumps(profile)}")).get("groupInfo"))
        data = {"simplexMcp": {"control": True, "nextAction": n}}
        await self.command(f"/_set custom #{group.get('groupId')} {dumps(data)}")
        self.log.line(f'Agent control chat "{fold(display)}" created.')
        return {**group, "customData": data}

    async def keep_current(self, group: Mapping[str, Any], display: str) -> None:
        """The control chat's display name and command menu, as createControlChat makes them."""
        profile = dict(_obj(group.get("groupProfile")))
        prefs = dict(_obj(profile.get("groupPreferences")))
        if profile.get("displayName") != display or prefs.get("commands") != control_menu():
            prefs["commands"] = control_menu()
            profile.update(displayName=display, groupPreferences=prefs)
            await self.command(f"/_group_profile #{group.get('groupId')} {dumps(profile)}")


#: A current membership (memberCurrent): the agent may still post, so it leaves before it
#: deletes a group where it is not an owner.
_CURRENT_STATUSES: Final = frozenset(
    {"introduced", "intro-inv", "accepted", "announced", "connected", "complete", "creator"}
)


def _is_lost(group: Mapping[str, Any]) -> bool:
    membership = _obj(group.get("membership"))
    return membership.get("memberRole") != "owner" or membership.get("memberStatus") not in (
        "creator",
        "connected",
        "complete",
    )


def print_link(log: Log, link: str, size: str) -> None:
    """The join line, the QR code, the link, and (small) the hint for a QR code that does not scan."""
    log.line("Join the agent control chat in the SimpleX app. The link works once:")
    for line in qr_lines(link, "large" if size == "large" else "small"):
        log.line(line)
    log.line(link)
    if size != "large":
        log.line(
            "If the QR code does not scan, restart with --qr-code large, or paste the link into the app."
        )


async def serve(
    options: ServeOptions,
    *,
    core: ChatCore | None = None,
    clock: Clock | None = None,
    log: Log | None = None,
    random_bytes: Callable[[int], bytes] = secrets.token_bytes,
    started: Callable[[ServerInfo], None] | None = None,
    stop: anyio.Event | None = None,
) -> int:
    """Run the server until ``stop`` is set (or the process is stopped); return the exit code.

    Args:
        options: the parsed options.
        core: the chat core (default: from ``--core``, databases in ``DIR/simplex``).
        clock: the clock (default: the system clock).
        log: the output (default: stdout and stderr).
        random_bytes: the random source of the token.
        started: called once the server listens, with its URL and token.
        stop: the stop request (default: SIGINT or SIGTERM, handled by :func:`run_serve`).
    """
    clock = clock if clock is not None else SystemClock()
    log = log if log is not None else Log()
    folder = DataFolder(options.data, random_bytes=random_bytes)
    stopped = False
    try:
        folder.prepare()
        folder.acquire_lock()
    except LockHeldError as exc:
        log.error(str(exc))
        return 1
    except OSError as exc:
        log.error(f"Data folder {options.data}: {exc.strerror or exc}")
        return 1
    try:
        token = folder.token(new=options.new_token)
        folder.write_headers(token)
        log.line(f'SimpleX MCP server {VERSION}, agent "{options.name}"')
        log.line(f"Data folder: {options.data}")
        log.line(f"Approval mode: {options.approve.value}")
        if core is None:
            try:
                core = open_core(
                    options.core,
                    db_prefix=str(folder.db_prefix),
                    allow_download=True,
                    event_buffer=EVENT_BUFFER,
                )
            except CoreOptionError as exc:
                log.error(f"--core: {exc}")
                return 2
        code, stopped = await _run(options, core, folder, token, clock, log, started, stop)
        return code
    except CoreConnectionError as exc:
        log.error(f"Chat core: {exc}")
        return 1
    finally:
        folder.release_lock()
        if stopped:
            log.line("Stopped.")


async def _run(
    options: ServeOptions,
    core: ChatCore,
    folder: DataFolder,
    token: str,
    clock: Clock,
    log: Log,
    started: Callable[[ServerInfo], None] | None,
    stop: anyio.Event | None,
) -> tuple[int, bool]:
    """Run the started server until the stop; return the exit code and whether it stopped
    normally (the stop sequence ran)."""
    async with core:
        start = _Start(options, core, folder, clock, log)
        events = core.events(buffer=EVENT_BUFFER)
        try:
            user_id, _ = await start.profile()
            folder.write_server(options.name, options.port, options.expire_hours)
            await start.command("/network socks=off smp-proxy=always smp-proxy-fallback=protected")
            await start.command("/_start")
            display = await start.update_profile(user_id)
            group, next_action, created = await start.control_chat(user_id, display)
            if options.reset_owners and not created:
                group = await start.reset_control_chat(user_id, display, group, next_action)
            lost = _is_lost(group)
            if lost:
                log.line("The agent lost its control chat. Restart the server with --reset-owners.")
            group_id = group.get("groupId")
            assert isinstance(group_id, int)
            membership_id = _obj(group.get("membership")).get("groupMemberId")
            control = ControlChat(
                start.command, group_id, membership_id if isinstance(membership_id, int) else None
            )
            if not lost:
                await start.keep_current(group, display)
            await control.load_members()
        except CoreError as exc:
            log.error(f"Chat core: {chat_error_text(exc.chat_error)}")
            return 1, False
        try:
            sock = bind_port(options.port)
        except PortInUseError as exc:
            log.error(str(exc))
            return 1, False
        config = AgentConfig(
            name=options.name,
            display=display,
            mode=options.approve,
            owners=options.owners,
            expire_hours=options.expire_hours,
            register_hint=register_hint(options),
            qr_code=options.qr_code,
        )
        agent = Agent(
            start.command,
            config,
            clock=clock,
            log=log,
            user_id=user_id,
            profile_name=display,
            control=None if lost else control,
            next_action=next_action,
            control_data=_obj(group.get("customData")),
            print_link=lambda link: print_link(log, link, options.qr_code),
        )
        if lost:
            agent.control = control
            agent.lost = True
        http = HttpServer(
            build_mcp_server(
                agent,
                name=options.name,
                display=display,
                host_mode=options.approve is ApproveMode.HOST,
            ),
            sock,
            token,
        )
        exit_code = 0
        stopped = False
        events_scope = anyio.CancelScope()

        async def handle_events() -> None:
            with events_scope:
                await _event_loop(agent, events, log)

        async with anyio.create_task_group() as tg:
            await tg.start(agent.run)
            async with http.running():
                if not lost:
                    try:
                        await _owner_start(agent, control, display, options, log)
                    except CoreError as exc:
                        log.error(f"Chat core: {chat_error_text(exc.chat_error)}")
                    except UsageError as exc:
                        log.error(exc.message)
                        exit_code = 2
                if exit_code == 0:
                    log.line(f"Listening on {http.url}")
                    if started is not None:
                        started(ServerInfo(http.url, http.port, token, display, agent))
                    tg.start_soon(handle_events)
                    await (stop.wait() if stop is not None else anyio.sleep_forever())
                    # the stop: new actions get "The server is stopping."
                    agent.stopping = True
            # HTTP is closed here: the open calls have ended
            if exit_code == 0:
                # no more events, so no /approve starts a perform
                events_scope.cancel()
                count = await agent.stop_actions()
                if count:
                    log.line(f"Cancelled {count} action{'s' if count != 1 else ''}.")
                await agent.wait_deliveries(DELIVERY_WAIT_S)
                stopped = True
            tg.cancel_scope.cancel()
        return exit_code, stopped


async def _owner_start(
    agent: Agent, control: ControlChat, display: str, options: ServeOptions, log: Log
) -> None:
    """ownerStart: the register hint, a link for the first owner, or the owners of --owners.

    Raises:
        UsageError: an entry of ``--owners LIST`` is not a member of the agent control chat.
    """
    if options.owners is None:
        if control.human_owners():
            log.line(register_hint(options))
            return
        if control.humans():
            log.line("No owners in the agent control chat.")
        link = await control.create_link("member")
        print_link(log, link, options.qr_code)
        log.line(
            f'Whoever joins by this link becomes an owner of "{fold(display)}" and approves its actions. To approve owners yourself, start with --owners.'
        )
        return
    humans = control.humans()
    if not options.owners:
        if not humans:
            link = await control.create_link("observer")
            print_link(log, link, options.qr_code)
            log.line("The link adds an observer. Its ID and name are printed when it joins.")
            return
        await agent.announce_restart(humans[-1], humans)
        return
    by_id = {m.get("groupMemberId"): m for m in humans}
    for entry in options.owners:
        member = by_id.get(entry.member_id)
        if member is None or ControlChat.member_name(member) != entry.name:
            raise UsageError(
                f"--owners: member {entry} is not in the agent control chat. Start with --reset-owners --owners, or use the IDs of current members."
            )
    listed = {entry.member_id for entry in options.owners}
    for entry in options.owners:
        if by_id[entry.member_id].get("memberRole") != "owner":
            await control.set_role(entry.member_id, "owner")
    for member in humans:
        member_id = member.get("groupMemberId")
        if isinstance(member_id, int) and member_id not in listed:
            await control.remove_member(member_id)
    await control.delete_link()
    log.line(f"Owners: {','.join(str(entry) for entry in options.owners)}.")
    log.line(register_hint(options))


async def _event_loop(agent: Agent, events: Any, log: Log) -> None:
    try:
        async for event in events:
            agent.handle_event(event)
    except EventOverflowError as exc:
        log.error(f"Chat core events: {exc}")
    except CoreConnectionError as exc:
        log.error(f"Chat core: {exc}")


def run_serve(options: ServeOptions) -> int:
    """Run ``serve`` in this process until SIGINT or SIGTERM; return the exit code."""

    async def main() -> int:
        stop = anyio.Event()
        result = 0
        async with anyio.create_task_group() as tg:

            async def signals() -> None:
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
                    async for _ in received:
                        stop.set()

            tg.start_soon(signals)
            try:
                result = await serve(options, stop=stop)
            except SimplexError as exc:
                Log().error(str(exc))
                result = 1
            tg.cancel_scope.cancel()
        return result

    try:
        return anyio.run(main)
    except KeyboardInterrupt:
        return 130
    finally:
        sys.stdout.flush()
