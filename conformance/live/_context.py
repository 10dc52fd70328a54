"""What a live check sees: the target's declarations, the session, and helpers to call the bot
over the transport under test and to turn what it did into an :class:`Outcome`."""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from simplex_protocols._wire import dumps
from simplex_protocols.conformance._model import (
    CheckSpec,
    LiveOptions,
    Outcome,
    Verdict,
    failure_verdict,
)
from simplex_protocols.core import mention
from simplex_protocols.declarations import ProtocolDeclarations
from simplex_protocols.discovery import AddressPlan
from simplex_protocols.rpc import SigningKey

from ._session import ChatExchange, Identity, Reply, RPCExchange, Session

__all__ = [
    "Answer",
    "CheckContext",
    "CheckFunction",
    "Environment",
    "FixtureMissing",
    "GroupSetup",
    "LiveCheck",
    "RunState",
    "TargetFacts",
    "Untestable",
]

JSON = dict[str, Any]
T = TypeVar("T")


class Untestable(Exception):
    """A prerequisite of the check is missing (a fixture, a second caller, the budget)."""


class FixtureMissing(Untestable):
    """The bot lacks a fixture tool or behaviour the check needs (``fixture``: its name).

    Unlike the other prerequisites this one is the bot's to provide: with the fixture profile
    the command line fails the run on it unless ``--allow-untestable`` is given.
    """

    def __init__(self, message: str, fixture: str) -> None:
        super().__init__(message)
        self.fixture = fixture


@dataclass(frozen=True, slots=True)
class TargetFacts:
    """What the bot declares, read from its link data before connecting.

    Attributes:
        target: the target as given.
        plan: the address plan (``/_connect plan``).
        declarations: the ``protocols`` declaration of its profile.
        link_data: the link data as the core returned it.
    """

    target: str
    plan: AddressPlan
    declarations: ProtocolDeclarations
    link_data: Mapping[str, Any]

    @property
    def profile(self) -> Mapping[str, Any]:
        profile = self.link_data.get("profile")
        return profile if isinstance(profile, Mapping) else {}

    @property
    def preferences(self) -> Mapping[str, Any]:
        prefs = self.profile.get("preferences")
        return prefs if isinstance(prefs, Mapping) else {}

    def serves(self, protocol: str, transport: str) -> bool:
        """Whether the bot declares ``protocol`` on ``transport``."""
        decl = self.declarations.get(protocol)
        if decl is None:
            return False
        return decl.chat if transport == "chat" else decl.rpc if transport == "rpc" else True

    def versions(self, protocol: str) -> tuple[str, ...]:
        decl = self.declarations.get(protocol)
        return tuple(decl.versions) if decl is not None else ()


@dataclass(slots=True)
class GroupSetup:
    """A test group with the bot under test in it.

    Attributes:
        groups: each suite identity's group reference, by label.
        target_member: the bot's ``groupMemberId`` in each identity's view, by label.
        target_name: the bot's display name in the group (what a mention names).
        other_name: another member's display name, to mention someone who is not the bot.
        other_member: that member's ``groupMemberId`` in identity ``A``'s view, when it is a
            bot that answers (the suite's second bot on the simulated network).
        serving_members: the members expected to answer a broadcast, in ``A``'s view.
    """

    groups: dict[str, Any]
    target_member: dict[str, int]
    target_name: str
    other_name: str
    other_member: int | None = None
    serving_members: tuple[int, ...] = ()


class Environment(Protocol):
    """Where the run happens: the simulated network or a real core.

    ``mentions`` holds, by identity label, the name a ``/_call`` in that identity's
    conversation mentions (the business member of a business chat).
    """

    mentions: dict[str, str]

    async def connect(self, identity: Identity) -> None:
        """Give ``identity`` a conversation with the bot (sets ``identity.chat``).

        Raises:
            Untestable: the conversation cannot be made.
        """
        ...

    async def group(self) -> GroupSetup:
        """The test group (made or joined once).

        Raises:
            Untestable: no test group is available.
        """
        ...


