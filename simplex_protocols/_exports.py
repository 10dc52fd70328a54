"""Make exported names report their public module path (reprs, tracebacks, docs)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, MutableMapping
from typing import Any

__all__ = ["publish"]


def publish(
    namespace: MutableMapping[str, Any], names: Iterable[str], *, defined_in: str | None = None
) -> None:
    """Set ``__module__`` of each exported class or function to the module that exports it.

    Call at the end of a public module: ``publish(globals(), __all__)``. Only names defined
    under ``defined_in`` are claimed, so a re-export (``bindings.Caller`` is
    ``transports.Caller``) keeps the module of its one definition.

    Args:
        namespace: the public module's ``globals()``.
        names: the names it exports.
        defined_in: the module path prefix of the private modules whose names this module
            publishes. By default the module's own submodules (``simplex_protocols.rpc.``
            for ``simplex_protocols.rpc``); a public module beside its private ones gives their
            prefix (``simplex_protocols.bindings._mcp_`` for ``simplex_protocols.bindings.mcp``).
    """
    module = namespace["__name__"]
    prefix = module + "." if defined_in is None else defined_in
    for name in names:
        obj = namespace.get(name)
        if obj is None or not hasattr(obj, "__module__"):
            continue
        current = getattr(obj, "__module__", "")
        if isinstance(current, str) and current.startswith(prefix):
            with contextlib.suppress(AttributeError, TypeError):
                obj.__module__ = module
