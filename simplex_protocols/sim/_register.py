"""The simulator's ``sim:USER`` backend, registered with the core client on import.

:func:`simplex_protocols.core.open_core` imports this module the first time a ``sim:`` core is
opened. It is apart from the package's ``__init__`` so that importing the package (the option
parser of ``simplex-sim`` reads its core profiles) loads neither the core client nor the
network.
"""

from __future__ import annotations

from simplex_protocols.core import CoreKind
from simplex_protocols.core._open import register_backend

from ._network import option_backend

__all__: list[str] = []

register_backend(CoreKind.SIMULATOR, option_backend)
