"""``simplex-mcp serve NAME``: the start sequence, the events, and the stop.

The plan's "Processing: Start and shutdown": the data folder and its lock, the agent's profile
(peer type agent), network settings, the agent control chat found by its custom data or
created, the action counter, the control chat's name and menu kept current, the members loaded
before the first call, the HTTP listener (a port in use exits before any link is printed), the
owners' start (the join link and its QR code), ``Listening on http://127.0.0.1:PORT/mcp``, and
the events, handled in order.

``--durable-actions`` (not the plan's) opens the action journal in the data folder
(:mod:`simplex_protocols.mcp_server.journal`); the journal's actions are back in memory before
HTTP takes calls, and their cards, expiry and the owner commands of the downtime are done before
it listens. The stop then keeps pending actions ("Kept K actions.") instead of cancelling them.
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
from simplex_protocols.core import (
    Capability,
    ChatAPI,
    ChatCore,
    ChatInfoView,
    CoreCapabilities,
    GroupRef,
    MemberView,
    open_core,
    probe_core,
)
from simplex_protocols.errors import (
    CoreConnectionError,
    CoreError,
    CoreOptionError,
    EventOverflowError,
    SimplexError,
)

from .agent import Agent
from .config import VERSION, AgentConfig, ApproveMode, ServeOptions, UsageError
from .control import CONTROL_DESCRIPTION, ControlChat, CustomDataQueue, control_menu
from .files import DataFolder, LockHeldError, TokenFileError
from .http import HttpServer, PortInUseError, bind_port, build_mcp_server
from .journal import ActionJournal, JournalError
from .log import CORE_FAILURES, Log, failure_text, missing_in_response
from .qr import colours_wanted, qr_lines
from .register import shell_quote
from .state import AgentState
from .stdio import StdioServer
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


#: The capabilities of the chat core the server uses (probed at start, parse-only probes).
USED_CAPABILITIES: Final = (
    Capability.CUSTOM_DATA,
    Capability.PREPARED_CHATS,
    Capability.SIMPLEX_NAMES,
)

#: What the server does instead, logged at start for each capability the core lacks.
FALLBACKS: Final = {
    Capability.CUSTOM_DATA: "The core keeps no custom data on chats: the action counter, the "
    "control chat's mark and the standing approvals are kept in the data folder (custom.json).",
    Capability.PREPARED_CHATS: "The core cannot join a channel as a subscriber only: channels "
    "are joined as groups, and their connect cards say so.",
    Capability.SIMPLEX_NAMES: "The core cannot look up SimpleX names: connect needs a link.",
}


def register_hint(options: ServeOptions) -> str:
    """``Add the agent to Claude Code:`` and the register command."""
    command = f"simplex-mcp register {options.name}"
    if options.data_given:
        command += f" --data {shell_quote(str(options.data))}"
    return f"Add the agent to Claude Code:\n  {command}"


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

    def __init__(self, options: ServeOptions, api: ChatAPI, log: Log) -> None:
        self.options = options
        self.api = api
        self.log = log
        self.custom = CustomDataQueue(api)

    async def probe(self, folder: DataFolder) -> CoreCapabilities:
        """What the core lacks of what the server uses, each logged with its fallback; the
        custom data kept in the data folder when the core keeps none."""
        caps = await probe_core(self.api, USED_CAPABILITIES, scratch=False)
        missing = caps.missing
        if missing:
            version = f" {caps.version}" if caps.version else ""
            self.log.line(
                f"Chat core{version} lacks {', '.join(str(c) for c in missing)}"
                " (simplex-call doctor tells more)."
            )
        for capability in missing:
            self.log.line(FALLBACKS[capability])
        if Capability.CUSTOM_DATA in missing:
            self.custom = CustomDataQueue(self.api, folder)
        return caps

    async def profile(self) -> int:
        """The user, or created with peer type agent."""
        display = self.options.display_name or self.options.name
        user, _ = await self.api.ensure_active_user(
            {"displayName": display, "fullName": "", "peerType": "agent"}
        )
        record: Mapping[str, Any] = user
        user_id = record.get("userId")
        if not isinstance(user_id, int):
            raise CoreError({"type": "error", "errorType": {"type": "noActiveUser"}})
        return user_id

    async def update_profile(self, user_id: int) -> str:
        """The profile's display name (updated when --display-name differs) and peer type agent."""
        user = await self.api.active_user()
        local: Mapping[str, Any] = user.get("profile", {}) if user is not None else {}
        display = str(local.get("displayName", self.options.name))
        wanted = self.options.display_name or display
        if wanted != display or local.get("peerType") != "agent":
            profile = {key: local[key] for key in _PROFILE_KEYS if key in local}
            profile.update(displayName=wanted, peerType="agent")
            profile.setdefault("fullName", "")
            await self.api.update_profile(user_id, profile)
        return wanted

    async def control_chat(self, user_id: int, display: str) -> tuple[ChatInfoView, int, bool]:
        """The agent control chat: the group with ``customData.simplexMcp.control``, or a new one.

        Returns the group, the action counter, and whether the group was created now.
        """
        for group_info in await self.api.list_groups(user_id):
            group = _group(group_info)
            data = self.custom.of(group).get("simplexMcp")
            if isinstance(data, Mapping) and data.get("control") is True:
                n = data.get("nextAction")
                return group, n if isinstance(n, int) and n > 0 else 1, False
        return await self.create_control_chat(user_id, display, 1), 1, True

    async def reset_control_chat(
        self, user_id: int, display: str, group: ChatInfoView, next_action: int
    ) -> ChatInfoView:
        """--reset-owners: leave the control chat if needed, delete it (members notified), and
        create a new one that keeps the action counter."""
        ref = group.ref
        assert isinstance(ref, GroupRef)
        membership = group.membership
        # only an owner or a former member deletes a group
        if membership is not None and membership.current and membership.role != "owner":
            await self.api.leave_group(ref.group_id)
        await self.api.delete_chat(ref, "full", notify=True)
        return await self.create_control_chat(user_id, display, next_action)

    async def create_control_chat(self, user_id: int, display: str, n: int) -> ChatInfoView:
        profile = {
            "displayName": display,
            "fullName": "",
            "description": CONTROL_DESCRIPTION,
            "groupPreferences": {"history": {"enable": "on"}, "commands": control_menu()},
        }
        group_info = await self.api.new_group(user_id, profile)
        ref = _group(group_info).ref
        if not isinstance(ref, GroupRef):
            raise missing_in_response("no group in the response", dict(group_info))
        data = {"simplexMcp": {"control": True, "nextAction": n}}
        await self.custom.write_now(ref, data)
        self.log.line(f'Agent control chat "{fold(display)}" created.')
        return _group({**group_info, "customData": data})

    async def keep_current(self, group: ChatInfoView, display: str) -> None:
        """The control chat's display name and command menu, as createControlChat makes them."""
        profile = dict(group.profile)
        prefs = profile.get("groupPreferences")
        prefs = dict(prefs) if isinstance(prefs, Mapping) else {}
        if profile.get("displayName") != display or prefs.get("commands") != control_menu():
            prefs["commands"] = control_menu()
            profile.update(displayName=display, groupPreferences=prefs)
            ref = group.ref
            assert isinstance(ref, GroupRef)
            await self.api.update_group_profile(ref.group_id, profile)


