"""Make exported names report their public module path (reprs, tracebacks, docs)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, MutableMapping
from typing import Any

__all__ = ["publish"]


def publish(namespace: MutableMapping[str, Any], names: Iterable[str]) -> None:
    """Set ``__module__`` of each exported class or function to the package that exports it.

    Call at the end of a package ``__init__``: ``publish(globals(), __all__)``.
    """
    module = namespace["__name__"]
    for name in names:
        obj = namespace.get(name)
        if obj is None or not hasattr(obj, "__module__"):
            continue
        current = getattr(obj, "__module__", "")
        if isinstance(current, str) and current.startswith(module + "."):
            with contextlib.suppress(AttributeError, TypeError):
                obj.__module__ = module
