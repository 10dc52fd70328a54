"""Building frozen, slotted dataclasses where it costs: on every message a parser reads.

A frozen dataclass's ``__init__`` sets each field with ``object.__setattr__``, looked up anew for
every field; for the four or five fields of a parsed command or envelope that is half the
parser's own work after the JSON decoder. :func:`slot_builder` sets the same slots through
their descriptors, found once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["slot_builder"]

T = TypeVar("T")


def slot_builder(cls: type[T]) -> Callable[..., T]:
    """A function that builds a ``cls`` from the values of all its fields, in their order.

    The instance is the one ``cls(*values)`` makes (equal, with the same hash and repr, as
    frozen), without its ``__init__``: no defaults are filled in and nothing runs after
    ``__init__``, so ``cls`` must have none of ``__post_init__``, ``InitVar`` fields or
    ``init=False`` fields, and every value must be given.

    Raises:
        TypeError: ``cls`` is not a frozen dataclass with slots, or has a field that its
            ``__init__`` would not set from an argument.
    """
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} is not a frozen dataclass with slots")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__, which the builder would skip")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if any(not field.init for field in fields):
        raise TypeError(f"{cls.__name__} has a field its __init__ does not take")
    # The function is written out for this class's number of fields and compiled, as
    # dataclasses writes __init__: a loop over the setters would cost more than __init__ saves.
    # Its text holds only generated names (v0, set0, ...), never a name or value of the class.
    values = [f"v{i}" for i in range(len(fields))]
    source = "\n".join(
        [
            f"def build({', '.join(values)}):",
            "    built = new(cls)",
            *(f"    set{i}(built, v{i})" for i in range(len(fields))),
            "    return built",
        ]
    )
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    for i, field in enumerate(fields):
        namespace[f"set{i}"] = getattr(cls, field.name).__set__
    exec(compile(source, f"<slot_builder of {cls.__qualname__}>", "exec"), namespace)
    build: Callable[..., T] = namespace["build"]
    build.__qualname__ = build.__name__ = f"build_{cls.__name__}"
    return build
