"""One simulated chat core: its store, its emitter, its grammar and its receive handlers.

:class:`SimCore` holds a :class:`~simplex_protocols.sim._context.CoreContext` (the database,
the event emitter, the running state, the network) and dispatches to plain functions: each
command through :data:`GRAMMAR`, whose patterns the command groups registered, and each
delivered message through :data:`RECEIVE`, whose handlers the receive modules registered.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from . import (
    _cmd_chats,
    _cmd_cli,
    _cmd_connect,
    _cmd_groups,
    _cmd_messages,
    _cmd_reading,
    _cmd_users,
    _plans,
    _rcv_chats,
    _rcv_groups,
    _rcv_handshake,
    _requests,
    _service,
)
from ._context import DEFERRED, CoreContext, NetworkPort
from ._delivery import Delivery, ServiceCall
from ._errors import ChatFailure
from ._grammar import Grammar
from ._inbound import ReceiveTable
from ._profiles import CoreProfile, core_profile
from ._session import Emitter, Session
from ._store import Database

__all__ = ["GRAMMAR", "RECEIVE", "SimCore", "profile_grammar"]

JSON = dict[str, Any]

#: The commands the simulated core parses, in matching order: the core's API as the spec's
#: newest core has it. A core profile edits it (``_profiles.py``).
GRAMMAR = Grammar(
    [
        _cmd_users.COMMANDS,
        _requests.COMMANDS,
        _plans.COMMANDS,
        _cmd_connect.COMMANDS,
        _cmd_messages.COMMANDS,
        _cmd_reading.COMMANDS,
        _cmd_chats.COMMANDS,
        _cmd_groups.COMMANDS,
        _service.COMMANDS,
        _cmd_cli.COMMANDS,
    ]
)

#: What the simulated core does with each message it receives.
RECEIVE = ReceiveTable.merged(
    [
        _requests.RECEIVE,
        _rcv_handshake.RECEIVE,
        _rcv_groups.RECEIVE,
        _rcv_chats.RECEIVE,
        _service.RECEIVE,
    ]
)


_PROFILE_GRAMMARS: dict[int, tuple[CoreProfile, Grammar]] = {}


def profile_grammar(profile: CoreProfile) -> Grammar:
    """:data:`GRAMMAR` as the core ``profile`` parses it (made once per profile).

    Raises:
        ValueError: a row of the profile names a pattern the grammar does not have.
    """
    made = _PROFILE_GRAMMARS.get(id(profile))
    if made is not None and made[0] is profile:
        return made[1]
    grammar = GRAMMAR
    if profile.commands:
        grammar = GRAMMAR.edited(
            removed=profile.removed_patterns, replaced=profile.replaced_patterns
        )
    _PROFILE_GRAMMARS[id(profile)] = (profile, grammar)
    return grammar


class SimCore:
    """A simulated chat core: one database, its users, and the clients attached to it.

    Args:
        network: the network the core is part of.
        name: the core's name.
        db: its database.
        started: whether its chat runs (as after ``/_start``).
        profile: the real core it behaves as (a :class:`CoreProfile` or its name; ``None``:
            ``spec``, the newest core): its grammar, the keys its records keep, its shapes.
    """

    def __init__(
        self,
        network: NetworkPort,
        name: str,
        db: Database,
        *,
        started: bool,
        profile: CoreProfile | str | None = None,
    ) -> None:
        chosen = core_profile(profile)
        shape = chosen.shape if chosen.conn_status_string is not None else None
        self.events = Emitter(name, network, shape)
        self.ctx = CoreContext(network, name, db, self.events, started=started, profile=chosen)
        self.grammar = profile_grammar(chosen)
        self.receive_table = RECEIVE

    def __repr__(self) -> str:
        return (
            f"SimCore({self.name!r}, profile={self.profile.name!r}, users={len(self.db.users)}, "
            f"started={self.started})"
        )

    # ------------------------------------------------------------------ state

    @property
    def network(self) -> NetworkPort:
        return self.ctx.network

    @property
    def name(self) -> str:
        return self.ctx.name

    @property
    def profile(self) -> CoreProfile:
        """The real core this one behaves as."""
        return self.ctx.core_profile

    @property
    def db(self) -> Database:
        """The core's tables."""
        return self.ctx.db

    @property
    def started(self) -> bool:
        """Whether the chat runs (``/_start``); a stopped core receives nothing."""
        return self.ctx.started

    @started.setter
    def started(self, value: bool) -> None:
        self.ctx.started = value

    @property
    def service_requests(self) -> bool:
        """Whether the core hands Service RPC requests to its clients."""
        return self.ctx.service_requests

    @service_requests.setter
    def service_requests(self, value: bool) -> None:
        self.ctx.service_requests = value

    @property
    def network_config(self) -> JSON:
        return self.ctx.network_config

    @property
    def sessions(self) -> list[Session]:
        return self.events.sessions

    @property
    def backlog(self) -> deque[JSON]:
        """Events waiting for a client (none is attached)."""
        return self.events.backlog

    # ------------------------------------------------------------------ clients

    def attach(self) -> Session:
        """Attach a new client; it receives the backlog of events first."""
        return self.events.attach()

    def detach(self, session: Session) -> None:
        self.events.detach(session)

    def drop_sessions(self) -> None:
        self.events.drop_sessions()

    # ------------------------------------------------------------------ commands

    def handle_command(self, session: Session | None, corr_id: str, command: str) -> None:
        """Run one command; its response goes to ``session`` before the events it causes."""
        resp = self.run_command(session, corr_id, command)
        if resp is not DEFERRED:
            self.events.reply(session, corr_id, resp)
        self.events.flush_deferred()
        if self.network.chaos:
            self.events.emit({"type": "simChaosEvent", "note": "an event type no client knows"})
        self.network.pump()

    def run_command(self, session: Session | None, corr_id: str, command: str) -> JSON:
        """Parse and run one command; return its response (``DEFERRED``: it comes later).

        The events it causes wait until :meth:`Emitter.flush_deferred`.
        """
        ctx = self.ctx
        self.events.defer()
        ctx.current = (session, corr_id)
        try:
            parsed = self.grammar.parse(command)
            if isinstance(parsed, str):
                return _cmd_error(
                    {"type": "error", "errorType": {"type": "commandError", "message": parsed}}
                )
            return parsed.handler(ctx, parsed.args)
        except ChatFailure as failure:
            return _cmd_error(failure.chat_error)
        except Exception as exc:  # never let a command crash the core
            return _cmd_error(
                {
                    "type": "error",
                    "errorType": {
                        "type": "internalError",
                        "message": f"{type(exc).__name__}: {exc}",
                    },
                }
            )
        finally:
            ctx.current = (None, "")

    def execute(self, command: str) -> JSON:
        """Run one command directly and return its response (events go to the sessions).

        Blocking commands (``/_service_request``) need a session: use a backend.
        """
        resp = self.run_command(None, "", command)
        self.events.flush_deferred()
        self.network.pump()
        if resp is DEFERRED:
            return _cmd_error(
                {
                    "type": "error",
                    "errorType": {
                        "type": "commandError",
                        "message": "a blocking command needs a client session (use a backend)",
                    },
                }
            )
        return resp

    # ------------------------------------------------------------------ the network's calls

    def receive(self, d: Delivery) -> None:
        """Handle one delivered message."""
        self.receive_table.deliver(self.ctx, d)

    def on_accepted(self, d: Delivery) -> None:
        """A router accepted one of our messages."""
        if d.body.get("t") == "x.svc.resp":
            _service.on_service_sent(self.ctx, d)
        elif d.receipt:
            _cmd_messages.on_sent(self.ctx, d)

    def on_delivered(self, d: Delivery) -> None:
        """The recipient received one of our messages."""
        _cmd_messages.on_delivered(self.ctx, d)

    def pair_intro(self, mine: str, theirs: str) -> None:
        """Both sides of a member introduction are ready: connect ``mine`` to ``theirs``."""
        _rcv_groups.pair_intro(self.ctx, mine, theirs)

    def service_call_timed_out(self, call: ServiceCall) -> None:
        """A service request of ours got no response in time."""
        _service.service_call_timed_out(self.ctx, call)

    def claim_domain(self, user_id: int, name: str, kind: str, group_id: int | None) -> None:
        """A registered SimpleX name's verified domain, claimed by the user or its group."""
        _plans.claim_domain(self.ctx, user_id, name, kind, group_id)


def _cmd_error(chat_error: JSON) -> JSON:
    return {"type": "chatCmdError", "chatError": chat_error}