def _group(group_info: Mapping[str, Any]) -> ChatInfoView:
    """A ``GroupInfo`` as the chat it is."""
    return ChatInfoView({"type": "group", "groupInfo": group_info})


def _is_lost(group: ChatInfoView) -> bool:
    membership = group.membership
    return membership is None or membership.role != "owner" or not membership.active


def print_link(log: Log, link: str, size: str) -> None:
    """The join line, the QR code, the link, and (small) the hint for a QR code that does not scan."""
    log.line("Join the agent control chat in the SimpleX app. The link works once:")
    # NO_COLOR or output that is not a terminal: the same layout in plain characters.
    # With --stdio the log is on stderr, so that is the stream whose terminal counts; otherwise
    # the process's stdout, whatever the log writes to.
    colour = colours_wanted(sys.stderr if log.stream is sys.stderr else None)
    for line in qr_lines(link, "large" if size == "large" else "small", colour=colour):
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
        log: the output (default: stdout and stderr; stderr only with ``--stdio``).
        random_bytes: the random source of the token and of the tool calls' trace IDs.
        started: called once the server listens, with its URL and token.
        stop: the stop request (default: SIGINT or SIGTERM, handled by :func:`run_serve`).
    """
    clock = clock if clock is not None else SystemClock()
    # --stdio: standard output carries MCP only, so every line (the QR code too) goes to stderr
    log = log if log is not None else Log(out=sys.stderr if options.stdio else None)
    folder = DataFolder(options.data, random_bytes=random_bytes)
    stopped = False
    journal: ActionJournal | None = None
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
        # --stdio has no HTTP endpoint, so no token: the host owns the pipe
        token = ""
        if not options.stdio:
            try:
                token = folder.token(new=options.new_token)
            except TokenFileError as exc:
                log.error(f"Data folder {options.data}: {exc}")
                return 1
            folder.write_headers(token)
        if options.durable_actions:
            try:
                journal = ActionJournal(folder.journal_path, on_error=log.error)
            except JournalError as exc:
                log.error(f"Data folder {options.data}: {exc}")
                return 1
        log.line(f'SimpleX MCP server {VERSION}, agent "{options.name}"')
        log.line(f"Data folder: {options.data}")
        log.line(f"Approval mode: {options.approve.value}")
        if core is None:
            try:
                # No download of libsimplex here, as in simplex-call and the bot library: a
                # missing library is an error saying how to install it (docs/mcp_server.md).
                core = open_core(
                    options.core,
                    db_prefix=str(folder.db_prefix),
                    event_buffer=EVENT_BUFFER,
                )
            except CoreOptionError as exc:
                log.error(f"--core: {exc}")
                return 2
        code, stopped = await _run(
            options, core, folder, token, clock, log, started, stop, journal, random_bytes
        )
        return code
    except CoreConnectionError as exc:
        log.error(f"Chat core: {exc}")
        return 1
    finally:
        if journal is not None:
            journal.close()
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
    journal: ActionJournal | None = None,
    random_bytes: Callable[[int], bytes] = secrets.token_bytes,
) -> tuple[int, bool]:
    """Run the started server until the stop; return the exit code and whether it stopped
    normally (the stop sequence ran)."""
    async with core:
        api = ChatAPI(core)
        start = _Start(options, api, log)
        events = core.events(buffer=EVENT_BUFFER)
        try:
            user_id = await start.profile()
            if not options.stdio:
                folder.write_server(options.name, options.port, options.expire_hours)
            await api.set_network_config(
                socks=False, smp_proxy="always", smp_proxy_fallback="protected"
            )
            await api.start_chat()
            capabilities = await start.probe(folder)
            display = await start.update_profile(user_id)
            group, next_action, created = await start.control_chat(user_id, display)
            if options.reset_owners and not created:
                group = await start.reset_control_chat(user_id, display, group, next_action)
            lost = _is_lost(group)
            if lost:
                log.line("The agent lost its control chat. Restart the server with --reset-owners.")
            ref = group.ref
            assert isinstance(ref, GroupRef)
            membership = group.membership
            control = ControlChat(
                api, ref.group_id, membership.member_id if membership is not None else None
            )
            if not lost:
                await start.keep_current(group, display)
            await control.load_members()
        except CORE_FAILURES as exc:
            log.error(f"Chat core: {failure_text(exc)}")
            return 1, False
        except OSError as exc:
            log.error(f"Data folder: {exc}")
            return 1, False
        sock = None
        if not options.stdio:
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
            durable_actions=journal is not None,
            call_keys=folder.keys_path if options.call_tool else None,
        )
        state = AgentState(
            api,
            config,
            clock=clock,
            log=log,
            user_id=user_id,
            profile_name=display,
            control=None if lost else control,
            next_action=next_action,
            control_data=start.custom.of(group),
            custom=start.custom,
            capabilities=capabilities,
            journal=journal,
        )
        agent = Agent(state, print_link=lambda link: print_link(log, link, options.qr_code))
        if lost:
            agent.control = control
            agent.lost = True
        kept = 0
        if journal is not None:
            try:
                kept = agent.restore(cards_here=journal.meta("control_group") == ref.group_id)
            except JournalError as exc:
                log.error(f"Data folder: {exc}")
                return 1, False
        mcp = build_mcp_server(
            agent,
            name=options.name,
            display=display,
            host_mode=options.approve is ApproveMode.HOST,
            random_bytes=random_bytes,
        )
        http: HttpServer | StdioServer = (
            StdioServer(mcp) if sock is None else HttpServer(mcp, sock, token)
        )
        # the host closing stdin (--stdio) stops the server as SIGTERM does
        closed = http.closed if isinstance(http, StdioServer) else None
        exit_code = 0
        stopped = False
        events_scope = anyio.CancelScope()

        async def handle_events() -> None:
            with events_scope:
                await _event_loop(agent, events, log)

        async with anyio.create_task_group() as tg:
            await tg.start(agent.run)
            if journal is not None:
                try:
                    await agent.resume(kept)
                except CORE_FAILURES as exc:
                    log.error(f"Chat core: {failure_text(exc)}")
            async with http.running():
                if not lost:
                    try:
                        await _owner_start(agent, control, display, options, log)
                    except CORE_FAILURES as exc:
                        log.error(f"Chat core: {failure_text(exc)}")
                    except UsageError as exc:
                        log.error(exc.message)
                        exit_code = 2
                if exit_code == 0:
                    if closed is None:
                        log.line(f"Listening on {http.url}")
                    else:
                        log.line("Serving MCP on standard input and output.")
                    if started is not None:
                        started(ServerInfo(http.url, http.port, token, display, agent))
                    tg.start_soon(handle_events)
                    await _first_of(stop, closed)
                    # the stop: new actions get "The server is stopping."
                    agent.stopping = True
            # HTTP is closed here: the open calls have ended
            if exit_code == 0:
                # no more events, so no /approve starts a perform
                events_scope.cancel()
                count = await agent.stop_actions()
                if count:
                    log.line(f"Cancelled {count} action{'s' if count != 1 else ''}.")
                kept = agent.approvals.kept
                if kept:
                    log.line(f"Kept {kept} action{'s' if kept != 1 else ''}.")
                await agent.wait_deliveries(DELIVERY_WAIT_S)
                stopped = True
            tg.cancel_scope.cancel()
        return exit_code, stopped


async def _first_of(*events: anyio.Event | None) -> None:
    """Wait until one of ``events`` is set (forever when all are ``None``)."""
    waited = [event for event in events if event is not None]
    if not waited:
        await anyio.sleep_forever()
    async with anyio.create_task_group() as tg:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            tg.cancel_scope.cancel()

        for event in waited:
            tg.start_soon(wait, event)


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
    by_id = {MemberView(m).member_id: m for m in humans}
    for entry in options.owners:
        member = by_id.get(entry.member_id)
        if member is None or MemberView(member).display_name != entry.name:
            raise UsageError(
                f"--owners: member {entry} is not in the agent control chat. Start with --reset-owners --owners, or use the IDs of current members."
            )
    listed = {entry.member_id for entry in options.owners}
    for entry in options.owners:
        if MemberView(by_id[entry.member_id]).role != "owner":
            await control.set_role(entry.member_id, "owner")
    for member in humans:
        member_id = MemberView(member).member_id
        if member_id is not None and member_id not in listed:
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
