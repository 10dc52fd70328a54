"""Where a live run happens: a fresh simulated network with the reference bot (or a mutant),
or the user's chat core and a bot at a SimpleX address."""

from __future__ import annotations

import contextlib
import logging
import random
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols.conformance._model import ClockMode, LiveOptions, TargetUnreachableError
from simplex_protocols.core import (
    ChatAPI,
    ChatCore,
    ContactRef,
    CoreBackend,
    GroupRef,
    event_type,
    event_user_id,
    open_core,
)
from simplex_protocols.discovery import AddressPlan, plan_address
from simplex_protocols.errors import (
    CommandArgumentError,
    CoreConnectionError,
    CoreError,
    SimplexError,
    UnexpectedResponseError,
)
from simplex_protocols.rpc import SigningKey

from ._clock import SteppedClock, drive_clock
from ._context import GroupSetup, TargetFacts, Untestable
from ._fixture import reference_bot
from ._mutants import mutant_spec
from ._proxy import RewritingBackend
from ._session import Identity, until

if TYPE_CHECKING:
    from simplex_protocols.bot import ResponderBot

__all__ = ["BotFactory", "CoreEnvironment", "SimEnvironment", "known_builtins", "read_facts"]

JSON = dict[str, Any]

#: Builds the bot under test on the simulated network: ``make_bot(data_dir, clock)``.
BotFactory = Callable[[Path, Clock], "ResponderBot"]

#: The group the suite makes on the simulated network, and its second bot.
GROUP_NAME = "conformance-group"
SECOND_BOT = "conformance-second"
#: The second caller's user on a real core.
SECOND_USER = "simplex-conformance-b"
#: How long joining or connecting may take, in seconds of the run's clock.
CONNECT_WAIT_S = 60.0

#: Loggers of the built-in bots: the checks provoke the warnings they log (a refused
#: requestState, a late answer), which are the bot's business, not the run's output.
_BOT_LOGGERS = ("mcp", "a2a", "simplex_protocols")


@contextlib.contextmanager
def _quiet_bot_logs() -> Iterator[None]:
    saved = {name: logging.getLogger(name).level for name in _BOT_LOGGERS}
    for name in _BOT_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


async def read_facts(core: ChatCore, user_id: int, target: str) -> TargetFacts:
    """The target's declarations, from ``/_connect plan`` (nothing is sent to the bot).

    Raises:
        TargetUnreachableError: the link or name cannot be read (unknown, deleted, not an
            address), or the core is gone.
    """
    try:
        plan = await plan_address(ChatAPI(core), user_id, target)
    except CoreConnectionError as exc:
        raise TargetUnreachableError(f"the chat core was lost: {exc}") from exc
    except (CoreError, UnexpectedResponseError, CommandArgumentError) as exc:
        raise TargetUnreachableError(f"the target cannot be read: {exc}") from exc
    return TargetFacts(target, plan, plan.protocols, _link_data(plan))


def _link_data(plan: AddressPlan) -> Mapping[str, Any]:
    raw = _dict(plan.raw.get("connectionPlan"))
    for key in ("contactAddressPlan", "groupLinkPlan", "invitationLinkPlan"):
        sub = _dict(raw.get(key))
        for data_key in ("contactSLinkData_", "groupSLinkData_"):
            data = sub.get(data_key)
            if isinstance(data, dict):
                return data
        contact = sub.get("contact")
        if isinstance(contact, dict) and isinstance(contact.get("profile"), dict):
            # An address already known as a contact: its profile is the one it sent us.
            return {"profile": contact["profile"]}
    return {}


async def _wait_event(
    core: ChatCore,
    clock: Clock,
    send: Callable[[], Any],
    matches: Callable[[JSON], bool],
    what: str,
) -> JSON:
    """Send a command and wait for the event ``matches`` accepts."""
    found: list[JSON] = []
    async with core.events() as events:
        response = await send()
        if isinstance(response, dict) and matches(response):
            return response

        async def watch() -> None:
            async for event in events:
                if matches(event):
                    found.append(event)
                    return

        done, _ = await until(clock, CONNECT_WAIT_S, watch)
    if not done or not found:
        raise Untestable(f"{what} did not happen within {CONNECT_WAIT_S:g} s")
    return found[0]


