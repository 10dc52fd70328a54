"""The ``call`` tool (``--call-tool``, not the plan's): the agent calls another bot's MCP or
A2A method over SimpleX, through the library's callers.

A call with ``method`` is an action, as ``connect`` and ``send`` are: its card shows the bot
(name, address, what it declares, verified or not), the method and the params; ``/approve N
calls`` (or ``/approve @C all`` for the bot's contact chat) makes later calls to the bot
standing. Without ``method`` the tool only reads what the target declares: the address's
link data (no connection is made), and for MCP over Service RPC an unsigned ``tools/list``
(Service RPC makes no contact and the unsigned request names no one), so it is no action.

The perform goes through :class:`~simplex_protocols.bindings._simplex_client.BotLink` on the
agent's own chat core: Service RPC (``/_service_request``, signed with a key per bot kept in
``DIR/keys``: RPC-SIG-5) or ``/_call`` in a conversation. Progress from the bot reaches the
agent's calls waiting on the action; when the last of them is cancelled, the perform stops:
over chat a ``notifications/cancelled`` goes to the bot, over Service RPC the wait ends.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, NoReturn

import anyio

from simplex_protocols._wire import dumps
from simplex_protocols.bindings._a2a_wire import is_final_message
from simplex_protocols.bindings._mcp_caller import is_final, progress_of
from simplex_protocols.bindings._simplex_client import BotLink, Conversation
from simplex_protocols.chat_call import Reply
from simplex_protocols.core import ContactRef
from simplex_protocols.discovery import AddressPlan, discover_website, plan_address
from simplex_protocols.errors import (
    CallTimeoutError,
    ConversationRequiredError,
    CoreError,
    DiscoveryError,
    ServiceError,
    SimplexError,
    TooLargeError,
)
from simplex_protocols.rpc import KeyStore

from .actions import Action, ActionState, ActionTool, action_key
from .approvals import ActionToolParts, Prepare
from .call_flow import (
    REQUEST_ID,
    RPC_WAIT_S,
    BuiltCall,
    CallTarget,
    bot_of,
    build_call,
    declared_lines,
    envelope_error,
    pick_transport,
    pick_version,
    read_target,
)
from .cards import MAX_CARD_BYTES, Card, Outcome, Subject, call_card, card_size
from .config import ApproveMode
from .errors import CallToolError, ToolError
from .log import CORE_FAILURES, failure_text
from .state import CallContext
from .trace import current_trace

__all__ = ["CallTool", "standing_call_approval"]

#: The key of the control chat's custom data under which standing call approvals live.
_CALLS_KEY: Final = "calls"


def standing_call_approval(
    control_data: Mapping[str, Any], address: str
) -> Mapping[str, Any] | None:
    """The ``/approve N calls`` kept for ``address`` in the control chat's custom data."""
    mcp = control_data.get("simplexMcp")
    calls = mcp.get(_CALLS_KEY) if isinstance(mcp, Mapping) else None
    entry = calls.get(address) if isinstance(calls, Mapping) else None
    return entry if isinstance(entry, Mapping) else None


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A call ready to send: the bot's plan, the request and its transport."""

    plan: AddressPlan
    protocol: str
    method: str
    transport: str
    built: BuiltCall
    #: The same call for a conversation, when Service RPC's refusal may be followed by one
    #: (``transport`` auto and the bot declares chat: RPC-ERR-9, MCP-MSG-7).
    fallback: BuiltCall | None
    contact: ContactRef | None
    notes: tuple[str, ...] = ()

    @property
    def who(self) -> str:
        return self.plan.display_name or self.plan.simplex_name or "the bot"


