"""The public group record's ``audience`` and ``changeFrequency``, the contact address link
data's ``serves``, and the precedence of these in-band values over a website's.

"Agent protocols over SimpleX" rev 2, Profile declarations > Public group audience and update
frequency, and > Contact address peers. Validation is driven by
``spec/schemas/public-group.jtd.json`` and ``spec/schemas/address-link-data.jtd.json``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from simplex_protocols._schema import validate
from simplex_protocols._sitemaps import ChangeFrequency
from simplex_protocols.errors import DeclarationError

from ._json import as_dict, problem
from ._model import (
    DEFAULT_AUDIENCE,
    AddressLinkData,
    DeclarationSource,
    EffectiveValue,
    PeerType,
    PublicGroupDeclaration,
    ascii_lower,
    peer_type,
)

__all__ = [
    "audience_from_website",
    "change_frequency_from_website",
    "effective_audience",
    "effective_change_frequency",
    "format_link_data",
    "format_public_group",
    "parse_link_data",
    "parse_public_group",
]


def _read_peers(
    obj: dict[Any, Any],
    key: str,
    schema: str,
    requirement: str,
    problems: list[DeclarationError],
) -> tuple[PeerType | str, ...] | None:
    """The peer types under ``key``, driven by the schema's issues: a value that is not an array
    is dropped whole, an element that is not a string is dropped alone."""
    if key not in obj:
        return None
    value = obj[key]
    whole_bad = False
    bad_elements: set[int] = set()
    for issue in validate(schema, {key: value}):
        if issue.instance_path == f"/{key}":
            whole_bad = True
        elif issue.instance_path.startswith(f"/{key}/"):
            bad_elements.add(int(issue.instance_path.rsplit("/", 1)[1]))
    if whole_bad:
        problems.append(
            problem(
                f"{key} is not an array of strings", f"bad_{key}", requirement, f"/{key}", value
            )
        )
        return None
    out: list[PeerType | str] = []
    for i, element in enumerate(value):
        if i in bad_elements:
            problems.append(
                problem(
                    f"a value of {key} is not a string",
                    f"bad_{key}_value",
                    requirement,
                    f"/{key}/{i}",
                    element,
                )
            )
        else:
            # DECL-AUD-5: unknown values are kept (as str) and ignored by the effective view.
            out.append(peer_type(element))
    return tuple(out)


def _not_an_object(what: str, requirement: str, value: Any) -> DeclarationError:
    return problem(f"{what} is not an object", "not_an_object", requirement, "", value)


def parse_public_group(value: Any, *, strict: bool = False) -> PublicGroupDeclaration:
    """Read ``audience`` and ``changeFrequency`` of a public group record (``publicGroup``).

    Lenient by default: problems are collected in :attr:`PublicGroupDeclaration.problems` and
    the readable fields kept. Unknown audience values are kept and ignored (DECL-AUD-5); an
    absent audience is ``["human"]`` in effect (DECL-AUD-2). ``changeFrequency`` in a record
    whose ``groupType`` is not ``"channel"`` is reported (``change_frequency_not_channel``,
    DECL-AUD-3) and ignored by :attr:`PublicGroupDeclaration.effective_change_frequency`.

    Args:
        value: the decoded ``publicGroup`` object.
        strict: raise the first problem instead of collecting it.

    Raises:
        DeclarationError: only with ``strict=True``.
    """
    obj = as_dict(value)
    if obj is None:
        err = _not_an_object("publicGroup", "DECL-AUD-6", value)
        if strict:
            raise err
        return PublicGroupDeclaration(problems=(err,), raw=value)
    problems: list[DeclarationError] = []
    audience = _read_peers(obj, "audience", "public-group", "DECL-AUD-1", problems)
    change_frequency: ChangeFrequency | None = None
    if "changeFrequency" in obj:
        raw_frequency = obj["changeFrequency"]
        if validate("public-group", {"changeFrequency": raw_frequency}):
            problems.append(
                problem(
                    "changeFrequency is not one of always, hourly, daily, weekly, monthly, "
                    "yearly, never",
                    "bad_change_frequency",
                    "DECL-AUD-3",
                    "/changeFrequency",
                    raw_frequency,
                )
            )
        else:
            change_frequency = ChangeFrequency(raw_frequency)
    extra = {k: v for k, v in obj.items() if k not in ("audience", "changeFrequency")}
    group_type = extra.get("groupType")
    if change_frequency is not None and isinstance(group_type, str) and group_type != "channel":
        # DECL-AUD-3: "changeFrequency: in a channel only". Validators report it; the effective
        # view ignores it (our reading of the ambiguity).
        problems.append(
            problem(
                "changeFrequency applies to channels only",
                "change_frequency_not_channel",
                "DECL-AUD-3",
                "/changeFrequency",
                change_frequency.value,
            )
        )
    if strict and problems:
        raise problems[0]
    return PublicGroupDeclaration(audience, change_frequency, extra, tuple(problems), value)


def format_public_group(declaration: PublicGroupDeclaration) -> dict[str, Any]:
    """Build a public group record for our own channel or group (strict).

    The record is ``extra`` in its order, then ``audience`` and ``changeFrequency`` when set.

    Raises:
        DeclarationError: ``changeFrequency`` is set on a record whose ``groupType`` is not
            ``"channel"`` (``change_frequency_not_channel``, DECL-AUD-3).
    """
    out = dict(declaration.extra)
    if declaration.audience is not None:
        out["audience"] = [str(p) for p in declaration.audience]
    if declaration.change_frequency is not None:
        group_type = declaration.group_type
        if group_type is not None and group_type != "channel":
            raise problem(
                "changeFrequency applies to channels only",
                "change_frequency_not_channel",
                "DECL-AUD-3",
                "/changeFrequency",
                declaration.change_frequency.value,
            )
        out["changeFrequency"] = declaration.change_frequency.value
    return out


def parse_link_data(value: Any, *, strict: bool = False) -> AddressLinkData:
    """Read ``serves`` of a contact address's link data (``ContactShortLinkData``).

    ``serves`` has the values and the default of ``audience`` (DECL-SERVES-1): absent means
    ``["human"]`` in effect; unknown values are kept and ignored (DECL-AUD-5). ``business``
    and every other member are kept in :attr:`AddressLinkData.extra`.

    Raises:
        DeclarationError: only with ``strict=True``.
    """
    obj = as_dict(value)
    if obj is None:
        err = _not_an_object("link data", "DECL-SERVES-2", value)
        if strict:
            raise err
        return AddressLinkData(problems=(err,), raw=value)
    problems: list[DeclarationError] = []
    serves = _read_peers(obj, "serves", "address-link-data", "DECL-SERVES-2", problems)
    if strict and problems:
        raise problems[0]
    extra = {k: v for k, v in obj.items() if k != "serves"}
    return AddressLinkData(serves, extra, tuple(problems), value)


def format_link_data(data: AddressLinkData) -> dict[str, Any]:
    """Build link data for our own contact address: ``extra`` in order, then ``serves`` when set."""
    out = dict(data.extra)
    if data.serves is not None:
        out["serves"] = [str(p) for p in data.serves]
    return out


_WEBSITE_AUDIENCES: dict[str, frozenset[PeerType]] = {
    "people": frozenset({PeerType.HUMAN}),
    "agents": frozenset({PeerType.AGENT}),
    "people and agents": frozenset({PeerType.HUMAN, PeerType.AGENT}),
}


def audience_from_website(text: str) -> frozenset[PeerType]:
    """The peer types of an llms.txt ``<audience>``: ``people``, ``agents``, ``people and agents``.

    ASCII letter case and runs of spaces are not significant.

    Raises:
        DeclarationError: any other phrase (``bad_website_audience``, LLMS-NOTES-3).
    """
    found = None
    if isinstance(text, str):
        found = _WEBSITE_AUDIENCES.get(" ".join(w for w in ascii_lower(text).split(" ") if w))
    if found is None:
        raise problem(
            "a website audience is people, agents, or people and agents",
            "bad_website_audience",
            "LLMS-NOTES-3",
            "",
            text,
        )
    return found


def change_frequency_from_website(text: str) -> ChangeFrequency:
    """The :class:`ChangeFrequency` of an llms.txt ``<frequency>`` (a Sitemaps changefreq).

    Raises:
        DeclarationError: not a changefreq value (``bad_website_frequency``, LLMS-NOTES-4).
    """
    try:
        return ChangeFrequency(ascii_lower(text.strip(" ")))
    except (ValueError, AttributeError, TypeError):
        raise problem(
            "a website frequency is a Sitemaps changefreq value",
            "bad_website_frequency",
            "LLMS-NOTES-4",
            "",
            text,
        ) from None


def _has_field(parsed: object, raw: Any, key: str) -> bool:
    """Whether the in-band value has the field ``key``, readable (``parsed``) or not (in ``raw``,
    the value as received, when lenient parsing dropped what it could not read)."""
    return parsed is not None or (isinstance(raw, Mapping) and key in raw)


def _field_problems(
    problems: tuple[DeclarationError, ...], key: str
) -> tuple[DeclarationError, ...]:
    """The parse problems of the field ``key`` (``/key``, ``/key/...``), and of the whole value
    (position ``""``: a record or link data that is not an object)."""
    here = f"/{key}"
    return tuple(
        p
        for p in problems
        if p.position in ("", here)
        or (isinstance(p.position, str) and p.position.startswith(here + "/"))
    )


def effective_audience(
    declared: PublicGroupDeclaration | AddressLinkData | None,
    website: str | Iterable[PeerType | str] | None = None,
) -> EffectiveValue[frozenset[PeerType]]:
    """The peer types an address is made for, after the precedence rule (DECL-PREC-1).

    "The values in the public group record and in the address link data take precedence over
    the values on a website." The record's ``audience`` (or the link data's ``serves``) decides
    as soon as the field is there, readable or not:

    - a readable field gives its known peer types (unknown values ignored, DECL-AUD-5); one
      whose values are all unknown, or all unreadable, gives the empty set;
    - a field that cannot be read at all (not an array: ``"audience": "agent"``) still takes
      precedence, and gives what the record's own lenient reading gives, the default
      ``{human}`` (:attr:`PublicGroupDeclaration.effective_audience`); the website is not
      consulted, and the problem is in :attr:`EffectiveValue.problems`.

    A field that is absent is not a value: then the website's value applies, and without one
    the spec's default ``{human}`` (DECL-AUD-2, DECL-SERVES-1). A record or link data that is
    not an object has no field: the website applies, and the problem is reported.

    Args:
        declared: the parsed public group record or link data (from :func:`parse_public_group`
            or :func:`parse_link_data`, which keep the value as received in ``raw``), or
            ``None``.
        website: what a website says: an llms.txt audience phrase (``"people and agents"``),
            or peer type strings (unknown ones ignored).

    Returns:
        The effective set and its source. :attr:`EffectiveValue.problems` holds what was wrong
        with the in-band field (its parse problems: ``bad_audience``, ``bad_audience_value``,
        ``bad_serves``, ``bad_serves_value``, ``not_an_object``), and with the website phrase
        when it was consulted and cannot be read (``bad_website_audience``).
    """
    in_band: tuple[DeclarationError, ...] = ()
    if isinstance(declared, PublicGroupDeclaration):
        in_band = _field_problems(declared.problems, "audience")
        if _has_field(declared.audience, declared.raw, "audience"):
            return EffectiveValue(
                declared.effective_audience, DeclarationSource.PUBLIC_GROUP, in_band
            )
    elif isinstance(declared, AddressLinkData):
        in_band = _field_problems(declared.problems, "serves")
        if _has_field(declared.serves, declared.raw, "serves"):
            return EffectiveValue(declared.effective_serves, DeclarationSource.LINK_DATA, in_band)
    if isinstance(website, str):
        try:
            return EffectiveValue(
                audience_from_website(website), DeclarationSource.WEBSITE, in_band
            )
        except DeclarationError as exc:
            in_band = (*in_band, exc)
    elif website is not None:
        peers = frozenset(p for p in (peer_type(w) for w in website if isinstance(w, str)))
        known = frozenset(p for p in peers if isinstance(p, PeerType))
        return EffectiveValue(known, DeclarationSource.WEBSITE, in_band)
    return EffectiveValue(DEFAULT_AUDIENCE, DeclarationSource.DEFAULT, in_band)


def effective_change_frequency(
    declared: PublicGroupDeclaration | None,
    website: str | None = None,
) -> EffectiveValue[ChangeFrequency | None]:
    """How often a channel is updated, after the precedence rule (DECL-PREC-1).

    The record's ``changeFrequency`` wins over the website's ``<frequency>`` as soon as the
    field is there, readable or not: a value that is not one of the seven changefreq values
    (``"sometimes"``) gives ``None``, as the record's own lenient reading does
    (:attr:`PublicGroupDeclaration.effective_change_frequency`), the website is not consulted,
    and the problem (``bad_change_frequency``) is in :attr:`EffectiveValue.problems`. A record
    whose ``groupType`` is not ``"channel"`` has no update frequency, whatever the website
    says (DECL-AUD-3; a ``changeFrequency`` in it is reported as
    ``change_frequency_not_channel``). A record that is not an object has no field: the
    website applies, and the problem is reported. Without either, the value is ``None`` (the
    spec has no default).
    """
    in_band: tuple[DeclarationError, ...] = ()
    if declared is not None:
        in_band = _field_problems(declared.problems, "changeFrequency")
        group_type = declared.group_type
        if (group_type is not None and group_type != "channel") or _has_field(
            declared.change_frequency, declared.raw, "changeFrequency"
        ):
            return EffectiveValue(
                declared.effective_change_frequency, DeclarationSource.PUBLIC_GROUP, in_band
            )
    if website is not None:
        try:
            return EffectiveValue(
                change_frequency_from_website(website), DeclarationSource.WEBSITE, in_band
            )
        except DeclarationError as exc:
            in_band = (*in_band, exc)
    return EffectiveValue(None, DeclarationSource.DEFAULT, in_band)
