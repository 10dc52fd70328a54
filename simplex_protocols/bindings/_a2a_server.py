"""The bot's side of the A2A binding: an adapter over the ``a2a-sdk`` request handler.

Every request goes through the SDK's own JSON-RPC binding,
``a2a.server.routes.jsonrpc_dispatcher.JsonRpcDispatcher``, fed an in-memory Starlette
request: no server, no socket. The SDK validates JSON-RPC, routes the method, parses the
parameters, runs the agent and maps its errors to A2A's codes. The binding adds only what
SimpleX needs (spec "A2A binding"): service parameters as headers, exact versions, streams
as replies, callers as owners, push notifications refused, one-shot tasks over Service RPC,
and the Agent Card's SimpleX interface.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import secrets
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Final, Self

import anyio
from a2a.auth.user import User
from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.server.agent_execution import (
    AgentExecutor,
    RequestContext,
    SimpleRequestContextBuilder,
)
from a2a.server.context import ServerCallContext
from a2a.server.jsonrpc_models import JSONParseError
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.server.routes.common import ServerCallContextBuilder

# Not exported by a2a.server.routes (a2a-sdk 1.3, the minor release pyproject.toml pins): the
# dispatcher behind the SDK's JSON-RPC route, which the binding feeds in-memory requests.
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types.a2a_pb2 import AgentCard, CancelTaskRequest, SendMessageRequest, Task
from a2a.utils.errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    PushNotificationNotSupportedError,
    TaskNotFoundError,
    VersionNotSupportedError,
)
from google.protobuf.json_format import ParseDict  # type: ignore[import-untyped]
from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.responses import JSONResponse

from simplex_protocols import _wire
from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols.errors import BindingConfigError, SignatureError
from simplex_protocols.transports import Caller, Emit, EnvelopeOutcome

from ._a2a_card import card_credential_names, with_simplex_interface
from ._a2a_identity import IDENTITY_PARAMETER, verify_identity, with_identity_scheme
from ._a2a_store import MAX_ID_CHARS, StoreParts, open_store
from ._a2a_wire import (
    A2A_PROTOCOL,
    DEFAULT_A2A_VERSION,
    STREAMING_METHODS,
    ServiceParameterProblem,
    ends_stream,
    is_final_message,
    is_major_minor,
    service_parameters_of,
    without_service_parameters,
)

__all__ = [
    "CANCEL_GRACE_S",
    "A2ABinding",
    "Authenticate",
    "a2a_caller_of",
    "route_a2a_sdk_logs",
]

_log = logging.getLogger("simplex_protocols.bindings.a2a")

#: The identity credential as the service parameters arrive here (names folded to lower case).
_IDENTITY_HEADER: Final = IDENTITY_PARAMETER.lower()

#: After a one-shot task runs out of its Service RPC budget, how long the binding waits for
#: the agent to cancel it before answering ``conversation_required`` anyway.
CANCEL_GRACE_S: Final = 5.0

#: The JSON-RPC message of the replacement for a reply over the size limit (A2A-MSG-4).
_OVERSIZE_MESSAGE: Final = "The answer is larger than a SimpleX message can carry"

#: ``authenticate(caller, service_parameters)``: the name of the user the credential in the
#: service parameters proves, or ``None``. Never called in a group (AMB-24).
Authenticate = Callable[[Caller, Mapping[str, str]], str | None]

_SCOPE_KEY: Final = "simplex.call"
_STATE_KEY: Final = "simplex.call"
_STATE_CALLER: Final = "simplex_caller"


@dataclass(eq=False)
class _Call:
    """One request on its way through the SDK."""

    caller: Caller
    owner: str
    headers: dict[str, str]
    user_name: str | None = None
    task_id: str | None = None
    context_id: str | None = None
    replaced: bool = False
    extensions: set[str] = field(default_factory=set)


#: The request being answered in this task, so that :meth:`A2ABinding.oversize_error`, which
#: the transport calls from inside ``emit``, can end the stream it interrupts (AMB-31).
_CURRENT_CALL: contextvars.ContextVar[_Call | None] = contextvars.ContextVar(
    "simplex_a2a_call", default=None
)


class _SimplexUser(User):
    """The A2A user of a request: authenticated only by a credential, never by SimpleX."""

    def __init__(self, call: _Call) -> None:
        self._call = call

    @property
    def is_authenticated(self) -> bool:
        return self._call.user_name is not None

    @property
    def user_name(self) -> str:
        return self._call.user_name or ""


def _call_of(context: ServerCallContext) -> _Call | None:
    call = context.state.get(_STATE_KEY)
    return call if isinstance(call, _Call) else None


def a2a_caller_of(context: object) -> Caller | None:
    """:func:`~simplex_protocols.bindings.caller_of` for an A2A context.

    ``context`` is the ``RequestContext`` an ``AgentExecutor`` receives or a
    ``ServerCallContext``; anything else, or a request that did not come through the binding,
    gives ``None``.
    """
    server_context = context.call_context if isinstance(context, RequestContext) else context
    if not isinstance(server_context, ServerCallContext):
        return None
    call = _call_of(server_context)
    return call.caller if call is not None else None


def _owner_of(context: ServerCallContext) -> str:
    """The task store's owner resolver: the caller's owner key, never ``""``.

    A2A-AUTHZ-2: tasks belong to their caller. The SDK's default resolver returns the user
    name, ``""`` for every caller without a credential, which would put everyone's tasks in
    one bucket. Without a SimpleX call the resolver fails closed: nothing is found.
    """
    call = _call_of(context)
    if call is None or not call.owner:
        raise TaskNotFoundError
    return call.owner


class _CallContextBuilder(ServerCallContextBuilder):
    """Builds the SDK's ``ServerCallContext`` from the in-memory request."""

    def __init__(self, versions: Sequence[str]) -> None:
        self._versions = frozenset(versions)
        self._listed = ", ".join(versions)

    def build(self, request: Request) -> ServerCallContext:
        call = request.scope.get(_SCOPE_KEY)
        if not isinstance(call, _Call):
            raise InternalError(message="a request without a SimpleX caller")
        # A2A-SP-4 / AMB-3: versions are checked exactly against the declared Major.Minor
        # values (the SDK alone accepts any 1.x spelling: "1", "1.7", "v1.0"); a request
        # without A2A-Version gets the same error. This runs where the SDK checks the
        # version, after the JSON-RPC and parameter checks, so errors keep the SDK's order.
        version = call.headers.get("a2a-version", "").strip(" \t")
        if version not in self._versions:
            what = (
                f"A2A version {version!r} is not"
                if version
                else "A request without A2A-Version is not"
            )
            raise VersionNotSupportedError(
                message=f"{what} supported: this bot serves A2A {self._listed}"
            )
        return ServerCallContext(
            user=_SimplexUser(call),
            state={
                # The SDK's version check reads state["headers"]["a2a-version"].
                "headers": dict(call.headers),
                _STATE_KEY: call,
                _STATE_CALLER: call.caller,
            },
            requested_extensions=call.extensions,
        )


