"""A simulated SimpleX network: a test double of the routers plus one chat core per user.

It is not SimpleX: it runs in one process, keeps its chats in memory (saved to a JSON file
on request), and exchanges internal messages between its cores. What it gives its clients is
faithful to the SimpleX chat core: the same command syntax, the same response and event JSON,
the same IDs, errors and limits. Use it for tests, demos and offline bot development::

    from simplex_protocols.sim import SimNetwork
    from simplex_protocols._clock import ManualClock

    network = SimNetwork(seed=1, clock=ManualClock())
    bot = network.add_user("bot", peer_type="bot")
    link = bot.create_address(pq_ratchet=True)
    backend = network.backend("alice")   # a CoreBackend, frames in the CLI WebSocket shape

A network's cores behave as the newest core the seeds describe, or as an older real core:
``SimNetwork(core_profile="v6.4")`` (:data:`CORE_PROFILES`; ``simplex-sim serve
--core-profile NAME``), so that tests show what a user of that core gets.

``simplex-sim serve`` exposes the same network over WebSocket, one endpoint per user, and
``--core sim:USER`` (:func:`simplex_protocols.core.open_core`) opens USER's core in
:func:`default_network`: the core client loads this package's backend the first time it opens
one.
:mod:`simplex_protocols.sim.testing` has scripted users for tests. See ``docs/sim.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simplex_protocols._exports import lazy_exports

if TYPE_CHECKING:
    from ._backend import SimBackend as SimBackend
    from ._core import SimCore as SimCore
    from ._faults import Faults as Faults
    from ._links import ROUTER_HOSTS as ROUTER_HOSTS
    from ._network import SimNetwork as SimNetwork
    from ._network import SimUser as SimUser
    from ._network import default_network as default_network
    from ._profiles import CORE_PROFILES as CORE_PROFILES
    from ._profiles import CoreProfile as CoreProfile
    from ._server import SimServer as SimServer
    from ._shape import check_frame as check_frame
    from ._shape import check_shape as check_shape

__all__ = [
    "CORE_PROFILES",
    "ROUTER_HOSTS",
    "CoreProfile",
    "Faults",
    "SimBackend",
    "SimCore",
    "SimNetwork",
    "SimServer",
    "SimUser",
    "check_frame",
    "check_shape",
    "default_network",
]

#: Each name is loaded from its submodule on first use (``lazy_exports``), so that a program
#: importing one light part of this package (an option parser) does not load the rest.
__getattr__ = lazy_exports(
    globals(),
    {
        "SimBackend": "._backend",
        "SimCore": "._core",
        "Faults": "._faults",
        "ROUTER_HOSTS": "._links",
        "SimNetwork": "._network",
        "SimUser": "._network",
        "default_network": "._network",
        "CORE_PROFILES": "._profiles",
        "CoreProfile": "._profiles",
        "SimServer": "._server",
        "check_frame": "._shape",
        "check_shape": "._shape",
    },
)
