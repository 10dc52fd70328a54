"""The scenarios of the caller-side harness, as data.

A scenario is a small world on the simulated network (the client, a bot, sometimes a second
bot, a third party or a group of members) and the calls the client is asked to make. Each call
carries its peers' script: the messages they send and when (:class:`ChatStep`), or the
envelopes a responder answers each attempt with (:class:`RPCStep`). The engine in
``_stage.py`` plays the scripts; the checks in ``_checks.py`` compare what the client sent and
returned with what the scripts say it should have.

Times are real seconds counted from the moment the command reached its callee: a client's own
waits run on its own clock, so the scripts keep them short and explicit (``wait_s`` is in the
context) and put a margin between "in time" and "late".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ._dialects import FORGED_MARKER

__all__ = [
    "BIG_REPLY_CHARS",
    "CLIENT_NAME",
    "GROUP_NAME",
    "OVERSIZE_REQUEST_CHARS",
    "PEER_NAMES",
    "SCENARIOS",
    "CallPlan",
    "ChatStep",
    "RPCStep",
    "Scenario",
    "scenario_by_id",
]

#: The client's display name (peers recognise its messages by it).
CLIENT_NAME: Final = "client"
#: The group of the group scenarios.
GROUP_NAME: Final = "team"
#: Display names of the peers, by their key in the scripts. ``bob`` is the member a mention
#: calls: his name has a space, so the mention must be quoted (CALL-CMD-4).
PEER_NAMES: Final[Mapping[str, str]] = {
    "bot": "bot",
    "bot2": "bot-two",
    "mallory": "mallory",
    "bob": "Bob Smith",
    "carol": "carol",
    "dave": "dave",
}

#: Characters of text in the request that cannot fit one chat message (CALL-SIZE-1).
OVERSIZE_REQUEST_CHARS: Final = 16_000
#: Characters of text in a large (but legal) final reply.
BIG_REPLY_CHARS: Final = 12_000
#: JSON bytes of a Service RPC response over the recommended 10,000 (RPC-LIM-3) and within
#: the 11,106 padded bytes the core carries (RPC-LIM-2).
BIG_RESPONSE_BYTES: Final = 10_400

#: Seconds a chat call waits when its answer ends with a final reply: a client that ends its
#: wait at the final reply (AMB-18, reading B) returns in a fraction of it, so the wait can
#: be generous, for a loaded machine.
WAIT_S: Final = 8.0
#: Seconds a chat call waits when a client must wait all of it (a broadcast, an answer whose
#: final reply is late or lost): short, with every reply "in time" 2.5 s before its end.
FULL_WAIT_S: Final = 3.0
#: A late reply comes this long after the wait ends.
LATE_MARGIN_S: Final = 1.0


@dataclass(frozen=True, slots=True)
class ChatStep:
    """One message a peer sends while a chat call runs.

    Attributes:
        by: the peer (a key of :data:`PEER_NAMES`).
        kind: ``progress`` (a message that does not end the answer), ``final`` (the message
            that ends it), ``text`` (not a protocol message), ``submitted`` (the first item of
            an A2A stream, naming its task), ``input`` (an MCP ``input_required`` result).
        after_s: seconds after the command reached the call's callee.
        quote: ``command`` (the client's command), ``earlier`` (an earlier command in the same
            chat) or ``none``. A peer that did not receive the command (a third party) writes
            in its own chat with the client and quotes nothing.
        text: the text of a ``text`` message or of the ``final`` answer.
        step: the number of a ``progress`` message.
        forged: must not be in the client's result (a third party, an unmentioned member, a
            reply to another command).
        late: sent after the client's wait: must not be in its result.
        lost: dropped by the network (a gap in a stream).
    """

    by: str
    kind: str
    after_s: float = 0.0
    quote: str = "command"
    text: str = ""
    step: int = 1
    forged: bool = False
    late: bool = False
    lost: bool = False

    @property
    def expected(self) -> bool:
        """Whether the client must report this message among the call's replies."""
        return not (self.forged or self.late or self.lost) and self.quote == "command"


