"""Vector operations of the MCP binding (``spec/vectors/mcp/``).

- ``mcp.build_request``: ``{"method", "params"?, "id", "revision"?, "client_info"?,
  "progress_token"?}`` → the JSON-RPC request a caller sends (``build_request``).
- ``mcp.check_request``: the JSON text of a request a caller sends after ``/_call mcp`` (or in
  an envelope's ``request``) → ``{"method", "id", "revision"}``; refused when it is not one
  JSON-RPC request of revision 2026-07-28 or later naming its revision in ``_meta``.
- ``mcp.check_envelope``: a Service RPC request envelope (text) for ``mcp`` →
  ``{"method", "id", "revision"}``; refused when it carries a ``version`` or its request fails
  ``mcp.check_request``.
- ``mcp.check_declaration``: the JSON text of a ``protocols`` value → the ``mcp`` entry's
  ``versions``; refused when one is not an MCP revision of 2026-07-28 or later.
- ``mcp.is_final``: ``{"request", "message"}`` → whether the message ends the bot's answer.
- ``mcp.choose_revision``: ``{"offered": [...]}`` → the first revision this caller speaks, or
  ``null``.

Error codes: the library's (``bad_method``, ``bad_request_id``, ``bad_revision``,
``bad_params``, ``bad_progress_token``, the wire decoder's ``duplicate_key``...) and
``not_an_object``, ``batch``, ``not_jsonrpc``, ``not_a_request``, ``missing_revision``,
``handshake_revision``, ``envelope_version``, ``wrong_protocol``, ``no_mcp_entry``.

The caller helpers import the MCP SDK's types, so they are imported on first use: loading the
registry (a driver's hello) stays fast.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from simplex_protocols.errors import CallFormatError

from . import op
from ._binding import check_jsonrpc_request, declared, envelope_request
from ._binding import decoded as _decoded
from ._binding import refuse as _refuse

__all__: list[str] = []

#: MCP-VER-1, MCP-MSG-1: the first revision this binding carries.
FIRST_REVISION: Final = "2026-07-28"

#: The ``_meta`` key that names the request's revision (MCP-VER-2).
REVISION_KEY: Final = "io.modelcontextprotocol/protocolVersion"

_REVISION: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _check_revision(revision: Any, requirement: str) -> str:
    if not isinstance(revision, str) or _REVISION.fullmatch(revision) is None:
        raise _refuse(
            "an MCP revision is a date, YYYY-MM-DD", "bad_revision", requirement=requirement
        )
    # Revisions are dates: they compare as text.
    if revision < FIRST_REVISION:
        raise _refuse(
            f"revision {revision} starts with the initialize handshake; this binding carries "
            f"{FIRST_REVISION} and later",
            "handshake_revision",
            requirement=requirement,
        )
    return revision


def check_request_value(value: Any) -> dict[str, Any]:
    """The checks of ``mcp.check_request`` on a decoded value."""
    # MCP-MSG-1: "a single JSON-RPC request", never a batch.
    method, rid = check_jsonrpc_request(value, call="an MCP call", requirement="MCP-MSG-1")
    params = value.get("params", {})
    if not isinstance(params, dict):
        raise _refuse("params is a JSON object", "bad_params", requirement="MCP-MSG-1")
    meta = params.get("_meta")
    if meta is None:
        raise _refuse("the request has no params._meta", "missing_revision", "MCP-VER-2")
    if not isinstance(meta, dict):
        raise _refuse("params._meta is a JSON object", "bad_params", requirement="MCP-VER-2")
    if REVISION_KEY not in meta:
        raise _refuse(f"_meta has no {REVISION_KEY}", "missing_revision", "MCP-VER-2")
    revision = _check_revision(meta[REVISION_KEY], "MCP-MSG-1")
    return {"method": method, "id": rid, "revision": revision}


@op("mcp.build_request")
def build_request_(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """The request a caller builds (``simplex_protocols.bindings.mcp.build_request``)."""
    from simplex_protocols.bindings.mcp import build_request

    try:
        kwargs: dict[str, Any] = {"request_id": value.get("id")}
        if "revision" in value:
            kwargs["revision"] = value["revision"]
        if "client_info" in value:
            kwargs["client_info"] = value["client_info"]
        if "progress_token" in value:
            kwargs["progress_token"] = value["progress_token"]
        return build_request(value.get("method"), value.get("params"), **kwargs)
    except CallFormatError as exc:
        raise _refuse(exc.reason, exc.code, exc.requirement) from exc


@op("mcp.check_request")
def check_request(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """Whether a caller's request is one MCP call of this binding (MCP-MSG-1, MCP-VER-2)."""
    return check_request_value(_decoded(value))


@op("mcp.check_envelope")
def check_envelope(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """A requester's envelope for ``mcp``: no ``version`` (MCP-VER-3), a valid request."""
    request = envelope_request(
        value,
        "mcp",
        versioned="an mcp envelope carries no version; the request names its revision",
        requirement="MCP-VER-3",
    )
    return check_request_value(request)


@op("mcp.check_declaration")
def check_declaration(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """The ``mcp`` entry of a ``protocols`` value: revisions of 2026-07-28 on (MCP-VER-1)."""
    entry = declared(value, "mcp")
    for version in entry.versions:
        _check_revision(version, "MCP-VER-1")
    return {"versions": list(entry.versions)}


@op("mcp.is_final")
def is_final_answer(value: Any, args: Mapping[str, Any]) -> bool:
    """Whether ``message`` ends the answer to ``request`` (MCP-MSG-2, MCP-MSG-4)."""
    from simplex_protocols.bindings.mcp import is_final

    return is_final(value["request"], value["message"])


@op("mcp.choose_revision")
def choose_revision_(value: Any, args: Mapping[str, Any]) -> str | None:
    """The revision a caller uses with a bot that offers ``offered`` (MCP-VER-1)."""
    from simplex_protocols.bindings.mcp import choose_revision

    return choose_revision(value["offered"])
