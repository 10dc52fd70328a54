"""Vector operations of the ``declarations`` family (spec/vectors/declarations/).

Parse operations take the JSON text of the value (``input``), decode it strictly (duplicate
keys, nesting deeper than 64 levels and lone surrogates are refused with the wire decoder's
code) and run the parser. They are strict by default: the first problem is the error. With
``args.lenient`` true they collect problems and return them beside the valid parts.

Common ``args``: ``scope`` (``"preferences"``, the default, or ``"groupPreferences"``),
``lenient`` (boolean).

A problem is written ``{"code", "requirement", "position"}``; ``position`` is a JSON pointer
into the input. The canonical forms are documented in each vector file's ``output``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from simplex_protocols._wire import dumps
from simplex_protocols.declarations import (
    AddressLinkData,
    ChangeFrequency,
    EffectiveValue,
    PeerType,
    ProtocolDeclaration,
    ProtocolDeclarations,
    PublicGroupDeclaration,
    Scope,
    Transport,
    business_group_preferences,
    check_business_chat,
    check_commands,
    effective_audience,
    effective_change_frequency,
    format_link_data,
    format_protocols,
    format_public_group,
    parse_link_data,
    parse_protocols,
    parse_public_group,
    protocols_from_preferences,
)
from simplex_protocols.declarations._json import decode_json
from simplex_protocols.errors import DeclarationError

from . import op

__all__: list[str] = []


# --------------------------------------------------------------------------- helpers


def _bad_input(reason: str) -> DeclarationError:
    return DeclarationError(reason, code="bad_operation_input", position="")


def _decoded(value: Any) -> Any:
    return decode_json(value) if isinstance(value, str | bytes) else value


def _scope(args: Mapping[str, Any]) -> Scope:
    return Scope(args.get("scope", Scope.PREFERENCES))


def _lenient(args: Mapping[str, Any]) -> bool:
    return args.get("lenient") is True


def _problems(problems: Iterable[DeclarationError]) -> list[dict[str, Any]]:
    return [
        {"code": p.code, "requirement": p.requirement, "position": p.position} for p in problems
    ]


def _strict(problems: tuple[DeclarationError, ...], args: Mapping[str, Any]) -> None:
    if problems and not _lenient(args):
        raise problems[0]


def _peer_list(peers: Iterable[PeerType]) -> list[str]:
    chosen = set(peers)
    return [p.value for p in PeerType if p in chosen]


def _object(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad_input(f"{what} is not an object")
    return value


# --------------------------------------------------------------------------- protocols


def _protocols_json(declared: ProtocolDeclarations) -> dict[str, Any]:
    return {
        "declarations": [
            {
                "name": d.name,
                "versions": list(d.versions),
                "chat": d.chat,
                "rpc": d.rpc,
                "extra": dict(d.extra),
                "transportsExtra": dict(d.transports_extra),
            }
            for d in declared.declarations
        ],
        "serves": {t.value: list(declared.protocols_for(t)) for t in Transport},
        "problems": _problems(declared.problems),
    }


def _protocols_from_json(value: Any, scope: Scope) -> ProtocolDeclarations:
    entries = _object(value, "the canonical form").get("declarations")
    if not isinstance(entries, list):
        raise _bad_input("declarations is not an array")
    declarations = []
    for entry in entries:
        entry = _object(entry, "a declaration")
        try:
            declarations.append(
                ProtocolDeclaration(
                    name=entry["name"],
                    versions=entry["versions"],
                    chat=entry["chat"],
                    rpc=entry["rpc"],
                    extra=_object(entry["extra"], "extra"),
                    transports_extra=_object(entry["transportsExtra"], "transportsExtra"),
                )
            )
        except KeyError as exc:
            raise _bad_input(f"a declaration lacks {exc.args[0]}") from None
    return ProtocolDeclarations(tuple(declarations), scope)


@op("declarations.parse_protocols")
def _parse_protocols(value: Any, args: Mapping[str, Any]) -> Any:
    declared = parse_protocols(_decoded(value), scope=_scope(args), strict=not _lenient(args))
    return _protocols_json(declared)


@op("declarations.format_protocols")
def _format_protocols(value: Any, args: Mapping[str, Any]) -> Any:
    return dumps(format_protocols(_protocols_from_json(value, _scope(args))))


@op("declarations.check_preferences")
def _check_preferences(value: Any, args: Mapping[str, Any]) -> Any:
    preferences = _decoded(value)
    declared = protocols_from_preferences(preferences, scope=_scope(args))
    problems = declared.problems + check_commands(preferences)
    _strict(problems, args)
    out = _protocols_json(declared)
    out["problems"] = _problems(problems)
    return out


# --------------------------------------------------------------------------- public group


def _public_group_json(declared: PublicGroupDeclaration) -> dict[str, Any]:
    return {
        "audience": None if declared.audience is None else [str(p) for p in declared.audience],
        "changeFrequency": None
        if declared.change_frequency is None
        else declared.change_frequency.value,
        "extra": dict(declared.extra),
        "effectiveAudience": _peer_list(declared.effective_audience),
        "effectiveChangeFrequency": None
        if declared.effective_change_frequency is None
        else declared.effective_change_frequency.value,
        "problems": _problems(declared.problems),
    }


@op("declarations.parse_public_group")
def _parse_public_group(value: Any, args: Mapping[str, Any]) -> Any:
    return _public_group_json(parse_public_group(_decoded(value), strict=not _lenient(args)))


@op("declarations.format_public_group")
def _format_public_group(value: Any, args: Mapping[str, Any]) -> Any:
    form = _object(value, "the canonical form")
    frequency = form.get("changeFrequency")
    try:
        change_frequency = None if frequency is None else ChangeFrequency(frequency)
    except ValueError:
        raise DeclarationError(
            "not a changefreq value",
            code="bad_change_frequency",
            requirement="DECL-AUD-3",
            position="/changeFrequency",
        ) from None
    declared = PublicGroupDeclaration(
        audience=form.get("audience"),
        change_frequency=change_frequency,
        extra=_object(form.get("extra", {}), "extra"),
    )
    return dumps(format_public_group(declared))


# --------------------------------------------------------------------------- link data


def _link_data_json(data: AddressLinkData) -> dict[str, Any]:
    return {
        "serves": None if data.serves is None else [str(p) for p in data.serves],
        "business": data.business,
        "extra": dict(data.extra),
        "effectiveServes": _peer_list(data.effective_serves),
        "problems": _problems(data.problems),
    }


@op("declarations.parse_link_data")
def _parse_link_data(value: Any, args: Mapping[str, Any]) -> Any:
    return _link_data_json(parse_link_data(_decoded(value), strict=not _lenient(args)))


@op("declarations.format_link_data")
def _format_link_data(value: Any, args: Mapping[str, Any]) -> Any:
    form = _object(value, "the canonical form")
    data = AddressLinkData(serves=form.get("serves"), extra=_object(form.get("extra", {}), "extra"))
    return dumps(format_link_data(data))


# --------------------------------------------------------------------------- business chats


@op("declarations.business_group_preferences")
def _business_group_preferences(value: Any, args: Mapping[str, Any]) -> Any:
    form = _object(_decoded(value), "the input")
    return business_group_preferences(form.get("businessPreferences"), form.get("groupPreferences"))


@op("declarations.check_business_chat")
def _check_business_chat(value: Any, args: Mapping[str, Any]) -> Any:
    form = _object(_decoded(value), "the input")
    problems = check_business_chat(form.get("businessPreferences"), form.get("groupPreferences"))
    _strict(problems, args)
    return {"problems": _problems(problems)}


# --------------------------------------------------------------------------- precedence


def _in_band(form: Mapping[str, Any]) -> PublicGroupDeclaration | AddressLinkData | None:
    if "publicGroup" in form:
        return parse_public_group(form["publicGroup"])
    if "linkData" in form:
        return parse_link_data(form["linkData"])
    return None


def _effective_json(result: EffectiveValue[Any], key: str, value: Any) -> dict[str, Any]:
    return {key: value, "source": result.source.value, "problems": _problems(result.problems)}


@op("declarations.effective_audience")
def _effective_audience(value: Any, args: Mapping[str, Any]) -> Any:
    form = _object(_decoded(value), "the input")
    website = form.get("website")
    if website is not None and not isinstance(website, str | list):
        raise _bad_input("website is not a string or an array")
    result = effective_audience(_in_band(form), website)
    return _effective_json(result, "audience", _peer_list(result.value))


@op("declarations.effective_change_frequency")
def _effective_change_frequency(value: Any, args: Mapping[str, Any]) -> Any:
    form = _object(_decoded(value), "the input")
    declared = _in_band(form)
    website = form.get("website")
    if website is not None and not isinstance(website, str):
        raise _bad_input("website is not a string")
    result = effective_change_frequency(
        declared if isinstance(declared, PublicGroupDeclaration) else None, website
    )
    frequency = None if result.value is None else result.value.value
    return _effective_json(result, "changeFrequency", frequency)