async def _connect(identity: Identity, facts: TargetFacts, clock: Clock) -> str | None:
    """Connect ``identity`` to the bot; returns the name to mention in a business chat."""
    core = identity.core
    api = ChatAPI(core)
    # Each caller has its own view of the address: a contact already made by an earlier run
    # is reused.
    plan = facts.plan
    if identity.label != "A":
        plan = (await read_facts(core, identity.user_id, facts.target)).plan
    if plan.status in ("known", "contactViaAddress") and plan.contact_id is not None:
        identity.chat = ContactRef(plan.contact_id)
        return None
    if plan.status not in ("ok",):
        raise Untestable(f"the address cannot be connected to now (plan: {plan.status})")
    if plan.business:
        data = _dict(plan.raw.get("connectionPlan")).get("contactAddressPlan")
        link_data = _dict(_dict(data).get("contactSLinkData_"))
        full = plan.full_link or facts.target
        short = plan.link if plan.link != plan.full_link else None
        chat = await api.prepare_contact(identity.user_id, full, link_data, short_link=short)
        info = _dict(_dict(chat).get("chatInfo"))
        group_id = _dict(info.get("groupInfo")).get("groupId")
        if not isinstance(group_id, int):
            raise Untestable("the business chat could not be prepared")
        await _wait_event(
            core,
            clock,
            lambda: api.connect_prepared_group(group_id),
            lambda e: (
                event_type(e) == "userJoinedGroup"
                and _dict(e.get("groupInfo")).get("groupId") == group_id
            ),
            "joining the business chat",
        )
        identity.chat = GroupRef(group_id)
        for member in await api.list_members(group_id):
            if member.get("memberCategory") == "host":
                identity.member_id = int(member["groupMemberId"])
                profile = _dict(member.get("memberProfile"))
                name = profile.get("displayName")
                return name if isinstance(name, str) else None
        return None
    link = plan.link or plan.full_link or facts.target
    event = await _wait_event(
        core,
        clock,
        lambda: api.connect(identity.user_id, link),
        lambda e: event_type(e) == "contactConnected" and event_user_id(e) == identity.user_id,
        "connecting to the bot",
    )
    contact_id = _dict(event.get("contact")).get("contactId")
    if not isinstance(contact_id, int):
        raise Untestable("the contact has no ID")
    identity.chat = ContactRef(contact_id)
    return None


class _Base:
    """What both environments share: identities, facts, connecting."""

    clock: Clock
    identities: dict[str, Identity]
    facts: TargetFacts | None
    mentions: dict[str, str]

    def _new_key_source(self, seed: int) -> Callable[[], SigningKey]:
        rng = random.Random(f"conformance-keys-{seed}")
        return lambda: SigningKey.generate(rng.randbytes)

    async def connect(self, identity: Identity) -> None:
        if self.facts is None:
            raise Untestable("the target's declarations are unknown")
        name = await _connect(identity, self.facts, self.clock)
        if name is not None:
            self.mentions[identity.label] = name


