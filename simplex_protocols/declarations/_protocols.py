"""The ``protocols`` key of ``preferences`` and ``groupPreferences``.

"Agent protocols over SimpleX" rev 2, Profile declarations > protocols, and Protocol names.
Validation is driven by ``spec/schemas/protocols.jtd.json``; the checks the schema cannot
express (protocol names, ``rpc`` only in ``preferences``, ``/_call`` never in ``commands``)
sit beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simplex_protocols._schema import SchemaIssue, validate
from simplex_protocols.errors import DeclarationError

from ._json import as_dict, pointer, problem
from ._model import ProtocolDeclaration, ProtocolDeclarations, Scope, ascii_lower, is_protocol_name

__all__ = [
    "check_commands",
    "check_preferences",
    "format_protocols",
    "parse_protocols",
    "protocols_from_preferences",
    "with_protocols",
]

_PROTOCOLS_SCHEMA = "protocols"

# schema path of a JTD issue -> (code, requirement, reason)
_SCHEMA_PROBLEMS: dict[str, tuple[str, str, str]] = {
    "/values": ("not_an_object", "DECL-PROTO-3", "protocols is not an object"),
    "/values/properties": ("bad_declaration", "DECL-PROTO-3", "the entry is not an object"),
    "/values/properties/versions": ("missing_versions", "DECL-PROTO-4", "versions is required"),
    "/values/properties/versions/elements": (
        "bad_versions",
        "DECL-PROTO-4",
        "versions is not an array",
    ),
    "/values/properties/versions/elements/type": (
        "bad_versions",
        "DECL-PROTO-4",
        "a version is not a string",
    ),
    "/values/properties/transports": (
        "missing_transports",
        "DECL-PROTO-5",
        "transports is required",
    ),
    "/values/properties/transports/optionalProperties": (
        "bad_transports",
        "DECL-PROTO-5",
        "transports is not an object",
    ),
    "/values/properties/transports/optionalProperties/chat/type": (
        "bad_transport_value",
        "DECL-PROTO-3",
        "transports.chat is not a boolean",
    ),
    "/values/properties/transports/optionalProperties/rpc/type": (
        "bad_transport_value",
        "DECL-PROTO-3",
        "transports.rpc is not a boolean",
    ),
}


def _schema_problem(issue: SchemaIssue, value: Any, prefix: str) -> DeclarationError:
    code, requirement, reason = _SCHEMA_PROBLEMS.get(
        issue.schema_path, ("bad_declaration", "DECL-PROTO-3", "the entry breaks the schema")
    )
    return problem(reason, code, requirement, prefix + issue.instance_path, value)


def _at(value: Any, path: str) -> Any:
    """The value at a JSON pointer made by the schema validator (for error excerpts only)."""
    node = value
    for token in path.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping):
            node = node.get(key)
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def _scope(scope: Scope | str) -> Scope:
    try:
        return Scope(scope)
    except ValueError:
        raise ValueError(
            f"scope must be 'preferences' or 'groupPreferences', not {scope!r}"
        ) from None


def _parse(value: Any, scope: Scope, prefix: str) -> ProtocolDeclarations:
    obj = as_dict(value)
    if obj is None:
        err = problem("protocols is not an object", "not_an_object", "DECL-PROTO-3", prefix, value)
        return ProtocolDeclarations((), scope, (err,), value)

    problems: list[DeclarationError] = []
    # Keys that are not strings cannot come from JSON; report them rather than crash on them.
    checked: dict[str, Any] = {}
    for key, entry in obj.items():
        if isinstance(key, str):
            checked[key] = as_dict(entry) if isinstance(entry, Mapping) else entry
        else:
            problems.append(
                problem(
                    "a protocol name is not a string", "bad_protocol_name", "NAME-1", prefix, key
                )
            )
    # The schema drives validation; its issues are sorted to the entry they concern.
    issues_by_entry: dict[str, list[SchemaIssue]] = {}
    escaped = {pointer(key): key for key in checked}
    for issue in validate(_PROTOCOLS_SCHEMA, checked):
        head = "/" + issue.instance_path[1:].split("/", 1)[0]
        name = escaped.get(head)
        if name is not None:
            issues_by_entry.setdefault(name, []).append(issue)

    declarations: list[ProtocolDeclaration] = []
    for name, entry in checked.items():
        where = prefix + pointer(name)
        entry_ok = True
        # NAME-1: "A protocol name consists of lowercase ASCII letters, digits and hyphens."
        # The schema's "values" form cannot constrain keys, so this check is separate.
        if not is_protocol_name(name):
            reason = (
                "the protocol name is empty"
                if name == ""
                else "a protocol name is lowercase ASCII letters, digits and hyphens"
            )
            problems.append(problem(reason, "bad_protocol_name", "NAME-1", where, name))
            entry_ok = False
        for issue in issues_by_entry.get(name, ()):
            problems.append(_schema_problem(issue, _at(checked, issue.instance_path), prefix))
            entry_ok = False
        if not entry_ok:
            continue
        transports = as_dict(entry["transports"]) or {}
        rpc = transports.get("rpc") is True
        if rpc and scope is Scope.GROUP_PREFERENCES:
            # DECL-PROTO-7: transports.rpc "is valid in preferences only". The entry is kept
            # as declared; ProtocolDeclarations.serves() ignores rpc in groupPreferences.
            problems.append(
                problem(
                    "transports.rpc is valid in preferences only, not in groupPreferences",
                    "rpc_in_group_preferences",
                    "DECL-PROTO-7",
                    where + "/transports/rpc",
                    True,
                )
            )
        declarations.append(
            ProtocolDeclaration(
                name=name,
                versions=tuple(entry["versions"]),
                # DECL-PROTO-6: "An absent transport is false."
                chat=transports.get("chat") is True,
                rpc=rpc,
                # DECL-PROTO-8: unknown keys are kept for the round trip and ignored by checks.
                extra={k: v for k, v in entry.items() if k not in ("versions", "transports")},
                transports_extra={k: v for k, v in transports.items() if k not in ("chat", "rpc")},
            )
        )
    return ProtocolDeclarations(tuple(declarations), scope, tuple(problems), value)


def parse_protocols(
    value: Any, *, scope: Scope | str = Scope.PREFERENCES, strict: bool = False
) -> ProtocolDeclarations:
    """Read the value of a ``protocols`` key (Profile declarations > protocols).

    Lenient by default, for a peer's profile: every problem is collected in
    :attr:`ProtocolDeclarations.problems` and the valid entries are kept, so one bad entry never
    hides the others. Unknown members of an entry or of ``transports``, and names without a
    registered binding, are kept and ignored (DECL-PROTO-8). The value as received stays in
    :attr:`ProtocolDeclarations.raw`, to be stored unchanged (DECL-PROTO-2).

    Args:
        value: the decoded JSON value of the key.
        scope: ``"preferences"`` (user or contact profile) or ``"groupPreferences"`` (group
            profile). In ``groupPreferences`` a true ``transports.rpc`` is reported
            (``rpc_in_group_preferences``, DECL-PROTO-7) and not served.
        strict: raise the first problem instead of collecting it (for validators).

    Returns:
        The declarations; problems' ``position`` is a JSON pointer into ``value``.

    Raises:
        DeclarationError: only with ``strict=True``, for the first problem found.
        ValueError: ``scope`` is not one of the two scopes (a programming error).
    """
    result = _parse(value, _scope(scope), "")
    if strict and result.problems:
        raise result.problems[0]
    return result


def format_protocols(declarations: ProtocolDeclarations) -> dict[str, Any]:
    """Build the value of a ``protocols`` key for our own profile (strict).

    Each entry is ``{"versions": [...], "transports": {...}}`` followed by its unknown members;
    ``transports`` lists ``chat`` and ``rpc`` only when true (an absent transport is false,
    DECL-PROTO-6), then its unknown members.

    Raises:
        DeclarationError: ``rpc`` is true in a ``groupPreferences`` declaration
            (``rpc_in_group_preferences``, DECL-PROTO-7), or the result would break the schema.
    """
    out: dict[str, Any] = {}
    for decl in declarations.declarations:
        if decl.rpc and declarations.scope is Scope.GROUP_PREFERENCES:
            raise problem(
                "transports.rpc is valid in preferences only, not in groupPreferences",
                "rpc_in_group_preferences",
                "DECL-PROTO-7",
                pointer(decl.name, "transports", "rpc"),
                True,
            )
        transports: dict[str, Any] = {}
        if decl.chat:
            transports["chat"] = True
        if decl.rpc:
            transports["rpc"] = True
        transports.update(decl.transports_extra)
        entry: dict[str, Any] = {"versions": list(decl.versions), "transports": transports}
        entry.update(decl.extra)
        out[decl.name] = entry
    for issue in validate(_PROTOCOLS_SCHEMA, out):
        raise _schema_problem(issue, _at(out, issue.instance_path), "")
    return out


def protocols_from_preferences(
    preferences: Any, *, scope: Scope | str = Scope.PREFERENCES, strict: bool = False
) -> ProtocolDeclarations:
    """Read the ``protocols`` key out of a whole ``preferences`` or ``groupPreferences`` object.

    An absent key gives empty declarations without a problem. Positions of problems are JSON
    pointers into ``preferences`` (``/protocols/mcp/versions``).

    Raises:
        DeclarationError: only with ``strict=True`` (``not_an_object`` when ``preferences`` is
            not an object, or the first problem of the key).
    """
    where = _scope(scope)
    prefs = as_dict(preferences)
    if prefs is None:
        err = problem(
            f"{where.value} is not an object", "not_an_object", "DECL-PROTO-1", "", preferences
        )
        if strict:
            raise err
        return ProtocolDeclarations((), where, (err,), None)
    if "protocols" not in prefs:
        return ProtocolDeclarations((), where, (), None)
    result = _parse(prefs["protocols"], where, "/protocols")
    if strict and result.problems:
        raise result.problems[0]
    return result


def _command_keyword(keyword: str) -> str:
    head = keyword.strip().split(maxsplit=1)
    return ascii_lower(head[0].removeprefix("/")) if head else ""


def check_commands(preferences: Any) -> tuple[DeclarationError, ...]:
    """Report ``/_call`` in the ``commands`` menu of ``preferences`` or ``groupPreferences``.

    ``commands`` stays the command menu for people; ``/_call`` is not added to it
    (DECL-PROTO-11). Menus are searched at every depth. Malformed commands are not this
    check's concern and are skipped.

    Returns:
        One ``call_in_commands`` problem per offending command (position: the ``keyword``).
    """
    prefs = as_dict(preferences)
    if prefs is None:
        return ()
    found: list[DeclarationError] = []
    # Depth first, in document order, without recursion (menus can nest arbitrarily deep).
    stack: list[tuple[Any, str]] = []

    def push_menu(commands: Any, where: str) -> None:
        if isinstance(commands, list):
            stack.extend((c, f"{where}/{i}") for i, c in reversed(list(enumerate(commands))))

    push_menu(prefs.get("commands"), "/commands")
    while stack:
        command, where = stack.pop()
        if not isinstance(command, Mapping):
            continue
        keyword = command.get("keyword")
        if isinstance(keyword, str) and _command_keyword(keyword) == "_call":
            found.append(
                problem(
                    "/_call is a command for software and is not added to commands",
                    "call_in_commands",
                    "DECL-PROTO-11",
                    f"{where}/keyword",
                    keyword,
                )
            )
        push_menu(command.get("commands"), f"{where}/commands")
    return tuple(found)


def check_preferences(
    preferences: Any, *, scope: Scope | str = Scope.PREFERENCES
) -> tuple[DeclarationError, ...]:
    """Every declaration problem of a whole ``preferences`` or ``groupPreferences`` object:
    its ``protocols`` key and its ``commands`` menu (DECL-PROTO-1..8, DECL-PROTO-11, NAME-1).
    """
    declared = protocols_from_preferences(preferences, scope=scope)
    return declared.problems + check_commands(preferences)


def with_protocols(preferences: Any, declarations: ProtocolDeclarations) -> dict[str, Any]:
    """A copy of ``preferences`` (or ``groupPreferences``) with its ``protocols`` key set.

    Every other key stays as it was, ``commands`` included; an existing ``protocols`` key keeps
    its place. Empty declarations remove the key. The scope of ``declarations`` says which kind
    of object ``preferences`` is.

    Raises:
        DeclarationError: ``preferences`` is not an object (``not_an_object``), a declaration
            cannot be formatted (see :func:`format_protocols`), or ``commands`` holds
            ``/_call`` (``call_in_commands``, DECL-PROTO-11).
    """
    prefs = as_dict(preferences)
    if prefs is None:
        raise problem(
            f"{declarations.scope.value} is not an object",
            "not_an_object",
            "DECL-PROTO-1",
            "",
            preferences,
        )
    out = dict(prefs)
    if declarations:
        out["protocols"] = format_protocols(declarations)
    else:
        out.pop("protocols", None)
    bad_commands = check_commands(out)
    if bad_commands:
        raise bad_commands[0]
    return out
