"""ResponderBot: an MCP server and/or an A2A agent served over SimpleX, in a few lines."""

from __future__ import annotations

import functools
import gc
import inspect
import logging
import os
import secrets
import signal
import sys
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio
import anyio.abc

from simplex_protocols._clock import Clock, SystemClock
from simplex_protocols._groups import first_error
from simplex_protocols.bindings import Binding
from simplex_protocols.core import (
    Capability,
    CapabilityStatus,
    ChatAPI,
    ChatCore,
    CoreBackend,
    CoreCapabilities,
    CoreOption,
    open_core,
    parse_core_option,
    probe_core,
)
from simplex_protocols.declarations import (
    PeerType,
    ProtocolDeclaration,
    ProtocolDeclarations,
    check_commands,
)
from simplex_protocols.errors import BotConfigError, CoreError, SimplexError

from ._logging import BOT_LOGGER, ContentLoggingBinding, log_call_record
from ._setup import (
    AddressSetup,
    ProfileSpec,
    plan_address_settings,
    set_group_invitations,
    set_up_address,
    set_up_user,
    start_core,
    update_business_chats,
    update_profile,
)
from ._state import DataFolder, default_data_folder

if TYPE_CHECKING:
    from a2a.server.agent_execution import AgentExecutor
    from a2a.types.a2a_pb2 import AgentCard
    from fastmcp import FastMCP
    from mcp.server.lowlevel import Server
    from mcp.server.mcpserver import MCPServer

    from simplex_protocols.bindings.a2a import A2ABinding
    from simplex_protocols.bindings.mcp import MCPBinding
    from simplex_protocols.transports import CallRecord, RateLimit

    from ._shared_state import Replica, ReplicaPresence, SharedRateCounter, SharedState

__all__ = ["DEFAULT_SERVES", "CoreSpec", "OnReady", "ResponderBot", "configure_bot_logging"]

logger = logging.getLogger(BOT_LOGGER)

#: Where the bot connects: an entered or unentered :class:`ChatCore`, a backend (for example
#: ``SimNetwork.backend("acme")``), a parsed ``--core`` option, a ``--core`` string
#: (``ws://127.0.0.1:5225``, ``lib:PREFIX``, ``sim:NAME``), or ``None`` for ``SIMPLEX_CORE``
#: (else ``lib`` with the database in the bot's data folder).
CoreSpec = ChatCore | CoreBackend | CoreOption | str | None

#: Called once the bot serves: a function of the bot, or a coroutine function run beside it.
OnReady = Callable[["ResponderBot"], Awaitable[None] | None]

#: The peer types the bot's address serves by default (``serves`` in its link data): agents.
DEFAULT_SERVES: Final = ("agent",)

#: The file name of the chat database (``--core lib``) and of the task database in the data
#: folder.
_LIB_DB_PREFIX: Final = "simplex"
_A2A_DATABASE: Final = "a2a.sqlite"
_MCP_SECRET: Final = "mcp-request-state.secret"
#: This bot's name among the bots that share a ``task_database`` (see A2ABinding owner_scope);
#: also its name among the replicas of its service.
_A2A_OWNER_SCOPE: Final = "a2a-owner-scope"
#: The A2A owner scope of a service's replicas: ``service:NAME``.
_SERVICE_SCOPE_PREFIX: Final = "service:"

#: ``shortDescr``: "short description limited to 160 characters" (simplex-chat Types.hs).
_MAX_DESCRIPTION_CHARS: Final = 160

_TRANSPORTS: Final = frozenset({"chat", "rpc"})

#: What the bot does instead, for each capability it uses that a core may lack.
_FALLBACKS: Final = {
    Capability.SERVICE_REQUESTS: "answering in conversations only (no Service RPC responder); "
    "the declaration says rpc: false",
    Capability.ADDRESS_PQ_RATCHET: "the address is made without ratchet keys, so it takes no "
    "Service RPC requests",
    Capability.SHORT_LINKS: "the address has no short link: its full link is published, and "
    "callers cannot read its link data before connecting",
    Capability.PROTOCOLS_PREFERENCE: "callers find no protocols declaration in the profile or "
    "the link data: publish the address with its protocols in llms.txt "
    "(bot.communications_entry()) or in the Agent Card (bot.agent_card_json())",
    Capability.ADDRESS_SERVES: "the link data does not say which peers the address serves "
    "(callers read the default, people); llms.txt can say it (bot.communications_entry())",
    Capability.BUSINESS_ADDRESSES: "the address is made an ordinary contact address",
    Capability.GROUP_INVITATIONS: "group invitations are not accepted by themselves "
    "(join_groups has no effect)",
}


def _default_mcp_versions() -> tuple[str, ...]:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    # Newest first: ``versions`` is in the bot's order of preference (DECL-PROTO-4).
    return tuple(reversed(MODERN_PROTOCOL_VERSIONS))


