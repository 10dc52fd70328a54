"""slot_builder: the parsers' way to build their frozen results without the dataclass __init__."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest

from simplex_protocols._frozen import slot_builder


@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: list[int]
    label: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def test_a_built_instance_is_the_one_init_makes() -> None:
    build = slot_builder(Point)
    built = build(1, [2], "p", {"k": 3})
    made = Point(1, [2], "p", {"k": 3})
    assert built == made
    assert repr(built) == repr(made)
    assert type(built) is Point
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.x = 5  # type: ignore[misc]
    assert dataclasses.replace(built, x=5) == Point(5, [2], "p", {"k": 3})


def test_every_value_must_be_given() -> None:
    # No defaults are filled in: a missing value would leave a slot unset.
    build = slot_builder(Point)
    with pytest.raises(TypeError, match="missing 2 required positional arguments"):
        build(1, [2])


@dataclass(frozen=True)
class NoSlots:
    x: int


@dataclass(slots=True)
class NotFrozen:
    x: int


@dataclass(frozen=True, slots=True)
class Checked:
    x: int

    def __post_init__(self) -> None:
        if self.x < 0:
            raise ValueError("negative")


@dataclass(frozen=True, slots=True)
class Derived:
    x: int
    twice: int = field(init=False, default=0)


@pytest.mark.parametrize("cls", [NoSlots, NotFrozen, Checked, Derived, dict])
def test_a_class_whose_init_does_more_is_refused(cls: type) -> None:
    with pytest.raises(TypeError):
        slot_builder(cls)