@dataclass(slots=True)
class RunState:
    """What checks learn once and share: the fixture's presence, created resources."""

    cache: dict[str, Any] = field(default_factory=dict)
    request_ids: int = 0

    def next_id(self) -> int:
        self.request_ids += 1
        return self.request_ids


@dataclass(slots=True)
class Answer:
    """A JSON-RPC request sent over one transport, and what came back.

    Attributes:
        transport: ``chat`` or ``rpc``.
        protocol: the protocol named with the request.
        request: the request (``None`` when raw text was sent).
        final: the rule that says whether a message ends the answer.
        chat: the chat exchange.
        rpc: the Service RPC exchange.
        member_id: in a group or business chat, the bot's member ID (whose messages count).
    """

    transport: str
    protocol: str
    request: JSON | None
    final: Callable[[Mapping[str, Any]], bool]
    chat: ChatExchange | None = None
    rpc: RPCExchange | None = None
    member_id: int | None = None

    @property
    def messages(self) -> list[Reply]:
        """The chat messages of the answer (quoting the command or quoting nothing)."""
        return self.chat.answer(self.member_id) if self.chat is not None else []

    @property
    def final_reply(self) -> Reply | None:
        """The first chat message of the answer that ends it."""
        for reply in self.messages:
            if reply.message is not None and self.final(reply.message):
                return reply
        return None

    @property
    def message(self) -> JSON | None:
        """The protocol message that ends the answer: the final reply's, or the envelope's
        ``response``."""
        if self.chat is not None:
            reply = self.final_reply
            return reply.message if reply is not None else None
        if self.rpc is not None and self.rpc.response is not None:
            response = self.rpc.response.get("response")
            return response if isinstance(response, dict) else None
        return None

    @property
    def envelope_error(self) -> str | None:
        return self.rpc.error_code if self.rpc is not None else None

    @property
    def silent(self) -> bool:
        """Nothing came back at all."""
        if self.chat is not None:
            return not self.messages
        return self.rpc is None or self.rpc.response is None


CheckFunction = Callable[["CheckContext"], Awaitable[Outcome]]


@dataclass(frozen=True, slots=True)
class LiveCheck:
    """A check and the coroutine that runs it on one transport.

    Attributes:
        spec: its identity and requirements.
        run: the coroutine.
        identities: the suite callers it needs in a conversation (``("A",)`` or
            ``("A", "B")``); over Service RPC a second caller is a second signing key.
        fixture: the fixture it relies on (``mcp`` tools, ``a2a`` behaviours), if any.
        needs: transports the bot must declare for the check's protocol, besides its own.
    """

    spec: CheckSpec
    run: CheckFunction
    identities: tuple[str, ...] = ("A",)
    fixture: str | None = None
    needs: tuple[str, ...] = ()


