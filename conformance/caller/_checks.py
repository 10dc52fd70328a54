"""The checks of the caller-side harness: what the client sent, and what it returned.

Each check names the requirements it measures, the transports it runs on, and the scenarios
it reads (:class:`CallerCheck`). Its evaluator turns the observations of those scenarios
(:class:`~simplex_protocols.conformance.caller._stage.ScenarioRun`) into an :class:`Outcome` for one transport.

Two kinds of evidence:

- **What the client sent** is read where it arrived: the commands the peers received (parsed
  with the toolkit's own ``/_call`` parser) and the request envelopes the responders received
  (with the ``signerKey`` the core verified). A client that crashed after sending is still
  measured on what it sent.
- **What the client returned** is its result line, compared with the peers' scripts: the
  replies it must keep (with their senders, in arrival order), the ones it must not (forged
  by a third party, by an unmentioned member, quoting another command, or late), the final
  message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from simplex_protocols import _wire
from simplex_protocols.chat_call import format_mention
from simplex_protocols.conformance._model import CheckSpec, Outcome, Verdict, failure_verdict
from simplex_protocols.conformance.ops.a2a import A2A_METHODS

from . import _dialects as dialects
from ._contract import CallOutcome, ReportedReply
from ._stage import CREDENTIAL, RPCReceipt, ScenarioRun, SentMessage, same_key

__all__ = ["CHECKS", "CallerCheck", "Runs"]

JSON = dict[str, Any]
Runs = Mapping[str, ScenarioRun]

#: A repeat this much sooner than ``retryAfter`` still counts as waiting (clock granularity).
RETRY_TOLERANCE_S: Final = 0.05
#: A message sent less than this before the end of the client's wait (as the harness measures
#: it) is not required in the client's result: the harness ran late, not the client.
WAIT_GUARD_S: Final = 0.5
#: Under this, a repeat of ``rate_limited`` without ``retryAfter`` is "at once" (AMB-10).
AT_ONCE_S: Final = 1.0

MCP_REVISION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
ENVELOPE_MEMBERS: Final = ("protocol", "version", "requestKey")

Evaluator = Callable[[Runs, str], Outcome]

#: The scenarios a protocol's request checks need (they read every other that ran too).
_REQUEST_SCENARIOS: Final[Mapping[str, tuple[str, ...]]] = {
    "mcp": ("mcp-both-transports",),
    "a2a": ("a2a-both-transports", "a2a-stream-resume"),
}


def _transports_of(scenario_id: str) -> frozenset[str]:
    from ._scenarios import scenario_by_id

    return scenario_by_id(scenario_id).transports


@dataclass(frozen=True, slots=True)
class CallerCheck:
    """A check, the scenarios it reads, and its evaluator."""

    spec: CheckSpec
    scenarios: tuple[str, ...]
    evaluate: Evaluator


class _Stop(Exception):
    """Raised by the helpers with the outcome to return at once (NA, ERROR, FAIL...)."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.detail)
        self.outcome = outcome


def _fail(requirements: Sequence[str], detail: str, **evidence: Any) -> Outcome:
    return Outcome(failure_verdict(requirements), detail, evidence=dict(evidence))


def _na(detail: str) -> Outcome:
    return Outcome(Verdict.NA, detail)


def _error(detail: str) -> Outcome:
    return Outcome(Verdict.ERROR, detail)


def _run(runs: Runs, scenario: str) -> ScenarioRun:
    """The scenario's run, after the checks every evaluator needs."""
    run = runs.get(scenario)
    if run is None:
        raise _Stop(_na(f"scenario {scenario} was not run"))
    if run.process is not None and not run.process.started:
        raise _Stop(_error(run.process.problem() or "the client could not be started"))
    if run.harness_errors:
        raise _Stop(_error(f"{scenario}: the harness failed: {run.harness_errors[0]}"))
    if run.output is not None and run.output.unsupported is not None:
        raise _Stop(_na(f"{scenario}: the client does not support it: {run.output.unsupported}"))
    return run


def _result(run: ScenarioRun, label: str, requirements: Sequence[str]) -> CallOutcome:
    """The client's outcome of one call; stops with NA or a failure when there is none."""
    if run.output is None:
        problem = run.contract_problem or "no result"
        raise _Stop(_fail(requirements, f"{run.scenario.id}: {problem}"))
    try:
        index = run.index(label)
    except KeyError:
        raise _Stop(_na(f"{run.scenario.id}/{label}: its transport was not selected")) from None
    outcome = run.output.calls[index]
    _stop_if_unsupported(run, label, outcome)
    return outcome


def _unsupported_call(run: ScenarioRun, label: str) -> None:
    """Stop with NA when the client said it does not support this call (a sent-check)."""
    if run.output is not None:
        _stop_if_unsupported(run, label, run.output.calls[run.index(label)])


def _stop_if_unsupported(run: ScenarioRun, label: str, outcome: CallOutcome) -> None:
    if outcome.unsupported is not None:
        raise _Stop(
            _na(f"{run.scenario.id}/{label}: the client does not support it: {outcome.unsupported}")
        )


def _sender_ok(run: ScenarioRun, reply: ReportedReply, peer: str) -> bool:
    return reply.sender in run.aliases.get(peer, set())


def _is_forged(reply: ReportedReply) -> bool:
    body = _wire.dumps(dict(reply.message)) if reply.message is not None else (reply.text or "")
    return dialects.FORGED_MARKER in body


def _lagged(run: ScenarioRun, message: SentMessage) -> bool:
    """Whether a message meant to arrive in time was sent too near the end of the client's wait
    (the harness itself ran late, on a loaded machine): the client may keep it or not."""
    started = run.wait_started.get((message.call, message.follow_up))
    if started is None:
        return False
    wait = run.scenario.plan(message.call).wait_s
    return message.t > started + wait - WAIT_GUARD_S


def _meant_in_time(run: ScenarioRun, label: str) -> list[SentMessage]:
    return [m for m in run.sent if m.call == label and m.ok and (m.follow_up or m.step.expected)]


def _expected(run: ScenarioRun, label: str) -> list[SentMessage]:
    """The messages the client must keep for a call, in the order they were sent."""
    return [m for m in _meant_in_time(run, label) if not _lagged(run, m)]


