"""Make exported names report their public module path (reprs, tracebacks); load them lazily."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_exports", "publish"]


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


def lazy_exports(
    namespace: MutableMapping[str, Any],
    names: Mapping[str, str],
    *,
    modules: Mapping[str, str] | None = None,
    defined_in: str | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports each exported name from its submodule on first use.

    A package whose ``__init__`` imports every submodule makes ``import package.light_part``
    load the heavy parts too (a console script's ``--help`` loading the chat core's library and
    the SDKs). With ``__getattr__ = lazy_exports(globals(), {...})`` the package imports
    nothing, and ``package.Name`` or ``from package import Name`` loads only the submodule that
    defines ``Name``, then keeps it in the namespace (the next lookup is a plain one) and
    publishes it as :func:`publish` would. The package lists the same names under
    ``if TYPE_CHECKING:`` so that type checkers see them.

    Args:
        namespace: the package's ``globals()``.
        names: exported name -> the module that defines it, relative to the package
            (``"._api"``).
        modules: exported name -> a submodule exported as a module (``types`` for ``._types``).
        defined_in: as for :func:`publish`.
    """
    module = namespace["__name__"]
    # Relative names resolve from the package: the module itself for a package's __init__,
    # its parent for a plain module.
    package = namespace.get("__package__") or module
    submodules = dict(modules or {})

    def __getattr__(name: str) -> Any:
        if name in submodules:
            value: Any = importlib.import_module(submodules[name], package)
        elif name in names:
            value = getattr(importlib.import_module(names[name], package), name)
        else:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        namespace[name] = value
        publish(namespace, [name], defined_in=defined_in)
        return value

    return __getattr__