class CheckContext:
    """One check on one transport: what the checks call."""

    def __init__(
        self,
        *,
        check: LiveCheck,
        transport: str,
        protocol: str | None,
        session: Session,
        facts: TargetFacts,
        options: LiveOptions,
        state: RunState,
        environment: Environment,
        keys: Callable[[], SigningKey],
    ) -> None:
        self.check = check
        self.spec = check.spec
        self.transport = transport
        self.protocol = protocol
        self.session = session
        self.facts = facts
        self.options = options
        self.state = state
        self.environment = environment
        self._keys = keys
        self.reproduce: str | None = None

    # ------------------------------------------------------------------ outcomes

    def passed(self, detail: str, **evidence: Any) -> Outcome:
        return Outcome(Verdict.PASS, detail, evidence=evidence)

    def breach(
        self,
        detail: str,
        *,
        requirements: Sequence[str] | None = None,
        reproduce: str | None = None,
        **evidence: Any,
    ) -> Outcome:
        """The check failed: ``FAIL`` when one of the requirements is a MUST, else ``WARN``."""
        reqs = tuple(requirements) if requirements is not None else self.spec.requirements
        return Outcome(
            failure_verdict(reqs),
            detail,
            evidence=evidence,
            reproduce=reproduce if reproduce is not None else self.reproduce,
        )

    def warn(self, detail: str, *, reproduce: str | None = None, **evidence: Any) -> Outcome:
        return Outcome(
            Verdict.WARN,
            detail,
            evidence=evidence,
            reproduce=reproduce if reproduce is not None else self.reproduce,
        )

    def acceptable(self, ambiguity: str, detail: str, **evidence: Any) -> Outcome:
        return Outcome(Verdict.ACCEPTABLE, detail, ambiguity=ambiguity, evidence=evidence)

    def untestable(self, detail: str) -> Outcome:
        return Outcome(Verdict.UNTESTABLE, detail)

    def not_applicable(self, detail: str) -> Outcome:
        return Outcome(Verdict.NA, detail)

    # ------------------------------------------------------------------ callers

    async def caller(self, label: str = "A") -> Identity:
        """A suite identity with a conversation with the bot (made on first use)."""
        identity = self.session.identities.get(label)
        if identity is None:
            raise Untestable(f"no second caller identity ({label}) is available")
        if identity.chat is None:
            failed = self.state.cache.get(f"connect-failed:{label}")
            if isinstance(failed, str):
                raise Untestable(failed)
            try:
                await self.environment.connect(identity)
            except Untestable as exc:
                # Tried once per run: a bot that does not accept connections is not asked
                # again by every chat check.
                self.state.cache[f"connect-failed:{label}"] = str(exc)
                raise
        elif identity.activate is not None:
            await identity.activate()
        return identity

    async def shared(self, key: str, make: Callable[[], Awaitable[T]]) -> T:
        """An exchange several checks judge, sent once per run: the first check to ask makes
        it; the others get the same value, and its transcript entries marked with ``from``
        (the check that sent them), so each transcript shows what it judged."""
        full_key = f"shared:{self.transport}:{key}"
        cached = self.state.cache.get(full_key)
        if cached is None:
            start = len(self.session.recorder.entries)
            value = await make()
            entries = [dict(e) for e in self.session.recorder.entries[start:]]
            self.state.cache[full_key] = (value, entries, self.spec.id, self.reproduce)
            return value
        value, entries, owner, reproduce = cached
        self.note(f"judging the exchange that {owner} sent")
        self.session.recorder.entries.extend({**e, "from": owner} for e in entries)
        self.reproduce = reproduce
        result: T = value
        return result

    def new_key(self) -> SigningKey:
        """A fresh signing key, for a requester the bot has never seen."""
        return self._keys()

    def next_id(self) -> int:
        return self.state.next_id()

    def note(self, text: str) -> None:
        self.session.recorder.note(text)

    # ------------------------------------------------------------------ calls

    async def call(
        self,
        request: Mapping[str, Any],
        *,
        protocol: str | None = None,
        transport: str | None = None,
        who: str = "A",
        sign: SigningKey | None = None,
        request_key: str | None = None,
        envelope: Mapping[str, Any] | None = None,
        final: Callable[[Mapping[str, Any]], bool] | None = None,
        wait_s: float | None = None,
        done: Callable[[ChatExchange], bool] | None = None,
    ) -> Answer:
        """Send ``request`` to the bot over the transport and collect the answer.

        Args:
            request: the protocol's request.
            protocol: the protocol to name (default: the check's).
            transport: ``chat`` or ``rpc`` (default: the check's).
            who: the suite identity that calls.
            sign: Service RPC: the key that signs the request; its public key becomes the
                envelope's ``requestKey`` unless ``request_key`` or ``envelope`` says otherwise.
            request_key: Service RPC: the ``requestKey`` to put in the envelope.
            envelope: Service RPC: the whole envelope, as it is (``request`` is then only
                used to judge the answer).
            final: the rule for the end of the answer (default: the binding's).
            wait_s: the longest wait.
            done: chat: when the call is done (default: a final message arrived).
        """
        proto = protocol or self.protocol or "mcp"
        kind = transport or self.transport
        rule = final if final is not None else final_rule(proto, request)
        self.reproduce = reproducer(
            self.session.target, proto, kind, request, signed=sign is not None
        )
        if kind == "rpc":
            body: JSON
            if envelope is not None:
                body = dict(envelope)
            else:
                body = {"protocol": proto, "request": dict(request)}
                key = request_key
                if key is None and sign is not None:
                    key = sign.public_key.encode()
                if key is not None:
                    body["requestKey"] = key
            exchange = await self.session.rpc(who, body, sign=sign, timeout_s=wait_s)
            return Answer("rpc", proto, dict(request), rule, rpc=exchange)
        identity = await self.caller(who)
        text = call_text(proto, request, mention_name=_mention_of(identity, self))
        member = identity.member_id

        def finished(exchange: ChatExchange) -> bool:
            return any(r.message is not None and rule(r.message) for r in exchange.answer(member))

        chat = await self.session.chat(
            who, text, done=done if done is not None else finished, wait_s=wait_s
        )
        return Answer("chat", proto, dict(request), rule, chat=chat, member_id=member)

    async def send_text(
        self,
        text: str,
        *,
        who: str = "A",
        final: Callable[[Mapping[str, Any]], bool] | None = None,
        wait_s: float | None = None,
        protocol: str | None = None,
    ) -> Answer:
        """Send ``text`` as it is in the conversation; done at a message ``final`` accepts
        (default: never: the whole wait is spent)."""
        identity = await self.caller(who)
        member = identity.member_id
        rule = final if final is not None else (lambda _m: False)

        def finished(exchange: ChatExchange) -> bool:
            return any(r.message is not None and rule(r.message) for r in exchange.answer(member))

        chat = await self.session.chat(who, text, done=finished, wait_s=wait_s)
        self.reproduce = raw_reproducer("chat", text)
        return Answer(
            "chat", protocol or self.protocol or "", None, rule, chat=chat, member_id=member
        )

    @property
    def silence_s(self) -> float:
        """How long the suite waits to decide that a bot stays silent."""
        return min(self.options.timeout_s, 15.0)


