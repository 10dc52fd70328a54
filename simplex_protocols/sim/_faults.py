"""Fault switches of a simulated network: latency, loss, routers down, users offline.

Every switch is on the network's clock and can change at any time; the network asks the
switches when it moves a message, and the cores ask them when a command needs a router or the
name servers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ._links import ROUTER_HOSTS

__all__ = ["Faults"]


class _Network(Protocol):
    def changed(self) -> None: ...


@dataclass
class _Scope:
    users: frozenset[str] | None = None  # any end is one of these users
    link: frozenset[str] | None = None  # both ends are these two users

    def applies(self, a: str, b: str) -> bool:
        if self.link is not None:
            return {a, b} == set(self.link)
        if self.users is not None:
            return a in self.users or b in self.users
        return True


@dataclass
class Faults:
    """Fault switches of a network, on its clock. Change them at any time.

    Scopes: ``user="bob"`` applies to every message to or from bob; ``link=("alice",
    "bob")`` to messages between the two; neither applies to every message.
    """

    _network: _Network
    _latency: list[tuple[_Scope, float]] = field(default_factory=list)
    _loss: list[tuple[_Scope, float]] = field(default_factory=list)
    _routers_down: set[str] = field(default_factory=set)
    _offline: set[str] = field(default_factory=set)
    _slow: dict[str, float] = field(default_factory=dict)
    _no_name_servers: set[str] = field(default_factory=set)
    _name_servers_down: bool = False
    tampered_signatures: bool = False

    @staticmethod
    def _scope(user: str | None, link: tuple[str, str] | None) -> _Scope:
        if user is not None and link is not None:
            raise ValueError("give user= or link=, not both")
        if link is not None:
            return _Scope(link=frozenset(link))
        if user is not None:
            return _Scope(users=frozenset([user]))
        return _Scope()

    def latency(
        self, seconds: float, *, user: str | None = None, link: tuple[str, str] | None = None
    ) -> None:
        """Delay each message in scope by ``seconds`` (0 removes the delay)."""
        if seconds < 0:
            raise ValueError("latency cannot be negative")
        scope = self._scope(user, link)
        self._latency = [(s, v) for s, v in self._latency if s != scope]
        if seconds > 0:
            self._latency.append((scope, seconds))
        self._network.changed()

    def loss(
        self, probability: float, *, user: str | None = None, link: tuple[str, str] | None = None
    ) -> None:
        """Drop each chat message or service message in scope with ``probability`` (0..1).

        A receiver sees a lost chat message as an ``rcvIntegrityError`` item (skipped message)
        when the next message on that connection arrives, as the core reports a gap.
        """
        if not 0.0 <= probability <= 1.0:
            raise ValueError("probability must be between 0 and 1")
        scope = self._scope(user, link)
        self._loss = [(s, v) for s, v in self._loss if s != scope]
        if probability > 0:
            self._loss.append((scope, probability))

    def router_down(self, host: str, down: bool = True) -> None:
        """Take a router down (messages to its queues wait; commands on it fail) or up."""
        if host not in ROUTER_HOSTS:
            raise ValueError(f"unknown router {host!r}; routers are {', '.join(ROUTER_HOSTS)}")
        if down:
            self._routers_down.add(host)
        else:
            self._routers_down.discard(host)
        self._network.changed()

    def offline(self, user: str, offline: bool = True) -> None:
        """Take a user's core off the network, or bring it back.

        While offline its messages wait on its side and messages to it wait on the routers;
        both are delivered when it returns.
        """
        if offline:
            self._offline.add(user)
        else:
            self._offline.discard(user)
        self._network.changed()

    def slow_responder(self, user: str, seconds: float) -> None:
        """Delay everything ``user`` sends (messages and service responses) by ``seconds``."""
        if seconds < 0:
            raise ValueError("delay cannot be negative")
        if seconds:
            self._slow[user] = seconds
        else:
            self._slow.pop(user, None)

    def name_servers(self, available: bool, *, user: str | None = None) -> None:
        """Make SimpleX name resolution fail with ``NO_NAME_SERVERS`` (for one user or all)."""
        if user is None:
            self._name_servers_down = not available
        elif available:
            self._no_name_servers.discard(user)
        else:
            self._no_name_servers.add(user)

    def tamper_signatures(self, on: bool = True) -> None:
        """Verify signed service requests with another session's associated data, as a
        signature copied into another ratchet session would be: the responder's agent drops
        each one and reports ``A_SERVICE badSignature`` to its own clients (the event
        ``chatError``), and the requester waits out its timeout."""
        self.tampered_signatures = on

    def clear(self) -> None:
        """Remove every fault."""
        self._latency.clear()
        self._loss.clear()
        self._routers_down.clear()
        self._offline.clear()
        self._slow.clear()
        self._no_name_servers.clear()
        self._name_servers_down = False
        self.tampered_signatures = False
        self._network.changed()

    # ---------------------------------------------------------------- queries

    def is_router_down(self, host: str) -> bool:
        return host in self._routers_down

    def is_offline(self, user: str) -> bool:
        return user in self._offline

    def has_name_servers(self, user: str) -> bool:
        return not self._name_servers_down and user not in self._no_name_servers

    def delay(self, src: str, dst: str) -> float:
        total = sum(v for s, v in self._latency if s.applies(src, dst))
        return total + self._slow.get(src, 0.0)

    def loss_probability(self, src: str, dst: str) -> float:
        keep = 1.0
        for scope, p in self._loss:
            if scope.applies(src, dst):
                keep *= 1.0 - p
        return 1.0 - keep
