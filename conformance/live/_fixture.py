"""The suite's reference bot: a :class:`ResponderBot` that implements the fixture profile
(:mod:`simplex_protocols.conformance.live._fixture_names`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from simplex_protocols._clock import Clock, SystemClock

from ._fixture_names import FIXTURE_RATE_LIMIT, REFERENCE_NAME

if TYPE_CHECKING:
    from simplex_protocols.bot import ResponderBot

__all__ = ["reference_bot"]


def reference_bot(
    *,
    data_dir: str | Path,
    clock: Clock | None = None,
    display_name: str = REFERENCE_NAME,
    protocols: Sequence[str] = ("mcp", "a2a"),
    transports: Sequence[str] = ("chat", "rpc"),
    join_groups: bool = False,
) -> ResponderBot:
    """The suite's reference bot: our :class:`ResponderBot` serving the fixture profile.

    Args:
        data_dir: the bot's private data folder (created with mode 0700).
        clock: the bot's clock (the simulated run's clock; the system clock otherwise).
        display_name: its profile's display name.
        protocols: ``mcp`` and/or ``a2a``.
        transports: ``chat`` and/or ``rpc``.
        join_groups: accept group invitations automatically.
    """
    from simplex_protocols.bindings.a2a import A2ABinding
    from simplex_protocols.bot import ResponderBot
    from simplex_protocols.transports import RateLimit

    from ._fixture_a2a import FixtureAgent, fixture_card
    from ._fixture_mcp import fixture_mcp_server

    timer: Clock = clock if clock is not None else SystemClock()
    mcp = fixture_mcp_server(timer) if "mcp" in protocols else None
    # Tasks are kept in memory: the fixture needs no persistence, and a database would do its
    # I/O in a worker thread, out of sight of the simulated run's clock driver.
    a2a = (
        A2ABinding(FixtureAgent(timer), fixture_card(display_name), database=None, clock=timer)
        if "a2a" in protocols
        else None
    )
    requests, per_s = FIXTURE_RATE_LIMIT
    return ResponderBot(
        display_name=display_name,
        mcp=mcp,
        a2a=a2a,
        description="simplex-conformance reference bot (fixture profile)",
        transports=tuple(transports),
        data_dir=data_dir,
        rate_limit=RateLimit(requests, per_s),
        anonymous_rate_limit=RateLimit(10_000, 60.0),
        join_groups=join_groups,
        clock=timer,
    )
