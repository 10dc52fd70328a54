"""The suite's side of a live run: its caller identities, the messages it sends to the bot
under test, what comes back, the transcript of each check, and the message budget.

Everything goes through the chat core's own commands, written raw, so that the suite can send
what a conforming caller never would (a malformed command, a mismatched ``requestKey``) and see
everything the bot sends back (replies that do not quote, replies after the end of an answer):

- a chat call is ``/_send <chat> text <text>``; every message received in that chat from then
  on is collected, whether it quotes the command or not, until the call is done (the binding's
  final message, or a predicate) or its wait ends, then for a short while longer
  (``after_final_s``) to catch anything sent after the end of the answer;
- a Service RPC call is ``/_service_request <userId> <target> [timeout=] [sign_key=] <json>``
  with the envelope as given; the ``serviceResponse`` or the core's error is kept.

Waits run on the run's clock: on the simulated network its driver moves it when nothing else
can move, so a 30 s wait costs no real time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from simplex_protocols._clock import Clock
from simplex_protocols._wire import WireJSONError, dumps, loads
from simplex_protocols.core import (
    ChatCore,
    ChatRef,
    GroupRef,
    commands,
    event_type,
    received_messages,
)
from simplex_protocols.errors import CoreError
from simplex_protocols.rpc import SigningKey
from simplex_protocols.transports._common import run_until

__all__ = [
    "BudgetExceeded",
    "ChatExchange",
    "Identity",
    "RPCExchange",
    "Recorder",
    "Reply",
    "Session",
    "until",
]

JSON = dict[str, Any]
T = TypeVar("T")

#: Characters of a message text kept in a transcript; longer texts are cut with a note.
TRANSCRIPT_TEXT_CHARS: Final = 2_000

#: Seconds the core gets beyond a Service RPC timeout to report it before the suite gives up.
_CORE_GRACE_S: Final = 10.0

#: The longest ``retryAfter`` the suite waits out before repeating a refused request once.
MAX_POLITE_RETRY_S: Final = 120.0


class BudgetExceeded(Exception):
    """Sending one more message would exceed the run's message budget."""


async def until(
    clock: Clock, seconds: float, func: Callable[[], Awaitable[T]]
) -> tuple[bool, T | None]:
    """Run ``func`` for at most ``seconds`` of ``clock``: ``(True, result)`` when it returned,
    ``(False, None)`` when the time ran out first (``func`` was cancelled)."""
    return await run_until(clock, clock.now() + seconds, func)


@dataclass(slots=True)
class Identity:
    """One of the suite's callers.

    Attributes:
        label: ``A`` or ``B`` (the second caller, for isolation checks).
        core: its chat core.
        user_id: its user in that core.
        signing_key: its Ed25519 key for signed Service RPC requests.
        chat: its conversation with the bot under test, once connected.
        member_id: in a business chat, the business member to mention.
        group: the test group, once joined.
        activate: makes this identity's user the core's active user (when several identities
            share one core), before a command that acts as the active user.
    """

    label: str
    core: ChatCore
    user_id: int
    signing_key: SigningKey
    chat: ChatRef | None = None
    member_id: int | None = None
    group: GroupRef | None = None
    activate: Callable[[], Awaitable[None]] | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """A message received in the chat of a call while the call was collecting.

    Attributes:
        item_id: its item ID in the suite's database.
        text: its text.
        message: the text read as JSON when it is a JSON object, else ``None``.
        quoted_item_id: the item it quotes, if any.
        sender: the sender's display name.
        member_id: the sender's ``groupMemberId`` in a group.
        after_final: it arrived after the call was done (a reply after the end of an answer).
        t: seconds from the start of the check.
    """

    item_id: int
    text: str
    message: JSON | None
    quoted_item_id: int | None
    sender: str | None
    member_id: int | None
    after_final: bool
    t: float


