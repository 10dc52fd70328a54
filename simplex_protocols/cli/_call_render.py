"""Readable text for people: plans, websites, and the MCP and A2A messages of a call.

Everything a bot or a website sent is shown as data, never interpreted: control characters
are replaced, so a peer's text cannot move the cursor or rewrite the terminal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from simplex_protocols._wire import dumps
from simplex_protocols.declarations import DeclarationSource
from simplex_protocols.discovery import (
    AddressPlan,
    DocumentStatus,
    WebsiteAddress,
    WebsiteDiscovery,
)

__all__ = [
    "clean",
    "pretty",
    "render_a2a",
    "render_discovery",
    "render_mcp",
    "render_plan",
]

# C0 and C1 controls but tab and newline, DEL, and the bidirectional controls.
_UNSAFE: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

_SOURCES: Final = {
    DeclarationSource.LINK_DATA: "link data",
    DeclarationSource.PUBLIC_GROUP: "public group record",
    DeclarationSource.WEBSITE: "website",
    DeclarationSource.DEFAULT: "default",
}

_STATUS: Final = {
    "ok": "not connected",
    "known": "already a contact",
    "ownLink": "your own address",
    "contactViaAddress": "a contact of yours has this address",
    "connectingProhibit": "connecting already",
    "connectingConfirmReconnect": "connecting already (not confirmed)",
    "connecting": "connecting already",
    "noRelays": "no relays",
    "updateRequired": "needs a newer client",
}


def clean(text: str, limit: int = 2000) -> str:
    """A peer's text made safe for a terminal, and cut at ``limit`` characters."""
    flat = _UNSAFE.sub("\ufffd", text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def pretty(value: Any) -> str:
    """A JSON value indented for people (readable output only, never sent anywhere)."""
    return clean(json.dumps(value, indent=2, ensure_ascii=False), 20_000)  # noqa: TID251


def _indent(text: str, prefix: str = "  ") -> list[str]:
    return [prefix + line for line in text.splitlines()] or [prefix]


# --------------------------------------------------------------------------- plans


def _peers(value: frozenset[Any]) -> str:
    return ", ".join(sorted(str(p) for p in value)) or "nobody"


def render_plan(plan: AddressPlan, *, indent: str = "") -> list[str]:
    """What an address declares, as a short block of lines."""
    head = clean(plan.display_name or "(no name)", 200)
    extras = [x for x in (plan.peer_type,) if x]
    title = f"{head} ({', '.join(extras)})" if extras else head
    if plan.short_description:
        title += f": {clean(plan.short_description, 200)}"
    kind = {
        "contact": "business address" if plan.business else "contact address",
        "group": "group",
        "channel": "channel",
        "invitation": "one-time invitation",
    }[plan.kind.value]
    lines = [title, f"  address    {plan.address}"]
    if plan.simplex_name:
        lines.append(f"  name       {plan.simplex_name}")
    lines.append(f"  kind       {kind}; {_STATUS.get(plan.status, plan.status)}")
    peers = plan.peers
    if peers is not None:
        label = "serves" if plan.serves is not None else "audience"
        lines.append(f"  {label:<10} {_peers(peers.value)} (from the {_SOURCES[peers.source]})")
    if plan.change_frequency is not None and plan.change_frequency.value is not None:
        freq = plan.change_frequency
        lines.append(f"  updates    {freq.value} (from the {_SOURCES[freq.source]})")
    if plan.protocols:
        lines.append("  protocols")
        for name, decl in plan.protocols.items():
            transports = [t for t, on in (("chat", decl.chat), ("rpc", decl.rpc)) if on]
            lines.append(
                f"    {name:<6} {', '.join(decl.versions) or '(no version)':<14} "
                f"{' + '.join(transports) or 'no transport'}"
            )
    else:
        lines.append("  protocols  none declared")
    lines.extend(f"  note: {note}" for note in plan.notes)
    lines.extend(f"  ignored: {p.code} at {p.position or '/'}" for p in plan.problems)
    return [indent + line for line in lines]


# --------------------------------------------------------------------------- websites

_DOCS: Final = {
    "llms.txt": "llms.txt",
    "simplex.json": "simplex.json",
    "link": "link relations",
    "agent-card": "agent card",
}


def _audience_words(peers: Sequence[str]) -> str:
    """Peer types in the words of llms.txt where they have some."""
    words = {"human": "people", "agent": "agents"}
    named = [words.get(p, p) for p in peers]
    if not named:
        return "nobody"
    if len(named) == 2 and set(named) == {"people", "agents"}:
        return "people and agents"
    return ", ".join(named)


def _website_line(address: WebsiteAddress) -> str:
    kind = address.kind.value
    if address.business:
        kind = "business contact"
    parts = [kind]
    if address.audience is not None:
        parts.append("for " + _audience_words(address.audience))
    if address.protocols:
        parts.append(", ".join(address.protocols))
    if address.frequency:
        parts.append(address.frequency)
    title = clean(address.title or "(untitled)", 200)
    sources = ", ".join(_DOCS[s.value] for s in address.sources)
    return f"{title}: {'; '.join(parts)}  [{sources}]"


def render_discovery(
    site: WebsiteDiscovery,
    plans: Mapping[str, AddressPlan | str] | None = None,
) -> list[str]:
    """The documents read, and each address with its declarations (or why they are missing)."""
    lines = [site.url]
    for doc in site.documents:
        name = _DOCS[doc.source.value]
        if doc.status is DocumentStatus.FOUND:
            n = doc.addresses
            state = f"found, {n} address{'es' if n != 1 else ''}"
            if doc.final_url and doc.final_url != doc.url:
                state += f" (at {doc.final_url})"
        elif doc.status is DocumentStatus.ABSENT:
            state = "absent"
        else:
            state = f"failed: {doc.error.reason if doc.error else 'unknown'}"
        lines.append(f"  {name:<15} {state}")
    for problem in site.problems:
        where = f" line {problem.line}" if problem.line else ""
        where += f" at {problem.position}" if problem.position else ""
        lines.append(f"  skipped in {_DOCS[problem.source.value]}{where}: {problem.code}")
    if not site.addresses:
        lines.append("")
        lines.append("No SimpleX address found.")
    for address in site.addresses:
        lines.append("")
        lines.append(_website_line(address))
        lines.append(f"  {address.address}")
        found = (plans or {}).get(address.address)
        if isinstance(found, AddressPlan):
            lines.extend(render_plan(found, indent="  "))
        elif isinstance(found, str):
            lines.append(f"  link data not read: {found}")
    return lines


# --------------------------------------------------------------------------- MCP


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _jsonrpc_error(message: Mapping[str, Any]) -> list[str]:
    error = message.get("error")
    error = error if isinstance(error, Mapping) else {}
    lines = [f"error {error.get('code')}: {clean(str(error.get('message', '')), 500)}"]
    if "data" in error:
        lines.extend(_indent(pretty(error["data"])))
    return lines


def _mcp_content(result: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    content = result.get("content")
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "text" and isinstance(item.get("text"), str):
            lines.extend(clean(item["text"]).splitlines() or [""])
        else:
            lines.append(f"[{clean(str(item.get('type', 'content')), 40)} content]")
    if not lines and "structuredContent" in result:
        lines.extend(pretty(result["structuredContent"]).splitlines())
    return lines


def _tool_signature(tool: Mapping[str, Any]) -> str:
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    required = schema.get("required") if isinstance(schema, Mapping) else None
    args: list[str] = []
    for name, spec in (props or {}).items() if isinstance(props, Mapping) else []:
        kind = spec.get("type") if isinstance(spec, Mapping) else None
        optional = "" if isinstance(required, list) and name in required else "?"
        args.append(f"{name}{optional}: {kind}" if isinstance(kind, str) else f"{name}{optional}")
    return f"{clean(str(tool.get('name', '?')), 100)}({', '.join(clean(a, 100) for a in args)})"


def render_mcp(method: str, message: Mapping[str, Any]) -> list[str]:
    """One MCP message of an answer: a notification or the response."""
    if message.get("method") == "notifications/progress":
        params = message.get("params")
        params = params if isinstance(params, Mapping) else {}
        total = params.get("total")
        text = f"progress {_number(params.get('progress'))}"
        if total is not None:
            text += f"/{_number(total)}"
        if isinstance(params.get("message"), str):
            text += f": {clean(params['message'], 500)}"
        return [text]
    if isinstance(message.get("method"), str):
        params = message.get("params")
        return [f"{clean(str(message['method']), 100)} {clean(dumps(params), 500)}"]
    if "error" in message:
        return _jsonrpc_error(message)
    result = message.get("result")
    if not isinstance(result, Mapping):
        return _indent(pretty(message), "")
    if result.get("resultType") == "input_required":
        requests = result.get("inputRequests")
        keys = ", ".join(requests) if isinstance(requests, Mapping) else ""
        return [f"the bot asks for input before it answers ({clean(keys, 300)})"]
    if method == "tools/list" and isinstance(result.get("tools"), list):
        tools = [t for t in result["tools"] if isinstance(t, Mapping)]
        lines = [f"{len(tools)} tool{'s' if len(tools) != 1 else ''}:"]
        for tool in tools:
            desc = tool.get("description")
            line = f"  {_tool_signature(tool)}"
            if isinstance(desc, str) and desc.strip():
                line += f"  {clean(desc.strip().splitlines()[0], 200)}"
            lines.append(line)
        return lines
    if method == "tools/call":
        lines = _mcp_content(result)
        if result.get("isError") is True:
            return ["tool error:", *_indent("\n".join(lines))]
        return lines or ["(no content)"]
    if method == "server/discover":
        versions = result.get("supportedVersions")
        info = result.get("serverInfo")
        lines = []
        if isinstance(info, Mapping):
            lines.append(
                f"server {clean(str(info.get('name', '?')), 100)} {clean(str(info.get('version', '')), 40)}".rstrip()
            )
        if isinstance(versions, list):
            lines.append("revisions " + ", ".join(clean(str(v), 40) for v in versions))
        caps = result.get("capabilities")
        if isinstance(caps, Mapping):
            lines.append("capabilities " + (", ".join(clean(str(k), 40) for k in caps) or "none"))
        return lines or _indent(pretty(result), "")
    shown = {k: v for k, v in result.items() if k not in ("_meta", "resultType")}
    return pretty(shown).splitlines()


# --------------------------------------------------------------------------- A2A


def _parts_text(parts: Any) -> list[str]:
    lines: list[str] = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, Mapping):
            continue
        if isinstance(part.get("text"), str):
            lines.extend(clean(part["text"]).splitlines() or [""])
        elif "data" in part:
            lines.append(clean(dumps(part["data"]), 500))
        elif isinstance(part.get("url"), str):
            lines.append(f"[file {clean(part['url'], 200)}]")
        elif "raw" in part:
            lines.append(f"[{clean(str(part.get('mediaType', 'bytes')), 60)} data]")
    return lines


def _state(status: Any) -> str:
    state = status.get("state") if isinstance(status, Mapping) else None
    if not isinstance(state, str):
        return "unknown"
    return state.removeprefix("TASK_STATE_").lower().replace("_", " ")


def _task_lines(task: Mapping[str, Any]) -> list[str]:
    status = task.get("status")
    lines = [f"task {clean(str(task.get('id', '?')), 80)}: {_state(status)}"]
    message = status.get("message") if isinstance(status, Mapping) else None
    if isinstance(message, Mapping):
        lines.extend(_indent("\n".join(_parts_text(message.get("parts")))))
    for artifact in task.get("artifacts", []) if isinstance(task.get("artifacts"), list) else []:
        if isinstance(artifact, Mapping):
            name = artifact.get("name")
            lines.append(f"  artifact{' ' + clean(name, 100) if isinstance(name, str) else ''}:")
            lines.extend(_indent("\n".join(_parts_text(artifact.get("parts"))), "    "))
    return lines


def render_a2a(method: str, message: Mapping[str, Any]) -> list[str]:
    """One A2A message of an answer: a response, or one item of a stream."""
    if "error" in message:
        return _jsonrpc_error(message)
    result = message.get("result")
    if not isinstance(result, Mapping):
        return _indent(pretty(message), "")
    if isinstance(result.get("task"), Mapping):
        return _task_lines(result["task"])
    if isinstance(result.get("message"), Mapping):
        return ["message:", *_indent("\n".join(_parts_text(result["message"].get("parts"))))]
    if isinstance(result.get("statusUpdate"), Mapping):
        update = result["statusUpdate"]
        status = update.get("status")
        lines = [f"status: {_state(status)}"]
        msg = status.get("message") if isinstance(status, Mapping) else None
        if isinstance(msg, Mapping):
            lines.extend(_indent("\n".join(_parts_text(msg.get("parts")))))
        return lines
    if isinstance(result.get("artifactUpdate"), Mapping):
        artifact = result["artifactUpdate"].get("artifact")
        artifact = artifact if isinstance(artifact, Mapping) else {}
        name = artifact.get("name")
        return [
            f"artifact{' ' + clean(name, 100) if isinstance(name, str) else ''}:",
            *_indent("\n".join(_parts_text(artifact.get("parts")))),
        ]
    if isinstance(result.get("status"), Mapping) and "id" in result:
        return _task_lines(result)
    if isinstance(result.get("tasks"), list):
        tasks = [t for t in result["tasks"] if isinstance(t, Mapping)]
        lines = [f"{len(tasks)} task{'s' if len(tasks) != 1 else ''}"]
        for task in tasks:
            lines.extend(_indent("\n".join(_task_lines(task))))
        return lines
    if isinstance(result.get("name"), str) and "supportedInterfaces" in result:
        lines = [f"agent {clean(result['name'], 200)}"]
        if isinstance(result.get("description"), str):
            lines.append(f"  {clean(result['description'], 500)}")
        for interface in result.get("supportedInterfaces") or []:
            if isinstance(interface, Mapping):
                lines.append(
                    f"  interface {clean(str(interface.get('protocolBinding', '?')), 100)} "
                    f"{clean(str(interface.get('url', '?')), 300)}"
                )
        return lines
    return pretty(result).splitlines()