def _mention_of(identity: Identity, ctx: CheckContext) -> str | None:
    return ctx.environment.mentions.get(identity.label)


def call_text(protocol: str, request: Mapping[str, Any], *, mention_name: str | None = None) -> str:
    """The text of ``/_call [@member ]<protocol> <request>``."""
    head = "/_call " + (mention(mention_name) + " " if mention_name else "")
    return f"{head}{protocol} {dumps(dict(request))}"


def final_rule(protocol: str, request: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    """The binding's rule for the end of an answer to ``request``."""
    if protocol == "mcp":
        from simplex_protocols.bindings.mcp import is_final

        return lambda message: is_final(request, message)
    if protocol == "a2a":
        from simplex_protocols.bindings.a2a import is_final_message

        return lambda message: is_final_message(request, message)
    return lambda message: "result" in message or "error" in message


def reproducer(
    target: str, protocol: str, transport: str, request: Mapping[str, Any], *, signed: bool
) -> str:
    """The ``simplex-call`` command that sends ``request`` the same way."""
    method = request.get("method")
    params = request.get("params")
    params = dict(params) if isinstance(params, Mapping) else {}
    args: list[str] = ["simplex-call", target]
    version: str | None = None
    if protocol == "mcp":
        meta = params.pop("_meta", None)
        if isinstance(meta, Mapping):
            rev = meta.get("io.modelcontextprotocol/protocolVersion")
            version = rev if isinstance(rev, str) else None
    elif protocol == "a2a":
        parameters = request.get("a2a-service-parameters")
        if isinstance(parameters, Mapping):
            value = parameters.get("A2A-Version")
            version = value if isinstance(value, str) else None
    args.append(method if isinstance(method, str) else "?")
    if params:
        args.append(dumps(params))
    args += ["--protocol", protocol, "--transport", transport]
    if version is not None:
        args += ["--protocol-version", version]
    if signed and transport == "rpc":
        args.append("--sign")
    return " ".join(shlex.quote(a) for a in args)


def raw_reproducer(transport: str, payload: str) -> str:
    """A reproducer for what ``simplex-call`` cannot send: the raw message, for a chat core."""
    if transport == "chat":
        return "send this message in the conversation with the bot: " + payload
    return "send this Service RPC request with the chat core: " + payload