class ResponderBot:
    """Serve an MCP server and/or an A2A agent over SimpleX, on both transports.

    One object does what a bot needs: it creates or reuses its SimpleX profile (peer type
    ``bot`` or ``agent``), writes the ``protocols`` declaration of what it serves, creates or
    reuses its contact address (ratchet keys, link data with ``serves``, auto-accept), starts
    the core with service requests on, answers ``/_call`` in conversations and Service RPC
    requests through the MCP and A2A bindings, logs each call, and stops gracefully.

    Example::

        from mcp.server.mcpserver import MCPServer
        from simplex_protocols.bot import ResponderBot

        tools = MCPServer("acme")

        @tools.tool()
        def availability(item: str) -> str:
            return f"12 {item}s are in stock."

        ResponderBot(display_name="Acme", mcp=tools).run(core="ws://127.0.0.1:5225")

    Args:
        display_name: the profile's display name (also the name callers mention in groups).
        mcp: an MCP server built with the ``mcp`` SDK (``MCPServer`` or lowlevel ``Server``)
            or with ``fastmcp`` 4.x (``FastMCP``, extra ``simplex-protocols[fastmcp]``), or an
            :class:`~simplex_protocols.bindings.mcp.MCPBinding` configured by hand (its
            ``requestState`` keys are then its own).
        a2a: an ``a2a-sdk`` ``AgentExecutor``, or an
            :class:`~simplex_protocols.bindings.a2a.A2ABinding` configured by hand (its task
            database is then its own).
        agent_card: the A2A agent's public card (name, description, version, skills, input
            and output modes). The bot adds the SimpleX interface with its address (A2A-ID-2).
            Default: a card named after the profile.
        peer_type: ``"bot"`` or ``"agent"``.
        description: the profile's short description (at most 160 characters).
        full_name: the profile's full name.
        commands: the command menu for people (``preferences.commands``); ``None`` keeps the
            profile's menu. ``/_call`` is never listed there (DECL-PROTO-11).
        transports: the transports served and declared: ``"chat"`` (``/_call`` in
            conversations) and/or ``"rpc"`` (Service RPC), for every protocol.
        mcp_versions: the MCP revisions served and declared, in order of preference
            (default: every revision from 2026-07-28 on that the SDK serves, newest first).
        a2a_versions: the A2A versions served and declared, Major.Minor (default ``1.0``).
        serves: the peer types the address is made for (``serves`` in its link data;
            DECL-SERVES-1); ``None`` leaves it out (which reads as ``["human"]``).
        business: make the address a business address.
        welcome: the welcome message of the address (sent on connection, shown in the link
            data).
        join_groups: accept group invitations automatically (the core's auto-accept
            setting), so that the bot answers ``/_call`` in the groups it is added to.
        data_dir: the bot's private data folder (mode 0700): its settings, the MCP
            ``requestState`` secret, the A2A task database and context pins, and with
            ``--core lib`` the chat database. Default:
            ``$XDG_STATE_HOME/simplex-bot/<display name>``.
        task_database: where A2A tasks are kept instead of the SQLite file in the data folder:
            a database URL (``postgresql://...``) or a file path.
        service: the name of the service this bot is one replica of (lower-case letters,
            digits, ``.``, ``_``, ``-``): every process started with the same ``service`` and
            the same PostgreSQL ``task_database`` shares the MCP ``requestState`` key, the
            Service RPC rate limits, and the A2A tasks of callers who prove a key
            (``SimpleX-Identity``, accepted then), and lists every live replica's address in
            its Agent Card and :meth:`communications_entries` (docs/bot.md, "Running more than
            one process"). Each replica has its own data folder, chat core and address.
        rate_limit: the Service RPC limit per signer key (default: the transport's).
        anonymous_rate_limit: the Service RPC limit for all unsigned requests together.
        shutdown_grace_s: how long calls in flight may go on when the bot stops; calls still
            running then are cut short and answered with their error.
        max_concurrent_calls: how many calls each transport answers at once (others wait for
            a slot); default: the transports' (32 in conversations, 64 over Service RPC). Each
            transport's event subscription then holds twice as many events (at least 1,000),
            so that a burst of that many calls is not lost before it is read.
        gc_freeze: once the bot is set up, before it takes calls, collect the garbage and
            freeze every object the process then holds (``gc.freeze()``), until the bot
            stops. Many calls in flight set off the collector's full collections, which would
            otherwise walk every object of the SDKs, the bindings and the core client each
            time; frozen, those are skipped (docs/bot.md, "Many calls at once"). It is
            process-wide: a cycle among the frozen objects is no longer freed, so leave it off
            when other work in the process counts on the collector for what it made first.
        log_contents: also log the contents of requests and answers, under
            ``simplex_protocols.bot.contents`` (for debugging: they are the callers' data).
        on_call: called with each call's ``CallRecord`` (after it is logged).
        clock: the bot's clock (tests pass a ``ManualClock``).

    Raises:
        BotConfigError: nothing to serve (``nothing_served``), a peer type other than bot or
            agent (``bad_peer_type``), an unknown or empty transport set
            (``bad_transports``), a description over 160 characters (``bad_description``),
            ``serves`` not a list of peer types (``bad_serves``), a command menu that lists
            ``/_call`` (``bad_commands``), an ``agent_card`` without ``a2a``
            (``bad_setting``), a ``service`` without a PostgreSQL ``task_database`` or with a
            name that is not a service name (``bad_setting``).
        BindingConfigError: ``mcp`` is a server of a kind the MCP binding does not serve
            (``unsupported_server``; the message names the kinds it serves).
    """

    def __init__(
        self,
        *,
        display_name: str,
        mcp: MCPServer[Any] | Server[Any] | FastMCP[Any] | MCPBinding | None = None,
        a2a: AgentExecutor | A2ABinding | None = None,
        agent_card: AgentCard | None = None,
        peer_type: Literal["bot", "agent"] = "bot",
        description: str | None = None,
        full_name: str = "",
        commands: Sequence[Mapping[str, Any]] | None = None,
        transports: Collection[str] = ("chat", "rpc"),
        mcp_versions: Sequence[str] | None = None,
        a2a_versions: Sequence[str] | None = None,
        serves: Sequence[str] | None = DEFAULT_SERVES,
        business: bool = False,
        welcome: str | None = None,
        join_groups: bool = False,
        data_dir: str | os.PathLike[str] | None = None,
        task_database: str | os.PathLike[str] | None = None,
        service: str | None = None,
        rate_limit: RateLimit | None = None,
        anonymous_rate_limit: RateLimit | None = None,
        shutdown_grace_s: float = 10.0,
        max_concurrent_calls: int | None = None,
        gc_freeze: bool = False,
        log_contents: bool = False,
        on_call: Callable[[CallRecord], None] | None = None,
        clock: Clock | None = None,
    ) -> None:
        if mcp is None and a2a is None:
            raise BotConfigError(
                "give an MCP server (mcp=...) or an A2A agent (a2a=...), or both",
                code="nothing_served",
                argument="mcp",
            )
        if mcp is not None and not isinstance(mcp, Binding):
            # Refused here, not when the bot starts: a server of a kind the MCP binding cannot
            # serve (BindingConfigError naming the kinds it serves).
            from simplex_protocols.bindings._mcp_fastmcp import check_server_kind

            check_server_kind(mcp)
        if agent_card is not None and a2a is None:
            raise BotConfigError(
                "an Agent Card goes with an A2A agent (a2a=...)",
                code="bad_setting",
                argument="agent_card",
            )
        if not isinstance(display_name, str) or not display_name.strip():
            raise BotConfigError(
                "the display name is empty", code="bad_setting", argument="display_name"
            )
        if peer_type not in (PeerType.BOT, PeerType.AGENT):
            raise BotConfigError(
                f"the peer type is bot or agent, not {peer_type!r}",
                code="bad_peer_type",
                argument="peer_type",
            )
        if description is not None and len(description) > _MAX_DESCRIPTION_CHARS:
            raise BotConfigError(
                f"the description has {len(description)} characters; "
                f"a profile's short description has at most {_MAX_DESCRIPTION_CHARS}",
                code="bad_description",
                argument="description",
            )
        chosen = frozenset(transports) if not isinstance(transports, str) else frozenset()
        if not chosen or not chosen <= _TRANSPORTS:
            raise BotConfigError(
                f"transports are 'chat' and/or 'rpc', not {sorted(chosen) or transports!r}",
                code="bad_transports",
                argument="transports",
            )
        if serves is not None and (
            isinstance(serves, str) or not all(isinstance(s, str) and s for s in serves)
        ):
            raise BotConfigError(
                "serves is a list of peer types (human, bot, business, agent)",
                code="bad_serves",
                argument="serves",
            )
        menu = tuple(dict(c) for c in commands) if commands is not None else None
        if menu is not None and check_commands({"commands": list(menu)}):
            # DECL-PROTO-11: /_call is a command for software, not for the menu.
            raise BotConfigError(
                "the command menu is for people; /_call is never listed in it",
                code="bad_commands",
                argument="commands",
            )
        if max_concurrent_calls is not None and (
            isinstance(max_concurrent_calls, bool)
            or not isinstance(max_concurrent_calls, int)
            or max_concurrent_calls < 1
        ):
            raise BotConfigError(
                "max_concurrent_calls is a whole number of at least 1",
                code="bad_setting",
                argument="max_concurrent_calls",
            )
        if shutdown_grace_s < 0:
            raise BotConfigError(
                "shutdown_grace_s cannot be negative",
                code="bad_setting",
                argument="shutdown_grace_s",
            )
        self.display_name = display_name
        self._mcp = mcp
        self._a2a = a2a
        self._agent_card = agent_card
        self._profile = ProfileSpec(
            display_name=display_name,
            peer_type=str(peer_type),
            description=description,
            full_name=full_name,
            commands=menu,
        )
        self._transports = chosen
        self._serves = tuple(serves) if serves is not None else None
        self._business = business
        self._welcome = welcome
        self._join_groups = bool(join_groups)
        self._data = DataFolder(
            data_dir if data_dir is not None else default_data_folder(display_name)
        )
        self._task_database = task_database
        self._rate_limit = rate_limit
        self._anonymous_rate_limit = anonymous_rate_limit
        self._shutdown_grace_s = shutdown_grace_s
        self._concurrency: dict[str, Any] = {}
        if max_concurrent_calls is not None:
            self._concurrency["max_concurrency"] = max_concurrent_calls
        self._gc_freeze = bool(gc_freeze)
        self._log_contents = log_contents
        self._on_call = on_call
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._shared: SharedState | None = None
        if service is not None:
            self._shared = _shared_state(service, task_database, self._clock)
        self._rate_counter: SharedRateCounter | None = None
        self._presence: ReplicaPresence | None = None
        self._replicas: tuple[Replica, ...] = ()
        self._wanted = ProtocolDeclarations(
            tuple(
                ProtocolDeclaration(name, versions, chat="chat" in chosen, rpc="rpc" in chosen)
                for name, versions in self._served_versions(mcp_versions, a2a_versions)
            )
        )
        # What the bot declares and serves: as asked, until a core lacks a transport.
        self._declarations = self._wanted
        self._capabilities: CoreCapabilities | None = None
        self._address: AddressSetup | None = None
        self._user_id: int | None = None
        self._a2a_binding: A2ABinding | None = None
        self._running = False
        # Made by serve(): anyio events need a running event loop.
        self._stop: anyio.Event | None = None
        self._finished: anyio.Event | None = None
        self._stopping = False
        self._grace_s = shutdown_grace_s
        self._responders: list[Any] = []

    def _served_versions(
        self, mcp_versions: Sequence[str] | None, a2a_versions: Sequence[str] | None
    ) -> list[tuple[str, tuple[str, ...]]]:
        served: list[tuple[str, tuple[str, ...]]] = []
        if self._mcp is not None:
            if isinstance(self._mcp, Binding):
                served.append(("mcp", tuple(self._mcp.versions)))
            else:
                versions = tuple(mcp_versions) if mcp_versions is not None else None
                served.append(("mcp", versions or _default_mcp_versions()))
        if self._a2a is not None:
            if isinstance(self._a2a, Binding):
                served.append(("a2a", tuple(self._a2a.versions)))
            else:
                from simplex_protocols.bindings.a2a import DEFAULT_A2A_VERSION

                versions = tuple(a2a_versions) if a2a_versions is not None else None
                served.append(("a2a", versions or (DEFAULT_A2A_VERSION,)))
        return served

    # ------------------------------------------------------------------ what the bot is

    @property
    def declarations(self) -> ProtocolDeclarations:
        """The ``protocols`` declaration the bot writes into its profile's preferences: what it
        serves. On a core without Service RPC responses (``service-requests``) it is the
        conversation only, whatever ``transports`` asked for."""
        return self._declarations

    @property
    def capabilities(self) -> CoreCapabilities:
        """What the bot found of its chat core when it started: the core's version and the
        capabilities the bot uses (``.missing``, ``.has(...)``, ``.to_json()``; see
        :func:`simplex_protocols.core.probe_core`).

        Raises:
            BotConfigError: ``not_running``: the bot has not started on a core yet.
        """
        if self._capabilities is None:
            raise BotConfigError(
                "the core's capabilities are known once the bot has started",
                code="not_running",
                argument="capabilities",
            )
        return self._capabilities

    def communications_entry(self, info: str = "") -> str:
        """The bot's address as an item of an llms.txt ``## Communications`` section, with the
        protocols it serves: where a website declares them when the core drops the profile's
        ``protocols`` preference (and says which peers it serves when it drops ``serves``).

        Example: ``- [Acme](https://smp.example/a#...): SimpleX contact for agents, MCP. Stock``.

        Raises:
            BotConfigError: ``not_running``: the address is known once the bot is serving.
        """
        return self._entry(self.display_name, self.address, info)

    def communications_entries(self, info: str = "") -> list[str]:
        """:meth:`communications_entry` for every live replica of the bot's service, this one
        first, each with its own address and display name: the items a website lists so that
        callers can reach any of them. Without ``service``, this bot's entry alone.

        Raises:
            BotConfigError: ``not_running``: the addresses are known once the bot is serving.
        """
        own = self.communications_entry(info)
        others = [self._entry(r.display_name, r.address, info) for r in self._replicas[1:]]
        return [own, *others]

    def _entry(self, title: str, url: str, info: str) -> str:
        from simplex_protocols.llmstxt import (
            SIMPLEX_NETWORK,
            AddressType,
            Audience,
            CommunicationsEntry,
            render_communications_entry,
        )

        audience = Audience.from_peer_types(self._serves or ("human",)) or Audience.AGENTS
        entry = CommunicationsEntry(
            title=title,
            url=url,
            network=SIMPLEX_NETWORK,
            type=AddressType.BUSINESS_CONTACT if self._business else AddressType.CONTACT,
            audience=audience,
            protocols=tuple(name.upper() for name in self._declarations),
            info=info,
        )
        return render_communications_entry(entry)

    @property
    def replicas(self) -> tuple[Replica, ...]:
        """The live replicas of the bot's service as last read from the shared database, this
        one first (empty without ``service``, or before the bot serves)."""
        return self._replicas

    @property
    def data_dir(self) -> Path:
        """The bot's data folder."""
        return self._data.path

    @property
    def running(self) -> bool:
        """Whether the bot is serving (its address is known and calls are answered)."""
        return self._running

    @property
    def address(self) -> str:
        """The bot's contact address link (its short link when it has one).

        Raises:
            BotConfigError: ``not_running``: the bot has not set up its address yet.
        """
        if self._address is None:
            raise BotConfigError(
                "the address is known once the bot is serving",
                code="not_running",
                argument="address",
            )
        return self._address.link

    @property
    def user_id(self) -> int:
        """The chat core's user ID the bot runs as.

        Raises:
            BotConfigError: ``not_running``.
        """
        if self._user_id is None:
            raise BotConfigError(
                "the user is known once the bot is serving", code="not_running", argument="user_id"
            )
        return self._user_id

    @property
    def agent_card(self) -> AgentCard:
        """The A2A Agent Card the bot serves, with its SimpleX interface (A2A-ID-2).

        Raises:
            BotConfigError: the bot serves no A2A agent (``bad_setting``), or is not serving
                yet (``not_running``).
        """
        if self._a2a is None:
            raise BotConfigError("the bot serves no A2A agent", code="bad_setting", argument="a2a")
        if self._a2a_binding is None or self._address is None:
            raise BotConfigError(
                "the card lists the address, known once the bot is serving",
                code="not_running",
                argument="agent_card",
            )
        return self._a2a_binding.agent_card

    def agent_card_json(self) -> dict[str, Any]:
        """The Agent Card as JSON, to publish at a website's ``/.well-known/agent-card.json``.

        Raises:
            BotConfigError: as :attr:`agent_card`.
        """
        from simplex_protocols.bindings.a2a import agent_card_json

        return agent_card_json(self.agent_card)

    def __repr__(self) -> str:
        served = ", ".join(self._declarations)
        return (
            f"ResponderBot({self.display_name!r}, serves {served}, data in {str(self.data_dir)!r})"
        )

    # ------------------------------------------------------------------ serving

    async def serve(
        self,
        core: CoreSpec = None,
        *,
        task_status: anyio.abc.TaskStatus[ResponderBot] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Set up the profile and address, then answer calls until :meth:`shutdown`.

        Use ``await task_group.start(bot.serve, core)``: it returns once the bot is serving
        (the address is known). Cancelling the task cuts every call in flight short; each is
        answered with its error.

        Args:
            core: where the chat core is (see :data:`CoreSpec`). A :class:`ChatCore` that is
                already entered is used as it is and left open; anything else is opened here
                and closed at the end.

        Raises:
            BotConfigError: the bot is serving already.
            DataFolderError: the data folder is unsafe or in use by another process.
            CoreConnectionError: the core cannot be reached, or the connection was lost.
            CoreError: the core refused a setup command (for example an invalid display name).
            KeyFileError: the MCP secret file is unsafe or malformed.
            BindingConfigError: a binding setting cannot be used (a bad task database URL).
        """
        if self._finished is not None and not self._finished.is_set():
            raise BotConfigError("the bot is serving already", code="bad_setting", argument="core")
        finished = self._finished = anyio.Event()
        self._stop = anyio.Event()
        self._stopping = False
        self._grace_s = self._shutdown_grace_s
        try:
            self._data.open()
        except BaseException:
            finished.set()
            raise
        try:
            async with AsyncExitStack() as stack:
                chat_core = await stack.enter_async_context(self._entered_core(core))
                await self._serve_on(chat_core, stack, task_status)
        except BaseExceptionGroup as group:
            raise first_error(group) from None
        finally:
            self._running = False
            self._responders = []
            self._a2a_binding = None
            self._data.close()
            finished.set()
            logger.info("%s stopped", self.display_name)

    @asynccontextmanager
    async def _entered_core(self, core: CoreSpec) -> AsyncIterator[ChatCore]:
        if isinstance(core, ChatCore):
            if core.connected:
                yield core
            else:
                async with core:
                    yield core
            return
        if isinstance(core, CoreBackend) and not isinstance(core, str | CoreOption):
            async with ChatCore(core) as opened:
                yield opened
            return
        option = parse_core_option(core, source="--core") if isinstance(core, str) else core
        async with open_core(option, db_prefix=str(self._data.file(_LIB_DB_PREFIX))) as opened:
            yield opened

    async def _open_bindings(
        self, stack: AsyncExitStack, known_address: str | None
    ) -> list[Binding]:
        bindings: list[Binding] = []
        versions = {name: decl.versions for name, decl in self._declarations.items()}
        # A task database given by URL may be shared by several bots; the SQLite file in the
        # data folder is this bot's alone. The scope also names the bot among its replicas.
        scope = (
            _owner_scope(self._data.file(_A2A_OWNER_SCOPE))
            if self._task_database is not None
            else None
        )
        shared_secret: bytes | None = None
        if self._shared is not None:
            assert scope is not None  # a service needs a task database
            shared_secret = await self._open_shared_state(stack, scope)
        if self._mcp is not None:
            from simplex_protocols.bindings.mcp import MCPBinding, load_or_create_secret

            if isinstance(self._mcp, MCPBinding):
                mcp_binding = self._mcp
            else:
                # MCP-MSG-6: a requestState sealed before a restart is still accepted after it.
                secret = load_or_create_secret(self._data.file(_MCP_SECRET))
                # A replica seals with the service's key, so that the state continues at any
                # replica; its own key still opens what it sealed before it joined.
                keys = [secret] if shared_secret is None else [shared_secret, secret]
                mcp_binding = MCPBinding(
                    self._mcp,
                    versions=versions["mcp"],
                    request_state_keys=keys,
                    clock=self._clock,
                )
            bindings.append(await stack.enter_async_context(mcp_binding))
        if self._a2a is not None:
            from simplex_protocols.bindings.a2a import A2ABinding

            if isinstance(self._a2a, A2ABinding):
                a2a_binding = self._a2a
            else:
                # The card lists the address from the last start until this start has set it
                # up; on a first start it has none for a moment, which the SDK would log as a
                # card without interfaces.
                with _quiet_missing_interfaces():
                    a2a_binding = A2ABinding(
                        self._a2a,
                        self._agent_card if self._agent_card is not None else self._default_card(),
                        versions=versions["a2a"],
                        address=known_address,
                        database=(
                            self._task_database
                            if self._task_database is not None
                            else self._data.file(_A2A_DATABASE)
                        ),
                        clock=self._clock,
                        owner_scope=scope,
                        # Replicas share the tasks of callers who prove a key, and only those.
                        service_scope=(
                            _SERVICE_SCOPE_PREFIX + self._shared.service
                            if self._shared is not None
                            else None
                        ),
                        identities=self._shared is not None,
                    )
            with _quiet_missing_interfaces():
                self._a2a_binding = await stack.enter_async_context(a2a_binding)
            bindings.append(self._a2a_binding)
        if self._log_contents:
            logger.warning(
                "%s logs the contents of requests and answers (log_contents=True)",
                self.display_name,
            )
            return [ContentLoggingBinding(b) for b in bindings]
        return bindings

    async def _open_shared_state(self, stack: AsyncExitStack, replica: str) -> bytes:
        """Connect to the service's shared state; return its ``requestState`` key."""
        from simplex_protocols.bindings._a2a_store import database_unavailable

        from ._shared_state import ReplicaPresence

        shared = self._shared
        assert shared is not None
        try:
            await shared.open()
            stack.push_async_callback(shared.close)
            secret = await shared.request_state_secret()
        except Exception as exc:
            with anyio.CancelScope(shield=True):
                await shared.close()
            raise database_unavailable(
                f"the shared state of service {shared.service} at", shared.url, exc
            ) from exc
        self._rate_counter = shared.rate_counter()
        self._presence = ReplicaPresence(
            shared,
            replica,
            self.display_name,
            self._replicas_changed,
            counter=self._rate_counter,
        )
        return secret

    def _replicas_changed(self, replicas: list[Replica]) -> None:
        self._replicas = tuple(replicas)
        if self._a2a_binding is not None and self._address is not None:
            self._a2a_binding.set_address(
                self._address.link, others=[r.address for r in replicas[1:]]
            )
        logger.info(
            "%s: %d replica%s of service %s: %s",
            self.display_name,
            len(replicas),
            "" if len(replicas) == 1 else "s",
            self._shared.service if self._shared is not None else "",
            ", ".join(r.display_name for r in replicas),
        )

    def _default_card(self) -> AgentCard:
        from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard

        return AgentCard(
            name=self.display_name,
            description=self._profile.description or self.display_name,
            version="1.0.0",
            capabilities=AgentCapabilities(streaming=True),
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
        )

    def _record(self, record: CallRecord) -> None:
        log_call_record(self.display_name, record)
        if self._on_call is not None:
            try:
                self._on_call(record)
            except Exception:
                logger.exception("the on_call hook failed")

    async def _serve_on(
        self,
        core: ChatCore,
        stack: AsyncExitStack,
        task_status: anyio.abc.TaskStatus[ResponderBot],
    ) -> None:
        from simplex_protocols.transports import ChatResponder, ServiceRPCResponder

        api = ChatAPI(core)
        settings = self._data.load_settings()
        saved_user = settings.get("userId")
        # What the core parses, before anything is set up with it (these probes run nothing).
        used = self._capabilities_used()
        parsed = await probe_core(api, [c for c in used if c not in _READ_BACK])
        self._declarations = self._degraded(parsed)
        known = settings.get("address")
        # The bindings open first: a task database that cannot be used stops the bot before
        # it touches its profile (BindingConfigError, one line and exit 1 from run()).
        bindings = await self._open_bindings(stack, known if isinstance(known, str) else None)
        user, _ = await set_up_user(
            api,
            self._profile,
            self._declarations,
            user_id=saved_user if isinstance(saved_user, int) else None,
        )
        self._user_id = user_id = int(user["userId"])
        chat_protocols = self._declarations.protocols_for("chat")
        rpc_protocols = self._declarations.protocols_for("rpc")
        responders: list[Any] = []
        if chat_protocols:
            responders.append(
                ChatResponder(
                    core,
                    bindings,
                    protocols=chat_protocols,
                    # The profile may be renamed below, after the responder learnt the old name.
                    names=[self.display_name],
                    user_id=user_id,
                    clock=self._clock,
                    shutdown_grace_s=self._shutdown_grace_s,
                    on_call=self._record,
                    **self._concurrency,
                )
            )
        if rpc_protocols:
            options: dict[str, Any] = dict(self._concurrency)
            if self._rate_limit is not None:
                options["rate_limit"] = self._rate_limit
            if self._anonymous_rate_limit is not None:
                options["anonymous_rate_limit"] = self._anonymous_rate_limit
            if self._rate_counter is not None:
                # A caller's limit is the service's, not multiplied by the replicas.
                options["rate_counter"] = self._rate_counter
            responders.append(
                ServiceRPCResponder(
                    core,
                    bindings,
                    protocols=rpc_protocols,
                    user_id=user_id,
                    clock=self._clock,
                    shutdown_grace_s=self._shutdown_grace_s,
                    on_call=self._record,
                    **options,
                )
            )
        self._responders = responders
        async with anyio.create_task_group() as tg:
            # Subscribed before the core starts: calls queued while the bot was away arrive
            # right after /_start and must not be missed.
            for responder in responders:
                await tg.start(responder.serve)
            await start_core(api, service_requests=bool(rpc_protocols))
            user, updated = await update_profile(api, user, self._profile, self._declarations)
            if updated:
                # DECL-PROTO-16: the business chats made before declare what the bot serves now.
                await update_business_chats(api, user)
            await self._set_group_invitations(api, user)
            address = await set_up_address(
                api,
                user_id,
                plan_address_settings(
                    business=self._business and not _lacks(parsed, Capability.BUSINESS_ADDRESSES),
                    welcome=self._welcome,
                    serves=self._serves,
                ),
                ratchet_keys=not _lacks(parsed, Capability.ADDRESS_PQ_RATCHET),
                short_links=not _lacks(parsed, Capability.SHORT_LINKS),
            )
            self._address = address
            # What the core kept of the profile and the address settings just written.
            self._capabilities = caps = await probe_core(
                api,
                used,
                user_id=user_id,
                written_profile=_mapping(user.get("profile")),
                written_address_settings=(
                    address.kept_settings if self._serves is not None else None
                ),
            )
            for capability in caps.missing:
                found = caps.result(capability)
                logger.warning(
                    "%s: the chat core lacks %s (%s): %s",
                    self.display_name,
                    capability,
                    found.evidence,
                    _FALLBACKS.get(capability, capability.affects),
                )
            presence = self._presence
            if presence is not None:
                # Its first reading of the replicas sets the card's addresses, this one first.
                await presence.join(address.link)
            elif self._a2a_binding is not None:
                self._a2a_binding.set_address(address.link)
            self._data.save_settings(
                {
                    "userId": user_id,
                    "displayName": self.display_name,
                    "address": address.link,
                    "protocols": {
                        name: {"versions": list(d.versions), "chat": d.chat, "rpc": d.rpc}
                        for name, d in self._declarations.items()
                    },
                }
            )
            if self._gc_freeze:
                stack.callback(_freeze_heap())
            self._running = True
            logger.info(
                "%s serves %s over %s at %s",
                self.display_name,
                ", ".join(self._declarations) or "nothing",
                " and ".join(self._served_transports()),
                address.link,
            )
            heartbeats = anyio.CancelScope()
            if presence is not None:
                tg.start_soon(_in_scope, heartbeats, presence.run)
            task_status.started(self)
            assert self._stop is not None
            await self._stop.wait()
            self._running = False
            logger.info("%s is stopping", self.display_name)
            heartbeats.cancel()
            async with anyio.create_task_group() as stopping:
                if presence is not None:
                    # Callers are sent to the other replicas from now on.
                    stopping.start_soon(presence.leave)
                for responder in responders:
                    stopping.start_soon(responder.shutdown, self._grace_s)

    def _capabilities_used(self) -> list[Capability]:
        """The capabilities of the core this bot's set-up and transports use."""
        used = [Capability.SHORT_LINKS, Capability.PROTOCOLS_PREFERENCE]
        if "rpc" in self._transports:
            used += [Capability.SERVICE_REQUESTS, Capability.ADDRESS_PQ_RATCHET]
        if self._serves is not None:
            used.append(Capability.ADDRESS_SERVES)
        if self._business:
            used.append(Capability.BUSINESS_ADDRESSES)
        return used

    async def _set_group_invitations(self, api: ChatAPI, user: Mapping[str, Any]) -> None:
        """The core's auto-accept of group invitations, as ``join_groups`` asks. Not probed: the
        command is sent only when the setting differs, and a core without it (the capability
        ``group-invitations``) refuses it then, which is logged as a missing capability."""
        try:
            await set_group_invitations(api, user, self._join_groups)
        except CoreError as exc:
            if exc.error_type != "commandError":
                raise
            logger.warning(
                "%s: the chat core lacks %s (it refuses %s): %s",
                self.display_name,
                Capability.GROUP_INVITATIONS,
                Capability.GROUP_INVITATIONS.uses,
                _FALLBACKS[Capability.GROUP_INVITATIONS],
            )

    def _degraded(self, caps: CoreCapabilities) -> ProtocolDeclarations:
        """What the bot serves on this core: without Service RPC responses, the conversation
        only (a bot asked for Service RPC only serves in conversations rather than not at
        all)."""
        if "rpc" not in self._transports or not _lacks(caps, Capability.SERVICE_REQUESTS):
            return self._wanted
        return ProtocolDeclarations(
            tuple(
                ProtocolDeclaration(name, d.versions, chat=True, rpc=False)
                for name, d in self._wanted.items()
            )
        )

    def _served_transports(self) -> list[str]:
        found = {t for d in self._declarations.values() for t in ("chat", "rpc") if getattr(d, t)}
        return sorted(found)

    async def shutdown(self, grace_s: float | None = None) -> None:
        """Stop answering: no new calls; calls in flight finish within the grace period, the
        rest are cut short and answered with their error. Nothing is left half-sent.

        Returns once :meth:`serve` has ended (at once when the bot is not serving). Called
        while the bot is still setting up, it stops as soon as the setup is done.

        Args:
            grace_s: overrides ``shutdown_grace_s`` for this stop.

        Raises:
            BotConfigError: ``grace_s`` is negative (``bad_setting``).
        """
        if grace_s is not None:
            if grace_s < 0:
                raise BotConfigError(
                    "grace_s cannot be negative", code="bad_setting", argument="grace_s"
                )
            self._grace_s = grace_s
        self._stopping = True
        if self._stop is not None:
            self._stop.set()
        if self._finished is not None:
            await self._finished.wait()

    @asynccontextmanager
    async def serving(self, core: CoreSpec = None) -> AsyncIterator[ResponderBot]:
        """Serve for the duration of an ``async with`` block: for tests and embedding.

        Example, a bot author's offline test on the simulated network::

            network = SimNetwork(seed=1, clock=ManualClock())
            async with ResponderBot(display_name="Acme", mcp=tools,
                                    data_dir=tmp_path).serving(network.backend("acme")) as bot:
                ...  # call bot.address from another simulated user

        The block starts once the bot is serving; leaving it stops the bot gracefully (at
        once, when the block raised).
        """
        try:
            async with anyio.create_task_group() as tg:
                await tg.start(self.serve, core)
                try:
                    yield self
                except BaseException:
                    # The block failed: stop at once (calls in flight are cut short and
                    # answered with their error), rather than wait for a grace period.
                    with anyio.CancelScope(shield=True):
                        await self.shutdown(grace_s=0)
                    raise
                with anyio.CancelScope(shield=True):
                    await self.shutdown()
        except BaseExceptionGroup as group:
            raise first_error(group) from None

    # ------------------------------------------------------------------ running a program

    def run(
        self,
        core: CoreSpec = None,
        *,
        handle_signals: bool = True,
        configure_logging: bool = True,
        on_ready: OnReady | None = None,
    ) -> None:
        """Serve until SIGINT or SIGTERM: the whole of a bot's program.

        The first signal stops the bot gracefully (calls in flight may finish within
        ``shutdown_grace_s``); a second one cuts them short at once (each is still answered
        with its error). An error that stops the bot (the core cannot be reached, the data
        folder is in use, ...) is logged in one line and exits with status 1.

        Args:
            core: where the chat core is (see :data:`CoreSpec`); ``None`` reads
                ``SIMPLEX_CORE``, else uses the embedded core with its database in the data
                folder.
            handle_signals: stop on SIGINT and SIGTERM.
            configure_logging: when the root logger has no handler, log INFO lines to
                standard error (see :func:`configure_bot_logging`).
            on_ready: called with the bot once it serves (its address is known); a coroutine
                function runs beside the bot, and may call :meth:`shutdown`.

        Raises:
            SystemExit: status 1 when the bot could not start or stopped on an error.
        """
        if configure_logging:
            configure_bot_logging()
        try:
            anyio.run(
                functools.partial(
                    self.run_async, core, handle_signals=handle_signals, on_ready=on_ready
                ),
                backend="asyncio",
            )
        except SimplexError as exc:
            logger.error("%s: %s", self.display_name, exc)
            raise SystemExit(1) from None

    async def run_async(
        self,
        core: CoreSpec = None,
        *,
        handle_signals: bool = True,
        on_ready: OnReady | None = None,
    ) -> None:
        """:meth:`run` for a program that has its own event loop (asyncio): serve until
        SIGINT or SIGTERM (or :meth:`shutdown`), then return.

        Raises:
            The errors of :meth:`serve`.
        """
        try:
            async with anyio.create_task_group() as tg:
                if handle_signals:
                    tg.start_soon(self._watch_signals, tg.cancel_scope)

                async def serve_then_stop(
                    *, task_status: anyio.abc.TaskStatus[ResponderBot] = anyio.TASK_STATUS_IGNORED
                ) -> None:
                    await self.serve(core, task_status=task_status)
                    tg.cancel_scope.cancel()

                await tg.start(serve_then_stop)
                if on_ready is not None:
                    ready = on_ready(self)
                    if inspect.isawaitable(ready):
                        tg.start_soon(_wait_for, ready)
        except BaseExceptionGroup as group:
            raise first_error(group) from None

    async def _watch_signals(self, scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as tg:
                async for signum in signals:
                    name = signal.Signals(signum).name
                    if not self._stopping:
                        logger.info("%s: %s received, stopping", self.display_name, name)
                        tg.start_soon(self.shutdown)
                    else:
                        logger.info(
                            "%s: %s received again, cutting calls short", self.display_name, name
                        )
                        scope.cancel()


class _DropMissingInterfaces(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "supported_interfaces" not in record.getMessage()


@contextmanager
def _quiet_missing_interfaces() -> Iterator[None]:
    sdk_logger = logging.getLogger("a2a.utils.proto_utils")
    quiet = _DropMissingInterfaces()
    sdk_logger.addFilter(quiet)
    try:
        yield
    finally:
        sdk_logger.removeFilter(quiet)


#: The capabilities a probe reads back from what the bot wrote (the others are command forms).
_READ_BACK: Final = frozenset({Capability.PROTOCOLS_PREFERENCE, Capability.ADDRESS_SERVES})


#: How many running bots of this process froze the heap (gc_freeze=True).
_heap_frozen_by = 0


def _freeze_heap() -> Callable[[], None]:
    """Collect the garbage, then move every object the process holds to the collector's
    permanent generation; returns the function that undoes it when the last bot that froze
    the heap stops."""
    global _heap_frozen_by
    gc.collect()
    gc.freeze()
    _heap_frozen_by += 1
    logger.debug("froze %d objects: full collections skip them", gc.get_freeze_count())

    def thaw() -> None:
        global _heap_frozen_by
        _heap_frozen_by -= 1
        if _heap_frozen_by == 0:
            gc.unfreeze()

    return thaw


def _lacks(caps: CoreCapabilities, capability: Capability) -> bool:
    """Whether the core was found without ``capability`` (an unknown one is tried)."""
    return caps.status(capability) is CapabilityStatus.MISSING


def _owner_scope(path: Path) -> str:
    """This bot's random scope in a shared task database: read from ``path``, or made once."""
    try:
        scope = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        scope = ""
    if not scope:
        scope = secrets.token_hex(12)
        path.write_text(scope + "\n", encoding="ascii")
    return scope


def _shared_state(
    service: str, task_database: str | os.PathLike[str] | None, clock: Clock
) -> SharedState:
    from ._shared_state import SharedState

    if task_database is None:
        raise BotConfigError(
            "the replicas of a service share a PostgreSQL database: "
            "give task_database='postgresql://...' with service",
            code="bad_setting",
            argument="task_database",
        )
    return SharedState(task_database, service, clock=clock)


async def _in_scope(scope: anyio.CancelScope, run: Callable[[], Awaitable[None]]) -> None:
    with scope:
        await run()


def _mapping(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


async def _wait_for(awaitable: Awaitable[None]) -> None:
    await awaitable


def configure_bot_logging(level: int = logging.INFO) -> None:
    """Logging for a bot's program: lines to standard error when nothing is configured yet.

    Adds a handler to the root logger only when it has none (the rich handler that making an
    ``MCPServer`` adds to a root logger without one counts as none), sets the bot's loggers to
    ``level`` unless they have a level already, and keeps the transports' logger to warnings
    (its line per call says what the bot's ``simplex_protocols.bot.calls`` line says).
    """
    root = logging.getLogger()
    if len(root.handlers) == 1 and _made_by_mcp_server(root.handlers[0]):
        # Not the program's choice: making an MCPServer added it. It wraps a long line at the
        # console's width (80 columns when standard error is not a terminal), so a call's line
        # would become several.
        root.removeHandler(root.handlers[0])
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    bot_logger = logging.getLogger(BOT_LOGGER)
    if bot_logger.level == logging.NOTSET:
        bot_logger.setLevel(level)
    # The transports write their own line per call; the bot's line says the same with its
    # name, so theirs is kept for warnings and errors.
    transports_logger = logging.getLogger("simplex_protocols.transports")
    if transports_logger.level == logging.NOTSET:
        transports_logger.setLevel(logging.WARNING)


def _made_by_mcp_server(handler: logging.Handler) -> bool:
    """Whether ``handler`` is the one ``MCPServer()`` adds to a root logger that has none.

    The mcp SDK's ``configure_logging`` (run by every ``MCPServer``; checked against mcp 2.3)
    calls ``logging.basicConfig`` with a ``rich`` ``RichHandler`` on standard error with rich
    tracebacks. ``rich`` is the SDK's dependency: when it was never imported, the handler
    cannot be one.
    """
    rich_logging = sys.modules.get("rich.logging")
    if rich_logging is None or type(handler) is not rich_logging.RichHandler:
        return False
    console = getattr(handler, "console", None)
    return bool(getattr(handler, "rich_tracebacks", False) and getattr(console, "stderr", False))