def _optional(run: ScenarioRun, label: str) -> list[SentMessage]:
    """Messages the client may keep or not: meant to be in time, sent too late by the harness."""
    return [m for m in _meant_in_time(run, label) if _lagged(run, m)]


def _final_is_last(outcome: CallOutcome, messages: Sequence[SentMessage]) -> bool:
    """Whether the client's final message is the last of ``messages`` (true when none)."""
    return not messages or (
        outcome.final is not None and dict(outcome.final) == messages[-1].message
    )


def _final_forged(outcome: CallOutcome) -> bool:
    """Whether the client's final message is a forged answer (a third party's, or another
    command's)."""
    return outcome.final is not None and dialects.FORGED_MARKER in _wire.dumps(dict(outcome.final))


def _follow_ups(run: ScenarioRun) -> list[SentMessage]:
    """The follow-up messages (a resumed stream, a continuation's answer) sent in time."""
    return [m for m in run.sent if m.follow_up and not _lagged(run, m)]


def _same(reply: ReportedReply, sent: SentMessage) -> bool:
    if sent.message is not None:
        return reply.message is not None and dict(reply.message) == sent.message
    return reply.message is None and reply.text == sent.text


def _describe(reply: ReportedReply) -> str:
    body = _wire.dumps(dict(reply.message)) if reply.message is not None else repr(reply.text)
    return f"{reply.sender}: {body[:80]}"


def _compare_replies(
    run: ScenarioRun, label: str, outcome: CallOutcome, requirements: Sequence[str]
) -> Outcome | None:
    """``None`` when the client kept exactly the expected replies, in order, with senders."""
    expected = _expected(run, label)
    optional = _optional(run, label)
    kept = [
        r for r in outcome.replies if not _is_forged(r) and not any(_same(r, m) for m in optional)
    ]
    for i, sent in enumerate(expected):
        if i >= len(kept):
            return _fail(
                requirements,
                f"{run.scenario.id}: {len(expected)} replies were due, the client kept "
                f"{len(kept)}; missing: {sent.text[:80]!r} from {sent.by}",
                expected=len(expected),
                kept=len(kept),
            )
        reply = kept[i]
        if not _same(reply, sent):
            return _fail(
                requirements,
                f"{run.scenario.id}: reply {i + 1} should be {sent.text[:80]!r} from {sent.by}, "
                f"the client has {_describe(reply)}",
                position=i + 1,
            )
        if not _sender_ok(run, reply, sent.by):
            return _fail(
                requirements,
                f"{run.scenario.id}: reply {i + 1} came from {sent.by}, the client says "
                f"{reply.sender!r}",
                position=i + 1,
            )
    if len(kept) > len(expected):
        extra = kept[len(expected)]
        return _fail(
            requirements,
            f"{run.scenario.id}: the client kept a reply that was not sent in time: "
            f"{_describe(extra)}",
            expected=len(expected),
            kept=len(kept),
        )
    return None


def _checked(func: Callable[[Runs, str], Outcome]) -> Evaluator:
    def evaluate(runs: Runs, transport: str) -> Outcome:
        try:
            return func(runs, transport)
        except _Stop as stop:
            return stop.outcome

    evaluate.__doc__ = func.__doc__
    return evaluate


# --------------------------------------------------------------------------- what was sent


@dataclass(frozen=True, slots=True)
class _Sent:
    """One request the client sent, as it arrived."""

    scenario: str
    protocol: str
    transport: str
    label: str | None
    request: Mapping[str, Any] | None
    envelope: Mapping[str, Any] | None
    text: str | None
    in_group: bool


def _sent_requests(runs: Runs, transport: str, protocol: str | None = None) -> Iterator[_Sent]:
    """Every request the client sent over ``transport`` (one per command, not per receiver)."""
    for run in runs.values():
        if protocol is not None and run.protocol != protocol:
            continue
        if transport == "chat":
            seen: set[tuple[int, str]] = set()
            for receipt in run.chat_receipts:
                key = (int(receipt.in_group), receipt.text)
                if key in seen:
                    continue
                seen.add(key)
                command = receipt.command
                yield _Sent(
                    run.scenario.id,
                    run.protocol,
                    "chat",
                    receipt.call,
                    command.request if command is not None else None,
                    None,
                    receipt.text,
                    receipt.in_group,
                )
        else:
            for rpc in run.rpc_receipts:
                request = rpc.request_data.get("request")
                yield _Sent(
                    run.scenario.id,
                    run.protocol,
                    "rpc",
                    rpc.call,
                    request if isinstance(request, dict) else None,
                    rpc.request_data,
                    None,
                    False,
                )


def _usable(runs: Runs, scenarios: Iterable[str]) -> dict[str, ScenarioRun]:
    """The runs that can be read (NA/ERROR ones left out); stops when none can."""
    out: dict[str, ScenarioRun] = {}
    stops: list[Outcome] = []
    for sid in scenarios:
        try:
            out[sid] = _run(runs, sid)
        except _Stop as stop:
            stops.append(stop.outcome)
    if not out:
        errors = [o for o in stops if o.verdict is Verdict.ERROR]
        raise _Stop(errors[0] if errors else (stops[0] if stops else _na("no scenario ran")))
    return out


def _all_usable(
    runs: Runs,
    required: Iterable[str],
    *,
    protocol: str | None = None,
    transport: str | None = None,
) -> dict[str, ScenarioRun]:
    """The required scenarios' runs and every other usable run of the protocol and transport.

    Checks of "every request" read every scenario that ran; they need only ``required``.
    """
    wanted = [
        sid
        for sid, run in runs.items()
        if (protocol is None or run.protocol == protocol)
        and (transport is None or transport in run.scenario.transports)
    ]
    for sid in required:
        if sid not in wanted:
            wanted.append(sid)
    return _usable(runs, wanted)


