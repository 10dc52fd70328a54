"""The cards the agent posts in its control chat, and their outcome forms.

A card asks the owner to approve one action (connect, send, leave); once decided, the agent
edits it to its outcome and removes its commands (plan "What the owner sees: the agent control
chat"). Every part written by a peer or the agent goes through :mod:`simplex_protocols.mcp_server.text`, so a
card's only commands are its own and it holds no SimpleX link.

No I/O here.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from simplex_protocols._wire import aeson_string_size

from .text import (
    code_span,
    error_md,
    fold,
    is_simplex_name,
    mention_md,
    name_md,
    parenthesized,
    text_lines_md,
)

__all__ = [
    "MAX_CARD_BYTES",
    "UNKNOWN_TAIL",
    "Card",
    "Outcome",
    "ReplyTo",
    "Subject",
    "call_card",
    "card_size",
    "connect_card",
    "largest_send_form",
    "leave_card",
    "send_card",
]

#: The server's limit on a card's text as the core encodes it (JSON-escaped): 15,602 bytes of
#: chat message less the 182-byte ``x.msg.update`` envelope with a ttl, rounded down (plan
#: "Card size").
MAX_CARD_BYTES: Final = 15_000

#: What stands for an error when a card's failed form is measured: 600 three-byte characters
#: (chatErrorText keeps 500 characters of details).
ERROR_PLACEHOLDER: Final = "\u20ac" * 600


class Outcome(enum.Enum):
    """How a card ends (plan "Outcomes")."""

    DONE = "done"
    NOT_CONNECTED = "done, not connected"
    STANDING = "standing"
    STANDING_FAILED = "standing, failed"
    FAILED = "failed"
    REJECTED = "rejected"
    EXPIRED = "expired"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    HOST = "host"
    HOST_NOT_CONNECTED = "host, not connected"
    HOST_FAILED = "host, failed"
    HOST_INTERRUPTED = "host, interrupted"
    #: ``--durable-actions``: performing when the server stopped or crashed (not the plan's).
    UNKNOWN = "outcome unknown"
    STANDING_UNKNOWN = "standing, outcome unknown"
    HOST_UNKNOWN = "host, outcome unknown"


#: The end of a card whose action's outcome is unknown (``--durable-actions``).
UNKNOWN_TAIL: Final = (
    "outcome unknown: the server stopped while performing it, and never performs it again."
)


@dataclass(frozen=True, slots=True)
class Subject:
    """What an action is about: a chat of the agent or the target of a connect.

    Attributes:
        kind: ``contact``, ``bot``, ``agent``, ``business``, ``group`` or ``channel``.
        name: the display name as the peer wrote it, or ``None`` when unknown.
        simplex_name: the verified SimpleX name (``@directory.simplex``), when there is one.
        chat: the chat reference (``@4``), once the chat exists.
        incognito: the agent is incognito in this chat.
    """

    kind: str
    name: str | None = None
    simplex_name: str | None = None
    chat: str | None = None
    incognito: bool = False

    def phrase(self, *, with_simplex_name: bool = True) -> str:
        """``bot SimpleX Directory (@directory.simplex)``, names made safe."""
        if self.name is None:
            base = f"an unnamed {self.kind}"
        else:
            base = f"{self.kind} {name_md(self.name)}"
        if with_simplex_name and self.simplex_name:
            shown = (
                self.simplex_name
                if is_simplex_name(self.simplex_name)
                else code_span(fold(self.simplex_name))
            )
            base += " " + parenthesized(shown)
        return base

    def log_phrase(self) -> str:
        """The same for a log line: names folded, no code spans."""
        if self.name is None:
            return f"an unnamed {self.kind}"
        return f"{self.kind} {fold(self.name)}"


@dataclass(frozen=True, slots=True)
class Card:
    """One card: the request's lines and the first line of each outcome.

    Attributes:
        want: the request's first line, ``I want to ...``.
        done: the first line once performed, ``I connected to ...``.
        asked: the first line of a connect performed but not yet accepted.
        body: the lines between the first line and the commands.
        commands: the commands line, e.g. ``/'approve @4 2', /'approve @4 all' or /'reject @4 2'``.
        chat: the chat of a send or leave (for ``/'revoke CHAT'``).
    """

    want: str
    done: str
    body: tuple[str, ...]
    commands: str
    asked: str = ""
    chat: str | None = None

    @property
    def standing_scope(self) -> str:
        """What a standing approval covers: ``this chat`` (a send), or ``calls to this bot``
        (a call's card, ``--call-tool``, whose :attr:`chat` is ``N calls``)."""
        return "calls to this bot" if (self.chat or "").endswith(" calls") else "this chat"

    def pending(self) -> str:
        """The card as first posted, with its commands."""
        return "\n".join([self.want, *self.body, self.commands])

    def outcome(self, outcome: Outcome, *, by: str | None = None, error: str | None = None) -> str:
        """The card's text once decided.

        Args:
            outcome: how the action ended.
            by: the approver's display name as written (made safe here), when one decided.
            error: the error text of a failed action (folded into one code span here).
        """
        who = name_md(by) if by is not None else "?"
        err = error_md(error if error is not None else "")
        request = [self.want, *self.body]
        match outcome:
            case Outcome.DONE:
                return "\n".join([self.done, *self.body, f"Approved by {who}."])
            case Outcome.NOT_CONNECTED:
                return "\n".join([self.asked or self.done, *self.body, f"Approved by {who}."])
            case Outcome.STANDING:
                return "\n".join(
                    [
                        self.done,
                        *self.body,
                        f"Approved for {self.standing_scope} by {who}. /'revoke {self.chat}'",
                    ]
                )
            case Outcome.STANDING_FAILED:
                return "\n".join(
                    [*request, f"Approved for {self.standing_scope} by {who}; failed: {err}."]
                )
            case Outcome.FAILED:
                return "\n".join([*request, f"Approved by {who}; failed: {err}."])
            case Outcome.REJECTED:
                return "\n".join([*request, f"Rejected by {who}."])
            case Outcome.EXPIRED:
                return "\n".join([*request, "Expired."])
            case Outcome.CANCELLED:
                return "\n".join([*request, "Cancelled: the server stopped."])
            case Outcome.INTERRUPTED:
                return "\n".join([*request, f"Approved by {who}; interrupted: the server stopped."])
            case Outcome.HOST:
                return "\n".join([self.done, *self.body, "Performed without approval (mode host)."])
            case Outcome.HOST_NOT_CONNECTED:
                return "\n".join(
                    [self.asked or self.done, *self.body, "Performed without approval (mode host)."]
                )
            case Outcome.HOST_FAILED:
                return "\n".join(
                    [*request, f"Performed without approval (mode host); failed: {err}."]
                )
            case Outcome.HOST_INTERRUPTED:
                return "\n".join(
                    [
                        *request,
                        "Performed without approval (mode host); interrupted: the server stopped.",
                    ]
                )
            case Outcome.UNKNOWN:
                return "\n".join([*request, f"Approved by {who}; {UNKNOWN_TAIL}"])
            case Outcome.STANDING_UNKNOWN:
                return "\n".join(
                    [*request, f"Approved for {self.standing_scope} by {who}; {UNKNOWN_TAIL}"]
                )
            case Outcome.HOST_UNKNOWN:
                return "\n".join(
                    [*request, f"Performed without approval (mode host); {UNKNOWN_TAIL}"]
                )


def _as(incognito: bool) -> str:
    return "incognito" if incognito else "as myself"


#: The line of a channel's connect card on a core without ``/_prepare group … direct=off``.
CHANNEL_AS_MEMBER: Final = (
    "My chat core cannot join a channel as a subscriber only: I join it as a member of a group."
)


def connect_card(
    n: int,
    subject: Subject,
    *,
    incognito: bool,
    description: str | None = None,
    welcome: str | None = None,
    message: str | None = None,
    joins_as_member: bool = False,
) -> Card:
    """The card of connect action ``n``.

    ``I want to connect to bot SimpleX Directory (@directory.simplex), as myself.``, then the
    link's short description and welcome message, then ``With the message:`` and its lines.
    ``joins_as_member``: a channel joined by a chat core that cannot join as a subscriber only
    (capability ``prepared-chats``); the card says so first, as it changes what the owner
    approves.
    """
    phrase = subject.phrase()
    how = _as(incognito)
    body: list[str] = []
    if joins_as_member:
        body.append(CHANNEL_AS_MEMBER)
    for quoted in (description, welcome):
        if quoted:
            body.extend(text_lines_md(quoted))
    if message:
        body.append("With the message:")
        body.extend(text_lines_md(message))
    return Card(
        want=f"I want to connect to {phrase}, {how}.",
        done=f"I connected to {phrase}, {how}.",
        asked=f"I asked to connect to {phrase}, {how}.",
        body=tuple(body),
        commands=f"/'approve {n}' or /'reject {n}'",
    )


@dataclass(frozen=True, slots=True)
class ReplyTo:
    """The item a send replies to: who wrote it (``None``: the agent) and its text."""

    sender: str | None
    text: str


def send_card(
    n: int,
    subject: Subject,
    chat: str,
    text: str,
    *,
    reply_to: ReplyTo | None = None,
    mentions: Sequence[str] = (),
) -> Card:
    """The card of send action ``n`` to ``chat``.

    ``I want to send a message to bot SimpleX Directory (@directory.simplex):`` (``, where I am
    incognito`` in incognito chats), the text's lines, then ``replying to ...`` and
    ``mentioning @...`` when given.
    """
    where = ", where I am incognito" if subject.incognito else ""
    phrase = subject.phrase()
    body = list(text_lines_md(text))
    if reply_to is not None:
        who = "my message" if reply_to.sender is None else name_md(reply_to.sender)
        body.append(f"replying to {who}: {code_span(fold(reply_to.text))}")
    if mentions:
        body.append("mentioning " + ", ".join(mention_md(name) for name in mentions))
    return Card(
        want=f"I want to send a message to {phrase}{where}:",
        done=f"I sent a message to {phrase}{where}:",
        body=tuple(body),
        commands=f"/'approve {chat} {n}', /'approve {chat} all' or /'reject {chat} {n}'",
        chat=chat,
    )


def leave_card(n: int, subject: Subject, chat: str) -> Card:
    """The card of leave action ``n``: leave a group, business chat or channel; delete a contact."""
    verb, past = ("delete", "deleted") if chat.startswith("@") else ("leave", "left")
    phrase = f"{subject.phrase(with_simplex_name=False)} {parenthesized(chat)}"
    return Card(
        want=f"I want to {verb} {phrase}.",
        done=f"I {past} {phrase}.",
        body=(),
        commands=f"/'approve {chat} {n}' or /'reject {chat} {n}'",
        chat=chat,
    )


def call_card(
    n: int,
    subject: Subject,
    *,
    address: str,
    verified: bool,
    declares: Sequence[str],
    protocol: str,
    method: str,
    transport: str,
    params_json: str | None,
    standing_n: int | None = None,
) -> Card:
    """The card of call action ``n`` (``--call-tool``, not the plan's).

    ``I want to call bot Acme (@acme.simplex) over MCP: `tools/call`.``, then the address,
    whether it is verified, what the bot declares, how the call goes and the params, every
    peer or agent string a code span (the address too: a link in a card would be tappable).
    ``standing_n``: the number of the call whose ``/approve N calls`` made calls to this bot
    standing, for the ``/'revoke N calls'`` of the card's standing form.
    """
    phrase = subject.phrase()
    what = f"over {protocol.upper()}: {code_span(fold(method))}"
    body = [
        f"Address: {code_span(fold(address))}",
        (
            "Verified: the chat core found this address by its SimpleX name."
            if verified
            else "Not verified: the address came as a link or from a website."
        ),
    ]
    if declares:
        body.append("It declares: " + ", ".join(code_span(fold(d)) for d in declares) + ".")
    else:
        body.append("It declares no protocols.")
    body.append(
        "By Service RPC, signed with my key for this bot."
        if transport == "rpc"
        else "In a conversation with it."
    )
    if params_json is not None:
        body.append("With the params:")
        body.extend(text_lines_md(params_json))
    return Card(
        want=f"I want to call {phrase} {what}.",
        done=f"I called {phrase} {what}.",
        body=tuple(body),
        commands=f"/'approve {n}', /'approve {n} calls' or /'reject {n}'",
        chat=f"{standing_n if standing_n is not None else n} calls",
    )


def card_size(text: str) -> int:
    """Bytes of a card's text as the core encodes it in a message (JSON-escaped)."""
    return aeson_string_size(text)


def largest_send_form(card: Card, *, approver: str, standing: bool) -> int:
    """The size of the largest form a send card can take (plan "Card size").

    The forms measured: pending, done (the standing form under a standing approval) and failed,
    with ``approver`` as the decider and a 600-character error of three-byte characters.
    """
    forms = [card.pending()]
    if standing:
        forms.append(card.outcome(Outcome.STANDING, by=approver))
        forms.append(card.outcome(Outcome.STANDING_FAILED, by=approver, error=ERROR_PLACEHOLDER))
    else:
        forms.append(card.outcome(Outcome.DONE, by=approver))
        forms.append(card.outcome(Outcome.FAILED, by=approver, error=ERROR_PLACEHOLDER))
    return max(card_size(form) for form in forms)