class _CallerRequestContextBuilder(SimpleRequestContextBuilder):
    """Pins contexts to their callers and refuses push configurations (before the agent runs)."""

    def __init__(self, binding: A2ABinding, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._binding = binding

    async def build(
        self,
        context: ServerCallContext,
        params: SendMessageRequest | None = None,
        task_id: str | None = None,
        context_id: str | None = None,
        task: Task | None = None,
    ) -> RequestContext:
        call = _call_of(context)
        if call is None:
            raise TaskNotFoundError
        if params is not None and params.configuration.HasField("task_push_notification_config"):
            # A2A-PUSH-1: "push notification configurations are not used".
            raise PushNotificationNotSupportedError(
                message="Push notifications are not supported: the conversation delivers every update"
            )
        pins = self._binding._store.pins
        if context_id:
            if len(context_id) > MAX_ID_CHARS:
                raise InvalidParamsError(
                    message=f"contextId is longer than {MAX_ID_CHARS} characters"
                )
            # A2A-AUTHZ-2: "A request that names the context or the task of another caller is
            # answered as a request for an unknown task."
            if await pins.claim(context_id, call.owner) != call.owner:
                raise TaskNotFoundError
        built = await super().build(context, params, task_id, context_id, task)
        if built.context_id and not context_id:
            await pins.claim(built.context_id, call.owner)
        call.task_id = built.task_id
        call.context_id = built.context_id
        return built


def _request_id(request: Mapping[str, Any]) -> str | int | None:
    rid = request.get("id")
    if isinstance(rid, bool) or not isinstance(rid, str | int):
        return None
    return rid


def _error(request_id: str | int | None, error: A2AError) -> dict[str, Any]:
    return build_error_response(request_id, error)


def _is_jsonrpc_request(request: Mapping[str, Any]) -> bool:
    method = request.get("method")
    rid = request.get("id")
    return (
        request.get("jsonrpc") == "2.0"
        and isinstance(method, str)
        and bool(method)
        and (rid is None or (isinstance(rid, str | int) and not isinstance(rid, bool)))
        and isinstance(request.get("params", {}), Mapping)
    )


def _work_ended(response: Mapping[str, Any]) -> bool:
    """Whether a SendMessage response is final: an error, a message, or a task whose state is
    terminal or interrupted (A2A-RPC-2: "the task in its state at the end of the work")."""
    result = response.get("result")
    if not isinstance(result, Mapping) or "message" in result:
        return True
    return ends_stream({"result": {"task": result.get("task")}})


def _is_notification(request: Mapping[str, Any]) -> bool:
    return isinstance(request.get("method"), str) and "id" not in request


class _SDKLogRouter(logging.Handler):
    """Forwards the ``a2a`` logger's records to the bot's logger, client errors demoted.

    The SDK logs every client error at WARNING or ERROR, and bad parameters with a full
    traceback; a peer could fill the bot's log with them. Those records go to DEBUG, without
    the traceback; everything else keeps its level.
    """

    _CLIENT_NOISE: Final = (
        "Failed to parse request params",
        "Failed to validate base JSON-RPC request",
        "Version mismatch",
        "Validation failure",  # a capability the card does not declare (streaming, push)
    )

    def __init__(self, target: logging.Logger) -> None:
        super().__init__(logging.NOTSET)
        self.target = target

    def _is_client_error(self, record: logging.LogRecord) -> bool:
        text = str(record.msg)
        if text.startswith(self._CLIENT_NOISE):
            return True
        if text.startswith("Request Error") and isinstance(record.args, tuple):
            code = record.args[1] if len(record.args) > 1 else None
            return code != -32603
        return False

    def emit(self, record: logging.LogRecord) -> None:
        if self._is_client_error(record):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            record.exc_info, record.exc_text = None, None
        if self.target.isEnabledFor(record.levelno):
            self.target.handle(record)


_ROUTER: _SDKLogRouter | None = None


def route_a2a_sdk_logs(target: logging.Logger | None = None) -> None:
    """Send the ``a2a-sdk``'s log records to ``target``, with client errors at DEBUG.

    ``A2ABinding`` calls it when it is built. The ``a2a`` logger stops propagating to the root
    logger; its records reach ``target`` (default ``simplex_protocols.bindings.a2a.sdk``), and
    so the bot's own logging configuration. Calling it again only changes the target.
    """
    global _ROUTER
    target = target if target is not None else _log.getChild("sdk")
    sdk_logger = logging.getLogger("a2a")
    if _ROUTER is None:
        _ROUTER = _SDKLogRouter(target)
        sdk_logger.addHandler(_ROUTER)
        sdk_logger.propagate = False
    else:
        _ROUTER.target = target


class A2ABinding:
    """Serves an agent built with ``a2a-sdk`` over the SimpleX transports (spec "A2A binding").

    The bot's agent is an ``AgentExecutor``; the binding owns the SDK's request handler, its
    task store and the context pins, and answers each request through the SDK's JSON-RPC
    dispatcher. It implements :class:`~simplex_protocols.bindings.Binding`.

    Example::

        binding = A2ABinding(MyExecutor(), card, database="bot-tasks.db",
                             address="https://simplex.chat/a#...")
        async with binding:
            ...  # the transports call handle_chat / handle_rpc

    Args:
        agent_executor: the agent.
        agent_card: the agent's public card. The binding serves a copy with the SimpleX
            interface (when ``address`` is known), ``capabilities.pushNotifications`` false and
            ``capabilities.extendedAgentCard`` true (it answers GetExtendedAgentCard).
        versions: the A2A versions served, Major.Minor, in order of preference; the values
            of the ``a2a`` protocol declaration. The SDK speaks A2A 1.x.
        address: the bot's contact address link, for the card's SimpleX interface; can be
            set later with :meth:`set_address`.
        database: where tasks and context pins are kept: a SQLite file path, or a database
            URL (``postgresql://...`` needs ``simplex-protocols[postgresql]``). ``None``
            keeps them in memory: they are lost when the bot stops.
        extended_card: the card for callers whose credential ``authenticate`` accepted; the
            others get the public card (A2A-CARD-2).
        authenticate: checks a credential service parameter (A2A-AUTHZ-3); see
            :data:`Authenticate`. Without it, no caller is authenticated.
        history_length: when set, the ``historyLength`` applied to SendMessage,
            SendStreamingMessage, GetTask and ListTasks requests that do not set it (a task's
            history holds every status message of the agent, and answers have a size limit).
        interrupted_task_timeout_s: how long a task waiting for input or authorization keeps
            its agent state in memory; a later message reloads it from the task store (the
            SDK's ``interrupted_task_timeout``). ``None`` keeps it until the bot stops.
        populate_referred_tasks: pass the caller's own tasks named in
            ``referenceTaskIds`` to the agent (``RequestContext.related_tasks``).
        clock: the clock of the Service RPC budget (tests pass a ``ManualClock``).
        sdk_logger: where the SDK's log records go (:func:`route_a2a_sdk_logs`).
        owner_scope: a name of this bot, unique among the bots that share ``database``: tasks
            and context pins are kept as the scope's, so two bots on one database keep their
            callers apart (a caller key such as ``chat:@17`` is only this bot's contact 17).
            ``ResponderBot`` sets one when given a ``task_database``.
        service_scope: the name of the service when this bot is one of its replicas (with a
            shared ``database`` and an ``owner_scope`` of its own): tasks and contexts of
            callers who prove a key (``identities``) are kept under it, so that every replica
            finds them; those of contacts and members stay under ``owner_scope``, since
            contact 17 of one replica is another person than contact 17 of the next.
        identities: accept the ``SimpleX-Identity`` credential (the card then declares it as
            an optional API-key scheme, A2A-AUTHZ-3): a caller in a direct conversation who
            proves an Ed25519 key for the request is that key, and owns its tasks and
            contexts as the key, in every conversation and at every replica of the service
            that shares the task database and the owner scope (docs/bindings-a2a.md,
            "Identities"). Callers without it are served as before.

    Raises:
        BindingConfigError: ``bad_version`` (a version not Major.Minor, not 1.x, or none),
            ``bad_address``, ``bad_database_url``, ``driver_missing``, ``bad_setting``.
    """

    def __init__(
        self,
        agent_executor: AgentExecutor,
        agent_card: AgentCard,
        *,
        versions: Sequence[str] = (DEFAULT_A2A_VERSION,),
        address: str | None = None,
        database: str | os.PathLike[str] | None = None,
        extended_card: AgentCard | None = None,
        authenticate: Authenticate | None = None,
        history_length: int | None = None,
        interrupted_task_timeout_s: float | None = 600.0,
        populate_referred_tasks: bool = False,
        clock: Clock | None = None,
        sdk_logger: logging.Logger | None = None,
        owner_scope: str | None = None,
        service_scope: str | None = None,
        identities: bool = False,
    ) -> None:
        versions = tuple(versions)
        if not versions:
            raise BindingConfigError(
                "an A2A binding serves at least one version", code="bad_version"
            )
        for version in versions:
            # A2A-ID-3: versions are A2A versions in the Major.Minor form.
            if not is_major_minor(version) or version.split(".")[0] != "1":
                raise BindingConfigError(
                    f"A2A versions are 1.x written Major.Minor (the a2a-sdk serves A2A 1.x), not {version!r}",
                    code="bad_version",
                )
        if history_length is not None and history_length < 0:
            raise BindingConfigError("history_length cannot be negative", code="bad_setting")
        if interrupted_task_timeout_s is not None and interrupted_task_timeout_s <= 0:
            raise BindingConfigError(
                "interrupted_task_timeout_s must be positive", code="bad_setting"
            )
        route_a2a_sdk_logs(sdk_logger)
        self._versions = versions
        self._base_card = agent_card
        self._extended_card = extended_card
        self._address: str | None = None
        self._other_addresses: tuple[str, ...] = ()
        self._served_card = agent_card
        self._authenticate = authenticate
        self._history_length = history_length
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._identities = identities
        self._credential_names = card_credential_names(agent_card) | card_credential_names(
            extended_card
        )
        if identities:
            # A credential like any other: never taken from a group (AMB-24, reading A).
            self._credential_names |= {_IDENTITY_HEADER}
        self.set_address(address)
        self._store: StoreParts = open_store(
            database, _owner_of, owner_scope=owner_scope, service_scope=service_scope
        )
        self._executor = agent_executor
        self._populate_referred_tasks = populate_referred_tasks
        self._interrupted_task_timeout_s = interrupted_task_timeout_s
        # Built on first use, so that an address set before then is on the card the SDK checks.
        self._handler: DefaultRequestHandler | None = None
        self._dispatcher: JsonRpcDispatcher | None = None
        self._opened = False
        self._closed = False
        self._open_lock = anyio.Lock()

    # ------------------------------------------------------------------ Binding: identity

    @property
    def name(self) -> str:
        """``a2a``."""
        return A2A_PROTOCOL

    @property
    def versions(self) -> tuple[str, ...]:
        """The A2A versions served, Major.Minor, as declared in ``protocols``."""
        return self._versions

    @property
    def agent_card(self) -> AgentCard:
        """The public card this bot serves (with the SimpleX interface once the address is set)."""
        return self._served_card

    @property
    def address(self) -> str | None:
        """The contact address link of the card's SimpleX interface, when set."""
        return self._address

    @property
    def database_url(self) -> str | None:
        """The SQLAlchemy URL of the task database, or ``None`` for tasks in memory."""
        return self._store.url

    @property
    def request_handler(self) -> DefaultRequestHandler:
        """The SDK's request handler (for what the binding does not wrap)."""
        return self._sdk()[0]

    def _sdk(self) -> tuple[DefaultRequestHandler, JsonRpcDispatcher]:
        if self._handler is None or self._dispatcher is None:
            store = self._store.task_store
            self._handler = DefaultRequestHandler(
                agent_executor=self._executor,
                task_store=store,
                agent_card=self._served_card,
                request_context_builder=_CallerRequestContextBuilder(
                    self,
                    should_populate_referred_tasks=self._populate_referred_tasks,
                    task_store=store if self._populate_referred_tasks else None,
                ),
                extended_agent_card=self._served_card,
                extended_card_modifier=self._card_for,
                interrupted_task_timeout=self._interrupted_task_timeout_s,
            )
            self._dispatcher = JsonRpcDispatcher(
                self._handler, context_builder=_CallContextBuilder(self._versions)
            )
        return self._handler, self._dispatcher

    def set_address(self, address: str | None, others: Sequence[str] = ()) -> None:
        """Set the contact address link listed in the card's SimpleX interface (A2A-ID-2).

        Args:
            address: this bot's address: the first SimpleX interfaces of the card.
            others: the addresses of the other replicas of the same service (see
                ``service_scope``), listed after it, in this order; ``address`` among them is
                skipped.

        Raises:
            BindingConfigError: ``bad_address`` for an empty link.
        """
        card = AgentCard()
        card.CopyFrom(self._base_card)
        card.capabilities.push_notifications = False  # A2A-PUSH-1
        card.capabilities.extended_agent_card = True  # A2A-CARD-2: GetExtendedAgentCard answers
        kept = tuple(dict.fromkeys(o for o in others if o != address)) if address else ()
        card = self._with_interfaces(card, address, kept)
        self._address = address
        self._other_addresses = kept
        self._served_card = card
        handler = getattr(self, "_handler", None)
        if handler is not None:
            handler.extended_agent_card = card

    def _with_interfaces(
        self, card: AgentCard, address: str | None, others: Sequence[str]
    ) -> AgentCard:
        if address is not None:
            for link in (address, *others):
                card = with_simplex_interface(card, link, self._versions)
        if self._identities:
            card = with_identity_scheme(card)
        return card

    async def _card_for(self, card: AgentCard, context: ServerCallContext) -> AgentCard:
        # A2A-CARD-2: "For a caller without credentials, it is the public card."
        call = _call_of(context)
        if call is not None and call.user_name is not None and self._extended_card is not None:
            extended = AgentCard()
            extended.CopyFrom(self._extended_card)
            extended.capabilities.push_notifications = False
            extended.capabilities.extended_agent_card = True
            return self._with_interfaces(extended, self._address, self._other_addresses)
        return self._served_card

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Create the database tables when missing. Called by the first request if needed."""
        async with self._open_lock:
            if self._closed:
                raise BindingConfigError("the A2A binding is closed", code="closed")
            if not self._opened:
                self._sdk()
                await self._store.initialize()
                self._opened = True

    async def aclose(self) -> None:
        """Stop the agent's running tasks and release the database. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._handler is not None:
                await self._handler.aclose()
        finally:
            await self._store.aclose()

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ requests

    def _prepare(
        self, request: Any, caller: Caller, owner: str
    ) -> tuple[dict[str, Any], _Call] | dict[str, Any]:
        """The request without its service parameters, and its call; or an error response."""
        if not isinstance(request, Mapping):
            return _error(None, InvalidRequestError(message="An A2A request is a JSON object"))
        rid = _request_id(request)
        try:
            headers = service_parameters_of(request)
        except ServiceParameterProblem as exc:
            return _error(rid, InvalidRequestError(message=str(exc)))
        if not owner:
            _log.error("an A2A request arrived without a caller key; refused")
            return _error(rid, InternalError(message="Internal error"))
        user_name: str | None = None
        if caller.in_group:
            # AMB-24 (reading A): a credential received in a group is not used; the request
            # is answered as for a caller without one.
            headers = {k: v for k, v in headers.items() if k not in self._credential_names}
        else:
            if self._identities and _IDENTITY_HEADER in headers:
                proved = self._identity_owner(request, headers.pop(_IDENTITY_HEADER))
                if isinstance(proved, SignatureError):
                    return _error(
                        rid,
                        InvalidRequestError(
                            message=f"The SimpleX-Identity credential is refused: {proved}",
                            data={"code": proved.code},
                        ),
                    )
                owner = proved
            if self._authenticate is not None and any(k in headers for k in self._credential_names):
                user_name = self._authenticate(caller, dict(headers))
        call = _Call(
            caller=caller,
            owner=owner,
            headers=headers,
            user_name=user_name,
            extensions=get_requested_extensions(
                [headers[HTTP_EXTENSION_HEADER.lower()]]
                if HTTP_EXTENSION_HEADER.lower() in headers
                else []
            ),
        )
        body = without_service_parameters(request)  # A2A-SP-5
        if self._history_length is not None:
            body = self._with_history_length(body)
        try:
            _wire.dumps(body)
        except (TypeError, ValueError):
            return _error(rid, InvalidRequestError(message="The request is not JSON"))
        return body, call

    def _identity_owner(self, request: Mapping[str, Any], credential: str) -> str | SignatureError:
        """The owner a valid ``SimpleX-Identity`` proves, or why it is refused.

        The service it must name is the Agent Card's ``name``: every replica of a service
        serves one card, and another service's card differs, so a credential made for one
        service is refused by another.
        """
        try:
            identity = verify_identity(
                credential,
                service=self._base_card.name,
                request=request,
                now=self._clock.wall(),
            )
        except SignatureError as exc:
            _log.info("a SimpleX-Identity credential was refused (%s)", exc.code)
            return exc
        return identity.owner

    def _with_history_length(self, body: dict[str, Any]) -> dict[str, Any]:
        params = body.get("params")
        method = body.get("method")
        if not isinstance(params, Mapping):
            return body
        params = dict(params)
        if method in ("SendMessage", "SendStreamingMessage"):
            config = params.get("configuration", {})
            if not isinstance(config, Mapping):
                return body
            if "historyLength" not in config and "history_length" not in config:
                params["configuration"] = {**config, "historyLength": self._history_length}
        elif method in ("GetTask", "ListTasks"):
            if "historyLength" not in params and "history_length" not in params:
                params["historyLength"] = self._history_length
        else:
            return body
        return {**body, "params": params}

    async def _dispatch(
        self, body: dict[str, Any], call: _Call
    ) -> dict[str, Any] | AsyncGenerator[dict[str, Any], None]:
        """One request through the SDK's JSON-RPC dispatcher, in memory."""
        raw = _wire.dumps(body).encode()
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}

        headers = [(b"content-type", b"application/json")]
        # A2A-SP-5: what a proxy to an HTTP interface does: each parameter becomes a header.
        headers += [(k.encode(), v.encode()) for k, v in call.headers.items()]
        scope: dict[str, Any] = {
            "type": "http",
            "method": "POST",
            "path": "/",
            "headers": headers,
            "query_string": b"",
            _SCOPE_KEY: call,
        }
        response = await self._sdk()[1].handle_requests(Request(scope, receive))
        if isinstance(response, EventSourceResponse):
            return self._stream(response.body_iterator)
        if isinstance(response, JSONResponse):
            return self._scrub(json.loads(bytes(response.body)))
        _log.error("the a2a-sdk answered with %s", type(response).__name__)
        return _error(_request_id(body), InternalError(message="Internal error"))

    async def _stream(self, events: Any) -> AsyncGenerator[dict[str, Any], None]:
        """The SDK's SSE events as JSON-RPC responses, closing the SDK's generator early."""
        async with aclosing(events) as iterator:
            async for event in iterator:
                data = event.get("data") if isinstance(event, Mapping) else None
                if not isinstance(data, str):
                    continue
                yield self._scrub(json.loads(data))

    @staticmethod
    def _scrub(message: dict[str, Any]) -> dict[str, Any]:
        """Keep the text of an unhandled exception out of the answer.

        The SDK answers an exception it did not expect (an agent's bug, a database failure)
        with -32603 and the exception's text as the message. A2A's own errors carry ``data``;
        these do not, and get a plain message instead (the SDK has logged the exception).
        """
        error = message.get("error")
        if isinstance(error, dict) and error.get("code") == -32603 and "data" not in error:
            message = {**message, "error": {"code": -32603, "message": "Internal error"}}
        return message

    # ------------------------------------------------------------------ Binding: chat

    async def handle_chat(self, request: Mapping[str, Any], caller: Caller, emit: Emit) -> None:
        """Answer ``/_call a2a <request>`` in a conversation (the transport's ``emit`` sends).

        One reply for every method but the streaming ones (A2A-MSG-3); for
        SendStreamingMessage and SubscribeToTask one reply per StreamResponse, in stream
        order, the last one in a terminal or interrupted state (A2A-STR-1..4). A stream item
        that the transport replaces with :meth:`oversize_error` ends the stream (AMB-31).
        A JSON-RPC notification (no ``id``) is served with no reply (AMB-30, reading A).
        Never raises for a bad request.
        """
        await self.open()
        prepared = self._prepare(request, caller, caller.key)
        if isinstance(prepared, dict):
            if not (isinstance(request, Mapping) and _is_notification(request)):
                await emit(prepared)
            return
        body, call = prepared
        silent = _is_notification(body)
        token = _CURRENT_CALL.set(call)
        try:
            answer = await self._dispatch(body, call)
            if isinstance(answer, dict):
                if not silent:
                    await emit(answer)
                return
            async with aclosing(answer) as items:
                async for item in items:
                    if not silent:
                        await emit(item)
                    # A2A-STR-4: "The stream ends with the reply whose task or status update
                    # is in a terminal state ... or an interrupted state"; nothing after it.
                    if call.replaced or ends_stream(item):
                        break
        finally:
            _CURRENT_CALL.reset(token)

    # ------------------------------------------------------------------ Binding: Service RPC

    async def handle_rpc(
        self, request: Any, caller: Caller, *, budget_s: float
    ) -> dict[str, Any] | EnvelopeOutcome:
        """Answer a Service RPC ``request`` (spec "A2A binding" > "Service RPC").

        - SendMessage whose message has neither contextId nor taskId and whose
          ``configuration.returnImmediately`` is absent or false is served (A2A-RPC-1): the
          answer is the task in its state at the end of the work, or a message (A2A-RPC-2).
          Such a task belongs to no caller (AMB-23): no later request reaches it.
        - A task not finished within ``budget_s`` is cancelled and answered
          ``conversation_required`` (A2A-RPC-3).
        - Every other request, GetExtendedAgentCard, the push notification methods and the
          streaming methods included, is answered ``conversation_required`` (A2A-RPC-4,
          A2A-STR-6; AMB-2, reading B: the section serves the one-shot SendMessage alone and
          names no exception); so is a notification (AMB-30).
        - A request that is not a JSON-RPC request gets the JSON-RPC error (AMB-28, A).
        """
        await self.open()
        if not isinstance(request, Mapping):
            return _error(None, InvalidRequestError(message="An A2A request is a JSON object"))
        if _is_notification(request):
            return EnvelopeOutcome("conversation_required", "a notification has no response")
        if not _is_jsonrpc_request(request):
            return _error(
                _request_id(request),
                InvalidRequestError(message="Not a JSON-RPC 2.0 request with a method and an id"),
            )
        method = request["method"]
        if method == "SendMessage":
            if not self._is_one_shot(request):
                return EnvelopeOutcome(
                    "conversation_required",
                    "only a one-shot SendMessage (no contextId, taskId or returnImmediately) "
                    "is served over Service RPC",
                )
            owner = f"rpc-oneshot:{secrets.token_hex(16)}"
            return await self._one_shot(request, caller, owner, budget_s)
        what = "a streaming method" if method in STREAMING_METHODS else f"{method}"
        return EnvelopeOutcome("conversation_required", f"{what} needs a conversation")

    @staticmethod
    def _is_one_shot(request: Mapping[str, Any]) -> bool:
        params = request.get("params", {})
        parsed = SendMessageRequest()
        try:
            ParseDict(params, parsed, ignore_unknown_fields=True)
        except Exception:
            # Not a valid SendMessage: the SDK answers -32602, and no work is done.
            return True
        return not (
            parsed.message.context_id
            or parsed.message.task_id
            or parsed.configuration.return_immediately
        )

    async def _one_shot(
        self, request: Mapping[str, Any], caller: Caller, owner: str, budget_s: float
    ) -> dict[str, Any] | EnvelopeOutcome:
        prepared = self._prepare(request, caller, owner)
        if isinstance(prepared, dict):
            return prepared
        body, call = prepared
        answer: dict[str, Any] | None = None
        timed_out = False
        async with anyio.create_task_group() as tg:

            async def deadline() -> None:
                nonlocal timed_out
                await self._clock.sleep(budget_s)
                timed_out = True
                tg.cancel_scope.cancel()

            tg.start_soon(deadline)
            result = await self._dispatch(body, call)
            if isinstance(result, dict):
                answer = result
            else:  # SendMessage is never streamed; close defensively
                await result.aclose()
            tg.cancel_scope.cancel()
        # The SDK may swallow the cancellation and answer with the task as it stands, still
        # working: only an answer whose work has ended counts once the budget is spent.
        if answer is not None and (not timed_out or _work_ended(answer)):
            return answer
        # A2A-RPC-3: "A bot that cannot finish the task within 180 seconds answers with the
        # envelope error conversation_required." The task is cancelled: nobody could reach it.
        await self._cancel_abandoned(call)
        return EnvelopeOutcome(
            "conversation_required", "the task takes longer than Service RPC allows"
        )

    async def _cancel_abandoned(self, call: _Call) -> None:
        if not call.task_id:
            return
        context = ServerCallContext(
            user=_SimplexUser(call),
            state={"headers": dict(call.headers), _STATE_KEY: call, _STATE_CALLER: call.caller},
        )
        async with anyio.create_task_group() as tg:

            async def grace() -> None:
                await self._clock.sleep(CANCEL_GRACE_S)
                _log.warning("the agent did not cancel task %s in time", call.task_id)
                tg.cancel_scope.cancel()

            tg.start_soon(grace)
            try:
                await self.request_handler.on_cancel_task(
                    CancelTaskRequest(id=call.task_id), context
                )
            except A2AError as exc:
                # Not stored yet, or finished meanwhile: nothing left to cancel.
                _log.debug("cancelling one-shot task %s: %r", call.task_id, exc)
            except Exception:
                _log.exception("cancelling one-shot task %s failed", call.task_id)
            tg.cancel_scope.cancel()

    # ------------------------------------------------------------------ Binding: errors

    def parse_error(self, raw_request: str, reason: str) -> dict[str, Any]:
        """The answer to a request text that is not JSON (-32700) or not an object (-32600).

        Both with ``"id": null``, as JSON-RPC answers a request whose id cannot be read.
        """
        try:
            _wire.loads(raw_request)
        except ValueError:
            # The SDK's own JSON-RPC parse error, as its dispatcher answers bad JSON.
            return build_error_response(
                None, JSONParseError(message=f"Parse error: {reason[:200]}")
            )
        return _error(None, InvalidRequestError(message=f"Invalid request: {reason[:200]}"))

    def oversize_error(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """The replacement for a reply over the size limit: JSON-RPC -32603, same ``id``.

        A2A-MSG-4. When the transport calls it from inside ``emit`` for a stream item, the
        stream ends with this reply (AMB-31, reading C). The error has no ``data``, so that it
        stays small.
        """
        call = _CURRENT_CALL.get()
        if call is not None:
            call.replaced = True
        return {
            "jsonrpc": "2.0",
            "id": _request_id(message),
            "error": {"code": -32603, "message": _OVERSIZE_MESSAGE},
        }

    def internal_error(
        self, request: Mapping[str, Any] | None, reason: str
    ) -> dict[str, Any] | None:
        """The answer to a call the bot could not finish: the executor failed, or the bot is
        shutting down while the call (a stream, perhaps) runs.

        The SDK's ``InternalError`` (JSON-RPC -32603) with the request's ``id`` (``null`` when
        it is not a string or an integer) and ``reason`` (at most 200 characters; the
        transport's words, never an exception's) as its message; as the last reply it ends the
        answer, a stream included (a JSON-RPC error is final). ``None`` for a notification,
        which is never
        answered (AMB-30), and for a request that could not be read (answered by
        :meth:`parse_error`).
        """
        if not isinstance(request, Mapping) or "id" not in request:
            return None
        return _error(_request_id(request), InternalError(message=reason[:200] or "Internal error"))

    def is_final(self, request: Mapping[str, Any], message: Mapping[str, Any]) -> bool:
        """Whether ``message`` ends the answer to ``request``: see :func:`is_final_message`."""
        return is_final_message(request, message)
