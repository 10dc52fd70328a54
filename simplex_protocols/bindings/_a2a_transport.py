"""The ``a2a-sdk`` client over SimpleX: :class:`SimplexA2ATransport`.

A client transport of the SDK for an Agent Card's SimpleX interface (``protocolBinding``
:data:`~simplex_protocols.bindings.a2a.A2A_BINDING_URI`): register
:func:`simplex_transport_producer` with the SDK's ``ClientFactory`` and its ``Client`` sends
messages, streams tasks and gets tasks of a SimpleX agent. Each call is one JSON-RPC request of
A2A's JSON-RPC binding, built and read by the caller-side helpers of this package.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from a2a.client.transports.base import ClientTransport
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols.core import ChatAPI, ChatCore, GroupRef
from simplex_protocols.errors import (
    CallFormatError,
    ConversationRequiredError,
    JSONRPCResponseError,
)
from simplex_protocols.rpc import KeyStore, SigningKey

from ._a2a_client import _parse, build_a2a_request, read_result, read_stream_item, read_task
from ._a2a_identity import add_identity
from ._a2a_wire import DEFAULT_A2A_VERSION, is_final_message
from ._simplex_client import DEFAULT_CONNECT_WAIT_S, BotLink, TransportChoice

if TYPE_CHECKING:
    from a2a.client.client import ClientCallContext, ClientConfig
    from a2a.types.a2a_pb2 import (
        AgentCard,
        CancelTaskRequest,
        DeleteTaskPushNotificationConfigRequest,
        GetExtendedAgentCardRequest,
        GetTaskPushNotificationConfigRequest,
        GetTaskRequest,
        ListTaskPushNotificationConfigsRequest,
        ListTaskPushNotificationConfigsResponse,
        ListTasksRequest,
        ListTasksResponse,
        SendMessageRequest,
        SendMessageResponse,
        StreamResponse,
        SubscribeToTaskRequest,
        Task,
        TaskPushNotificationConfig,
    )

__all__ = ["SimplexA2ATransport", "simplex_transport_producer"]


def _one_shot(request: SendMessageRequest) -> bool:
    # A2A-RPC-1: Service RPC serves a SendMessage without contextId and taskId, and without
    # returnImmediately; everything else needs a conversation (A2A-RPC-4).
    return not (
        request.message.context_id
        or request.message.task_id
        or request.configuration.return_immediately
    )


class SimplexA2ATransport(ClientTransport):
    """A client transport of the ``a2a-sdk`` that reaches an agent over SimpleX.

    Args:
        card: the agent's card.
        url: the ``url`` of its SimpleX interface: the bot's contact address link.
        core: an entered ``ChatCore`` (or ``ChatAPI``) with an active user; it stays open
            when the client closes.
        transport: ``"auto"``: a one-shot SendMessage over Service RPC (A2A-RPC-1), in a
            conversation when the bot answers ``conversation_required``, and every other
            method in a conversation (A2A-RPC-4, A2A-STR-1); ``"rpc"`` or ``"chat"`` only.
        version: the ``A2A-Version`` service parameter of each request (A2A-SP-3).
        sign: sign Service RPC requests with the agent's own key from ``key_store``.
        key_store: where signing keys live.
        timeout_s: how long each call may take (default 30 s).
        clock: the clock of the waits.
        connect_wait_s: how long a new conversation may take to be accepted.
        identity_key: prove this Ed25519 key in every request sent in the conversation (the
            ``SimpleX-Identity`` credential, for a bot whose card declares it): the bot then
            knows the caller as the key, so its tasks can be read and cancelled in another
            conversation, at another replica of the service. Use one key per service (by its
            card's ``name``), as for signing. Never sent in a group (A2A-AUTHZ-4): a bot
            reached in a business chat raises ``CallFormatError`` (``credential_in_group``).

    An error answer of the agent is raised as
    :class:`~simplex_protocols.errors.JSONRPCResponseError` (``.jsonrpc_code``: -32001 task not
    found ...); a refused or lost call as the toolkit's typed errors (``ServiceError``
    subclasses, ``CallTimeoutError``, ``CoreConnectionError``), each with its ``code``. Stream
    items are yielded once the stream has ended in the conversation.

    Raises:
        LinkError: ``url`` is no SimpleX link or name.
        ValueError: ``core`` is a string (open the core and pass it), or ``transport`` is
            not ``auto``, ``rpc`` or ``chat``.
    """

    def __init__(
        self,
        card: AgentCard,
        url: str,
        *,
        core: ChatCore | ChatAPI,
        transport: TransportChoice = "auto",
        version: str = DEFAULT_A2A_VERSION,
        sign: bool = False,
        key_store: KeyStore | None = None,
        timeout_s: float | None = None,
        clock: Clock | None = None,
        connect_wait_s: float = DEFAULT_CONNECT_WAIT_S,
        identity_key: SigningKey | None = None,
    ) -> None:
        if isinstance(core, str):
            raise ValueError("the A2A transport takes an entered ChatCore, not a --core string")
        if transport not in ("auto", "rpc", "chat"):
            raise ValueError(f"transport is auto, rpc or chat, not {transport!r}")
        self.card = card
        self.transport: TransportChoice = transport
        self.version = version
        self.sign = sign
        self.timeout_s = timeout_s
        self.identity_key = identity_key
        self._clock: Clock = clock if clock is not None else SystemClock()
        self.link = BotLink(
            url, core=core, clock=self._clock, key_store=key_store, connect_wait_s=connect_wait_s
        )
        self._entered = False

    async def _ready(self) -> BotLink:
        if not self._entered:
            await self.link.__aenter__()  # a given core: nothing to open, the user is read
            self._entered = True
        return self.link

    def _request(self, method: str, params: Any) -> dict[str, Any]:
        body = MessageToDict(params) if not isinstance(params, Mapping) else dict(params)
        return build_a2a_request(method, body, request_id=str(uuid.uuid4()), version=self.version)

    async def _in_conversation(self, request: dict[str, Any]) -> list[Mapping[str, Any]]:
        link = await self._ready()
        if self.identity_key is not None:
            conversation = await link.conversation()
            if isinstance(conversation.chat, GroupRef):
                # A2A-AUTHZ-4: a caller never sends a request that carries a credential in
                # a group; a business chat is one.
                raise CallFormatError(
                    "the bot is reached in a business chat, a group: an identity is never "
                    "sent there",
                    code="credential_in_group",
                    requirement="A2A-AUTHZ-4",
                )
            request = add_identity(
                request, self.identity_key, self.card.name, int(self._clock.wall())
            )
        result = await link.call(
            "a2a",
            request,
            final=lambda message: is_final_message(request, message),
            wait_s=self.timeout_s,
        )
        answer = result.answer
        return list(answer.messages) if answer is not None else []

    async def _call(self, method: str, params: Any, *, one_shot: bool = False) -> Mapping[str, Any]:
        request = self._request(method, params)
        if self.transport == "rpc" or (self.transport == "auto" and one_shot):
            link = await self._ready()
            try:
                response = await link.request(
                    "a2a", request, timeout_s=self.timeout_s, sign=self.sign
                )
            except ConversationRequiredError:
                if self.transport != "auto":
                    raise
            else:
                if not isinstance(response, Mapping):
                    raise JSONRPCResponseError({"error": {"message": "not a JSON-RPC object"}})
                return response
        return (await self._in_conversation(request))[-1]

    async def _stream(self, method: str, params: Any) -> AsyncGenerator[StreamResponse]:
        # A2A-STR-1: the streaming methods are served in conversations.
        for message in await self._in_conversation(self._request(method, params)):
            yield read_stream_item(message)

    def _read(self, response: Mapping[str, Any], message: Any, what: str) -> Any:
        return _parse(read_result(response), message, what)

    async def send_message(
        self, request: SendMessageRequest, *, context: ClientCallContext | None = None
    ) -> SendMessageResponse:
        """SendMessage (over Service RPC when it is one-shot and ``transport`` allows)."""
        from a2a.types.a2a_pb2 import SendMessageResponse

        response = await self._call("SendMessage", request, one_shot=_one_shot(request))
        parsed: SendMessageResponse = self._read(response, SendMessageResponse(), "result")
        return parsed

    async def send_message_streaming(
        self, request: SendMessageRequest, *, context: ClientCallContext | None = None
    ) -> AsyncGenerator[StreamResponse]:
        """SendStreamingMessage, in the conversation."""
        async for item in self._stream("SendStreamingMessage", request):
            yield item

    async def subscribe(
        self, request: SubscribeToTaskRequest, *, context: ClientCallContext | None = None
    ) -> AsyncGenerator[StreamResponse]:
        """SubscribeToTask, in the conversation (A2A-STR-5)."""
        async for item in self._stream("SubscribeToTask", request):
            yield item

    async def get_task(
        self, request: GetTaskRequest, *, context: ClientCallContext | None = None
    ) -> Task:
        """GetTask, in the conversation that owns the task (A2A-AUTHZ-2)."""
        return read_task(await self._call("GetTask", request))

    async def cancel_task(
        self, request: CancelTaskRequest, *, context: ClientCallContext | None = None
    ) -> Task:
        """CancelTask, in the conversation."""
        return read_task(await self._call("CancelTask", request))

    async def list_tasks(
        self, request: ListTasksRequest, *, context: ClientCallContext | None = None
    ) -> ListTasksResponse:
        """ListTasks, in the conversation."""
        from a2a.types.a2a_pb2 import ListTasksResponse

        parsed: ListTasksResponse = self._read(
            await self._call("ListTasks", request), ListTasksResponse(), "task list"
        )
        return parsed

    async def get_extended_agent_card(
        self, request: GetExtendedAgentCardRequest, *, context: ClientCallContext | None = None
    ) -> AgentCard:
        """GetExtendedAgentCard: the public card for a caller without credentials."""
        from a2a.types.a2a_pb2 import AgentCard

        parsed: AgentCard = self._read(
            await self._call("GetExtendedAgentCard", request), AgentCard(), "agent card"
        )
        return parsed

    async def create_task_push_notification_config(
        self, request: TaskPushNotificationConfig, *, context: ClientCallContext | None = None
    ) -> TaskPushNotificationConfig:
        """Asked as the SDK asks; the bot answers PushNotificationNotSupported (A2A-PUSH-1)."""
        from a2a.types.a2a_pb2 import TaskPushNotificationConfig

        parsed: TaskPushNotificationConfig = self._read(
            await self._call("CreateTaskPushNotificationConfig", request),
            TaskPushNotificationConfig(),
            "config",
        )
        return parsed

    async def get_task_push_notification_config(
        self,
        request: GetTaskPushNotificationConfigRequest,
        *,
        context: ClientCallContext | None = None,
    ) -> TaskPushNotificationConfig:
        """See :meth:`create_task_push_notification_config`."""
        from a2a.types.a2a_pb2 import TaskPushNotificationConfig

        parsed: TaskPushNotificationConfig = self._read(
            await self._call("GetTaskPushNotificationConfig", request),
            TaskPushNotificationConfig(),
            "config",
        )
        return parsed

    async def list_task_push_notification_configs(
        self,
        request: ListTaskPushNotificationConfigsRequest,
        *,
        context: ClientCallContext | None = None,
    ) -> ListTaskPushNotificationConfigsResponse:
        """See :meth:`create_task_push_notification_config`."""
        from a2a.types.a2a_pb2 import ListTaskPushNotificationConfigsResponse

        parsed: ListTaskPushNotificationConfigsResponse = self._read(
            await self._call("ListTaskPushNotificationConfigs", request),
            ListTaskPushNotificationConfigsResponse(),
            "config list",
        )
        return parsed

    async def delete_task_push_notification_config(
        self,
        request: DeleteTaskPushNotificationConfigRequest,
        *,
        context: ClientCallContext | None = None,
    ) -> None:
        """See :meth:`create_task_push_notification_config`."""
        read_result(await self._call("DeleteTaskPushNotificationConfig", request))

    async def close(self) -> None:
        """Leave the core as it was given (it is not closed)."""
        if self._entered:
            self._entered = False
            await self.link.__aexit__(None, None, None)


def simplex_transport_producer(
    *, core: ChatCore | ChatAPI, **options: Any
) -> Callable[[AgentCard, str, ClientConfig], ClientTransport]:
    """A transport producer for the SDK's ``ClientFactory``, for the SimpleX interface.

    Example::

        config = ClientConfig(supported_protocol_bindings=[A2A_BINDING_URI], streaming=True)
        factory = ClientFactory(config)
        factory.register(A2A_BINDING_URI, simplex_transport_producer(core=core))
        client = factory.create(card)

    Args:
        core: an entered ``ChatCore`` (or ``ChatAPI``) with an active user.
        options: the keyword arguments of :class:`SimplexA2ATransport`.
    """

    def produce(card: AgentCard, url: str, config: ClientConfig) -> ClientTransport:
        return SimplexA2ATransport(card, url, core=core, **options)

    return produce
