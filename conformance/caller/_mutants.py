"""The catalogue of mutant clients: the reference client with one requirement switched off.

The selftest runs the harness against each (``RunOptions.builtin = mutant.name``) and requires
a ``FAIL`` or ``WARN`` on a check that names one of the mutant's requirements. The behaviours
are in ``_mutant_clients.py``; this module is data, cheap to import.
"""

from __future__ import annotations

import sys
from typing import Final

from simplex_protocols.conformance._model import Mutant

__all__ = ["MUTANTS", "mutant_argv", "mutant_command"]


def _m(slug: str, requirements: tuple[str, ...], description: str) -> Mutant:
    return Mutant(f"client.{slug}", requirements, description)


MUTANTS: Final[tuple[Mutant, ...]] = (
    _m(
        "third-party-reply",
        ("CALL-CLR-4",),
        "takes a message from another chat that carries the request's JSON-RPC id as the answer",
    ),
    _m(
        "unmentioned-member-reply",
        ("CALL-CLR-5",),
        "in a group call with a mention, takes every member's quoting replies",
    ),
    _m("drop-text-replies", ("CALL-CLR-3",), "drops replies that are not protocol messages"),
    _m(
        "match-by-id",
        ("CALL-CLR-1", "MCP-MSG-9"),
        "matches replies by the JSON-RPC id, not by the quote (takes answers to another command)",
    ),
    _m(
        "dedupe-replies", ("CALL-CLR-2",), "drops a reply identical to an earlier one of its sender"
    ),
    _m(
        "first-answer-only",
        ("CALL-CLR-2",),
        "in a broadcast, keeps only the first member that answered",
    ),
    _m("early-return", ("CALL-CLR-2",), "ends the call at the first protocol message"),
    _m(
        "unknown-error-retry",
        ("RPC-ERR-6",),
        "repeats a request after any error, an unknown code without retryAfter included",
    ),
    _m(
        "ignore-retry-after",
        ("RPC-ERR-5", "RPC-ENV-6"),
        "repeats a request at once after an error that allows a repeat, without waiting retryAfter",
    ),
    _m("no-a2a-version", ("A2A-SP-3",), "sends A2A requests without A2A-Version"),
    _m("credential-in-group", ("A2A-AUTHZ-4",), "sends its credential in group calls too"),
    _m(
        "envelope-version",
        ("MCP-VER-3", "A2A-SP-6"),
        "puts a version into mcp and a2a Service RPC envelopes",
    ),
    _m(
        "envelope-member-in-request",
        ("RPC-REQ-6",),
        "copies the envelope's protocol member into the request it sends over Service RPC",
    ),
    _m("one-key-for-all", ("RPC-SIG-5",), "signs requests to every responder with one key"),
    _m(
        "request-key-mismatch",
        ("RPC-REQ-5",),
        "sends a requestKey of one key and signs the request with another",
    ),
    _m("no-meta-revision", ("MCP-VER-2",), "sends MCP requests without the revision in _meta"),
    _m("jsonrpc-missing", ("MCP-MSG-1",), 'sends MCP requests without "jsonrpc": "2.0"'),
    _m(
        "params-service-parameters",
        ("A2A-SP-1", "A2A-SP-3"),
        "puts a2a-service-parameters inside params instead of the request object",
    ),
    _m(
        "method-renamed",
        ("A2A-MSG-1",),
        "renames A2A methods to the 0.3 slash names (message/send, message/stream, tasks/resubscribe)",
    ),
    _m(
        "credential-in-metadata",
        ("A2A-AUTHZ-3",),
        "sends its credential in the message metadata instead of the Authorization parameter",
    ),
    _m("no-stream-resume", ("A2A-STR-5",), "gives up on a stream that lost replies"),
    _m(
        "input-required-reused-id",
        ("MCP-MSG-6",),
        "continues an input_required result with a request that reuses the first one's id",
    ),
    _m(
        "split-command",
        ("CALL-SIZE-1",),
        "sends a command too large for one message in several messages",
    ),
    _m("double-space", ("CALL-CMD-3",), "writes two spaces between the parts of /_call"),
    _m("mention-unquoted", ("CALL-CMD-4",), "writes a mention of a name with spaces unquoted"),
    _m(
        "drop-large-replies",
        ("CALL-SIZE-1", "RPC-LIM-3"),
        "drops replies and responses over 10,000 bytes as too large",
    ),
)


def mutant_argv(name: str) -> list[str]:
    """The command that runs a mutant client."""
    return [sys.executable, "-m", "simplex_protocols.conformance.caller.mutant_client", name]


def mutant_command(name: str) -> str:
    """The same, as one command line (for ``--command``)."""
    import shlex

    return shlex.join(mutant_argv(name))