@dataclass(slots=True)
class ChatExchange:
    """One command sent in a chat and what came back.

    Attributes:
        text: the command's text.
        command_item_id: the command's item ID, ``None`` when the core refused to send it.
        messages: every message received in the chat while collecting, in arrival order.
        done: whether the call was done before its wait ended.
        send_error: the core's refusal to send the command, if any.
    """

    text: str
    command_item_id: int | None
    messages: list[Reply] = field(default_factory=list)
    done: bool = False
    send_error: CoreError | None = None

    def from_sender(self, member_id: int | None) -> list[Reply]:
        """The messages of one group member (``None``: every message, as in a direct chat)."""
        if member_id is None:
            return list(self.messages)
        return [m for m in self.messages if m.member_id == member_id]

    def replies(self, member_id: int | None = None) -> list[Reply]:
        """The messages that quote the command."""
        return [
            m
            for m in self.from_sender(member_id)
            if m.quoted_item_id is not None and m.quoted_item_id == self.command_item_id
        ]

    def unquoted(self, member_id: int | None = None) -> list[Reply]:
        """The messages that quote nothing."""
        return [m for m in self.from_sender(member_id) if m.quoted_item_id is None]

    def answer(self, member_id: int | None = None) -> list[Reply]:
        """The messages that belong to this command's answer: quoting it, or quoting nothing
        (a bot that forgets the quote is still answering, which CALL-REP-1 judges)."""
        return [
            m
            for m in self.from_sender(member_id)
            if m.quoted_item_id is None or m.quoted_item_id == self.command_item_id
        ]


@dataclass(slots=True)
class RPCExchange:
    """One Service RPC request and what came back.

    Attributes:
        envelope: the request envelope sent.
        signed: whether it was signed.
        response: the response envelope (``responseData``), if any.
        core_error: the requester core's error (for example ``A_SERVICE timeout``), if any.
        timed_out: no response within the request's timeout.
        retried_after: the ``retryAfter`` the suite waited before repeating the request once.
    """

    envelope: JSON
    signed: bool
    response: JSON | None = None
    core_error: CoreError | None = None
    timed_out: bool = False
    retried_after: float | None = None

    @property
    def error_code(self) -> str | None:
        """The envelope error's code, if the response is an envelope error."""
        error = self.response.get("error") if self.response is not None else None
        code = error.get("code") if isinstance(error, Mapping) else None
        return code if isinstance(code, str) else None


class Recorder:
    """The transcript of the check being run: every command sent and everything received, in
    order, with secrets and addresses redacted."""

    def __init__(self, clock: Clock, redactions: Mapping[str, str]) -> None:
        self._clock = clock
        self._redactions = {k: v for k, v in redactions.items() if k}
        self._start = clock.now()
        self.entries: list[JSON] = []

    def restart(self) -> None:
        """Start the transcript of a new check."""
        self._start = self._clock.now()
        self.entries = []

    def redact(self, text: str) -> str:
        """``text`` with the target's address and other redacted values replaced."""
        for secret, shown in self._redactions.items():
            text = text.replace(secret, shown)
        return text

    def _value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, Mapping):
            return {self.redact(str(k)): self._value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._value(v) for v in value]
        return value

    def add(self, direction: str, **fields: Any) -> None:
        """One transcript entry: ``dir`` is ``out``, ``in`` or ``note``."""
        entry: JSON = {"t": round(self._clock.now() - self._start, 3), "dir": direction}
        for key, value in fields.items():
            if value is None:
                continue
            if key == "text" and isinstance(value, str) and len(value) > TRANSCRIPT_TEXT_CHARS:
                entry["text"] = self.redact(value[:TRANSCRIPT_TEXT_CHARS])
                entry["textChars"] = len(value)
                continue
            entry[key] = self._value(value)
        self.entries.append(entry)

    def note(self, text: str) -> None:
        self.add("note", text=text)


def _as_object(text: str) -> JSON | None:
    try:
        value = loads(text)
    except (WireJSONError, ValueError):
        return None
    return value if isinstance(value, dict) else None