@dataclass(frozen=True, slots=True)
class CallTool(ActionToolParts):
    """The call tool and the perform of its actions."""

    keys: KeyStore | None = None
    #: The calls waiting on an action, by its action fields: they get the bot's progress.
    _waiting: dict[tuple[Any, ...], list[CallContext]] = field(default_factory=dict)
    #: The cancel scope of each call being performed, by action number.
    _scopes: dict[int, anyio.CancelScope] = field(default_factory=dict)
    #: ``error_code`` and ``retry_after`` of failed calls, until their result is returned.
    _failures: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: The prepared calls of new actions, by number, until their perform takes them.
    _ready: dict[int, _Prepared] = field(default_factory=dict)

    # ------------------------------------------------------------------ the tool

    async def call(self, arguments: Mapping[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The call tool: what the target declares, or an action that calls its method."""
        target = read_target(str(arguments.get("target", "")))
        protocol = str(arguments.get("protocol"))
        if arguments.get("method") is None:
            if arguments.get("params") is not None:
                raise CallToolError("bad_request", "params: give method with params.")
            return await self._declared(target, protocol)
        key = action_key(ActionTool.CALL, arguments)
        waiting = self._waiting.setdefault(key, [])
        waiting.append(ctx)
        try:
            outcome, _ = await self.approvals.call(
                ActionTool.CALL, arguments, ctx, lambda: self._checks(target, arguments)
            )
        except anyio.get_cancelled_exc_class():
            self._cancelled(key, ctx)
            raise
        finally:
            if ctx in waiting:
                waiting.remove(ctx)
            if not waiting:
                self._waiting.pop(key, None)
        if isinstance(outcome, dict):
            n = outcome.get("action")
            if not isinstance(n, int):
                return outcome
            # decided without a perform (rejected, expired), or failed: nothing left to send
            self._ready.pop(n, None)
            return {**outcome, **self._failures.pop(n, {})}
        self.approvals.forget(outcome)
        if outcome.answer is None:
            # --durable-actions: done before a restart, and the answer is kept in memory only
            return {
                "action": outcome.n,
                "status": "failed",
                "error": "the answer was not kept across the server's restart",
            }
        return {"action": outcome.n, **outcome.answer}

    def _cancelled(self, key: tuple[Any, ...], ctx: CallContext) -> None:
        """The agent cancelled a call: when no other call waits on its action, the perform
        stops (the bot hears of it over chat)."""
        others = [c for c in self._waiting.get(key, []) if c is not ctx]
        action = self.state.book.find(ActionTool.CALL, key)
        if others or action is None or action.state is not ActionState.PERFORMING:
            return
        scope = self._scopes.get(action.n)
        if scope is not None:
            scope.cancel()

    # ------------------------------------------------------------------ resolving the target

    async def _plan(self, target: CallTarget, protocol: str) -> tuple[AddressPlan, list[str]]:
        """The address's plan (no connection is made) and notes on how it was found."""
        api, user_id = self.state.api, self.state.user_id
        notes: list[str] = []
        address = target.text
        website = None
        if target.kind == "chat":
            assert target.contact is not None
            info = await self.chats.chat_info(target.contact)
            if info is None or info.ref != target.contact:
                raise CallToolError(
                    "unknown_chat", f"No chat {target.text}. list shows the agent's chats."
                )
            link = info.profile.get("contactLink")
            if not isinstance(link, str) or not link:
                raise CallToolError(
                    "bad_target",
                    f"target: {target.text} shows no address in its profile; give the bot's "
                    "link or SimpleX name.",
                )
            address = link
        elif target.kind == "website":
            try:
                site = await discover_website(target.text)
            except (DiscoveryError, ValueError) as exc:
                raise CallToolError("target_unreachable", f"target: {exc}") from None
            found = site.agent_contacts(protocol) or site.agent_contacts()
            if not found:
                raise CallToolError(
                    "not_declared", f"target: {target.text} publishes no address for agents."
                )
            website = found[0]
            address = website.address
            if len(found) > 1:
                notes.append(f"the website publishes {len(found)} addresses; the first is called")
        try:
            plan = await plan_address(api, user_id, address, website=website)
        except (CoreError, SimplexError) as exc:
            detail = failure_text(exc) if isinstance(exc, CORE_FAILURES) else str(exc)
            raise CallToolError("target_unreachable", f"target: {detail}") from None
        notes.extend(plan.notes)
        return plan, notes

    async def _prepare(self, target: CallTarget, arguments: Mapping[str, Any]) -> _Prepared:
        """The plan, the version, the transport and the request of a call.

        Raises:
            CallToolError: the target does not declare the protocol, or not on the transport.
        """
        protocol = str(arguments.get("protocol"))
        method = str(arguments.get("method"))
        params = arguments.get("params")
        plan, notes = await self._plan(target, protocol)
        declared = plan.protocols.lookup(protocol)
        if declared is None:
            raise CallToolError(
                "not_declared",
                f"The target does not declare {protocol}; call without method to see what it "
                "declares.",
            )
        version = pick_version(protocol, declared)
        trace = current_trace()
        traceparent = trace.traceparent if trace is not None else None
        tracestate = trace.tracestate if trace is not None else None

        def built(chat: bool) -> BuiltCall:
            return build_call(
                protocol,
                method,
                params if isinstance(params, Mapping) else None,
                version=version,
                chat=chat,
                traceparent=traceparent,
                tracestate=tracestate,
            )

        first = built(False)
        requested = str(arguments.get("transport", "auto"))
        transport = pick_transport(
            requested, declared, protocol, first.one_shot, chat_only=target.kind == "chat"
        )
        in_chat = built(True)
        return _Prepared(
            plan,
            protocol,
            method,
            transport,
            first if transport == "rpc" else in_chat,
            fallback=in_chat if requested == "auto" and declared.chat else None,
            contact=target.contact
            if target.contact is not None
            else (ContactRef(plan.contact_id) if plan.contact_id is not None else None),
            notes=tuple(notes),
        )

    # ------------------------------------------------------------------ discovery

    async def _declared(self, target: CallTarget, protocol: str) -> dict[str, Any]:
        """What the target declares (method omitted): no action, nothing signed, no contact."""
        plan, notes = await self._plan(target, protocol)
        result: dict[str, Any] = {"status": "declared", "bot": bot_of(plan), "protocol": protocol}
        declared = plan.protocols.lookup(protocol)
        if declared is None:
            notes.append(f"the target does not declare {protocol}")
        elif protocol == "mcp" and declared.rpc and target.kind != "chat":
            tools = await self._tools_list(plan, declared.versions, notes)
            if tools is not None:
                result["tools"] = tools
        elif protocol == "mcp":
            notes.append(
                "the bot serves mcp in a conversation only: call tools/list (an action) for its "
                "tools"
            )
        else:
            notes.append(
                "A2A serves only SendMessage over Service RPC: call GetExtendedAgentCard with "
                "transport chat (an action) for the Agent Card's skills"
            )
        if notes:
            result["notes"] = notes
        return result

    async def _tools_list(
        self, plan: AddressPlan, versions: tuple[str, ...], notes: list[str]
    ) -> list[Any] | None:
        """``tools/list`` over Service RPC, unsigned (no key is made for a mere look)."""
        declared = plan.protocols.lookup("mcp")
        assert declared is not None
        try:
            request = build_call(
                "mcp", "tools/list", None, version=pick_version("mcp", declared), chat=False
            ).request
            link = BotLink(
                plan.address,
                core=self.state.api,
                user_id=self.state.user_id,
                clock=self.state.clock,
            )
            async with link:
                response = await link.request("mcp", request, timeout_s=30.0, sign=False)
        except CallToolError as exc:
            notes.append(exc.message)
            return None
        except ServiceError as exc:
            notes.append(f"tools/list over Service RPC: {envelope_error(exc)[0]}")
            return None
        except (CallTimeoutError, *CORE_FAILURES) as exc:
            notes.append(f"tools/list over Service RPC: {exc}")
            return None
        result = response.get("result") if isinstance(response, Mapping) else None
        tools = result.get("tools") if isinstance(result, Mapping) else None
        if not isinstance(tools, list):
            notes.append("tools/list over Service RPC gave no tools list")
            return None
        return tools

    # ------------------------------------------------------------------ the action

    async def _checks(
        self, target: CallTarget, arguments: Mapping[str, Any]
    ) -> tuple[Prepare, Mapping[str, Any] | None]:
        """The checks of a new call action; its card builder and its standing approval."""
        prepared = await self._prepare(target, arguments)
        plan = prepared.plan
        standing, revoke = await self._standing(plan.address, prepared.contact)
        subject = _subject(plan)
        params = arguments.get("params")
        params_json = dumps(params) if params is not None else None

        def build(n: int) -> tuple[Card, str, str]:
            card = call_card(
                n,
                subject,
                address=plan.address,
                verified=plan.simplex_name is not None,
                declares=declared_lines(plan),
                protocol=prepared.protocol,
                method=prepared.method,
                transport=prepared.transport,
                params_json=params_json,
            )
            if revoke is not None:
                card = Card(card.want, card.done, card.body, card.commands, card.asked, revoke)
            if (
                max(
                    card_size(card.pending()),
                    card_size(card.outcome(Outcome.FAILED, by="?" * 100, error="\u20ac" * 600)),
                )
                > MAX_CARD_BYTES
            ):
                raise CallToolError(
                    "too_long_for_card", "params: too long for its approval card; shorten it."
                )
            self._ready[n] = prepared
            return (
                card,
                f"call {prepared.protocol} {prepared.method} of {subject.log_phrase()}",
                f"call {subject.phrase(with_simplex_name=False)}",
            )

        return build, standing

    async def _standing(
        self, address: str, contact: ContactRef | None
    ) -> tuple[Mapping[str, Any] | None, str | None]:
        """The standing approval of calls to this bot (``/approve N calls``, or ``/approve
        @C all`` for its contact chat), and what revokes it (``N calls``, ``@C``)."""
        state = self.state
        if state.config.mode is not ApproveMode.REQUESTS:
            return None, None
        entry = standing_call_approval(state.control_data, address)
        if entry is not None:
            approver = entry.get("approvedById")
            if isinstance(approver, int) and approver in state.approver_ids():
                return entry, f"{entry.get('n')} calls"
        if contact is not None:
            info = await self.chats.chat_info(contact)
            approval = state.approval_of(info) if info is not None else None
            if approval is not None:
                return approval, str(contact)
        return None, None

    def bot_of_action(self, n: int) -> tuple[str, str] | None:
        """The address of new call action ``n``'s bot and the card's phrase for it, while
        this run knows them (an action restored from the journal has none)."""
        prepared = self._ready.get(n)
        if prepared is None:
            return None
        plan = prepared.plan
        return plan.address, _subject(plan).phrase()

    async def perform(self, action: Action) -> None:
        """Perform an approved call: send the request, wait for the answer, keep it on the
        action (:attr:`Action.answer`)."""
        prepared = self._ready.pop(action.n, None)
        if prepared is None:  # restored from the journal: resolved again
            target = read_target(str(action.input.get("target", "")))
            prepared = await self._prepare(target, action.input)
        wait_s = float(action.input.get("wait", 60))
        scope = anyio.CancelScope()
        self._scopes[action.n] = scope
        try:
            with scope:
                action.answer = await self._send(action, prepared, wait_s)
        finally:
            self._scopes.pop(action.n, None)
        if scope.cancelled_caught:
            raise ToolError("cancelled by the agent")

    async def _send(self, action: Action, prepared: _Prepared, wait_s: float) -> dict[str, Any]:
        base: dict[str, Any] = {
            "status": "done",
            "bot": bot_of(prepared.plan),
            "protocol": prepared.protocol,
            "method": prepared.method,
        }
        if prepared.notes:
            base["notes"] = list(prepared.notes)
        link = BotLink(
            prepared.plan.address,
            core=self.state.api,
            user_id=self.state.user_id,
            clock=self.state.clock,
            key_store=self.keys,
            connect_wait_s=wait_s,
        )
        async with link:
            if prepared.transport == "rpc":
                try:
                    response = await link.request(
                        prepared.protocol,
                        prepared.built.request,
                        timeout_s=min(wait_s, RPC_WAIT_S),
                        sign=self.keys is not None,
                    )
                    return {
                        **base,
                        "transport": "rpc",
                        "signed": self.keys is not None,
                        "answer": _object(response),
                    }
                except (ConversationRequiredError, TooLargeError) as exc:
                    if prepared.fallback is None:
                        self._fail(action, exc)
                    # RPC-ERR-9, MCP-MSG-7: the same call in a conversation
                    note = f"Service RPC answered {exc.code}; called in a conversation"
                    prepared = replace(
                        prepared,
                        transport="chat",
                        built=prepared.fallback or prepared.built,
                        fallback=None,
                        notes=(*prepared.notes, note),
                    )
                    base["notes"] = list(prepared.notes)
                except ServiceError as exc:
                    self._fail(action, exc)
                except CallTimeoutError:
                    self._failures[action.n] = {"error_code": "timed_out"}
                    raise ToolError(
                        f"timed_out: no answer from {prepared.who} within "
                        f"{min(wait_s, RPC_WAIT_S):g} s"
                    ) from None
            conversation = (
                Conversation(prepared.contact)
                if prepared.contact is not None
                else await link.conversation()
            )
            request = prepared.built.request
            final = (
                functools.partial(is_final, request)
                if prepared.protocol == "mcp"
                else functools.partial(is_final_message, request)
            )
            try:
                result = await link.call(
                    prepared.protocol,
                    request,
                    final=final,
                    wait_s=wait_s,
                    on_reply=functools.partial(self._relay, action),
                    conversation=conversation,
                    raise_on_timeout=False,
                )
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                    if prepared.protocol == "mcp":
                        await link.notify(
                            "mcp",
                            {
                                "jsonrpc": "2.0",
                                "method": "notifications/cancelled",
                                "params": {"requestId": REQUEST_ID, "reason": "cancelled"},
                            },
                        )
                raise
        chat = str(conversation.chat)
        answer = result.answer
        if not result.completed or answer is None or answer.final is None:
            self._failures[action.n] = {"error_code": "timed_out", "chat": chat}
            raise ToolError(
                f"timed_out: no final answer from {prepared.who} within {wait_s:g} s; the bot "
                f"may still answer in {chat} (receive reads it)"
            )
        return {**base, "transport": "chat", "chat": chat, "answer": _object(answer.final)}

    def _fail(self, action: Action, exc: ServiceError) -> NoReturn:
        text, extra = envelope_error(exc)
        self._failures[action.n] = extra
        raise ToolError(text)

    async def _relay(self, action: Action, reply: Reply) -> None:
        """Progress from the bot, to every call waiting on the action (MCP-MSG-3)."""
        progress = progress_of(reply.message) if reply.message is not None else None
        if progress is None:
            return
        total = f"/{progress.total:g}" if progress.total is not None else ""
        text = f"progress {progress.progress:g}{total}"
        if progress.message:
            text += f": {progress.message}"
        for ctx in list(self._waiting.get(action.key, [])):
            await ctx.progress(text)


def _subject(plan: AddressPlan) -> Subject:
    """What a call's card and replies name: ``bot Acme (@acme.simplex)``, or ``agent ...``."""
    return Subject(
        kind=plan.peer_type if plan.peer_type in ("bot", "agent") else "bot",
        name=plan.display_name,
        simplex_name=plan.simplex_name,
    )


def _object(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {"value": value}