class SimEnvironment(_Base):
    """A fresh simulated network on a manual clock, with the reference bot (or a mutant) as
    the bot under test, two suite callers and, on demand, a test group with a second bot."""

    def __init__(
        self,
        options: LiveOptions,
        builtin: str,
        workdir: Path,
        make_bot: BotFactory | None = None,
    ) -> None:
        self.options = options
        self.builtin = builtin
        self.make_bot = make_bot
        self.workdir = workdir
        self.stepped = SteppedClock()
        # ``--clock system`` on the simulator: real time, no driver (slow; for timing a bot).
        self.clock: Clock = self.stepped if options.clock is ClockMode.MANUAL else SystemClock()
        self.identities = {}
        self.facts = None
        self.mentions = {}
        self.target = ""
        self._stack = contextlib.AsyncExitStack()
        self._tg: anyio.abc.TaskGroup | None = None
        self._group: GroupSetup | None = None
        self.new_key = self._new_key_source(options.seed)

    async def __aenter__(self) -> SimEnvironment:
        from ._simnet import QuietNetwork

        await self._stack.__aenter__()
        try:
            self._stack.enter_context(_quiet_bot_logs())
            self.network = QuietNetwork(seed=self.options.seed, clock=self.clock)
            self._tg = await self._stack.enter_async_context(anyio.create_task_group())
            if self.clock is self.stepped:
                self._tg.start_soon(drive_clock, self.stepped)
            self._stack.callback(self._tg.cancel_scope.cancel)
            for label, name in (("A", "suite-a"), ("B", "suite-b")):
                user = self.network.add_user(name, peer_type="agent")
                core = await self._stack.enter_async_context(ChatCore(self.network.backend(name)))
                self.identities[label] = Identity(label, core, user.user_id, self.new_key())
            self.target, self.bot_name = await self._serve_bot()
            ident = self.identities["A"]
            self.facts = await read_facts(ident.core, ident.user_id, self.target)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def _serve_bot(self) -> tuple[str, str]:
        """Serve the bot under test as the network's user ``bot``, until the run ends; returns
        its address and display name."""
        backend: CoreBackend = self.network.backend("bot")
        if self.builtin != "reference":
            spec = mutant_spec(self.builtin)
            assert spec is not None
            backend = RewritingBackend(backend, spec.make(), self.clock)
        if self.make_bot is not None:
            bot = self.make_bot(self.workdir / "bot", self.clock)
        else:
            bot = reference_bot(data_dir=self.workdir / "bot", clock=self.clock)
        await self._stack.enter_async_context(bot.serving(backend))
        return bot.address, str(bot.display_name)

    async def group(self) -> GroupSetup:
        if self._group is None:
            self._group = await self._make_group()
        return self._group

    async def _join(self, core: ChatCore, user_id: int, link: str) -> int:
        event = await _wait_event(
            core,
            self.clock,
            lambda: ChatAPI(core).connect(user_id, link),
            lambda e: event_type(e) == "userJoinedGroup",
            "joining the test group",
        )
        return int(_dict(event.get("groupInfo"))["groupId"])

    async def _make_group(self) -> GroupSetup:
        owner = self.identities["A"]
        api = ChatAPI(owner.core)
        created = await api.new_group(owner.user_id, {"displayName": GROUP_NAME, "fullName": ""})
        group_id = created["groupId"]
        link_info = (await api.create_group_link(group_id))["connLinkContact"]
        link = link_info.get("connShortLink") or link_info["connFullLink"]
        if not link:
            raise Untestable("the test group has no link")
        groups: dict[str, Any] = {"A": GroupRef(group_id)}
        second = reference_bot(
            data_dir=self.workdir / "second", clock=self.clock, display_name=SECOND_BOT
        )
        await self._stack.enter_async_context(second.serving(self.network.backend("second")))
        members = 3
        for name in ("bot", "second"):
            core = await self._stack.enter_async_context(ChatCore(self.network.backend(name)))
            await self._join(core, self.network.user(name).user_id, link)
        joiner = self.identities["B"]
        groups["B"] = GroupRef(await self._join(joiner.core, joiner.user_id, link))

        async def everyone() -> list[Any]:
            while True:
                found = await api.list_members(group_id)
                ready = [m for m in found if m.get("memberStatus") in ("connected", "complete")]
                if len(ready) >= members:
                    return list(found)
                await self.clock.sleep(1.0)

        done, listed = await until(self.clock, CONNECT_WAIT_S, everyone)
        if not done or listed is None:
            raise Untestable("the test group's members did not all connect")
        ids: dict[str, int] = {}
        for member in listed:
            display = _dict(member.get("memberProfile")).get("displayName")
            if isinstance(display, str):
                ids[display] = int(member["groupMemberId"])
        target_name = self.bot_name
        if target_name not in ids or SECOND_BOT not in ids:
            raise Untestable("the bots are not members of the test group")
        return GroupSetup(
            groups=groups,
            target_member={"A": ids[target_name]},
            target_name=target_name,
            other_name=SECOND_BOT,
            other_member=ids[SECOND_BOT],
            serving_members=(ids[SECOND_BOT],),
        )