def _nothing_sent(
    runs: Mapping[str, ScenarioRun],
    requirements: Sequence[str],
    what: str,
    transport: str | None = None,
) -> Outcome:
    """Nothing the check needs arrived: ``NA`` when the client said every such call is
    unsupported, else a failure naming what went wrong with the client, if anything."""
    reasons: list[str] = []
    every_one_unsupported = True
    for run in runs.values():
        if run.output is None:
            every_one_unsupported = False
            continue
        for call, outcome in zip(run.calls, run.output.calls, strict=False):
            if transport is not None and call.transport != transport:
                continue
            if outcome.unsupported is not None:
                reasons.append(outcome.unsupported)
            else:
                every_one_unsupported = False
    if every_one_unsupported and reasons:
        return _na(f"the client does not support these calls: {reasons[0]}")
    problems = [
        f"{r.scenario.id}: {r.contract_problem}" for r in runs.values() if r.contract_problem
    ]
    if problems:
        return _fail(requirements, f"no {what} arrived ({problems[0]})")
    return _fail(requirements, f"no {what} arrived although the context asked for one")


# --------------------------------------------------------------------------- the checks

CHECKS: list[CallerCheck] = []


def _check(
    check_id: str,
    title: str,
    requirements: tuple[str, ...],
    transports: tuple[str, ...],
    scenarios: tuple[str, ...],
    *,
    protocols: tuple[str, ...] = (),
    group: bool = False,
) -> Callable[[Callable[[Runs, str], Outcome]], Evaluator]:
    def register(func: Callable[[Runs, str], Outcome]) -> Evaluator:
        spec = CheckSpec(
            id=check_id,
            title=title,
            requirements=requirements,
            transports=transports,
            kind="caller",
            protocols=protocols,
            group=group,
            messages=0,
        )
        evaluate = _checked(func)
        CHECKS.append(CallerCheck(spec, scenarios, evaluate))
        return evaluate

    return register


_CMD_REQS = ("CALL-CMD-1", "CALL-CMD-2", "CALL-CMD-3", "CALL-CMD-6")


@_check(
    "caller.command-format",
    "every /_call is the whole text of a text message: /_call, the protocol and a JSON object, one space apart",
    _CMD_REQS,
    ("chat",),
    ("chat-direct", "group-mention"),
)
def _command_format(runs: Runs, transport: str) -> Outcome:
    usable = _all_usable(runs, ("chat-direct", "group-mention"), transport="chat")
    checked = 0
    for run in usable.values():
        for receipt in run.chat_receipts:
            if receipt.command is None:
                return _fail(
                    _CMD_REQS,
                    f"{run.scenario.id}: a message that is not a well-formed /_call arrived "
                    f"({receipt.problem}): {receipt.text[:100]!r}",
                    problem=receipt.problem,
                )
            checked += 1
            command = receipt.command
            if receipt.content_type != "text":
                return _fail(
                    ("CALL-CMD-6",),
                    f"{run.scenario.id}: the command came as {receipt.content_type} content, not text",
                )
            if command.protocol != run.protocol:
                return _fail(
                    ("CALL-CMD-1",),
                    f"{run.scenario.id}: the command names {command.protocol!r}, the call is {run.protocol}",
                )
            mention = f"{format_mention(command.member)} " if command.member is not None else ""
            exact = f"/_call {mention}{command.protocol} {command.request_text}"
            if receipt.text != exact:
                outcome = _fail(
                    ("CALL-CMD-3",),
                    f"{run.scenario.id}: the parts of the command are not separated by exactly one "
                    f"space: {receipt.text[:100]!r}",
                )
                outcome.ambiguity = "AMB-6"
                return outcome
    if checked == 0:
        return _nothing_sent(usable, _CMD_REQS, "command", "chat")
    return Outcome(
        Verdict.PASS, f"{checked} commands, each well formed", evidence={"commands": checked}
    )


@_check(
    "caller.mention-form",
    "a group call mentions the called member as the core writes it (a name with spaces quoted); a broadcast and a direct call mention nobody",
    ("CALL-CMD-4",),
    ("chat",),
    ("group-mention", "group-broadcast", "chat-direct"),
    group=True,
)
def _mention_form(runs: Runs, transport: str) -> Outcome:
    reqs = ("CALL-CMD-4",)
    # The mention is the point: a client that makes no group call is not measured.
    _unsupported_call(_run(runs, "group-mention"), "main")
    usable = _usable(runs, ("group-mention", "group-broadcast", "chat-direct"))
    checked = 0
    for sid, run in usable.items():
        for receipt in run.chat_receipts:
            if receipt.command is None:
                return _fail(
                    reqs,
                    f"{sid}: the command does not parse ({receipt.problem}): {receipt.text[:60]!r}",
                )
            if receipt.call != "main" or receipt.follow_up:
                continue
            checked += 1
            member = receipt.command.member
            if sid == "group-mention":
                want = "Bob Smith"
                if member != want or f"/_call {format_mention(want)} " not in receipt.text:
                    return _fail(
                        reqs,
                        f"{sid}: the command should mention {format_mention(want)}, it starts "
                        f"{receipt.text[:40]!r}",
                    )
            elif member is not None:
                return _fail(
                    reqs, f"{sid}: the command mentions {member!r}; it should mention nobody"
                )
    if checked == 0:
        return _nothing_sent(usable, reqs, "command", "chat")
    return Outcome(Verdict.PASS, f"{checked} commands with the right mention or none")


@_check(
    "caller.quote-matching",
    "replies are tied to the command by their quote: replies quoting an earlier command, arriving first and interleaved, are not taken",
    ("CALL-CLR-1",),
    ("chat",),
    ("chat-interleaved",),
)
def _quote_matching(runs: Runs, transport: str) -> Outcome:
    return _interleaved(runs, ("CALL-CLR-1",))


@_check(
    "caller.mcp-quote-not-id",
    "an MCP caller matches replies by the quote, not by the JSON-RPC id alone",
    ("MCP-MSG-9",),
    ("chat",),
    ("chat-interleaved",),
    protocols=("mcp",),
)
def _mcp_quote(runs: Runs, transport: str) -> Outcome:
    run = runs.get("chat-interleaved")
    if run is not None and run.protocol != "mcp":
        return _na("the chat scenarios ran with A2A")
    return _interleaved(runs, ("MCP-MSG-9",))


def _finals(run: ScenarioRun, label: str) -> list[SentMessage]:
    return [m for m in _expected(run, label) if m.step.kind == "final"]


