"""The commands of simplex-call: a call, ``plan``, ``discover``.

A call goes: TARGET (link, name or website) → the address's plan (its declarations, read
from the link data without connecting) → the protocol, its version and the transport → the
request, built by the binding's caller-side helpers → Service RPC (``/_service_request``) or a
conversation (connect to the address, or reuse the contact, then ``/_call``) → the answer,
shown as readable text or one JSON object, with an exit status that says how it went.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

from simplex_protocols import __version__
from simplex_protocols._groups import first_error
from simplex_protocols.bindings._simplex_client import BotLink, Conversation, open_conversation
from simplex_protocols.chat_call import Reply
from simplex_protocols.core import (
    Capability,
    CapabilityStatus,
    probe_core,
)
from simplex_protocols.declarations import ProtocolDeclaration
from simplex_protocols.discovery import (
    AddressPlan,
    DiscoveryLimits,
    WebsiteAddress,
    WebsiteDiscovery,
    plan_address,
)
from simplex_protocols.errors import (
    CallFormatError,
    ConversationRequiredError,
    CoreError,
    LinkError,
    TooLargeError,
)
from simplex_protocols.links import LinkKind, parse_simplex_link, parse_simplex_target
from simplex_protocols.rpc import KeyStore

from ._call_args import CLIError, ExitCode, parse_call_arguments
from ._call_console import Console
from ._call_errors import Failure, exit_for_jsonrpc_error, failure_of
from ._call_pages import follows_pages, join_pages, with_cursor
from ._call_render import render_a2a, render_discovery, render_mcp, render_plan
from ._call_session import Environment, Session, key_folder, open_session

__all__ = [
    "CallOutcome",
    "CallSpec",
    "classify_target",
    "perform_call",
    "render_call",
    "report_failure",
    "run_call",
    "run_discover",
    "run_plan",
]

#: The JSON-RPC id of every request simplex-call sends (one request per connection or call).
REQUEST_ID: Final = 1
PROGRESS_TOKEN: Final = "simplex-call-1"
CLIENT_INFO: Final = {"name": "simplex-call", "version": __version__}

_A2A_SEND_KEYS: Final = frozenset(
    {"text", "contextId", "taskId", "returnImmediately", "historyLength", "messageId"}
)
_FAILED_TASK_STATES: Final = frozenset(
    {"TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED"}
)


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True, slots=True)
class Target:
    """What TARGET names: a SimpleX link or name, or a website."""

    text: str
    website: str | None = None


def classify_target(text: str) -> Target:
    """A SimpleX link or name, or a website URL (``https://`` added to a bare host).

    Raises:
        CLIError: ``USAGE`` for anything else.
    """
    value = text.strip()
    if not value:
        raise CLIError(ExitCode.USAGE, "TARGET is empty")
    if value.startswith(("@", "#", "simplex:")):
        parse_simplex_target(value)  # LinkError → 64
        return Target(value)
    try:
        parse_simplex_link(value)
        return Target(value)
    except LinkError:
        pass
    if value.startswith(("https://", "http://")):
        return Target(value, website=value)
    if "://" not in value and "." in value and not any(c.isspace() for c in value):
        host = value.split("/", 1)[0].lower()
        if host.endswith((".simplex", ".testing")):
            raise CLIError(
                ExitCode.USAGE,
                f"{value!r} looks like a SimpleX name without @ or #",
                hint=f"write @{value} for a contact address",
            )
        return Target(value, website=value)
    raise CLIError(
        ExitCode.USAGE,
        f"{value!r} is not a SimpleX link, a SimpleX name or a website",
        hint="TARGET is a contact address link, @name.simplex, or https://example.com",
    )


# --------------------------------------------------------------------------- requests


@dataclass
class CallSpec:
    """A call to make: where, which protocol and method, with what."""

    protocol: str
    method: str
    request: dict[str, Any]
    version: str
    transport: str
    signed: bool = False
    one_shot: bool = True


def method_protocol(method: str) -> str | None:
    """The protocol a METHOD belongs to: MCP methods are ``group/name`` (or ``tool``), A2A
    methods are CamelCase."""
    if method == "tool" or "/" in method or method == "ping":
        return "mcp"
    if method[:1].isupper():
        return "a2a"
    return None


def _mcp_params(method: str, tokens: list[str], env: Environment) -> tuple[str, dict[str, Any]]:
    if method == "tool":
        if not tokens or "=" in tokens[0] or tokens[0].startswith(("{", "@")):
            raise CLIError(
                ExitCode.USAGE, "`tool` needs the tool's name: tool NAME [key=value ...]"
            )
        arguments = parse_call_arguments(tokens[1:], stdin=env.stdin)
        return "tools/call", {"name": tokens[0], "arguments": arguments}
    args = parse_call_arguments(tokens, stdin=env.stdin)
    if method == "tools/call" and "arguments" not in args:
        name = args.pop("name", None)
        if not isinstance(name, str) or not name:
            raise CLIError(ExitCode.USAGE, "tools/call needs name=TOOL (or use `tool NAME`)")
        return method, {"name": name, "arguments": args}
    return method, args


def build_mcp_request(
    method: str, tokens: list[str], version: str, transport: str, env: Environment
) -> dict[str, Any]:
    """The MCP request, built with the binding's caller-side helper."""
    # The caller-side modules of the bindings, not their public modules (bindings.mcp,
    # bindings.a2a), which load the server side too: the SDK's server, its web server and its
    # database layer, none of which a call uses.
    from simplex_protocols.bindings._mcp_caller import build_request

    mcp_method, params = _mcp_params(method, tokens, env)
    return build_request(
        mcp_method,
        params,
        request_id=REQUEST_ID,
        revision=version,
        client_info=CLIENT_INFO,
        # In a conversation the bot may report progress before the response (MCP-MSG-3).
        progress_token=PROGRESS_TOKEN if transport == "chat" else None,
    )


def _text_or_none(value: Any, key: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value:
        return value
    raise CLIError(ExitCode.USAGE, f"{key}= must be text")


def build_a2a_request(
    method: str, tokens: list[str], version: str, env: Environment
) -> tuple[dict[str, Any], bool]:
    """The A2A request, built with the binding's caller-side helpers, and whether Service RPC
    can answer it (only a one-shot SendMessage, A2A-RPC-1)."""
    from simplex_protocols.bindings._a2a_client import build_a2a_request as build_any
    from simplex_protocols.bindings._a2a_client import build_send_message

    args = parse_call_arguments(tokens, stdin=env.stdin)
    if method in ("SendMessage", "SendStreamingMessage") and "message" not in args:
        unknown = sorted(set(args) - _A2A_SEND_KEYS)
        if unknown:
            raise CLIError(
                ExitCode.USAGE,
                f"unknown argument {unknown[0]!r} for {method}",
                hint="use text=, contextId=, taskId=, returnImmediately=, historyLength=, "
                "or a whole message={...}",
            )
        text = args.get("text")
        if not isinstance(text, str) or not text:
            text = None if text is None else str(text) if isinstance(text, int | float) else None
        if text is None:
            raise CLIError(ExitCode.USAGE, f"{method} needs text=TEXT (or a whole message={{...}})")
        history = args.get("historyLength")
        if history is not None and (not isinstance(history, int) or isinstance(history, bool)):
            raise CLIError(ExitCode.USAGE, "historyLength= must be a whole number")
        context_id = _text_or_none(args.get("contextId"), "contextId")
        task_id = _text_or_none(args.get("taskId"), "taskId")
        immediately = args.get("returnImmediately") is True
        request = build_send_message(
            text,
            request_id=REQUEST_ID,
            streaming=method == "SendStreamingMessage",
            message_id=_text_or_none(args.get("messageId"), "messageId"),
            context_id=context_id,
            task_id=task_id,
            return_immediately=immediately,
            history_length=history,
            version=version,
        )
        one_shot = method == "SendMessage" and not (context_id or task_id or immediately)
        return request, one_shot
    request = build_any(method, args, request_id=REQUEST_ID, version=version)
    one_shot = False
    if method == "SendMessage":
        message = args.get("message")
        config = args.get("configuration")
        one_shot = (
            isinstance(message, Mapping)
            and not message.get("contextId")
            and not message.get("taskId")
            and not (isinstance(config, Mapping) and config.get("returnImmediately") is True)
        )
    return request, one_shot


def choose_protocol(requested: str | None, method: str, plan: AddressPlan) -> str:
    """The protocol of the call.

    Raises:
        CLIError: the method belongs to another protocol than ``--protocol`` (64); the target
            declares neither MCP nor A2A and no protocol was given (66); it declares both and
            the method says nothing (64).
    """
    implied = method_protocol(method)
    if requested is not None and implied is not None and requested != implied:
        raise CLIError(
            ExitCode.USAGE, f"{method} is not a method of {requested} (it looks like {implied})"
        )
    if requested is not None:
        return requested
    if implied is not None:
        return implied
    served = [p for p in ("mcp", "a2a") if plan.protocols.lookup(p) is not None]
    if not served:
        raise CLIError(
            ExitCode.NOT_SUPPORTED,
            f"{_who(plan)} declares neither mcp nor a2a",
            hint="see `simplex-call plan TARGET`",
        )
    if len(served) > 1:
        raise CLIError(ExitCode.USAGE, f"{_who(plan)} serves mcp and a2a: give --protocol")
    return served[0]


def choose_version(protocol: str, declared: ProtocolDeclaration | None, given: str | None) -> str:
    """The version to send: ``--protocol-version``, else the first declared one we speak.

    Raises:
        CLIError: ``NOT_SUPPORTED`` when none of the declared versions is one we speak.
    """
    if given:
        return given
    if protocol == "mcp":
        from simplex_protocols.bindings._mcp_caller import DEFAULT_REVISION, choose_revision

        if declared is None:
            return DEFAULT_REVISION
        chosen = choose_revision(declared.versions)
        if chosen is None:
            raise CLIError(
                ExitCode.NOT_SUPPORTED,
                f"the bot serves MCP {', '.join(declared.versions) or '(no revision)'}; "
                f"simplex-call speaks {DEFAULT_REVISION}",
            )
        return chosen
    from simplex_protocols.bindings._a2a_wire import DEFAULT_A2A_VERSION

    if declared is None or DEFAULT_A2A_VERSION in declared.versions:
        return DEFAULT_A2A_VERSION
    raise CLIError(
        ExitCode.NOT_SUPPORTED,
        f"the bot serves A2A {', '.join(declared.versions) or '(no version)'}; "
        f"simplex-call speaks {DEFAULT_A2A_VERSION}",
    )


def choose_transport(
    requested: str,
    declared: ProtocolDeclaration | None,
    protocol: str,
    method: str,
    one_shot: bool,
    who: str,
) -> str:
    """The transport: ``--transport``, or for ``auto`` Service RPC when the target declares it
    for the protocol and the request can be answered in one shot, else a conversation.

    Raises:
        CLIError: ``NOT_SUPPORTED`` when the target does not serve the protocol on the
            transport asked for (or on any, for ``auto``).
    """
    if requested == "rpc":
        if declared is not None and not declared.rpc:
            raise CLIError(
                ExitCode.NOT_SUPPORTED,
                f"{who} does not serve {protocol} over Service RPC",
                hint="try --transport chat",
            )
        if not one_shot:
            raise CLIError(
                ExitCode.NOT_SUPPORTED,
                f"over Service RPC, A2A serves only a one-shot SendMessage, not {method}",
                hint="try --transport chat",
            )
        return "rpc"
    if requested == "chat":
        if declared is not None and not declared.chat:
            raise CLIError(
                ExitCode.NOT_SUPPORTED,
                f"{who} does not serve {protocol} in a conversation",
                hint="try --transport rpc",
            )
        return "chat"
    assert declared is not None
    if declared.rpc and one_shot:
        return "rpc"
    if declared.chat:
        return "chat"
    raise CLIError(
        ExitCode.NOT_SUPPORTED,
        f"{who} serves {protocol} only over Service RPC, which cannot answer {method}",
    )


def _who(plan: AddressPlan) -> str:
    return plan.display_name or plan.simplex_name or "the target"


# --------------------------------------------------------------------------- outcomes


@dataclass
class CallOutcome:
    """How a call went: what was sent, what came back, and the exit status."""

    spec: CallSpec
    plan: AddressPlan
    replies: list[Reply] = field(default_factory=list)
    response: Mapping[str, Any] | None = None
    exit_code: ExitCode = ExitCode.OK
    failure: Failure | None = None
    #: For a list read to its end (``nextCursor`` followed): how many pages it took.
    pages: int | None = None

    def messages(self) -> list[Mapping[str, Any]]:
        """Every protocol message of the answer, in order (the response last)."""
        if self.replies:
            return [r.message for r in self.replies if r.message is not None]
        return [self.response] if self.response is not None else []

    def to_json(self, notes: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ok": self.exit_code is ExitCode.OK,
            "exitCode": int(self.exit_code),
            "status": self.exit_code.slug,
            "target": self.plan.target,
            "address": self.plan.address,
            "name": self.plan.display_name,
            "protocol": self.spec.protocol,
            "version": self.spec.version,
            "transport": self.spec.transport,
            "signed": self.spec.signed,
            "method": self.spec.method,
            "request": self.spec.request,
        }
        if self.spec.transport == "chat":
            out["replies"] = [
                {"message": r.message} if r.message is not None else {"text": r.text}
                for r in self.replies
            ]
        out["response"] = self.response
        if self.pages is not None:
            out["pages"] = self.pages
        if self.failure is not None:
            out["error"] = self.failure.to_json()
        out["notes"] = list(notes)
        return out


def answer_status(protocol: str, method: str, response: Mapping[str, Any] | None) -> ExitCode:
    """The exit status an answer gives: 0 for a result, else what its error or its task says."""
    if response is None:
        return ExitCode.TIMED_OUT
    if "error" in response:
        error = response.get("error")
        return exit_for_jsonrpc_error(error.get("code") if isinstance(error, Mapping) else None)
    result = response.get("result")
    if not isinstance(result, Mapping):
        return ExitCode.REMOTE_ERROR
    if protocol == "mcp":
        return ExitCode.REMOTE_ERROR if result.get("isError") is True else ExitCode.OK
    task = result.get("task") if isinstance(result.get("task"), Mapping) else None
    status = None
    if task is not None:
        status = task.get("status")
    elif isinstance(result.get("statusUpdate"), Mapping):
        status = result["statusUpdate"].get("status")
    elif isinstance(result.get("status"), Mapping):
        status = result["status"]
    state = status.get("state") if isinstance(status, Mapping) else None
    return ExitCode.REMOTE_ERROR if state in _FAILED_TASK_STATES else ExitCode.OK


# --------------------------------------------------------------------------- connecting

#: What the conversation's refusals (``CallFormatError`` codes of ``open_conversation``)
#: give as exit status, and the hint shown with them.
_CONNECT_REFUSALS: Final = {
    "own_address": (ExitCode.USAGE, None),
    "connection_pending": (
        ExitCode.REFUSED,
        "accept or delete the pending connection in your chat client",
    ),
    "no_link_data": (ExitCode.NOT_FOUND, None),
    "not_a_contact_address": (ExitCode.NOT_SUPPORTED, None),
    "bad_prepared_chat": (ExitCode.REMOTE_ERROR, None),
}


async def ensure_conversation(
    session: Session, plan: AddressPlan, console: Console, wait_s: float
) -> Conversation:
    """A conversation with the address: the existing contact, or a new connection, opened by
    the SDK client transports' own ``open_conversation`` from the plan's raw response, so
    connecting is written once.

    Raises:
        CLIError: the address is ours (64), a connection to it is pending (67), the plan has
            no link data to connect with (65).
        CallTimeoutError: the connection was not made within ``wait_s``.
    """
    who = _who(plan)
    domain = plan.simplex_name.lstrip("@#") if plan.simplex_name else None
    if domain is not None and plan.status == "ok":
        # domain= records the verified name with the prepared chat; a core without it refuses
        # the whole command, so the chat is prepared without the name there.
        caps = await probe_core(session.api, [Capability.PREPARED_CHATS])
        if not caps.has(Capability.PREPARED_CHATS):
            domain = None
    try:
        return await open_conversation(
            session.api,
            session.user_id,
            plan.address,
            plan.raw,
            wait_s=wait_s,
            who=who,
            domain=domain,
            while_connecting=lambda: console.step(f"connecting to {who}"),
        )
    except CallFormatError as refused:
        found = _CONNECT_REFUSALS.get(refused.code)
        if found is None:
            raise
        exit_code, hint = found
        raise CLIError(exit_code, refused.reason, hint=hint) from None


# --------------------------------------------------------------------------- the call


async def perform_call(
    session: Session,
    plan: AddressPlan,
    spec: CallSpec,
    console: Console,
    *,
    wait_s: float,
    key_store: KeyStore | None,
    rebuild_for_chat: Callable[[], dict[str, Any]] | None = None,
    chat_allowed: bool = False,
) -> CallOutcome:
    """Make the call over the chosen transport and read how it went.

    The request travels through ``BotLink``, the layer the SDK client transports (``SimplexTransport``, ``SimplexA2ATransport``) are built on:
    it sends the request as it was built and gives back every reply as it came, which the
    output shows (the SDK clients parse answers into their own types).

    Over Service RPC, an answer ``conversation_required`` is followed by the same call in a
    conversation when ``chat_allowed`` (the target declares chat and ``--transport auto``):
    the spec lets a requester do so (RPC-ERR-9). So is ``too_large``, once: a conversation
    carries a larger answer than Service RPC (MCP-MSG-7).

    Raises:
        Exceptions of the transports; :func:`failure_of` maps each to an exit status.
    """
    who = _who(plan)
    link = BotLink(
        plan.address,
        core=session.api,
        user_id=session.user_id,
        clock=session.clock,
        key_store=key_store,
        connect_wait_s=wait_s,
    )
    async with link:
        if spec.transport == "rpc":
            try:
                step = f"waiting for {who} over Service RPC (timeout {wait_s:g} s)"
                async with console.step(step):
                    response = await link.request(
                        spec.protocol, spec.request, timeout_s=wait_s, sign=spec.signed
                    )
            except (ConversationRequiredError, TooLargeError) as refused:
                if not chat_allowed or rebuild_for_chat is None:
                    raise
                if isinstance(refused, TooLargeError):
                    # MCP-MSG-7: too_large over Service RPC; a conversation carries more.
                    console.note(
                        f"{who} answered too_large over Service RPC; calling in a "
                        "conversation instead, where a message carries more"
                    )
                else:
                    console.note(
                        f"{who} answered conversation_required over Service RPC; calling in "
                        "a conversation instead (RPC-ERR-9)"
                    )
                spec.transport = "chat"
                spec.request = rebuild_for_chat()
                spec.signed = False
                return await perform_call(
                    session, plan, spec, console, wait_s=wait_s, key_store=None
                )
            if not isinstance(response, Mapping):
                raise CLIError(
                    ExitCode.REMOTE_ERROR, "the envelope's response is not a JSON object"
                )
            outcome = CallOutcome(spec, plan, response=dict(response))
            outcome.exit_code = answer_status(spec.protocol, spec.method, outcome.response)
            return outcome
        conversation = await ensure_conversation(session, plan, console, wait_s)
        request = spec.request
        async with console.step(f"waiting for {who}'s replies (timeout {wait_s:g} s)"):
            result = await link.call(
                spec.protocol,
                request,
                final=_final_rule(spec.protocol, request),
                wait_s=wait_s,
                conversation=conversation,
                raise_on_timeout=False,
            )
    answer = result.answer
    outcome = CallOutcome(spec, plan)
    if answer is not None:
        outcome.replies = list(answer.replies)
        outcome.response = answer.final
    if not result.completed:
        got = len(outcome.replies)
        outcome.exit_code = ExitCode.TIMED_OUT
        outcome.failure = Failure(
            ExitCode.TIMED_OUT,
            f"no final answer from {who} within {wait_s:g} s"
            + (f" ({got} repl{'y' if got == 1 else 'ies'} before)" if got else ""),
            "the bot may still answer in the conversation",
        )
        return outcome
    outcome.exit_code = answer_status(spec.protocol, spec.method, outcome.response)
    return outcome


def _final_rule(protocol: str, request: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    if protocol == "mcp":
        from simplex_protocols.bindings._mcp_caller import is_final

        return lambda message: is_final(request, message)
    from simplex_protocols.bindings._a2a_wire import is_final_message

    return lambda message: is_final_message(request, message)


# --------------------------------------------------------------------------- showing a call


def render_call(outcome: CallOutcome, console: Console) -> None:
    """The call as a short readable transcript: what was sent, then each reply."""
    spec = outcome.spec
    plan = outcome.plan
    how = "over Service RPC" if spec.transport == "rpc" else "in a conversation"
    if spec.signed:
        how += ", signed"
    console.line(f"→ {spec.protocol} {spec.method} to {_who(plan)} {how}")
    params = spec.request.get("params")
    if isinstance(params, Mapping):
        shown = _shown_params(spec.protocol, params)
        if shown:
            console.line(f"  {Console.compact(shown)}")
    render = render_mcp if spec.protocol == "mcp" else render_a2a
    method = str(spec.request.get("method", spec.method))
    if spec.transport == "chat" and (outcome.pages or 1) == 1:
        for reply in outcome.replies:
            if reply.message is None:
                console.line(f"← text: {reply.text}")
                continue
            lines = render(method, reply.message)
            console.line(f"← {lines[0]}" if lines else "←")
            for more in lines[1:]:
                console.line(f"  {more}")
    elif outcome.response is not None:
        lines = render(method, outcome.response)
        console.line(f"← {lines[0]}" if lines else "←")
        for more in lines[1:]:
            console.line(f"  {more}")


def _shown_params(protocol: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The params worth showing: no ``_meta``; for an A2A message its text, not its ID."""
    shown = {k: v for k, v in params.items() if k != "_meta"}
    message = shown.get("message")
    if protocol == "a2a" and isinstance(message, Mapping):
        parts = message.get("parts")
        texts = (
            [p["text"] for p in parts if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
            if isinstance(parts, list)
            else []
        )
        brief = {k: v for k, v in message.items() if k not in ("messageId", "role", "parts")}
        if len(texts) == 1 and isinstance(parts, list) and len(parts) == 1:
            brief = {"text": texts[0], **brief}
        else:
            brief["parts"] = parts
        shown["message"] = brief
    return shown


# --------------------------------------------------------------------------- commands


async def _discover(url: str, wait_s: float) -> WebsiteDiscovery:
    # Imported here: the HTTP client loads for a website, not for a link or a name.
    from simplex_protocols.discovery import discover_website

    return await discover_website(url, limits=DiscoveryLimits(timeout_s=min(wait_s, 15.0)))


def report_failure(
    console: Console, failure: Failure, extra: Mapping[str, Any] | None = None
) -> int:
    if console.json_mode:
        out: dict[str, Any] = {
            "ok": False,
            "exitCode": int(failure.exit_code),
            "status": failure.exit_code.slug,
        }
        if extra:
            out.update(extra)
        out["error"] = failure.to_json()
        out["notes"] = list(console.notes)
        console.json(out)
    else:
        console.error(failure.message, failure.hint)
    return int(failure.exit_code)


async def _website_address(
    session: Session, url: str, protocol: str | None, console: Console, wait_s: float
) -> tuple[AddressPlan, WebsiteAddress]:
    async with console.step(f"reading {url}"):
        site = await _discover(url, wait_s)
    candidates = site.agent_contacts(protocol)
    if not candidates:
        failed = site.failed
        if failed and len(failed) == len(site.documents):
            codes = {d.error.code for d in failed if d.error is not None}
            if codes == {"timeout"}:
                raise CLIError(ExitCode.TIMED_OUT, f"{site.url} did not answer in time")
            raise CLIError(ExitCode.NOT_FOUND, f"{site.url} cannot be read")
        raise CLIError(
            ExitCode.NOT_FOUND,
            f"{site.url} publishes no SimpleX contact address for agents",
            hint=f"see `simplex-call discover {url}`",
        )
    first: AddressPlan | None = None
    first_address: WebsiteAddress | None = None
    for address in candidates:
        async with console.step(f"reading the link data of {address.title or address.address}"):
            try:
                with anyio.fail_after(wait_s):
                    plan = await plan_address(
                        session.api, session.user_id, address.address, website=address
                    )
            except (CoreError, TimeoutError) as exc:
                reason = exc.describe() if isinstance(exc, CoreError) else "timed out"
                console.note(f"{address.address}: link data not read ({reason})")
                continue
        if plan.kind is not LinkKind.CONTACT:
            continue
        if first is None:
            first, first_address = plan, address
        if protocol is None or plan.protocols.lookup(protocol) is not None:
            if len(candidates) > 1:
                console.note(
                    f"{site.url} lists {len(candidates)} addresses for agents; using {address.title or address.address}"
                )
            return plan, address
    if first is None or first_address is None:
        raise CLIError(ExitCode.NOT_FOUND, f"no address of {site.url} could be read")
    return first, first_address


async def run_call(options: argparse.Namespace, console: Console, env: Environment) -> int:
    """``simplex-call TARGET METHOD [ARGS]``.

    A failure is reported with what was known of the call when it happened (in ``--json``:
    the target, the address, the protocol, the request ...).
    """
    known: dict[str, Any] = {"target": options.target}
    try:
        outcome = await _call(options, console, env, known)
    except Exception as exc:
        return report_failure(console, failure_of(_single(exc)), known)
    if console.json_mode:
        console.json(outcome.to_json(console.notes))
    else:
        render_call(outcome, console)
        if outcome.failure is not None:
            console.error(outcome.failure.message, outcome.failure.hint)
    return int(outcome.exit_code)


def _single(exc: BaseException) -> BaseException:
    return first_error(exc)


async def _call(
    options: argparse.Namespace, console: Console, env: Environment, known: dict[str, Any]
) -> CallOutcome:
    target = classify_target(options.target)
    method: str = options.method
    protocol_hint = options.protocol or method_protocol(method)
    async with open_session(options.core, env) as session:
        for note in _session_notes(session):
            console.note(note)
        if target.website is not None:
            plan, _address = await _website_address(
                session, target.website, protocol_hint, console, options.timeout
            )
        else:
            async with console.step(f"reading the link data of {target.text}"):
                with anyio.fail_after(options.timeout):
                    plan = await plan_address(session.api, session.user_id, target.text)
        known.update(address=plan.address, name=plan.display_name)
        for note in plan.notes:
            # Where the website and the link data disagree: `discover` shows it.
            console.record(note)
        if plan.kind is not LinkKind.CONTACT:
            raise CLIError(
                ExitCode.NOT_SUPPORTED,
                f"{target.text} is a {plan.kind.value} link; calls go to a contact address",
            )
        protocol = choose_protocol(options.protocol, method, plan)
        known["protocol"] = protocol
        declared = plan.protocols.lookup(protocol)
        explicit = options.protocol is not None and options.transport != "auto"
        if declared is None and not explicit:
            raise CLIError(
                ExitCode.NOT_SUPPORTED,
                f"{_who(plan)} does not declare {protocol}",
                hint="give --protocol and --transport to call it anyway",
            )
        if declared is None:
            console.note(f"{_who(plan)} does not declare {protocol}; calling it anyway")
        version = choose_version(protocol, declared, options.protocol_version)
        known["version"] = version
        tokens = list(options.args)
        if protocol == "mcp":
            request = build_mcp_request(method, tokens, version, "rpc", env)
            one_shot = True
        else:
            request, one_shot = build_a2a_request(method, tokens, version, env)
        transport = choose_transport(
            options.transport, declared, protocol, method, one_shot, _who(plan)
        )
        if transport == "rpc":
            transport = await _rpc_or_chat(session, options, declared, console, _who(plan))
        if protocol == "mcp" and transport == "chat":
            request = build_mcp_request(method, tokens, version, "chat", env)
        signed = bool(options.sign) and transport == "rpc"
        if options.sign and transport != "rpc":
            console.note("--sign applies to Service RPC; the conversation is your identity")
        spec = CallSpec(
            protocol, str(request["method"]), request, version, transport, signed, one_shot
        )
        known.update(transport=transport, signed=signed, method=spec.method, request=request)
        key_store = KeyStore(key_folder(env.environ, options.key_dir)) if options.sign else None

        def for_chat() -> dict[str, Any]:
            known.update(transport="chat", signed=False)
            if protocol == "mcp":
                chat_request = build_mcp_request(method, tokens, version, "chat", env)
                known["request"] = chat_request
                return chat_request
            return request

        chat_allowed = options.transport == "auto" and declared is not None and declared.chat
        outcome = await perform_call(
            session,
            plan,
            spec,
            console,
            wait_s=options.timeout,
            key_store=key_store,
            rebuild_for_chat=for_chat,
            chat_allowed=chat_allowed,
        )
        if outcome.exit_code is not ExitCode.OK or not follows_pages(protocol, spec.request):
            return outcome
        return await _follow_pages(
            session,
            outcome,
            console,
            wait_s=options.timeout,
            key_store=key_store,
            for_chat=for_chat,
            chat_allowed=chat_allowed,
        )


async def _follow_pages(
    session: Session,
    first: CallOutcome,
    console: Console,
    *,
    wait_s: float,
    key_store: KeyStore | None,
    for_chat: Callable[[], dict[str, Any]],
    chat_allowed: bool,
) -> CallOutcome:
    """Read an MCP list to its end: each following page asked for with the cursor of the one
    before, on the transport the first page came on (a conversation, once a Service RPC page
    was answered ``too_large`` and the call moved there).

    Returns:
        One outcome with the pages joined into one response; or, when a page fails, that
        page's outcome (with a note saying which page it was).
    """
    spec = first.spec
    replies = list(first.replies)
    failed: list[CallOutcome] = []

    async def ask(cursor: str, number: int) -> Mapping[str, Any] | None:
        page_spec = CallSpec(
            spec.protocol,
            spec.method,
            with_cursor(spec.request, cursor),
            spec.version,
            spec.transport,
            spec.signed,
            spec.one_shot,
        )
        outcome = await perform_call(
            session,
            first.plan,
            page_spec,
            console,
            wait_s=wait_s,
            key_store=key_store,
            rebuild_for_chat=lambda: with_cursor(for_chat(), cursor),
            chat_allowed=chat_allowed,
        )
        if page_spec.transport != spec.transport:
            # The page moved to a conversation: so do the pages after it.
            spec.transport, spec.signed = page_spec.transport, page_spec.signed
            spec.request = for_chat()
        replies.extend(outcome.replies)
        if outcome.exit_code is not ExitCode.OK or outcome.response is None:
            console.note(f"page {number} of {spec.method} failed")
            failed.append(outcome)
            return None
        return outcome.response

    assert first.response is not None
    joined, pages = await join_pages(spec.method, first.response, ask)
    if failed:
        failed[0].pages = pages
        return failed[0]
    outcome = CallOutcome(spec, first.plan, replies=replies, response=joined, pages=pages)
    outcome.exit_code = answer_status(spec.protocol, spec.method, joined)
    return outcome


async def _rpc_or_chat(
    session: Session,
    options: argparse.Namespace,
    declared: ProtocolDeclaration | None,
    console: Console,
    who: str,
) -> str:
    """Service RPC when this chat core can send requests; else a conversation, when the
    transport was left to choose and the target serves one.

    Raises:
        CLIError: ``NOT_SUPPORTED`` for ``--transport rpc`` on a core that cannot send Service
            RPC requests (or one that cannot when the target serves no conversation).
    """
    caps = await probe_core(session.api, [Capability.SERVICE_REQUEST_SEND])
    found = caps.result(Capability.SERVICE_REQUEST_SEND)
    if found.status is not CapabilityStatus.MISSING:
        return "rpc"
    if options.transport == "auto" and declared is not None and declared.chat:
        console.note(
            f"this chat core cannot send Service RPC requests ({found.evidence}); calling {who} "
            "in a conversation instead (see `simplex-call doctor`)"
        )
        return "chat"
    raise CLIError(
        ExitCode.NOT_SUPPORTED,
        f"this chat core cannot send Service RPC requests ({found.evidence})",
        hint="see `simplex-call doctor`; try --transport chat",
    )


def _session_notes(session: Session) -> list[str]:
    if session.created_user:
        return [f"created simplex-call's SimpleX user (ID {session.user_id}) in {session.option}"]
    return []


async def run_plan(options: argparse.Namespace, console: Console, env: Environment) -> int:
    """``simplex-call plan TARGET``."""
    target = classify_target(options.target)
    if target.website is not None:
        raise CLIError(
            ExitCode.USAGE,
            "plan reads a SimpleX link or name",
            hint=f"for a website use `simplex-call discover {options.target}`",
        )
    async with open_session(options.core, env) as session:
        for note in _session_notes(session):
            console.note(note)
        async with console.step(f"reading the link data of {target.text}"):
            with anyio.fail_after(options.timeout):
                plan = await plan_address(session.api, session.user_id, target.text)
    if console.json_mode:
        out = {"ok": True, "exitCode": 0, "status": "ok", **plan.to_json()}
        out["notes"] = list(console.notes)
        console.json(out)
    else:
        for line in render_plan(plan):
            console.line(line)
    return 0


async def run_discover(options: argparse.Namespace, console: Console, env: Environment) -> int:
    """``simplex-call discover URL``."""
    async with console.step(f"reading {options.url}"):
        site = await _discover(options.url, options.timeout)
    plans: dict[str, AddressPlan | str] = {}
    if site.addresses and not options.no_plan:
        async with open_session(options.core, env) as session:
            for note in _session_notes(session):
                console.note(note)
            for address in site.addresses:
                async with console.step(f"reading the link data of {address.address}"):
                    try:
                        with anyio.fail_after(options.timeout):
                            plans[address.address] = await plan_address(
                                session.api, session.user_id, address.address, website=address
                            )
                    except (CoreError, TimeoutError) as exc:
                        reason = exc.describe() if isinstance(exc, CoreError) else "timed out"
                        plans[address.address] = reason
    exit_code = _discover_status(site)
    if console.json_mode:
        console.json(_discovery_json(site, plans, exit_code, console.notes))
    else:
        for line in render_discovery(site, plans):
            console.line(line)
    return int(exit_code)


def _discover_status(site: WebsiteDiscovery) -> ExitCode:
    if site.addresses:
        return ExitCode.OK
    failed = site.failed
    if failed and len(failed) == len(site.documents):
        codes = {d.error.code for d in failed if d.error is not None}
        if codes == {"timeout"}:
            return ExitCode.TIMED_OUT
    return ExitCode.NOT_FOUND


def _discovery_json(
    site: WebsiteDiscovery,
    plans: Mapping[str, AddressPlan | str],
    exit_code: ExitCode,
    notes: list[str],
) -> dict[str, Any]:
    documents = []
    for doc in site.documents:
        item: dict[str, Any] = {
            "source": doc.source.value,
            "url": doc.url,
            "status": doc.status.value,
        }
        if doc.final_url is not None:
            item["finalUrl"] = doc.final_url
        if doc.http_status is not None:
            item["httpStatus"] = doc.http_status
        item["addresses"] = doc.addresses
        if doc.error is not None:
            item["error"] = {"code": doc.error.code, "message": doc.error.reason}
        documents.append(item)
    addresses = []
    for address in site.addresses:
        item = {"website": address.to_json()}
        found = plans.get(address.address)
        if isinstance(found, AddressPlan):
            item["declarations"] = found.to_json()
        elif isinstance(found, str):
            item["declarations"] = None
            item["error"] = found
        addresses.append(item)
    return {
        "ok": exit_code is ExitCode.OK,
        "exitCode": int(exit_code),
        "status": exit_code.slug,
        "url": site.url,
        "documents": documents,
        "addresses": addresses,
        "problems": [
            {
                "source": p.source.value,
                "code": p.code,
                "reason": p.reason,
                **({"line": p.line} if p.line is not None else {}),
                **({"position": p.position} if p.position is not None else {}),
            }
            for p in site.problems
        ],
        "notes": list(notes),
    }