@dataclass(frozen=True, slots=True)
class RPCStep:
    """A responder's answer to one attempt of a Service RPC call.

    Attributes:
        error: the envelope ``error`` (``{"code": ..., "retryAfter": ...}``), or ``None`` for
            a ``response``.
        text: the text of the response.
        size: pad the response to about this many bytes of JSON (0: no padding).
    """

    error: Mapping[str, Any] | None = None
    text: str = "done"
    size: int = 0


@dataclass(frozen=True, slots=True)
class CallPlan:
    """One call of a scenario and its peers' script.

    Attributes:
        label: the call's name (unique in the scenario).
        transport: ``chat`` or ``rpc``.
        where: ``bot`` / ``bot2`` (a direct chat, or the responder's address over Service
            RPC), ``group:bob`` (a group call with a mention of bob), ``group`` (a broadcast).
        text: the text of the request.
        request_id: the JSON-RPC ``id`` the client is asked to use.
        wait_s: the wait (chat) or the timeout (rpc).
        method: the method, when not the dialect's default.
        steps: the chat script.
        resume: the answer to a SubscribeToTask for this call's task (A2A-STR-5).
        input_required: the call's first answer is an MCP ``input_required`` result; the
            bot answers its continuation (MCP-MSG-6).
        answers: the Service RPC answers, one per attempt (the last one repeats).
        sign: ask the client to sign (Service RPC).
        credentials: give the client a credential (A2A ``Authorization``).
        retry: allow the client to repeat after errors that allow it.
        refused: the request cannot be sent (over the message limit); the client must not
            send it at all.
    """

    label: str
    transport: str
    where: str
    text: str
    request_id: int
    wait_s: float = WAIT_S
    method: str | None = None
    steps: tuple[ChatStep, ...] = ()
    resume: bool = False
    input_required: bool = False
    answers: tuple[RPCStep, ...] = ()
    sign: bool = False
    credentials: bool = False
    retry: bool = False
    refused: bool = False

    @property
    def callee(self) -> str:
        """The peer whose receipt of the command starts the script."""
        if self.where.startswith("group"):
            return "bob"
        return self.where


@dataclass(frozen=True, slots=True)
class Scenario:
    """A world and the calls the client makes in it.

    Attributes:
        id: stable slug, passed to the client as ``SIMPLEX_CONFORMANCE_SCENARIO``.
        title: one line.
        protocol: ``mcp`` or ``a2a`` for a protocol's own scenario; ``None`` for the chat
            transport's rules, run with the run's first protocol.
        calls: the calls, in the order the client makes them.
        group: a group ``team`` with bob (its host), carol, dave and the client.
        third_party: a contact ``mallory`` who forges answers in her own chat.
        second_bot: a second responder ``bot2`` with its own address.
        seeded_earlier: before the client starts, an identical command is sent in its chat
            with the bot (as the client's user), left unanswered until the client's comes.
    """

    id: str
    title: str
    protocol: str | None
    calls: tuple[CallPlan, ...]
    group: bool = False
    third_party: bool = False
    second_bot: bool = False
    seeded_earlier: bool = False
    notes: tuple[str, ...] = field(default=())

    @property
    def transports(self) -> frozenset[str]:
        return frozenset(c.transport for c in self.calls)

    def plan(self, label: str) -> CallPlan:
        for plan in self.calls:
            if plan.label == label:
                return plan
        raise KeyError(label)


_FORGED_TEXT = f"{FORGED_MARKER}: this is not the answer"