def _interleaved(runs: Runs, reqs: tuple[str, ...]) -> Outcome:
    run = _run(runs, "chat-interleaved")
    outcome = _result(run, "main", reqs)
    forged = [r for r in outcome.replies if _is_forged(r)]
    if forged:
        return _fail(
            reqs,
            f"the client took a reply that quotes another command with the same id: {_describe(forged[0])}",
        )
    if _final_forged(outcome):
        return _fail(reqs, "the client's final message is the answer to another command")
    if not _final_is_last(outcome, _finals(run, "main")):
        return _fail(reqs, "the client did not report the answer to its own command as final")
    return Outcome(Verdict.PASS, "only the replies quoting the client's command were taken")


def _kept_from_others(
    run: ScenarioRun,
    outcome: CallOutcome,
    peer: str,
    reqs: tuple[str, ...],
    whose_reply: str,
    whose_final: str,
) -> Outcome | None:
    """A failure when the client kept a reply, or took a final message, not from ``peer``."""
    for reply in outcome.replies:
        if _is_forged(reply) or not _sender_ok(run, reply, peer):
            return _fail(reqs, f"the client kept a reply {whose_reply}: {_describe(reply)}")
    if _final_forged(outcome):
        return _fail(reqs, f"the client's final message is {whose_final}")
    return None


@_check(
    "caller.direct-sender-only",
    "in a direct chat only the contact's replies count: a third party's forged answer in her own chat is ignored",
    ("CALL-CLR-4",),
    ("chat",),
    ("chat-direct",),
)
def _direct_sender(runs: Runs, transport: str) -> Outcome:
    reqs = ("CALL-CLR-4",)
    run = _run(runs, "chat-direct")
    outcome = _result(run, "main", reqs)
    wrong = _kept_from_others(
        run,
        outcome,
        "bot",
        reqs,
        "that is not the contact's",
        "the third party's forged answer",
    )
    return wrong or Outcome(Verdict.PASS, "only the contact's replies were kept")


@_check(
    "caller.mention-sender-only",
    "a group call with a mention takes only the mentioned member's replies: another member's quoting answer is ignored",
    ("CALL-CLR-5",),
    ("chat",),
    ("group-mention",),
    group=True,
)
def _mention_sender(runs: Runs, transport: str) -> Outcome:
    reqs = ("CALL-CLR-5",)
    run = _run(runs, "group-mention")
    outcome = _result(run, "main", reqs)
    wrong = _kept_from_others(
        run,
        outcome,
        "bob",
        reqs,
        "of a member it did not call",
        "an unmentioned member's answer",
    )
    return (
        wrong
        or _compare_replies(run, "main", outcome, reqs)
        or Outcome(Verdict.PASS, "only the mentioned member's replies were kept")
    )


@_check(
    "caller.every-reply-kept",
    "every reply before the answer ends is kept with its sender, in arrival order, duplicates included",
    ("CALL-CLR-2",),
    ("chat",),
    ("chat-direct",),
)
def _every_reply(runs: Runs, transport: str) -> Outcome:
    reqs = ("CALL-CLR-2",)
    run = _run(runs, "chat-direct")
    outcome = _result(run, "main", reqs)
    mismatch = _compare_replies(run, "main", outcome, reqs)
    if mismatch is not None:
        return mismatch
    if not _final_is_last(outcome, _finals(run, "main")):
        return _fail(reqs, "the client did not report the answer's final message as final")
    return Outcome(Verdict.PASS, f"all {len(_expected(run, 'main'))} replies kept in order")


@_check(
    "caller.broadcast-kept-apart",
    "a broadcast collects the answers of every member, each reply with its sender, in arrival order",
    ("CALL-CLR-2",),
    ("chat",),
    ("group-broadcast",),
    group=True,
)
def _broadcast(runs: Runs, transport: str) -> Outcome:
    reqs = ("CALL-CLR-2",)
    run = _run(runs, "group-broadcast")
    outcome = _result(run, "main", reqs)
    mismatch = _compare_replies(run, "main", outcome, reqs)
    if mismatch is not None:
        return mismatch
    senders = sorted({m.by for m in _expected(run, "main")})
    return Outcome(Verdict.PASS, f"the answers of {', '.join(senders)} kept apart")


@_check(
    "caller.text-replies-kept",
    "a reply that is not a protocol message is kept as text with its sender, never dropped",
    ("CALL-CLR-3",),
    ("chat",),
    ("chat-direct", "group-broadcast"),
)
def _text_replies(runs: Runs, transport: str) -> Outcome:
    reqs = ("CALL-CLR-3",)
    usable = _usable(runs, ("chat-direct", "group-broadcast"))
    checked = 0
    for sid, run in usable.items():
        try:
            outcome = _result(run, "main", reqs)
        except _Stop as stop:
            if stop.outcome.verdict is Verdict.NA:
                continue  # this scenario's call is unsupported; the other one may measure
            raise
        for sent in _expected(run, "main"):
            if sent.message is not None:
                continue
            checked += 1
            found = [r for r in outcome.replies if r.message is None and r.text == sent.text]
            if not found:
                return _fail(
                    reqs, f"{sid}: the text reply {sent.text!r} from {sent.by} was not kept as text"
                )
            if not any(_sender_ok(run, r, sent.by) for r in found):
                return _fail(
                    reqs,
                    f"{sid}: the text reply {sent.text!r} is kept without its sender {sent.by}",
                )
    if checked == 0:
        return _na("no scenario with a text reply could be measured")
    return Outcome(Verdict.PASS, f"{checked} text replies kept with their senders")


@_check(
    "caller.wait-respected",
    "replies that arrive before the wait ends are kept; a reply after it is not part of the result",
    ("CALL-CLR-2",),
    ("chat",),
    ("chat-late",),
)
def _wait(runs: Runs, transport: str) -> Outcome:
    reqs = ("CALL-CLR-2",)
    run = _run(runs, "chat-late")
    outcome = _result(run, "main", reqs)
    in_time = _expected(run, "main")
    kept = list(outcome.replies)
    for sent in in_time:
        if not any(_same(r, sent) for r in kept):
            return _fail(
                reqs, f"a reply that arrived within the wait was not kept: {sent.text[:80]!r}"
            )
    late = [m for m in run.sent if m.call == "main" and m.step.late]
    for sent in late:
        if any(_same(r, sent) for r in kept) or (
            outcome.final is not None and dict(outcome.final) == sent.message
        ):
            return Outcome(
                Verdict.WARN,
                "the client kept a reply that came after the wait it was given",
                ambiguity="AMB-18",
            )
    return Outcome(Verdict.PASS, f"{len(in_time)} replies within the wait kept, the late one not")


