"""Checks of what the bot declares, read from its link data before connecting (no message is
sent), and of the group preferences a caller sees."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from simplex_protocols._schema import validate
from simplex_protocols.conformance._model import Outcome
from simplex_protocols.core import ChatAPI, ChatCore, GroupRef
from simplex_protocols.declarations import check_commands, is_protocol_name
from simplex_protocols.errors import UnexpectedResponseError

from ._context import CheckContext
from ._probes import a2a_request, describe, mcp_request
from ._registry import check

_REVISION = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MAJOR_MINOR = re.compile(r"^\d+\.\d+$")
_FIRST_MCP_REVISION = "2026-07-28"
_PEER_TYPES = frozenset({"human", "bot", "business", "agent"})


@check(
    "decl.protocols",
    "The protocols declaration in the profile's preferences is valid",
    ("DECL-PROTO-1", "DECL-PROTO-3", "DECL-PROTO-4", "DECL-PROTO-5", "DECL-PROTO-14"),
    transports=("-",),
    messages=0,
)
async def protocols_declaration(ctx: CheckContext) -> Outcome:
    prefs = ctx.facts.preferences
    if "protocols" not in prefs:
        return ctx.not_applicable("the profile's preferences declare no protocols")
    value: Any = prefs["protocols"]
    problems: list[str] = []
    for issue in validate("protocols", value):
        problems.append(f"the value breaks the schema at {issue.instance_path or '/'}")
    if isinstance(value, Mapping):
        for name, decl in value.items():
            if not is_protocol_name(name) or not name:
                problems.append(f"{name!r} is not a protocol name (NAME-1)")
            if not isinstance(decl, Mapping):
                continue
            if "versions" not in decl:
                problems.append(f"{name}: versions is missing (DECL-PROTO-4)")
            elif isinstance(decl["versions"], list) and not decl["versions"]:
                problems.append(f"{name}: versions lists no version (DECL-PROTO-4)")
            if "transports" not in decl:
                problems.append(f"{name}: transports is missing (DECL-PROTO-5)")
    if problems:
        return ctx.breach("; ".join(problems[:5]), problems=problems)
    return ctx.passed("protocols validates: " + ", ".join(sorted(value)), protocols=sorted(value))


@check(
    "decl.commands-menu",
    "/_call is not in the commands menu",
    ("DECL-PROTO-11",),
    transports=("-",),
    messages=0,
)
async def commands_menu(ctx: CheckContext) -> Outcome:
    found = check_commands(dict(ctx.facts.preferences))
    if found:
        return ctx.breach(
            "the commands menu lists /_call at " + ", ".join(str(p.position or "?") for p in found)
        )
    return ctx.passed("the commands menu does not list /_call")


@check(
    "decl.serves",
    "The link data's serves lists peer types",
    ("DECL-SERVES-1",),
    transports=("-",),
    messages=0,
)
async def serves(ctx: CheckContext) -> Outcome:
    if "serves" not in ctx.facts.link_data:
        return ctx.passed("serves is absent (the address is for human peers)")
    value = ctx.facts.link_data["serves"]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return ctx.breach(f"serves is not a list of peer types: {value!r}")
    unknown = sorted(set(value) - _PEER_TYPES)
    if unknown:
        return ctx.breach(
            "serves lists values that are not peer types: " + ", ".join(unknown),
            serves=value,
        )
    return ctx.passed("serves: " + ", ".join(value), serves=value)


@check(
    "mcp.declared-revisions",
    "The mcp declaration lists MCP revisions from 2026-07-28 on",
    ("MCP-VER-1",),
    transports=("-",),
    protocols=("mcp",),
    messages=0,
)
async def mcp_revisions(ctx: CheckContext) -> Outcome:
    versions = ctx.facts.versions("mcp")
    bad = [v for v in versions if not _REVISION.match(v) or v < _FIRST_MCP_REVISION]
    if bad:
        return ctx.breach(
            "versions lists what is not an MCP revision of 2026-07-28 or later: " + ", ".join(bad),
            versions=list(versions),
        )
    return ctx.passed("versions: " + ", ".join(versions), versions=list(versions))


@check(
    "a2a.declared-versions",
    "The a2a declaration lists A2A versions as Major.Minor",
    ("A2A-ID-3",),
    transports=("-",),
    protocols=("a2a",),
    messages=0,
)
async def a2a_versions(ctx: CheckContext) -> Outcome:
    versions = ctx.facts.versions("a2a")
    bad = [v for v in versions if not _MAJOR_MINOR.match(v)]
    if bad:
        return ctx.breach(
            "versions lists what is not Major.Minor: " + ", ".join(bad), versions=list(versions)
        )
    return ctx.passed("versions: " + ", ".join(versions), versions=list(versions))


def _group_protocols(group_info: Mapping[str, Any]) -> Mapping[str, Any] | None:
    profile = group_info.get("groupProfile")
    prefs = profile.get("groupPreferences") if isinstance(profile, Mapping) else None
    protocols = prefs.get("protocols") if isinstance(prefs, Mapping) else None
    return protocols if isinstance(protocols, Mapping) else None


async def _group_info(core: ChatCore, chat: object) -> Mapping[str, Any] | None:
    """A group's info as a caller sees it; ``None`` when ``chat`` is not a group or the core
    answers with something else."""
    if not isinstance(chat, GroupRef):
        return None
    try:
        return await ChatAPI(core).group_info(chat.group_id)
    except UnexpectedResponseError:
        return None


async def _business_group_info(ctx: CheckContext) -> Mapping[str, Any] | None:
    identity = await ctx.caller("A")
    return await _group_info(identity.core, identity.chat)


@check(
    "decl.business-chat",
    "A business chat's group preferences carry the business profile's protocols",
    ("DECL-PROTO-10",),
    transports=("chat",),
    messages=1,
    mutation_exempt=(
        "the copy is made by the chat core of the business when it accepts the connection; "
        "no change to a bot's code can remove it"
    ),
)
async def business_chat(ctx: CheckContext) -> Outcome:
    if not ctx.facts.plan.business:
        return ctx.not_applicable("the address is not a business address")
    info = await _business_group_info(ctx)
    if info is None:
        return ctx.untestable("the business chat could not be read")
    copied = _group_protocols(info)
    declared = ctx.facts.preferences.get("protocols")
    if copied is None:
        return ctx.breach("the business chat's groupPreferences have no protocols")
    if isinstance(declared, Mapping) and set(copied) != set(declared):
        return ctx.breach(
            "the business chat's protocols ("
            + ", ".join(sorted(copied))
            + ") differ from the profile's ("
            + ", ".join(sorted(declared))
            + ")"
        )
    return ctx.passed("the business chat's groupPreferences carry " + ", ".join(sorted(copied)))


#: The request the suite sends for each protocol it knows, to see that the owner answers it in
#: the business chat: one that every bot serving the protocol answers, with a result or an error.
_OWNER_PROBES: Final = {"mcp": "server/discover", "a2a": "GetExtendedAgentCard"}


@check(
    "decl.business-chat-answers",
    "The owner answers each protocol a business chat's groupPreferences declare, in that chat",
    ("DECL-PROTO-16",),
    transports=("chat",),
    messages=2,
)
async def business_chat_answers(ctx: CheckContext) -> Outcome:
    # DECL-PROTO-16: a protocol in a group's groupPreferences claims that the group's owners
    # answer it there; in a business chat, the owner is the bot.
    if not ctx.facts.plan.business:
        return ctx.not_applicable("the address is not a business address")
    info = await _business_group_info(ctx)
    copied = _group_protocols(info) if info is not None else None
    if not copied:
        return ctx.untestable("the business chat declares no protocols to call")
    chat_protocols = sorted(
        name
        for name, decl in copied.items()
        if isinstance(decl, Mapping)
        and isinstance(decl.get("transports"), Mapping)
        and decl["transports"].get("chat") is True
    )
    tried = [name for name in chat_protocols if name in _OWNER_PROBES]
    if not tried:
        return ctx.untestable(
            "the business chat declares no protocol the suite can call ("
            + (", ".join(chat_protocols) or "none over chat")
            + ")"
        )
    silent: list[str] = []
    for name in tried:
        if name == "mcp":
            request = mcp_request(ctx, _OWNER_PROBES[name])
        else:
            request = a2a_request(ctx, _OWNER_PROBES[name])
        answer = await ctx.call(request, protocol=name, transport="chat")
        message = answer.message
        if message is None or message.get("id") != request["id"]:
            silent.append(f"{name} ({describe(answer)})")
    if silent:
        return ctx.breach(
            "the business chat declares protocols its owner does not answer there: "
            + "; ".join(silent)
        )
    skipped = sorted(set(chat_protocols) - set(tried))
    detail = "the owner answers " + ", ".join(tried) + " in the business chat"
    if skipped:
        detail += " (not tried: " + ", ".join(skipped) + ")"
    return ctx.passed(detail, protocols=tried)


@check(
    "decl.group-preferences",
    "No transports.rpc in group preferences (business chat, test group)",
    ("DECL-PROTO-7",),
    transports=("chat",),
    messages=1,
)
async def group_preferences(ctx: CheckContext) -> Outcome:
    seen: dict[str, Mapping[str, Any]] = {}
    if ctx.facts.plan.business:
        info = await _business_group_info(ctx)
        protocols = _group_protocols(info) if info is not None else None
        if protocols is not None:
            seen["the business chat"] = protocols
    if ctx.state.cache.get("group-available"):
        setup = await ctx.environment.group()
        identity = ctx.session.identity("A")
        info = await _group_info(identity.core, setup.groups["A"])
        protocols = _group_protocols(info) if info is not None else None
        if protocols is not None:
            seen["the test group"] = protocols
    if not seen:
        return ctx.not_applicable("no group preferences with protocols to read")
    offending = [
        f"{where}: {name}"
        for where, protocols in seen.items()
        for name, decl in protocols.items()
        if isinstance(decl, Mapping)
        and isinstance(decl.get("transports"), Mapping)
        and decl["transports"].get("rpc") is True
    ]
    if offending:
        return ctx.breach(
            "transports.rpc is declared in groupPreferences (" + "; ".join(offending) + ")"
        )
    return ctx.passed("no group preferences declare transports.rpc (" + ", ".join(seen) + ")")
