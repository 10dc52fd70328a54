"""Vector operations of the chat transport (``spec/vectors/chat_call/``).

Each operation takes a case's ``input`` and ``args`` and returns plain JSON, or raises one of
the library's typed errors, which ``run_op`` turns into ``{"ok": false, "error": {"code"}}``.
The JSON shapes are described in each vector file's ``output``; another implementation
answers with the same shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simplex_protocols.chat_call import (
    AnswerCompleted,
    CallCompleted,
    CallTarget,
    CallTimedOut,
    CollectorEvent,
    ReplyCollector,
    ReplyIgnored,
    ReplyReceived,
    Sender,
    TextReplyReceived,
    build_reply,
    check_message_size,
    format_call_command,
    format_mention,
    jsonrpc_response_to,
    parse_call_command,
    parse_mention,
    triage_call,
)
from simplex_protocols.errors import CallFormatError, ParseError

from . import op

__all__: list[str] = []


def _refused(exc: CallFormatError) -> ParseError:
    # The driver protocol reports any refusal of an operation's input by its code.
    return ParseError(exc.reason, code=exc.code, requirement=exc.requirement)


@op("chat_call.parse")
def parse(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """``/_call`` text -> ``{"protocol", "member", "request", "request_text"}``."""
    command = parse_call_command(value)
    return {
        "protocol": command.protocol,
        "member": command.member,
        "request": dict(command.request),
        "request_text": command.request_text,
    }


@op("chat_call.format")
def format_(value: Any, args: Mapping[str, Any]) -> str:
    """``{"protocol", "member", "request_text"}`` -> the command text, one space between parts."""
    try:
        return format_call_command(
            value["protocol"], value["request_text"], member=value.get("member"), check_size=False
        )
    except CallFormatError as exc:
        raise _refused(exc) from exc


@op("chat_call.parse_mention")
def parse_mention_(value: Any, args: Mapping[str, Any]) -> str:
    """A mention (``@name``, ``@'name'``) -> the member's name."""
    return parse_mention(value)


@op("chat_call.format_mention")
def format_mention_(value: Any, args: Mapping[str, Any]) -> str:
    """A member's name -> the mention as the core writes it."""
    try:
        return format_mention(value)
    except CallFormatError as exc:
        raise _refused(exc) from exc


@op("chat_call.check_size")
def check_size(value: Any, args: Mapping[str, Any]) -> int:
    """A message text -> its encoded size; ``too_large`` over 15,602 bytes."""
    return check_message_size(
        value, quoted_text=args.get("quoted_text"), in_group=bool(args.get("in_group", False))
    )


def _sender(sender: Sender | None) -> dict[str, int] | None:
    if sender is None:
        return None
    if sender.group_member_id is not None:
        return {"groupMemberId": sender.group_member_id}
    assert sender.contact_id is not None
    return {"contactId": sender.contact_id}


def _event(event: CollectorEvent) -> dict[str, Any]:
    if isinstance(event, ReplyReceived):
        r = event.reply
        return {
            "event": "reply",
            "itemId": r.item_id,
            "sender": _sender(r.sender),
            "message": dict(r.message or {}),
            "final": r.final,
        }
    if isinstance(event, TextReplyReceived):
        r = event.reply
        return {
            "event": "text_reply",
            "itemId": r.item_id,
            "sender": _sender(r.sender),
            "text": r.text,
        }
    if isinstance(event, ReplyIgnored):
        return {"event": "ignored", "itemId": event.item_id, "reason": str(event.reason)}
    if isinstance(event, AnswerCompleted):
        return {"event": "answer_completed", "sender": _sender(event.sender)}
    name = "completed" if isinstance(event, CallCompleted) else "timed_out"
    assert isinstance(event, CallCompleted | CallTimedOut)
    return {"event": name, "replies": [r.item_id for r in event.result.replies]}


@op("chat_call.collect")
def collect(value: Any, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A sent command and a script of received items and clock ticks -> the collector's events."""
    target_spec = value["target"]
    if target_spec["type"] == "direct":
        target = CallTarget.direct(target_spec["contactId"])
    else:
        target = CallTarget.group(target_spec["groupId"], target_spec.get("groupMemberId"))
    final = value.get("final")
    collector = ReplyCollector(
        value["commandItemId"],
        target,
        deadline=float(value["deadline"]),
        is_final=jsonrpc_response_to(final["jsonrpcId"]) if final else None,
        expected_members=value.get("expectedMembers"),
    )
    events: list[dict[str, Any]] = []
    for step in value["steps"]:
        now = float(step["at"])
        if "item" in step:
            collector.receive_item(step["item"], now)
        else:
            collector.check_deadline(now)
        while (event := collector.next_event()) is not None:
            events.append(_event(event))
    return events


@op("chat_call.triage")
def triage(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """A received text and our names -> what a bot does with it."""
    incoming = triage_call(value, my_names=args.get("my_names", []))
    if incoming is None:
        return {"disposition": "not_a_call"}
    member = incoming.command.member if incoming.command is not None else None
    if incoming.error is not None:
        member = incoming.error.member
    return {
        "disposition": str(incoming.disposition),
        "protocol": incoming.protocol,
        "member": member,
        "code": incoming.error.code if incoming.error is not None else None,
    }


@op("chat_call.reply")
def reply(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """A reply message, the command it answers and a replacement -> the reply to send."""
    replacement = value.get("oversize")
    built = build_reply(
        value["message"],
        command_item_id=value["commandItemId"],
        command_text=value["commandText"],
        in_group=bool(value.get("inGroup", False)),
        oversize=(lambda _message: replacement) if replacement is not None else None,
    )
    return {
        "text": built.text,
        "quotedItemId": built.quoted_item_id,
        "size": built.size,
        "replaced": built.replaced,
    }