@_check(
    "caller.command-fits-one-message",
    "a command that cannot fit one message is not sent, and never split across messages",
    ("CALL-SIZE-1",),
    ("chat",),
    ("chat-large",),
)
def _one_message(runs: Runs, transport: str) -> Outcome:
    reqs = ("CALL-SIZE-1",)
    run = _run(runs, "chat-large")
    pieces = [r for r in run.chat_receipts if r.command is None or r.call == "oversize"]
    if pieces:
        return _fail(
            reqs,
            f"{len(pieces)} message(s) of the oversize command arrived: the command was split "
            "or sent in part",
            messages=len(pieces),
        )
    outcome = _result(run, "oversize", reqs)
    if outcome.error is None:
        return _fail(reqs, "the client reported no error for a request it could not send")
    return Outcome(
        Verdict.PASS,
        f"nothing was sent; the client reported {outcome.error.get('code')!r}",
    )


@_check(
    "caller.large-reply-kept",
    "a large reply (12,000 characters, one message) is kept whole",
    ("CALL-SIZE-1",),
    ("chat",),
    ("chat-large",),
)
def _large_reply(runs: Runs, transport: str) -> Outcome:
    reqs = ("CALL-SIZE-1",)
    run = _run(runs, "chat-large")
    outcome = _result(run, "big", reqs)
    expected = _expected(run, "big")
    if not expected or expected[-1].message is None:
        return _error("the large reply was not sent")
    if not _final_is_last(outcome, expected):
        return _fail(reqs, "the large reply is not the client's final message, whole")
    return Outcome(Verdict.PASS, f"a reply of {len(expected[-1].text)} characters kept whole")


@_check(
    "caller.large-response-read",
    "a Service RPC response over the recommended 10,000 bytes of JSON (within the 11,106 the core carries) is read",
    ("RPC-LIM-3",),
    ("rpc",),
    ("chat-large",),
)
def _large_response(runs: Runs, transport: str) -> Outcome:
    reqs = ("RPC-LIM-3",)
    run = _run(runs, "chat-large")
    outcome = _result(run, "big-rpc", reqs)
    answered = [r for r in run.rpc_of("big-rpc") if r.answer is not None and "response" in r.answer]
    if not answered:
        return _nothing_sent({run.scenario.id: run}, reqs, "request for the large response", "rpc")
    response = answered[-1].answer["response"] if answered[-1].answer else None
    if outcome.final is None or dict(outcome.final) != response:
        return _fail(
            reqs,
            "the client did not return the response of "
            f"{len(_wire.dumps(answered[-1].answer or {}))} bytes as it came",
        )
    return Outcome(Verdict.PASS, "the large response was read whole")


# --------------------------------------------------------------------------- Service RPC


def _signed(runs: Runs, reqs: tuple[str, ...]) -> list[tuple[str, RPCReceipt]]:
    usable = _usable(runs, ("mcp-both-transports", "a2a-both-transports"))
    out: list[tuple[str, RPCReceipt]] = []
    for sid, run in usable.items():
        if not run.rpc_receipts:
            raise _Stop(_nothing_sent({sid: run}, reqs, "Service RPC request", "rpc"))
        out.extend((sid, r) for r in run.rpc_receipts)
    return out


@_check(
    "caller.request-key-signed",
    "a request that carries requestKey is signed with that key (the core's verified signerKey)",
    ("RPC-REQ-5",),
    ("rpc",),
    ("mcp-both-transports", "a2a-both-transports"),
)
def _request_key(runs: Runs, transport: str) -> Outcome:
    reqs = ("RPC-REQ-5",)
    with_key = 0
    for sid, receipt in _signed(runs, reqs):
        key = receipt.request_data.get("requestKey")
        if key is None:
            continue
        with_key += 1
        if receipt.signer_key is None:
            return _fail(
                reqs, f"{sid}/{receipt.call}: the request carries requestKey but is not signed"
            )
        if not same_key(key, receipt.signer_key):
            return _fail(
                reqs,
                f"{sid}/{receipt.call}: requestKey is not the key that signed the request",
                request_key=str(key)[:24],
                signer_key=receipt.signer_key[:24],
            )
    if with_key == 0:
        return _na("the client sent no requestKey (it does not sign, or signs without one)")
    return Outcome(Verdict.PASS, f"{with_key} requests signed with their requestKey")


@_check(
    "caller.key-per-responder",
    "a requester signs with a different key for each responder",
    ("RPC-SIG-5",),
    ("rpc",),
    ("mcp-both-transports", "a2a-both-transports"),
)
def _key_per_responder(runs: Runs, transport: str) -> Outcome:
    reqs = ("RPC-SIG-5",)
    keys: dict[str, dict[str, set[str]]] = {}
    for sid, receipt in _signed(runs, reqs):
        if receipt.signer_key is not None:
            keys.setdefault(sid, {}).setdefault(receipt.peer, set()).add(receipt.signer_key)
    compared = 0
    for sid, by_peer in keys.items():
        if len(by_peer) < 2:
            continue
        compared += 1
        first, second = (by_peer[p] for p in sorted(by_peer))
        if first & second:
            return _fail(reqs, f"{sid}: the same key signed requests to two responders")
    if compared == 0:
        return _na("the client did not sign requests to two responders")
    return Outcome(Verdict.PASS, "each responder got requests signed with its own key")


def _attempts(run: ScenarioRun, label: str) -> list[RPCReceipt]:
    return run.rpc_of(label)