class Session:
    """The suite's callers and the bot under test, as the checks use them.

    Args:
        clock: the run's clock.
        identities: the suite's callers by label (``A``; ``B`` when a second caller exists).
        target: the bot's address (its contact address link or SimpleX name).
        recorder: the transcript of the current check.
        budget: the most messages the run may send (``None``: no limit).
        timeout_s: the default wait for an answer.
        after_final_s: how long a call keeps collecting after it is done.
    """

    def __init__(
        self,
        *,
        clock: Clock,
        identities: Mapping[str, Identity],
        target: str,
        recorder: Recorder,
        budget: int | None,
        timeout_s: float,
        after_final_s: float,
    ) -> None:
        self.clock = clock
        self.identities = dict(identities)
        self.target = target
        self.recorder = recorder
        self.budget = budget
        self.timeout_s = timeout_s
        self.after_final_s = after_final_s
        self.sent = 0

    # ------------------------------------------------------------------ budget

    def remaining(self) -> int | None:
        """Messages left in the budget (``None``: no limit)."""
        return None if self.budget is None else max(0, self.budget - self.sent)

    def charge(self, messages: int = 1) -> None:
        """Count messages about to be sent.

        Raises:
            BudgetExceeded: they would exceed the budget (nothing is counted).
        """
        if self.budget is not None and self.sent + messages > self.budget:
            raise BudgetExceeded(f"the message budget ({self.budget}) is spent: {self.sent} sent")
        self.sent += messages

    def identity(self, label: str) -> Identity:
        return self.identities[label]

    # ------------------------------------------------------------------ chat

    async def chat(
        self,
        who: str,
        text: str,
        *,
        chat: ChatRef | None = None,
        done: Callable[[ChatExchange], bool] | None = None,
        wait_s: float | None = None,
        after_final_s: float | None = None,
    ) -> ChatExchange:
        """Send ``text`` as a message in a chat and collect what comes back.

        Args:
            who: the identity that sends.
            chat: the chat (default: the identity's conversation with the bot).
            done: when the call is done, given the exchange so far (default: never, so the
                whole wait is spent, as when checking that a bot stays silent).
            wait_s: the longest wait (default: the session's timeout).
            after_final_s: how long to go on collecting once done (default: the session's).

        Raises:
            BudgetExceeded: the budget is spent.
        """
        ident = self.identity(who)
        where = chat if chat is not None else ident.chat
        if where is None:
            raise RuntimeError(f"caller {who} has no conversation with the bot")
        if isinstance(where, GroupRef):
            _no_credentials_in_group(text)
        if ident.activate is not None:
            await ident.activate()
        self.charge()
        exchange = ChatExchange(text, None)
        async with ident.core.events() as events:
            self.recorder.add("out", transport="chat", who=who, chat=str(where), text=text)
            try:
                sent = await ident.core.command(commands.send_text(where, text))
            except CoreError as exc:
                exchange.send_error = exc
                self.recorder.add("in", transport="chat", who=who, coreError=exc.chain)
                return exchange
            exchange.command_item_id = _first_item_id(sent)
            self.recorder.add("note", item=exchange.command_item_id, text="sent")
            is_done = done if done is not None else (lambda _ex: False)

            async def collect(after: bool) -> None:
                async for event in events:
                    if event_type(event) != "newChatItems":
                        continue
                    for received in received_messages(event):
                        if received.chat_ref != where or received.live:
                            continue
                        reply = Reply(
                            item_id=received.item_id,
                            text=received.text,
                            message=_as_object(received.text),
                            quoted_item_id=received.quoted_item_id,
                            sender=received.sender,
                            member_id=received.sender_member_id,
                            after_final=after,
                            t=self.clock.now(),
                        )
                        exchange.messages.append(reply)
                        self.recorder.add(
                            "in",
                            transport="chat",
                            who=who,
                            sender=received.sender,
                            member=received.sender_member_id,
                            item=received.item_id,
                            quotes=received.quoted_item_id,
                            afterEnd=after or None,
                            text=received.text,
                        )
                    if not after and is_done(exchange):
                        return

            wait = self.timeout_s if wait_s is None else wait_s
            exchange.done, _ = await until(self.clock, wait, lambda: collect(False))
            if exchange.done:
                tail = self.after_final_s if after_final_s is None else after_final_s
                if tail > 0:
                    await until(self.clock, tail, lambda: collect(True))
            else:
                self.recorder.note(f"wait of {wait:g} s ended")
        return exchange

    # ------------------------------------------------------------------ Service RPC

    async def rpc(
        self,
        who: str,
        envelope: Mapping[str, Any],
        *,
        sign: SigningKey | None = None,
        timeout_s: float | None = None,
        respect_retry: bool = True,
    ) -> RPCExchange:
        """Send one Service RPC request with ``envelope`` exactly as given.

        Args:
            who: the identity whose core sends it.
            sign: the key the core signs with (``sign_key=``); ``None`` for unsigned.
            timeout_s: the request's ``timeout=`` (default: the session's timeout).
            respect_retry: when the answer is an error with ``retryAfter`` (at most
                :data:`MAX_POLITE_RETRY_S`), wait that long and repeat the request once.

        Raises:
            BudgetExceeded: the budget is spent.
        """
        exchange = await self._rpc_once(who, envelope, sign=sign, timeout_s=timeout_s)
        retry = _retry_after(exchange.response)
        if respect_retry and retry is not None and retry <= MAX_POLITE_RETRY_S:
            self.recorder.note(f"retryAfter {retry:g} s: waiting, then repeating once")
            await self.clock.sleep(retry)
            again = await self._rpc_once(who, envelope, sign=sign, timeout_s=timeout_s)
            again.retried_after = retry
            return again
        return exchange

    async def _rpc_once(
        self,
        who: str,
        envelope: Mapping[str, Any],
        *,
        sign: SigningKey | None,
        timeout_s: float | None,
    ) -> RPCExchange:
        ident = self.identity(who)
        self.charge()
        timeout = self.timeout_s if timeout_s is None else timeout_s
        exchange = RPCExchange(dict(envelope), sign is not None)
        self.recorder.add(
            "out",
            transport="rpc",
            who=who,
            signed=sign is not None,
            signer=sign.public_key.encode() if sign is not None else None,
            timeout=timeout,
            request=dict(envelope),
            text=dumps(dict(envelope)),
        )
        command = commands.send_service_request(
            ident.user_id,
            self.target,
            envelope,
            timeout_s=timeout,
            sign_key=sign.to_sign_key() if sign is not None else None,
        )

        async def send() -> JSON:
            return await ident.core.command(command)

        try:
            finished, response = await until(self.clock, timeout + _CORE_GRACE_S, send)
        except CoreError as exc:
            exchange.core_error = exc
            exchange.timed_out = exc.chain[-1:] == ["timeout"]
            self.recorder.add("in", transport="rpc", who=who, coreError=exc.chain)
            return exchange
        if not finished or response is None:
            exchange.timed_out = True
            self.recorder.add("in", transport="rpc", who=who, coreError=["no answer"])
            return exchange
        data = response.get("responseData")
        if response.get("type") != "serviceResponse" or not isinstance(data, dict):
            self.recorder.add("in", transport="rpc", who=who, unexpected=response.get("type"))
            exchange.core_error = CoreError({"type": "unexpected"}, response=response)
            return exchange
        exchange.response = data
        self.recorder.add("in", transport="rpc", who=who, response=data)
        return exchange


def _no_credentials_in_group(text: str) -> None:
    """A2A-AUTHZ-4 applies to the suite too: it never sends a credential in a group.

    Raises:
        CallFormatError: the text is an A2A call whose request carries a credential.
    """
    from simplex_protocols.chat_call import parse_call_command
    from simplex_protocols.errors import CallFramingError

    try:
        call = parse_call_command(text)
    except CallFramingError:
        return
    if call.protocol == "a2a":
        from simplex_protocols.bindings.a2a import check_no_credentials_in_group

        check_no_credentials_in_group(call.request, in_group=True)


def _first_item_id(response: Mapping[str, Any]) -> int | None:
    items = response.get("chatItems")
    if not isinstance(items, list) or not items:
        return None
    first = items[0]
    item = first.get("chatItem") if isinstance(first, Mapping) else None
    meta = item.get("meta") if isinstance(item, Mapping) else None
    item_id = meta.get("itemId") if isinstance(meta, Mapping) else None
    return item_id if isinstance(item_id, int) and not isinstance(item_id, bool) else None


def _retry_after(response: Mapping[str, Any] | None) -> float | None:
    error = response.get("error") if response is not None else None
    value = error.get("retryAfter") if isinstance(error, Mapping) else None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None
