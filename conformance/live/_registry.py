"""The catalogue of live checks: each check module registers its checks here, in order."""

from __future__ import annotations

from collections.abc import Callable

from simplex_protocols.conformance._model import CheckSpec, Profile

from ._context import CheckFunction, LiveCheck

__all__ = ["BOTH", "CHECKS", "FIXTURE", "check"]

#: Both profiles: read-only probes any bot answers.
BOTH = (Profile.FIXTURE, Profile.BLACKBOX)
#: The fixture profile only.
FIXTURE = (Profile.FIXTURE,)

CHECKS: list[LiveCheck] = []


def check(
    check_id: str,
    title: str,
    requirements: tuple[str, ...],
    *,
    transports: tuple[str, ...] = ("chat", "rpc"),
    profiles: tuple[Profile, ...] = BOTH,
    protocols: tuple[str, ...] = (),
    group: bool = False,
    messages: int = 1,
    identities: tuple[str, ...] = ("A",),
    fixture: str | None = None,
    needs: tuple[str, ...] = (),
    mutation_exempt: str | None = None,
) -> Callable[[CheckFunction], CheckFunction]:
    """Register a live check (see :class:`CheckSpec` for most arguments).

    ``identities`` are the suite callers it needs, ``fixture`` the fixture it relies on, and
    ``needs`` the transports the bot must declare for it besides the one it runs on (the
    equivalence checks need both).
    """

    def register(run: CheckFunction) -> CheckFunction:
        if any(c.spec.id == check_id for c in CHECKS):
            raise ValueError(f"duplicate check ID {check_id}")
        spec = CheckSpec(
            id=check_id,
            title=title,
            requirements=requirements,
            transports=transports,
            kind="live",
            profiles=profiles,
            protocols=protocols,
            group=group,
            messages=messages,
            mutation_exempt=mutation_exempt,
        )
        CHECKS.append(LiveCheck(spec, run, identities, fixture, needs))
        return run

    return register