@_check(
    "caller.unknown-error-final",
    "an error code the requester does not know, without retryAfter, is final: not repeated, reported",
    ("RPC-ERR-6",),
    ("rpc",),
    ("rpc-errors",),
)
def _unknown_final(runs: Runs, transport: str) -> Outcome:
    reqs = ("RPC-ERR-6",)
    run = _run(runs, "rpc-errors")
    attempts = _attempts(run, "unknown-final")
    if not attempts:
        return _nothing_sent({run.scenario.id: run}, reqs, "request", "rpc")
    if len(attempts) > 1:
        return _fail(
            reqs,
            f"the request was repeated {len(attempts) - 1} time(s) after an unknown code without retryAfter",
            attempts=len(attempts),
        )
    outcome = _result(run, "unknown-final", reqs)
    code = outcome.error.get("code") if outcome.error is not None else None
    if code != "x_conformance_unknown":
        return _fail(
            reqs,
            f"the client should report the error code x_conformance_unknown, it reports {code!r}",
        )
    return Outcome(Verdict.PASS, "sent once; the unknown code reported as final")


def _repeat_delay(run: ScenarioRun, label: str) -> tuple[int, float | None]:
    """How many requests, and the delay between the first answer and the next request."""
    attempts = _attempts(run, label)
    if len(attempts) < 2 or attempts[0].t_answered is None:
        return len(attempts), None
    return len(attempts), attempts[1].t - attempts[0].t_answered


@_check(
    "caller.retry-after-respected",
    "an error with retryAfter (an unknown code here) is repeated, if at all, no sooner than retryAfter",
    ("RPC-ENV-6",),
    ("rpc",),
    ("rpc-errors",),
)
def _retry_after(runs: Runs, transport: str) -> Outcome:
    return _waited_retry_after(runs, "unknown-retry-after", ("RPC-ENV-6",))


@_check(
    "caller.rate-limited-waits",
    "after rate_limited, the request is not repeated before retryAfter seconds",
    ("RPC-ERR-5",),
    ("rpc",),
    ("rpc-errors",),
)
def _rate_limited(runs: Runs, transport: str) -> Outcome:
    return _waited_retry_after(runs, "rate-limited", ("RPC-ERR-5",))


def _waited_retry_after(runs: Runs, label: str, reqs: tuple[str, ...]) -> Outcome:
    """The call ``label`` got an error with ``retryAfter`` 1 s: not repeated, or not sooner."""
    run = _run(runs, "rpc-errors")
    count, delay = _repeat_delay(run, label)
    if count == 0:
        return _nothing_sent({run.scenario.id: run}, reqs, "request", "rpc")
    if delay is None:
        return Outcome(Verdict.PASS, "not repeated (allowed)")
    if delay < 1.0 - RETRY_TOLERANCE_S:
        return _fail(
            reqs, f"repeated after {delay:.2f} s; retryAfter was 1 s", delay_s=round(delay, 3)
        )
    return Outcome(
        Verdict.PASS,
        f"repeated after {delay:.2f} s (retryAfter 1 s)",
        evidence={"delay_s": round(delay, 2)},
    )


@_check(
    "caller.rate-limited-without-retry-after",
    "rate_limited without retryAfter: stopping or backing off are both allowed (AMB-10); repeating at once is not",
    ("RPC-ERR-5",),
    ("rpc",),
    ("rpc-errors",),
)
def _rate_limited_bare(runs: Runs, transport: str) -> Outcome:
    run = _run(runs, "rpc-errors")
    count, delay = _repeat_delay(run, "rate-limited-bare")
    if count == 0:
        return _nothing_sent({run.scenario.id: run}, ("RPC-ERR-5",), "request", "rpc")
    if delay is None:
        return Outcome(Verdict.ACCEPTABLE, "not repeated (AMB-10, reading A)", ambiguity="AMB-10")
    if delay < AT_ONCE_S:
        return Outcome(
            Verdict.WARN,
            f"repeated after {delay:.2f} s, at once, although no retryAfter was given",
            ambiguity="AMB-10",
        )
    return Outcome(
        Verdict.ACCEPTABLE,
        f"repeated after a backoff of {delay:.2f} s (AMB-10, reading B)",
        ambiguity="AMB-10",
    )


def _envelope_version(runs: Runs, protocol: str, reqs: tuple[str, ...]) -> Outcome:
    usable = _all_usable(runs, (f"{protocol}-both-transports",), protocol=protocol, transport="rpc")
    seen = 0
    for sent in _sent_requests(usable, "rpc", protocol):
        seen += 1
        if sent.envelope is not None and "version" in sent.envelope:
            return _fail(
                reqs,
                f"{sent.scenario}/{sent.label}: the {protocol} envelope carries version "
                f"{sent.envelope['version']!r}",
            )
    if seen == 0:
        return _nothing_sent(usable, reqs, f"{protocol} Service RPC request", "rpc")
    return Outcome(Verdict.PASS, f"{seen} {protocol} envelopes without version")


@_check(
    "caller.mcp-envelope-without-version",
    "a Service RPC envelope for mcp has no version",
    ("MCP-VER-3",),
    ("rpc",),
    ("mcp-both-transports",),
    protocols=("mcp",),
)
def _mcp_envelope(runs: Runs, transport: str) -> Outcome:
    return _envelope_version(runs, "mcp", ("MCP-VER-3",))


@_check(
    "caller.a2a-envelope-without-version",
    "a Service RPC envelope for a2a has no version",
    ("A2A-SP-6",),
    ("rpc",),
    ("a2a-both-transports",),
    protocols=("a2a",),
)
def _a2a_envelope(runs: Runs, transport: str) -> Outcome:
    return _envelope_version(runs, "a2a", ("A2A-SP-6",))


def _without_progress_token(request: Mapping[str, Any]) -> JSON:
    out = _wire.loads(_wire.dumps(dict(request)))
    params = out.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict):
        meta.pop("progressToken", None)
    return dict(out)