class CoreEnvironment(_Base):
    """The user's chat core (``--core``) and a bot at a SimpleX address.

    The suite runs as the core's active user (created as ``simplex-conformance``, peer type
    ``agent``, when the core has none). The second caller of the isolation checks is a second
    user of the same core, ``simplex-conformance-b`` (found or created when a check needs it);
    the core's active user is switched before each of its commands that act as the active
    user. Service RPC checks use separate signing keys.
    """

    def __init__(self, options: LiveOptions) -> None:
        self.options = options
        self.clock = SystemClock()
        self.identities = {}
        self.facts = None
        self.mentions = {}
        self.target = options.target or ""
        self._stack = contextlib.AsyncExitStack()
        self._group: GroupSetup | None = None
        self.new_key = self._new_key_source(options.seed)

    async def __aenter__(self) -> CoreEnvironment:
        await self._stack.__aenter__()
        try:
            try:
                core = await self._stack.enter_async_context(open_core(self.options.core))
            except CoreConnectionError as exc:
                raise TargetUnreachableError(f"the chat core cannot be reached: {exc}") from exc
            api = ChatAPI(core)
            try:
                user = await api.active_user()
                if user is None:
                    user = await api.create_active_user(
                        {"displayName": "simplex-conformance", "fullName": "", "peerType": "agent"}
                    )
                await api.start_chat(service_requests=False)
            except SimplexError as exc:
                raise TargetUnreachableError(f"the chat core refused the setup: {exc}") from exc
            user_id = int(user["userId"])
            self._active = user_id
            self.identities["A"] = Identity(
                "A", core, user_id, self.new_key(), activate=self._activator("A")
            )
            # The second caller is a second user of the same core, made when a check needs it.
            self.identities["B"] = Identity(
                "B", core, 0, self.new_key(), activate=self._activator("B")
            )
            self.facts = await read_facts(core, user_id, self.target)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    def _activator(self, label: str) -> Callable[[], Awaitable[None]]:
        async def activate() -> None:
            identity = self.identities[label]
            if identity.user_id == 0:
                identity.user_id = await self._second_user(identity.core)
            if self._active != identity.user_id:
                # Commands such as /_send act as the core's active user.
                await ChatAPI(identity.core).set_active_user(identity.user_id)
                self._active = identity.user_id

        return activate

    async def _second_user(self, core: ChatCore) -> int:
        api = ChatAPI(core)
        for info in await api.list_users():
            user = _dict(_dict(info).get("user"))
            if user.get("localDisplayName") == SECOND_USER and isinstance(user.get("userId"), int):
                return int(user["userId"])
        try:
            created = await api.create_active_user(
                {"displayName": SECOND_USER, "fullName": "", "peerType": "agent"}
            )
        except SimplexError as exc:
            raise Untestable(f"a second user cannot be made in this core: {exc}") from exc
        self._active = int(created["userId"])
        return self._active

    async def connect(self, identity: Identity) -> None:
        if identity.activate is not None:
            await identity.activate()
        await super().connect(identity)

    async def group(self) -> GroupSetup:
        if self._group is None:
            self._group = await self._join_group()
        return self._group

    async def _join_group(self) -> GroupSetup:
        link = self.options.group_link
        if link is None:
            raise Untestable("no test group was given (--group LINK)")
        identity = self.identities["A"]
        core = identity.core
        event = await _wait_event(
            core,
            self.clock,
            lambda: ChatAPI(core).connect(identity.user_id, link),
            lambda e: event_type(e) == "userJoinedGroup",
            "joining the test group",
        )
        group_id = int(_dict(event.get("groupInfo"))["groupId"])
        await self.clock.sleep(5.0)
        members = await ChatAPI(core).list_members(group_id)
        bot_name = self.facts.plan.display_name if self.facts is not None else None
        target = other = None
        for member in members:
            name = _dict(member.get("memberProfile")).get("displayName")
            if name == bot_name and target is None:
                target = member
            elif isinstance(name, str) and other is None:
                other = member
        if target is None or other is None:
            raise Untestable("the test group needs the bot and one other member")
        return GroupSetup(
            groups={"A": GroupRef(group_id)},
            target_member={"A": int(target["groupMemberId"])},
            target_name=str(bot_name),
            other_name=str(_dict(other.get("memberProfile"))["displayName"]),
        )


def known_builtins() -> tuple[str, ...]:
    from ._mutants import MUTANTS

    return ("reference", *(m.mutant.name for m in MUTANTS))