SCENARIOS: Final[tuple[Scenario, ...]] = (
    Scenario(
        "chat-direct",
        "a direct call: a text reply, duplicate progress, a reply late in the wait, and a "
        "third party forging the answer in her own chat",
        None,
        (
            CallPlan(
                "main",
                "chat",
                "bot",
                "hello",
                1,
                steps=(
                    ChatStep("bot", "text", 0.0, text="one moment, please"),
                    ChatStep("bot", "progress", 0.0, step=1),
                    ChatStep("bot", "progress", 0.0, step=1),
                    ChatStep(
                        "mallory", "final", 0.05, quote="none", text=_FORGED_TEXT, forged=True
                    ),
                    ChatStep("mallory", "text", 0.05, quote="none", text=_FORGED_TEXT, forged=True),
                    ChatStep("bot", "progress", 1.0, step=2),
                    ChatStep("bot", "final", 1.2, text="hello"),
                ),
            ),
        ),
        third_party=True,
    ),
    Scenario(
        "chat-interleaved",
        "answers to two commands interleaved and out of order: replies quoting an earlier "
        "command with the same JSON-RPC id come first",
        None,
        (
            CallPlan(
                "main",
                "chat",
                "bot",
                "hello",
                1,
                steps=(
                    ChatStep("bot", "final", 0.0, quote="earlier", text=_FORGED_TEXT, forged=True),
                    ChatStep("bot", "progress", 0.1, step=1),
                    ChatStep("bot", "text", 0.2, quote="earlier", text=_FORGED_TEXT, forged=True),
                    ChatStep("bot", "final", 0.3, text="hello"),
                ),
            ),
        ),
        seeded_earlier=True,
    ),
    Scenario(
        "chat-late",
        "the final reply comes after the wait: the replies before it are kept, it is not",
        None,
        (
            CallPlan(
                "main",
                "chat",
                "bot",
                "hello",
                1,
                wait_s=FULL_WAIT_S,
                steps=(
                    ChatStep("bot", "progress", 0.0, step=1),
                    ChatStep("bot", "progress", 0.5, step=2),
                    ChatStep("bot", "final", FULL_WAIT_S + LATE_MARGIN_S, text="hello", late=True),
                ),
            ),
        ),
    ),
    Scenario(
        "group-mention",
        "a group call with a mention of a member whose name has a space; another member "
        "forges the answer, quoting the command",
        None,
        (
            CallPlan(
                "main",
                "chat",
                "group:bob",
                "hello",
                1,
                steps=(
                    ChatStep("carol", "final", 0.0, text=_FORGED_TEXT, forged=True),
                    ChatStep("carol", "text", 0.0, text=_FORGED_TEXT, forged=True),
                    ChatStep("bob", "progress", 0.2, step=1),
                    ChatStep("bob", "final", 0.4, text="hello"),
                ),
            ),
        ),
        group=True,
    ),
    Scenario(
        "group-broadcast",
        "a broadcast: three members answer, interleaved, one of them in plain text",
        None,
        (
            CallPlan(
                "main",
                "chat",
                "group",
                "hello",
                1,
                wait_s=FULL_WAIT_S,
                steps=(
                    ChatStep("bob", "progress", 0.0, step=1),
                    ChatStep("carol", "text", 0.1, text="not mine to answer"),
                    ChatStep("dave", "final", 0.2, text="dave says hello"),
                    ChatStep("bob", "final", 0.3, text="bob says hello"),
                ),
            ),
        ),
        group=True,
    ),
    Scenario(
        "chat-large",
        "a request too large for one message, a large reply, and a Service RPC response over "
        "the recommended 10,000 bytes",
        None,
        (
            CallPlan(
                "oversize",
                "chat",
                "bot",
                "x" * OVERSIZE_REQUEST_CHARS,
                1,
                wait_s=1.0,
                steps=(ChatStep("bot", "final", 0.0, text="an oversize command arrived"),),
                refused=True,
            ),
            CallPlan(
                "big",
                "chat",
                "bot",
                "big",
                2,
                steps=(ChatStep("bot", "final", 0.0, text="y" * BIG_REPLY_CHARS),),
            ),
            CallPlan(
                "big-rpc",
                "rpc",
                "bot",
                "big",
                3,
                answers=(RPCStep(text="z", size=BIG_RESPONSE_BYTES),),
            ),
        ),
    ),
    Scenario(
        "rpc-errors",
        "Service RPC errors: an unknown code with and without retryAfter, rate_limited with "
        "and without retryAfter",
        None,
        (
            CallPlan(
                "unknown-final",
                "rpc",
                "bot",
                "unknown code",
                1,
                answers=(
                    RPCStep(error={"code": "x_conformance_unknown", "message": "a future code"}),
                    RPCStep(),
                ),
                retry=True,
            ),
            CallPlan(
                "unknown-retry-after",
                "rpc",
                "bot",
                "unknown code with retryAfter",
                2,
                answers=(
                    RPCStep(error={"code": "x_conformance_unknown", "retryAfter": 1}),
                    RPCStep(),
                ),
                retry=True,
            ),
            CallPlan(
                "rate-limited",
                "rpc",
                "bot",
                "rate limited",
                3,
                answers=(RPCStep(error={"code": "rate_limited", "retryAfter": 1}), RPCStep()),
                retry=True,
            ),
            CallPlan(
                "rate-limited-bare",
                "rpc",
                "bot",
                "rate limited without retryAfter",
                4,
                answers=(RPCStep(error={"code": "rate_limited"}), RPCStep()),
                retry=True,
            ),
        ),
    ),
    Scenario(
        "mcp-both-transports",
        "one MCP request over /_call and over Service RPC, signed, and a second responder",
        "mcp",
        (
            CallPlan(
                "same-chat",
                "chat",
                "bot",
                "same request",
                21,
                steps=(ChatStep("bot", "final", 0.0, text="same answer"),),
            ),
            CallPlan("same-rpc", "rpc", "bot", "same request", 21, answers=(RPCStep(),), sign=True),
            CallPlan("other-rpc", "rpc", "bot2", "other", 22, answers=(RPCStep(),), sign=True),
        ),
        second_bot=True,
    ),
    Scenario(
        "a2a-both-transports",
        "one A2A SendMessage with a credential over /_call and over Service RPC, signed, and a "
        "second responder",
        "a2a",
        (
            CallPlan(
                "same-chat",
                "chat",
                "bot",
                "same request",
                21,
                method="SendMessage",
                steps=(ChatStep("bot", "final", 0.0, text="same answer"),),
                credentials=True,
            ),
            CallPlan(
                "same-rpc",
                "rpc",
                "bot",
                "same request",
                21,
                answers=(RPCStep(),),
                sign=True,
                credentials=True,
            ),
            CallPlan("other-rpc", "rpc", "bot2", "other", 22, answers=(RPCStep(),), sign=True),
        ),
        second_bot=True,
    ),
    Scenario(
        "mcp-input-required",
        "an MCP tool answers input_required: the client continues with a new request",
        "mcp",
        (
            CallPlan(
                "main",
                "chat",
                "bot",
                "needs input",
                1,
                steps=(ChatStep("bot", "input", 0.0),),
                input_required=True,
            ),
        ),
    ),
    Scenario(
        "a2a-stream-resume",
        "an A2A stream whose middle items are lost and which then stops: the client resumes "
        "with SubscribeToTask",
        "a2a",
        (
            CallPlan(
                "main",
                "chat",
                "bot",
                "stream",
                1,
                wait_s=FULL_WAIT_S,
                steps=(
                    ChatStep("bot", "submitted", 0.0),
                    ChatStep("bot", "progress", 0.0, step=1),
                    ChatStep("bot", "progress", 0.1, step=2, lost=True),
                    ChatStep("bot", "progress", 0.1, step=3, lost=True),
                    ChatStep("bot", "progress", 0.2, step=4),
                ),
                resume=True,
                credentials=True,
            ),
        ),
    ),
    Scenario(
        "a2a-group-credential",
        "an A2A call in a group, with a credential the client holds for the agent",
        "a2a",
        (
            CallPlan(
                "main",
                "chat",
                "group:bob",
                "hello",
                1,
                method="SendMessage",
                steps=(ChatStep("bob", "final", 0.0, text="hello"),),
                credentials=True,
            ),
        ),
        group=True,
    ),
)


def scenario_by_id(scenario_id: str) -> Scenario:
    for scenario in SCENARIOS:
        if scenario.id == scenario_id:
            return scenario
    raise KeyError(scenario_id)