@_check(
    "caller.rpc-request-equals-call",
    "the envelope's request is exactly the message that follows /_call for the same call; no envelope member goes into it",
    ("RPC-REQ-6",),
    ("rpc",),
    ("mcp-both-transports", "a2a-both-transports"),
)
def _request_equals(runs: Runs, transport: str) -> Outcome:
    reqs = ("RPC-REQ-6",)
    usable = _usable(runs, ("mcp-both-transports", "a2a-both-transports"))
    compared = 0
    for sid, run in usable.items():
        chat = [r for r in run.receipts_of("same-chat") if r.command is not None]
        rpc = [r for r in run.rpc_of("same-rpc") if isinstance(r.request_data.get("request"), dict)]
        for receipt in run.rpc_receipts:
            request = receipt.request_data.get("request")
            if isinstance(request, dict):
                inside = [m for m in ENVELOPE_MEMBERS if m in request]
                if inside:
                    return _fail(
                        reqs, f"{sid}: envelope members in the request: {', '.join(inside)}"
                    )
        if not chat or not rpc:
            continue
        command = chat[0].command
        assert command is not None
        via_chat = _without_progress_token(command.request)
        via_rpc = _without_progress_token(rpc[0].request_data["request"])
        compared += 1
        if via_chat != via_rpc:
            differing = sorted(
                k for k in set(via_chat) | set(via_rpc) if via_chat.get(k) != via_rpc.get(k)
            )
            return _fail(
                reqs,
                f"{sid}: the request over Service RPC differs from the one after /_call in "
                f"{', '.join(differing)}",
            )
    if compared == 0:
        return _na("the same call was not made over both transports")
    return Outcome(Verdict.PASS, f"{compared} requests equal over both transports")


# --------------------------------------------------------------------------- MCP and A2A requests


def _protocol_requests(
    runs: Runs, transport: str, protocol: str, reqs: tuple[str, ...]
) -> tuple[list[_Sent], dict[str, ScenarioRun]]:
    required = [sid for sid in _REQUEST_SCENARIOS[protocol] if transport in _transports_of(sid)]
    usable = _all_usable(runs, required, protocol=protocol, transport=transport)
    sent = [s for s in _sent_requests(usable, transport, protocol) if s.request is not None]
    if not sent:
        raise _Stop(_nothing_sent(usable, reqs, f"{protocol} request", transport))
    return sent, usable


@_check(
    "caller.mcp-revision",
    "every MCP request states its revision (2026-07-28 or later) in _meta",
    ("MCP-VER-2",),
    ("chat", "rpc"),
    _REQUEST_SCENARIOS["mcp"],
    protocols=("mcp",),
)
def _mcp_revision(runs: Runs, transport: str) -> Outcome:
    reqs = ("MCP-VER-2",)
    sent, _ = _protocol_requests(runs, transport, "mcp", reqs)
    for s in sent:
        assert s.request is not None
        params = s.request.get("params")
        meta = params.get("_meta") if isinstance(params, Mapping) else None
        revision = meta.get(MCP_REVISION_KEY) if isinstance(meta, Mapping) else None
        if not isinstance(revision, str):
            return _fail(reqs, f"{s.scenario}/{s.label}: no {MCP_REVISION_KEY} in _meta")
        if revision < dialects.MCP_VERSIONS[0]:
            return _fail(
                reqs, f"{s.scenario}/{s.label}: revision {revision} is older than 2026-07-28"
            )
    return Outcome(Verdict.PASS, f"{len(sent)} MCP requests with their revision")


@_check(
    "caller.mcp-request",
    "an MCP call is one JSON-RPC 2.0 request (jsonrpc, method, id) carrying its _meta",
    ("MCP-MSG-1",),
    ("chat", "rpc"),
    _REQUEST_SCENARIOS["mcp"],
    protocols=("mcp",),
)
def _mcp_request(runs: Runs, transport: str) -> Outcome:
    reqs = ("MCP-MSG-1",)
    sent, _ = _protocol_requests(runs, transport, "mcp", reqs)
    for s in sent:
        request = s.request
        assert request is not None
        rid = request.get("id")
        problem = None
        if request.get("jsonrpc") != "2.0":
            problem = 'jsonrpc is not "2.0"'
        elif not isinstance(request.get("method"), str):
            problem = "no method"
        elif isinstance(rid, bool) or not isinstance(rid, str | int):
            problem = "no id (a notification, or a null id)"
        elif not isinstance(request.get("params"), Mapping) or not isinstance(
            request["params"].get("_meta"), Mapping
        ):
            problem = "no _meta in params"
        if problem is not None:
            return _fail(reqs, f"{s.scenario}/{s.label}: {problem}")
    return Outcome(Verdict.PASS, f"{len(sent)} MCP requests, each one JSON-RPC request with _meta")


def _service_parameters(request: Mapping[str, Any]) -> Mapping[str, Any] | None:
    member = request.get("a2a-service-parameters")
    return member if isinstance(member, Mapping) else None


@_check(
    "caller.a2a-version",
    "every A2A request carries the A2A-Version service parameter",
    ("A2A-SP-3",),
    ("chat", "rpc"),
    _REQUEST_SCENARIOS["a2a"],
    protocols=("a2a",),
)
def _a2a_version(runs: Runs, transport: str) -> Outcome:
    reqs = ("A2A-SP-3",)
    sent, _ = _protocol_requests(runs, transport, "a2a", reqs)
    for s in sent:
        assert s.request is not None
        parameters = _service_parameters(s.request) or {}
        version = next((v for k, v in parameters.items() if k.lower() == "a2a-version"), None)
        if not isinstance(version, str) or not version:
            method = s.request.get("method")
            return _fail(reqs, f"{s.scenario}/{s.label}: {method} without A2A-Version")
    return Outcome(Verdict.PASS, f"{len(sent)} A2A requests with A2A-Version")


@_check(
    "caller.a2a-request",
    "an A2A call is a JSON-RPC request with A2A's method names, and a2a-service-parameters a member of the request object mapping names to strings",
    ("A2A-MSG-1", "A2A-SP-1"),
    ("chat", "rpc"),
    _REQUEST_SCENARIOS["a2a"],
    protocols=("a2a",),
)
def _a2a_request(runs: Runs, transport: str) -> Outcome:
    reqs = ("A2A-MSG-1", "A2A-SP-1")
    sent, _ = _protocol_requests(runs, transport, "a2a", reqs)
    for s in sent:
        request = s.request
        assert request is not None
        method = request.get("method")
        if request.get("jsonrpc") != "2.0" or method not in A2A_METHODS:
            return _fail(
                ("A2A-MSG-1",),
                f"{s.scenario}/{s.label}: method {method!r} is not an A2A JSON-RPC method",
            )
        member = request.get("a2a-service-parameters")
        if not isinstance(member, Mapping) or not all(isinstance(v, str) for v in member.values()):
            return _fail(
                ("A2A-SP-1",),
                f"{s.scenario}/{s.label}: a2a-service-parameters is not an object of strings "
                "at the top of the request",
            )
        params = request.get("params")
        if isinstance(params, Mapping) and "a2a-service-parameters" in params:
            return _fail(("A2A-SP-1",), f"{s.scenario}/{s.label}: service parameters inside params")
    return Outcome(Verdict.PASS, f"{len(sent)} A2A requests in A2A's JSON-RPC form")


