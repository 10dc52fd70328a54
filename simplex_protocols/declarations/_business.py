"""The business chat rule (DECL-PROTO-10).

"In a business chat, protocols of the business profile MUST be copied into the chat's
groupPreferences, as commands are." ("Agent protocols over SimpleX" rev 2, Profile
declarations > protocols.)

Our reading, registered as an ambiguity: ``transports.rpc`` is valid in ``preferences`` only
(DECL-PROTO-7), so the copy leaves it out and keeps everything else as received. A check of a
business chat accepts both that copy and a verbatim one.
"""

from __future__ import annotations

from typing import Any

from simplex_protocols.errors import DeclarationError

from ._json import as_dict, json_equal, pointer, problem

__all__ = ["business_group_preferences", "check_business_chat"]


def _without_rpc(protocols: Any) -> Any:
    obj = as_dict(protocols)
    if obj is None:
        return protocols
    copied: dict[Any, Any] = {}
    for name, entry in obj.items():
        entry_obj = as_dict(entry)
        transports = as_dict(entry_obj.get("transports")) if entry_obj is not None else None
        if entry_obj is None or transports is None or "rpc" not in transports:
            copied[name] = entry
            continue
        new_entry = dict(entry_obj)
        new_entry["transports"] = {k: v for k, v in transports.items() if k != "rpc"}
        copied[name] = new_entry
    return copied


def _require_object(value: Any, what: str) -> dict[Any, Any]:
    obj = as_dict(value)
    if obj is None:
        raise problem(f"{what} is not an object", "not_an_object", "DECL-PROTO-10", "", value)
    return obj


def business_group_preferences(
    business_preferences: Any, group_preferences: Any = None
) -> dict[str, Any]:
    """The ``groupPreferences`` of a business chat, from the business profile's ``preferences``.

    ``commands`` and ``protocols`` are copied from the business profile (DECL-PROTO-10); a key
    the business profile lacks is removed. ``protocols`` entries lose ``transports.rpc``, which
    ``groupPreferences`` cannot carry (DECL-PROTO-7); everything else, unknown members
    included, is copied as received. Other keys come from ``group_preferences`` unchanged (the
    chat core derives them from the business profile's features).

    Raises:
        DeclarationError: either argument is not an object (``not_an_object``).
    """
    business = _require_object(business_preferences, "the business profile's preferences")
    out = dict(
        _require_object(group_preferences, "groupPreferences")
        if group_preferences is not None
        else {}
    )
    for key in ("commands", "protocols"):
        if key in business:
            out[key] = _without_rpc(business[key]) if key == "protocols" else business[key]
        else:
            out.pop(key, None)
    return out


def check_business_chat(
    business_preferences: Any, group_preferences: Any
) -> tuple[DeclarationError, ...]:
    """Report a business chat whose ``groupPreferences`` lack the business profile's
    ``protocols`` (DECL-PROTO-10).

    Each entry of the business profile must be in the chat's ``protocols``, equal to it with or
    without ``transports.rpc``; an entry the business profile does not declare is stale.

    Returns:
        Problems with positions in ``group_preferences``: ``business_protocols_missing`` (the
        key or an entry is absent), ``business_protocols_differ`` (an entry differs or is not
        the business profile's), ``not_an_object``.
    """
    business = as_dict(business_preferences)
    group = as_dict(group_preferences)
    if business is None or group is None:
        what = "the business profile's preferences" if business is None else "groupPreferences"
        return (
            problem(
                f"{what} is not an object",
                "not_an_object",
                "DECL-PROTO-10",
                "",
                business_preferences if business is None else group_preferences,
            ),
        )
    # An absent (or null) key declares nothing, like an empty object.
    declared = business.get("protocols")
    if declared is None:
        declared = {}
    copied = group.get("protocols")
    if copied is None:
        if as_dict(declared) == {}:
            return ()
        return (
            problem(
                "the business chat lacks the business profile's protocols",
                "business_protocols_missing",
                "DECL-PROTO-10",
                "/protocols",
            ),
        )
    declared_obj = as_dict(declared)
    copied_obj = as_dict(copied)
    if declared_obj is None or copied_obj is None:
        if json_equal(copied, declared) or json_equal(copied, _without_rpc(declared)):
            return ()
        return (
            problem(
                "the business chat's protocols differ from the business profile's",
                "business_protocols_differ",
                "DECL-PROTO-10",
                "/protocols",
                copied,
            ),
        )
    expected = _without_rpc(declared_obj)
    found: list[DeclarationError] = []
    for name, entry in declared_obj.items():
        where = "/protocols" + pointer(name)
        if name not in copied_obj:
            found.append(
                problem(
                    f"the business chat lacks the business profile's protocol {name!r}",
                    "business_protocols_missing",
                    "DECL-PROTO-10",
                    where,
                )
            )
        elif not (
            json_equal(copied_obj[name], expected[name]) or json_equal(copied_obj[name], entry)
        ):
            found.append(
                problem(
                    f"the business chat's declaration of {name!r} differs from the profile's",
                    "business_protocols_differ",
                    "DECL-PROTO-10",
                    where,
                    copied_obj[name],
                )
            )
    for name in copied_obj:
        if name not in declared_obj:
            found.append(
                problem(
                    f"the business chat declares {name!r}, which the business profile does not",
                    "business_protocols_differ",
                    "DECL-PROTO-10",
                    "/protocols" + pointer(name),
                    copied_obj[name],
                )
            )
    return tuple(found)
