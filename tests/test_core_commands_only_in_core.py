"""Only the core client writes chat core commands: apps build them with its builders.

``ChatAPI`` and the builders of ``simplex_protocols.core.commands`` are the only way an app talks
to a core, so no string literal that begins a core command may appear in the shipped code
outside ``simplex_protocols/core/`` and the simulator. This test reads that code with ``ast``
and names the file and line of every string constant and f-string that begins one.

A string is flagged when it begins a command, or holds one after a space, a bracket or a quote
(a log line that names a command writes it as much as a builder does). A command begins with
``/_`` and a letter (``/_send``, ``/_connect plan``), or with one of the other heads the
builders write (``/user``, ``/users``, ``/network``, ``/sql``, read from the
builders' own source so that a new builder extends the list), or with the CLI's short form
``/connect``. ``/_call`` is not a command of the core but the text of a message (the spec's
chat transport), so it is allowed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[1]
BUILDERS: Final = ROOT / "simplex_protocols" / "core" / "_commands.py"

#: The folders whose code is read.
SCANNED: Final = ("simplex_protocols", "mcp_server", "conformance", "examples", "bench")

#: Where commands may be written: the core client itself, the simulated core (which parses
#: them), and the conformance suite's deliberately broken bots and clients, which rewrite the
#: commands they send.
EXEMPT: Final = (
    "simplex_protocols/core/",
    "simplex_protocols/sim/",
    "conformance/live/_mutants.py",
    "conformance/caller/_mutant_clients.py",
)

#: Files of the MCP server that still write their commands while it moves onto ChatAPI. Each
#: entry goes when its file is converted; an entry whose file has no command left fails the
#: test, so the list only shrinks.
PENDING: Final[frozenset[str]] = frozenset()

#: The message text of the chat transport (spec: ``/_call <protocol> <json>``).
CALL_FRAMING: Final = "/_call"

#: Short forms of the core's CLI that an app could be tempted to write.
CLI_HEADS: Final = frozenset({"/connect"})


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants: prose, never sent."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def string_heads(source: str) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of every string that can begin a command: a string constant, or the
    literal start of an f-string (a literal part inside an f-string begins nothing)."""
    tree = ast.parse(source)
    skipped = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            for part in ast.walk(node):
                skipped.add(id(part))
            first = node.values[0] if node.values else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield node.lineno, first.value
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in skipped
        ):
            yield node.lineno, node.value


def _first_word(text: str) -> str:
    words = text.split(maxsplit=1)
    return words[0] if words else ""


def builder_heads() -> frozenset[str]:
    """The first words of the commands the builders write, from their source."""
    heads = {_first_word(text) for _, text in string_heads(BUILDERS.read_text(encoding="utf-8"))}
    return frozenset(h for h in heads if h.startswith("/") and len(h) > 1)


def begins_command(text: str, heads: frozenset[str]) -> bool:
    """Whether ``text`` begins a core command (``/_call`` framing excepted)."""
    head = _first_word(text)
    if head.rstrip(",.;:)") == CALL_FRAMING:
        return False
    if text.startswith("/_") and text[2:3].isalpha():
        return True
    return head in heads or head in CLI_HEADS


#: What may stand before a command written inside a text (a log line naming the command it
#: sent): a space, or an opening bracket or quote.
_BEFORE_COMMAND: Final = re.compile(r"[\s(\[`'\"](?=/)")


def writes_command(text: str, heads: frozenset[str]) -> bool:
    """Whether ``text`` begins a core command, or holds one after a space, bracket or quote."""
    if begins_command(text, heads):
        return True
    return any(begins_command(text[m.end() :], heads) for m in _BEFORE_COMMAND.finditer(text))


def command_literals(source: str, heads: frozenset[str]) -> list[tuple[int, str]]:
    return [(line, text) for line, text in string_heads(source) if writes_command(text, heads)]


def _shipped_files() -> Iterator[tuple[str, Path]]:
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if not relative.startswith(EXEMPT):
                yield relative, path


def _scan() -> dict[str, list[tuple[int, str]]]:
    heads = builder_heads()
    found: dict[str, list[tuple[int, str]]] = {}
    for relative, path in _shipped_files():
        literals = command_literals(path.read_text(encoding="utf-8"), heads)
        if literals:
            found[relative] = literals
    return found


def test_the_builders_heads_are_read_from_their_source() -> None:
    heads = builder_heads()
    assert {"/_send", "/_connect", "/_service_request", "/user", "/users", "/sql"} <= heads
    assert "/network" in heads
    assert all(h.startswith("/") for h in heads)


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ('cmd = f"/_send {ref} json {body}"', [1]),
        ('cmd = "/_connect plan " + link', [1]),
        ('cmd = "/user"', [1]),
        ('x = 1\ncmd = f"/sql chat {query}"', [2]),
        ('cmd = f"/connect {link}"', [1]),
        ('cmd = "/users"', [1]),
        # message text of the chat transport, not a command of the core
        ('text = f"/_call {protocol} {body}"', []),
        # a docstring is prose; a literal inside an f-string begins nothing
        ('def f() -> None:\n    """/_send is what it sends."""', []),
        ('label = f"{name} /_send"', []),
        ('path = "/usr/bin"', []),
        ('pattern = "/_"', []),
        # a command inside a text: a log line that names the command the core refused
        ('msg = "%s: the core refuses /_set accept group invitations: %s"', [1]),
        ('msg = "it refused (/_send): %s"', [1]),
        ('msg = "send it as /_call mcp with a request"', []),
        ('msg = "the whole text: /_call, the protocol and a JSON object"', []),
        ('path = "simplex_protocols/_spec or spec/"', []),
    ],
)
def test_the_scan_finds_what_begins_a_command(source: str, lines: list[int]) -> None:
    assert [line for line, _ in command_literals(source, builder_heads())] == lines


def test_no_app_writes_a_core_command() -> None:
    found = {path: hits for path, hits in _scan().items() if path not in PENDING}
    report = [
        f"{path}:{line}: {text[:60]!r}" for path, hits in found.items() for line, text in hits
    ]
    assert not report, (
        "build these commands with simplex_protocols.core.commands (or call ChatAPI):\n"
        + "\n".join(report)
    )


def test_every_pending_file_still_writes_commands() -> None:
    found = _scan()
    stale = sorted(path for path in PENDING if path not in found)
    assert not stale, f"no command is written here any more; remove from PENDING: {stale}"