@_check(
    "caller.no-credential-in-group",
    "a request that carries a credential is never sent in a group",
    ("A2A-AUTHZ-4",),
    ("chat",),
    ("a2a-group-credential",),
    protocols=("a2a",),
    group=True,
)
def _no_credential(runs: Runs, transport: str) -> Outcome:
    reqs = ("A2A-AUTHZ-4",)
    run = _run(runs, "a2a-group-credential")
    secret = CREDENTIAL.split()[-1]
    for receipt in run.chat_receipts:
        if receipt.in_group and secret in receipt.text:
            return _fail(reqs, "the credential went to the group in a command")
    if not run.chat_receipts:
        outcome = _result(run, "main", reqs)
        if outcome.error is None:
            return _fail(reqs, "the client sent nothing and reported no error")
        return Outcome(Verdict.PASS, "the client refused to send the call in a group")
    return Outcome(Verdict.PASS, "the command went to the group without the credential")


@_check(
    "caller.credential-as-parameter",
    "a credential travels as its scheme's service parameter (Authorization), nowhere else in the request",
    ("A2A-AUTHZ-3",),
    ("chat", "rpc"),
    ("a2a-both-transports", "a2a-stream-resume"),
    protocols=("a2a",),
)
def _credential_parameter(runs: Runs, transport: str) -> Outcome:
    reqs = ("A2A-AUTHZ-3",)
    scenarios = [s for s in ("a2a-both-transports", "a2a-stream-resume") if s in runs]
    usable = _usable(runs, scenarios)
    carried = 0
    for s in _sent_requests(usable, transport, "a2a"):
        if s.request is None:
            continue
        body = _wire.dumps(dict(s.request))
        if CREDENTIAL not in body and CREDENTIAL.split()[-1] not in body:
            continue
        parameters = dict(_service_parameters(s.request) or {})
        auth = [k for k in parameters if k.lower() == "authorization"]
        stripped = dict(s.request)
        stripped["a2a-service-parameters"] = {k: v for k, v in parameters.items() if k not in auth}
        if not auth or parameters[auth[0]] != CREDENTIAL:
            return _fail(
                reqs,
                f"{s.scenario}/{s.label}: the credential is not the Authorization service parameter",
            )
        if CREDENTIAL.split()[-1] in _wire.dumps(stripped):
            return _fail(
                reqs,
                f"{s.scenario}/{s.label}: the credential also appears elsewhere in the request",
            )
        carried += 1
    if carried == 0:
        return _na("the client sent no credential")
    return Outcome(Verdict.PASS, f"{carried} requests carry the credential as Authorization")


@_check(
    "caller.stream-resumed",
    "a caller that lost stream replies resumes with SubscribeToTask and reads the stream to its end",
    ("A2A-STR-5",),
    ("chat",),
    ("a2a-stream-resume",),
    protocols=("a2a",),
)
def _stream_resumed(runs: Runs, transport: str) -> Outcome:
    reqs = ("A2A-STR-5",)
    run = _run(runs, "a2a-stream-resume")
    resumed = [r for r in run.chat_receipts if r.resume]
    if not resumed:
        if not run.receipts_of("main"):
            return _nothing_sent({run.scenario.id: run}, reqs, "SendStreamingMessage", "chat")
        return _fail(
            reqs, "the stream stopped without its end and the client did not send SubscribeToTask"
        )
    outcome = _result(run, "main", reqs)
    if not _final_is_last(outcome, _follow_ups(run)):
        return _fail(
            reqs, "the client resumed but did not report the resumed stream's end as final"
        )
    return Outcome(Verdict.PASS, "resumed with SubscribeToTask and read to the end")


@_check(
    "caller.mcp-input-required",
    "an input_required result is continued by a fresh request: a new id, the same method and arguments, inputResponses and the requestState unchanged",
    ("MCP-MSG-6",),
    ("chat",),
    ("mcp-input-required",),
    protocols=("mcp",),
)
def _input_required(runs: Runs, transport: str) -> Outcome:
    reqs = ("MCP-MSG-6",)
    run = _run(runs, "mcp-input-required")
    first = [r for r in run.receipts_of("main") if r.command is not None]
    if not first:
        return _nothing_sent({run.scenario.id: run}, reqs, "tools/call", "chat")
    then = [r for r in run.chat_receipts if r.continued and r.command is not None]
    if not then:
        return _fail(
            reqs, "the client did not continue the input_required result with a new request"
        )
    assert first[0].command is not None and then[0].command is not None
    original, continued = first[0].command.request, then[0].command.request
    params = continued.get("params")
    params = params if isinstance(params, Mapping) else {}
    before = original.get("params")
    before = before if isinstance(before, Mapping) else {}
    problems = []
    if continued.get("id") == original.get("id"):
        problems.append("it reuses the request id")
    if continued.get("method") != original.get("method"):
        problems.append(f"its method is {continued.get('method')!r}")
    if params.get("name") != before.get("name") or params.get("arguments") != before.get(
        "arguments"
    ):
        problems.append("its tool or arguments differ")
    if params.get("requestState") != dialects.request_state("main"):
        problems.append("requestState is not the one received, unchanged")
    if params.get("inputResponses") != dialects.INPUT_RESPONSES:
        problems.append("inputResponses are not the answers given")
    if problems:
        return _fail(
            reqs, "the continuation is not a fresh request of the same call: " + "; ".join(problems)
        )
    outcome = _result(run, "main", reqs)
    if not _final_is_last(outcome, _follow_ups(run)):
        return _fail(reqs, "the client did not report the continuation's answer as final")
    return Outcome(
        Verdict.PASS, "continued with a fresh request carrying inputResponses and requestState"
    )
